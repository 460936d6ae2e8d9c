"""A hex dump of a terminal's output (`xxd`, `hexdump -C`, `od -A x -t x1z`): its bytes read
back as text, so a panic a reporter dumped to show its control characters is read as pasted.

A dump is three or more consecutive lines of an offset, then the bytes in hex (in groups of one,
two or four bytes), then maybe their printable characters: `00000aa0: 6d61 696e 2720 7061 ...
main' panicked a`. Its bytes are decoded as UTF-8 (bytes that are not: replaced); the decoded
text keeps its line breaks, so the scanner reads it as any other paste. `dumps` returns each
dump's decoded text with where the dump lies in the paste.
"""

from __future__ import annotations

import re

from bot.catalog.model import value_class

MIN_LINES = 3  # lines of a dump: fewer is a table of numbers, not a dump
_LINE_BYTES = 16  # bytes a dump's line shows
MAX_DUMP_CHARS = 1_000_000  # a dump's decoded text read at most (a paste's size limit applies)
# offset, separator, then 1-16 hex groups of 2, 4 or 8 digits (xxd: `0000: 6f63 2f70`,
# hexdump -C: `00000010  6f 63 2f 70  ..|oc/p|`), the printable column after.
_OFFSET = r"^[ \t]*(?:0x)?[0-9a-fA-F]{4,16}(?::|[ \t])[ \t]{0,2}"
_LINE = re.compile(
    _OFFSET + r"(?P<hex>(?:[0-9a-fA-F]{2}(?:[0-9a-fA-F]{2}){0,3}[ \t]{1,3}){1,16})", re.M
)
_QUICK = re.compile(_OFFSET + r"[0-9a-fA-F]{2}", re.M)  # a dump's first byte: worth a look


@value_class(frozen=True)
class Dump:
    text: str  # the decoded bytes
    start: int  # where the dump's first line starts in the paste
    end: int  # where its last line ends


def dumps(text: str) -> list[Dump]:
    """The hex dumps in `text`, each decoded."""
    if _QUICK.search(text) is None:
        return []
    found: list[Dump] = []
    run: list[_Located] = []
    position = 0
    for line in text.splitlines(keepends=True):
        match = _LINE.match(line)
        data = _bytes_of(match["hex"]) if match is not None else None
        if data is not None:
            run.append(_Located(data, position, position + len(line.rstrip("\r\n"))))
        else:
            _close(run, found)
            run = []
        position += len(line)
    _close(run, found)
    return found


@value_class(frozen=True)
class _Located:
    """A dump line's bytes with where the line lies in the paste."""

    data: bytes
    start: int
    end: int


def _close(run: list[_Located], found: list[Dump]) -> None:
    if len(run) < MIN_LINES:
        return
    data = bytearray()
    for line in run:
        data += line.data
        if len(data) > MAX_DUMP_CHARS:
            break
    decoded = bytes(data).decode("utf-8", "replace")
    found.append(Dump(decoded, run[0].start, run[-1].end))


def _bytes_of(groups: str) -> bytes | None:
    """A line's bytes: at most 16 (a dump's line), so a printable column that happens to
    open with hex digits (`ab cd`) is not read as more bytes."""
    digits = ""
    for group in groups.split():
        if len(group) % 2 or len(digits) + len(group) > 2 * _LINE_BYTES:
            break
        digits += group
    try:
        return bytes.fromhex(digits) if digits else None
    except ValueError:
        return None
