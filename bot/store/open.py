"""The one way to open a store, and the one place for the errors opening raises.

`TRIAGE_DB` names either a SQLite file (the embedded default: one process, the Action, the CLI)
or a PostgreSQL URL (`postgresql://…`, several `serve` replicas sharing one database).
`open_store(settings)` opens the one it names; both implementations (`bot.store.sqlite.Store`,
`bot.store.postgres.PgStore`) are a `bot.store.interface.TriageStore` and are tested by one suite
(tests/test_store_contract.py). A SQLite file that cannot be used (no database, damaged, locked)
is `StoreUnusable`, one line naming the file and what to do; PostgreSQL's errors name the URL.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bot.config.settings import Settings
from bot.store.interface import TriageStore
from bot.store.sqlite import Store, is_corruption, is_locked, quick_check


def is_postgres(location: str | Path) -> bool:
    return isinstance(location, str) and location.startswith(("postgresql://", "postgres://"))


def open_store(settings: Settings) -> TriageStore:
    """The store `TRIAGE_DB` names, opened and migrated: the PostgreSQL store for a
    `postgresql://` URL (claimed jobs leased for `TRIAGE_JOB_LEASE` seconds), else the SQLite
    store in that file. A SQLite file that exists is checked first (read-only), so a damaged or
    foreign file is named (StoreUnusable) and left as it is."""
    location = settings.store_location
    if is_postgres(location):
        from bot.store.postgres import PgStore  # psycopg takes 0.2 s to import: only when asked

        return PgStore(str(location), job_lease=settings.triage_job_lease)
    path = Path(location)
    check_sqlite_file(path)
    with store_errors(path):
        return Store(path)


# What a command tells the user to do about a SQLite file it cannot use.
_RESTORE = "restore a backup, or move the file away to start with an empty store"
_WAIT = "try again when that process is done, or stop it"
SQLITE_MAGIC = b"SQLite format 3\x00"


class StoreUnusable(Exception):
    """The store's file cannot be used (not a database, damaged, locked). The message is one
    line naming the file; `bot.cli.main` prints it and exits 2, as for other bad input."""


def describe_sqlite_error(path: Path, exc: BaseException) -> str:
    """One line for the user: which file, what is wrong with it, what to do."""
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
    SQLite touching it; then SQLite's quick check reads the rest, on a read-only connection."""
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
        found = quick_check(path, timeout)
    except sqlite3.Error as exc:
        raise StoreUnusable(describe_sqlite_error(path, exc)) from exc
    if found != "ok":
        raise StoreUnusable(f"TRIAGE_DB: {path} is damaged (quick check: {found}); {_RESTORE}")


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
