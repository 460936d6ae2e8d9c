"""The Discord bot end to end: real discord.py against the fake Discord on 127.0.0.1.

Each test starts the bot (login, command sync, gateway IDENTIFY -> READY -> GUILD_CREATE) and
drives it with gateway events; the assertions read the REST requests the bot made and the store.
"""

from __future__ import annotations

import asyncio
import logging
import re
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import discord
import pytest
from discord.http import Route
from fakes.discord_gateway import (
    ALL_PERMISSIONS,
    AUTOCOMPLETE_RESULT,
    CHANNEL_MESSAGE,
    DEFERRED_CHANNEL_MESSAGE,
    DEFERRED_UPDATE,
    MODAL,
    FakeDiscord,
    Request,
    message_problems,
    patched_discord,
)
from harness import eventually

from bot.app import Triage
from bot.discord import listener as L
from bot.discord.client import TriageBot, run_discord
from bot.render import texts
from bot.store.sqlite import Store

AVG_POOL = "8d1d2fa6df3880bd"
INTERPOLATE = "cf30438606d06d30"
AVG_PANIC = (
    "thread 'main' panicked at crates/burn-autodiff/src/ops/module.rs:1498:9:\n"
    "Can't differentiate avg pool 2d backward.\n"
    "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n"
)
INTERP_PANIC = (
    "thread 'main' panicked at crates/burn-autodiff/src/ops/module.rs:1933:9:\n"
    "Can't differentiate interpolate backward.\n"
)
EPHEMERAL = 64
QUIET = 0.15  # how long "nothing happens" is watched for, after a later event was answered
EDIT_DEBOUNCE = 0.05  # seconds an edit waits for the next (2 s by default)


@dataclass(frozen=True)
class FakeSettings:
    discord_token: str | None = "fake-token"
    discord_channel_ids: tuple[int, ...] = ()
    discord_guild_id: int | None = None


@dataclass
class Env:
    fake: FakeDiscord
    bot: TriageBot
    store: Store
    alice: dict[str, Any] = field(default_factory=dict)
    bob: dict[str, Any] = field(default_factory=dict)

    async def reply_to(self, message: dict[str, Any], *, count: int = 1) -> Request:
        """The bot's `count`-th POST answering `message`."""
        found = await self.fake.wait_for(
            lambda r: r.method == "POST" and r.status == 200 and replied_to(r) == message["id"],
            count=count,
        )
        return found[count - 1]

    def replies_to(self, message: dict[str, Any]) -> list[Request]:
        return [
            r for r in self.fake.requests if r.method == "POST" and replied_to(r) == message["id"]
        ]

    def reply_message(self, request: Request) -> dict[str, Any]:
        """The message the fake created for a reply request."""
        for message in self.fake.bot_messages():
            ref = message.get("message_reference") or {}
            if ref.get("message_id") == replied_to(request):
                return message
        raise AssertionError("no reply message")


Starter = Callable[..., Any]


def replied_to(request: Request) -> str | None:
    """The id of the message a reply request answers (discord.py sends it as a number)."""
    if request.method != "POST" or not isinstance(request.body, dict):
        return None
    message_id = (request.body.get("message_reference") or {}).get("message_id")
    return None if message_id is None else str(message_id)


@pytest.fixture
async def start(tmp_path: Path, triage: Triage) -> AsyncIterator[Starter]:
    """Start the bot against a fresh fake; keyword arguments go to TriageBot."""
    running: list[tuple[TriageBot, asyncio.Task[None], Store]] = []
    async with patched_discord() as fake:

        async def starter(**options: Any) -> Env:
            watched = options.pop("watched", None)
            if watched is None:
                watched = (fake.watched["id"], fake.forum["id"])
            settings = FakeSettings(discord_channel_ids=tuple(int(c) for c in watched))
            store = options.pop("store_class", Store)(tmp_path / "triage.sqlite3")
            options.setdefault("cooldowns", L.Cooldowns(L.CooldownPolicy(100, 100, 60.0)))
            options.setdefault("edit_debounce", EDIT_DEBOUNCE)
            bot = TriageBot(
                settings=settings,
                triage=options.pop("triage", triage),
                store=store,
                guild_ready_timeout=0.05,
                **options,
            )
            task = asyncio.create_task(bot.start("fake-token"))
            running.append((bot, task, store))
            await asyncio.wait_for(bot.wait_until_ready(), 15)
            return Env(fake, bot, store, fake.user("alice"), fake.user("bob"))

        yield starter
        for bot, task, store in running:
            await bot.close()
            await asyncio.wait_for(task, 5)
            store.close()


def embed_text(body: dict[str, Any]) -> str:
    parts = [body.get("content") or ""]
    for embed in body.get("embeds") or []:
        parts += [embed.get("title") or "", embed.get("description") or ""]
        parts += [f"{f['name']} {f['value']}" for f in embed.get("fields") or []]
        parts.append((embed.get("footer") or {}).get("text") or "")
    return "\n".join(parts)


def custom_ids(body: dict[str, Any]) -> list[str]:
    return [c["custom_id"] for row in body.get("components") or [] for c in row["components"]]


def assert_no_mentions(body: dict[str, Any]) -> None:
    mentions = body["allowed_mentions"]
    assert mentions["parse"] == []
    assert not mentions.get("users") and not mentions.get("roles")
    assert mentions.get("replied_user", False) is False


# ---------------------------------------------------------------------- start-up


async def test_login_syncs_commands_and_identifies_with_the_least_intents(start: Starter) -> None:
    env = await start()
    fake = env.fake
    assert fake.find("GET", "/users/@me") and fake.find("GET", "/oauth2/applications/@me")
    sync = fake.find("PUT", rf"/applications/{fake.app_id}/commands")
    assert len(sync) == 1
    names = {(c["name"], c["type"]) for c in sync[0].body}
    assert names == {("panic", 1), ("error", 1), (texts.EXPLAIN_MENU, 3)}
    error = next(c for c in sync[0].body if c["name"] == "error")
    assert error["options"][0]["autocomplete"] is True
    assert fake.identify is not None
    # guilds (1 << 0), guild messages (1 << 9), message content (1 << 15), and nothing else
    assert fake.identify["intents"] == (1 << 0) | (1 << 9) | (1 << 15) == 33281
    assert fake.requests[0].headers["Authorization"] == "Bot fake-token"


async def test_guild_id_syncs_to_the_guild(start: Starter, tmp_path: Path, triage: Triage) -> None:
    env = await start()
    fake = env.fake
    settings = FakeSettings(discord_guild_id=int(fake.guild_id))
    store = Store(tmp_path / "other.sqlite3")
    bot = TriageBot(settings=settings, triage=triage, store=store, guild_ready_timeout=0.05)
    task = asyncio.create_task(bot.start("fake-token"))
    try:
        await fake.wait_request(
            "PUT", rf"/applications/{fake.app_id}/guilds/{fake.guild_id}/commands"
        )
    finally:
        await bot.close()
        await asyncio.wait_for(task, 5)
        store.close()


# ---------------------------------------------------------------------- pastes


async def test_paste_in_watched_channel_gets_an_answer(start: Starter) -> None:
    env = await start()
    fake = env.fake
    message = await fake.send_message(fake.watched, env.alice, "help!\n```\n" + AVG_PANIC + "```")
    reply = await env.reply_to(message)
    assert reply.path == f"/channels/{fake.watched['id']}/messages"
    assert "Can't differentiate avg pool 2d backward." in embed_text(reply.body)
    assert AVG_POOL in embed_text(reply.body)
    assert reply.body["embeds"], "the answer is an embed"
    assert_no_mentions(reply.body)
    ids = custom_ids(reply.body)
    assert ids == [
        L.feedback_id("up", AVG_POOL),
        L.feedback_id("down", AVG_POOL),
        L.dismiss_id(int(env.alice["id"])),
        f"triage:more:{AVG_POOL}",
    ]
    labels = [c["label"] for row in reply.body["components"] for c in row["components"]]
    assert labels == [texts.HELPFUL, texts.WRONG_MATCH, texts.DISMISS, texts.MORE_DISCORD]
    stored = await eventually(lambda: env.store.get_discord_reply(int(message["id"])))
    assert stored["record_ids"] == [AVG_POOL]
    assert stored["reply_id"] == int(env.reply_message(reply)["id"])
    assert stored["author_id"] == int(env.alice["id"])


async def test_paste_elsewhere_and_plain_chat_get_no_answer(start: Starter) -> None:
    env = await start()
    fake = env.fake
    elsewhere = await fake.send_message(fake.general, env.alice, AVG_PANIC)
    chat = await fake.send_message(fake.watched, env.alice, "does anyone know burn?")
    later = await fake.send_message(fake.watched, env.bob, INTERP_PANIC)
    await env.reply_to(later)
    await asyncio.sleep(QUIET)
    assert env.replies_to(elsewhere) == [] and env.replies_to(chat) == []
    assert len(fake.find("POST", r"/channels/\d+/messages")) == 1


async def test_paste_in_a_thread_and_a_forum_post(start: Starter) -> None:
    env = await start()
    fake = env.fake
    in_thread = await fake.send_message(fake.thread, env.alice, AVG_PANIC)
    reply = await env.reply_to(in_thread)
    assert reply.path == f"/channels/{fake.thread['id']}/messages"
    in_post = await fake.send_message(fake.forum_post, env.bob, INTERP_PANIC)
    reply = await env.reply_to(in_post)
    assert reply.path == f"/channels/{fake.forum_post['id']}/messages"
    assert INTERPOLATE in embed_text(reply.body)


async def test_threads_created_after_start_are_looked_up(start: Starter) -> None:
    env = await start()
    fake = env.fake
    # Threads discord.py has not cached (no THREAD_CREATE seen): the bot fetches the channel.
    watched_thread = fake.add_thread("new post", parent=fake.watched)
    other_thread = fake.add_thread("elsewhere", parent=fake.general)
    quiet = await fake.send_message(other_thread, env.alice, AVG_PANIC)
    answered = await fake.send_message(watched_thread, env.bob, INTERP_PANIC)
    reply = await env.reply_to(answered)
    assert reply.path == f"/channels/{watched_thread['id']}/messages"
    await asyncio.sleep(QUIET)
    assert env.replies_to(quiet) == []
    assert fake.find("GET", rf"/channels/{other_thread['id']}")


async def test_attachment_is_read(start: Starter) -> None:
    env = await start()
    fake = env.fake
    log_text = ("[INFO] training step\n" * 200 + AVG_PANIC).encode()
    attachment = fake.attachment("message.txt", log_text)
    message = await fake.send_message(fake.watched, env.alice, "", attachments=[attachment])
    reply = await env.reply_to(message)
    assert AVG_POOL in embed_text(reply.body)
    # the bot downloaded the file from the attachment URL
    assert attachment["url"].endswith("/message.txt")


async def test_long_attachment_is_read_head_and_tail_and_binary_files_not_at_all(
    start: Starter,
) -> None:
    env = await start(attachment_cap=4096)
    fake = env.fake
    filler = b"[INFO] step ok\n" * 1000  # 15,000 bytes
    at_end = fake.attachment("build.log", filler + AVG_PANIC.encode())
    in_middle = fake.attachment("train.log", filler + INTERP_PANIC.encode() + filler)
    image = fake.attachment("panic.png", AVG_PANIC.encode(), content_type="image/png")
    tail = await fake.send_message(fake.watched, env.alice, "log", attachments=[at_end])
    reply = await env.reply_to(tail)
    assert AVG_POOL in embed_text(reply.body)
    middle = await fake.send_message(fake.watched, env.alice, "log", attachments=[in_middle])
    binary = await fake.send_message(fake.watched, env.alice, "", attachments=[image])
    later = await fake.send_message(fake.watched, env.bob, INTERP_PANIC)
    await env.reply_to(later)
    await asyncio.sleep(QUIET)
    assert env.replies_to(middle) == [] and env.replies_to(binary) == []
    assert not [r for r in fake.files_served if r.endswith("/panic.png")]


async def test_a_large_log_is_read_head_and_real_tail_with_range_requests(start: Starter) -> None:
    env = await start(attachment_cap=4096)
    fake = env.fake
    filler = b"[INFO] step ok\n" * (17 * 1024 * 1024 // 15)  # past the old 16 MB download limit
    body = filler + AVG_PANIC.encode()
    log_file = fake.attachment("train.log", body)
    message = await fake.send_message(fake.watched, env.alice, "log", attachments=[log_file])
    reply = await env.reply_to(message)
    assert AVG_POOL in embed_text(reply.body), "the panic at the very end was read"
    path = "/attachments/" + log_file["id"] + "/train.log"
    assert [(r[1], r[2], r[3]) for r in fake.file_requests if r[0] == path] == [
        ("bytes=0-2047", 206, 2048),
        ("bytes=-2048", 206, 2048),
    ], "two ranges, 4 KiB in all, not 17 MB"
    assert reply.body["content"] == texts.ATTACHMENT_PARTLY_READ.format(
        filename="train.log",
        size=L.human_size(len(body)),
        head="2 KiB",
        tail="2 KiB",
        skipped=L.human_size(len(body) - 4096),
    )
    assert reply.body["content"].startswith("`train.log` is 17.0 MiB: its first 2 KiB and last")


async def test_a_small_log_is_read_whole_and_says_nothing_of_skipping(start: Starter) -> None:
    env = await start(attachment_cap=4096)
    fake = env.fake
    log_file = fake.attachment("build.log", b"[INFO] ok\n" * 100 + AVG_PANIC.encode())
    message = await fake.send_message(fake.watched, env.alice, "", attachments=[log_file])
    reply = await env.reply_to(message)
    assert AVG_POOL in embed_text(reply.body)
    assert [r[1:3] for r in fake.file_requests] == [(None, 200)]
    assert not reply.body.get("content")


async def test_a_cdn_ignoring_range_is_streamed_within_the_cap(start: Starter) -> None:
    env = await start(attachment_cap=4096)
    fake = env.fake
    fake.honour_ranges = False
    body = b"[INFO] step ok\n" * 1000 + AVG_PANIC.encode()  # 15 KB
    log_file = fake.attachment("build.log", body)
    message = await fake.send_message(fake.watched, env.alice, "log", attachments=[log_file])
    reply = await env.reply_to(message)
    assert AVG_POOL in embed_text(reply.body)
    assert [r[2] for r in fake.file_requests] == [200]
    assert "were skipped" in reply.body["content"]


async def test_a_huge_log_from_a_cdn_ignoring_range_says_only_its_head_was_read(
    start: Starter,
) -> None:
    env = await start(attachment_cap=4096)
    fake = env.fake
    fake.honour_ranges = False
    body = AVG_PANIC.encode() + b"[INFO] step ok\n" * (17 * 1024 * 1024 // 15)
    log_file = fake.attachment("train.log", body)
    message = await fake.send_message(fake.watched, env.alice, "log", attachments=[log_file])
    reply = await env.reply_to(message)
    assert AVG_POOL in embed_text(reply.body)
    assert reply.body["content"] == texts.ATTACHMENT_HEAD_ONLY.format(
        filename="train.log", size=L.human_size(len(body)), head="4 KiB"
    )


async def test_rs_attachment_with_message_text(start: Starter) -> None:
    env = await start()
    fake = env.fake
    attachment = fake.attachment("panic.rs", INTERP_PANIC.encode(), content_type=None)
    message = await fake.send_message(fake.watched, env.alice, AVG_PANIC, attachments=[attachment])
    reply = await env.reply_to(message)
    text = embed_text(reply.body)
    assert AVG_POOL in text and INTERPOLATE in text
    assert L.feedback_id("up", INTERPOLATE) in custom_ids(reply.body)


# ---------------------------------------------------------------------- edits and deletes


async def test_edit_updates_the_answer_then_removes_it(start: Starter) -> None:
    env = await start()
    fake = env.fake
    message = await fake.send_message(fake.watched, env.alice, AVG_PANIC)
    reply = await env.reply_to(message)
    reply_id = env.reply_message(reply)["id"]

    message = await fake.edit_message(message, INTERP_PANIC)
    edit = await fake.wait_request("PATCH", rf"/channels/{fake.watched['id']}/messages/{reply_id}")
    assert INTERPOLATE in embed_text(edit.body) and AVG_POOL not in embed_text(edit.body)
    assert_no_mentions(edit.body)
    await eventually(
        lambda: env.store.get_discord_reply(int(message["id"]))["record_ids"] == [INTERPOLATE]
    )

    await fake.edit_message(message, "never mind, it was my fault")
    await fake.wait_request("DELETE", rf"/channels/{fake.watched['id']}/messages/{reply_id}")
    await eventually(lambda: env.store.get_discord_reply(int(message["id"])) is None)
    assert reply_id not in fake.messages


async def test_edit_adding_a_panic_gets_an_answer(start: Starter) -> None:
    env = await start()
    fake = env.fake
    message = await fake.send_message(fake.watched, env.alice, "it crashes, log below")
    await fake.edit_message(message, "it crashes:\n" + AVG_PANIC)
    reply = await env.reply_to(message)
    assert AVG_POOL in embed_text(reply.body)


async def test_edit_after_a_moderator_removed_the_answer(start: Starter) -> None:
    env = await start()
    fake = env.fake
    message = await fake.send_message(fake.watched, env.alice, AVG_PANIC)
    reply = env.reply_message(await env.reply_to(message))
    await fake.delete_message(reply)  # a moderator deletes the answer
    await fake.edit_message(message, INTERP_PANIC)
    edit = await fake.wait_request(
        "PATCH", rf"/channels/{fake.watched['id']}/messages/{reply['id']}"
    )
    assert edit.status == 404
    await eventually(lambda: env.store.get_discord_reply(int(message["id"])) is None)
    assert len(env.replies_to(message)) == 1, "the removed answer is not posted again"


async def test_delete_removes_the_answer(start: Starter) -> None:
    env = await start()
    fake = env.fake
    message = await fake.send_message(fake.watched, env.alice, AVG_PANIC)
    reply_id = env.reply_message(await env.reply_to(message))["id"]
    await fake.delete_message(message)
    await fake.wait_request("DELETE", rf"/channels/{fake.watched['id']}/messages/{reply_id}")
    await eventually(lambda: env.store.get_discord_reply(int(message["id"])) is None)


async def test_a_replayed_message_gets_one_reply_and_its_delete_leaves_none(
    start: Starter,
) -> None:
    env = await start()
    fake = env.fake
    message = await fake.send_message(fake.watched, env.alice, AVG_PANIC)
    await fake.dispatch("MESSAGE_CREATE", message)  # the same event again (a gateway replay)
    reply = env.reply_message(await env.reply_to(message))
    await fake.dispatch("MESSAGE_CREATE", message)  # and once more after the answer
    later = await fake.send_message(fake.watched, env.bob, INTERP_PANIC)
    await env.reply_to(later)
    await asyncio.sleep(QUIET)
    assert len(env.replies_to(message)) == 1
    await fake.delete_message(message)
    await fake.wait_request("DELETE", rf"/channels/{fake.watched['id']}/messages/{reply['id']}")
    await eventually(lambda: env.store.get_discord_reply(int(message["id"])) is None)
    assert fake.bot_messages(fake.watched) == [env.reply_message(env.replies_to(later)[0])]


async def test_a_replay_after_a_restart_is_not_answered_again(start: Starter) -> None:
    env = await start()
    fake = env.fake
    message = await fake.send_message(fake.watched, env.alice, AVG_PANIC)
    await env.reply_to(message)
    await eventually(lambda: env.store.get_discord_reply(int(message["id"])))
    env.bot._seen.clear()  # a new process: only the store remembers the answer
    await fake.dispatch("MESSAGE_CREATE", message)
    later = await fake.send_message(fake.watched, env.bob, INTERP_PANIC)
    await env.reply_to(later)
    await asyncio.sleep(QUIET)
    assert len(env.replies_to(message)) == 1


async def test_bulk_delete_removes_every_answer(start: Starter) -> None:
    env = await start()
    fake = env.fake
    pastes = [await fake.send_message(fake.watched, env.alice, AVG_PANIC) for _ in range(3)]
    chat = await fake.send_message(fake.watched, env.bob, "thanks!")
    replies = [env.reply_message(await env.reply_to(m)) for m in pastes]
    for message in pastes:
        await eventually(lambda m=message: env.store.get_discord_reply(int(m["id"])))
    await fake.bulk_delete([*pastes, chat])
    for reply in replies:
        await fake.wait_request("DELETE", rf"/channels/{fake.watched['id']}/messages/{reply['id']}")
    for message in pastes:
        await eventually(lambda m=message: env.store.get_discord_reply(int(m["id"])) is None)
    assert fake.bot_messages() == []


async def test_a_reply_to_a_message_deleted_meanwhile_is_refused_and_not_orphaned(
    start: Starter, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("INFO", logger="bot.discord.client")
    env = await start()
    fake = env.fake
    # The user deleted the paste before the bot answered: Discord refuses the reply (400),
    # the bot does not post the answer without a reference.
    gone = fake.message_payload(fake.watched, env.alice, AVG_PANIC)
    await fake.dispatch("MESSAGE_CREATE", gone)
    refused = await env.fake.wait_for(lambda r: replied_to(r) == gone["id"])
    later = await fake.send_message(fake.watched, env.bob, INTERP_PANIC)
    await env.reply_to(later)
    await asyncio.sleep(QUIET)
    assert [r.status for r in env.replies_to(gone)] == [400]
    assert refused[0].body["message_reference"].get("fail_if_not_exists", True) is True
    assert len(fake.find("POST", r"/channels/\d+/messages")) == 2
    assert len(fake.bot_messages()) == 1
    assert env.store.get_discord_reply(int(gone["id"])) is None
    logged = [r.getMessage() for r in caplog.records]
    assert f"discord: message {gone['id']} was deleted before the answer" in logged
    assert not [r for r in caplog.records if r.levelname == "ERROR"], "not an error: it happens"


async def test_quick_edits_give_one_edit_of_the_answer_in_place(start: Starter) -> None:
    env = await start(edit_debounce=0.3)
    fake = env.fake
    message = await fake.send_message(fake.watched, env.alice, AVG_PANIC)
    reply_id = env.reply_message(await env.reply_to(message))["id"]
    await eventually(lambda: env.store.get_discord_reply(int(message["id"])))
    for text in (INTERP_PANIC, "oops, wrong paste", AVG_PANIC, "typo fixed\n" + AVG_PANIC):
        message = await fake.edit_message(message, text)
        await asyncio.sleep(0.03)  # quick, but not one burst: each edit is its own event
    message = await fake.edit_message(message, "the real one:\n" + INTERP_PANIC)
    edit = await fake.wait_request("PATCH", rf"/channels/{fake.watched['id']}/messages/{reply_id}")
    assert INTERPOLATE in embed_text(edit.body) and AVG_POOL not in embed_text(edit.body)
    await asyncio.sleep(0.3 + QUIET)
    assert len(fake.find("PATCH", r"/channels/\d+/messages/\d+")) == 1
    assert fake.find("DELETE", r"/channels/\d+/messages/\d+") == []
    assert len(fake.find("POST", r"/channels/\d+/messages")) == 1
    await eventually(
        lambda: env.store.get_discord_reply(int(message["id"]))["record_ids"] == [INTERPOLATE]
    )


async def test_a_delete_during_the_edit_pause_drops_the_edit(start: Starter) -> None:
    env = await start(edit_debounce=0.3)
    fake = env.fake
    message = await fake.send_message(fake.watched, env.alice, AVG_PANIC)
    reply_id = env.reply_message(await env.reply_to(message))["id"]
    await eventually(lambda: env.store.get_discord_reply(int(message["id"])))
    await fake.edit_message(message, INTERP_PANIC)
    await fake.delete_message(message)
    await fake.wait_request("DELETE", rf"/channels/{fake.watched['id']}/messages/{reply_id}")
    await asyncio.sleep(0.3 + QUIET)
    assert fake.find("PATCH", r"/channels/\d+/messages/\d+") == []


async def test_the_fake_refuses_what_discord_refuses(start: Starter) -> None:
    env = await start()
    fake = env.fake
    route = Route("POST", "/channels/{channel_id}/messages", channel_id=fake.watched["id"])

    def button(custom_id: str) -> dict[str, Any]:
        return {"type": 2, "style": 2, "label": "b", "custom_id": custom_id}

    def row(*ids: str) -> dict[str, Any]:
        return {"type": 1, "components": [button(i) for i in ids]}

    field_ok = {"name": "n", "value": "v"}
    refused = {
        "title": {"embeds": [{"title": "t" * 257}]},
        "description": {"embeds": [{"description": "d" * 4097}]},
        "fields": {"embeds": [{"fields": [field_ok] * 26}]},
        "field name": {"embeds": [{"fields": [{"name": "n" * 257, "value": "v"}]}]},
        "field value": {"embeds": [{"fields": [{"name": "n", "value": "v" * 1025}]}]},
        "footer": {"embeds": [{"footer": {"text": "f" * 2049}}]},
        "total": {"embeds": [{"description": "d" * 4000}, {"description": "d" * 2001}]},
        "content": {"content": "x" * 2001},
        "rows": {"components": [row(f"r{i}") for i in range(6)]},
        "duplicate ids": {"components": [row("a", "b"), row("a")]},
        "reply to a deleted message": {
            "content": "hi",
            "message_reference": {"message_id": fake.next_id(), "channel_id": fake.watched["id"]},
        },
    }
    for what, payload in refused.items():
        with pytest.raises(discord.HTTPException) as caught:
            await env.bot.http.request(route, json=payload)
        assert (caught.value.status, caught.value.code) == (400, 50035), what
    accepted = {
        "at the limits": {
            "content": "x" * 2000,
            "embeds": [
                {"title": "t" * 256, "description": "d" * 3694, "fields": [field_ok] * 25},
                {"footer": {"text": "f" * 2000}},
            ],
            "components": [row(f"r{i}", f"s{i}") for i in range(5)],
        },
        "reply to a deleted message, not required to exist": {
            "content": "hi",
            "message_reference": {
                "message_id": fake.next_id(),
                "channel_id": fake.watched["id"],
                "fail_if_not_exists": False,
            },
        },
    }
    for payload in accepted.values():
        await env.bot.http.request(route, json=payload)  # no HTTPException: accepted
    assert len(fake.find("POST", r"/channels/\d+/messages")) == len(refused) + len(accepted)


async def test_every_answer_the_bot_renders_is_one_discord_accepts(
    start: Starter, triage: Triage
) -> None:
    env = await start()
    note = "`" + "x" * 100 + "` is 20.0 MiB: its first 128 KiB and last 128 KiB were read"

    def problems(kwargs: dict[str, Any]) -> list[Any]:
        body = {
            "content": kwargs["content"],
            "embeds": [e.to_dict() for e in kwargs["embeds"]],
            "components": kwargs["view"].to_components(),
        }
        return message_problems(body)

    for record in triage.catalog:
        analysis = L.analysis_for_record(record.id, record.error_message)
        assert problems(env.bot.render(analysis, author_id=1, notes=[note])) == [], record.id
    # an answer to many panics: a row of votes per record shown, and Dismiss and Show more
    records = [
        r for r in triage.catalog if r.file_path and r.line_number and "{" not in r.error_message
    ]
    paste = "".join(
        f"thread 'main' panicked at {r.file_path}:{r.line_number}:9:\n{r.error_message}\n"
        for r in records[:: len(records) // 8][:8]
    )
    analysis = env.bot.triage.analyse(paste)
    assert len(L.answered_ids(analysis)) >= 5
    rendered = env.bot.render(analysis, author_id=1)
    assert problems(rendered) == []
    rows = rendered["view"].to_components()
    assert 2 <= len(rows) <= 5 and all(len(row["components"]) <= 5 for row in rows)
    message = await env.fake.send_message(env.fake.watched, env.alice, paste)
    reply = await env.reply_to(message)
    assert reply.status == 200


# ---------------------------------------------------------------------- commands


async def test_panic_command_answers_ephemerally(start: Starter) -> None:
    env = await start()
    fake = env.fake
    interaction = await fake.slash_command(
        "panic", {"text": AVG_PANIC}, user=env.alice, channel=fake.general
    )
    callback = await fake.wait_callback(interaction)
    assert callback.body["type"] == DEFERRED_CHANNEL_MESSAGE
    assert callback.body["data"]["flags"] & EPHEMERAL
    edit = await fake.wait_request(
        "PATCH", rf"/webhooks/{fake.app_id}/{interaction.token}/messages/@original"
    )
    assert AVG_POOL in embed_text(edit.body)
    assert_no_mentions(edit.body)
    assert L.feedback_id("up", AVG_POOL) in custom_ids(edit.body)


async def test_panic_command_shared_and_with_a_file(start: Starter) -> None:
    env = await start()
    fake = env.fake
    attachment = fake.attachment("message.txt", INTERP_PANIC.encode())
    interaction = await fake.slash_command(
        "panic",
        {"share": True},
        attachments={"file": attachment},
        user=env.alice,
        channel=fake.general,
    )
    callback = await fake.wait_callback(interaction)
    assert not callback.body.get("data", {}).get("flags", 0) & EPHEMERAL
    edit = await fake.wait_request(
        "PATCH", rf"/webhooks/{fake.app_id}/{interaction.token}/messages/@original"
    )
    assert INTERPOLATE in embed_text(edit.body)


async def test_panic_command_without_text_opens_a_modal(start: Starter) -> None:
    env = await start()
    fake = env.fake
    interaction = await fake.slash_command("panic", {}, user=env.alice, channel=fake.general)
    callback = await fake.wait_callback(interaction)
    assert callback.body["type"] == MODAL
    modal = callback.body["data"]
    assert modal["title"] == texts.MODAL_TITLE
    inputs = [
        c
        for row in modal["components"]
        for c in ([row.get("component")] if row["type"] == 18 else row.get("components", []))
        if c and c["type"] == 4
    ]
    assert len(inputs) == 1 and inputs[0]["style"] == 2  # paragraph
    submit = await fake.submit_modal(
        modal, {inputs[0]["custom_id"]: "log:\n" + AVG_PANIC}, user=env.alice, channel=fake.general
    )
    answer = await fake.wait_callback(submit)
    assert answer.body["type"] == DEFERRED_CHANNEL_MESSAGE
    edit = await fake.wait_request(
        "PATCH", rf"/webhooks/{fake.app_id}/{submit.token}/messages/@original"
    )
    assert AVG_POOL in embed_text(edit.body)


async def test_panic_command_without_a_panic(start: Starter) -> None:
    env = await start()
    fake = env.fake
    interaction = await fake.slash_command(
        "panic", {"text": "my model trains slowly"}, user=env.alice, channel=fake.general
    )
    await fake.wait_callback(interaction)
    edit = await fake.wait_request(
        "PATCH", rf"/webhooks/{fake.app_id}/{interaction.token}/messages/@original"
    )
    assert edit.body["content"] == texts.NO_PANIC_FOUND
    assert edit.body["embeds"] == []


async def test_error_autocomplete_and_lookup(start: Starter) -> None:
    env = await start()
    fake = env.fake
    interaction = await fake.autocomplete(
        "error", "query", "avg pool 2d backward", user=env.alice, channel=fake.general
    )
    callback = await fake.wait_callback(interaction)
    assert callback.body["type"] == AUTOCOMPLETE_RESULT
    choices = callback.body["data"]["choices"]
    assert 1 <= len(choices) <= 25
    assert choices[0] == {
        "name": "Can't differentiate avg pool 2d backward. · burn-autodiff/src/ops/module.rs:1498",
        "value": AVG_POOL,
    }
    assert all(len(c["name"]) <= 100 and len(c["value"]) <= 100 for c in choices)

    command = await fake.slash_command(
        "error", {"query": choices[0]["value"]}, user=env.alice, channel=fake.general
    )
    answer = await fake.wait_callback(command)
    assert answer.body["type"] == CHANNEL_MESSAGE
    assert answer.body["data"]["flags"] & EPHEMERAL
    assert AVG_POOL in embed_text(answer.body["data"])
    assert_no_mentions(answer.body["data"])

    words = await fake.slash_command(
        "error",
        {"query": "interpolate backward", "share": True},
        user=env.bob,
        channel=fake.general,
    )
    answer = await fake.wait_callback(words)
    assert INTERPOLATE in embed_text(answer.body["data"])
    assert not answer.body["data"].get("flags", 0) & EPHEMERAL

    missing = await fake.slash_command(
        "error", {"query": "zzzz qqqq xxxx"}, user=env.bob, channel=fake.general
    )
    answer = await fake.wait_callback(missing)
    assert answer.body["data"]["content"] == texts.ERROR_NOT_FOUND.format(query="zzzz qqqq xxxx")


async def test_error_autocomplete_tells_records_with_one_message_apart(
    start: Starter, triage: Triage
) -> None:
    env = await start()
    fake = env.fake
    interaction = await fake.autocomplete(
        "error", "query", "Backend not supported", user=env.alice, channel=fake.general
    )
    callback = await fake.wait_callback(interaction)
    assert callback.status == 200  # the fake refuses more than 25 or names over 100 characters
    choices = callback.body["data"]["choices"]
    names = [c["name"] for c in choices]
    values = [c["value"] for c in choices]
    assert len(choices) == 25 and len(set(names)) == 25 and len(set(values)) == 25
    same = [c for c in choices if c["name"].startswith("Backend not supported for custom op")]
    assert [c["name"] for c in same] == [
        "Backend not supported for custom op `{}` · burn-backend-extension/src/lib.rs:523",
        "Backend not supported for custom op `{}` · burn-backend-extension/src/lib.rs:795",
    ]
    for item in choices:  # each names its record's crate and file
        record = triage.catalog.get(item["value"])
        assert record is not None and record.crate and record.crate in item["name"]
        assert record.file_path.rsplit("/", 1)[-1] in item["name"]


async def test_explain_this_panic_context_menu(start: Starter) -> None:
    env = await start()
    fake = env.fake
    target = await fake.send_message(fake.general, env.bob, "crash:\n" + INTERP_PANIC)
    interaction = await fake.message_command(
        texts.EXPLAIN_MENU, target, user=env.alice, channel=fake.general
    )
    callback = await fake.wait_callback(interaction)
    assert callback.body["data"]["flags"] & EPHEMERAL
    edit = await fake.wait_request(
        "PATCH", rf"/webhooks/{fake.app_id}/{interaction.token}/messages/@original"
    )
    assert INTERPOLATE in embed_text(edit.body)
    assert env.replies_to(target) == []  # unwatched channel: only the menu answers


# ---------------------------------------------------------------------- buttons


async def test_feedback_buttons_one_vote_per_user(start: Starter) -> None:
    env = await start()
    fake = env.fake
    message = await fake.send_message(fake.watched, env.alice, AVG_PANIC)
    reply = env.reply_message(await env.reply_to(message))
    up, down = L.feedback_id("up", AVG_POOL), L.feedback_id("down", AVG_POOL)

    async def vote(custom_id: str, user: dict[str, Any]) -> Request:
        interaction = await fake.click(reply, custom_id, user=user)
        callback = await fake.wait_callback(interaction)
        assert callback.body["type"] == CHANNEL_MESSAGE
        assert callback.body["data"]["content"] == texts.VOTE_THANKS
        assert callback.body["data"]["flags"] & EPHEMERAL
        return callback

    await vote(up, env.alice)
    assert env.store.feedback_counts(AVG_POOL) == (1, 0)
    await vote(up, env.alice)
    assert env.store.feedback_counts(AVG_POOL) == (1, 0)
    await vote(down, env.alice)
    assert env.store.feedback_counts(AVG_POOL) == (0, 1)
    await vote(up, env.bob)
    assert env.store.feedback_counts(AVG_POOL) == (1, 1)


async def test_show_more_answers_whoever_presses_it_privately(start: Starter) -> None:
    env = await start()
    fake = env.fake
    message = await fake.send_message(fake.watched, env.alice, AVG_PANIC)
    reply = env.reply_message(await env.reply_to(message))
    before = dict(reply)
    click = await fake.click(reply, f"triage:more:{AVG_POOL}", user=env.bob)
    callback = await fake.wait_callback(click)
    assert callback.body["type"] == CHANNEL_MESSAGE
    assert callback.body["data"]["flags"] & EPHEMERAL
    more = callback.body["data"]["embeds"]
    assert more and "Can't differentiate avg pool 2d backward." in more[0]["title"]
    names = [f["name"] for f in more[0].get("fields", [])]
    assert texts.SOLUTIONS in names and texts.RELATED_ERRORS in names
    assert fake.messages[reply["id"]] == before  # the answer itself stays as it was


async def test_only_the_author_or_a_moderator_dismisses(start: Starter) -> None:
    env = await start()
    fake = env.fake
    message = await fake.send_message(fake.watched, env.alice, AVG_PANIC)
    reply = env.reply_message(await env.reply_to(message))
    dismiss = L.dismiss_id(int(env.alice["id"]))

    refused = await fake.click(reply, dismiss, user=env.bob)
    callback = await fake.wait_callback(refused)
    assert callback.body["data"]["content"] == texts.DISMISS_NOT_YOURS
    assert reply["id"] in fake.messages

    accepted = await fake.click(reply, dismiss, user=env.alice)
    callback = await fake.wait_callback(accepted)
    assert callback.body["type"] == DEFERRED_UPDATE
    await fake.wait_request("DELETE", rf"/channels/{fake.watched['id']}/messages/{reply['id']}")
    await eventually(lambda: env.store.get_discord_reply(int(message["id"])) is None)

    other = await fake.send_message(fake.watched, env.alice, INTERP_PANIC)
    reply = env.reply_message(await env.reply_to(other))
    moderator = await fake.click(reply, dismiss, user=env.bob, permissions=ALL_PERMISSIONS)
    await fake.wait_callback(moderator)
    await fake.wait_request("DELETE", rf"/channels/{fake.watched['id']}/messages/{reply['id']}")


# ---------------------------------------------------------------------- safety


async def test_rate_limited_reply_is_retried(start: Starter) -> None:
    env = await start()
    fake = env.fake
    fake.rate_limit("POST", rf"/channels/{fake.watched['id']}/messages", retry_after=0.05)
    message = await fake.send_message(fake.watched, env.alice, AVG_PANIC)
    reply = await env.reply_to(message)
    attempts = fake.find("POST", rf"/channels/{fake.watched['id']}/messages")
    assert [r.status for r in attempts] == [429, 200]
    assert reply is attempts[1]
    await eventually(lambda: env.store.get_discord_reply(int(message["id"])))


async def test_mentions_in_a_paste_never_ping(start: Starter) -> None:
    env = await start()
    fake = env.fake
    noisy = "@everyone @here <@123> <@!456> <@&789> look:\n" + AVG_PANIC + "@everyone\n" * 20
    message = await fake.send_message(fake.watched, env.alice, noisy)
    reply = await env.reply_to(message)
    assert_no_mentions(reply.body)
    assert "@everyone" not in embed_text(reply.body) and "<@123>" not in embed_text(reply.body)


async def test_bots_and_itself_are_ignored(start: Starter) -> None:
    env = await start()
    fake = env.fake
    other_bot = fake.user("ci-bot", bot=True)
    from_bot = await fake.send_message(fake.watched, other_bot, AVG_PANIC)
    itself = await fake.send_message(fake.watched, fake.bot_user, AVG_PANIC)
    later = await fake.send_message(fake.watched, env.alice, INTERP_PANIC)
    await env.reply_to(later)
    await asyncio.sleep(QUIET)
    assert env.replies_to(from_bot) == [] and env.replies_to(itself) == []
    # the fake echoes the bot's own reply on the gateway; it must not answer that either
    assert len(fake.find("POST", r"/channels/\d+/messages")) == 1


async def test_cooldown_per_user_and_per_channel(start: Starter) -> None:
    env = await start(cooldowns=L.Cooldowns(L.CooldownPolicy(per_user=2, per_channel=3, window=60)))
    fake = env.fake
    first = [await fake.send_message(fake.watched, env.alice, AVG_PANIC) for _ in range(3)]
    ids = {m["id"] for m in first}
    # two of alice's three are answered (which two depends on which analysis finishes first)
    await fake.wait_for(lambda r: r.method == "POST" and replied_to(r) in ids, count=2)
    bob = await fake.send_message(fake.watched, env.bob, AVG_PANIC)
    await env.reply_to(bob)  # bob has his own allowance
    carol = fake.user("carol")
    flood = await fake.send_message(fake.watched, carol, AVG_PANIC)  # the channel is full now
    elsewhere = await fake.send_message(fake.thread, carol, AVG_PANIC)
    await env.reply_to(elsewhere)
    await asyncio.sleep(QUIET)
    assert sum(len(env.replies_to(m)) for m in first) == 2 and env.replies_to(flood) == []
    assert len(fake.find("POST", r"/channels/\d+/messages")) == 4


async def test_command_cooldown_answers_with_a_short_message(start: Starter) -> None:
    env = await start(command_cooldowns=L.Cooldowns(L.CooldownPolicy(1, 10, 60)))
    fake = env.fake
    first = await fake.slash_command(
        "panic", {"text": AVG_PANIC}, user=env.alice, channel=fake.general
    )
    await fake.wait_callback(first)
    second = await fake.slash_command(
        "panic", {"text": AVG_PANIC}, user=env.alice, channel=fake.general
    )
    callback = await fake.wait_callback(second)
    assert re.fullmatch(
        texts.COOLDOWN.replace("{seconds}", r"\d+"), callback.body["data"]["content"]
    )


async def test_reconnect_is_left_to_discord_py(start: Starter) -> None:
    env = await start()
    fake = env.fake
    await fake.request_reconnect()
    await asyncio.wait_for(fake.resumed.wait(), 15)
    assert fake.resumes[0]["session_id"] == "fake-session"
    assert fake.resumes[0]["token"] == "fake-token"
    message = await fake.send_message(fake.watched, env.alice, AVG_PANIC)
    await env.reply_to(message)
    # the drop showed while it lasted, and the client is connected again
    assert env.bot.health.connected and env.bot.health.errors == {"disconnected": 1}


async def test_without_the_message_content_intent_a_paste_arrives_empty(start: Starter) -> None:
    """Why the bot asks for message content: without it Discord blanks others' messages."""
    env = await start()  # the fake, running; a second, plain client with fewer intents
    fake = env.fake
    seen: list[discord.Message] = []
    intents = discord.Intents.none()
    intents.guilds = intents.guild_messages = True

    class Listener(discord.Client):
        async def on_message(self, message: discord.Message) -> None:
            seen.append(message)

    other = Listener(intents=intents, guild_ready_timeout=0.05)
    task = asyncio.create_task(other.start("fake-token"))
    try:
        await asyncio.wait_for(other.wait_until_ready(), 15)
        assert fake.identify is not None and fake.identify["intents"] == (1 << 0) | (1 << 9)
        attachment = fake.attachment("panic.log", AVG_PANIC.encode())
        await fake.send_message(fake.watched, env.alice, AVG_PANIC, attachments=[attachment])
        await eventually(lambda: seen)
        assert seen[0].content == "" and seen[0].attachments == []
    finally:
        await other.close()
        await asyncio.wait_for(task, 5)


class BrokenTriage:
    def __init__(self, catalog: Any) -> None:
        self.catalog = catalog

    def analyse(self, text: str) -> Any:
        raise RuntimeError("matcher exploded")


async def test_errors_reach_the_user_as_a_short_message(start: Starter, triage: Triage) -> None:
    env = await start(triage=BrokenTriage(triage.catalog))
    fake = env.fake
    interaction = await fake.slash_command(
        "panic", {"text": AVG_PANIC}, user=env.alice, channel=fake.general
    )
    await fake.wait_callback(interaction)
    edit = await fake.wait_request(
        "PATCH", rf"/webhooks/{fake.app_id}/{interaction.token}/messages/@original"
    )
    assert edit.body["content"] == texts.SOMETHING_WENT_WRONG
    # a paste that breaks the matcher gets no reply and no traceback anywhere
    message = await fake.send_message(fake.watched, env.alice, AVG_PANIC)
    menu = await fake.message_command(
        texts.EXPLAIN_MENU, message, user=env.bob, channel=fake.watched
    )
    await fake.wait_callback(menu)
    await fake.wait_request("PATCH", rf"/webhooks/{fake.app_id}/{menu.token}/messages/@original")
    assert env.replies_to(message) == []
    assert not any("Traceback" in repr(r.body) or "exploded" in repr(r.body) for r in fake.requests)


class BrokenFeedbackStore(Store):
    def record_feedback(self, *args: Any, **kwargs: Any) -> None:
        raise OSError("disk full")


async def test_a_failing_button_answers_privately_and_keeps_the_answer(start: Starter) -> None:
    env = await start(store_class=BrokenFeedbackStore)
    fake = env.fake
    message = await fake.send_message(fake.watched, env.alice, AVG_PANIC)
    reply = env.reply_message(await env.reply_to(message))
    before = dict(reply)
    click = await fake.click(reply, L.feedback_id("up", AVG_POOL), user=env.bob)
    callback = await fake.wait_callback(click)
    assert callback.body["data"]["content"] == texts.SOMETHING_WENT_WRONG
    assert callback.body["data"]["flags"] & EPHEMERAL
    assert fake.messages[reply["id"]] == before


async def test_run_discord_entry_point(tmp_path: Path, triage: Triage) -> None:
    async with patched_discord() as fake:
        settings = FakeSettings(discord_channel_ids=(int(fake.watched["id"]),))
        store = Store(tmp_path / "run.sqlite3")
        task = asyncio.create_task(run_discord(settings, triage, store))
        try:
            await asyncio.wait_for(fake.ready.wait(), 15)
            alice = fake.user("alice")
            message = await fake.send_message(fake.watched, alice, AVG_PANIC)
            await fake.wait_for(lambda r: r.method == "POST" and replied_to(r) == message["id"])
        finally:
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            store.close()


async def test_an_uncatalogued_paste_gets_no_reply_but_feeds_the_gaps_list(start: Starter) -> None:
    env = await start()
    fake = env.fake
    unknown = (
        "thread 'main' panicked at /home/u/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/"
        "wgpu-core-0.19.0/src/device/mod.rs:100:5:\nDevice lost: the GPU went away\n"
    )
    message = await fake.send_message(fake.watched, env.alice, unknown)
    rows = await eventually(lambda: env.store.list_uncatalogued())
    assert [row["subject"] for row in rows] == [f"{fake.watched['id']}/{message['id']}"]
    assert rows[0]["platform"] == "discord" and rows[0]["crate"] == "wgpu-core"
    await asyncio.sleep(QUIET)
    assert env.replies_to(message) == []


# ---------------------------------------------------------------------- the store


class LockWatchingStore(Store):
    """The real store, saying when a write starts (on the store's thread); it waits for a lock
    as long as the test may hold one."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, busy_timeout=60.0)
        self.writing = threading.Event()

    def replace_uncatalogued(self, *args: Any, **kwargs: Any) -> None:
        self.writing.set()
        super().replace_uncatalogued(*args, **kwargs)


async def test_a_locked_database_never_stalls_the_gateway(start: Starter, tmp_path: Path) -> None:
    env = await start(store_class=LockWatchingStore)
    fake = env.fake
    store = env.store
    assert isinstance(store, LockWatchingStore)
    holder = sqlite3.connect(tmp_path / "triage.sqlite3", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    try:
        message = await fake.send_message(fake.watched, env.alice, AVG_PANIC)
        # the handler has reached its first write and waits for the lock, off the event loop
        assert await asyncio.to_thread(store.writing.wait, 30)
        # meanwhile the loop keeps the gateway alive and serves everyone else
        beats = fake.heartbeats
        await fake.request_heartbeat()
        await eventually(lambda: fake.heartbeats > beats)
        command = await fake.slash_command(
            "panic", {"text": INTERP_PANIC}, user=env.bob, channel=fake.general
        )
        await fake.wait_callback(command)
        edit = await fake.wait_request(
            "PATCH", rf"/webhooks/{fake.app_id}/{command.token}/messages/@original"
        )
        assert INTERPOLATE in embed_text(edit.body)
        assert env.replies_to(message) == []  # the paste's answer still waits for the store
    finally:
        holder.execute("ROLLBACK")  # the other process lets go
        holder.close()
    reply = await env.reply_to(message)
    assert AVG_POOL in embed_text(reply.body)
    stored = await eventually(lambda: store.get_discord_reply(int(message["id"])))
    assert stored["reply_id"] == int(env.reply_message(reply)["id"])
    assert len(env.replies_to(message)) == 1


def delete_database(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)


async def test_a_store_that_cannot_be_used_costs_the_memory_of_answers_not_the_answers(
    start: Starter, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="bot.discord.client")
    env = await start()
    fake = env.fake
    db = tmp_path / "triage.sqlite3"
    delete_database(db)  # deleted while the bot runs: whatever it wrote there would be lost
    first = await fake.send_message(fake.watched, env.alice, AVG_PANIC)
    reply = env.reply_message(await env.reply_to(first))
    second = await fake.send_message(fake.thread, env.bob, INTERP_PANIC)
    await env.reply_to(second)
    # a replay is still not answered twice (this process remembers what it read)
    await fake.dispatch("MESSAGE_CREATE", first)
    # an edit whose answer cannot be looked up is not followed (a second answer would be worse)
    await fake.edit_message(first, INTERP_PANIC)
    # a vote that cannot be stored is not thanked for
    click = await fake.click(reply, L.feedback_id("up", AVG_POOL), user=env.bob)
    callback = await fake.wait_callback(click)
    assert callback.body["data"]["content"] == texts.SOMETHING_WENT_WRONG
    assert callback.body["data"]["flags"] & EPHEMERAL
    await asyncio.sleep(EDIT_DEBOUNCE + QUIET)
    assert len(env.replies_to(first)) == 1
    assert fake.find("PATCH", r"/channels/\d+/messages/\d+") == []
    assert not db.exists(), "nothing was written to a file nobody will read again"
    problems = [r for r in caplog.records if "the store cannot be used" in r.getMessage()]
    assert [(r.levelname, r.getMessage()) for r in problems] == [
        (
            "ERROR",
            f"discord: the store cannot be used (the database file {db} was deleted while the "
            "bot runs); answers are not remembered",
        )
    ], "logged once"
    assert "Traceback" not in caplog.text


WGPU_DISPATCH_PANIC = (
    "```\nthread '<unnamed>' panicked at /home/u/.cargo/registry/src/"
    "index.crates.io-1949cf8c6b5b557f/wgpu-25.0.2/src/backend/wgpu_core.rs:1051:30:\n"
    "wgpu error: Validation Error\n\nCaused by:\n  In a ComputePass\n"
    "  In a dispatch command, indirect:false\n"
    "  Each current dispatch group size dimension ([65536, 1, 1]) must be less or equal to "
    "65535\n```"
)


async def test_show_more_reuses_the_analysed_answer(start: Starter) -> None:
    # the first view and Show more both say what the paste showed: the payload's cause, the
    # user's values and whose code it is, not the handler record's generic answer
    env = await start()
    fake = env.fake
    message = await fake.send_message(fake.watched, env.alice, WGPU_DISPATCH_PANIC)
    reply = env.reply_message(await env.reply_to(message))
    first_view = str(reply.get("embeds"))
    assert "[65536, 1, 1] workgroups" in first_view
    assert "wgpu" in first_view and "a dependency" in first_view
    ids = ",".join(re.findall(r"triage:more:([A-Za-z0-9_.,-]+)", str(reply)))
    assert ids
    click = await fake.click(reply, f"triage:more:{ids}", user=env.bob)
    callback = await fake.wait_callback(click)
    more = str(callback.body["data"]["embeds"])
    assert "Tensor::chunk" in more and "over 65535 workgroups per dimension" in more
