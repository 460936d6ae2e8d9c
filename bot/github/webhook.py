"""Webhook deliveries: signature check, parsing, and what each delivery asks of the bot. Pure."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeGuard
from urllib.parse import parse_qs

from bot.config.settings import valid_full_name
from bot.github.marker import looks_like_bot_comment
from bot.github.triage_command.parse import command_entries

MAX_BODY = 25 * 1024 * 1024  # GitHub caps payloads at 25 MB
MAX_NUMBER = 2**31 - 1  # issue numbers fit in 32 bits (GitHub's own limit)
MAX_ID = 2**53  # ids (comments, installations) are exact JSON numbers
ISSUE_ACTIONS = frozenset({"opened", "edited", "reopened"})
COMMENT_ACTIONS = frozenset({"created", "edited"})


class MalformedDelivery(ValueError):
    """The body is not a JSON object, or misses what the event must carry."""


@dataclass(frozen=True, slots=True)
class Decision:
    """What to do with a verified delivery: a job to queue, or nothing and why."""

    event: str
    action: str | None
    job: dict[str, Any] | None
    reason: str  # "queued", "ping", "ignored-event", "ignored-action", "ignored-bot"
    # (repo, number, "open"|"closed", state_reason, closed_at) from any issue delivery, for the
    # duplicates history ("closed as completed in March 2026")
    issue_state: tuple[str, int, str, str | None, float | None] | None = None


def sign(secret: str, body: bytes | bytearray) -> str:
    """The `X-Hub-Signature-256` header value GitHub sends for this body."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify_signature(secrets: Sequence[str], body: bytes | bytearray, header: str | None) -> bool:
    """True when `header` is the HMAC-SHA256 of `body` under any of `secrets` (constant time)."""
    if not header or not secrets or not header.startswith("sha256="):
        return False
    given = header.strip().encode()
    ok = False
    for secret in secrets:
        # compare against every secret, so timing does not tell which one (if any) matched
        ok |= hmac.compare_digest(sign(secret, body).encode(), given)
    return ok


def parse_body(body: bytes, content_type: str = "application/json") -> dict[str, Any]:
    """The delivery's JSON object; GitHub's form-encoded format (`payload=...`) is read too."""
    if content_type == "application/x-www-form-urlencoded":
        try:
            fields = parse_qs(body.decode("utf-8"), max_num_fields=16)
        except (UnicodeDecodeError, ValueError) as exc:
            raise MalformedDelivery(f"form body is not readable: {exc}") from None
        if "payload" not in fields:
            raise MalformedDelivery("form body has no `payload` field")
        body = fields["payload"][0].encode("utf-8")
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise MalformedDelivery(f"body is not JSON: {exc}") from None
    except RecursionError:
        raise MalformedDelivery("body is nested too deeply") from None
    if not isinstance(data, dict):
        raise MalformedDelivery("body is not a JSON object")
    return data


def is_bot_user(user: Any) -> bool:
    if not isinstance(user, dict):
        return False
    login = str(user.get("login") or "")
    return user.get("type") == "Bot" or login.endswith("[bot]")


def decide(event: str, payload: dict[str, Any], *, received_at: float | None = None) -> Decision:
    """Map a verified, parsed delivery to a job (or to nothing)."""
    action = payload.get("action") if isinstance(payload.get("action"), str) else None
    if event == "ping":
        return Decision(event, action, None, "ping")
    if event not in ("issues", "issue_comment"):
        return Decision(event, action, None, "ignored-event")
    allowed = ISSUE_ACTIONS if event == "issues" else COMMENT_ACTIONS
    seen_state = _issue_state(payload)
    if action not in allowed:
        return Decision(event, action, None, "ignored-action", seen_state)

    repo = payload.get("repository")
    issue = payload.get("issue")
    if not isinstance(repo, dict) or not isinstance(issue, dict):
        raise MalformedDelivery(f"{event} delivery without repository or issue")
    full_name = repo.get("full_name")
    number = issue.get("number")
    if not isinstance(full_name, str) or "/" not in full_name or not _is_int(number):
        raise MalformedDelivery(f"{event} delivery without repository.full_name or issue.number")
    if not valid_full_name(full_name):
        raise MalformedDelivery(f"repository.full_name {full_name[:100]!r} is not OWNER/NAME")
    if not 0 < number <= MAX_NUMBER:
        raise MalformedDelivery(f"issue.number {str(number)[:30]} is out of range")

    extra: dict[str, Any] = {"event": event, "action": action}
    if event == "issue_comment":
        comment = payload.get("comment")
        if not isinstance(comment, dict):
            raise MalformedDelivery("issue_comment delivery without comment")
        if is_bot_user(comment.get("user")) or looks_like_bot_comment(comment.get("body")):
            return Decision(event, action, None, "ignored-bot", seen_state)
        comment_id = comment.get("id")
        if comment_id is not None and not (_is_int(comment_id) and 0 < comment_id <= MAX_ID):
            raise MalformedDelivery("comment.id is not a comment id")
        body = comment.get("body")
        if body is not None and not isinstance(body, str):
            raise MalformedDelivery("comment.body is not a string")
        user = comment.get("user")
        login = user.get("login") if isinstance(user, dict) else None
        extra["comment_id"] = comment_id
        extra["author"] = login if isinstance(login, str) else None
        extra["comment_body"] = body or ""
        if action == "edited":
            changes = payload.get("changes")
            change = changes.get("body") if isinstance(changes, dict) else None
            previous = change.get("from") if isinstance(change, dict) else None
            extra["previous_body"] = previous if isinstance(previous, str) else None
        # who asked: the sender (a maintainer may edit someone else's comment), else the author
        sender = payload.get("sender")
        asker = sender.get("login") if isinstance(sender, dict) else None
        commands = command_entries(
            extra["comment_body"],
            extra.get("previous_body"),
            extra["comment_id"],
            asker if isinstance(asker, str) else extra["author"],
        )
        if commands:
            extra["commands"] = commands
    if seen_state is not None:
        extra["issue_state"] = seen_state[2]
    installation = payload.get("installation")
    installation_id = installation.get("id") if isinstance(installation, dict) else None
    if not (_is_int(installation_id) and 0 < installation_id <= MAX_ID):
        installation_id = None
    job = {
        "kind": "issue",
        "repo": full_name,
        "number": number,
        "installation_id": installation_id,
        "payload": extra,
    }
    if received_at is not None:
        job["received_at"] = received_at
    return Decision(event, action, job, "queued", seen_state)


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _issue_state(
    payload: dict[str, Any],
) -> tuple[str, int, str, str | None, float | None] | None:
    repo = payload.get("repository")
    issue = payload.get("issue")
    if not isinstance(repo, dict) or not isinstance(issue, dict):
        return None
    full_name, number, state = repo.get("full_name"), issue.get("number"), issue.get("state")
    if not valid_full_name(full_name) or not _is_int(number) or not 0 < number <= MAX_NUMBER:
        return None
    assert isinstance(full_name, str)  # valid_full_name said so
    if state not in ("open", "closed"):
        return None
    reason = issue.get("state_reason")
    if state != "closed" or reason not in ("completed", "not_planned"):
        reason = None
    return full_name, number, state, reason, _timestamp(issue.get("closed_at"))


def _timestamp(value: Any) -> float | None:
    """GitHub's ISO 8601 time (`2026-03-05T10:00:00Z`) as a Unix time, or None."""
    if not isinstance(value, str) or len(value) > 40:
        return None
    try:
        at = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (at if at.tzinfo else at.replace(tzinfo=UTC)).timestamp()
