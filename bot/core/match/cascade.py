"""Which later panics are answered when the first panic of a text is not catalogued.

Later panics are usually consequences of the first (a poisoned lock, a closed channel), so by
default an uncatalogued first panic silences the rest. A plain `unwrap()` is different: nobody
catalogues `called Option::unwrap() on a None value`, and a catalogued panic that follows it
with full confidence is worth answering (the answer says the first is not catalogued).
"""

from __future__ import annotations

from bot.core.analysis import PanicMatch

# The confidence of a later panic answered after an uncatalogued unwrap: the message matches
# in full and says enough, or the location backs it up.
FULL_CONFIDENCE = 0.95
PLAIN_UNWRAPS = frozenset({"unwrap-none", "unwrap-err"})


def is_uncatalogued_unwrap(first: PanicMatch) -> bool:
    return not first.matched and first.panic.wrapper in PLAIN_UNWRAPS


def answers_after_unwrap(later: PanicMatch) -> bool:
    best = later.best
    return later.matched and best is not None and best.confidence >= FULL_CONFIDENCE
