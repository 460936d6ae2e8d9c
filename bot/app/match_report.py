"""The `match --json` object: one input's panics and matches, as the CLI prints it and the
pages' `POST /api/match` returns it. The contract is checked from outside: keep the names."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from bot.core.analysis import Analysis
from bot.core.match.calibration import MODEL
from bot.core.match.releases import (
    history_events,
    project_names,
    story_json,
    story_of,
    version_in_text,
)
from bot.core.match.scorer import WEIGHTS
from bot.core.match.windows import analyse_windows
from bot.render.answer.build import build_answer
from bot.render.answer.parts import Section
from bot.render.answer.plain import plain_answer

if TYPE_CHECKING:
    from bot.app import Triage


def analysis_json(
    input_name: str,
    analysis: Analysis,
    triage: Triage,
    text_version: str | None = None,
    *,
    issues: Sequence[Mapping[str, Any]] = (),
    repo: str | None = None,
) -> dict[str, Any]:
    """The contract checked from outside (schemas/match.schema.json): keep these names.
    `text_version` (a release the input names: `burn 0.18`, a Cargo.lock entry) places the match
    in that release; `issues` are the store's rows (`issues_for_records`) of `repo`, for each
    answer's `known_issues`."""
    index = triage.matcher.index
    # Every answered panic gets a section (the comment shows at most three; JSON has them all).
    answered = len(analysis.answered)
    answer = build_answer(
        analysis,
        triage.catalog,
        history=triage.history,
        projects=triage.projects,
        max_sections=max(1, answered),
    )
    sections: dict[str, Section] = {}
    for shown in answer.sections:
        sections.setdefault(shown.record.id, shown)
    panics = []
    for item in analysis.panics:
        loc = item.panic.location
        repo_path = index.repo_path(loc.crate, loc.crate_path) if loc else None
        panics.append(
            {
                "message": item.panic.message,
                "file": repo_path or (loc.path if loc else None),
                "line": loc.line if loc else None,
                "crate": loc.crate if loc else None,
                "crate_version": loc.crate_version if loc else None,
            }
        )
    matches = []
    for item in analysis.answered:
        best = item.best
        record = triage.catalog.get(best.record_id) if best is not None else None
        section = sections.get(record.id) if record is not None else None
        if best is None or record is None or section is None:
            continue  # (never: an answered panic has a best candidate, from the catalog)
        matches.append(
            {
                "id": record.id,
                "repo": record.repo,
                "confidence": best.confidence,
                "file_path": record.file_path,
                "error_message": record.error_message,
                "evidence": list(best.evidence),
                **story_json(
                    story_of(
                        triage.history_for(record.repo),
                        item,
                        record.id,
                        triage.version_for(record.repo, text_version),
                    )
                ),
                "answer": plain_answer(
                    section,
                    history_events(triage.history_for(record.repo), record.id),
                    [row for row in issues if row.get("record_id") == record.id],
                    repo,
                ),
            }
        )
    verdict: str = analysis.verdict
    if verdict == "match" and "removed_in" in matches[0]:
        verdict = "removed-site"  # the root panic's site is gone from the code (issue 12)
    return {
        "input": input_name,
        "verdict": verdict,
        "panics": panics,
        "matches": matches,
        "refused": refused_json(analysis),
        "scorer": f"{WEIGHTS.version}+{MODEL.version}",
    }


def explain_json(analysis: Analysis, limit: int = 3) -> list[dict[str, Any]]:
    """`match --json --explain`: per panic, its top candidates and the steps of each one's
    confidence (the `explain` key of schemas/match.schema.json)."""
    return [
        {
            "message": item.panic.message,
            "matched": item.matched,
            "candidates": [
                {
                    "id": c.record_id,
                    "confidence": c.confidence,
                    "evidence": list(c.evidence),
                    "refused": c.refused,
                    "steps": [{"what": what, "confidence": value} for what, value in c.steps],
                }
                for c in item.candidates[:limit]
            ],
        }
        for item in analysis.panics
    ]


def refused_json(analysis: Analysis) -> list[dict[str, Any]]:
    """The candidates a rule kept from answering (bot.core.analysis.Refusal), once each."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for item in analysis.panics:
        for candidate in item.candidates:
            if candidate.refused is None or candidate.record_id in seen:
                continue
            seen.add(candidate.record_id)
            out.append(
                {
                    "id": candidate.record_id,
                    "reason": candidate.refused,
                    "confidence": candidate.confidence,
                }
            )
    return out


def match_bytes_json(triage: Triage, data: bytes, input_name: str = "-") -> dict[str, Any]:
    """What `triage-bot match --json` prints for `data` given on stdin (windows, the release
    the text names): the pages' POST /api/match. From the catalog alone (no store issues)."""
    versions: list[str] = []
    names = project_names(triage.history) if triage.history is not None else set()

    def analyse(text: str) -> Analysis:
        if names and not versions and (version := version_in_text(text, names)):
            versions.append(version)
        return triage.analyse(text)

    analysis = analyse_windows(analyse, io.BytesIO(data))
    return analysis_json(
        input_name, analysis, triage, text_version=versions[0] if versions else None
    )
