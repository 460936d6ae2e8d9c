"""Secrets kept out of what the bot prints: a database URL's password."""

from __future__ import annotations


def redact_url(url: str) -> str:
    """The URL with its password replaced, for logs, errors and doctor."""
    head, sep, rest = url.partition("://")
    userinfo, at, hostpart = rest.rpartition("@")
    if not sep or not at or ":" not in userinfo:
        return url
    user = userinfo.split(":", 1)[0]
    return f"{head}://{user}:***@{hostpart}"
