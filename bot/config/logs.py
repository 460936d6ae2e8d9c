"""Logging for every long-running command: one handler, one line per record (a traceback
excepted), no secrets.

- `configure_logging(settings)` installs a single stderr handler on the root logger at
  `LOG_LEVEL`, with UTC timestamps, and a `RedactingFilter` that replaces the values of the
  secret settings (tokens, the App's private key, webhook secrets) and anything shaped like a
  GitHub or Discord token, a bearer header or a PEM key with `[REDACTED]` (bot.config.redact),
  in the message, its arguments and any traceback, and a `RepeatFilter` that lets through at
  most ten warnings of one kind a minute (then says how many it left out). Calling it again
  replaces the handler (tests, reloads).
- `log_event(...)` writes the one line each handled event gets, as `key=value` pairs in a fixed
  order: `event source=github delivery=... repo=... issue=... verdict=... records=...
  duration_ms=...`, then free text (what was written). The same fields ride on the record as
  `record.event` (a dict) for handlers that want them as data.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import IO, Any

from bot.config.redact import Redactor, secret_values
from bot.config.settings import Settings

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class RedactingFilter(logging.Filter):
    """A handler filter: renders each record's message (and traceback) with secrets blanked.

    Attached to the handler, not to a logger, so it sees the records of every logger (discord.py,
    aiohttp, PyGithub's urllib3 included) that propagate to it.
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self.redact = Redactor(secrets)
        self._formatter = logging.Formatter()

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: show what there is, still redacted
            message = f"{record.msg!r} {record.args!r}"
        record.msg = self.redact(message)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = self._formatter.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        return True


class RepeatFilter(logging.Filter):
    """A handler filter: at most `burst` records of one kind (logger, level, message template)
    per `window` seconds; the rest are counted, and the first record of that kind after the
    window says how many were left out. Info and debug records and the events (`log_event`)
    pass untouched: a flood of one warning (a slow client, a refused signature) cannot fill the
    disk, and no kind of warning is lost from view."""

    def __init__(self, burst: int = 10, window: float = 60.0, clock: Any = time.monotonic) -> None:
        super().__init__()
        self.burst, self.window, self.clock = burst, window, clock
        self._seen: dict[tuple[str, int, str], list[float | int]] = {}  # [start, shown, held]

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING or hasattr(record, "event"):
            return True
        key = (record.name, record.levelno, str(record.msg))
        now = self.clock()
        seen = self._seen.get(key)
        if seen is None or now - seen[0] >= self.window:
            held = int(seen[2]) if seen else 0
            if len(self._seen) > 1000:  # many kinds: forget the old ones, not the memory
                self._seen.clear()
            self._seen[key] = [now, 1, 0]
            if held:
                record.msg = f"{record.getMessage()} ({held} more like this left out)"
                record.args = None
            return True
        if seen[1] < self.burst:
            seen[1] = int(seen[1]) + 1
            return True
        seen[2] = int(seen[2]) + 1
        return False


class UTCFormatter(logging.Formatter):
    """ISO 8601 timestamps in UTC, to the millisecond: `2026-01-31T12:00:00.000Z`."""

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
        return f"{stamp}.{int(record.msecs):03d}Z"


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever `sys.stderr` is when a record is emitted (it may be replaced)."""

    @property
    def stream(self) -> IO[str]:
        return sys.stderr

    @stream.setter
    def stream(self, value: IO[str]) -> None:
        pass


_HANDLER_MARK = "_triage_bot_handler"


def configure_logging(
    settings: Settings | None = None,
    *,
    level: str | int | None = None,
    stream: IO[str] | None = None,
    extra_secrets: Sequence[str] = (),
) -> logging.Handler:
    """Install the bot's handler on the root logger (replacing an earlier one) and return it.

    The level is `level`, else `settings.log_level` (LOG_LEVEL), else INFO. Chatty libraries are
    kept at WARNING unless the level is DEBUG.
    """
    chosen = level if level is not None else getattr(settings, "log_level", None) or "INFO"
    if isinstance(chosen, str):
        chosen = logging.getLevelName(chosen.upper())
        if not isinstance(chosen, int):
            chosen = logging.INFO
    handler = logging.StreamHandler(stream) if stream is not None else _StderrHandler()
    handler.setFormatter(UTCFormatter(FORMAT))
    handler.addFilter(RepeatFilter())
    handler.addFilter(RedactingFilter([*secret_values(settings), *extra_secrets]))
    setattr(handler, _HANDLER_MARK, True)
    root = logging.getLogger()
    for old in list(root.handlers):
        if getattr(old, _HANDLER_MARK, False):
            root.removeHandler(old)
            old.close()
    root.addHandler(handler)
    root.setLevel(chosen)
    quiet = logging.DEBUG if chosen <= logging.DEBUG else logging.WARNING
    for name in ("discord", "urllib3", "github", "aiohttp.access"):
        logging.getLogger(name).setLevel(max(quiet, chosen))
    return handler


def _value(value: Any) -> str:
    if value is None or value == "":
        return "-"
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return f"{value:.0f}"
    if isinstance(value, list | tuple | set | frozenset):
        return ",".join(str(v) for v in value) or "-"
    text = str(value)
    if any(c.isspace() or c in '"=' for c in text):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    return text


def event_fields(
    *,
    source: str,
    repo: str | None = None,
    issue: int | str | None = None,
    verdict: str | None = None,
    record_ids: Sequence[str] = (),
    delivery: str | None = None,
    duration_ms: float | None = None,
    **extra: Any,
) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "source": source,
        "delivery": delivery,
        "repo": repo,
        "issue": issue,
        "verdict": verdict,
        "records": list(record_ids),
        "duration_ms": None if duration_ms is None else round(duration_ms),
    }
    fields.update(extra)
    return fields


def event_line(fields: Mapping[str, Any], detail: str = "") -> str:
    """`event k=v ...` in the order of `fields`, then `detail` as it is."""
    line = "event " + " ".join(f"{key}={_value(value)}" for key, value in fields.items())
    return f"{line} {detail}".rstrip()


def log_event(
    logger: logging.Logger,
    *,
    started: float | None = None,
    duration_ms: float | None = None,
    detail: str = "",
    level: int = logging.INFO,
    **fields: Any,
) -> None:
    """Log the one line of a handled event: `fields` are `event_fields`' (source, repo, issue,
    verdict, record_ids, delivery, then any extra). `started` is a `time.monotonic()` reading."""
    if duration_ms is None and started is not None:
        duration_ms = (time.monotonic() - started) * 1000
    line_fields = event_fields(duration_ms=duration_ms, **fields)
    if logger.isEnabledFor(level):
        logger.log(level, "%s", event_line(line_fields, detail), extra={"event": line_fields})
