"""Inputs of any size, read whole in bounded memory: one window of text at a time.

A 50 MB log is analysed window by window, each window ending at a line break; the last
`OVERLAP_BYTES` of a window are read again at the start of the next, so a panic that starts
near a window's end is read whole from the next window. The answer is the one the whole text
would get: the first window with a `panicked at` header decides (later panics are usually
consequences of the first); without a header anywhere, the first window that answers, else
the first that found a panic.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import BinaryIO

from bot.catalog.model import replace
from bot.core.analysis import Analysis, PanicMatch

WINDOW_BYTES = 4 << 20
OVERLAP_BYTES = 256 << 10
_RANK = {"match": 0, "uncatalogued-panic": 1, "no-panic": 2}


def windows(
    stream: BinaryIO, window_bytes: int = WINDOW_BYTES, overlap_bytes: int = OVERLAP_BYTES
) -> Iterator[tuple[int, str, int, bool]]:
    """(offset, text, overlap, last) for each window of the stream, in order.

    `offset`: characters of the whole text before the window; `overlap`: characters at the
    window's end that the next window reads again (0 for the last). Windows end at a line
    break, so no UTF-8 sequence is cut; invalid UTF-8 is replaced, never fatal.
    """
    offset = 0
    reread = b""  # the end of the last window, read again
    pending = b""  # read from the stream, in no window yet
    while True:
        want = max(window_bytes - len(reread) - len(pending), overlap_bytes, 1)
        data = reread + pending + stream.read(want)
        more = stream.read(1)
        if not more:
            yield offset, data.decode("utf-8", errors="replace"), 0, True
            return
        data += more
        cut = data.rfind(b"\n") + 1
        if cut <= len(reread):
            cut = len(data)  # a line longer than a window: cut it (UTF-8 may be split)
        head, pending = data[:cut], data[cut:]
        keep = head.find(b"\n", max(len(reread), len(head) - overlap_bytes)) + 1
        if keep <= 0 or keep >= len(head):
            keep = len(head)
        text = head.decode("utf-8", errors="replace")
        reread = head[keep:]
        reread_chars = len(reread.decode("utf-8", errors="replace"))
        yield offset, text, reread_chars, False
        offset += len(text) - reread_chars


def analyse_windows(analyse: Callable[[str], Analysis], stream: BinaryIO, **sizes: int) -> Analysis:
    """What `analyse` (text -> Analysis) says about the whole stream, read window by window."""
    fallback: Analysis | None = None
    for offset, text, overlap, last in windows(stream, **sizes):
        analysis = analyse(text)
        starts = [m.panic.start for m in analysis.panics if m.panic.has_header]
        if starts:
            if not last and min(starts) >= len(text) - overlap:
                continue  # it starts in the part the next window reads again, whole there
            return _shifted(analysis, offset)
        if fallback is None or _RANK[analysis.verdict] < _RANK[fallback.verdict]:
            fallback = _shifted(analysis, offset)
    assert fallback is not None  # the last window always yields an analysis
    return fallback


def _shifted(analysis: Analysis, offset: int) -> Analysis:
    if not offset:
        return analysis
    panics = tuple(
        PanicMatch(
            panic=replace(m.panic, start=m.panic.start + offset, end=m.panic.end + offset),
            candidates=m.candidates,
            matched=m.matched,
            silenced=m.silenced,
        )
        for m in analysis.panics
    )
    return Analysis(verdict=analysis.verdict, panics=panics, fingerprint=analysis.fingerprint)
