"""Slow senders (issue 28, point 2), through the real `serve` process: 32 connections trickle
their bodies at 10 B/s while genuine signed deliveries keep being accepted (202); each slow body
is cut with a 408 once TRIAGE_READ_TIMEOUT has passed and counted in /metrics, and a sender that
never finishes its headers is disconnected."""

from __future__ import annotations

import asyncio
import json
from urllib.parse import urlparse

from harness import (
    PANIC,
    REPO,
    SECOND_SECRET,
    SECRETS,
    delivery_headers,
    issue_payload,
    served_against,
)

SLOW_SENDERS = 32
READ_TIMEOUT = 2.0


async def _slow_sender(host: str, port: int) -> bytes:
    """A request with any signature header whose 600-byte body comes at 10 B/s; what the
    server answers (b"" when it only closes)."""
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(
        b"POST /github/webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"X-GitHub-Event: issues\r\nX-Hub-Signature-256: sha256=" + b"0" * 64 + b"\r\n"
        b"Content-Length: 600\r\n\r\n"
    )

    async def trickle() -> None:
        for _ in range(600):
            writer.write(b" ")
            await writer.drain()
            await asyncio.sleep(0.1)

    feeding = asyncio.create_task(trickle())
    try:
        return await asyncio.wait_for(reader.read(200), 30)
    finally:
        feeding.cancel()
        writer.close()


async def _slow_headers(host: str, port: int) -> float:
    """Headers that never end, a byte at a time; seconds until the server closes."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    reader, writer = await asyncio.open_connection(host, port)

    async def trickle() -> None:
        for _ in range(600):
            writer.write(b"X")
            await writer.drain()
            await asyncio.sleep(0.1)

    writer.write(b"POST /github/webhook HTTP/1.1\r\nX-Long: ")
    feeding = asyncio.create_task(trickle())
    try:
        await asyncio.wait_for(reader.read(200), 30)
        return loop.time() - started
    except (ConnectionError, OSError):
        return loop.time() - started
    finally:
        feeding.cancel()
        writer.close()


async def test_slow_senders_are_cut_with_408_and_genuine_deliveries_flow(
    fake, tmp_path, monkeypatch
):
    monkeypatch.setenv("TRIAGE_READ_TIMEOUT", str(READ_TIMEOUT))
    issue = fake.add_issue(REPO, "crash", PANIC)
    async with served_against(fake, tmp_path, webhook_secret=SECRETS, log_level="INFO") as (
        served,
        session,
    ):
        url = urlparse(served.base_url)
        host, port = url.hostname or "127.0.0.1", url.port or 80
        slow = [asyncio.create_task(_slow_sender(host, port)) for _ in range(SLOW_SENDERS)]
        headers_only = asyncio.create_task(_slow_headers(host, port))
        await asyncio.sleep(0.5)  # every slow request is being read
        statuses = []
        loop = asyncio.get_running_loop()
        started = loop.time()
        for n in range(8):
            payload = issue_payload("opened", issue.number, issue.title, PANIC)
            body = json.dumps(payload).encode()
            headers = delivery_headers("issues", body, secret=SECOND_SECRET, delivery=f"g-{n}")
            async with session.post(
                served.base_url + "/github/webhook", data=body, headers=headers
            ) as response:
                statuses.append(response.status)
        genuine_seconds = loop.time() - started
        answers = await asyncio.gather(*slow)
        header_seconds = await headers_only
        async with session.get(served.base_url + "/metrics") as response:
            metrics = await response.text()
    assert statuses == [202] * 8
    assert genuine_seconds < 1.5  # not waiting behind the slow senders
    assert all(a.startswith(b"HTTP/1.1 408") for a in answers), answers[:2]
    assert READ_TIMEOUT - 0.5 < header_seconds < READ_TIMEOUT + 3
    assert f"triage_webhook_slow_requests_total {SLOW_SENDERS}" in metrics
