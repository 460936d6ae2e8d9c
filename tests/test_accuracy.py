"""The matcher against the labelled corpus of realistic issue and chat texts (tests/corpus/).

Prints the figures (run with -s to see them) and holds floors on them. Top-1: the bot's first
answered record is one the label accepts. A false match: the bot answers with a record the
label does not accept, on a positive or a negative. Silence on a positive costs recall only.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.app import Triage, load_bundled

CORPUS = Path(__file__).parent / "corpus"

TOP1_FLOOR = 0.85
FALSE_MATCH_CEILING = 0.02
VERDICT_FLOOR = 0.80


def load_cases() -> list[dict]:
    labels = [
        json.loads(line)
        for line in (CORPUS / "labels.jsonl").read_text().splitlines()
        if line.strip()
    ]
    for label in labels:
        label["text"] = (CORPUS / "cases" / label["case"]).read_bytes().decode("utf-8", "replace")
    return labels


@pytest.fixture(scope="module")
def results():
    triage = Triage.from_paths()
    out = []
    for case in load_cases():
        analysis = triage.analyse(case["text"])
        answered = analysis.answered
        top = triage.catalog.get(answered[0].best.record_id) if answered else None
        accepted = any(
            top is not None
            and top.file_path == site["file_path"]
            and top.error_message == site["message"]
            for site in case.get("accept", [])
        )
        out.append({**case, "verdict": analysis.verdict, "top": top, "accepted": accepted})
    return out


def test_every_accepted_site_is_in_the_bundled_catalog():
    catalog = load_bundled().catalog
    sites = {(r.file_path, r.error_message) for r in catalog}
    missing = [
        (case["case"], site)
        for case in load_cases()
        for site in case.get("accept", [])
        if (site["file_path"], site["message"]) not in sites
    ]
    assert missing == []


def test_corpus_is_balanced_and_large_enough():
    cases = load_cases()
    positives = sum(case["expect"] == "match" for case in cases)
    assert len(cases) >= 80
    assert positives >= 30
    assert len(cases) - positives >= positives * 0.8


def test_precision_and_recall_floors(results):
    positives = [r for r in results if r["expect"] == "match"]
    top1 = sum(r["accepted"] for r in positives) / len(positives)
    false = [r for r in results if r["top"] is not None and not r["accepted"]]
    false_rate = len(false) / len(results)
    verdicts = sum(r["verdict"] == r["expect"] for r in results) / len(results)
    print(
        f"\ncorpus: {len(results)} texts, {len(positives)} positives; "
        f"top-1 {top1:.1%}, false matches {len(false)} ({false_rate:.1%}), "
        f"verdict agreement {verdicts:.1%}"
    )
    for r in results:
        if r["expect"] == "match" and not r["accepted"]:
            print(
                f"  missed   {r['case']}: {r['verdict']},"
                f" top {r['top'] and r['top'].error_message!r}"
            )
        elif r["top"] is not None and not r["accepted"]:
            print(f"  WRONG    {r['case']}: answered {r['top'].error_message!r}")
        elif r["verdict"] != r["expect"]:
            print(f"  verdict  {r['case']}: {r['verdict']} (label {r['expect']})")
    assert false_rate <= FALSE_MATCH_CEILING
    assert top1 >= TOP1_FLOOR
    assert verdicts >= VERDICT_FLOOR
