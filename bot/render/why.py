"""Why the bot answered as it did, as lines of text: each panic, its top candidates with their
evidence and the steps that made each confidence, and what decided. `/triage why` puts these
lines in the comment (bot.github.triage_command.handle); `triage-bot match --explain` prints
them."""

from __future__ import annotations

from collections.abc import Sequence

from bot.core.analysis import Analysis
from bot.render import texts
from bot.render.answer.words import pasted_location
from bot.render.markup import one_line, shorten

WHY_CANDIDATES = 3


def why_lines(analysis: Analysis, preface: Sequence[str] = (), *, steps: bool = True) -> list[str]:
    """The verdict, `preface` (overrides a maintainer made), then each panic."""
    lines: list[str] = [texts.WHY_VERDICT.format(verdict=analysis.verdict), *preface]
    if not analysis.panics:
        lines.append(texts.WHY_NO_PANIC)
    seen: set[str] = set()
    for index, item in enumerate(analysis.panics, 1):
        lines.append("")
        message = shorten(one_line(item.panic.message), 300)
        lines.append(texts.WHY_PANIC.format(index=index, message=message))
        if item.panic.location:
            lines.append(texts.WHY_AT.format(location=pasted_location(item.panic.location)))
        else:
            lines.append(texts.WHY_NO_LOCATION)
        if not item.candidates:
            lines.append(texts.WHY_NO_CANDIDATES)
        for rank, cand in enumerate(item.candidates[:WHY_CANDIDATES], 1):
            lines.append(
                texts.WHY_CANDIDATE.format(
                    rank=rank,
                    record=cand.record_id,
                    confidence=cand.confidence,
                    message=cand.message_score,
                    evidence=",".join(cand.evidence) or "-",
                )
            )
            if steps:
                for what, value in cand.steps:
                    lines.append(texts.WHY_STEP.format(what=what, confidence=value))
            if cand.refused is not None:
                lines.append(texts.WHY_REFUSED[cand.refused])
        best = item.best
        if item.matched and best is not None and best.record_id in seen:
            lines.append(texts.WHY_DECIDED_REPEAT)
        elif item.matched and best is not None:
            seen.add(best.record_id)
            lines.append(texts.WHY_DECIDED_MATCH)
        elif item.candidates:
            lines.append(texts.WHY_DECIDED_NO_MATCH)
    return lines
