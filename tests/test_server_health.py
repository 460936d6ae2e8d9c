"""/healthz tells the truth, and never waits on the database: a lock held by another process, a
damaged or deleted database file, a dead worker; a damaged TRIAGE_DB at start is one clear error."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sqlite3
import sys
import time

import pytest
from harness import PANIC, REPO, Harness, bot_comments, issue_payload

from bot.cli import run
from bot.cli import service as commands
from bot.config.settings import NAMES, Settings, SettingsError
from bot.health import Health, Status
from bot.server.http import WebhookLimits, open_store
from bot.store.sqlite import Store


async def healthz(h: Harness) -> tuple[int, dict, float]:
    started = time.monotonic()
    async with h.session.get(h.server.make_url("/healthz")) as response:
        body = await response.json()
        return response.status, body, time.monotonic() - started


# --- the registry ----------------------------------------------------------------------------


async def test_health_registry_runs_each_check_with_a_time_bound(caplog):
    health = Health(timeout=0.3)
    state = {"ok": True}

    async def hangs() -> Status:
        await asyncio.sleep(30)
        return Status(True)

    def raises() -> Status:
        raise RuntimeError("no connection")

    health.register("plain", lambda: Status(state["ok"], "" if state["ok"] else "gone"))
    ok, report = await health.report()
    assert ok and report == {"status": "ok", "components": {"plain": {"status": "ok"}}}

    health.register("hangs", hangs)
    health.register("raises", raises)
    state["ok"] = False
    started = time.monotonic()
    with caplog.at_level(logging.ERROR, logger="bot.health"):
        ok, report = await health.report()
        await health.report()  # a second report logs nothing new
    assert time.monotonic() - started < 2
    assert not ok and report["status"] == "unhealthy"
    assert report["components"]["plain"] == {"status": "error", "detail": "gone"}
    assert "no answer within 0.3 s" in report["components"]["hangs"]["detail"]
    assert report["components"]["raises"]["detail"] == "RuntimeError: no connection"
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert sorted(errors) == [
        "health: hangs is unhealthy: no answer within 0.3 s",
        "health: plain is unhealthy: gone",
        "health: raises is unhealthy: RuntimeError: no connection",
    ]


async def test_healthz_lists_each_component(harness):
    status, body, _ = await healthz(harness)
    assert status == 200
    assert body["status"] == "ok"
    assert body["components"] == {
        "store": {"status": "ok"},
        "worker": {"status": "ok"},
        # an adapter without credentials stays off, and says so (still ok: 200)
        "discord": {"status": "ok", "detail": "off (no DISCORD_TOKEN set)"},
    }
    assert body["store"] == "ok" and body["worker"] == "ok"  # the flat keys of before


# --- a lock held by another process ------------------------------------------------------------

HOLD_LOCK = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN EXCLUSIVE")
conn.execute("INSERT INTO cursors (name, value, updated_at) VALUES ('lock', 'x', 0)")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
conn.execute("ROLLBACK")
"""


async def test_healthz_and_acknowledgement_never_wait_on_a_locked_database(harness, fake, caplog):
    issue = fake.add_issue(REPO, "crash", PANIC)
    harness.state.limits = WebhookLimits(store_wait=1.0)
    db = str(harness.settings.triage_db)
    holder = await asyncio.create_subprocess_exec(
        sys.executable, "-c", HOLD_LOCK, db, "5", stdout=asyncio.subprocess.PIPE
    )
    try:
        assert (await asyncio.wait_for(holder.stdout.readline(), 20)).strip() == b"locked"
        locked_at = time.monotonic()
        status, body, took = await healthz(harness)
        assert took < 3.0, took  # the health check's bound is 2 s
        assert status == 503
        assert body["components"]["store"]["status"] == "error"
        assert body["components"]["worker"]["status"] == "ok"

        started = time.monotonic()
        payload = issue_payload("opened", issue.number, issue.title, PANIC)
        response = await harness.post("issues", payload, delivery="during-lock")
        assert time.monotonic() - started < 3.0
        assert response.status == 503  # GitHub redelivers later
        assert response.headers["Retry-After"]

        # the event loop stayed free meanwhile: metrics-free, store-free endpoints answer
        async with harness.session.get(harness.server.make_url("/stats")) as r:
            assert r.status == 404
        assert time.monotonic() - locked_at < 5, "the test must run while the lock is held"
    finally:
        await asyncio.wait_for(holder.wait(), 30)

    for _ in range(100):
        status, body, _ = await healthz(harness)
        if status == 200:
            break
        await asyncio.sleep(0.1)
    assert status == 200, body
    # GitHub's redelivery: processed once (the first try may have landed when the lock went)
    response = await harness.post("issues", payload, delivery="during-lock")
    assert response.status in (200, 202)
    await harness.settle()
    assert len(bot_comments(fake, issue.number)) == 1
    assert "Traceback" not in caplog.text


# --- a damaged database ---------------------------------------------------------------------


def damage(path, keep: int = 4096) -> None:
    """Overwrite everything after the first page (the header stays: SQLite opens the file)."""
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        f.seek(keep)
        f.write(b"\xff" * (size - keep))


def filled_store(path) -> None:
    with Store(path) as store:
        for i in range(300):
            store.record_answer("github", f"o/r#{i}", "match", ["x" * 60], "fp")
        store._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def test_a_damaged_database_at_start_is_one_clear_error_naming_the_file(tmp_path):
    garbage = tmp_path / "garbage.sqlite3"
    garbage.write_bytes(b"this is not a database at all" * 200)
    with pytest.raises(SettingsError, match="TRIAGE_DB") as caught:
        open_store(Settings.from_mapping({"TRIAGE_DB": str(garbage)}))
    assert str(garbage) in str(caught.value)

    damaged = tmp_path / "damaged.sqlite3"
    filled_store(damaged)
    damage(damaged)
    with pytest.raises(SettingsError, match="damaged") as caught:
        open_store(Settings.from_mapping({"TRIAGE_DB": str(damaged)}))
    assert str(damaged) in str(caught.value) and "TRIAGE_DB" in str(caught.value)


def test_serve_stops_with_a_non_zero_status_on_a_damaged_database(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for name in NAMES:
        monkeypatch.delenv(name, raising=False)
    damaged = tmp_path / "damaged.sqlite3"
    filled_store(damaged)
    damage(damaged)
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_x")
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", "a-long-enough-secret")
    monkeypatch.setenv("TRIAGE_DB", str(damaged))
    parser = argparse.ArgumentParser()
    commands.register(parser.add_subparsers())
    args = parser.parse_args(["serve", "--port", "0"])
    assert run(args) == 2
    err = capsys.readouterr().err
    assert err.count("TRIAGE_DB") == 1 and str(damaged) in err


async def test_a_database_damaged_while_running_shows_in_healthz(harness, fake, caplog):
    store = harness.state.store
    for i in range(300):
        store.record_answer("github", f"o/r#{i}", "match", ["x" * 60], "fp")
    store._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    status, _, _ = await healthz(harness)
    assert status == 200
    damage(harness.settings.triage_db)
    harness.state.db._integrity_at = float("-inf")  # the next check re-reads the file now
    with caplog.at_level(logging.ERROR):
        for _ in range(50):  # the re-read runs in the background
            status, body, _ = await healthz(harness)
            if status == 503:
                break
            await asyncio.sleep(0.05)
    assert status == 503
    detail = body["components"]["store"]["detail"]
    assert "damaged" in detail and str(harness.settings.triage_db) in detail
    assert any("damaged" in r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR)
    # deliveries are refused (GitHub redelivers once the store is restored), not 500s
    issue = fake.add_issue(REPO, "crash", PANIC)
    response = await harness.post("issues", issue_payload("opened", issue.number, "c", PANIC))
    assert response.status == 503


async def test_a_deleted_database_file_shows_in_healthz_and_refuses_deliveries(
    harness, fake, caplog
):
    db = harness.settings.triage_db
    for suffix in ("", "-wal", "-shm"):
        path = db.with_name(db.name + suffix)
        if path.exists():
            path.unlink()
    with caplog.at_level(logging.ERROR):
        status, body, _ = await healthz(harness)
    assert status == 503
    assert body["components"]["store"]["detail"] == (
        f"the database file {db} was deleted while the bot runs"
    )
    assert any("store is unhealthy" in r.getMessage() for r in caplog.records)
    issue = fake.add_issue(REPO, "crash", PANIC)
    response = await harness.post("issues", issue_payload("opened", issue.number, "c", PANIC))
    assert response.status == 503
    assert not db.exists()  # nothing was written to a file nobody will read again


# --- the worker -------------------------------------------------------------------------------


async def test_a_dead_worker_shows_in_healthz_and_the_log(harness, fake, caplog):
    def broken_claim(*args, **kwargs):
        raise RuntimeError("claim exploded")

    harness.state.store.claim_job = broken_claim  # type: ignore[method-assign]
    with caplog.at_level(logging.ERROR):
        issue = fake.add_issue(REPO, "crash", PANIC)
        await harness.post("issues", issue_payload("opened", issue.number, "c", PANIC))
        for _ in range(100):
            if not harness.state.worker.alive:
                break
            await asyncio.sleep(0.05)
        status, body, _ = await healthz(harness)
    assert status == 503
    assert body["components"]["worker"] == {
        "status": "error",
        "detail": "stopped: RuntimeError: claim exploded",
    }
    assert body["components"]["store"]["status"] == "ok"
    messages = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("worker stopped: RuntimeError: claim exploded") for m in messages)


async def test_a_worker_survives_a_store_error_and_carries_on(harness, fake):
    """A store error in the worker's loop (a lock, a hiccup) is waited out, not fatal."""
    real = harness.state.store.claim_job
    calls = {"n": 0}

    def flaky_claim(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 1:
            raise sqlite3.OperationalError("database is locked")
        return real(*args, **kwargs)

    harness.state.store.claim_job = flaky_claim  # type: ignore[method-assign]
    issue = fake.add_issue(REPO, "crash", PANIC)
    await harness.post("issues", issue_payload("opened", issue.number, "c", PANIC))
    await harness.settle(timeout=15)
    assert harness.state.worker.alive
    assert len(bot_comments(fake, issue.number)) == 1
