"""A crate's own `macro_rules!` that panic with a message they are given, and the messages
a call of one builds from its arguments."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node, QueryCursor

from bot.scan.rust.grammar import INVOCATIONS_QUERY, Reparser, macro_name
from bot.scan.rust.messages import (
    MESSAGE_ARGUMENT,
    literal_message,
    split_top_level,
    with_constants,
)

_METAVARIABLE = re.compile(rb"\$([A-Za-z_][A-Za-z0-9_]*)")
# `$($arg)*`, `$(, $x:expr),+`: a repetition; the message never comes from inside one.
_REPETITION = re.compile(rb"\$\((?:[^()]|\([^()]*\))*\)\s*[^\s*+?]?\s*[*+?]")


@dataclass(frozen=True, slots=True)
class MacroRule:
    """One rule of a crate's own `macro_rules!` whose body panics with a message it is given."""

    metavariables: tuple[str, ...]  # `$msg` and the like, in the matcher's order
    open_ended: bool  # the matcher ends with a repetition (`$($arg:tt)*`)
    # (kind, message argument index, the panic's argument token tree with `$x` left in)
    panics: tuple[tuple[str, int, bytes], ...]


def macro_rules(definition: Node, reparser: Reparser) -> list[MacroRule]:
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
        for _index, captures in QueryCursor(INVOCATIONS_QUERY).matches(right):
            if "name" not in captures:
                continue
            kind_name = macro_name(captures["name"][0])
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


def _message_without_metavariables(template: bytes, index: int, reparser: Reparser) -> str | None:
    plain = _METAVARIABLE.sub(b"__meta", _REPETITION.sub(b"__rest", template))
    args = reparser.arguments(plain, 0, len(plain))
    if not args or index >= len(args):
        return None
    return literal_message(args[index], plain, reparser)


def macro_built_messages(
    rules: list[MacroRule], call_args: Node, reparser: Reparser, constants: dict[str, str]
) -> list[tuple[str, str]]:
    """(kind, message) of each panic a call of the crate's macro builds from its arguments
    (`constants`: the texts names stand for at the call)."""
    chunks = split_top_level(call_args)
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
            message = literal_message(args[index], filled, reparser, constants=constants)
            if message is not None:
                message = with_constants(message, args[index + 1 :], constants)
            if message is not None:
                out.append((kind, message))
        if out:
            return out
    return []
