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
    "catalog": "bot.cli.catalog",
    "match": "bot.cli.match",
    "serve": "bot.cli.service",
    "poll": "bot.cli.service",
    "jobs": "bot.cli.service",
    "handle-event": "bot.cli.service",
    "stats": "bot.cli.stats",
    "doctor": "bot.cli.doctor",
    "backfill": "bot.cli.backfill",
}


class HelpFormatter(argparse.HelpFormatter):
    """Shows each option's default, unless its help already names it or it has none to show."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if (
            action.option_strings
            and "default" not in text
            and default not in (None, False, True, [], (), "", argparse.SUPPRESS)
        ):
            text += " (default: %(default)s)"
        return text


def version() -> str:
    """The installed distribution's version; the source tree's when it is not installed."""
    from importlib import metadata

    try:
        return metadata.version("panic-triage")
    except metadata.PackageNotFoundError:
        from bot import __version__

        return __version__


class _VersionAction(argparse.Action):
    """`--version`, looked up only when asked for: reading the package metadata takes about a
    tenth of a second, which every `triage-bot match` would otherwise pay."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        print(f"{parser.prog} {version()}")
        parser.exit()


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parser's subcommands by name (aliases left out), in the order they were added."""
    found: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                found[choice.dest] = action.choices[choice.dest]
    return found


def _walk(parser: argparse.ArgumentParser) -> None:
    """Every (sub)parser gets the formatter and a description (its one-line help when it has
    none of its own), and a group run without its action prints its help and exits 2
    (`triage-bot catalog` and `triage-bot jobs` alike)."""
    parser.formatter_class = HelpFormatter
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        action.required = False
        if parser.get_default("handler") is None:
            parser.set_defaults(handler=lambda _args, group=parser: usage(group))
        for choice in action._choices_actions:
            child = action.choices[choice.dest]
            if not child.description and choice.help:
                child.description = choice.help[:1].upper() + choice.help[1:] + "."
            _walk(child)


def usage(parser: argparse.ArgumentParser) -> int:
    """A command group run without its action: its help on stderr, exit 2."""
    parser.print_help(sys.stderr)
    return 2


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="triage-bot",
        description="Answers Rust panics pasted into GitHub issues and Discord from a catalog.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action=_VersionAction, help="print the version and exit")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules = dict.fromkeys(COMMAND_MODULES.values())
    if only in COMMAND_MODULES:
        modules = {COMMAND_MODULES[only]: None}
    for name in modules:
        importlib.import_module(name).register(subparsers)
    _walk(parser)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                names = list(subcommands(action.choices[choice.dest]))
                if names:  # the top-level list names every action of a group
                    choice.help = f"{choice.help} ({', '.join(names)})"
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    first = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(first)
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        return usage(parser)
    try:
        return int(handler(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        from bot.store.open import StoreUnusable  # imported only on failure: `match` starts fast

        if not isinstance(exc, StoreUnusable):
            raise
        print(f"triage-bot: {exc}", file=sys.stderr)  # the file, what is wrong, what to do
        return 2
