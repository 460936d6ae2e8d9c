"""Subcommands: `serve`, `poll`, `handle-event`, `jobs list`, `jobs retry`."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from datetime import timedelta
from typing import Any

from bot.settings import Settings, SettingsError

log = logging.getLogger(__name__)
HANDLE_EVENT_POLICY: Any = None  # a RetryPolicy for `handle-event` (tests make it fast)


def register(subparsers: Any) -> None:
    serve = subparsers.add_parser(
        "serve", help="run the webhook server (GitHub) and the Discord client"
    )
    serve.add_argument("--host", default="0.0.0.0", help="address to listen on (default 0.0.0.0)")
    serve.add_argument("--port", type=int, default=8080, help="port to listen on (default 8080)")
    serve.set_defaults(handler=cmd_serve)

    poll = subparsers.add_parser(
        "poll", help="poll a repository for updated issues and comments (no webhook needed)"
    )
    poll.add_argument("--repo", required=True, metavar="OWNER/NAME")
    poll.add_argument(
        "--interval", type=float, default=60.0, metavar="S", help="seconds between polls"
    )
    poll.add_argument("--once", action="store_true", help="poll once, handle the jobs, exit")
    poll.add_argument(
        "--lookback",
        type=float,
        default=24.0,
        metavar="HOURS",
        help="on the first poll, look this far back (default 24)",
    )
    poll.set_defaults(handler=cmd_poll)

    event = subparsers.add_parser(
        "handle-event",
        help="handle one GitHub event file (the GitHub Action: no server, no queue)",
    )
    event.add_argument("--event-path", required=True, help="the event JSON ($GITHUB_EVENT_PATH)")
    event.add_argument("--event-name", required=True, help="the event name ($GITHUB_EVENT_NAME)")
    event.add_argument(
        "--attempts", type=int, default=3, help="tries on transient GitHub errors (default 3)"
    )
    event.set_defaults(handler=cmd_handle_event)

    jobs = subparsers.add_parser("jobs", help="show and replay the GitHub job queue")
    jobs_sub = jobs.add_subparsers(dest="jobs_command", metavar="ACTION")
    listing = jobs_sub.add_parser("list", help="list dead-lettered (and pending) jobs")
    listing.add_argument(
        "--state",
        choices=["dead", "queued", "running", "done", "all"],
        default=None,
        help="only jobs in this state (default: dead, queued and running)",
    )
    listing.set_defaults(handler=cmd_jobs_list)
    retry = jobs_sub.add_parser("retry", help="replay dead-lettered jobs")
    retry.add_argument("id", nargs="?", type=int, help="the job to replay")
    retry.add_argument("--all", action="store_true", help="replay every dead-lettered job")
    retry.add_argument(
        "--run",
        action="store_true",
        help="run the queue now, in this process, instead of leaving it to `serve` or `poll`",
    )
    retry.set_defaults(handler=cmd_jobs_retry)
    jobs.set_defaults(handler=lambda args: _usage(jobs))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def _settings() -> Settings | None:
    try:
        settings = Settings.load()
    except SettingsError as exc:
        print(f"triage-bot: configuration error: {exc}", file=sys.stderr)
        return None
    from bot.logging_setup import configure_logging

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
    from bot.server import run

    log.info("serving on %s:%d (%r)", args.host, args.port, settings)
    try:
        run(settings, args.host, args.port)
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
    try:
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
    from bot.github.adapter import GitHubAdapter
    from bot.github.auth import GitHubClients
    from bot.github.pipeline import pipeline_from_settings
    from bot.github.poll import poll_once
    from bot.github.worker import Worker
    from bot.server import load_triage
    from bot.stores import open_settings_store

    store = open_settings_store(settings)
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
    settings = _settings()
    if settings is None:
        return None
    from bot.stores import open_settings_store

    return open_settings_store(settings)


def cmd_jobs_list(args: argparse.Namespace) -> int:
    store = _open_store()
    if store is None:
        return 2
    with store:
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
    with store:
        count = store.requeue_dead(None if args.all else args.id)
    if count == 0:
        print("no dead-lettered job to replay" + (f" with id {args.id}" if args.id else ""))
        return 1
    if not args.run:
        print(f"requeued {count} job(s); a running `triage-bot serve` or `poll` picks them up")
        return 0
    settings = Settings.load()
    try:
        _check_github(settings)
    except SettingsError as exc:
        print(f"triage-bot: configuration error: {exc}", file=sys.stderr)
        return 2
    dead = asyncio.run(_run_queue(settings))
    print(f"replayed {count} job(s); {dead} job(s) dead-lettered")
    return 0 if dead == 0 else 1


async def _run_queue(settings: Settings) -> int:
    """Run every queued job now; returns how many are dead-lettered afterwards."""
    from bot.github.adapter import GitHubAdapter
    from bot.github.auth import GitHubClients
    from bot.github.pipeline import pipeline_from_settings
    from bot.github.worker import Worker
    from bot.server import load_triage
    from bot.stores import open_settings_store

    store = open_settings_store(settings)
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
    try:
        return asyncio.run(_handle_event(settings, decision.job, max(1, args.attempts)))
    except SettingsError as exc:
        print(f"triage-bot: configuration error: {exc}", file=sys.stderr)
        return 2


async def _handle_event(settings: Settings, job: dict, attempts: int) -> int:
    import time

    from bot.github.adapter import GitHubAdapter
    from bot.github.auth import GitHubClients
    from bot.github.pipeline import pipeline_from_settings
    from bot.github.worker import RetryPolicy, classify
    from bot.server import load_triage
    from bot.stores import open_settings_store

    store = open_settings_store(settings)
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
