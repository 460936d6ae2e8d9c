"""Panic hooks that print their own line instead of std's `thread '..' panicked at`.

A project may install a hook (`std::panic::set_hook`) printing, for instance, `Panicked at
crates/x/src/y.rs:12:5 when checking `file.py`: `MESSAGE``. The shapes known here are read
in any paste; a catalog declares its own project's format in its scan settings (`[[hook]]
pattern = '...'`, see bot/scan/builders.py), a regex with named groups: `message` (required),
`path`, `line` and `col` (optional). A hook line with an empty `message` takes the lines
below it, as a std header does.
"""

from __future__ import annotations

import re

from bot.catalog.model import value_class

GROUPS = ("message", "path", "line", "col")
_MAX_PATTERN = 1000


class HookFormatError(ValueError):
    """A declared hook pattern that cannot be used."""


@value_class(frozen=True)
class HookFormat:
    """One hook's line: `regex` is searched in a line (markdown and log prefixes left on)."""

    regex: re.Pattern[str]
    source: str  # where it was declared ("known", or the catalog file)
    silent: bool = False  # never prints the message: none is read below its line

    @classmethod
    def without_message(cls, pattern: str) -> HookFormat:
        """A known hook that prints where a panic happened but never its message (Rust 1.81's
        `PanicHookInfo` printed with `{:?}`): read as a header whose message was left out,
        nothing below it taken for one."""
        return cls(re.compile(pattern), "known", silent=True)

    @classmethod
    def of(cls, pattern: str, source: str = "known") -> HookFormat:
        if len(pattern) > _MAX_PATTERN:
            raise HookFormatError(f"a hook pattern is at most {_MAX_PATTERN} characters")
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            raise HookFormatError(f"not a valid regex: {exc}") from None
        if "message" not in regex.groupindex:
            raise HookFormatError("a hook pattern needs a named group `message`: (?P<message>.*)")
        unknown = set(regex.groupindex) - set(GROUPS)
        if unknown:
            raise HookFormatError(
                f"unknown group(s) {', '.join(sorted(unknown))}; known: {', '.join(GROUPS)}"
            )
        return cls(regex, source)


_PATH = r"(?P<path>[^\s`'\"]{1,500}?\.rs):(?P<line>\d{1,9})(?::(?P<col>\d{1,9}))?"
KNOWN_HOOKS = (
    # `Panicked at PATH:L:C when checking `file.py`: `MESSAGE``: capital P, a context clause.
    HookFormat.of(rf"\bPanicked at {_PATH}(?: [^:]{{1,300}}?)?:(?: (?P<message>.*))?$"),
    # The same hook when the panic's location is unknown (a panic another thread propagated):
    # `Panicked when checking `file.py`: `MESSAGE``.
    HookFormat.of(r"\bPanicked when checking `[^`\n]{1,500}`: (?P<message>`.+`)$"),
    # A server's logging hook: `thread 'NAME' panicked 'MESSAGE' at "PATH:LINE"` (the log
    # line's own location, before it, is the hook's).
    HookFormat.of(rf"\bthread '[^'\n]{{0,200}}' panicked '(?P<message>.+)' at \"{_PATH}\""),
    # A hook logging its `PanicInfo` with `{:?}`: `PanicInfo { payload: Any, message:
    # Some(MESSAGE), location: Location { file: "PATH", line: L, col: C } }` (Rust before 1.81;
    # its successor `PanicHookInfo` prints no message).
    HookFormat.of(
        r"\bPanicInfo \{ payload: Any(?: \{ \.\. \})?, message: Some\((?P<message>.+)\), "
        r"location: Location \{ file: \"(?P<path>[^\"\n]{1,500}?\.rs)\", "
        r"line: (?P<line>\d{1,9}), col: (?P<col>\d{1,9}) \}"
    ),
    # The same line cut by a terminal after `, location` (the location on the next line).
    HookFormat.of(
        r"\bPanicInfo \{ payload: Any(?: \{ \.\. \})?, message: Some\((?P<message>.+)\), location$"
    ),
    # A hook printing Rust 1.81's `PanicHookInfo` with `{:?}`: `PanicHookInfo { payload: Any {
    # .. }, location: Location { file: "PATH", line: L, col: C }, can_unwind: ..` (its payload
    # is opaque: the message is not printed).
    HookFormat.without_message(
        r"\bPanicHookInfo \{ payload: Any(?: \{ \.\. \})?, location: Location \{ "
        r"file: \"(?P<path>[^\"\n]{1,500}?\.rs)\", line: (?P<line>\d{1,9}), "
        r"col: (?P<col>\d{1,9}) \}"
    ),
    # pyo3 raises a Rust panic in Python as `PanicException: MESSAGE` (the traceback's last line).
    HookFormat.of(r"(?:^|[\s>#])(?:pyo3_runtime\.)?PanicException: (?P<message>\S.*)$"),
    # The same exception as Python's `repr` prints it (a `PyErr`'s `{:?}`, a logged exception):
    # `PanicException('MESSAGE')`, or with double quotes when the message holds a `'`.
    HookFormat.of(r"\bPanicException\((['\"])(?P<message>(?:(?!\1)[^\\\n]|\\.){1,2000})\1\)"),
    # A language server answers a request whose handler panicked with an error whose message
    # is `request handler panicked: MESSAGE` (an editor's log or notification shows it).
    HookFormat.of(r"(?:^|[\s>#:\"])[Rr]equest handler panicked: (?P<message>\S.*)$"),
    # tracing-panic's event, in tracing's text or JSON format: `panic.payload="MESSAGE"
    # panic.location="PATH:L:C"` (`"panic.payload":"MESSAGE","panic.location":"PATH:L:C"`).
    HookFormat.of(
        r"\bpanic\.payload\"?[=:]\"(?P<message>(?:[^\"\\]|\\.){1,2000})\",? ?"
        rf"\"?panic\.location\"?[=:]\"{_PATH}\""
    ),
)


@value_class(frozen=True)
class HookLine:
    message: str
    location: str | None  # `PATH:LINE[:COL]`, as a header would print it
    start: int  # column of the match in the line
    silent: bool = False  # the hook never prints the message: none is read below it


def read_hook_line(line: str, hooks: tuple[HookFormat, ...]) -> HookLine | None:
    """The first hook format matching `line`, read."""
    for hook in hooks:
        found = hook.regex.search(line)
        if found is None:
            continue
        groups = found.groupdict()
        message = (groups.get("message") or "").strip()
        if len(message) > 1 and message[0] == message[-1] == "`":
            message = message[1:-1].strip()
        location = None
        if groups.get("path") and groups.get("line"):
            location = f"{groups['path']}:{groups['line']}"
            if groups.get("col"):
                location += f":{groups['col']}"
        return HookLine(message, location, found.start(), hook.silent)
    return None
