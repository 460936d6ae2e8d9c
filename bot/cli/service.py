"""Subcommands: `serve`, `poll`, `handle-event`, `jobs list`, `jobs retry`."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from datetime import timedelta
from typing import Any

from bot.config.settings import Settings, SettingsError

log = logging.getLogger(__name__)
HANDLE_EVENT_POLICY: Any = None  # a RetryPolicy for `handle-event` (tests make it fast)


def register(subparsers: Any) -> None:
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
    serve.add_argument("--port", type=int, default=8080, metavar="P", help="port to listen on")
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


def _settings() -> Settings | None:
    try:
        settings = Settings.load()
    except SettingsError as exc:
        print(f"triage-bot: configuration error: {exc}", file=sys.stderr)
        return None
    except (OSError, UnicodeDecodeError) as exc:  # .env is a folder, unreadable, not text
        print(f"triage-bot: configuration error: .env cannot be read: {exc}", file=sys.stderr)
        return None
    from bot.config.logs import configure_logging

    configure_logging(settings)  # LOG_LEVEL, one line per record, secrets redacted
    return settings


def cmd_serve(args: argparse.Namespace) -> int:
    settings = _settings()
    if settings is None:
        return 2
    try:
        if settings.github_enabled:
            settings.require_github(webhook=True)
        elif not settings.discord_enabled:
            raise SettingsError(
                "nothing to serve: set GITHUB_TOKEN or GITHUB_APP_ID (with "
                "GITHUB_WEBHOOK_SECRET) for GitHub, and/or DISCORD_TOKEN for Discord",
                ("GITHUB_TOKEN", "GITHUB_APP_ID", "DISCORD_TOKEN"),
            )
        from bot.github.labels import load_label_config

        load_label_config(settings.triage_config)  # validate before serving
    except SettingsError as exc:
        print(f"triage-bot: configuration error: {exc}", file=sys.stderr)
        return 2
    from bot.server.http import run

    host = args.host or settings.triage_host
    log.info("serving on %s:%d (%r)", host, args.port, settings)
    try:
        run(settings, host, args.port)
    except SettingsError as exc:
        print(f"triage-bot: configuration error: {exc}", file=sys.stderr)
        return 2
    return 0


def cmd_poll(args: argparse.Namespace) -> int:
    settings = _settings()
    if settings is None:
        return 2
    if args.repo.count("/") != 1 or not all(args.repo.split("/")):
        print("triage-bot: --repo must be OWNER/NAME", file=sys.stderr)
        return 2
    try:
        _check_github(settings)
    except SettingsError as exc:
        print(f"triage-bot: configuration error: {exc}", file=sys.stderr)
        return 2
    from bot.store.open import store_errors

    try:
        with store_errors(settings.store_location):
            return asyncio.run(_poll(settings, args))
    except SettingsError as exc:
        print(f"triage-bot: configuration error: {exc}", file=sys.stderr)
        return 2


def _check_github(settings: Settings) -> None:
    """GitHub credentials and the label mapping, checked before any work (SettingsError)."""
    from bot.github.labels import load_label_config

    settings.require_github()
    load_label_config(settings.triage_config)


async def _poll(settings: Settings, args: argparse.Namespace) -> int:
    from bot.app import load_triage
    from bot.github.adapter import GitHubAdapter
    from bot.github.auth import GitHubClients
    from bot.github.pipeline import pipeline_from_settings
    from bot.github.poll import poll_once
    from bot.github.worker import Worker
    from bot.store.open import open_store

    store = open_store(settings)
    clients = GitHubClients(settings)
    try:
        triage = load_triage(settings)
        pipeline = pipeline_from_settings(settings, triage, GitHubAdapter(clients), store)
        worker = Worker(store, pipeline.handle_job)
        lookback = timedelta(hours=args.lookback)
        if args.once:
            result = await asyncio.to_thread(
                poll_once, clients, store, args.repo, lookback=lookback
            )
            await worker.drain(timeout=max(60.0, 10.0 * len(result.issues)))
            counts = store.job_counts()
            print(
                f"polled {args.repo}: {len(result.issues)} issue(s) changed; "
                f"{counts['dead']} job(s) dead-lettered"
            )
            return 0 if counts["dead"] == 0 else 1
        worker.start()
        try:
            while True:
                try:
                    await asyncio.to_thread(poll_once, clients, store, args.repo, lookback=lookback)
                    worker.wake()
                except Exception as exc:  # keep polling through GitHub's bad moments
                    log.warning("poll %s failed: %s", args.repo, exc)
                await asyncio.sleep(args.interval)
        finally:
            await worker.stop()
    finally:
        await asyncio.to_thread(clients.close)
        store.close()


def _open_store() -> Any:
    """The existing store, False when there is none yet (not created: reading makes no file),
    None on a configuration error (already reported)."""
    settings = _settings()
    if settings is None:
        return None
    from pathlib import Path

    from bot.store.open import is_postgres, open_store

    location = settings.store_location
    if not is_postgres(location) and not Path(location).exists():
        print(
            f"no store yet at {location} (TRIAGE_DB): the bot has not run here, "
            "so there are no jobs"
        )
        return False
    return open_store(settings)


def cmd_jobs_list(args: argparse.Namespace) -> int:
    store = _open_store()
    if store is None:
        return 2
    if store is False:
        return 0
    from bot.store.open import store_errors

    with store, store_errors(store.path):
        if args.state == "all":
            states: tuple[str, ...] = ("queued", "running", "dead", "done")
        elif args.state:
            states = (args.state,)
        else:
            states = ("dead", "queued", "running")
        jobs = store.list_jobs(states)
        if not jobs:
            print("no jobs")
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
    store = _open_store()
    if store is None:
        return 2
    if store is False:
        return 1
    from bot.store.open import store_errors

    with store, store_errors(store.path):
        count = store.requeue_dead(None if args.all else args.id)
        queued = store.job_counts()["queued"]
    if count == 0 and not (args.run and queued):  # --run also runs what an earlier retry queued
        print("no dead-lettered job to replay" + (f" with id {args.id}" if args.id else ""))
        return 1
    if not args.run:
        print(
            f"requeued {count} job(s), not run yet: a running `triage-bot serve` or "
            "`triage-bot poll` picks them up, or `triage-bot jobs retry --all --run` runs the "
            "queue now"
        )
        return 0
    settings = _settings()
    if settings is None:
        return 2
    try:
        _check_github(settings)
    except SettingsError as exc:
        print(f"triage-bot: configuration error: {exc}", file=sys.stderr)
        return 2
    from bot.store.open import store_errors

    with store_errors(settings.store_location):
        dead = asyncio.run(_run_queue(settings))
    print(f"replayed {queued} job(s); {dead} job(s) dead-lettered")
    return 0 if dead == 0 else 1


async def _run_queue(settings: Settings) -> int:
    """Run every queued job now; returns how many are dead-lettered afterwards."""
    from bot.app import load_triage
    from bot.github.adapter import GitHubAdapter
    from bot.github.auth import GitHubClients
    from bot.github.pipeline import pipeline_from_settings
    from bot.github.worker import Worker
    from bot.store.open import open_store

    store = open_store(settings)
    clients = GitHubClients(settings)
    try:
        pipeline = pipeline_from_settings(
            settings, load_triage(settings), GitHubAdapter(clients), store
        )
        await Worker(store, pipeline.handle_job).drain(timeout=3600)
        return store.job_counts()["dead"]
    finally:
        await asyncio.to_thread(clients.close)
        store.close()


def cmd_handle_event(args: argparse.Namespace) -> int:
    """The same pipeline as a webhook delivery, minus the server and the queue."""
    from pathlib import Path

    from bot.github import webhook

    settings = _settings()
    if settings is None:
        return 2
    try:
        _check_github(settings)
        payload = webhook.parse_body(Path(args.event_path).read_bytes())
        decision = webhook.decide(args.event_name, payload)
    except SettingsError as exc:
        print(f"triage-bot: configuration error: {exc}", file=sys.stderr)
        return 2
    except (OSError, webhook.MalformedDelivery) as exc:
        print(f"triage-bot: cannot read the event: {exc}", file=sys.stderr)
        return 2
    if decision.job is None:
        print(f"nothing to do for {args.event_name} ({decision.reason})")
        return 0
    from bot.store.open import store_errors

    try:
        with store_errors(settings.store_location):
            return asyncio.run(_handle_event(settings, decision.job, max(1, args.attempts)))
    except SettingsError as exc:
        print(f"triage-bot: configuration error: {exc}", file=sys.stderr)
        return 2


async def _handle_event(settings: Settings, job: dict, attempts: int) -> int:
    import time

    from bot.app import load_triage
    from bot.github.adapter import GitHubAdapter
    from bot.github.auth import GitHubClients
    from bot.github.pipeline import pipeline_from_settings
    from bot.github.worker import RetryPolicy, classify
    from bot.store.open import open_store

    store = open_store(settings)
    clients = GitHubClients(settings)
    policy = HANDLE_EVENT_POLICY or RetryPolicy(cap=60.0)
    try:
        pipeline = pipeline_from_settings(
            settings, load_triage(settings), GitHubAdapter(clients), store
        )
        for attempt in range(1, attempts + 1):
            try:
                outcome = await pipeline.process(
                    job["repo"], job["number"], job.get("installation_id"), hint=job["payload"]
                )
            except Exception as exc:
                failure = classify(exc, attempt, policy, time.time())
                if not failure.retry or attempt == attempts or failure.delay > 600:
                    print(f"triage-bot: GitHub call failed: {failure.reason}", file=sys.stderr)
                    return 1
                log.warning("attempt %d failed: %s; retrying", attempt, failure.reason)
                await asyncio.sleep(failure.delay * policy.scale)
                continue
            print(
                f"{job['repo']}#{job['number']}: {outcome.verdict}"
                f" {','.join(outcome.record_ids)} {outcome.plan.describe()}".rstrip()
            )
            return 0
        return 1
    finally:
        await asyncio.to_thread(clients.close)
        store.close()
