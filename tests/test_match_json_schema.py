"""`match --json` against its one JSON Schema (schemas/match.schema.json): every real output
over the corpus validates, and the schema is strict enough to refuse a wrong type."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path

import jsonschema
import pytest

from bot.app.match_report import analysis_json
from bot.cli.match import analyse_input

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "schemas" / "match.schema.json").read_text(encoding="utf-8"))
VALIDATOR = jsonschema.Draft202012Validator(
    SCHEMA, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
)
INPUTS = sorted(
    [
        *(ROOT / "tests" / "corpus" / "cases").iterdir(),
        *(ROOT / "tests" / "corpus" / "heldout" / "cases").iterdir(),
        *(ROOT / "examples").glob("*.md"),
    ]
)


def _output(triage, path: Path, **extra) -> dict:
    analysis, version = analyse_input(triage, io.BytesIO(path.read_bytes()))
    # Through JSON and back, as a consumer reads it (tuples become arrays).
    return json.loads(json.dumps(analysis_json(str(path), analysis, triage, version, **extra)))


@pytest.fixture(scope="module")
def outputs(triage) -> list[dict]:
    return [_output(triage, path) for path in INPUTS]


def test_the_schema_is_a_valid_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_every_corpus_output_validates(outputs):
    problems = [
        f"{o['input']}: {e.json_path}: {e.message}"
        for o in outputs
        for e in VALIDATOR.iter_errors(o)
    ]
    assert not problems, "\n".join(problems[:20])
    verdicts = {o["verdict"] for o in outputs}
    # The corpus exercises every verdict, so the schema is checked on each shape.
    assert verdicts == {"match", "removed-site", "uncatalogued-panic", "no-panic"}
    answers = [m["answer"] for o in outputs for m in o["matches"]]
    assert answers and all(a["title"] for a in answers)


def test_history_events_are_in_the_output_where_the_catalog_has_them(outputs):
    events = [e for o in outputs for m in o["matches"] for e in m["answer"]["history"]]
    assert events, "no answer over the corpus carries a history event"
    assert {e["event"] for e in events} >= {"introduced", "removed"}


def test_known_issues_come_from_the_store_rows(triage):
    path = ROOT / "examples" / "issue.md"
    bare = _output(triage, path)
    record = bare["matches"][0]["id"]
    rows = [
        {"number": 4, "record_id": record, "state": "open"},
        {"number": 9, "record_id": record, "state": "closed"},
        {"number": 9, "record_id": record, "state": "open"},
        {"number": 12, "record_id": "someone-else", "state": "open"},
    ]
    found = _output(triage, path, issues=rows, repo="tracel-ai/burn")
    assert not list(VALIDATOR.iter_errors(found))
    assert found["matches"][0]["answer"]["known_issues"] == [
        {"number": 4, "state": "open", "url": "https://github.com/tracel-ai/burn/issues/4"},
        {"number": 9, "state": "closed", "url": "https://github.com/tracel-ai/burn/issues/9"},
    ]
    assert bare["matches"][0]["answer"]["known_issues"] == []


@pytest.mark.parametrize(
    ("where", "value"),
    [
        (("verdict",), "matched"),
        (("matches", 0, "confidence"), "1.0"),
        (("matches", 0, "evidence"), ["pattern", "guess"]),
        (("matches", 0, "answer", "first_step"), 3),
        (("matches", 0, "answer", "history"), [{"event": "fixed"}]),
        (("matches", 0, "answer", "known_issues"), [{"number": "4", "state": "open", "url": "x"}]),
        (("panics", 0, "line"), "1498"),
        (("matches", 0, "unknown_field"), 1),
        (("refused",), None),
        (("refused",), [{"id": "x", "reason": "guess", "confidence": 0.6}]),
        (("refused",), [{"id": "x", "reason": "std-message"}]),
    ],
)
def test_a_wrong_type_fails(triage, where, value):
    good = _output(triage, ROOT / "examples" / "issue.md")
    bad = copy.deepcopy(good)
    target = bad
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value
    assert not list(VALIDATOR.iter_errors(good))
    assert list(VALIDATOR.iter_errors(bad))


def test_refused_is_required_and_lists_each_refused_candidate(triage, outputs):
    good = _output(triage, ROOT / "examples" / "issue.md")
    missing = copy.deepcopy(good)
    del missing["refused"]
    assert list(VALIDATOR.iter_errors(missing))
    assert good["refused"] == []
    # Refused candidates show where a rule held an answer back, each with its reason.
    reasons = {r["reason"] for o in outputs for r in o["refused"]}
    assert reasons, "no corpus text has a refused candidate"
    assert reasons <= {"std-message", "other-file", "near-miss", "removed-wording"}


def test_a_history_event_is_checked_field_by_field(triage):
    good = _output(triage, ROOT / "examples" / "issue.md")
    event = {
        "event": "moved",
        "version": "0.21.0",
        "commit": "933fdf4f69ebef1aeea06cf78f17a1d447904bbb",
        "pr": 4393,
        "title": "Move ONNX crates to burn-onnx repository",
        "url": "https://github.com/tracel-ai/burn/pull/4393",
    }
    good["matches"][0]["answer"]["history"] = [event]
    assert not list(VALIDATOR.iter_errors(good))
    for key, value in [("commit", "933fdf4"), ("pr", "4393"), ("event", "renamed")]:
        bad = copy.deepcopy(good)
        bad["matches"][0]["answer"]["history"][0][key] = value
        assert list(VALIDATOR.iter_errors(bad)), key


def test_an_unreadable_input_line_validates_and_is_strict(tmp_path):
    """`match --json` on a missing file and a folder prints `{"input", "error"}` lines (the
    schema's second shape) beside a report; each validates, and neither shape takes the other's
    fields."""
    import subprocess
    import sys

    script = Path(sys.executable).parent / "triage-bot"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "bot"]
    (tmp_path / "folder").mkdir()
    done = subprocess.run(
        [*command, "match", "--json", "missing.md", "folder", str(ROOT / "examples" / "issue.md")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [sorted(o) for o in lines[:2]] == [["error", "input"], ["error", "input"]]
    assert lines[0]["input"] == "missing.md" and lines[0]["error"].startswith("cannot read")
    assert lines[2]["verdict"] == "match"
    for line in lines:
        assert not list(VALIDATOR.iter_errors(line)), line
    error = lines[0]
    for bad in (
        {**error, "verdict": "no-panic"},  # an error is not also a report
        {"input": "missing.md"},  # neither shape
        {**error, "error": ""},
        {**error, "error": 7},
    ):
        assert list(VALIDATOR.iter_errors(bad)), bad
    report = copy.deepcopy(lines[2])
    report["error"] = "cannot read"
    assert list(VALIDATOR.iter_errors(report))
