"""The embedded default store: one SQLite file shared by the GitHub and Discord sides.

The schema evolves through `MIGRATIONS`, applied in order and recorded in `schema_version`, so an
upgrade keeps the data of the previous version. Access is serialised by one lock around one
connection (WAL mode), which is plenty for a bot and safe from any thread. The methods that read
and write the same way in PostgreSQL live in `bot.store.interface.TriageStore`; this module holds
SQLite's connection, migrations, job claims, its side of the dialect layer, and the checks of a
SQLite file that `bot.store.open` and `bot.store.thread` make.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bot.store import schema
from bot.store.interface import Job, TriageStore, job_from_row, values_sql

# What SQLite's errors say when the file is damaged (or is no database).
CORRUPTION_HINTS = ("malformed", "not a database", "disk i/o error", "file is encrypted")

# (version, script) in SQLite's SQL, derived from bot.store.schema; applied in order.
MIGRATIONS: list[tuple[int, str]] = schema.scripts("sqlite")


class Store(TriageStore):
    """The bot's SQLite store. `Store(path)` opens (and migrates) the file; `close()` closes it."""

    _commands_order = "rowid"

    def __init__(
        self,
        path: str | Path,
        *,
        clock: Callable[[], float] = time.time,
        busy_timeout: float = 5.0,
    ) -> None:
        self.path = Path(path)
        self.clock = clock
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(
            # a short busy timeout: a database locked by another process gives a clear error
            # (503 to a webhook, a retry to a job) instead of a long freeze
            str(path),
            isolation_level=None,
            check_same_thread=False,
            timeout=busy_timeout,
        )
        self._conn.row_factory = sqlite3.Row
        with self._lock:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("PRAGMA foreign_keys=ON")
            self._migrate()

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # -- plumbing and SQLite's side of the dialect layer ---------------------------------------

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def _query(self, sql: str, args: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self._conn.execute(sql, args).fetchall()

    def _upsert_sql(
        self, table: str, columns: Sequence[str], key: Sequence[str], renew: Sequence[str] = ()
    ) -> str:
        # REPLACE deletes the old row and inserts a new one: what it does not name, the rowid
        # too, starts afresh
        return f"INSERT OR REPLACE INTO {table} {values_sql(columns)}"

    def _insert_new_sql(self, table: str, columns: Sequence[str], key: Sequence[str]) -> str:
        return f"INSERT OR IGNORE INTO {table} {values_sql(columns)}"

    def _in(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        return f"{column} IN ({','.join('?' for _ in values)})", list(values)

    def _insert_id(self, conn: sqlite3.Connection, sql: str, args: Sequence[Any]) -> int:
        return int(conn.execute(sql, args).lastrowid or 0)

    def _end_hold(self, job_id: int, assignments: str, args: Sequence[Any]) -> None:
        with self._tx() as conn:
            conn.execute(f"UPDATE jobs SET {assignments} WHERE id = ?", (*args, job_id))

    def _migrate(self) -> None:
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_version"
            " (version INTEGER PRIMARY KEY, applied_at REAL)"
        )
        current = self.schema_version()
        for version, script in MIGRATIONS:
            if version <= current:
                continue
            # executescript commits first; run the statements inside one explicit transaction.
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                for statement in schema.statements(script):
                    self._conn.execute(statement)
                self._conn.execute(
                    "INSERT INTO schema_version (version, applied_at) VALUES (?, ?)",
                    (version, self.clock()),
                )
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    @staticmethod
    def latest_version() -> int:
        return max(version for version, _ in MIGRATIONS)

    def check_integrity(self) -> None:
        """Raise sqlite3.DatabaseError when SQLite finds the file damaged (a quick check)."""
        rows = self._query("PRAGMA quick_check(1)")
        result = rows[0][0] if rows else "no answer"
        if result != "ok":
            raise sqlite3.DatabaseError(f"database disk image is malformed: {result}")

    # -- the jobs SQLite runs its own way (one process: no leases) -----------------------------

    def claim_job(self, exclude_keys: Sequence[str] = ()) -> Job | None:
        """Take the next due job whose issue has no earlier unfinished job, and mark it running."""
        now = self.clock()
        with self._tx() as conn:
            rows = conn.execute(
                "SELECT * FROM jobs AS j WHERE j.state = 'queued' AND j.next_at <= ?"
                " AND NOT EXISTS (SELECT 1 FROM jobs AS k WHERE k.issue_key = j.issue_key"
                " AND k.state IN ('queued', 'running') AND k.id < j.id)"
                " ORDER BY j.next_at, j.id LIMIT 20",
                (now,),
            ).fetchall()
            for row in rows:
                if row["issue_key"] in exclude_keys:
                    continue
                conn.execute(
                    "UPDATE jobs SET state = 'running', updated_at = ? WHERE id = ?",
                    (now, row["id"]),
                )
                job = job_from_row(row, state="running")
                if row["kind"] != "issue":
                    return job
                later_rows = conn.execute(
                    "SELECT id, payload FROM jobs WHERE issue_key = ? AND state = 'queued'"
                    " AND kind = 'issue' AND id > ?",
                    (row["issue_key"], row["id"]),
                ).fetchall()
                return self._supersede(conn, job, later_rows, now)
        return None

    def recover_running(self) -> int:
        """Put jobs left running by a crash back in the queue. Returns how many."""
        with self._tx() as conn:
            cur = conn.execute(
                "UPDATE jobs SET state = 'queued', updated_at = ? WHERE state = 'running'",
                (self.clock(),),
            )
            return cur.rowcount

    def next_due(self) -> float | None:
        rows = self._query("SELECT MIN(next_at) FROM jobs WHERE state = 'queued'")
        value = rows[0][0]
        return None if value is None else float(value)


# -- a SQLite file's problems, told apart ---------------------------------------------------------


def is_corruption(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.DatabaseError) and any(
        hint in str(exc).lower() for hint in CORRUPTION_HINTS
    )


def is_locked(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc).lower()


def quick_check(path: Path, timeout: float) -> str:
    """SQLite's quick check of the file on a fresh read-only connection: "ok", else the first
    problem found. It reads the file, not a cache; in WAL mode it neither waits for nor blocks
    a writer (SQLite puts its -wal and -shm beside the file, as for any reader)."""
    conn = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True, timeout=timeout)
    try:
        row = conn.execute("PRAGMA quick_check(1)").fetchone()
    finally:
        conn.close()
    return str(row[0]) if row else "no answer"
