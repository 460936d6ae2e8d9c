"""The pure part of the Discord adapter: which messages, which text, cooldowns, lookups."""

from __future__ import annotations

import pytest

from bot.app import Triage
from bot.discord import listener as L
from bot.discord.listener import AttachmentInfo, CooldownPolicy, Cooldowns, IncomingMessage
from bot.render.answer.build import build_answer
from bot.render.discord import render_message

AVG_POOL = "8d1d2fa6df3880bd"
AVG_PANIC = (
    "thread 'main' panicked at crates/burn-autodiff/src/ops/module.rs:1498:9:\n"
    "Can't differentiate avg pool 2d backward.\n"
)
WATCHED, THREAD, OTHER, ME = 10, 11, 20, 99


def message(**changes: object) -> IncomingMessage:
    fields: dict[str, object] = dict(
        message_id=1,
        channel_id=WATCHED,
        parent_id=None,
        author_id=5,
        author_is_bot=False,
        content=AVG_PANIC,
    )
    fields.update(changes)
    return IncomingMessage(**fields)  # type: ignore[arg-type]


WATCH = L.Watch(frozenset({WATCHED}), ME)


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({}, None),
        ({"channel_id": THREAD, "parent_id": WATCHED}, None),  # a thread or forum post
        ({"author_id": ME}, "self"),
        ({"author_is_bot": True}, "bot"),
        ({"webhook": True}, "webhook"),
        ({"channel_id": OTHER}, "unwatched"),
        ({"channel_id": THREAD, "parent_id": OTHER}, "unwatched"),
        ({"content": "  "}, "empty"),
        ({"content": "", "attachments": (AttachmentInfo("a.png", 9, "u", "image/png"),)}, "empty"),
        ({"content": "", "attachments": (AttachmentInfo("message.txt", 9, "u", None),)}, None),
    ],
)
def test_ignore_reason(changes: dict[str, object], reason: str | None) -> None:
    assert L.ignore_reason(message(**changes), WATCH) == reason


def test_readable_attachments_by_name_or_type_and_limited() -> None:
    items = [
        AttachmentInfo("message.txt", 1, "u1", "text/plain; charset=utf-8"),
        AttachmentInfo("screenshot.png", 1, "u2", "image/png"),
        AttachmentInfo("build.LOG", 1, "u3", None),
        AttachmentInfo("main.rs", 1, "u4", None),
        AttachmentInfo("output", 1, "u5", "text/x-rust"),
        AttachmentInfo("more.txt", 1, "u6", None),
    ]
    assert [a.url for a in L.readable_attachments(items)] == ["u1", "u3", "u4"]
    assert [a.url for a in L.readable_attachments(items, limit=10)] == [
        "u1",
        "u3",
        "u4",
        "u5",
        "u6",
    ]


def test_decode_and_compose_are_capped() -> None:
    assert L.decode_attachment(b"abc\xffdef", cap=10) == "abc\ufffddef"
    assert L.decode_attachment(b"line1\nline2\nline3\nline4\n", cap=14) == "line1\n\nline4\n"
    assert L.compose_text("hello", ["", "world"]) == "hello\n\nworld"
    assert L.compose_text("  ", ["log"]) == "log"
    assert L.compose_text("x" * 10, ["y" * 10], cap=15) == "x" * 10 + "\n\n" + "yyy"


def test_capped_text_keeps_head_and_tail_of_a_stream() -> None:
    body = b"".join(b"line %05d\n" % i for i in range(10_000))  # 110,000 bytes
    kept = L.CappedText(cap=1100, download_limit=10**9)
    for start in range(0, len(body), 777):  # odd chunk sizes cross line ends
        kept.feed(body[start : start + 777])
    text = kept.text()
    lines = text.splitlines()
    assert lines[0] == "line 00000" and lines[-1] == "line 09999"
    assert "" in lines  # the cut
    assert all(line == "" or len(line) == 10 for line in lines), "only whole lines"
    assert len(text.encode()) <= 1100 + 1
    small = L.CappedText(cap=1100)
    small.feed(body[:500])
    assert small.text() == body[:500].decode()
    limited = L.CappedText(cap=100, download_limit=300)
    limited.feed(body[:200])
    assert not limited.full
    limited.feed(body[200:400])
    assert limited.full


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_cooldown_per_user_then_window_passes() -> None:
    clock = Clock()
    cooldowns = Cooldowns(CooldownPolicy(per_user=2, per_channel=10, window=60), clock)
    assert cooldowns.allow(1, WATCHED)
    clock.now += 1
    assert cooldowns.allow(1, WATCHED)
    assert not cooldowns.allow(1, WATCHED)
    assert not cooldowns.allow(1, OTHER), "the user limit holds in every channel"
    assert cooldowns.retry_after(1, WATCHED) == pytest.approx(59.0)
    assert cooldowns.allow(2, WATCHED), "another user is not held back"
    clock.now += 59
    assert cooldowns.allow(1, WATCHED)


def test_cooldown_per_channel() -> None:
    clock = Clock()
    cooldowns = Cooldowns(CooldownPolicy(per_user=10, per_channel=3, window=30), clock)
    assert all(cooldowns.allow(user, WATCHED) for user in (1, 2, 3))
    assert not cooldowns.allow(4, WATCHED)
    assert cooldowns.allow(4, OTHER)
    assert cooldowns.retry_after(5, WATCHED) == pytest.approx(30.0)
    clock.now += 30
    assert cooldowns.allow(4, WATCHED)


def test_a_refused_answer_does_not_count() -> None:
    clock = Clock()
    cooldowns = Cooldowns(CooldownPolicy(per_user=1, per_channel=5, window=10), clock)
    assert cooldowns.allow(1, WATCHED)
    for _ in range(5):
        assert not cooldowns.allow(1, WATCHED)
    assert cooldowns.allow(2, WATCHED)  # the refusals did not fill the channel


def test_plan_message(triage: Triage) -> None:
    match = triage.analyse(AVG_PANIC)
    none = triage.analyse("thanks, that fixed it")
    assert match.verdict == "match" and none.verdict == "no-panic"
    assert L.answered_ids(match) == (AVG_POOL,)
    assert L.answered_ids(none) == ()
    assert L.plan_message(match, has_reply=False) == "reply"
    assert L.plan_message(none, has_reply=False) == "none"
    assert L.plan_message(match, has_reply=True) == "edit"
    assert L.plan_message(none, has_reply=True) == "delete"
    uncatalogued = triage.analyse(
        "thread 'main' panicked at src/main.rs:3:5:\nmy own invariant broke: 42\n"
    )
    assert uncatalogued.verdict != "match"
    assert L.plan_message(uncatalogued, has_reply=True) == "delete"


def test_search_records_for_autocomplete(triage: Triage) -> None:
    records = [(r.id, r.error_message) for r in triage.catalog]
    found = L.search_records(records, "avg pool 2d backward")
    assert found[0] == (AVG_POOL, "Can't differentiate avg pool 2d backward.")
    assert len(found) <= L.AUTOCOMPLETE_LIMIT
    assert L.search_records(records, AVG_POOL)[0][0] == AVG_POOL
    typo = L.search_records(records, "cant diferentiate avg pol 2d backwrd")
    assert AVG_POOL in [rid for rid, _ in typo[:5]]
    listing = L.search_records(records, "", limit=5)
    assert len(listing) == 5
    assert [m.lower() for _, m in listing] == sorted(m.lower() for _, m in listing)
    assert L.search_records(records, "zzzz qqqq xxxx") == []


def test_choice_fits_discord_limits() -> None:
    name, value = L.choice("abc", "m" * 300)
    assert len(name) == 100 and name.endswith("…") and value == "abc"
    assert L.choice("abc", "short") == ("short", "abc")
    place = "burn-" + "x" * 90 + "/src/lib.rs:12"
    name, value = L.choice("abc", "m" * 300, place)
    assert len(name) == 100 and name.endswith("/src/lib.rs:12") and "…" in name
    assert L.choice("abc", "short", "burn-core/src/a.rs:3") == (
        "short · burn-core/src/a.rs:3",
        "abc",
    )
    assert L.record_place("crates/burn-core/src/a.rs", 3) == "burn-core/src/a.rs:3"
    assert L.record_place(None, None) == ""


def test_choices_are_distinct_and_unique() -> None:
    same_place = [("aaaaaaaa11", "Not supported", "x/src/a.rs:1")] * 2 + [
        ("bbbbbbbb22", "Not supported", "x/src/a.rs:1"),
        ("cccccccc33", "Not supported", "x/src/b.rs:1"),
    ]
    assert L.choices(same_place) == [
        ("Not supported · x/src/a.rs:1 #aaaaaaaa", "aaaaaaaa11"),
        ("Not supported · x/src/a.rs:1 #bbbbbbbb", "bbbbbbbb22"),
        ("Not supported · x/src/b.rs:1", "cccccccc33"),
    ]


def test_analysis_for_record_renders_the_record(triage: Triage) -> None:
    record = triage.catalog.get(AVG_POOL)
    assert record is not None
    analysis = L.analysis_for_record(record.id, record.error_message)
    assert L.answered_ids(analysis) == (AVG_POOL,)
    rendered = render_message(build_answer(analysis, triage.catalog))
    assert rendered["embeds"][0]["title"] == record.error_message


def test_button_ids() -> None:
    assert L.feedback_id("up", AVG_POOL) == f"triage:fb:up:{AVG_POOL}"
    assert L.feedback_id("down", AVG_POOL) == f"triage:fb:down:{AVG_POOL}"
    assert L.dismiss_id(42) == "triage:x:42"
    assert len(L.feedback_id("down", "x" * 64)) <= 100  # Discord caps custom ids at 100


def test_invite_url_matches_the_setup_guide() -> None:
    from pathlib import Path

    from bot.discord.client import PERMISSIONS, invite_url

    url = invite_url(123)
    assert url == (
        "https://discord.com/oauth2/authorize?client_id=123"
        f"&scope=bot+applications.commands&permissions={PERMISSIONS.value}"
    )
    guide = (Path(__file__).parents[1] / "bot" / "discord" / "SETUP.md").read_text()
    assert f"permissions={PERMISSIONS.value}" in guide
    assert not PERMISSIONS.attach_files and not PERMISSIONS.mention_everyone
    assert not PERMISSIONS.manage_messages


def test_head_and_tail_of_a_large_file_and_the_note_saying_so() -> None:
    assert L.join_head_tail(b"line1\nline2\npart", b"ial\nline9\nline10\n") == (
        "line1\nline2\n\nline9\nline10\n"
    )
    assert L.content_range_total("bytes 0-2047/17825792") == 17825792
    assert L.content_range_total("bytes 0-2047/*") is None
    assert L.content_range_total(None) is None
    assert [L.human_size(n) for n in (900, 12 * 1024, 20 * 1024 * 1024 + 512 * 1024)] == [
        "900 bytes",
        "12 KiB",
        "20.5 MiB",
    ]
    whole = L.AttachmentText("a.log", "text", 900)
    assert whole.skipped == 0 and L.partly_read_note(whole) is None
    part = L.AttachmentText("my `log`.txt", "text", 10 * 1024 * 1024, head=2048, tail=2048)
    assert part.skipped == 10 * 1024 * 1024 - 4096
    assert L.partly_read_note(part) == (
        "`my 'log'.txt` is 10.0 MiB: its first 2 KiB and last 2 KiB were read, "
        "the 10.0 MiB in between were skipped."
    )
    head_only = L.AttachmentText("big.log", "text", 20 * 1024 * 1024, head=4096)
    assert L.partly_read_note(head_only) == "`big.log` is 20.0 MiB: only its first 4 KiB were read."
