"""`triage-bot doctor` against the fake GitHub, a small Discord REST stub, and real files."""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import sqlite3
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from fakes.github_api import FakeGitHub

from bot import cli
from bot.cli import doctor
from bot.cli.doctor import discord_check as doctor_discord
from bot.cli.doctor import run_checks
from bot.cli.doctor.check import FAIL, OK, SKIP, WARN, Check
from bot.store.sqlite import MIGRATIONS, Store

ROOT = Path(__file__).resolve().parent.parent
REPO = "tracel-ai/burn"
TOKEN = "ghp_" + "d0c70r" * 6
BOT_TOKEN = "MTEwMDAwMDAwMDAwMDAwMDAwMA.GhIjKl.abcdefghijklmnopqrstuvwxyz0123"


class FakeGitHubWithInstallationRepos(FakeGitHub):
    """The fake GitHub plus `GET /installation/repositories`, answered as GitHub does: the
    repositories of the installation a token belongs to; 403 for other tokens."""

    def _route(self, request: web.Request, path: str, body: Any, auth: str | None) -> web.Response:
        if path == "/installation/repositories" and request.method == "GET" and auth:
            token = auth.removeprefix("token:")
            if token not in self.installation_tokens:
                return self._error(
                    403,
                    "You must authenticate with an installation access token in order to list "
                    "repositories for an installation.",
                )
            inst, _ = self.installation_tokens[token]
            repos = [self.repos[n] for n in self.installations[inst]["repos"] if n in self.repos]
            return self._json(
                {
                    "total_count": len(repos),
                    "repository_selection": "selected",
                    "repositories": [self._repo_json(r) for r in repos],
                }
            )
        return super()._route(request, path, body, auth)

    app_changes: dict[str, Any] = {}  # noqa: RUF012  (fields of GET /app to answer differently)

    def _route_app(self, method: str, path: str, auth: str) -> web.Response:
        response = super()._route_app(method, path, auth)
        if path == "/app" and response.status == 200 and self.app_changes:
            data = json.loads(response.body) | self.app_changes  # type: ignore[arg-type]
            return self._json(data)
        return response


class DiscordStub:
    """Discord's REST answers to `GET /users/@me` and `/oauth2/applications/@me`, on 127.0.0.1,
    in a thread of its own (doctor is synchronous). Checks the `Bot` authorization."""

    def __init__(self, token: str, *, flags: int = 1 << 19, bot: bool = True) -> None:
        self.token, self.flags, self.bot = token, flags, bot
        self.requests: list[tuple[str, str]] = []
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v10"

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._start())
        self._ready.set()
        self._loop.run_forever()

    async def _start(self) -> None:
        app = web.Application()
        app.router.add_get("/api/v10/users/@me", self._me)
        app.router.add_get("/api/v10/oauth2/applications/@me", self._app)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    def _authorized(self, request: web.Request) -> bool:
        self.requests.append((request.path, request.headers.get("Authorization", "")))
        return request.headers.get("Authorization") == f"Bot {self.token}"

    async def _me(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return web.json_response({"message": "401: Unauthorized", "code": 0}, status=401)
        return web.json_response(
            {"id": "1100000000000000000", "username": "triage-bot", "bot": self.bot}
        )

    async def _app(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return web.json_response({"message": "401: Unauthorized", "code": 0}, status=401)
        return web.json_response({"id": "1100000000000000000", "flags": self.flags})

    def __enter__(self) -> DiscordStub:
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


def by_name(checks: list[Check]) -> dict[str, Check]:
    return {c.name: c for c in checks}


def run(env: dict[str, str], tmp_path: Path, **kwargs: Any) -> tuple[dict[str, Check], str]:
    env = {"TRIAGE_DB": str(tmp_path / "store" / "triage.sqlite3")} | env
    out = io.StringIO()
    checks = run_checks(env, tmp_path / "no.env", out=out, **kwargs)
    return by_name(checks), out.getvalue()


@pytest.fixture
def github():
    with FakeGitHubWithInstallationRepos() as gh:
        gh.add_token(TOKEN, "maintainer")
        gh.add_repo(REPO)
        yield gh


# -- settings ---------------------------------------------------------------------------------


def test_every_bad_setting_is_named_with_what_to_do(tmp_path):
    env = {
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_API_URL": "ftp://example",
        "LOG_LEVEL": "loud",
        "DISCORD_CHANNEL_IDS": "12,abc",
        "TRIAGE_DRY_RUN": "maybe",
    }
    checks, out = run(env, tmp_path, offline=True)
    settings = checks["settings"]
    assert settings.status == FAIL and settings.summary == "4 problem(s)"
    for name in ("GITHUB_API_URL", "LOG_LEVEL", "DISCORD_CHANNEL_IDS", "TRIAGE_DRY_RUN"):
        assert any(line.startswith(f"problem: {name}:") for line in settings.details), name
    assert "-> fix each setting named above" in out
    assert TOKEN not in out  # secrets are never shown, only whether they are set
    assert "secrets set: GITHUB_TOKEN" in out
    # the other checks still ran, on what was usable
    assert checks["catalog"].status == OK and checks["store"].status == OK


def test_conflicting_github_settings_and_nothing_to_serve(tmp_path):
    key = tmp_path / "app.pem"
    env = {"GITHUB_TOKEN": TOKEN, "GITHUB_APP_ID": "7", "GITHUB_APP_PRIVATE_KEY_PATH": str(key)}
    checks, _ = run(env, tmp_path, offline=True)
    problems = checks["settings"].details
    assert any("GITHUB_TOKEN and GITHUB_APP_ID are both set" in p for p in problems)
    # no credentials: fine for `match`, and `serve` serves the pages alone
    checks, out = run({}, tmp_path, offline=True)
    assert checks["settings"].status != FAIL
    assert "fine for `match`" in out
    checks, out = run({"TRIAGE_PAGES": "off"}, tmp_path, offline=True)
    assert checks["settings"].status == FAIL
    assert "nothing to serve" in out


def test_env_file_is_read_and_the_environment_wins(tmp_path):
    env_file = tmp_path / ".env"
    env_file.write_text("DISCORD_TOKEN=from-file-token\nLOG_LEVEL=nonsense\nTRIAGE_DRY_RUN=1\n")
    out = io.StringIO()
    checks = by_name(
        run_checks(
            {"LOG_LEVEL": "ERROR", "TRIAGE_DB": str(tmp_path / "db")},
            env_file,
            offline=True,
            out=out,
        )
    )
    settings = checks["settings"]
    assert settings.status == WARN  # dry run and no channels: worth saying, not failing
    assert "LOG_LEVEL=ERROR" in settings.details
    assert any("TRIAGE_DRY_RUN is on" in d for d in settings.details)
    assert any("DISCORD_CHANNEL_IDS is empty" in d for d in settings.details)


def test_missing_webhook_secret_and_a_short_one_are_warnings(tmp_path):
    checks, _ = run({"GITHUB_TOKEN": TOKEN}, tmp_path, offline=True)
    assert checks["settings"].status == WARN
    assert any("GITHUB_WEBHOOK_SECRET is not set" in d for d in checks["settings"].details)
    checks, _ = run({"GITHUB_TOKEN": TOKEN, "GITHUB_WEBHOOK_SECRET": "short"}, tmp_path)
    assert any("is short" in d for d in checks["settings"].details)


def test_bad_label_config_fails_the_config_check(tmp_path):
    config = tmp_path / "triage-bot.toml"
    config.write_text("[labels]\nmatched = 3\n")
    checks, _ = run(
        {"DISCORD_TOKEN": "x" * 30, "TRIAGE_CONFIG": str(config)}, tmp_path, offline=True
    )
    assert checks["config"].status == FAIL and "labels.matched" in checks["config"].summary
    config.write_text('[labels]\nmatched = "known panic"\n[labels.tags]\nwgpu = "backend: wgpu"\n')
    checks, _ = run(
        {"DISCORD_TOKEN": "x" * 30, "TRIAGE_CONFIG": str(config)}, tmp_path, offline=True
    )
    assert checks["config"].status == OK
    assert "matched -> known panic" in checks["config"].summary
    assert "1 mapped label(s)" in checks["config"].summary


# -- catalog ----------------------------------------------------------------------------------


def test_bundled_catalog_validates_and_is_linted(tmp_path):
    checks, _ = run({"DISCORD_TOKEN": "x" * 30}, tmp_path, offline=True)
    catalog = checks["catalog"]
    assert catalog.status == OK and "bundled catalog" in catalog.summary
    # every project's skeleton files (issue 25: burn, cubecl, burn-onnx, wgpu, ndarray)
    burn_files = [
        *sorted((ROOT / "catalog").glob("*/*sites.jsonl")),
        ROOT / "catalog" / "burn" / "check_reasons.jsonl",
    ]
    lines = [line for path in burn_files for line in path.read_text().splitlines()]
    assert f"{len(lines)} records" in catalog.summary
    assert catalog.details[0].startswith("lint: ")


def test_custom_catalog_problems_fail_with_the_command_to_run(tmp_path):
    first = (ROOT / "catalog" / "burn" / "panic_sites.jsonl").read_text().splitlines()[0]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(first + "\n" + json.dumps({"id": "zz", "errorMessage": 3}) + "\n")
    checks, out = run(
        {"DISCORD_TOKEN": "x" * 30, "TRIAGE_CATALOG": str(bad)}, tmp_path, offline=True
    )
    catalog = checks["catalog"]
    assert catalog.status == FAIL and "2 problem(s)" in catalog.summary
    assert any("record zz" in d and "`repo`" in d for d in catalog.details)
    assert f"triage-bot catalog validate {bad}" in out
    good = tmp_path / "good.jsonl"
    good.write_text(first + "\n")
    checks, _ = run(
        {"DISCORD_TOKEN": "x" * 30, "TRIAGE_CATALOG": str(good)}, tmp_path, offline=True
    )
    assert checks["catalog"].status in (OK, WARN)
    assert "1 records" in checks["catalog"].summary


# -- store ------------------------------------------------------------------------------------


def _old_store(path: Path, version: int) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at REAL)")
    for number, script in MIGRATIONS:
        if number <= version:
            conn.executescript(script)
    conn.execute("INSERT INTO schema_version VALUES (?, 0)", (version,))
    conn.commit()
    conn.close()


def test_store_states(tmp_path):
    env = {"DISCORD_TOKEN": "x" * 30}
    db = tmp_path / "store" / "triage.sqlite3"
    checks, _ = run(env, tmp_path, offline=True)
    assert checks["store"].status == OK and "created" in checks["store"].summary
    assert not db.exists()  # doctor does not create it

    with Store(db) as store:
        store.enqueue({"repo": REPO, "number": 1})
        job = store.claim_job()
        assert job is not None
        store.bury_job(job.id, "boom")
    checks, out = run(env, tmp_path, offline=True)
    store_check = checks["store"]
    assert store_check.status == WARN and "(current), writable" in store_check.summary
    assert "1 dead" in store_check.details[0] and "jobs retry --all" in out

    if Store.latest_version() > 1:
        older = tmp_path / "older.sqlite3"
        _old_store(older, Store.latest_version() - 1)
        checks, out = run(env | {"TRIAGE_DB": str(older)}, tmp_path, offline=True)
        assert checks["store"].status == WARN and "1 migration(s) pending" in out
        assert Store.latest_version() - 1 == _version(older)  # doctor did not migrate it

    newer = tmp_path / "newer.sqlite3"
    _old_store(newer, 1)
    with sqlite3.connect(newer) as conn:
        conn.execute("INSERT INTO schema_version VALUES (999, 0)")
    checks, out = run(env | {"TRIAGE_DB": str(newer)}, tmp_path, offline=True)
    assert checks["store"].status == FAIL and "newer than this version" in out

    blocked = tmp_path / "a-file"
    blocked.write_text("")
    checks, out = run(
        env | {"TRIAGE_DB": str(blocked / "sub" / "db.sqlite3")}, tmp_path, offline=True
    )
    assert checks["store"].status == FAIL and "cannot be created" in out
    assert "-> make " in out

    junk = tmp_path / "junk.sqlite3"
    junk.write_bytes(b"this is not a database" * 100)
    checks, _ = run(env | {"TRIAGE_DB": str(junk)}, tmp_path, offline=True)
    assert checks["store"].status == FAIL


def _version(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0])


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_unwritable_store_folder_fails(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        checks, out = run(
            {"DISCORD_TOKEN": "x" * 30, "TRIAGE_DB": str(folder / "db.sqlite3")},
            tmp_path,
            offline=True,
        )
    finally:
        folder.chmod(0o755)
    assert checks["store"].status == FAIL and "not writable" in out


# -- GitHub -----------------------------------------------------------------------------------


def test_token_identity_and_repositories(github, tmp_path):
    env = {"GITHUB_TOKEN": TOKEN, "GITHUB_API_URL": github.base_url}
    checks, out = run(env, tmp_path, repos=[REPO])
    check = checks["github"]
    assert check.status == OK, out
    assert check.summary == "token of maintainer"
    assert f"{REPO}: reachable" in check.details
    assert github.calls("GET", r"^/user$") and github.calls("GET", rf"^/repos/{REPO}$")
    assert checks["discord"].status == SKIP

    checks, out = run(env, tmp_path, repos=["someone/missing"])
    assert checks["github"].status == FAIL
    assert "someone/missing: 404" in out and "-> give the token access" in out


def test_rejected_token(github, tmp_path):
    env = {"GITHUB_TOKEN": "ghp_" + "0" * 36, "GITHUB_API_URL": github.base_url}
    checks, out = run(env, tmp_path)
    assert checks["github"].status == FAIL
    assert "GITHUB_TOKEN is rejected: 401 Bad credentials" in out
    assert "-> create a new token" in out


def test_action_token_lists_its_installation_repositories(github, tmp_path):
    """A workflow's GITHUB_TOKEN is an installation token: no /user, but its repositories."""
    github.add_repo("tracel-ai/other")
    github.add_installation(5, "tracel-ai", [REPO])
    action_token = "ghs_" + "a" * 36
    github.installation_tokens[action_token] = (5, datetime.now(UTC) + timedelta(hours=1))
    env = {"GITHUB_TOKEN": action_token, "GITHUB_API_URL": github.base_url}
    checks, out = run(env, tmp_path, repos=[REPO, "tracel-ai/other"])
    check = checks["github"]
    assert check.summary.startswith(
        "an installation token (e.g. a workflow's GITHUB_TOKEN): 1 pr"
    ), out
    assert f"repositories (1): {REPO}" in check.details
    assert "problem: tracel-ai/other: not among the repositories" in out
    assert action_token not in out


@pytest.fixture
def app(github, tmp_path):
    pem = github.enable_app(app_id=4242)
    key = tmp_path / "app.pem"
    key.write_text(pem)
    return {
        "GITHUB_APP_ID": "4242",
        "GITHUB_APP_PRIVATE_KEY_PATH": str(key),
        "GITHUB_WEBHOOK_SECRET": "a-long-enough-webhook-secret",
        "GITHUB_API_URL": github.base_url,
    }


def test_app_permissions_events_installations_and_repositories(github, app, tmp_path):
    github.add_repo("tracel-ai/burn-book")
    github.add_installation(77, "tracel-ai", [REPO, "tracel-ai/burn-book"])
    checks, out = run(app, tmp_path, repos=[REPO])
    check = checks["github"]
    assert check.status == OK, out
    assert check.summary == "App Triage Bot (id 4242), 1 installation(s)"
    assert "permissions: issues=write, metadata=read" in check.details
    assert "events: issue_comment, issues" in check.details
    assert f"installation 77 on tracel-ai: {REPO}, tracel-ai/burn-book" in check.details
    assert github.calls("GET", r"^/app$")[0].auth == "jwt:4242"
    assert github.calls("POST", r"^/app/installations/77/access_tokens$")
    assert checks["settings"].status == OK


def test_app_without_the_permissions_or_events_it_needs(github, app, tmp_path):
    github.add_installation(77, "tracel-ai", [REPO])
    github.app_changes = {"permissions": {"issues": "read"}, "events": ["issues"]}
    checks, out = run(app, tmp_path)
    assert checks["github"].status == FAIL
    assert "problem: Issues permission is read, not write" in out
    assert "problem: Metadata permission is missing" in out
    assert "problem: not subscribed to issue_comment" in out
    assert "Permissions & events set Issues: Read and write" in out


def test_app_not_installed_or_not_on_the_repository(github, app, tmp_path):
    checks, out = run(app, tmp_path)
    assert checks["github"].status == FAIL
    assert "the App is not installed anywhere" in out and "-> install it" in out
    github.add_installation(77, "tracel-ai", ["tracel-ai/other"])
    checks, out = run(app, tmp_path, repos=[REPO])
    assert checks["github"].status == FAIL
    assert f"{REPO}: the App is not installed on it" in out


def test_app_with_a_key_that_is_not_the_apps(github, app, tmp_path):
    other = FakeGitHub()
    Path(app["GITHUB_APP_PRIVATE_KEY_PATH"]).write_text(other.enable_app(4242))
    checks, out = run(app, tmp_path)
    assert checks["github"].status == FAIL
    assert "the App's credentials are rejected: 401" in out


def test_unreachable_github(tmp_path):
    env = {"GITHUB_TOKEN": TOKEN, "GITHUB_API_URL": "http://127.0.0.1:9"}
    checks, out = run(env, tmp_path)
    assert checks["github"].status == FAIL and "cannot reach http://127.0.0.1:9" in out


# -- Discord ----------------------------------------------------------------------------------


def test_discord_token_and_intent(tmp_path, monkeypatch):
    env = {"DISCORD_TOKEN": BOT_TOKEN, "DISCORD_CHANNEL_IDS": "123"}
    with DiscordStub(BOT_TOKEN) as stub:
        monkeypatch.setattr(doctor_discord, "DISCORD_API_BASE", stub.base)
        checks, out = run(env, tmp_path)
        assert checks["discord"].status == OK, out
        assert checks["discord"].summary == "logged in as triage-bot (id 1100000000000000000)"
        assert stub.requests[0] == ("/api/v10/users/@me", f"Bot {BOT_TOKEN}")
        assert BOT_TOKEN not in out

        stub.flags = 0
        checks, out = run(env, tmp_path)
        assert checks["discord"].status == FAIL
        assert "Message Content intent is off" in out and "Privileged Gateway Intents" in out

        stub.flags, stub.bot = 1 << 18, False
        checks, _ = run(env, tmp_path)
        assert checks["discord"].status == FAIL and "not a bot" in checks["discord"].summary

        wrong = "MTEwMDAwMDAwMDAwMDAwMDAwMA.GhIjKl.zzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"
        checks, out = run(env | {"DISCORD_TOKEN": wrong}, tmp_path)
        assert checks["discord"].status == FAIL and "DISCORD_TOKEN is rejected" in out
        assert "Reset Token" in out


def test_offline_skips_the_network(tmp_path, monkeypatch):
    monkeypatch.setattr(doctor_discord, "DISCORD_API_BASE", "http://127.0.0.1:9")
    env = {"GITHUB_TOKEN": TOKEN, "GITHUB_API_URL": "http://127.0.0.1:9"}
    checks, _ = run(env | {"DISCORD_TOKEN": BOT_TOKEN}, tmp_path, offline=True)
    assert checks["github"].status == SKIP and checks["discord"].status == SKIP


# -- the command ------------------------------------------------------------------------------


def test_command_exit_status_and_output(github, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for name in (
        "GITHUB_APP_ID",
        "GITHUB_APP_PRIVATE_KEY",
        "GITHUB_APP_PRIVATE_KEY_PATH",
        "DISCORD_TOKEN",
        "TRIAGE_CATALOG",
        "TRIAGE_CONFIG",
        "TRIAGE_DRY_RUN",
        "DISCORD_CHANNEL_IDS",
        "LOG_LEVEL",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", "a-long-enough-webhook-secret")
    monkeypatch.setenv("GITHUB_API_URL", github.base_url)
    monkeypatch.setenv("TRIAGE_DB", str(tmp_path / "db.sqlite3"))
    monkeypatch.setitem(cli.COMMAND_MODULES, "doctor", "bot.cli.doctor")
    assert cli.main(["doctor", "--repo", REPO]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("ok    settings: GitHub token, Discord off")
    assert "ok    github: token of maintainer" in out
    assert "all 5 checks passed" in out

    (tmp_path / ".env").write_text("LOG_LEVEL=chatty\n")
    assert cli.main(["doctor", "--offline"]) == 1
    out = capsys.readouterr().out
    assert "problem: LOG_LEVEL: 'CHATTY'" in out
    assert "1 check(s) failed: settings" in out


def test_register_adds_doctor_with_a_handler():
    parser = argparse.ArgumentParser()
    doctor.register(parser.add_subparsers())
    args = parser.parse_args(["doctor", "--repo", "a/b", "--repo", "c/d", "--offline"])
    assert args.handler is doctor.cmd_doctor and args.repo == ["a/b", "c/d"] and args.offline
