"""`serve` with Discord on: the real start-up (discord.py against the fake Discord), `/healthz`,
`/metrics`, retries, and `doctor` naming the missing intent.

The server app runs in-process on 127.0.0.1 (`create_app` + aiohttp's TestServer), configured
only by settings, as `triage-bot serve` builds it; discord.py talks to the fake over HTTP and
its gateway websocket.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import sqlite3
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestServer
from fakes.discord_gateway import FakeDiscord, patched_discord
from harness import eventually

from bot.app import Triage
from bot.cli.doctor.check import FAIL, OK
from bot.cli.doctor.discord_check import check_discord
from bot.config.settings import Settings, SettingsError
from bot.discord import client as discord_client
from bot.server.http import STATE, create_app
from bot.store.sqlite import Store

AVG_PANIC = (
    "thread 'main' panicked at crates/burn-autodiff/src/ops/module.rs:1498:9:\n"
    "Can't differentiate avg pool 2d backward.\n"
)
# guilds (1 << 0), guild messages (1 << 9), message content (1 << 15): nothing else
LEAST_INTENTS = (1 << 0) | (1 << 9) | (1 << 15)


@dataclass
class Served:
    fake: FakeDiscord
    server: TestServer
    session: aiohttp.ClientSession

    @property
    def status(self) -> Any:
        return self.server.app[STATE].discord_status

    async def get(self, path: str) -> tuple[int, Any]:
        async with self.session.get(self.server.make_url(path)) as response:
            if path == "/healthz":
                return response.status, await response.json()
            return response.status, await response.text()


@contextlib.asynccontextmanager
async def serving(
    tmp_path: Path,
    triage: Triage,
    prepare: Callable[[FakeDiscord], Any] = lambda f: None,
    store: Store | None = None,
    **env: str,
) -> AsyncIterator[Served]:
    async with patched_discord() as fake:
        prepare(fake)
        values = {
            "DISCORD_TOKEN": "fake-token",
            "DISCORD_CHANNEL_IDS": fake.watched["id"],
            "TRIAGE_DB": str(tmp_path / "serve.sqlite3"),
        }
        values.update(env)
        app = create_app(Settings.from_mapping(values), triage=triage, store=store)
        server = TestServer(app, host="127.0.0.1")
        await server.start_server()
        session = aiohttp.ClientSession()
        try:
            yield Served(fake, server, session)
        finally:
            await session.close()
            await server.close()


def metric(text: str, name: str) -> float:
    found = re.search(rf"^{re.escape(name)} (\S+)$", text, re.MULTILINE)
    assert found, f"{name} not in /metrics"
    return float(found.group(1))


async def test_serve_starts_discord_with_the_least_intents_and_reports_it(tmp_path, triage):
    async with serving(tmp_path, triage) as served:
        fake = served.fake
        await eventually(lambda: served.status.connected)
        assert fake.identify is not None and fake.identify["intents"] == LEAST_INTENTS
        status, health = await served.get("/healthz")
        assert status == 200
        assert health["status"] == "ok" and health["discord"] == "connected as triage-bot"
        _, metrics = await served.get("/metrics")
        assert metric(metrics, "triage_discord_connected") == 1
        assert metric(metrics, 'triage_discord_state{state="connected"}') == 1
        # and it answers: the real start-up, not a stand-in
        alice = fake.user("alice")
        message = await fake.send_message(fake.watched, alice, AVG_PANIC)
        reply = await fake.wait_request("POST", rf"/channels/{fake.watched['id']}/messages")
        assert reply.body["message_reference"]["message_id"] in (message["id"], int(message["id"]))


def intent_off(fake: FakeDiscord) -> None:
    fake.app_flags = 0  # Message Content Intent switched off in the portal


async def test_refused_intent_stops_discord_and_shows_in_health_and_metrics(tmp_path, triage):
    async with serving(tmp_path, triage, intent_off) as served:
        await eventually(lambda: served.status.state == "stopped")
        status, health = await served.get("/healthz")
        # Discord is all this process serves: it is down
        assert status == 503 and health["status"] == "degraded"
        assert health["discord"].startswith("stopped: Discord refused the Message Content intent")
        assert "close code 4014" in health["discord"]
        _, metrics = await served.get("/metrics")
        assert metric(metrics, "triage_discord_connected") == 0
        assert metric(metrics, 'triage_discord_state{state="stopped"}') == 1
        assert metric(metrics, 'triage_discord_errors_total{kind="intents-refused"}') == 1
        assert 'triage_discord_last_error_timestamp_seconds{kind="intents-refused"}' in metrics
        await asyncio.sleep(0.2)
        assert len(served.fake.identifies) == 1, "a refused intent is not retried"


async def test_revoked_token_stops_discord_and_github_keeps_health_at_200(tmp_path, triage, fake):
    github = {
        "GITHUB_TOKEN": "ghp_bot_token",
        "GITHUB_WEBHOOK_SECRET": "discord-serve-webhook-secret",
        "GITHUB_API_URL": fake.base_url,
    }
    async with serving(tmp_path, triage, **github) as served:
        await eventually(lambda: served.status.connected)
        await served.fake.revoke_token()
        await eventually(lambda: served.status.state == "stopped")
        status, health = await served.get("/healthz")
        assert status == 200, "GitHub is still answered"
        assert health["status"] == "degraded" and health["worker"] == "ok"
        assert "Discord rejected DISCORD_TOKEN (close code 4004)" in health["discord"]
        _, metrics = await served.get("/metrics")
        assert metric(metrics, 'triage_discord_errors_total{kind="token-rejected"}') == 1
        assert metric(metrics, 'triage_discord_errors_total{kind="disconnected"}') == 1
        assert metric(metrics, "triage_discord_connected") == 0


async def test_a_wrong_token_is_not_retried(tmp_path, triage):
    async with serving(tmp_path, triage, DISCORD_TOKEN="not-the-token") as served:
        await eventually(lambda: served.status.state == "stopped")
        _, health = await served.get("/healthz")
        assert "Discord rejected DISCORD_TOKEN (401 at login)" in health["discord"]
        await asyncio.sleep(0.2)
        logins = served.fake.find("GET", "/users/@me")
        assert [r.status for r in logins] == [401] and served.fake.identifies == []


async def test_a_transient_login_failure_is_retried_with_backoff(
    tmp_path, triage, monkeypatch, caplog
):
    monkeypatch.setattr(discord_client, "FIRST_RETRY", 0.05)

    def outage(fake: FakeDiscord) -> None:
        fake.refused_logins = 4  # the first four requests: the connection drops unanswered

    caplog.set_level("WARNING", logger="bot.discord.client")
    async with serving(tmp_path, triage, outage) as served:
        # while it waits between attempts, /healthz says so
        await eventually(lambda: served.status.state == "retrying")
        _, health = await served.get("/healthz")
        assert health["status"] == "degraded" and "retrying in" in health["discord"]
        await eventually(lambda: served.status.connected)
        logins = served.fake.find("GET", "/users/@me")
        assert [r.status for r in logins] == [-1, -1, -1, -1, 200]
        # aiohttp itself retries a dropped idempotent request once; every failure that
        # reached the bot was retried after a delay twice the one before
        delays = [
            float(m.group(1))
            for r in caplog.records
            if r.name == "bot.discord.client"
            if (m := re.search(r"retrying in (\S+) s", r.getMessage()))
        ]
        assert len(delays) >= 2 and delays == [0.05 * 2**i for i in range(len(delays))]
        _, metrics = await served.get("/metrics")
        assert metric(metrics, 'triage_discord_errors_total{kind="login-failed"}') == len(delays)
        status, health = await served.get("/healthz")
        assert status == 200 and health["status"] == "ok"


@pytest.mark.parametrize(("flags", "expected"), [(0, FAIL), (1 << 19, OK), (1 << 18, OK)])
async def test_doctor_names_the_missing_message_content_intent(tmp_path, flags, expected):
    async with patched_discord() as fake:  # doctor uses discord.py's API base, the fake
        fake.app_flags = flags
        settings = Settings.from_mapping({"DISCORD_TOKEN": "fake-token"})
        check = await asyncio.to_thread(check_discord, settings)
    assert check.status == expected
    if expected == FAIL:
        assert check.summary.endswith("but the Message Content intent is off")
        assert "Message Content Intent" in (check.fix or "")
    else:
        assert "Message Content intent: on" in check.details


async def test_doctor_names_a_revoked_token(tmp_path):
    async with patched_discord() as fake:
        await fake.revoke_token()
        settings = Settings.from_mapping({"DISCORD_TOKEN": "fake-token"})
        check = await asyncio.to_thread(check_discord, settings)
    assert check.status == FAIL and "DISCORD_TOKEN is rejected" in check.summary


def test_edit_debounce_setting() -> None:
    assert Settings.from_mapping({}).discord_edit_debounce == 2.0
    assert Settings.from_mapping({"DISCORD_EDIT_DEBOUNCE": "0.5"}).discord_edit_debounce == 0.5
    for wrong in ("soon", "-1", "600"):
        with pytest.raises(SettingsError) as caught:
            Settings.from_mapping({"DISCORD_EDIT_DEBOUNCE": wrong})
        assert caught.value.names == ("DISCORD_EDIT_DEBOUNCE",)


async def test_a_locked_database_stalls_neither_discord_nor_healthz(tmp_path, triage):
    path = tmp_path / "serve.sqlite3"
    store = Store(path, busy_timeout=60.0)  # waits for the lock as long as the test holds it
    try:
        async with serving(tmp_path, triage, store=store) as served:
            fake = served.fake
            await eventually(lambda: served.status.connected)
            holder = sqlite3.connect(path, isolation_level=None)
            holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock
            try:
                message = await fake.send_message(fake.watched, fake.user("alice"), AVG_PANIC)
                # the answer waits for the store; the server still answers, and tells why
                status, health = await served.get("/healthz")
                assert status == 503 and health["components"]["store"]["status"] == "error"
                assert health["discord"] == "connected as triage-bot"
                assert fake.find("POST", rf"/channels/{fake.watched['id']}/messages") == []
            finally:
                holder.execute("ROLLBACK")
                holder.close()
            reply = await fake.wait_request("POST", rf"/channels/{fake.watched['id']}/messages")
            assert str(reply.body["message_reference"]["message_id"]) == message["id"]
            await eventually(lambda: store.get_discord_reply(int(message["id"])))
            status, _ = await served.get("/healthz")
            assert status == 200
    finally:
        store.close()


async def test_a_deleted_database_shows_in_healthz_and_discord_answers_without_it(
    tmp_path, triage, caplog
):
    caplog.set_level(logging.INFO, logger="bot.discord.client")
    async with serving(tmp_path, triage) as served:
        fake = served.fake
        await eventually(lambda: served.status.connected)
        db = tmp_path / "serve.sqlite3"
        for suffix in ("", "-wal", "-shm"):
            db.with_name(db.name + suffix).unlink(missing_ok=True)
        alice = fake.user("alice")
        for _ in range(2):
            await fake.send_message(fake.watched, alice, AVG_PANIC)
        await fake.wait_request("POST", rf"/channels/{fake.watched['id']}/messages", count=2)
        status, health = await served.get("/healthz")
        # the server's rule for its store, which Discord shares: Discord alone, so 503
        assert status == 503
        assert health["components"]["store"]["detail"] == (
            f"the database file {db} was deleted while the bot runs"
        )
        assert health["discord"] == "connected as triage-bot"
        assert not db.exists()
    logged = [r.getMessage() for r in caplog.records if r.name == "bot.discord.client"]
    assert [m for m in logged if "the store cannot be used" in m] == [
        f"discord: the store cannot be used (the database file {db} was deleted while the bot "
        "runs); answers are not remembered"
    ]
