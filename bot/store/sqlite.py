"""The embedded default store: one SQLite file shared by the GitHub and Discord sides.

The schema evolves through `MIGRATIONS`, applied in order and recorded in `schema_version`, so an
upgrade keeps the data of the previous version. Access is serialised by one lock around one
connection (WAL mode), which is plenty for a bot and safe from any thread. The methods that read
and write the same way in PostgreSQL live in `bot.store.sql.SqlStore`; this module holds SQLite's
connection, migrations, job claims and its side of the dialect layer.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bot.store.sql import (
    JOB_STATES,
    IssueState,
    Job,
    SqlStore,
    _job,
    _statements,
    _values,
    issue_key,
)

# the rest of the bot imports the store's types from here
__all__ = ["JOB_STATES", "MIGRATIONS", "IssueState", "Job", "Store", "issue_key"]

# Each migration is (version, SQL script). Never edit a released one: append a new one.
MIGRATIONS: list[tuple[int, str]] = [
    (
        1,
        """
        CREATE TABLE deliveries (
            delivery_id TEXT PRIMARY KEY,
            event TEXT NOT NULL,
            action TEXT,
            received_at REAL NOT NULL,
            outcome TEXT NOT NULL
        );
        CREATE TABLE jobs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            delivery_id TEXT,
            kind TEXT NOT NULL,
            issue_key TEXT NOT NULL,
            repo TEXT NOT NULL,
            number INTEGER NOT NULL,
            installation_id INTEGER,
            payload TEXT NOT NULL DEFAULT '{}',
            state TEXT NOT NULL DEFAULT 'queued',
            attempts INTEGER NOT NULL DEFAULT 0,
            next_at REAL NOT NULL,
            last_error TEXT,
            received_at REAL NOT NULL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        );
        CREATE INDEX jobs_state_next ON jobs (state, next_at);
        CREATE INDEX jobs_issue ON jobs (issue_key, state, id);
        CREATE TABLE issue_state (
            repo TEXT NOT NULL,
            number INTEGER NOT NULL,
            comment_id INTEGER,
            labels_added TEXT NOT NULL DEFAULT '[]',
            verdict TEXT,
            record_ids TEXT NOT NULL DEFAULT '[]',
            fingerprint TEXT,
            updated_at REAL NOT NULL,
            PRIMARY KEY (repo, number)
        );
        CREATE TABLE cursors (
            name TEXT PRIMARY KEY,
            value TEXT NOT NULL,
            updated_at REAL NOT NULL
        );
        CREATE TABLE feedback (
            platform TEXT NOT NULL,
            subject TEXT NOT NULL,
            user_id TEXT NOT NULL,
            record_id TEXT NOT NULL,
            vote INTEGER NOT NULL,
            at REAL NOT NULL,
            PRIMARY KEY (platform, subject, user_id)
        );
        CREATE INDEX feedback_record ON feedback (record_id);
        CREATE TABLE discord_replies (
            message_id INTEGER PRIMARY KEY,
            channel_id INTEGER NOT NULL,
            reply_id INTEGER NOT NULL,
            author_id INTEGER NOT NULL,
            record_ids TEXT NOT NULL DEFAULT '[]',
            created_at REAL NOT NULL
        );
        CREATE TABLE answers (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            platform TEXT NOT NULL,
            subject TEXT NOT NULL,
            verdict TEXT NOT NULL,
            record_ids TEXT NOT NULL DEFAULT '[]',
            fingerprint TEXT,
            at REAL NOT NULL
        );
        CREATE INDEX answers_subject ON answers (platform, subject);
        """,
    ),
    (
        2,
        """
        CREATE TABLE issue_controls (
            repo TEXT NOT NULL,
            number INTEGER NOT NULL,
            ignored INTEGER NOT NULL DEFAULT 0,
            override TEXT,
            show_why INTEGER NOT NULL DEFAULT 0,
            refused INTEGER NOT NULL DEFAULT 0,
            updated_at REAL NOT NULL,
            PRIMARY KEY (repo, number)
        );
        CREATE TABLE commands (
            repo TEXT NOT NULL,
            number INTEGER NOT NULL,
            key TEXT NOT NULL,
            comment_id INTEGER,
            author TEXT,
            name TEXT NOT NULL,
            arg TEXT,
            outcome TEXT NOT NULL,
            at REAL NOT NULL,
            PRIMARY KEY (repo, number, key)
        );
        CREATE TABLE issue_records (
            repo TEXT NOT NULL,
            number INTEGER NOT NULL,
            record_id TEXT NOT NULL,
            position INTEGER NOT NULL DEFAULT 0,
            fingerprint TEXT,
            first_at REAL NOT NULL,
            last_at REAL NOT NULL,
            PRIMARY KEY (repo, number, record_id)
        );
        CREATE INDEX issue_records_record ON issue_records (record_id);
        CREATE TABLE issue_open_state (
            repo TEXT NOT NULL,
            number INTEGER NOT NULL,
            state TEXT NOT NULL,
            updated_at REAL NOT NULL,
            PRIMARY KEY (repo, number)
        );
        CREATE TABLE uncatalogued (
            platform TEXT NOT NULL,
            subject TEXT NOT NULL,
            repo TEXT,
            number INTEGER,
            norm_message TEXT NOT NULL,
            crate TEXT NOT NULL DEFAULT '',
            message TEXT NOT NULL,
            location TEXT,
            first_at REAL NOT NULL,
            last_at REAL NOT NULL,
            PRIMARY KEY (platform, subject, norm_message, crate)
        );
        CREATE INDEX uncatalogued_group ON uncatalogued (norm_message, crate);
        """,
    ),
    (
        3,
        # how a closed issue was closed: GitHub's state_reason, when, and the fixing pull request
        """
        ALTER TABLE issue_open_state ADD COLUMN state_reason TEXT;
        ALTER TABLE issue_open_state ADD COLUMN closed_at REAL;
        ALTER TABLE issue_open_state ADD COLUMN fixed_by INTEGER;
        """,
    ),
]


class Store(SqlStore):
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

    @classmethod
    def open(cls, path: str | Path) -> Store:
        return cls(path)

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
        return f"INSERT OR REPLACE INTO {table} {_values(columns)}"

    def _insert_new_sql(self, table: str, columns: Sequence[str], key: Sequence[str]) -> str:
        return f"INSERT OR IGNORE INTO {table} {_values(columns)}"

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
                for statement in _statements(script):
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
                job = _job(row, state="running")
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
