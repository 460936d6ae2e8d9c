"""`/triage` commands: the pure parse step, and each command end to end through the real server,
worker and PyGithub against the fake GitHub (which serves permissions and reactions)."""

from __future__ import annotations

import copy

import pytest
from fakes.github_api import FakeGitHub
from harness import (
    AVG_POOL,
    INTERPOLATE,
    PANIC,
    PANIC_AVG_POOL,
    REPO,
    Harness,
    comment_payload,
    issue_payload,
)

from bot.github.triage_command.handle import Controls, Effect, command_effect, reaction_votes
from bot.github.triage_command.parse import Command, command_entries, new_commands, parse
from bot.github.webhook import decide
from bot.render import texts
from bot.render.github import parse_marker
from bot.store.interface import IssueState

# --- parsing ------------------------------------------------------------------------------------


def names(body: str, previous: str | None = None) -> list[tuple[str, str | None]]:
    return [(c.name, c.arg) for c in new_commands(body, previous)]


def test_each_command_on_a_line_of_its_own():
    body = (
        "Thanks for the report.\n"
        "/triage wrong\n"
        "/triage match cf30438606d06d30\n"
        "  /triage why  \n"
        "/TRIAGE Ignore\n"
        "/triage refresh\r\n"
    )
    assert parse(body) == [
        Command("wrong", None, 2),
        Command("match", "cf30438606d06d30", 3),
        Command("why", None, 4),
        Command("ignore", None, 5),
        Command("refresh", None, 6),
    ]


def test_words_that_are_not_commands():
    body = (
        "Please run /triage wrong if needed\n"  # not at the start of the line
        "/triage\n"  # no command
        "/triage match\n"  # match without an id
        "/triage why not?\n"  # a sentence
        "/triage close\n"  # not a command the bot knows
        "/triagewrong\n"
        "/triage match a b\n"
    )
    assert parse(body) == []


def test_commands_in_code_blocks_quotes_and_comments_are_not_commands():
    body = "\n".join(
        [
            "```",
            "/triage wrong",
            "```",
            "~~~~text",
            "/triage refresh",
            "```",  # a shorter or other fence does not close a ~~~~ fence
            "/triage ignore",
            "~~~~",
            "> /triage why",
            ">/triage ignore",
            "",
            "    /triage wrong",
            "\t/triage wrong",
            "<!-- /triage ignore -->",
            "<!--",
            "/triage refresh",
            "-->",
            "/triage why",
        ]
    )
    assert names(body) == [("why", None)]


def test_an_unclosed_fence_hides_the_rest():
    assert parse("```rust\n/triage wrong\n") == []


def test_an_edit_runs_only_the_new_commands():
    before = "/triage why\nsee above"
    after = "/triage why\nsee above\n/triage wrong"
    assert names(after, before) == [("wrong", None)]
    assert names(before, before) == []
    # a command moved out of a code block is new; one moved into a quote is gone
    assert names("/triage refresh", "```\n/triage refresh\n```") == [("refresh", None)]
    assert names("> /triage refresh", "/triage refresh") == []
    # counted as a multiset: a second refresh is new
    assert names("/triage refresh\n/triage refresh", "/triage refresh") == [("refresh", None)]


def test_command_entries_are_keyed_by_comment_version():
    one = command_entries("/triage why", None, 7, "maint")
    two = command_entries("/triage why\n/triage why", "/triage why", 7, "maint")
    assert [e["name"] for e in one] == ["why"] and one[0]["author"] == "maint"
    assert one[0]["comment_id"] == 7
    assert one[0]["key"] != two[0]["key"]
    # polling sees no previous body: unversioned keys make an edited comment's old commands
    # the same as before, so they are done already
    polled = command_entries("/triage why", None, 7, "maint", versioned=False)
    edited = command_entries("/triage why\n/triage wrong", None, 7, "maint", versioned=False)
    assert polled[0]["key"] == edited[0]["key"] and edited[1]["name"] == "wrong"


def test_webhook_hint_carries_the_new_commands_and_the_asker():
    payload = comment_payload("edited", 3, 55, "/triage why\n/triage wrong")
    payload["changes"] = {"body": {"from": "/triage why"}}
    payload["sender"]["login"] = "maint"
    job = decide("issue_comment", payload).job
    assert job is not None
    assert [(c["name"], c["author"]) for c in job["payload"]["commands"]] == [("wrong", "maint")]
    assert job["payload"]["issue_state"] == "open"


# --- end to end ---------------------------------------------------------------------------------


@pytest.fixture
def fake(fake: FakeGitHub) -> FakeGitHub:
    """conftest's fake GitHub, with collaborators of each permission on the repository."""
    fake.repo(REPO).permissions.update(
        {"maint": "maintain", "tri": "triage", "writer": "write", "boss": "admin"}
    )
    return fake


def bot_answers(fake: FakeGitHub, number: int) -> list:
    """The bot's answer comment(s): marked, and not a refusal notice."""
    out = []
    for c in fake.comments_on(REPO, number):
        marker = parse_marker(c.body)
        if marker and marker["kind"] != "notice":
            out.append(c)
    return out


def notices(fake: FakeGitHub, number: int) -> list:
    out = []
    for c in fake.comments_on(REPO, number):
        marker = parse_marker(c.body)
        if marker and marker["kind"] == "notice":
            out.append(c)
    return out


def labels(fake: FakeGitHub, number: int) -> list[str]:
    return list(fake.repo(REPO).issues[number].labels)


async def open_issue(h: Harness, fake: FakeGitHub, body: str = PANIC, title: str = "crash"):
    issue = fake.add_issue(REPO, title, body)
    await h.post("issues", issue_payload("opened", issue.number, title, body))
    await h.settle()
    return issue


async def say(h: Harness, fake: FakeGitHub, number: int, body: str, login: str):
    comment = fake.add_comment(REPO, number, body, login)
    payload = comment_payload("created", number, comment.id, body, login)
    payload["sender"]["login"] = login
    response = await h.post("issue_comment", payload)
    assert response.status == 202
    await h.settle()
    return comment


async def edit(h: Harness, fake: FakeGitHub, comment, body: str, login: str):
    before = comment.body
    fake.edit_comment(REPO, comment.id, body)
    payload = comment_payload("edited", comment.issue_number, comment.id, body, login)
    payload["changes"] = {"body": {"from": before}}
    payload["sender"]["login"] = login
    await h.post("issue_comment", payload)
    await h.settle()


async def edit_issue(h: Harness, fake: FakeGitHub, number: int, body: str):
    fake.edit_issue(REPO, number, body=body)
    issue = fake.repo(REPO).issues[number]
    await h.post("issues", issue_payload("edited", number, issue.title, body))
    await h.settle()


def permission_calls(fake: FakeGitHub) -> list:
    return fake.calls("GET", r"/collaborators/[^/]+/permission$")


async def test_wrong_from_a_maintainer_replaces_the_answer_removes_labels_and_votes(harness, fake):
    issue = await open_issue(harness, fake)
    [answer] = bot_answers(fake, issue.number)
    assert "panic: known" in labels(fake, issue.number)
    await say(harness, fake, issue.number, "Not this one.\n/triage wrong", "maint")
    [note] = bot_answers(fake, issue.number)
    assert note.id == answer.id  # the same comment, edited
    lines = note.body.strip().splitlines()
    assert len(lines) == 2 and lines[1] == texts.WRONG_NOTE
    marker = parse_marker(note.body)
    assert marker["kind"] == "wrong" and marker["override"] == f"wrong:{INTERPOLATE}"
    assert labels(fake, issue.number) == []
    store = harness.state.store
    assert store.feedback_counts(INTERPOLATE) == (0, 1)
    assert [(c["name"], c["outcome"]) for c in store.list_commands(REPO, issue.number)] == [
        ("wrong", "done")
    ]
    # a later edit with the same panic keeps the note; a different panic is answered
    await edit_issue(harness, fake, issue.number, PANIC + "\nstill happens")
    assert bot_answers(fake, issue.number)[0].body == note.body
    assert labels(fake, issue.number) == []
    await edit_issue(harness, fake, issue.number, PANIC_AVG_POOL)
    [again] = bot_answers(fake, issue.number)
    assert parse_marker(again.body)["ids"] == [AVG_POOL]


async def test_a_stranger_gets_one_polite_refusal_per_issue(harness, fake):
    issue = await open_issue(harness, fake)
    before = bot_answers(fake, issue.number)[0].body
    await say(harness, fake, issue.number, "/triage wrong", "passerby")
    await say(harness, fake, issue.number, "/triage ignore\n/triage refresh", "passerby")
    await say(harness, fake, issue.number, "/triage why", "someone-else")
    [refusal] = notices(fake, issue.number)
    assert refusal.body.splitlines()[1] == texts.COMMAND_REFUSED.format(login="passerby")
    assert bot_answers(fake, issue.number)[0].body == before  # nothing changed
    assert "panic: known" in labels(fake, issue.number)
    assert harness.state.store.feedback_counts(INTERPOLATE) == (0, 0)
    outcomes = [c["outcome"] for c in harness.state.store.list_commands(REPO, issue.number)]
    assert outcomes == ["refused"] * 4
    # a refusal is not the bot's answer: a later edit still edits the answer comment
    await edit_issue(harness, fake, issue.number, PANIC_AVG_POOL)
    assert parse_marker(bot_answers(fake, issue.number)[0].body)["ids"] == [AVG_POOL]
    assert len(notices(fake, issue.number)) == 1
    # another issue gets its own refusal
    other = await open_issue(harness, fake)
    await say(harness, fake, other.number, "/triage wrong", "passerby")
    assert len(notices(fake, other.number)) == 1


@pytest.mark.parametrize("login", ["maint", "tri", "writer", "boss"])
async def test_every_triage_role_may_command(harness, fake, login):
    issue = await open_issue(harness, fake)
    await say(harness, fake, issue.number, "/triage wrong", login)
    assert parse_marker(bot_answers(fake, issue.number)[0].body)["kind"] == "wrong"
    assert notices(fake, issue.number) == []


async def test_match_answers_with_the_chosen_record_and_keeps_it(harness, fake):
    issue = await open_issue(harness, fake)
    await say(harness, fake, issue.number, f"/triage match {AVG_POOL}", "maint")
    [answer] = bot_answers(fake, issue.number)
    marker = parse_marker(answer.body)
    assert marker["ids"] == [AVG_POOL] and marker["override"] == f"match:{AVG_POOL}"
    assert texts.MATCH_CHOSEN in answer.body
    assert "Can't differentiate avg pool 2d backward." in answer.body
    # later edits keep the maintainer's choice
    await edit_issue(harness, fake, issue.number, PANIC + "\nwith more context")
    assert parse_marker(bot_answers(fake, issue.number)[0].body)["ids"] == [AVG_POOL]
    # an unknown record: a "confused" reaction on the command, the answer stays
    command = await say(harness, fake, issue.number, "/triage match 0000000000000000", "maint")
    assert [r[0] for r in fake.repo(REPO).comments[command.id].reactions] == ["confused"]
    assert parse_marker(bot_answers(fake, issue.number)[0].body)["ids"] == [AVG_POOL]


async def test_match_survives_a_lost_database_through_the_marker(fake, tmp_path, triage):
    first = await Harness(fake, tmp_path / "a.sqlite3", triage).start()
    try:
        issue = await open_issue(first, fake)
        await say(first, fake, issue.number, f"/triage match {AVG_POOL}", "maint")
    finally:
        await first.stop()
    second = await Harness(fake, tmp_path / "b.sqlite3", triage).start()  # a fresh store
    try:
        await edit_issue(second, fake, issue.number, PANIC + "\nedited")
    finally:
        await second.stop()
    [answer] = bot_answers(fake, issue.number)
    assert parse_marker(answer.body)["ids"] == [AVG_POOL]


async def test_why_adds_the_evidence_to_the_one_comment(harness, fake):
    issue = await open_issue(harness, fake)
    await say(harness, fake, issue.number, "/triage why", "maint")
    [answer] = bot_answers(fake, issue.number)
    assert len(fake.comments_on(REPO, issue.number)) == 2  # the answer and the command
    body = answer.body
    assert f"<details>\n<summary>{texts.WHY_SUMMARY}</summary>" in body
    why = body.split(texts.WHY_SUMMARY, 1)[1]
    assert texts.WHY_VERDICT.format(verdict="match") in why
    assert "Panic 1: Can't differentiate interpolate backward." in why
    assert f"1. {INTERPOLATE} confidence " in why
    assert texts.WHY_DECIDED_MATCH.strip() in why
    assert parse_marker(body)["ids"] == [INTERPOLATE]  # still the answer


async def test_why_on_an_issue_without_an_answer_creates_the_comment(harness, fake):
    issue = await open_issue(harness, fake, body="Feature request: a tanh kernel.")
    assert bot_answers(fake, issue.number) == []
    await say(harness, fake, issue.number, "/triage why", "maint")
    [answer] = bot_answers(fake, issue.number)
    assert texts.NO_PANIC in answer.body and texts.WHY_NO_PANIC in answer.body


async def test_ignore_stops_the_bot_and_refresh_brings_it_back(harness, fake):
    issue = await open_issue(harness, fake)
    await say(harness, fake, issue.number, "/triage ignore", "maint")
    writes = len(fake.writes())
    await edit_issue(harness, fake, issue.number, PANIC_AVG_POOL)
    await say(harness, fake, issue.number, "another panic:\n" + PANIC_AVG_POOL, "reporter")
    assert len(fake.writes()) == writes  # not a single write
    assert parse_marker(bot_answers(fake, issue.number)[0].body)["ids"] == [INTERPOLATE]
    await say(harness, fake, issue.number, "/triage refresh", "maint")
    ids = parse_marker(bot_answers(fake, issue.number)[0].body)["ids"]
    assert AVG_POOL in ids and INTERPOLATE not in ids


async def test_refresh_after_wrong_answers_again(harness, fake):
    issue = await open_issue(harness, fake)
    await say(harness, fake, issue.number, "/triage wrong", "maint")
    assert parse_marker(bot_answers(fake, issue.number)[0].body)["kind"] == "wrong"
    await say(harness, fake, issue.number, "/triage refresh", "maint")
    [answer] = bot_answers(fake, issue.number)
    assert parse_marker(answer.body)["kind"] == "answer"
    assert "panic: known" in labels(fake, issue.number)


async def test_commands_in_code_blocks_and_quotes_do_nothing(harness, fake):
    issue = await open_issue(harness, fake)
    before = bot_answers(fake, issue.number)[0].body
    quoted = "> /triage wrong\n\n```\n/triage ignore\n```\n\n    /triage wrong\n"
    calls = len(fake.calls())
    await say(harness, fake, issue.number, quoted, "maint")
    assert permission_calls(fake) == []
    assert bot_answers(fake, issue.number)[0].body == before
    assert harness.state.store.list_commands(REPO, issue.number) == []
    assert len(fake.calls()) > calls  # the comment itself was read as usual


async def test_an_edited_comment_runs_only_its_new_commands(harness, fake):
    issue = await open_issue(harness, fake)
    command = await say(harness, fake, issue.number, "/triage wrong", "maint")
    await say(harness, fake, issue.number, "/triage refresh", "maint")
    assert parse_marker(bot_answers(fake, issue.number)[0].body)["kind"] == "answer"
    # fixing a typo in the first comment must not run `wrong` again
    await edit(harness, fake, command, "/triage wrong\n(typo fixed)", "maint")
    assert parse_marker(bot_answers(fake, issue.number)[0].body)["kind"] == "answer"
    # adding a command to it runs that command only
    await edit(harness, fake, command, "/triage wrong\n(typo fixed)\n/triage why", "maint")
    body = bot_answers(fake, issue.number)[0].body
    assert parse_marker(body)["kind"] == "answer" and texts.WHY_SUMMARY in body
    names_run = [c["name"] for c in harness.state.store.list_commands(REPO, issue.number)]
    assert names_run == ["wrong", "refresh", "why"]


async def test_a_redelivered_command_runs_once(harness, fake):
    issue = await open_issue(harness, fake)
    comment = fake.add_comment(REPO, issue.number, "/triage wrong", "maint")
    payload = comment_payload("created", issue.number, comment.id, comment.body, "maint")
    payload["sender"]["login"] = "maint"
    await harness.post("issue_comment", payload, delivery="same")
    await harness.post("issue_comment", copy.deepcopy(payload), delivery="same")
    await harness.post("issue_comment", copy.deepcopy(payload), delivery="other-id")
    await harness.settle()
    assert len(harness.state.store.list_commands(REPO, issue.number)) == 1
    assert harness.state.store.feedback_counts(INTERPOLATE) == (0, 1)


async def test_commands_queued_together_are_not_lost_when_jobs_coalesce(fake, tmp_path, triage):
    h = await Harness(fake, tmp_path / "c.sqlite3", triage).start(start_worker=False)
    try:
        issue = fake.add_issue(REPO, "crash", PANIC)
        await h.post("issues", issue_payload("opened", issue.number, issue.title, PANIC))
        for body in ("/triage why", f"/triage match {AVG_POOL}"):
            comment = fake.add_comment(REPO, issue.number, body, "maint")
            payload = comment_payload("created", issue.number, comment.id, body, "maint")
            payload["sender"]["login"] = "maint"
            await h.post("issue_comment", payload)
        await h.settle()
        [answer] = bot_answers(fake, issue.number)
        assert parse_marker(answer.body)["ids"] == [AVG_POOL]
        assert texts.WHY_SUMMARY in answer.body
        assert len(fake.calls("GET", rf"/issues/{issue.number}$")) == 1  # still one read
    finally:
        await h.stop()


async def test_reactions_on_the_bots_comment_become_votes(harness, fake):
    issue = await open_issue(harness, fake)
    [answer] = bot_answers(fake, issue.number)
    fake.add_reaction(REPO, answer.id, "+1", "alice")
    fake.add_reaction(REPO, answer.id, "+1", "bob")
    fake.add_reaction(REPO, answer.id, "-1", "carol")
    fake.add_reaction(REPO, answer.id, "heart", "dave")
    store = harness.state.store
    assert store.feedback_counts(INTERPOLATE) == (0, 0)  # read when next processed
    await say(harness, fake, issue.number, "more details: it happens on wgpu too", "reporter")
    assert store.feedback_counts(INTERPOLATE) == (2, 1)
    # a reaction taken back is a vote taken back; a /triage wrong is a separate vote
    fake.repo(REPO).comments[answer.id].reactions.pop(0)
    await say(harness, fake, issue.number, "/triage wrong", "maint")
    assert store.feedback_counts(INTERPOLATE) == (1, 2)


async def test_a_refusal_that_cannot_be_posted_is_not_retried_but_a_rate_limit_is(harness, fake):
    issue = await open_issue(harness, fake)
    fake.fail("POST", rf"/issues/{issue.number}/comments$", 403, body={"message": "locked"})
    await say(harness, fake, issue.number, "/triage wrong", "passerby")
    assert notices(fake, issue.number) == []
    assert [j.state for j in harness.state.store.list_jobs()] == ["done"] * 2
    other = await open_issue(harness, fake)
    fake.secondary_rate_limit("POST", rf"/issues/{other.number}/comments$", retry_after=1)
    await say(harness, fake, other.number, "/triage wrong", "passerby")
    assert len(notices(fake, other.number)) == 1
    statuses = [r.status for r in fake.calls("POST", rf"/issues/{other.number}/comments$")]
    assert statuses[-2:] == [403, 201]


# --- each command's effect (pure) ---------------------------------------------------------------


def answered(*record_ids: str, verdict: str = "match") -> IssueState:
    return IssueState("o/r", 1, 5, (), verdict, record_ids, "fp")


def test_wrong_rejects_what_was_answered_and_keeps_earlier_rejections():
    effect = command_effect("wrong", None, answered("a", "b"), Controls(wrong=("z",)), False)
    assert effect == Effect("done", {"override": "wrong:z,a,b"}, rejected=("a", "b"))
    # a chosen record is what is rejected, whatever the bot had answered
    chosen = command_effect("wrong", None, answered("a"), Controls(match="m"), False)
    assert chosen.rejected == ("m",) and chosen.changes == {"override": "wrong:m"}
    # nothing answered (no match, or no state at all): nothing to reject, nothing stored
    for state in (answered("a", verdict="uncatalogued-panic"), None):
        assert command_effect("wrong", None, state, Controls(), False) == Effect(
            "nothing-to-reject"
        )


def test_match_needs_a_record_the_catalog_has():
    assert command_effect("match", "r1", None, Controls(), True) == Effect(
        "done", {"override": "match:r1"}
    )
    unknown = command_effect("match", "nope", None, Controls(), False)
    assert unknown == Effect("unknown-record", reaction="confused")


def test_why_ignore_refresh_and_unknown_commands():
    assert command_effect("why", None, None, Controls(), False).changes == {"show_why": True}
    assert command_effect("ignore", None, None, Controls(), False).changes == {"ignored": True}
    refresh = command_effect("refresh", None, answered("a"), Controls(match="m"), False)
    assert refresh.changes == {"ignored": False, "override": None}
    assert command_effect("close", None, None, Controls(), False) == Effect("unknown-command")


def test_reaction_votes_sum_per_person_and_leave_bots_out():
    votes = reaction_votes(
        [
            ("alice", "User", "+1"),
            ("bob", "User", "-1"),
            ("carol", "User", "+1"),
            ("carol", "User", "-1"),  # both: no vote
            ("dependabot[bot]", "Bot", "+1"),
            ("helper[bot]", "User", "-1"),
            ("dave", "Bot", "+1"),
            (None, None, "+1"),
            ("erin", "User", "heart"),
        ]
    )
    assert votes == {"alice": 1, "bob": -1, "carol": 0}
