"""Panic sites in Rust sources, found with tree-sitter's Rust grammar (no regexes over code).

A *site* is a place that panics with a literal message: `panic!`, `unimplemented!`, `todo!`,
`unreachable!`, `assert!`/`assert_eq!`/`assert_ne!` and their `debug_` forms when they carry a
message, and `.expect("...")`. The message is the format string as written, with Rust's string
escapes decoded (line continuations included) and placeholders such as `{:?}` kept. A message
given through `concat!` of literals, or through `format!("...", ..)` (e.g.
`.expect(&format!("no file {}", path))`), counts as literal; anything else (`panic!(msg)`, a
bare `unimplemented!()`) is not a site. A `const`/`static` `&str`, or a local bound by
`let name = "..";` earlier in the same function (and not shadowed since), stands for its text.
`panic!("{}", err)` on an error of the file's own thiserror enum has each variant's text as a
message (bot.scan.rust.error_enums).

The line is the one Rust prints in `panicked at FILE:LINE:COL`: the macro's first line, or for
`.expect` the line of the method name (in a chain split over lines, the `.expect(` line).

Macros nested in other macros (`vec![x.expect("..")]`, a `panic!` inside a `macro_rules!` body)
are plain token trees to the grammar; they are found by their `name ! (...)` token shape, and
their arguments are parsed again as an ordinary argument list.

Tests are left out unless asked: files under `tests/`, `benches/` and `examples/` folders,
items marked `#[cfg(test)]` (or `#[cfg(all(test, ..))]`), `#[test]`/`#[bench]` functions, and
files of a module declared `#[cfg(test)] mod name;` elsewhere.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field

from tree_sitter import Node, Parser, Query, QueryCursor

from bot.catalog.model import MACRO_BODY_TAG, PROC_MACRO_OUTPUT_TAG, TRACK_CALLER_TAG
from bot.scan.builders import Builder
from bot.scan.rust.bindings import constants_at
from bot.scan.rust.cfg import TestContext, inner_attributes_mark_test, test_module_paths
from bot.scan.rust.checks import site_check
from bot.scan.rust.definitions import ScanContext, collect_definitions
from bot.scan.rust.error_enums import error_variant_messages
from bot.scan.rust.grammar import (
    COMMENTS,
    INVOCATIONS_QUERY,
    RUST_LANGUAGE,
    Reparser,
    macro_name,
    path_start,
)
from bot.scan.rust.macros import macro_built_messages
from bot.scan.rust.messages import MESSAGE_ARGUMENT, message_from_args, text_message

EXPECT_KIND = ".expect"
_CALLS_QUERY = Query(RUST_LANGUAGE, "(call_expression function: (_) @function) @call")


# Macros whose token trees are code generated into another crate.
_QUOTE_MACROS = frozenset({"quote", "quote_spanned", "parse_quote"})


log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, order=True)
class PanicSite:
    file_path: str  # relative to the scanned root, with `/` separators
    line: int  # 1-based, as `panicked at` reports it
    column: int  # 1-based
    kind: str  # "panic!", "assert_eq!", ".expect", ...
    message_format: str
    # `track-caller`, `macro-body`, `raised-at:FILE:LINE`: how the printed location relates
    tags: tuple[str, ...] = ()
    # A whole-message pattern when the printed text wraps the message (a builder's wrapper)
    message_pattern: str = ""
    # The innermost `fn` around the site ("" outside any): `catalog update` pairs by it
    function: str = field(default="", compare=False)
    # What the code checks there (bot.scan.rust.checks): the record's `check` object
    check: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    def as_panic_site(self, commit: str) -> dict[str, object]:
        """The panic-site list form: file_path, line, kind, message_format, commit (the
        lines `catalog import --format panic-sites` reads)."""
        row: dict[str, object] = {
            "file_path": self.file_path,
            "line": self.line,
            "kind": self.kind,
            "message_format": self.message_format,
            "commit": commit,
        }
        if self.tags:
            row["tags"] = list(self.tags)
        return row


@dataclass(slots=True)
class FileScan:
    """What one file holds: its sites, and module files it declares as test-only."""

    sites: list[PanicSite] = field(default_factory=list)
    # Paths (relative, `/`-separated) of files and folders of `#[cfg(test)] mod x;` modules.
    test_module_paths: list[str] = field(default_factory=list)
    whole_file_is_test: bool = False
    too_deep: bool = False  # nested past MAX_NESTING, or larger than MAX_FILE_BYTES: not scanned


MAX_NESTING = 256  # syntax-tree levels; hand-written Rust stays far below
# A file larger than this is generated data (tables, bindings), not code that panics for a
# reason a person wrote: left out, said, so one file cannot stall a refresh.
MAX_FILE_BYTES = 8 * 1024 * 1024


def deeper_than(root: Node, limit: int) -> bool:
    """Whether the tree under `root` is more than `limit` levels deep: one cursor walk, each
    node once, stopped as soon as it is."""
    cursor = root.walk()
    depth = 0
    while True:
        if depth > limit:
            return True
        if cursor.goto_first_child():
            depth += 1
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return False
            depth -= 1


def caller_reported(node: Node) -> tuple[str, ...]:
    """Whether Rust prints another place than `node`'s line for a panic there, and why (the
    site's tags saying so, none when it prints its own line).

    `macro-body`: inside a `macro_rules!` body or a `quote!` (at any depth, a function there
    included), printed at the macro's invocation; a `quote!` body is also `proc-macro-output`
    (compiled into whichever crate uses the macro); `track-caller`: the enclosing function is
    `#[track_caller]` (a closure in between has its own location).
    """
    body = _macro_body(node)
    if body is not None:
        return (MACRO_BODY_TAG, PROC_MACRO_OUTPUT_TAG) if body == "quote" else (MACRO_BODY_TAG,)
    return (TRACK_CALLER_TAG,) if _reported_at_caller(node) else ()


def _reported_at_caller(node: Node) -> bool:
    """The function around `node` is `#[track_caller]`, no closure in between."""
    current = node.parent
    while current is not None:
        kind = current.type
        if kind == "token_tree":
            # A function inside another macro's tokens (`cfg_rt! { .. fn f() { .. } }`).
            owner = _token_tree_owner(current)
            if owner is not None:
                return owner == "track_caller"
        if kind == "closure_expression":
            return False
        if kind == "function_item":
            return _has_track_caller(current)
        current = current.parent
    return False


def _macro_body(node: Node) -> str | None:
    """ "rules" inside a `macro_rules!` body, "quote" inside a `quote!` (or `quote_spanned!`,
    `parse_quote!`), the innermost one around `node`; None outside both."""
    current = node.parent
    while current is not None:
        kind = current.type
        if kind == "macro_definition":
            return "rules"
        if kind == "macro_invocation":
            name = current.child_by_field_name("macro")
            if name is not None and macro_name(name) in _QUOTE_MACROS:
                return "quote"
        if kind == "token_tree":
            head = current.prev_sibling
            name = head.prev_sibling if head is not None and head.type == "!" else None
            if name is not None and name.text is not None and name.text.decode() in _QUOTE_MACROS:
                return "quote"
            # `macro_rules! name { .. }` inside another macro's tokens (`doc! { macro_rules!
            # select { .. } }`): the grammar sees tokens, not a macro definition.
            bang = head.prev_sibling if head is not None else None
            keyword = bang.prev_sibling if bang is not None and bang.type == "!" else None
            if keyword is not None and keyword.text == b"macro_rules":
                return "rules"
        current = current.parent
    return None


_BLOCK_BOUNDARIES = frozenset({b";", b"=>", b"="})


def _token_tree_owner(block: Node) -> str | None:
    """For a `{..}` token tree: "track_caller" or "fn" when it is a function's body (with or
    without `#[track_caller]`), "closure" for a closure's, None for any other block."""
    if not block.children or block.children[0].type != "{":
        return None
    sibling = block.prev_sibling
    while sibling is not None:
        text = sibling.text or b""
        if text == b"fn":
            break
        if text in (b"|", b"||"):
            return "closure"
        if text in _BLOCK_BOUNDARIES or (sibling.type == "token_tree" and text[:1] == b"{"):
            return None
        sibling = sibling.prev_sibling
    if sibling is None:
        return None
    sibling = sibling.prev_sibling
    while sibling is not None:
        text = sibling.text or b""
        if text in _BLOCK_BOUNDARIES or (sibling.type == "token_tree" and text[:1] == b"{"):
            break
        if sibling.type == "token_tree" and text.replace(b" ", b"") == b"[track_caller]":
            return "track_caller"
        sibling = sibling.prev_sibling
    return "fn"


def _has_track_caller(function: Node) -> bool:
    return _attributed(function) or _trait_declares_track_caller(function)


def _attributed(item: Node) -> bool:
    sibling = item.prev_sibling
    while sibling is not None and (sibling.type == "attribute_item" or sibling.type in COMMENTS):
        text = sibling.text or b""
        if sibling.type == "attribute_item" and text.replace(b" ", b"") == b"#[track_caller]":
            return True
        sibling = sibling.prev_sibling
    return False


def _trait_declares_track_caller(function: Node) -> bool:
    """A method of `impl Trait for T` whose declaration in the trait is `#[track_caller]`
    (the attribute there applies to every implementation), the trait in the same file."""
    block = function.parent
    impl = block.parent if block is not None else None
    name = function.child_by_field_name("name")
    trait = impl.child_by_field_name("trait") if impl is not None else None
    if impl is None or impl.type != "impl_item" or trait is None or name is None:
        return False
    trait_name = (trait.text or b"").split(b"<", 1)[0].rsplit(b"::", 1)[-1]
    root = impl
    while root.parent is not None:
        root = root.parent
    for item in root.children:
        item_name = item.child_by_field_name("name") if item.type == "trait_item" else None
        body = item.child_by_field_name("body") if item_name is not None else None
        if item_name is None or body is None or item_name.text != trait_name:
            continue
        for method in body.children:
            method_name = method.child_by_field_name("name")
            if (
                method.type in ("function_signature_item", "function_item")
                and method_name is not None
                and method_name.text == name.text
                and _attributed(method)
            ):
                return True
    return False


def enclosing_function(node: Node) -> str:
    """The name of the innermost `fn` around `node`, or "" outside any (the same function
    `bot.scan.lineages.enclosing_functions` finds by line)."""
    current = node.parent
    while current is not None:
        if current.type == "function_item":
            name = current.child_by_field_name("name")
            if name is not None and name.text is not None:
                return name.text.decode()
        current = current.parent
    return ""


def scan_source(
    source: bytes | str,
    file_path: str,
    *,
    include_tests: bool = False,
    context: ScanContext | None = None,
) -> FileScan:
    """The panic sites in one Rust file's text.

    `context`: the crate's consts, macros and declared builders (`scan_tree` collects them
    from every file); without it, this file's own.
    """
    if isinstance(source, str):
        source = source.encode("utf-8")
    if len(source) > MAX_FILE_BYTES:
        log.warning(
            "%s: %d bytes, over the %d-byte cap for one file; not scanned",
            file_path,
            len(source),
            MAX_FILE_BYTES,
        )
        scan = FileScan()
        scan.too_deep = True
        return scan
    # rustc reads CRLF sources as LF: literals spanning lines hold `\n`, and line numbers agree.
    source = source.replace(b"\r\n", b"\n")
    if context is None:
        context = collect_definitions(source, None, file_path)
    parser = Parser(RUST_LANGUAGE)
    tree = parser.parse(source)
    root = tree.root_node
    if deeper_than(root, MAX_NESTING):
        # Walking up from a node costs its depth (tree-sitter finds a parent from the root):
        # a generated file nested thousands deep would take minutes. Said, and left out.
        log.warning("%s: nested more than %d levels deep; not scanned", file_path, MAX_NESTING)
        scan = FileScan()
        scan.too_deep = True
        return scan
    reparser = Reparser()
    tests = TestContext()
    scan = FileScan()
    if not include_tests:
        scan.whole_file_is_test = inner_attributes_mark_test(root)
        if scan.whole_file_is_test:
            return scan
        scan.test_module_paths = test_module_paths(root, file_path, tests)

    def add(
        anchor: Node,
        kind: str,
        message: str,
        *extra_tags: str,
        pattern: str = "",
        args: Node | None = None,
        error: str = "",
        prefix: str = "",
    ) -> None:
        if not message.strip():
            return  # `unreachable!("")` says nothing; a record needs a message
        point = anchor.start_point
        tags = tuple(dict.fromkeys(caller_reported(anchor) + extra_tags))
        check = site_check(anchor, kind, args, source, reparser)
        if error:
            check["error"] = error  # the variant whose text this message is
        if prefix:
            check["prefix"] = prefix  # what a builder's raising site prints before it
        scan.sites.append(
            PanicSite(
                file_path,
                point.row + 1,
                point.column + 1,
                kind,
                message,
                tags,
                pattern,
                enclosing_function(anchor),
                tuple(check.items()),
            )
        )

    for _index, captures in QueryCursor(INVOCATIONS_QUERY).matches(root):
        args = captures.get("args", [None])[0]
        if args is None:
            continue
        if "name" in captures:
            name_node = captures["name"][0]
            name = macro_name(name_node)
            index = MESSAGE_ARGUMENT.get(context.like.get(name, name))
            if index is None:
                rules = context.macros.get(name)
                if rules and (include_tests or not tests.is_test(name_node)):
                    anchor = path_start(name_node)
                    local = constants_at(anchor, context.constants)
                    for kind, built in macro_built_messages(rules, args, reparser, local):
                        add(anchor, kind, built)
                continue
            # The macro's line: the start of `name!` (for a path, `std::panic!`, its start).
            anchor = path_start(name_node)
            kind = f"{name}!"
        else:
            method = captures["method"][0]
            if method.text != b"expect":
                continue
            if args.type == "token_tree" and not (args.children and args.children[0].type == "("):
                continue
            anchor = method
            index = 0
            kind = EXPECT_KIND
        if not include_tests and tests.is_test(anchor):
            continue
        constants = constants_at(anchor, context.constants)
        if args.type == "arguments":
            named = [c for c in args.named_children if c.type not in COMMENTS]
            message = (
                text_message(named[0], source, reparser, constants) if len(named) == 1 else None
            )
        elif kind == EXPECT_KIND:
            arguments = reparser.arguments(source, args.start_byte, args.end_byte)
            message = None
            if arguments is not None and len(arguments) == 1:
                message = text_message(arguments[0], source, reparser, constants)
        else:
            message = message_from_args(source, args, index, reparser, constants)
        if message is None:
            continue
        shown = (
            error_variant_messages(anchor, message, args, source, reparser)
            if kind != EXPECT_KIND
            else None
        )
        if shown is not None:
            for text, variant in shown.texts.items():
                add(anchor, kind, text, args=args, error=variant)
            if not shown.other_texts:
                continue
        add(anchor, kind, message, args=args)
    for builder in context.all_builders():
        for anchor, message in _builder_messages(
            builder, root, source, reparser, context.constants
        ):
            if include_tests or not tests.is_test(anchor):
                tags = builder.tags()
                pattern = builder.pattern(message)
                add(anchor, "panic!", message, *tags, pattern=pattern, prefix=builder.prefix)
    scan.sites.sort()
    return scan


def _builder_messages(
    builder: Builder,
    root: Node,
    source: bytes,
    reparser: Reparser,
    global_constants: dict[str, str],
) -> Iterator[tuple[Node, str]]:
    """(call, message) for each call of a declared builder function with a literal message;
    the arguments of chained methods it names (`.details(..)`) are appended after a space."""
    for _index, captures in QueryCursor(_CALLS_QUERY).matches(root):
        function = captures["function"][0]
        text = (function.text or b"").decode("utf-8", "replace").replace(" ", "")
        if not builder.calls(text):
            continue
        call = captures["call"][0]
        args = call.child_by_field_name("arguments")
        named = [c for c in args.named_children if c.type not in COMMENTS] if args else []
        if builder.argument >= len(named):
            continue
        constants = constants_at(call, global_constants)
        message = text_message(named[builder.argument], source, reparser, constants)
        if message is None:
            continue
        current = call
        while True:
            field_expr = current.parent
            outer = field_expr.parent if field_expr is not None else None
            if (
                field_expr is None
                or field_expr.type != "field_expression"
                or outer is None
                or outer.type != "call_expression"
            ):
                break
            method = field_expr.child_by_field_name("field")
            method_name = (method.text or b"").decode() if method is not None else ""
            if method_name not in builder.append:
                break
            outer_args = outer.child_by_field_name("arguments")
            if outer_args is None:
                break
            extra = [c for c in outer_args.named_children if c.type not in COMMENTS]
            part = text_message(extra[0], source, reparser, constants) if len(extra) == 1 else None
            # A text the scanner cannot read (`.details(reason)`) is still printed: a placeholder.
            message = f"{message} {part if part is not None else '{}'}"
            current = outer
        yield function, message
