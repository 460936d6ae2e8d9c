"""doctor's Discord check: the token logs in as a bot, and the Message Content intent is on."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from bot.cli.doctor.check import FAIL, NETWORK_TIMEOUT, OK, SKIP, Check
from bot.config.settings import Settings

# None: discord.py's own base (discord.http.Route.BASE). Tests point it at a stub.
DISCORD_API_BASE: str | None = None
# Discord application flags: may read message content (verified / unverified apps).
MESSAGE_CONTENT_FLAGS = (1 << 18) | (1 << 19)


def _discord_get(base: str, path: str, token: str) -> tuple[int, Any]:
    request = urllib.request.Request(
        base.rstrip("/") + path,
        headers={
            "Authorization": f"Bot {token}",
            "User-Agent": "DiscordBot (https://github.com/tracel-ai/panic-triage, 0.1) doctor",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=NETWORK_TIMEOUT) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        body = exc.read()
        try:
            return exc.code, json.loads(body or b"null")
        except ValueError:
            return exc.code, body.decode(errors="replace")


def check_discord(settings: Settings) -> Check:
    if not settings.discord_enabled:
        return Check("discord", SKIP, "not configured (no DISCORD_TOKEN)")
    token = settings.discord_token or ""
    base = DISCORD_API_BASE
    if base is None:
        import discord.http  # discord.py only when a token is set

        base = discord.http.Route.BASE
    try:
        status, me = _discord_get(base, "/users/@me", token)
    except OSError as exc:
        return Check(
            "discord",
            FAIL,
            f"cannot reach {base}: {exc}",
            fix="check the network (the bot needs HTTPS to discord.com and its gateway)",
        )
    if status == 401:
        return Check(
            "discord",
            FAIL,
            "DISCORD_TOKEN is rejected (401 Unauthorized)",
            fix="reset the token in the developer portal (Bot -> Reset Token) and set "
            "DISCORD_TOKEN to the new one",
        )
    if status != 200 or not isinstance(me, dict):
        return Check("discord", FAIL, f"GET /users/@me answered {status}: {me}")
    name = me.get("username", "?")
    details = [f"watching {len(settings.discord_channel_ids)} channel(s)"]
    if not me.get("bot"):
        return Check(
            "discord",
            FAIL,
            f"DISCORD_TOKEN belongs to {name}, a user account, not a bot",
            fix="use the token from the application's Bot page",
        )
    status, app = _discord_get(base, "/oauth2/applications/@me", token)
    summary = f"logged in as {name} (id {me.get('id')})"
    if status == 200 and isinstance(app, dict):
        flags = int(app.get("flags") or 0)
        if not flags & MESSAGE_CONTENT_FLAGS:
            return Check(
                "discord",
                FAIL,
                f"{summary}, but the Message Content intent is off",
                details,
                "switch on Message Content Intent in the developer portal (Bot -> Privileged "
                "Gateway Intents); without it Discord refuses the bot's connection",
            )
        details.append("Message Content intent: on")
    return Check("discord", OK, summary, details)
