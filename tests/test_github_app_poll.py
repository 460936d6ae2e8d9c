"""GitHub App authentication and polling, against the fake GitHub over HTTP with real PyGithub."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta

import pytest
from fakes.github_api import FakeGitHub
from harness import PANIC, REPO, Harness, bot_comments, issue_payload
from json_schemas import one_object

from bot.app import Triage
from bot.config.settings import Settings
from bot.github import auth
from bot.github.adapter import GitHubAdapter
from bot.github.auth import ClientOptions, GitHubClients
from bot.github.pipeline import IssuePipeline
from bot.github.poll import poll_once, read_cursor
from bot.github.worker import RetryPolicy, Worker
from bot.store.sqlite import Store

INSTALLATION = 31337


@pytest.fixture
def app_fake():
    with FakeGitHub() as gh:
        gh.add_repo(REPO)
        gh.add_repo("someone/else")
        pem = gh.enable_app(app_id=4242)
        gh.add_installation(INSTALLATION, "Codertocat", [REPO])
        gh.pem = pem  # type: ignore[attr-defined]
        yield gh


def app_env(fake: FakeGitHub, tmp_path) -> dict[str, str]:
    key = tmp_path / "app.pem"
    key.write_text(fake.pem)  # type: ignore[attr-defined]
    return {
        "GITHUB_APP_ID": "4242",
        "GITHUB_APP_PRIVATE_KEY_PATH": str(key),
        "GITHUB_WEBHOOK_SECRET": "app-webhook-secret-0001",
        "GITHUB_API_URL": fake.base_url,
        "TRIAGE_DB": str(tmp_path / "db.sqlite3"),
    }


async def test_app_requests_an_installation_token_and_uses_it(app_fake, tmp_path, triage):
    env = app_env(app_fake, tmp_path)
    h = Harness(app_fake, tmp_path / "db.sqlite3", triage)
    h.settings = Settings.from_mapping(env)
    await h.start()
    try:
        issue = app_fake.add_issue(REPO, "crash", PANIC)
        payload = issue_payload("opened", issue.number, issue.title, PANIC)
        payload["installation"] = {"id": INSTALLATION, "node_id": "x"}
        response = await h.post("issues", payload, secret="app-webhook-secret-0001")
        assert response.status == 202
        await h.settle()
        # a second delivery reuses the token: one access-token request in all
        await h.post(
            "issues",
            copy.deepcopy(payload) | {"action": "edited"},
            secret="app-webhook-secret-0001",
        )
        await h.settle()
    finally:
        await h.stop()
    token_requests = app_fake.calls("POST", rf"^/app/installations/{INSTALLATION}/access_tokens$")
    assert len(token_requests) == 1
    assert token_requests[0].auth == "jwt:4242"  # signed with the App's key, checked by the fake
    tokens = {r.auth for r in app_fake.calls() if r.path.startswith("/repos/")}
    assert len(tokens) == 1 and tokens.pop().startswith("token:ghs_")
    [comment] = bot_comments(app_fake, issue.number)
    assert comment.user.login == "triage-bot[bot]" and comment.user.type == "Bot"


async def test_app_token_is_refreshed_before_it_expires(app_fake, tmp_path, triage):
    app_fake.token_lifetime = timedelta(seconds=15)  # inside PyGithub's 20 s threshold
    settings = Settings.from_mapping(app_env(app_fake, tmp_path))
    clients = GitHubClients(settings, ClientOptions(seconds_between_writes=0))
    try:
        adapter = GitHubAdapter(clients)
        issue = app_fake.add_issue(REPO, "crash", "no panic")
        adapter.read_issue(REPO, issue.number, INSTALLATION)
        adapter.read_issue(REPO, issue.number, INSTALLATION)
    finally:
        clients.close()
    # a token about to expire is never used: each request here got a fresh one
    repo_calls = [r for r in app_fake.calls() if r.path.startswith("/repos/")]
    assert len(app_fake.calls("POST", r"/access_tokens$")) == len(repo_calls) == 4
    assert {r.status for r in repo_calls} == {200}
    assert len({r.auth for r in repo_calls}) == 4


def test_app_without_installation_id_looks_the_repository_up(app_fake, tmp_path):
    settings = Settings.from_mapping(app_env(app_fake, tmp_path))
    clients = GitHubClients(settings, ClientOptions(seconds_between_writes=0))
    try:
        issue = app_fake.add_issue(REPO, "t", "b")
        view = GitHubAdapter(clients).read_issue(REPO, issue.number)
        GitHubAdapter(clients).read_issue(REPO, issue.number)
    finally:
        clients.close()
    assert view.title == "t"
    lookups = app_fake.calls("GET", rf"^/repos/{REPO}/installation$")
    assert len(lookups) == 1 and lookups[0].auth == "jwt:4242"


def test_a_bad_app_key_is_refused_by_the_fake(app_fake, tmp_path):
    other = FakeGitHub()
    env = app_env(app_fake, tmp_path)
    env.pop("GITHUB_APP_PRIVATE_KEY_PATH")
    env["GITHUB_APP_PRIVATE_KEY"] = other.enable_app(4242)  # a different key
    clients = GitHubClients(Settings.from_mapping(env), ClientOptions(seconds_between_writes=0))
    try:
        from github import GithubException

        with pytest.raises(GithubException) as info:
            GitHubAdapter(clients).read_issue(REPO, 1, INSTALLATION)
    finally:
        clients.close()
    assert info.value.status == 401


# --- polling -----------------------------------------------------------------------------------


@pytest.fixture
def token_fake():
    with FakeGitHub(per_page_default=30) as gh:
        gh.add_token("ghp_poll", "poller")
        gh.add_repo(REPO)
        yield gh


def poll_setup(fake: FakeGitHub, tmp_path, triage: Triage):
    settings = Settings.from_mapping(
        {
            "GITHUB_TOKEN": "ghp_poll",
            "GITHUB_API_URL": fake.base_url,
            "TRIAGE_DB": str(tmp_path / "db.sqlite3"),
        }
    )
    store = Store(settings.triage_db)
    clients = GitHubClients(settings, ClientOptions(seconds_between_writes=0, per_page=2))
    pipeline = IssuePipeline(triage, GitHubAdapter(clients), store)
    worker = Worker(store, pipeline.handle_job, policy=RetryPolicy(scale=0.001))
    return store, clients, worker


async def test_polling_feeds_the_same_pipeline_and_keeps_a_cursor(token_fake, tmp_path, triage):
    fake = token_fake
    store, clients, worker = poll_setup(fake, tmp_path, triage)
    try:
        quiet = [fake.add_issue(REPO, f"question {i}", "no panic here") for i in range(4)]
        crash = fake.add_issue(REPO, "crash", PANIC)
        now = datetime(2026, 1, 2, tzinfo=UTC)  # the fake's clock starts at 2026-01-01
        first = poll_once(clients, store, REPO, now=now, lookback=timedelta(days=2))
        assert sorted(first.issues) == sorted([i.number for i in quiet] + [crash.number])
        # pagination was followed (per_page=2, five issues)
        pages = [r.query.get("page", "1") for r in fake.calls("GET", rf"^/repos/{REPO}/issues$")]
        assert pages == ["1", "2", "3"]
        await worker.drain()
        assert len(bot_comments(fake, crash.number)) == 1

        # nothing new: nothing queued (the bot's own writes are skipped as bot activity or
        # produce no change)
        second = poll_once(clients, store, REPO)
        await worker.drain()
        third = poll_once(clients, store, REPO)
        assert third.issues == ()

        # a panic pasted in a comment on a quiet issue is found by the next poll
        fake.add_comment(REPO, quiet[0].number, PANIC)
        fourth = poll_once(clients, store, REPO)
        assert fourth.issues == (quiet[0].number,)
        await worker.drain()
        assert len(bot_comments(fake, quiet[0].number)) == 1
        since, _ = read_cursor(store, REPO)
        assert since is not None and since >= fourth.since
        assert second.since <= since

        # closing the crash's issue: the next poll records how and when
        closed = datetime(2026, 3, 5, 12, tzinfo=UTC)
        fake.edit_issue(REPO, crash.number, state="closed", state_reason="completed")
        fake.edit_issue(REPO, crash.number, closed_at=closed)
        assert crash.number in poll_once(clients, store, REPO).issues
        await worker.drain()
        hit = [item.best.record_id for item in triage.analyse(PANIC).answered if item.best]
        rows = store.issues_for_records(REPO, hit)
        (row,) = [r for r in rows if r["number"] == crash.number]
        assert (row["state"], row["state_reason"], row["closed_at"]) == (
            "closed",
            "completed",
            closed.timestamp(),
        )
    finally:
        clients.close()
        store.close()


def test_poll_command_once(token_fake, tmp_path, monkeypatch, capsys):
    from bot.cli import service as commands

    fake = token_fake
    fake.add_issue(REPO, "crash", PANIC)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(auth, "DEFAULT_OPTIONS", ClientOptions(seconds_between_writes=0))
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_poll")
    monkeypatch.setenv("GITHUB_API_URL", fake.base_url)
    monkeypatch.setenv("TRIAGE_DB", str(tmp_path / "db.sqlite3"))
    monkeypatch.setenv("TRIAGE_DRY_RUN", "0")
    import argparse

    parser = argparse.ArgumentParser()
    commands.register(parser.add_subparsers())
    args = parser.parse_args(["poll", "--repo", REPO, "--once", "--lookback", "100000"])
    assert args.handler(args) == 0
    assert "1 issue(s) changed" in capsys.readouterr().out
    assert len(bot_comments(fake, 1)) == 1
    fake.add_issue(REPO, "another crash", PANIC)
    args = parser.parse_args(["poll", "--repo", REPO, "--once", "--json"])
    assert args.handler(args) == 0
    summary = one_object(capsys.readouterr().out, "poll")
    assert summary["issues_changed"] >= 1 and summary["jobs"]["done"] >= 2
    assert summary["jobs"]["dead"] == 0


def test_jobs_retry_run_replays_a_dead_job_now(token_fake, tmp_path, monkeypatch, capsys):
    from bot.cli import service as commands

    fake = token_fake
    issue = fake.add_issue(REPO, "crash", PANIC)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(auth, "DEFAULT_OPTIONS", ClientOptions(seconds_between_writes=0))
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_poll")
    monkeypatch.setenv("GITHUB_API_URL", fake.base_url)
    monkeypatch.setenv("TRIAGE_DB", str(tmp_path / "db.sqlite3"))
    with Store(tmp_path / "db.sqlite3") as store:
        job = store.enqueue({"repo": REPO, "number": issue.number})
        store.claim_job()
        store.bury_job(job, "HTTP 502: Server Error")
    import argparse

    parser = argparse.ArgumentParser()
    commands.register(parser.add_subparsers())
    args = parser.parse_args(["jobs", "retry", str(job), "--run"])
    assert args.handler(args) == 0
    assert "replayed 1 job(s); 0 job(s) dead-lettered" in capsys.readouterr().out
    assert len(bot_comments(fake, issue.number)) == 1


def test_handle_event_runs_the_pipeline_on_an_event_file(token_fake, tmp_path, monkeypatch, capsys):
    """The GitHub Action's path: a real event file, the workflow's token, no server."""
    import json

    from bot.cli import service as commands

    fake = token_fake
    issue = fake.add_issue(REPO, "crash", PANIC)
    event = tmp_path / "event.json"
    event.write_text(json.dumps(issue_payload("opened", issue.number, issue.title, PANIC)))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(auth, "DEFAULT_OPTIONS", ClientOptions(seconds_between_writes=0))
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_poll")
    monkeypatch.setenv("GITHUB_API_URL", fake.base_url)
    monkeypatch.setenv("TRIAGE_DB", str(tmp_path / "db.sqlite3"))
    fake.fail("GET", rf"/issues/{issue.number}$", 502)  # one transient error on the way
    monkeypatch.setattr(commands, "HANDLE_EVENT_POLICY", RetryPolicy(scale=0.001))
    import argparse

    parser = argparse.ArgumentParser()
    commands.register(parser.add_subparsers())
    argv = ["handle-event", "--event-path", str(event), "--event-name", "issues"]
    args = parser.parse_args(argv)
    assert args.handler(args) == 0
    assert f"{REPO}#{issue.number}: match" in capsys.readouterr().out
    assert len(bot_comments(fake, issue.number)) == 1
    star = tmp_path / "star.json"
    star.write_text(json.dumps({"action": "created", "repository": {"full_name": REPO}}))
    args = parser.parse_args(["handle-event", "--event-path", str(star), "--event-name", "star"])
    assert args.handler(args) == 0
    assert "nothing to do" in capsys.readouterr().out
    args = parser.parse_args([*argv, "--json"])
    assert args.handler(args) == 0
    done = one_object(capsys.readouterr().out, "handle-event")
    assert (done["handled"], done["repo"], done["number"]) == (True, REPO, issue.number)
    assert done["verdict"] == "match" and done["records"] and done["plan"]
    assert len(bot_comments(fake, issue.number)) == 1  # kept up to date, not a second one
    argv = ["handle-event", "--event-path", str(star), "--event-name", "star", "--json"]
    args = parser.parse_args(argv)
    assert args.handler(args) == 0
    nothing = one_object(capsys.readouterr().out, "handle-event")
    assert nothing["handled"] is False and nothing["reason"] and nothing["records"] == []


async def test_polling_runs_triage_commands_once(token_fake, tmp_path, triage):
    fake = token_fake
    fake.repo(REPO).permissions.update({"maint": "maintain"})
    store, clients, worker = poll_setup(fake, tmp_path, triage)
    try:
        crash = fake.add_issue(REPO, "crash", PANIC)
        now = datetime(2026, 1, 2, tzinfo=UTC)
        poll_once(clients, store, REPO, now=now, lookback=timedelta(days=2))
        await worker.drain()
        (answer,) = bot_comments(fake, crash.number)
        assert "Can't differentiate" in answer.body
        fake.add_comment(REPO, crash.number, "/triage wrong", author="maint")
        poll_once(clients, store, REPO)
        await worker.drain()
        (note,) = bot_comments(fake, crash.number)
        assert "Can't differentiate" not in note.body  # replaced by the one-line note
        assert fake.repo(REPO).issues[crash.number].labels == []
        # the command is not run again on the next poll
        writes = len(fake.writes())
        poll_once(clients, store, REPO)
        await worker.drain()
        assert len(fake.writes()) == writes
    finally:
        await worker.stop()
        clients.close()
        store.close()
