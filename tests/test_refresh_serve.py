"""`serve` keeps its catalog current (issue 26), through the real serve process: a commit pushed
to a local bare repository (standing in for GitHub), its `push` webhook, and the next issue with
the new panic is answered with no restart; a refresh that fails keeps the old catalog serving
and says so in /healthz."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import aiohttp
from git_project import Project, src
from harness import (
    REPO,
    SECOND_SECRET,
    SECRETS,
    Harness,
    bot_comments,
    delivery_headers,
    issue_payload,
)
from harness import served_against as served_against_fake

from bot.app import Triage
from bot.config.settings import CatalogSource, Settings
from bot.scan.refresh import refresh_catalog
from bot.server.catalog_swap import LiveTriage, for_poll, wants_refresh

ALPHA = "alpha state is broken here"
BETA = "beta value too large: {value}"
CORE = "crates/widgets-core/src/lib.rs"


def panic(message: str, line: int) -> str:
    return f"thread 'main' panicked at {CORE}:{line}:5:\n{message}\n"


async def deliver(session: aiohttp.ClientSession, url: str, event: str, payload: Any, key: str):
    body = json.dumps(payload).encode()
    headers = delivery_headers(event, body, secret=SECOND_SECRET, delivery=key)
    async with session.post(url + "/github/webhook", data=body, headers=headers) as response:
        assert response.status in (200, 202), await response.text()


async def health(session: aiohttp.ClientSession, url: str) -> dict:
    async with session.get(url + "/healthz") as response:
        return (await response.json())["components"]["catalog"]


async def until(check, timeout: float = 30.0):
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = await check()
        if value:
            return value
        assert loop.time() < deadline, "timed out"
        await asyncio.sleep(0.1)


def push_payload(ref: str = "refs/heads/main") -> dict:
    return {"ref": ref, "repository": {"full_name": REPO, "default_branch": "main"}}


async def test_a_pushed_panic_is_answered_without_restart(fake, tmp_path: Path, monkeypatch):
    project = Project(tmp_path / "p")
    project.commit("Add alpha (#1)", {CORE: src(ALPHA)}, tag="v0.1.0")
    project.push()
    catalog = tmp_path / "catalog"
    refresh_catalog(catalog, project.mirror, repo=REPO)
    config = tmp_path / "triage-bot.toml"
    config.write_text(
        f'[catalog_source.widgets]\ncatalog = "{catalog}"\ngit_dir = "{project.mirror}"\n'
        f'repo = "{REPO}"\npoll_interval = 3600\n'
    )
    monkeypatch.setenv("TRIAGE_CATALOG", str(catalog))
    monkeypatch.setenv("TRIAGE_CONFIG", str(config))
    async with served_against_fake(
        fake, tmp_path, webhook_secret=SECRETS, log_level="INFO", capture_output=True
    ) as (served, session):
        url = served.base_url
        first = await until(lambda: _serving(session, url))
        assert first["version"].startswith("widgets=v0.1.0+")

        beta = project.commit("Check beta values (#3)", {CORE: src(ALPHA, BETA)})
        project.push()
        # A push to another branch changes nothing.
        await deliver(session, url, "push", push_payload("refs/heads/wip"), "push-0")
        await deliver(session, url, "push", push_payload(), "push-1")
        swapped = await until(lambda: _serving(session, url, beta[:12]))
        assert swapped["since"] >= first["since"]
        async with session.get(url + "/metrics") as response:
            metrics = await response.text()
        assert f'triage_catalog_info{{version="widgets=v0.1.0+{beta[:12]}"}} 1' in metrics
        assert 'triage_catalog_refreshes_total{outcome="swapped"}' in metrics

        issue = fake.add_issue(REPO, "beta crash", panic("beta value too large: 9", 5))
        payload = issue_payload("opened", issue.number, issue.title, issue.body)
        await deliver(session, url, "issues", payload, "issue-1")
        comments = await until(lambda: _comments(fake, issue.number))
        assert "beta value too large" in comments[0].body
        # The pages answer from the swapped-in catalog too.
        async with session.post(
            url + "/api/match", data=panic("beta value too large: 9", 5).encode()
        ) as response:
            assert response.status == 200
            found = await response.json()
        assert found["verdict"] == "match"
        assert "beta value too large" in found["matches"][0]["error_message"]

        # The mirror goes away: the refresh fails, the old catalog keeps answering.
        project.mirror.rename(tmp_path / "gone.git")
        await deliver(session, url, "push", push_payload(), "push-2")
        failed = await until(lambda: _failed(session, url))
        assert failed["status"] == "degraded" and "not a git repository" in failed["error"]
        assert beta[:12] in failed["version"]
        # health says the refresh failed, why and since when, beside what it still serves
        assert failed["refresh"]["state"] == "failed"
        assert failed["refresh"]["since"] and "not a git repository" in failed["refresh"]["error"]
        assert failed["detail"].startswith("refresh failed: ")
        issue = fake.add_issue(REPO, "alpha crash", panic(ALPHA, 2))
        payload = issue_payload("opened", issue.number, issue.title, issue.body)
        await deliver(session, url, "issues", payload, "issue-2")
        comments = await until(lambda: _comments(fake, issue.number))
        assert ALPHA in comments[0].body
    output = served.output.decode()
    assert "catalog refresh failed; still serving" in output


async def _serving(session: aiohttp.ClientSession, url: str, head: str = "") -> dict | None:
    found = await health(session, url)
    return found if head in found.get("version", "") and "error" not in found else None


async def _failed(session: aiohttp.ClientSession, url: str) -> dict | None:
    # (the timer may start the next attempt before health is read: its state is `running`
    # then, so wait for the moment the last attempt is reported failed)
    found = await health(session, url)
    return found if "error" in found and found["refresh"]["state"] == "failed" else None


async def _comments(fake, number: int) -> list:
    return bot_comments(fake, number)


async def test_answers_keep_flowing_during_a_swap(fake, tmp_path: Path):
    project = Project(tmp_path / "p")
    project.commit("Add alpha (#1)", {CORE: src(ALPHA)}, tag="v0.1.0")
    project.push()
    catalog = tmp_path / "catalog"
    refresh_catalog(catalog, project.mirror, repo=REPO)
    config = tmp_path / "triage-bot.toml"
    config.write_text(
        f'[catalog_source.widgets]\ncatalog = "{catalog}"\ngit_dir = "{project.mirror}"\n'
        f'repo = "{REPO}"\npoll_interval = 3600\n'
    )
    env = {"TRIAGE_CONFIG": str(config), "TRIAGE_CATALOG": str(catalog)}
    harness = await Harness(
        fake, tmp_path / "db.sqlite3", Triage.from_paths([catalog]), **env
    ).start()
    try:
        follower = harness.state.follower
        await until(lambda: _settled(follower))
        # The new commit moves alpha to line 5: an answer says which catalog gave it.
        beta = project.commit("Check beta values (#3)", {CORE: src(BETA, ALPHA)})
        project.push()
        numbers = []
        for n in range(16):
            if n == 3:
                await harness.post("push", push_payload(), delivery="push-swap")
            issue = fake.add_issue(REPO, f"alpha {n}", panic(ALPHA, 2))
            numbers.append(issue.number)
            payload = issue_payload("opened", issue.number, issue.title, issue.body)
            response = await harness.post("issues", payload, delivery=f"issue-{n}")
            assert response.status == 202
            await asyncio.sleep(0.05)
        await until(lambda: _settled(follower, beta[:12]))
        late = fake.add_issue(REPO, "alpha late", panic(ALPHA, 5))
        payload = issue_payload("opened", late.number, late.title, late.body)
        await harness.post("issues", payload, delivery="issue-late")
        await harness.settle(20)
        lines = []
        for number in [*numbers, late.number]:
            comments = bot_comments(fake, number)
            assert len(comments) == 1, number  # each answered once
            body = comments[0].body
            old, new = "lib.rs#L2" in body, "lib.rs#L5" in body
            assert old != new, body  # from one catalog, the old or the new
            lines.append(5 if new else 2)
        assert lines[-1] == 5  # after the swap: the new catalog
        assert lines == sorted(lines)  # never back to the old one once swapped
    finally:
        await harness.stop()


async def _settled(follower, head: str = "") -> bool:
    thread = follower._thread
    idle = thread is None or not thread.is_alive()
    return idle and head in follower.version and follower.last_error is None


def test_the_discord_side_reads_the_catalog_swapped_in_last(tmp_path: Path):
    project = Project(tmp_path / "p")
    project.commit("Add alpha (#1)", {CORE: src(ALPHA)}, tag="v0.1.0")
    project.push()
    catalog = tmp_path / "catalog"
    refresh_catalog(catalog, project.mirror, repo=REPO)
    served = [Triage.from_paths([catalog])]
    live = LiveTriage(lambda: served[0])
    assert live.analyse(panic("beta value too large: 1", 5)).verdict != "match"
    project.commit("Check beta values (#3)", {CORE: src(ALPHA, BETA)})
    project.push()
    refresh_catalog(catalog, project.mirror, repo=REPO)
    served[0] = Triage.from_paths([catalog])  # the swap
    assert live.analyse(panic("beta value too large: 1", 5)).verdict == "match"
    assert live.catalog is served[0].catalog and live.history is served[0].history


def test_poll_deployments_refresh_on_the_timer_and_swap_the_pipeline(tmp_path: Path):
    project = Project(tmp_path / "p")
    project.commit("Add alpha (#1)", {CORE: src(ALPHA)}, tag="v0.1.0")
    project.push()
    catalog = tmp_path / "catalog"
    refresh_catalog(catalog, project.mirror, repo=REPO)
    config = tmp_path / "triage-bot.toml"
    config.write_text(
        f'[catalog_source.widgets]\ncatalog = "{catalog}"\ngit_dir = "{project.mirror}"\n'
        f'repo = "{REPO}"\n'
    )
    settings = Settings.from_mapping({"TRIAGE_CONFIG": str(config), "TRIAGE_CATALOG": str(catalog)})
    old = Triage.from_paths([catalog])
    pipeline = SimpleNamespace(triage=old, commands=SimpleNamespace(catalog=old.catalog))
    follower = for_poll(settings, pipeline)
    assert follower is not None
    beta = project.commit("Check beta values (#3)", {CORE: src(ALPHA, BETA)})
    project.push()
    follower.schedule()  # what the timer does
    assert follower._thread is not None
    follower._thread.join(60)
    assert pipeline.triage is not old and pipeline.commands.catalog is pipeline.triage.catalog
    assert pipeline.triage.analyse(panic("beta value too large: 1", 5)).verdict == "match"
    assert follower.version == f"widgets=v0.1.0+{beta[:12]}" and follower.last_error is None


def test_which_deliveries_start_a_refresh(tmp_path: Path):
    source = CatalogSource("widgets", tmp_path / "c", tmp_path / "g", branch="main", repo=REPO)
    repo = {"full_name": REPO, "default_branch": "main"}
    assert wants_refresh("push", {"ref": "refs/heads/main", "repository": repo}, source)
    assert not wants_refresh("push", {"ref": "refs/heads/wip", "repository": repo}, source)
    assert not wants_refresh("push", {"ref": "refs/tags/v1.0.0", "repository": repo}, source)
    other = {"full_name": "someone/else", "default_branch": "main"}
    assert not wants_refresh("push", {"ref": "refs/heads/main", "repository": other}, source)
    assert wants_refresh("create", {"ref_type": "tag", "ref": "v1.0.0", "repository": repo}, source)
    assert not wants_refresh("create", {"ref_type": "branch", "repository": repo}, source)
    assert wants_refresh("release", {"action": "published", "repository": repo}, source)
    assert not wants_refresh("release", {"action": "deleted", "repository": repo}, source)
    assert not wants_refresh("issues", {"action": "opened", "repository": repo}, source)
    # No branch named: the repository's default branch.
    loose = CatalogSource("widgets", tmp_path / "c", tmp_path / "g", repo=REPO)
    assert wants_refresh("push", {"ref": "refs/heads/main", "repository": repo}, loose)
    assert not wants_refresh("push", {"ref": "refs/heads/wip", "repository": repo}, loose)


def test_health_says_a_refresh_is_running_and_a_first_build_serves_nothing_yet() -> None:
    from bot.server.catalog_swap import CatalogFollower

    follower = CatalogFollower([], load=lambda: None, swap=lambda _t: None)  # type: ignore[arg-type,return-value]
    follower.version = "widgets=v0.1.0+abc"
    assert follower.status().as_json()["refresh"] == {"state": "idle"}
    follower.refreshing_since = 0.0
    running = follower.status().as_json()
    assert running["status"] == "ok" and running["refresh"]["state"] == "running"
    assert "a refresh is running since 1970-01-01T00:00:00+00:00" in running["detail"]
    follower.version = "widgets=unbuilt"
    first = follower.status().as_json()
    assert first["status"] == "degraded" and "the first build is running" in first["detail"]
