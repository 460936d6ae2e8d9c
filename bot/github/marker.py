"""Recognising the bot's own comment by the renderer's hidden marker."""

from __future__ import annotations

from bot.render.github import MARKER_PREFIX, parse_marker

__all__ = ["MARKER_PREFIX", "looks_like_bot_comment", "parse_marker"]


def looks_like_bot_comment(body: object) -> bool:
    """True when a comment body starts with the bot's hidden marker."""
    return isinstance(body, str) and body.lstrip().startswith(MARKER_PREFIX)
