"""What only the shared PostgreSQL store has to get right: several replicas on one database.

Each test works in a fresh schema of the server TRIAGE_TEST_POSTGRES names (skipped, saying
why, when it cannot be reached); the schema is dropped afterwards.
"""

from __future__ import annotations

import contextlib
import functools
import socket
import threading
import time
from collections.abc import Iterator

import psycopg
import pytest
from postgres_schema import fresh_schema, postgres_or_skip

from bot.config.redact import redact_url
from bot.config.settings import Settings
from bot.store.interface import Job
from bot.store.postgres import PgStore
from bot.store.sqlite import Store


class Clock:
    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def url() -> Iterator[str]:
    with fresh_schema(postgres_or_skip(), "triage_pg") as schema_url:
        yield schema_url


def job(number: int = 1) -> dict:
    return {"kind": "issue", "repo": "o/r", "number": number, "payload": {}}


def claim_within(store: PgStore, seconds: float) -> Job | None:
    """The job `store` claims within `seconds`, trying every tenth of a second; else None."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        claimed = store.claim_job()
        if claimed is not None:
            return claimed
        time.sleep(0.1)
    return None


def test_replicas_starting_together_migrate_once(url):
    import psycopg

    stores: list[PgStore] = []
    errors: list[BaseException] = []
    start = threading.Barrier(6)

    def open_one() -> None:
        start.wait()
        try:
            stores.append(PgStore(url))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    try:
        assert not errors and len(stores) == 6
        with psycopg.connect(url) as conn:
            versions = conn.execute("SELECT version FROM schema_version ORDER BY 1").fetchall()
        assert [v for (v,) in versions] == list(range(1, Store.latest_version() + 1))
    finally:
        for store in stores:
            store.close()


def _at_once(calls) -> list:
    """Run the calls in threads released together; their results."""
    results: list = []
    start = threading.Barrier(len(calls))

    def run(call) -> None:
        start.wait()
        results.append(call())

    threads = [threading.Thread(target=run, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return results


def test_a_delivery_sent_to_several_replicas_at_once_is_accepted_once(url):
    replicas = [PgStore(url) for _ in range(4)]
    try:
        for n in range(20):
            calls = [
                functools.partial(r.accept_delivery, f"d{n}", "issues", "opened", job())
                for r in replicas
            ]
            assert sorted(_at_once(calls)) == [False, False, False, True]
        assert replicas[0].job_counts()["queued"] == 20
    finally:
        for store in replicas:
            store.close()


def test_concurrent_claims_never_share_a_job_or_an_issue(url):
    replicas = [PgStore(url, job_lease=30) for _ in range(4)]
    try:
        for n in range(60):
            replicas[0].enqueue(job(number=n % 15))  # 15 issues, 4 jobs each
        running: dict[str, int] = {}
        claimed: list[int] = []
        overlaps: list[str] = []
        lock = threading.Lock()

        def work(store: PgStore) -> None:
            idle = 0
            while idle < 20:
                got = store.claim_job()
                if got is None:
                    idle += 1
                    time.sleep(0.01)
                    continue
                idle = 0
                with lock:
                    if got.issue_key in running:
                        overlaps.append(got.issue_key)
                    running[got.issue_key] = got.id
                    claimed.append(got.id)
                time.sleep(0.005)  # "working" on the issue
                with lock:
                    running.pop(got.issue_key, None)
                store.finish_job(got.id)

        threads = [threading.Thread(target=work, args=(r,)) for r in replicas]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert not overlaps
        assert len(claimed) == len(set(claimed))
        counts = replicas[0].job_counts()
        assert counts == {"queued": 0, "running": 0, "done": 60, "dead": 0}
    finally:
        for store in replicas:
            store.close()


def test_a_dead_replicas_job_is_taken_over_after_its_lease_and_its_late_outcome_ignored(url):
    clock = Clock()
    gone = PgStore(url, clock=clock, job_lease=10)
    alive = PgStore(url, clock=clock, job_lease=10)
    try:
        job_id = gone.enqueue(job())
        gone.enqueue(job(number=2))
        assert gone.claim_job().id == job_id
        # one running job per issue, across replicas: only the other issue can be claimed
        other = alive.claim_job()
        assert other is not None and other.number == 2
        alive.finish_job(other.id)
        assert alive.claim_job() is None
        assert alive.recover_running() == 0  # the lease still runs: the job is the other's
        assert alive.next_due() == clock.now + 10
        clock.now += 11  # the replica was killed: nobody renews its lease
        taken = alive.claim_job()
        assert taken is not None and taken.id == job_id and taken.state == "running"
        gone.finish_job(job_id)  # the old owner, back from the dead, changes nothing
        assert alive.get_job(job_id).state == "running"
        alive.retry_later(job_id, 0, "HTTP 502")
        assert alive.get_job(job_id).attempts == 1
    finally:
        gone.close()
        alive.close()


def test_a_live_replica_renews_its_leases(url):
    owner = PgStore(url, job_lease=0.6)
    other = PgStore(url, job_lease=0.6)
    try:
        job_id = owner.enqueue(job())
        assert owner.claim_job().id == job_id
        time.sleep(1.5)  # more than two leases: renewed meanwhile
        assert other.claim_job() is None
        owner.close()  # stops renewing, as a killed process would
        taken = claim_within(other, 10)
        assert taken is not None and taken.id == job_id
    finally:
        other.close()


def test_next_due_skips_jobs_held_back_by_their_issue(url):
    clock = Clock()
    store = PgStore(url, clock=clock)
    try:
        first = store.enqueue(job())
        store.claim_job()
        store.retry_later(first, 30, "HTTP 502")
        store.enqueue(job())  # due now, but behind the retry: no reason to wake before +30
        assert store.next_due() == clock.now + 30
    finally:
        store.close()


def test_triage_db_url_selects_postgres_and_hides_the_password(tmp_path):
    settings = Settings.from_mapping({"TRIAGE_DB": "postgresql://bot:s3cret@db:5432/triage"})
    assert settings.store_location == "postgresql://bot:s3cret@db:5432/triage"
    assert "s3cret" not in repr(settings)
    assert settings.store_description == "postgresql://bot:***@db:5432/triage"
    assert settings.triage_job_lease == 30
    sqlite = Settings.from_mapping({"TRIAGE_DB": str(tmp_path / "x.db")})
    assert sqlite.store_location == tmp_path / "x.db" and sqlite.triage_db_url is None
    assert redact_url("postgresql://bot@db/triage") == "postgresql://bot@db/triage"
    from bot.config.settings import SettingsError

    with pytest.raises(SettingsError, match="TRIAGE_JOB_LEASE"):
        Settings.from_mapping({"TRIAGE_JOB_LEASE": "soon"})


def test_an_unreachable_database_is_named_without_its_password():
    import psycopg

    with pytest.raises(psycopg.OperationalError) as caught:
        PgStore("postgresql://bot:s3cret@127.0.0.1:1/triage", connect_timeout=2)
    assert "postgresql://bot:***@127.0.0.1:1/triage" in str(caught.value)
    assert "s3cret" not in str(caught.value)


def test_doctor_checks_the_connection_and_the_schema(url):
    from bot.cli.doctor.check import FAIL, OK, WARN
    from bot.cli.doctor.store_check import check_store

    def check(db: str):
        return check_store(Settings.from_mapping({"TRIAGE_DB": db}))

    fresh = check(url)
    assert fresh.status == OK and "no schema yet" in fresh.summary
    PgStore(url).close()
    current = check(url)
    assert current.status == OK and f"schema {Store.latest_version()} (current)" in current.summary
    assert current.details == ["jobs: 0 queued, 0 running, 0 dead"]
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DELETE FROM schema_version WHERE version = %s", (Store.latest_version(),))
    assert check(url).status == WARN
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO schema_version VALUES (%s, 0), (%s, 0)", (Store.latest_version(), 999)
        )
    newer = check(url)
    assert newer.status == FAIL and "newer" in newer.summary
    down = check("postgresql://bot:s3cret@127.0.0.1:1/triage")
    assert down.status == FAIL and "s3cret" not in down.summary and down.fix


def test_doctor_shows_the_database_without_its_password():
    from bot.cli.doctor.settings_check import check_settings

    settings = Settings.from_mapping(
        {"TRIAGE_DB": "postgresql://bot:s3cret@db:5432/triage", "GITHUB_TOKEN": "t"}
    )
    shown = check_settings(settings, [])
    assert "TRIAGE_DB=postgresql://bot:***@db:5432/triage" in shown.details
    assert "s3cret" not in shown.summary + " ".join(shown.details)


def test_the_database_refuses_a_second_running_job_of_one_issue(url):
    import psycopg

    store = PgStore(url)
    try:
        first = store.enqueue(job())
        second = store.enqueue(job())
        store.claim_job()  # `first` runs
        with psycopg.connect(url) as conn, pytest.raises(psycopg.errors.UniqueViolation):
            conn.execute("UPDATE jobs SET state = 'running' WHERE id = %s", (second,))
        assert store.get_job(first).state == "running"
        assert store.get_job(second).state == "done"  # folded into the first
    finally:
        store.close()


def test_an_older_schema_is_migrated_and_keeps_its_data(url, monkeypatch):
    import bot.store.postgres as store_postgres

    full = list(store_postgres.MIGRATIONS)
    monkeypatch.setattr(store_postgres, "MIGRATIONS", full[:1])
    old = PgStore(url)
    assert old.schema_version() == 1
    old.accept_delivery("d1", "issues", "opened", job())
    old.set_cursor("poll:o/r", "2026-01-01")
    old.close()
    monkeypatch.setattr(store_postgres, "MIGRATIONS", full)
    new = PgStore(url)
    try:
        assert new.schema_version() == Store.latest_version()
        assert new.delivery_seen("d1") and new.get_cursor("poll:o/r") == "2026-01-01"
        assert new.queue_depth() == 1
        new.set_controls("o/r", 1, ignored=True)  # a table of version 2
        assert new.get_controls("o/r", 1)["ignored"] == 1
    finally:
        new.close()


class Cable:
    """A TCP forwarder on 127.0.0.1 in front of PostgreSQL that the test can unplug."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.plugged = True
        self.sockets: list[socket.socket] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if not self.plugged:
                client.close()
                continue
            try:
                server = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            with self.lock:
                self.sockets += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        for sock in (source, sink):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def plug(self) -> None:
        self.plugged = True

    def unplug(self) -> None:
        self.plugged = False
        with self.lock:
            for sock in self.sockets:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
            self.sockets.clear()

    def close(self) -> None:
        self.unplug()
        self.listener.close()


def test_a_database_outage_neither_stalls_the_worker_nor_strands_a_job(url, monkeypatch):
    from urllib.parse import urlsplit, urlunsplit

    import bot.store.postgres

    monkeypatch.setattr(bot.store.postgres, "OUTAGE_PAUSE", 1.0)

    parts = urlsplit(url)
    cable = Cable(parts.hostname or "127.0.0.1", parts.port or 5432)
    netloc = parts.netloc.rsplit(":", 1)[0] if parts.port else parts.netloc
    via_cable = urlunsplit(parts._replace(netloc=f"{netloc}:{cable.port}"))
    # a lease longer than the outage: renewed on reconnection unless the store let it go
    store = PgStore(via_cable, job_lease=4.0, connect_timeout=1, pool_wait=1)
    direct = PgStore(url, job_lease=1.0)
    try:
        job_id = store.enqueue(job())
        assert store.claim_job().id == job_id
        cable.unplug()
        started = time.monotonic()
        assert store.claim_job() is None  # fails once (waits for a connection at most)...
        assert store.next_due() is None and store.prune() == 0  # ...then answers at once
        assert time.monotonic() - started < 5
        quick = time.monotonic()
        for _ in range(50):
            assert store.claim_job() is None
        assert time.monotonic() - quick < 0.5
        with pytest.raises(psycopg.OperationalError):
            store.finish_job(job_id)  # the outcome cannot be recorded...
        cable.plug()
        # ...but the lease is let go (not renewed now that the database is back): it runs out,
        # and another replica does the job again
        again = claim_within(direct, 12)
        assert again is not None and again.id == job_id
        direct.finish_job(job_id)
        assert direct.get_job(job_id).state == "done"
        time.sleep(1.1)  # OUTAGE_PAUSE, shortened: the cut-off replica polls the database again
        second = store.enqueue(job(number=2))
        assert store.claim_job().id == second
    finally:
        cable.close()
        store.close()
        direct.close()


def test_a_lost_server_reads_as_the_store_unavailable_not_a_bug(url):
    # The Discord handlers answer without remembering while the store is unavailable, and let
    # a bug surface: a PostgreSQL outage must read as the former, as SQLite's locks do.
    import sqlite3
    from urllib.parse import urlsplit, urlunsplit

    from bot.store.thread import store_unavailable

    parts = urlsplit(url)
    cable = Cable(parts.hostname or "127.0.0.1", parts.port or 5432)
    netloc = parts.netloc.rsplit(":", 1)[0] if parts.port else parts.netloc
    store = PgStore(
        urlunsplit(parts._replace(netloc=f"{netloc}:{cable.port}")),
        connect_timeout=1,
        pool_wait=1,
    )
    try:
        assert store.get_discord_reply(1) is None
        cable.unplug()
        with pytest.raises(psycopg.Error) as caught:
            store.get_discord_reply(1)
        assert store_unavailable(caught.value)
        with pytest.raises(psycopg.Error) as caught:
            store.put_discord_reply(1, 2, 3, 4, ["r"])
        assert store_unavailable(caught.value)
    finally:
        store.close()
        cable.close()
    assert not store_unavailable(psycopg.errors.UniqueViolation("duplicate key"))
    assert store_unavailable(sqlite3.OperationalError("database is locked"))
    assert not store_unavailable(sqlite3.IntegrityError("UNIQUE constraint failed"))
