"""What `panic!("{}", err)` prints when `err` is an error enum of the file: its variants' texts.

A site that only formats an error (`.unwrap_or_else(|err| panic!("{}", err))`, an `Err(err) =>`
arm, `if let Err(err) = ..`) prints that error's `Display`. When the error comes from a call of
the file's own function (one `fn` of that name in the file) declared `-> Result<T, E>`, and `E`
is an enum of the same file deriving `Error` with an `#[error("..")]` text on its variants
(thiserror), or `Display` with `#[display("..")]` ones (derive_more, also its older
`#[display(fmt = "..")]`), the site prints one of those texts: each is a message of the site. A
variant whose text the scanner cannot read (`#[error(transparent)]`, none) leaves the site's own
placeholder message standing as well.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from bot.scan.rust.bindings import file_function, file_item, pattern_names
from bot.scan.rust.grammar import COMMENTS, Reparser
from bot.scan.rust.literals import string_value

# The whole message is one Display placeholder: `{}` or `{err}`.
_DISPLAY_ONLY = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)?\}")
# The derive that gives an enum its Display, and the variants' attribute holding each text.
_DISPLAY_DERIVES = {
    b"error": re.compile(rb"#\s*\[\s*derive\s*\([^)]*\bError\b"),
    b"display": re.compile(rb"#\s*\[\s*derive\s*\([^)]*\bDisplay\b"),
}
# `Result<T, E>` (E a path: its last segment is the enum's name)
_RESULT_ERROR = re.compile(r"(?:[\w:]+::)?Result\s*<.*,\s*(?:[\w:]+::)?(\w+)\s*>", re.S)


def _shown_name(message: str, args: Node, source: bytes, reparser: Reparser) -> str | None:
    """The name a Display-only message prints: `{err}`, or `{}` with one identifier argument."""
    found = _DISPLAY_ONLY.fullmatch(message)
    if found is None:
        return None
    if found.group(1):
        return found.group(1)
    if args.type != "token_tree":
        return None
    arguments = reparser.arguments(source, args.start_byte, args.end_byte)
    if arguments is None or len(arguments) != 2 or arguments[1].type != "identifier":
        return None
    return (arguments[1].text or b"").decode()


def _called_name(call: Node | None) -> tuple[bytes, bool | None] | None:
    """`f` of `f(..)`, `x.f(..)`, `Self::f(..)`, and whether the call takes `self` (a method
    call does, a bare call does not; a path may call either)."""
    if call is None or call.type != "call_expression":
        return None
    function = call.child_by_field_name("function")
    if function is None:
        return None
    method: bool | None = False
    if function.type == "field_expression":
        function, method = function.child_by_field_name("field"), True
    elif function.type == "scoped_identifier":
        function, method = function.child_by_field_name("name"), None
    if function is None or function.type not in ("identifier", "field_identifier"):
        return None
    return (function.text, method) if function.text else None


def _err_pattern_name(pattern: Node | None) -> str | None:
    """NAME of an `Err(NAME)` pattern."""
    if pattern is not None and pattern.type == "match_pattern" and pattern.named_children:
        pattern = pattern.named_children[0]
    if pattern is None or pattern.type != "tuple_struct_pattern":
        return None
    parts = pattern.named_children
    if len(parts) != 2 or parts[0].text != b"Err" or parts[1].type != "identifier":
        return None
    return (parts[1].text or b"").decode()


def _error_source(anchor: Node, name: str) -> Node | None:
    """The call whose error `name` is at `anchor`, when `name` is bound by `.unwrap_or_else(|name|
    ..)` on it, an `Err(name) =>` arm of a match on it or `if let Err(name) = CALL`; None when
    `name` is bound otherwise (or not in this function)."""
    current = anchor.parent
    while current is not None and current.type != "function_item":
        kind = current.type
        if kind == "closure_expression":
            if name not in pattern_names(current.child_by_field_name("parameters")):
                current = current.parent
                continue
            arguments = current.parent
            call = arguments.parent if arguments is not None else None
            method = call.child_by_field_name("function") if call is not None else None
            if method is None or method.type != "field_expression":
                return None
            field = method.child_by_field_name("field")
            if field is None or field.text != b"unwrap_or_else":
                return None
            return method.child_by_field_name("value")
        if kind == "match_arm":
            pattern = current.child_by_field_name("pattern")
            if name not in pattern_names(pattern):
                current = current.parent
                continue
            if _err_pattern_name(pattern) != name:
                return None
            block = current.parent
            matched = block.parent if block is not None else None
            return matched.child_by_field_name("value") if matched is not None else None
        if kind == "if_expression":
            condition = current.child_by_field_name("condition")
            if condition is not None and condition.type == "let_condition":
                pattern = condition.child_by_field_name("pattern")
                if name in pattern_names(pattern):
                    if _err_pattern_name(pattern) != name:
                        return None
                    return condition.child_by_field_name("value")
        if kind == "block" and _shadowed_before(current, anchor, name):
            return None
        current = current.parent
    return None


def _shadowed_before(block: Node, anchor: Node, name: str) -> bool:
    """Whether a `let` in `block` before `anchor` binds `name` again."""
    for statement in block.named_children:
        if statement.start_byte >= anchor.start_byte:
            break
        if statement.type == "let_declaration" and name in pattern_names(
            statement.child_by_field_name("pattern")
        ):
            return True
    return False


# Where an enum of the file is not declared: a function's body, another type's fields.
_NOT_ENUM_SCOPES = frozenset({"function_item", "enum_variant_list", "field_declaration_list"})


def _file_enum(node: Node, name: str) -> tuple[Node, list[bytes]] | None:
    """The one `enum name` of `node`'s file deriving its Display, and the variants' attributes
    that may hold their texts (`error`, `display`: `#[derive(Error, Display)]` has both)."""
    enum = file_item(node, "enum_item", name.encode(), _NOT_ENUM_SCOPES)
    if enum is None:
        return None
    attributes = []
    sibling = enum.prev_sibling
    while sibling is not None and (sibling.type == "attribute_item" or sibling.type in COMMENTS):
        attributes.append(sibling.text or b"")
        sibling = sibling.prev_sibling
    names = [
        attribute
        for attribute, derive in _DISPLAY_DERIVES.items()
        if any(derive.match(text) for text in attributes)
    ]
    if any(
        text.replace(b" ", b"").startswith(b"#[%s(" % attribute)
        for attribute in names
        for text in attributes
    ):
        return None  # one text for the whole enum: not read
    return (enum, names) if names else None


def _attribute_text(tokens: Node) -> str | None:
    """The literal of `("..", args)` or `(fmt = "..", args)`."""
    named = [t for t in tokens.named_children if t.type not in COMMENTS]
    if named and named[0].type == "identifier" and named[0].text == b"fmt":
        named = named[1:]
    if named and named[0].type in ("string_literal", "raw_string_literal"):
        return string_value(named[0])
    return None


def _variant_texts(enum: Node, attribute_name: bytes) -> list[tuple[str, str | None]]:
    """(name, text) of each variant, in order: its `#[error("..")]` (or `#[display("..")]`)
    text, None where it is not a literal."""
    variants = enum.child_by_field_name("body")
    if variants is None:
        return []
    texts: list[tuple[str, str | None]] = []
    text: str | None = None
    for child in variants.named_children:
        if child.type == "attribute_item":
            attribute = child.named_children[0] if child.named_children else None
            head = attribute.named_children[0] if attribute and attribute.named_children else None
            tokens = attribute.child_by_field_name("arguments") if attribute else None
            if head is not None and head.text == attribute_name and tokens is not None:
                text = _attribute_text(tokens)
        elif child.type == "enum_variant":
            name = child.child_by_field_name("name")
            texts.append(((name.text or b"").decode() if name is not None else "", text))
            text = None
    return texts


@dataclass(frozen=True, slots=True)
class ShownErrors:
    """What a Display-only panic prints: each variant's text by its path (`SpawnError::Missing`),
    and whether some variant's text is not known (the placeholder message then stays one)."""

    texts: dict[str, str]  # text -> the first variant printing it
    other_texts: bool


def error_variant_messages(
    anchor: Node, message: str, args: Node, source: bytes, reparser: Reparser
) -> ShownErrors | None:
    """The texts a Display-only panic at `anchor` prints (see the module's doc); None when the
    site is not one."""
    name = _shown_name(message, args, source, reparser)
    if name is None:
        return None
    called = _called_name(_error_source(anchor, name))
    function = file_function(anchor, *called) if called is not None else None
    returns = function.child_by_field_name("return_type") if function is not None else None
    found = _RESULT_ERROR.fullmatch((returns.text or b"").decode()) if returns is not None else None
    enum = _file_enum(anchor, found.group(1)) if found is not None else None
    node, attributes = enum if enum is not None else (None, [])
    variants: list[tuple[str, str | None]] = []
    for attribute in attributes:
        variants = _variant_texts(node, attribute) if node is not None else []
        if any(text for _, text in variants):
            break
    texts: dict[str, str] = {}
    for variant, text in variants:
        if text and text.strip():
            texts.setdefault(text, f"{found.group(1) if found else ''}::{variant}")
    if not texts:
        return None
    return ShownErrors(texts, any(not text or not text.strip() for _, text in variants))
