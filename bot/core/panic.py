"""What extraction finds in a text: panics, where they were raised, and the stack around them."""

from __future__ import annotations

from typing import Literal

from bot.catalog.model import value_class

# How the path was pasted: a crate from a registry or a git checkout (a dependency), the
# project's own workspace (`crates/NAME/...`), the Rust standard library, or anything else.
PathKind = Literal["registry", "git", "workspace", "std", "other"]

# The std wrapper around the message, as Rust prints it.
Wrapper = Literal[
    "unwrap-err",  # called `Result::unwrap()` on an `Err` value: ERR
    "unwrap-none",  # called `Option::unwrap()` on a `None` value
    "assert",  # assertion failed: EXPR
    "assert-eq",  # assertion `left == right` failed: MSG (left:/right: follow)
    "assert-ne",  # assertion `left != right` failed: MSG
    "unimplemented",  # not implemented: MSG
    "todo",  # not yet implemented: MSG
    "unreachable",  # internal error: entered unreachable code: MSG
    "main-error",  # Error: ... printed by a `main` returning Result
]


# The wrappers only a panic prints (an `Error:` from main is not one): panic output even when
# the `panicked at` header was not pasted.
PANIC_WRAPPERS: frozenset[str] = frozenset(
    {"assert", "assert-eq", "assert-ne", "unimplemented", "todo", "unreachable", "unwrap-err"}
)


@value_class(frozen=True)
class Location:
    """A `file:line:col` as pasted, cleaned and mapped to a crate where the path shows one."""

    raw: str  # as pasted (after ANSI/markdown clean-up)
    path: str  # forward slashes, registry/checkout prefixes kept
    line: int | None
    column: int | None
    kind: PathKind
    crate: str | None  # "burn-autodiff" (from `burn-autodiff-0.18.0/` or `crates/burn-autodiff/`)
    crate_version: str | None  # "0.18.0" for registry paths, else None
    crate_path: str | None  # path inside the crate: "src/ops/module.rs"


@value_class(frozen=True)
class Frame:
    """One backtrace frame: `N: crate::module::function` and its `at PATH:LINE:COL`."""

    index: int | None
    function: str
    crate: str | None  # from the function path, `_` read as `-` (burn_autodiff: burn-autodiff)
    location: Location | None


@value_class(frozen=True)
class Panic:
    """One panic or error report found in a text."""

    message: str  # the whole message as printed, ANSI removed, whitespace runs collapsed
    core_message: str  # `message` without the std wrapper (the format string's output)
    wrapper: Wrapper | None
    thread: str | None  # "main", "<unnamed>", "DSU-4-0"
    location: Location | None  # from the `panicked at` header
    has_header: bool  # False for a message quoted without a `panicked at` header
    frames: tuple[Frame, ...]  # the backtrace that follows, if any
    start: int  # character offsets of the report in the input text
    end: int

    @classmethod
    def mentioned(cls, message: str, wrapper: Wrapper | None = None) -> Panic:
        """A message with no header, location or backtrace: quoted in prose, or chosen by a
        user (`/error`, `/triage match`)."""
        return cls(
            message=message,
            core_message=message,
            wrapper=wrapper,
            thread=None,
            location=None,
            has_header=False,
            frames=(),
            start=0,
            end=len(message),
        )

    @property
    def stack_crates(self) -> tuple[str, ...]:
        """Crates on the stack and at the location, in order, without repeats."""
        seen: dict[str, None] = {}
        if self.location and self.location.crate:
            seen[self.location.crate] = None
        for frame in self.frames:
            if frame.crate:
                seen.setdefault(frame.crate, None)
        return tuple(seen)
