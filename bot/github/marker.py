"""Recognising the bot's own comment by the renderer's hidden marker."""

from __future__ import annotations

from bot.render.github import MARKER_PREFIX, parse_marker

__all__ = ["MARKER_PREFIX", "is_own_comment", "looks_like_bot_comment", "parse_marker"]


def looks_like_bot_comment(body: object) -> bool:
    """True when a comment body starts with the bot's hidden marker."""
    return isinstance(body, str) and body.lstrip().startswith(MARKER_PREFIX)


def is_own_comment(body: object, author: str | None, bot_login: str) -> bool:
    """The bot's own comment: its marker, written by the bot's identity. Anyone can paste the
    marker; only the author tells the bot's comment from a user's."""
    return looks_like_bot_comment(body) and (author or "").lower() == bot_login.lower()
