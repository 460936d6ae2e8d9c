"""The store, reached from the event loop: one thread per store, health, corruption and deletion.

Store calls block (SQLite waits up to its busy timeout for another writer's lock), so the server
and the worker make them through `StoreAccess.call`, on one dedicated thread per store: the event
loop never waits on the database, and `/healthz` answers while another process holds the lock.

A SQLite error saying the file is damaged marks the store broken (logged once, shown by
`/healthz` until restart). A database file deleted or replaced while the bot runs is noticed too:
SQLite would go on writing to the deleted file, and everything written would be lost at exit.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import sqlite3
import sys
import time
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from bot.health import Status
from bot.store.interface import TriageStore
from bot.store.sqlite import is_corruption, is_locked, quick_check

log = logging.getLogger(__name__)
T = TypeVar("T")

# How often `/healthz` re-reads the whole file for damage (the bot's own connection keeps pages
# in memory and would not notice); a quick check of a bot's store takes milliseconds.
INTEGRITY_EVERY = 10.0


class StoreUnavailable(Exception):
    """The store is broken or its file is gone: refuse work that needs it (503), do not 500."""


def store_unavailable(exc: BaseException) -> bool:
    """Whether a store call failed because of the database's state (locked, damaged,
    unreachable), not because of a bug: SQLite's OperationalError or a damaged file, or
    PostgreSQL's OperationalError (connection lost, server down, pool exhausted)."""
    if isinstance(exc, sqlite3.OperationalError) or is_corruption(exc):
        return True
    psycopg = sys.modules.get("psycopg")  # imported only where the store is PostgreSQL
    return psycopg is not None and isinstance(exc, psycopg.OperationalError)


def store_errors() -> tuple[type[BaseException], ...]:
    """The exception classes any store's driver raises: sqlite3's, and psycopg's (pool timeouts
    included) once the PostgreSQL store is loaded. For one `except` that covers both stores."""
    errors: list[type[BaseException]] = [sqlite3.Error]
    psycopg = sys.modules.get("psycopg")
    if psycopg is not None:
        errors.append(psycopg.Error)
    return tuple(errors)


_BY_STORE: weakref.WeakKeyDictionary[TriageStore, StoreAccess] = weakref.WeakKeyDictionary()


class StoreAccess:
    def __init__(self, store: TriageStore) -> None:
        self.store = store
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="triage-store")
        self.broken: str | None = None
        self._probe: asyncio.Future[Any] | None = None
        path = store.path
        self.path: Path | None = None
        self._identity: tuple[int, int] | None = None
        self._integrity_at = float("-inf")
        self._integrity: asyncio.Future[None] | None = None
        if isinstance(path, Path) and str(path) != ":memory:":
            self.path = path
            self._identity = _identity(path)

    @classmethod
    def of(cls, store: TriageStore) -> StoreAccess:
        """The one StoreAccess (and thread) of this store object."""
        access = _BY_STORE.get(store)
        if access is None:
            access = cls(store)
            _BY_STORE[store] = access
        return access

    def file_problem(self) -> str | None:
        """Why the store's file is not the one opened at start, or None."""
        if self.path is None or self._identity is None:
            return None
        now = _identity(self.path)
        if now is None:
            return f"the database file {self.path} was deleted while the bot runs"
        if now != self._identity:
            return f"the database file {self.path} was replaced while the bot runs"
        return None

    def problem(self) -> str | None:
        """Why the store cannot be used now (broken or its file gone), or None."""
        return self.broken or self.file_problem()

    def note(self, exc: BaseException) -> None:
        """Remember a corruption error seen by any caller (the first one is logged)."""
        if is_corruption(exc) and self.broken is None:
            where = f" ({self.path})" if self.path else ""
            self.broken = f"the database{where} is damaged: {exc}"
            log.error("store: %s; restore a backup or move it away and restart", self.broken)

    async def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run `fn(*args, **kwargs)` on the store's thread."""
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(
                self._executor, functools.partial(fn, *args, **kwargs)
            )
        except sqlite3.DatabaseError as exc:
            self.note(exc)
            raise

    async def check(self) -> Status:
        """The store's health: broken, file gone, or a write that succeeds (one probe at a time:
        while the database is locked, health checks share the pending probe)."""
        problem = self.problem()
        if problem:
            return Status(False, problem)
        if self._probe is None or self._probe.done():
            self._probe = asyncio.ensure_future(self.call(self.store.check_writable))
            # a probe that outlived the health check's own timeout fails with nobody awaiting
            # it: retrieve its error so asyncio does not log "Task exception was never retrieved"
            self._probe.add_done_callback(_retrieve)
        try:
            await asyncio.shield(self._probe)
        except store_errors() as exc:
            if is_locked(exc):
                return Status(False, f"the database is locked by another connection: {exc}")
            return Status(False, f"{type(exc).__name__}: {exc}")
        self._start_integrity_check()
        if self.broken:
            return Status(False, self.broken)
        return Status(True)

    def _start_integrity_check(self) -> None:
        """Re-read the file for damage in the background (a big file must not make /healthz
        slow); a damage found shows from then on."""
        if self.path is None or time.monotonic() - self._integrity_at < INTEGRITY_EVERY:
            return
        if self._integrity is not None and not self._integrity.done():
            return
        self._integrity_at = time.monotonic()
        self._integrity = asyncio.ensure_future(asyncio.to_thread(_quick_check, self.path))
        self._integrity.add_done_callback(self._integrity_done)

    def _integrity_done(self, future: asyncio.Future[None]) -> None:
        if future.cancelled():
            return
        exc = future.exception()
        if exc is not None and not is_locked(exc):
            self.note(exc)

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
        if _BY_STORE.get(self.store) is self:  # one made apart (`StoreAccess(store)`) leaves
            del _BY_STORE[self.store]  # the store's registered one in place


def _retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


def _quick_check(path: Path) -> None:
    result = quick_check(path, timeout=1.0)
    if result != "ok":
        raise sqlite3.DatabaseError(f"database disk image is malformed: {result}")


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino
