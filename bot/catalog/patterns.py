"""Message patterns: Rust format strings turned into regexes, and untrusted regexes made safe.

A catalog comes from outside, so its regexes are untrusted. Two guards: every pattern runs on
RE2, whose matching time is linear in the input whatever the pattern; and patterns with nested
repetition such as `(a+)+` are refused up front with a message a catalog author can act on,
since they are almost always a mistake and would be catastrophic on a backtracking engine.
"""

from __future__ import annotations

import re

# The stdlib parser, used only to inspect pattern structure (typeshed has no stub for it).
import re._parser as sre_parse  # type: ignore[import-not-found]
from collections.abc import Mapping
from functools import lru_cache
from typing import Protocol

import re2

from bot.catalog.model import value_class

MAX_PATTERN_LENGTH = 2_000
# A placeholder stands for at most this many characters of message: bounded, so a pattern
# made of placeholders cannot swallow a whole log. The regex itself uses `(.*?)` (a counted
# repetition would multiply RE2's program size by the bound); `placeholders_fit` checks the
# bound on the groups after a match.
PLACEHOLDER_MAX = 400

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False


class RegexMatch(Protocol):
    """What the code reads from a match of a compiled pattern (re2 ships no types)."""

    def group(self, index: int = 0, /) -> str: ...
    def groups(self) -> tuple[str | None, ...]: ...
    def groupdict(self) -> dict[str, str | None]: ...
    def end(self) -> int: ...


class Regex(Protocol):
    """A pattern compiled by `compile_safe`."""

    def search(self, text: str, /) -> RegexMatch | None: ...
    def match(self, text: str, /) -> RegexMatch | None: ...
    def fullmatch(self, text: str, /) -> RegexMatch | None: ...
    @property
    def groupindex(self) -> Mapping[str, int]: ...


class PatternError(ValueError):
    """A pattern that cannot be used; the message says why in a catalog author's words."""


@value_class(frozen=True)
class Segment:
    """A piece of a Rust format string: literal text, or a placeholder such as `{:?}`."""

    text: str
    is_placeholder: bool


# `{`, then an optional argument (name or index), then an optional `:spec`, then `}`.
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*|[0-9]+)?(?::([^{}]*))?\}")
# What a format string is made of besides literal text: escaped braces, then placeholders.
_FORMAT_TOKEN = re.compile(r"\{\{|\}\}|" + _PLACEHOLDER.pattern)


def parse_format(fmt: str) -> list[Segment]:
    """Split a Rust format string into literal text and placeholders.

    `{{` and `}}` are literal braces; a brace that does not open a valid placeholder is kept
    as literal text (catalog messages are not always well-formed format strings).
    """
    segments: list[Segment] = []
    literal: list[str] = []
    position = 0
    for token in _FORMAT_TOKEN.finditer(fmt):
        literal.append(fmt[position : token.start()])
        text = token.group(0)
        if text in ("{{", "}}"):
            literal.append(text[0])
        else:
            if any(literal):
                segments.append(Segment("".join(literal), False))
            literal = []
            segments.append(Segment(text, True))
        position = token.end()
    literal.append(fmt[position:])
    if any(literal):
        segments.append(Segment("".join(literal), False))
    return segments


def literal_text(fmt: str) -> str:
    """The format's literal text with each placeholder as a single space."""
    return " ".join(s.text for s in parse_format(fmt) if not s.is_placeholder)


def literal_fragments(fmt: str) -> list[str]:
    return [s.text for s in parse_format(fmt) if not s.is_placeholder and s.text.strip()]


_WHITESPACE = re.compile(r"\s+")


# Typographic quotes (what a word processor, a chat client or a web page makes of `'` and `"`)
# as the ASCII quotes Rust prints.
TYPOGRAPHIC_QUOTES = {
    "\u2018": "'",
    "\u2019": "'",
    "\u201a": "'",
    "\u201b": "'",
    "\u201c": '"',
    "\u201d": '"',
    "\u201e": '"',
    "\u201f": '"',
}
_FOLD_QUOTES = str.maketrans(TYPOGRAPHIC_QUOTES)


def normalise_message(text: str) -> str:
    """Whitespace runs collapsed to one space, ends trimmed, typographic quotes made ASCII:
    how messages are compared."""
    if not text.isascii():
        text = text.translate(_FOLD_QUOTES)
    return " ".join(text.split())


def _escape_literal(text: str) -> str:
    # Whitespace-insensitive: any run of spaces in the format matches any run (or none, since
    # terminals and copy-paste break lines mid-message).
    parts = _WHITESPACE.split(text)
    return r"\s*".join(re.escape(p) for p in parts)


def format_to_regex(fmt: str | list[Segment]) -> str:
    """A regex for the messages a Rust format string can produce (not anchored).

    Each placeholder is a capturing group; see `placeholders_fit` for its bound.
    """
    segments = parse_format(normalise_message(fmt)) if isinstance(fmt, str) else fmt
    return "".join(
        "(.*?)" if segment.is_placeholder else _escape_literal(segment.text) for segment in segments
    )


def placeholders_fit(match: RegexMatch, trailing_free: bool = False) -> bool:
    """True when every placeholder group of a derived pattern's match is within the bound.

    `trailing_free`: the format ends with a placeholder, whose value (a long Debug dump, a
    list of mismatches) runs to the end of the message; only the inner ones are bounded.
    """
    groups = match.groups()
    if trailing_free and groups:
        groups = groups[:-1]
    return all(len(group or "") <= PLACEHOLDER_MAX for group in groups)


def check_pattern(pattern: str) -> None:
    """Raise PatternError when a catalog pattern is unusable or unsafe."""
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise PatternError(
            f"the pattern is {len(pattern)} characters long; the limit is {MAX_PATTERN_LENGTH}"
        )
    try:
        parsed = sre_parse.parse(pattern)
    except re.error as exc:
        raise PatternError(f"the pattern is not a valid regular expression: {exc}") from None
    nested = _find_nested_repeat(parsed)
    if nested:
        raise PatternError(
            f"the pattern `{pattern}` repeats something that itself repeats ({nested}), "
            "which can take exponential time on a long message; rewrite it without a "
            "repetition inside a repetition"
        )
    try:
        re2.compile(pattern, options=_RE2_OPTIONS)
    except re2.error as exc:
        detail = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else exc
        raise PatternError(
            f"the pattern uses a feature the linear-time engine does not support ({detail}); "
            "backreferences and lookaround are not allowed"
        ) from None


_REPEATS = tuple(
    op
    for op in (
        sre_parse.MAX_REPEAT,
        sre_parse.MIN_REPEAT,
        getattr(sre_parse, "POSSESSIVE_REPEAT", None),
    )
    if op is not None
)


def _find_nested_repeat(parsed: sre_parse.SubPattern, inside_repeat: bool = False) -> str | None:
    for op, av in parsed:
        if op in _REPEATS:
            _low, high, sub = av
            unbounded = high == sre_parse.MAXREPEAT or high > 100
            if inside_repeat and unbounded:
                return "a `+`, `*` or `{n,}` inside another"
            found = _find_nested_repeat(sub, inside_repeat or unbounded)
            if found:
                return found
        elif op is sre_parse.SUBPATTERN:
            found = _find_nested_repeat(av[-1], inside_repeat)
            if found:
                return found
        elif op is sre_parse.BRANCH:
            for branch in av[1]:
                found = _find_nested_repeat(branch, inside_repeat)
                if found:
                    return found
    return None


@lru_cache(maxsize=8192)
def compile_safe(pattern: str) -> Regex:
    """Compile a checked pattern on the linear-time engine (cached: catalogs repeat)."""
    return re2.compile(pattern, options=_RE2_OPTIONS)
