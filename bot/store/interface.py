"""The store's interface, defined once: `TriageStore`, the base class of both stores.

The SQLite `Store` (bot.store.sqlite) and the PostgreSQL `PgStore` (bot.store.postgres) derive
from it, and what the rest of the bot calls on a store is what `TriageStore` defines. Most of its
methods are written here once, in SQL both databases run, with `?` placeholders; a store's small
dialect layer (`_sql`, `_upsert_sql`, `_insert_new_sql`, `_in`, `_insert_id`, `_end_hold`) says
how its database spells what differs. The abstract methods are what each store does its own way:
connections and transactions, migrations, claiming jobs, what a health check reads.

`Job` and `IssueState` are the records a store hands out.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Self

JOB_STATES = ("queued", "running", "done", "dead")

# The columns of `jobs` a Job is built from (PostgreSQL's lease columns are not among them).
JOB_COLUMNS = (
    "id, delivery_id, kind, issue_key, repo, number, installation_id, payload, state, attempts,"
    " next_at, last_error, received_at, created_at, updated_at"
)
# The columns of the tables whose rows are written whole (by an upsert).
_CURSOR_COLUMNS = ("name", "value", "updated_at")
_ISSUE_STATE_COLUMNS = (
    "repo", "number", "comment_id", "labels_added", "verdict", "record_ids", "fingerprint",
    "updated_at",
)  # fmt: skip
_FEEDBACK_COLUMNS = ("platform", "subject", "user_id", "record_id", "vote", "at")
_COMMAND_COLUMNS = ("repo", "number", "key", "comment_id", "author", "name", "arg", "outcome", "at")
_UNCATALOGUED_COLUMNS = (
    "platform", "subject", "repo", "number", "norm_message", "crate", "message", "location",
    "first_at", "last_at",
)  # fmt: skip
_DISCORD_REPLY_COLUMNS = (
    "message_id", "channel_id", "reply_id", "author_id", "record_ids", "created_at",
)  # fmt: skip
_OUTBOX_COLUMNS = (
    "id, kind, message_id, channel_id, author_id, payload, attempts, next_at, deadline_at,"
    " last_error, created_at"
)


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


class TriageStore(ABC):
    """What the bot asks of its store, and the methods both databases run alike. Rows are read
    by column name (a `sqlite3.Row` and a psycopg dict row both allow it)."""

    clock: Callable[[], float]  # the time every row is stamped with
    path: Path | str  # where the data lives: the SQLite file, or PostgreSQL's URL (no password)
    _commands_order: str  # the column that keeps a replaced command after the older ones

    # -- the dialect layer: each store defines these ------------------------------------------

    @abstractmethod
    def _tx(self) -> AbstractContextManager[Any]:
        """One transaction on a connection: committed when the block ends, else rolled back."""

    @abstractmethod
    def _query(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        """The rows of one read outside a write transaction."""

    def _sql(self, sql: str) -> str:
        """SQL written with `?` placeholders, in this database's placeholder style."""
        return sql

    @abstractmethod
    def _upsert_sql(
        self, table: str, columns: Sequence[str], key: Sequence[str], renew: Sequence[str] = ()
    ) -> str:
        """Insert a row, replacing the row with the same `key`; the `renew` columns, not given,
        start afresh as in a new row."""

    @abstractmethod
    def _insert_new_sql(self, table: str, columns: Sequence[str], key: Sequence[str]) -> str:
        """Insert a row unless one with the same `key` exists (then change nothing)."""

    @abstractmethod
    def _in(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """`column` is one of `values`: the condition and its arguments."""

    @abstractmethod
    def _insert_id(self, conn: Any, sql: str, args: Sequence[Any]) -> int:
        """Run an INSERT into a table with an `id` key and return the new row's id."""

    @abstractmethod
    def _end_hold(self, job_id: int, assignments: str, args: Sequence[Any]) -> None:
        """Record how a job this process claimed ended: `UPDATE jobs SET <assignments>`."""

    def _run(self, conn: Any, sql: str, args: Sequence[Any] = ()) -> Any:
        return conn.execute(self._sql(sql), args)

    def _write(self, sql: str, args: Sequence[Any]) -> None:
        """One statement in a transaction of its own."""
        with self._tx() as conn:
            self._run(conn, sql, args)

    # -- opening and checking ------------------------------------------------------------------

    @abstractmethod
    def close(self) -> None:
        """Close the store's connections (a closed store is not used again)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @staticmethod
    @abstractmethod
    def latest_version() -> int:
        """The schema version this code migrates a database to."""

    def schema_version(self) -> int:
        rows = self._query("SELECT MAX(version) AS v FROM schema_version")
        return int(rows[0]["v"] or 0)

    def check_writable(self) -> None:
        """Raise the driver's error (sqlite3.Error, psycopg.Error) when the store cannot be
        written (for health checks and doctor)."""
        self._write(
            self._upsert_sql("cursors", _CURSOR_COLUMNS, key=("name",)),
            ("_health", "ok", self.clock()),
        )

    @abstractmethod
    def check_integrity(self) -> None:
        """Raise the driver's error when the database is damaged or cannot be read."""

    # -- deliveries and jobs ----------------------------------------------------------------

    def accept_delivery(
        self,
        delivery_id: str,
        event: str,
        action: str | None,
        job: dict[str, Any] | None,
    ) -> bool:
        """Record a delivery and its job in one transaction. False when the id was seen before
        (by this process or, sharing PostgreSQL, by any other).

        `job` holds kind, repo, number, installation_id and payload (a JSON-able dict).
        """
        now = self.clock()
        columns = ("delivery_id", "event", "action", "received_at", "outcome")
        with self._tx() as conn:
            cur = self._run(
                conn,
                self._insert_new_sql("deliveries", columns, key=("delivery_id",)),
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
        self, conn: Any, delivery_id: str | None, job: dict[str, Any], now: float
    ) -> int:
        return self._insert_id(
            conn,
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

    def delivery_seen(self, delivery_id: str) -> bool:
        return bool(self._query("SELECT 1 FROM deliveries WHERE delivery_id = ?", (delivery_id,)))

    def _supersede(self, conn: Any, job: Job, later_rows: Sequence[Any], now: float) -> Job:
        """Mark the later queued jobs of a claimed job's issue done by it (rows with id and
        payload) and carry over what must not be lost.

        A job reads the issue afresh when it runs, so later queued jobs of the same issue add
        nothing, but the hints of one delivery no longer describe all that changed: kept are
        the `/triage` commands, in order, and the issue's latest open/closed state."""
        later = [int(row["id"]) for row in later_rows]
        if not later:
            return job
        in_later, later_args = self._in("id", later)
        self._run(
            conn,
            f"UPDATE jobs SET state = 'done', last_error = ?, updated_at = ? WHERE {in_later}",
            (f"superseded by job {job.id}", now, *later_args),
        )
        payload: dict[str, Any] = {"superseded": later}
        hints = [job.payload] + [json.loads(row["payload"] or "{}") for row in later_rows]
        commands = [c for h in hints for c in h.get("commands") or ()]
        if commands:
            payload["commands"] = commands
        states = [h["issue_state"] for h in hints if h.get("issue_state")]
        if states:
            payload["issue_state"] = states[-1]
        return replace(job, payload=payload)

    @abstractmethod
    def claim_job(self, exclude_keys: Sequence[str] = ()) -> Job | None:
        """Take the next due job whose issue has no earlier unfinished job (none of the issues
        `exclude_keys` names), mark it running and return it; None when no job is due."""

    @abstractmethod
    def recover_running(self) -> int:
        """Put jobs left running by a process that stopped back in the queue. Returns how many."""

    @abstractmethod
    def next_due(self) -> float | None:
        """When a claim may next succeed (None when no job is queued)."""

    def prune(self, older_than: float = 30 * 86400) -> int:
        """Forget finished jobs and old deliveries (redeliveries come within days)."""
        cutoff = self.clock() - older_than
        with self._tx() as conn:
            jobs = self._run(
                conn, "DELETE FROM jobs WHERE state = 'done' AND updated_at < ?", (cutoff,)
            ).rowcount
            deliveries = self._run(
                conn, "DELETE FROM deliveries WHERE received_at < ?", (cutoff,)
            ).rowcount
        return int(jobs + deliveries)

    def finish_job(self, job_id: int) -> None:
        self._end_hold(job_id, "state = 'done', last_error = NULL, updated_at = ?", (self.clock(),))

    def retry_later(self, job_id: int, delay: float, error: str) -> None:
        now = self.clock()
        self._end_hold(
            job_id,
            "state = 'queued', attempts = attempts + 1, next_at = ?, last_error = ?,"
            " updated_at = ?",
            (now + max(0.0, delay), error, now),
        )

    def postpone_job(self, job_id: int, delay: float, reason: str) -> None:
        """Queue a claimed job again after `delay` seconds without counting an attempt (it was
        not tried: its installation's rate limit had not passed)."""
        now = self.clock()
        self._end_hold(
            job_id,
            "state = 'queued', next_at = ?, last_error = ?, updated_at = ?",
            (now + max(0.0, delay), reason, now),
        )

    def bury_job(self, job_id: int, error: str) -> None:
        """Move a job to the dead-letter list."""
        self._end_hold(
            job_id,
            "state = 'dead', attempts = attempts + 1, last_error = ?, updated_at = ?",
            (error, self.clock()),
        )

    def oldest_queued_age(self) -> float:
        """Seconds since the oldest job still queued was queued (0 when none is)."""
        rows = self._query("SELECT MIN(created_at) AS oldest FROM jobs WHERE state = 'queued'")
        value = rows[0]["oldest"]
        return 0.0 if value is None else max(0.0, self.clock() - float(value))

    def requeue_dead(self, job_id: int | None = None) -> int:
        """Replay dead-lettered jobs (one, or all when job_id is None). Returns how many."""
        now = self.clock()
        sql = "UPDATE jobs SET state = 'queued', attempts = 0, next_at = ?, updated_at = ?"
        with self._tx() as conn:
            if job_id is None:
                cur = self._run(conn, sql + " WHERE state = 'dead'", (now, now))
            else:
                cur = self._run(conn, sql + " WHERE state = 'dead' AND id = ?", (now, now, job_id))
            return int(cur.rowcount)

    def get_job(self, job_id: int) -> Job | None:
        rows = self._query(f"SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?", (job_id,))
        return job_from_row(rows[0]) if rows else None

    def list_jobs(self, states: Sequence[str] = JOB_STATES, limit: int = 1000) -> list[Job]:
        in_states, state_args = self._in("state", states)
        rows = self._query(
            f"SELECT {JOB_COLUMNS} FROM jobs WHERE {in_states} ORDER BY id LIMIT ?",
            (*state_args, limit),
        )
        return [job_from_row(row) for row in rows]

    def job_counts(self) -> dict[str, int]:
        rows = self._query("SELECT state, COUNT(*) AS n FROM jobs GROUP BY state")
        counts = dict.fromkeys(JOB_STATES, 0)
        counts.update({row["state"]: int(row["n"]) for row in rows})
        return counts

    def queue_depth(self) -> int:
        rows = self._query("SELECT COUNT(*) AS n FROM jobs WHERE state IN ('queued', 'running')")
        return int(rows[0]["n"])

    def set_delivery_outcome(self, delivery_id: str, outcome: str) -> None:
        self._write(
            "UPDATE deliveries SET outcome = ? WHERE delivery_id = ?",
            (outcome, delivery_id),
        )

    # -- what the bot did on each issue -------------------------------------------------------

    def get_issue_state(self, repo: str, number: int) -> IssueState | None:
        rows = self._query(
            "SELECT * FROM issue_state WHERE repo = ? AND number = ?", (repo.lower(), number)
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
        self._write(
            self._upsert_sql("issue_state", _ISSUE_STATE_COLUMNS, key=("repo", "number")),
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
        self._write(
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

    def list_issue_states(self) -> list[IssueState]:
        rows = self._query("SELECT * FROM issue_state ORDER BY repo, number")
        return [_issue_state(row) for row in rows]

    # -- cursors (polling) ---------------------------------------------------------------------

    def get_cursor(self, name: str) -> str | None:
        rows = self._query("SELECT value FROM cursors WHERE name = ?", (name,))
        return rows[0]["value"] if rows else None

    def set_cursor(self, name: str, value: str) -> None:
        self._write(
            self._upsert_sql("cursors", _CURSOR_COLUMNS, key=("name",)),
            (name, value, self.clock()),
        )

    # -- feedback ------------------------------------------------------------------------------

    def record_feedback(
        self, platform: str, subject: str, record_id: str, user_id: str, vote: int
    ) -> None:
        """One vote per (platform, subject, user): a later vote replaces the earlier."""
        vote = 1 if vote > 0 else -1 if vote < 0 else 0
        with self._tx() as conn:
            self._put_vote(conn, (platform, subject, str(user_id), record_id, vote, self.clock()))

    def _put_vote(self, conn: Any, row: tuple[str, str, str, str, int, float]) -> None:
        """Store one vote: platform, subject, user_id, record_id, vote, at."""
        key = ("platform", "subject", "user_id")
        self._run(conn, self._upsert_sql("feedback", _FEEDBACK_COLUMNS, key=key), row)

    def feedback_counts(self, record_id: str) -> tuple[int, int]:
        """(helpful, wrong) votes for a record."""
        rows = self._query(
            "SELECT COALESCE(SUM(CASE WHEN vote > 0 THEN 1 ELSE 0 END), 0) AS helpful,"
            " COALESCE(SUM(CASE WHEN vote < 0 THEN 1 ELSE 0 END), 0) AS wrong"
            " FROM feedback WHERE record_id = ?",
            (record_id,),
        )
        return int(rows[0]["helpful"]), int(rows[0]["wrong"])

    def feedback_rows(self) -> list[dict[str, Any]]:
        """Every vote: platform, subject, user_id, record_id, vote, at."""
        rows = self._query(f"SELECT {', '.join(_FEEDBACK_COLUMNS)} FROM feedback ORDER BY at")
        return [dict(row) for row in rows]

    def replace_reaction_votes(
        self, subject_prefix: str, votes: Sequence[tuple[str, str, str, int]]
    ) -> None:
        """Set the GitHub reaction votes of one bot comment: (subject, record_id, user, vote).

        Reaction votes are stored with user ids `reaction:LOGIN`, so they never replace a
        `/triage wrong`, and a reaction taken back is a vote taken back."""
        now = self.clock()
        with self._tx() as conn:
            # the patterns are arguments: psycopg would read a `%` in the SQL as a placeholder
            self._run(
                conn,
                "DELETE FROM feedback WHERE platform = 'github' AND subject LIKE ? ESCAPE '\\'"
                " AND user_id LIKE ?",
                (_like_prefix(subject_prefix), "reaction:%"),
            )
            for subject, record_id, user, vote in votes:
                vote = 1 if vote > 0 else -1
                self._put_vote(conn, ("github", subject, f"reaction:{user}", record_id, vote, now))

    # -- maintainer controls, commands, history (the maintainer's loop) ------------------------

    def get_controls(self, repo: str, number: int) -> dict[str, Any] | None:
        rows = self._query(
            "SELECT repo, number, ignored, override, show_why, refused, updated_at"
            " FROM issue_controls WHERE repo = ? AND number = ?",
            (repo.lower(), number),
        )
        return dict(rows[0]) if rows else None

    def set_controls(self, repo: str, number: int, **changes: Any) -> None:
        """Change some of ignored, override, show_why, refused for one issue."""
        allowed = {"ignored", "override", "show_why", "refused"}
        unknown = set(changes) - allowed
        if unknown:
            raise ValueError(f"unknown controls: {sorted(unknown)}")
        with self._tx() as conn:
            self._run(
                conn,
                self._insert_new_sql(
                    "issue_controls", ("repo", "number", "updated_at"), key=("repo", "number")
                ),
                (repo.lower(), number, self.clock()),
            )
            for key, value in changes.items():
                if isinstance(value, bool):
                    value = int(value)
                self._run(
                    conn,
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
        # a replaced command sorts as a new one: its order column starts afresh
        sql = self._upsert_sql(
            "commands",
            _COMMAND_COLUMNS,
            key=("repo", "number", "key"),
            renew=(self._commands_order,),
        )
        self._write(
            sql,
            (repo.lower(), number, key, comment_id, author, name, arg, outcome, self.clock()),
        )

    def list_commands(self, repo: str, number: int) -> list[dict[str, Any]]:
        rows = self._query(
            f"SELECT {', '.join(_COMMAND_COLUMNS)} FROM commands WHERE repo = ? AND number = ?"
            f" ORDER BY at, {self._commands_order}",
            (repo.lower(), number),
        )
        return [dict(row) for row in rows]

    def put_issue_records(
        self, repo: str, number: int, record_ids: Sequence[str], fingerprint: str | None
    ) -> None:
        """The records this issue hits now (an empty list forgets it)."""
        now = self.clock()
        keep = list(dict.fromkeys(record_ids))
        in_keep, keep_args = self._in("record_id", keep)
        with self._tx() as conn:
            self._run(
                conn,
                f"DELETE FROM issue_records WHERE repo = ? AND number = ? AND NOT ({in_keep})",
                (repo.lower(), number, *keep_args),
            )
            for position, record_id in enumerate(keep):
                self._run(
                    conn,
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
        in_records, record_args = self._in("r.record_id", record_ids)
        rows = self._query(
            "SELECT r.repo, r.number, r.record_id, r.position, r.fingerprint, r.first_at,"
            " r.last_at, COALESCE(s.state, 'open') AS state, s.state_reason, s.closed_at,"
            " s.fixed_by FROM issue_records AS r"
            " LEFT JOIN issue_open_state AS s ON s.repo = r.repo AND s.number = r.number"
            f" WHERE r.repo = ? AND {in_records} ORDER BY r.number",
            (repo.lower(), *record_args),
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
        self._write(
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
        key_columns = ("platform", "subject", "norm_message", "crate")
        insert = self._upsert_sql("uncatalogued", _UNCATALOGUED_COLUMNS, key=key_columns)
        with self._tx() as conn:
            old = {
                (row["norm_message"], row["crate"]): row["first_at"]
                for row in self._run(
                    conn,
                    "SELECT norm_message, crate, first_at FROM uncatalogued"
                    " WHERE platform = ? AND subject = ?",
                    (platform, subject),
                ).fetchall()
            }
            self._run(
                conn,
                "DELETE FROM uncatalogued WHERE platform = ? AND subject = ?",
                (platform, subject),
            )
            for item in items:
                key = (item["norm_message"], item.get("crate") or "")
                self._run(
                    conn,
                    insert,
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

    # -- Discord replies -----------------------------------------------------------------------

    def put_discord_reply(
        self,
        message_id: int,
        channel_id: int,
        reply_id: int,
        author_id: int,
        record_ids: list[str],
    ) -> None:
        self._write(
            self._upsert_sql("discord_replies", _DISCORD_REPLY_COLUMNS, key=("message_id",)),
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
            self._run(conn, "DELETE FROM discord_replies WHERE message_id = ?", (message_id,))

    def list_discord_replies(self, limit: int = 1000) -> list[dict[str, Any]]:
        """The newest answers first (for the start-up sweep of orphaned answers)."""
        rows = self._query(
            "SELECT * FROM discord_replies ORDER BY created_at DESC LIMIT ?", (limit,)
        )
        return [{**dict(row), "record_ids": json.loads(row["record_ids"])} for row in rows]

    # -- Discord writes waiting for Discord ----------------------------------------------------

    def queue_discord_write(
        self,
        kind: str,
        message_id: int,
        channel_id: int,
        author_id: int,
        payload: dict[str, Any],
        deadline: float,
        hold: float = 0.0,
    ) -> int:
        """A write to Discord (`reply` to `message_id`, `delete` of an answer), due in `hold`
        seconds (the caller tries it at once meanwhile) and given up `deadline` seconds from
        now."""
        now = self.clock()
        with self._tx() as conn:
            return self._insert_id(
                conn,
                "INSERT INTO discord_outbox (kind, message_id, channel_id, author_id, payload,"
                " attempts, next_at, deadline_at, created_at) VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?)",
                (kind, message_id, channel_id, author_id, json.dumps(payload), now + hold,
                 now + deadline, now),
            )  # fmt: skip

    def claim_discord_writes(self, hold: float, limit: int = 20) -> list[dict[str, Any]]:
        """The writes due now, each held `hold` seconds (not handed out again meanwhile: a
        process that dies mid-write has it tried again once the hold is over)."""
        now = self.clock()
        # a read first: the queue is polled, and mostly empty; no write lock for that
        if not self._query("SELECT 1 FROM discord_outbox WHERE next_at <= ? LIMIT 1", (now,)):
            return []
        with self._tx() as conn:
            rows = self._run(
                conn,
                f"SELECT {_OUTBOX_COLUMNS} FROM discord_outbox WHERE next_at <= ?"
                " ORDER BY next_at, id LIMIT ?",
                (now, limit),
            ).fetchall()
            out = []
            for row in rows:
                held = self._run(
                    conn,
                    "UPDATE discord_outbox SET next_at = ? WHERE id = ? AND next_at = ?",
                    (now + hold, row["id"], row["next_at"]),
                ).rowcount
                if held:
                    out.append({**dict(row), "payload": json.loads(row["payload"] or "{}")})
        return out

    def retry_discord_write(self, write_id: int, delay: float, error: str) -> None:
        now = self.clock()
        self._write(
            "UPDATE discord_outbox SET attempts = attempts + 1, next_at = ?, last_error = ?"
            " WHERE id = ?",
            (now + max(0.0, delay), error[:500], write_id),
        )

    def drop_discord_write(self, write_id: int) -> None:
        self._write("DELETE FROM discord_outbox WHERE id = ?", (write_id,))

    def drop_discord_writes_for(self, message_id: int, kind: str = "reply") -> int:
        """Forget the waiting writes of one kind for a message (its source was deleted)."""
        with self._tx() as conn:
            cur = self._run(
                conn,
                "DELETE FROM discord_outbox WHERE message_id = ? AND kind = ?",
                (message_id, kind),
            )
            return int(cur.rowcount)

    def discord_reply_sent(
        self,
        write_id: int,
        message_id: int,
        channel_id: int,
        reply_id: int,
        author_id: int,
        record_ids: list[str],
    ) -> None:
        """The reply a write queued was posted: remember it and forget the write, at once."""
        with self._tx() as conn:
            self._run(
                conn,
                self._upsert_sql("discord_replies", _DISCORD_REPLY_COLUMNS, key=("message_id",)),
                (message_id, channel_id, reply_id, author_id, json.dumps(record_ids),
                 self.clock()),
            )  # fmt: skip
            self._run(conn, "DELETE FROM discord_outbox WHERE id = ?", (write_id,))

    def discord_write_waiting(self, message_id: int, kind: str = "reply") -> bool:
        return bool(
            self._query(
                "SELECT 1 FROM discord_outbox WHERE message_id = ? AND kind = ?",
                (message_id, kind),
            )
        )

    def discord_write_exists(self, write_id: int) -> bool:
        return bool(self._query("SELECT 1 FROM discord_outbox WHERE id = ?", (write_id,)))

    def discord_writes_waiting(self) -> int:
        rows = self._query("SELECT COUNT(*) AS n FROM discord_outbox")
        return int(rows[0]["n"])


def values_sql(columns: Sequence[str]) -> str:
    """`(a, b) VALUES (?, ?)` for an INSERT of these columns."""
    return f"({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})"


def _like_prefix(prefix: str) -> str:
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped + "%"


def job_from_row(row: Any, state: str | None = None) -> Job:
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


def _issue_state(row: Any) -> IssueState:
    return IssueState(
        repo=row["repo"],
        number=row["number"],
        comment_id=row["comment_id"],
        labels_added=tuple(json.loads(row["labels_added"])),
        verdict=row["verdict"],
        record_ids=tuple(json.loads(row["record_ids"])),
        fingerprint=row["fingerprint"],
    )
