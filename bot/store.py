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

    def check_integrity(self) -> None:
        """Raise sqlite3.DatabaseError when SQLite finds the file damaged (a quick check)."""
        rows = self._query("PRAGMA quick_check(1)")
        result = rows[0][0] if rows else "no answer"
        if result != "ok":
            raise sqlite3.DatabaseError(f"database disk image is malformed: {result}")

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
                later_rows = conn.execute(
                    "SELECT id, payload FROM jobs WHERE issue_key = ? AND state = 'queued'"
                    " AND kind = 'issue' AND id > ?",
                    (row["issue_key"], row["id"]),
                ).fetchall()
                later = [r["id"] for r in later_rows]
                if later:
                    marks = ",".join("?" for _ in later)
                    conn.execute(
                        f"UPDATE jobs SET state = 'done', last_error = ?, updated_at = ?"
                        f" WHERE id IN ({marks})",
                        (f"superseded by job {row['id']}", now, *later),
                    )
                    # the hints of one delivery no longer describe all that changed; what
                    # must not be lost is carried over: `/triage` commands, in order, and the
                    # issue's latest open/closed state
                    payload: dict[str, Any] = {"superseded": later}
                    hints = [job.payload] + [json.loads(r["payload"] or "{}") for r in later_rows]
                    commands = [c for h in hints for c in h.get("commands") or ()]
                    if commands:
                        payload["commands"] = commands
                    states = [h["issue_state"] for h in hints if h.get("issue_state")]
                    if states:
                        payload["issue_state"] = states[-1]
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

    def postpone_job(self, job_id: int, delay: float, reason: str) -> None:
        """Queue a claimed job again after `delay` seconds without counting an attempt (it was
        not tried: its installation's rate limit had not passed)."""
        now = self.clock()
        with self._tx() as conn:
            conn.execute(
                "UPDATE jobs SET state = 'queued', next_at = ?, last_error = ?, updated_at = ?"
                " WHERE id = ?",
                (now + max(0.0, delay), reason, now, job_id),
            )

    def oldest_queued_age(self) -> float:
        """Seconds since the oldest job still queued was queued (0 when none is)."""
        rows = self._query("SELECT MIN(created_at) FROM jobs WHERE state = 'queued'")
        value = rows[0][0]
        return 0.0 if value is None else max(0.0, self.clock() - float(value))

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

    def feedback_rows(self) -> list[dict[str, Any]]:
        """Every vote: platform, subject, user_id, record_id, vote, at."""
        return [dict(row) for row in self._query("SELECT * FROM feedback ORDER BY at")]

    def replace_reaction_votes(
        self, subject_prefix: str, votes: Sequence[tuple[str, str, str, int]]
    ) -> None:
        """Set the GitHub reaction votes of one bot comment: (subject, record_id, user, vote).

        Reaction votes are stored with user ids `reaction:LOGIN`, so they never replace a
        `/triage wrong`, and a reaction taken back is a vote taken back."""
        now = self.clock()
        with self._tx() as conn:
            conn.execute(
                "DELETE FROM feedback WHERE platform = 'github' AND subject LIKE ? ESCAPE '\\'"
                " AND user_id LIKE 'reaction:%'",
                (_like_prefix(subject_prefix),),
            )
            for subject, record_id, user, vote in votes:
                conn.execute(
                    "INSERT OR REPLACE INTO feedback (platform, subject, user_id, record_id, vote,"
                    " at) VALUES ('github', ?, ?, ?, ?, ?)",
                    (subject, f"reaction:{user}", record_id, 1 if vote > 0 else -1, now),
                )

    # -- maintainer controls, commands, history (the maintainer's loop) ------------------------

    def get_controls(self, repo: str, number: int) -> dict[str, Any] | None:
        rows = self._query(
            "SELECT * FROM issue_controls WHERE repo = ? AND number = ?", (repo.lower(), number)
        )
        return dict(rows[0]) if rows else None

    def set_controls(self, repo: str, number: int, **changes: Any) -> None:
        """Change some of ignored, override, show_why, refused for one issue."""
        allowed = {"ignored", "override", "show_why", "refused"}
        unknown = set(changes) - allowed
        if unknown:
            raise ValueError(f"unknown controls: {sorted(unknown)}")
        with self._tx() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO issue_controls (repo, number, updated_at) VALUES (?, ?, ?)",
                (repo.lower(), number, self.clock()),
            )
            for key, value in changes.items():
                if isinstance(value, bool):
                    value = int(value)
                conn.execute(
                    f"UPDATE issue_controls SET {key} = ?, updated_at = ?"
                    " WHERE repo = ? AND number = ?",
                    (value, self.clock(), repo.lower(), number),
                )

    def command_done(self, repo: str, number: int, key: str) -> bool:
        return bool(
            self._query(
                "SELECT 1 FROM commands WHERE repo = ? AND number = ? AND key = ?",
                (repo.lower(), number, key),
            )
        )

    def record_command(
        self,
        repo: str,
        number: int,
        key: str,
        *,
        comment_id: int | None,
        author: str | None,
        name: str,
        arg: str | None,
        outcome: str,
    ) -> None:
        with self._tx() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO commands (repo, number, key, comment_id, author, name,"
                " arg, outcome, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (repo.lower(), number, key, comment_id, author, name, arg, outcome, self.clock()),
            )

    def list_commands(self, repo: str, number: int) -> list[dict[str, Any]]:
        rows = self._query(
            "SELECT * FROM commands WHERE repo = ? AND number = ? ORDER BY at, rowid",
            (repo.lower(), number),
        )
        return [dict(row) for row in rows]

    def put_issue_records(
        self, repo: str, number: int, record_ids: Sequence[str], fingerprint: str | None
    ) -> None:
        """The records this issue hits now (an empty list forgets it)."""
        now = self.clock()
        with self._tx() as conn:
            keep = list(dict.fromkeys(record_ids))
            marks = ",".join("?" for _ in keep) or "''"
            conn.execute(
                f"DELETE FROM issue_records WHERE repo = ? AND number = ?"
                f" AND record_id NOT IN ({marks})",
                (repo.lower(), number, *keep),
            )
            for position, record_id in enumerate(keep):
                conn.execute(
                    "INSERT INTO issue_records (repo, number, record_id, position, fingerprint,"
                    " first_at, last_at) VALUES (?, ?, ?, ?, ?, ?, ?)"
                    " ON CONFLICT (repo, number, record_id) DO UPDATE SET position ="
                    " excluded.position, fingerprint = excluded.fingerprint,"
                    " last_at = excluded.last_at",
                    (repo.lower(), number, record_id, position, fingerprint, now, now),
                )

    def issues_for_records(self, repo: str, record_ids: Sequence[str]) -> list[dict[str, Any]]:
        """Issues of `repo` that hit any of these records, with their open/closed state."""
        if not record_ids:
            return []
        marks = ",".join("?" for _ in record_ids)
        rows = self._query(
            "SELECT r.repo, r.number, r.record_id, r.position, r.fingerprint, r.first_at,"
            " r.last_at, COALESCE(s.state, 'open') AS state, s.state_reason, s.closed_at,"
            " s.fixed_by FROM issue_records AS r"
            " LEFT JOIN issue_open_state AS s ON s.repo = r.repo AND s.number = r.number"
            f" WHERE r.repo = ? AND r.record_id IN ({marks}) ORDER BY r.number",
            (repo.lower(), *record_ids),
        )
        return [dict(row) for row in rows]

    def set_issue_open_state(
        self,
        repo: str,
        number: int,
        state: str,
        state_reason: str | None = None,
        closed_at: float | None = None,
        fixed_by: int | None = None,
    ) -> None:
        """The issue's open/closed state; for a closed one also GitHub's state_reason, when it
        was closed and the pull request that fixed it. Reopening forgets how it was closed; a
        close that leaves any of them out keeps what is known (a webhook's closed event names no
        pull request, backfill's timeline does; the pipeline's hint carries only the state)."""
        if state != "closed":
            state_reason, closed_at, fixed_by = None, None, None
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO issue_open_state (repo, number, state, state_reason, closed_at,"
                " fixed_by, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (repo, number) DO UPDATE SET state = excluded.state,"
                " state_reason = CASE WHEN excluded.state = 'closed'"
                " THEN COALESCE(excluded.state_reason, issue_open_state.state_reason) END,"
                " closed_at = CASE WHEN excluded.state = 'closed'"
                " THEN COALESCE(excluded.closed_at, issue_open_state.closed_at) END,"
                " fixed_by = CASE WHEN excluded.state = 'closed'"
                " THEN COALESCE(excluded.fixed_by, issue_open_state.fixed_by) END,"
                " updated_at = excluded.updated_at",
                (repo.lower(), number, state, state_reason, closed_at, fixed_by, self.clock()),
            )

    def replace_uncatalogued(
        self,
        platform: str,
        subject: str,
        items: Sequence[dict[str, Any]],
        *,
        repo: str | None = None,
        number: int | None = None,
    ) -> None:
        """The uncatalogued panics of one subject now: dicts with norm_message, crate, message,
        location. Rows of this subject not in `items` are forgotten."""
        now = self.clock()
        with self._tx() as conn:
            old = {
                (row["norm_message"], row["crate"]): row["first_at"]
                for row in conn.execute(
                    "SELECT norm_message, crate, first_at FROM uncatalogued"
                    " WHERE platform = ? AND subject = ?",
                    (platform, subject),
                )
            }
            conn.execute(
                "DELETE FROM uncatalogued WHERE platform = ? AND subject = ?", (platform, subject)
            )
            for item in items:
                key = (item["norm_message"], item.get("crate") or "")
                conn.execute(
                    "INSERT OR REPLACE INTO uncatalogued (platform, subject, repo, number,"
                    " norm_message, crate, message, location, first_at, last_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        platform,
                        subject,
                        repo,
                        number,
                        key[0],
                        key[1],
                        item.get("message") or key[0],
                        item.get("location"),
                        old.get(key, now),
                        now,
                    ),
                )

    def list_uncatalogued(self) -> list[dict[str, Any]]:
        return [dict(row) for row in self._query("SELECT * FROM uncatalogued ORDER BY first_at")]

    def list_issue_states(self) -> list[IssueState]:
        rows = self._query("SELECT * FROM issue_state ORDER BY repo, number")
        return [
            IssueState(
                repo=row["repo"],
                number=row["number"],
                comment_id=row["comment_id"],
                labels_added=tuple(json.loads(row["labels_added"])),
                verdict=row["verdict"],
                record_ids=tuple(json.loads(row["record_ids"])),
                fingerprint=row["fingerprint"],
            )
            for row in rows
        ]

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


def _like_prefix(prefix: str) -> str:
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped + "%"


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
