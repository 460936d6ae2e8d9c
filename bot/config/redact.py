"""Secrets kept out of what the bot prints and logs.

`Redactor` blanks the values of the secret settings and anything shaped like a token (GitHub,
Discord, a bearer header, a JWT, a PEM key) in a string: the log filter (bot.config.logs) and
`doctor` use it. `redact_url` hides the password of a database URL.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # settings.py imports redact_url from here
    from bot.config.settings import Settings

REDACTED = "[REDACTED]"
# A secret shorter than this is not redacted by value (it would blank out ordinary words); such
# a secret is too weak to use anyway, and doctor says so.
MIN_SECRET_LENGTH = 6

# Things that look like credentials whatever the settings say: (pattern, replacement).
TOKEN_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # GitHub tokens: classic and fine-grained PATs, OAuth, user-to-server, server-to-server
    # (installation and Action tokens), refresh tokens.
    (re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{20,})\b"), REDACTED),
    # Authorization header values, whatever the scheme ("token x", "Bot x", "Bearer x"), also
    # when a headers dict is printed.
    (
        re.compile(r"(?i)(authorization['\"]?\s*[:=]\s*['\"]?)(?:\w+ )?[^\s'\",}]+"),
        r"\g<1>" + REDACTED,
    ),
    (re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{16,}"), REDACTED),
    # Discord bot tokens: base64 user id . timestamp . HMAC.
    (re.compile(r"\b[A-Za-z0-9_-]{23,28}\.[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{27,}"), REDACTED),
    # JWTs (the App's signed requests).
    (re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), REDACTED),
    # PEM private keys, whole or cut.
    (
        re.compile(
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.S
        ),
        REDACTED,
    ),
)


def secret_values(settings: Settings | None) -> list[str]:
    """The secret strings held by a `Settings` (or None): what the filter blanks out by value."""
    if settings is None:
        return []
    values: list[str] = []
    for name in ("github_token", "discord_token", "github_app_private_key", "triage_stats_token"):
        value = getattr(settings, name, None)
        if value:
            values.append(str(value))
    values.extend(str(s) for s in getattr(settings, "github_webhook_secrets", ()) or ())
    key = getattr(settings, "github_app_private_key", None)
    if key:
        # a key can be logged a line at a time (a traceback quoting a line, a cut message)
        lines = [line.strip() for line in str(key).splitlines()]
        values.extend(line for line in lines if len(line) >= 16 and "-----" not in line)
    return values


class Redactor:
    """Replaces secret values and token-shaped text in strings."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        kept = sorted(
            {s for s in secrets if s and len(s.strip()) >= MIN_SECRET_LENGTH},
            key=len,
            reverse=True,  # longest first, so a secret containing another is blanked whole
        )
        self.secrets = tuple(kept)
        self._values = (
            re.compile("|".join(re.escape(s) for s in self.secrets)) if self.secrets else None
        )

    def __call__(self, text: str) -> str:
        if self._values is not None:
            text = self._values.sub(REDACTED, text)
        for pattern, replacement in TOKEN_PATTERNS:
            text = pattern.sub(replacement, text)
        return text


def redact_url(url: str) -> str:
    """The URL with its password replaced, for logs, errors and doctor."""
    head, sep, rest = url.partition("://")
    userinfo, at, hostpart = rest.rpartition("@")
    if not sep or not at or ":" not in userinfo:
        return url
    user = userinfo.split(":", 1)[0]
    return f"{head}://{user}:***@{hostpart}"
