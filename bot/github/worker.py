"""The durable job queue's worker: jobs live in the store, survive restarts, retry with backoff.

- A job left `running` by a crash is queued again at start-up, so an acknowledged delivery is
  always handled.
- Jobs of one issue run in order and never two at once (the store hands out only the oldest
  unfinished job of an issue); by default one job runs at a time, as GitHub asks of integrators.
- Failures are classified: 5xx, timeouts and connection errors back off exponentially; a
  `Retry-After`, a secondary rate limit (403/429 with that message) or an exhausted primary limit
  (`X-RateLimit-Remaining: 0` with `X-RateLimit-Reset`) wait as long as GitHub says; other 4xx
  are permanent. After the last attempt, or a permanent error, the job goes to the dead letters
  (`triage-bot jobs list|retry`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import requests
from github import GithubException
from github.Requester import Requester

from bot.github.metrics import Metrics
from bot.store import Job, Store

log = logging.getLogger(__name__)

Handler = Callable[[Job], Awaitable[None]]


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 8
    base: float = 2.0  # first backoff, seconds; doubles per attempt
    cap: float = 900.0  # longest backoff without a hint from GitHub
    secondary_min: float = 60.0  # GitHub: wait at least a minute after a secondary limit
    scale: float = 1.0  # multiplies every delay; tests make it tiny
    jitter: float = 0.1

    def backoff(self, attempt: int) -> float:
        delay = min(self.cap, self.base * (2 ** max(0, attempt - 1)))
        return delay * (1 + random.uniform(0, self.jitter))


@dataclass(frozen=True)
class Failure:
    retry: bool
    delay: float  # seconds, before scaling
    reason: str


def _header(headers: Mapping[str, Any] | None, name: str) -> str | None:
    if not headers:
        return None
    lower = name.lower()
    for key, value in headers.items():
        if key.lower() == lower:
            return str(value)
    return None


def classify(exc: BaseException, attempt: int, policy: RetryPolicy, now: float) -> Failure:
    """Decide whether and when to retry after `exc` on the given (1-based) attempt."""
    if isinstance(exc, GithubException):
        status = exc.status
        headers = exc.headers
        data = exc.data if isinstance(exc.data, dict) else {}
        message = str(data.get("message") or "")
        retry_after = _header(headers, "Retry-After")
        remaining = _header(headers, "X-RateLimit-Remaining")
        reset = _header(headers, "X-RateLimit-Reset")
        reason = f"HTTP {status}: {message}".strip().rstrip(":")
        if status in (403, 429):
            if retry_after is not None and retry_after.strip().isdigit():
                return Failure(True, float(retry_after), reason + f" (Retry-After {retry_after})")
            if remaining == "0" and reset is not None and reset.strip().isdigit():
                wait = max(1.0, float(reset) - now + 1)
                return Failure(True, wait, reason + f" (rate limit resets in {wait:.0f} s)")
            if status == 429 or Requester.isSecondaryRateLimitError(message):
                wait = max(policy.secondary_min, policy.backoff(attempt))
                return Failure(True, wait, reason + " (secondary rate limit)")
            return Failure(False, 0.0, reason)
        if status >= 500 or status in (408,):
            if retry_after is not None and retry_after.strip().isdigit():
                return Failure(True, float(retry_after), reason)
            return Failure(True, policy.backoff(attempt), reason)
        return Failure(False, 0.0, reason)
    if isinstance(exc, requests.exceptions.RequestException | TimeoutError | ConnectionError):
        return Failure(True, policy.backoff(attempt), f"{type(exc).__name__}: {exc}")
    if isinstance(exc, OSError):
        return Failure(True, policy.backoff(attempt), f"{type(exc).__name__}: {exc}")
    # an unexpected error: retry (it may be transient) but not forever
    return Failure(True, policy.backoff(attempt), f"{type(exc).__name__}: {exc}")


class Worker:
    """Runs jobs from the store with `handler(job)` until stopped."""

    def __init__(
        self,
        store: Store,
        handler: Handler,
        *,
        policy: RetryPolicy | None = None,
        concurrency: int = 1,
        idle_interval: float = 1.0,
        metrics: Metrics | None = None,
    ) -> None:
        self.store = store
        self.handler = handler
        self.policy = policy or RetryPolicy()
        self.concurrency = max(1, concurrency)
        self.idle_interval = idle_interval
        self.metrics = metrics or Metrics()
        self._wake = asyncio.Event()
        self._stopping = False
        self._running: dict[int, tuple[Job, asyncio.Task[None]]] = {}
        self._task: asyncio.Task[None] | None = None
        self.alive = False
        self.last_failure: Failure | None = None

    def wake(self) -> None:
        self._wake.set()

    def start(self) -> asyncio.Task[None]:
        self._task = asyncio.create_task(self.run(), name="triage-worker")
        return self._task

    async def stop(self) -> None:
        """Stop taking jobs and wait for the running ones (they finish or go back to queued)."""
        self._stopping = True
        self._wake.set()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)
        tasks = [task for _, task in self._running.values()]
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        self.alive = False

    async def run(self) -> None:
        recovered = self.store.recover_running()
        if recovered:
            log.info("requeued %d job(s) left running by an earlier process", recovered)
        self.alive = True
        next_prune = 0.0
        try:
            while not self._stopping:
                if time.monotonic() >= next_prune:
                    pruned = self.store.prune()
                    if pruned:
                        log.info("pruned %d finished job(s) and old deliveries", pruned)
                    next_prune = time.monotonic() + 3600
                started = self._fill()
                if started:
                    continue
                self._wake.clear()
                timeout = self.idle_interval
                due = self.store.next_due()
                if due is not None:
                    timeout = min(timeout, max(0.0, due - self.store.clock()))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout=max(timeout, 0.005))
        finally:
            self.alive = False

    def _fill(self) -> bool:
        started = False
        while len(self._running) < self.concurrency and not self._stopping:
            busy = [job.issue_key for job, _ in self._running.values()]
            job = self.store.claim_job(exclude_keys=busy)
            if job is None:
                break
            task = asyncio.create_task(self._run_one(job), name=f"job-{job.id}")
            self._running[job.id] = (job, task)
            started = True
        return started

    async def _run_one(self, job: Job) -> None:
        try:
            await self.run_job(job)
        finally:
            self._running.pop(job.id, None)
            self._wake.set()

    async def run_job(self, job: Job) -> None:
        """Run one claimed job and record its outcome in the store."""
        attempt = job.attempts + 1
        try:
            await self.handler(job)
        except asyncio.CancelledError:
            self.store.retry_later(job.id, 0.0, "cancelled")
            raise
        except Exception as exc:
            failure = classify(exc, attempt, self.policy, time.time())
            self.last_failure = failure
            if failure.retry and attempt < self.policy.max_attempts:
                delay = failure.delay * self.policy.scale
                log.warning(
                    "job %d (%s#%d) attempt %d failed: %s; retrying in %.1f s",
                    job.id,
                    job.repo,
                    job.number,
                    attempt,
                    failure.reason,
                    failure.delay,
                )
                self.store.retry_later(job.id, delay, failure.reason)
                self.metrics.inc("triage_jobs_total", outcome="retry")
            else:
                log.error(
                    "job %d (%s#%d) failed for good after %d attempt(s): %s",
                    job.id,
                    job.repo,
                    job.number,
                    attempt,
                    failure.reason,
                )
                self.store.bury_job(job.id, failure.reason)
                self.metrics.inc("triage_jobs_total", outcome="dead")
            return
        self.store.finish_job(job.id)
        self.metrics.inc("triage_jobs_total", outcome="done")

    async def drain(self, timeout: float = 10.0) -> None:
        """Run until no job is queued or running (for one-shot commands and tests)."""
        deadline = time.monotonic() + timeout
        standalone = self._task is None
        if standalone:
            self.store.recover_running()
        while True:
            if standalone:
                self._fill()
            if not self._running and self.store.queue_depth() == 0:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"jobs still pending after {timeout} s")
            self.wake()
            await asyncio.sleep(0.005)
