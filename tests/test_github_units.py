"""The pure parts of the GitHub side, the store, the settings and the job commands."""

from __future__ import annotations

import argparse
import json
import sqlite3
from pathlib import Path

import pytest
from github import GithubException

from bot.catalog.model import Record
from bot.cli import run
from bot.cli import service as commands
from bot.config.settings import NAMES, Settings, SettingsError, read_env_file
from bot.github import webhook
from bot.github.labels import LabelConfig, label_config_from_dict, load_label_config
from bot.github.planner import BotComment, Desired, IssueView, plan
from bot.github.worker import RetryPolicy, classify
from bot.store import sqlite as store_module
from bot.store.sqlite import Store

FIXTURES = Path(__file__).parent / "fixtures" / "webhooks"
ROOT = Path(__file__).parent.parent


def fixture(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text())


# --- webhook -----------


def test_signature_is_hmac_sha256_of_the_raw_body():
    body = b'{"zen": "Design for failure."}'
    header = webhook.sign("It's a Secret to Everybody", body)
    assert webhook.verify_signature(["It's a Secret to Everybody"], body, header)
    assert webhook.verify_signature(["old", "It's a Secret to Everybody"], body, header)
    assert not webhook.verify_signature(["other"], body, header)
    assert not webhook.verify_signature(["It's a Secret to Everybody"], body + b" ", header)
    assert not webhook.verify_signature(["It's a Secret to Everybody"], body, None)
    assert not webhook.verify_signature(["It's a Secret to Everybody"], body, header[7:])
    assert not webhook.verify_signature([], body, header)


def test_github_documented_signature_example():
    # GitHub's docs: secret "It's a Secret to Everybody", payload "Hello, World!"
    expected = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    assert webhook.sign("It's a Secret to Everybody", b"Hello, World!") == expected


def test_decide_on_github_example_payloads():
    opened = webhook.decide("issues", fixture("issues.opened"))
    assert opened.job is not None
    assert opened.job["repo"] == "Codertocat/Hello-World" and opened.job["number"] == 1
    reopened = webhook.decide("issues", fixture("issues.reopened"))
    assert reopened.job is not None and reopened.job["installation_id"] == 1
    created = webhook.decide("issue_comment", fixture("issue_comment.created"))
    assert created.job is not None and created.job["payload"]["comment_id"]
    edited = webhook.decide("issue_comment", fixture("issue_comment.edited"))
    assert edited.job is not None and "previous_body" in edited.job["payload"]
    assert webhook.decide("ping", fixture("ping")).reason == "ping"
    assert webhook.decide("star", fixture("star.created")).reason == "ignored-event"
    closed = dict(fixture("issues.opened"), action="closed")
    assert webhook.decide("issues", closed).reason == "ignored-action"


def test_decide_ignores_bot_comments():
    payload = fixture("issue_comment.created")
    payload["comment"]["user"]["type"] = "Bot"
    assert webhook.decide("issue_comment", payload).reason == "ignored-bot"
    payload = fixture("issue_comment.created")
    payload["comment"]["user"]["login"] = "dependabot[bot]"
    assert webhook.decide("issue_comment", payload).reason == "ignored-bot"
    payload = fixture("issue_comment.created")
    payload["comment"]["body"] = "<!-- triage-bot:answer ids=a fp=b -->\nanswer"
    assert webhook.decide("issue_comment", payload).reason == "ignored-bot"


def test_parse_body_refuses_what_is_not_an_object():
    for body in (b"", b"nope", b"[]", b'"text"', b"\xff\xfe"):
        with pytest.raises(webhook.MalformedDelivery):
            webhook.parse_body(body)
    with pytest.raises(webhook.MalformedDelivery):
        webhook.decide("issues", {"action": "opened", "repository": {"full_name": "x"}})


# --- planner and labels -----------


def view(labels=(), comment: BotComment | None = None) -> IssueView:
    return IssueView("o/r", 1, "t", "b", frozenset(labels), ("t", "b"), comment)


def desired(verdict="match", body="<!-- triage-bot:answer -->\nA", labels=("panic: known",)):
    return Desired(verdict, ("r1",), tuple(labels), body, "<!-- triage-bot:no-longer -->\nGone")


def test_plan_creates_then_updates_then_leaves_alone():
    first = plan(view(), desired())
    assert (first.comment, first.add_labels, first.remove_labels) == (
        "create",
        ("panic: known",),
        (),
    )
    same = plan(view({"panic: known"}, BotComment(5, "<!-- triage-bot:answer -->\nA\n")), desired())
    assert not same.writes
    changed = plan(view(comment=BotComment(5, "<!-- triage-bot:answer -->\nOld")), desired())
    assert (changed.comment, changed.comment_id) == ("update", 5)


def test_plan_no_longer_and_owned_labels_only():
    current = view({"panic: known", "bug"}, BotComment(5, "<!-- triage-bot:answer -->\nA"))
    gone = plan(current, desired("no-panic", None, ()), owned_labels=["panic: known"])
    assert gone.comment == "update" and gone.body.endswith("Gone")
    assert gone.remove_labels == ("panic: known",) and gone.labels_owned == ()
    # a label a human added is never removed, even when it is one the bot could add
    human = plan(view({"panic: known"}), desired("no-panic", None, ()), owned_labels=[])
    assert human.remove_labels == () and not human.writes
    # no comment and no panic: nothing at all
    assert not plan(view(), desired("no-panic", None, ())).writes


def test_label_mapping_from_toml(tmp_path):
    record = Record(
        id="r1",
        repo="tracel-ai/burn",
        error_message="m",
        file_path="crates/burn-autodiff/src/ops/module.rs",
        tags=("autodiff", "x"),
        background_tag="unimplemented-op-backward",
    )
    assert LabelConfig().for_records([record]) == [
        "panic: known",
        "family: unimplemented-op-backward",
        "crate: burn-autodiff",
    ]
    assert LabelConfig().for_records([record], lambda r: "another-family")[1] == (
        "family: another-family"
    )
    config = tmp_path / "triage-bot.toml"
    config.write_text(
        '[labels]\nmatched = "known-panic"\nuncatalogued = ""\ncrate = "crate:{crate}"\n'
        '[labels.background_tag]\n"unimplemented-op-backward" = "A-backward"\n'
        '[labels.tags]\nautodiff = "A-autodiff"\n'
        "[github]\ncomment_uncatalogued = true\n"
    )
    loaded = load_label_config(config)
    assert loaded.for_records([record]) == [
        "known-panic",
        "A-backward",
        "A-autodiff",
        "crate:burn-autodiff",
    ]
    assert loaded.for_uncatalogued() == [] and loaded.comment_uncatalogued
    with pytest.raises(SettingsError, match=r"labels\.crate"):
        label_config_from_dict({"labels": {"crate": "no placeholder"}})
    config.write_text("[labels\n")
    with pytest.raises(SettingsError, match="TRIAGE_CONFIG"):
        load_label_config(config)


# --- retries -----------


def gh_error(status: int, message: str, **headers: str) -> GithubException:
    return GithubException(status, {"message": message}, headers)


def test_classify_failures():
    policy = RetryPolicy(base=2, jitter=0)
    assert classify(gh_error(502, "Server Error"), 1, policy, 0).delay == 2
    assert classify(gh_error(503, "x"), 3, policy, 0).delay == 8
    assert classify(gh_error(403, "x", **{"retry-after": "9"}), 1, policy, 0).delay == 9
    limited = classify(
        gh_error(
            403,
            "API rate limit exceeded",
            **{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1100"},
        ),
        1,
        policy,
        1000,
    )
    assert limited.retry and limited.delay == 101
    secondary = classify(
        gh_error(
            403,
            "You have exceeded a secondary rate limit. Please wait a few minutes before you "
            "try again.",
        ),
        1,
        policy,
        0,
    )
    assert secondary.retry and secondary.delay >= 60
    assert not classify(gh_error(403, "Resource not accessible by integration"), 1, policy, 0).retry
    assert not classify(gh_error(422, "Validation Failed"), 1, policy, 0).retry
    assert not classify(gh_error(404, "Not Found"), 1, policy, 0).retry
    import requests

    assert classify(requests.exceptions.ConnectionError("refused"), 1, policy, 0).retry
    assert classify(requests.exceptions.ReadTimeout("slow"), 1, policy, 0).retry


# --- store -----------


def test_store_feedback_one_vote_per_user(tmp_path):
    with Store(tmp_path / "s.db") as store:
        store.record_feedback("discord", "m1", "r1", "u1", 1)
        store.record_feedback("discord", "m1", "r1", "u2", 1)
        store.record_feedback("discord", "m1", "r1", "u1", -1)  # u1 changes their mind
        store.record_feedback("github", "o/r#1", "r1", "u1", -1)
        store.record_feedback("discord", "m2", "r2", "u1", 1)
        assert store.feedback_counts("r1") == (1, 2)
        assert store.feedback_counts("r2") == (1, 0)
        assert store.feedback_counts("none") == (0, 0)


def test_store_discord_replies(tmp_path):
    with Store(tmp_path / "s.db") as store:
        store.put_discord_reply(10, 20, 30, 40, ["a", "b"])
        assert store.get_discord_reply(10) == {
            "message_id": 10,
            "channel_id": 20,
            "reply_id": 30,
            "author_id": 40,
            "record_ids": ["a", "b"],
            "created_at": store.get_discord_reply(10)["created_at"],
        }
        store.put_discord_reply(10, 20, 31, 40, ["c"])
        assert store.get_discord_reply(10)["reply_id"] == 31
        store.delete_discord_reply(10)
        assert store.get_discord_reply(10) is None


def test_store_jobs_run_in_order_per_issue(tmp_path):
    with Store(tmp_path / "s.db") as store:
        a1 = store.enqueue({"repo": "o/r", "number": 1, "payload": {"event": "issues"}})
        b1 = store.enqueue({"repo": "o/r", "number": 2})
        first = store.claim_job()
        assert first.id == a1 and first.payload == {"event": "issues"}
        # a job of the same issue queued while a1 runs waits for it (never two at once)
        a2 = store.enqueue({"repo": "O/R", "number": 1})  # same issue, other spelling
        assert store.claim_job().id == b1
        assert store.claim_job() is None
        store.retry_later(a1, 0, "boom")
        # the retry comes first, and a2 (queued before it runs again) is done by it
        again = store.claim_job()
        assert again.id == a1 and again.payload == {"superseded": [a2]}
        assert store.get_job(a2).state == "done"
        assert store.get_job(a2).last_error == f"superseded by job {a1}"
        store.finish_job(a1)
        store.bury_job(b1, "dead")
        assert [j.id for j in store.list_jobs(["dead"])] == [b1]
        assert store.requeue_dead() == 1
        assert store.job_counts() == {"queued": 1, "running": 0, "done": 2, "dead": 0}
        store.claim_job()
        assert store.recover_running() == 1
        assert store.job_counts()["queued"] == 1


def test_store_prunes_old_finished_jobs_and_deliveries(tmp_path):
    now = [1_000_000.0]
    with Store(tmp_path / "s.db", clock=lambda: now[0]) as store:
        store.accept_delivery("old", "issues", "opened", {"repo": "o/r", "number": 1})
        store.finish_job(store.claim_job().id)
        store.accept_delivery("pending", "issues", "opened", {"repo": "o/r", "number": 2})
        now[0] += 31 * 86400
        assert store.prune() == 3  # one done job, two deliveries; the queued job stays
        assert [j.number for j in store.list_jobs()] == [2]
        assert not store.delivery_seen("old")


def test_store_migrations_keep_data(tmp_path, monkeypatch):
    db = tmp_path / "s.db"
    with Store(db) as store:
        store.record_feedback("discord", "m", "r1", "u", 1)
        assert store.schema_version() == Store.latest_version()
    upgraded = [
        *store_module.MIGRATIONS,
        (
            Store.latest_version() + 1,
            "ALTER TABLE feedback ADD COLUMN note TEXT; CREATE TABLE extra (x INTEGER)",
        ),
    ]
    monkeypatch.setattr(store_module, "MIGRATIONS", upgraded)
    with Store(db) as store:
        assert store.schema_version() == Store.latest_version()
        assert store.feedback_counts("r1") == (1, 0)
    conn = sqlite3.connect(db)
    versions = [row[0] for row in conn.execute("SELECT version FROM schema_version")]
    columns = [row[1] for row in conn.execute("PRAGMA table_info(feedback)")]
    conn.close()
    assert versions == list(range(1, Store.latest_version() + 1))
    assert "note" in columns


def test_a_failed_migration_changes_nothing(tmp_path, monkeypatch):
    db = tmp_path / "s.db"
    Store(db).close()
    bad = [*store_module.MIGRATIONS, (99, "CREATE TABLE t1 (x INTEGER); NOT SQL")]
    monkeypatch.setattr(store_module, "MIGRATIONS", bad)
    with pytest.raises(sqlite3.Error):
        Store(db)
    monkeypatch.undo()
    with Store(db) as store:
        assert store.schema_version() == Store.latest_version()
        tables = {r[0] for r in store._query("SELECT name FROM sqlite_master")}
        assert "t1" not in tables


# --- settings -----------


def test_settings_defaults_and_types(tmp_path):
    s = Settings.from_mapping(
        {
            "GITHUB_TOKEN": "ghp_SECRETVALUE",
            "GITHUB_WEBHOOK_SECRET": "sekrit-a, sekrit-b,",
            "DISCORD_CHANNEL_IDS": "1, 2",
            "DISCORD_GUILD_ID": "3",
            "TRIAGE_DRY_RUN": "yes",
            "LOG_LEVEL": "debug",
        }
    )
    assert s.github_auth == "token" and s.github_webhook_secrets == ("sekrit-a", "sekrit-b")
    assert s.discord_channel_ids == frozenset({1, 2}) and s.discord_guild_id == 3
    assert s.triage_dry_run and s.log_level == "DEBUG"
    assert s.github_api_url == "https://api.github.com"
    assert "SECRETVALUE" not in repr(s) and "sekrit" not in repr(s)


@pytest.mark.parametrize(
    ("env", "name"),
    [
        ({"DISCORD_CHANNEL_IDS": "12,abc"}, "DISCORD_CHANNEL_IDS"),
        ({"DISCORD_GUILD_ID": "-4"}, "DISCORD_GUILD_ID"),
        ({"TRIAGE_DRY_RUN": "maybe"}, "TRIAGE_DRY_RUN"),
        ({"LOG_LEVEL": "LOUD"}, "LOG_LEVEL"),
        ({"GITHUB_API_URL": "api.github.com"}, "GITHUB_API_URL"),
        ({"GITHUB_APP_ID": "x"}, "GITHUB_APP_ID"),
        ({"GITHUB_APP_ID": "5"}, "GITHUB_APP_PRIVATE_KEY"),
        (
            {"GITHUB_APP_ID": "5", "GITHUB_APP_PRIVATE_KEY_PATH": "/nonexistent.pem"},
            "GITHUB_APP_PRIVATE_KEY_PATH",
        ),
        ({"GITHUB_APP_ID": "5", "GITHUB_TOKEN": "t"}, "GITHUB_TOKEN"),
        ({"TRIAGE_CATALOG": "/no/such/catalog"}, "TRIAGE_CATALOG"),
        ({"TRIAGE_CONFIG": "/no/such.toml"}, "TRIAGE_CONFIG"),
    ],
)
def test_invalid_settings_name_the_setting(env, name):
    with pytest.raises(SettingsError) as info:
        Settings.from_mapping(env)
    assert name in str(info.value) and name in info.value.names


def test_missing_github_settings_are_named():
    with pytest.raises(SettingsError, match="GITHUB_TOKEN"):
        Settings.from_mapping({}).require_github()
    with pytest.raises(SettingsError, match="GITHUB_WEBHOOK_SECRET"):
        Settings.from_mapping({"GITHUB_TOKEN": "t"}).require_github(webhook=True)


def test_env_file_and_environment(tmp_path):
    env = tmp_path / ".env"
    env.write_text(
        "# comment\nexport GITHUB_TOKEN=from-file\nLOG_LEVEL='warning'\n"
        'GITHUB_APP_PRIVATE_KEY=""\nTRIAGE_DB=/data/x.db # where\n'
    )
    assert read_env_file(env)["TRIAGE_DB"] == "/data/x.db"
    s = Settings.load({"LOG_LEVEL": "error"}, env)
    assert s.github_token == "from-file" and s.log_level == "ERROR"
    assert str(s.triage_db) == "/data/x.db"


# Variables the bot reads that .env.example leaves out on purpose, and why.
NOT_IN_ENV_EXAMPLE = {
    "XDG_CACHE_HOME": "the desktop's cache folder, the default parent of TRIAGE_BOT_CACHE_DIR",
    # The terminal's own conventions, honoured by the commands' colours (README, Commands).
    "NO_COLOR": "any value switches colours off (no-color.org)",
    "TERM": "TERM=dumb switches colours off",
    "COLUMNS": "the terminal's width, for --help",
}


def environment_reads(package: Path) -> tuple[set[str], list[str]]:
    """The variable names the package's source reads from the environment (`os.environ[...]`,
    `.get`, `in`, `os.getenv`, a module constant as the name), and the reads whose name it
    cannot tell (`file:line`)."""
    import ast

    def is_environ(node: ast.AST) -> bool:
        return (isinstance(node, ast.Attribute) and node.attr == "environ") or (
            isinstance(node, ast.Name) and node.id == "environ"
        )

    names: set[str] = set()
    unknown: list[str] = []
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        constants = {
            target.id: node.value.value
            for node in tree.body
            if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        for node in ast.walk(tree):
            key: ast.AST | None = None
            if isinstance(node, ast.Subscript) and is_environ(node.value):
                key = node.slice
            elif (
                isinstance(node, ast.Call)
                and node.args
                and (
                    (isinstance(node.func, ast.Name) and node.func.id == "getenv")
                    or (
                        isinstance(node.func, ast.Attribute)
                        and (
                            node.func.attr == "getenv"
                            or (node.func.attr == "get" and is_environ(node.func.value))
                        )
                    )
                )
            ):
                key = node.args[0]
            elif (
                isinstance(node, ast.Compare)
                and isinstance(node.ops[0], ast.In | ast.NotIn)
                and is_environ(node.comparators[0])
            ):
                key = node.left
            if key is None:
                continue
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                names.add(key.value)
            elif isinstance(key, ast.Name) and key.id in constants:
                names.add(constants[key.id])
            else:
                unknown.append(f"{path.relative_to(package.parent)}:{node.lineno}")
    return names, unknown


def test_env_example_names_every_variable_the_bot_reads_with_a_comment():
    """The settings (NAMES) and every variable read from the environment anywhere in bot/ (such
    as TRIAGE_BOT_CACHE_DIR, read by the catalog cache, not by bot/config/settings.py)."""
    read, unknown = environment_reads(ROOT / "bot")
    assert not unknown, f"environment reads whose variable this test cannot tell: {unknown}"
    assert "TRIAGE_BOT_CACHE_DIR" in read  # the scan sees reads outside bot/config/settings.py
    text = (ROOT / ".env.example").read_text()
    lines = text.splitlines()
    for name in sorted((set(NAMES) | read) - set(NOT_IN_ENV_EXAMPLE)):
        found = [i for i, line in enumerate(lines) if line.lstrip("# ").startswith(name + "=")]
        assert len(found) == 1, f"{name} is read by the bot but not listed in .env.example"
        assert lines[found[0] - 1].startswith("#"), name
    # and it parses as a .env file whose values are all valid
    Settings.from_mapping({k: v for k, v in read_env_file(ROOT / ".env.example").items()})


# --- jobs commands -----------


def run_command(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    commands.register(parser.add_subparsers())
    args = parser.parse_args(argv)
    return run(args)


def test_jobs_list_and_retry(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRIAGE_DB", str(tmp_path / "db.sqlite3"))
    with Store(tmp_path / "db.sqlite3") as store:
        dead = store.enqueue({"repo": "o/r", "number": 7})
        store.claim_job()
        store.bury_job(dead, "HTTP 422: Validation Failed")
    assert run_command(["jobs", "list"]) == 0
    out = capsys.readouterr().out
    assert "o/r#7" in out and "dead" in out and "HTTP 422" in out
    assert run_command(["jobs", "retry", str(dead)]) == 0
    assert run_command(["jobs", "retry", "--all"]) == 1  # nothing left to replay
    with Store(tmp_path / "db.sqlite3") as store:
        assert store.get_job(dead).state == "queued"
    assert run_command(["jobs", "retry"]) == 2


def test_serve_refuses_to_start_without_settings(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for name in NAMES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GITHUB_TOKEN", "t")
    assert run_command(["serve", "--port", "0"]) == 2
    assert "GITHUB_WEBHOOK_SECRET" in capsys.readouterr().err
    monkeypatch.setenv("LOG_LEVEL", "chatty")
    assert run_command(["serve"]) == 2
    assert "LOG_LEVEL" in capsys.readouterr().err


def test_serve_names_a_broken_catalog(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for name in NAMES:
        monkeypatch.delenv(name, raising=False)
    broken = tmp_path / "catalog"
    broken.mkdir()
    (broken / "bad.json").write_text('{"id": "x"}')  # no repo, no errorMessage
    monkeypatch.setenv("GITHUB_TOKEN", "t")
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", "a-long-webhook-secret")
    monkeypatch.setenv("TRIAGE_CATALOG", str(broken))
    monkeypatch.setenv("TRIAGE_DB", str(tmp_path / "db.sqlite3"))
    assert run_command(["serve", "--port", "0"]) == 2
    assert "TRIAGE_CATALOG" in capsys.readouterr().err
