"""The shared store for several `serve` replicas: PostgreSQL, same behaviour as the SQLite `Store`.

`TRIAGE_DB=postgresql://…` selects it (see `bot.stores.open_store`). What changes with several
processes on one database:

- Deliveries are deduplicated by the primary key (`INSERT … ON CONFLICT DO NOTHING`), so a
  redelivery that reaches another replica is acknowledged and not processed again.
- A job is claimed with `FOR UPDATE SKIP LOCKED` and a lease (`lease_owner`, `lease_until`). A
  thread of the owning process renews the leases of its running jobs; when a replica dies, its
  leases run out and the next claim by any replica puts those jobs back in the queue.
- One writer per issue: a job is claimed only when it is the oldest unfinished job of its issue
  and no other job of the issue runs, and a partial unique index (one `running` job per issue)
  makes the database refuse anything else. Finishing, retrying and burying name the owner, so a
  replica whose lease was taken over cannot overwrite the new owner's outcome.
- Migrations are versioned like SQLite's and run inside one transaction holding an advisory lock
  per schema, so replicas starting together migrate once.
- While the database cannot be reached, the worker's polls (claim, next due, prune) answer
  "nothing" at once for a few seconds instead of each waiting for a connection, and a job whose
  outcome cannot be recorded is let go: its lease runs out and it is done again.

The API is synchronous, like `Store`: each call is one short transaction on a pooled connection
(psycopg 3 with psycopg_pool). Callers in the event loop make the same brief calls they make on
SQLite; slow work (the GitHub calls) already runs in threads. Times (`next_at`, leases) come from
the replicas' clocks, which are expected to be kept in step (NTP).
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from bot.store import JOB_STATES, IssueState, Job, _job, _like_prefix, issue_key

log = logging.getLogger(__name__)

DEFAULT_JOB_LEASE = 300.0  # seconds a claimed job stays its replica's without a renewal
STATEMENT_TIMEOUT = 15.0  # seconds any one statement may take
OUTAGE_PAUSE = 5.0  # seconds the worker's polls answer "nothing" after the database failed
POOL_WAIT = 10.0  # seconds a call waits for a free connection before failing

# The same versions as bot.store.MIGRATIONS, in PostgreSQL's dialect. Version 1 also carries the
# lease columns and the one-running-job-per-issue index that only a shared store needs.
# Never edit a released one: append a new one (and keep the numbers in step with SQLite's).
MIGRATIONS: list[tuple[int, str]] = [
    (
        1,
        """
        CREATE TABLE deliveries (
            delivery_id TEXT PRIMARY KEY,
            event TEXT NOT NULL,
            action TEXT,
            received_at DOUBLE PRECISION NOT NULL,
            outcome TEXT NOT NULL
        );
        CREATE TABLE jobs (
            id BIGSERIAL PRIMARY KEY,
            delivery_id TEXT,
            kind TEXT NOT NULL,
            issue_key TEXT NOT NULL,
            repo TEXT NOT NULL,
            number BIGINT NOT NULL,
            installation_id BIGINT,
            payload TEXT NOT NULL DEFAULT '{}',
            state TEXT NOT NULL DEFAULT 'queued',
            attempts INTEGER NOT NULL DEFAULT 0,
            next_at DOUBLE PRECISION NOT NULL,
            last_error TEXT,
            received_at DOUBLE PRECISION NOT NULL,
            created_at DOUBLE PRECISION NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL,
            lease_owner TEXT,
            lease_until DOUBLE PRECISION
        );
        CREATE INDEX jobs_state_next ON jobs (state, next_at);
        CREATE INDEX jobs_issue ON jobs (issue_key, state, id);
        CREATE UNIQUE INDEX jobs_one_running_per_issue ON jobs (issue_key)
            WHERE state = 'running';
        CREATE TABLE issue_state (
            repo TEXT NOT NULL,
            number BIGINT NOT NULL,
            comment_id BIGINT,
            labels_added TEXT NOT NULL DEFAULT '[]',
            verdict TEXT,
            record_ids TEXT NOT NULL DEFAULT '[]',
            fingerprint TEXT,
            updated_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (repo, number)
        );
        CREATE TABLE cursors (
            name TEXT PRIMARY KEY,
            value TEXT NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL
        );
        CREATE TABLE feedback (
            platform TEXT NOT NULL,
            subject TEXT NOT NULL,
            user_id TEXT NOT NULL,
            record_id TEXT NOT NULL,
            vote INTEGER NOT NULL,
            at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (platform, subject, user_id)
        );
        CREATE INDEX feedback_record ON feedback (record_id);
        CREATE TABLE discord_replies (
            message_id BIGINT PRIMARY KEY,
            channel_id BIGINT NOT NULL,
            reply_id BIGINT NOT NULL,
            author_id BIGINT NOT NULL,
            record_ids TEXT NOT NULL DEFAULT '[]',
            created_at DOUBLE PRECISION NOT NULL
        );
        CREATE TABLE answers (
            id BIGSERIAL PRIMARY KEY,
            platform TEXT NOT NULL,
            subject TEXT NOT NULL,
            verdict TEXT NOT NULL,
            record_ids TEXT NOT NULL DEFAULT '[]',
            fingerprint TEXT,
            at DOUBLE PRECISION NOT NULL
        );
        CREATE INDEX answers_subject ON answers (platform, subject);
        """,
    ),
    (
        2,
        """
        CREATE TABLE issue_controls (
            repo TEXT NOT NULL,
            number BIGINT NOT NULL,
            ignored INTEGER NOT NULL DEFAULT 0,
            override TEXT,
            show_why INTEGER NOT NULL DEFAULT 0,
            refused INTEGER NOT NULL DEFAULT 0,
            updated_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (repo, number)
        );
        CREATE TABLE commands (
            repo TEXT NOT NULL,
            number BIGINT NOT NULL,
            key TEXT NOT NULL,
            comment_id BIGINT,
            author TEXT,
            name TEXT NOT NULL,
            arg TEXT,
            outcome TEXT NOT NULL,
            at DOUBLE PRECISION NOT NULL,
            seq BIGSERIAL,
            PRIMARY KEY (repo, number, key)
        );
        CREATE TABLE issue_records (
            repo TEXT NOT NULL,
            number BIGINT NOT NULL,
            record_id TEXT NOT NULL,
            position INTEGER NOT NULL DEFAULT 0,
            fingerprint TEXT,
            first_at DOUBLE PRECISION NOT NULL,
            last_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (repo, number, record_id)
        );
        CREATE INDEX issue_records_record ON issue_records (record_id);
        CREATE TABLE issue_open_state (
            repo TEXT NOT NULL,
            number BIGINT NOT NULL,
            state TEXT NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (repo, number)
        );
        CREATE TABLE uncatalogued (
            platform TEXT NOT NULL,
            subject TEXT NOT NULL,
            repo TEXT,
            number BIGINT,
            norm_message TEXT NOT NULL,
            crate TEXT NOT NULL DEFAULT '',
            message TEXT NOT NULL,
            location TEXT,
            first_at DOUBLE PRECISION NOT NULL,
            last_at DOUBLE PRECISION NOT NULL,
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
        ALTER TABLE issue_open_state ADD COLUMN closed_at DOUBLE PRECISION;
        ALTER TABLE issue_open_state ADD COLUMN fixed_by BIGINT;
        """,
    ),
]

# The columns of `jobs` a Job is built from (the lease columns stay inside this module).
_JOB_COLUMNS = (
    "id, delivery_id, kind, issue_key, repo, number, installation_id, payload, state, attempts,"
    " next_at, last_error, received_at, created_at, updated_at"
)
_COMMAND_COLUMNS = "repo, number, key, comment_id, author, name, arg, outcome, at"


def redact_url(url: str) -> str:
    """The URL with its password replaced, for logs, errors and doctor."""
    head, sep, rest = url.partition("://")
    userinfo, at, hostpart = rest.rpartition("@")
    if not sep or not at or ":" not in userinfo:
        return url
    user = userinfo.split(":", 1)[0]
    return f"{head}://{user}:***@{hostpart}"


class PgStore:
    """The bot's PostgreSQL store. `PgStore(url)` connects (and migrates); `close()` closes it."""

    def __init__(
        self,
        url: str,
        *,
        clock: Callable[[], float] = time.time,
        job_lease: float = DEFAULT_JOB_LEASE,
        pool_size: int = 4,
        connect_timeout: float = 10.0,
        pool_wait: float = POOL_WAIT,
    ) -> None:
        self.url = url
        self.path = redact_url(url)  # what `Store.path` is for SQLite: where the data lives
        self.clock = clock
        self.job_lease = float(job_lease)
        # who holds a lease: enough to find the replica in logs and `jobs list`
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._held: set[int] = set()
        self._held_lock = threading.Lock()
        self._renewer: threading.Thread | None = None
        self._closing = threading.Event()
        self._unreachable_until = 0.0
        self._pool = ConnectionPool(
            url,
            min_size=1,
            max_size=max(1, pool_size),
            kwargs={"row_factory": dict_row, "connect_timeout": max(1, int(connect_timeout))},
            configure=_configure,
            check=ConnectionPool.check_connection,
            timeout=pool_wait,
            open=False,
            name="triage-store",
        )
        try:
            self._pool.open(wait=True, timeout=connect_timeout)
        except psycopg.Error as exc:
            self._pool.close()
            raise psycopg.OperationalError(f"cannot connect to {redact_url(url)}: {exc}") from exc
        try:
            self._migrate()
        except BaseException:
            self._pool.close()
            raise

    @classmethod
    def open(cls, url: str) -> PgStore:
        return cls(url)

    def close(self) -> None:
        self._closing.set()
        if self._renewer is not None:
            self._renewer.join(timeout=5)
        self._pool.close()

    def __enter__(self) -> PgStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- plumbing -------------------------------------------------------------------------

    @contextmanager
    def _tx(self) -> Iterator[psycopg.Connection[dict[str, Any]]]:
        """One transaction: committed when the block ends, rolled back on an exception."""
        with self._pool.connection() as conn:
            yield conn

    def _query(self, sql: str, args: Sequence[Any] = ()) -> list[dict[str, Any]]:
        with self._tx() as conn:
            return conn.execute(sql, args).fetchall()

    def _migrate(self) -> None:
        with self._tx() as conn:
            # replicas starting together queue here; the first migrates, the others find it done
            conn.execute(
                "SELECT pg_advisory_xact_lock("
                "hashtext('panic-triage migrate ' || current_schema()))"
            )
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_version"
                " (version INTEGER PRIMARY KEY, applied_at DOUBLE PRECISION)"
            )
            row = conn.execute("SELECT MAX(version) AS v FROM schema_version").fetchone()
            current = int((row or {}).get("v") or 0)
            for version, script in MIGRATIONS:
                if version <= current:
                    continue
                for statement in _statements(script):
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO schema_version (version, applied_at) VALUES (%s, %s)",
                    (version, self.clock()),
                )
                log.info("store %s migrated to schema version %d", self.path, version)

    def schema_version(self) -> int:
        rows = self._query("SELECT MAX(version) AS v FROM schema_version")
        return int(rows[0]["v"] or 0)

    @staticmethod
    def latest_version() -> int:
        return max(version for version, _ in MIGRATIONS)

    def check_writable(self) -> None:
        """Raise psycopg.Error when the database cannot be written (for health checks, doctor)."""
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO cursors (name, value, updated_at) VALUES (%s, %s, %s)"
                " ON CONFLICT (name) DO UPDATE SET value = excluded.value,"
                " updated_at = excluded.updated_at",
                ("_health", "ok", self.clock()),
            )

    def check_integrity(self) -> None:
        """Raise psycopg.Error when the database cannot be read (PostgreSQL keeps its own files
        sound; what can go wrong from here is reaching it)."""
        self._query("SELECT 1 AS ok")

    # -- deliveries and jobs ----------------------------------------------------------------

    def accept_delivery(
        self,
        delivery_id: str,
        event: str,
        action: str | None,
        job: dict[str, Any] | None,
    ) -> bool:
        """Record a delivery and its job in one transaction. False when the id was seen before,
        by this replica or any other."""
        now = self.clock()
        with self._tx() as conn:
            cur = conn.execute(
                "INSERT INTO deliveries (delivery_id, event, action, received_at, outcome)"
                " VALUES (%s, %s, %s, %s, %s) ON CONFLICT (delivery_id) DO NOTHING",
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
        self,
        conn: psycopg.Connection[Any],
        delivery_id: str | None,
        job: dict[str, Any],
        now: float,
    ) -> int:
        row = conn.execute(
            "INSERT INTO jobs (delivery_id, kind, issue_key, repo, number, installation_id,"
            " payload, state, attempts, next_at, received_at, created_at, updated_at)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, 'queued', 0, %s, %s, %s, %s) RETURNING id",
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
        ).fetchone()
        return int(row["id"])

    def delivery_seen(self, delivery_id: str) -> bool:
        return bool(self._query("SELECT 1 FROM deliveries WHERE delivery_id = %s", (delivery_id,)))

    def claim_job(self, exclude_keys: Sequence[str] = ()) -> Job | None:
        """Take the next due job whose issue has no earlier unfinished job and no running job,
        mark it running under this replica's lease. Jobs whose lease ran out are queued again
        first, so a dead replica's work is taken over. None while the database is unreachable."""
        return self._unless_unreachable("claim", None, lambda: self._claim(exclude_keys))

    def _claim(self, exclude_keys: Sequence[str]) -> Job | None:
        now = self.clock()
        try:
            with self._tx() as conn:
                self._requeue_expired(conn, now)
                row = conn.execute(
                    f"SELECT {_JOB_COLUMNS} FROM jobs AS j"
                    " WHERE j.state = 'queued' AND j.next_at <= %s"
                    " AND NOT (j.issue_key = ANY(%s))"
                    " AND NOT EXISTS (SELECT 1 FROM jobs AS k WHERE k.issue_key = j.issue_key"
                    " AND k.id <> j.id AND (k.state = 'running'"
                    " OR (k.state = 'queued' AND k.id < j.id)))"
                    " ORDER BY j.next_at, j.id LIMIT 1 FOR UPDATE SKIP LOCKED",
                    (now, list(exclude_keys)),
                ).fetchone()
                if row is None:
                    return None
                conn.execute(
                    "UPDATE jobs SET state = 'running', lease_owner = %s, lease_until = %s,"
                    " updated_at = %s WHERE id = %s",
                    (self.owner, now + self.job_lease, now, row["id"]),
                )
                job = _job(row, state="running")
                if row["kind"] == "issue":
                    job = self._supersede_later(conn, job, row["issue_key"], now)
        except (psycopg.errors.UniqueViolation, psycopg.errors.DeadlockDetected):
            # another replica started a job of this issue in the meantime: it is theirs
            return None
        with self._held_lock:
            self._held.add(job.id)
        self._start_renewer()
        return job

    def _supersede_later(
        self, conn: psycopg.Connection[Any], job: Job, key: str, now: float
    ) -> Job:
        # A job reads the issue afresh when it runs, so later queued jobs of the same issue add
        # nothing: they are done by this one (what must not be lost is carried over, as SQLite).
        # A row another replica is claiming right now is skipped, not waited for: its claim
        # fails on the one-running-job index, and the job runs after this one.
        later_rows = conn.execute(
            "SELECT id, payload FROM jobs WHERE issue_key = %s AND state = 'queued'"
            " AND kind = 'issue' AND id > %s ORDER BY id FOR UPDATE SKIP LOCKED",
            (key, job.id),
        ).fetchall()
        later = [int(r["id"]) for r in later_rows]
        if not later:
            return job
        conn.execute(
            "UPDATE jobs SET state = 'done', last_error = %s, updated_at = %s WHERE id = ANY(%s)",
            (f"superseded by job {job.id}", now, later),
        )
        payload: dict[str, Any] = {"superseded": later}
        hints = [job.payload] + [json.loads(r["payload"] or "{}") for r in later_rows]
        commands = [c for h in hints for c in h.get("commands") or ()]
        if commands:
            payload["commands"] = commands
        states = [h["issue_state"] for h in hints if h.get("issue_state")]
        if states:
            payload["issue_state"] = states[-1]
        return replace(job, payload=payload)

    def _requeue_expired(self, conn: psycopg.Connection[Any], now: float) -> int:
        cur = conn.execute(
            "UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_until = NULL,"
            " last_error = %s, updated_at = %s WHERE id IN (SELECT id FROM jobs"
            " WHERE state = 'running' AND (lease_until IS NULL OR lease_until < %s)"
            " FOR UPDATE SKIP LOCKED)",
            ("lease expired: its replica stopped; queued again", now, now),
        )
        if cur.rowcount:
            log.warning("requeued %d job(s) whose replica's lease expired", cur.rowcount)
        return cur.rowcount

    def _start_renewer(self) -> None:
        if self._renewer is not None or self.job_lease <= 0:
            return
        self._renewer = threading.Thread(
            target=self._renew_leases, name="triage-store-leases", daemon=True
        )
        self._renewer.start()

    def _renew_leases(self) -> None:
        """Extend this replica's running jobs' leases every third of a lease, until closed."""
        interval = max(0.05, self.job_lease / 3)
        while not self._closing.wait(interval):
            with self._held_lock:
                held = sorted(self._held)
            if not held:
                continue
            try:
                now = self.clock()
                with self._tx() as conn:
                    conn.execute(
                        "UPDATE jobs SET lease_until = %s WHERE id = ANY(%s)"
                        " AND state = 'running' AND lease_owner = %s",
                        (now + self.job_lease, held, self.owner),
                    )
            except Exception as exc:  # the database may be back by the next round
                log.warning("could not renew the leases of jobs %s: %s", held, exc)

    def _release(self, job_id: int) -> None:
        with self._held_lock:
            self._held.discard(job_id)

    def _end_hold(self, job_id: int, sql: str, args: tuple) -> None:
        """Run an UPDATE that ends this replica's hold of a job; say so when it was taken over.

        The lease is let go even when the database cannot be reached: the job's outcome is then
        not recorded, its lease runs out, and the job is done again (answers are idempotent)."""
        try:
            with self._tx() as conn:
                cur = conn.execute(
                    sql + " WHERE id = %s AND (lease_owner IS NULL OR lease_owner = %s)",
                    (*args, job_id, self.owner),
                )
                taken = (
                    cur.rowcount == 0
                    and conn.execute("SELECT 1 FROM jobs WHERE id = %s", (job_id,)).fetchone()
                )
            if taken:
                log.warning(
                    "job %d was taken over by another replica: outcome not recorded", job_id
                )
        finally:
            self._release(job_id)

    def _unless_unreachable(self, what: str, default: Any, call: Callable[[], Any]) -> Any:
        """For the worker's polling calls: while the database cannot be reached, answer
        `default` at once (for OUTAGE_PAUSE seconds after a failure) instead of making every
        poll wait for a connection."""
        if time.monotonic() < self._unreachable_until:
            return default
        try:
            return call()
        except psycopg.OperationalError as exc:
            self._unreachable_until = time.monotonic() + OUTAGE_PAUSE
            log.warning(
                "store %s unreachable (%s): %s; trying again in %.0f s",
                self.path,
                what,
                str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__,
                OUTAGE_PAUSE,
            )
            return default

    def prune(self, older_than: float = 30 * 86400) -> int:
        """Forget finished jobs and old deliveries (redeliveries come within days)."""
        return self._unless_unreachable("prune", 0, lambda: self._prune(older_than))

    def _prune(self, older_than: float) -> int:
        cutoff = self.clock() - older_than
        with self._tx() as conn:
            jobs = conn.execute(
                "DELETE FROM jobs WHERE state = 'done' AND updated_at < %s", (cutoff,)
            ).rowcount
            deliveries = conn.execute(
                "DELETE FROM deliveries WHERE received_at < %s", (cutoff,)
            ).rowcount
        return jobs + deliveries

    def finish_job(self, job_id: int) -> None:
        self._end_hold(
            job_id,
            "UPDATE jobs SET state = 'done', last_error = NULL, lease_owner = NULL,"
            " lease_until = NULL, updated_at = %s",
            (self.clock(),),
        )

    def retry_later(self, job_id: int, delay: float, error: str) -> None:
        now = self.clock()
        self._end_hold(
            job_id,
            "UPDATE jobs SET state = 'queued', attempts = attempts + 1, next_at = %s,"
            " last_error = %s, lease_owner = NULL, lease_until = NULL, updated_at = %s",
            (now + max(0.0, delay), error, now),
        )

    def postpone_job(self, job_id: int, delay: float, reason: str) -> None:
        """Queue a claimed job again after `delay` seconds without counting an attempt (it was
        not tried: its installation's rate limit had not passed)."""
        now = self.clock()
        self._end_hold(
            job_id,
            "UPDATE jobs SET state = 'queued', next_at = %s, last_error = %s,"
            " lease_owner = NULL, lease_until = NULL, updated_at = %s",
            (now + max(0.0, delay), reason, now),
        )

    def oldest_queued_age(self) -> float:
        """Seconds since the oldest job still queued was queued (0 when none is)."""
        rows = self._query("SELECT MIN(created_at) AS oldest FROM jobs WHERE state = 'queued'")
        value = rows[0]["oldest"]
        return 0.0 if value is None else max(0.0, self.clock() - float(value))

    def bury_job(self, job_id: int, error: str) -> None:
        """Move a job to the dead-letter list."""
        self._end_hold(
            job_id,
            "UPDATE jobs SET state = 'dead', attempts = attempts + 1, last_error = %s,"
            " lease_owner = NULL, lease_until = NULL, updated_at = %s",
            (error, self.clock()),
        )

    def recover_running(self) -> int:
        """Put jobs left running by a stopped replica back in the queue. Returns how many.

        Unlike SQLite's (one process), only jobs whose lease has expired: the other replicas'
        running jobs are still theirs."""
        with self._tx() as conn:
            return self._requeue_expired(conn, self.clock())

    def requeue_dead(self, job_id: int | None = None) -> int:
        """Replay dead-lettered jobs (one, or all when job_id is None). Returns how many."""
        now = self.clock()
        with self._tx() as conn:
            if job_id is None:
                cur = conn.execute(
                    "UPDATE jobs SET state = 'queued', attempts = 0, next_at = %s,"
                    " updated_at = %s WHERE state = 'dead'",
                    (now, now),
                )
            else:
                cur = conn.execute(
                    "UPDATE jobs SET state = 'queued', attempts = 0, next_at = %s,"
                    " updated_at = %s WHERE state = 'dead' AND id = %s",
                    (now, now, job_id),
                )
            return cur.rowcount

    def get_job(self, job_id: int) -> Job | None:
        rows = self._query(f"SELECT {_JOB_COLUMNS} FROM jobs WHERE id = %s", (job_id,))
        return _job(rows[0]) if rows else None

    def list_jobs(self, states: Sequence[str] = JOB_STATES, limit: int = 1000) -> list[Job]:
        rows = self._query(
            f"SELECT {_JOB_COLUMNS} FROM jobs WHERE state = ANY(%s) ORDER BY id LIMIT %s",
            (list(states), limit),
        )
        return [_job(row) for row in rows]

    def job_counts(self) -> dict[str, int]:
        rows = self._query("SELECT state, COUNT(*) AS n FROM jobs GROUP BY state")
        counts = dict.fromkeys(JOB_STATES, 0)
        counts.update({row["state"]: int(row["n"]) for row in rows})
        return counts

    def queue_depth(self) -> int:
        rows = self._query("SELECT COUNT(*) AS n FROM jobs WHERE state IN ('queued', 'running')")
        return int(rows[0]["n"])

    def next_due(self) -> float | None:
        """When a claim may next succeed: the earliest due time of a queued job no other job of
        its issue holds back, or the earliest lease to run out."""
        return self._unless_unreachable("next due", None, self._next_due)

    def _next_due(self) -> float | None:
        rows = self._query(
            "SELECT LEAST((SELECT MIN(j.next_at) FROM jobs AS j WHERE j.state = 'queued'"
            " AND NOT EXISTS (SELECT 1 FROM jobs AS k WHERE k.issue_key = j.issue_key"
            " AND k.id <> j.id AND (k.state = 'running' OR (k.state = 'queued' AND k.id < j.id)))),"
            " (SELECT MIN(lease_until) FROM jobs WHERE state = 'running')) AS due"
        )
        value = rows[0]["due"]
        return None if value is None else float(value)

    def set_delivery_outcome(self, delivery_id: str, outcome: str) -> None:
        with self._tx() as conn:
            conn.execute(
                "UPDATE deliveries SET outcome = %s WHERE delivery_id = %s",
                (outcome, delivery_id),
            )

    # -- what the bot did on each issue -------------------------------------------------------

    def get_issue_state(self, repo: str, number: int) -> IssueState | None:
        rows = self._query(
            "SELECT * FROM issue_state WHERE repo = %s AND number = %s", (repo.lower(), number)
        )
        return _issue_state(rows[0]) if rows else None

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
                "INSERT INTO issue_state (repo, number, comment_id, labels_added, verdict,"
                " record_ids, fingerprint, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (repo, number) DO UPDATE SET comment_id = excluded.comment_id,"
                " labels_added = excluded.labels_added, verdict = excluded.verdict,"
                " record_ids = excluded.record_ids, fingerprint = excluded.fingerprint,"
                " updated_at = excluded.updated_at",
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
                " VALUES (%s, %s, %s, %s, %s, %s)",
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
            rows = self._query("SELECT * FROM answers WHERE platform = %s ORDER BY id", (platform,))
        return [{**row, "record_ids": json.loads(row["record_ids"])} for row in rows]

    # -- cursors (polling) ---------------------------------------------------------------------

    def get_cursor(self, name: str) -> str | None:
        rows = self._query("SELECT value FROM cursors WHERE name = %s", (name,))
        return rows[0]["value"] if rows else None

    def set_cursor(self, name: str, value: str) -> None:
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO cursors (name, value, updated_at) VALUES (%s, %s, %s)"
                " ON CONFLICT (name) DO UPDATE SET value = excluded.value,"
                " updated_at = excluded.updated_at",
                (name, value, self.clock()),
            )

    # -- feedback ------------------------------------------------------------------------------

    def record_feedback(
        self, platform: str, subject: str, record_id: str, user_id: str, vote: int
    ) -> None:
        """One vote per (platform, subject, user): a later vote replaces the earlier."""
        vote = 1 if vote > 0 else -1 if vote < 0 else 0
        with self._tx() as conn:
            _put_vote(conn, platform, subject, str(user_id), record_id, vote, self.clock())

    def feedback_counts(self, record_id: str) -> tuple[int, int]:
        """(helpful, wrong) votes for a record."""
        rows = self._query(
            "SELECT COUNT(*) FILTER (WHERE vote > 0) AS helpful,"
            " COUNT(*) FILTER (WHERE vote < 0) AS wrong FROM feedback WHERE record_id = %s",
            (record_id,),
        )
        return int(rows[0]["helpful"]), int(rows[0]["wrong"])

    def feedback_rows(self) -> list[dict[str, Any]]:
        """Every vote: platform, subject, user_id, record_id, vote, at."""
        return self._query(
            "SELECT platform, subject, user_id, record_id, vote, at FROM feedback ORDER BY at"
        )

    def replace_reaction_votes(
        self, subject_prefix: str, votes: Sequence[tuple[str, str, str, int]]
    ) -> None:
        """Set the GitHub reaction votes of one bot comment: (subject, record_id, user, vote)."""
        now = self.clock()
        with self._tx() as conn:
            conn.execute(
                "DELETE FROM feedback WHERE platform = 'github' AND subject LIKE %s ESCAPE '\\'"
                " AND user_id LIKE %s",
                (_like_prefix(subject_prefix), "reaction:%"),
            )
            for subject, record_id, user, vote in votes:
                _put_vote(
                    conn, "github", subject, f"reaction:{user}", record_id,
                    1 if vote > 0 else -1, now,
                )  # fmt: skip

    # -- maintainer controls, commands, history (the maintainer's loop) ------------------------

    def get_controls(self, repo: str, number: int) -> dict[str, Any] | None:
        rows = self._query(
            "SELECT repo, number, ignored, override, show_why, refused, updated_at"
            " FROM issue_controls WHERE repo = %s AND number = %s",
            (repo.lower(), number),
        )
        return rows[0] if rows else None

    def set_controls(self, repo: str, number: int, **changes: Any) -> None:
        """Change some of ignored, override, show_why, refused for one issue."""
        allowed = {"ignored", "override", "show_why", "refused"}
        unknown = set(changes) - allowed
        if unknown:
            raise ValueError(f"unknown controls: {sorted(unknown)}")
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO issue_controls (repo, number, updated_at) VALUES (%s, %s, %s)"
                " ON CONFLICT (repo, number) DO NOTHING",
                (repo.lower(), number, self.clock()),
            )
            for key, value in changes.items():
                if isinstance(value, bool):
                    value = int(value)
                conn.execute(
                    f"UPDATE issue_controls SET {key} = %s, updated_at = %s"
                    " WHERE repo = %s AND number = %s",
                    (value, self.clock(), repo.lower(), number),
                )

    def command_done(self, repo: str, number: int, key: str) -> bool:
        return bool(
            self._query(
                "SELECT 1 FROM commands WHERE repo = %s AND number = %s AND key = %s",
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
            # seq = DEFAULT: a replaced command sorts as a new one, like SQLite's new rowid
            conn.execute(
                "INSERT INTO commands (repo, number, key, comment_id, author, name, arg,"
                " outcome, at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (repo, number, key) DO UPDATE SET comment_id = excluded.comment_id,"
                " author = excluded.author, name = excluded.name, arg = excluded.arg,"
                " outcome = excluded.outcome, at = excluded.at, seq = DEFAULT",
                (repo.lower(), number, key, comment_id, author, name, arg, outcome, self.clock()),
            )

    def list_commands(self, repo: str, number: int) -> list[dict[str, Any]]:
        return self._query(
            f"SELECT {_COMMAND_COLUMNS} FROM commands WHERE repo = %s AND number = %s"
            " ORDER BY at, seq",
            (repo.lower(), number),
        )

    def put_issue_records(
        self, repo: str, number: int, record_ids: Sequence[str], fingerprint: str | None
    ) -> None:
        """The records this issue hits now (an empty list forgets it)."""
        now = self.clock()
        keep = list(dict.fromkeys(record_ids))
        with self._tx() as conn:
            conn.execute(
                "DELETE FROM issue_records WHERE repo = %s AND number = %s"
                " AND NOT (record_id = ANY(%s))",
                (repo.lower(), number, keep),
            )
            for position, record_id in enumerate(keep):
                conn.execute(
                    "INSERT INTO issue_records (repo, number, record_id, position, fingerprint,"
                    " first_at, last_at) VALUES (%s, %s, %s, %s, %s, %s, %s)"
                    " ON CONFLICT (repo, number, record_id) DO UPDATE SET position ="
                    " excluded.position, fingerprint = excluded.fingerprint,"
                    " last_at = excluded.last_at",
                    (repo.lower(), number, record_id, position, fingerprint, now, now),
                )

    def issues_for_records(self, repo: str, record_ids: Sequence[str]) -> list[dict[str, Any]]:
        """Issues of `repo` that hit any of these records, with their open/closed state."""
        if not record_ids:
            return []
        return self._query(
            "SELECT r.repo, r.number, r.record_id, r.position, r.fingerprint, r.first_at,"
            " r.last_at, COALESCE(s.state, 'open') AS state, s.state_reason, s.closed_at,"
            " s.fixed_by FROM issue_records AS r"
            " LEFT JOIN issue_open_state AS s ON s.repo = r.repo AND s.number = r.number"
            " WHERE r.repo = %s AND r.record_id = ANY(%s) ORDER BY r.number",
            (repo.lower(), list(record_ids)),
        )

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
                " fixed_by, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s)"
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
                    " WHERE platform = %s AND subject = %s",
                    (platform, subject),
                ).fetchall()
            }
            conn.execute(
                "DELETE FROM uncatalogued WHERE platform = %s AND subject = %s",
                (platform, subject),
            )
            for item in items:
                key = (item["norm_message"], item.get("crate") or "")
                conn.execute(
                    "INSERT INTO uncatalogued (platform, subject, repo, number, norm_message,"
                    " crate, message, location, first_at, last_at)"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
                    " ON CONFLICT (platform, subject, norm_message, crate) DO UPDATE SET"
                    " repo = excluded.repo, number = excluded.number,"
                    " message = excluded.message, location = excluded.location,"
                    " first_at = excluded.first_at, last_at = excluded.last_at",
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
        return self._query("SELECT * FROM uncatalogued ORDER BY first_at")

    def list_issue_states(self) -> list[IssueState]:
        rows = self._query("SELECT * FROM issue_state ORDER BY repo, number")
        return [_issue_state(row) for row in rows]

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
                "INSERT INTO discord_replies (message_id, channel_id, reply_id, author_id,"
                " record_ids, created_at) VALUES (%s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (message_id) DO UPDATE SET channel_id = excluded.channel_id,"
                " reply_id = excluded.reply_id, author_id = excluded.author_id,"
                " record_ids = excluded.record_ids, created_at = excluded.created_at",
                (message_id, channel_id, reply_id, author_id, json.dumps(record_ids), self.clock()),
            )

    def get_discord_reply(self, message_id: int) -> dict[str, Any] | None:
        rows = self._query("SELECT * FROM discord_replies WHERE message_id = %s", (message_id,))
        if not rows:
            return None
        row = dict(rows[0])
        row["record_ids"] = json.loads(row["record_ids"])
        return row

    def delete_discord_reply(self, message_id: int) -> None:
        with self._tx() as conn:
            conn.execute("DELETE FROM discord_replies WHERE message_id = %s", (message_id,))


def _configure(conn: psycopg.Connection[Any]) -> None:
    # a call that would wait longer fails instead of holding its caller (and its caller's loop)
    conn.execute(f"SET statement_timeout = {int(STATEMENT_TIMEOUT * 1000)}")
    conn.commit()


def _put_vote(
    conn: psycopg.Connection[Any],
    platform: str,
    subject: str,
    user_id: str,
    record_id: str,
    vote: int,
    at: float,
) -> None:
    conn.execute(
        "INSERT INTO feedback (platform, subject, user_id, record_id, vote, at)"
        " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (platform, subject, user_id)"
        " DO UPDATE SET record_id = excluded.record_id, vote = excluded.vote, at = excluded.at",
        (platform, subject, user_id, record_id, vote, at),
    )


def _issue_state(row: dict[str, Any]) -> IssueState:
    return IssueState(
        repo=row["repo"],
        number=row["number"],
        comment_id=row["comment_id"],
        labels_added=tuple(json.loads(row["labels_added"])),
        verdict=row["verdict"],
        record_ids=tuple(json.loads(row["record_ids"])),
        fingerprint=row["fingerprint"],
    )


def _statements(script: str) -> list[str]:
    return [part.strip() for part in script.split(";") if part.strip()]
