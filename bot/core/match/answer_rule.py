"""The one rule for answering a panic: its best candidate reached the scorer's threshold
(bot/core/match/scorer.json) and no rule refused it (a refused candidate keeps a capped
confidence and its reason, `Candidate.refused`). Every stage that changes a panic's candidates
asks this, so the bot answers on one rule whatever stage changed them last; `silenced` is a
panic the text shows is not a report of its own (a change description naming it, a cascade
after an uncatalogued first panic)."""

from __future__ import annotations

from bot.core.analysis import Candidate
from bot.core.match.scorer import WEIGHTS


def answers(best: Candidate | None, *, silenced: bool = False) -> bool:
    return (
        best is not None
        and not silenced
        and best.refused is None
        and best.confidence >= WEIGHTS.threshold
    )
