"""Panic sites in Rust sources, found with tree-sitter's Rust grammar (no regexes over code).

A *site* is a place that panics with a literal message: `panic!`, `unimplemented!`, `todo!`,
`unreachable!`, `assert!`/`assert_eq!`/`assert_ne!` and their `debug_` forms when they carry a
message, and `.expect("...")`. The message is the format string as written, with Rust's string
escapes decoded (line continuations included) and placeholders such as `{:?}` kept. A message
given through `concat!` of literals, or through `format!("...", ..)` (e.g.
`.expect(&format!("no file {}", path))`), counts as literal; anything else (`panic!(msg)`, a
bare `unimplemented!()`) is not a site.

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
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import tree_sitter_rust
from tree_sitter import Language, Node, Parser, Query, QueryCursor

from bot.catalog.importers import skeletons_from_sites

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


@dataclass(frozen=True, slots=True, order=True)
class PanicSite:
    file_path: str  # relative to the scanned root, with `/` separators
    line: int  # 1-based, as `panicked at` reports it
    column: int  # 1-based
    kind: str  # "panic!", "assert_eq!", ".expect", ...
    message_format: str

    def as_panic_site(self, commit: str) -> dict[str, object]:
        """The panic-site list form (the fields of /work/shared/burn/panic_sites.jsonl)."""
        return {
            "file_path": self.file_path,
            "line": self.line,
            "kind": self.kind,
            "message_format": self.message_format,
            "commit": commit,
        }


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


def _literal_message(node: Node, source: bytes, reparser: _Reparser, depth: int = 0) -> str | None:
    """The message an argument node stands for, when it is literal."""
    if depth > 8:
        return None
    kind = node.type
    if kind in ("string_literal", "raw_string_literal"):
        return string_value(node)
    if kind == "reference_expression":  # &format!(..) or &"..."
        inner = node.child_by_field_name("value")
        return _literal_message(inner, source, reparser, depth + 1) if inner else None
    if kind == "parenthesized_expression":
        inner = [c for c in node.named_children if c.type not in _COMMENTS]
        if len(inner) == 1:
            return _literal_message(inner[0], source, reparser, depth + 1)
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
            return _literal_message(args[0], text, reparser, depth + 1) if args else None
        if name == "concat":
            return _concat(args, reparser, depth)
    return None


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
    source: bytes, token_tree: Node, index: int, reparser: _Reparser
) -> str | None:
    args = reparser.arguments(source, token_tree.start_byte, token_tree.end_byte)
    if args is not None:
        if index >= len(args):
            return None
        return _literal_message(args[index], source, reparser)
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


def scan_source(source: bytes | str, file_path: str, *, include_tests: bool = False) -> FileScan:
    """The panic sites in one Rust file's text."""
    if isinstance(source, str):
        source = source.encode("utf-8")
    # rustc reads CRLF sources as LF: literals spanning lines hold `\n`, and line numbers agree.
    source = source.replace(b"\r\n", b"\n")
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

    for _index, captures in QueryCursor(_QUERY).matches(root):
        args = captures.get("args", [None])[0]
        if args is None:
            continue
        if "name" in captures:
            name_node = captures["name"][0]
            name = _macro_name(name_node)
            index = MESSAGE_ARGUMENT.get(name)
            if index is None:
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
        if args.type == "arguments":
            named = [c for c in args.named_children if c.type not in _COMMENTS]
            message = _literal_message(named[0], source, reparser) if len(named) == 1 else None
        else:
            message = _message_from_args(source, args, index, reparser)
            if kind == EXPECT_KIND and message is not None:
                arguments = reparser.arguments(source, args.start_byte, args.end_byte)
                if arguments is not None and len(arguments) != 1:
                    message = None
        if message is None:
            continue
        point = anchor.start_point
        scan.sites.append(PanicSite(file_path, point.row + 1, point.column + 1, kind, message))
    scan.sites.sort()
    return scan


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


def scan_tree(
    root: str | Path,
    *,
    include_tests: bool = False,
    progress: ProgressFn | None = None,
) -> list[PanicSite]:
    """Every panic site under `root`, ordered by file, then line, then column."""
    root = Path(root)
    if root.is_file():
        files = [root]
        root = root.parent
    else:
        files = list(rust_files(root, include_tests=include_tests))
    total = len(files)
    sites: list[PanicSite] = []
    test_paths: list[str] = []
    for done, path in enumerate(files, start=1):
        relative = path.relative_to(root).as_posix()
        if not include_tests and _is_test_path(PurePosixPath(relative)):
            continue
        scan = scan_source(path.read_bytes(), relative, include_tests=include_tests)
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
    gives the same sites (the shared scheme of `bot.catalog.sites`)."""
    ordered = sorted(sites)
    return skeletons_from_sites((s.as_panic_site(commit) for s in ordered), repo)
