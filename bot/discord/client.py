"""The discord.py client: gateway events in, `listener` decides, replies out; the run loop.

Kept thin: everything that can be decided without discord.py lives in `bot.discord.listener`;
the buttons are in `views`, the slash commands in `app_commands`, reading attachments in
`attachments`.
Started by `triage-bot serve` through `run_discord(settings, triage, store, db=...)`.

Store calls run on the store's own thread (`bot.store.thread`), never on the event loop: a
database locked by another process would otherwise stall the gateway for its busy timeout. A
store that cannot be used (damaged, its file gone, locked past the timeout) costs the memory of
an answer, not the answer: it is logged once, and `/healthz` shows it under "store".

An answer is queued in the store before it is sent (`bot.discord.outbox`): one Discord refuses
for now is sent later from there, or dropped past TRIAGE_DISCORD_ANSWER_DEADLINE; at start,
answers to messages deleted meanwhile are removed.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Mapping
from typing import Any, Protocol, TypeVar

import aiohttp
import discord
from discord import app_commands

from bot.app import Triage
from bot.catalog.loader import Catalog
from bot.core.analysis import Analysis
from bot.core.match.projects import Projects
from bot.core.match.releases import ReleaseHistory
from bot.discord import listener as L
from bot.discord import outbox
from bot.discord.app_commands import error_command, explain_menu, panic_command
from bot.discord.attachments import AttachmentReader, incoming
from bot.discord.listener import IncomingMessage
from bot.discord.status import DiscordStatus
from bot.discord.views import NONE, DismissButton, FeedbackButton, ShowMoreButton, answer_view
from bot.render import texts
from bot.render.answer.build import build_answer
from bot.render.discord import render_message, render_more, render_more_for_records
from bot.stats.report import uncatalogued_items
from bot.store.interface import TriageStore
from bot.store.thread import StoreAccess, StoreUnavailable, store_unavailable

log = logging.getLogger(__name__)

# The gateway intents, and nothing more (bot/discord/SETUP.md says why each):
# guilds (channels and threads, to know where a message was posted), guild messages (pastes,
# edits, deletes, bulk deletes in servers), message content (privileged: the text of a paste).
INTENTS = discord.Intents.none()
INTENTS.guilds = True
INTENTS.guild_messages = True
INTENTS.message_content = True
DEFAULT_EDIT_DEBOUNCE = 2.0  # seconds an edit waits for the next one before it is followed
DEFAULT_ANSWER_DEADLINE = 120.0  # seconds an answer is retried before it is dropped
SEEN_MESSAGES = 10_000  # message ids remembered against replayed MESSAGE_CREATE events
# Retrying a failed start (a network error or a 5xx while logging in): 1 s, 2 s, 4 s … 5 min.
FIRST_RETRY = 1.0
MAX_RETRY = 300.0
# What the bot needs in a server, and nothing more (bot/discord/SETUP.md says why).
PERMISSIONS = discord.Permissions(
    view_channel=True,
    send_messages=True,
    send_messages_in_threads=True,
    embed_links=True,
    read_message_history=True,
)
SCOPES = ("bot", "applications.commands")


def invite_url(application_id: int) -> str:
    """The link that adds the bot to a server with its scopes and permissions."""
    return discord.utils.oauth_url(application_id, permissions=PERMISSIONS, scopes=SCOPES)


class DiscordSettings(Protocol):
    """What the Discord side reads from `bot.config.settings.Settings`."""

    @property
    def discord_token(self) -> str | None: ...

    @property
    def discord_channel_ids(self) -> Collection[int]: ...

    @property
    def discord_guild_id(self) -> int | None: ...


# The answer as send/edit keywords (content, embeds, record_ids, show_more): render_message's.
Renderer = Callable[[Analysis, Catalog, ReleaseHistory | None], dict[str, Any]]


class _RepliesIn(Protocol):
    """A channel the bot's replies are in (every kind of channel but a group DM, which a bot
    is never in)."""

    def get_partial_message(self, message_id: int, /) -> discord.PartialMessage: ...


T = TypeVar("T")


def _field(row: Mapping[str, Any] | None, name: str) -> Any:
    """A column of a store row, whether the store returns mappings or objects."""
    if row is None:
        return None
    if isinstance(row, dict):
        return row.get(name)
    try:
        return row[name]
    except (TypeError, KeyError, IndexError):
        return getattr(row, name, None)


@dataclasses.dataclass
class _Held:
    lock: asyncio.Lock
    users: int = 0


class TriageBot(discord.Client):
    """Answers pasted panics in watched channels and serves the commands everywhere."""

    def __init__(
        self,
        *,
        settings: DiscordSettings,
        triage: Triage,
        store: TriageStore,
        renderer: Renderer | None = None,
        cooldowns: L.Cooldowns | None = None,
        command_cooldowns: L.Cooldowns | None = None,
        attachment_cap: int = L.DEFAULT_ATTACHMENT_CAP,
        text_cap: int = L.DEFAULT_TEXT_CAP,
        http_session: aiohttp.ClientSession | None = None,
        status: DiscordStatus | None = None,
        edit_debounce: float = DEFAULT_EDIT_DEBOUNCE,
        db: StoreAccess | None = None,
        answer_deadline: float = DEFAULT_ANSWER_DEADLINE,
        **options: Any,
    ) -> None:
        options.setdefault("allowed_mentions", NONE)
        super().__init__(intents=INTENTS, **options)
        self.health = status or DiscordStatus()
        self.settings = settings
        self.triage = triage
        self.store = store
        # The store's thread: the process's one under `serve`, else one of the bot's own.
        self.db = db if db is not None else StoreAccess(store)
        self._owns_db = db is None
        self._store_problem: str | None = None  # what was logged while the store fails
        self.renderer = renderer or self._render_default
        self.watch = L.Watch(frozenset(settings.discord_channel_ids or ()), None)
        self.cooldowns = cooldowns or L.Cooldowns()
        self.command_cooldowns = command_cooldowns or L.Cooldowns(
            L.CooldownPolicy(per_user=5, per_channel=30, window=60.0)
        )
        self.attachments = AttachmentReader(attachment_cap, text_cap, http_session)
        self.tree = app_commands.CommandTree(self)
        self.tree.on_error = self._on_tree_error  # type: ignore[method-assign]
        self.records: list[tuple[str, str]] = []  # (id, message) of every record
        self._parents: dict[int, int | None] = {}  # channel id -> parent id, for uncached threads
        self._locks: dict[int, _Held] = {}
        # Messages already read once: a replayed MESSAGE_CREATE is not answered again (the store
        # remembers answered ones across restarts; this covers the rest, bounded).
        self._seen: collections.OrderedDict[int, None] = collections.OrderedDict()
        # Edits wait `edit_debounce` seconds for the next one; only the last is followed.
        self.edit_debounce = edit_debounce
        self._pending_edits: dict[int, asyncio.Task[None]] = {}
        # Answers are queued in the store and retried until `answer_deadline` (bot.discord.outbox)
        self.answer_deadline = answer_deadline
        self._outbox_task: asyncio.Task[None] | None = None
        self._sweep_task: asyncio.Task[None] | None = None

    # ------------------------------------------------------------------ start-up

    async def setup_hook(self) -> None:
        self.add_dynamic_items(FeedbackButton, DismissButton, ShowMoreButton)
        self.tree.add_command(panic_command)
        self.tree.add_command(error_command)
        self.tree.add_command(explain_menu)
        self.records = [(r.id, r.error_message) for r in self.triage.catalog]
        guild_id = self.settings.discord_guild_id
        try:
            if guild_id:
                guild = discord.Object(id=guild_id)
                self.tree.copy_global_to(guild=guild)
                await self.tree.sync(guild=guild)
            else:
                await self.tree.sync()
        except discord.HTTPException:
            log.exception("could not sync the application commands")

    async def on_ready(self) -> None:
        self.watch = L.Watch(self.watch.channel_ids, self.user.id if self.user else None)
        self.health.set_connected(str(self.user))
        if self._outbox_task is None:  # once per client: on_ready comes again after a resume
            self._outbox_task = asyncio.create_task(self._work_outbox())
            self._sweep_task = asyncio.create_task(self._sweep_orphans())
        log.info(
            "discord: connected as %s, watching %d channels", self.user, len(self.watch.channel_ids)
        )

    async def on_resumed(self) -> None:
        self.health.set_connected()

    async def on_disconnect(self) -> None:
        self.health.set_disconnected()

    # ------------------------------------------------------------------ helpers

    async def analyse(self, text: str) -> Analysis:
        return await asyncio.to_thread(self.triage.analyse, text)

    async def _store(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(*args)` on the store's thread; StoreUnavailable when the store cannot be used now
        (damaged, its file gone, locked past its busy timeout, a PostgreSQL server out of
        reach), logged once until it works."""
        problem = self.db.problem()
        if problem is None:
            try:
                result = await self.db.call(fn, *args)
            except Exception as exc:
                if not store_unavailable(exc):
                    raise  # a bug, not the database's state: the handler's own log shows it
                problem = f"{type(exc).__name__}: {exc}"
            else:
                if self._store_problem is not None:
                    log.info("discord: the store works again")
                    self._store_problem = None
                return result
        if self._store_problem is None:
            log.error("discord: the store cannot be used (%s); answers are not remembered", problem)
        self._store_problem = problem
        raise StoreUnavailable(problem)

    async def _remember(self, fn: Callable[..., T], *args: Any) -> T | None:
        """A store call an answer can do without: None when the store cannot be used."""
        try:
            return await self._store(fn, *args)
        except StoreUnavailable:
            return None

    async def _quietly(self, fn: Callable[..., T], *args: Any) -> T | None:
        """A store call of the background work (the queue, the sweep): None when the store
        cannot be used, without logging it again or saying it works again (the answers' calls
        say that)."""
        if self.db.problem() is not None:
            return None
        try:
            return await self.db.call(fn, *args)
        except Exception as exc:
            if not store_unavailable(exc):
                raise
            return None

    async def _remember_gaps(self, msg: IncomingMessage, analysis: Analysis) -> None:
        """Uncatalogued panics pasted in watched channels feed `stats`' list of records to write."""
        items = uncatalogued_items(analysis, L.answered_ids(analysis))
        subject = f"{msg.channel_id}/{msg.message_id}"
        await self._remember(self.store.replace_uncatalogued, "discord", subject, items)

    def render(
        self, analysis: Analysis, *, author_id: int | None, notes: Collection[str] = ()
    ) -> dict[str, Any]:
        """Keyword arguments for send/edit: the rendered answer, buttons, no mentions.

        `notes` (say, that the middle of a large attachment was skipped) go in the content.
        """
        return self.send_kwargs(self.answer_payload(analysis, notes), author_id)

    def _render_default(
        self, analysis: Analysis, catalog: Catalog, history: ReleaseHistory | None
    ) -> dict[str, Any]:
        """The answer as on GitHub: with the catalog's projects, a dependency's panic says
        whose code it is in the first view."""
        return _default_renderer(
            analysis,
            catalog,
            history,
            public_url=getattr(self.settings, "triage_public_url", None),
            projects=self.triage.projects,
        )

    async def more_payload(
        self, message: discord.Message | None, record_ids: list[str]
    ) -> dict[str, Any]:
        """Show more: the rest of the answer as it was analysed (the user's values, the
        dependency and history notes), from the message the answer replies to; the records'
        own answers when that message is gone or no longer holds them."""
        ref = message.reference if message is not None else None
        original: discord.Message | None = None
        if ref is not None and ref.message_id is not None and message is not None:
            try:
                original = await message.channel.fetch_message(ref.message_id)
            except (discord.HTTPException, AttributeError):
                original = None
        if original is not None and original.content:
            analysis = await self.analyse(original.content)
            wanted = [i for i in analysis.answered if i.best and i.best.record_id in record_ids]
            if {i.best.record_id for i in wanted if i.best} >= set(record_ids):
                answer = build_answer(
                    Analysis(analysis.verdict, tuple(wanted), analysis.fingerprint),
                    self.triage.catalog,
                    history=self.triage.history,
                    projects=self.triage.projects,
                    max_sections=len(wanted),
                )
                return render_more(answer)
        return render_more_for_records(self.triage.catalog, record_ids, self.triage.history)

    def answer_payload(self, analysis: Analysis, notes: Collection[str] = ()) -> dict[str, Any]:
        """The rendered answer as plain JSON, as the store keeps a queued one."""
        rendered = self.renderer(analysis, self.triage.catalog, self.triage.history)
        return {
            "content": "\n".join(filter(None, [rendered.get("content"), *notes])) or None,
            "embeds": list(rendered.get("embeds") or []),
            # vote only on the records the message shows (the renderer says which)
            "record_ids": list(rendered.get("record_ids") or L.answered_ids(analysis)),
            "show_more": rendered.get("show_more"),
        }

    @staticmethod
    def send_kwargs(payload: Mapping[str, Any], author_id: int | None) -> dict[str, Any]:
        """Keyword arguments for send/edit from an answer payload: its buttons, no mentions."""
        return {
            "content": payload.get("content"),
            "embeds": [discord.Embed.from_dict(e) for e in payload.get("embeds") or []],
            "view": answer_view(
                tuple(payload.get("record_ids") or ()), author_id, payload.get("show_more")
            ),
            "allowed_mentions": NONE,
        }

    async def close(self) -> None:
        for task in self._pending_edits.values():
            task.cancel()
        self._pending_edits.clear()
        for background in (self._outbox_task, self._sweep_task):
            if background is not None:
                background.cancel()
        await super().close()
        await self.attachments.close()
        if self._owns_db:
            self.db.close()

    async def _with_parent(self, msg: IncomingMessage) -> IncomingMessage:
        """Fill in the parent of a thread discord.py did not have cached."""
        if msg.parent_id is not None or msg.channel_id in self.watch.channel_ids:
            return msg
        if msg.channel_id not in self._parents:
            parent = None
            if self.get_channel(msg.channel_id) is None:
                try:
                    channel = await self.fetch_channel(msg.channel_id)
                    parent = getattr(channel, "parent_id", None)
                except discord.HTTPException:
                    parent = None
            self._parents[msg.channel_id] = parent
        parent_id = self._parents[msg.channel_id]
        if parent_id is None:
            return msg
        return dataclasses.replace(msg, parent_id=parent_id)

    # ------------------------------------------------------------------ messages

    async def on_message(self, message: discord.Message) -> None:
        try:
            await self._on_message(message)
        except Exception:
            log.exception("discord: failed to answer message %s", message.id)

    @contextlib.asynccontextmanager
    async def _exclusive(self, message_id: int) -> AsyncIterator[None]:
        """One handler at a time per message: an edit waits for the answer to the original."""
        entry = self._locks.setdefault(message_id, _Held(asyncio.Lock()))
        entry.users += 1
        try:
            async with entry.lock:
                yield
        finally:
            entry.users -= 1
            if entry.users == 0:
                del self._locks[message_id]

    async def _on_message(self, message: discord.Message) -> None:
        async with self._exclusive(message.id):
            await self._answer_message(message)

    async def _first_time(self, message_id: int) -> bool:
        """True the first time a message is read; a replayed MESSAGE_CREATE gets False (without
        a store, only this process's memory of messages tells)."""
        if message_id in self._seen:
            return False
        if await self._remember(self.store.get_discord_reply, message_id) is not None:
            return False
        if await self._remember(self.store.discord_write_waiting, message_id):
            return False  # its answer waits in the store for Discord
        self._seen[message_id] = None
        while len(self._seen) > SEEN_MESSAGES:
            self._seen.popitem(last=False)
        return True

    async def _answer_message(self, message: discord.Message) -> None:
        msg = await self._with_parent(incoming(message))
        if L.ignore_reason(msg, self.watch):
            return
        if not await self._first_time(msg.message_id):
            log.info("discord: message %s seen before, not answered again", msg.message_id)
            return
        text, notes = await self.attachments.read_message(msg, message.attachments)
        analysis = await self.analyse(text)
        await self._remember_gaps(msg, analysis)
        if L.plan_message(analysis, has_reply=False) != "reply":
            return
        if not self.cooldowns.allow(msg.author_id, msg.channel_id):
            log.info("discord: cooldown, not answering message %s", msg.message_id)
            return
        await self._answer(message, msg, analysis, notes, list(L.answered_ids(analysis)))

    async def _answer(
        self,
        message: discord.Message,
        msg: IncomingMessage,
        analysis: Analysis,
        notes: Collection[str],
        ids: list[str],
    ) -> None:
        """Reply with the answer and remember the reply (edits and deletes follow it).

        The answer is queued in the store first: when Discord refuses it for now (429s past
        discord.py's own retries, 5xx, the network), the queue tries it again later."""
        payload = {**self.answer_payload(analysis, notes), "ids": ids}
        try:
            write_id: int | None = await self._store(
                self.store.queue_discord_write,
                "reply",
                msg.message_id,
                msg.channel_id,
                msg.author_id,
                payload,
                self.answer_deadline,
                outbox.HOLD,  # tried here and now; the queue's only if this fails
            )
        except StoreUnavailable:
            write_id = None  # no queue: one try, as before
        rendered = self.send_kwargs(payload, msg.author_id)
        if write_id is None:
            reply = await self._reply(message, rendered)
            if reply is not None:
                await self._remember_reply(msg, reply.id, ids)
            return
        write = {
            "id": write_id,
            "kind": "reply",
            "message_id": msg.message_id,
            "channel_id": msg.channel_id,
            "author_id": msg.author_id,
            "payload": payload,
            "attempts": 0,
            "deadline_at": self.store.clock() + self.answer_deadline,
        }
        await self._attempt(write, lambda: self._reply(message, rendered))

    async def _remember_reply(self, msg: IncomingMessage, reply_id: int, ids: list[str]) -> None:
        """The answer to `msg` is message `reply_id`, for `ids`: edits and deletes follow it."""
        await self._remember(
            self.store.put_discord_reply,
            msg.message_id,
            msg.channel_id,
            reply_id,
            msg.author_id,
            ids,
        )

    async def _reply(
        self, message: discord.Message, rendered: dict[str, Any]
    ) -> discord.Message | None:
        """Reply to `message`; None when it was deleted meanwhile (no answer left orphaned).

        The reply keeps `fail_if_not_exists` true: Discord refuses it (400) when the message is
        gone, rather than posting an answer to nothing.
        """
        try:
            return await message.reply(mention_author=False, **rendered)
        except discord.HTTPException as exc:
            if exc.status == 400 and "message_reference" in str(exc.text):
                log.info("discord: message %s was deleted before the answer", message.id)
                return None
            raise

    async def on_raw_message_edit(self, payload: discord.RawMessageUpdateEvent) -> None:
        if "content" not in payload.data and "attachments" not in payload.data:
            return  # an embed resolved or a flag changed: not an edit by the author
        # Debounce: a newer edit replaces the one still waiting; the last one is followed.
        waiting = self._pending_edits.pop(payload.message_id, None)
        if waiting is not None:
            waiting.cancel()
        task = asyncio.create_task(self._follow_after_pause(payload))
        self._pending_edits[payload.message_id] = task

    async def _follow_after_pause(self, payload: discord.RawMessageUpdateEvent) -> None:
        await asyncio.sleep(self.edit_debounce)  # cancelled here by a newer edit
        # From here on this edit is followed even if another comes (that one waits its turn).
        if self._pending_edits.get(payload.message_id) is asyncio.current_task():
            del self._pending_edits[payload.message_id]
        try:
            async with self._exclusive(payload.message_id):
                await self._follow_edit(payload.message)
        except Exception:
            log.exception("discord: failed to follow the edit of message %s", payload.message_id)

    async def _follow_edit(self, message: discord.Message) -> None:
        channel = message.channel
        if isinstance(channel, discord.GroupChannel):
            return  # a bot is never in a group DM, so it has no answer there
        msg = await self._with_parent(incoming(message))
        try:
            row = await self._store(self.store.get_discord_reply, msg.message_id)
        except StoreUnavailable:
            return  # whether it has an answer is unknown: a second answer would be worse
        if row is None and L.ignore_reason(msg, self.watch):
            return
        if row is not None and L.ignore_reason(msg, self.watch) in ("self", "bot", "webhook"):
            return
        if row is None:
            # an answer still waiting for Discord answers the old text: the edit decides anew
            await self._remember(self.store.drop_discord_writes_for, msg.message_id)
        text, notes = await self.attachments.read_message(msg, message.attachments)
        analysis = await self.analyse(text)
        await self._remember_gaps(msg, analysis)
        action = L.plan_message(analysis, has_reply=row is not None)
        ids = list(L.answered_ids(analysis))
        if action == "edit":
            reply_id = int(_field(row, "reply_id"))
            partial = channel.get_partial_message(reply_id)
            try:
                await partial.edit(**self.render(analysis, author_id=msg.author_id, notes=notes))
            except discord.NotFound:
                # someone removed our answer
                await self._remember(self.store.delete_discord_reply, msg.message_id)
                return
            await self._remember_reply(msg, reply_id, ids)
        elif action == "delete":
            await self._delete_reply(channel, row)
            await self._remember(self.store.delete_discord_reply, msg.message_id)
        elif action == "reply":
            if not self.cooldowns.allow(msg.author_id, msg.channel_id):
                return
            await self._answer(message, msg, analysis, notes, ids)

    async def on_raw_message_delete(self, payload: discord.RawMessageDeleteEvent) -> None:
        await self._forget(payload.message_id, payload.channel_id, payload.guild_id)

    async def on_raw_bulk_message_delete(self, payload: discord.RawBulkMessageDeleteEvent) -> None:
        """A moderator removed many messages at once: remove each answer to one of them."""
        for message_id in sorted(payload.message_ids):
            await self._forget(message_id, payload.channel_id, payload.guild_id)

    async def _forget(self, message_id: int, channel_id: int, guild_id: int | None) -> None:
        """The message is gone: delete the answer to it, if any."""
        waiting = self._pending_edits.pop(message_id, None)
        if waiting is not None:
            waiting.cancel()
        try:
            async with self._exclusive(message_id):
                if await self._remember(self.store.drop_discord_writes_for, message_id):
                    self.health.wrote("source-deleted")  # an answer still waiting for Discord
                row = await self._remember(self.store.get_discord_reply, message_id)
                if row is None:
                    return  # no answer, or none the store can name now
                reply_channel = int(_field(row, "channel_id") or channel_id)
                channel = self.get_partial_messageable(reply_channel, guild_id=guild_id)
                try:
                    await self._delete_reply(channel, row)
                except (discord.HTTPException, aiohttp.ClientError, OSError, TimeoutError) as exc:
                    await self._queue_delete(message_id, reply_channel, row, exc)
                    return
                await self._remember(self.store.delete_discord_reply, message_id)
        except Exception:
            log.exception("discord: failed to remove the answer to message %s", message_id)

    async def _delete_reply(self, channel: _RepliesIn, row: Mapping[str, Any] | None) -> None:
        with contextlib.suppress(discord.NotFound):
            await channel.get_partial_message(int(_field(row, "reply_id"))).delete()

    # ------------------------------------------------------------------ the queue of writes

    async def _attempt(self, write: Mapping[str, Any], send: Callable[[], Awaitable[Any]]) -> None:
        """Try one queued write; on success the store forgets it (a reply is remembered in the
        same transaction), on a failure it is retried after a backoff or dropped."""
        write_id = int(write["id"])
        try:
            result = await send()
        except discord.HTTPException as exc:
            kind = outbox.failure_kind(exc.status, str(exc.text))
            await self._write_failed(write, kind, f"{exc.status} {exc.text}"[:300])
            return
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            await self._write_failed(write, "retry", f"{type(exc).__name__}: {exc}")
            return
        if write["kind"] == "reply":
            if result is None:  # the message was deleted before the answer
                await self._remember(self.store.drop_discord_write, write_id)
                self.health.wrote("source-deleted")
                return
            await self._remember(
                self.store.discord_reply_sent,
                write_id,
                int(write["message_id"]),
                int(write["channel_id"]),
                int(result.id),
                int(write["author_id"]),
                list(write["payload"].get("ids") or []),
            )
        else:
            await self._remember(self._forget_deleted, write_id, int(write["message_id"]))
        self.health.wrote("sent")

    def _forget_deleted(self, write_id: int, message_id: int) -> None:
        """On the store's thread: an answer was deleted; forget it and the write."""
        self.store.delete_discord_reply(message_id)
        self.store.drop_discord_write(write_id)

    async def _write_failed(
        self, write: Mapping[str, Any], kind: outbox.Failure, error: str
    ) -> None:
        write_id = int(write["id"])
        attempts = int(write.get("attempts") or 0)
        now = self.store.clock()
        step = outbox.after_failure(
            kind, now=now, deadline_at=float(write["deadline_at"]), attempts=attempts
        )
        if kind == "gone":
            if write["kind"] == "reply":
                self.health.wrote("source-deleted")
                await self._remember(self.store.drop_discord_write, write_id)
            else:  # the answer is already gone
                await self._remember(self._forget_deleted, write_id, int(write["message_id"]))
                self.health.wrote("sent")
            return
        if step.delay is None:
            log.warning(
                "discord: %s for message %s dropped after %d attempts (%s)",
                write["kind"],
                write["message_id"],
                attempts + 1,
                error,
            )
            self.health.wrote("dropped")
            await self._remember(self.store.drop_discord_write, write_id)
            return
        log.info(
            "discord: %s for message %s refused (%s); retrying in %g s",
            write["kind"],
            write["message_id"],
            error,
            step.delay,
        )
        self.health.wrote("retried")
        await self._remember(self.store.retry_discord_write, write_id, step.delay, error)

    async def _send_queued(self, write: Mapping[str, Any]) -> None:
        """A write the queue handed out, under the lock of the message it answers."""
        message_id = int(write["message_id"])
        channel = self.get_partial_messageable(int(write["channel_id"]))
        if write["kind"] == "reply":
            if float(write["deadline_at"]) < self.store.clock():
                await self._write_failed(write, "refused", "past the deadline")
                return
            kwargs = self.send_kwargs(write["payload"], int(write["author_id"]))
            source = channel.get_partial_message(message_id)

            async def send() -> discord.Message | None:
                return await self._reply(source, kwargs)  # type: ignore[arg-type]

        else:
            reply = channel.get_partial_message(int(write["payload"]["reply_id"]))

            async def send() -> discord.Message | None:
                await reply.delete()
                return None

        async with self._exclusive(message_id):
            # an edit or a deletion may have replaced or dropped it while this waited
            if await self._quietly(self.store.discord_write_exists, int(write["id"])):
                await self._attempt(write, send)

    async def _work_outbox(self) -> None:
        """Send what the store holds, due, until the client closes."""
        while True:
            try:
                writes = await self._quietly(self.store.claim_discord_writes, outbox.HOLD) or []
            except Exception:
                log.exception("discord: could not read the queue of writes")
                writes = []
            for write in writes:
                try:
                    await self._send_queued(write)
                except Exception:
                    log.exception("discord: a queued write failed")
            await asyncio.sleep(outbox.POLL)

    async def _sweep_orphans(self) -> None:
        """At start: remove the answers whose message was deleted while the bot was away (or
        whose removal Discord refused then)."""
        rows = await self._quietly(self.store.list_discord_replies, outbox.ORPHAN_SWEEP) or []
        removed = 0
        for row in rows:
            message_id = int(row["message_id"])
            try:
                await self.http.get_message(int(row["channel_id"]), message_id)
                continue
            except discord.NotFound:
                pass
            except (discord.HTTPException, aiohttp.ClientError, OSError, TimeoutError) as exc:
                log.info("discord: could not check message %s at start (%s)", message_id, exc)
                continue
            channel = self.get_partial_messageable(int(row["channel_id"]))
            try:
                async with self._exclusive(message_id):
                    await self._delete_reply(channel, row)
                    await self._remember(self.store.delete_discord_reply, message_id)
            except (discord.HTTPException, aiohttp.ClientError, OSError, TimeoutError) as exc:
                await self._queue_delete(message_id, int(row["channel_id"]), row, exc)
                continue
            removed += 1
            self.health.orphans_removed += 1
        if removed:
            log.info("discord: removed %d answers to deleted messages", removed)

    async def _queue_delete(
        self, message_id: int, channel_id: int, row: Mapping[str, Any] | None, exc: BaseException
    ) -> None:
        """Discord refused to delete an answer for now: the queue tries again."""
        log.info("discord: deleting the answer to %s refused (%s); queued", message_id, exc)
        await self._remember(
            self.store.queue_discord_write,
            "delete",
            message_id,
            channel_id,
            0,
            {"reply_id": int(_field(row, "reply_id"))},
            max(self.answer_deadline, outbox.DELETE_DEADLINE),
            outbox.backoff(0),
        )

    # ------------------------------------------------------------------ interactions

    async def guarded(self, interaction: discord.Interaction, work: Awaitable[object]) -> None:
        """Run an interaction handler; any failure reaches the user as one short line."""
        try:
            await work
        except Exception as error:
            await self.report_error(interaction, error)

    async def report_error(self, interaction: discord.Interaction, error: BaseException) -> None:
        log.error("discord: interaction failed", exc_info=error)
        try:
            await self.short(interaction, texts.SOMETHING_WENT_WRONG)
        except discord.HTTPException:
            log.exception("discord: could not report the error")

    async def _on_tree_error(
        self, interaction: discord.Interaction, error: app_commands.AppCommandError
    ) -> None:
        original = getattr(error, "original", error)
        await self.report_error(interaction, original)

    async def short(self, interaction: discord.Interaction, text: str) -> None:
        """A one-line ephemeral answer; once deferred, it replaces the "thinking" message.

        A button's interaction is answered with a follow-up instead: its original message is
        the answer the button sits under, which must stay.
        """
        if interaction.response.is_done():
            if interaction.type is discord.InteractionType.component:
                await interaction.followup.send(text, ephemeral=True, allowed_mentions=NONE)
                return
            await interaction.edit_original_response(
                content=text, embeds=[], view=None, allowed_mentions=NONE
            )
        else:
            await interaction.response.send_message(text, ephemeral=True, allowed_mentions=NONE)

    def command_busy(self, interaction: discord.Interaction) -> str | None:
        """The cooldown message when this user (or channel) asked too often, else None."""
        channel_id = interaction.channel_id or 0
        wait = self.command_cooldowns.retry_after(interaction.user.id, channel_id)
        if wait > 0:
            return texts.COOLDOWN.format(seconds=max(1, round(wait)))
        self.command_cooldowns.allow(interaction.user.id, channel_id)
        return None

    async def answer_command(
        self,
        interaction: discord.Interaction,
        text: str,
        *,
        ephemeral: bool,
        notes: Collection[str] = (),
    ) -> None:
        """Answer a paste given to a command: the rendered answer, or why there is none."""
        busy = self.command_busy(interaction)
        if busy:
            await self.short(interaction, busy)
            return
        await interaction.response.defer(ephemeral=ephemeral, thinking=True)
        analysis = await self.analyse(text)
        if analysis.verdict == "match" and L.answered_ids(analysis):
            kwargs = self.render(analysis, author_id=None, notes=notes)
            await interaction.edit_original_response(**kwargs)
        elif analysis.verdict == "no-panic":
            await self.short(interaction, texts.NO_PANIC_FOUND)
        else:
            await self.short(interaction, texts.NO_CATALOGUED_PANIC)

    async def on_feedback(
        self, interaction: discord.Interaction, vote: str, record_id: str
    ) -> None:
        """Store the vote; the store keeps one per user and answer record (a new one replaces)."""
        answer_id = interaction.message.id if interaction.message else 0
        try:
            await self._store(
                self.store.record_feedback,
                "discord",
                f"{answer_id}:{record_id}",
                record_id,
                str(interaction.user.id),
                L.VOTES[vote],
            )
        except StoreUnavailable:
            # not thanked for a vote nobody will count; the store's trouble is logged once
            await self.short(interaction, texts.SOMETHING_WENT_WRONG)
            return
        await interaction.response.send_message(
            texts.VOTE_THANKS, ephemeral=True, allowed_mentions=NONE
        )

    async def on_dismiss(self, interaction: discord.Interaction, author_id: int) -> None:
        user = interaction.user
        allowed = user.id == author_id
        if not allowed and isinstance(user, discord.Member) and interaction.channel is not None:
            allowed = interaction.permissions.manage_messages
        if not allowed:
            await interaction.response.send_message(
                texts.DISMISS_NOT_YOURS, ephemeral=True, allowed_mentions=NONE
            )
            return
        await interaction.response.defer()
        message = interaction.message
        if message is None:
            return
        with contextlib.suppress(discord.NotFound):
            await message.delete()
        if message.reference and message.reference.message_id:
            await self._remember(self.store.delete_discord_reply, message.reference.message_id)

    def lookup(self, query: str) -> tuple[str, str] | None:
        """The record `/error` shows for `query`: an id, an exact message, or the best match."""
        catalog = self.triage.catalog
        record = catalog.get(query.strip())
        if record is None:
            found = catalog.by_message(query.strip())
            record = found[0] if found else None
        if record is not None:
            return record.id, record.error_message
        best = L.search_records(self.records, query, limit=1)
        return best[0] if best else None


def _default_renderer(
    analysis: Analysis,
    catalog: Catalog,
    history: ReleaseHistory | None,
    *,
    public_url: str | None = None,
    projects: Projects | None = None,
) -> dict[str, Any]:
    answer = build_answer(analysis, catalog, history=history, projects=projects)
    return render_message(answer, public_url=public_url)


# ---------------------------------------------------------------------- entry point


def failure(exc: BaseException) -> tuple[str, str, bool]:
    """(kind, what to tell the admin, fatal) for an error that ended `TriageBot.start`.

    Fatal: Discord said no (a wrong or revoked token, intents the portal does not allow, a
    refused gateway session); trying again gives the same answer. Anything else (the network,
    a 5xx, a timeout) is transient and retried with backoff.
    """
    if isinstance(exc, discord.PrivilegedIntentsRequired) or (
        isinstance(exc, discord.ConnectionClosed) and exc.code == 4014
    ):
        return (
            "intents-refused",
            "Discord refused the Message Content intent (close code 4014); switch on Message "
            "Content Intent in the developer portal (Bot -> Privileged Gateway Intents)",
            True,
        )
    if isinstance(exc, discord.LoginFailure) or (
        isinstance(exc, discord.ConnectionClosed) and exc.code == 4004
    ):
        how = "401 at login" if isinstance(exc, discord.LoginFailure) else "close code 4004"
        return (
            "token-rejected",
            f"Discord rejected DISCORD_TOKEN ({how}); reset the token in the developer portal "
            "(Bot -> Reset Token) and set DISCORD_TOKEN to the new one",
            True,
        )
    if isinstance(exc, discord.ConnectionClosed):
        return "gateway-refused", f"Discord closed the gateway with code {exc.code}", True
    if isinstance(exc, discord.HTTPException) and exc.status < 500 and exc.status != 429:
        return "gateway-refused", f"Discord answered {exc.status} at login: {exc.text}", True
    if isinstance(exc, (OSError, TimeoutError, aiohttp.ClientError, discord.DiscordException)):
        return "login-failed", f"{type(exc).__name__}: {exc}".rstrip(": "), False
    return "gateway-refused", f"{type(exc).__name__}: {exc}", True


async def run_discord(
    settings: DiscordSettings,
    triage: Triage,
    store: TriageStore,
    http_session: aiohttp.ClientSession | None = None,
    *,
    status: DiscordStatus | None = None,
    db: StoreAccess | None = None,
) -> None:
    """Run the Discord side until cancelled (started by `triage-bot serve` with a token).

    `http_session` is the process's shared aiohttp session, for reading attachments; `status`
    is where `/healthz` and `/metrics` read the client's state; `db` is the store's thread the
    process already has (the server's; without one, the Discord side runs its own).
    discord.py reconnects on its own once connected; a start that fails for a transient reason
    is retried here with backoff, and one Discord refuses (token, intents) stops Discord and
    says why.
    """
    if not settings.discord_token:
        raise ValueError("DISCORD_TOKEN is not set")
    status = status or DiscordStatus()
    own_db = StoreAccess(store) if db is None else None
    delay = FIRST_RETRY
    try:
        while True:
            bot = TriageBot(
                settings=settings,
                triage=triage,
                store=store,
                http_session=http_session,
                status=status,
                edit_debounce=getattr(settings, "discord_edit_debounce", DEFAULT_EDIT_DEBOUNCE),
                answer_deadline=getattr(
                    settings, "triage_discord_answer_deadline", DEFAULT_ANSWER_DEADLINE
                ),
                db=db if db is not None else own_db,
            )
            try:
                async with bot:
                    await bot.start(settings.discord_token)
                return  # closed on purpose
            except Exception as exc:
                kind, detail, fatal = failure(exc)
                if fatal:
                    status.set_stopped(kind, detail)
                    log.error("discord: stopped: %s", detail)
                    return
                if status.connected or status.state == "disconnected":
                    delay = FIRST_RETRY  # it was up: start the backoff over
                status.set_retrying(kind, detail, delay)
                log.warning("discord: could not start (%s); retrying in %g s", detail, delay)
            await asyncio.sleep(delay)
            delay = min(MAX_RETRY, delay * 2)
    finally:
        if own_db is not None:
            own_db.close()
