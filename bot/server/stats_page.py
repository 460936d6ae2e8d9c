"""The stats page (`GET /stats`, `triage-bot stats --html`): the store's answers, feedback and
uncatalogued panics, computed and rendered as one HTML page."""

from __future__ import annotations

import time

from bot.app import Triage
from bot.stats.report import Stats, compute_stats, parse_since, render_html
from bot.store.interface import TriageStore


def record_names(triage: Triage | None) -> dict[str, str]:
    if triage is None:
        return {}
    return {r.id: " ".join(r.error_message.split())[:80] for r in triage.catalog}


def gather(store: TriageStore, triage: Triage | None, repo: str | None, since: str | None) -> Stats:
    return compute_stats(
        store.list_answers(),
        store.feedback_rows(),
        store.list_uncatalogued(),
        repo=repo,
        since=parse_since(since),
        names=record_names(triage),
    )


def stats_page(
    store: TriageStore, triage: Triage | None, repo: str | None, since: str | None
) -> str:
    """The HTML page of GET /stats and `stats --html` (ValueError for a bad date)."""
    return render_html(gather(store, triage, repo, since), generated_at=time.time())
