"""`/healthz` as a small registry of named component checks.

A check is a callable (plain or async) returning a `Status` (or raising, which counts as an
error). Each check runs with a time bound, so a component that hangs (a locked database) makes
`/healthz` answer "unhealthy" at once instead of waiting. A change of a component's status is
logged once, so an operator reading the log sees when and why it went bad.

    health.register("store", store_check)
    health.register("discord", lambda: Status(client.is_ready(), "connected"))
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Status:
    ok: bool
    detail: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    # working, but behind or waiting (stuck jobs, an old queue, GitHub refusing writes): still
    # 200, so a load balancer keeps every replica, with the reason in `detail`
    degraded: bool = False

    def as_json(self) -> dict[str, Any]:
        word = "degraded" if self.ok and self.degraded else "ok"
        shown: dict[str, Any] = {"status": word if self.ok else "error"}
        if self.detail:
            shown["detail"] = self.detail
        shown.update(self.extra)
        return shown


Check = Callable[[], "Status | Awaitable[Status]"]


class Health:
    def __init__(self, timeout: float = 2.0) -> None:
        self.timeout = timeout
        self._checks: dict[str, Check] = {}
        self._slow: dict[str, str] = {}
        self._last: dict[str, bool] = {}

    def register(self, name: str, check: Check, *, slow: str = "") -> None:
        """Add (or replace) the component `name`; `slow` says in words what a check that does
        not answer in time means (a lock, an outage)."""
        self._checks[name] = check
        self._slow[name] = slow

    @property
    def names(self) -> list[str]:
        return list(self._checks)

    async def _run_one(self, name: str, check: Check) -> Status:
        try:
            result = check()
            if inspect.isawaitable(result):
                result = await asyncio.wait_for(result, self.timeout)
        except TimeoutError:
            slow = self._slow.get(name)
            return Status(
                False,
                f"{slow} (no answer within {self.timeout:g} s)"
                if slow
                else f"no answer within {self.timeout:g} s",
            )
        except Exception as exc:  # a failing check is an unhealthy component, not a 500
            return Status(False, f"{type(exc).__name__}: {exc}")
        if not isinstance(result, Status):
            return Status(False, f"check returned {result!r}")
        return result

    async def report(self) -> tuple[bool, dict[str, Any]]:
        """(all ok, the JSON body): `{"status": ..., "components": {name: {...}}}`."""
        names = list(self._checks)
        results = await asyncio.gather(*(self._run_one(n, self._checks[n]) for n in names))
        components = {}
        for name, status in zip(names, results, strict=True):
            components[name] = status.as_json()
            if self._last.get(name, True) != status.ok:
                if status.ok:
                    log.info("health: %s is ok again", name)
                else:
                    log.error("health: %s is unhealthy: %s", name, status.detail)
            self._last[name] = status.ok
        ok = all(status.ok for status in results)
        word = "unhealthy"
        if ok:
            word = "degraded" if any(status.degraded for status in results) else "ok"
        return ok, {"status": word, "components": components}
