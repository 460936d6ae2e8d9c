"""Log prefixes: timestamps, levels and targets a logger or a CI runner puts before a line.

`strip_log_prefix` drops one from a line (`[... ERROR target]`, `2024-05-01T10:00:03Z INFO
foo::bar:`); `LOG_START` tells where a new log line starts (it ends a panic message);
`CI_TIMESTAMP` is the stamp GitHub Actions and most CI put before every line; `prefix_shape`
reads any other prefix a header line shares with the line after it (`[app] `, journald's
`Dec 05 10:00:00 host app[812]: `) as a pattern for every line of the paste.
"""

from __future__ import annotations

import re

# A log prefix is read in three optional steps, each a flat regex anchored where the last
# one stopped: `[...]`, a timestamp, a level with an optional `target:`.
_LOG_BRACKET = re.compile(r"\[[^\]\n]{0,200}\][ \t]{0,8}")
_LOG_TIME = re.compile(
    r"(?:\d{4}-\d{2}-\d{2}[T ])?\d{2}:\d{2}:\d{2}[0-9.,]{0,10}[Z+:0-9-]{0,6}[ \t]{1,8}"
)
_LOG_LEVEL = re.compile(r"(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL|CRITICAL)[ \t]{1,8}")
_LOG_TARGET = re.compile(r"[A-Za-z_][A-Za-z0-9_:]{0,200}(?:\{[^{}\n]{0,200}\})?:[ \t]{1,8}")
# Where a new log line starts: it ends the panic message before it.
LOG_START = re.compile(
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}"
    r"|\[\d{4}-\d{2}-\d{2}"
    r"|\[?(?:TRACE|DEBUG|INFO|WARN|ERROR)\]?[ \t]+[A-Za-z_]{1,100}(?:::|\]|:)"
)
_LOG_BRACKET_WORDS = ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "CRITICAL")
_LEVEL_INITIALS = frozenset(word[0] for word in _LOG_BRACKET_WORDS)


def strip_log_prefix(text: str) -> str:
    """Drop a leading log prefix: timestamps, `[... ERROR target]`, `INFO foo::bar:`."""
    if not text:
        return text
    first = text[0]
    if not (
        first.isdigit()
        or first == "["
        or (first in _LEVEL_INITIALS and text.startswith(_LOG_BRACKET_WORDS))
    ):
        return text
    position = 0
    match = _LOG_BRACKET.match(text)
    if match:
        inside = text[1 : text.index("]")]
        # A bracket is a log prefix only when it carries a level or a timestamp.
        if not (inside[:1].isdigit() or any(word in inside for word in _LOG_BRACKET_WORDS)):
            return text
        position = match.end()
    match = _LOG_TIME.match(text, position)
    if match:
        position = match.end()
    match = _LOG_LEVEL.match(text, position)
    if match:
        position = match.end()
        match = _LOG_TARGET.match(text, position)
        if match:
            position = match.end()
    return text[position:].lstrip() if position else text


# GitHub Actions (and most CI) prefix every log line with an ISO timestamp; Jenkins'
# timestamper puts it in brackets (`[2025-01-02T05:12:56.696Z] `).
_ISO = r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z"
CI_TIMESTAMP = re.compile(rf"(?:{_ISO}|\[{_ISO}\])(?: |$)")  # (a blank line: no space)


_DIGITS = re.compile(r"\d+")
_SHAPE_MAX = 160  # characters of a header's prefix read as a line prefix


def prefix_shape(prefix: str, following: str) -> re.Pattern[str] | None:
    """A pattern for `prefix` (what a header line holds before `thread '..' panicked at`) when
    the line after the header starts with it too, numbers read as any numbers (a timestamp
    ticks, a process id does not matter); a blank line of the log may have lost the prefix's
    trailing spaces. None when the prefix is only spaces, too long or not repeated.

    A logger's prefix may come before the program's own tag on the header line only (a
    browser console's `app.js:1 `): then the longest leading part of the prefix that ends a
    logger's field (`:`, `]`, `|`, `>` before a space) and starts the next line is the shape."""
    shape = _shape(prefix, following)
    if shape is not None:
        return shape
    # (a cut at the prefix's end is the whole prefix, tried above)
    for cut in reversed([m.end() for m in _FIELD_END.finditer(prefix) if m.end() < len(prefix)]):
        shape = _shape(prefix[:cut], following)
        if shape is not None:
            return shape
    return None


# Where a logger's field ends inside a header line's prefix (`app[812]: `, `[name] `, `web-1 | `).
_FIELD_END = re.compile(r"[:\]|>][ \t]+")


def _shape(prefix: str, following: str) -> re.Pattern[str] | None:
    head = prefix.rstrip()
    if not head or len(prefix) > _SHAPE_MAX:
        return None
    pattern = "".join(
        re.escape(part) if index % 2 == 0 else r"\d+"
        for index, part in enumerate(_split_digits(head))
    )
    trailing = prefix[len(head) :]
    shape = re.compile(pattern + (f"(?:{re.escape(trailing)}|$)" if trailing else ""))
    return shape if shape.match(following) else None


def _split_digits(text: str) -> list[str]:
    """`text` cut at its runs of digits: text, digits, text, ... (text parts may be empty)."""
    parts: list[str] = []
    position = 0
    for found in _DIGITS.finditer(text):
        parts += [text[position : found.start()], found.group()]
        position = found.end()
    return [*parts, text[position:]]
