"""`triage-bot match`: answer the panics in files (or stdin) from the catalog.

Exit status: 0 answered, 1 an input could not be read, 2 the catalog is invalid, missing or
empty, 3 (only with --fail-on-match, and when every input was read) a catalogued panic found.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from bot.catalog.loader import CatalogError
from bot.cli.output import add_color_option, color_wanted
from bot.core.analysis import Analysis

if TYPE_CHECKING:
    from bot.app import Triage

# The pipeline's modules are imported by the functions that use them: `triage-bot --help` (and
# every other command) imports this module to list its options, and should not pay for them.


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "match",
        help="answer the panics pasted in files or stdin",
        description="Extract the panics in each input and match them against the catalog.",
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="files to read; - or none: stdin")
    parser.add_argument(
        "--catalog",
        action="append",
        metavar="PATH",
        help="catalog file or folder (repeatable; replaces TRIAGE_CATALOG; default: "
        "TRIAGE_CATALOG, else the bundled catalog)",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per input, per line")
    parser.add_argument(
        "--explain",
        action="store_true",
        help="also show each panic's top candidates and how each confidence was reached "
        "(with --json: an `explain` key)",
    )
    add_color_option(parser)
    parser.add_argument(
        "--fail-on-match",
        action="store_true",
        help=f"exit {FOUND_STATUS} when a catalogued panic was found (for CI gates)",
    )
    parser.set_defaults(handler=run)


FOUND_STATUS = 3  # --fail-on-match: 1 and 2 already mean an unreadable input, a bad catalog


def configured_catalogs() -> list[str] | None:
    """TRIAGE_CATALOG (the environment over ./.env, as the other commands read it), or None for
    the bundled catalog. A path that does not exist is a SettingsError (exit 2), never the
    bundled catalog in its place."""
    from bot.config.env import catalog_paths, read_env_file  # see the top

    value = os.environ.get("TRIAGE_CATALOG")
    if value is None and Path(".env").is_file():
        value = read_env_file(".env").get("TRIAGE_CATALOG")
    return [str(path) for path in catalog_paths(value)] or None


def analyse_input(triage: Triage, stream: BinaryIO) -> tuple[Analysis, str | None]:
    """Analyse all of a file or stdin, a window at a time (bot.core.match.windows): memory stays
    bounded and a panic in the middle of a 50 MB log is found. Invalid UTF-8 is replaced.

    Also returns the release of the catalog's project the text names (`burn 0.18`, a
    Cargo.lock entry), the first one any window names, to place a match in that release."""
    from bot.core.match.releases import project_names, version_in_text  # see the top
    from bot.core.match.windows import analyse_windows

    versions: list[str] = []
    history = triage.history
    names = project_names(history) if history is not None else set()

    def analyse(text: str) -> Analysis:
        if names and not versions and (version := version_in_text(text, names)):
            versions.append(version)
        return triage.analyse(text)

    analysis = analyse_windows(analyse, stream)
    return analysis, (versions[0] if versions else None)


def run(args: argparse.Namespace) -> int:
    from bot.app import Triage  # imported here so `--help` stays instant

    catalogs = args.catalog or configured_catalogs()
    try:
        triage = Triage.from_paths(catalogs)
    except CatalogError as exc:
        count = len(exc.problems)
        print(
            f"triage-bot: the catalog is invalid ({count} problem{'s' if count != 1 else ''}):",
            file=sys.stderr,
        )
        for problem in exc.problems:
            print(f"  {problem}", file=sys.stderr)
        return 2
    if not len(triage.catalog):  # as `catalog validate`: an empty catalog answers nothing
        print(
            f"triage-bot: the catalog is invalid: no records in {', '.join(catalogs or [])} "
            "(a catalog is .json and .jsonl record files; folders are read recursively)",
            file=sys.stderr,
        )
        return 2
    paths = args.paths or ["-"]
    color = color_wanted(args.color, sys.stdout)
    failed = caught = False
    for index, path in enumerate(paths):
        try:
            if path == "-":
                stdin = getattr(sys.stdin, "buffer", None)
                if stdin is None:  # `triage-bot match <&-`: Python sets sys.stdin to None
                    raise OSError("it is closed; give a file, or pipe the text in")
                if sys.stdin.isatty():
                    if not args.paths:  # else it looks hung
                        print(
                            "triage-bot: reading the paste from stdin (end it with Ctrl-D)",
                            file=sys.stderr,
                        )
                    # read whole first: the windows read twice, and one Ctrl-D ends one read
                    stdin = io.BytesIO(stdin.read())
                analysis, text_version = analyse_input(triage, stdin)
            else:
                with open(path, "rb") as stream:
                    analysis, text_version = analyse_input(triage, stream)
        except OSError as exc:
            reason = exc.strerror or str(exc)
            where = "stdin" if path == "-" else path
            print(f"triage-bot: cannot read {where}: {reason}", file=sys.stderr)
            if args.json:
                print(json.dumps({"input": path, "error": f"cannot read {where}: {reason}"}))
                sys.stdout.flush()
            failed = True
            continue
        caught = caught or analysis.verdict == "match"
        if args.json:
            from bot.app.match_report import analysis_json  # see the top

            found = analysis_json(path, analysis, triage, text_version=text_version)
            if args.explain:
                from bot.app.match_report import explain_json  # see the top

                found["explain"] = explain_json(analysis)
            print(json.dumps(found, ensure_ascii=False))
        else:
            if index:
                print()
            print(render_for_terminal(path, analysis, triage, color=color, many=len(paths) > 1))
            if args.explain:
                from bot.render.why import why_lines  # see the top

                print()
                print("\n".join(why_lines(analysis)))
        sys.stdout.flush()
    if failed:
        return 1
    return FOUND_STATUS if args.fail_on_match and caught else 0


def render_for_terminal(
    path: str, analysis: Analysis, triage: Triage, *, color: bool, many: bool
) -> str:
    from bot.render.answer.build import build_answer  # see the top
    from bot.render.terminal import render_text, render_verdict_line

    heading = f"== {path}\n" if many else ""
    if analysis.verdict != "match":
        return heading + render_verdict_line(analysis)
    answer = build_answer(
        analysis, triage.catalog, history=triage.history, projects=triage.projects
    )
    return heading + render_text(answer, color=color)
