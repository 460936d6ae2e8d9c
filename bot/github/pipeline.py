"""One issue through the whole pipeline: read it, analyse its text, plan, write (or log), remember.

The text of an issue is its title, its body and the comments not written by bots, in order, so a
panic pasted in a later comment is answered in the same single comment.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass

from bot.app import Triage
from bot.github.adapter import GitHubAdapter
from bot.github.labels import LabelConfig
from bot.github.metrics import Metrics
from bot.github.planner import Desired, IssueView, Plan, plan
from bot.logging_setup import log_event
from bot.render.answer import build_answer
from bot.render.github import render_comment, render_no_longer
from bot.store import Job, Store

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
    ) -> None:
        self.triage = triage
        self.adapter = adapter
        self.store = store
        self.labels = labels or LabelConfig()
        self.dry_run = dry_run
        self.metrics = metrics or adapter.metrics

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
        state = self.store.get_issue_state(repo, number)
        if await asyncio.to_thread(self._comment_cannot_matter, repo, number, hint):
            log_event(log, **event, verdict="no-panic", detail="comment without a panic: no-op")
            empty = Plan(
                "none", None, None, (), (), tuple(state.labels_added if state else ()), "no-panic"
            )
            return Outcome(repo, number, "no-panic", (), empty, self.dry_run, skipped=True)
        known = state.comment_id if state else None
        view = await asyncio.to_thread(
            self.adapter.read_issue, repo, number, installation_id, known
        )
        analysis = await asyncio.to_thread(self.triage.analyse, issue_text(view))
        answer = build_answer(analysis, self.triage.catalog)
        records = [r for r in (self.triage.catalog.get(i) for i in answer.record_ids) if r]
        verdict = analysis.verdict
        if verdict == "match" and answer.record_ids:
            wanted_labels = self.labels.for_records(records, self._family_id)
            body: str | None = render_comment(answer)
        elif verdict == "match" or verdict == "uncatalogued-panic":
            verdict = "uncatalogued-panic"
            wanted_labels = self.labels.for_uncatalogued()
            body = render_comment(answer) if self.labels.comment_uncatalogued else None
        else:
            wanted_labels = []
            body = None
        desired = Desired(
            verdict=verdict,
            record_ids=answer.record_ids,
            labels=tuple(wanted_labels),
            body=body,
            no_longer_body=render_no_longer(None),
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
            detail = the_plan.describe()
            log_event(log, **event, verdict=verdict, record_ids=answer.record_ids, detail=detail)
        return Outcome(repo, number, verdict, answer.record_ids, the_plan, self.dry_run)
