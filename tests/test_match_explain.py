"""`match --explain` and `/triage why`: each candidate's confidence as the steps that reached it.
The steps are the scorer's own record, so on every corpus text each candidate's last step is
its confidence; the JSON form is valid against schemas/match.schema.json."""

from __future__ import annotations

import json
import re

import jsonschema
from cli_process import run_cli
from corpus_scoring import BURN, HELDOUT, PROJECTS, read_cases
from json_schemas import schema

from bot.app import Triage

HAL = (
    "thread 'main' panicked at /home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f/"
    "wgpu-core-22.1.0/src/hal_api.rs:20:9:\nnot implemented: called empty api\n"
)


def test_every_candidates_steps_end_at_its_confidence(triage: Triage) -> None:
    texts = [case["text"] for folder in (BURN, BURN / HELDOUT) for case in read_cases(folder)]
    texts += [c["text"] for c in read_cases(PROJECTS / "cubecl")]
    seen = 0
    for text in texts:
        for item in triage.analyse(text).panics:
            for candidate in item.candidates:
                assert candidate.steps, candidate
                assert candidate.steps[-1][1] == candidate.confidence, candidate
                seen += 1
    assert seen > 200


def test_match_explain_prints_the_steps_and_its_json_is_in_the_schema(tmp_path) -> None:
    paste = tmp_path / "paste.txt"
    paste.write_text(HAL)
    done = run_cli(tmp_path, "match", "--explain", str(paste))
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "Why this answer" not in text and "Verdict: match." in text
    # the fitted model's probability, which the threshold (0.80) is far below
    assert re.search(r"d8b7dcc55397581f confidence (1\.00|0\.99)", text), text
    assert "pasted at the record's file" in text and "line 0 from the record's" in text
    assert "decided: the best candidate is confident enough to answer with" in text

    done = run_cli(tmp_path, "match", "--json", "--explain", str(paste))
    report = json.loads(done.stdout)
    jsonschema.validate(report, schema("match"))
    [panic] = report["explain"]
    best = panic["candidates"][0]
    assert panic["matched"] and best["id"] == "d8b7dcc55397581f"
    assert best["steps"][-1]["confidence"] == best["confidence"]
    assert "explain" not in json.loads(run_cli(tmp_path, "match", "--json", str(paste)).stdout)
