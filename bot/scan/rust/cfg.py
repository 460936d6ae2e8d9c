"""Test-only code: `#[cfg(test)]` (and `cfg(all(test, ..))`) items, `#[test]`/`#[bench]`
functions, and the files of modules declared `#[cfg(test)] mod name;`."""

from __future__ import annotations

from pathlib import PurePosixPath

from tree_sitter import Node, Query, QueryCursor

from bot.scan.rust.grammar import COMMENTS, RUST_LANGUAGE
from bot.scan.rust.literals import string_value

_MODS_QUERY = Query(RUST_LANGUAGE, "(mod_item) @mod")


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


def inner_attributes_mark_test(container: Node) -> bool:
    for child in container.named_children:
        if child.type == "inner_attribute_item":
            text = child.text.decode("utf-8", errors="replace") if child.text else ""
            inner = text.removeprefix("#![").removesuffix("]").strip()
            if inner.startswith("cfg") and inner[3:].lstrip().startswith("("):
                args = inner[3:].strip()
                if cfg_requires_test(args[1:-1]):
                    return True
    return False


class TestContext:
    """Answers "is this node inside test-only code?" with a cache over ancestors."""

    def __init__(self) -> None:
        self._cache: dict[int, bool] = {}

    def _own(self, node: Node) -> bool:
        if node.type in ("declaration_list", "source_file") and inner_attributes_mark_test(node):
            return True
        sibling = node.prev_sibling
        while sibling is not None and (
            sibling.type == "attribute_item" or sibling.type in COMMENTS
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
    while sibling is not None and (sibling.type == "attribute_item" or sibling.type in COMMENTS):
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


def test_module_paths(root: Node, file_path: str, tests: TestContext) -> list[str]:
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
