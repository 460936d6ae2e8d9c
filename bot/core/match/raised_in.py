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
_MSVC_IMPL = re.compile(r"impl\$\d+")
# A closure's (or an async block's) frame inside a function: `..::current::{{closure}}`, in the
# v0 mangling `..::current::{closure#0}`; the code is the enclosing function's.
_INNER_BODY = re.compile(
    r"(?:::\{\{?(?:closure|async_block|async_fn|async_closure|async_fn_body)(?:#\d+)?\}?\})+$"
)


def impl_type(impl: str | None) -> str | None:
    """`impl StateWorkingSet<'a>` -> `StateWorkingSet`; `impl<T> Display for Wrapper<T>` ->
    `Wrapper`; None for no impl (a free function) or one that cannot be read."""
    if not impl or not impl.startswith("impl"):
        return None
    kind = impl_parts(impl)[0].lstrip("&").strip()
    found = _IDENT.fullmatch(kind.rsplit("::", 1)[-1])
    return found.group(0) if found else None


def panicking_frame(frames: tuple[Frame, ...]) -> Frame | None:
    """The first frame of code that is not std's (`rust_begin_unwind`, `core::panicking::..`,
    `std::..` looked past): the function that panicked."""
    for frame in frames[: _MACHINERY_FRAMES + 1]:
        if frame.crate is None or frame.crate in STD_CRATES:
            continue
        return frame
    return None


def owner_and_name(function: str) -> tuple[str | None, str]:
    """(the type, the function) a frame names: `nu_protocol::StateWorkingSet::get_block_mut`
    -> (`StateWorkingSet`, `get_block_mut`); a trait method `<slab::Slab<T> as
    core::ops::index::Index<usize>>::index` -> (`Slab`, `index`). Windows backtraces (MSVC
    symbols) name an impl block by its number, `nalgebra::base::ops::impl$3::index_mut`: the
    type is not known, (None, `index_mut`). A closure's frame is its function's
    (`actix_rt::system::System::current::{{closure}}` -> (`System`, `current`))."""
    function = _INNER_BODY.sub("", strip_symbol_hash(function))
    if function.startswith("<") and " as " in function and ">::" in function:
        head, _, name = function.rpartition(">::")
        self_type = head[1:].split(" as ", 1)[0]
        found = _IDENT.findall(self_type.split("<", 1)[0].rsplit("::", 1)[-1])
        return (found[0] if found else None), name
    segments = function.split("::")
    owner = segments[-2] if len(segments) > 1 else None
    return (None if owner is not None and _MSVC_IMPL.fullmatch(owner) else owner), segments[-1]


def panicked_in(
    record: Record, frames: tuple[Frame, ...], project_crate: Callable[[str], bool]
) -> bool:
    """Whether the first frame of code that is not std's is the record's function (its type's
    method when the record is in an impl, unless the frame does not say the type), in a crate
    `project_crate` says is the project's."""
    name = record.enclosing_fn
    frame = panicking_frame(frames) if name else None
    if frame is None or frame.crate is None:
        return False
    owner, function = owner_and_name(frame.function)
    if function != name or not project_crate(canonical_crate(frame.crate)):
        return False
    wanted = impl_type(record.site_check.get("impl"))
    return wanted is None or owner is None or owner == wanted
