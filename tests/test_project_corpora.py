"""Real issue texts of Rust projects other than burn (tests/corpus_projects/<project>/), matched
against the records of that project's own `catalog scan`.

Each project folder holds `cases/*.md` (texts as reported, prose reworded), `labels.jsonl` (set
by hand against the scan before the bot ran; `holdout` marks a part never tuned on) and
`catalog.jsonl` (only the scanned records the labels name; the full scan is not committed).

Prints per-project figures (run with -s) and enforces them: top-1 on catalogued panics, zero
false matches, on the whole set and on the held-out part.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.app import Triage
from bot.catalog.loader import load_catalog

ROOT = Path(__file__).parent / "corpus_projects"
PROJECTS = sorted(p.name for p in ROOT.iterdir() if (p / "labels.jsonl").is_file())
# Floors per project, (all cases, held-out part), from the committed catalogs; never lowered.
TOP1_FLOORS = {"bevy": (0.8, 0.5), "tokio": (0.85, 0.75)}


def load_cases(project: str) -> list[dict]:
    folder = ROOT / project
    labels = [json.loads(line) for line in (folder / "labels.jsonl").read_text().splitlines()]
    for label in labels:
        label["text"] = (folder / "cases" / label["case"]).read_text(encoding="utf-8")
    return labels


def evaluate(project: str, catalog_paths: list[Path]) -> list[dict]:
    triage = Triage(load_catalog(catalog_paths))
    out = []
    for case in load_cases(project):
        analysis = triage.analyse(case["text"])
        answered = analysis.answered
        top = triage.catalog.get(answered[0].best.record_id) if answered else None
        accepted = top is not None and any(
            top.file_path == site["file_path"] and top.error_message == site["message"]
            for site in case["accept"]
        )
        out.append({**case, "verdict": analysis.verdict, "top": top, "accepted": accepted})
    return out


def figures(results: list[dict]) -> tuple[float, int, int]:
    """(top-1 on catalogued panics, false matches, catalogued panics)."""
    positives = [r for r in results if r["expect"] == "match"]
    top1 = sum(r["accepted"] for r in positives) / len(positives) if positives else 1.0
    false = sum(r["top"] is not None and not r["accepted"] for r in results)
    return top1, false, len(positives)


@pytest.mark.parametrize("project", PROJECTS)
def test_every_accepted_site_is_in_the_projects_catalog(project: str) -> None:
    catalog = load_catalog([ROOT / project / "catalog.jsonl"])
    sites = {(r.file_path, r.error_message) for r in catalog}
    missing = [
        (case["case"], site)
        for case in load_cases(project)
        for site in case["accept"]
        if (site["file_path"], site["message"]) not in sites
    ]
    assert missing == []


@pytest.mark.parametrize("project", PROJECTS)
def test_project_top1_and_no_false_matches(project: str) -> None:
    results = evaluate(project, [ROOT / project / "catalog.jsonl"])
    held_out = [r for r in results if r["holdout"]]
    top1, false, positives = figures(results)
    held_top1, held_false, held_positives = figures(held_out)
    print(
        f"\n{project}: {len(results)} texts, {positives} catalogued panics: top-1 {top1:.1%}, "
        f"false matches {false}; held out {len(held_out)} texts, {held_positives} catalogued: "
        f"top-1 {held_top1:.1%}, false matches {held_false}"
    )
    for r in results:
        if r["expect"] == "match" and not r["accepted"]:
            print(f"  missed {r['case']}: {r['verdict']}")
        elif r["top"] is not None and not r["accepted"]:
            print(f"  WRONG  {r['case']}: {r['top'].error_message[:80]!r}")
    floor, held_floor = TOP1_FLOORS[project]
    assert false == 0
    assert top1 >= floor
    assert held_top1 >= held_floor
