"""The store interface and the one way to open a store.

`TRIAGE_DB` names either a SQLite file (the embedded default: one process, the Action, the CLI)
or a PostgreSQL URL (`postgresql://…`, several `serve` replicas sharing one database). Both
implementations (`bot.store.sqlite.Store`, `bot.store.postgres.PgStore`) behave the same and
are tested by one suite (tests/test_store_contract.py).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from bot.store.sqlite import IssueState, Job


class TriageStore(Protocol):
    """What the bot asks of its store (the public methods of both implementations)."""

    clock: Callable[[], float]

    def close(self) -> None: ...
    def __enter__(self) -> TriageStore: ...
    def __exit__(self, *exc: object) -> None: ...
    def schema_version(self) -> int: ...
    @staticmethod
    def latest_version() -> int: ...
    def check_writable(self) -> None: ...
    def check_integrity(self) -> None: ...

    # deliveries and jobs
    def accept_delivery(
        self, delivery_id: str, event: str, action: str | None, job: dict[str, Any] | None
    ) -> bool: ...
    def enqueue(self, job: dict[str, Any], delivery_id: str | None = None) -> int: ...
    def delivery_seen(self, delivery_id: str) -> bool: ...
    def claim_job(self, exclude_keys: Sequence[str] = ()) -> Job | None: ...
    def prune(self, older_than: float = ...) -> int: ...
    def finish_job(self, job_id: int) -> None: ...
    def retry_later(self, job_id: int, delay: float, error: str) -> None: ...
    def postpone_job(self, job_id: int, delay: float, reason: str) -> None: ...
    def bury_job(self, job_id: int, error: str) -> None: ...
    def oldest_queued_age(self) -> float: ...
    def recover_running(self) -> int: ...
    def requeue_dead(self, job_id: int | None = None) -> int: ...
    def get_job(self, job_id: int) -> Job | None: ...
    def list_jobs(self, states: Sequence[str] = ..., limit: int = 1000) -> list[Job]: ...
    def job_counts(self) -> dict[str, int]: ...
    def queue_depth(self) -> int: ...
    def next_due(self) -> float | None: ...
    def set_delivery_outcome(self, delivery_id: str, outcome: str) -> None: ...

    # what the bot did on each issue
    def get_issue_state(self, repo: str, number: int) -> IssueState | None: ...
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
    ) -> None: ...
    def record_answer(
        self,
        platform: str,
        subject: str,
        verdict: str,
        record_ids: Sequence[str],
        fingerprint: str | None,
    ) -> None: ...
    def list_answers(self, platform: str | None = None) -> list[dict[str, Any]]: ...
    def list_issue_states(self) -> list[IssueState]: ...

    # cursors, feedback
    def get_cursor(self, name: str) -> str | None: ...
    def set_cursor(self, name: str, value: str) -> None: ...
    def record_feedback(
        self, platform: str, subject: str, record_id: str, user_id: str, vote: int
    ) -> None: ...
    def feedback_counts(self, record_id: str) -> tuple[int, int]: ...
    def feedback_rows(self) -> list[dict[str, Any]]: ...
    def replace_reaction_votes(
        self, subject_prefix: str, votes: Sequence[tuple[str, str, str, int]]
    ) -> None: ...

    # maintainer controls, commands, history
    def get_controls(self, repo: str, number: int) -> dict[str, Any] | None: ...
    def set_controls(self, repo: str, number: int, **changes: Any) -> None: ...
    def command_done(self, repo: str, number: int, key: str) -> bool: ...
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
    ) -> None: ...
    def list_commands(self, repo: str, number: int) -> list[dict[str, Any]]: ...
    def put_issue_records(
        self, repo: str, number: int, record_ids: Sequence[str], fingerprint: str | None
    ) -> None: ...
    def issues_for_records(self, repo: str, record_ids: Sequence[str]) -> list[dict[str, Any]]: ...
    def set_issue_open_state(
        self,
        repo: str,
        number: int,
        state: str,
        state_reason: str | None = None,
        closed_at: float | None = None,
        fixed_by: int | None = None,
    ) -> None: ...
    def replace_uncatalogued(
        self,
        platform: str,
        subject: str,
        items: Sequence[dict[str, Any]],
        *,
        repo: str | None = None,
        number: int | None = None,
    ) -> None: ...
    def list_uncatalogued(self) -> list[dict[str, Any]]: ...

    # Discord replies
    def put_discord_reply(
        self, message_id: int, channel_id: int, reply_id: int, author_id: int, record_ids: list[str]
    ) -> None: ...
    def get_discord_reply(self, message_id: int) -> dict[str, Any] | None: ...
    def delete_discord_reply(self, message_id: int) -> None: ...


def is_postgres(location: str | Path) -> bool:
    return isinstance(location, str) and location.startswith(("postgresql://", "postgres://"))


def open_store(location: str | Path, *, job_lease: float | None = None) -> TriageStore:
    """A PostgreSQL store for a `postgresql://` URL, else the SQLite store in that file.

    `job_lease` (seconds) is how long a PostgreSQL replica keeps a claimed job without renewing
    it; SQLite, with one process, has no leases."""
    if is_postgres(location):
        from bot.store.postgres import DEFAULT_JOB_LEASE, PgStore  # psycopg only when asked

        return PgStore(str(location), job_lease=job_lease or DEFAULT_JOB_LEASE)
    from bot.store.sqlite import Store

    return Store(location)


def open_settings_store(settings: Any) -> TriageStore:
    """The store `TRIAGE_DB` names, with the job lease `TRIAGE_JOB_LEASE` sets."""
    return open_store(settings.store_location, job_lease=settings.triage_job_lease)


# What a command tells the user to do about a SQLite file it cannot use.
_RESTORE = "restore a backup, or move the file away to start with an empty store"
_WAIT = "try again when that process is done, or stop it"
SQLITE_MAGIC = b"SQLite format 3\x00"


class StoreUnusable(Exception):
    """The store's file cannot be used (not a database, damaged, locked). The message is one
    line naming the file; `bot.cli.main` prints it and exits 2, as for other bad input."""


def describe_sqlite_error(path: Path, exc: BaseException) -> str:
    """One line for the user: which file, what is wrong with it, what to do."""
    from bot.store.thread import is_corruption, is_locked

    text = str(exc).lower()
    if is_locked(exc) or "busy" in text:
        return f"TRIAGE_DB: {path} is locked by another process ({exc}); {_WAIT}"
    if "not a database" in text or "file is encrypted" in text:
        return f"TRIAGE_DB: {path} is not a SQLite database ({exc}); {_RESTORE}"
    if is_corruption(exc):
        return f"TRIAGE_DB: {path} is damaged ({exc}); {_RESTORE}"
    return f"TRIAGE_DB: {path} cannot be used ({exc})"


def check_sqlite_file(path: Path, timeout: float = 5.0) -> None:
    """StoreUnusable when an existing SQLite file is not a sound database; reads only.

    The header is read by hand first, so a file that is no database at all is named without
    SQLite touching it; then SQLite's quick check reads the rest, on a read-only connection (a
    file in WAL mode gets SQLite's -wal and -shm beside it, as for any reader)."""
    try:
        with path.open("rb") as file:
            head = file.read(len(SQLITE_MAGIC))
    except (FileNotFoundError, IsADirectoryError):
        return  # nothing to check; opening the store creates it or names the problem
    except OSError as exc:
        raise StoreUnusable(f"TRIAGE_DB: {path} cannot be read ({exc.strerror})") from exc
    if not head:
        return  # an empty file is an empty database to SQLite
    if head != SQLITE_MAGIC:
        raise StoreUnusable(
            f"TRIAGE_DB: {path} is not a SQLite database (its header is not SQLite's); {_RESTORE}"
        )
    try:
        conn = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True, timeout=timeout)
        try:
            row = conn.execute("PRAGMA quick_check(1)").fetchone()
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise StoreUnusable(describe_sqlite_error(path, exc)) from exc
    if not row or row[0] != "ok":
        found = row[0] if row else "no answer"
        raise StoreUnusable(f"TRIAGE_DB: {path} is damaged (quick check: {found}); {_RESTORE}")


def open_command_store(settings: Any) -> TriageStore:
    """The store `TRIAGE_DB` names, for a command: a SQLite file that exists is checked first
    (read-only), so a damaged or foreign file is named (StoreUnusable) and left as it is."""
    location = settings.store_location
    if is_postgres(location):
        return open_settings_store(settings)
    path = Path(location)
    check_sqlite_file(path)
    with store_errors(path):
        return open_settings_store(settings)


@contextmanager
def store_errors(location: str | Path) -> Iterator[None]:
    """SQLite errors inside the block become StoreUnusable naming the file at `location` (a
    database locked by another process shows up here, at a write); other errors pass."""
    try:
        yield
    except sqlite3.Error as exc:
        if is_postgres(location):
            raise
        raise StoreUnusable(describe_sqlite_error(Path(location), exc)) from exc
