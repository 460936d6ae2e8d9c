"""Lines a terminal cut at its width: joined back before the scanner reads them.

A terminal that copies what it shows (an old Windows console, a multiplexer's copy mode) cuts
every line longer than its width W into pieces of exactly W characters, mid-word, and the paste
holds a line break at each cut: `conflicts with a previous` arrives as `co` + `nflicts with a
previous`. Such a block shows its width plainly: several different lines of exactly W
characters, none longer (different beyond their numbers and addresses: repeated panics that
differ in a value, `start=16` and `start=38`, or a backtrace's frames, are one line printed
again, not a cut). Each such line is joined to the next one with nothing between (the cut kept
every character, spaces included), unless the next line opens something of its own: a
backtrace frame, an `at` line, a note, a header, a fence, a blank line, or what the cut line
opens with too (a logger's prefix or a repeated line's start: a new line of the log, where a
cut's rest starts anywhere).

A block is a fenced code block, or the text outside any fence. `unwrap` returns the joined text
and where its joins are, so offsets found in it map back to the paste (`original_offset`).
"""

from __future__ import annotations

import bisect
import re
from collections import Counter

from bot.catalog.model import value_class

MIN_WIDTH = 60  # narrower "widths" are ordinary short lines
MIN_CUT_LINES = 3  # different lines of exactly the width: a cut, not a coincidence
_SAME_START = 6  # characters a line shares with the cut line before it: a new line, no rest
_VALUES = re.compile(r"0x[0-9a-fA-F]+|\d+")  # numbers and addresses
_FENCE = ("```", "~~~")
# What a line of its own opens: the line before it was not cut into it.
_OPENS = re.compile(
    r"\s*(?:$|\d{1,5}: |at |note: |stack backtrace:|thread '|```|~~~|error|warning|Caused by)"
)


@value_class(frozen=True)
class Unwrapped:
    text: str
    joins: tuple[int, ...]  # offsets in `text` where a line break was taken out
    removed: tuple[int, ...]  # characters taken out up to and including each join


def unwrap(text: str) -> Unwrapped | None:
    """`text` with the lines a terminal cut joined back, or None when no block was cut."""
    if "\n" not in text:
        return None
    lines = text.split("\n")
    # Most pastes end here: no length of MIN_WIDTH or more is shared by enough lines.
    long = Counter(n for n in map(len, lines) if n >= MIN_WIDTH)
    if not long or max(long.values()) < MIN_CUT_LINES:
        return None
    cut = _cut_lines(lines)
    if not cut:
        return None
    out: list[str] = []
    joins: list[int] = []
    removed: list[int] = []
    position = 0  # length of the output so far
    taken = 0
    for index, line in enumerate(lines):
        body = line[:-1] if line.endswith("\r") else line
        last = index == len(lines) - 1
        if index in cut and not last and not _opens_a_line(line, lines[index + 1]):
            out.append(body)
            position += len(body)
            taken += len(line) - len(body) + 1
            joins.append(position)
            removed.append(taken)
            continue
        out.append(line if last else line + "\n")
        position += len(line) + (0 if last else 1)
    if not joins:
        return None
    return Unwrapped("".join(out), tuple(joins), tuple(removed))


def rejoined(parts: list[str], cut: list[bool]) -> str:
    """`parts` (lines) as one text: nothing after a part a terminal cut (`cut[i]`), where the
    next goes on mid-word, a space after the others (a writer's own line breaks)."""
    out = parts[0] if parts else ""
    for i, part in enumerate(parts[1:], start=1):
        out += part if cut[i - 1] else " " + part
    return out


def _opens_a_line(cut: str, following: str) -> bool:
    if cut.rstrip().endswith(" panicked"):
        return False  # a header cut before its ` at ..`: not a backtrace's `at` line
    shared = len(following) >= _SAME_START and cut[:_SAME_START] == following[:_SAME_START]
    return shared or bool(_OPENS.match(following))


def original_offset(unwrapped: Unwrapped, offset: int) -> int:
    """Where `offset` of the joined text is in the paste."""
    before = bisect.bisect_right(unwrapped.joins, offset) - 1
    return offset + (unwrapped.removed[before] if before >= 0 else 0)


def _cut_lines(lines: list[str]) -> set[int]:
    """The indices of the lines a terminal cut, block by block."""
    cut: set[int] = set()
    block: list[int] = []
    for index, line in enumerate(lines):
        if line.lstrip().startswith(_FENCE):
            cut |= _block_cuts(lines, block)
            block = []
            continue
        block.append(index)
    return cut | _block_cuts(lines, block)


def _block_cuts(lines: list[str], block: list[int]) -> set[int]:
    if len(block) < MIN_CUT_LINES:
        return set()
    lengths = {index: len(lines[index].rstrip("\r")) for index in block}
    width = max(lengths.values())
    if width < MIN_WIDTH:
        return set()
    at_width = [index for index in block if lengths[index] == width]
    if len({_VALUES.sub("0", lines[index]) for index in at_width}) < MIN_CUT_LINES:
        return set()
    return set(at_width)
