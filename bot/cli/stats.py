"""`triage-bot stats` and `triage-bot catalog draft GROUP`.

`register(subparsers)` adds `stats`; `register_catalog(catalog_subparsers)` adds `draft` to the
`catalog` group that `bot.cli.catalog` creates. Reports go to stdout; problems to stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from bot.server.stats_page import gather
from bot.stats.report import (
    draft_record,
    find_gap,
    parse_since,
    render_html,
    render_text,
)


def register(subparsers: Any) -> None:
    stats = subparsers.add_parser(
        "stats",
        help="what users hit: answers by record, precision, uncatalogued panics",
        description="Print, from the bot's store (TRIAGE_DB), the answers by record over time, "
        "the precision per record from the feedback (👍/👎 on the bot's GitHub comments, "
        "Discord buttons, /triage wrong), and the uncatalogued panics grouped by normalised "
        "message and crate, most frequent first: the records worth writing next. "
        "`serve` shows the same page at GET /stats.",
    )
    stats.add_argument("--repo", metavar="OWNER/NAME", help="only this GitHub repository")
    stats.add_argument("--since", metavar="DATE", help="only from this date on (YYYY-MM-DD)")
    stats.add_argument("--html", metavar="FILE", help="also write the page with charts to FILE")
    stats.add_argument(
        "--refresh",
        action="store_true",
        help="first read the 👍/👎 reactions on the bot's GitHub comments (needs GitHub settings)",
    )
    stats.set_defaults(handler=cmd_stats)


def register_catalog(catalog_subparsers: Any) -> None:
    draft = catalog_subparsers.add_parser(
        "draft",
        help="write a skeleton record for a group of uncatalogued panics",
        description="Write a skeleton catalog record (JSON) for the uncatalogued-panic group "
        "GROUP (its id from `triage-bot stats`), with the message, crate and location users "
        "pasted, and TODO write-up fields for a maintainer to fill in.",
    )
    draft.add_argument("group", metavar="GROUP", help="the group id (or a unique prefix)")
    draft.add_argument("--repo", metavar="OWNER/NAME", help="the record's repository")
    draft.add_argument("--out", metavar="FILE", help="write the record to FILE, not stdout")
    draft.set_defaults(handler=cmd_catalog_draft)


def _err(message: str) -> None:
    print(f"triage-bot: {message}", file=sys.stderr)


def _open(settings_only: bool = False) -> tuple[Any, Any] | None:
    from bot.config.settings import Settings, SettingsError
    from bot.store.open import is_postgres, open_command_store

    try:
        settings = Settings.load()
    except SettingsError as exc:
        _err(f"configuration error: {exc}")
        return None
    except (OSError, UnicodeDecodeError) as exc:  # .env is a folder, unreadable, not text
        _err(f"configuration error: .env cannot be read: {exc}")
        return None
    if settings_only:
        return settings, None
    location = settings.store_location
    if not is_postgres(location) and not Path(location).exists():
        return settings, None  # reading must not create an empty store
    return settings, open_command_store(settings)


def _load_triage(settings: Any) -> Any:
    from bot.app import load_triage
    from bot.config.settings import SettingsError

    try:
        return load_triage(settings)
    except SettingsError as exc:
        _err(f"{exc}; record names are left out")
        return None


def refresh_reactions(settings: Any, store: Any, repo: str | None = None) -> int:
    """Read the reactions on every bot comment the store knows; returns the votes stored."""
    from bot.github.adapter import GitHubAdapter
    from bot.github.auth import GitHubClients
    from bot.github.triage_command.run import CommandHandler

    settings.require_github()
    clients = GitHubClients(settings)
    try:
        handler = CommandHandler(GitHubAdapter(clients), store, catalog=None)
        total = 0
        for state in store.list_issue_states():
            if repo and state.repo != repo.lower():
                continue
            if state.comment_id is None or not state.record_ids or state.verdict != "match":
                continue
            total += handler.sync_reactions(
                state.repo, state.number, None, state.comment_id, state.record_ids
            )
        return total
    finally:
        clients.close()


def cmd_stats(args: argparse.Namespace) -> int:
    opened = _open()
    if opened is None:
        return 2
    settings, store = opened
    try:
        parse_since(args.since)  # a bad date is named even when there is nothing to filter
    except ValueError as exc:
        _err(f"--since: {exc}")
        return 2
    if store is None:
        print(
            f"no store yet at {settings.triage_db} (TRIAGE_DB): the bot has not answered "
            "anything here, so there are no statistics"
        )
        return 0
    from bot.store.open import store_errors

    with store, store_errors(store.path):
        if args.refresh:
            from github import GithubException

            from bot.config.settings import SettingsError

            try:
                votes = refresh_reactions(settings, store, args.repo)
            except SettingsError as exc:
                _err(f"configuration error: {exc}")
                return 2
            except GithubException as exc:
                _err(f"reading reactions failed: HTTP {exc.status}")
                return 1
            print(f"read reactions: {votes} vote(s) from 👍/👎", file=sys.stderr)
        triage = _load_triage(settings)
        try:
            stats = gather(store, triage, args.repo, args.since)
        except ValueError as exc:
            _err(f"--since: {exc}")
            return 2
        sys.stdout.write(render_text(stats))
        if args.html:
            Path(args.html).write_text(render_html(stats, generated_at=time.time()))
            print(f"wrote {args.html}", file=sys.stderr)
    return 0


def cmd_catalog_draft(args: argparse.Namespace) -> int:
    opened = _open()
    if opened is None:
        return 2
    settings, store = opened
    if store is None:
        _err(f"no store yet at {settings.triage_db} (TRIAGE_DB), so no uncatalogued panics")
        return 2
    from bot.store.open import store_errors

    with store, store_errors(store.path):
        rows = find_gap(store.list_uncatalogued(), args.group)
    if not rows:
        _err(f"no uncatalogued-panic group {args.group!r} (see `triage-bot stats`)")
        return 2
    text = json.dumps(draft_record(rows, args.repo), indent=2, ensure_ascii=False) + "\n"
    if args.out:
        Path(args.out).write_text(text)
        print(f"wrote {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
