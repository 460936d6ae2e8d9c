"""The shared store for several `serve` replicas: PostgreSQL, same behaviour as the SQLite `Store`.

`TRIAGE_DB=postgresql://…` selects it (see `bot.store.open.open_store`). What changes with several
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

The methods that read and write the same way in SQLite live in
`bot.store.interface.TriageStore`; this module holds the pool, the migrations, the claims and
leases, and PostgreSQL's side of the dialect layer.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from typing import Any, TypeVar

import psycopg
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from bot.config.redact import redact_url
from bot.store import schema
from bot.store.interface import JOB_COLUMNS, Job, TriageStore, job_from_row, values_sql

log = logging.getLogger(__name__)
T = TypeVar("T")

DEFAULT_JOB_LEASE = 30.0  # seconds a claimed job stays its replica's without a renewal
STATEMENT_TIMEOUT = 15.0  # seconds any one statement may take
OUTAGE_PAUSE = 5.0  # seconds the worker's polls answer "nothing" after the database failed
POOL_WAIT = 10.0  # seconds a call waits for a free connection before failing

# (version, script) in PostgreSQL's SQL, derived from bot.store.schema like SQLite's: the same
# versions, and the columns only a shared store needs (leases, the commands' order).
MIGRATIONS: list[tuple[int, str]] = schema.scripts("postgres")


class PgStore(TriageStore):
    """The bot's PostgreSQL store. `PgStore(url)` connects (and migrates); `close()` closes it."""

    _commands_order = "seq"

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

    def close(self) -> None:
        self._closing.set()
        if self._renewer is not None:
            self._renewer.join(timeout=5)
        self._pool.close()

    # -- plumbing and PostgreSQL's side of the dialect layer ----------------------------------

    @contextmanager
    def _tx(self) -> Iterator[psycopg.Connection[dict[str, Any]]]:
        """One transaction: committed when the block ends, rolled back on an exception."""
        with self._pool.connection() as conn:
            yield conn

    def _query(self, sql: str, args: Sequence[Any] = ()) -> list[dict[str, Any]]:
        with self._tx() as conn:
            rows: list[dict[str, Any]] = self._run(conn, sql, args).fetchall()
            return rows

    def _sql(self, sql: str) -> str:
        # the shared SQL has no `?` or `%` of its own (a `%` would read as a placeholder)
        return sql.replace("?", "%s")

    def _upsert_sql(
        self, table: str, columns: Sequence[str], key: Sequence[str], renew: Sequence[str] = ()
    ) -> str:
        changes = [f"{c} = excluded.{c}" for c in columns if c not in key]
        changes += [f"{c} = DEFAULT" for c in renew]
        return (
            f"INSERT INTO {table} {values_sql(columns)}"
            f" ON CONFLICT ({', '.join(key)}) DO UPDATE SET {', '.join(changes)}"
        )

    def _insert_new_sql(self, table: str, columns: Sequence[str], key: Sequence[str]) -> str:
        conflict = f"ON CONFLICT ({', '.join(key)}) DO NOTHING"
        return f"INSERT INTO {table} {values_sql(columns)} {conflict}"

    def _in(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        return f"{column} = ANY(?)", [list(values)]

    def _insert_id(self, conn: psycopg.Connection[Any], sql: str, args: Sequence[Any]) -> int:
        return int(self._run(conn, sql + " RETURNING id", args).fetchone()["id"])

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
                for statement in schema.statements(script):
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO schema_version (version, applied_at) VALUES (%s, %s)",
                    (version, self.clock()),
                )
                log.info("store %s migrated to schema version %d", self.path, version)

    @staticmethod
    def latest_version() -> int:
        return max(version for version, _ in MIGRATIONS)

    def check_integrity(self) -> None:
        """Raise psycopg.Error when the database cannot be read (PostgreSQL keeps its own files
        sound; what can go wrong from here is reaching it)."""
        self._query("SELECT 1 AS ok")

    # -- the jobs PostgreSQL runs its own way (replicas: leases, SKIP LOCKED) ----------------

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
                    f"SELECT {JOB_COLUMNS} FROM jobs AS j"
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
                job = job_from_row(row, state="running")
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
        # A row another replica is claiming right now is skipped, not waited for: its claim
        # fails on the one-running-job index, and the job runs after this one.
        later_rows = conn.execute(
            "SELECT id, payload FROM jobs WHERE issue_key = %s AND state = 'queued'"
            " AND kind = 'issue' AND id > %s ORDER BY id FOR UPDATE SKIP LOCKED",
            (key, job.id),
        ).fetchall()
        return self._supersede(conn, job, later_rows, now)

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

    def _end_hold(self, job_id: int, assignments: str, args: Sequence[Any]) -> None:
        """Record how a job this replica claimed ended and let go of its lease; say so when it
        was taken over (then the new owner's outcome stands).

        The lease is let go even when the database cannot be reached: the job's outcome is then
        not recorded, its lease runs out, and the job is done again (answers are idempotent)."""
        try:
            with self._tx() as conn:
                cur = self._run(
                    conn,
                    f"UPDATE jobs SET {assignments}, lease_owner = NULL, lease_until = NULL"
                    " WHERE id = ? AND (lease_owner IS NULL OR lease_owner = ?)",
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

    def _unless_unreachable(self, what: str, default: T, call: Callable[[], T]) -> T:
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
        """Forget finished jobs and old deliveries (redeliveries come within days); 0 while the
        database is unreachable."""
        return self._unless_unreachable("prune", 0, partial(super().prune, older_than))

    def recover_running(self) -> int:
        """Put jobs left running by a stopped replica back in the queue. Returns how many.

        Unlike SQLite's (one process), only jobs whose lease has expired: the other replicas'
        running jobs are still theirs."""
        with self._tx() as conn:
            return self._requeue_expired(conn, self.clock())

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


def _configure(conn: psycopg.Connection[Any]) -> None:
    # a call that would wait longer fails instead of holding its caller (and its caller's loop)
    conn.execute(f"SET statement_timeout = {int(STATEMENT_TIMEOUT * 1000)}")
    conn.commit()
