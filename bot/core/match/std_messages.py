"""Messages the Rust standard library prints itself (bounds checks, unwraps, RefCell, arithmetic).

Any program raises these anywhere, so a project site whose message repeats one word for word
(`assert!(i < len, "index out of bounds: the len is {} but the index is {i}")`) says nothing
on its text alone: only the pasted location (the record's own file) can tell it is that site.
"""

from __future__ import annotations

import re
from functools import cache

# A value std fills in: a number, a quoted char or string, `{..}` in a record's format.
_V = r"(?:\{[^{}\s]{0,40}\}|[^\s]{1,80})"
_STD_SHAPES = (
    rf"index out of bounds(?:: the len is {_V} but the index is {_V})?",
    r"called `Option::unwrap\(\)` on a `None` value",
    r"called `Result::unwrap\(\)` on an `Err` value(?:: .*)?",
    r"called `Result::unwrap_err\(\)` on an `Ok` value(?:: .*)?",
    r"no entry found for key",
    # str slicing: before Rust 1.9x (`byte index 9 is out of bounds of `..``) and since
    # (`end byte index 11 is out of bounds for string of length 8`, `byte range starts at ..`).
    rf"(?:(?:start|end) )?byte index {_V} is (?:out of bounds (?:of|for string of length)|"
    r"not a char boundary).*",
    rf"begin <= end \({_V} <= {_V}\) when slicing .*",
    rf"byte range starts at {_V} but ends at {_V}",
    rf"range (?:start|end) index {_V} out of range for slice of length {_V}",
    rf"slice index starts at {_V} but ends at {_V}",
    r"already (?:mutably )?borrowed(?:: Borrow(?:Mut)?Error)?",
    r"RefCell already (?:mutably )?borrowed",
    r"attempt to (?:add|subtract|multiply|divide|negate|shift left|shift right|"
    r"calculate the remainder)(?: with overflow)?",
    r"attempt to divide by zero",
    r"attempt to calculate the remainder with a divisor of zero",
    r"capacity overflow",
    rf"(?:removal|insertion|swap_remove) index \(is {_V}\) should be <=? len \(is {_V}\)",
    rf"source slice length \({_V}\) does not match destination slice length \({_V}\)",
    r"explicit panic",
    r"not (?:yet )?implemented",
    r"internal error: entered unreachable code",
    # print!/println!/eprint! on a closed or broken stream (std::io::stdio), and a
    # thread-local's `with` during or after its destruction (std::thread::LocalKey)
    rf"failed printing to (?:stdout|stderr): {_V}.*",
    r"cannot access a Thread Local Storage value during or after destruction(?:: AccessError)?",
)


@cache
def _std() -> re.Pattern[str]:
    # Compiled when first asked: 17 ms, most of it wasted on a cold `match` of a header text.
    return re.compile("(?:" + "|".join(_STD_SHAPES) + r")[.\s]*", re.DOTALL)


def is_std_message(message: str) -> bool:
    """Whether `message` (pasted, or a record's format string) is one std prints itself."""
    text = " ".join(message.split())[:2000]
    return bool(text) and _std().fullmatch(text) is not None
