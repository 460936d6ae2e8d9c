"""Issue 29, point 9: the counts the READMEs state about the bundled data (records per project,
sites, lineages, releases, write-ups, corpus sizes) are read back from the text and compared
with the data. Each figure is found through the sentence that states it: a reworded sentence
fails here until its pattern follows, so no figure drops out of the check unseen. Timing figures
cannot be checked; each names when and where it was measured instead."""

from __future__ import annotations

import json
import re
from collections import Counter
from functools import cache
from pathlib import Path

import pytest
from docs_text import doc_files, docs_text

from bot.catalog.loader import load_catalog

ROOT = Path(__file__).resolve().parent.parent
CATALOG = ROOT / "catalog"
CORPUS = ROOT / "tests" / "corpus"
PROJECTS = ROOT / "tests" / "corpus_projects"
PROJECT_FOLDERS = ("burn", "cubecl", "burn-onnx", "wgpu", "ndarray")
WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


def _number(text: str) -> int | float:
    if text in WORDS:
        return WORDS[text]
    return float(text) if "." in text else int(text.replace(",", ""))


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@cache
def _facts() -> dict[str, int | float]:
    catalog = load_catalog([CATALOG])
    per_repo = Counter(record.repo for record in catalog)
    history = (CATALOG / "burn" / "history.ndjson").read_text(encoding="utf-8").splitlines()
    header, lineages = json.loads(history[0]), [json.loads(line) for line in history[1:]]
    kinds = Counter(event[0] for lin in lineages for event in lin.get("events") or [])
    labels = _lines(CORPUS / "labels.jsonl")
    held = _lines(CORPUS / "heldout" / "labels.jsonl")
    # cases 001-156 were written for the corpus; the later ones and the held-out ones are real
    written = [r for r in labels if int(r["case"][:3]) <= 156]
    history_bytes = (CATALOG / "burn" / "history.ndjson").stat().st_size
    facts: dict[str, int | float] = {
        "records": len(catalog),
        "projects": len(list(CATALOG.glob("*/history.ndjson"))),
        "burn lineages, thousands": round(len(lineages) / 1000, 1),
        "burn history, MB": round(history_bytes / 1e6),
        "burn records": per_repo["tracel-ai/burn"],
        "burn reasons": len(_lines(CATALOG / "burn" / "check_reasons.jsonl")),
        "seeds": len(list((CATALOG / "seeds").glob("*.json"))),
        "write-ups": len(list((CATALOG / "burn" / "writeups").glob("*.json"))),
        "all write-ups": len(list(CATALOG.glob("*/writeups/*.json"))),
        "families": len(json.loads((CATALOG / "families.json").read_text())["families"]),
        "burn releases": len(header["releases"]),
        "burn lineages": len(lineages),
        "burn commits": len(header["commits"]),
        "changes": sum(kinds.values()),
        "changed lineages": sum(1 for lin in lineages if lin.get("events")),
        "lineages without events": sum(1 for lin in lineages if not lin.get("events")),
        "corpus": len(labels) + len(held),
        "corpus written": len(written),
        "corpus real": len(labels) + len(held) - len(written),
        "corpus held out": len(held),
        "corpus catalogued": sum(r["expect"] == "match" for r in labels + held),
    }
    for folder in PROJECT_FOLDERS:
        facts[f"{folder} sites"] = len(_lines(CATALOG / folder / "panic_sites.jsonl"))
        facts[f"{folder} removed"] = len(_lines(CATALOG / folder / "removed_sites.jsonl"))
    facts.update({f"event {kind}": n for kind, n in kinds.items()})
    for project in ("tokio", "bevy"):
        rows = _lines(PROJECTS / project / "labels.jsonl")
        rows_held = _lines(PROJECTS / project / "heldout" / "labels.jsonl")
        facts[f"{project} texts"] = len(rows) + len(rows_held)
        facts[f"{project} catalogued"] = sum(r["expect"] == "match" for r in rows + rows_held)
        facts[f"{project} held out"] = len(rows_held)
        facts[f"{project} held out catalogued"] = sum(r["expect"] == "match" for r in rows_held)
    return facts


N = r"(\d[\d,]*|two|three|four|five|six)"
# (file, pattern with one group per figure, the facts those groups state, in order)
FIGURES: list[tuple[str, str, tuple[str, ...]]] = [
    ("README.md", rf"\(cubecl, burn-onnx, wgpu, ndarray\): {N} records with each", ("records",)),
    (
        "README.md",
        rf"records with each\s+site's place in every release, {N} site write-ups and {N} error",
        ("all write-ups", "families"),
    ),
    (
        "README.md",
        rf"`burn/panic_sites\.jsonl` holds the sites at HEAD \({N}\),\s+"
        rf"`burn/removed_sites\.jsonl` the sites that left \({N}\)",
        ("burn sites", "burn removed"),
    ),
    (
        "README.md",
        rf"On burn: {N} changes of {N} lineages \({N} introduced, {N}\s+changed, {N} moved, "
        rf"{N} removed, {N} fixed; {N} lineages have none, their messages too short to\s+"
        rf"count\), {N} commits",
        (
            "changes",
            "changed lineages",
            "event introduced",
            "event changed",
            "event moved",
            "event removed",
            "event fixed",
            "lineages without events",
            "burn commits",
        ),
    ),
    (
        "README.md",
        rf"`tests/corpus/` holds {N} texts \({N} written for the tests, {N} real texts from "
        rf"burn's\s+tracker, {N} of them held out; {N} with a catalogued panic\)",
        ("corpus", "corpus written", "corpus real", "corpus held out", "corpus catalogued"),
    ),
    (
        "README.md",
        rf"\| tokio-rs/tokio @ ea91b33 \(\d+ sites\) \| {N} \| {N} \| [\d.]+% \(\d+\) \| \d+ "
        rf"\| {N} / {N} /",
        ("tokio texts", "tokio catalogued", "tokio held out", "tokio held out catalogued"),
    ),
    (
        "README.md",
        rf"\| bevyengine/bevy @ 4805ca7 \(\d+ sites\) \| {N} \| {N} \| [\d.]+% \(\d+\) \| \d+ "
        rf"\| {N} / {N} /",
        ("bevy texts", "bevy catalogued", "bevy held out", "bevy held out catalogued"),
    ),
    (
        "README.md",
        rf"combined bundled catalog \({N} records: burn, cubecl, burn-onnx, wgpu, ndarray\)",
        ("records",),
    ),
    ("README.md", rf"rendering every one of the {N} record pages", ("records",)),
    *(
        (
            "README.md",
            rf"\| `{folder}/` \| [^|\n]+ \| [^|\n]+ \| {N} \| {N} \|",
            (f"{folder} sites", f"{folder} removed"),
        )
        for folder in PROJECT_FOLDERS
    ),
    (
        "README.md",
        rf"\(burn: {N} releases, (\d+\.\d)k lineages, (\d+) MB\)",
        ("burn releases", "burn lineages, thousands", "burn history, MB"),
    ),
    ("README.md", rf"bundled catalog holds {N} projects", ("projects",)),
    ("README.md", rf"the bundled catalog's {N} records read from the installed", ("records",)),
    ("catalog/README.md", rf"`seeds/<id>\.json` \| {N} written-up records", ("seeds",)),
    (
        "catalog/README.md",
        rf"`burn/panic_sites\.jsonl` \| {N} skeleton records",
        ("burn sites",),
    ),
    (
        "catalog/README.md",
        rf"`burn/removed_sites\.jsonl` \| {N} skeleton records of sites that left",
        ("burn removed",),
    ),
    ("catalog/README.md", rf"message in each of {N} releases\)", ("burn releases",)),
    ("catalog/README.md", rf"`burn/check_reasons\.jsonl` \| {N} records", ("burn reasons",)),
    ("catalog/README.md", rf"The {N} write-ups in `burn/writeups/`", ("write-ups",)),
]


@pytest.mark.parametrize(
    ("file", "pattern", "names"), FIGURES, ids=[f"{f}:{n[0]}" for f, _, n in FIGURES]
)
def test_a_readme_figure_matches_the_data(file, pattern, names):
    # "README.md": anywhere in the user docs (README.md, docs/, benchmarks/, CONTRIBUTING.md)
    text = docs_text() if file == "README.md" else (ROOT / file).read_text(encoding="utf-8")
    found = re.search(pattern, text)
    assert found is not None, f"{file}: the sentence stating {names} is gone or reworded"
    stated = [_number(group) for group in found.groups()]
    actual = [_facts()[name] for name in names]
    assert dict(zip(names, stated, strict=True)) == dict(zip(names, actual, strict=True))


def test_burns_records_are_its_sites_and_reasons():
    """burn's record total is the sum of its parts (sites, removed sites, tensor-check
    reasons); seeds replace the skeletons of their own sites, so they add nothing."""
    facts = _facts()
    parts = facts["burn sites"] + facts["burn removed"] + facts["burn reasons"]
    assert facts["burn records"] == parts


TIMING = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s)\b")
MEASURED = re.compile(r"\b(took|measured|Measured|median|CPU|wall|load in|One run|Speed)\b")
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")


def test_measured_timings_say_when_they_were_measured():
    """A paragraph that reports a measured time names the day (YYYY-MM-DD) it was measured, or
    one of the two before it does (a run's table and the notes under it). "This machine" is the
    project's 2-core one."""
    undated = []
    for path in doc_files():
        undated += _undated(path.read_text(encoding="utf-8").split("\n\n"))
    assert undated == []


def _undated(paragraphs: list[str]) -> list[str]:
    return [
        paragraph.strip().splitlines()[0]
        for at, paragraph in enumerate(paragraphs)
        if MEASURED.search(paragraph)
        and TIMING.search(paragraph)
        and not any(DATE.search(p) for p in paragraphs[max(0, at - 2) : at + 1])
    ]
