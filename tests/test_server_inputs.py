"""The webhook server at its input edges: odd signed payloads, repository names, TRIAGE_REPOS,
webhook secrets too short to trust, and who may read /stats."""

from __future__ import annotations

import argparse
import asyncio
import base64
import json

import pytest
from harness import (
    PANIC,
    REPO,
    Harness,
    bot_comments,
    comment_payload,
    issue_payload,
)

from bot.cli import run
from bot.cli import service as commands
from bot.config.settings import NAMES, Settings, SettingsError
from bot.server.http import WebhookLimits, create_app


def signed_payload(issue_number: int = 1) -> dict:
    return issue_payload("opened", issue_number, "crash", PANIC)


async def test_odd_signed_payloads_answer_400_and_store_nothing(harness, fake, caplog):
    huge = signed_payload()
    huge["issue"]["number"] = 2**63
    negative = signed_payload()
    negative["issue"]["number"] = -4
    string_issue = signed_payload()
    string_issue["issue"] = "not an object"
    string_repo = signed_payload()
    string_repo["repository"] = ["a", "list"]
    bool_number = signed_payload()
    bool_number["issue"]["number"] = True
    comment = comment_payload("created", 1, 5, "text")
    comment["comment"].update(body={"an": "object"}, user="a string")
    big_id = comment_payload("created", 1, 5, "text")
    big_id["comment"]["id"] = 2**70
    cases = {
        "issues": [huge, negative, string_issue, string_repo, bool_number],
        "issue_comment": [comment, big_id],
    }
    for event, payloads in cases.items():
        for payload in payloads:
            response = await harness.post(event, payload)
            assert response.status == 400, payload
    deep = b'{"action": "opened", "issue": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    response = await harness.post("issues", None, raw=deep)
    assert response.status == 400
    deep_object = b'{"a":' * 100_000 + b"1" + b"}" * 100_000
    response = await harness.post("issues", None, raw=deep_object)
    assert response.status == 400
    digits = b'{"action": "opened", "issue": {"number": ' + b"9" * 5000 + b"}}"
    response = await harness.post("issues", None, raw=digits)  # past Python's int-digits limit
    assert response.status == 400
    assert harness.state.store.list_jobs() == []
    assert "Traceback" not in caplog.text
    refused = harness.state.metrics.value("triage_deliveries_refused_total", reason="malformed")
    assert refused == 10


@pytest.mark.parametrize(
    "full_name",
    ["acme/../evil/repo", "acme/..", "../evil", "acme/repo/issues", "acme/re po", "/repo", "a/"],
)
async def test_repository_names_that_are_not_owner_slash_name_are_refused(harness, fake, full_name):
    payload = signed_payload()
    payload["repository"]["full_name"] = full_name
    response = await harness.post("issues", payload)
    assert response.status == 400
    assert harness.state.store.list_jobs() == []
    assert fake.calls() == []


async def test_triage_repos_refuses_deliveries_for_other_repositories(fake, tmp_path, triage):
    fake.add_repo("elsewhere/secret")
    mine = fake.add_issue(REPO, "crash", PANIC)
    theirs = fake.add_issue("elsewhere/secret", "crash", PANIC)
    h = await Harness(fake, tmp_path / "db.sqlite3", triage, TRIAGE_REPOS=REPO).start()
    try:
        other = issue_payload("opened", theirs.number, "crash", PANIC)
        other["repository"]["full_name"] = "elsewhere/secret"
        response = await h.post("issues", other)
        assert response.status == 403
        response = await h.post("issues", issue_payload("opened", mine.number, "crash", PANIC))
        assert response.status == 202
        await h.settle()
        assert [j.repo for j in h.state.store.list_jobs()] == [REPO]
    finally:
        await h.stop()
    assert len(bot_comments(fake, mine.number)) == 1
    assert fake.calls(pattern="^/repos/elsewhere/") == []


async def test_triage_repos_by_owner_and_jobs_queued_before_it_was_set(fake, tmp_path, triage):
    """A job for a repository outside TRIAGE_REPOS (queued before the list was set) is dropped
    by the worker without a request to GitHub."""
    db = tmp_path / "db.sqlite3"
    fake.add_repo("elsewhere/secret")
    theirs = fake.add_issue("elsewhere/secret", "crash", PANIC)
    owner = REPO.split("/")[0].lower()
    h = Harness(fake, db, triage, TRIAGE_REPOS=f"{owner},other-org/x")
    assert h.settings.repo_allowed(REPO) and not h.settings.repo_allowed("elsewhere/secret")
    await h.start()
    try:
        h.state.store.enqueue({"repo": "elsewhere/secret", "number": theirs.number})
        h.state.worker.wake()
        await h.settle()
        [job] = h.state.store.list_jobs(["dead"])
        assert "TRIAGE_REPOS" in (job.last_error or "")
    finally:
        await h.stop()
    assert fake.calls() == []


def test_triage_repos_setting_is_validated():
    s = Settings.from_mapping({"TRIAGE_REPOS": "Tracel-AI/burn, my-org\nother/x.y"})
    assert s.triage_repos == ("tracel-ai/burn", "my-org", "other/x.y")
    assert s.repo_allowed("tracel-ai/Burn") and s.repo_allowed("my-org/anything")
    assert not s.repo_allowed("tracel-ai/other")
    for bad in ("acme/../evil", "a/b/c", "-x", "acme/.."):
        with pytest.raises(SettingsError, match="TRIAGE_REPOS"):
            Settings.from_mapping({"TRIAGE_REPOS": bad})
    assert Settings.from_mapping({}).repo_allowed("anyone/anything")


def test_a_short_webhook_secret_stops_start_up_naming_it(tmp_path, triage):
    settings = Settings.from_mapping(
        {
            "GITHUB_TOKEN": "ghp_x",
            "GITHUB_WEBHOOK_SECRET": "a-long-enough-secret,short",
            "TRIAGE_DB": str(tmp_path / "db.sqlite3"),
        }
    )
    with pytest.raises(SettingsError, match="GITHUB_WEBHOOK_SECRET") as caught:
        create_app(settings, triage=triage)
    assert "16" in str(caught.value) and "short" not in str(caught.value)  # never the secret
    with pytest.raises(SettingsError, match="GITHUB_WEBHOOK_SECRET"):
        settings.require_github(webhook=True)


def test_serve_refuses_a_short_webhook_secret(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for name in NAMES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_x")
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", "fifteen-chars-x")
    monkeypatch.setenv("TRIAGE_DB", str(tmp_path / "db.sqlite3"))
    parser = argparse.ArgumentParser()
    commands.register(parser.add_subparsers())
    args = parser.parse_args(["serve", "--port", "0"])
    assert run(args) == 2
    err = capsys.readouterr().err
    assert "GITHUB_WEBHOOK_SECRET" in err and "fifteen-chars-x" not in err


# --- /stats and the address `serve` listens on -----------------------------------------------


STATS_TOKEN = "stats-token-0123456789"


async def test_stats_is_off_unless_a_token_is_set(harness):
    async with harness.session.get(harness.server.make_url("/stats")) as response:
        assert response.status == 404


async def test_stats_asks_for_its_token(fake, tmp_path, triage):
    h = Harness(fake, tmp_path / "db.sqlite3", triage, TRIAGE_STATS_TOKEN=STATS_TOKEN)
    await h.start()
    url = h.server.make_url("/stats")

    async def status(authorization: str | None) -> int:
        headers = {"Authorization": authorization} if authorization else {}
        async with h.session.get(url, headers=headers) as response:
            await response.read()
            if response.status == 401:
                assert response.headers["WWW-Authenticate"].startswith("Basic")
            return response.status

    def basic(user: str, password: str) -> str:
        return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()

    try:
        assert await status(None) == 401
        assert await status("Bearer wrong-token") == 401
        assert await status(f"Bearer {STATS_TOKEN}x") == 401
        assert await status(basic("stats", "wrong")) == 401
        assert await status("Basic !!!not-base64") == 401
        assert await status(f"Token {STATS_TOKEN}") == 401
        assert await status(f"Bearer {STATS_TOKEN}") == 200
        assert await status(basic("anyone", STATS_TOKEN)) == 200
    finally:
        await h.stop()


def test_serve_listens_on_loopback_unless_told(monkeypatch):
    parser = argparse.ArgumentParser()
    commands.register(parser.add_subparsers())
    assert parser.parse_args(["serve"]).host is None  # then TRIAGE_HOST, default 127.0.0.1
    assert Settings.from_mapping({}).triage_host == "127.0.0.1"
    assert Settings.from_mapping({"TRIAGE_HOST": "0.0.0.0"}).triage_host == "0.0.0.0"


def test_doctor_warns_when_serve_listens_everywhere(tmp_path):
    from bot.cli.doctor.check import WARN
    from bot.cli.doctor.settings_check import check_settings

    base = {"GITHUB_TOKEN": "ghp_x", "GITHUB_WEBHOOK_SECRET": "a-long-enough-secret"}
    quiet = check_settings(Settings.from_mapping(base), [])
    assert not any(d.startswith("warning: TRIAGE_HOST") for d in quiet.details)
    loud = check_settings(Settings.from_mapping(base | {"TRIAGE_HOST": "0.0.0.0"}), [])
    assert loud.status == WARN
    [warning] = [d for d in loud.details if d.startswith("warning: TRIAGE_HOST")]
    assert "/metrics" in warning and "/stats" not in warning
    with_stats = base | {"TRIAGE_HOST": "::", "TRIAGE_STATS_TOKEN": STATS_TOKEN}
    loud = check_settings(Settings.from_mapping(with_stats), [])
    [warning] = [d for d in loud.details if d.startswith("warning: TRIAGE_HOST")]
    assert "/metrics and /stats" in warning
    assert STATS_TOKEN not in json.dumps(loud.details)


# --- bursts and the in-flight bounds ---------------------------------------------------------


async def test_a_burst_of_genuine_deliveries_waits_its_turn_and_is_all_accepted(harness, fake):
    """GitHub does not redeliver by itself: a burst beyond the concurrent-request bound queues
    (unread) instead of being refused."""
    harness.state.limits = WebhookLimits(max_concurrent=2, max_inflight_bytes=4 * 1024 * 1024)
    issues = [fake.add_issue(REPO, f"crash {n}", PANIC) for n in range(40)]
    payloads = [issue_payload("opened", i.number, i.title, PANIC) for i in issues]
    responses = await asyncio.gather(*(harness.post("issues", p) for p in payloads))
    assert [r.status for r in responses] == [202] * 40
    assert len(harness.state.store.list_jobs()) == 40


async def test_past_the_waiting_bound_a_delivery_gets_503_before_its_body_is_read(harness):
    # every body takes a slot before it is read (small ones are read first by default)
    limits = WebhookLimits(max_concurrent=1, max_waiting=0, turn_wait=0.2, unslotted_body=0)
    harness.state.limits = limits
    host, port = harness.server.host, harness.server.port
    # one request holds the only slot: its body is announced but never sent
    _, writer = await asyncio.open_connection(host, port)
    writer.write(
        (
            "POST /github/webhook HTTP/1.1\r\n"
            f"Host: {host}\r\nX-GitHub-Event: issues\r\n"
            "X-Hub-Signature-256: sha256=00\r\nContent-Length: 1000\r\n\r\n{"
        ).encode()
    )
    await writer.drain()
    try:
        for _ in range(100):
            if harness.state.inflight.requests == 1:
                break
            await asyncio.sleep(0.01)
        response = await harness.post("issues", signed_payload())
        assert response.status == 503 and response.headers["Retry-After"] == "5"
        busy = harness.state.metrics.value("triage_deliveries_refused_total", reason="busy")
        assert busy == 1
    finally:
        writer.close()
    # the slot comes back when that request goes away
    for _ in range(100):
        if harness.state.inflight.requests == 0:
            break
        await asyncio.sleep(0.02)
    assert harness.state.inflight.requests == 0 and harness.state.inflight.bytes == 0


def test_serve_warns_when_it_listens_on_every_interface(tmp_path, monkeypatch, caplog, triage):
    import logging

    from bot.server import http as server

    started = []

    async def serve(app, host, port, **options):
        started.append(host)

    monkeypatch.setattr(server, "serve_until_stopped", serve)
    monkeypatch.setattr(server, "load_triage", lambda settings: triage)
    settings = Settings.from_mapping(
        {"DISCORD_TOKEN": "x" * 30, "TRIAGE_DB": str(tmp_path / "db.sqlite3")}
    )
    with caplog.at_level(logging.WARNING, logger="bot.server.http"):
        server.run(settings, "127.0.0.1", 0)
        assert not caplog.records
        server.run(settings, "0.0.0.0", 0)
    assert started == ["127.0.0.1", "0.0.0.0"]
    [record] = caplog.records
    assert "0.0.0.0" in record.getMessage() and "/metrics" in record.getMessage()
