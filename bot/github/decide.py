"""What the bot should show on an issue, from what was read about it. Pure.

`decide` takes plain values (the issue's analysis and answer, the maintainers' controls, the
catalog's records and families for the answer, the other issues the store knows with the same
records, the label and duplicate settings) and returns the `Desired` state: verdict, labels,
comment body, and the note for when an earlier answer no longer applies. The planner
(`bot.github.planner`) turns it into writes; the pipeline reads the facts and carries it out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.catalog.model import Record
from bot.core.analysis import Analysis
from bot.github.duplicates import (
    DuplicateConfig,
    also_reported_line,
    duplicate_label,
    related_issues,
)
from bot.github.labels import LabelConfig
from bot.github.planner import Desired
from bot.github.triage_command.handle import (
    Controls,
    add_why,
    why_section,
    with_override,
    wrong_note_body,
)
from bot.render.answer.parts import Answer
from bot.render.github import render_comment, render_no_longer


@dataclass(frozen=True)
class Facts:
    """What was read about one issue, as the decision needs it."""

    number: int
    analysis: Analysis  # of the issue's text, the records maintainers rejected left out
    answer: Answer  # the record a maintainer chose, else the matcher's answer
    controls: Controls = field(default_factory=Controls)
    records: Sequence[Record] = ()  # the answer's records, as the catalog has them
    families: Mapping[str, str] = field(default_factory=dict)  # record id -> catalog family
    project_crates: Sequence[str] = ()  # the project's crates the root panic was raised in
    # the store's rows of the repository's issues that hit the answer's records (this one too)
    history: Sequence[Mapping[str, Any]] = ()
    # record id -> the dependency (`wgpu`) whose code the record is (issue 25)
    dependencies: Mapping[str, str] = field(default_factory=dict)
    # TRIAGE_PUBLIC_URL: the comment links "Full write-up" to the record's page there
    public_url: str | None = None


def decide(facts: Facts, labels: LabelConfig, duplicates: DuplicateConfig) -> Desired:
    """The answer the issue should show.

    - An answer with records: `match`, its records' labels (plus the duplicate-candidate label
      when an open issue hits the root record), the comment with "Also reported in ...".
    - A panic without records: `uncatalogued-panic`, the uncatalogued labels, a comment only
      when configured.
    - Nothing: `no-panic`, no labels, no comment.
    - A maintainer's `wrong` with nothing else to answer: one line instead, none of the bot's
      labels; `why` adds the evidence; an override is kept in the comment's marker.
    """
    analysis, answer, controls = facts.analysis, facts.answer, facts.controls
    verdict = "match" if answer.record_ids else analysis.verdict
    body: str | None
    if answer.record_ids:
        wanted = labels.for_records(
            facts.records,
            lambda record: facts.families.get(record.id),
            lambda record: facts.dependencies.get(record.id),
        )
        related = related_issues(
            facts.history, facts.number, answer.record_ids, analysis.fingerprint
        )
        also = also_reported_line(related, duplicates.max_listed)
        body = render_comment(answer, also_reported=also, public_url=facts.public_url)
        duplicate = duplicate_label(duplicates, related)
        if duplicate and duplicate not in wanted:
            wanted.append(duplicate)
    elif verdict in ("match", "uncatalogued-panic"):
        # "match" without records: the matched records are not in the catalog
        verdict = "uncatalogued-panic"
        wanted = labels.for_uncatalogued(facts.project_crates)
        body = render_comment(answer) if labels.comment_uncatalogued else None
    else:
        wanted, body = [], None
    no_longer = render_no_longer(None)
    if controls.wrong and not answer.record_ids:
        # the maintainer said the answer was wrong: one line, and none of the bot's labels
        wanted, body = [], None
        no_longer = wrong_note_body(controls.wrong, analysis.fingerprint)
    if controls.show_why:
        base = body
        if base is None:
            base = no_longer if controls.wrong else render_comment(answer)
        body = add_why(base, why_section(analysis, answer.record_ids, controls))
    if body is not None:
        body = with_override(body, controls.override)
    return Desired(
        verdict=verdict,
        record_ids=answer.record_ids,
        labels=tuple(wanted),
        body=body,
        no_longer_body=no_longer,
    )
