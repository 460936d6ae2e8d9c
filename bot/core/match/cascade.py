"""Which later panics are answered when the first panic of a text is not catalogued.

Later panics are usually consequences of the first (a poisoned lock, a closed channel), so by
default an uncatalogued first panic silences the rest. A plain `unwrap()` is different: nobody
catalogues `called Option::unwrap() on a None value` (nor std's other messages), and a
catalogued panic that follows it with full confidence is worth answering (the answer says the
first is not catalogued). So is
one of the project's own after a panic raised in a dependency (a registry or git crate the
catalog does not hold): the dependency's panic is the root, the project's the one it answers.
"""

from __future__ import annotations

from collections.abc import Callable

from bot.core.analysis import PanicMatch
from bot.core.match.scorer import WEIGHTS
from bot.core.match.std_messages import is_std_message

# The confidence of a later panic answered after an uncatalogued unwrap: the message matches
# in full and says enough, or the location backs it up.
FULL_CONFIDENCE = WEIGHTS.cascade_full
PLAIN_UNWRAPS = frozenset({"unwrap-none", "unwrap-err"})


def is_uncatalogued_unwrap(first: PanicMatch) -> bool:
    """A plain unwrap, or another message std prints itself (`no entry found for key`, a
    bounds check): nobody catalogues those either."""
    if first.matched:
        return False
    return first.panic.wrapper in PLAIN_UNWRAPS or is_std_message(first.panic.core_message)


def answers_after_unwrap(later: PanicMatch) -> bool:
    best = later.best
    return later.matched and best is not None and best.confidence >= FULL_CONFIDENCE


def is_uncatalogued_dependency(first: PanicMatch, in_project: Callable[[str], bool]) -> bool:
    """The first panic is not catalogued and was raised in a crate outside the projects."""
    location = first.panic.location
    if first.matched or location is None or location.kind not in ("registry", "git"):
        return False
    return location.crate is not None and not in_project(location.crate)


def answers_after_dependency(later: PanicMatch) -> bool:
    """A later panic answered after a dependency's: in full confidence, with its own header."""
    best = later.best
    return (
        answers_after_unwrap(later)
        and later.panic.has_header
        and best is not None
        and ("location" in best.evidence or "pattern" in best.evidence)
    )


def is_uncatalogued_root(first: PanicMatch) -> bool:
    """The first panic is one a later answer may follow (what the answer says is uncatalogued)."""
    location = first.panic.location
    from_dependency = location is not None and location.kind in ("registry", "git")
    return is_uncatalogued_unwrap(first) or (not first.matched and from_dependency)
