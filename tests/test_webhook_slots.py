"""Unauthenticated work comes before a slot (issue 50): a small delivery with a wrong
signature is refused (401) as soon as its body is read, without waiting for one of the slots
genuine deliveries need, even while every slot is held."""

from __future__ import annotations

import asyncio

from harness import issue_payload

from bot.server.http import WebhookLimits


async def test_bad_signatures_are_refused_without_taking_a_slot(harness) -> None:
    harness.state.limits = WebhookLimits(max_concurrent=1, turn_wait=1.0, read_timeout=10.0)
    # a large delivery whose body comes slowly holds the one slot
    _reader, writer = await asyncio.open_connection("127.0.0.1", harness.server.port)
    writer.write(
        b"POST /github/webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"X-GitHub-Event: issues\r\nX-Hub-Signature-256: sha256=" + b"0" * 64 + b"\r\n"
        b"Content-Length: 200000\r\n\r\n{"
    )
    await writer.drain()
    await asyncio.sleep(0.2)
    try:
        for n in range(5):
            junk = await harness.post(
                "issues", issue_payload("opened", n + 1, "x", "y"), secret="not-the-secret"
            )
            assert junk.status == 401  # not 503 after waiting its turn for the held slot
    finally:
        writer.close()
