"""Other issues that hit the same catalog record. Pure.

From the store's issue -> record history: "Also reported in #12 (closed as completed in March
2026, fixed by #2760), #40 (open)", the most relevant first, at most three. Optionally a
duplicate-candidate label on an issue whose panic matches an open issue's (off by default).
Nothing is ever closed.

TRIAGE_CONFIG (TOML), beside the other labels:

    [labels]
    duplicate_candidate = "duplicate-candidate"   # "" or absent: no label (the default)

    [duplicates]
    max_listed = 3                                # how many other issues the answer names
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.config.settings import SettingsError, read_triage_config
from bot.render import texts

MAX_LISTED = 3


@dataclass(frozen=True)
class DuplicateConfig:
    label: str | None = None  # off by default
    max_listed: int = MAX_LISTED


@dataclass(frozen=True, slots=True)
class Related:
    """Another issue of the same repository and how it relates to this one."""

    number: int
    closed: bool
    same_panic: bool  # the same fingerprint: the very same panic
    shares_root: bool  # hits this issue's root (first) record
    shared: int  # how many of this issue's records it hits
    last_at: float
    state_reason: str | None = None  # GitHub's: "completed", "not_planned" (closed only)
    closed_at: float | None = None  # Unix time (closed only)
    fixed_by: int | None = None  # the pull request that closed it, when GitHub says so


def related_issues(
    rows: Iterable[Mapping[str, Any]],
    number: int,
    record_ids: Sequence[str],
    fingerprint: str | None,
) -> list[Related]:
    """Other issues from the store's history rows (number, record_id, state, fingerprint,
    last_at), most relevant first: the same panic, then the root record, then open before
    closed, then more shared records, then the most recent."""
    wanted = list(dict.fromkeys(record_ids))
    if not wanted:
        return []
    root = wanted[0]
    by_issue: dict[int, dict[str, Any]] = {}
    for row in rows:
        other = int(row["number"])
        if other == number or row["record_id"] not in wanted:
            continue
        entry = by_issue.setdefault(
            other,
            {"records": set(), "closed": False, "same": False, "last_at": 0.0},
        )
        for key in ("state_reason", "closed_at", "fixed_by"):
            if row.get(key) is not None:
                entry[key] = row[key]
        entry["records"].add(row["record_id"])
        entry["closed"] = entry["closed"] or row.get("state") == "closed"
        entry["same"] = entry["same"] or bool(fingerprint and row.get("fingerprint") == fingerprint)
        entry["last_at"] = max(entry["last_at"], float(row.get("last_at") or 0.0))
    out = [
        Related(
            number=other,
            closed=entry["closed"],
            same_panic=entry["same"],
            shares_root=root in entry["records"],
            shared=len(entry["records"]),
            last_at=entry["last_at"],
            state_reason=entry.get("state_reason") if entry["closed"] else None,
            closed_at=_number(entry.get("closed_at"), float) if entry["closed"] else None,
            fixed_by=_number(entry.get("fixed_by"), int) if entry["closed"] else None,
        )
        for other, entry in by_issue.items()
    ]
    out.sort(
        key=lambda r: (
            not r.same_panic,
            not r.shares_root,
            r.closed,
            -r.shared,
            -r.last_at,
            -r.number,
        )
    )
    return out


def also_reported_line(related: Sequence[Related], limit: int = MAX_LISTED) -> str | None:
    """`Also reported in #12 (closed), #40 (open).`, or None when there is no other issue."""
    shown = list(related)[: max(0, limit)]
    if not shown:
        return None
    items = [
        texts.ALSO_REPORTED_CLOSED.format(number=r.number, closed=how_closed(r))
        if r.closed
        else texts.ALSO_REPORTED_OPEN.format(number=r.number)
        for r in shown
    ]
    return texts.ALSO_REPORTED.format(issues=", ".join(items))


def how_closed(related: Related) -> str:
    """`closed as completed in March 2026, fixed by #2760`, with what is known of it."""
    how = texts.CLOSED_AS.get(related.state_reason or "", texts.CLOSED_PLAIN)
    if related.closed_at is not None:
        at = datetime.fromtimestamp(related.closed_at, UTC)
        how = texts.CLOSED_IN.format(how=how, month=texts.MONTH_NAMES[at.month - 1], year=at.year)
    if related.fixed_by is not None:
        how = texts.CLOSED_FIXED_BY.format(how=how, pull=related.fixed_by)
    return how


def _number(value: Any, kind: type) -> Any:
    """The store's value as `kind`, or None (Postgres may hand back Decimal or int for a float)."""
    if value is None:
        return None
    try:
        return kind(value)
    except (TypeError, ValueError, OverflowError):
        return None


def duplicate_label(config: DuplicateConfig, related: Sequence[Related]) -> str | None:
    """The duplicate-candidate label when configured and an open issue hits the root record."""
    if not config.label:
        return None
    if any(r.shares_root and not r.closed for r in related):
        return config.label
    return None


def add_line(body: str, line: str | None, limit: int = 65_536) -> str:
    """The comment body with the duplicates line before the footer (or at the end)."""
    if not line:
        return body
    footer = "\n\n---\n<sub>"
    at = body.rfind(footer)
    out = f"{body[:at]}\n\n{line}{body[at:]}" if at >= 0 else f"{body}\n\n{line}"
    return out if len(out) <= limit else body


def duplicate_config_from_dict(data: Mapping[str, Any], source: str = "config") -> DuplicateConfig:
    table = data.get("duplicates", {})
    labels = data.get("labels", {})
    if not isinstance(table, dict) or not isinstance(labels, dict):
        raise SettingsError(f"TRIAGE_CONFIG: {source}: [labels] and [duplicates] must be tables")
    label = labels.get("duplicate_candidate", "")
    if not isinstance(label, str):
        raise SettingsError(f"TRIAGE_CONFIG: {source}: labels.duplicate_candidate must be a string")
    limit = table.get("max_listed", MAX_LISTED)
    if not isinstance(limit, int) or isinstance(limit, bool) or not 0 <= limit <= 10:
        raise SettingsError(
            f"TRIAGE_CONFIG: {source}: duplicates.max_listed must be an integer from 0 to 10"
        )
    return DuplicateConfig(label=label.strip() or None, max_listed=limit)


def load_duplicate_config(path: str | Path | None) -> DuplicateConfig:
    """`labels.duplicate_candidate` and `[duplicates]` of TRIAGE_CONFIG; no label by default."""
    if path is None:
        return DuplicateConfig()
    return duplicate_config_from_dict(read_triage_config(path), source=str(path))
