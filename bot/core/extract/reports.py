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
)

# burn-train's banner: `=== PANIC ===`, the message, maybe its location, `===` or a blank line.
BANNER = "=== PANIC ==="
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
    start = (index, view.column + len(view.text) - len(view.text.lstrip()))
    message = collapse(" ".join(parts))[:MAX_MESSAGE_CHARS]
    end = (last, len(reader.lines[last]))
    return Draft(message, None, location, True, False, start, end), last + 1


def eyre(
    reader: Reader, index: int, view: View, *, headerless: bool = False
) -> tuple[Draft | None, int]:
    """color-eyre's hook: `The application panicked (crashed).`, `Message:  ...`,
    `Location: PATH:LINE`; or its `Message:` and `Location:` lines alone (`headerless`,
    `index` the line above `Message:`), which need the location."""
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
            location = parse_location(stripped[len("Location:") :].replace(" ", ""))
            last = probe
            break
        if stripped.startswith(FENCE_PREFIXES) or EYRE_HEADER in stripped:
            break
        parts.append(stripped)
        last = probe
        probe += 1
    if headerless:
        if location is None:
            return None, index + 2
        index, position = index + 1, len(view.text) - len(view.text.lstrip())
    else:
        position = _greeting_column(view)
    start = (index, view.column + position)
    message = collapse(" ".join(parts))[:MAX_MESSAGE_CHARS]
    end = (last, len(reader.lines[last]))
    return Draft(message, None, location, True, False, start, end), last + 1


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
