"""Local bindings: the texts of `let name = "..";` in scope at a site, over the crate's consts,
and of `Err(name) =>` in a match on a call of the file's own function that only ever fails
with one string literal."""

from __future__ import annotations

import re
from collections.abc import Iterator

from tree_sitter import Node

from bot.scan.rust.grammar import macro_name
from bot.scan.rust.literals import FormatText, string_value
from bot.scan.rust.messages import split_top_level, with_constants

# Ancestors that bind names for what they contain: the field holding the pattern.
_BINDING_FIELDS = {
    "closure_expression": "parameters",
    "match_arm": "pattern",
    "for_expression": "pattern",
}


def pattern_names(pattern: Node | None) -> list[str]:
    """The identifiers in a pattern (or a closure's parameters): the names it may bind."""
    if pattern is None:
        return []
    if pattern.type == "identifier":
        return [(pattern.text or b"").decode()]
    return [name for child in pattern.named_children for name in pattern_names(child)]


def _let_conditions(condition: Node | None) -> Iterator[Node]:
    """The `let` conditions of an `if`/`while` (`if let A = x && let B = y`)."""
    if condition is None:
        return
    if condition.type == "let_condition":
        yield condition
    elif condition.type == "let_chain":
        yield from (c for c in condition.named_children if c.type == "let_condition")


# A function failing with a `&str` (`-> Result<T, &'static str>`): its errors are its literals.
_STR_ERROR_RESULT = re.compile(r"Result\s*<.*,\s*&\s*(?:'static\s+)?str\s*>", re.S)


def file_item(
    node: Node, kind: str, name: bytes, opaque: frozenset[str] = frozenset()
) -> Node | None:
    """The one item of `kind` (`function_item`, `enum_item`) named `name` in `node`'s file
    (None when there is none, or several); `opaque` node kinds are not looked into."""
    root = node
    while root.parent is not None:
        root = root.parent
    found: list[Node] = []
    stack = [root]
    while stack and len(found) < 2:
        current = stack.pop()
        if current.type == kind:
            identifier = current.child_by_field_name("name")
            if identifier is not None and identifier.text == name:
                found.append(current)
            continue  # a nested item of the same name is another scope
        if current.type not in opaque:
            stack.extend(current.named_children)
    return found[0] if len(found) == 1 else None


def file_function(node: Node, name: bytes, method: bool | None = None) -> Node | None:
    """The one `fn name` of `node`'s file (None when there is none, or several). `method`:
    the call's shape says whether it takes `self` (`x.f()` does, a bare `f()` does not); a
    function of the other kind is someone else's of the same name."""
    function = file_item(node, "function_item", name)
    if function is None or method is None:
        return function
    parameters = function.child_by_field_name("parameters")
    takes_self = parameters is not None and any(
        p.type == "self_parameter" for p in parameters.named_children
    )
    return function if takes_self == method else None


def _only_error_text(function: Node) -> str | None:
    """The string literal that every `Err(..)` in `function` returns, when there is one and
    nothing else can fail it (a `?` only on a call taking a closure of its own body)."""
    returns = function.child_by_field_name("return_type")
    body = function.child_by_field_name("body")
    if (
        returns is None
        or body is None
        or not _STR_ERROR_RESULT.fullmatch((returns.text or b"").decode())
    ):
        return None
    texts: set[str | None] = set()
    stack = [body]
    while stack:
        current = stack.pop()
        if current.type == "function_item":
            continue
        if current.type == "try_expression":
            tried = current.named_children[0] if current.named_children else None
            arguments = tried.child_by_field_name("arguments") if tried is not None else None
            if arguments is None or not any(
                a.type == "closure_expression" for a in arguments.named_children
            ):
                return None  # an error from elsewhere
        if current.type == "call_expression":
            called = current.child_by_field_name("function")
            if called is not None and called.text == b"Err":
                arguments = current.child_by_field_name("arguments")
                given = arguments.named_children if arguments is not None else []
                texts.add(string_value(given[0]) if len(given) == 1 else None)
        stack.extend(current.named_children)
    return texts.pop() if len(texts) == 1 else None


def _error_binding(arm: Node) -> tuple[str, str] | None:
    """`Err(NAME) =>` of `match f() {..}`, `f` the file's function failing with one literal
    (`Err("can call blocking only ..")`): NAME and that text."""
    pattern = arm.child_by_field_name("pattern")
    inner = pattern.named_children[0] if pattern is not None and pattern.named_children else None
    if inner is None or inner.type != "tuple_struct_pattern":
        return None
    parts = inner.named_children
    if len(parts) != 2 or parts[0].text != b"Err" or parts[1].type != "identifier":
        return None
    block = arm.parent
    matched = block.parent if block is not None else None
    value = matched.child_by_field_name("value") if matched is not None else None
    called = value.child_by_field_name("function") if value is not None else None
    if value is None or value.type != "call_expression" or called is None:
        return None
    if called.type != "identifier" or called.text is None:
        return None
    function = file_function(arm, called.text, method=False)
    text = _only_error_text(function) if function is not None else None
    return ((parts[1].text or b"").decode(), text) if text is not None else None


def _format_template(value: Node) -> FormatText | None:
    """The format string of `format!("..", args)`: what a message built in a local
    (`let mut msg = format!(..); msg.push_str(..); panic!(msg)`) prints first, even when the
    local is `mut` (text pushed on later follows it)."""
    if value.type != "macro_invocation":
        return None
    name = value.child_by_field_name("macro")
    tree = next((c for c in value.named_children if c.type == "token_tree"), None)
    if name is None or tree is None or macro_name(name) != "format":
        return None
    chunks = split_top_level(tree)
    if not chunks or len(chunks[0]) != 1:
        return None
    if chunks[0][0].type not in ("string_literal", "raw_string_literal"):
        return None
    template = string_value(chunks[0][0])
    if template is None:
        return None
    found = FormatText(template)
    # Each argument as one node: a name alone is itself (a text in scope fills its placeholder
    # then), anything longer its token tree (left a placeholder); `name = value` ones last.
    found.args = [
        chunk[0] if len(chunk) == 1 else tree
        for chunk in chunks[1:]
        if not (len(chunk) > 1 and chunk[1].type == "=")
    ]
    return found


def _local_bindings(node: Node) -> dict[str, str | None]:
    """The names bound in `node`'s function before it, nearest first: NAME -> the text of a
    `let NAME = "..";` (or the format string of a `let [mut] NAME = format!("..", ..);`), or
    None for any other binding (another `let`, a closure's parameter, a match arm's pattern,
    ..), which hides a text bound further out; an `Err(NAME)` arm's NAME stands for the one
    literal its matched call fails with (`_error_binding`).

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
                    ):
                        if not any(c.type == "mutable_specifier" for c in sibling.children):
                            text = string_value(value)
                        if text is None:
                            text = _format_template(value)
                    for name in pattern_names(pattern):
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
                for name in pattern_names(condition.child_by_field_name("pattern")):
                    bound.setdefault(name, None)
        elif kind in _BINDING_FIELDS:
            error = _error_binding(current) if kind == "match_arm" else None
            if error is not None:
                bound.setdefault(*error)
            for name in pattern_names(current.child_by_field_name(_BINDING_FIELDS[kind])):
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
    for name, text in local.items():
        if isinstance(text, FormatText) and text.args is not None:
            # `format!("{}{}", error_msg, hint)`: a text in scope fills its placeholder
            others = {other: value for other, value in merged.items() if other != name}
            merged[name] = FormatText(with_constants(text, text.args, others) or text)
    return merged
