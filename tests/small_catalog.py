"""A catalog of a few made-up sites, for tests of one matching behaviour: its Triage, and
the site a text is answered with."""

from __future__ import annotations

import json
from pathlib import Path

from bot.app import Triage
from bot.catalog.loader import load_catalog
from bot.catalog.sites import skeleton_record

REPO = "someone/engine"


def site_row(path: str, line: int, message: str, kind: str = "panic!") -> dict:
    """A skeleton record of `REPO` at one commit: a site printing `message` at `path:line`."""
    return skeleton_record(
        repo=REPO, file_path=path, line=line, kind=kind, message_format=message, commit="1" * 40
    )


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


def panicked_at(path: str, line: int, message: str) -> str:
    """`message` under std's `panicked at` header, at `path:line`."""
    return f"thread 'main' panicked at {path}:{line}:9:\n{message}\n"
