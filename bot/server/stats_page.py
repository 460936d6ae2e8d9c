"""The stats page (`GET /stats`, `triage-bot stats --html`): the store's answers, feedback and
uncatalogued panics, computed and rendered as one HTML page."""

from __future__ import annotations

import time
from typing import Any

from bot.stats.report import compute_stats, parse_since, render_html


def record_names(triage: Any) -> dict[str, str]:
    if triage is None:
        return {}
    return {r.id: " ".join(r.error_message.split())[:80] for r in triage.catalog}


def gather(store: Any, triage: Any, repo: str | None, since: str | None) -> Any:
    return compute_stats(
        store.list_answers(),
        store.feedback_rows(),
        store.list_uncatalogued(),
        repo=repo,
        since=parse_since(since),
        names=record_names(triage),
    )


def stats_page(store: Any, triage: Any, repo: str | None, since: str | None) -> str:
    """The HTML page of GET /stats and `stats --html` (ValueError for a bad date)."""
    return render_html(gather(store, triage, repo, since), generated_at=time.time())
