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
from collections.abc import Callable
from pathlib import Path
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


def number_in(
    low: float, high: float, what: str, convert: Callable[[str], Any] = float
) -> Callable[[str], Any]:
    """An argparse `type` that takes a number from `low` to `high` (`what` names it in the
    one-line error: "a port", "a score")."""

    def parse(text: str) -> Any:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text} is not {what} ({low:g}-{high:g})")
        return value

    return parse


def folder_out_problem(out: str | None) -> str | None:
    """Why `--out DIR` cannot be written, said before any work is done (None: it can)."""
    if not out:
        return None
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        return f"error: --out {out}: a file is there, not a folder"
    parent = folder if folder.exists() else next((p for p in folder.parents if p.exists()), None)
    if parent is not None and not os.access(parent, os.W_OK):
        return f"error: --out {out}: {parent} cannot be written to"
    return None


def file_out_problem(flag: str, out: str | None) -> str | None:
    """Why the file `flag FILE` names cannot be written, said before any work (None: it can)."""
    if not out:
        return None
    target = Path(out)
    if target.is_dir():
        return f"error: {flag} {out}: a folder is there, not a file"
    folder = target.parent
    if not folder.is_dir():
        return f"error: {flag} {out}: no folder {folder}"
    if not os.access(folder, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        return f"error: {flag} {out}: cannot be written to"
    return None


def print_json(value: Any) -> None:
    print(json.dumps(value, ensure_ascii=False, sort_keys=False))


def add_verbosity_options(parser: argparse.ArgumentParser, after_command: bool = False) -> None:
    """-v/-q: the log level for this run, over LOG_LEVEL. Before the command, as git's
    (`triage-bot -v poll`), and after it (`triage-bot poll -v`): there with no default, so a
    command's parser does not undo the one given before it."""
    group = parser.add_mutually_exclusive_group()
    unset: dict[str, Any] = {"default": argparse.SUPPRESS} if after_command else {}
    group.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="log more (LOG_LEVEL=DEBUG for this run)",
        **unset,
    )
    group.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="log only errors (LOG_LEVEL=ERROR for this run)",
        **unset,
    )


def apply_verbosity(args: argparse.Namespace) -> None:
    """-v/-q become LOG_LEVEL, which every command's settings read (bot.config.logs)."""
    if getattr(args, "verbose", False) and getattr(args, "quiet", False):
        print("triage-bot: error: -v/--verbose: not allowed with -q/--quiet", file=sys.stderr)
        raise SystemExit(2)
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


def duration(seconds: float) -> str:
    """`1m20s`, `7s`: an ETA as progress lines write it."""
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}m{rest:02d}s" if minutes else f"{rest}s"


def eta(started: float, done: int, total: int | None, now: float) -> str:
    """`, about 1m20s left` from the pace so far; empty before the first step or at the end."""
    if not total or done <= 0 or done >= total:
        return ""
    return f", about {duration((now - started) / done * (total - done))} left"


class Progress:
    """A count with an ETA, rewritten in place on stderr when stderr is a terminal, and nothing
    otherwise (a log or CI keeps only the command's own lines). `say` prints one of those lines
    above the progress line."""

    def __init__(
        self,
        what: str,
        unit: str,
        stream: TextIO | None = None,
        clock: Any = time.monotonic,
        every: float = 0.2,
    ) -> None:
        self.what, self.unit = what, unit
        self.stream = sys.stderr if stream is None else stream
        self.on = bool(getattr(self.stream, "isatty", lambda: False)())
        self.clock, self.every = clock, every
        self.started = clock()
        self.last = float("-inf")  # the first step is always drawn
        self.shown = ""
        self.latest = ""

    def update(self, done: int, total: int | None = None) -> None:
        if not self.on:
            return
        now = self.clock()
        count = f"{done}/{total}" if total else str(done)
        self.latest = f"{self.what}: {count} {self.unit}{eta(self.started, done, total, now)}"
        if now - self.last < self.every and done != total:
            return  # drawn with the next step or line said
        self.last = now
        self._draw(self.latest)

    def say(self, line: str) -> None:
        shown = self.shown
        self._clear()
        print(line, file=self.stream, flush=True)
        if shown:
            self._draw(self.latest)

    def close(self) -> None:
        """Take the progress line away (the summary comes in its place)."""
        self._clear()

    def _draw(self, text: str) -> None:
        # spaces, not an erase escape: only bot.render.terminal writes escapes
        pad = " " * max(0, len(self.shown) - len(text))
        self.stream.write(f"\r{text}{pad}")
        self.stream.flush()
        self.shown = text

    def _clear(self) -> None:
        if self.shown:
            self.stream.write("\r" + " " * len(self.shown) + "\r")
            self.stream.flush()
            self.shown = ""
