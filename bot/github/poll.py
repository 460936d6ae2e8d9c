"""Polling, for maintainers who cannot expose a webhook: issues and comments updated since a cursor.

The cursor lives in the store (`poll:OWNER/NAME`): the newest `updated_at` seen, plus the items
seen at exactly that instant (GitHub's `since` is inclusive), so nothing is missed or repeated.
Each updated issue becomes a job in the same queue the webhook feeds.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from bot.github.adapter import GitHubAdapter
from bot.github.auth import GitHubClients
from bot.github.marker import looks_like_bot_comment
from bot.github.triage_command.parse import command_entries
from bot.store.interface import TriageStore

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PollResult:
    since: datetime
    cursor: datetime
    issues: tuple[int, ...]  # issue numbers queued


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def cursor_name(repo: str) -> str:
    return f"poll:{repo.lower()}"


def read_cursor(store: TriageStore, repo: str) -> tuple[datetime | None, set[str]]:
    raw = store.get_cursor(cursor_name(repo))
    if not raw:
        return None, set()
    data = json.loads(raw)
    return datetime.fromisoformat(data["since"]), set(data.get("seen", ()))


def poll_once(
    clients: GitHubClients,
    store: TriageStore,
    repo: str,
    *,
    lookback: timedelta = timedelta(hours=24),
    now: datetime | None = None,
) -> PollResult:
    """List what changed since the cursor, queue a job per changed issue, advance the cursor.

    Blocking (PyGithub): run it off the event loop.
    """
    since, seen = read_cursor(store, repo)
    if since is None:
        since = _utc(now or datetime.now(UTC)) - lookback
    issues, comments = GitHubAdapter(clients).changes_since(repo, since)
    newest = since
    newest_keys: set[str] = set(seen)
    numbers: dict[int, None] = {}

    def note(key: str, updated: datetime) -> bool:
        """Track the newest instant; False for an item already handled at the cursor."""
        nonlocal newest, newest_keys
        if updated == since and key in seen:
            return False
        if updated > newest:
            newest, newest_keys = updated, {key}
        elif updated == newest:
            newest_keys.add(key)
        return True

    states: dict[int, str] = {}
    closings: dict[int, tuple[str | None, float | None]] = {}
    commands: dict[int, list[dict[str, Any]]] = {}
    for issue in issues:
        updated = _utc(issue.updated_at)
        states[issue.number] = issue.state
        if issue.state == "closed":
            closed_at = issue.closed_at.timestamp() if issue.closed_at else None
            closings[issue.number] = (issue.state_reason, closed_at)
        if note(f"i:{issue.number}", updated):
            numbers[issue.number] = None
    for comment in comments:
        updated = _utc(comment.updated_at)
        if not note(f"c:{comment.id}", updated):
            continue
        if looks_like_bot_comment(comment.body) or comment.by_bot:
            continue
        numbers[comment.issue] = None
        # `/triage` commands: polling never sees the previous body, so each command runs once
        # per comment (keyed without the comment's version).
        found = command_entries(comment.body, None, comment.id, comment.author, versioned=False)
        commands.setdefault(comment.issue, []).extend(found)

    for number in numbers:
        if number in closings:
            # how it was closed, for "closed as completed in March 2026" (as a webhook delivery
            # records it); the job's hint carries only the state, which keeps this
            store.set_issue_open_state(repo, number, "closed", *closings[number])
        payload: dict[str, Any] = {"poll": True}
        if commands.get(number):
            payload["commands"] = commands[number]
        if number in states:
            payload["issue_state"] = states[number]
        store.enqueue({"kind": "issue", "repo": repo, "number": number, "payload": payload})
    store.set_cursor(
        cursor_name(repo),
        json.dumps({"since": newest.isoformat(), "seen": sorted(newest_keys)}),
    )
    if numbers:
        log.info("poll %s: %d issue(s) changed since %s", repo, len(numbers), since.isoformat())
    return PollResult(since, newest, tuple(numbers))
