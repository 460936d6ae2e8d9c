"""Every command that opens the store, run as a user runs it, on a SQLite file it cannot use (not
a database, damaged, truncated, locked by another process): one line on stderr naming the file
and what is wrong, exit 2 (the CLI's status for bad input), no traceback, the file untouched."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import PANIC, issue_payload
from test_cli_contract import clean_env, console
from test_server_health import damage, filled_store

from bot.store.sqlite import Store

RESTORE = "restore a backup, or move the file away to start with an empty store"
# nothing listens on port 9 (discard): a command that went past the store check fails to connect
NOWHERE = "http://127.0.0.1:9"


def not_a_database(path: Path) -> None:
    path.write_bytes(bytes(range(256)) * 64)


def overwritten(path: Path) -> None:
    filled_store(path)
    damage(path)


def truncated(path: Path) -> None:
    filled_store(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])


def commands(tmp_path: Path) -> list[list[str]]:
    """Every command that opens the store, with what it needs to get that far."""
    event = tmp_path / "event.json"
    event.write_text(json.dumps(issue_payload("opened", 1, "crash", PANIC)))
    return [
        ["jobs", "list"],
        ["jobs", "retry", "--all"],
        ["stats"],
        ["catalog", "draft", "abc"],
        ["poll", "--repo", "o/r", "--once"],
        ["backfill", "--repo", "o/r"],
        ["handle-event", "--event-path", str(event), "--event-name", "issues"],
    ]


def run(tmp_path: Path, db: Path, argv: list[str]) -> subprocess.CompletedProcess[str]:
    env = clean_env(tmp_path, GITHUB_TOKEN="ghp_unused", GITHUB_API_URL=NOWHERE)
    env["TRIAGE_DB"] = str(db)
    return subprocess.run(
        console(*argv), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )


def refusals(tmp_path: Path, db: Path) -> Iterator[tuple[list[str], str]]:
    """Every command run on `db`, each refusing it: exit 2, the file as it was; its stderr."""
    before = db.read_bytes()
    for argv in commands(tmp_path):
        done = run(tmp_path, db, argv)
        assert done.returncode == 2, (argv, done.stderr)
        assert db.read_bytes() == before, argv
        yield argv, done.stderr


def test_a_file_that_is_no_database_is_named_and_left_alone(tmp_path):
    db = tmp_path / "store.sqlite3"
    not_a_database(db)
    for argv, stderr in refusals(tmp_path, db):
        assert stderr == (
            f"triage-bot: TRIAGE_DB: {db} is not a SQLite database (its header is not "
            f"SQLite's); {RESTORE}\n"
        ), argv
    # SQLite never opened it: no journal beside it
    assert sorted(p.name for p in tmp_path.iterdir()) == ["event.json", "store.sqlite3"]


@pytest.mark.parametrize("spoil", [overwritten, truncated])
def test_a_damaged_database_is_named_and_left_alone(spoil, tmp_path):
    db = tmp_path / "store.sqlite3"
    spoil(db)
    for argv, stderr in refusals(tmp_path, db):
        lines = stderr.splitlines()
        assert len(lines) == 1, (argv, stderr)
        assert lines[0].startswith(f"triage-bot: TRIAGE_DB: {db} is damaged ("), argv
        assert lines[0].endswith(f"); {RESTORE}"), argv


def test_a_database_locked_by_another_process_is_named(tmp_path):
    db = tmp_path / "store.sqlite3"
    with Store(db) as store:
        job = store.enqueue({"repo": "o/r", "number": 7})
        store.claim_job()
        store.bury_job(job, "HTTP 502")
    # read before the lock: closing any descriptor of the file drops this process's locks on it
    before = db.read_bytes()
    holder = sqlite3.connect(db, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")  # another process's write transaction, held
        # reading goes on beside a writer (WAL); the write waits the busy timeout, then gives up
        listed = run(tmp_path, db, ["jobs", "list"])
        assert listed.returncode == 0, listed.stderr
        assert "HTTP 502" in listed.stdout
        done = run(tmp_path, db, ["jobs", "retry", "--all"])
        assert done.returncode == 2, done.stderr
        assert done.stderr == (
            f"triage-bot: TRIAGE_DB: {db} is locked by another process (database is locked); "
            "try again when that process is done, or stop it\n"
        )
    finally:
        holder.close()
    assert db.read_bytes() == before
    with Store(db) as store:
        assert store.get_job(job).state == "dead"


def test_an_empty_file_is_an_empty_store(tmp_path):
    """SQLite takes an empty file for an empty database: not reported as damaged."""
    db = tmp_path / "store.sqlite3"
    db.touch()
    done = run(tmp_path, db, ["jobs", "list"])
    assert (done.returncode, done.stdout, done.stderr) == (0, "no jobs\n", "")
    assert os.path.getsize(db) > 0  # migrated, as any first run does
