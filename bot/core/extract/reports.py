"""Panic reports that are not std's own header: the hooks crates install and the banners
programs print around a panic, one reader each (std's new and old headers, a hook declared in
a catalog's `hooks.toml` and a message pasted alone are read by bot.core.extract.scanner).

Each reader takes the line its marker is on and gives a `Draft` and the line after the report,
or None and the next line when the lines around do not make a report of its format.
"""

from __future__ import annotations

import re

from bot.core.extract.paths import parse_location
from bot.core.extract.reading import (
    FENCE_PREFIXES,
    MAX_MESSAGE_CHARS,
    MAX_MESSAGE_LINES,
    MESSAGE_STOPS,
    PANICKED,
    Draft,
    Reader,
    View,
    collapse,
    cut_words,
)
from bot.core.panic import Location

# A banner: `=== PANIC ===`, the message, maybe its location, `===` or a blank line. Without a
# location of its own next to a std report, it is a frame around that report (a program's
# notice such as where its log is), not a report.
BANNER = "=== PANIC ==="
_BANNER_FRAMES = 12  # lines around a banner where a std report makes it a frame
# human-panic's crash report (TOML): `explanation` holds `Panic occurred in file 'PATH' at line
# N`, a later `cause = '...'` the message.
HUMAN_PANIC = "Panic occurred in file '"
HUMAN_PANIC_AT = re.compile(
    r"Panic occurred in file '(?P<path>[^'\n]{1,1000})' at line (?P<line>\d{1,9})"
)
_HUMAN_PANIC_CAUSE = re.compile(r"""^"?cause"?\s*=\s*(?P<quote>'|")(?P<message>.*)(?P=quote)\s*$""")
_HUMAN_PANIC_LINES = 8  # the report's lines between its explanation and its cause
# color-eyre's hook: `The application panicked (crashed).`, `Message:`, `Location:`.
EYRE_HEADER = "application panicked"
# miette's panic hook: `× Main thread panicked.`, then `├─▶ at PATH:L:C` and `╰─▶ MESSAGE`;
# a program's own hook rendered by miette names the thread (`× Thread 'screen' panicked.`)
# and may list other causes (`├─▶ Originating Thread(s)`, `│ ...`) before `├─▶ At PATH:L:C`.
MIETTE_HEADER = " panicked."
MIETTE_CAUSE = ("├─▶", "╰─▶")
_MIETTE_TOP = re.compile(r"(?:^|\s)×\s+(?:\S.{0,80}\s)?thread\b.{0,80}? panicked\.(?:\s|$)", re.I)
_MIETTE_MORE = "│"  # a cause's further lines
_MIETTE_CAUSES = 12  # lines between the header and the message


def human_panic(reader: Reader, index: int, view: View) -> tuple[Draft | None, int]:
    """human-panic's report: the location in `explanation`, the message in the `cause` line
    below it (a TOML string, quoted with `'` or `"`)."""
    found = HUMAN_PANIC_AT.search(view.stripped)
    if found is None:
        return None, index + 1
    location = parse_location(f"{found['path']}:{found['line']}")
    limit = min(len(reader.lines), index + 1 + _HUMAN_PANIC_LINES)
    for probe in range(index + 1, limit):
        cause = _HUMAN_PANIC_CAUSE.match(reader.view(probe).stripped)
        if cause is None:
            continue
        message = cause["message"]
        if cause["quote"] == '"':
            message = message.replace('\\"', '"').replace("\\\\", "\\")
        if not message.strip():
            return None, index + 1
        start = (index, view.column + found.start())
        end = (probe, len(reader.lines[probe]))
        draft = Draft(
            collapse(message)[:MAX_MESSAGE_CHARS], None, location, True, False, start, end
        )
        return draft, probe + 1
    return None, index + 1


def banner(reader: Reader, index: int, view: View) -> tuple[Draft | None, int]:
    """`=== PANIC ===`, then the message and maybe `at PATH:LINE:COL` / `Location: ..`,
    up to a blank line or `===`. A std header below the banner is read as itself."""
    limit = min(len(reader.lines), index + 1 + MAX_MESSAGE_LINES)
    parts: list[str] = []
    location = None
    last = index
    probe = index + 1
    while probe < limit:
        stripped = reader.view(probe).stripped
        if PANICKED in stripped:
            return None, index + 1
        if not stripped or stripped.startswith(("===", *FENCE_PREFIXES, *MESSAGE_STOPS)):
            break
        for marker in ("Location:", "at ", ""):
            if stripped.startswith(marker) and location is None:
                found = parse_location(stripped[len(marker) :].strip())
                if found is not None and found.path.endswith(".rs"):
                    location = found
                    break
        else:
            parts.append(stripped)
        last = probe
        probe += 1
    if not parts:
        return None, index + 1
    if location is None:
        near = reader.lines[max(0, index - _BANNER_FRAMES) : last + 1 + _BANNER_FRAMES]
        if any(PANICKED in line for line in near):
            return None, last + 1  # a frame around a std report
    start = (index, view.column + len(view.text) - len(view.text.lstrip()))
    message = collapse(" ".join(parts))[:MAX_MESSAGE_CHARS]
    end = (last, len(reader.lines[last]))
    return Draft(message, None, location, True, False, start, end), last + 1


def eyre(reader: Reader, index: int, view: View) -> tuple[Draft | None, int]:
    """color-eyre's hook: `The application panicked (crashed).`, `Message:  ...`,
    `Location: PATH:LINE` (its two lines alone are read by `fields`)."""
    limit = min(len(reader.lines), index + 4)
    probe = index + 1
    while probe < limit and not reader.view(probe).stripped.startswith("Message:"):
        probe += 1
    if probe >= limit:
        return None, index + 1
    parts = [reader.view(probe).stripped[len("Message:") :]]
    location = None
    last = probe
    probe += 1
    limit = min(len(reader.lines), probe + MAX_MESSAGE_LINES)
    while probe < limit:
        stripped = reader.view(probe).stripped
        if stripped.startswith("Location:"):
            location, last = _location_value(reader, probe, stripped[len("Location:") :])
            break
        if stripped.startswith(FENCE_PREFIXES) or EYRE_HEADER in stripped:
            break
        parts.append(stripped)
        last = probe
        probe += 1
    start = (index, view.column + _greeting_column(view))
    message = collapse(" ".join(parts))[:MAX_MESSAGE_CHARS]
    end = (last, len(reader.lines[last]))
    return Draft(message, None, location, True, False, start, end), last + 1


# A hook's labelled lines without a header line: `Message: MESSAGE` and a location labelled
# `Location:` (color-eyre's two lines, a program's own `Source Location:` / `Panic Location:`)
# within a few lines of each other, in either order, other labelled lines between them (`Thread
# Name: main`, `Time: ..`); a value may be bracketed (`Location: [PATH:L:C]`).
LOCATION_FIELD = re.compile(r"^(?:[A-Z][a-z]+ )?Location:\s*(?P<value>\S.*)$")
MESSAGE_FIELD = "Message:"
_FIELD = re.compile(r"^[A-Z][a-z]+(?: [A-Z][a-z]+)?:(?:\s|$)")  # `Thread Name:`, `Stack Trace:`
_FIELDS_APART = 4  # lines between the location and the message, at most
_WRAPPED_VALUE_LINES = 3  # lines a terminal may have cut a location's value over, below it


def fields(reader: Reader, index: int, view: View) -> tuple[Draft | None, int]:
    """A hook's `Message:` and `..Location:` lines (`index` is either): the message, its lines
    down to a blank line or another labelled line, and the location nearest to it."""
    on_message = view.stripped.startswith(MESSAGE_FIELD)
    first = max(index - _FIELDS_APART, 0) if on_message else index
    window = range(first, min(len(reader.lines), index + _FIELDS_APART + 1))
    at = (
        index
        if on_message
        else next((p for p in window if reader.view(p).stripped.startswith(MESSAGE_FIELD)), None)
    )
    if at is None:
        return None, index + 1
    places = [
        (abs(p - at), p, found["value"])
        for p in window
        if (found := LOCATION_FIELD.match(reader.view(p).stripped))
    ]
    if not places:
        return None, index + 1
    _, place, value = min(places)
    location, through = _location_value(reader, place, value)
    if location is None or not location.path.endswith(".rs"):
        return None, index + 1
    parts = [reader.view(at).stripped[len(MESSAGE_FIELD) :].strip()]
    last = probe = at
    limit = min(len(reader.lines), at + MAX_MESSAGE_LINES)
    while (probe := probe + 1) < limit:
        stripped = reader.view(probe).stripped
        if not stripped or stripped.startswith(FENCE_PREFIXES) or _FIELD.match(stripped):
            break
        parts.append(stripped)
        last = probe
    message = _unbracketed(collapse(" ".join(parts)))[:MAX_MESSAGE_CHARS]
    if not message:
        return None, index + 1
    top, bottom = min(at, place), max(last, through)
    start, end = (top, reader.view(top).column), (bottom, len(reader.lines[bottom]))
    return Draft(message, None, location, True, False, start, end), bottom + 1


def _location_value(reader: Reader, place: int, value: str) -> tuple[Location | None, int]:
    """The location a `Location:` line at `place` holds (`value`), and the last line it took:
    a terminal may have cut it at its width, the rest below, one word a line."""
    location = parse_location(_unbracketed(value).replace(" ", ""))
    through = place
    for probe, below in cut_words(reader, place + 1, _WRAPPED_VALUE_LINES):
        if location is not None or _FIELD.match(below):
            break
        value, through = value + below, probe
        location = parse_location(_unbracketed(value).replace(" ", ""))
    return (location, through) if location is not None else (None, place)


def _unbracketed(value: str) -> str:
    """A field's value without the brackets a hook put around it (`[src/lib.rs:742:7]`)."""
    value = value.strip()
    return value[1:-1].strip() if value[:1] == "[" and value[-1:] == "]" else value


def _greeting_column(view: View) -> int:
    """Where `The application panicked` starts on its line (color-eyre's and better-panic's)."""
    position = view.text.find(EYRE_HEADER)
    return position - 4 if view.text.startswith("The ", position - 4) else position


# better-panic's hook: the greeting, the message's lines indented by two spaces, then
# `in PATH, line N` (or `in PATH:N`, or `in <unknown>`) and `thread: NAME`.
_BETTER_PANIC_AT = re.compile(
    r"in (?P<path>\S.*?)(?:, line (?P<line>\d{1,9})|:(?P<suffix>\d{1,9}))?"
)


def better_panic(reader: Reader, index: int, view: View) -> tuple[Draft | None, int]:
    """better-panic's report after its greeting (`The application panicked (crashed)`, no
    `Message:` line): the indented message lines, then `in ..` and `thread: ..`."""
    parts: list[str] = []
    probe = index + 1
    limit = min(len(reader.lines), probe + MAX_MESSAGE_LINES)
    while probe < limit and reader.view(probe).text.startswith("  "):
        parts.append(reader.view(probe).stripped)
        probe += 1
    if not parts or not parts[0] or probe + 1 >= len(reader.lines):
        return None, index + 1
    place = _BETTER_PANIC_AT.fullmatch(reader.view(probe).stripped)
    if place is None or not reader.view(probe + 1).stripped.startswith("thread: "):
        return None, index + 1
    line = place.group("line") or place.group("suffix")
    location = parse_location(f"{place.group('path')}:{line}") if line else None
    position = _greeting_column(view)
    message = collapse(" ".join(parts))[:MAX_MESSAGE_CHARS]
    start, end = (index, view.column + position), (probe + 1, len(reader.lines[probe + 1]))
    return Draft(message, None, location, True, False, start, end), probe + 2


def miette(reader: Reader, index: int, view: View) -> tuple[Draft | None, int]:
    """miette's hook: the header, then its causes, each on a line of its own after a
    tree glyph: `at PATH:L:C` (when known; other causes and their `│` lines are passed over)
    and the message, last, whose further lines are indented under it, up to `help:`, a
    backtrace frame or a blank line."""
    top = _MIETTE_TOP.search(view.stripped)
    if top is None:
        return None, index + 1
    limit = min(len(reader.lines), index + 1 + _MIETTE_CAUSES)
    probe = index + 1
    location = None
    while probe < limit:
        stripped = reader.view(probe).stripped
        if not stripped and probe + 1 < limit:
            probe += 1  # a copy that put a blank line between the report's lines
            continue
        if stripped.startswith(MIETTE_CAUSE[1]):
            break
        if not stripped.startswith((MIETTE_CAUSE[0], _MIETTE_MORE)):
            return None, index + 1
        cause = stripped[len(MIETTE_CAUSE[0]) :].strip()
        if stripped.startswith(MIETTE_CAUSE[0]) and cause[:3].lower() == "at ":
            location = parse_location(cause[3:])
        probe += 1
    if probe >= limit:
        return None, index + 1
    parts = [reader.view(probe).stripped[len(MIETTE_CAUSE[1]) :].strip()]
    last = probe
    probe += 1
    end = min(len(reader.lines), probe + MAX_MESSAGE_LINES)
    while probe < end:
        line = reader.view(probe)
        if not line.stripped or line.stripped.startswith(("help:", *MIETTE_CAUSE)):
            break
        if not line.text[:1].isspace() or reader.ends_message(line, True):
            break
        parts.append(line.stripped)
        last = probe
        probe += 1
    if not parts[0]:
        return None, index + 1
    start = (index, view.column + view.text.find(top.group().strip()[1:].lstrip()))
    message = collapse(" ".join(parts))[:MAX_MESSAGE_CHARS]
    draft = Draft(message, None, location, True, False, start, (last, len(reader.lines[last])))
    return draft, last + 1
