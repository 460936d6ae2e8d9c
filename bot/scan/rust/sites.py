"""Panic sites in Rust sources, found with tree-sitter's Rust grammar (no regexes over code).

A *site* is a place that panics with a literal message: `panic!`, `unimplemented!`, `todo!`,
`unreachable!`, `assert!`/`assert_eq!`/`assert_ne!` and their `debug_` forms when they carry a
message, and `.expect("...")`. The message is the format string as written, with Rust's string
escapes decoded (line continuations included) and placeholders such as `{:?}` kept. A message
given through `concat!` of literals, or through `format!("...", ..)` (e.g.
`.expect(&format!("no file {}", path))`), counts as literal; anything else (`panic!(msg)`, a
bare `unimplemented!()`) is not a site. A `const`/`static` `&str`, or a local bound by
`let name = "..";` earlier in the same function (and not shadowed since), stands for its text.

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

import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import tree_sitter_rust
from tree_sitter import Language, Node, Parser, Query, QueryCursor

from bot.catalog.importers import skeletons_from_sites
from bot.catalog.model import MACRO_BODY_TAG, TRACK_CALLER_TAG
from bot.catalog.patterns import parse_format
from bot.catalog.sites import with_enclosing_fn

RUST_LANGUAGE = Language(tree_sitter_rust.language())

# Macro name -> index of the argument that holds the message's format string.
MESSAGE_ARGUMENT = {
    "panic": 0,
    "unimplemented": 0,
    "todo": 0,
    "unreachable": 0,
    "assert": 1,
    "debug_assert": 1,
    "assert_eq": 2,
    "assert_ne": 2,
    "debug_assert_eq": 2,
    "debug_assert_ne": 2,
}
EXPECT_KIND = ".expect"
# Folders whose code is not part of a crate's runtime.
TEST_DIRS = frozenset({"tests", "benches", "examples"})
# Folders never worth walking.
SKIP_DIRS = frozenset({"target", "node_modules"})

_QUERY = Query(
    RUST_LANGUAGE,
    """
    (macro_invocation macro: (_) @name (token_tree) @args)
    (token_tree (identifier) @name . "!" . (token_tree) @args)
    (call_expression
        function: (field_expression field: (field_identifier) @method)
        arguments: (arguments) @args)
    (token_tree "." . (identifier) @method . (token_tree) @args)
    """,
)
_MODS_QUERY = Query(RUST_LANGUAGE, "(mod_item) @mod")
_COMMENTS = frozenset({"line_comment", "block_comment"})
# Wrapper for parsing a macro's token tree again as the argument list of a call.
_WRAP_HEAD = b"fn __scan__() { __scan__("
_WRAP_TAIL = b"\n); }"


# Macros whose token trees are code generated into another crate.
_QUOTE_MACROS = frozenset({"quote", "quote_spanned", "parse_quote"})


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

    def as_panic_site(self, commit: str) -> dict[str, object]:
        """The panic-site list form (the fields of /work/shared/burn/panic_sites.jsonl)."""
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


# ---------------------------------------------------------------------------------------------
# Literals
# ---------------------------------------------------------------------------------------------

_SIMPLE_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", "0": "\0", "'": "'", '"': '"'}
_CONTINUATION_WHITESPACE = " \t\n\r"


def _decode_escapes(body: str) -> str | None:
    """Decode the escapes of a (non-raw) Rust string body; None for a malformed escape."""
    out: list[str] = []
    i = 0
    n = len(body)
    while i < n:
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        if i + 1 >= n:
            return None
        nxt = body[i + 1]
        if nxt == "\n":  # line continuation: the newline and the next line's indent vanish
            i += 2
            while i < n and body[i] in _CONTINUATION_WHITESPACE:
                i += 1
            continue
        if nxt in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[nxt])
            i += 2
            continue
        if nxt == "x":
            try:
                out.append(chr(int(body[i + 2 : i + 4], 16)))
            except ValueError:
                return None
            i += 4
            continue
        if nxt == "u" and i + 2 < n and body[i + 2] == "{":
            end = body.find("}", i + 3)
            if end < 0:
                return None
            try:
                out.append(chr(int(body[i + 3 : end].replace("_", ""), 16)))
            except ValueError:
                return None
            i = end + 1
            continue
        return None
    return "".join(out)


def string_value(node: Node) -> str | None:
    """The value of a string literal node (plain or raw); None for byte/C strings."""
    text = node.text.decode("utf-8", errors="replace") if node.text is not None else ""
    if node.type == "raw_string_literal":
        if not text.startswith("r"):
            return None  # br"..", cr".."
        hashes = len(text) - len(text[1:].lstrip("#")) - 1
        body = text[1 + hashes : len(text) - hashes]
        return body[1:-1] if len(body) >= 2 else None
    if node.type == "string_literal":
        if not text.startswith('"') or len(text) < 2:
            return None  # b"..", c".."
        return _decode_escapes(text[1:-1])
    return None


def _char_value(node: Node) -> str | None:
    text = node.text.decode("utf-8", errors="replace") if node.text is not None else ""
    if not text.startswith("'") or len(text) < 3:
        return None
    return _decode_escapes(text[1:-1])


# ---------------------------------------------------------------------------------------------
# Arguments of macros
# ---------------------------------------------------------------------------------------------


class _Reparser:
    """Parses a macro's token tree again as a call's argument list."""

    def __init__(self) -> None:
        self._parser = Parser(RUST_LANGUAGE)

    def arguments(self, source: bytes, start: int, end: int) -> list[Node] | None:
        """The arguments in the token tree `source[start:end]` (delimiters included)."""
        content = source[start + 1 : end - 1]
        tree = self._parser.parse(_WRAP_HEAD + content + _WRAP_TAIL)
        root = tree.root_node
        if root.has_error:
            return None
        # source_file > function_item > block > expression_statement > call_expression
        found = _first_of_type(root, "arguments")
        if found is None:
            return None
        return [c for c in found.named_children if c.type not in _COMMENTS]


def _first_of_type(node: Node, kind: str) -> Node | None:
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == kind:
            return current
        stack.extend(reversed(current.named_children))
    return None


def _macro_name(node: Node) -> str:
    """`panic` for `panic`, `std::panic` and `core::panic`."""
    if node.type == "scoped_identifier":
        name = node.child_by_field_name("name")
        if name is not None:
            node = name
    return node.text.decode("utf-8", errors="replace") if node.text is not None else ""


def _path_start(name: Node) -> Node:
    """The node where a macro invocation starts: `std` in `std::panic!`, also in token trees."""
    parent = name.parent
    if parent is not None and parent.type == "macro_invocation":
        return parent
    start = name
    while True:
        colons = start.prev_sibling
        segment = colons.prev_sibling if colons is not None else None
        if colons is None or colons.type != "::" or segment is None:
            return start
        if segment.type not in ("identifier", "crate", "self", "super", "metavariable"):
            return start
        start = segment


def escape_format(text: str) -> str:
    """Literal text as a format string that prints it as is: `{D}` -> `{{D}}`."""
    return text.replace("{", "{{").replace("}", "}}")


def _literal_message(
    node: Node,
    source: bytes,
    reparser: _Reparser,
    depth: int = 0,
    constants: dict[str, str] | None = None,
) -> str | None:
    """The message an argument node stands for, when it is literal.

    An identifier naming a `const`/`static` `&str` stands for its text, escaped as a format
    string (a const is never parsed for placeholders).
    """
    if depth > 8:
        return None
    kind = node.type
    if kind in ("string_literal", "raw_string_literal"):
        return string_value(node)
    if kind in ("identifier", "scoped_identifier") and constants:
        name = _macro_name(node)
        return escape_format(constants[name]) if name in constants else None
    if kind == "reference_expression":  # &format!(..) or &"..."
        inner = node.child_by_field_name("value")
        if inner is None:
            return None
        return _literal_message(inner, source, reparser, depth + 1, constants)
    if kind == "parenthesized_expression":
        inner = [c for c in node.named_children if c.type not in _COMMENTS]
        if len(inner) == 1:
            return _literal_message(inner[0], source, reparser, depth + 1, constants)
        return None
    if kind == "macro_invocation":
        name_node = node.child_by_field_name("macro")
        tt = next((c for c in node.named_children if c.type == "token_tree"), None)
        if name_node is None or tt is None:
            return None
        name = _macro_name(name_node)
        # `node` may live in a reparsed tree: read its token tree from that tree's bytes.
        text = node.text or b""
        offset = node.start_byte
        args = reparser.arguments(text, tt.start_byte - offset, tt.end_byte - offset)
        if args is None:
            return None
        if name == "format":
            if not args:
                return None
            found = _literal_message(args[0], text, reparser, depth + 1, constants)
            return _with_constants(found, args[1:], constants) if found is not None else None
        if name == "concat":
            return _concat(args, reparser, depth)
    return None


def _with_constants(fmt: str, args: list[Node], constants: dict[str, str] | None) -> str | None:
    """`fmt` with each placeholder whose argument is a `const` `&str` filled in with its text.

    `("{}: {}", MSG, x)` -> `"<MSG's text>: {}"`; `"{MSG}"` (an inline name) likewise.
    """
    if not constants:
        return fmt
    positional = [a for a in args if a.type != "assignment_expression"]
    named = {}
    for arg in args:
        if arg.type == "assignment_expression":
            left, right = arg.child_by_field_name("left"), arg.child_by_field_name("right")
            if left is not None and right is not None and left.text is not None:
                named[left.text.decode()] = right
    out: list[str] = []
    next_positional = 0
    filled = False
    for segment in parse_format(fmt):
        if not segment.is_placeholder:
            out.append(escape_format(segment.text))
            continue
        inner = segment.text[1:-1]
        name, _, spec = inner.partition(":")
        if name == "":
            arg = positional[next_positional] if next_positional < len(positional) else None
            next_positional += 1
        elif name.isdigit():
            index = int(name)
            arg = positional[index] if index < len(positional) else None
        else:
            arg = named.get(name)
            if arg is None and name in constants and not spec:
                out.append(escape_format(constants[name]))
                filled = True
                continue
        value = None
        if arg is not None and not spec and arg.type in ("identifier", "scoped_identifier"):
            const_name = _macro_name(arg)
            value = constants.get(const_name)
        filled = filled or value is not None
        out.append(escape_format(value) if value is not None else segment.text)
    return "".join(out) if filled else fmt


def _concat(args: list[Node], reparser: _Reparser, depth: int) -> str | None:
    parts: list[str] = []
    for arg in args:
        kind = arg.type
        if kind in ("string_literal", "raw_string_literal"):
            value = string_value(arg)
        elif kind == "char_literal":
            value = _char_value(arg)
        elif kind == "boolean_literal" or (kind == "integer_literal" and arg.text.isdigit()):
            value = arg.text.decode()
        elif kind == "macro_invocation":
            value = _literal_message(arg, b"", reparser, depth + 1)
        else:
            value = None
        if value is None:
            return None
        parts.append(value)
    return "".join(parts)


def _split_top_level(token_tree: Node) -> list[list[Node]]:
    """Fallback when the arguments do not parse: split the token tree's tokens on commas."""
    chunks: list[list[Node]] = [[]]
    children = token_tree.children[1:-1]
    for child in children:
        if child.type == ",":
            chunks.append([])
        elif child.type not in _COMMENTS:
            chunks[-1].append(child)
    if chunks and not chunks[-1]:
        chunks.pop()
    return chunks


def _message_from_args(
    source: bytes,
    token_tree: Node,
    index: int,
    reparser: _Reparser,
    constants: dict[str, str] | None = None,
) -> str | None:
    args = reparser.arguments(source, token_tree.start_byte, token_tree.end_byte)
    if args is not None:
        if index >= len(args):
            return None
        found = _literal_message(args[index], source, reparser, constants=constants)
        if found is None or not constants:
            return found
        return _with_constants(found, args[index + 1 :], constants)
    chunks = _split_top_level(token_tree)
    if index >= len(chunks) or len(chunks[index]) != 1:
        return None
    only = chunks[index][0]
    if only.type in ("string_literal", "raw_string_literal"):
        return string_value(only)
    return None


# ---------------------------------------------------------------------------------------------
# Tests and cfg(test)
# ---------------------------------------------------------------------------------------------


def _cfg_tokens(text: str) -> list[str]:
    tokens: list[str] = []
    word: list[str] = []
    in_string = False
    for ch in text:
        if in_string:
            if ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
            tokens.append("<str>")
            continue
        if ch.isalnum() or ch == "_":
            word.append(ch)
            continue
        if word:
            tokens.append("".join(word))
            word = []
        if ch in "(),=":
            tokens.append(ch)
    if word:
        tokens.append("".join(word))
    return tokens


def cfg_requires_test(predicate: str) -> bool:
    """Whether a `cfg(...)` predicate can only hold when compiling tests.

    `test` and `all(.., test, ..)` do; `any(test, feature = "x")` and `not(test)` do not.
    """
    tokens = _cfg_tokens(predicate)
    pos = 0

    def parse() -> bool:
        nonlocal pos
        if pos >= len(tokens):
            return False
        name = tokens[pos]
        pos += 1
        if pos < len(tokens) and tokens[pos] == "(":
            pos += 1
            values = []
            while pos < len(tokens) and tokens[pos] != ")":
                if tokens[pos] == ",":
                    pos += 1
                    continue
                values.append(parse())
            pos += 1  # ")"
            if name == "all":
                return any(values)
            if name == "any":
                return bool(values) and all(values)
            return False  # not(..) and unknown operators
        if pos < len(tokens) and tokens[pos] == "=":
            pos += 2  # `feature = "x"`
            return False
        return name == "test"

    return parse()


def _attribute_marks_test(attribute_item: Node) -> bool:
    attribute = next((c for c in attribute_item.named_children if c.type == "attribute"), None)
    if attribute is None:
        return False
    path = attribute.named_children[0] if attribute.named_children else None
    if path is None or path.text is None:
        return False
    name = path.text.decode("utf-8", errors="replace")
    last = name.rsplit("::", 1)[-1]
    if last in ("test", "bench", "rstest", "test_case") or last.endswith("_test"):
        return True
    if name == "cfg":
        arguments = attribute.child_by_field_name("arguments")
        if arguments is not None and arguments.text is not None:
            return cfg_requires_test(arguments.text.decode("utf-8", errors="replace")[1:-1])
    return False


def _inner_attributes_mark_test(container: Node) -> bool:
    for child in container.named_children:
        if child.type == "inner_attribute_item":
            text = child.text.decode("utf-8", errors="replace") if child.text else ""
            inner = text.removeprefix("#![").removesuffix("]").strip()
            if inner.startswith("cfg") and inner[3:].lstrip().startswith("("):
                args = inner[3:].strip()
                if cfg_requires_test(args[1:-1]):
                    return True
    return False


class _TestContext:
    """Answers "is this node inside test-only code?" with a cache over ancestors."""

    def __init__(self) -> None:
        self._cache: dict[int, bool] = {}

    def _own(self, node: Node) -> bool:
        if node.type in ("declaration_list", "source_file") and _inner_attributes_mark_test(node):
            return True
        sibling = node.prev_sibling
        while sibling is not None and (
            sibling.type == "attribute_item" or sibling.type in _COMMENTS
        ):
            if sibling.type == "attribute_item" and _attribute_marks_test(sibling):
                return True
            sibling = sibling.prev_sibling
        return False

    def is_test(self, node: Node) -> bool:
        chain: list[Node] = []
        current: Node | None = node
        verdict = False
        while current is not None:
            cached = self._cache.get(current.id)
            if cached is not None:
                verdict = cached
                break
            chain.append(current)
            current = current.parent
        # Walk back down: a node is test code when its parent is, or it is marked itself.
        for item in reversed(chain):
            verdict = verdict or self._own(item)
            self._cache[item.id] = verdict
        return verdict


def _module_dir(file_path: str) -> PurePosixPath:
    path = PurePosixPath(file_path)
    if path.name in ("lib.rs", "main.rs", "mod.rs"):
        return path.parent
    return path.parent / path.stem


def _path_attribute(mod: Node) -> str | None:
    sibling = mod.prev_sibling
    while sibling is not None and (sibling.type == "attribute_item" or sibling.type in _COMMENTS):
        if sibling.type == "attribute_item":
            attribute = next((c for c in sibling.named_children if c.type == "attribute"), None)
            if (
                attribute is not None
                and attribute.named_children
                and attribute.named_children[0].text == b"path"
            ):
                value = attribute.child_by_field_name("value")
                if value is not None and value.type == "string_literal":
                    return string_value(value)
        sibling = sibling.prev_sibling
    return None


def _test_module_paths(root: Node, file_path: str, tests: _TestContext) -> list[str]:
    """Files and folders of modules this file declares (`mod x;`) inside test-only code."""
    out: list[str] = []
    for _index, captures in QueryCursor(_MODS_QUERY).matches(root):
        for mod in captures.get("mod", ()):
            if mod.child_by_field_name("body") is not None or not tests.is_test(mod):
                continue
            name_node = mod.child_by_field_name("name")
            if name_node is None or name_node.text is None:
                continue
            name = name_node.text.decode()
            # Inline modules between the file and this declaration add folders.
            nesting: list[str] = []
            parent = mod.parent
            while parent is not None:
                if parent.type == "mod_item":
                    inner = parent.child_by_field_name("name")
                    if inner is not None and inner.text is not None:
                        nesting.append(inner.text.decode())
                parent = parent.parent
            base = _module_dir(file_path).joinpath(*reversed(nesting))
            explicit = _path_attribute(mod)
            if explicit:
                out.append(str(PurePosixPath(file_path).parent / explicit))
                continue
            out.append(str(base / f"{name}.rs"))
            out.append(str(base / name))  # name/mod.rs and its submodules
    return out


# ---------------------------------------------------------------------------------------------
# Scanning
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MacroRule:
    """One rule of a crate's own `macro_rules!` whose body panics with a message it is given."""

    metavariables: tuple[str, ...]  # `$msg` and the like, in the matcher's order
    open_ended: bool  # the matcher ends with a repetition (`$($arg:tt)*`)
    # (kind, message argument index, the panic's argument token tree with `$x` left in)
    panics: tuple[tuple[str, int, bytes], ...]


@dataclass(slots=True)
class ScanContext:
    """What a file's sites may refer to elsewhere in the crate."""

    constants: dict[str, str] = field(default_factory=dict)  # NAME -> text of a const &str
    macros: dict[str, list[MacroRule]] = field(default_factory=dict)
    builders: tuple = ()  # bot.scan.builders.Builder


_DEFINITIONS_QUERY = Query(
    RUST_LANGUAGE,
    """
    (const_item name: (identifier) @name type: (reference_type) @type value: (_) @value)
    (static_item name: (identifier) @name type: (reference_type) @type value: (_) @value)
    (macro_definition name: (identifier) @macro) @definition
    """,
)
_CALLS_QUERY = Query(RUST_LANGUAGE, "(call_expression function: (_) @function) @call")
_METAVARIABLE = re.compile(rb"\$([A-Za-z_][A-Za-z0-9_]*)")
# `$($arg)*`, `$(, $x:expr),+`: a repetition; the message never comes from inside one.
_REPETITION = re.compile(rb"\$\((?:[^()]|\([^()]*\))*\)\s*[^\s*+?]?\s*[*+?]")


def collect_definitions(source: bytes | str, context: ScanContext | None = None) -> ScanContext:
    """The `const`/`static` `&str` texts and panicking `macro_rules!` of one file, added to
    `context` (a name seen twice with different texts is dropped: it cannot be told apart)."""
    if isinstance(source, str):
        source = source.encode("utf-8")
    source = source.replace(b"\r\n", b"\n")
    context = context if context is not None else ScanContext()
    root = Parser(RUST_LANGUAGE).parse(source).root_node
    reparser = _Reparser()
    for _index, captures in QueryCursor(_DEFINITIONS_QUERY).matches(root):
        if "macro" in captures:
            name = captures["macro"][0].text.decode()
            rules = _macro_rules(captures["definition"][0], reparser)
            if rules:
                context.macros.setdefault(name, []).extend(rules)
            continue
        type_text = (captures["type"][0].text or b"").replace(b" ", b"")
        if type_text not in (b"&str", b"&'staticstr"):
            continue
        value = _literal_message(captures["value"][0], source, reparser)
        if value is None:
            continue
        name = captures["name"][0].text.decode()
        known = context.constants.get(name)
        if known is not None and known != value:
            context.constants[name] = None  # type: ignore[assignment]  # ambiguous
        elif name not in context.constants:
            context.constants[name] = value
    context.constants = {k: v for k, v in context.constants.items() if v is not None}
    return context


def _macro_rules(definition: Node, reparser: _Reparser) -> list[MacroRule]:
    rules = []
    for rule in definition.named_children:
        if rule.type != "macro_rule":
            continue
        left, right = rule.child_by_field_name("left"), rule.child_by_field_name("right")
        if left is None or right is None:
            continue
        names: list[str] = []
        open_ended = False
        for child in left.named_children:
            if child.type == "token_binding_pattern":
                if open_ended:
                    break
                name = child.child_by_field_name("name")
                names.append((name.text or b"$").decode()[1:] if name is not None else "")
            elif child.type == "token_repetition_pattern":
                open_ended = True
        panics = []
        for _index, captures in QueryCursor(_QUERY).matches(right):
            if "name" not in captures:
                continue
            kind_name = _macro_name(captures["name"][0])
            index = MESSAGE_ARGUMENT.get(kind_name)
            args = captures["args"][0]
            if index is None or args.text is None or b"$" not in args.text:
                continue
            if _message_without_metavariables(args.text, index, reparser) is not None:
                continue  # literal in the body itself: a site of its own already
            panics.append((f"{kind_name}!", index, args.text))
        if names and panics:
            rules.append(MacroRule(tuple(names), open_ended, tuple(panics)))
    return rules


def _message_without_metavariables(template: bytes, index: int, reparser: _Reparser) -> str | None:
    plain = _METAVARIABLE.sub(b"__meta", _REPETITION.sub(b"__rest", template))
    args = reparser.arguments(plain, 0, len(plain))
    if not args or index >= len(args):
        return None
    return _literal_message(args[index], plain, reparser)


def _macro_built_messages(
    rules: list[MacroRule], call_args: Node, reparser: _Reparser, constants: dict[str, str]
) -> list[tuple[str, str]]:
    """(kind, message) of each panic a call of the crate's macro builds from its arguments
    (`constants`: the texts names stand for at the call)."""
    chunks = _split_top_level(call_args)
    texts = [b" ".join(node.text or b"" for node in chunk) for chunk in chunks]
    for rule in rules:
        count = len(rule.metavariables)
        if len(texts) < count or (len(texts) > count and not rule.open_ended):
            continue
        values = dict(zip(rule.metavariables, texts, strict=False))

        def fill(found: re.Match[bytes], values: dict[str, bytes] = values) -> bytes:
            return values.get(found.group(1).decode(), found.group(0))

        out = []
        for kind, index, template in rule.panics:
            filled = _METAVARIABLE.sub(fill, _REPETITION.sub(b"__rest", template))
            if b"$" in filled:
                continue
            args = reparser.arguments(filled, 0, len(filled))
            if not args or index >= len(args):
                continue
            message = _literal_message(args[index], filled, reparser, constants=constants)
            if message is not None:
                message = _with_constants(message, args[index + 1 :], constants)
            if message is not None:
                out.append((kind, message))
        if out:
            return out
    return []


def _unwrapped(node: Node) -> Node:
    while node.type in ("reference_expression", "parenthesized_expression"):
        inner = node.child_by_field_name("value") if node.type == "reference_expression" else None
        if inner is None:
            named = [c for c in node.named_children if c.type not in _COMMENTS]
            if len(named) != 1:
                return node
            inner = named[0]
        node = inner
    return node


def _is_format_call(node: Node) -> bool:
    node = _unwrapped(node)
    if node.type != "macro_invocation":
        return False
    name = node.child_by_field_name("macro")
    return name is not None and _macro_name(name) == "format"


def _text_message(
    node: Node, source: bytes, reparser: _Reparser, constants: dict[str, str] | None
) -> str | None:
    """A `&str` argument (of `.expect`, of a builder): literal text, not a format string,
    unless it is `format!(..)`: `.expect("{D}")` prints `{D}`."""
    message = _literal_message(node, source, reparser, constants=constants)
    if message is None or _is_format_call(node):
        return message
    if _unwrapped(node).type in ("identifier", "scoped_identifier"):
        return message  # a const's text, escaped already
    return escape_format(message)


# Ancestors that bind names for what they contain: the field holding the pattern.
_BINDING_FIELDS = {
    "closure_expression": "parameters",
    "match_arm": "pattern",
    "for_expression": "pattern",
}


def _pattern_names(pattern: Node | None) -> list[str]:
    """The identifiers in a pattern (or a closure's parameters): the names it may bind."""
    if pattern is None:
        return []
    if pattern.type == "identifier":
        return [(pattern.text or b"").decode()]
    return [name for child in pattern.named_children for name in _pattern_names(child)]


def _let_conditions(condition: Node | None) -> Iterator[Node]:
    """The `let` conditions of an `if`/`while` (`if let A = x && let B = y`)."""
    if condition is None:
        return
    if condition.type == "let_condition":
        yield condition
    elif condition.type == "let_chain":
        yield from (c for c in condition.named_children if c.type == "let_condition")


def _local_bindings(node: Node) -> dict[str, str | None]:
    """The names bound in `node`'s function before it, nearest first: NAME -> the text of a
    `let NAME = "..";`, or None for any other binding (another `let`, a closure's parameter,
    a match arm's pattern, ..), which hides a text bound further out.

    Only the function's own scopes are read: the walk stops at the innermost `fn`."""
    bound: dict[str, str | None] = {}
    child = node
    current = node.parent
    while current is not None and current.type != "function_item":
        kind = current.type
        if kind == "block":
            sibling = child.prev_sibling
            while sibling is not None:
                if sibling.type == "let_declaration":
                    pattern = sibling.child_by_field_name("pattern")
                    value = sibling.child_by_field_name("value")
                    text = None
                    if (
                        pattern is not None
                        and pattern.type == "identifier"
                        and value is not None
                        and sibling.child_by_field_name("alternative") is None
                        and not any(c.type == "mutable_specifier" for c in sibling.children)
                    ):
                        text = string_value(value)
                    for name in _pattern_names(pattern):
                        bound.setdefault(name, text)
                sibling = sibling.prev_sibling
        elif kind == "token_tree":
            # Statements inside another macro's tokens: a `let NAME` there hides NAME.
            sibling = child.prev_sibling
            while sibling is not None:
                if sibling.text == b"let":
                    after = sibling.next_sibling
                    if after is not None and after.text == b"mut":
                        after = after.next_sibling
                    if after is not None and after.type == "identifier":
                        bound.setdefault((after.text or b"").decode(), None)
                sibling = sibling.prev_sibling
        elif kind in ("if_expression", "while_expression"):
            for condition in _let_conditions(current.child_by_field_name("condition")):
                for name in _pattern_names(condition.child_by_field_name("pattern")):
                    bound.setdefault(name, None)
        elif kind in _BINDING_FIELDS:
            for name in _pattern_names(current.child_by_field_name(_BINDING_FIELDS[kind])):
                bound.setdefault(name, None)
        child = current
        current = current.parent
    return bound


def constants_at(node: Node, constants: dict[str, str]) -> dict[str, str]:
    """The texts a name stands for at `node`: the crate's consts, and the function's own
    `let name = "..";` bindings in scope there (a local binding hides a const of its name)."""
    local = _local_bindings(node)
    if not any(text is not None or name in constants for name, text in local.items()):
        return constants
    merged = dict(constants)
    for name, text in local.items():
        if text is None:
            merged.pop(name, None)
        else:
            merged[name] = text
    return merged


def caller_reported(node: Node) -> str | None:
    """Whether Rust prints another place than `node`'s line for a panic there, and why.

    `macro-body`: inside a `macro_rules!` body or a `quote!` (at any depth, a function there
    included), printed at the macro's invocation; `track-caller`: the enclosing function is
    `#[track_caller]` (a closure in between has its own location).
    """
    if _in_macro_body(node):
        return MACRO_BODY_TAG
    current = node.parent
    while current is not None:
        kind = current.type
        if kind == "token_tree":
            # A function inside another macro's tokens (`cfg_rt! { .. fn f() { .. } }`).
            owner = _token_tree_owner(current)
            if owner == "closure":
                return None
            if owner is not None:
                return TRACK_CALLER_TAG if owner == "track_caller" else None
        if kind == "closure_expression":
            return None
        if kind == "function_item":
            return TRACK_CALLER_TAG if _has_track_caller(current) else None
        current = current.parent
    return None


def _in_macro_body(node: Node) -> bool:
    current = node.parent
    while current is not None:
        kind = current.type
        if kind == "macro_definition":
            return True
        if kind == "macro_invocation":
            name = current.child_by_field_name("macro")
            if name is not None and _macro_name(name) in _QUOTE_MACROS:
                return True
        if kind == "token_tree":
            head = current.prev_sibling
            name = head.prev_sibling if head is not None and head.type == "!" else None
            if name is not None and name.text is not None and name.text.decode() in _QUOTE_MACROS:
                return True
        current = current.parent
    return False


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
    sibling = function.prev_sibling
    while sibling is not None and (sibling.type == "attribute_item" or sibling.type in _COMMENTS):
        text = sibling.text or b""
        if sibling.type == "attribute_item" and text.replace(b" ", b"") == b"#[track_caller]":
            return True
        sibling = sibling.prev_sibling
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
    # rustc reads CRLF sources as LF: literals spanning lines hold `\n`, and line numbers agree.
    source = source.replace(b"\r\n", b"\n")
    if context is None:
        context = collect_definitions(source)
    parser = Parser(RUST_LANGUAGE)
    tree = parser.parse(source)
    root = tree.root_node
    reparser = _Reparser()
    tests = _TestContext()
    scan = FileScan()
    if not include_tests:
        scan.whole_file_is_test = _inner_attributes_mark_test(root)
        if scan.whole_file_is_test:
            return scan
        scan.test_module_paths = _test_module_paths(root, file_path, tests)

    def add(anchor: Node, kind: str, message: str, *extra_tags: str, pattern: str = "") -> None:
        if not message.strip():
            return  # `unreachable!("")` says nothing; a record needs a message
        point = anchor.start_point
        reported = caller_reported(anchor)
        tags = tuple(dict.fromkeys(((reported,) if reported else ()) + extra_tags))
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
            )
        )

    for _index, captures in QueryCursor(_QUERY).matches(root):
        args = captures.get("args", [None])[0]
        if args is None:
            continue
        if "name" in captures:
            name_node = captures["name"][0]
            name = _macro_name(name_node)
            index = MESSAGE_ARGUMENT.get(name)
            if index is None:
                rules = context.macros.get(name)
                if rules and (include_tests or not tests.is_test(name_node)):
                    anchor = _path_start(name_node)
                    local = constants_at(anchor, context.constants)
                    for kind, message in _macro_built_messages(rules, args, reparser, local):
                        add(anchor, kind, message)
                continue
            # The macro's line: the start of `name!` (for a path, `std::panic!`, its start).
            anchor = _path_start(name_node)
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
            named = [c for c in args.named_children if c.type not in _COMMENTS]
            message = (
                _text_message(named[0], source, reparser, constants) if len(named) == 1 else None
            )
        elif kind == EXPECT_KIND:
            arguments = reparser.arguments(source, args.start_byte, args.end_byte)
            message = None
            if arguments is not None and len(arguments) == 1:
                message = _text_message(arguments[0], source, reparser, constants)
        else:
            message = _message_from_args(source, args, index, reparser, constants)
        if message is None:
            continue
        add(anchor, kind, message)
    for builder in context.builders:
        for anchor, message in _builder_messages(
            builder, root, source, reparser, context.constants
        ):
            if include_tests or not tests.is_test(anchor):
                add(anchor, "panic!", message, *builder.tags(), pattern=builder.pattern(message))
    scan.sites.sort()
    return scan


def _builder_messages(
    builder, root: Node, source: bytes, reparser: _Reparser, global_constants: dict[str, str]
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
        named = [c for c in args.named_children if c.type not in _COMMENTS] if args else []
        if builder.argument >= len(named):
            continue
        constants = constants_at(call, global_constants)
        message = _text_message(named[builder.argument], source, reparser, constants)
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
            extra = [c for c in outer_args.named_children if c.type not in _COMMENTS]
            part = _text_message(extra[0], source, reparser, constants) if len(extra) == 1 else None
            # A text the scanner cannot read (`.details(reason)`) is still printed: a placeholder.
            message = f"{message} {part if part is not None else '{}'}"
            current = outer
        yield function, message


def _is_test_path(relative: PurePosixPath) -> bool:
    return any(part in TEST_DIRS for part in relative.parts[:-1])


def rust_files(root: Path, *, include_tests: bool = False) -> Iterator[Path]:
    """The `.rs` files under `root`, sorted, without build output, VCS and (unless asked) tests."""
    for dirpath, dirnames, filenames in os.walk(root):
        keep = []
        for name in sorted(dirnames):
            if name.startswith(".") or name in SKIP_DIRS:
                continue
            if not include_tests and name in TEST_DIRS:
                continue
            keep.append(name)
        dirnames[:] = keep
        for name in sorted(filenames):
            if name.endswith(".rs"):
                yield Path(dirpath) / name


def _under(path: str, excluded: set[str]) -> bool:
    """Whether `path` is one of `excluded` or inside one of them (folders)."""
    if path in excluded:
        return True
    return any(str(parent) in excluded for parent in PurePosixPath(path).parents)


ProgressFn = Callable[[int, int, int], None]  # (files done, files total, sites so far)


# Files worth a first pass for the crate's consts and macros (most files have neither).
_DEFINES_SOMETHING = re.compile(rb"macro_rules!|(?:const|static)\s+[A-Za-z_][A-Za-z0-9_]*\s*:\s*&")


def scan_tree(
    root: str | Path,
    *,
    include_tests: bool = False,
    progress: ProgressFn | None = None,
    builders: Iterable = (),
) -> list[PanicSite]:
    """Every panic site under `root`, ordered by file, then line, then column.

    A first pass reads every `const`/`static` `&str` and panicking `macro_rules!` of the tree,
    so a message held in a const or built by the crate's macro is found where it is used.
    `builders`: the catalog author's builder functions (`bot.scan.builders`).
    """
    root = Path(root)
    if root.is_file():
        files = [root]
        root = root.parent
    else:
        files = list(rust_files(root, include_tests=include_tests))
    total = len(files)
    sites: list[PanicSite] = []
    test_paths: list[str] = []
    context = ScanContext(builders=tuple(builders))
    for path in files:
        data = path.read_bytes()
        if _DEFINES_SOMETHING.search(data):
            collect_definitions(data, context)
    for done, path in enumerate(files, start=1):
        relative = path.relative_to(root).as_posix()
        if not include_tests and _is_test_path(PurePosixPath(relative)):
            continue
        scan = scan_source(
            path.read_bytes(), relative, include_tests=include_tests, context=context
        )
        sites.extend(scan.sites)
        test_paths.extend(scan.test_module_paths)
        if progress is not None:
            progress(done, total, len(sites))
    if test_paths:
        excluded = set(test_paths)
        sites = [s for s in sites if not _under(s.file_path, excluded)]
    sites.sort()
    return sites


def skeletons(sites: Iterable[PanicSite], *, repo: str, commit: str) -> list[dict[str, object]]:
    """Skeleton records for scanned sites, with the ids `catalog import --format panic-sites`
    gives the same sites (the shared scheme of `bot.catalog.sites`).

    A site's tags (`track-caller`, `macro-body`, `raised-at:..`) join the record's, and a
    builder's wrapper pattern becomes its `messagePattern`."""
    ordered = sorted(sites)
    records = skeletons_from_sites((s.as_panic_site(commit) for s in ordered), repo)
    for site, record in zip(ordered, records, strict=True):
        if site.tags:
            record["tags"] = [*record["tags"], *site.tags]  # type: ignore[misc]
        if site.message_pattern:
            record["messagePattern"] = site.message_pattern
    return [
        with_enclosing_fn(record, site.function)
        for site, record in zip(ordered, records, strict=True)
    ]
