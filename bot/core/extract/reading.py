"""What every output format's reader shares (bot.core.extract.scanner, .reports): the panic
report a reader drafts, the line it looks at, and the limits every reader keeps to."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from bot.catalog.model import field, value_class
from bot.core.panic import Frame, Location

MAX_MESSAGE_LINES = 200  # lines of one panic message
MAX_MESSAGE_CHARS = 20000

FENCE_PREFIXES = ("```", "~~~")
# `panicked at`: std's header, whatever its form (a reader of another format steps aside).
PANICKED = "panicked at"
# Lines that end a message: std's notes, a test harness's summary, a banner's frame.
MESSAGE_STOPS = (
    "note:",
    # a banner framing a report: `=== PANIC ===`, a frame line of `=`
    "=== PANIC ===",
    "=============",
    "stack backtrace:",
    "Stack backtrace:",
    "error: process didn't exit successfully",
    "error: test failed",
    "test result:",
    "failures:",
    "---- ",
    "fatal runtime error:",
    "thread caused non-unwinding panic",
)


@value_class
class Draft:
    """A panic report as a reader found it, before it becomes a `Panic`."""

    message: str
    thread: str | None
    location: Location | None
    has_header: bool
    main_error: bool
    start: tuple[int, int]  # (line, column) in the cleaned lines
    end: tuple[int, int]
    frames: list[Frame] = field(default_factory=list)
    gap: bool = False  # a blank line between the header and its message


@value_class
class View:
    """One line as the readers see it: markdown quotes, CI stamps and log prefixes taken off."""

    text: str  # the line without quote markers, capped at the scanner's MAX_LINE
    stripped: str
    column: int  # where `text` starts in the cleaned line
    quoted: bool
    span: bool = False  # the line is one code span: nothing after it belongs to it


class Reader(Protocol):
    """What a format's reader asks of the scanner reading the text."""

    lines: list[str]

    def view(self, index: int) -> View: ...

    def ends_message(self, view: View, started: bool) -> bool: ...


def collapse(text: str) -> str:
    return " ".join(text.split())


def cut_words(reader: Reader, index: int, most: int) -> Iterator[tuple[int, str]]:
    """The lines from `index` on that a terminal may have cut one long word over (a path at
    its width): each one word, none blank, at most `most` of them, with their indices."""
    for probe in range(index, min(len(reader.lines), index + most)):
        word = reader.view(probe).stripped
        if not word or " " in word:
            return
        yield probe, word
