"""`triage-bot stats` and `triage-bot catalog draft GROUP`.

`register(subparsers)` adds `stats`; `register_catalog(actions)` adds `draft` to the `catalog`
group that `bot.cli.catalog` creates (bot.cli.CATALOG_MODULES routes `draft` here). The
figures come from bot.stats.report; reports go to stdout, problems to stderr.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

from bot.app import Triage, load_triage
from bot.cli.output import add_json_option, file_out_problem, print_json
from bot.config.settings import Settings, SettingsError
from bot.server.stats_page import gather
from bot.stats.report import (
    draft_record,
    find_gap,
    parse_since,
    render_html,
    render_text,
)
from bot.store.open import TriageStore, is_postgres, open_store, store_errors


def register(subparsers: argparse._SubParsersAction) -> None:
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
    add_json_option(stats, "the figures (answers per week and record, precision, gaps)")
    stats.set_defaults(handler=cmd_stats)


def register_catalog(catalog_subparsers: argparse._SubParsersAction) -> None:
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


def _open_existing() -> tuple[Settings, TriageStore | None]:
    """The settings, and the store TRIAGE_DB names if there is one (reading must not create an
    empty store). A bad setting or store file raises (bot.cli.run reports it)."""
    settings = Settings.load()
    location = settings.store_location
    if not is_postgres(location) and not Path(location).exists():
        return settings, None
    return settings, open_store(settings)


def _load_triage(settings: Settings) -> Triage | None:
    try:
        return load_triage(settings)
    except SettingsError as exc:
        _err(f"{exc}; record names are left out")
        return None


def cmd_stats(args: argparse.Namespace) -> int:
    if problem := file_out_problem("--html", args.html):
        _err(problem)
        return 2
    settings, store = _open_existing()
    try:
        parse_since(args.since)  # a bad date is named even when there is nothing to filter
    except ValueError as exc:
        _err(f"--since: {exc}")
        return 2
    if store is None:
        if args.json:  # as an empty store: nothing answered yet
            print_json({"store": settings.store_description, "exists": False, "stats": None})
            return 0
        print(
            f"no store yet at {settings.triage_db} (TRIAGE_DB): the bot has not answered "
            "anything here, so there are no statistics"
        )
        return 0
    with store, store_errors(settings.store_location):
        if args.refresh:
            # PyGithub only for --refresh: the rest of `stats` reads the store
            from github import GithubException

            from bot.github.reactions import refresh_reactions

            try:
                votes = refresh_reactions(settings, store, args.repo)
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
        if args.json:
            figures = dataclasses.asdict(stats)
            figures["names"] = dict(stats.names)
            print_json({"store": settings.store_description, "exists": True, "stats": figures})
        else:
            sys.stdout.write(render_text(stats))
        if args.html:
            Path(args.html).write_text(render_html(stats, generated_at=time.time()))
            print(f"wrote {args.html}", file=sys.stderr)
    return 0


def cmd_catalog_draft(args: argparse.Namespace) -> int:
    if problem := file_out_problem("--out", args.out):
        _err(problem)
        return 2
    settings, store = _open_existing()
    if store is None:
        _err(f"no store yet at {settings.triage_db} (TRIAGE_DB), so no uncatalogued panics")
        return 2
    with store, store_errors(settings.store_location):
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
