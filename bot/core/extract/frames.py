"""Backtrace frames: `N: function`, `N: 0xADDR - function`, `at PATH:LINE:COL` lines."""

from __future__ import annotations

import re

from bot.catalog.model import value_class
from bot.core.extract.paths import parse_location, strip_symbol_hash
from bot.core.panic import Location

_FRAME = re.compile(r"(\d{1,5}):[ \t]+(\S.*)")
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{1,20}")
_FUNCTION_START = re.compile(r"[A-Za-z_<{\[(&*]")
_AT = re.compile(r"at[ \t]+(\S.*)")
# Frames left out: `[ ... omitted 2 frames ... ]` (color-eyre), or a line a reporter cut the
# backtrace with (`...`, `…`, `[...]`).
OMITTED = re.compile(r"\[ ?\.\.\. omitted|(?:\.{3}|…|\[\.{3}\]|\(\.{3}\))$")


@value_class
class FrameLine:
    index: int
    function: str
    addressed: bool


def parse_frame(stripped: str) -> FrameLine | None:
    """`N: function`, `N: 0xADDR - function` or `N: 0xADDR` (a frame without a symbol)."""
    if not stripped[:1].isdigit():
        return None
    match = _FRAME.match(stripped)
    if not match:
        return None
    function = match.group(2)
    addressed = False
    if function.startswith("0x"):
        address = _ADDRESS.match(function)
        if address is not None:
            rest = function[address.end() :].lstrip()
            if not rest:
                function, addressed = "<unknown>", True
            elif rest.startswith("- "):
                function, addressed = rest[2:].strip() or "<unknown>", True
    if not _FUNCTION_START.match(function):
        return None
    if " " in function and "<" not in function and not function.startswith("{"):
        return None  # prose such as `1: see below`
    return FrameLine(int(match.group(1)), strip_symbol_hash(function), addressed)


def is_inlined_frame(stripped: str) -> bool:
    """A bare `crate::path::function` line inside a full backtrace (an inlined frame)."""
    return (
        "::" in stripped
        and _FUNCTION_START.match(stripped) is not None
        and not stripped.startswith("at ")
        and (" " not in stripped or "<" in stripped)
        and not stripped.endswith((":", ";", "{", "}", ")"))
    )


def looks_like_backtrace(frame: FrameLine) -> bool:
    """Strict enough to end a panic message at: an address, a path, or frame 0."""
    function = frame.function
    return frame.addressed or "::" in function or function.startswith("<") or frame.index == 0


def parse_at(stripped: str) -> Location | None:
    if not stripped.startswith("at"):
        return None
    match = _AT.match(stripped)
    if not match:
        return None
    return parse_location(match.group(1))
