"""Rust string and char literals: their values, escapes decoded; text as a format string."""

from __future__ import annotations

from tree_sitter import Node

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


def char_value(node: Node) -> str | None:
    text = node.text.decode("utf-8", errors="replace") if node.text is not None else ""
    if not text.startswith("'") or len(text) < 3:
        return None
    return _decode_escapes(text[1:-1])


class FormatText(str):
    """A text that is a format string already (a `format!` bound to a local: `{}` stands for a
    value there), so it is never escaped. `args`: its `format!`'s arguments, when they are yet
    to be filled in from the names in scope (`bindings.constants_at`)."""

    args: list[Node] | None = None


def escape_format(text: str) -> str:
    """Literal text as a format string that prints it as is: `{D}` -> `{{D}}` (a FormatText
    as it is)."""
    if isinstance(text, FormatText):
        return str(text)
    return text.replace("{", "{{").replace("}", "}}")
