"""`triage-bot backfill --repo OWNER/NAME [--since DATE]`: what happened before the bot came.

The arguments and the exit status; the reading itself is `bot.github.backfill`.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime

from bot.app import load_triage
from bot.cli.output import (
    Progress,
    add_json_option,
    github_failure,
    print_json,
    report_github_failure,
)
from bot.config.logs import configure_logging
from bot.config.settings import Settings, SettingsError
from bot.github.auth import GitHubClients
from bot.github.backfill import backfill
from bot.store.open import open_store, store_errors


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "backfill",
        help="read a repository's past issues and record which catalog records they hit",
        description="Reads past issues (oldest first, resumable) so the first answers already "
        "know which earlier issues hit the same record.",
    )
    parser.add_argument(
        "--repo", required=True, metavar="OWNER/NAME", help="the repository whose issues to read"
    )
    parser.add_argument(
        "--since",
        metavar="DATE",
        help="only issues updated since DATE (YYYY-MM-DD); default: all",
    )
    add_json_option(parser, "the summary (issues read, how many hit catalogued records)")
    parser.set_defaults(handler=cmd_backfill)


def cmd_backfill(args: argparse.Namespace) -> int:
    if args.repo.count("/") != 1 or not all(args.repo.split("/")):
        print("triage-bot: --repo must be OWNER/NAME", file=sys.stderr)
        return 2
    since = None
    if args.since:
        try:
            since = datetime.fromisoformat(args.since.replace("Z", "+00:00"))
        except ValueError:
            print(f"triage-bot: --since: not a date: {args.since!r}", file=sys.stderr)
            return 2
        since = since.replace(tzinfo=UTC) if since.tzinfo is None else since
    try:
        settings = Settings.load()
        configure_logging(settings)
        settings.require_github()
    except SettingsError as exc:
        print(f"triage-bot: configuration error: {exc}", file=sys.stderr)
        return 2
    shown = Progress("backfill", "issues and pull requests listed")
    store = open_store(settings)
    clients = GitHubClients(settings)
    try:
        triage = load_triage(settings)
        with store_errors(settings.store_location):
            result = backfill(
                clients,
                store,
                triage,
                args.repo,
                since=since,
                progress=shown.say,
                count=shown.update if shown.on else None,
            )
    except Exception as exc:
        shown.close()
        reason = github_failure(exc)
        if reason is None:  # not GitHub's nor the network's: a bug, keep its traceback
            raise
        report_github_failure(f"{reason}; run it again to go on", "backfill stopped")
        return 1
    finally:
        shown.close()
        clients.close()
        store.close()
    if args.json:
        print_json({"repo": args.repo, "issues": result.issues, "matched": result.matched})
        return 0
    print(
        f"backfilled {args.repo}: {result.issues} issue(s) read, {result.matched} hit catalogued "
        "records"
    )
    return 0
