"""`triage-bot`: one console script, a subcommand per job.

Each feature module registers its own subcommands. Only the module that owns the command being
run is imported, so `triage-bot match` starts fast (the GitHub Action runs a process per event)
and does not pay for discord.py or PyGithub.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# top-level command -> module whose `register(subparsers)` adds it
COMMAND_MODULES: dict[str, str] = {
    "catalog": "bot.catalog.commands",
    "match": "bot.match_command",
    "serve": "bot.github.commands",
    "poll": "bot.github.commands",
    "jobs": "bot.github.commands",
    "handle-event": "bot.github.commands",
    "stats": "bot.stats_command",
    "doctor": "bot.doctor",
    "backfill": "bot.github.backfill",
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="triage-bot",
        description="Answers Rust panics pasted into GitHub issues and Discord from a catalog.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules = dict.fromkeys(COMMAND_MODULES.values())
    if only in COMMAND_MODULES:
        modules = {COMMAND_MODULES[only]: None}
    for name in modules:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    first = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(first)
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    try:
        return int(handler(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
