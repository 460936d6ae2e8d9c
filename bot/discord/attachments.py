"""What a Discord message holds for the listener: its parts (`incoming`), and the text of its
attachments, read within a cap (head and real tail of a large log, by HTTP Range requests)."""

from __future__ import annotations

import logging

import aiohttp
import discord

from bot.discord import listener as L
from bot.discord.listener import AttachmentInfo, IncomingMessage

log = logging.getLogger("bot.discord.client")  # the logger these lines always went to


def incoming(message: discord.Message) -> IncomingMessage:
    """The parts of a discord.py message the listener looks at."""
    channel = message.channel
    parent_id = channel.parent_id if isinstance(channel, discord.Thread) else None
    return IncomingMessage(
        message_id=message.id,
        channel_id=channel.id,
        parent_id=parent_id,
        author_id=message.author.id,
        author_is_bot=message.author.bot,
        content=message.content or "",
        attachments=tuple(
            AttachmentInfo(a.filename, a.size, a.url, a.content_type) for a in message.attachments
        ),
        webhook=message.webhook_id is not None,
    )


async def _read_at_most(response: aiohttp.ClientResponse, limit: int) -> bytes:
    """At most `limit` bytes of a response body, whatever the server sends."""
    data = bytearray()
    async for chunk in response.content.iter_chunked(64 * 1024):
        data += chunk[: limit - len(data)]
        if len(data) >= limit:
            break
    return bytes(data)


class AttachmentReader:
    """Reads the attachments of messages through one aiohttp session: the process's shared one
    when `serve` gives it, else one of its own (closed by `close`)."""

    def __init__(
        self, cap: int, text_cap: int, http_session: aiohttp.ClientSession | None = None
    ) -> None:
        self.cap = cap
        self.text_cap = text_cap
        self._http_session = http_session
        self._owns_http_session = http_session is None

    async def read_message(
        self, msg: IncomingMessage, attachments: list[discord.Attachment]
    ) -> tuple[str, list[str]]:
        """The text to analyse, and a note for each attachment whose middle was skipped."""
        wanted = {a.url for a in L.readable_attachments(msg.attachments)}
        parts: list[str] = []
        notes: list[str] = []
        for attachment in attachments:
            if attachment.url not in wanted:
                continue
            try:
                read = await self.read(attachment.url, attachment.size, attachment.filename)
            except (TimeoutError, aiohttp.ClientError, OSError) as exc:
                log.warning("could not read attachment %s: %s", attachment.filename, exc)
                continue
            parts.append(read.text)
            note = L.partly_read_note(read)
            if note:
                notes.append(note)
        return L.compose_text(msg.content, parts, self.text_cap), notes

    def _session(self) -> aiohttp.ClientSession:
        if self._http_session is None or self._http_session.closed:
            self._http_session = aiohttp.ClientSession()
            self._owns_http_session = True
        return self._http_session

    async def read(self, url: str, size: int = 0, filename: str = "") -> L.AttachmentText:
        """Read an attachment within the cap: whole when small, else its head and real tail.

        A file over the cap is read with two HTTP Range requests (the CDN answers 206), so a
        panic at the end of a large log is seen and memory stays bounded by the cap. A server
        that ignores Range is streamed as far as `DOWNLOAD_LIMIT`, keeping head and tail.
        """
        cap = self.cap
        timeout = aiohttp.ClientTimeout(total=30)
        session = self._session()
        if size > cap:
            half = cap // 2
            ranged = {"Range": f"bytes=0-{half - 1}"}
            async with session.get(url, timeout=timeout, headers=ranged) as response:
                response.raise_for_status()
                if response.status == 206:
                    head = await _read_at_most(response, half)
                    total = L.content_range_total(response.headers.get("Content-Range")) or size
                else:
                    return await self._stream(response, cap, size, filename)
            tail = b""
            if total > len(head):
                ranged = {"Range": f"bytes=-{min(cap - half, total - len(head))}"}
                async with session.get(url, timeout=timeout, headers=ranged) as response:
                    if response.status == 206:
                        tail = await _read_at_most(response, cap - half)
            if total <= len(head) + len(tail):  # the size was overstated: nothing skipped
                whole = head + tail[len(head) + len(tail) - total :]
                return L.AttachmentText(filename, whole.decode("utf-8", "replace"), total)
            text = L.join_head_tail(head, tail)
            return L.AttachmentText(filename, text, total, head=len(head), tail=len(tail))
        async with session.get(url, timeout=timeout) as response:
            response.raise_for_status()
            return await self._stream(response, cap, size, filename)

    @staticmethod
    async def _stream(
        response: aiohttp.ClientResponse, cap: int, size: int, filename: str
    ) -> L.AttachmentText:
        kept = L.CappedText(cap)
        async for chunk in response.content.iter_chunked(64 * 1024):
            kept.feed(chunk)
            if kept.full:
                break
        total = max(size, kept.seen)
        if total <= cap:
            return L.AttachmentText(filename, kept.text(), total)
        if kept.full and total > kept.seen:
            # Stopped before the end: what was kept last is not the file's tail, so only the
            # head is used, and the answer says so.
            head = L.join_head_tail(bytes(kept.head), b"").rstrip("\n") + "\n"
            return L.AttachmentText(filename, head, total, head=len(kept.head))
        half = cap // 2
        return L.AttachmentText(filename, kept.text(), total, head=half, tail=cap - half)

    async def close(self) -> None:
        if self._http_session is not None and self._owns_http_session:
            await self._http_session.close()
