"""Carrying out maintainers' `/triage` commands, through the adapter and the store. Blocking: call
it off the event loop.

`CommandHandler.handle` checks each asker's permission (`GET /repos/{owner}/{repo}/collaborators/
{user}/permission`: admin, maintain, write and triage may command), answers a stranger with one
short polite comment at most once per issue, and stores each command's effect
(`bot.github.triage_command.handle.command_effect`) in the issue's controls. Each command runs
once: its key is remembered with its outcome, so a retried job skips it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.github.adapter import GitHubAdapter, NotWritable
from bot.github.triage_command.handle import (
    ALLOWED_ROLES,
    command_effect,
    controls_from,
    reaction_votes,
    refusal_body,
)
from bot.render.answer.parts import CatalogLike
from bot.store.interface import IssueState, TriageStore

log = logging.getLogger(__name__)


@dataclass
class CommandsOutcome:
    ran: list[str] = field(default_factory=list)  # "why", "match ID", ...
    refused: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # done before (a retry), or not applicable


class CommandHandler:
    def __init__(
        self,
        adapter: GitHubAdapter,
        store: TriageStore,
        catalog: CatalogLike | None,
        *,
        dry_run: bool = False,
    ) -> None:
        self.adapter = adapter
        self.store = store
        self.catalog = catalog  # None when only reactions are read (`stats --refresh-reactions`)
        self.dry_run = dry_run

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
                roles[author] = self.adapter.role(repo, author, installation_id)
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
            try:
                self.adapter.post_comment(repo, number, body, installation_id)
            except NotWritable as exc:  # other errors: retried with the job
                log.warning("github repo=%s issue=%d refusal not posted: %s", repo, number, exc)
        self.store.set_controls(repo, number, refused=True)

    def _react(
        self, repo: str, number: int, installation_id: int | None, comment_id: object, content: str
    ) -> None:
        if not isinstance(comment_id, int) or self.dry_run:
            return
        try:
            self.adapter.react(repo, number, comment_id, content, installation_id)
        except NotWritable as exc:
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
        record_id = str(entry.get("arg") or "")
        controls = controls_from(self.store.get_controls(repo, number))
        known = self.catalog is not None and self.catalog.get(record_id) is not None
        effect = command_effect(name, record_id, state, controls, known)
        if effect.reaction:
            self._react(repo, number, installation_id, entry.get("comment_id"), effect.reaction)
        for rejected in effect.rejected:
            self.store.record_feedback(
                "github", f"{repo.lower()}#{number}:{rejected}", rejected, author, -1
            )
        if effect.changes:
            self.store.set_controls(repo, number, **effect.changes)
        return effect.result

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
        votes = reaction_votes(self.adapter.reactions(repo, number, comment_id, installation_id))
        subject = f"{repo.lower()}#{number}:"
        rows = [
            (subject + record_id, record_id, login, vote)
            for login, vote in votes.items()
            if vote
            for record_id in record_ids
        ]
        self.store.replace_reaction_votes(subject, rows)
        return len(rows)
