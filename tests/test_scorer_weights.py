"""The scorer's weights live in one versioned file (bot/core/match/scorer.json): every weight the
matcher adds, caps or multiplies with is read from it, `match --json` names its version, and an
answer's steps show each weight at work."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.app import Triage
from bot.app.match_report import analysis_json
from bot.catalog.model import replace
from bot.core.match import matcher as matcher_module
from bot.core.match.calibration import MODEL
from bot.core.match.scorer import WEIGHTS, WEIGHTS_FILE, Weights, load_weights

HAL = (
    "thread 'main' panicked at /home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f/"
    "wgpu-core-22.1.0/src/hal_api.rs:20:9:\nnot implemented: called empty api\n"
)


def test_the_weights_file_holds_every_weight_and_nothing_else(tmp_path: Path) -> None:
    data = json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))
    assert set(data) - {"about"} == set(Weights.__annotations__)
    assert load_weights() == WEIGHTS and WEIGHTS.version
    for name, value in data.items():
        if name.startswith(("add_", "cap_", "factor_")) or name == "threshold":
            assert 0 < value <= 1, name
    extra = tmp_path / "scorer.json"
    extra.write_text(json.dumps({**data, "add_guess": 0.3}))
    with pytest.raises(TypeError):
        load_weights(extra)


def test_match_json_names_the_weights_and_the_steps_show_them(triage: Triage) -> None:
    analysis = triage.analyse(HAL)
    assert analysis_json("-", analysis, triage)["scorer"] == f"{WEIGHTS.version}+{MODEL.version}"
    best = analysis.panics[0].best
    values = dict(best.steps)
    before = next(v for what, v in best.steps if what.startswith("message "))
    assert values["pasted at the record's file"] == pytest.approx(before + WEIGHTS.add_location)


def test_a_weight_changed_in_the_file_changes_the_score(triage: Triage, monkeypatch) -> None:
    before = triage.analyse(HAL).panics[0].best
    lighter = replace(WEIGHTS, add_location=0.0)
    monkeypatch.setattr(matcher_module, "W", lighter)
    after = triage.analyse(HAL).panics[0].best
    assert (
        dict(after.steps)["pasted at the record's file"]
        < dict(before.steps)["pasted at the record's file"]
    )


def test_every_answer_on_the_corpora_follows_the_one_rule(triage: Triage) -> None:
    """Whatever stage changed a panic's candidates last, it is answered only when its best
    candidate's probability reached the model's threshold unrefused
    (bot.core.match.calibration)."""
    from corpus_scoring import load_cases

    answered = 0
    for case in load_cases():
        for item in triage.analyse(case["text"]).panics:
            best = item.best
            assert not item.matched or (
                best is not None and best.refused is None and best.confidence >= MODEL.threshold
            ), (case["case"], best)
            answered += item.matched
    assert answered > 100
