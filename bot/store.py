"""The embedded default store: one SQLite file shared by the GitHub and Discord sides.

The schema evolves through `MIGRATIONS`, applied in order and recorded in `schema_version`, so an
upgrade keeps the data of the previous version. Access is serialised by one lock around one
connection (WAL mode), which is plenty for a bot and safe from any thread.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

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
]

JOB_STATES = ("queued", "running", "done", "dead")


@dataclass(frozen=True, slots=True)
class Job:
    id: int
    delivery_id: str | None
    kind: str
    repo: str
    number: int
    installation_id: int | None
    payload: dict[str, Any]
    state: str
    attempts: int
    next_at: float
    last_error: str | None
    received_at: float
    created_at: float
    updated_at: float

    @property
    def issue_key(self) -> str:
        return issue_key(self.repo, self.number)


@dataclass(frozen=True, slots=True)
class IssueState:
    repo: str
    number: int
    comment_id: int | None
    labels_added: tuple[str, ...]
    verdict: str | None
    record_ids: tuple[str, ...]
    fingerprint: str | None


def issue_key(repo: str, number: int) -> str:
    return f"{repo.lower()}#{number}"


class Store:
    """The bot's SQLite store. `Store(path)` opens (and migrates) the file; `close()` closes it."""

    def __init__(self, path: str | Path, *, clock: Callable[[], float] = time.time) -> None:
        self.path = Path(path)
        self.clock = clock
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(
            str(path), isolation_level=None, check_same_thread=False, timeout=30
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

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- plumbing -------------------------------------------------------------------------

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

    def schema_version(self) -> int:
        with self._lock:
            row = self._conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
        return int(row[0] or 0)

    @staticmethod
    def latest_version() -> int:
        return max(version for version, _ in MIGRATIONS)

    def check_writable(self) -> None:
        """Raise sqlite3.Error when the file cannot be written (for health checks and doctor)."""
        with self._tx() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO cursors (name, value, updated_at) VALUES (?, ?, ?)",
                ("_health", "ok", self.clock()),
            )

    # -- deliveries and jobs ----------------------------------------------------------------

    def accept_delivery(
        self,
        delivery_id: str,
        event: str,
        action: str | None,
        job: dict[str, Any] | None,
    ) -> bool:
        """Record a delivery and its job in one transaction. False when the id was seen before.

        `job` holds kind, repo, number, installation_id and payload (a JSON-able dict).
        """
        now = self.clock()
        with self._tx() as conn:
            cur = conn.execute(
                "INSERT OR IGNORE INTO deliveries"
                " (delivery_id, event, action, received_at, outcome) VALUES (?, ?, ?, ?, ?)",
                (delivery_id, event, action, now, "queued" if job else "ignored"),
            )
            if cur.rowcount == 0:
                return False
            if job is not None:
                self._insert_job(conn, delivery_id, job, now)
        return True

    def enqueue(self, job: dict[str, Any], delivery_id: str | None = None) -> int:
        now = self.clock()
        with self._tx() as conn:
            return self._insert_job(conn, delivery_id, job, now)

    def _insert_job(
        self, conn: sqlite3.Connection, delivery_id: str | None, job: dict[str, Any], now: float
    ) -> int:
        cur = conn.execute(
            "INSERT INTO jobs (delivery_id, kind, issue_key, repo, number, installation_id,"
            " payload, state, attempts, next_at, received_at, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, 'queued', 0, ?, ?, ?, ?)",
            (
                delivery_id,
                job.get("kind", "issue"),
                issue_key(job["repo"], int(job["number"])),
                job["repo"],
                int(job["number"]),
                job.get("installation_id"),
                json.dumps(job.get("payload") or {}),
                now,
                float(job.get("received_at") or now),
                now,
                now,
            ),
        )
        return int(cur.lastrowid or 0)

    def delivery_seen(self, delivery_id: str) -> bool:
        return bool(self._query("SELECT 1 FROM deliveries WHERE delivery_id = ?", (delivery_id,)))

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
                # A job reads the issue afresh when it runs, so later queued jobs of the same
                # issue add nothing: they are done by this one.
                later = [
                    r["id"]
                    for r in conn.execute(
                        "SELECT id FROM jobs WHERE issue_key = ? AND state = 'queued'"
                        " AND kind = 'issue' AND id > ?",
                        (row["issue_key"], row["id"]),
                    )
                ]
                if later:
                    marks = ",".join("?" for _ in later)
                    conn.execute(
                        f"UPDATE jobs SET state = 'done', last_error = ?, updated_at = ?"
                        f" WHERE id IN ({marks})",
                        (f"superseded by job {row['id']}", now, *later),
                    )
                    # the hints of one delivery no longer describe all that changed
                    payload = {"superseded": later}
                    job = replace(job, payload=payload)
                return job
        return None

    def prune(self, older_than: float = 30 * 86400) -> int:
        """Forget finished jobs and old deliveries (redeliveries come within days)."""
        cutoff = self.clock() - older_than
        with self._tx() as conn:
            jobs = conn.execute(
                "DELETE FROM jobs WHERE state = 'done' AND updated_at < ?", (cutoff,)
            ).rowcount
            deliveries = conn.execute(
                "DELETE FROM deliveries WHERE received_at < ?", (cutoff,)
            ).rowcount
        return jobs + deliveries

    def finish_job(self, job_id: int) -> None:
        with self._tx() as conn:
            conn.execute(
                "UPDATE jobs SET state = 'done', last_error = NULL, updated_at = ? WHERE id = ?",
                (self.clock(), job_id),
            )

    def retry_later(self, job_id: int, delay: float, error: str) -> None:
        now = self.clock()
        with self._tx() as conn:
            conn.execute(
                "UPDATE jobs SET state = 'queued', attempts = attempts + 1, next_at = ?,"
                " last_error = ?, updated_at = ? WHERE id = ?",
                (now + max(0.0, delay), error, now, job_id),
            )

    def bury_job(self, job_id: int, error: str) -> None:
        """Move a job to the dead-letter list."""
        with self._tx() as conn:
            conn.execute(
                "UPDATE jobs SET state = 'dead', attempts = attempts + 1, last_error = ?,"
                " updated_at = ? WHERE id = ?",
                (error, self.clock(), job_id),
            )

    def recover_running(self) -> int:
        """Put jobs left running by a crash back in the queue. Returns how many."""
        with self._tx() as conn:
            cur = conn.execute(
                "UPDATE jobs SET state = 'queued', updated_at = ? WHERE state = 'running'",
                (self.clock(),),
            )
            return cur.rowcount

    def requeue_dead(self, job_id: int | None = None) -> int:
        """Replay dead-lettered jobs (one, or all when job_id is None). Returns how many."""
        now = self.clock()
        with self._tx() as conn:
            if job_id is None:
                cur = conn.execute(
                    "UPDATE jobs SET state = 'queued', attempts = 0, next_at = ?, updated_at = ?"
                    " WHERE state = 'dead'",
                    (now, now),
                )
            else:
                cur = conn.execute(
                    "UPDATE jobs SET state = 'queued', attempts = 0, next_at = ?, updated_at = ?"
                    " WHERE state = 'dead' AND id = ?",
                    (now, now, job_id),
                )
            return cur.rowcount

    def get_job(self, job_id: int) -> Job | None:
        rows = self._query("SELECT * FROM jobs WHERE id = ?", (job_id,))
        return _job(rows[0]) if rows else None

    def list_jobs(self, states: Sequence[str] = JOB_STATES, limit: int = 1000) -> list[Job]:
        marks = ",".join("?" for _ in states)
        rows = self._query(
            f"SELECT * FROM jobs WHERE state IN ({marks}) ORDER BY id LIMIT ?",
            (*states, limit),
        )
        return [_job(row) for row in rows]

    def job_counts(self) -> dict[str, int]:
        rows = self._query("SELECT state, COUNT(*) AS n FROM jobs GROUP BY state")
        counts = dict.fromkeys(JOB_STATES, 0)
        counts.update({row["state"]: int(row["n"]) for row in rows})
        return counts

    def queue_depth(self) -> int:
        rows = self._query("SELECT COUNT(*) FROM jobs WHERE state IN ('queued', 'running')")
        return int(rows[0][0])

    def next_due(self) -> float | None:
        rows = self._query("SELECT MIN(next_at) FROM jobs WHERE state = 'queued'")
        value = rows[0][0]
        return None if value is None else float(value)

    def set_delivery_outcome(self, delivery_id: str, outcome: str) -> None:
        with self._tx() as conn:
            conn.execute(
                "UPDATE deliveries SET outcome = ? WHERE delivery_id = ?", (outcome, delivery_id)
            )

    # -- what the bot did on each issue -------------------------------------------------------

    def get_issue_state(self, repo: str, number: int) -> IssueState | None:
        rows = self._query(
            "SELECT * FROM issue_state WHERE repo = ? AND number = ?", (repo.lower(), number)
        )
        if not rows:
            return None
        row = rows[0]
        return IssueState(
            repo=row["repo"],
            number=row["number"],
            comment_id=row["comment_id"],
            labels_added=tuple(json.loads(row["labels_added"])),
            verdict=row["verdict"],
            record_ids=tuple(json.loads(row["record_ids"])),
            fingerprint=row["fingerprint"],
        )

    def put_issue_state(
        self,
        repo: str,
        number: int,
        *,
        comment_id: int | None,
        labels_added: Sequence[str],
        verdict: str | None,
        record_ids: Sequence[str],
        fingerprint: str | None,
    ) -> None:
        with self._tx() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO issue_state (repo, number, comment_id, labels_added,"
                " verdict, record_ids, fingerprint, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    repo.lower(),
                    number,
                    comment_id,
                    json.dumps(sorted(set(labels_added))),
                    verdict,
                    json.dumps(list(record_ids)),
                    fingerprint,
                    self.clock(),
                ),
            )

    def record_answer(
        self,
        platform: str,
        subject: str,
        verdict: str,
        record_ids: Sequence[str],
        fingerprint: str | None,
    ) -> None:
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO answers (platform, subject, verdict, record_ids, fingerprint, at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (
                    platform,
                    subject,
                    verdict,
                    json.dumps(list(record_ids)),
                    fingerprint,
                    self.clock(),
                ),
            )

    def list_answers(self, platform: str | None = None) -> list[dict[str, Any]]:
        if platform is None:
            rows = self._query("SELECT * FROM answers ORDER BY id")
        else:
            rows = self._query("SELECT * FROM answers WHERE platform = ? ORDER BY id", (platform,))
        return [{**dict(row), "record_ids": json.loads(row["record_ids"])} for row in rows]

    # -- cursors (polling) ---------------------------------------------------------------------

    def get_cursor(self, name: str) -> str | None:
        rows = self._query("SELECT value FROM cursors WHERE name = ?", (name,))
        return rows[0][0] if rows else None

    def set_cursor(self, name: str, value: str) -> None:
        with self._tx() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO cursors (name, value, updated_at) VALUES (?, ?, ?)",
                (name, value, self.clock()),
            )

    # -- feedback ------------------------------------------------------------------------------

    def record_feedback(
        self, platform: str, subject: str, record_id: str, user_id: str, vote: int
    ) -> None:
        """One vote per (platform, subject, user): a later vote replaces the earlier."""
        vote = 1 if vote > 0 else -1 if vote < 0 else 0
        with self._tx() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO feedback (platform, subject, user_id, record_id, vote, at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (platform, subject, str(user_id), record_id, vote, self.clock()),
            )

    def feedback_counts(self, record_id: str) -> tuple[int, int]:
        """(helpful, wrong) votes for a record."""
        rows = self._query(
            "SELECT COALESCE(SUM(vote > 0), 0), COALESCE(SUM(vote < 0), 0)"
            " FROM feedback WHERE record_id = ?",
            (record_id,),
        )
        return int(rows[0][0]), int(rows[0][1])

    # -- Discord replies -----------------------------------------------------------------------

    def put_discord_reply(
        self,
        message_id: int,
        channel_id: int,
        reply_id: int,
        author_id: int,
        record_ids: list[str],
    ) -> None:
        with self._tx() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO discord_replies (message_id, channel_id, reply_id,"
                " author_id, record_ids, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (message_id, channel_id, reply_id, author_id, json.dumps(record_ids), self.clock()),
            )

    def get_discord_reply(self, message_id: int) -> dict[str, Any] | None:
        rows = self._query("SELECT * FROM discord_replies WHERE message_id = ?", (message_id,))
        if not rows:
            return None
        row = dict(rows[0])
        row["record_ids"] = json.loads(row["record_ids"])
        return row

    def delete_discord_reply(self, message_id: int) -> None:
        with self._tx() as conn:
            conn.execute("DELETE FROM discord_replies WHERE message_id = ?", (message_id,))


def _statements(script: str) -> list[str]:
    return [part.strip() for part in script.split(";") if part.strip()]


def _job(row: sqlite3.Row, state: str | None = None) -> Job:
    return Job(
        id=int(row["id"]),
        delivery_id=row["delivery_id"],
        kind=row["kind"],
        repo=row["repo"],
        number=int(row["number"]),
        installation_id=row["installation_id"],
        payload=json.loads(row["payload"] or "{}"),
        state=state or row["state"],
        attempts=int(row["attempts"]),
        next_at=float(row["next_at"]),
        last_error=row["last_error"],
        received_at=float(row["received_at"]),
        created_at=float(row["created_at"]),
        updated_at=float(row["updated_at"]),
    )
