"""The stats page in a real headless browser: served by the real server on 127.0.0.1, rendered
by Debian's Chromium, and the screenshot checked for the charts' bars (a tiny PNG decoder)."""

from __future__ import annotations

import asyncio
import itertools
import os
import shutil
import struct
import zlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from aiohttp.test_utils import TestServer

from bot.app import Triage
from bot.config.settings import Settings
from bot.server.http import create_app
from bot.stats.report import PALETTE, PRECISION_COLOUR
from bot.store.sqlite import Store

CHROMIUM = Path("/usr/bin/chromium")
INTERPOLATE = "cf30438606d06d30"
AVG_POOL = "8d1d2fa6df3880bd"
WIDTH, HEIGHT = 1200, 900


# --- a tiny PNG decoder -------------------------------------------------------------------------


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def decode_png(data: bytes) -> tuple[int, int, int, list[bytes]]:
    """(width, height, bytes per pixel, rows) of an 8-bit RGB or RGBA PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, []
    width = height = bpp = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        chunk = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", chunk)
            assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat.append(chunk)
        elif kind == b"IEND":
            break
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        if kind == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif kind == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev, strict=True))
        elif kind == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif kind == 4:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                up_left = prev[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + _paeth(left, prev[i], up_left)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def rgb(colour: str) -> tuple[int, int, int]:
    value = colour.lstrip("#")
    return int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16)


def pixels_of(rows: list[bytes], bpp: int, colour: str) -> list[tuple[int, int]]:
    """(x, y) of every pixel of exactly this colour."""
    needle = bytes(rgb(colour))
    out = []
    for y, row in enumerate(rows):
        for x in range(0, len(row), bpp):
            if row[x : x + 3] == needle:
                out.append((x // bpp, y))
    return out


def distinct_colours(rows: list[bytes], bpp: int, step: int = 7) -> int:
    seen = set()
    for row in rows[::step]:
        for x in range(0, len(row), bpp * step):
            seen.add(row[x : x + 3])
    return len(seen)


# --- the page -----------------------------------------------------------------------------------


def fill(store: Store) -> None:
    """Six weeks of answers for three records, votes, and uncatalogued panics."""
    start = datetime(2026, 3, 2, 12, tzinfo=UTC)
    number = 1
    for week in range(6):
        for record, count in ((INTERPOLATE, 2 + week), (AVG_POOL, 1 + week % 3)):
            for _ in range(count):
                store.clock = lambda w=week: (start + timedelta(weeks=w)).timestamp()
                store.record_answer("github", f"tracel-ai/burn#{number}", "match", [record], "fp")
                number += 1
    for user in range(5):
        store.record_feedback(
            "github", f"tracel-ai/burn#1:{INTERPOLATE}", INTERPOLATE, f"u{user}", 1
        )
    store.record_feedback("discord", f"9:{AVG_POOL}", AVG_POOL, "7", -1)
    store.record_feedback("discord", f"9:{AVG_POOL}", AVG_POOL, "8", 1)
    for n in range(3):
        store.replace_uncatalogued(
            "github",
            f"tracel-ai/burn#{100 + n}",
            [
                {
                    "norm_message": "out of memory: requested N bytes",
                    "crate": "burn-wgpu",
                    "message": f"out of memory: requested {n + 1}024 bytes",
                }
            ],
            repo="tracel-ai/burn",
            number=100 + n,
        )


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (/usr/bin/chromium)")
async def test_stats_page_renders_with_its_charts_in_chromium(tmp_path):
    store = Store(tmp_path / "stats.sqlite3")
    fill(store)
    settings = Settings.from_mapping(
        {"TRIAGE_DB": str(tmp_path / "stats.sqlite3"), "TRIAGE_STATS_TOKEN": "browser-token"}
    )
    app = create_app(settings, triage=Triage.from_paths(None), store=store, start_discord=False)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    shot = tmp_path / "stats.png"
    try:
        # /stats asks for its token: the basic-auth password, given in the URL
        url = str(server.make_url("/stats")).replace("://", "://stats:browser-token@", 1)
        process = await asyncio.create_subprocess_exec(
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            f"--user-data-dir={tmp_path / 'profile'}",
            f"--screenshot={shot}",
            f"--window-size={WIDTH},{HEIGHT}",
            url,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env={**os.environ, "HOME": str(tmp_path)},
        )
        try:
            output, _ = await asyncio.wait_for(process.communicate(), 90)
        except TimeoutError:
            process.kill()
            await process.wait()
            raise
    finally:
        await server.close()
        store.close()
    assert shot.exists(), output.decode(errors="replace")[-2000:]
    keep = os.environ.get("STATS_SCREENSHOT")
    if keep:
        shutil.copy(shot, keep)  # to look at it
    data = shot.read_bytes()
    assert len(data) > 10_000  # a page, not a blank image
    width, height, bpp, rows = decode_png(data)
    assert (width, height) == (WIDTH, HEIGHT)
    assert distinct_colours(rows, bpp) > 20  # text, charts: not a flat colour

    # the answers chart: six weekly bars of the most answered record, in its colour
    blue = pixels_of(rows, bpp, PALETTE[0])
    assert len(blue) > 3000, len(blue)
    height_of: dict[int, int] = {}
    for x, _ in blue:
        height_of[x] = height_of.get(x, 0) + 1
    # columns taller than the legend's 10-pixel swatch belong to the bars
    columns = sorted(x for x, h in height_of.items() if h > 12)
    groups = 1 + sum(1 for a, b in itertools.pairwise(columns) if b - a > 1)
    assert groups == 6, columns
    # growing weeks: the last bar is taller than the first (2 answers, then 7)
    assert height_of[columns[-1]] > 3 * height_of[columns[0]]
    # the second record is stacked on the first: its colour is there too
    assert len(pixels_of(rows, bpp, PALETTE[1])) > 1000
    # the precision chart's bars
    assert len(pixels_of(rows, bpp, PRECISION_COLOUR)) > 1000
