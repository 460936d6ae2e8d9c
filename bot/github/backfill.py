"""What happened before the bot came: a repository's past issues and the records they hit.

Reads the repository's past issues through the API (oldest first, one page at a time), finds the
catalogued panics in each issue's title and body, and stores which records each issue hit and
whether it is open or closed (`Store.put_issue_records`, `Store.set_issue_open_state`); for a
closed one also GitHub's state_reason, the close date and, from its timeline, the pull request
that closed it (`fixing_pull`). The first answer after installing the bot then already says
"Also reported in #12 (closed as completed in March 2026, fixed by #2760)".

Resumable: after each page the next page number is stored as a cursor (`backfill:OWNER/NAME`),
so a run that is stopped (Ctrl-C, a network failure, GitHub down) goes on where it stopped. A
rate limit is waited out as GitHub says (403/429 with `Retry-After`, or `X-RateLimit-Remaining:
0` with `X-RateLimit-Reset`); a run also pauses on its own when the remaining budget is spent.
Pull requests are skipped. Comments are not read (one request per issue would multiply the
cost); the pipeline records them when it next handles the issue. The command is
`triage-bot backfill` (bot/cli/backfill.py).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import TypeVar

from github import GithubException

from bot.app import Triage
from bot.github.adapter import Close, GitHubAdapter, MergedReference, PastIssue
from bot.github.auth import GitHubClients
from bot.github.worker import RetryPolicy, classify
from bot.store.interface import TriageStore

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 6  # per page, for rate limits and GitHub's bad moments
MAX_WAIT = 3600.0  # never sleep longer than this at once
T = TypeVar("T")


@dataclass
class BackfillResult:
    pages: int = 0  # pages read in this run
    issues: int = 0  # issues (not pull requests) read in this run
    matched: int = 0  # of which hit at least one catalogued record
    waited: float = 0.0  # seconds spent waiting on rate limits
    next_page: int = 0  # where a later run would go on
    done: bool = False


def cursor_name(repo: str) -> str:
    return f"backfill:{repo.lower()}"


def _read_cursor(store: TriageStore, repo: str, since: str | None) -> int:
    raw = store.get_cursor(cursor_name(repo))
    if not raw:
        return 0
    try:
        data = json.loads(raw)
    except json.JSONDecodeError:
        return 0
    if not isinstance(data, dict) or data.get("since") != since or data.get("done"):
        return 0  # another window, or a finished run: start again from the first page
    page = data.get("page")
    return page if isinstance(page, int) and page >= 0 else 0


def _write_cursor(store: TriageStore, repo: str, since: str | None, page: int, done: bool) -> None:
    value = json.dumps({"page": page, "since": since, "done": done})
    store.set_cursor(cursor_name(repo), value)


def issue_record_ids(triage: Triage, text: str) -> tuple[tuple[str, ...], str]:
    """The records an issue's text hits (root first) and the analysis fingerprint."""
    analysis = triage.analyse(text)
    ids: list[str] = []
    for item in analysis.answered:
        if item.best and item.best.record_id not in ids:
            ids.append(item.best.record_id)
    return tuple(ids), analysis.fingerprint


def backfill(
    clients: GitHubClients,
    store: TriageStore,
    triage: Triage,
    repo: str,
    *,
    since: datetime | None = None,
    progress: Callable[[str], None] | None = None,
    count: Callable[[int, int | None], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.time,
    max_pages: int | None = None,
) -> BackfillResult:
    """Read past issues from the cursor on; store what each hit. Raises when a page keeps
    failing (the cursor keeps the progress made). `count(seen, total)`: after each page, the
    issues and pull requests listed so far and how many the listing holds (None when GitHub
    does not say), this run's: a resumed one counts from its page. Asking for the total costs
    one request, made only when `count` is given."""
    say = progress or (lambda _text: None)
    since_key = since.isoformat() if since is not None else None
    pages = GitHubAdapter(clients).past_issues(repo, since)
    page = _read_cursor(store, repo, since_key)
    result = BackfillResult(next_page=page)
    if page:
        say(f"resuming {repo} at page {page + 1}")
    waits = Waits(say, sleep, clock, RetryPolicy(), result)
    total = pages.total(page) if count is not None else None
    seen = 0
    while max_pages is None or result.pages < max_pages:
        items = waits.retrying(f"page {page + 1}", partial(pages.page, page))
        if not items:
            result.done = True
            _write_cursor(store, repo, since_key, page, done=True)
            break
        seen += len(items)
        for issue in items:
            if issue.is_pull:
                continue
            result.issues += 1
            ids, fingerprint = issue_record_ids(triage, issue.text)
            if ids:
                result.matched += 1
                store.put_issue_records(repo, issue.number, ids, fingerprint)
                if issue.state == "closed":
                    store.set_issue_open_state(
                        repo,
                        issue.number,
                        "closed",
                        issue.state_reason,
                        issue.closed_at,
                        _read_fixing_pull(issue, repo, waits),
                    )
                else:
                    store.set_issue_open_state(repo, issue.number, issue.state)
        page += 1
        result.pages += 1
        result.next_page = page
        _write_cursor(store, repo, since_key, page, done=False)
        say(f"page {page}: {result.issues} issue(s) read, {result.matched} hit catalogued records")
        if count is not None:
            count(seen, total)  # a resumed run counts what is left from its first page
        spent_until = pages.spent_until()
        if spent_until is not None:
            wait = min(MAX_WAIT, max(1.0, spent_until - clock() + 1))
            say(f"rate limit spent; waiting {wait:.0f} s for it to reset")
            waits.wait(wait)
    return result


@dataclass
class Waits:
    """How a backfill run waits: out loud, with the given sleep, adding up the time."""

    say: Callable[[str], None]
    sleep: Callable[[float], None]
    clock: Callable[[], float]
    policy: RetryPolicy
    result: BackfillResult

    def wait(self, seconds: float) -> None:
        self.result.waited += seconds
        self.sleep(seconds)

    def retrying(self, what: str, read: Callable[[], T]) -> T:
        """`read()`, tried again after a rate limit or GitHub's bad moment as the worker would
        (at most MAX_ATTEMPTS times); the last failure, or one not worth retrying, is raised."""
        attempt = 0
        while True:
            attempt += 1
            try:
                return read()
            except GithubException as exc:
                failure = classify(exc, attempt, self.policy, self.clock())
                if not failure.retry or attempt >= MAX_ATTEMPTS:
                    raise
                wait = min(MAX_WAIT, failure.delay)
                self.say(f"{what}: {failure.reason}; waiting {wait:.0f} s")
                self.wait(wait)


FIX_WINDOW = 300.0  # seconds between a pull request's merge and the close it caused


def _read_fixing_pull(issue: PastIssue, repo: str, waits: Waits) -> int | None:
    """The pull request that closed a closed issue, from its timeline (one more request, made
    only for closed issues that hit a record); None when the timeline cannot be read (then the
    history has no "fixed by")."""
    try:
        timeline = waits.retrying(f"timeline of #{issue.number}", issue.timeline)
    except GithubException as exc:
        log.warning("timeline of %s#%s unreadable: %s", repo, issue.number, exc)
        return None
    return fixing_pull(timeline.closes(), timeline.merged_references(), repo)


def fixing_pull(
    closes: Sequence[Close], references: Iterable[MergedReference], repo: str
) -> int | None:
    """The pull request that closed an issue: its last close was by a commit (a `closed` event
    with a `commit_id`) and a pull request of the same repository that references it was merged
    at most FIX_WINDOW before that close; the latest such one. None when GitHub does not say.
    `references` is read only when the last close was by a commit."""
    if not closes or not closes[-1].commit_id:  # the last close was by hand
        return None
    closed_at = closes[-1].at
    best: tuple[float, int] | None = None
    for ref in references:
        if ref.repo.lower() != repo.lower():
            continue
        merged = ref.merged_at
        if closed_at - FIX_WINDOW <= merged <= closed_at and (best is None or merged >= best[0]):
            best = (merged, ref.number)
    return best[1] if best else None
