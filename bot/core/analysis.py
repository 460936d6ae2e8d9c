"""What the matcher concludes about one input: the panics, their candidate records, a verdict."""

from __future__ import annotations

from typing import Literal

from bot.catalog.model import replace, value_class
from bot.core.panic import Panic

Verdict = Literal["match", "uncatalogued-panic", "no-panic"]

# Kinds of evidence a candidate can carry, in the words the JSON output uses.
Evidence = Literal[
    "pattern",  # the message matches the record's pattern (placeholders filled in)
    "prefix",  # the message starts with the record's message (`.expect` output, version drift)
    "fuzzy",  # the message is close to the record's (typos, small drift)
    "location",  # the pasted file is the record's file
    "line",  # ... and the pasted line is the record's line, or near it
    "crate",  # the record's crate is at the location or on the stack
    "header",  # the message came with a `panicked at` header
    "wrapper",  # no header, but a wrapper only a panic prints (`assertion ... failed`)
    "release",  # the release history places the pasted crate/version/file at the record's site
    "function",  # the backtrace's panicking frame is the record's function (the file moved)
    "named",  # no location, but the text names the record's file (`at state.rs:903`, a link)
]

# Why a candidate whose score reached the threshold was not answered with, in the JSON's words.
Refusal = Literal[
    "std-message",  # a message std prints itself, not pasted at the record's own file
    "other-file",  # pasted at another file of the same project, which never held the site
    "near-miss",  # a fuzzy or older wording, pasted at another file
    "removed-wording",  # no location, and the paste is word for word a removed site's message
]


@value_class(frozen=True)
class Candidate:
    """One catalog record scored against one panic."""

    record_id: str
    confidence: float  # in [0, 1]
    evidence: tuple[Evidence, ...]
    message_score: float  # how well the message alone matched, in [0, 1]
    line_distance: int | None  # |pasted line - record line| when the file matched
    # Why a rule kept a candidate that scored enough from answering ("std-message",
    # "other-file", "near-miss", "removed-wording"); None when none did.
    refused: Refusal | None = None
    # How the confidence was reached: (what counted, the confidence after it), in order
    # (`match --explain`, `/triage why`). Empty for a candidate a person chose.
    steps: tuple[tuple[str, float], ...] = ()


def with_step(candidate: Candidate, what: str, **changes: object) -> Candidate:
    """`candidate` with `changes` (a new confidence, evidence...) and the step that made them."""
    changed = replace(candidate, **changes)
    return replace(changed, steps=(*candidate.steps, (what, round(changed.confidence, 4))))


@value_class(frozen=True)
class PanicMatch:
    """A panic found in the input and the records that could explain it, best first."""

    panic: Panic
    candidates: tuple[Candidate, ...]
    matched: bool  # the best candidate is confident enough to answer with
    # The text shows the panic is not a report of its own (a change description naming it, a
    # cascade after an uncatalogued first panic): never answered, whatever its candidates.
    silenced: bool = False

    @property
    def best(self) -> Candidate | None:
        return self.candidates[0] if self.candidates else None


@value_class(frozen=True)
class Analysis:
    """The matcher's result for one input text."""

    verdict: Verdict
    panics: tuple[PanicMatch, ...]  # the root cause (usually the first panic) first
    fingerprint: str  # a short hash of the normalised panics, stable across cosmetic edits

    @property
    def answered(self) -> tuple[PanicMatch, ...]:
        """The panics the bot answers for, root first, each with a distinct record."""
        seen: set[str] = set()
        out = []
        for item in self.panics:
            if item.matched and item.best and item.best.record_id not in seen:
                seen.add(item.best.record_id)
                out.append(item)
        return tuple(out)
