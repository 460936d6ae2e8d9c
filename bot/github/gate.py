"""One gate per GitHub identity (an App installation, or the token): rate limits and write pacing.

GitHub's rate limits, primary and secondary, belong to the installation token, not to a job. When
one request is told to wait (403/429 with Retry-After, a secondary limit, an exhausted primary
limit), the gate of that installation closes for that long, and no request for it is sent until
it opens: `check()` raises `GateClosed`, which the worker turns into a wait, not a failed attempt.

Writes are paced per installation (GitHub asks integrators not to write concurrently and to leave
time between writes); different installations, and reads, go on in parallel.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager

from github import GithubException
from github.Requester import Requester

log = logging.getLogger(__name__)


class GateClosed(Exception):
    """No request may be sent for this installation yet."""

    def __init__(self, key: Hashable, remaining: float) -> None:
        super().__init__(f"rate limit of {describe(key)}: waiting {remaining:.1f} s more")
        self.key = key
        self.remaining = remaining


def describe(key: Hashable) -> str:
    return "the token" if key == "token" else f"installation {key}"


def github_wait(exc: BaseException, now: float, secondary_min: float = 60.0) -> float | None:
    """Seconds GitHub asked us to wait after this error (a rate limit), else None."""
    if not isinstance(exc, GithubException) or exc.status not in (403, 429):
        return None
    headers = {str(k).lower(): str(v) for k, v in (exc.headers or {}).items()}
    data = exc.data if isinstance(exc.data, dict) else {}
    retry_after = headers.get("retry-after", "").strip()
    if retry_after.isdigit():
        return float(retry_after)
    reset = headers.get("x-ratelimit-reset", "").strip()
    if headers.get("x-ratelimit-remaining") == "0" and reset.isdigit():
        return max(1.0, float(reset) - now + 1)
    if exc.status == 429 or Requester.isSecondaryRateLimitError(str(data.get("message") or "")):
        return secondary_min
    return None


class InstallationGates:
    def __init__(
        self,
        write_interval: float = 0.5,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.write_interval = write_interval or 0.0
        self.scale = 1.0  # multiplies every wait (the worker's RetryPolicy.scale; tests shrink it)
        self.clock = clock
        self.sleep = sleep
        self._lock = threading.Lock()
        self._until: dict[Hashable, float] = {}
        self._last_write: dict[Hashable, float] = {}
        self._writers: dict[Hashable, threading.Lock] = {}

    def remaining(self, key: Hashable) -> float:
        """Seconds until requests for `key` may be sent again (0 when open)."""
        with self._lock:
            until = self._until.get(key)
        return max(0.0, until - self.clock()) if until is not None else 0.0

    def check(self, key: Hashable) -> None:
        """Raise GateClosed while the gate of `key` is closed."""
        remaining = self.remaining(key)
        if remaining > 0:
            raise GateClosed(key, remaining)

    def close(self, key: Hashable, seconds: float, reason: str = "") -> None:
        """No request for `key` for `seconds` (times `scale`; a longer closing extends it)."""
        seconds *= self.scale
        until = self.clock() + max(0.0, seconds)
        with self._lock:
            if until <= self._until.get(key, 0.0):
                return
            self._until[key] = until
        log.warning("github %s: no requests for %.1f s (%s)", describe(key), seconds, reason)

    @contextmanager
    def writing(self, key: Hashable) -> Iterator[None]:
        """One writer per installation at a time, `write_interval` seconds apart. Blocking."""
        with self._lock:
            writer = self._writers.setdefault(key, threading.Lock())
        with writer:
            if self.write_interval:
                with self._lock:
                    last = self._last_write.get(key)
                if last is not None:
                    wait = last + self.write_interval - self.clock()
                    if wait > 0:
                        self.sleep(wait)
            self.check(key)
            try:
                yield
            finally:
                with self._lock:
                    self._last_write[key] = self.clock()
