"""tree-sitter's Rust grammar, the query for panicking calls, and reparsing token trees.

Macros nested in other macros (`vec![x.expect("..")]`, a `panic!` inside a `macro_rules!` body)
are plain token trees to the grammar; they are found by their `name ! (...)` token shape, and
their arguments are parsed again as an ordinary argument list (`Reparser`).
"""

from __future__ import annotations

import tree_sitter_rust
from tree_sitter import Language, Node, Parser, Query

RUST_LANGUAGE = Language(tree_sitter_rust.language())

# Macro invocations (also inside token trees) and method calls, with their arguments.
INVOCATIONS_QUERY = Query(
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
COMMENTS = frozenset({"line_comment", "block_comment"})
# Wrapper for parsing a macro's token tree again as the argument list of a call.
_WRAP_HEAD = b"fn __scan__() { __scan__("
_WRAP_TAIL = b"\n); }"


class Reparser:
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
        return [c for c in found.named_children if c.type not in COMMENTS]


def _first_of_type(node: Node, kind: str) -> Node | None:
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == kind:
            return current
        stack.extend(reversed(current.named_children))
    return None


def macro_name(node: Node) -> str:
    """`panic` for `panic`, `std::panic` and `core::panic`."""
    if node.type == "scoped_identifier":
        name = node.child_by_field_name("name")
        if name is not None:
            node = name
    return node.text.decode("utf-8", errors="replace") if node.text is not None else ""


def path_start(name: Node) -> Node:
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
