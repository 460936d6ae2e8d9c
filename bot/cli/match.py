"""`triage-bot match`: answer the panics in files (or stdin) from the catalog."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, BinaryIO

from bot.catalog.loader import CatalogError
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
        help="catalog file or folder (repeatable; default: the bundled catalog)",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per input, per line")
    parser.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colours in the text output (auto: only on a terminal)",
    )
    parser.set_defaults(handler=run)


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

    try:
        triage = Triage.from_paths(args.catalog)
    except CatalogError as exc:
        count = len(exc.problems)
        print(
            f"triage-bot: the catalog is invalid ({count} problem{'s' if count != 1 else ''}):",
            file=sys.stderr,
        )
        for problem in exc.problems:
            print(f"  {problem}", file=sys.stderr)
        return 2
    paths = args.paths or ["-"]
    color = args.color == "always" or (args.color == "auto" and sys.stdout.isatty())
    failed = False
    for index, path in enumerate(paths):
        try:
            if path == "-":
                stdin = getattr(sys.stdin, "buffer", None)
                if stdin is None:  # `triage-bot match <&-`: Python sets sys.stdin to None
                    print(
                        "triage-bot: cannot read stdin: it is closed; give a file, "
                        "or pipe the text in",
                        file=sys.stderr,
                    )
                    failed = True
                    continue
                analysis, text_version = analyse_input(triage, stdin)
            else:
                with open(path, "rb") as stream:
                    analysis, text_version = analyse_input(triage, stream)
        except OSError as exc:
            print(f"triage-bot: cannot read {path}: {exc.strerror or exc}", file=sys.stderr)
            failed = True
            continue
        if args.json:
            from bot.app.match_report import analysis_json  # see the top

            found = analysis_json(path, analysis, triage, text_version=text_version)
            print(json.dumps(found, ensure_ascii=False))
        else:
            if index:
                print()
            print(render_for_terminal(path, analysis, triage, color=color, many=len(paths) > 1))
        sys.stdout.flush()
    return 1 if failed else 0


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
