"""GitHub slow, resetting, rate-limiting; several installations at once. Real PyGithub against the
fake GitHub over HTTP: nothing doubled, rate limits kept per installation, installations in
parallel, and the queue's age in /metrics."""

from __future__ import annotations

import asyncio
import itertools

import pytest
from fakes.github_api import FakeGitHub
from harness import PANIC, REPO, Harness, bot_comments, issue_payload

from bot.config.settings import Settings
from bot.github.auth import ClientOptions
from bot.github.worker import RetryPolicy

COMMENTS = r"^/repos/[^/]+/[^/]+/issues/\d+/comments$"


# --- 1. a slow GitHub does not double the comment ------------------------------------------------


@pytest.mark.parametrize(
    "fault",
    ["slow-before-storing", "slow-after-storing", "reset-after-storing"],
)
async def test_a_create_that_times_out_or_resets_is_not_doubled(fake, tmp_path, triage, fault):
    issue = fake.add_issue(REPO, "crash", PANIC)
    if fault == "slow-before-storing":  # GitHub stores it only after the client gave up
        fake.slow("POST", COMMENTS, 2.0)
    elif fault == "slow-after-storing":  # stored at once, the answer comes too late
        fake.slow("POST", COMMENTS, 2.0, after=True)
    else:
        fake.reset_connection("POST", COMMENTS)
    h = Harness(fake, tmp_path / "db.sqlite3", triage)
    policy = RetryPolicy(scale=0.001, max_attempts=4, write_settle=2.5)
    await h.start(client_options=ClientOptions(timeout=1, seconds_between_writes=0), policy=policy)
    try:
        payload = issue_payload("opened", issue.number, issue.title, PANIC)
        assert (await h.post("issues", payload)).status == 202
        await h.settle(timeout=20)
        failure = h.state.worker.last_failure
        [job] = h.state.store.list_jobs()
    finally:
        await h.stop()
    await asyncio.sleep(0.2)
    assert len(bot_comments(fake, issue.number)) == 1
    assert len(fake.calls("POST", COMMENTS)) == 1  # the retry found the marker: no second POST
    assert failure is not None and failure.settle and "may have landed" in failure.reason
    assert job.state == "done" and job.attempts == 1


async def test_without_waiting_for_the_write_to_settle_the_slow_create_doubles(
    fake, tmp_path, triage
):
    """The failure the settle wait prevents, shown: the retry reads the issue before the slow
    original landed and posts a second comment."""
    issue = fake.add_issue(REPO, "crash", PANIC)
    fake.slow("POST", COMMENTS, 2.0)
    h = Harness(fake, tmp_path / "db.sqlite3", triage)
    policy = RetryPolicy(scale=0.001, max_attempts=4, write_settle=0.0)
    await h.start(client_options=ClientOptions(timeout=1, seconds_between_writes=0), policy=policy)
    try:
        await h.post("issues", issue_payload("opened", issue.number, issue.title, PANIC))
        await h.settle(timeout=20)
        for _ in range(40):  # the slow original lands after the retry's comment
            if len(bot_comments(fake, issue.number)) == 2:
                break
            await asyncio.sleep(0.1)
    finally:
        await h.stop()
    assert len(bot_comments(fake, issue.number)) == 2


# --- 6. one rate-limit gate per installation token --------------------------------------------


@pytest.mark.parametrize("concurrency", [1, 4])
async def test_after_a_secondary_rate_limit_no_request_goes_out_until_it_passes(
    fake, tmp_path, triage, concurrency
):
    issues = [fake.add_issue(REPO, f"crash {n}", PANIC) for n in range(10)]
    fake.secondary_rate_limit("GET", r"^/repos/[^/]+/[^/]+/issues/\d+$", retry_after=1)
    h = Harness(fake, tmp_path / "db.sqlite3", triage)
    policy = RetryPolicy(scale=1.0, max_attempts=4)  # wait as GitHub says: 1 s
    await h.start(
        client_options=ClientOptions(timeout=5, seconds_between_writes=0),
        policy=policy,
        start_worker=False,
        concurrency=concurrency,
    )
    try:
        for issue in issues:
            payload = issue_payload("opened", issue.number, issue.title, PANIC)
            assert (await h.post("issues", payload)).status == 202
        h.state.worker.start()
        await h.settle(timeout=30)
        jobs = h.state.store.list_jobs()
    finally:
        await h.state.worker.stop()
        await h.stop()
    [limited] = [r for r in fake.calls() if r.status == 403]
    # requests already on the wire when the 403 came back (other jobs, in parallel) finish;
    # none starts after it until Retry-After has passed (the 10 jobs wait, not each its turn)
    seen = limited.finished + 0.05
    after = [r for r in fake.calls() if r.started > seen]
    assert after, "the jobs went on after the wait"
    first_after = min(r.started for r in after)
    assert first_after - limited.finished >= 0.95, first_after - limited.finished
    for issue in issues:
        assert len(bot_comments(fake, issue.number)) == 1
    assert all(job.state == "done" for job in jobs)
    # only the job that met the limit counts an attempt; the others waited without trying
    assert sorted(job.attempts for job in jobs) == [0] * 9 + [1]


# --- 7. installations in parallel, writes paced per installation, queue age -----------------


OTHER = "other-org/other-repo"


@pytest.fixture
def two_installations():
    with FakeGitHub() as gh:
        gh.add_repo(REPO)
        gh.add_repo(OTHER)
        gh.pem = gh.enable_app(app_id=4242)  # type: ignore[attr-defined]
        gh.add_installation(101, "Codertocat", [REPO])
        gh.add_installation(202, "other-org", [OTHER])
        yield gh


def installation_of(fake: FakeGitHub, auth: str | None) -> int | None:
    token = (auth or "").removeprefix("token:")
    found = fake.installation_tokens.get(token)
    return found[0] if found else None


async def test_installations_proceed_in_parallel_with_writes_paced_per_installation(
    two_installations, tmp_path, triage
):
    fake = two_installations
    key = tmp_path / "app.pem"
    key.write_text(fake.pem)  # type: ignore[attr-defined]
    settings = {
        "GITHUB_APP_ID": "4242",
        "GITHUB_APP_PRIVATE_KEY_PATH": str(key),
        "GITHUB_WEBHOOK_SECRET": "first-webhook-secret-01",
        "GITHUB_API_URL": fake.base_url,
        "TRIAGE_DB": str(tmp_path / "db.sqlite3"),
    }
    h = Harness(fake, tmp_path / "db.sqlite3", triage)
    h.settings = Settings.from_mapping(settings)
    # every comment takes GitHub 0.4 s; writes of one installation stay 0.3 s apart
    fake.slow("POST", COMMENTS, 0.4, times=100)
    interval = 0.3
    await h.start(
        client_options=ClientOptions(timeout=5, seconds_between_writes=interval),
        policy=RetryPolicy(scale=0.001, max_attempts=4),
        start_worker=False,
        concurrency=4,
    )
    try:
        for repo, installation in ((REPO, 101), (OTHER, 202)):
            for n in range(3):
                issue = fake.add_issue(repo, f"crash {n}", PANIC)
                payload = issue_payload("opened", issue.number, issue.title, PANIC)
                payload["repository"]["full_name"] = repo
                payload["installation"] = {"id": installation}
                assert (await h.post("issues", payload)).status == 202
        await asyncio.sleep(0.3)
        async with h.session.get(h.server.make_url("/metrics")) as response:
            before = await response.text()
        h.state.worker.start()
        await h.settle(timeout=30)
        async with h.session.get(h.server.make_url("/metrics")) as response:
            after = await response.text()
    finally:
        await h.state.worker.stop()
        await h.stop()

    def gauge(text: str) -> float:
        [line] = [x for x in text.splitlines() if x.startswith("triage_queue_oldest_age_seconds ")]
        return float(line.split()[1])

    assert gauge(before) >= 0.3 and gauge(after) == 0.0
    writes = [r for r in fake.writes() if r.method in ("POST", "PATCH", "DELETE")]
    by_installation: dict[int | None, list] = {}
    for record in writes:
        by_installation.setdefault(installation_of(fake, record.auth), []).append(record)
    assert set(by_installation) == {101, 202}
    for records in by_installation.values():
        records.sort(key=lambda r: r.started)
        for earlier, later in itertools.pairwise(records):
            # one writer per installation, and the pause GitHub asks for between writes
            assert later.started >= earlier.finished + interval - 0.05, (earlier, later)
    # the two installations wrote at the same time
    overlapping = [
        (a, b)
        for a in by_installation[101]
        for b in by_installation[202]
        if a.started < b.finished and b.started < a.finished
    ]
    assert overlapping
    for repo in (REPO, OTHER):
        for issue in fake.repo(repo).issues.values():
            mine = [c for c in fake.comments_on(repo, issue.number) if "triage" in c.user.login]
            assert len(mine) == 1
