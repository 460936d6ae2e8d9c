"""The fitted model that gives an answer its confidence and decides whether to answer
(bot/core/match/calibration.py, bot/core/match/model.json, benchmarks/fit_scorer.py): the file
is the fit of the tuned parts, a project left out of the fit gets no false answer at the
threshold, and the confidences it gives are as often right as they say."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from test_project_corpora import HELD_OUT_FALSE, TUNED_FALSE

from bot.catalog.model import replace
from bot.core.analysis import Candidate, PanicMatch
from bot.core.match.answer_rule import revised, silenced
from bot.core.match.calibration import (
    FEATURES,
    MODEL,
    MODEL_FILE,
    calibrate,
    contributions,
    features,
    load_model,
    probability,
)
from bot.core.panic import Panic

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import fit_scorer


@pytest.fixture(scope="module")
def texts() -> list:
    return fit_scorer.corpora()


def test_the_model_file_names_every_feature_and_nothing_else(tmp_path: Path) -> None:
    data = json.loads(MODEL_FILE.read_text(encoding="utf-8"))
    assert set(data["weights"]) == set(FEATURES)
    assert MODEL.version.startswith("logit-") and 0.5 <= MODEL.threshold < 1
    assert all(w >= 0 for w in MODEL.weights)  # monotone: evidence never lowers it
    extra = tmp_path / "model.json"
    extra.write_text(json.dumps({**data, "weights": {**data["weights"], "guess": 1.0}}))
    with pytest.raises(ValueError, match="exactly"):
        load_model(extra)


def test_the_shipped_model_is_the_fit_of_the_tuned_parts(texts: list) -> None:
    left_out = fit_scorer.left_out_models(texts)
    threshold = fit_scorer.choose_threshold(texts, left_out)
    fitted = fit_scorer.shipped_model(texts, threshold, MODEL.version)
    assert fitted.threshold == MODEL.threshold
    assert fitted.intercept == pytest.approx(MODEL.intercept, abs=1e-3)
    assert fitted.weights == pytest.approx(MODEL.weights, abs=1e-3)


def test_a_project_left_out_of_the_fit_gets_no_false_answer(texts: list) -> None:
    """Leave one project out: fitted on the others' tuned parts, at the shipped threshold, no
    project's tuned or held-out part is answered falsely (but for the false answers
    test_project_corpora allows), and no project loses a right answer the stages alone gave."""
    left_out = fit_scorer.left_out_models(texts)
    decide = fit_scorer.lopo(left_out, MODEL.threshold)
    for project in sorted(left_out):
        for part in ("tuned", "held out"):
            group = [t for t in texts if t.project == project and t.part == part]
            if not group:
                continue
            model = fit_scorer.outcome(group, decide)
            stages = fit_scorer.outcome(group, fit_scorer.rules)
            allowed = (
                len(TUNED_FALSE.get(project, ()))
                if part == "tuned"
                else HELD_OUT_FALSE.get(project, 0)
            )
            assert model.false <= allowed, (project, part)
            assert model.right >= stages.right, (project, part)


def test_the_confidence_is_as_often_right_as_it_says(texts: list) -> None:
    """On the held-out parts, with each project's model fitted without it: answered candidates
    are right at least as often as their mean confidence says (less a margin for the few), and
    the unanswered best candidates are right less often than any answer's confidence."""
    decide = fit_scorer.lopo(fit_scorer.left_out_models(texts), MODEL.threshold)
    answered: list[tuple[float, bool]] = []
    others: list[tuple[float, bool]] = []
    for text in texts:
        if text.part != "held out":
            continue
        first = next((m for m in decide(text) if m.candidates), None)
        if first is None:
            continue
        best = first.candidates[0]
        (answered if first.matched else others).append(
            (best.confidence, text.accept(best.record_id))
        )
    assert len(answered) > 100 and len(others) > 5
    mean = sum(p for p, _ in answered) / len(answered)
    right = sum(r for _, r in answered) / len(answered)
    assert right >= mean - 0.02
    assert sum(r for _, r in others) / len(others) < MODEL.threshold


def _candidate(rid: str, score: float, *evidence: str) -> Candidate:
    return Candidate(rid, score, tuple(evidence), 1.0, None)  # type: ignore[arg-type]


MESSAGES = {"a": "first message", "b": "first message", "c": "another message"}


def _panic() -> Panic:
    return Panic.mentioned("first message")


def test_a_lower_candidate_never_shows_more_confidence_than_the_one_above() -> None:
    match = PanicMatch(
        _panic(),
        (_candidate("a", 0.5, "pattern"), _candidate("c", 0.9, "pattern", "location")),
        False,
    )
    (out,) = calibrate([match], MODEL, MESSAGES.get)
    first, second = out.candidates
    assert second.confidence <= first.confidence
    assert [c.record_id for c in out.candidates] == ["a", "c"]  # the stages' order is kept


def test_answered_by_the_models_threshold_unless_refused_or_silenced() -> None:
    strong = _candidate("a", 1.0, "pattern", "location", "line", "header")
    (answered,) = calibrate([PanicMatch(_panic(), (strong,), True)], MODEL, MESSAGES.get)
    assert answered.matched and answered.best.confidence >= MODEL.threshold
    # a stage silenced it (a change description naming the message): it stays silent
    quiet = PanicMatch(_panic(), (strong,), False, silenced=True)
    (silenced,) = calibrate([quiet], MODEL, MESSAGES.get)
    assert not silenced.matched and silenced.silenced
    # a stage's own answer is not the final one: the model's threshold decides
    (unsure,) = calibrate([PanicMatch(_panic(), (strong,), False)], MODEL, MESSAGES.get)
    assert unsure.matched
    refused = replace(strong, refused="std-message")
    (kept,) = calibrate([PanicMatch(_panic(), (refused,), False)], MODEL, MESSAGES.get)
    assert not kept.matched
    weak = _candidate("a", 0.3, "fuzzy")
    (low,) = calibrate([PanicMatch(_panic(), (weak,), False)], MODEL, MESSAGES.get)
    assert not low.matched and low.best.confidence < MODEL.threshold
    higher = replace(MODEL, threshold=low.best.confidence)
    (now,) = calibrate([PanicMatch(_panic(), (weak,), False)], higher, MESSAGES.get)
    assert now.matched  # one threshold decides, wherever it is set


def test_the_last_step_shows_each_features_contribution() -> None:
    match = PanicMatch(
        _panic(),
        (_candidate("a", 0.9, "pattern", "location"), _candidate("b", 0.85, "pattern")),
        True,
    )
    vector = features(match, 0, MESSAGES.get)
    named = dict(zip(FEATURES, vector, strict=True))
    assert named["location"] == 1.0 and named["shared"] == 1.0 and named["quoted"] == 1.0
    (out,) = calibrate([match], MODEL, MESSAGES.get)
    what, value = out.best.steps[-1]
    assert what.startswith(f"model {MODEL.version}: ") and value == out.best.confidence
    for name, part in contributions(MODEL, vector):
        assert f"{name} {part:+.2f}" in what
    assert value == pytest.approx(probability(MODEL, vector), abs=1e-4)


def test_a_stage_that_changes_a_silenced_panics_candidates_keeps_it_silent() -> None:
    strong = _candidate("a", 1.0, "pattern", "location", "line", "header")
    other = _candidate("b", 1.0, "pattern", "location", "line", "header")
    live = revised(PanicMatch(_panic(), (strong,), True), (other, strong))
    assert live.matched and not live.silenced and live.best == other
    quiet = revised(silenced(live), (strong, other))
    assert quiet.silenced and not quiet.matched and quiet.best == strong
    (out,) = calibrate([quiet], MODEL, MESSAGES.get)
    assert out.silenced and not out.matched


def test_sites_of_one_message_that_tie_are_each_rivalled() -> None:
    # `a` and `b` print the same message (MESSAGES): scored alike, neither is unrivalled, and
    # the answer shows less confidence than the same candidate alone would.
    tie = PanicMatch(
        _panic(),
        (_candidate("a", 0.95, "pattern", "header"), _candidate("b", 0.95, "pattern", "header")),
        True,
    )
    ahead = PanicMatch(
        _panic(),
        (_candidate("a", 0.95, "pattern", "header"), _candidate("b", 0.9, "pattern", "header")),
        True,
    )
    unrivalled = FEATURES.index("unrivalled")
    assert [features(tie, i, MESSAGES.get)[unrivalled] for i in (0, 1)] == [0.0, 0.0]
    assert [features(ahead, i, MESSAGES.get)[unrivalled] for i in (0, 1)] == [1.0, 0.0]
    (tied,) = calibrate([tie], MODEL, MESSAGES.get)
    (alone,) = calibrate([ahead], MODEL, MESSAGES.get)
    assert tied.best.confidence < alone.best.confidence
