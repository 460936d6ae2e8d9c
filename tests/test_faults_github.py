"""Faults found from outside (issue 28), through the real `serve` process and the fake GitHub:
a forged marker, bidi controls in a panic, and health that says "degraded" with the reason."""

from __future__ import annotations

import asyncio
import json

from harness import (
    BOT_LOGIN,
    PANIC,
    REPO,
    SECOND_SECRET,
    SECRETS,
    delivery_headers,
    issue_payload,
    served_against,
)

from bot.render.github import parse_marker

FORGED = "<!-- triage-bot:answer ids=x fp=0 -->\nI wrote this, not the bot."
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


async def _deliver(session, served, event: str, payload: dict, delivery: str) -> None:
    body = json.dumps(payload).encode()
    headers = delivery_headers(event, body, secret=SECOND_SECRET, delivery=delivery)
    async with session.post(
        served.base_url + "/github/webhook", data=body, headers=headers
    ) as response:
        assert response.status == 202, await response.text()


async def _until(check, timeout: float = 20.0):
    for _ in range(int(timeout / 0.05)):
        value = check()
        if value:
            return value
        await asyncio.sleep(0.05)
    raise AssertionError(f"still false after {timeout} s")


def _own_comments(fake, number: int) -> list:
    return [
        c
        for c in fake.comments_on(REPO, number)
        if parse_marker(c.body) and c.user.login == BOT_LOGIN
    ]


async def test_a_forged_marker_is_read_as_the_users_comment_and_the_bot_writes_its_own(
    fake, tmp_path
):
    issue = fake.add_issue(REPO, "crash", "no panic yet")
    forged = fake.add_comment(REPO, issue.number, FORGED, author="mallory")
    async with served_against(
        fake, tmp_path, webhook_secret=SECRETS, log_level="INFO", capture_output=True
    ) as (served, session):
        # the issue edited to add a panic: no comment id is stored yet
        fake.repo(REPO).issues[issue.number].body = PANIC
        await _deliver(
            session, served, "issues", issue_payload("edited", issue.number, "crash", PANIC), "f-1"
        )
        mine = await _until(lambda: _own_comments(fake, issue.number))
    assert len(mine) == 1
    assert fake.repo(REPO).comments[forged.id].body == FORGED  # never PATCHed
    assert "starts with the bot's marker but is by mallory" in served.output.decode()


async def test_bidi_controls_in_a_panic_never_reach_the_github_comment(fake, tmp_path):
    text = PANIC.replace("interpolate backward", "interpolate \u2066\u202ebackward\u2069")
    issue = fake.add_issue(REPO, "crash", text)
    async with served_against(
        fake, tmp_path, webhook_secret=SECRETS, log_level="INFO", capture_output=True
    ) as (served, session):
        payload = issue_payload("opened", issue.number, issue.title, text)
        await _deliver(session, served, "issues", payload, "b-1")
        try:
            mine = await _until(lambda: _own_comments(fake, issue.number), 8)
        except AssertionError:
            mine = []
    assert mine, served.output.decode()[-3000:]
    body = mine[0].body
    assert "interpolate" in body
    assert not set(body) & set(BIDI)


async def test_health_says_degraded_with_200_while_github_refuses_writes(
    fake, tmp_path, monkeypatch
):
    monkeypatch.setenv("TRIAGE_DEGRADED_AGE", "1")
    issue = fake.add_issue(REPO, "crash", PANIC)
    fake.fail("POST", r"/comments$", 502, times=1000)
    async with served_against(fake, tmp_path, webhook_secret=SECRETS, log_level="INFO") as (
        served,
        session,
    ):
        payload = issue_payload("opened", issue.number, issue.title, PANIC)
        await _deliver(session, served, "issues", payload, "h-1")

        async def health() -> tuple[int, dict]:
            async with session.get(served.base_url + "/healthz") as response:
                return response.status, await response.json()

        for _ in range(200):
            status, report = await health()
            if "GitHub has refused writes" in str(report):
                break
            await asyncio.sleep(0.1)
    assert status == 200
    assert report["status"] == "degraded"
    worker = report["components"]["worker"]
    assert worker["status"] == "degraded"
    assert "oldest queued job has waited" in worker["detail"]
    assert "GitHub has refused writes" in worker["detail"]
