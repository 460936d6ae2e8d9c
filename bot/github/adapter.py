"""GitHub's API for the answer path, polling and backfill, through PyGithub. Blocking: call it off
the event loop.

Reads an issue, carries a plan out, and does what maintainers' `/triage` commands need (the
asker's role, a refusal, a reaction, the reactions on the bot's comment); polling and backfill
list a repository's issues, comments and timelines through it too, as plain values. No other
module of `bot.github` calls PyGithub: `auth` builds the clients, and the worker, the gates and
backfill only read its exceptions (to decide when to try again).

Every URL is built from the repository's full name and the issue number (PyGithub's lazy objects
with the configured base URL), never from URLs found in a webhook payload.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

import requests
from github import Github, GithubException
from github.Issue import Issue
from github.IssueComment import IssueComment
from github.PaginatedList import PaginatedList
from github.Repository import Repository
from github.TimelineEvent import TimelineEvent

from bot.github.auth import GitHubClients
from bot.github.gate import github_wait
from bot.github.marker import is_own_comment, looks_like_bot_comment
from bot.github.metrics import Metrics
from bot.github.planner import BotComment, IssueView, Plan

log = logging.getLogger(__name__)


# a locked issue, a deleted comment: a command's reply cannot be written, and will not be later
PERMANENT = frozenset({403, 404, 410, 422})


class AmbiguousWrite(Exception):
    """A write timed out or lost its connection: it may have landed, or may still land. The
    retry waits for GitHub to finish, then reads the issue (and finds the bot's marker) first."""

    def __init__(self, operation: str, cause: BaseException) -> None:
        super().__init__(f"{operation} may have landed ({type(cause).__name__}: {cause})")
        self.operation = operation


class NotWritable(Exception):
    """GitHub refused a command's reply for good (a 4xx a retry will not fix: a locked issue,
    a deleted comment; not a rate limit). Its text is GitHub's error."""


def is_permanent(exc: GithubException) -> bool:
    """A 4xx that a retry will not fix (a rate limit is not one: the job waits and retries)."""
    if exc.status not in PERMANENT:
        return False
    headers = {k.lower(): str(v) for k, v in (exc.headers or {}).items()}
    data = exc.data if isinstance(exc.data, dict) else {}
    limited = "retry-after" in headers or headers.get("x-ratelimit-remaining") == "0"
    return not limited and "rate limit" not in str(data.get("message") or "").lower()


class Reaction(NamedTuple):
    """One reaction on a comment: who (login, GitHub's user type) and which (`+1`, `-1`, ...)."""

    login: str | None
    user_type: str | None
    content: str


def is_bot_author(user: object) -> bool:
    """A PyGithub NamedUser from a listing is a bot (its `type` and `login` came with it)."""
    if user is None:
        return False
    user_type = getattr(user, "type", None)
    login = getattr(user, "login", "") or ""
    return user_type == "Bot" or login.endswith("[bot]")


class GitHubAdapter:
    def __init__(self, clients: GitHubClients, metrics: Metrics | None = None) -> None:
        self.clients = clients
        self.metrics = metrics or Metrics()

    def _count(self, operation: str) -> None:
        self.metrics.inc("triage_github_api_calls_total", operation=operation)

    def _repo(self, repo: str, installation_id: int | None) -> Repository:
        return self.clients.client(repo, installation_id).get_repo(repo)

    def _gate_check(self, repo: str, installation_id: int | None) -> None:
        """Between two requests of one operation: stop if the installation's gate closed."""
        gates = getattr(self.clients, "gates", None)
        if gates is not None:
            gates.check(self.clients.gate_key(repo, installation_id))

    def _note_error(self, repo: str, installation_id: int | None, exc: GithubException) -> None:
        """Count the error; a rate-limit answer closes the installation's gate at once, so the
        jobs running beside this one send nothing more either."""
        self.metrics.inc("triage_github_api_errors_total", status=str(exc.status))
        gates = getattr(self.clients, "gates", None)
        wait = github_wait(exc, time.time())
        if gates is not None and wait is not None:
            key = self.clients.gate_key(repo, installation_id)
            gates.close(key, wait, f"HTTP {exc.status} rate limit")

    def _writing(self, repo: str, installation_id: int | None) -> AbstractContextManager[None]:
        """One writer per installation, paced (see bot.github.gate)."""
        gates = getattr(self.clients, "gates", None)
        if gates is None:
            return nullcontext()
        return gates.writing(self.clients.gate_key(repo, installation_id))

    def read_issue(
        self,
        repo: str,
        number: int,
        installation_id: int | None = None,
        known_comment: int | None = None,
    ) -> IssueView:
        """The issue's text (title, body, non-bot comments in order) and the bot's comment."""
        try:
            return self._read_issue(repo, number, installation_id, known_comment)
        except GithubException as exc:
            self._note_error(repo, installation_id, exc)
            raise

    def _read_issue(
        self, repo: str, number: int, installation_id: int | None, known_comment: int | None
    ) -> IssueView:
        gh_repo = self._repo(repo, installation_id)
        issue = gh_repo.get_issue(number)
        self._count("get_issue")
        title = issue.title or ""  # completes the lazy issue: GET /repos/{repo}/issues/{number}
        body = issue.body or ""
        labels = frozenset(label.name for label in issue.labels)
        locked = bool(issue.locked)
        pull = issue.pull_request is not None

        texts = [title, body]
        bot_comments: list[BotComment] = []
        own = self.clients.bot_login(repo, installation_id)
        self._count("list_comments")
        self._gate_check(repo, installation_id)
        for comment in gh_repo.get_issue(number).get_comments():
            text = comment.body or ""
            author = getattr(comment.user, "login", None)
            if is_own_comment(text, author, own):
                bot_comments.append(BotComment(comment.id, text))
                continue
            if looks_like_bot_comment(text):
                # a forged marker: never edited as ours; read as the user's comment it is
                log.warning(
                    "%s#%d: comment %d starts with the bot's marker but is by %s, not %s:"
                    " read as a user's comment",
                    repo,
                    number,
                    comment.id,
                    author,
                    own,
                )
            if is_bot_author(comment.user):
                continue
            texts.append(text)
        chosen: BotComment | None = None
        if bot_comments:
            chosen = next((c for c in bot_comments if c.id == known_comment), bot_comments[0])
        return IssueView(
            repo=repo,
            number=number,
            title=title,
            body=body,
            labels=labels,
            texts=tuple(t for t in texts if t),
            bot_comment=chosen,
            locked=locked,
            pull=pull,
        )

    def apply(
        self, repo: str, number: int, plan: Plan, installation_id: int | None = None
    ) -> int | None:
        """Carry the plan out; returns the bot comment's id (new or existing) when there is one."""
        try:
            return self._apply(repo, number, plan, installation_id)
        except GithubException as exc:
            self._note_error(repo, installation_id, exc)
            raise

    def _apply(self, repo: str, number: int, plan: Plan, installation_id: int | None) -> int | None:
        gh_repo = self._repo(repo, installation_id)
        issue = gh_repo.get_issue(number)  # lazy: no request
        comment_id = plan.comment_id
        if plan.comment == "create":
            assert plan.body is not None
            self._count("create_comment")
            try:
                with self._writing(repo, installation_id):
                    comment_id = issue.create_comment(plan.body).id
            except (requests.exceptions.Timeout, requests.exceptions.ConnectionError) as exc:
                # the comment may exist (or appear shortly): never create blindly again
                raise AmbiguousWrite("create_comment", exc) from exc
        elif plan.comment == "update":
            assert plan.body is not None and plan.comment_id is not None
            self._count("edit_comment")
            with self._writing(repo, installation_id):
                issue.get_comment(plan.comment_id).edit(plan.body)
        if plan.add_labels:
            self._count("add_labels")
            with self._writing(repo, installation_id):
                issue.add_to_labels(*plan.add_labels)
        for name in plan.remove_labels:
            self._count("remove_label")
            try:
                with self._writing(repo, installation_id):
                    issue.remove_from_labels(name)
            except GithubException as exc:
                if exc.status != 404:  # already removed by someone: fine
                    raise
        return comment_id

    # -- what `/triage` commands need (bot.github.triage_command.run) ---------------------------
    # These count their calls but, as before, do not take the write gate or note errors: a
    # failure goes back to the caller, which retries the job or logs it.

    def role(self, repo: str, login: str, installation_id: int | None = None) -> str:
        """The user's role on the repository ("none" when GitHub does not know them)."""
        self._count("get_permission")
        try:
            return self._repo(repo, installation_id).get_collaborator_role_name(login) or "none"
        except GithubException as exc:
            if exc.status == 404:
                return "none"
            raise

    def post_comment(
        self, repo: str, number: int, body: str, installation_id: int | None = None
    ) -> None:
        """A new comment (a notice, not the answer); NotWritable when GitHub refuses for good."""
        self._count("create_comment")
        try:
            self._repo(repo, installation_id).get_issue(number).create_comment(body)
        except GithubException as exc:
            if is_permanent(exc):
                raise NotWritable(str(exc)) from exc
            raise

    def react(
        self,
        repo: str,
        number: int,
        comment_id: int,
        content: str,
        installation_id: int | None = None,
    ) -> None:
        """A reaction on a comment; NotWritable when GitHub refuses for good."""
        self._count("create_reaction")
        issue = self._repo(repo, installation_id).get_issue(number)
        try:
            issue.get_comment(comment_id).create_reaction(content)
        except GithubException as exc:
            if is_permanent(exc):
                raise NotWritable(str(exc)) from exc
            raise

    def reactions(
        self, repo: str, number: int, comment_id: int, installation_id: int | None = None
    ) -> list[Reaction]:
        """The reactions on a comment, in GitHub's order."""
        self._count("list_reactions")
        issue = self._repo(repo, installation_id).get_issue(number)
        return [
            Reaction(getattr(r.user, "login", None), getattr(r.user, "type", None), r.content)
            for r in issue.get_comment(comment_id).get_reactions()
        ]

    # -- listings: polling and backfill ---------------------------------------------------------
    # Not counted in the metrics (they run beside the answer path, in `poll` and `backfill`).

    def changes_since(
        self, repo: str, since: datetime
    ) -> tuple[Iterator[ListedIssue], Iterator[ListedComment]]:
        """The issues, then the comments, updated since `since` (inclusive), oldest first; each
        page is read as the iteration reaches it."""
        gh_repo = self._repo(repo, None)
        issues = gh_repo.get_issues(state="all", sort="updated", direction="asc", since=since)
        comments = gh_repo.get_issues_comments(sort="updated", direction="asc", since=since)
        return (_listed_issue(i) for i in issues), (_listed_comment(c) for c in comments)

    def past_issues(self, repo: str, since: datetime | None = None) -> IssuePages:
        """The repository's issues (and pull requests), oldest first, a page at a time."""
        client = self.clients.client(repo)
        kwargs: dict[str, Any] = {"state": "all", "sort": "created", "direction": "asc"}
        if since is not None:
            kwargs["since"] = since
        return IssuePages(client, client.get_repo(repo).get_issues(**kwargs))


@dataclass(frozen=True, slots=True)
class ListedIssue:
    """An issue (or pull request) as a listing shows it (polling)."""

    number: int
    updated_at: datetime
    state: str  # "open" | "closed"
    state_reason: str | None = None  # closed issues only
    closed_at: datetime | None = None  # closed issues only


@dataclass(frozen=True, slots=True)
class ListedComment:
    """A comment as a listing shows it (polling)."""

    id: int
    issue: int  # the issue's number
    updated_at: datetime
    body: str
    author: str | None  # the login
    by_bot: bool  # written by a bot account


def _listed_issue(issue: Issue) -> ListedIssue:
    if issue.state != "closed":
        return ListedIssue(issue.number, issue.updated_at, issue.state)
    return ListedIssue(
        issue.number, issue.updated_at, issue.state, issue.state_reason, issue.closed_at
    )


def _listed_comment(comment: IssueComment) -> ListedComment:
    user = comment.user
    return ListedComment(
        id=comment.id,
        issue=int(str(comment.issue_url).rstrip("/").rsplit("/", 1)[-1]),
        updated_at=comment.updated_at,
        body=comment.body,
        author=user.login if user else None,
        by_bot=is_bot_author(user),
    )


class PastIssue:
    """One issue of a backfill page. Each attribute is read from PyGithub's object when first
    asked for, as before: an attribute missing from the listing costs a request to complete it."""

    def __init__(self, issue: Issue) -> None:
        self._issue = issue

    @property
    def is_pull(self) -> bool:
        return self._issue.pull_request is not None

    @property
    def number(self) -> int:
        return self._issue.number

    @property
    def text(self) -> str:
        """The title and the body."""
        return f"{self._issue.title or ''}\n\n{self._issue.body or ''}"

    @property
    def state(self) -> str:
        return self._issue.state

    @property
    def state_reason(self) -> str | None:
        return self._issue.state_reason

    @property
    def closed_at(self) -> float | None:
        closed = self._issue.closed_at
        return closed.timestamp() if closed else None

    def timeline(self) -> Timeline:
        """The issue's timeline, read whole (one request a page)."""
        return Timeline(list(self._issue.get_timeline()))


@dataclass(frozen=True, slots=True)
class Close:
    """A `closed` event of a timeline."""

    commit_id: str | None  # the commit that closed the issue; None when closed by hand
    at: float


@dataclass(frozen=True, slots=True)
class MergedReference:
    """A `cross-referenced` event from a merged pull request."""

    number: int
    repo: str  # the pull request's repository, OWNER/NAME
    merged_at: float


class Timeline:
    """An issue's timeline as read. Its events become plain values as they are asked for: a
    referencing issue's details may cost a request each (PyGithub completes them)."""

    def __init__(self, events: list[TimelineEvent]) -> None:
        self._events = events

    def closes(self) -> list[Close]:
        return [
            Close(e.commit_id, e.created_at.timestamp())
            for e in self._events
            if e.event == "closed"
        ]

    def merged_references(self) -> Iterator[MergedReference]:
        for event in self._events:
            source = event.source if event.event == "cross-referenced" else None
            pull = source.issue if source is not None else None
            if pull is None or pull.pull_request is None or pull.pull_request.merged_at is None:
                continue
            repo = pull.repository.full_name or ""
            yield MergedReference(pull.number, repo, pull.pull_request.merged_at.timestamp())


class IssuePages:
    """A repository's issues, oldest first, read a page at a time (backfill)."""

    def __init__(self, client: Github, listing: PaginatedList[Issue]) -> None:
        self._client = client
        self._listing = listing

    def page(self, number: int) -> list[PastIssue]:
        """The 0-based page `number` (one request); empty past the last."""
        return [PastIssue(issue) for issue in self._listing.get_page(number)]

    def total(self, from_page: int = 0) -> int | None:
        """How many issues and pull requests the listing holds from the 0-based page
        `from_page` on, as GitHub's `Link: rel="last"` says for one item a page (one more
        request); None when that request fails."""
        try:
            count = int(self._listing.totalCount)
        except (GithubException, ValueError, KeyError):
            return None
        return max(0, count - from_page * self._client.per_page)

    def spent_until(self) -> float | None:
        """When the last response said the hourly budget is spent: the time it resets."""
        remaining, _limit = getattr(self._client, "rate_limiting", (-1, -1))
        if remaining != 0:
            return None
        return float(getattr(self._client, "rate_limiting_resettime", 0) or 0)
