"""One suite, both stores: the SQLite `Store` and the PostgreSQL `PgStore` behave the same.

The PostgreSQL half runs in a fresh schema of the server TRIAGE_TEST_POSTGRES names (default
postgresql://postgres@127.0.0.1:5432/test), dropped afterwards; it is skipped, saying why, when
that server cannot be reached.
"""

from __future__ import annotations

import inspect
import re
import sqlite3
from collections.abc import Iterator

import pytest
from postgres_schema import fresh_schema, postgres_or_skip

from bot.config.settings import Settings
from bot.store.interface import TriageStore
from bot.store.open import open_store
from bot.store.sqlite import MIGRATIONS as SQLITE_MIGRATIONS
from bot.store.sqlite import Store

LEASE = 60.0


class Clock:
    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def pg_schema() -> Iterator[str]:
    url = postgres_or_skip()
    with fresh_schema(url, "triage_contract") as schema_url:
        yield schema_url


@pytest.fixture(params=["sqlite", "postgres"])
def kind(request) -> str:
    return request.param


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def make_store(kind, tmp_path, request, clock):
    """Open (another handle on) this test's store."""
    opened: list[TriageStore] = []
    if kind == "postgres":
        from bot.store.postgres import PgStore

        url = request.getfixturevalue("pg_schema")
        _wipe(url)

        def make() -> TriageStore:
            store = PgStore(url, clock=clock, job_lease=LEASE)
            opened.append(store)
            return store
    else:

        def make() -> TriageStore:
            store = Store(tmp_path / "store.sqlite3", clock=clock)
            opened.append(store)
            return store

    yield make
    for store in opened:
        store.close()


@pytest.fixture
def store(make_store) -> TriageStore:
    return make_store()


def _wipe(url: str) -> None:
    """Empty every table of the shared test schema (the schema itself stays migrated)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        tables = [
            row[0]
            for row in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
                " AND tablename <> 'schema_version'"
            ).fetchall()
        ]
        if tables:
            conn.execute(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY")


def job(repo: str = "o/r", number: int = 1, **payload) -> dict:
    return {"kind": "issue", "repo": repo, "number": number, "payload": payload}


# -- the interface ---------------------------------------------------------------------------


def _public(cls: type) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(member)
        for name, member in inspect.getmembers(cls, callable)
        if not name.startswith("_")
    }


def test_both_stores_have_the_same_public_methods_and_the_protocol_lists_them():
    from bot.store.postgres import PgStore

    sqlite, postgres = _public(Store), _public(PgStore)
    missing = sorted(set(sqlite) - set(postgres))
    assert not missing, f"PgStore lacks {missing}: add them to bot/store/postgres.py"
    for name, signature in sqlite.items():
        if name == "open":  # a path, a URL
            continue
        assert list(signature.parameters) == list(postgres[name].parameters), name
    protocol = {n for n in vars(TriageStore) if not n.startswith("_")} - {"clock"}
    assert protocol == set(sqlite) - {"open"}


def test_each_store_is_the_interface_no_more_no_less():
    """`TriageStore` is the one definition of a store: neither store has a public method it
    lacks, and a method a store defines itself keeps the interface's signature."""
    from bot.store.postgres import PgStore

    interface = _public(TriageStore)
    for cls in (Store, PgStore):
        assert not cls.__abstractmethods__, cls  # each store does all the interface asks
        assert set(_public(cls)) == set(interface), cls
        for name in set(vars(cls)) & set(interface):
            assert inspect.signature(getattr(cls, name)) == interface[name], (cls, name)


# -- the schema: both databases end up with the same tables and columns ---------------------

# What only the shared PostgreSQL store has: who holds a running job's lease and until when, the
# order of replaced commands (SQLite's rowid), and one running job per issue.
POSTGRES_ONLY_COLUMNS = {("jobs", "lease_owner"), ("jobs", "lease_until"), ("commands", "seq")}
POSTGRES_ONLY_INDEXES = {("jobs", "jobs_one_running_per_issue")}
# how each database names the kinds of columns the schema declares
FAMILIES = {
    "TEXT": "text", "INTEGER": "integer", "REAL": "real",
    "text": "text", "integer": "integer", "bigint": "integer", "double precision": "real",
}  # fmt: skip
COUNTED = "(the database counts)"  # an id the database assigns


def _neutral_default(default: str | None) -> str | None:
    if default is None:
        return None
    if default.startswith("nextval("):
        return COUNTED
    return re.sub(r"::[a-z ]+$", "", default)  # PostgreSQL adds the literal's type


def _neutral_where(where: str | None) -> str | None:
    return None if where is None else where.replace("::text", "").strip("()")


def sqlite_catalog(path) -> dict:
    """Per table: its columns (name, kind, NOT NULL, default), primary key and indexes, as
    SQLite's catalog (sqlite_master, PRAGMA table_info, index_list, index_info) tells them."""
    conn = sqlite3.connect(path)
    try:
        catalog = {}
        tables = conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table'"
            " AND name NOT LIKE 'sqlite_%' ORDER BY name"
        ).fetchall()
        for table, sql in tables:
            info = conn.execute(f"PRAGMA table_info({table})").fetchall()
            columns = [
                (
                    name,
                    FAMILIES[kind],
                    bool(notnull or pk),
                    COUNTED
                    if re.search(rf"\b{name} INTEGER PRIMARY KEY AUTOINCREMENT", sql)
                    else _neutral_default(default),
                )
                for _, name, kind, notnull, default, pk in info
            ]
            key = tuple(row[1] for row in sorted((r for r in info if r[5]), key=lambda r: r[5]))
            indexes = {}
            for _, name, unique, origin, _partial in conn.execute(f"PRAGMA index_list({table})"):
                if origin != "c":  # the primary key's own index
                    continue
                (index_sql,) = conn.execute(
                    "SELECT sql FROM sqlite_master WHERE name = ?", (name,)
                ).fetchone()
                where = index_sql.split(" WHERE ", 1)[1] if " WHERE " in index_sql else None
                cols = tuple(r[2] for r in conn.execute(f"PRAGMA index_info({name})"))
                indexes[name] = (cols, bool(unique), _neutral_where(where))
            catalog[table] = {"columns": columns, "key": key, "indexes": indexes}
        return catalog
    finally:
        conn.close()


def postgres_catalog(url: str) -> dict:
    """The same, as PostgreSQL's catalog (information_schema, pg_index) tells it."""
    import psycopg

    with psycopg.connect(url) as conn:
        catalog: dict = {}
        for table, name, kind, nullable, default in conn.execute(
            "SELECT table_name, column_name, data_type, is_nullable, column_default"
            " FROM information_schema.columns WHERE table_schema = current_schema()"
            " ORDER BY table_name, ordinal_position"
        ):
            entry = catalog.setdefault(table, {"columns": [], "key": (), "indexes": {}})
            entry["columns"].append(
                (name, FAMILIES[kind], nullable == "NO", _neutral_default(default))
            )
        for table, name, unique, primary, cols, where in conn.execute(
            "SELECT t.relname, i.relname, x.indisunique, x.indisprimary,"
            " array_agg(a.attname ORDER BY k.n), pg_get_expr(x.indpred, x.indrelid)"
            " FROM pg_index AS x JOIN pg_class AS i ON i.oid = x.indexrelid"
            " JOIN pg_class AS t ON t.oid = x.indrelid"
            " CROSS JOIN LATERAL unnest(x.indkey) WITH ORDINALITY AS k(attnum, n)"
            " JOIN pg_attribute AS a ON a.attrelid = t.oid AND a.attnum = k.attnum"
            " WHERE t.relnamespace = current_schema()::regnamespace"
            " GROUP BY t.relname, i.relname, x.indisunique, x.indisprimary, x.indpred, x.indrelid"
        ):
            if primary:
                catalog[table]["key"] = tuple(cols)
            else:
                catalog[table]["indexes"][name] = (tuple(cols), unique, _neutral_where(where))
        return catalog


def test_both_databases_end_up_with_the_same_tables_and_columns(tmp_path, pg_schema):
    from bot.store.postgres import PgStore

    Store(tmp_path / "s.sqlite3").close()
    PgStore(pg_schema).close()
    sqlite, postgres = sqlite_catalog(tmp_path / "s.sqlite3"), postgres_catalog(pg_schema)
    assert len(sqlite) == 14  # 13 tables and schema_version
    for table, entry in postgres.items():
        only = [c for c in entry["columns"] if (table, c[0]) in POSTGRES_ONLY_COLUMNS]
        assert len(only) == len([c for t, c in POSTGRES_ONLY_COLUMNS if t == table]), table
        entry["columns"] = [c for c in entry["columns"] if c not in only]
        for name in [n for n in entry["indexes"] if (table, n) in POSTGRES_ONLY_INDEXES]:
            del entry["indexes"][name]
    assert sqlite == postgres


def test_the_migrations_are_the_same_versions():
    from bot.store.postgres import MIGRATIONS as PG_MIGRATIONS
    from bot.store.postgres import PgStore

    assert PgStore.latest_version() == Store.latest_version()
    assert [v for v, _ in PG_MIGRATIONS] == [v for v, _ in SQLITE_MIGRATIONS]


def test_open_store_picks_the_implementation(tmp_path, pg_schema):
    from bot.store.postgres import PgStore

    with open_store(Settings.from_mapping({"TRIAGE_DB": str(tmp_path / "x.sqlite3")})) as sqlite:
        assert isinstance(sqlite, Store)
    settings = Settings.from_mapping({"TRIAGE_DB": pg_schema, "TRIAGE_JOB_LEASE": "7"})
    with open_store(settings) as postgres:
        assert isinstance(postgres, PgStore) and postgres.job_lease == 7


# -- the shared behaviour ----------------------------------------------------------------------


def test_a_new_store_is_at_the_latest_schema_and_reopens(make_store):
    first = make_store()
    assert first.schema_version() == first.latest_version() == Store.latest_version()
    first.check_writable()
    second = make_store()  # opening again migrates nothing and loses nothing
    assert second.schema_version() == first.latest_version()


def test_a_delivery_is_accepted_once_with_its_job(store):
    assert store.accept_delivery("d1", "issues", "opened", job(title="x"))
    assert not store.accept_delivery("d1", "issues", "opened", job(title="x"))
    assert store.accept_delivery("d2", "star", "created", None)  # acknowledged, no job
    assert store.delivery_seen("d1") and store.delivery_seen("d2")
    assert not store.delivery_seen("d3")
    store.set_delivery_outcome("d1", "done")
    [queued] = store.list_jobs()
    assert (queued.delivery_id, queued.repo, queued.number) == ("d1", "o/r", 1)
    assert queued.payload == {"title": "x"} and queued.state == "queued"
    assert queued.issue_key == "o/r#1"
    assert store.job_counts() == {"queued": 1, "running": 0, "done": 0, "dead": 0}
    assert store.queue_depth() == 1


def test_claims_take_due_jobs_oldest_first_one_per_issue(store, clock):
    a1 = store.enqueue(job("o/r", 1))
    clock.now += 1
    b = store.enqueue(job("o/r", 2))
    first = store.claim_job()
    assert first is not None and first.id == a1 and first.state == "running"
    assert store.get_job(a1).state == "running"
    clock.now += 1
    a2 = store.enqueue(job("O/R", 1))  # same issue, repo case ignored: waits for a1
    second = store.claim_job()
    assert second is not None and second.id == b
    assert store.claim_job() is None
    store.finish_job(a1)
    third = store.claim_job()
    assert third is not None and third.id == a2
    assert store.claim_job() is None
    store.finish_job(b)
    store.finish_job(a2)
    assert store.job_counts()["done"] == 3 and store.queue_depth() == 0
    assert store.next_due() is None


def test_exclude_keys_skips_an_issue(store):
    one = store.enqueue(job("o/r", 1))
    two = store.enqueue(job("o/r", 2))
    claimed = store.claim_job(exclude_keys=["o/r#1"])
    assert claimed is not None and claimed.id == two
    assert store.claim_job(exclude_keys=["o/r#1"]) is None
    assert store.claim_job().id == one


def test_later_jobs_of_an_issue_are_folded_into_the_claimed_one(store, clock):
    first = store.enqueue(job(commands=[{"name": "why"}], issue_state="open"))
    second = store.enqueue(job(commands=[{"name": "ignore"}]))
    third = store.enqueue(job(issue_state="closed"))
    other = store.enqueue(job(number=2))
    claimed = store.claim_job()
    assert claimed.id == first
    assert claimed.payload == {
        "superseded": [second, third],
        "commands": [{"name": "why"}, {"name": "ignore"}],
        "issue_state": "closed",
    }
    for later in (second, third):
        done = store.get_job(later)
        assert done.state == "done" and done.last_error == f"superseded by job {first}"
    assert store.claim_job().id == other


def test_retry_later_waits_and_holds_back_the_issue(store, clock):
    first = store.enqueue(job())
    store.claim_job()
    store.retry_later(first, 30, "HTTP 502")
    retried = store.get_job(first)
    assert (retried.state, retried.attempts, retried.last_error) == ("queued", 1, "HTTP 502")
    assert retried.next_at == clock.now + 30
    store.enqueue(job())  # a later job of the same issue waits behind the retry
    assert store.claim_job() is None
    # never later than the next claim can succeed (SQLite may name the held-back job's time)
    assert clock.now <= store.next_due() <= clock.now + 30
    clock.now += 31
    again = store.claim_job()
    assert again.id == first and again.attempts == 1


def test_a_postponed_job_waits_without_counting_an_attempt(store, clock):
    first = store.enqueue(job())
    assert store.oldest_queued_age() == 0.0  # queued just now
    clock.now += 12
    assert store.oldest_queued_age() == 12.0
    store.claim_job()
    assert store.oldest_queued_age() == 0.0  # none queued while it runs
    store.postpone_job(first, 20, "rate limited until 20 s from now")
    postponed = store.get_job(first)
    assert (postponed.state, postponed.attempts) == ("queued", 0)
    assert postponed.last_error == "rate limited until 20 s from now"
    assert store.claim_job() is None
    clock.now += 21
    assert store.claim_job().id == first


def test_a_sound_store_passes_its_integrity_check(store):
    store.check_integrity()  # raises when damaged (SQLite) or unreachable (PostgreSQL)


def test_dead_letters_and_replay(store):
    one = store.enqueue(job(number=1))
    two = store.enqueue(job(number=2))
    store.claim_job()
    store.claim_job()
    store.bury_job(one, "HTTP 404")
    store.bury_job(two, "HTTP 422")
    dead = store.list_jobs(["dead"])
    assert [(j.id, j.attempts, j.last_error) for j in dead] == [
        (one, 1, "HTTP 404"),
        (two, 1, "HTTP 422"),
    ]
    assert store.job_counts()["dead"] == 2
    assert store.requeue_dead(one) == 1
    assert store.requeue_dead(one) == 0
    assert store.get_job(one).state == "queued" and store.get_job(one).attempts == 0
    assert store.requeue_dead() == 1
    assert store.job_counts() == {"queued": 2, "running": 0, "done": 0, "dead": 0}
    assert [j.id for j in store.list_jobs(limit=1)] == [one]
    assert store.get_job(999_999) is None


def test_a_job_left_running_by_a_stopped_process_is_recovered(make_store, clock):
    first = make_store()
    claimed_id = first.enqueue(job())
    assert first.claim_job().id == claimed_id
    first.close()  # the process stops without finishing the job
    clock.now += LEASE + 1  # (PostgreSQL waits for the lease to run out; SQLite need not)
    second = make_store()
    assert second.recover_running() == 1
    assert second.get_job(claimed_id).state == "queued"
    assert second.claim_job().id == claimed_id


def test_prune_forgets_old_finished_jobs_and_deliveries(store, clock):
    store.accept_delivery("old", "issues", "opened", job())
    old = store.claim_job()
    store.finish_job(old.id)
    clock.now += 40 * 86400
    store.accept_delivery("new", "issues", "opened", job(number=2))
    assert store.prune() == 2  # the old job and the old delivery
    assert store.get_job(old.id) is None
    assert not store.delivery_seen("old") and store.delivery_seen("new")
    assert store.queue_depth() == 1


def test_issue_state(store):
    assert store.get_issue_state("O/R", 1) is None
    kwargs = dict(labels_added=["b", "a", "a"], verdict="match", record_ids=["r1", "r2"])
    store.put_issue_state("O/R", 1, comment_id=10**12, fingerprint="f", **kwargs)
    state = store.get_issue_state("o/r", 1)
    assert state.comment_id == 10**12 and state.labels_added == ("a", "b")
    assert state.record_ids == ("r1", "r2") and state.verdict == "match"
    store.put_issue_state(
        "o/r", 1, comment_id=None, labels_added=[], verdict=None, record_ids=[], fingerprint=None
    )
    store.put_issue_state(
        "o/r", 2, comment_id=5, labels_added=["x"], verdict="no-panic", record_ids=[],
        fingerprint=None,
    )  # fmt: skip
    states = store.list_issue_states()
    assert [(s.repo, s.number, s.comment_id, s.verdict) for s in states] == [
        ("o/r", 1, None, None),
        ("o/r", 2, 5, "no-panic"),
    ]


def test_answers_and_cursors(store, clock):
    store.record_answer("github", "o/r#1", "match", ["r1"], "fp")
    clock.now += 1
    store.record_answer("discord", "m1", "no-panic", [], None)
    answers = store.list_answers()
    assert [(a["platform"], a["subject"], a["record_ids"]) for a in answers] == [
        ("github", "o/r#1", ["r1"]),
        ("discord", "m1", []),
    ]
    assert set(answers[0]) == {"id", "platform", "subject", "verdict", "record_ids",
                               "fingerprint", "at"}  # fmt: skip
    assert [a["subject"] for a in store.list_answers("discord")] == ["m1"]
    assert store.get_cursor("poll:o/r") is None
    store.set_cursor("poll:o/r", "2026-01-01")
    store.set_cursor("poll:o/r", "2026-01-02")
    assert store.get_cursor("poll:o/r") == "2026-01-02"


def test_feedback_votes_and_reactions(store):
    store.record_feedback("github", "o/r#1", "r1", "alice", 1)
    store.record_feedback("github", "o/r#1", "r1", "alice", -5)  # replaces alice's vote
    store.record_feedback("discord", "m1", "r1", "42", 3)
    assert store.feedback_counts("r1") == (1, 1)
    assert store.feedback_counts("nothing") == (0, 0)
    # a prefix with LIKE's special characters matches only itself
    store.record_feedback("github", "o/r_x#1:c", "r1", "reaction:eve", 1)
    store.replace_reaction_votes(
        "o/r#1", [("o/r#1:c9", "r1", "bob", 1), ("o/r#1:c9", "r1", "cy", -1)]
    )
    assert store.feedback_counts("r1") == (3, 2)
    store.replace_reaction_votes("o/r#1", [("o/r#1:c9", "r1", "bob", 1)])  # cy took it back
    rows = store.feedback_rows()
    assert sorted((r["subject"], r["user_id"], r["vote"]) for r in rows) == [
        ("m1", "42", 1),
        ("o/r#1", "alice", -1),
        ("o/r#1:c9", "reaction:bob", 1),
        ("o/r_x#1:c", "reaction:eve", 1),
    ]
    assert set(rows[0]) == {"platform", "subject", "user_id", "record_id", "vote", "at"}


def test_controls_and_commands(store, clock):
    assert store.get_controls("o/r", 1) is None
    store.set_controls("O/R", 1, ignored=True, override="match:r1")
    controls = store.get_controls("o/r", 1)
    assert (controls["ignored"], controls["override"], controls["show_why"]) == (1, "match:r1", 0)
    store.set_controls("o/r", 1, ignored=False, override=None)
    controls = store.get_controls("o/r", 1)
    assert (controls["ignored"], controls["override"]) == (0, None)
    with pytest.raises(ValueError, match="unknown controls"):
        store.set_controls("o/r", 1, colour="red")

    assert not store.command_done("o/r", 1, "c1")
    args = dict(comment_id=7, author="maint", arg=None, outcome="done")
    store.record_command("O/R", 1, "c1", name="why", **args)
    store.record_command("o/r", 1, "c2", name="ignore", **args)
    store.record_command("o/r", 1, "c1", name="why", **{**args, "outcome": "again"})
    assert store.command_done("o/r", 1, "c1") and store.command_done("O/R", 1, "c2")
    listed = store.list_commands("o/r", 1)
    # same time: a replaced command sorts after the others, as a new one
    assert [(c["key"], c["outcome"]) for c in listed] == [("c2", "done"), ("c1", "again")]
    assert set(listed[0]) == {"repo", "number", "key", "comment_id", "author", "name", "arg",
                              "outcome", "at"}  # fmt: skip


def test_issue_records_and_open_state(store, clock):
    store.put_issue_records("O/R", 1, ["r1", "r2", "r1"], "fp1")
    store.put_issue_records("o/r", 2, ["r2"], "fp2")
    store.put_issue_records("o/other", 3, ["r1"], None)
    store.set_issue_open_state("o/r", 2, "closed")
    first_at = store.issues_for_records("o/r", ["r1"])[0]["first_at"]
    clock.now += 5
    store.put_issue_records("o/r", 1, ["r1"], "fp1b")  # r2 forgotten for #1, r1 kept
    rows = store.issues_for_records("O/R", ["r1", "r2"])
    assert [(r["number"], r["record_id"], r["position"], r["state"]) for r in rows] == [
        (1, "r1", 0, "open"),
        (2, "r2", 0, "closed"),
    ]
    assert rows[0]["first_at"] == first_at and rows[0]["last_at"] == first_at + 5
    assert rows[0]["fingerprint"] == "fp1b"
    assert store.issues_for_records("o/r", []) == []
    store.put_issue_records("o/r", 1, [], None)
    assert [r["number"] for r in store.issues_for_records("o/r", ["r1", "r2"])] == [2]


def test_how_a_closed_issue_was_closed(store, clock):
    store.put_issue_records("o/r", 7, ["r1"], "fp7")
    store.put_issue_records("o/r", 8, ["r1"], "fp8")
    store.set_issue_open_state("o/r", 7, "closed", "completed", 1_772_000_000.0, 2760)
    store.set_issue_open_state("o/r", 8, "closed", "not_planned", 1_772_000_100.0)

    def closing() -> list[tuple]:
        rows = store.issues_for_records("o/r", ["r1"])
        return [(r["number"], r["state"], r["state_reason"], r["closed_at"], r["fixed_by"])
                for r in rows]  # fmt: skip

    assert closing() == [
        (7, "closed", "completed", 1_772_000_000.0, 2760),
        (8, "closed", "not_planned", 1_772_000_100.0, None),
    ]
    # a webhook's closed event names no pull request: the known one stays
    store.set_issue_open_state("o/r", 7, "closed", "completed", 1_772_000_500.0)
    assert closing()[0] == (7, "closed", "completed", 1_772_000_500.0, 2760)
    store.set_issue_open_state("o/r", 7, "closed")  # only the state: the rest is kept
    assert closing()[0] == (7, "closed", "completed", 1_772_000_500.0, 2760)
    # reopened: how it was closed is forgotten; closing again without a PR names none
    store.set_issue_open_state("o/r", 7, "open", "reopened", 1_772_000_600.0, 99)
    assert closing()[0] == (7, "open", None, None, None)
    store.set_issue_open_state("o/r", 7, "closed", "completed", 1_772_000_700.0)
    assert closing()[0] == (7, "closed", "completed", 1_772_000_700.0, None)
    # an issue with no state recorded reads as open, with nothing about a close
    store.put_issue_records("o/r", 9, ["r1"], None)
    assert closing()[2] == (9, "open", None, None, None)


def test_uncatalogued_panics(store, clock):
    item = {"norm_message": "boom", "crate": "burn-core", "message": "boom!", "location": "a.rs"}
    store.replace_uncatalogued("github", "o/r#1", [item], repo="o/r", number=1)
    first = store.list_uncatalogued()
    clock.now += 10
    other = {"norm_message": "bang", "message": "bang"}
    store.replace_uncatalogued("github", "o/r#1", [item, other, other], repo="o/r", number=1)
    rows = store.list_uncatalogued()
    assert [(r["norm_message"], r["crate"]) for r in rows] == [("boom", "burn-core"), ("bang", "")]
    assert rows[0]["first_at"] == first[0]["first_at"] and rows[0]["last_at"] == clock.now
    assert rows[1]["first_at"] == clock.now
    store.replace_uncatalogued("github", "o/r#1", [])
    assert store.list_uncatalogued() == []


def test_discord_replies(store):
    assert store.get_discord_reply(1) is None
    big = 1_234_567_890_123_456_789  # Discord ids are 64-bit
    store.put_discord_reply(big, 2, 3, 4, ["r1"])
    store.put_discord_reply(big, 2, 5, 4, ["r2"])
    reply = store.get_discord_reply(big)
    assert (reply["channel_id"], reply["reply_id"], reply["record_ids"]) == (2, 5, ["r2"])
    store.delete_discord_reply(big)
    assert store.get_discord_reply(big) is None


def test_discord_writes_queue_hold_retry_and_send(store, clock):
    big = 1_234_567_890_123_456_789
    first = store.queue_discord_write("reply", big, 2, 3, {"ids": ["r1"]}, 120.0, hold=60.0)
    second = store.queue_discord_write("reply", 7, 2, 3, {"ids": ["r2"]}, 120.0)
    # the first is being tried by its caller: not handed out before its hold is over
    due = store.claim_discord_writes(hold=60.0)
    assert [w["id"] for w in due] == [second]
    assert due[0]["payload"] == {"ids": ["r2"]} and due[0]["deadline_at"] == clock.now + 120.0
    assert store.claim_discord_writes(hold=60.0) == []  # held now
    store.retry_discord_write(second, 5.0, "429 rate limited")
    clock.now += 5.0
    again = store.claim_discord_writes(hold=60.0)
    assert [(w["id"], w["attempts"], w["last_error"]) for w in again] == [
        (second, 1, "429 rate limited")
    ]
    store.discord_reply_sent(second, 7, 2, 99, 3, ["r2"])
    assert store.get_discord_reply(7)["reply_id"] == 99
    assert store.discord_writes_waiting() == 1
    assert store.discord_write_waiting(big) and not store.discord_write_waiting(7)
    assert not store.discord_write_waiting(big, kind="delete")
    assert store.discord_write_exists(first) and not store.discord_write_exists(second)
    assert store.drop_discord_writes_for(big) == 1
    assert store.discord_writes_waiting() == 0
    clock.now += 1
    store.put_discord_reply(big, 2, 5, 4, ["r1"])
    clock.now += 1
    store.put_discord_reply(8, 2, 6, 4, [])
    assert [r["message_id"] for r in store.list_discord_replies(2)] == [8, big]
    assert first != second
