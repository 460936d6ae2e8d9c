"""Carrying out maintainers' `/triage` commands, and what the answer looks like after them.

`CommandHandler.handle` (blocking, PyGithub: call it off the event loop) checks each asker's
permission (`GET /repos/{owner}/{repo}/collaborators/{user}/permission`: admin, maintain, write
and triage may command), answers a stranger with one short polite comment at most once per
issue, and records each command's effect in the store's issue controls:

- `wrong`: the answered records are rejected (a negative vote each); the answer becomes a
  one-line note and the bot's labels go;
- `match ID`: the answer is that record's, whatever the matcher thinks;
- `why`: the bot's comment gets a collapsed section with the evidence;
- `ignore`: the bot never acts on the issue again (until `refresh`);
- `refresh`: forget `wrong`, `match` and `ignore`, and answer afresh.

The pipeline then runs as usual and asks the pure helpers below how to honour the controls. The
override is also written into the comment's hidden marker (`override=match:ID`), so it survives
a lost database.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from github import GithubException

from bot.core.analysis import Analysis, Candidate, PanicMatch
from bot.core.match.releases import ReleaseHistory
from bot.core.panic import Panic
from bot.render import texts
from bot.render.answer.build import build_answer
from bot.render.answer.model import Answer, CatalogLike
from bot.render.answer.words import pasted_location
from bot.render.github import parse_marker
from bot.render.markup import md_code_block, one_line, shorten, words
from bot.store.interface import IssueState
from bot.store.sqlite import Store

log = logging.getLogger(__name__)

ALLOWED_ROLES = frozenset({"admin", "maintain", "write", "triage"})
NOTICE_MARKER = "<!-- triage-bot:notice -->"
_LOGIN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$")
_VALUE = re.compile(r"[^A-Za-z0-9._:,-]")
WHY_CANDIDATES = 3
# a locked issue, a deleted comment: the command's reply cannot be written, and will not be later
PERMANENT = frozenset({403, 404, 410, 422})


@dataclass
class CommandsOutcome:
    ran: list[str] = field(default_factory=list)  # "why", "match ID", ...
    refused: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # done before (a retry), or not applicable


@dataclass(frozen=True)
class Controls:
    """What maintainers asked of one issue."""

    ignored: bool = False
    match: str | None = None  # the record a maintainer chose
    wrong: tuple[str, ...] = ()  # records a maintainer rejected
    show_why: bool = False
    refused: bool = False

    @property
    def override(self) -> str | None:
        if self.match:
            return f"match:{self.match}"
        if self.wrong:
            return "wrong:" + ",".join(self.wrong)
        return None


def parse_override(value: str | None) -> tuple[str | None, tuple[str, ...]]:
    """`match:ID` -> (ID, ()); `wrong:A,B` -> (None, (A, B)); anything else -> (None, ())."""
    if not value:
        return None, ()
    kind, _, rest = value.partition(":")
    if kind == "match" and rest:
        return rest, ()
    if kind == "wrong" and rest:
        return None, tuple(v for v in rest.split(",") if v)
    return None, ()


def controls_from(row: dict[str, Any] | None, bot_comment_body: str | None = None) -> Controls:
    """The issue's controls from the store row; without one, the override kept in the marker."""
    if row is None:
        marker = parse_marker(bot_comment_body or "") or {}
        match, wrong = parse_override(marker.get("override") if marker else None)
        return Controls(match=match, wrong=wrong)
    match, wrong = parse_override(row.get("override"))
    return Controls(
        ignored=bool(row.get("ignored")),
        match=match,
        wrong=wrong,
        show_why=bool(row.get("show_why")),
        refused=bool(row.get("refused")),
    )


# --- the answer under the controls (pure) --------------------------------------------------------


def without_records(analysis: Analysis, rejected: Iterable[str]) -> Analysis:
    """The analysis with the rejected records out: a panic whose best record was rejected is
    no longer matched (the next candidate is not promoted: the matcher already passed it over)."""
    gone = set(rejected)
    if not gone:
        return analysis
    panics = []
    for item in analysis.panics:
        best = item.best
        candidates = tuple(c for c in item.candidates if c.record_id not in gone)
        matched = item.matched and best is not None and best.record_id not in gone
        panics.append(PanicMatch(item.panic, candidates, matched))
    verdict = "match" if any(p.matched for p in panics) else "uncatalogued-panic"
    if not panics:
        verdict = "no-panic"
    return Analysis(verdict, tuple(panics), analysis.fingerprint)  # type: ignore[arg-type]


def answer_for_record(
    analysis: Analysis,
    record_id: str,
    catalog: CatalogLike,
    history: ReleaseHistory | None = None,
) -> Answer | None:
    """The answer with the record a maintainer chose, for the issue's first panic."""
    record = catalog.get(record_id)
    if record is None:
        return None
    panic = analysis.panics[0].panic if analysis.panics else Panic.mentioned(record.error_message)
    chosen = Candidate(record.id, 1.0, (), 1.0, None)
    forced = Analysis("match", (PanicMatch(panic, (chosen,), True),), analysis.fingerprint)
    answer = build_answer(forced, catalog, history=history)
    sections = tuple(replace(s, confidence=words(texts.MATCH_CHOSEN)) for s in answer.sections)
    panics = tuple(p.panic for p in analysis.panics) or answer.panics
    return replace(answer, sections=sections, panics=panics)


def with_override(body: str, override: str | None) -> str:
    """The body with `override=...` added to its hidden marker (the first line)."""
    if not override or not body.startswith("<!-- triage-bot:"):
        return body
    head, sep, rest = body.partition("\n")
    if not head.endswith(" -->") or " override=" in head:
        return body
    value = _VALUE.sub("", override)
    return f"{head[: -len(' -->')]} override={value} -->{sep}{rest}"


def wrong_note_body(rejected: Sequence[str], fingerprint: str = "") -> str:
    ids = ",".join(_VALUE.sub("", r) for r in rejected)
    value = _VALUE.sub("", "wrong:" + ",".join(rejected))
    fp = _VALUE.sub("", fingerprint)
    return f"<!-- triage-bot:wrong ids={ids} fp={fp} override={value} -->\n{texts.WRONG_NOTE}"


def why_section(analysis: Analysis, answered: Sequence[str], controls: Controls) -> str:
    """The collapsed evidence: the panics, their top candidates with scores, what decided."""
    lines: list[str] = [texts.WHY_VERDICT.format(verdict=analysis.verdict)]
    if controls.match:
        lines.append(texts.WHY_OVERRIDE_MATCH.format(record=controls.match))
    if controls.wrong:
        lines.append(texts.WHY_OVERRIDE_WRONG.format(records=", ".join(controls.wrong)))
    if not analysis.panics:
        lines.append(texts.WHY_NO_PANIC)
    seen: set[str] = set()
    for index, item in enumerate(analysis.panics, 1):
        lines.append("")
        message = shorten(one_line(item.panic.message), 300)
        lines.append(texts.WHY_PANIC.format(index=index, message=message))
        if item.panic.location:
            lines.append(texts.WHY_AT.format(location=pasted_location(item.panic.location)))
        else:
            lines.append(texts.WHY_NO_LOCATION)
        if not item.candidates:
            lines.append(texts.WHY_NO_CANDIDATES)
        for rank, cand in enumerate(item.candidates[:WHY_CANDIDATES], 1):
            lines.append(
                texts.WHY_CANDIDATE.format(
                    rank=rank,
                    record=cand.record_id,
                    confidence=cand.confidence,
                    message=cand.message_score,
                    evidence=",".join(cand.evidence) or "-",
                )
            )
        best = item.best
        if item.matched and best is not None and best.record_id in seen:
            lines.append(texts.WHY_DECIDED_REPEAT)
        elif item.matched and best is not None:
            seen.add(best.record_id)
            lines.append(texts.WHY_DECIDED_MATCH)
        elif item.candidates:
            lines.append(texts.WHY_DECIDED_NO_MATCH)
    block = md_code_block("\n".join(lines), lang="text")
    return f"<details>\n<summary>{texts.WHY_SUMMARY}</summary>\n\n{block}\n\n</details>"


def add_why(body: str, section: str, limit: int = 65_536) -> str:
    out = f"{body}\n\n{section}"
    return out if len(out) <= limit else body


def refusal_body(login: str) -> str:
    shown = login if _LOGIN.match(login or "") else "there"
    return f"{NOTICE_MARKER}\n{texts.COMMAND_REFUSED.format(login=shown)}"


def _permanent(exc: GithubException) -> bool:
    """A 4xx that a retry will not fix (a rate limit is not one: the job waits and retries)."""
    if exc.status not in PERMANENT:
        return False
    headers = {k.lower(): str(v) for k, v in (exc.headers or {}).items()}
    data = exc.data if isinstance(exc.data, dict) else {}
    limited = "retry-after" in headers or headers.get("x-ratelimit-remaining") == "0"
    return not limited and "rate limit" not in str(data.get("message") or "").lower()


def is_notice(body: str | None) -> bool:
    marker = parse_marker(body or "")
    return bool(marker and marker.get("kind") == "notice")


# --- carrying commands out (blocking) -----------------------------------------------------------


class CommandHandler:
    def __init__(self, adapter: Any, store: Store, catalog: CatalogLike, *, dry_run: bool = False):
        self.adapter = adapter
        self.store = store
        self.catalog = catalog
        self.dry_run = dry_run

    def _count(self, operation: str) -> None:
        self.adapter.metrics.inc("triage_github_api_calls_total", operation=operation)

    def _repo(self, repo: str, installation_id: int | None) -> Any:
        return self.adapter.clients.client(repo, installation_id).get_repo(repo)

    def role(self, repo: str, login: str, installation_id: int | None) -> str:
        """The asker's role on the repository ("none" when GitHub does not know them)."""
        self._count("get_permission")
        try:
            return self._repo(repo, installation_id).get_collaborator_role_name(login) or "none"
        except GithubException as exc:
            if exc.status == 404:
                return "none"
            raise

    def handle(
        self,
        repo: str,
        number: int,
        installation_id: int | None,
        entries: Sequence[dict[str, Any]],
        state: IssueState | None,
    ) -> CommandsOutcome:
        outcome = CommandsOutcome()
        roles: dict[str, str] = {}
        for entry in entries:
            name = str(entry.get("name") or "")
            arg = entry.get("arg")
            key = str(entry.get("key") or "")
            author = entry.get("author")
            text = name + (f" {arg}" if arg else "")
            if not key or not name or self.store.command_done(repo, number, key):
                outcome.skipped.append(text)
                continue
            if not isinstance(author, str) or not author:
                outcome.skipped.append(text)
                continue
            if author not in roles:
                roles[author] = self.role(repo, author, installation_id)
            if roles[author] not in ALLOWED_ROLES:
                self._refuse(repo, number, installation_id, author)
                result = "refused"
                outcome.refused.append(text)
            else:
                result = self._run(repo, number, installation_id, entry, author, state)
                (outcome.ran if result == "done" else outcome.skipped).append(text)
            log.info(
                "github repo=%s issue=%d command=%r by=%s role=%s: %s",
                repo,
                number,
                "/triage " + text,
                author,
                roles[author],
                result,
            )
            self.store.record_command(
                repo,
                number,
                key,
                comment_id=entry.get("comment_id"),
                author=author,
                name=name,
                arg=arg,
                outcome=result,
            )
        return outcome

    def _refuse(self, repo: str, number: int, installation_id: int | None, login: str) -> None:
        controls = controls_from(self.store.get_controls(repo, number))
        if controls.refused:
            return  # at most once per issue
        body = refusal_body(login)
        if self.dry_run:
            log.info("github repo=%s issue=%d DRY RUN, would refuse:\n%s", repo, number, body)
        else:
            self._count("create_comment")
            try:
                self._repo(repo, installation_id).get_issue(number).create_comment(body)
            except GithubException as exc:
                if not _permanent(exc):
                    raise  # retried with the job
                log.warning("github repo=%s issue=%d refusal not posted: %s", repo, number, exc)
        self.store.set_controls(repo, number, refused=True)

    def _react(
        self, repo: str, number: int, installation_id: int | None, comment_id: Any, content: str
    ) -> None:
        if not isinstance(comment_id, int) or self.dry_run:
            return
        self._count("create_reaction")
        issue = self._repo(repo, installation_id).get_issue(number)
        try:
            issue.get_comment(comment_id).create_reaction(content)
        except GithubException as exc:
            if not _permanent(exc):
                raise
            log.warning("github repo=%s issue=%d reaction not added: %s", repo, number, exc)

    def _run(
        self,
        repo: str,
        number: int,
        installation_id: int | None,
        entry: dict[str, Any],
        author: str,
        state: IssueState | None,
    ) -> str:
        name = entry["name"]
        controls = controls_from(self.store.get_controls(repo, number))
        if name == "wrong":
            current = tuple(state.record_ids) if state and state.verdict == "match" else ()
            if controls.match:
                current = (controls.match,)
            if not current:
                return "nothing-to-reject"
            for record_id in current:
                self.store.record_feedback(
                    "github", f"{repo.lower()}#{number}:{record_id}", record_id, author, -1
                )
            rejected = tuple(dict.fromkeys((*controls.wrong, *current)))
            self.store.set_controls(repo, number, override="wrong:" + ",".join(rejected))
            return "done"
        if name == "match":
            record_id = str(entry.get("arg") or "")
            if self.catalog.get(record_id) is None:
                self._react(repo, number, installation_id, entry.get("comment_id"), "confused")
                return "unknown-record"
            self.store.set_controls(repo, number, override=f"match:{record_id}")
            return "done"
        if name == "why":
            self.store.set_controls(repo, number, show_why=True)
            return "done"
        if name == "ignore":
            self.store.set_controls(repo, number, ignored=True)
            return "done"
        if name == "refresh":
            self.store.set_controls(repo, number, ignored=False, override=None)
            return "done"
        return "unknown-command"

    # -- 👍/👎 on the bot's comment -------------------------------------------------------------

    def sync_reactions(
        self,
        repo: str,
        number: int,
        installation_id: int | None,
        comment_id: int,
        record_ids: Sequence[str],
    ) -> int:
        """Read the reactions on the bot's comment into the store as votes on its records.
        Returns how many votes there are now."""
        if not record_ids:
            return 0
        self._count("list_reactions")
        issue = self._repo(repo, installation_id).get_issue(number)
        votes: dict[str, int] = {}
        for reaction in issue.get_comment(comment_id).get_reactions():
            user = reaction.user
            login = getattr(user, "login", None)
            if not login or getattr(user, "type", None) == "Bot" or login.endswith("[bot]"):
                continue
            if reaction.content == "+1":
                votes[login] = votes.get(login, 0) + 1
            elif reaction.content == "-1":
                votes[login] = votes.get(login, 0) - 1
        subject = f"{repo.lower()}#{number}:"
        rows = [
            (subject + record_id, record_id, login, vote)
            for login, vote in votes.items()
            if vote
            for record_id in record_ids
        ]
        self.store.replace_reaction_votes(subject, rows)
        return len(rows)
