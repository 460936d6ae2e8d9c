"""Reading and scoring the labelled corpora: burn's (tests/corpus/) and other projects'
(tests/corpus_projects/<project>/), for the accuracy tests, the size tests and
benchmarks/bench_match.py.

A corpus folder holds `labels.jsonl` and `cases/`; its held-out part (labelled, never tuned on)
is the same layout in its `heldout/` folder. Scoring: the top answer is the first answered
panic's best record; it is right when the label accepts its (file_path, message); a miss is a
catalogued panic not answered right; a false match is an answer the label does not accept, on
any text (a silence is never one).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.app import Triage

BURN = Path(__file__).parent / "corpus"
PROJECTS = Path(__file__).parent / "corpus_projects"
HELDOUT = "heldout"


def read_cases(folder: Path) -> list[dict]:
    """The labels of `folder` in file order, each with its case's text as `text` and
    `holdout` (whether `folder` is a held-out part)."""
    labels = [
        json.loads(line)
        for line in (folder / "labels.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    for label in labels:
        label["text"] = (folder / "cases" / label["case"]).read_bytes().decode("utf-8", "replace")
        label["holdout"] = folder.name == HELDOUT
    return labels


def load_cases() -> list[dict]:
    """Every case of burn's corpus, the held-out part included, in the order of their numbers."""
    return sorted(read_cases(BURN) + read_cases(BURN / HELDOUT), key=lambda c: c["case"])


def accepted(case: dict, record: Any) -> bool:
    """Whether `record` (or None) is a top answer the case's label accepts."""
    return record is not None and any(
        record.file_path == site["file_path"] and record.error_message == site["message"]
        for site in case.get("accept", [])
    )


def score(triage: Triage, cases: list[dict]) -> list[dict]:
    """Each case with the bot's `verdict`, its `top` record (or None) and whether the label
    `accepted` it."""
    out = []
    for case in cases:
        analysis = triage.analyse(case["text"])
        answered = analysis.answered
        top = triage.catalog.get(answered[0].best.record_id) if answered else None
        out.append(
            {**case, "verdict": analysis.verdict, "top": top, "accepted": accepted(case, top)}
        )
    return out


@dataclass(frozen=True)
class Figures:
    """What a scored set of cases adds up to; the lists hold case names."""

    texts: int
    positives: int
    misses: list[str]
    false_matches: list[str]
    verdicts_differ: list[str]

    @property
    def top1(self) -> float:
        return 1 - len(self.misses) / self.positives if self.positives else 1.0

    def summary(self, name: str) -> str:
        return (
            f"{name}: {self.texts} texts, {self.positives} catalogued panics: "
            f"top-1 {self.top1:.1%} ({len(self.misses)} missed), "
            f"false matches {len(self.false_matches)}, "
            f"verdicts {self.texts - len(self.verdicts_differ)}/{self.texts}"
        )


def figures(results: list[dict]) -> Figures:
    return Figures(
        texts=len(results),
        positives=sum(r["expect"] == "match" for r in results),
        misses=[r["case"] for r in results if r["expect"] == "match" and not r["accepted"]],
        false_matches=[r["case"] for r in results if r["top"] is not None and not r["accepted"]],
        verdicts_differ=[r["case"] for r in results if r["verdict"] != r["expect"]],
    )


def print_details(results: list[dict]) -> None:
    """One line per miss, false match and differing verdict, by case name (never call this on
    a held-out part: its cases are reported as counts, so nobody tunes on them)."""
    for r in results:
        top = r["top"]
        if r["expect"] == "match" and not r["accepted"]:
            print(f"  missed   {r['case']}: {r['verdict']}, top {top and top.error_message!r}")
        elif top is not None and not r["accepted"]:
            print(f"  WRONG    {r['case']}: answered {top.error_message[:80]!r}")
        elif r["verdict"] != r["expect"]:
            print(f"  verdict  {r['case']}: {r['verdict']} (label {r['expect']})")
