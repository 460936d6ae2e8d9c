"""A catalog of a few made-up sites, for tests of one matching behaviour: its Triage, and
the site a text is answered with."""

from __future__ import annotations

import json
from pathlib import Path

from bot.app import Triage
from bot.catalog.loader import load_catalog


def triage_of(tmp_path: Path, rows: list[dict]) -> Triage:
    """The Triage of a catalog holding `rows` (skeleton records) alone."""
    path = tmp_path / "catalog.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return Triage(load_catalog([path]))


def answered_site(triage: Triage, text: str) -> tuple[str, int] | None:
    """The file and line of the site `text`'s first answer names, or None when unanswered."""
    answered = triage.analyse(text).answered
    if not answered or answered[0].best is None:
        return None
    record = triage.catalog.records[answered[0].best.record_id]
    return record.file_path, record.line_number
