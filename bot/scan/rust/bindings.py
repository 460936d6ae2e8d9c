"""Local bindings: the texts of `let name = "..";` in scope at a site, over the crate's consts."""

from __future__ import annotations

from collections.abc import Iterator

from tree_sitter import Node

from bot.scan.rust.literals import string_value

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
