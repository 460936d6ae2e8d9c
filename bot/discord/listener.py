"""What the Discord bot does with a message, decided without discord.py.

The glue in `client.py` turns discord.py objects into the plain values below, asks these
functions what to do, and carries it out. Everything here is synchronous and testable alone:
which messages to look at, which attachments to read (and how much), the text to analyse,
per-user and per-channel cooldowns, what to do on an edit, and the `/error` lookup.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal

from rapidfuzz import fuzz, process, utils

from bot.core.analysis import Analysis, Candidate, PanicMatch
from bot.core.panic import Panic
from bot.render import texts

# --- limits ---------------------------------------------------------------------------------------
TEXT_EXTENSIONS = (".txt", ".log", ".rs", ".md", ".out", ".err", ".text", ".toml")
DEFAULT_ATTACHMENT_CAP = 256 * 1024  # bytes read per attachment
DOWNLOAD_LIMIT = 16 * 1024 * 1024  # bytes downloaded at most per attachment
DEFAULT_TEXT_CAP = 512 * 1024  # characters analysed per message, content and attachments together
MAX_ATTACHMENTS = 3
AUTOCOMPLETE_LIMIT = 25  # Discord's maximum number of choices
CHOICE_LIMIT = 100  # Discord's maximum length of a choice name and value


@dataclass(frozen=True, slots=True)
class AttachmentInfo:
    filename: str
    size: int
    url: str
    content_type: str | None = None


@dataclass(frozen=True, slots=True)
class IncomingMessage:
    """The parts of a Discord message the bot looks at."""

    message_id: int
    channel_id: int
    parent_id: int | None  # the channel a thread (or forum post) belongs to
    author_id: int
    author_is_bot: bool
    content: str
    attachments: tuple[AttachmentInfo, ...] = ()
    webhook: bool = False


@dataclass(frozen=True, slots=True)
class Watch:
    """Where the bot answers unasked, and who it is."""

    channel_ids: frozenset[int]
    self_id: int | None

    def watches(self, msg: IncomingMessage) -> bool:
        if msg.channel_id in self.channel_ids:
            return True
        return msg.parent_id is not None and msg.parent_id in self.channel_ids


Ignore = Literal["self", "bot", "webhook", "unwatched", "empty"]


def ignore_reason(msg: IncomingMessage, watch: Watch) -> Ignore | None:
    """Why the bot leaves this message alone, or None when it should read it."""
    if watch.self_id is not None and msg.author_id == watch.self_id:
        return "self"
    if msg.author_is_bot:
        return "bot"
    if msg.webhook:
        return "webhook"
    if not watch.watches(msg):
        return "unwatched"
    if not msg.content.strip() and not readable_attachments(msg.attachments):
        return "empty"
    return None


def readable_attachments(
    attachments: Iterable[AttachmentInfo], *, limit: int = MAX_ATTACHMENTS
) -> list[AttachmentInfo]:
    """The attachments that may hold a paste: text files, by name or content type."""
    out = []
    for item in attachments:
        name = item.filename.lower()
        kind = (item.content_type or "").split(";")[0].strip().lower()
        if name.endswith(TEXT_EXTENSIONS) or kind.startswith("text/"):
            out.append(item)
        if len(out) >= limit:
            break
    return out


class CappedText:
    """Keeps the head and the tail of a streamed attachment, at most `cap` bytes in all.

    A long log usually ends with the panic (or starts with it, when the program died early), so
    a file over the cap is read as its first and last halves. `download_limit` stops the
    download altogether; what was kept so far is used.
    """

    def __init__(self, cap: int = DEFAULT_ATTACHMENT_CAP, download_limit: int = DOWNLOAD_LIMIT):
        self.cap = cap
        self.download_limit = download_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.seen = 0

    @property
    def full(self) -> bool:
        """True when no more bytes should be downloaded."""
        return self.seen >= self.download_limit

    def feed(self, chunk: bytes) -> None:
        self.seen += len(chunk)
        take = max(0, self.cap - len(self.head))
        self.head += chunk[:take]
        self.tail += chunk[take:]
        del self.tail[: max(0, len(self.tail) - self.cap)]

    @property
    def skipped(self) -> int:
        """Bytes seen but not kept (the middle of a file over the cap)."""
        return max(0, self.seen - self.cap)

    def text(self) -> str:
        if self.seen <= self.cap:
            return bytes(self.head).decode("utf-8", errors="replace")
        # Over the cap: the first half and the last half, cut at line ends.
        half = self.cap // 2
        return join_head_tail(
            bytes(self.head[:half]), bytes(self.head + self.tail)[-(self.cap - half) :]
        )


def join_head_tail(head: bytes, tail: bytes) -> str:
    """The first and last part of a file whose middle was not read, each cut at a line end."""
    if b"\n" in head:
        head = head[: head.rfind(b"\n") + 1]
    if b"\n" in tail:
        tail = tail[tail.find(b"\n") + 1 :]
    return (head + b"\n" + tail).decode("utf-8", errors="replace")


def content_range_total(header: str | None) -> int | None:
    """The whole size from a 206's `Content-Range: bytes FIRST-LAST/TOTAL`, when given."""
    total = (header or "").rpartition("/")[2].strip()
    return int(total) if total.isdigit() else None


def human_size(size: int) -> str:
    """A byte count as people read it: 900 bytes, 12 KiB, 20.5 MiB."""
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.0f} KiB"
    return f"{size / (1024 * 1024):.1f} MiB"


@dataclass(frozen=True, slots=True)
class AttachmentText:
    """What was read of one attachment: its text, its size, and how much of its middle not."""

    filename: str
    text: str
    size: int
    head: int = 0  # bytes read from the start, when the middle was skipped
    tail: int = 0  # bytes read from the end, when the middle was skipped

    @property
    def skipped(self) -> int:
        return max(0, self.size - self.head - self.tail) if self.head or self.tail else 0


def partly_read_note(item: AttachmentText) -> str | None:
    """The line an answer carries when an attachment's middle was not read."""
    if not item.skipped:
        return None
    name = item.filename.replace("`", "'")[:100]
    if not item.tail:
        return texts.ATTACHMENT_HEAD_ONLY.format(
            filename=name, size=human_size(item.size), head=human_size(item.head)
        )
    return texts.ATTACHMENT_PARTLY_READ.format(
        filename=name,
        size=human_size(item.size),
        head=human_size(item.head),
        tail=human_size(item.tail),
        skipped=human_size(item.skipped),
    )


def decode_attachment(data: bytes, cap: int = DEFAULT_ATTACHMENT_CAP) -> str:
    """Bytes of a whole text attachment as text, head and tail kept when over `cap`."""
    kept = CappedText(cap, download_limit=max(len(data), 1))
    kept.feed(data)
    return kept.text()


def compose_text(content: str, attachment_texts: Iterable[str], cap: int = DEFAULT_TEXT_CAP) -> str:
    """The message and its attachments as one text for the matcher, at most `cap` characters."""
    parts = [content] if content.strip() else []
    parts.extend(t for t in attachment_texts if t.strip())
    return "\n\n".join(parts)[:cap]


# --- cooldowns -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CooldownPolicy:
    """At most `per_user` answers per user and `per_channel` per channel in `window` seconds."""

    per_user: int = 3
    per_channel: int = 6
    window: float = 60.0


@dataclass
class Cooldowns:
    """Sliding-window counters; `allow` both checks and, when allowed, counts the answer."""

    policy: CooldownPolicy = field(default_factory=CooldownPolicy)
    clock: Callable[[], float] = time.monotonic
    _users: dict[int, deque[float]] = field(default_factory=dict)
    _channels: dict[int, deque[float]] = field(default_factory=dict)

    def _trim(self, hits: deque[float], now: float) -> deque[float]:
        while hits and now - hits[0] >= self.policy.window:
            hits.popleft()
        return hits

    def retry_after(self, user_id: int, channel_id: int) -> float:
        """Seconds until an answer is allowed again; 0 when allowed now."""
        now = self.clock()
        waits = [0.0]
        for table, key, limit in (
            (self._users, user_id, self.policy.per_user),
            (self._channels, channel_id, self.policy.per_channel),
        ):
            hits = self._trim(table.get(key, deque()), now)
            if len(hits) >= limit:
                waits.append(hits[len(hits) - limit] + self.policy.window - now)
        return max(waits)

    def allow(self, user_id: int, channel_id: int) -> bool:
        if self.retry_after(user_id, channel_id) > 0:
            return False
        now = self.clock()
        self._users.setdefault(user_id, deque()).append(now)
        self._channels.setdefault(channel_id, deque()).append(now)
        return True


# --- what to do --------------------------------------------------------------------------------

Action = Literal["reply", "edit", "delete", "none"]


def answered_ids(analysis: Analysis) -> tuple[str, ...]:
    """The record ids an answer to this analysis shows, root cause first."""
    if analysis.verdict != "match":
        return ()
    return tuple(item.best.record_id for item in analysis.answered if item.best)


def plan_message(analysis: Analysis, *, has_reply: bool) -> Action:
    """What to do with a message (new or edited) given its analysis and whether we answered it."""
    matched = bool(answered_ids(analysis))
    if has_reply:
        return "edit" if matched else "delete"
    return "reply" if matched else "none"


def search_records(
    records: Iterable[tuple[str, str]], query: str, *, limit: int = AUTOCOMPLETE_LIMIT
) -> list[tuple[str, str]]:
    """`(record_id, message)` pairs best matching `query`, for `/error` autocomplete.

    An empty query lists the first records by message. An exact id or message comes first.
    """
    pairs = list(records)
    query = query.strip()
    if not query:
        return sorted(pairs, key=lambda p: p[1].lower())[:limit]
    exact = [p for p in pairs if query in (p[0], p[1])]
    lowered = query.lower()
    contains = [p for p in pairs if lowered in p[1].lower() and p not in exact]
    scored = process.extract(
        query,
        {rid: msg for rid, msg in pairs},
        scorer=fuzz.WRatio,
        processor=utils.default_process,
        score_cutoff=60,
        limit=limit,
    )
    fuzzy = [(rid, msg) for msg, _score, rid in scored]
    out: list[tuple[str, str]] = []
    for pair in exact + contains + fuzzy:
        if pair not in out:
            out.append(pair)
    return out[:limit]


def record_place(file_path: str | None, line: int | None) -> str:
    """Where a record's panic is raised, short: `burn-autodiff/src/ops/module.rs:1498`."""
    if not file_path:
        return ""
    place = file_path.removeprefix("crates/")  # the crate folder names the crate
    return f"{place}:{line}" if line else place


PLACE_ROOM = 60  # at most this much of a choice name goes to the place


def choice(record_id: str, message: str, place: str = "") -> tuple[str, str]:
    """An autocomplete choice (name, value) within Discord's 100-character limits.

    The name is the message and, after it, where the panic is raised (crate, file and line), so
    records with the same message in different places are told apart.
    """
    if len(place) > PLACE_ROOM - 3:
        place = "…" + place[-(PLACE_ROOM - 4) :]
    suffix = f" · {place}" if place else ""
    room = CHOICE_LIMIT - len(suffix)
    name = message if len(message) <= room else message[: room - 1] + "…"
    return name + suffix, record_id


def choices(found: Iterable[tuple[str, str, str]]) -> list[tuple[str, str]]:
    """Choices for `(record_id, message, place)` items: values unique, names distinct.

    Two records with the same message and place (rare) get their ids to tell them apart.
    """
    items = list(dict.fromkeys(found))
    named = [choice(*item) for item in items]
    counts: dict[str, int] = {}
    for name, _ in named:
        counts[name] = counts.get(name, 0) + 1
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for (record_id, message, place), (name, value) in zip(items, named, strict=True):
        if value in seen:
            continue
        seen.add(value)
        if counts[name] > 1:
            name, value = choice(record_id, message, f"{place} #{record_id[:8]}".strip())
        out.append((name, value))
    return out


def analysis_for_record(record_id: str, message: str) -> Analysis:
    """An Analysis that names one record, for `/error`, where the user chose the record."""
    panic = Panic.mentioned(message)
    candidate = Candidate(
        record_id=record_id,
        confidence=1.0,
        evidence=("pattern",),
        message_score=1.0,
        line_distance=None,
    )
    item = PanicMatch(panic=panic, candidates=(candidate,), matched=True)
    return Analysis(verdict="match", panics=(item,), fingerprint=f"record:{record_id}")


# --- button ids ----------------------------------------------------------------------------------

FEEDBACK_PREFIX = "triage:fb"
DISMISS_PREFIX = "triage:x"
VOTES = {"up": 1, "down": -1}  # as the store counts them


def feedback_id(vote: Literal["up", "down"], record_id: str) -> str:
    return f"{FEEDBACK_PREFIX}:{vote}:{record_id}"


def dismiss_id(author_id: int) -> str:
    return f"{DISMISS_PREFIX}:{author_id}"
