"""`triage-bot backfill`: past issues read through the fake GitHub with the real PyGithub, paged,
within rate limits, and resumed after an interruption; the first answer then knows the history."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from fakes.github_api import FakeGitHub
from github import GithubException
from harness import fake_github
from json_schemas import one_object

from bot.config.settings import Settings
from bot.github import auth
from bot.github.adapter import Close, MergedReference
from bot.github.auth import ClientOptions, GitHubClients
from bot.github.backfill import FIX_WINDOW, MAX_ATTEMPTS, backfill, cursor_name, fixing_pull
from bot.github.duplicates import add_line, also_reported_line, related_issues
from bot.store.sqlite import Store

REPO = "tracel-ai/burn"
AVG_POOL = "8d1d2fa6df3880bd"
NEVER_CHECKPOINTED = "ed7f5a76c768b93e"
AVG = (
    "thread 'main' panicked at /home/u/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/"
    "burn-autodiff-0.18.0/src/ops/module.rs:1498:9:\nCan't differentiate avg pool 2d backward.\n"
)
NODE = (
    "thread 'main' panicked at crates/burn-autodiff/src/checkpoint/builder.rs:230:17:\n"
    "Node NodeId { value: 7 } is needed but never checkpointed\n"
)


@pytest.fixture
def fake():
    with fake_github("ghp_backfill", "maintainer", REPO) as gh:
        yield gh


def setup(fake: FakeGitHub, tmp_path, per_page: int = 2):
    settings = Settings.from_mapping(
        {
            "GITHUB_TOKEN": "ghp_backfill",
            "GITHUB_API_URL": fake.base_url,
            "TRIAGE_DB": str(tmp_path / "db.sqlite3"),
        }
    )
    store = Store(settings.triage_db)
    clients = GitHubClients(settings, ClientOptions(seconds_between_writes=0, per_page=per_page))
    return store, clients


def seven_issues(fake: FakeGitHub) -> None:
    fake.add_issue(REPO, "avg pool crash", AVG)  # 1
    fake.add_issue(REPO, "question", "How do I save a model?")  # 2
    fake.add_issue(REPO, "checkpoint panic", NODE)  # 3
    fake.add_issue(REPO, "a fix", AVG, pull_request=True)  # 4: a pull request, skipped
    fake.add_issue(REPO, "same again", "Got this:\n" + AVG)  # 5
    fake.add_issue(REPO, "docs", "typo")  # 6
    fake.add_issue(REPO, "node again", NODE)  # 7
    closed = datetime(2026, 3, 14, tzinfo=UTC)
    fake.edit_issue(REPO, 1, state="closed", state_reason="completed", closed_at=closed)


def pages_requested(fake: FakeGitHub) -> list[str]:
    return [c.query.get("page", "1") for c in fake.calls("GET", r"/issues$")]


def test_backfill_reads_every_page_and_records_the_history(fake, tmp_path, triage):
    seven_issues(fake)
    store, clients = setup(fake, tmp_path)
    said: list[str] = []
    try:
        result = backfill(clients, store, triage, REPO, progress=said.append, sleep=_no_sleep)
        rows = store.issues_for_records(REPO, [AVG_POOL, NEVER_CHECKPOINTED])
    finally:
        clients.close()
        store.close()
    assert result.done and result.pages == 4 and result.issues == 6 and result.matched == 4
    assert pages_requested(fake) == ["1", "2", "3", "4", "5"]  # 5 is the empty end
    assert {(r["number"], r["record_id"], r["state"]) for r in rows} == {
        (1, AVG_POOL, "closed"),
        (3, NEVER_CHECKPOINTED, "open"),
        (5, AVG_POOL, "open"),
        (7, NEVER_CHECKPOINTED, "open"),
    }
    assert said[0] == "page 1: 2 issue(s) read, 1 hit catalogued records"  # progress shown
    assert all("state=all" not in s for s in said)


def test_backfill_records_how_closed_issues_were_closed(fake, tmp_path, triage):
    seven_issues(fake)  # #1 closed as completed on 14 March, by hand (no commit)
    fixed = datetime(2026, 3, 20, 9, 30, tzinfo=UTC)
    fake.close_by_pull(REPO, 3, 4, fixed, "ab" * 20)  # #3 closed by merging #4
    early = fake.add_issue(REPO, "an older fix", "refactor", pull_request=True)  # 8
    fake.close_by_pull(REPO, 5, early.number, datetime(2026, 1, 2, tzinfo=UTC), "cd" * 20)
    # #5 was reopened after #8 and closed by hand months later: #8 did not fix it
    fake.repo(REPO).issues[5].timeline.append(("closed", None, datetime(2026, 5, 1, tzinfo=UTC)))
    fake.edit_issue(REPO, 5, closed_at=datetime(2026, 5, 1, tzinfo=UTC), state_reason="not_planned")
    store, clients = setup(fake, tmp_path)
    try:
        backfill(clients, store, triage, REPO, sleep=_no_sleep)
        rows = store.issues_for_records(REPO, [AVG_POOL, NEVER_CHECKPOINTED])
    finally:
        clients.close()
        store.close()
    closing = {r["number"]: (r["state"], r["state_reason"], r["closed_at"], r["fixed_by"])
               for r in rows}  # fmt: skip
    assert closing == {
        1: ("closed", "completed", datetime(2026, 3, 14, tzinfo=UTC).timestamp(), None),
        3: ("closed", "completed", fixed.timestamp(), 4),
        5: ("closed", "not_planned", datetime(2026, 5, 1, tzinfo=UTC).timestamp(), None),
        7: ("open", None, None, None),
    }
    # only closed issues that hit a record cost timeline requests (#5's has two pages)
    timelines = sorted(c.path for c in fake.calls("GET", r"/timeline$"))
    assert timelines == [f"/repos/{REPO}/issues/{n}/timeline" for n in (1, 3, 5, 5)]


def test_backfill_waits_out_rate_limits(fake, tmp_path, triage):
    seven_issues(fake)
    fake.too_many_requests("GET", r"/issues$", retry_after=2)
    fake.secondary_rate_limit("GET", r"/issues$", retry_after=3)
    fake.primary_rate_limit("GET", r"/issues$", reset_in=30)
    store, clients = setup(fake, tmp_path)
    waits: list[float] = []
    try:
        result = backfill(clients, store, triage, REPO, sleep=waits.append)
    finally:
        clients.close()
        store.close()
    assert result.done and result.matched == 4
    assert waits[:2] == [2.0, 3.0]  # Retry-After, as GitHub said
    assert 25 <= waits[2] <= 32  # until X-RateLimit-Reset
    assert result.waited == pytest.approx(sum(waits))


def test_an_interrupted_backfill_goes_on_where_it_stopped(fake, tmp_path, triage):
    seven_issues(fake)
    store, clients = setup(fake, tmp_path)

    def break_after_page_two(text: str) -> None:
        if text.startswith("page 2:"):  # GitHub goes down for good after the second page
            fake.fail("GET", r"/issues$", 502, times=MAX_ATTEMPTS)

    try:
        with pytest.raises(GithubException):
            backfill(clients, store, triage, REPO, progress=break_after_page_two, sleep=_no_sleep)
        assert '"page": 2' in store.get_cursor(cursor_name(REPO))
        assert [r["number"] for r in store.issues_for_records(REPO, [AVG_POOL])] == [1]
        fake.requests.clear()
        said: list[str] = []
        again = backfill(clients, store, triage, REPO, progress=said.append, sleep=_no_sleep)
        rows = store.issues_for_records(REPO, [AVG_POOL, NEVER_CHECKPOINTED])
    finally:
        clients.close()
        store.close()
    assert said[0] == "resuming tracel-ai/burn at page 3"
    assert pages_requested(fake) == ["3", "4", "5"]  # pages 1 and 2 are not read again
    assert again.done and again.pages == 2
    assert sorted(r["number"] for r in rows) == [1, 3, 5, 7]


def test_the_first_answer_after_a_backfill_names_the_earlier_issues(fake, tmp_path, triage):
    """The bare-site answer with its history, as the pipeline composes it."""
    from test_render_golden import check_golden

    from bot.render.answer.build import build_answer
    from bot.render.github import render_comment

    seven_issues(fake)
    store, clients = setup(fake, tmp_path)
    try:
        # #3 was fixed by the pull request #4 before the bot came: backfill reads how
        fake.close_by_pull(REPO, 3, 4, datetime(2026, 3, 20, tzinfo=UTC), "ab" * 20)
        backfill(clients, store, triage, REPO, sleep=_no_sleep)
        analysis = triage.analyse(NODE)
        answer = build_answer(analysis, triage.catalog)
        related = related_issues(
            store.issues_for_records(REPO, answer.record_ids),
            8,
            answer.record_ids,
            analysis.fingerprint,
        )
    finally:
        clients.close()
        store.close()
    body = add_line(render_comment(answer), also_reported_line(related))
    assert (
        "\n\nAlso reported in #7 (open), #3 (closed as completed in March 2026, fixed by #4).\n\n"
    ) in body
    check_golden("bare_site_history.github.md", body)


def test_backfill_command_is_registered_and_checks_its_arguments(capsys, monkeypatch):
    from bot.cli import main

    assert main(["backfill", "--repo", "not-a-repo"]) == 2
    assert "--repo must be OWNER/NAME" in capsys.readouterr().err
    monkeypatch.setattr(auth, "DEFAULT_OPTIONS", ClientOptions(seconds_between_writes=0))
    assert main(["backfill", "--repo", REPO, "--since", "March"]) == 2
    assert "not a date" in capsys.readouterr().err


def test_backfill_command_runs_against_the_fake(fake, tmp_path, monkeypatch, capsys):
    from bot.cli import main

    seven_issues(fake)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(auth, "DEFAULT_OPTIONS", ClientOptions(seconds_between_writes=0))
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_backfill")
    monkeypatch.setenv("GITHUB_API_URL", fake.base_url)
    monkeypatch.setenv("TRIAGE_DB", str(tmp_path / "db.sqlite3"))
    assert main(["backfill", "--repo", REPO, "--since", "2000-01-01"]) == 0
    captured = capsys.readouterr()
    assert "backfilled tracel-ai/burn: 6 issue(s) read, 4 hit catalogued records" in captured.out
    assert "page 1:" in captured.err
    since = [c.query.get("since") for c in fake.calls("GET", r"/issues$")]
    assert since and all(s and s.startswith("2000-01-01") for s in since)
    assert main(["backfill", "--repo", REPO, "--json"]) == 0
    summary = one_object(capsys.readouterr().out, "backfill")
    assert summary == {"repo": REPO, "issues": summary["issues"], "matched": summary["matched"]}
    assert summary["matched"] <= summary["issues"]


def _no_sleep(_seconds: float) -> None:
    pass


def test_the_fixing_pull_request_is_the_latest_merged_just_before_a_close_by_commit():
    closed = 1_000_000.0
    refs = [
        MergedReference(10, REPO, closed - FIX_WINDOW - 1),  # merged too long before
        MergedReference(11, REPO, closed - 60),
        MergedReference(12, REPO.upper(), closed - 30),  # the same repository, other case
        MergedReference(13, "someone/else", closed - 10),  # another repository's
        MergedReference(14, REPO, closed + 5),  # merged after the close
    ]
    by_commit = [Close(None, closed - 500), Close("ab" * 20, closed)]
    assert fixing_pull(by_commit, refs, REPO) == 12
    # the last close was by hand: no pull request fixed it, and the references are not read
    by_hand = [Close("ab" * 20, closed - 500), Close(None, closed)]
    assert fixing_pull(by_hand, iter(()), REPO) is None
    assert fixing_pull([], refs, REPO) is None
    assert fixing_pull(by_commit, refs[:1], REPO) is None
