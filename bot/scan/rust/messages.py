"""The message an argument stands for, when it is literal.

A string literal, `concat!` of literals, `format!("...", ..)` (`.expect(&format!("no file {}",
path))`), or the name of a `const`/`static` `&str` (`constants`: the texts names stand for
where the argument is) count as literal; anything else (`panic!(msg)`) does not.
"""

from __future__ import annotations

from collections.abc import Iterator

from tree_sitter import Node

from bot.catalog.patterns import Segment, parse_format
from bot.scan.rust.grammar import COMMENTS, Reparser, macro_name
from bot.scan.rust.literals import char_value, escape_format, string_value

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


def literal_message(
    node: Node,
    source: bytes,
    reparser: Reparser,
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
        name = macro_name(node)
        return escape_format(constants[name]) if name in constants else None
    if kind == "reference_expression":  # &format!(..) or &"..."
        inner = node.child_by_field_name("value")
        if inner is None:
            return None
        return literal_message(inner, source, reparser, depth + 1, constants)
    if kind == "parenthesized_expression":
        parts = [c for c in node.named_children if c.type not in COMMENTS]
        if len(parts) == 1:
            return literal_message(parts[0], source, reparser, depth + 1, constants)
        return None
    if kind == "macro_invocation":
        name_node = node.child_by_field_name("macro")
        tt = next((c for c in node.named_children if c.type == "token_tree"), None)
        if name_node is None or tt is None:
            return None
        name = macro_name(name_node)
        # `node` may live in a reparsed tree: read its token tree from that tree's bytes.
        text = node.text or b""
        offset = node.start_byte
        args = reparser.arguments(text, tt.start_byte - offset, tt.end_byte - offset)
        if args is None:
            return None
        if name == "format":
            if not args:
                return None
            found = literal_message(args[0], text, reparser, depth + 1, constants)
            return with_constants(found, args[1:], constants) if found is not None else None
        if name == "concat":
            return _concat(args, reparser, depth)
    return None


def split_arguments(args: list[Node]) -> tuple[list[Node], dict[str, Node]]:
    """A format macro's arguments after its format string: the positional ones, and the
    `name = value` ones by name."""
    positional = [a for a in args if a.type != "assignment_expression"]
    named: dict[str, Node] = {}
    for given in args:
        if given.type == "assignment_expression":
            left, right = given.child_by_field_name("left"), given.child_by_field_name("right")
            if left is not None and right is not None and left.text is not None:
                named[left.text.decode()] = right
    return positional, named


def placeholders(
    fmt: str, positional: list[Node], named: dict[str, Node]
) -> Iterator[tuple[Segment, str, str, Node | None]]:
    """Each piece of `fmt`; a placeholder with its name (`""` for `{}`), its spec and the
    argument Rust prints there (`{}` the next positional one, `{N}` the Nth, `{name}` the named
    one; None when the macro has none, as for a variable captured by an inline name)."""
    next_positional = 0
    for segment in parse_format(fmt):
        if not segment.is_placeholder:
            yield segment, "", "", None
            continue
        name, _, spec = segment.text[1:-1].partition(":")
        arg: Node | None
        if name == "":
            arg = positional[next_positional] if next_positional < len(positional) else None
            next_positional += 1
        elif name.isdigit():
            index = int(name)
            arg = positional[index] if index < len(positional) else None
        else:
            arg = named.get(name)
        yield segment, name, spec, arg


def with_constants(fmt: str, args: list[Node], constants: dict[str, str] | None) -> str | None:
    """`fmt` with each placeholder whose argument is a `const` `&str` filled in with its text.

    `("{}: {}", MSG, x)` -> `"<MSG's text>: {}"`; `"{MSG}"` (an inline name) likewise.
    """
    if not constants:
        return fmt
    out: list[str] = []
    filled = False
    for segment, name, spec, arg in placeholders(fmt, *split_arguments(args)):
        if not segment.is_placeholder:
            out.append(escape_format(segment.text))
            continue
        if arg is None and name and not name.isdigit() and name in constants and not spec:
            out.append(escape_format(constants[name]))
            filled = True
            continue
        value = None
        if arg is not None and not spec and arg.type in ("identifier", "scoped_identifier"):
            const_name = macro_name(arg)
            value = constants.get(const_name)
        filled = filled or value is not None
        out.append(escape_format(value) if value is not None else segment.text)
    return "".join(out) if filled else fmt


def _concat(args: list[Node], reparser: Reparser, depth: int) -> str | None:
    parts: list[str] = []
    for arg in args:
        kind = arg.type
        text = arg.text or b""
        if kind in ("string_literal", "raw_string_literal"):
            value = string_value(arg)
        elif kind == "char_literal":
            value = char_value(arg)
        elif kind == "boolean_literal" or (kind == "integer_literal" and text.isdigit()):
            value = text.decode()
        elif kind == "macro_invocation":
            value = literal_message(arg, b"", reparser, depth + 1)
        else:
            value = None
        if value is None:
            return None
        parts.append(value)
    return "".join(parts)


def split_top_level(token_tree: Node) -> list[list[Node]]:
    """Fallback when the arguments do not parse: split the token tree's tokens on commas."""
    chunks: list[list[Node]] = [[]]
    children = token_tree.children[1:-1]
    for child in children:
        if child.type == ",":
            chunks.append([])
        elif child.type not in COMMENTS:
            chunks[-1].append(child)
    if chunks and not chunks[-1]:
        chunks.pop()
    return chunks


def message_from_args(
    source: bytes,
    token_tree: Node,
    index: int,
    reparser: Reparser,
    constants: dict[str, str] | None = None,
) -> str | None:
    args = reparser.arguments(source, token_tree.start_byte, token_tree.end_byte)
    if args is not None:
        if index >= len(args):
            return None
        found = literal_message(args[index], source, reparser, constants=constants)
        if found is None or not constants:
            return found
        return with_constants(found, args[index + 1 :], constants)
    chunks = split_top_level(token_tree)
    if index >= len(chunks) or len(chunks[index]) != 1:
        return None
    only = chunks[index][0]
    if only.type in ("string_literal", "raw_string_literal"):
        return string_value(only)
    return None


def _unwrapped(node: Node) -> Node:
    while node.type in ("reference_expression", "parenthesized_expression"):
        inner = node.child_by_field_name("value") if node.type == "reference_expression" else None
        if inner is None:
            named = [c for c in node.named_children if c.type not in COMMENTS]
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
    return name is not None and macro_name(name) == "format"


def text_message(
    node: Node, source: bytes, reparser: Reparser, constants: dict[str, str] | None
) -> str | None:
    """A `&str` argument (of `.expect`, of a builder): literal text, not a format string,
    unless it is `format!(..)`: `.expect("{D}")` prints `{D}`."""
    message = literal_message(node, source, reparser, constants=constants)
    if message is None or _is_format_call(node):
        return message
    if _unwrapped(node).type in ("identifier", "scoped_identifier"):
        return message  # a const's text, escaped already
    return escape_format(message)
