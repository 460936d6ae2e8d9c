"""Three real `triage-bot serve` processes on one PostgreSQL, against the fake GitHub.

300 signed deliveries are spread over the replicas: every delivery is sent twice (to two
different replicas, as GitHub's redelivery and a load balancer would), an issue's `opened` and
`edited` land on two different replicas, and one replica is killed with SIGKILL while it runs a
job. A delivery sent to the dead replica is sent again to a live one, like GitHub redelivering
it. In the end every issue has exactly one bot comment with the latest answer and the right
labels, every delivery was recorded once, no job is lost or stuck, and `triage-bot jobs list`
says so.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import aiohttp
import pytest
from harness import (
    ANSWER_LABELS,
    AVG_POOL,
    INTERPOLATE,
    PANIC,
    PANIC_AVG_POOL,
    REPO,
    comment_payload,
    delivery_headers,
    issue_payload,
)
from postgres_schema import fresh_schema, postgres_or_skip

from bot.render.github import parse_marker
from bot.store.sqlite import Store

SECRET = "replica-webhook-secret-0123"
ISSUES = 50  # x 3 deliveries x 2 sends = 300 deliveries
LEASE = 2.0  # seconds: a killed replica's job is taken over this soon
REPLICAS = 3

# `triage-bot serve` exactly as the command line runs it, with GitHub's write pacing (0.5 s)
# shortened to 0.05 s on two replicas (the in-process tests use 0) so the burst fits in the
# test's time. The victim keeps 0.5 s: its jobs last long enough to be killed in the middle.
LAUNCH = (
    "import os, sys, bot.github.auth as auth\n"
    "pace = float(os.environ['TEST_WRITE_PACE'])\n"
    "auth.DEFAULT_OPTIONS = auth.ClientOptions(timeout=10, seconds_between_writes=pace)\n"
    "from bot.cli import main\n"
    "raise SystemExit(main(sys.argv[1:]))\n"
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Replica:
    def __init__(self, index: int, db: str, api_url: str, logs: Path, pace: float) -> None:
        self.index = index
        self.port = free_port()
        self.log_path = logs / f"replica-{index}.log"
        env = {
            **os.environ,
            "GITHUB_TOKEN": "ghp_bot_token",
            "GITHUB_WEBHOOK_SECRET": SECRET,
            "GITHUB_API_URL": api_url,
            "TRIAGE_DB": db,
            "TRIAGE_JOB_LEASE": str(LEASE),
            "LOG_LEVEL": "INFO",
            "TEST_WRITE_PACE": str(pace),
        }
        for name in ("DISCORD_TOKEN", "GITHUB_APP_ID", "TRIAGE_CATALOG", "TRIAGE_CONFIG"):
            env.pop(name, None)
        self.log = self.log_path.open("w")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                LAUNCH,
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
            ],
            env=env,
            cwd=logs,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        self.alive = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)
        self.alive = False

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.log.close()

    def output(self) -> str:
        self.log.flush()
        return self.log_path.read_text()


async def wait_healthy(session: aiohttp.ClientSession, replica: Replica, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if replica.proc.poll() is not None:
            raise AssertionError(f"replica {replica.index} exited:\n{replica.output()[-3000:]}")
        try:
            async with session.get(replica.url + "/healthz") as response:
                if response.status == 200:
                    return
        except aiohttp.ClientError:
            pass
        await asyncio.sleep(0.2)
    raise AssertionError(f"replica {replica.index} not healthy:\n{replica.output()[-3000:]}")


def db_rows(db: str, sql: str, args: tuple = ()) -> list[tuple]:
    import psycopg

    with psycopg.connect(db) as conn:
        return conn.execute(sql, args).fetchall()


@pytest.fixture
def db() -> str:
    with fresh_schema(postgres_or_skip(), "triage_replicas") as url:
        yield url


async def test_three_replicas_answer_each_issue_once_through_a_sigkill(db, fake, tmp_path):
    # an empty schema: the three replicas start together and migrate it once between them
    replicas = [
        Replica(i, db, fake.base_url, tmp_path, pace=0.5 if i == 1 else 0.05)
        for i in range(REPLICAS)
    ]
    victim = replicas[1]
    statuses: dict[str, list[int]] = {}
    sent = 0
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as session:
            await asyncio.gather(*(wait_healthy(session, r, 90) for r in replicas))
            versions = db_rows(db, "SELECT version FROM schema_version ORDER BY version")
            assert [v for (v,) in versions] == list(range(1, Store.latest_version() + 1))

            async def deliver(delivery: str, event: str, payload: dict, index: int) -> None:
                """Send to replica `index`; when it is dead, to the next live one."""
                nonlocal sent
                body = json.dumps(payload).encode()
                headers = {
                    **delivery_headers(event, body, secret=SECRET, delivery=delivery),
                    "Content-Type": "application/json",
                }
                sent += 1
                for step in range(REPLICAS * 2):
                    replica = replicas[(index + step) % REPLICAS]
                    if not replica.alive:
                        continue
                    try:
                        async with session.post(
                            replica.url + "/github/webhook", data=body, headers=headers
                        ) as response:
                            await response.read()
                            statuses.setdefault(delivery, []).append(response.status)
                            assert response.status in (200, 202), (delivery, response.status)
                            return
                    except aiohttp.ClientError:
                        continue  # killed under our feet: GitHub would redeliver elsewhere
                raise AssertionError(f"no replica took {delivery}")

            async def one_issue(n: int) -> None:
                """opened, edited, a comment: each sent to two replicas, in GitHub's order."""
                kind = n % 3
                first = ("no panic here, just a question", PANIC_AVG_POOL, PANIC)[kind]
                final = PANIC + ("\nstill failing after an update" if kind == 2 else "")
                issue = fake.add_issue(REPO, f"issue {n}", first)
                number = issue.number
                opened = issue_payload("opened", number, issue.title, first)
                await deliver(f"open-{number}", "issues", opened, n)
                await deliver(f"open-{number}", "issues", opened, n + 1)
                fake.edit_issue(REPO, number, body=final)
                edited = issue_payload("edited", number, issue.title, final)
                await deliver(f"edit-{number}", "issues", edited, n + 1)
                await deliver(f"edit-{number}", "issues", edited, n + 2)
                comment = fake.add_comment(REPO, number, "same here")
                said = comment_payload("created", number, comment.id, comment.body)
                said["repository"]["full_name"] = REPO
                await deliver(f"comment-{number}", "issue_comment", said, n + 2)
                await deliver(f"comment-{number}", "issue_comment", said, n)

            async def burst() -> None:
                limit = asyncio.Semaphore(10)

                async def bounded(n: int) -> None:
                    async with limit:
                        await one_issue(n)

                await asyncio.gather(*(bounded(n) for n in range(ISSUES)))

            async def kill_mid_burst() -> list[int]:
                """SIGKILL the victim while it holds a job; the jobs it left running."""
                pid = victim.proc.pid
                deadline = time.monotonic() + 30
                while sent < 60 and time.monotonic() < deadline:
                    await asyncio.sleep(0.01)
                held = None
                while held is None and time.monotonic() < deadline:
                    rows = await asyncio.to_thread(
                        db_rows,
                        db,
                        "SELECT id FROM jobs WHERE state = 'running' AND lease_owner LIKE %s",
                        (f"%:{pid}:%",),
                    )
                    held = rows[0][0] if rows else None
                    if held is None:
                        await asyncio.sleep(0.005)
                victim.kill()
                orphaned = await asyncio.to_thread(
                    db_rows,
                    db,
                    "SELECT id FROM jobs WHERE state = 'running' AND lease_owner LIKE %s",
                    (f"%:{pid}:%",),
                )
                return [job_id for (job_id,) in orphaned]

            burst_task = asyncio.create_task(burst())
            orphaned = await kill_mid_burst()
            await burst_task
            killed_at = time.monotonic()

            # every job done by the two live replicas, the victim's after its lease ran out
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                [(pending,)] = db_rows(
                    db, "SELECT COUNT(*) FROM jobs WHERE state IN ('queued', 'running')"
                )
                if pending == 0:
                    break
                await asyncio.sleep(0.2)
            assert pending == 0, db_rows(db, "SELECT id, state, lease_owner FROM jobs")

        assert sent == ISSUES * 6 == 300
        assert orphaned, "the victim was killed holding no job: the kill tested nothing"
        assert time.monotonic() - killed_at < 60

        # exactly one comment per issue, with the latest answer, and the right labels
        for number in sorted(fake.repo(REPO).issues):
            comments = [c for c in fake.comments_on(REPO, number) if parse_marker(c.body)]
            assert len(comments) == 1, (number, [c.body[:80] for c in comments])
            ids = parse_marker(comments[0].body)["ids"]
            assert ids == [INTERPOLATE] and AVG_POOL not in ids, (number, ids)
            labels = fake.repo(REPO).issues[number].labels
            assert sorted(labels) == sorted(ANSWER_LABELS), (number, labels)
        assert len(fake.repo(REPO).issues) == ISSUES

        # every delivery recorded once; queued (202) at most once, whichever replica got it
        recorded = [row[0] for row in db_rows(db, "SELECT delivery_id FROM deliveries")]
        assert sorted(recorded) == sorted(statuses) and len(statuses) == ISSUES * 3
        for delivery, codes in statuses.items():
            assert codes.count(202) <= 1, (delivery, codes)
            assert 200 in codes, (delivery, codes)  # the second send was a duplicate
        jobs = db_rows(db, "SELECT delivery_id, state, attempts FROM jobs")
        assert Counter(d for d, _, _ in jobs) == Counter(recorded)  # one job per delivery
        assert {state for _, state, _ in jobs} == {"done"}  # none lost, none dead

        # the jobs the victim held were taken over by a live replica once their lease ran out
        survivors = replicas[0].output() + replicas[2].output()
        assert "whose replica's lease expired" in survivors
        ends = db_rows(db, "SELECT state FROM jobs WHERE id = ANY(%s)", (orphaned,))
        assert [state for (state,) in ends] == ["done"] * len(orphaned)

        listing = subprocess.run(
            [sys.executable, "-m", "bot", "jobs", "list"],
            env={**os.environ, "TRIAGE_DB": db},
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert listing.returncode == 0 and listing.stdout.strip() == "no jobs", listing
    finally:
        for replica in replicas:
            replica.stop()


def test_the_postgres_compose_file_runs_two_replicas_on_one_database():
    import yaml

    deploy = Path(__file__).resolve().parent.parent / "deploy"
    compose = yaml.safe_load((deploy / "docker-compose.postgres.yml").read_text())
    services = compose["services"]
    replicas = {name: s for name, s in services.items() if name.startswith("triage-bot")}
    assert len(replicas) == 2 and "postgres" in services
    database = services["postgres"]
    assert database["environment"]["POSTGRES_DB"] == "triage"
    assert any(v.endswith(":/var/lib/postgresql/data") for v in database["volumes"])
    assert "pg_isready" in " ".join(database["healthcheck"]["test"])
    urls = {s["environment"]["TRIAGE_DB"] for s in replicas.values()}
    [url] = urls  # the same database for both
    assert url.startswith("postgresql://triage:") and url.endswith("@postgres:5432/triage")
    ports = set()
    for service in replicas.values():
        assert service["depends_on"]["postgres"]["condition"] == "service_healthy"
        assert (deploy / service["build"]["context"] / service["build"]["dockerfile"]).is_file()
        assert service["env_file"] == ["../.env"]
        assert float(service["environment"]["TRIAGE_JOB_LEASE"]) > 0
        [port] = service["ports"]
        assert port.startswith("127.0.0.1:") and port.endswith(":8080")
        ports.add(port)
    assert len(ports) == 2
