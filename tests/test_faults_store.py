"""A store failure while a job runs (issue 28, points 3 and 7), through the real `serve` process:
the SQLite file locked by another connection longer than the store's busy timeout while a job
writes. /healthz names the lock in words, and the issue's later delivery is still answered.
(On the old code only the wording fails here: this lock did not wedge the job.)"""

from __future__ import annotations

import asyncio
import json
import sqlite3

from harness import (
    PANIC,
    PANIC_AVG_POOL,
    REPO,
    SECOND_SECRET,
    SECRETS,
    bot_comments,
    delivery_headers,
    issue_payload,
    served_against,
)


async def test_a_lock_during_a_job_is_named_and_the_issue_is_answered_afterwards(fake, tmp_path):
    issue = fake.add_issue(REPO, "crash", PANIC)
    fake.slow("POST", r"/comments$", 1.5)  # the job is mid-write when the lock is taken
    async with served_against(fake, tmp_path, webhook_secret=SECRETS, log_level="INFO") as (
        served,
        session,
    ):

        async def deliver(payload: dict, delivery: str) -> None:
            body = json.dumps(payload).encode()
            headers = delivery_headers("issues", body, secret=SECOND_SECRET, delivery=delivery)
            async with session.post(
                served.base_url + "/github/webhook", data=body, headers=headers
            ) as response:
                assert response.status == 202

        await deliver(issue_payload("opened", issue.number, "crash", PANIC), "s-1")
        await asyncio.sleep(0.5)
        lock = sqlite3.connect(tmp_path / "serve.sqlite3", isolation_level=None)
        lock.execute("BEGIN EXCLUSIVE")
        await asyncio.sleep(7)  # longer than the store's 5 s busy timeout
        async with session.get(served.base_url + "/healthz") as response:
            assert response.status in (200, 503)  # the store is locked: named in words
            locked = await response.json()
        lock.execute("ROLLBACK")
        lock.close()
        # the issue edited: answered, not queued behind the stuck job
        fake.repo(REPO).issues[issue.number].body = PANIC_AVG_POOL
        await deliver(issue_payload("edited", issue.number, "crash", PANIC_AVG_POOL), "s-2")
        for _ in range(300):
            comments = bot_comments(fake, issue.number)
            if comments and "avg pool" in comments[0].body.lower():
                break
            await asyncio.sleep(0.05)
    assert len(comments) == 1
    assert "avg pool" in comments[0].body.lower()
    assert "locked" in json.dumps(locked)
