"""A fake Discord for tests: the REST API and the gateway websocket, served on 127.0.0.1.

The real discord.py talks to it over HTTP and a websocket. Point it here with `patched_discord()`
(sets `discord.http.Route.BASE` and `DiscordWebSocket.DEFAULT_GATEWAY`, restored on exit).

What it knows:
- gateway: HELLO, heartbeat ACKs (`request_heartbeat()` asks for one now, with op 1, as Discord
  may), IDENTIFY -> READY + GUILD_CREATE (one guild with text channels,
  a forum and threads), RESUME -> RESUMED; `dispatch(event, data)` sends any event to the bot,
  as its intents allow (no message events without guild messages; no content, attachments or
  embeds in others' messages without message content).
- REST: the calls a bot makes at login and command sync, messages (create, edit, delete, fetch),
  interaction callbacks and their webhook follow-ups, attachments served over HTTP.
- every REST request is recorded (`requests`), and tests can wait for one (`wait_for`).
- `rate_limit(method, path_regex, retry_after)` answers the next matching request with a 429
  carrying `Via`, `Retry-After` and the X-RateLimit headers, as Discord does.
- builders for realistic payloads: user messages (with attachments), edits, deletes, bulk
  deletes, slash commands, autocomplete, message context menus, button clicks and modal submits.
- it refuses what Discord refuses: a wrong or revoked token (401 on REST, close code 4004 on the
  gateway), the Message Content intent when the application's flags do not allow it (close code
  4014), a reply to a message that no longer exists unless `fail_if_not_exists` is false, embeds
  and components over Discord's limits, duplicate custom ids (400, code 50035).
- attachments honour HTTP Range requests (206 with Content-Range), as Discord's CDN does.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import aiohttp
from aiohttp import web

JSON = "application/json"  # exactly; discord.py reads `; charset=utf-8` as text

# Interaction types and callback types (Discord API numbers).
PING, APPLICATION_COMMAND, MESSAGE_COMPONENT, AUTOCOMPLETE, MODAL_SUBMIT = 1, 2, 3, 4, 5
CHANNEL_MESSAGE, DEFERRED_CHANNEL_MESSAGE, DEFERRED_UPDATE, UPDATE_MESSAGE = 4, 5, 6, 7
AUTOCOMPLETE_RESULT, MODAL = 8, 9
ALL_PERMISSIONS = (1 << 41) - 1
# A plain member: View Channel, Send Messages, Read Message History (no Manage Messages).
MEMBER_PERMISSIONS = (1 << 10) | (1 << 11) | (1 << 16)
MESSAGE_CONTENT_INTENT = 1 << 15
GUILD_MESSAGES_INTENT = 1 << 9
MESSAGE_EVENTS = ("MESSAGE_CREATE", "MESSAGE_UPDATE", "MESSAGE_DELETE", "MESSAGE_DELETE_BULK")
# Application flags: GATEWAY_MESSAGE_CONTENT (verified apps) and _LIMITED (under 100 servers).
APP_MESSAGE_CONTENT = 1 << 18
APP_MESSAGE_CONTENT_LIMITED = 1 << 19
# Discord's limits on what a message may carry (a 400 with code 50035 past them).
CONTENT_LIMIT = 2000
EMBEDS_LIMIT = 10
EMBED_TITLE, EMBED_DESCRIPTION, EMBED_FIELDS = 256, 4096, 25
FIELD_NAME, FIELD_VALUE, FOOTER_TEXT, AUTHOR_NAME = 256, 1024, 2048, 256
EMBED_TOTAL = 6000  # characters in all embeds of a message together
ACTION_ROWS, ROW_BUTTONS, CUSTOM_ID, BUTTON_LABEL = 5, 5, 100, 80
CHOICES, CHOICE_NAME = 25, 100


def _now() -> str:
    return datetime.now(UTC).isoformat()


@dataclass
class Request:
    method: str
    path: str  # without the /api/v10 prefix, e.g. "/channels/1/messages"
    query: dict[str, str]
    headers: dict[str, str]
    body: Any  # parsed JSON, or the multipart payload_json, or None
    status: int = 0  # what the fake answered

    def __repr__(self) -> str:  # short, for assertion messages
        return f"<{self.method} {self.path} -> {self.status}>"


@dataclass
class RateLimitRule:
    method: str
    pattern: re.Pattern[str]
    retry_after: float
    remaining: int  # how many more requests get a 429
    is_global: bool = False


@dataclass
class Interaction:
    """One INTERACTION_CREATE the fake sent, and the bot's answers to it."""

    id: str
    token: str
    payload: dict[str, Any]
    callbacks: list[Request] = field(default_factory=list)


class FakeDiscord:
    API = "/api/v10"

    def __init__(self) -> None:
        self._ids = itertools.count(1_100_000_000_000_000_000)
        self.app_id = self.next_id()
        self.bot_user = self._user(self.app_id, "triage-bot", bot=True)
        self.owner = self._user(self.next_id(), "owner")
        self.guild_id = self.next_id()
        self.channels: dict[str, dict[str, Any]] = {}
        self.messages: dict[str, dict[str, Any]] = {}  # every message, by id
        self.files: dict[str, tuple[bytes, str]] = {}  # attachment path -> (body, content type)
        self.files_served: list[str] = []  # attachment downloads, in order
        # attachment requests: (path, Range header or None, status, bytes sent)
        self.file_requests: list[tuple[str, str | None, int, int]] = []
        self.honour_ranges = True  # False: attachments answer 200 with the whole body, as a
        # server without Range support would
        self.token = "fake-token"  # the one token REST and the gateway accept
        self.app_flags = APP_MESSAGE_CONTENT_LIMITED  # the portal's Message Content switch: on
        self.identifies: list[dict[str, Any]] = []  # every IDENTIFY, in order
        self.refused_logins = 0  # how many REST requests to cut off before answering (outage)
        self.requests: list[Request] = []
        self.interactions: dict[str, Interaction] = {}
        self.identify: dict[str, Any] | None = None
        self.rate_limits: list[RateLimitRule] = []
        self._sockets: list[web.WebSocketResponse] = []
        self._intents: dict[int, int] = {}  # intents each gateway connection identified with
        self._seq = 0
        self._changed = asyncio.Condition()
        self.ready = asyncio.Event()
        self.resumed = asyncio.Event()
        self.resumes: list[dict[str, Any]] = []  # RESUME payloads the bot sent
        self.heartbeats = 0  # heartbeats the bot sent (each one ACKed)
        self._runner: web.AppRunner | None = None
        self.port = 0
        # A guild with a watched channel, an unwatched one, a forum, and threads in them.
        self.watched = self.add_channel("help", type=0)
        self.general = self.add_channel("general", type=0)
        self.forum = self.add_channel("questions", type=15)
        self.thread = self.add_thread("my panic", parent=self.watched)
        self.forum_post = self.add_thread("burn panics on wgpu", parent=self.forum)

    # ---------------------------------------------------------------- ids and payload shapes

    def next_id(self) -> str:
        return str(next(self._ids))

    @staticmethod
    def _user(user_id: str, name: str, *, bot: bool = False) -> dict[str, Any]:
        return {
            "id": user_id,
            "username": name,
            "discriminator": "0",
            "global_name": None,
            "avatar": None,
            "bot": bot,
            "public_flags": 0,
        }

    def user(self, name: str, *, bot: bool = False) -> dict[str, Any]:
        return self._user(self.next_id(), name, bot=bot)

    def member(self, user: dict[str, Any], permissions: int = MEMBER_PERMISSIONS) -> dict[str, Any]:
        return {
            "user": user,
            "roles": [],
            "joined_at": _now(),
            "deaf": False,
            "mute": False,
            "flags": 0,
            "nick": None,
            "permissions": str(permissions),
        }

    def add_channel(self, name: str, *, type: int = 0) -> dict[str, Any]:
        channel = {
            "id": self.next_id(),
            "type": type,
            "guild_id": self.guild_id,
            "name": name,
            "position": len(self.channels),
            "permission_overwrites": [],
            "nsfw": False,
            "parent_id": None,
            "topic": None,
            "rate_limit_per_user": 0,
            "last_message_id": None,
        }
        if type == 15:
            channel.update(available_tags=[], default_forum_layout=0, flags=0)
        self.channels[channel["id"]] = channel
        return channel

    def add_thread(self, name: str, *, parent: dict[str, Any]) -> dict[str, Any]:
        thread = {
            "id": self.next_id(),
            "type": 11,
            "guild_id": self.guild_id,
            "parent_id": parent["id"],
            "owner_id": self.owner["id"],
            "name": name,
            "message_count": 0,
            "member_count": 1,
            "rate_limit_per_user": 0,
            "last_message_id": None,
            "flags": 0,
            "thread_metadata": {
                "archived": False,
                "auto_archive_duration": 1440,
                "archive_timestamp": _now(),
                "locked": False,
            },
        }
        self.channels[thread["id"]] = thread
        return thread

    def guild_payload(self) -> dict[str, Any]:
        everyone = {
            "id": self.guild_id,
            "name": "@everyone",
            "permissions": str(ALL_PERMISSIONS),
            "position": 0,
            "color": 0,
            "hoist": False,
            "managed": False,
            "mentionable": False,
            "flags": 0,
        }
        plain = [c for c in self.channels.values() if c["type"] != 11]
        threads = [c for c in self.channels.values() if c["type"] == 11]
        return {
            "id": self.guild_id,
            "name": "burn",
            "icon": None,
            "owner_id": self.owner["id"],
            "roles": [everyone],
            "emojis": [],
            "stickers": [],
            "features": [],
            "member_count": 3,
            "large": False,
            "unavailable": False,
            "channels": plain,
            "threads": threads,
            "members": [self.member(self.bot_user)],
            "voice_states": [],
            "presences": [],
            "stage_instances": [],
            "guild_scheduled_events": [],
            "soundboard_sounds": [],
            "joined_at": _now(),
            "verification_level": 0,
            "default_message_notifications": 0,
            "explicit_content_filter": 0,
            "mfa_level": 0,
            "nsfw_level": 0,
            "premium_tier": 0,
            "preferred_locale": "en-US",
            "system_channel_flags": 0,
        }

    def attachment(
        self, filename: str, body: bytes, content_type: str | None = "text/plain; charset=utf-8"
    ) -> dict[str, Any]:
        """Serve `body` over HTTP and return an attachment payload pointing at it.

        `content_type=None` leaves the field out, as Discord does for types it does not sniff.
        """
        attachment_id = self.next_id()
        path = f"/attachments/{attachment_id}/{filename}"
        self.files[path] = (body, content_type or "application/octet-stream")
        url = f"http://127.0.0.1:{self.port}{path}"
        data = {
            "id": attachment_id,
            "filename": filename,
            "size": len(body),
            "url": url,
            "proxy_url": url,
        }
        if content_type is not None:
            data["content_type"] = content_type
        return data

    def message_payload(
        self,
        channel: dict[str, Any],
        author: dict[str, Any],
        content: str,
        *,
        attachments: list[dict[str, Any]] | None = None,
        message_id: str | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        data = {
            "id": message_id or self.next_id(),
            "channel_id": channel["id"],
            "guild_id": self.guild_id,
            "author": author,
            "content": content,
            "timestamp": _now(),
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": "@everyone" in content or "@here" in content,
            "mentions": [],
            "mention_roles": [],
            "attachments": attachments or [],
            "embeds": [],
            "pinned": False,
            "type": 0,
            "flags": 0,
            "components": [],
        }
        if not author.get("bot"):
            member = self.member(author)
            del member["user"]
            data["member"] = member
        data.update(extra)
        return data

    # ---------------------------------------------------------------- gateway events

    def _as_intents_allow(
        self, event: str, data: dict[str, Any], intents: int
    ) -> dict[str, Any] | None:
        """What Discord sends a bot for this event given its intents (None: nothing)."""
        if event in MESSAGE_EVENTS and not intents & GUILD_MESSAGES_INTENT:
            return None
        if (
            event in ("MESSAGE_CREATE", "MESSAGE_UPDATE")
            and not intents & MESSAGE_CONTENT_INTENT
            and data.get("author", {}).get("id") != self.app_id
        ):
            return dict(data, content="", attachments=[], embeds=[], components=[])
        return data

    async def dispatch(self, event: str, data: dict[str, Any]) -> None:
        self._seq += 1
        for ws in list(self._sockets):
            visible = self._as_intents_allow(event, data, self._intents.get(id(ws), 0))
            if visible is not None and not ws.closed:
                await ws.send_str(json.dumps({"op": 0, "t": event, "s": self._seq, "d": visible}))

    async def send_message(
        self,
        channel: dict[str, Any],
        author: dict[str, Any],
        content: str,
        *,
        attachments: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """A user posts a message: store it and dispatch MESSAGE_CREATE."""
        data = self.message_payload(channel, author, content, attachments=attachments)
        self.messages[data["id"]] = data
        await self.dispatch("MESSAGE_CREATE", data)
        return data

    async def edit_message(self, message: dict[str, Any], content: str) -> dict[str, Any]:
        data = dict(message, content=content, edited_timestamp=_now())
        data["mention_everyone"] = "@everyone" in content or "@here" in content
        self.messages[data["id"]] = data
        await self.dispatch("MESSAGE_UPDATE", data)
        return data

    async def delete_message(self, message: dict[str, Any]) -> None:
        self.messages.pop(message["id"], None)
        await self.dispatch(
            "MESSAGE_DELETE",
            {"id": message["id"], "channel_id": message["channel_id"], "guild_id": self.guild_id},
        )

    async def bulk_delete(self, messages: list[dict[str, Any]]) -> None:
        """A moderator removes several messages at once: one MESSAGE_DELETE_BULK."""
        for message in messages:
            self.messages.pop(message["id"], None)
        await self.dispatch(
            "MESSAGE_DELETE_BULK",
            {
                "ids": [m["id"] for m in messages],
                "channel_id": messages[0]["channel_id"],
                "guild_id": self.guild_id,
            },
        )

    async def close_gateway(self, code: int) -> None:
        """Close every gateway connection with `code` (4004: token revoked, 4014: intents)."""
        for ws in list(self._sockets):
            if not ws.closed:
                await ws.close(code=code)

    async def revoke_token(self) -> None:
        """The token is reset in the portal: REST answers 401, the gateway closes with 4004."""
        self.token = "reset-" + self.token
        await self.close_gateway(4004)

    async def request_reconnect(self) -> None:
        """Ask the bot to reconnect (op 7), as Discord does before moving a session."""
        for ws in list(self._sockets):
            if not ws.closed:
                await ws.send_str(json.dumps({"op": 7, "d": None}))

    async def request_heartbeat(self) -> None:
        """Ask the bot for a heartbeat now (op 1); its event loop sends it."""
        for ws in list(self._sockets):
            if not ws.closed:
                await ws.send_str(json.dumps({"op": 1, "d": self._seq}))

    # ---------------------------------------------------------------- interactions

    async def _interact(
        self,
        type: int,
        user: dict[str, Any],
        channel: dict[str, Any],
        data: dict[str, Any] | None,
        *,
        permissions: int = MEMBER_PERMISSIONS,
        **extra: Any,
    ) -> Interaction:
        interaction_id = self.next_id()
        token = f"tok-{interaction_id}"
        payload: dict[str, Any] = {
            "id": interaction_id,
            "application_id": self.app_id,
            "type": type,
            "token": token,
            "version": 1,
            "guild_id": self.guild_id,
            "guild": {"id": self.guild_id, "locale": "en-US", "features": []},
            "channel_id": channel["id"],
            "channel": {k: v for k, v in channel.items() if k != "last_message_id"},
            "member": self.member(user, permissions),
            "app_permissions": str(ALL_PERMISSIONS),
            "locale": "en-US",
            "guild_locale": "en-US",
            "entitlements": [],
            "authorizing_integration_owners": {"0": self.guild_id},
            "context": 0,
            "attachment_size_limit": 10 * 1024 * 1024,
        }
        if data is not None:
            payload["data"] = data
        payload.update(extra)
        interaction = Interaction(interaction_id, token, payload)
        self.interactions[interaction_id] = interaction
        await self.dispatch("INTERACTION_CREATE", payload)
        return interaction

    def _command(self, name: str, type: int = 1) -> dict[str, Any]:
        return {"id": self.next_id(), "name": name, "type": type, "guild_id": self.guild_id}

    async def slash_command(
        self,
        name: str,
        options: dict[str, Any],
        *,
        user: dict[str, Any],
        channel: dict[str, Any],
        attachments: dict[str, dict[str, Any]] | None = None,
    ) -> Interaction:
        """`/name` with string/bool options (and attachment options, given by payload)."""
        opts: list[dict[str, Any]] = []
        for key, value in options.items():
            option_type = 5 if isinstance(value, bool) else 4 if isinstance(value, int) else 3
            opts.append({"name": key, "type": option_type, "value": value})
        data = self._command(name)
        data["options"] = opts
        if attachments:
            for key, attachment in attachments.items():
                opts.append({"name": key, "type": 11, "value": attachment["id"]})
            data["resolved"] = {"attachments": {a["id"]: a for a in attachments.values()}}
        return await self._interact(APPLICATION_COMMAND, user, channel, data)

    async def autocomplete(
        self,
        name: str,
        focused: str,
        value: str,
        *,
        user: dict[str, Any],
        channel: dict[str, Any],
    ) -> Interaction:
        data = self._command(name)
        data["options"] = [{"name": focused, "type": 3, "value": value, "focused": True}]
        return await self._interact(AUTOCOMPLETE, user, channel, data)

    async def message_command(
        self, name: str, target: dict[str, Any], *, user: dict[str, Any], channel: dict[str, Any]
    ) -> Interaction:
        """A message context menu entry used on `target`."""
        data = self._command(name, type=3)
        data["target_id"] = target["id"]
        data["resolved"] = {"messages": {target["id"]: target}}
        return await self._interact(APPLICATION_COMMAND, user, channel, data)

    async def click(
        self,
        message: dict[str, Any],
        custom_id: str,
        *,
        user: dict[str, Any],
        permissions: int = MEMBER_PERMISSIONS,
    ) -> Interaction:
        """A user clicks the button `custom_id` under `message`."""
        channel = self.channels[message["channel_id"]]
        data = {"custom_id": custom_id, "component_type": 2}
        return await self._interact(
            MESSAGE_COMPONENT, user, channel, data, permissions=permissions, message=message
        )

    async def submit_modal(
        self,
        modal: dict[str, Any],
        values: dict[str, str],
        *,
        user: dict[str, Any],
        channel: dict[str, Any],
    ) -> Interaction:
        """Submit a modal the bot opened (`modal` is the data of its type-9 callback)."""

        def answer(component: dict[str, Any]) -> dict[str, Any] | None:
            if component["type"] == 1:
                inner = [answer(c) for c in component.get("components", [])]
                return {"type": 1, "components": [c for c in inner if c]}
            if component["type"] == 18:
                return {"type": 18, "id": 0, "component": answer(component["component"])}
            if component["type"] == 4:
                custom_id = component["custom_id"]
                return {"type": 4, "custom_id": custom_id, "value": values.get(custom_id, "")}
            return None

        components = [c for c in (answer(c) for c in modal["components"]) if c]
        data = {"custom_id": modal["custom_id"], "components": components}
        return await self._interact(MODAL_SUBMIT, user, channel, data)

    # ---------------------------------------------------------------- waiting and inspection

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def wait_for(
        self, predicate: Callable[[Request], bool], *, timeout: float = 15.0, count: int = 1
    ) -> list[Request]:
        """Wait until `count` recorded requests satisfy `predicate`; return them."""

        async def run() -> list[Request]:
            async with self._changed:
                while True:
                    found = [r for r in self.requests if predicate(r)]
                    if len(found) >= count:
                        return found
                    await self._changed.wait()

        return await asyncio.wait_for(run(), timeout)

    async def wait_request(
        self, method: str, pattern: str, *, timeout: float = 15.0, count: int = 1
    ) -> Request:
        regex = re.compile(pattern)
        found = await self.wait_for(
            lambda r: r.method == method and bool(regex.fullmatch(r.path)),
            timeout=timeout,
            count=count,
        )
        return found[count - 1]

    async def wait_callback(self, interaction: Interaction, *, timeout: float = 15.0) -> Request:
        """The bot's callback (initial response) to `interaction`."""
        path = f"/interactions/{interaction.id}/{interaction.token}/callback"
        found = await self.wait_for(lambda r: r.path == path, timeout=timeout)
        return found[0]

    def find(self, method: str, pattern: str) -> list[Request]:
        regex = re.compile(pattern)
        return [r for r in self.requests if r.method == method and regex.fullmatch(r.path)]

    def bot_messages(self, channel: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        return [
            m
            for m in self.messages.values()
            if m["author"]["id"] == self.app_id
            and (channel is None or m["channel_id"] == channel["id"])
        ]

    def rate_limit(
        self, method: str, pattern: str, *, retry_after: float = 0.1, times: int = 1
    ) -> None:
        self.rate_limits.append(RateLimitRule(method, re.compile(pattern), retry_after, times))

    # ---------------------------------------------------------------- the server

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.API}"

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/gateway"

    async def start(self) -> None:
        app = web.Application(client_max_size=32 * 1024 * 1024)
        app.router.add_get("/gateway", self._gateway)
        app.router.add_get("/attachments/{id}/{name}", self._file)
        app.router.add_route("*", self.API + "/{tail:.*}", self._rest)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        # attachment payloads built before start() carry port 0; none are.

    async def close(self) -> None:
        for ws in list(self._sockets):
            await ws.close()
        if self._runner:
            await self._runner.cleanup()

    async def _file(self, request: web.Request) -> web.Response:
        item = self.files.get(request.path)
        self.files_served.append(request.path)
        wanted = request.headers.get("Range")
        if item is None:
            self.file_requests.append((request.path, wanted, 404, 0))
            return web.Response(status=404)
        body, content_type = item
        headers = {"Content-Type": content_type, "Accept-Ranges": "bytes"}
        if wanted is None or not self.honour_ranges:
            self.file_requests.append((request.path, wanted, 200, len(body)))
            return web.Response(body=body, headers=headers)
        span = _byte_range(wanted, len(body))
        if span is None:
            self.file_requests.append((request.path, wanted, 416, 0))
            return web.Response(status=416, headers={"Content-Range": f"bytes */{len(body)}"})
        first, last = span
        part = body[first : last + 1]
        self.file_requests.append((request.path, wanted, 206, len(part)))
        headers["Content-Range"] = f"bytes {first}-{last}/{len(body)}"
        return web.Response(status=206, body=part, headers=headers)

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        self._sockets.append(ws)
        await ws.send_str(json.dumps({"op": 10, "d": {"heartbeat_interval": 41250}}))
        try:
            async for msg in ws:
                if msg.type != aiohttp.WSMsgType.TEXT:
                    continue
                frame = json.loads(msg.data)
                op = frame.get("op")
                if op == 1:
                    self.heartbeats += 1
                    await ws.send_str(json.dumps({"op": 11}))
                elif op == 2:
                    self.identify = frame["d"]
                    self.identifies.append(frame["d"])
                    self._intents[id(ws)] = int(frame["d"].get("intents", 0))
                    if frame["d"].get("token") != self.token:
                        await ws.close(code=4004, message=b"Authentication failed.")
                    elif frame["d"].get("intents", 0) & MESSAGE_CONTENT_INTENT and not (
                        self.app_flags & (APP_MESSAGE_CONTENT | APP_MESSAGE_CONTENT_LIMITED)
                    ):
                        await ws.close(code=4014, message=b"Disallowed intent(s).")
                    else:
                        await self._ready(ws)
                elif op == 6:
                    self.resumes.append(frame["d"])
                    # a resumed session keeps the intents it identified with
                    self._intents[id(ws)] = int((self.identify or {}).get("intents", 0))
                    self.resumed.set()
                    self._seq += 1
                    await ws.send_str(
                        json.dumps({"op": 0, "t": "RESUMED", "s": self._seq, "d": {}})
                    )
        finally:
            self._sockets.remove(ws)
            self._intents.pop(id(ws), None)
        return ws

    async def _ready(self, ws: web.WebSocketResponse) -> None:
        ready = {
            "v": 10,
            "user": self.bot_user,
            "guilds": [{"id": self.guild_id, "unavailable": True}],
            "session_id": "fake-session",
            "resume_gateway_url": self.gateway_url,
            "application": {"id": self.app_id, "flags": self.app_flags},
            "private_channels": [],
            "relationships": [],
        }
        for event, data in (("READY", ready), ("GUILD_CREATE", self.guild_payload())):
            self._seq += 1
            await ws.send_str(json.dumps({"op": 0, "t": event, "s": self._seq, "d": data}))
        self.ready.set()

    async def _rest(self, request: web.Request) -> web.Response:
        path = "/" + request.match_info["tail"]
        body: Any = None
        if request.content_type == "multipart/form-data":
            form = await request.post()
            raw = form.get("payload_json")
            body = json.loads(raw) if isinstance(raw, str) else None
        elif request.can_read_body:
            text = await request.text()
            body = json.loads(text) if text else None
        record = Request(request.method, path, dict(request.query), dict(request.headers), body)
        self.requests.append(record)
        if self.refused_logins > 0:
            # An outage: the connection drops without an answer.
            self.refused_logins -= 1
            record.status = -1
            await self._notify()
            assert request.transport is not None
            request.transport.close()
            return web.Response(status=503)
        if record.headers.get("Authorization") != f"Bot {self.token}" and not path.startswith(
            ("/interactions/", "/webhooks/")
        ):
            response = _json({"message": "401: Unauthorized", "code": 0}, status=401)
            record.status = 401
            await self._notify()
            return response
        try:
            response = self._limited(record) or self._refused(record) or self._route(record)
        except KeyError:
            response = _json({"message": "Unknown", "code": 10008}, status=404)
        record.status = response.status
        await self._notify()
        return response

    def _limited(self, record: Request) -> web.Response | None:
        for rule in self.rate_limits:
            if (
                rule.remaining > 0
                and rule.method == record.method
                and rule.pattern.fullmatch(record.path)
            ):
                rule.remaining -= 1
                headers = {
                    "Via": "1.1 google",
                    "Retry-After": str(max(1, round(rule.retry_after))),
                    "X-RateLimit-Limit": "5",
                    "X-RateLimit-Remaining": "0",
                    "X-RateLimit-Reset-After": str(rule.retry_after),
                    "X-RateLimit-Bucket": "fake-bucket",
                    "X-RateLimit-Scope": "user",
                }
                body = {
                    "message": "You are being rate limited.",
                    "retry_after": rule.retry_after,
                    "global": rule.is_global,
                }
                return _json(body, status=429, headers=headers)
        return None

    def _refused(self, r: Request) -> web.Response | None:
        """A 400 for what Discord refuses in a message, a reply or an interaction answer."""
        parts = r.path.strip("/").split("/")
        body = r.body if isinstance(r.body, dict) else {}
        problems: list[tuple[str, str, str]] = []
        if parts[0] == "channels" and len(parts) >= 3 and parts[2] == "messages":
            if r.method in ("POST", "PATCH") and len(parts) <= 4:
                problems = message_problems(body)
            reference = body.get("message_reference") if r.method == "POST" else None
            if (
                reference
                and str(reference.get("message_id")) not in self.messages
                and reference.get("fail_if_not_exists", True) is not False
            ):
                problems.append(("message_reference", "REPLIES_UNKNOWN_MESSAGE", "Unknown message"))
        elif parts[0] == "interactions" and parts[-1] == "callback" and r.method == "POST":
            kind = body.get("type")
            data = body.get("data") or {}
            if kind in (CHANNEL_MESSAGE, UPDATE_MESSAGE):
                problems = [(f"data.{p}", c, m) for p, c, m in message_problems(data)]
            elif kind == AUTOCOMPLETE_RESULT:
                problems = choice_problems(data.get("choices") or [])
        elif parts[0] == "webhooks" and r.method in ("POST", "PATCH"):
            problems = message_problems(body)
        if not problems:
            return None
        errors: dict[str, Any] = {}
        for path, code, message in problems:
            node = errors
            for key in path.split("."):
                node = node.setdefault(key, {})
            node.setdefault("_errors", []).append({"code": code, "message": message})
        return _json({"message": "Invalid Form Body", "code": 50035, "errors": errors}, status=400)

    def _route(self, r: Request) -> web.Response:
        parts = r.path.strip("/").split("/")
        method = r.method
        if method == "GET" and r.path == "/users/@me":
            return _json(self.bot_user)
        if method == "GET" and r.path in ("/oauth2/applications/@me", "/applications/@me"):
            return _json(self._app_info())
        if method == "GET" and r.path in ("/gateway", "/gateway/bot"):
            return _json({"url": self.gateway_url, "shards": 1})
        if parts[0] == "applications" and parts[-1] == "commands" and method == "PUT":
            return _json([self._registered(c) for c in r.body or []])
        if parts[0] == "applications" and parts[-1] == "commands" and method == "GET":
            return _json([])
        if parts[0] == "channels" and len(parts) == 2 and method == "GET":
            return _json(self.channels[parts[1]])
        if parts[0] == "channels" and len(parts) >= 3 and parts[2] == "messages":
            return self._channel_messages(r, parts)
        if parts[0] == "interactions" and parts[-1] == "callback" and method == "POST":
            return self._callback(r, parts[1])
        if parts[0] == "webhooks" and len(parts) >= 3:
            return self._webhook(r, parts)
        return _json({"message": "404: Not Found", "code": 0}, status=404)

    def _app_info(self) -> dict[str, Any]:
        return {
            "id": self.app_id,
            "name": "triage-bot",
            "icon": None,
            "description": "",
            "bot_public": True,
            "bot_require_code_grant": False,
            "owner": self.owner,
            "verify_key": "0" * 64,
            "flags": self.app_flags,
            "summary": "",
            "rpc_origins": [],
        }

    def _registered(self, command: dict[str, Any]) -> dict[str, Any]:
        return dict(
            command,
            description=command.get("description", ""),  # "" for context menus
            id=self.next_id(),
            application_id=self.app_id,
            version=self.next_id(),
            default_member_permissions=command.get("default_member_permissions"),
        )

    def _bot_message(self, channel_id: str, body: dict[str, Any], **extra: Any) -> dict[str, Any]:
        channel = self.channels.get(channel_id) or {"id": channel_id}
        data = self.message_payload(channel, self.bot_user, body.get("content") or "", **extra)
        data["embeds"] = body.get("embeds") or []
        data["components"] = body.get("components") or []
        data["flags"] = body.get("flags") or 0
        reference = body.get("message_reference")
        if reference:
            data["message_reference"] = {
                "type": 0,
                "message_id": str(reference["message_id"]),
                "channel_id": channel_id,
                "guild_id": self.guild_id,
            }
            data["type"] = 19
        return data

    def _channel_messages(self, r: Request, parts: list[str]) -> web.Response:
        channel_id = parts[1]
        if len(parts) == 3 and r.method == "POST":
            data = self._bot_message(channel_id, r.body or {})
            self.messages[data["id"]] = data
            # Discord echoes the bot's own messages on the gateway; the bot must ignore them.
            task = asyncio.get_running_loop().create_task(self.dispatch("MESSAGE_CREATE", data))
            task.add_done_callback(lambda _t: None)
            return _json(data)
        message_id = parts[3]
        message = self.messages[message_id]  # KeyError -> 404 Unknown Message
        if r.method == "GET":
            return _json(message)
        if r.method == "PATCH":
            update = {k: v for k, v in (r.body or {}).items() if k != "allowed_mentions"}
            message.update(update, edited_timestamp=_now())
            return _json(message)
        if r.method == "DELETE":
            del self.messages[message_id]
            return web.Response(status=204)
        return _json({"message": "405: Method Not Allowed", "code": 0}, status=405)

    def _callback(self, r: Request, interaction_id: str) -> web.Response:
        interaction = self.interactions[interaction_id]
        interaction.callbacks.append(r)
        kind = r.body["type"]
        data = r.body.get("data") or {}
        channel_id = interaction.payload["channel_id"]
        info: dict[str, Any] = {"id": interaction_id, "type": interaction.payload["type"]}
        response: dict[str, Any] = {"interaction": info}
        if kind in (CHANNEL_MESSAGE, DEFERRED_CHANNEL_MESSAGE):
            message = self._bot_message(
                channel_id,
                data,
                interaction_metadata={"id": interaction_id, "type": 2, "user": self.owner},
                webhook_id=self.app_id,
                application_id=self.app_id,
            )
            self.messages[message["id"]] = message
            original = interaction.payload.setdefault("original", message["id"])
            info.update(
                response_message_id=original,
                response_message_loading=kind == DEFERRED_CHANNEL_MESSAGE,
                response_message_ephemeral=bool(data.get("flags", 0) & 64),
            )
            response["resource"] = {"type": kind, "message": message}
        elif kind == UPDATE_MESSAGE:
            message = self.messages[interaction.payload["message"]["id"]]
            message.update({k: v for k, v in data.items() if k != "allowed_mentions"})
            response["resource"] = {"type": kind, "message": message}
        return _json(response)

    def _webhook(self, r: Request, parts: list[str]) -> web.Response:
        # /webhooks/{app}/{token}[/messages/{id|@original}]
        token = parts[2]
        interaction = next((i for i in self.interactions.values() if i.token == token), None)
        if interaction is None:
            return _json({"message": "Unknown Webhook", "code": 10015}, status=404)
        interaction.callbacks.append(r)
        channel_id = interaction.payload["channel_id"]
        if len(parts) == 3 and r.method == "POST":
            message = self._bot_message(channel_id, r.body or {}, webhook_id=self.app_id)
            self.messages[message["id"]] = message
            return _json(message)
        target = parts[4] if len(parts) >= 5 else "@original"
        if target == "@original":
            target = interaction.payload.get("original") or interaction.payload["message"]["id"]
        message = self.messages[target]
        if r.method == "PATCH":
            message.update({k: v for k, v in (r.body or {}).items() if k != "allowed_mentions"})
            return _json(message)
        if r.method == "DELETE":
            del self.messages[target]
            return web.Response(status=204)
        return _json(message)


def _too_long(value: Any, limit: int) -> bool:
    return isinstance(value, str) and len(value) > limit


def message_problems(body: dict[str, Any]) -> list[tuple[str, str, str]]:
    """What Discord would refuse in a message body: (field path, error code, message)."""
    problems: list[tuple[str, str, str]] = []
    longer = "BASE_TYPE_MAX_LENGTH"
    if _too_long(body.get("content"), CONTENT_LIMIT):
        problems.append(("content", longer, f"Must be {CONTENT_LIMIT} or fewer in length."))
    embeds = body.get("embeds") or []
    if len(embeds) > EMBEDS_LIMIT:
        problems.append(("embeds", "BASE_TYPE_MAX_LENGTH", f"Must be {EMBEDS_LIMIT} or fewer."))
    total = 0
    for i, embed in enumerate(embeds):
        texts = [
            ("title", embed.get("title"), EMBED_TITLE),
            ("description", embed.get("description"), EMBED_DESCRIPTION),
            ("footer.text", (embed.get("footer") or {}).get("text"), FOOTER_TEXT),
            ("author.name", (embed.get("author") or {}).get("name"), AUTHOR_NAME),
        ]
        fields = embed.get("fields") or []
        if len(fields) > EMBED_FIELDS:
            problems.append((f"embeds.{i}.fields", longer, f"Must be {EMBED_FIELDS} or fewer."))
        for j, item in enumerate(fields):
            texts.append((f"fields.{j}.name", item.get("name"), FIELD_NAME))
            texts.append((f"fields.{j}.value", item.get("value"), FIELD_VALUE))
            if not item.get("name") or not item.get("value"):
                problems.append((f"embeds.{i}.fields.{j}", "BASE_TYPE_REQUIRED", "Required."))
        for path, value, limit in texts:
            total += len(value) if isinstance(value, str) else 0
            if _too_long(value, limit):
                problems.append((f"embeds.{i}.{path}", longer, f"Must be {limit} or fewer."))
    if total > EMBED_TOTAL:
        problems.append(("embeds", "MAX_EMBED_SIZE_EXCEEDED", "Embed size exceeds maximum size."))
    rows = body.get("components") or []
    if len(rows) > ACTION_ROWS:
        problems.append(("components", longer, f"Must be {ACTION_ROWS} or fewer in length."))
    seen: set[str] = set()
    for i, row in enumerate(rows):
        items = row.get("components") or []
        if len(items) > ROW_BUTTONS:
            problems.append((f"components.{i}.components", longer, "Must be 5 or fewer."))
        for j, item in enumerate(items):
            custom_id = item.get("custom_id")
            if custom_id is None:
                continue
            where = f"components.{i}.components.{j}.custom_id"
            if custom_id in seen:
                problems.append((where, "COMPONENT_CUSTOM_ID_DUPLICATED", "Duplicate custom id."))
            seen.add(custom_id)
            if _too_long(custom_id, CUSTOM_ID):
                problems.append((where, longer, f"Must be {CUSTOM_ID} or fewer in length."))
            if _too_long(item.get("label"), BUTTON_LABEL):
                problems.append((where[: -len("custom_id")] + "label", longer, "Too long."))
    return problems


def choice_problems(choices: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """What Discord would refuse in an autocomplete answer."""
    problems: list[tuple[str, str, str]] = []
    if len(choices) > CHOICES:
        problems.append(("data.choices", "BASE_TYPE_MAX_LENGTH", f"Must be {CHOICES} or fewer."))
    for i, item in enumerate(choices):
        for key in ("name", "value"):
            value = item.get(key)
            if not isinstance(value, str) or not 1 <= len(value) <= CHOICE_NAME:
                problems.append((f"data.choices.{i}.{key}", "BASE_TYPE_BAD_LENGTH", "1 to 100."))
    return problems


def _byte_range(header: str, size: int) -> tuple[int, int] | None:
    """The (first, last) byte of a single `bytes=` range, or None when it cannot be served."""
    unit, _, spec = header.partition("=")
    if unit.strip() != "bytes" or "," in spec:
        return None
    start, _, end = spec.strip().partition("-")
    try:
        if not start:  # the last N bytes
            count = int(end)
            return (max(0, size - count), size - 1) if count > 0 and size else None
        first = int(start)
        last = min(int(end), size - 1) if end else size - 1
    except ValueError:
        return None
    return (first, last) if first <= last else None


def _json(data: Any, *, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    # `web.json_response` would add `; charset=utf-8`, which discord.py reads as plain text.
    return web.Response(
        body=json.dumps(data).encode(),
        status=status,
        headers={"Content-Type": JSON, **(headers or {})},
    )


@contextlib.asynccontextmanager
async def patched_discord() -> AsyncIterator[FakeDiscord]:
    """Start a FakeDiscord and point discord.py at it; restore everything on exit."""
    import discord.gateway
    import discord.http
    import yarl

    fake = FakeDiscord()
    await fake.start()
    old_base = discord.http.Route.BASE
    old_gateway = discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY
    discord.http.Route.BASE = fake.api_base
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(fake.gateway_url)
    try:
        yield fake
    finally:
        discord.http.Route.BASE = old_base
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = old_gateway
        await fake.close()
