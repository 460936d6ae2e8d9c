"""The one rule for answering a panic: its best candidate reached the scorer's threshold
(bot/core/match/scorer.json), no rule refused it (a refused candidate keeps a capped confidence
and its reason, `Candidate.refused`) and the panic is not silenced. Every stage that changes a
panic's candidates goes through `revised`, so the stages' answer follows one rule whatever stage
changed them last; the model's threshold decides the final one (calibration.py). A stage that
reorders candidates capped alike keeps one order first (`stronger_first`)."""

from __future__ import annotations

from collections.abc import Iterable

from bot.core.analysis import Candidate, PanicMatch
from bot.core.match.scorer import WEIGHTS


def answers(best: Candidate | None) -> bool:
    return best is not None and best.refused is None and best.confidence >= WEIGHTS.threshold


def stronger_first(candidate: Candidate, top: float) -> tuple[bool, bool, bool, bool]:
    """The one order among candidates a stage may reorder: as confident as the best `top`
    (capped alike), then a message matched whole, then the pasted line, then the file the text
    names. A stage's own preference (a live site, the own project's) comes after it."""
    return (
        candidate.confidence < top - 1e-9,
        "pattern" not in candidate.evidence,
        "line" not in candidate.evidence,
        "named" not in candidate.evidence,
    )


def revised(match: PanicMatch, candidates: Iterable[Candidate]) -> PanicMatch:
    """`match` with `candidates` (best first), answered by the one rule."""
    ordered = tuple(candidates)
    best = ordered[0] if ordered else None
    return PanicMatch(
        match.panic, ordered, matched=not match.silenced and answers(best), silenced=match.silenced
    )


def silenced(match: PanicMatch) -> PanicMatch:
    """`match` never answered: the text shows it is not a report of its own."""
    return PanicMatch(match.panic, match.candidates, matched=False, silenced=True)
