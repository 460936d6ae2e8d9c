"""What the commands share in how they print: colour, --json, the log level, and the one line a
failed GitHub call becomes.

Kept free of PyGithub and the pipeline at import time: every command imports it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any, TextIO

COLOR_CHOICES = ("auto", "always", "never")


def add_color_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--color",
        choices=COLOR_CHOICES,
        default="auto",
        help="colours in the text output (auto: only on a terminal, and not with NO_COLOR set "
        "or TERM=dumb)",
    )


def color_wanted(choice: str, stream: TextIO | None = None) -> bool:
    """Whether to print escapes: `always`/`never` as asked; `auto` only on a terminal that is
    not TERM=dumb, and never with NO_COLOR set to anything non-empty (no-color.org)."""
    if choice in ("always", "never"):
        return choice == "always"
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    stream = sys.stdout if stream is None else stream
    return bool(getattr(stream, "isatty", lambda: False)())


def add_json_option(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--json", action="store_true", help=f"print {what} as one JSON object")


def print_json(value: Any) -> None:
    print(json.dumps(value, ensure_ascii=False, sort_keys=False))


def add_verbosity_options(parser: argparse.ArgumentParser) -> None:
    """-v/-q before the command (`triage-bot -v poll ...`): the log level for this run, over
    LOG_LEVEL. Global options, as git's: the README's Commands table lists them once."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="log more (LOG_LEVEL=DEBUG for this run)",
    )
    group.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="log only errors (LOG_LEVEL=ERROR for this run)",
    )


def apply_verbosity(args: argparse.Namespace) -> None:
    """-v/-q become LOG_LEVEL, which every command's settings read (bot.config.logs)."""
    if getattr(args, "verbose", False):
        os.environ["LOG_LEVEL"] = "DEBUG"
    elif getattr(args, "quiet", False):
        os.environ["LOG_LEVEL"] = "ERROR"


def github_failure(exc: BaseException) -> str | None:
    """The reason a GitHub call failed, in one line (as the worker classifies it), or None when
    `exc` is not a GitHub or network error (then it is a bug, and its traceback is wanted)."""
    import requests  # why: only on failure; `match` must not pay for it
    from github import GithubException

    if not isinstance(
        exc, GithubException | requests.exceptions.RequestException | ConnectionError | TimeoutError
    ):
        return None
    from bot.github.worker import RetryPolicy, classify  # why: PyGithub only on failure

    return classify(exc, 1, RetryPolicy(), time.time()).reason


def report_github_failure(reason: str, what: str = "GitHub call failed") -> None:
    print(f"triage-bot: {what}: {reason}", file=sys.stderr)
