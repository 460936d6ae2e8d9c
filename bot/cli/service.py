"""Subcommands: `serve`, `poll`, `handle-event`, `jobs list`, `jobs retry`.

Settings and store errors are raised, not printed: bot.cli.run turns them into the message and
exit status 2.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

from bot.app import load_triage
from bot.cli.output import (
    add_json_option,
    github_failure,
    number_in,
    print_json,
    report_github_failure,
)
from bot.config.logs import configure_logging
from bot.config.settings import Settings
from bot.github import webhook
from bot.github.adapter import GitHubAdapter
from bot.github.auth import GitHubClients
from bot.github.labels import load_label_config
from bot.github.pipeline import IssuePipeline, pipeline_from_settings
from bot.github.poll import poll_once
from bot.github.worker import RetryPolicy, Worker, classify
from bot.store.interface import Job
from bot.store.open import TriageStore, is_postgres, open_store, store_errors

log = logging.getLogger(__name__)
HANDLE_EVENT_POLICY: RetryPolicy | None = None  # for `handle-event` (tests make it fast)
# `jobs list --state`: which states each choice shows
JOB_STATES: dict[str | None, tuple[str, ...]] = {
    None: ("dead", "queued", "running"),
    "all": ("queued", "running", "dead", "done"),
}


def register(subparsers: argparse._SubParsersAction) -> None:
    serve = subparsers.add_parser(
        "serve",
        help="run the webhook server (GitHub) and the Discord client",
        description="Serve GitHub webhooks (POST /github/webhook; GET /healthz, /metrics and "
        "/stats) and run the Discord bot, in one process, with the durable job queue. Settings "
        "come from the environment and .env (see .env.example); GitHub needs a token or an App "
        "and GITHUB_WEBHOOK_SECRET, Discord needs DISCORD_TOKEN.",
    )
    serve.add_argument(
        "--host",
        default=None,
        metavar="H",
        help="address to listen on (default TRIAGE_HOST, else 127.0.0.1: loopback only)",
    )
    serve.add_argument(
        "--port",
        type=number_in(0, 65535, "a port", int),
        default=8080,
        metavar="P",
        help="port to listen on (0: any free one)",
    )
    serve.set_defaults(handler=cmd_serve)

    poll = subparsers.add_parser(
        "poll",
        help="poll a repository for updated issues and comments (no webhook needed)",
        description="Ask GitHub for the issues and comments of one repository changed since the "
        "last poll (a cursor kept in the store) and answer them with the same pipeline as "
        "`serve`. For hosts without a public URL. Needs GITHUB_TOKEN or a GitHub App.",
    )
    poll.add_argument("--repo", required=True, metavar="OWNER/NAME", help="the repository")
    poll.add_argument(
        "--interval", type=float, default=60.0, metavar="S", help="seconds between polls"
    )
    poll.add_argument("--once", action="store_true", help="poll once, handle the jobs, exit")
    add_json_option(poll, "with --once, the summary (issues changed, jobs by state)")
    poll.add_argument(
        "--lookback",
        type=float,
        default=24.0,
        metavar="HOURS",
        help="on the first poll, look this far back",
    )
    poll.set_defaults(handler=cmd_poll)

    event = subparsers.add_parser(
        "handle-event",
        help="handle one GitHub event file (the GitHub Action: no server, no queue)",
        description="Run one GitHub event (the JSON file GitHub Actions writes to "
        "$GITHUB_EVENT_PATH) through the webhook pipeline: comment and label as `serve` would, "
        "retrying transient GitHub errors, then exit. Needs GITHUB_TOKEN or a GitHub App.",
    )
    event.add_argument(
        "--event-path", required=True, metavar="FILE", help="the event JSON ($GITHUB_EVENT_PATH)"
    )
    event.add_argument(
        "--event-name", required=True, metavar="NAME", help="the event name ($GITHUB_EVENT_NAME)"
    )
    event.add_argument(
        "--attempts", type=int, default=3, metavar="N", help="tries on transient GitHub errors"
    )
    add_json_option(event, "what was done (verdict, records, the plan)")
    event.set_defaults(handler=cmd_handle_event)

    jobs = subparsers.add_parser(
        "jobs",
        help="show and replay the GitHub job queue",
        description="The durable queue of GitHub work in the store (TRIAGE_DB): list the jobs "
        "that failed for good (dead letters) or are pending, and put dead ones back in the "
        "queue.",
    )
    jobs_sub = jobs.add_subparsers(dest="jobs_command", metavar="ACTION")
    listing = jobs_sub.add_parser(
        "list",
        help="list dead-lettered (and pending) jobs",
        description="List the jobs in the store, oldest first: id, state, tries, issue and "
        "last error. Reads the store only; it does not create one.",
    )
    listing.add_argument(
        "--state",
        choices=["dead", "queued", "running", "done", "all"],
        default=None,
        help="only jobs in this state (default: dead, queued and running)",
    )
    add_json_option(listing, "the store and its jobs")
    listing.set_defaults(handler=cmd_jobs_list)
    retry = jobs_sub.add_parser(
        "retry",
        help="replay dead-lettered jobs",
        description="Put dead-lettered jobs back in the queue. Without --run that is all: a "
        "running `serve` or `poll` picks them up. With --run they are run now, in this process "
        "(needs the GitHub settings).",
    )
    retry.add_argument("id", nargs="?", type=int, metavar="ID", help="the job to replay")
    retry.add_argument("--all", action="store_true", help="replay every dead-lettered job")
    retry.add_argument(
        "--run",
        action="store_true",
        help="run the queue now, in this process, instead of leaving it to `serve` or `poll`",
    )
    retry.set_defaults(handler=cmd_jobs_retry)


def _settings() -> Settings:
    """The settings (SettingsError when one is bad), with logging set up from them."""
    settings = Settings.load()
    configure_logging(settings)  # LOG_LEVEL, one line per record, secrets redacted
    return settings


def _check_github(settings: Settings) -> None:
    """GitHub credentials and the label mapping, checked before any work (SettingsError)."""
    settings.require_github()
    load_label_config(settings.triage_config)


@asynccontextmanager
async def _github_pipeline(
    settings: Settings,
) -> AsyncIterator[tuple[TriageStore, GitHubClients, IssuePipeline]]:
    """The store, the GitHub clients and the pipeline over them, closed on the way out."""
    store = open_store(settings)
    clients = GitHubClients(settings)
    try:
        pipeline = pipeline_from_settings(
            settings, load_triage(settings), GitHubAdapter(clients), store
        )
        yield store, clients, pipeline
    finally:
        await asyncio.to_thread(clients.close)
        store.close()


def cmd_serve(args: argparse.Namespace) -> int:
    settings = _settings()
    settings.require_serve()
    load_label_config(settings.triage_config)  # validate before serving
    # aiohttp (and discord.py) only for `serve`: `handle-event` runs once per Action event
    from bot.server.http import run

    host = args.host or settings.triage_host
    log.info("serving on %s:%d (%s)", host, args.port, settings.describe())
    for line in settings.adapters_off():
        log.info("%s; the catalog's pages and /api/match serve without it", line)
    run(settings, host, args.port)
    return 0


def cmd_poll(args: argparse.Namespace) -> int:
    settings = _settings()
    if args.repo.count("/") != 1 or not all(args.repo.split("/")):
        print("triage-bot: --repo must be OWNER/NAME", file=sys.stderr)
        return 2
    _check_github(settings)
    try:
        with store_errors(settings.store_location):
            return asyncio.run(_poll(settings, args))
    except Exception as exc:
        reason = github_failure(exc)  # as `handle-event`: one line, not a traceback
        if reason is None:
            raise
        report_github_failure(reason, f"poll {args.repo} failed")
        return 1


async def _poll(settings: Settings, args: argparse.Namespace) -> int:
    async with _github_pipeline(settings) as (store, clients, pipeline):
        worker = Worker(store, pipeline.handle_job)
        lookback = timedelta(hours=args.lookback)
        if args.once:
            result = await asyncio.to_thread(
                poll_once, clients, store, args.repo, lookback=lookback
            )
            await worker.drain(timeout=max(60.0, 10.0 * len(result.issues)))
            counts = store.job_counts()
            if args.json:
                print_json(
                    {"repo": args.repo, "issues_changed": len(result.issues), "jobs": dict(counts)}
                )
            else:
                print(
                    f"polled {args.repo}: {len(result.issues)} issue(s) changed; "
                    f"{counts['dead']} job(s) dead-lettered"
                )
            return 0 if counts["dead"] == 0 else 1
        worker.start()
        # catalog sources (issue 26); the scanner only for `poll`, not for `handle-event`
        from bot.server import catalog_swap

        follower = catalog_swap.for_poll(settings, pipeline)
        following = follower.start() if follower is not None else None
        try:
            while True:
                try:
                    await asyncio.to_thread(poll_once, clients, store, args.repo, lookback=lookback)
                    worker.wake()
                except Exception as exc:  # keep polling through GitHub's bad moments
                    log.warning("poll %s failed: %s", args.repo, exc)
                await asyncio.sleep(args.interval)
        finally:
            if following is not None:
                following.cancel()
            await worker.stop()


def _open_existing(settings: Settings) -> TriageStore | None:
    """The existing store, None when there is none yet (not created: reading makes no file).
    `jobs list` and `jobs retry` both take a missing store for an empty one: no jobs."""
    location = settings.store_location
    if not is_postgres(location) and not Path(location).exists():
        return None
    return open_store(settings)


def _no_store(settings: Settings) -> str:
    return f"no store yet at {settings.store_description} (TRIAGE_DB): the bot has not run here"


def _job_json(job: Job) -> dict[str, Any]:
    return {
        "id": job.id,
        "state": job.state,
        "attempts": job.attempts,
        "repo": job.repo,
        "number": job.number,
        "kind": job.kind,
        "last_error": job.last_error,
        "received_at": job.received_at,
        "updated_at": job.updated_at,
    }


def cmd_jobs_list(args: argparse.Namespace) -> int:
    settings = _settings()
    store = _open_existing(settings)
    jobs: list[Job] = []
    if store is not None:
        with store, store_errors(settings.store_location):
            jobs = store.list_jobs(JOB_STATES.get(args.state, (args.state,)))
    if args.json:
        print_json(
            {
                "store": str(settings.store_description),
                "exists": store is not None,
                "jobs": [_job_json(job) for job in jobs],
            }
        )
        return 0
    if not jobs:
        print("no jobs" + (f" ({_no_store(settings)})" if store is None else ""))
        return 0
    print(f"{'ID':>6}  {'STATE':<8} {'TRIES':>5}  {'ISSUE':<40} LAST ERROR")
    for job in jobs:
        issue = f"{job.repo}#{job.number}"
        print(
            f"{job.id:>6}  {job.state:<8} {job.attempts:>5}  {issue:<40} "
            f"{(job.last_error or '').splitlines()[0] if job.last_error else ''}"
        )
    return 0


def cmd_jobs_retry(args: argparse.Namespace) -> int:
    if (args.id is None) == (not args.all):
        print("triage-bot: give a job ID or --all", file=sys.stderr)
        return 2
    settings = _settings()
    store = _open_existing(settings)
    if store is None:  # as an empty store: nothing to replay
        print(
            "triage-bot: no dead-lettered job to replay"
            + (f" with id {args.id}" if args.id else "")
            + f" ({_no_store(settings)})",
            file=sys.stderr,
        )
        return 1
    with store, store_errors(settings.store_location):
        count = store.requeue_dead(None if args.all else args.id)
        queued = store.job_counts()["queued"]
    if count == 0 and not (args.run and queued):  # --run also runs what an earlier retry queued
        print(
            "triage-bot: no dead-lettered job to replay"
            + (f" with id {args.id}" if args.id else ""),
            file=sys.stderr,
        )
        return 1
    if not args.run:
        print(
            f"requeued {count} job(s), not run yet: a running `triage-bot serve` or "
            "`triage-bot poll` picks them up, or `triage-bot jobs retry --all --run` runs the "
            "queue now"
        )
        return 0
    _check_github(settings)
    with store_errors(settings.store_location):
        dead = asyncio.run(_run_queue(settings))
    print(f"replayed {queued} job(s); {dead} job(s) dead-lettered")
    return 0 if dead == 0 else 1


async def _run_queue(settings: Settings) -> int:
    """Run every queued job now; returns how many are dead-lettered afterwards."""
    async with _github_pipeline(settings) as (store, _clients, pipeline):
        await Worker(store, pipeline.handle_job).drain(timeout=3600)
        return store.job_counts()["dead"]


def cmd_handle_event(args: argparse.Namespace) -> int:
    """The same pipeline as a webhook delivery, minus the server and the queue."""
    settings = _settings()
    _check_github(settings)
    try:
        payload = webhook.parse_body(Path(args.event_path).read_bytes())
        decision = webhook.decide(args.event_name, payload)
    except (OSError, webhook.MalformedDelivery) as exc:
        print(f"triage-bot: cannot read the event: {exc}", file=sys.stderr)
        return 2
    if decision.job is None:
        if args.json:
            print_json(
                {
                    "event": args.event_name,
                    "handled": False,
                    "reason": decision.reason,
                    "repo": None,
                    "number": None,
                    "verdict": None,
                    "records": [],
                    "plan": None,
                }
            )
        else:
            print(f"nothing to do for {args.event_name} ({decision.reason})")
        return 0
    with store_errors(settings.store_location):
        return asyncio.run(
            _handle_event(settings, decision.job, max(1, args.attempts), args.event_name, args.json)
        )


async def _handle_event(
    settings: Settings, job: dict[str, Any], attempts: int, event: str, as_json: bool
) -> int:
    policy = HANDLE_EVENT_POLICY or RetryPolicy(cap=60.0)
    async with _github_pipeline(settings) as (_store, _clients, pipeline):
        for attempt in range(1, attempts + 1):
            try:
                outcome = await pipeline.process(
                    job["repo"], job["number"], job.get("installation_id"), hint=job["payload"]
                )
            except Exception as exc:
                failure = classify(exc, attempt, policy, time.time())
                if not failure.retry or attempt == attempts or failure.delay > 600:
                    report_github_failure(failure.reason)
                    return 1
                log.warning("attempt %d failed: %s; retrying", attempt, failure.reason)
                await asyncio.sleep(failure.delay * policy.scale)
                continue
            if as_json:
                print_json(
                    {
                        "event": event,
                        "handled": True,
                        "reason": None,
                        "repo": job["repo"],
                        "number": job["number"],
                        "verdict": outcome.verdict,
                        "records": list(outcome.record_ids),
                        "plan": outcome.plan.describe(),
                    }
                )
                return 0
            print(
                f"{job['repo']}#{job['number']}: {outcome.verdict}"
                f" {','.join(outcome.record_ids)} {outcome.plan.describe()}".rstrip()
            )
            return 0
        return 1
