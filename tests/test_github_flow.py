"""End to end: GitHub's example deliveries -> the real server -> the worker -> real PyGithub ->
the fake GitHub REST API over HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import logging
from urllib.parse import urlencode

from harness import (
    ANSWER_LABELS,
    AVG_POOL,
    FIRST_SECRET,
    INTERPOLATE,
    PANIC,
    PANIC_AVG_POOL,
    REPO,
    SECOND_SECRET,
    SECRETS,
    UNKNOWN_PANIC,
    Harness,
    bot_comments,
    comment_payload,
    delivery_headers,
    fixture,
    issue_payload,
    served_against,
)

from bot.discord import client as discord_client
from bot.render.github import parse_marker
from bot.store.sqlite import Store

# --- signatures and bodies -----------


async def test_missing_and_bad_signatures_are_refused_and_nothing_is_stored(harness, fake):
    issue = fake.add_issue(REPO, "crash", PANIC)
    payload = issue_payload("opened", issue.number, issue.title, PANIC)
    missing = await harness.post("issues", payload, secret=None, delivery="d-missing")
    wrong = await harness.post("issues", payload, secret="not-the-secret", delivery="d-wrong")
    assert (missing.status, wrong.status) == (401, 401)
    body = json.dumps(payload).encode()
    signed = delivery_headers("issues", body, secret=FIRST_SECRET, delivery="d-tampered")
    assert harness.session is not None
    async with harness.session.post(harness.url, data=body + b" ", headers=signed) as tampered:
        assert tampered.status == 401
    await harness.settle()
    store = harness.state.store
    assert store.list_jobs() == []
    assert not any(store.delivery_seen(d) for d in ("d-missing", "d-wrong", "d-tampered"))
    assert fake.writes() == []
    metrics = harness.state.metrics
    assert metrics.value("triage_deliveries_refused_total", reason="missing-signature") == 1
    assert metrics.value("triage_deliveries_refused_total", reason="bad-signature") == 2


async def test_both_rotated_secrets_are_accepted(harness, fake):
    issue = fake.add_issue(REPO, "crash", PANIC)
    payload = issue_payload("opened", issue.number, issue.title, PANIC)
    one = await harness.post("issues", payload, secret=FIRST_SECRET)
    two = await harness.post("issues", payload, secret=SECOND_SECRET)
    assert (one.status, two.status) == (202, 202)


async def test_malformed_bodies_are_400(harness):
    not_json = await harness.post("issues", None, raw=b"{not json")
    not_object = await harness.post("issues", None, raw=b"[1, 2, 3]")
    no_issue = await harness.post("issues", {"action": "opened", "repository": {}})
    assert [r.status for r in (not_json, not_object, no_issue)] == [400, 400, 400]
    assert harness.state.store.list_jobs() == []


async def test_oversized_body_is_refused_without_reading_it(harness):
    """A declared length over 25 MB is refused at once; only the first bytes are ever sent."""
    sent = 0

    async def body():
        nonlocal sent
        chunk = b"x" * (1024 * 1024)
        for _ in range(40):  # 40 MB if it were all read
            sent += len(chunk)
            yield chunk

    host, port = harness.server.host, harness.server.port
    reader, writer = await asyncio.open_connection(host, port)
    head = (
        "POST /github/webhook HTTP/1.1\r\n"
        f"Host: {host}\r\n"
        "X-GitHub-Event: issues\r\nX-GitHub-Delivery: big\r\n"
        "X-Hub-Signature-256: sha256=00\r\n"
        f"Content-Length: {26 * 1024 * 1024}\r\n\r\n"
    )
    writer.write(head.encode() + b"{")
    await writer.drain()
    status_line = await asyncio.wait_for(reader.readline(), 5)
    writer.close()
    assert b" 413 " in status_line
    assert harness.state.metrics.value("triage_deliveries_refused_total", reason="too-large") == 1

    # chunked, no length, a signature to check: read only up to the cap, then refused
    async with harness.session.post(
        harness.url,
        data=body(),
        headers={
            "X-GitHub-Event": "issues",
            "X-GitHub-Delivery": "big2",
            "X-Hub-Signature-256": "sha256=00",
        },
    ) as response:
        assert response.status == 413
    assert sent < 40 * 1024 * 1024
    assert not harness.state.store.delivery_seen("big2")


async def test_ping_and_other_events_are_acknowledged_and_ignored(harness, fake):
    ping = await harness.post("ping", fixture("ping"))
    star = await harness.post("star", fixture("star.created"))
    closed = await harness.post("issues", {**fixture("issues.opened"), "action": "closed"})
    assert [r.status for r in (ping, star, closed)] == [200, 200, 200]
    await harness.settle()
    assert harness.state.store.list_jobs() == []
    assert fake.calls() == []


# --- answering -----------


async def test_open_with_a_catalogued_panic_gets_one_comment_and_labels(harness, fake):
    issue = fake.add_issue(REPO, "Training crashes", "When I train:\n```\n" + PANIC + "```")
    response = await harness.post(
        "issues", issue_payload("opened", issue.number, issue.title, issue.body)
    )
    assert response.status == 202
    await harness.settle()
    comments = bot_comments(fake, issue.number)
    assert len(comments) == 1
    marker = parse_marker(comments[0].body)
    assert marker["kind"] == "answer" and marker["ids"] == [INTERPOLATE]
    assert "Can't differentiate interpolate backward." in comments[0].body
    assert fake.repo(REPO).issues[issue.number].labels == ANSWER_LABELS
    state = harness.state.store.get_issue_state(REPO, issue.number)
    assert state.comment_id == comments[0].id and state.labels_added == tuple(sorted(ANSWER_LABELS))
    # every URL was built from the repository name and the number
    assert {r.path for r in fake.writes()} == {
        f"/repos/{REPO}/issues/{issue.number}/comments",
        f"/repos/{REPO}/issues/{issue.number}/labels",
    }


async def test_open_then_edit_updates_the_one_comment(harness, fake):
    issue = fake.add_issue(REPO, "crash", PANIC)
    await harness.post("issues", issue_payload("opened", issue.number, issue.title, PANIC))
    await harness.settle()
    fake.edit_issue(REPO, issue.number, body=PANIC_AVG_POOL)
    await harness.post("issues", issue_payload("edited", issue.number, issue.title, PANIC_AVG_POOL))
    await harness.settle()
    comments = bot_comments(fake, issue.number)
    assert len(comments) == 1
    assert parse_marker(comments[0].body)["ids"] == [AVG_POOL]
    assert len(fake.calls("POST", r"/comments$")) == 1
    assert len(fake.calls("PATCH", r"/issues/comments/\d+$")) == 1


async def test_edit_right_after_open_never_makes_two_comments(harness, fake):
    """Both deliveries are queued before the worker runs; per-issue ordering keeps one comment."""
    issue = fake.add_issue(REPO, "crash", PANIC)
    opened = issue_payload("opened", issue.number, issue.title, PANIC)
    edited = issue_payload("edited", issue.number, issue.title, PANIC + "\nmore details")
    await asyncio.gather(harness.post("issues", opened), harness.post("issues", edited))
    fake.edit_issue(REPO, issue.number, body=PANIC + "\nmore details")
    await harness.settle()
    assert len(bot_comments(fake, issue.number)) == 1
    assert len(fake.calls("POST", r"/comments$")) == 1


async def test_queued_jobs_of_one_issue_are_coalesced(fake, tmp_path, triage):
    """Three deliveries for one issue queued while the worker is busy: one read, one answer."""
    h = await Harness(fake, tmp_path / "db.sqlite3", triage).start(start_worker=False)
    try:
        issue = fake.add_issue(REPO, "crash", "details follow")
        await h.post("issues", issue_payload("opened", issue.number, issue.title, "details"))
        comment = fake.add_comment(REPO, issue.number, PANIC)
        await h.post("issue_comment", comment_payload("created", issue.number, comment.id, PANIC))
        quiet = fake.add_comment(REPO, issue.number, "thanks")
        await h.post("issue_comment", comment_payload("created", issue.number, quiet.id, "thanks"))
        await h.settle()
        jobs = h.state.store.list_jobs()
    finally:
        await h.stop()
    assert len(fake.calls("GET", rf"/issues/{issue.number}$")) == 1
    assert len(bot_comments(fake, issue.number)) == 1
    assert [j.state for j in jobs] == ["done", "done", "done"]
    assert [j.last_error for j in jobs][1:] == [f"superseded by job {jobs[0].id}"] * 2


async def test_removing_the_panic_leaves_a_one_line_note_and_removes_bot_labels(harness, fake):
    issue = fake.add_issue(REPO, "crash", PANIC)
    fake.edit_issue(REPO, issue.number, labels=[])
    await harness.post("issues", issue_payload("opened", issue.number, issue.title, PANIC))
    await harness.settle()
    # a maintainer adds a label of their own; the bot must leave it alone
    fake.repo(REPO).labels["bug"] = {"id": 1, "name": "bug", "color": "d73a4a"}
    fake.repo(REPO).issues[issue.number].labels.append("bug")
    fake.edit_issue(REPO, issue.number, body="never mind, my fault")
    await harness.post(
        "issues", issue_payload("edited", issue.number, issue.title, "never mind, my fault")
    )
    await harness.settle()
    comments = bot_comments(fake, issue.number)
    assert len(comments) == 1
    assert parse_marker(comments[0].body)["kind"] == "no-longer"
    assert len(comments[0].body.strip().splitlines()) == 2  # the marker and one line
    assert fake.repo(REPO).issues[issue.number].labels == ["bug"]


async def test_a_panic_in_a_later_comment_is_answered_in_the_same_single_comment(harness, fake):
    issue = fake.add_issue(REPO, "crash", PANIC)
    await harness.post("issues", issue_payload("opened", issue.number, issue.title, PANIC))
    await harness.settle()
    later = fake.add_comment(REPO, issue.number, "Also got this:\n" + PANIC_AVG_POOL)
    await harness.post(
        "issue_comment", comment_payload("created", issue.number, later.id, later.body)
    )
    await harness.settle()
    comments = bot_comments(fake, issue.number)
    assert len(comments) == 1
    assert parse_marker(comments[0].body)["ids"] == [INTERPOLATE, AVG_POOL]


async def test_a_panic_first_pasted_in_a_comment_is_answered(harness, fake):
    issue = fake.add_issue(REPO, "it crashes", "Steps below.")
    await harness.post("issues", issue_payload("opened", issue.number, issue.title, "Steps below."))
    await harness.settle()
    assert fake.writes() == []
    later = fake.add_comment(REPO, issue.number, PANIC)
    await harness.post(
        "issue_comment", comment_payload("created", issue.number, later.id, later.body)
    )
    await harness.settle()
    assert [parse_marker(c.body)["ids"] for c in bot_comments(fake, issue.number)] == [
        [INTERPOLATE]
    ]


async def test_uncatalogued_panic_gets_a_label_and_no_comment(harness, fake):
    issue = fake.add_issue(REPO, "crash", UNKNOWN_PANIC)
    await harness.post("issues", issue_payload("opened", issue.number, issue.title, UNKNOWN_PANIC))
    await harness.settle()
    assert bot_comments(fake, issue.number) == []
    assert fake.repo(REPO).issues[issue.number].labels == ["panic: uncatalogued"]
    assert harness.state.metrics.value("triage_verdicts_total", verdict="uncatalogued-panic") == 1


async def test_no_panic_does_nothing(harness, fake):
    issue = fake.add_issue(REPO, "Feature request", "Please add a tanh kernel.")
    await harness.post(
        "issues", issue_payload("opened", issue.number, issue.title, "Please add a tanh kernel.")
    )
    await harness.settle()
    assert fake.writes() == []
    # and an ordinary comment on it costs no API call at all
    calls_before = len(fake.calls())
    note = fake.add_comment(REPO, issue.number, "+1, would love this")
    await harness.post(
        "issue_comment", comment_payload("created", issue.number, note.id, note.body)
    )
    await harness.settle()
    assert len(fake.calls()) == calls_before


async def test_bots_and_the_bot_itself_are_ignored(harness, fake):
    issue = fake.add_issue(REPO, "question", "How do I do X?")
    other_bot = fake.add_comment(REPO, issue.number, PANIC, "ci-bot[bot]", user_type="Bot")
    await harness.post(
        "issue_comment",
        comment_payload("created", issue.number, other_bot.id, PANIC, "ci-bot[bot]", "Bot"),
    )
    own = "<!-- triage-bot:answer ids=x fp=y -->\n" + PANIC
    mine = fake.add_comment(REPO, issue.number, own, "triage-helper")
    await harness.post(
        "issue_comment", comment_payload("created", issue.number, mine.id, own, "triage-helper")
    )
    await harness.settle()
    assert harness.state.store.list_jobs() == []
    # and when the issue is processed for another reason, bot comments are not part of its text:
    # the only panics here are in bot comments, so the verdict is no-panic, and nothing is posted
    await harness.post("issues", issue_payload("edited", issue.number, issue.title, issue.body))
    await harness.settle()
    assert harness.state.store.get_issue_state(REPO, issue.number).verdict == "no-panic"
    assert fake.calls("POST") == []


async def test_redelivery_is_processed_once(harness, fake):
    issue = fake.add_issue(REPO, "crash", PANIC)
    payload = issue_payload("opened", issue.number, issue.title, PANIC)
    first = await harness.post("issues", payload, delivery="same-id")
    again = await harness.post("issues", payload, delivery="same-id")
    assert (first.status, again.status) == (202, 200)
    await harness.settle()
    assert len(harness.state.store.list_jobs()) == 1
    assert len(fake.calls("GET", rf"/issues/{issue.number}$")) == 1


async def test_a_delivery_without_an_id_is_processed_once_by_its_body(harness, fake):
    issue = fake.add_issue(REPO, "crash", PANIC)
    payload = issue_payload("opened", issue.number, issue.title, PANIC)
    first = await harness.post("issues", payload, named=False)
    again = await harness.post("issues", payload, named=False)
    assert (first.status, again.status) == (202, 200)
    await harness.settle()
    assert len(bot_comments(fake, issue.number)) == 1


async def test_dry_run_writes_nothing_and_logs_the_plan(fake, tmp_path, triage, caplog):
    h = await Harness(fake, tmp_path / "db.sqlite3", triage, TRIAGE_DRY_RUN="1").start()
    try:
        issue = fake.add_issue(REPO, "crash", PANIC)
        caplog.set_level(logging.INFO, logger="bot.github.pipeline")
        await h.post("issues", issue_payload("opened", issue.number, issue.title, PANIC))
        await h.settle()
    finally:
        await h.stop()
    assert fake.writes() == []
    assert fake.calls("GET")  # it did read the issue
    text = caplog.text
    assert (
        "DRY RUN" in text
        and "comment=create" in text
        and "add_labels=" + ",".join(ANSWER_LABELS) in text
    )
    assert f"triage-bot:answer ids={INTERPOLATE}" in text


async def test_pull_requests_are_not_answered_by_default(harness, fake):
    # A pull request that quotes a panic is usually its fix: its author is no reporter.
    pr = fake.add_issue(REPO, "Fix interpolate backward", "Fixes:\n" + PANIC, pull_request=True)
    later = fake.add_comment(REPO, pr.number, "CI log:\n" + PANIC)
    await harness.post("issue_comment", comment_payload("created", pr.number, later.id, later.body))
    await harness.settle()
    assert bot_comments(fake, pr.number) == []
    assert fake.writes() == []
    # a plain issue with the same text is answered
    issue = fake.add_issue(REPO, "crash", PANIC)
    await harness.post("issues", issue_payload("opened", issue.number, issue.title, PANIC))
    await harness.settle()
    assert len(bot_comments(fake, issue.number)) == 1


async def test_pull_request_comments_are_answered_when_the_setting_says_so(fake, tmp_path, triage):
    harness = await Harness(
        fake, tmp_path / "triage.sqlite3", triage, TRIAGE_ANSWER_PULLS="1"
    ).start()
    try:
        pr = fake.add_issue(REPO, "Add op", "This PR adds an op.", pull_request=True)
        later = fake.add_comment(REPO, pr.number, "CI log:\n" + PANIC)
        await harness.post(
            "issue_comment", comment_payload("created", pr.number, later.id, later.body)
        )
        await harness.settle()
        assert len(bot_comments(fake, pr.number)) == 1
    finally:
        await harness.stop()


# --- failures -----------


async def test_502s_then_success(harness, fake):
    issue = fake.add_issue(REPO, "crash", PANIC)
    fake.fail("POST", r"/issues/\d+/comments$", 502, times=2)
    await harness.post("issues", issue_payload("opened", issue.number, issue.title, PANIC))
    await harness.settle()
    assert len(bot_comments(fake, issue.number)) == 1
    statuses = [r.status for r in fake.calls("POST", r"/comments$")]
    assert statuses == [502, 502, 201]
    job = harness.state.store.list_jobs()[0]
    assert job.state == "done" and job.attempts == 2


async def test_secondary_rate_limit_waits_as_told_then_succeeds(harness, fake):
    issue = fake.add_issue(REPO, "crash", PANIC)
    fake.secondary_rate_limit("POST", r"/issues/\d+/comments$", retry_after=7)
    await harness.post("issues", issue_payload("opened", issue.number, issue.title, PANIC))
    await harness.settle()
    assert len(bot_comments(fake, issue.number)) == 1
    failure = harness.state.worker.last_failure
    assert failure.retry and failure.delay == 7.0  # Retry-After honoured (scaled down in tests)
    assert [r.status for r in fake.calls("POST", r"/comments$")] == [403, 201]


async def test_secondary_rate_limit_without_retry_after_waits_at_least_a_minute(harness, fake):
    issue = fake.add_issue(REPO, "crash", PANIC)
    fake.secondary_rate_limit("GET", rf"/issues/{issue.number}$", retry_after=None)
    await harness.post("issues", issue_payload("opened", issue.number, issue.title, PANIC))
    await harness.settle()
    assert harness.state.worker.last_failure.delay >= 60
    assert len(bot_comments(fake, issue.number)) == 1


async def test_429_and_primary_rate_limit_reset(harness, fake):
    issue = fake.add_issue(REPO, "crash", PANIC)
    fake.too_many_requests("GET", rf"/issues/{issue.number}$", retry_after=2)
    await harness.post("issues", issue_payload("opened", issue.number, issue.title, PANIC))
    await harness.settle()
    assert harness.state.worker.last_failure.delay == 2.0
    fake.primary_rate_limit("POST", r"/labels$", reset_in=30)
    other = fake.add_issue(REPO, "crash again", PANIC)
    await harness.post("issues", issue_payload("opened", other.number, other.title, PANIC))
    await harness.settle()
    assert 25 <= harness.state.worker.last_failure.delay <= 35
    assert fake.repo(REPO).issues[other.number].labels == ANSWER_LABELS
    assert len(bot_comments(fake, other.number)) == 1  # the retry did not comment twice


async def test_a_write_that_landed_before_a_502_is_not_repeated_and_stays_the_bots(harness, fake):
    issue = fake.add_issue(REPO, "crash", PANIC)
    fake.fail("POST", r"/issues/\d+/comments$", 502, after=True)
    fake.fail("POST", r"/issues/\d+/labels$", 502, after=True)
    await harness.post("issues", issue_payload("opened", issue.number, issue.title, PANIC))
    await harness.settle()
    assert len(bot_comments(fake, issue.number)) == 1  # found by its marker, not posted again
    assert fake.repo(REPO).issues[issue.number].labels == ANSWER_LABELS
    state = harness.state.store.get_issue_state(REPO, issue.number)
    assert state.labels_added == tuple(sorted(ANSWER_LABELS))
    # so when the panic goes away, the bot still removes the label it added
    fake.edit_issue(REPO, issue.number, body="solved")
    await harness.post("issues", issue_payload("edited", issue.number, issue.title, "solved"))
    await harness.settle()
    assert fake.repo(REPO).issues[issue.number].labels == []


async def test_a_failing_job_ends_in_dead_letters_and_can_be_replayed(harness, fake):
    issue = fake.add_issue(REPO, "crash", PANIC)
    fake.fail("POST", r"/issues/\d+/comments$", 502, times=10)
    await harness.post("issues", issue_payload("opened", issue.number, issue.title, PANIC))
    await harness.settle()
    store = harness.state.store
    [job] = store.list_jobs(["dead"])
    assert job.attempts == 4 and "502" in (job.last_error or "")
    fake.faults.clear()
    assert store.requeue_dead(job.id) == 1
    harness.state.worker.wake()
    await harness.settle()
    assert store.get_job(job.id).state == "done"
    assert len(bot_comments(fake, issue.number)) == 1


async def test_a_404_is_permanent(harness, fake):
    await harness.post("issues", issue_payload("opened", 999, "gone", PANIC))
    await harness.settle()
    [job] = harness.state.store.list_jobs(["dead"])
    assert job.attempts == 1 and "404" in job.last_error


async def test_a_job_acknowledged_before_a_crash_is_done_after_restart(fake, tmp_path, triage):
    db = tmp_path / "triage.sqlite3"
    issue = fake.add_issue(REPO, "crash", PANIC)
    first = await Harness(fake, db, triage).start(start_worker=False)  # dies before working
    response = await first.post("issues", issue_payload("opened", issue.number, issue.title, PANIC))
    assert response.status == 202
    # simulate a crash mid-job: the job was claimed (running) when the process died
    assert first.state.store.claim_job() is not None
    await first.stop()
    first.state.store.close()
    assert fake.writes() == []

    second = await Harness(fake, db, triage).start()  # a new process on the same DB file
    try:
        await second.settle()
        assert len(bot_comments(fake, issue.number)) == 1
        assert second.state.store.list_jobs()[0].state == "done"
    finally:
        await second.stop()


# --- health and metrics -----------


async def test_healthz_and_metrics(harness, fake):
    issue = fake.add_issue(REPO, "crash", PANIC)
    await harness.post("issues", issue_payload("opened", issue.number, issue.title, PANIC))
    await harness.settle()
    base = str(harness.server.make_url("/"))
    async with harness.session.get(base + "healthz") as response:
        assert response.status == 200
        assert (await response.json())["worker"] == "ok"
    async with harness.session.get(base + "metrics") as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain")
        text = await response.text()
    assert 'triage_deliveries_total{event="issues",outcome="queued"} 1' in text
    assert 'triage_verdicts_total{verdict="match"} 1' in text
    assert 'triage_github_api_calls_total{operation="create_comment"} 1' in text
    assert "triage_queue_depth 0" in text
    assert "triage_reply_seconds_count 1" in text
    await harness.state.worker.stop()
    async with harness.session.get(base + "healthz") as response:
        assert response.status == 503


# --- a store that is not the file's first --------------------------------------------------------


def test_store_reopens_with_jobs_intact(tmp_path):
    db = tmp_path / "s.sqlite3"
    with Store(db) as store:
        assert store.accept_delivery("d1", "issues", "opened", {"repo": REPO, "number": 1})
    with Store(db) as store:
        assert not store.accept_delivery("d1", "issues", "opened", {"repo": REPO, "number": 1})
        assert [j.number for j in store.list_jobs()] == [1]


# --- `serve` as a separate process, configured only by its environment ---


async def test_serve_process_answers_a_delivery_and_stops_cleanly(fake, tmp_path):
    async with served_against(
        fake,
        tmp_path,
        webhook_secret=SECRETS,
        log_level="INFO",
        host="127.0.0.1",
        capture_output=True,
    ) as (served, session):
        issue = fake.add_issue(REPO, "crash", PANIC)
        body = json.dumps(issue_payload("opened", issue.number, issue.title, PANIC)).encode()
        headers = delivery_headers("issues", body, secret=SECOND_SECRET, delivery="serve-1")
        async with session.post(
            served.base_url + "/github/webhook", data=body, headers=headers
        ) as response:
            assert response.status == 202
        for _ in range(200):
            if bot_comments(fake, issue.number):
                break
            await asyncio.sleep(0.05)
        assert len(bot_comments(fake, issue.number)) == 1
    output = served.output
    assert served.process.returncode == 0, output.decode()
    assert b"delivery serve-1" in output and b"verdict=match" in output


async def test_discord_client_starts_only_with_a_token(fake, tmp_path, triage, monkeypatch):
    calls = []
    stopped = asyncio.Event()

    async def fake_run_discord(settings, triage_arg, store, http_session, status=None, db=None):
        calls.append((settings, triage_arg, store, http_session, db))
        try:
            await asyncio.Event().wait()
        finally:
            stopped.set()

    monkeypatch.setattr(discord_client, "run_discord", fake_run_discord)
    without = await Harness(fake, tmp_path / "a.sqlite3", triage).start()
    await without.stop()
    assert calls == []
    with_token = await Harness(
        fake, tmp_path / "b.sqlite3", triage, DISCORD_TOKEN="discord-token", DISCORD_CHANNEL_IDS="5"
    ).start()
    await asyncio.sleep(0.01)
    assert len(calls) == 1
    settings, triage_arg, store, http_session, db = calls[0]
    assert settings.discord_channel_ids == frozenset({5}) and triage_arg is triage
    assert store is with_token.state.store
    assert db is with_token.state.db  # the server's store thread, not a second one
    # the process's one aiohttp session, open while serving, closed at shutdown
    assert http_session is with_token.state.http_session and not http_session.closed
    await with_token.stop()
    assert stopped.is_set()  # cancelled at shutdown
    assert http_session.closed


async def test_an_uncatalogued_panic_in_a_project_crate_is_labelled_with_the_crate(harness, fake):
    body = (
        "thread 'main' panicked at /home/u/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/"
        "burn-fusion-0.19.0/src/stream/execution/ordering.rs:65:9:\n"
        "index out of bounds: the len is 0 but the index is 0\n"
    )
    issue = fake.add_issue(REPO, "fusion crash", body)
    await harness.post("issues", issue_payload("opened", issue.number, issue.title, body))
    await harness.settle()
    assert bot_comments(fake, issue.number) == []
    assert fake.repo(REPO).issues[issue.number].labels == [
        "panic: uncatalogued",
        "crate: burn-fusion",
    ]


async def test_a_form_encoded_delivery_is_read(harness, fake):
    issue = fake.add_issue(REPO, "crash", PANIC)
    payload = issue_payload("opened", issue.number, issue.title, PANIC)
    body = urlencode({"payload": json.dumps(payload)}).encode()
    headers = {
        **delivery_headers("issues", body, secret=FIRST_SECRET, delivery="form-1"),
        "Content-Type": "application/x-www-form-urlencoded",
    }
    async with harness.session.post(harness.url, data=body, headers=headers) as response:
        assert response.status == 202
    await harness.settle()
    assert len(bot_comments(fake, issue.number)) == 1
