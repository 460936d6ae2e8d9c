"""Structured logs: the level setting, the one line per event, and no secrets in any record."""

from __future__ import annotations

import argparse
import io
import json
import logging
import re

import pytest
from harness import PANIC, REPO, bot_comments, fake_github, issue_payload

from bot.config.logs import configure_logging, event_line, log_event
from bot.config.redact import REDACTED, Redactor, secret_values
from bot.config.settings import Settings
from bot.github import auth
from bot.github.auth import ClientOptions

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0" * 2
DISCORD = "MTEwMDAwMDAwMDAwMDAwMDAwMA.GhIjKl.abcdefghijklmnopqrstuvwxyz0123"
WEBHOOK = "a-webhook-secret-of-some-length"
PEM_BODY = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun"
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    f"{PEM_BODY}\n"
    "VPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u\n"
    "-----END RSA PRIVATE KEY-----\n"
)


@pytest.fixture
def restore_logging():
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in list(root.handlers):
        if handler not in handlers:
            root.removeHandler(handler)
    root.setLevel(level)


def settings(**extra: str) -> Settings:
    return Settings.from_mapping(
        {"GITHUB_TOKEN": TOKEN, "GITHUB_WEBHOOK_SECRET": f"{WEBHOOK},other-secret-value"}
        | {"DISCORD_TOKEN": DISCORD}
        | extra
    )


def app_settings(tmp_path) -> Settings:
    return Settings.from_mapping(
        {"GITHUB_APP_ID": "42", "GITHUB_APP_PRIVATE_KEY": PEM.replace("\n", "\\n")}
    )


def test_secret_values_come_from_every_secret_setting(tmp_path):
    values = secret_values(settings())
    assert {TOKEN, DISCORD, WEBHOOK, "other-secret-value"} <= set(values)
    app_values = secret_values(app_settings(tmp_path))
    assert PEM in app_values and PEM_BODY in app_values  # whole, and line by line
    assert secret_values(None) == []


def test_every_secret_is_redacted_wherever_it_appears(restore_logging):
    stream = io.StringIO()
    configure_logging(settings(), stream=stream)
    log = logging.getLogger("bot.some.module")
    log.info("token %s and secret %s", TOKEN, WEBHOOK)
    log.warning("headers: {'Authorization': 'Bot %s'}", DISCORD)
    logging.getLogger("urllib3.connectionpool").warning("retrying with %s", TOKEN)
    try:
        raise RuntimeError(f"request failed: other-secret-value {TOKEN}")
    except RuntimeError:
        log.exception("job failed")
    text = stream.getvalue()
    for secret in (TOKEN, DISCORD, WEBHOOK, "other-secret-value"):
        assert secret not in text
    assert text.count(REDACTED) >= 6
    assert "token [REDACTED] and secret [REDACTED]" in text
    assert "RuntimeError: request failed: [REDACTED] [REDACTED]" in text  # the traceback too


def test_a_private_key_is_redacted_whole_or_line_by_line(restore_logging, tmp_path):
    stream = io.StringIO()
    configure_logging(app_settings(tmp_path), stream=stream)
    log = logging.getLogger("bot.github.auth")
    log.error("bad key %s", PEM)
    log.error("offending line: %s", PEM_BODY)
    text = stream.getvalue()
    assert PEM_BODY not in text and "PRIVATE KEY" not in text
    assert "offending line: [REDACTED]" in text


@pytest.mark.parametrize(
    "text",
    [
        "token ghp_0123456789abcdefghijABCDEFGHIJ used",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz here",
        "installation token ghs_16C7e42F292c6912E7710c838347Ae178B4a ok",
        "{'Authorization': 'token whatever-it-is', 'Accept': 'json'}",
        "Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiI0MiJ9.c2lnbmF0dXJlLXBhcnQ",
        f"discord said hello to {DISCORD}",
        "-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----",
    ],
)
def test_token_shaped_text_is_redacted_without_settings(text):
    out = Redactor()(text)
    assert REDACTED in out
    for word in re.findall(r"[A-Za-z0-9_.-]{16,}", text):
        if word.startswith(("gh", "github_pat", "eyJ", "MTE")) or word == "whatever-it-is":
            assert word not in out


def test_ordinary_text_is_left_alone():
    redact = Redactor(["ab", "s"])  # too short to redact by value: would blank out words
    text = "thread 'main' panicked at src/lib.rs:3:5: connected as bot triage-bot-something"
    assert redact(text) == text
    assert Redactor(["abcdefgh"])("xx abcdefgh yy") == f"xx {REDACTED} yy"


def test_log_level_setting_and_one_handler(restore_logging):
    stream = io.StringIO()
    configure_logging(Settings.from_mapping({"LOG_LEVEL": "warning"}), stream=stream)
    configure_logging(Settings.from_mapping({"LOG_LEVEL": "warning"}), stream=stream)
    log = logging.getLogger("bot.x")
    log.info("quiet")
    log.warning("loud")
    assert stream.getvalue().count("loud") == 1  # configured twice, still one handler
    assert "quiet" not in stream.getvalue()
    debug = io.StringIO()
    configure_logging(Settings.from_mapping({"LOG_LEVEL": "DEBUG"}), stream=debug)
    log.debug("details")
    line = debug.getvalue().strip()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z DEBUG bot\.x: details", line)


def test_event_line_is_key_value_in_a_fixed_order(restore_logging):
    stream = io.StringIO()
    configure_logging(level="INFO", stream=stream)
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    keep = Keep()
    logging.getLogger().addHandler(keep)
    try:
        log_event(
            logging.getLogger("bot.github.pipeline"),
            source="github",
            delivery="d-1",
            repo="o/r",
            issue=7,
            verdict="match",
            record_ids=("aa", "bb"),
            duration_ms=12.4,
            note="two words",
            detail="comment=create",
        )
    finally:
        logging.getLogger().removeHandler(keep)
    line = stream.getvalue().strip().split(": ", 1)[1]
    assert line == (
        "event source=github delivery=d-1 repo=o/r issue=7 verdict=match records=aa,bb "
        'duration_ms=12 note="two words" comment=create'
    )
    assert records[0].event["records"] == ["aa", "bb"]  # the fields ride along as data
    empty = event_line({"source": "discord", "delivery": None, "records": []})
    assert empty == "event source=discord delivery=- records=-"


def test_handle_event_logs_one_event_line_without_the_token(
    tmp_path, monkeypatch, capsys, restore_logging
):
    """The pipeline's line, end to end: delivery, repo, issue, verdict, records, duration."""
    from bot.cli import service as commands

    token = "ghp_" + "z9" * 18
    with fake_github(token, "maintainer", REPO) as fake:
        issue = fake.add_issue(REPO, "crash", PANIC)
        event = tmp_path / "event.json"
        event.write_text(json.dumps(issue_payload("opened", issue.number, issue.title, PANIC)))
        monkeypatch.chdir(tmp_path)
        monkeypatch.setattr(auth, "DEFAULT_OPTIONS", ClientOptions(seconds_between_writes=0))
        for name, value in {
            "GITHUB_TOKEN": token,
            "GITHUB_API_URL": fake.base_url,
            "TRIAGE_DB": str(tmp_path / "db.sqlite3"),
            "LOG_LEVEL": "DEBUG",  # urllib3 and PyGithub say the most at DEBUG
        }.items():
            monkeypatch.setenv(name, value)
        parser = argparse.ArgumentParser()
        commands.register(parser.add_subparsers())
        args = parser.parse_args(
            ["handle-event", "--event-path", str(event), "--event-name", "issues"]
        )
        assert args.handler(args) == 0
        assert len(bot_comments(fake, issue.number)) == 1
    err = capsys.readouterr().err
    events = [line for line in err.splitlines() if " event source=github " in line]
    assert len(events) == 1, err
    fields = dict(re.findall(r"(\w+)=(\S+)", events[0].split(" event ", 1)[1]))
    assert fields["repo"] == REPO and fields["issue"] == str(issue.number)
    assert fields["verdict"] == "match" and fields["delivery"] == "-"
    assert fields["records"] == "cf30438606d06d30"
    assert int(fields["duration_ms"]) >= 0
    assert token not in err


def test_a_flood_of_one_warning_is_held_back_and_counted(restore_logging):
    """Ten warnings of one kind a minute pass; the rest are counted and the next one after the
    window says how many were left out. Other kinds, info records and events pass untouched."""
    from bot.config.logs import RepeatFilter

    now = [0.0]
    stream = io.StringIO()
    handler = configure_logging(level="INFO", stream=stream)
    handler.filters = [RepeatFilter(burst=10, window=60.0, clock=lambda: now[0])] + [
        f for f in handler.filters if not isinstance(f, RepeatFilter)
    ]
    log = logging.getLogger("bot.server.flood")
    for n in range(500):
        log.warning("slow client %s dropped", f"10.0.0.{n % 250}")
    log.warning("another kind of warning")
    for _ in range(20):
        log.info("progress")
    lines = stream.getvalue().splitlines()
    assert sum("slow client" in line for line in lines) == 10
    assert sum("progress" in line for line in lines) == 20
    assert any("another kind of warning" in line for line in lines)
    now[0] = 61.0
    log.warning("slow client %s dropped", "10.0.0.9")
    last = stream.getvalue().splitlines()[-1]
    assert "slow client 10.0.0.9 dropped (490 more like this left out)" in last
