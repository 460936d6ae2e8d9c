"""What the code checks at a panic site, read from the syntax tree around it (no guessing).

`site_check` returns the record's `check` object (catalog/README.md, "What the code checks"):

    kind     "assert"   an assert!'s condition (`code`), or assert_eq!/assert_ne!'s `a == b`
             "if"       the panic is in the body of `if code { .. }`: raised when `code` holds
             "else"     in the `else` of `if code`: raised when `code` does not hold
             "mismatch" `let PATTERN = code else { panic!() }` or `if let .. else`: raised when
                        `code` does not match `pattern`
             "arm"      an arm of `match code { pattern => panic!(..) }`
             "expect"   `code.expect(..)`, or `code.unwrap_or_else(|| panic!(..))`: raised when
                        `code` is `None` or an `Err`
    impl     the header of the `impl` block around the site: `impl FloatTensorOps<Self> for X`

Only the nearest construct counts, and only one the site is surely under: a panic in the last
`else` of an `else if` chain, or a code text longer than CODE_MAX, gives no `kind` (a shortened
condition would claim less than the code checks). Code is kept as written, on one line.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from bot.scan.rust.grammar import COMMENTS, Reparser

CODE_MAX = 160  # longer conditions are not recorded
IMPL_MAX = 120
_ASSERTS = {"assert!": "", "debug_assert!": ""}
_COMPARE = {
    "assert_eq!": "==",
    "debug_assert_eq!": "==",
    "assert_ne!": "!=",
    "debug_assert_ne!": "!=",
}
_SPACES = re.compile(r"\s+")
_TIGHT = re.compile(r"\s+(?=[.?)\],])|(?<=[(\[])\s+")  # a chain split over lines, as one line
# Closures passed to these are run when the receiver is None or an Err.
_ON_MISSING = frozenset({"unwrap_or_else", "ok_or_else", "map_err"})
_STOP = frozenset({"function_item", "closure_expression", "macro_definition", "source_file"})


def _text(node: Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return _TIGHT.sub("", _SPACES.sub(" ", node.text.decode("utf-8", "replace"))).strip()


def _code(node: Node | None) -> str | None:
    text = _text(node)
    text = text[1:-1].strip() if text.startswith("(") and text.endswith(")") else text
    return text if text and len(text) <= CODE_MAX else None


def _impl_header(node: Node) -> str | None:
    current = node.parent
    while current is not None:
        if current.type == "impl_item":
            kind = _text(current.child_by_field_name("type"))
            trait = _text(current.child_by_field_name("trait"))
            header = f"impl {trait} for {kind}" if trait else f"impl {kind}"
            return header if kind and len(header) <= IMPL_MAX else None
        current = current.parent
    return None


def _assert_check(kind: str, args: Node, source: bytes, reparser: Reparser) -> dict[str, str]:
    parsed = reparser.arguments(source, args.start_byte, args.end_byte)
    if not parsed:
        return {}
    named = [a for a in parsed if a.type not in COMMENTS]
    if kind in _ASSERTS:
        code = _code(named[0])
    elif len(named) >= 2:
        left, right = _code(named[0]), _code(named[1])
        code = f"{left} {_COMPARE[kind]} {right}" if left and right else None
        code = code if code and len(code) <= CODE_MAX else None
    else:
        code = None
    return {"kind": "assert", "code": code} if code else {}


def _expect_check(method: Node) -> dict[str, str]:
    field = method.parent
    code = _code(field.child_by_field_name("value")) if field is not None else None
    return {"kind": "expect", "code": code} if code else {}


def _guard_check(anchor: Node) -> dict[str, str]:
    """The nearest `if`, `else`, `let .. else`, match arm or `unwrap_or_else` closure above."""
    child, current = anchor, anchor.parent
    while current is not None and current.type not in _STOP:
        kind = current.type
        if kind == "match_arm" and child == current.child_by_field_name("value"):
            match = current.parent.parent if current.parent is not None else None
            pattern = _code(current.child_by_field_name("pattern"))
            value = _code(match.child_by_field_name("value")) if match is not None else None
            if pattern and value:
                return {"kind": "arm", "code": value, "pattern": pattern}
            return {}
        if kind == "if_expression":
            return _if_check(current, child)
        if kind == "let_declaration" and child == current.child_by_field_name("alternative"):
            pattern = _code(current.child_by_field_name("pattern"))
            value = _code(current.child_by_field_name("value"))
            return (
                {"kind": "mismatch", "code": value, "pattern": pattern} if pattern and value else {}
            )
        if kind in ("match_expression", "loop_expression", "while_expression", "for_expression"):
            return {}
        child, current = current, current.parent
    if current is not None and current.type == "closure_expression":
        return _closure_check(current)
    return {}


def _if_check(node: Node, child: Node) -> dict[str, str]:
    if node.parent is not None and node.parent.type == "else_clause":
        return {}  # an `else if`: earlier conditions decide too
    condition = node.child_by_field_name("condition")
    if condition is None:
        return {}
    if child == node.child_by_field_name("consequence"):
        if condition.type == "let_condition":
            return {}  # raised when it matches: the arm says nothing the message does not
        code = _code(condition)
        return {"kind": "if", "code": code} if code else {}
    if child == node.child_by_field_name("alternative"):
        if condition.type == "let_condition":
            pattern = _code(condition.child_by_field_name("pattern"))
            value = _code(condition.child_by_field_name("value"))
            if pattern and value:
                return {"kind": "mismatch", "code": value, "pattern": pattern}
            return {}
        if any(c.type == "if_expression" for c in child.named_children):
            return {}
        code = _code(condition)
        return {"kind": "else", "code": code} if code else {}
    return {}


def _closure_check(closure: Node) -> dict[str, str]:
    args = closure.parent
    call = args.parent if args is not None and args.type == "arguments" else None
    function = call.child_by_field_name("function") if call is not None else None
    if function is None or function.type != "field_expression":
        return {}
    if _text(function.child_by_field_name("field")) not in _ON_MISSING:
        return {}
    code = _code(function.child_by_field_name("value"))
    return {"kind": "expect", "code": code} if code else {}


def site_check(
    anchor: Node, kind: str, args: Node | None, source: bytes, reparser: Reparser
) -> dict[str, str]:
    """The `check` object of the site at `anchor` (the macro or the `expect` method), raised
    by `kind` (`assert_eq!`, `.expect`, `panic!`, ...); {} when nothing is sure."""
    if kind in _ASSERTS or kind in _COMPARE:
        out = _assert_check(kind, args, source, reparser) if args is not None else {}
    elif kind == ".expect":
        out = _expect_check(anchor)
    elif anchor.parent is not None and anchor.parent.type == "token_tree":
        out = {}  # inside another macro's tokens: no syntax tree to read
    else:
        out = _guard_check(anchor)
    impl = _impl_header(anchor)
    if impl:
        out = {**out, "impl": impl}
    return out
