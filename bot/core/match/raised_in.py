"""Whether a backtrace says the panic was raised in a record's own function.

A site moves between files (nushell's `StateWorkingSet::get_block_mut` left `engine_state.rs`
for `state_working_set.rs`); an older release's paste names the old file, and its backtrace
still names the function. The first frame below the panic machinery (std's and core's frames,
`rust_begin_unwind`) is the function that panicked: when it is the record's function, of the
record's type, the pasted file is where that function lived then.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bot.catalog.model import Record
from bot.core.extract.paths import STD_CRATES, strip_symbol_hash
from bot.core.impl_header import impl_parts
from bot.core.match.crates import canonical_crate
from bot.core.panic import Frame

# Frames of the panic machinery looked past, at most.
_MACHINERY_FRAMES = 12
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def impl_type(impl: str | None) -> str | None:
    """`impl StateWorkingSet<'a>` -> `StateWorkingSet`; `impl<T> Display for Wrapper<T>` ->
    `Wrapper`; None for no impl (a free function) or one that cannot be read."""
    if not impl or not impl.startswith("impl"):
        return None
    kind = impl_parts(impl)[0].lstrip("&").strip()
    found = _IDENT.fullmatch(kind.rsplit("::", 1)[-1])
    return found.group(0) if found else None


def panicked_in(
    record: Record, frames: tuple[Frame, ...], project_crate: Callable[[str], bool]
) -> bool:
    """Whether the first frame of code that is not std's is the record's function (its type's
    method when the record is in an impl), in a crate `project_crate` says is the project's."""
    name = record.enclosing_fn
    if not name or not frames:
        return False
    owner = impl_type(record.site_check.get("impl"))
    for frame in frames[: _MACHINERY_FRAMES + 1]:
        if frame.crate is None or frame.crate in STD_CRATES:
            continue  # `rust_begin_unwind`, `core::panicking::panic_fmt`, `std::..`
        segments = strip_symbol_hash(frame.function).split("::")
        if segments[-1] != name or not project_crate(canonical_crate(frame.crate)):
            return False
        return owner is None or (len(segments) > 1 and segments[-2] == owner)
    return False
