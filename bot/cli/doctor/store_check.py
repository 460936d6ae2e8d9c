"""doctor's store check: the SQLite file (or its folder) is writable and its schema current, or
the PostgreSQL database answers; read-only, doctor changes nothing."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from bot.cli.doctor.check import FAIL, OK, WARN, Check
from bot.config.redact import redact_url
from bot.config.settings import Settings
from bot.store.open import StoreUnusable, check_sqlite_file, open_store
from bot.store.sqlite import Store


def _schema_version(path: Path) -> int:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    try:
        has = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
        ).fetchone()
        if not has:
            return 0
        return int(conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] or 0)
    finally:
        conn.close()


def _writable_dir(folder: Path) -> bool:
    while not folder.exists():  # the bot creates missing folders
        if folder.parent == folder:
            return False
        folder = folder.parent
    return folder.is_dir() and os.access(folder, os.W_OK | os.X_OK)


def check_store(settings: Settings) -> Check:
    if settings.triage_db_url:
        return check_postgres_store(settings.triage_db_url)
    path = Path(settings.triage_db)
    latest = Store.latest_version()
    if not path.exists():
        if _writable_dir(path.parent):
            return Check(
                "store",
                OK,
                f"{path} does not exist yet; it is created (schema {latest}) at first start",
            )
        return Check(
            "store",
            FAIL,
            f"{path} cannot be created: {path.parent} is not writable",
            fix=f"make {path.parent} writable by the bot's user, or point TRIAGE_DB elsewhere",
        )
    try:
        check_sqlite_file(path)  # what every command checks before it opens the store
    except StoreUnusable as exc:
        return Check("store", FAIL, str(exc))
    try:
        version = _schema_version(path)
    except sqlite3.Error as exc:
        return Check(
            "store",
            FAIL,
            f"{path} is not a readable SQLite database: {exc}",
            fix="point TRIAGE_DB at the bot's store, or move this file away to start afresh",
        )
    if version > latest:
        return Check(
            "store",
            FAIL,
            f"{path} has schema {version}, newer than this version knows ({latest})",
            fix="run the newer triage-bot that wrote it, or restore a backup of the store",
        )
    if not os.access(path, os.W_OK) or not _writable_dir(path.parent):
        return Check(
            "store",
            FAIL,
            f"{path} is not writable (the file and its folder must be, for the WAL journal)",
            fix=f"give the bot's user write access to {path} and {path.parent}",
        )
    if version < latest:
        return Check(
            "store",
            WARN,
            f"{path}: schema {version}, {latest - version} migration(s) pending",
            ["they are applied when the bot next starts; the data is kept"],
            f"back up {path} first if you want to be able to go back to the previous version",
        )
    try:
        with open_store(settings) as store:
            store.check_writable()
            counts = store.job_counts()
    except StoreUnusable as exc:  # damaged, locked: the line names the file and what to do
        return Check("store", FAIL, str(exc))
    except sqlite3.Error as exc:
        return Check(
            "store",
            FAIL,
            f"{path} cannot be written: {exc}",
            fix=f"give the bot's user write access to {path} and {path.parent}; "
            "stop any other process holding a write lock on it",
        )
    details = [
        f"jobs: {counts['queued']} queued, {counts['running']} running, {counts['dead']} dead"
    ]
    if counts["dead"]:
        return Check(
            "store",
            WARN,
            f"{path}: schema {version} (current), writable",
            details,
            "`triage-bot jobs list` shows the dead-lettered jobs; `triage-bot jobs retry --all` "
            "replays them",
        )
    return Check("store", OK, f"{path}: schema {version} (current), writable", details)


def check_postgres_store(url: str) -> Check:
    """TRIAGE_DB=postgresql://…: connect, read the schema version and the job counts, and try a
    write that is rolled back (doctor changes nothing; migrations run when `serve` starts)."""
    try:  # here, not at the top: a driver that does not load is a failed check, not a crash
        import psycopg

        from bot.store.postgres import PgStore
    except ImportError as exc:
        return Check("store", FAIL, f"PostgreSQL driver missing: {exc}", fix="pip install psycopg")
    where = redact_url(url)
    latest = PgStore.latest_version()
    try:
        with psycopg.connect(url, connect_timeout=5) as conn:
            found = conn.execute("SELECT to_regclass('schema_version')").fetchone()
            if found is None or found[0] is None:
                return Check(
                    "store",
                    OK,
                    f"{where}: connected; no schema yet, created (schema {latest}) at first start",
                )
            row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
            version = int(row[0] or 0) if row else 0
            if version > latest:
                return Check(
                    "store",
                    FAIL,
                    f"{where} has schema {version}, newer than this version knows ({latest})",
                    fix="run the newer triage-bot on every replica, or restore a backup",
                )
            if version < latest:
                return Check(
                    "store",
                    WARN,
                    f"{where}: schema {version}, {latest - version} migration(s) pending",
                    ["the first replica to start applies them (once, under an advisory lock)"],
                )
            rows = conn.execute("SELECT state, COUNT(*) FROM jobs GROUP BY state").fetchall()
            counts: dict[str, int] = dict(rows)
            conn.execute(
                "INSERT INTO cursors (name, value, updated_at) VALUES ('_doctor', 'ok', 0)"
                " ON CONFLICT (name) DO NOTHING"
            )
            conn.rollback()
    except psycopg.Error as exc:
        return Check(
            "store",
            FAIL,
            f"{where}: {str(exc).strip().splitlines()[0] if str(exc).strip() else exc}",
            fix="check that PostgreSQL runs and TRIAGE_DB's host, port, user, password and "
            "database are right (and the user may create tables in its schema)",
        )
    details = [
        f"jobs: {counts.get('queued', 0)} queued, {counts.get('running', 0)} running, "
        f"{counts.get('dead', 0)} dead"
    ]
    return Check("store", OK, f"{where}: PostgreSQL, schema {version} (current), writable", details)
