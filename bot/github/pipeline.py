"""One issue through the whole pipeline: read -> decide -> plan -> write -> remember.

- read: the bot's state and the maintainers' controls from the store (after carrying out new
  `/triage` commands), the issue from GitHub, the analysis of its text, the catalog's records
  and the store's other issues for the answer (`Facts`);
- decide: what the issue should show (`bot.github.decide`, pure);
- plan: the writes that get it there (`bot.github.planner`, pure);
- write: the plan carried out through the adapter (or logged, in a dry run);
- remember: what was answered, in the store.

The text of an issue is its title, its body and the comments not written by bots, in order, so a
panic pasted in a later comment is answered in the same single comment.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, replace
from typing import Any

from bot.app import Triage
from bot.config.logs import log_event
from bot.config.settings import Settings
from bot.core.analysis import Analysis
from bot.github.adapter import GitHubAdapter
from bot.github.decide import Facts, decide
from bot.github.duplicates import DuplicateConfig, load_duplicate_config
from bot.github.labels import LabelConfig, load_label_config
from bot.github.metrics import Metrics
from bot.github.planner import IssueView, Plan, no_writes, plan
from bot.github.triage_command.handle import Controls, answer_under, controls_from, is_notice
from bot.github.triage_command.run import CommandHandler
from bot.stats.report import uncatalogued_items
from bot.store.interface import IssueState, Job, TriageStore

log = logging.getLogger(__name__)


def issue_text(view: IssueView) -> str:
    return "\n\n".join(view.texts)


@dataclass
class Outcome:
    repo: str
    number: int
    verdict: str
    record_ids: tuple[str, ...]
    plan: Plan
    dry_run: bool
    skipped: bool = False


class IssuePipeline:
    def __init__(
        self,
        triage: Triage,
        adapter: GitHubAdapter,
        store: TriageStore,
        labels: LabelConfig | None = None,
        *,
        dry_run: bool = False,
        metrics: Metrics | None = None,
        duplicates: DuplicateConfig | None = None,
        public_url: str | None = None,
        answer_pulls: bool = False,
    ) -> None:
        self.triage = triage
        self.answer_pulls = answer_pulls
        self.public_url = public_url
        self.adapter = adapter
        self.store = store
        self.labels = labels or LabelConfig()
        self.dry_run = dry_run
        self.metrics = metrics or adapter.metrics
        self.duplicates = duplicates or DuplicateConfig()
        self.commands = CommandHandler(adapter, store, triage.catalog, dry_run=dry_run)

    def _panic_crates(self, analysis: Analysis, triage: Triage) -> list[str]:
        """The project's crates the (root) panics were raised in, for an uncatalogued label."""
        index = triage.matcher.index
        crates = [
            item.panic.location.crate
            for item in analysis.panics[:1]
            if item.panic.location and item.panic.location.crate
        ]
        return [crate for crate in crates if index.in_project(crate)]

    async def handle_job(self, job: Job) -> None:
        await self.process(
            job.repo,
            job.number,
            job.installation_id,
            received_at=job.received_at,
            hint=job.payload,
            delivery=job.delivery_id,
        )

    def _comment_cannot_matter(self, repo: str, number: int, hint: dict[str, Any] | None) -> bool:
        """A new or edited comment without a panic, on an issue the bot has nothing on, changes
        nothing: skip reading the issue (saves two API calls per ordinary comment)."""
        if not hint or hint.get("event") != "issue_comment":
            return False
        state = self.store.get_issue_state(repo, number)
        if state is None or state.verdict != "no-panic" or state.comment_id is not None:
            return False
        bodies = [hint.get("comment_body") or "", hint.get("previous_body") or ""]
        return all(self.triage.analyse(b).verdict == "no-panic" for b in bodies)

    async def process(
        self,
        repo: str,
        number: int,
        installation_id: int | None = None,
        *,
        received_at: float | None = None,
        hint: dict[str, Any] | None = None,
        delivery: str | None = None,
    ) -> Outcome:
        started = time.monotonic()
        where = f"github delivery={delivery or '-'} repo={repo} issue={number}"
        event: dict[str, Any] = {
            "source": "github",
            "delivery": delivery,
            "repo": repo,
            "issue": number,
        }
        event["started"] = started  # log_event adds duration_ms

        # read (new `/triage` commands are carried out first: they change the controls read next)
        hints = hint or {}
        if hints.get("issue_state") in ("open", "closed") and not self.dry_run:
            self.store.set_issue_open_state(repo, number, hints["issue_state"])
        state = self.store.get_issue_state(repo, number)
        owned = tuple(state.labels_added if state else ())
        commands = [c for c in hints.get("commands") or () if isinstance(c, dict)]
        if commands:
            await asyncio.to_thread(
                self.commands.handle, repo, number, installation_id, commands, state
            )
        controls_row = self.store.get_controls(repo, number)
        if controls_row is not None and controls_row.get("ignored"):
            log.info("%s ignored by a maintainer (/triage ignore): nothing to do", where)
            verdict_now = (state.verdict if state else None) or "no-panic"
            return self._skipped(repo, number, verdict_now, owned)
        if not commands and await asyncio.to_thread(
            self._comment_cannot_matter, repo, number, hint
        ):
            log_event(log, **event, verdict="no-panic", detail="comment without a panic: no-op")
            return self._skipped(repo, number, "no-panic", owned)
        known = state.comment_id if state else None
        view = await asyncio.to_thread(
            self.adapter.read_issue, repo, number, installation_id, known
        )
        if view.pull and not self.answer_pulls and view.bot_comment is None:
            # A pull request quoting a panic is usually its fix: not a reporter's paste.
            log.info("%s is a pull request: not answered (TRIAGE_ANSWER_PULLS=1 answers)", where)
            return self._skipped(
                repo, number, (state.verdict if state else None) or "no-panic", owned
            )
        if view.bot_comment is not None and is_notice(view.bot_comment.body):
            view = replace(view, bot_comment=None)  # a refusal is not the answer comment
        controls = controls_from(controls_row, view.bot_comment.body if view.bot_comment else None)
        if state and state.record_ids and view.bot_comment and not self.dry_run:
            await self._sync_reactions(repo, number, installation_id, view, state.record_ids)
        # One catalog for the whole answer, even if a refresh swaps in another meanwhile.
        triage = self.triage
        raw = await asyncio.to_thread(triage.analyse, issue_text(view))
        facts = self._facts(repo, number, raw, controls, triage)

        # decide, plan
        desired = decide(facts, self.labels, self.duplicates)
        the_plan = plan(view, desired, owned)
        self.metrics.inc("triage_verdicts_total", verdict=the_plan.verdict)
        logged = {**event, "verdict": the_plan.verdict, "record_ids": the_plan.record_ids}
        if self.dry_run:
            detail = f"DRY RUN, would write: {the_plan.describe()}"
            log_event(log, **logged, detail=detail)
            if the_plan.body is not None:
                log.info("%s DRY RUN comment body:\n%s", where, the_plan.body)
            return Outcome(repo, number, the_plan.verdict, the_plan.record_ids, the_plan, True)

        # write, remember
        comment_id = await self._write(repo, number, installation_id, the_plan, view, state)
        if the_plan.writes and received_at is not None:
            self.metrics.observe("triage_reply_seconds", max(0.0, time.time() - received_at))
        self._remember(repo, number, the_plan, comment_id, facts)
        log_event(log, **logged, detail=the_plan.describe())
        return Outcome(repo, number, the_plan.verdict, the_plan.record_ids, the_plan, False)

    def _skipped(self, repo: str, number: int, verdict: str, owned: tuple[str, ...]) -> Outcome:
        empty = no_writes(verdict, owned)
        return Outcome(repo, number, verdict, (), empty, self.dry_run, skipped=True)

    def _facts(
        self, repo: str, number: int, raw: Analysis, controls: Controls, triage: Triage
    ) -> Facts:
        """The analysis under the controls, the answer, and what the catalog and the store know
        of the answer's records."""
        catalog = triage.catalog
        analysis, answer = answer_under(raw, controls, catalog, triage.history, triage.projects)
        records = [r for r in (catalog.get(i) for i in answer.record_ids) if r]
        families = {}
        for record in records:
            family = catalog.family(record.id)
            if family:
                families[record.id] = family.id
        ids = answer.record_ids
        history = self.store.issues_for_records(repo, ids) if ids else []
        crates = self._panic_crates(analysis, triage)
        projects = triage.projects
        dependencies = {
            r.id: projects.infos[r.repo].name
            for r in records
            if projects is not None and projects.is_dependency(r.repo)
        }
        return Facts(
            number,
            analysis,
            answer,
            controls,
            records,
            families,
            crates,
            history,
            dependencies,
            public_url=self.public_url,
        )

    async def _write(
        self,
        repo: str,
        number: int,
        installation_id: int | None,
        the_plan: Plan,
        view: IssueView,
        state: IssueState | None,
    ) -> int | None:
        """Carry the plan out; the bot comment's id after it."""
        comment_id = view.bot_comment.id if view.bot_comment else None
        owned = state.labels_added if state else ()
        if the_plan.add_labels:
            # remember the labels about to be added before adding them, so a retry after a
            # partial failure still knows they are the bot's own
            self.store.put_issue_state(
                repo,
                number,
                comment_id=comment_id,
                labels_added=sorted({*owned, *the_plan.add_labels}),
                verdict=state.verdict if state else None,
                record_ids=state.record_ids if state else (),
                fingerprint=state.fingerprint if state else None,
            )
        if the_plan.writes:
            new_id = await asyncio.to_thread(
                self.adapter.apply, repo, number, the_plan, installation_id
            )
            comment_id = new_id if new_id is not None else comment_id
        return comment_id

    def _remember(
        self, repo: str, number: int, the_plan: Plan, comment_id: int | None, facts: Facts
    ) -> None:
        """What the bot did and answered: its state on the issue, the answer for the stats, the
        issue's records for later "Also reported in", its uncatalogued panics."""
        fingerprint = facts.analysis.fingerprint
        record_ids = the_plan.record_ids
        self.store.put_issue_state(
            repo,
            number,
            comment_id=comment_id,
            labels_added=the_plan.labels_owned,
            verdict=the_plan.verdict,
            record_ids=record_ids,
            fingerprint=fingerprint,
        )
        if the_plan.writes:
            self.store.record_answer(
                "github", f"{repo}#{number}", the_plan.verdict, record_ids, fingerprint
            )
        self.store.put_issue_records(
            repo, number, record_ids if the_plan.verdict == "match" else (), fingerprint
        )
        self.store.replace_uncatalogued(
            "github",
            f"{repo.lower()}#{number}",
            uncatalogued_items(facts.analysis, record_ids, bool(facts.controls.match)),
            repo=repo,
            number=number,
        )

    async def _sync_reactions(
        self,
        repo: str,
        number: int,
        installation_id: int | None,
        view: IssueView,
        record_ids: tuple[str, ...],
    ) -> None:
        """👍/👎 on the bot's comment become votes on its records (read when the issue is next
        processed). A failure here never stops the answer."""
        assert view.bot_comment is not None
        try:
            await asyncio.to_thread(
                self.commands.sync_reactions,
                repo,
                number,
                installation_id,
                view.bot_comment.id,
                record_ids,
            )
        except Exception as exc:  # feedback is a bonus: no failure of it may stop the answer
            log.warning("github repo=%s issue=%d reactions not read: %s", repo, number, exc)


def pipeline_from_settings(
    settings: Settings,
    triage: Triage,
    adapter: GitHubAdapter,
    store: TriageStore,
    metrics: Metrics | None = None,
) -> IssuePipeline:
    """The pipeline every entry point runs (serve, poll, handle-event, jobs retry)."""
    return IssuePipeline(
        triage,
        adapter,
        store,
        load_label_config(settings.triage_config),
        dry_run=settings.triage_dry_run,
        metrics=metrics,
        duplicates=load_duplicate_config(settings.triage_config),
        public_url=settings.triage_public_url,
        answer_pulls=settings.triage_answer_pulls,
    )
