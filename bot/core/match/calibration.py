"""The confidence an answer shows, and whether the bot answers: one fitted model over what the
matcher found about a panic's candidates.

The matcher's stages rank a panic's candidates and give each a score (`Candidate.confidence`
as they leave it, with the steps that made it). This last stage turns that into a probability
of being right: a logistic model over the features below, fitted on the labelled corpora by
`benchmarks/fit_scorer.py` and shipped as `model.json` beside this module (its `version` is in
`match --json`'s `scorer`). The bot answers a panic when its best candidate's probability
reaches the model's one threshold, no rule refused that candidate and no stage silenced the
panic. Every candidate of a panic keeps its rank; a lower-ranked one never shows more
confidence than the one above it.

The features, each in [0, 1] (what `match --explain` lists with its contribution):

score          the matcher's score of the candidate
cleared        that score reached the stages' own bar (scorer.json's threshold), unrefused
margin         how far it is ahead of the best candidate with another message (0 when behind)
message        how well the message alone matched
location       pasted at the record's own file
line           ... at or next to its line
function       the backtrace's panicking frame is the record's function
release        the release history places the pasted release at this site
header         the message came with a `panicked at` header
whole          the record's whole message (its pattern) matched, not a prefix or a fuzzy fit
quoted         a mention without a header or a location (a title, prose, a code span)
shared         the share of the other candidates printing the same message
unrivalled     no other candidate printing the same message scored as high (the sites of a
               message that several files print alike, nothing in the paste telling them
               apart, tie: the answer is one of them)
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path

from bot.catalog.model import replace, value_class
from bot.core.analysis import Candidate, PanicMatch
from bot.core.match.answer_rule import answers

MODEL_FILE = Path(__file__).with_name("model.json")

FEATURES: tuple[str, ...] = (
    "score",
    "cleared",
    "margin",
    "message",
    "location",
    "line",
    "function",
    "release",
    "header",
    "whole",
    "quoted",
    "shared",
    "unrivalled",
)


@value_class(frozen=True)
class Model:
    version: str
    threshold: float  # the one probability from which the bot answers
    intercept: float
    weights: tuple[float, ...]  # one per FEATURES name, in that order


def load_model(path: Path = MODEL_FILE) -> Model:
    """The model in `path`: a version, a threshold, an intercept and a weight for every feature
    (by name, nothing else)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    weights = data["weights"]
    if set(weights) != set(FEATURES):
        raise ValueError(f"{path}: the weights must name exactly {', '.join(FEATURES)}")
    return Model(
        version=str(data["version"]),
        threshold=float(data["threshold"]),
        intercept=float(data["intercept"]),
        weights=tuple(float(weights[name]) for name in FEATURES),
    )


MODEL = load_model()


def features(
    match: PanicMatch, index: int, message_of: Callable[[str], str | None]
) -> tuple[float, ...]:
    """The feature vector of `match`'s candidate at `index` (in FEATURES order)."""
    messages = [message_of(c.record_id) for c in match.candidates]
    return _vector(match, index, messages)


def _vector(match: PanicMatch, index: int, messages: list[str | None]) -> tuple[float, ...]:
    candidates = match.candidates
    cand = candidates[index]
    own = messages[index]
    lead = cand.confidence - max(
        (c.confidence for c, m in zip(candidates, messages, strict=True) if m != own),
        default=0.0,
    )
    same = messages.count(own) - 1
    rivalled = any(
        other is not cand and message == own and other.confidence >= cand.confidence
        for other, message in zip(candidates, messages, strict=True)
    )
    evidence = cand.evidence
    panic = match.panic
    return (
        _unit(cand.confidence),
        float(answers(cand)),
        _unit(lead),
        _unit(cand.message_score),
        float("location" in evidence),
        float("line" in evidence),
        float("function" in evidence),
        float("release" in evidence),
        float(panic.has_header),
        float("pattern" in evidence and "prefix" not in evidence),
        float(panic.location is None and not panic.has_header),
        same / max(len(candidates) - 1, 1),
        float(not rivalled),
    )


def probability(model: Model, vector: Sequence[float]) -> float:
    z = model.intercept + math.fsum(w * x for w, x in zip(model.weights, vector, strict=True))
    return 1.0 / (1.0 + math.exp(-max(min(z, 60.0), -60.0)))


def contributions(model: Model, vector: Sequence[float]) -> list[tuple[str, float]]:
    """Each feature's share of the model's log-odds: (name, weight x value), nonzero only."""
    return [
        (name, round(w * x, 4))
        for name, w, x in zip(FEATURES, model.weights, vector, strict=True)
        if w * x
    ]


@functools.lru_cache(maxsize=4096)
def _scored(model: Model, vector: tuple[float, ...]) -> tuple[float, str]:
    """The probability for `vector` and the step that shows how it came about (few vectors
    recur: a text's candidates share most of their evidence)."""
    parts = ", ".join(f"{name} {value:+.2f}" for name, value in contributions(model, vector))
    return round(probability(model, vector), 4), f"model {model.version}: {parts or 'no evidence'}"


def calibrate(
    matches: Sequence[PanicMatch], model: Model, message_of: Callable[[str], str | None]
) -> list[PanicMatch]:
    """`matches` with each candidate's confidence the model's probability, and each panic
    answered by the one rule at the model's threshold."""
    return [_calibrated(match, model, message_of) for match in matches]


def _calibrated(
    match: PanicMatch, model: Model, message_of: Callable[[str], str | None]
) -> PanicMatch:
    if not match.candidates:
        return match
    messages = [message_of(c.record_id) for c in match.candidates]
    out: list[Candidate] = []
    ceiling = 1.0
    for index, cand in enumerate(match.candidates):
        p, what = _scored(model, _vector(match, index, messages))
        p = min(p, ceiling)
        ceiling = p
        out.append(replace(cand, confidence=p, steps=(*cand.steps, (what, p))))
    best = out[0]
    matched = not match.silenced and best.refused is None and best.confidence >= model.threshold
    return PanicMatch(match.panic, tuple(out), matched=matched, silenced=match.silenced)


def _unit(value: float) -> float:
    return min(max(value, 0.0), 1.0)
