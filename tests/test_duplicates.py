"""Duplicates: the issue -> record history, "Also reported in ...", the optional label."""

from __future__ import annotations

import pytest
from fakes.github_api import FakeGitHub
from harness import (
    INTERPOLATE,
    PANIC,
    PANIC_AVG_POOL,
    REPO,
    Harness,
    issue_payload,
)

from bot.config.settings import SettingsError
from bot.github.duplicates import (
    DuplicateConfig,
    add_line,
    also_reported_line,
    duplicate_config_from_dict,
    duplicate_label,
    load_duplicate_config,
    related_issues,
)
from bot.render.github import parse_marker
from bot.store.sqlite import Store


def row(number, record, state="open", fingerprint="fp-x", last_at=0.0):
    return {
        "number": number,
        "record_id": record,
        "state": state,
        "fingerprint": fingerprint,
        "last_at": last_at,
    }


# --- pure ---------------------------------------------------------------------------------------


def test_most_relevant_first_and_at_most_three():
    rows = [
        row(3, "r1", last_at=3),
        row(4, "r2", last_at=9),  # only a secondary record
        row(5, "r1", state="closed", last_at=5),
        row(6, "r1", fingerprint="same", last_at=1),  # the very same panic
        row(7, "r1", last_at=7),
        row(8, "r1", last_at=8),
        row(10, "r1", last_at=10),  # this issue itself
        row(11, "other", last_at=11),  # another record altogether
    ]
    related = related_issues(rows, 10, ["r1", "r2"], "same")
    assert [r.number for r in related] == [6, 8, 7, 3, 5, 4]
    assert also_reported_line(related) == "Also reported in #6 (open), #8 (open), #7 (open)."
    closed_first = related_issues([row(5, "r1", state="closed"), row(2, "r2")], 9, ["r1"], None)
    assert also_reported_line(closed_first) == "Also reported in #5 (closed)."
    assert also_reported_line([]) is None
    assert also_reported_line(related, limit=0) is None


def test_a_closed_issue_says_how_and_when_it_was_closed_and_what_fixed_it():
    march = 1_772_712_000.0  # 2026-03-05 12:00 UTC
    rows = [
        {**row(7, "r1", state="closed"), "state_reason": "completed", "closed_at": march,
         "fixed_by": 2760},
        {**row(8, "r1", state="closed"), "state_reason": "not_planned", "closed_at": march},
        {**row(9, "r1", state="closed"), "state_reason": "duplicate"},  # a reason not known
        row(3, "r1"),
    ]  # fmt: skip
    related = related_issues(rows, 1, ["r1"], None)
    assert also_reported_line(related, limit=4) == (
        "Also reported in #3 (open), #9 (closed), #8 (closed as not planned in March 2026),"
        " #7 (closed as completed in March 2026, fixed by #2760)."
    )
    # an open issue says nothing about an earlier close, even if a row carried one
    open_row = {**row(7, "r1"), "fixed_by": 5, "closed_at": march}
    reopened = related_issues([open_row], 1, ["r1"], None)
    assert also_reported_line(reopened) == "Also reported in #7 (open)."


def test_an_issue_hitting_several_records_counts_once_and_closed_sorts_last():
    rows = [row(2, "r1"), row(2, "r2"), row(3, "r1", state="closed", last_at=99)]
    related = related_issues(rows, 1, ["r1", "r2"], None)
    assert [(r.number, r.shared, r.closed) for r in related] == [(2, 2, False), (3, 1, True)]
    assert also_reported_line(related) == "Also reported in #2 (open), #3 (closed)."


def test_the_label_is_off_by_default_and_needs_an_open_issue_on_the_root_record():
    open_root = related_issues([row(2, "r1")], 1, ["r1"], None)
    closed_root = related_issues([row(2, "r1", state="closed")], 1, ["r1"], None)
    secondary = related_issues([row(2, "r2")], 1, ["r1", "r2"], None)
    assert duplicate_label(DuplicateConfig(), open_root) is None
    on = DuplicateConfig(label="duplicate-candidate")
    assert duplicate_label(on, open_root) == "duplicate-candidate"
    assert duplicate_label(on, closed_root) is None
    assert duplicate_label(on, secondary) is None


def test_the_line_goes_before_the_footer():
    body = "<!-- m -->\nanswer\n\n---\n<sub>footer</sub>"
    assert add_line(body, "Also reported in #2.") == (
        "<!-- m -->\nanswer\n\nAlso reported in #2.\n\n---\n<sub>footer</sub>"
    )
    assert add_line("plain", "x") == "plain\n\nx"
    assert add_line("plain", None) == "plain"
    assert add_line("a" * 20, "b" * 10, limit=25) == "a" * 20  # never over the size limit


def test_config(tmp_path):
    assert duplicate_config_from_dict({}) == DuplicateConfig()
    config = duplicate_config_from_dict(
        {"labels": {"duplicate_candidate": "dup?"}, "duplicates": {"max_listed": 5}}
    )
    assert config == DuplicateConfig(label="dup?", max_listed=5)
    assert duplicate_config_from_dict({"labels": {"duplicate_candidate": ""}}).label is None
    for bad in (
        {"labels": {"duplicate_candidate": 3}},
        {"duplicates": {"max_listed": 99}},
        {"duplicates": "x"},
    ):
        with pytest.raises(SettingsError):
            duplicate_config_from_dict(bad)
    path = tmp_path / "triage-bot.toml"
    path.write_text('[labels]\nmatched = "panic: known"\nduplicate_candidate = "possible-dup"\n')
    assert load_duplicate_config(path).label == "possible-dup"
    assert load_duplicate_config(None) == DuplicateConfig()


def test_store_history_replaces_an_issues_records_and_knows_closed_issues(tmp_path):
    with Store(tmp_path / "s.db") as store:
        store.put_issue_records(REPO, 1, ["a", "b"], "fp1")
        store.put_issue_records(REPO, 2, ["a"], "fp2")
        store.put_issue_records("other/repo", 3, ["a"], "fp3")
        store.set_issue_open_state(REPO, 2, "closed")
        rows = store.issues_for_records(REPO, ["a"])
        assert [(r["number"], r["state"]) for r in rows] == [(1, "open"), (2, "closed")]
        store.put_issue_records(REPO, 1, ["b"], "fp1")  # the panic changed
        assert [r["number"] for r in store.issues_for_records(REPO, ["a"])] == [2]
        store.put_issue_records(REPO, 2, [], None)
        assert store.issues_for_records(REPO, ["a"]) == []


# --- end to end ---------------------------------------------------------------------------------


def answer_of(fake: FakeGitHub, number: int) -> str:
    found = [c.body for c in fake.comments_on(REPO, number) if parse_marker(c.body)]
    assert len(found) == 1
    return found[0]


async def report(h: Harness, fake: FakeGitHub, body: str):
    issue = fake.add_issue(REPO, "crash", body)
    await h.post("issues", issue_payload("opened", issue.number, issue.title, body))
    await h.settle()
    return issue


async def close(h: Harness, fake: FakeGitHub, number: int):
    fake.edit_issue(REPO, number, state="closed")
    payload = issue_payload("opened", number, "crash", fake.repo(REPO).issues[number].body)
    payload["action"] = "closed"
    payload["issue"]["state"] = "closed"
    payload["issue"]["state_reason"] = "completed"
    payload["issue"]["closed_at"] = "2026-03-05T12:00:00Z"
    response = await h.post("issues", payload)
    assert response.status == 200  # closing queues no job, it only updates the history
    await h.settle()


async def test_duplicates_across_issues(fake, tmp_path, triage):
    h = await Harness(fake, tmp_path / "d.sqlite3", triage).start()
    try:
        first = await report(h, fake, PANIC)
        assert "Also reported in" not in answer_of(fake, first.number)
        second = await report(h, fake, "Same here:\n" + PANIC)
        assert f"Also reported in #{first.number} (open)." in answer_of(fake, second.number)
        await close(h, fake, first.number)
        other = await report(h, fake, PANIC_AVG_POOL)  # another record: no line
        assert "Also reported in" not in answer_of(fake, other.number)
        third = await report(h, fake, PANIC)
        # the closed delivery's state_reason and closed_at (a webhook names no fixing PR)
        line = (
            f"Also reported in #{second.number} (open),"
            f" #{first.number} (closed as completed in March 2026)."
        )
        assert line in answer_of(fake, third.number)
        # the line sits above the footer
        body = answer_of(fake, third.number)
        assert body.index(line) < body.index("\n---\n<sub>")
        for _ in range(3):
            await report(h, fake, PANIC)
        fourth = await report(h, fake, PANIC)
        listed = answer_of(fake, fourth.number).split("Also reported in ", 1)[1].split(".")[0]
        assert len(listed.split(", ")) == 3
        assert f"#{first.number} (closed)" not in listed  # open ones are more relevant
        # nothing was closed, and without configuration there is no duplicate label
        assert fake.calls("PATCH", r"/issues/\d+$") == []
        assert all("duplicate-candidate" not in i.labels for i in fake.repo(REPO).issues.values())
        hit = {r["number"] for r in h.state.store.issues_for_records(REPO, [INTERPOLATE])}
        assert {first.number, second.number, third.number, fourth.number} <= hit
        assert other.number not in hit
    finally:
        await h.stop()


async def test_duplicate_candidate_label_when_configured(fake, tmp_path, triage):
    config = tmp_path / "triage-bot.toml"
    config.write_text('[labels]\nduplicate_candidate = "duplicate-candidate"\n')
    h = await Harness(fake, tmp_path / "d.sqlite3", triage, TRIAGE_CONFIG=str(config)).start()
    try:
        first = await report(h, fake, PANIC)
        assert "duplicate-candidate" not in fake.repo(REPO).issues[first.number].labels
        second = await report(h, fake, PANIC)
        assert "duplicate-candidate" in fake.repo(REPO).issues[second.number].labels
        await close(h, fake, first.number)
        await close(h, fake, second.number)
        third = await report(h, fake, PANIC)  # only closed issues hit it: no label
        assert "duplicate-candidate" not in fake.repo(REPO).issues[third.number].labels
        assert fake.repo(REPO).issues[second.number].state == "closed"  # closed by the test
        assert fake.calls("PATCH", r"/issues/\d+$") == []  # never by the bot
    finally:
        await h.stop()
