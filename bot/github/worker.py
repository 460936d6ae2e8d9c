"""The durable job queue's worker: jobs live in the store, survive restarts, retry with backoff.

- A job left `running` by a crash is queued again at start-up, so an acknowledged delivery is
  always handled.
- Jobs of one issue run in order and never two at once (the store hands out only the oldest
  unfinished job of an issue). Several jobs run at once (`concurrency`), each in a thread with
  an event loop of its own, so a slow store or GitHub never stalls the server's loop. GitHub's
  pacing is kept where it belongs, per installation: one writer per installation at a time,
  writes spaced out, and after a rate-limit answer no request for that installation is sent
  until it passes (`bot.github.gate`); other installations and reads go on meanwhile.
- Every store call of the worker goes through the store's own thread (`bot.store.thread`).
- A write that timed out or lost its connection may have landed: it is retried only after
  `write_settle` seconds, and the retry reads the issue (finding the bot's marker) first.
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
from collections.abc import Awaitable, Callable, Hashable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import requests
from github import GithubException
from github.Requester import Requester

from bot.github.adapter import AmbiguousWrite
from bot.github.gate import GateClosed, InstallationGates
from bot.github.metrics import Metrics
from bot.store.interface import Job, TriageStore
from bot.store.thread import StoreAccess, store_errors

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
    # after a write that may have landed (timeout, reset): wait this long (not scaled) so that
    # GitHub has finished it (it gives up on a request after 10 s) before reading and retrying
    write_settle: float = 30.0

    def backoff(self, attempt: int) -> float:
        delay = min(self.cap, self.base * (2 ** max(0, attempt - 1)))
        return delay * (1 + random.uniform(0, self.jitter))


@dataclass(frozen=True)
class Failure:
    retry: bool
    delay: float  # seconds, before scaling
    reason: str
    rate_limited: bool = False  # GitHub said to wait: the installation's gate closes
    settle: bool = False  # a write may have landed: wait `write_settle` at least
    gated: bool = False  # not tried: the installation's gate was closed (no attempt counted)


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
    if isinstance(exc, GateClosed):
        # `remaining` is real time already: undo the scaling the caller applies
        return Failure(True, exc.remaining / (policy.scale or 1.0), str(exc), gated=True)
    if isinstance(exc, AmbiguousWrite):
        return Failure(True, policy.backoff(attempt), str(exc), settle=True)
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
                return Failure(
                    True, float(retry_after), reason + f" (Retry-After {retry_after})", True
                )
            if remaining == "0" and reset is not None and reset.strip().isdigit():
                wait = max(1.0, float(reset) - now + 1)
                return Failure(True, wait, reason + f" (rate limit resets in {wait:.0f} s)", True)
            if status == 429 or Requester.isSecondaryRateLimitError(message):
                wait = max(policy.secondary_min, policy.backoff(attempt))
                return Failure(True, wait, reason + " (secondary rate limit)", True)
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


GateKey = Callable[[str, "int | None"], Hashable]
STORE_ERROR_PAUSE = 1.0  # seconds between tries while the store is locked or failing


class Worker:
    """Runs jobs from the store with `handler(job)` until stopped."""

    def __init__(
        self,
        store: TriageStore,
        handler: Handler,
        *,
        policy: RetryPolicy | None = None,
        concurrency: int = 8,
        idle_interval: float = 1.0,
        metrics: Metrics | None = None,
        gates: InstallationGates | None = None,
        gate_key: GateKey | None = None,
        allowed: Callable[[str], bool] | None = None,
        isolate: bool = True,
    ) -> None:
        self.store = store
        self.handler = handler
        self.policy = policy or RetryPolicy()
        self.concurrency = max(1, concurrency)
        self.idle_interval = idle_interval
        self.metrics = metrics or Metrics()
        self.gates = gates
        if gates is not None:
            gates.scale = self.policy.scale
        self.gate_key = gate_key or (lambda repo, installation_id: installation_id or "token")
        self.allowed = allowed
        self.isolate = isolate
        self.db = StoreAccess.of(store)
        self._jobs_pool: ThreadPoolExecutor | None = None
        self._wake = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping = False
        self._running: dict[int, tuple[Job, asyncio.Task[None]]] = {}
        self._task: asyncio.Task[None] | None = None
        self.alive = False
        self.stopped_by: str | None = None  # why the worker died, when it did
        self.last_failure: Failure | None = None
        # jobs whose outcome the store refused: released (queued again) once it accepts writes,
        # so a short store failure never holds an issue until a restart
        self._stranded: dict[int, tuple[Job, float]] = {}
        self._refused_since: float | None = None  # GitHub refusing writes since (monotonic)
        self._refused_reason = ""

    def troubles(self, age: float) -> list[str]:
        """Why the worker is behind, in words (for /healthz "degraded"): jobs held by a store
        failure, or GitHub refusing writes for longer than `age` seconds."""
        reasons = []
        if self._stranded:
            oldest = time.monotonic() - min(since for _, since in self._stranded.values())
            reasons.append(
                f"{len(self._stranded)} job(s) stuck for {oldest:.0f} s: their outcome could not"
                " be stored; released when the store accepts writes"
            )
        if self._refused_since is not None and time.monotonic() - self._refused_since > age:
            reasons.append(
                f"GitHub has refused writes for {time.monotonic() - self._refused_since:.0f} s"
                f" ({self._refused_reason})"
            )
        return reasons

    async def _release_stranded(self) -> None:
        for job_id, (job, _) in list(self._stranded.items()):
            await self.db.call(self.store.retry_later, job_id, 0.0, "outcome not stored; run again")
            del self._stranded[job_id]
            log.info(
                "job %d (%s#%d): queued again after a store failure", job_id, job.repo, job.number
            )

    def wake(self) -> None:
        loop = self._loop
        if loop is not None and loop.is_running():
            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if running is not loop:
                loop.call_soon_threadsafe(self._wake.set)
                return
        self._wake.set()

    def start(self) -> asyncio.Task[None]:
        self._loop = asyncio.get_running_loop()
        self.alive = True  # scheduled; `run` clears it when it ends, `_report_end` says why
        self._task = asyncio.create_task(self.run(), name="triage-worker")
        self._task.add_done_callback(self._report_end)
        return self._task

    def _report_end(self, task: asyncio.Task[None]) -> None:
        self.alive = False
        if task.cancelled() or self._stopping:
            return
        exc = task.exception()
        reason = f"{type(exc).__name__}: {exc}" if exc else "it returned"
        self.stopped_by = reason
        log.error("worker stopped: %s; no job runs until the server restarts", reason)

    async def stop(self) -> None:
        """Stop taking jobs and wait for the running ones (they finish or go back to queued)."""
        self._stopping = True
        self._wake.set()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)
        tasks = [task for _, task in self._running.values()]
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        if self._jobs_pool is not None:
            self._jobs_pool.shutdown(wait=False)
            self._jobs_pool = None
        self.alive = False

    async def run(self) -> None:
        self._loop = asyncio.get_running_loop()
        self.alive = True  # from its first step: /healthz right after start says ok
        next_prune = 0.0
        try:
            recovered = await self.db.call(self.store.recover_running)
            if recovered:
                log.info("requeued %d job(s) left running by an earlier process", recovered)
            while not self._stopping:
                try:
                    if time.monotonic() >= next_prune:
                        pruned = await self.db.call(self.store.prune)
                        if pruned:
                            log.info("pruned %d finished job(s) and old deliveries", pruned)
                        next_prune = time.monotonic() + 3600
                    await self._release_stranded()
                    started = await self._fill()
                    if started:
                        continue
                    self._wake.clear()
                    timeout = self.idle_interval
                    due = await self.db.call(self.store.next_due)
                except store_errors() as exc:
                    # locked, damaged, or PostgreSQL unreachable: /healthz says so; try again later
                    log.warning("worker: the store failed (%s); trying again shortly", exc)
                    await asyncio.sleep(STORE_ERROR_PAUSE)
                    continue
                if due is not None:
                    timeout = min(timeout, max(0.0, due - self.store.clock()))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout=max(timeout, 0.005))
        finally:
            self.alive = False

    async def _fill(self) -> bool:
        started = False
        while len(self._running) < self.concurrency and not self._stopping:
            busy = [job.issue_key for job, _ in self._running.values()]
            job = await self.db.call(self.store.claim_job, exclude_keys=busy)
            if job is None:
                break
            if self.allowed is not None and not self.allowed(job.repo):
                log.warning(
                    "job %d (%s#%d): repository not in TRIAGE_REPOS, dropped",
                    job.id,
                    job.repo,
                    job.number,
                )
                await self.db.call(self.store.bury_job, job.id, "repository not in TRIAGE_REPOS")
                self.metrics.inc("triage_jobs_total", outcome="refused")
                continue
            if self.gates is not None:
                wait = self.gates.remaining(self.gate_key(job.repo, job.installation_id))
                if wait > 0:
                    await self._postpone(job, wait, "waiting for the rate limit to pass")
                    continue
            task = asyncio.create_task(self._run_one(job), name=f"job-{job.id}")
            self._running[job.id] = (job, task)
            started = True
        return started

    async def _postpone(self, job: Job, delay: float, reason: str) -> None:
        postpone = getattr(self.store, "postpone_job", None)
        if postpone is not None:
            await self.db.call(postpone, job.id, delay, reason)
        else:  # a store without it: count the wait as an attempt
            await self.db.call(self.store.retry_later, job.id, delay, reason)

    async def _run_one(self, job: Job) -> None:
        try:
            await self.run_job(job)
        except store_errors() as exc:
            # the outcome could not be recorded (either store): the job stays `running` until
            # its lease runs out, then any worker, this one too, takes it again (its writes are
            # found by the bot's marker then)
            log.error("job %d (%s#%d): outcome not stored: %s", job.id, job.repo, job.number, exc)
            self._stranded.setdefault(job.id, (job, time.monotonic()))
        finally:
            self._running.pop(job.id, None)
            self._wake.set()

    async def _call_handler(self, job: Job) -> None:
        if not self.isolate:
            await self.handler(job)
            return
        if self._jobs_pool is None:
            self._jobs_pool = ThreadPoolExecutor(
                max_workers=self.concurrency, thread_name_prefix="triage-job"
            )
        # the handler runs on an event loop of its own, in a thread of the worker's pool: any
        # blocking call in it (the store, analysis) never stalls the server's loop
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._jobs_pool, _run_coroutine, self.handler, job)

    async def run_job(self, job: Job) -> None:
        """Run one claimed job and record its outcome in the store."""
        attempt = job.attempts + 1
        try:
            await self._call_handler(job)
        except asyncio.CancelledError:
            await self.db.call(self.store.retry_later, job.id, 0.0, "cancelled")
            raise
        except Exception as exc:
            failure = classify(exc, attempt, self.policy, time.time())
            self.last_failure = failure
            if isinstance(exc, GithubException | AmbiguousWrite) or failure.rate_limited:
                if self._refused_since is None:
                    self._refused_since = time.monotonic()
                self._refused_reason = failure.reason
            delay = failure.delay * self.policy.scale
            key = self.gate_key(job.repo, job.installation_id)
            if failure.gated:
                # not tried: wait for the gate (real seconds) without counting an attempt
                await self._postpone(job, delay, failure.reason)
                self.metrics.inc("triage_jobs_total", outcome="waiting")
                return
            if failure.rate_limited and self.gates is not None:
                self.gates.close(key, failure.delay, failure.reason)  # scaled by the gates
            if failure.settle:
                delay = max(delay, self.policy.write_settle)
            if failure.retry and attempt < self.policy.max_attempts:
                log.warning(
                    "job %d (%s#%d) attempt %d failed: %s; retrying in %.1f s",
                    job.id,
                    job.repo,
                    job.number,
                    attempt,
                    failure.reason,
                    failure.delay,
                )
                await self.db.call(self.store.retry_later, job.id, delay, failure.reason)
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
                await self.db.call(self.store.bury_job, job.id, failure.reason)
                self.metrics.inc("triage_jobs_total", outcome="dead")
            return
        self._refused_since = None
        await self.db.call(self.store.finish_job, job.id)
        self.metrics.inc("triage_jobs_total", outcome="done")

    async def drain(self, timeout: float = 10.0) -> None:
        """Run until no job is queued or running (for one-shot commands and tests)."""
        deadline = time.monotonic() + timeout
        standalone = self._task is None
        if standalone:
            await self.db.call(self.store.recover_running)
        while True:
            if standalone:
                await self._fill()
            depth = await self.db.call(self.store.queue_depth)
            if not self._running and depth == 0:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"jobs still pending after {timeout} s")
            self.wake()
            await asyncio.sleep(0.005)


def _run_coroutine(handler: Handler, job: Job) -> None:
    asyncio.run(handler(job))  # type: ignore[arg-type]
