"""Accuracy on pastes from older burn releases against current ones (issue 12), the held-out
cases (`"holdout": true` in labels.jsonl: labelled, never tuned on) reported apart."""

from __future__ import annotations

import re

import pytest
from test_accuracy import load_cases

from bot.app import Triage

# A burn crate with a release version in a pasted path: `burn-tensor-0.16.0/src/..`.
_VERSIONED = re.compile(r"burn[a-z-]*-(\d+\.\d+\.\d+)")
CURRENT_RELEASES = ("0.21.", "0.22.")
TOP1_FLOOR = 0.85


def era(case: dict) -> str:
    """`older` for a paste from a release before the newest, else `current`."""
    tags = case.get("noise", [])
    if "older-version" in tags:
        return "older"
    if "current-version" in tags:
        return "current"
    versions = _VERSIONED.findall(case["text"])
    if versions and not any(v.startswith(CURRENT_RELEASES) for v in versions):
        return "older"
    return "current"


@pytest.fixture(scope="module")
def figures() -> dict[tuple[str, bool], dict]:
    triage = Triage.from_paths()
    groups: dict[tuple[str, bool], dict] = {}
    for case in load_cases():
        analysis = triage.analyse(case["text"])
        answered = analysis.answered
        top = triage.catalog.get(answered[0].best.record_id) if answered else None
        right = any(
            top is not None and (top.file_path, top.error_message) == (s["file_path"], s["message"])
            for s in case["accept"]
        )
        group = groups.setdefault(
            (era(case), bool(case.get("holdout"))),
            {"texts": 0, "positives": 0, "top1": 0, "false": [], "verdicts": 0},
        )
        group["texts"] += 1
        group["verdicts"] += analysis.verdict == case["expect"]
        if case["expect"] == "match":
            group["positives"] += 1
            group["top1"] += right
        if top is not None and not right:
            group["false"].append(case["case"])
    for (name, holdout), g in sorted(groups.items()):
        rate = g["top1"] / g["positives"] if g["positives"] else 1.0
        print(
            f"{name}{' (held out)' if holdout else ''}: {g['texts']} texts, {g['positives']} "
            f"positives, top-1 {rate:.1%}, false matches {len(g['false'])}, verdicts "
            f"{g['verdicts']}/{g['texts']}"
        )
    return groups


def test_older_pastes_are_answered_at_the_rate_of_current_ones(figures):
    def rate(name: str) -> float:
        found = [g for (n, _h), g in figures.items() if n == name]
        positives = sum(g["positives"] for g in found)
        return sum(g["top1"] for g in found) / positives

    assert rate("older") >= TOP1_FLOOR
    assert rate("older") >= rate("current") - 0.05


def test_no_false_match_in_any_group_held_out_included(figures):
    assert {key: g["false"] for key, g in figures.items() if g["false"]} == {}


def test_the_held_out_part_has_older_pastes(figures):
    assert figures[("older", True)]["positives"] >= 3
