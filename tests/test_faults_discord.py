"""Discord answers after repeated 429s (issue 28, point 5), through the real `serve` process
against the fake Discord: discord.py's own retries run out, the answer waits in the store and
is sent later; one refused past TRIAGE_DISCORD_ANSWER_DEADLINE is dropped and counted; an answer
to a message deleted while the bot was away is removed at start.

The process is `triage-bot serve` as a maintainer runs it, with only discord.py's endpoints
pointed at the fake (discord.py reads no setting for them)."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sqlite3
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
from fakes.discord_gateway import FakeDiscord, patched_discord
from harness import eventually
from serve_process import free_port

from bot.store.sqlite import Store

AVG_PANIC = (
    "thread 'main' panicked at crates/burn-autodiff/src/ops/module.rs:1498:9:\n"
    "Can't differentiate avg pool 2d backward.\n"
)
SHIM = (
    "import os, sys, yarl, discord.http, discord.gateway\n"
    "discord.http.Route.BASE = os.environ['FAKE_DISCORD_API']\n"
    "discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(os.environ['FAKE_DISCORD_WS'])\n"
    "from bot.cli import main\n"
    "raise SystemExit(main())\n"
)


@asynccontextmanager
async def discord_serve(
    fake: FakeDiscord, workdir: Path, **env: str
) -> AsyncIterator[tuple[str, aiohttp.ClientSession]]:
    """`serve` with Discord only, in its own process; yields once /healthz says 200."""
    port = free_port()
    values = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "DISCORD_"))}
    values.update(
        DISCORD_TOKEN=fake.token,
        DISCORD_CHANNEL_IDS=fake.watched["id"],
        TRIAGE_DB=str(workdir / "serve.sqlite3"),
        FAKE_DISCORD_API=fake.api_base,
        FAKE_DISCORD_WS=fake.gateway_url,
        LOG_LEVEL="INFO",
        **env,
    )
    process = await asyncio.create_subprocess_exec(
        *(sys.executable, "-c", SHIM, "serve", "--port", str(port)),
        env=values,
        cwd=str(workdir),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession() as session:

            async def healthy() -> bool:
                try:
                    async with session.get(base + "/healthz") as response:
                        return response.status == 200
                except aiohttp.ClientConnectionError:
                    return False

            for _ in range(600):
                if await healthy():
                    break
                await asyncio.sleep(0.05)
            else:
                raise AssertionError("serve did not become healthy")
            yield base, session
    finally:
        process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(process.wait(), 30)


async def metrics(session: aiohttp.ClientSession, base: str) -> str:
    async with session.get(base + "/metrics") as response:
        return await response.text()


def metric(text: str, name: str) -> float:
    found = re.search(rf"^{re.escape(name)} (\S+)$", text, re.MULTILINE)
    return float(found.group(1)) if found else -1.0


def replies_to(fake: FakeDiscord, message: dict) -> list[dict]:
    return [
        m
        for m in fake.bot_messages()
        if (m.get("message_reference") or {}).get("message_id") == message["id"]
    ]


def waiting_writes(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM discord_outbox").fetchone()[0])


async def test_an_answer_refused_by_repeated_429s_is_sent_later_from_the_store(tmp_path):
    async with patched_discord() as fake:
        posts = rf"/channels/{fake.watched['id']}/messages"
        # discord.py tries 5 times on its own: these outlast it, then Discord lets it through
        fake.rate_limit("POST", posts, retry_after=0.05, times=8)
        async with discord_serve(fake, tmp_path) as (base, session):
            alice = fake.user("alice")
            message = await fake.send_message(fake.watched, alice, AVG_PANIC)
            await eventually(lambda: replies_to(fake, message), timeout=20)
            await asyncio.sleep(1.5)  # nothing more comes
            text = await metrics(session, base)
    assert len(replies_to(fake, message)) == 1
    assert [r.status for r in fake.find("POST", posts)].count(429) == 8
    assert metric(text, 'triage_discord_writes_total{outcome="retried"}') >= 1
    assert metric(text, 'triage_discord_writes_total{outcome="sent"}') == 1
    assert metric(text, "triage_discord_answers_dropped_total") == 0
    assert waiting_writes(tmp_path / "serve.sqlite3") == 0
    with Store(tmp_path / "serve.sqlite3") as store:
        remembered = store.get_discord_reply(int(message["id"]))
    assert remembered is not None  # edits and deletes follow it
    assert str(remembered["reply_id"]) == replies_to(fake, message)[0]["id"]


async def test_an_answer_still_refused_at_its_deadline_is_dropped_and_counted(tmp_path):
    async with patched_discord() as fake:
        posts = rf"/channels/{fake.watched['id']}/messages"
        fake.rate_limit("POST", posts, retry_after=0.05, times=100_000)
        async with discord_serve(fake, tmp_path, TRIAGE_DISCORD_ANSWER_DEADLINE="3") as (
            base,
            session,
        ):
            alice = fake.user("alice")
            message = await fake.send_message(fake.watched, alice, AVG_PANIC)

            async def dropped() -> float:
                return metric(await metrics(session, base), "triage_discord_answers_dropped_total")

            for _ in range(200):
                if await dropped() == 1:
                    break
                await asyncio.sleep(0.1)
            text = await metrics(session, base)
            async with session.get(base + "/healthz") as response:
                health = (response.status, await response.json())
            tries = len(fake.find("POST", posts))
            await asyncio.sleep(1.5)
            assert len(fake.find("POST", posts)) == tries, "not tried after it was dropped"
    assert metric(text, "triage_discord_answers_dropped_total") == 1
    assert metric(text, 'triage_discord_writes_total{outcome="retried"}') >= 1
    # still connected and answering others: degraded with the reason, never out of rotation
    assert health[0] == 200 and health[1]["status"] == "degraded", health
    assert "1 answer dropped: Discord refused it" in health[1]["discord"]
    assert replies_to(fake, message) == []
    assert tries > 5  # discord.py's own tries, and the queue's
    assert waiting_writes(tmp_path / "serve.sqlite3") == 0


async def test_an_answer_to_a_message_deleted_while_away_is_removed_at_start(tmp_path):
    async with patched_discord() as fake:
        alice = fake.user("alice")
        gone = fake.next_id()  # deleted while the bot was stopped: not in fake.messages
        kept = fake.message_payload(fake.watched, alice, AVG_PANIC)
        fake.messages[kept["id"]] = kept
        answers = []
        for _ in range(2):
            answer = fake.message_payload(fake.watched, fake.bot_user, "answer")
            fake.messages[answer["id"]] = answer
            answers.append(answer)
        with Store(tmp_path / "serve.sqlite3") as store:
            for source, answer in zip((gone, kept["id"]), answers, strict=True):
                store.put_discord_reply(
                    int(source), int(fake.watched["id"]), int(answer["id"]), 1, ["r"]
                )
        async with discord_serve(fake, tmp_path) as (base, session):
            await eventually(lambda: answers[0]["id"] not in fake.messages, timeout=20)
            for _ in range(100):
                text = await metrics(session, base)
                if metric(text, "triage_discord_orphans_removed_total") == 1:
                    break
                await asyncio.sleep(0.05)
    assert metric(text, "triage_discord_orphans_removed_total") == 1
    assert answers[1]["id"] in fake.messages  # its message is still there
    with Store(tmp_path / "serve.sqlite3") as store:
        assert store.get_discord_reply(int(gone)) is None
        assert store.get_discord_reply(int(kept["id"])) is not None


async def test_an_answer_waiting_for_discord_is_dropped_when_its_message_is_deleted(tmp_path):
    async with patched_discord() as fake:
        posts = rf"/channels/{fake.watched['id']}/messages"
        fake.rate_limit("POST", posts, retry_after=0.05, times=100_000)
        async with discord_serve(fake, tmp_path) as (base, session):
            alice = fake.user("alice")
            message = await fake.send_message(fake.watched, alice, AVG_PANIC)
            # discord.py's own tries are spent: the answer waits in the store
            for _ in range(200):
                text = await metrics(session, base)
                if metric(text, 'triage_discord_writes_total{outcome="retried"}') >= 1:
                    break
                await asyncio.sleep(0.05)
            fake.rate_limits.clear()
            await fake.delete_message(message)
            for _ in range(200):
                text = await metrics(session, base)
                if metric(text, 'triage_discord_writes_total{outcome="source-deleted"}') == 1:
                    break
                await asyncio.sleep(0.05)
            await asyncio.sleep(1.5)  # past the backoff: nothing is sent
    assert metric(text, 'triage_discord_writes_total{outcome="source-deleted"}') == 1
    assert fake.bot_messages() == []
    assert waiting_writes(tmp_path / "serve.sqlite3") == 0
