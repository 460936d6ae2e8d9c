"""One issue through the whole pipeline: read it, analyse its text, plan, write (or log), remember.

The text of an issue is its title, its body and the comments not written by bots, in order, so a
panic pasted in a later comment is answered in the same single comment.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, replace

from bot.app import Triage
from bot.config.logs import log_event
from bot.github.adapter import GitHubAdapter
from bot.github.duplicates import (
    DuplicateConfig,
    add_line,
    also_reported_line,
    duplicate_label,
    related_issues,
)
from bot.github.labels import LabelConfig
from bot.github.metrics import Metrics
from bot.github.planner import Desired, IssueView, Plan, plan
from bot.github.triage_command.handle import (
    CommandHandler,
    add_why,
    answer_for_record,
    controls_from,
    is_notice,
    why_section,
    with_override,
    without_records,
    wrong_note_body,
)
from bot.render.answer.build import build_answer
from bot.render.github import render_comment, render_no_longer
from bot.stats.report import uncatalogued_items
from bot.store.interface import Job
from bot.store.sqlite import Store

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
        store: Store,
        labels: LabelConfig | None = None,
        *,
        dry_run: bool = False,
        metrics: Metrics | None = None,
        duplicates: DuplicateConfig | None = None,
    ) -> None:
        self.triage = triage
        self.adapter = adapter
        self.store = store
        self.labels = labels or LabelConfig()
        self.dry_run = dry_run
        self.metrics = metrics or adapter.metrics
        self.duplicates = duplicates or DuplicateConfig()
        self.commands = CommandHandler(adapter, store, triage.catalog, dry_run=dry_run)

    def _panic_crates(self, analysis) -> list[str]:
        """The project's crates the (root) panics were raised in, for an uncatalogued label."""
        index = self.triage.matcher.index
        crates = [
            item.panic.location.crate
            for item in analysis.panics[:1]
            if item.panic.location and item.panic.location.crate
        ]
        return [crate for crate in crates if index.in_project(crate)]

    def _family_id(self, record) -> str | None:
        family = self.triage.catalog.family(record.id)
        return family.id if family else None

    async def handle_job(self, job: Job) -> None:
        await self.process(
            job.repo,
            job.number,
            job.installation_id,
            received_at=job.received_at,
            hint=job.payload,
            delivery=job.delivery_id,
        )

    def _comment_cannot_matter(self, repo: str, number: int, hint: dict | None) -> bool:
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
        hint: dict | None = None,
        delivery: str | None = None,
    ) -> Outcome:
        started = time.monotonic()
        where = f"github delivery={delivery or '-'} repo={repo} issue={number}"
        event = {"source": "github", "delivery": delivery, "repo": repo, "issue": number}
        event["started"] = started  # log_event adds duration_ms
        hints = hint or {}
        if hints.get("issue_state") in ("open", "closed") and not self.dry_run:
            self.store.set_issue_open_state(repo, number, hints["issue_state"])
        state = self.store.get_issue_state(repo, number)
        commands = [c for c in hints.get("commands") or () if isinstance(c, dict)]
        if commands:
            await asyncio.to_thread(
                self.commands.handle, repo, number, installation_id, commands, state
            )
        controls_row = self.store.get_controls(repo, number)
        if controls_row is not None and controls_row.get("ignored"):
            log.info("%s ignored by a maintainer (/triage ignore): nothing to do", where)
            owned_now = tuple(state.labels_added if state else ())
            verdict_now = (state.verdict if state else None) or "no-panic"
            empty = Plan("none", None, None, (), (), owned_now, verdict_now)
            return Outcome(repo, number, verdict_now, (), empty, self.dry_run, skipped=True)
        if not commands and await asyncio.to_thread(
            self._comment_cannot_matter, repo, number, hint
        ):
            log_event(log, **event, verdict="no-panic", detail="comment without a panic: no-op")
            empty = Plan(
                "none", None, None, (), (), tuple(state.labels_added if state else ()), "no-panic"
            )
            return Outcome(repo, number, "no-panic", (), empty, self.dry_run, skipped=True)
        known = state.comment_id if state else None
        view = await asyncio.to_thread(
            self.adapter.read_issue, repo, number, installation_id, known
        )
        if view.bot_comment is not None and is_notice(view.bot_comment.body):
            view = replace(view, bot_comment=None)  # a refusal is not the answer comment
        controls = controls_from(controls_row, view.bot_comment.body if view.bot_comment else None)
        if state and state.record_ids and view.bot_comment and not self.dry_run:
            await self._sync_reactions(repo, number, installation_id, view, state.record_ids)
        raw = await asyncio.to_thread(self.triage.analyse, issue_text(view))
        analysis = without_records(raw, controls.wrong)
        answer = None
        if controls.match:
            answer = answer_for_record(
                analysis, controls.match, self.triage.catalog, self.triage.history
            )
        if answer is None:
            answer = build_answer(analysis, self.triage.catalog, history=self.triage.history)
        records = [r for r in (self.triage.catalog.get(i) for i in answer.record_ids) if r]
        verdict = "match" if answer.record_ids else analysis.verdict
        if verdict == "match" and answer.record_ids:
            wanted_labels = self.labels.for_records(records, self._family_id)
            body: str | None = render_comment(answer)
            related = related_issues(
                self.store.issues_for_records(repo, answer.record_ids),
                number,
                answer.record_ids,
                analysis.fingerprint,
            )
            body = add_line(body, also_reported_line(related, self.duplicates.max_listed))
            duplicate = duplicate_label(self.duplicates, related)
            if duplicate and duplicate not in wanted_labels:
                wanted_labels.append(duplicate)
        elif verdict == "match" or verdict == "uncatalogued-panic":
            verdict = "uncatalogued-panic"
            wanted_labels = self.labels.for_uncatalogued(self._panic_crates(analysis))
            body = render_comment(answer) if self.labels.comment_uncatalogued else None
        else:
            wanted_labels = []
            body = None
        no_longer = render_no_longer(None)
        if controls.wrong and not answer.record_ids:
            # the maintainer said the answer was wrong: one line, and none of the bot's labels
            wanted_labels, body = [], None
            no_longer = wrong_note_body(controls.wrong, analysis.fingerprint)
        if controls.show_why:
            base = body
            if base is None:
                base = no_longer if controls.wrong else render_comment(answer)
            body = add_why(base, why_section(analysis, answer.record_ids, controls))
        if body is not None:
            body = with_override(body, controls.override)
        desired = Desired(
            verdict=verdict,
            record_ids=answer.record_ids,
            labels=tuple(wanted_labels),
            body=body,
            no_longer_body=no_longer,
        )
        owned = state.labels_added if state else ()
        the_plan = plan(view, desired, owned)
        self.metrics.inc("triage_verdicts_total", verdict=verdict)

        comment_id = view.bot_comment.id if view.bot_comment else None
        if self.dry_run:
            detail = f"DRY RUN, would write: {the_plan.describe()}"
            log_event(log, **event, verdict=verdict, record_ids=answer.record_ids, detail=detail)
            if the_plan.body is not None:
                log.info("%s DRY RUN comment body:\n%s", where, the_plan.body)
        else:
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
                if received_at is not None:
                    self.metrics.observe(
                        "triage_reply_seconds", max(0.0, time.time() - received_at)
                    )
            self.store.put_issue_state(
                repo,
                number,
                comment_id=comment_id,
                labels_added=the_plan.labels_owned,
                verdict=verdict,
                record_ids=answer.record_ids,
                fingerprint=analysis.fingerprint,
            )
            if the_plan.writes:
                self.store.record_answer(
                    "github", f"{repo}#{number}", verdict, answer.record_ids, analysis.fingerprint
                )
            self.store.put_issue_records(
                repo, number, answer.record_ids if verdict == "match" else (), analysis.fingerprint
            )
            self.store.replace_uncatalogued(
                "github",
                f"{repo.lower()}#{number}",
                uncatalogued_items(analysis, answer.record_ids, bool(controls.match)),
                repo=repo,
                number=number,
            )
            detail = the_plan.describe()
            log_event(log, **event, verdict=verdict, record_ids=answer.record_ids, detail=detail)
        return Outcome(repo, number, verdict, answer.record_ids, the_plan, self.dry_run)

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


def pipeline_from_settings(settings, triage, adapter, store, metrics=None) -> IssuePipeline:
    """The pipeline every entry point runs (serve, poll, handle-event, jobs retry)."""
    from bot.github.duplicates import load_duplicate_config
    from bot.github.labels import load_label_config

    return IssuePipeline(
        triage,
        adapter,
        store,
        load_label_config(settings.triage_config),
        dry_run=settings.triage_dry_run,
        metrics=metrics,
        duplicates=load_duplicate_config(settings.triage_config),
    )
