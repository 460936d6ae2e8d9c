"""`triage-bot`: one console script, a subcommand per job; the adapter that runs the pipeline's
stages from a terminal.

Each command group is one module here with a `register(subparsers)` (argparse and printing only;
the work is done by the packages it calls). Only the module that owns the command being run is
imported, so `triage-bot match` starts fast (the GitHub Action runs a process per event) and
does not pay for discord.py or PyGithub. Configuration errors raised anywhere in a command
become their message and exit status 2 in one place, `run`.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

import bot
from bot.cli.output import add_verbosity_options, apply_verbosity

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
# `catalog ACTION` -> module whose `register_catalog(actions)` adds ACTION to the `catalog`
# group (created by bot.cli.catalog's `register`): the group's actions live in three modules,
# and `catalog validate` must not pay for the scanner or the store.
CATALOG_MODULES: dict[str, str] = {
    "validate": "bot.cli.catalog",
    "lint": "bot.cli.catalog",
    "show": "bot.cli.catalog",
    "import": "bot.cli.catalog",
    "site": "bot.cli.catalog",
    "scan": "bot.cli.scan",
    "update": "bot.cli.scan",
    "history": "bot.cli.scan",
    "draft": "bot.cli.stats",
    "refresh": "bot.cli.refresh",
    "explain": "bot.cli.explain",
    "review": "bot.cli.explain",
}


class HelpFormatter(argparse.HelpFormatter):
    """Shows each option's default, unless its help already names it or it has none to show."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        # argparse's own width imports shutil (and bz2, lzma) for every parser: a cold start's
        # milliseconds. The same width: COLUMNS, else the terminal's, else 80; minus 2.
        if width is None:
            width = _columns() - 2
        super().__init__(prog, indent_increment, max_help_position, width)

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


def _columns() -> int:
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _Parser(argparse.ArgumentParser):
    """Every (sub)parser formats with HelpFormatter from the start (`add_argument` builds one)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)


def version() -> str:
    """The version: `bot.__version__`, which the build reads too (pyproject.toml), so the
    installed metadata need not be read (about 60 ms)."""
    return bot.__version__


class _VersionAction(argparse.Action):
    """`--version` among other arguments (alone, `main` answers it before building a parser)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
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


def _actions(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:
    """The object a group's actions are added to (its `add_subparsers()`)."""
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def _walk(parser: argparse.ArgumentParser) -> None:
    """Every (sub)parser gets the formatter and a description (its one-line help when it has
    none of its own), every command -v/-q after its name too, and a group run without its
    action prints its help and exits 2 (`triage-bot catalog` and `triage-bot jobs` alike)."""
    parser.formatter_class = HelpFormatter
    groups = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not groups and parser.prog != "triage-bot" and "-v" not in parser._option_string_actions:
        add_verbosity_options(parser, after_command=True)  # `triage-bot poll -v`
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


def build_parser(only: str | None = None, action: str | None = None) -> argparse.ArgumentParser:
    """The whole parser; with `only` (and, for `catalog`, its `action`), just what that command
    needs, so only its module is imported."""
    parser = _Parser(
        prog="triage-bot",
        description="Answers Rust panics pasted into GitHub issues and Discord from a catalog.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action=_VersionAction, help="print the version and exit")
    add_verbosity_options(parser)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules = dict.fromkeys(COMMAND_MODULES.values())
    if only in COMMAND_MODULES:
        modules = {COMMAND_MODULES[only]: None}
    for name in modules:
        importlib.import_module(name).register(subparsers)
    if "catalog" in subparsers.choices:
        catalog_modules = dict.fromkeys(CATALOG_MODULES.values())
        if only == "catalog" and action in CATALOG_MODULES:
            catalog_modules = {CATALOG_MODULES[action]: None}
        actions = _actions(subparsers.choices["catalog"])
        for name in catalog_modules:
            importlib.import_module(name).register_catalog(actions)
    _walk(parser)
    for sub in parser._actions:
        if isinstance(sub, argparse._SubParsersAction):
            for choice in sub._choices_actions:
                names = list(subcommands(sub.choices[choice.dest]))
                if names:  # the top-level list names every action of a group
                    choice.help = f"{choice.help} ({', '.join(names)})"
    return parser


def check_log_level() -> None:
    """A LOG_LEVEL set to no level stops every command, not only those that read settings."""
    value = os.environ.get("LOG_LEVEL", "")
    if value.strip():  # unset, the common case, imports nothing: `match` starts fast
        from bot.config.settings import log_level  # why: only a LOG_LEVEL that is set is read

        log_level(value)


def os_error_line(exc: OSError) -> str:
    """`cannot use out/: Permission denied`, from an OSError (its file when it names one)."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    where = exc.filename if exc.filename is not None else None
    if where is None:
        return f"cannot go on: {reason}"
    return f"cannot use {where}: {reason}"


def run(args: argparse.Namespace) -> int:
    """Run the parsed command. The one place configuration errors become what the user reads:
    a bad setting (SettingsError) or a store file that cannot be used (StoreUnusable) is one
    line on stderr and exit status 2; command bodies just raise them."""
    from bot.config.env import SettingsError  # why: `--version` must not pay for it

    apply_verbosity(args)
    try:
        if getattr(args, "command", None) != "doctor":  # doctor lists it with the rest
            check_log_level()
        return int(args.handler(args) or 0)
    except SettingsError as exc:
        print(f"triage-bot: configuration error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        # A file or folder the command cannot write or read (an `--out` that is a file or not
        # writable, a port in use): one line naming it, not a traceback.
        print(f"triage-bot: {os_error_line(exc)}", file=sys.stderr)
        return 2
    except Exception as exc:
        from bot.store.open import StoreUnusable  # imported only on failure: `match` starts fast

        if not isinstance(exc, StoreUnusable):
            raise
        print(f"triage-bot: {exc}", file=sys.stderr)  # the file, what is wrong, what to do
        return 2


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:  # the console script: the process ends with this call
        try:
            return main(sys.argv[1:])
        finally:
            # The objects left are freed at exit anyway; frozen, the collector's passes at
            # exit do not walk them all (the catalog's: tens of ms of a cold `match`).
            gc.freeze()
    argv = list(argv)
    words = [a for a in argv if not a.startswith("-")]  # the command, then its action
    if argv == ["--version"]:
        print(f"triage-bot {version()}")  # before any command module is imported (issue 25)
        return 0
    parser = build_parser(*words[:2])
    args = parser.parse_args(argv)
    if getattr(args, "handler", None) is None:
        return usage(parser)
    try:
        return run(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
