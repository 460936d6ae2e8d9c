"""The paste form and POST /api/match over real HTTP: the bot's answer with links to the pages,
what `match --json` prints, pasted HTML kept as text, the size, rate and queue caps, the pages
switched off; and the "Full write-up" link answers carry with TRIAGE_PUBLIC_URL."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import threading

import aiohttp
import pytest
from harness import PANIC, PANIC_AVG_POOL, REPO, Harness, bot_comments, issue_payload
from site_helpers import EXAMPLE, ROOT, bundled, serve, text_of

from bot.config.settings import Settings
from bot.render import texts
from bot.render.answer.build import build_answer
from bot.render.discord import render_message
from bot.render.github import render_comment
from bot.server.site_routes import PAGES, PageLimits
from bot.site.pages import MAX_PASTE

AVG_POOL = "8d1d2fa6df3880bd"
EXAMPLE_ID = "caa0d32853961b70"  # examples/issue.md: burn #3513, autodiff's missing step
EXAMPLE_MESSAGE = "Node should have a step registered"
HOSTILE = (
    "thread 'main' panicked at src/main.rs:3:5:\n"
    "<script>alert('x')</script><img src=x onerror=alert(1)>\n"
)


@pytest.fixture
async def site(tmp_path):
    server, store = await serve(tmp_path)
    async with aiohttp.ClientSession() as session:
        yield server, session
    await server.close()
    store.close()


async def test_the_form_answers_an_example_issue_with_a_link_to_the_record_page(site):
    server, session = site
    async with session.get(server.make_url("/")) as response:
        assert response.status == 200
        assert '<form method="post" action="/"' in await response.text()
    text = EXAMPLE.read_text(encoding="utf-8")
    async with session.post(server.make_url("/"), data={"text": text}) as response:
        assert response.status == 200
        page = await response.text()
    assert "The answer" in page
    assert EXAMPLE_MESSAGE in text_of(page)
    # the same words the bot's GitHub comment says
    triage = bundled()
    comment = render_comment(
        build_answer(
            triage.analyse(text), triage.catalog, history=triage.history, projects=triage.projects
        )
    )
    first = re.search(r"\*\*" + re.escape(texts.FIRST_MEANING) + r"\*\* ([^\n*`]{20,60})", comment)
    assert first and first.group(1) in text_of(page)
    links = re.findall(r'<a href="(/errors/[0-9a-f]+)">Full write-up', page)
    assert links == [f"/errors/{EXAMPLE_ID}"]
    # What only a GitHub comment has: reactions counted, the maintainers' `/triage` commands.
    assert texts.REACT_HINT in comment and texts.MAINTAINERS in comment
    assert texts.REACT_HINT not in text_of(page) and texts.MAINTAINERS not in text_of(page)
    async with session.get(server.make_url(links[0])) as response:
        assert response.status == 200


async def test_pasted_html_stays_text(site):
    server, session = site
    async with session.post(server.make_url("/"), data={"text": HOSTILE}) as response:
        page = await response.text()
        assert "script-src" not in response.headers["Content-Security-Policy"]
    assert "<script>" not in page and "<img" not in page
    assert "&lt;script&gt;" in page  # shown, as text (in the textarea at least)


async def test_api_match_returns_what_match_json_prints(site, tmp_path):
    server, session = site
    data = EXAMPLE.read_bytes()
    printed = subprocess.run(
        [sys.executable, "-m", "bot", "match", "--json"],
        input=data,
        capture_output=True,
        check=True,
        cwd=ROOT,
    ).stdout
    expected = json.loads(printed)
    headers = {"Content-Type": "text/plain; charset=utf-8"}
    async with session.post(server.make_url("/api/match"), data=data, headers=headers) as r:
        assert r.status == 200
        assert await r.json() == expected
    async with session.post(
        server.make_url("/api/match"), json={"text": data.decode("utf-8")}
    ) as r:
        assert await r.json() == expected
    assert expected["matches"][0]["id"] == EXAMPLE_ID
    async with session.post(server.make_url("/api/match"), json={"txt": 1}) as r:
        assert r.status == 400 and "error" in await r.json()


async def test_a_paste_over_the_cap_is_a_413_with_a_message(site):
    server, session = site
    big = b"x" * (MAX_PASTE + 1)
    async with session.post(server.make_url("/api/match"), data=big) as r:
        assert r.status == 413
        assert "KB" in (await r.json())["error"]
    async with session.post(server.make_url("/"), data={"text": big.decode()}) as r:
        assert r.status == 413 and "KB" in await r.text()


async def test_pastes_over_the_rate_are_429(site):
    server, session = site
    server.app[PAGES].limits = PageLimits(per_minute=2)
    statuses = []
    for _ in range(3):
        async with session.post(server.make_url("/api/match"), data=b"no panic here") as r:
            statuses.append(r.status)
            body = await r.json()
    assert statuses == [200, 200, 429]
    assert "a minute" in body["error"]


async def test_a_full_page_queue_is_429_and_webhooks_do_not_wait_for_it(site):
    server, session = site
    service = server.app[PAGES]
    service.limits = PageLimits(max_pending=1)
    release = threading.Event()
    blocker = asyncio.ensure_future(service.run(lambda _site: release.wait(10)))
    await asyncio.sleep(0.2)  # the one page job is running, holding the queue
    try:
        async with session.post(server.make_url("/api/match"), data=b"x") as r:
            assert r.status == 429 and "busy" in (await r.json())["error"]
        async with session.get(server.make_url("/errors")) as r:
            assert r.status == 429
        # the webhook route answers at once (404 here: GitHub is not configured), not queued
        loop = asyncio.get_running_loop()
        started = loop.time()
        async with session.post(server.make_url("/github/webhook"), data=b"{}") as r:
            assert r.status == 404
        assert loop.time() - started < 1.0
    finally:
        release.set()
        await blocker


async def test_triage_pages_0_switches_the_pages_off(tmp_path):
    server, store = await serve(tmp_path, TRIAGE_PAGES="0")
    try:
        async with aiohttp.ClientSession() as session:
            for path in ("/", "/errors", f"/errors/{AVG_POOL}", f"/api/errors/{AVG_POOL}"):
                async with session.get(server.make_url(path)) as r:
                    assert r.status == 404, path
            async with session.post(server.make_url("/api/match"), data=b"x") as r:
                assert r.status in (404, 405)
    finally:
        await server.close()
        store.close()


def test_answers_link_full_write_up_with_a_public_url():
    triage = bundled()
    answer = build_answer(
        triage.analyse(EXAMPLE.read_text(encoding="utf-8")), triage.catalog, history=triage.history
    )
    base = "https://errors.example.org"
    page = f"{base}/errors/{EXAMPLE_ID}"
    plain = render_comment(answer)
    linked = render_comment(answer, public_url=base)
    assert page not in plain and texts.FULL_WRITE_UP not in plain
    assert f"**[{texts.FULL_WRITE_UP}]({page})**" in linked
    # the write-up stays on the page: the comment keeps the first view only
    assert f"#### {texts.SOLUTIONS}" in plain and f"#### {texts.SOLUTIONS}" not in linked
    assert len(linked) < len(plain)
    message = render_message(answer, public_url=base)
    assert f"[{texts.FULL_WRITE_UP}]({page})" in message["embeds"][0]["description"]
    assert texts.FULL_WRITE_UP not in json.dumps(render_message(answer))


async def test_webhooks_are_answered_while_the_form_is_flooded(harness, fake):
    """Webhooks never wait for a paste's match: with the pages' one thread held and its queue
    full, deliveries are still answered; the held pastes are answered once the thread is free.
    Counted, not timed (the time a delivery takes under load is the benchmark's to print)."""
    service = harness.app[PAGES]
    service.limits = PageLimits(per_minute=10_000)
    issue = fake.add_issue(REPO, "crash", PANIC)
    payload = issue_payload("opened", issue.number, issue.title, PANIC)
    session = harness.session
    assert session is not None and harness.server is not None
    url = harness.server.make_url("/api/match")
    log = (PANIC * 20).encode()

    gate = threading.Event()
    held = service.pool().submit(gate.wait, 60)  # the pages' only thread, busy until released
    pastes: list[int] = []
    stop = asyncio.Event()

    async def flooder() -> None:
        while not stop.is_set():
            async with session.post(url, data=log) as response:
                await response.read()
                pastes.append(response.status)
                if response.status == 429:
                    await asyncio.sleep(0.01)

    async def queue_full() -> None:
        while service._pending < service.limits.max_pending or 429 not in pastes:
            await asyncio.sleep(0.01)  # the queue is full: further pastes are refused

    flood = [asyncio.ensure_future(flooder()) for _ in range(24)]
    try:
        await asyncio.wait_for(queue_full(), 30)
        for _ in range(5):
            response = await asyncio.wait_for(harness.post("issues", payload), 30)
            assert response.status in (200, 202)
        assert not gate.is_set() and 200 not in pastes  # answered while every paste waited
    finally:
        gate.set()
    stop.set()
    await asyncio.gather(*flood)
    held.result()
    assert 200 in pastes  # the held pastes were matched once the thread was free


async def test_the_bot_comment_links_the_page_with_triage_public_url(fake, tmp_path, triage):
    h = await Harness(
        fake, tmp_path / "t.sqlite3", triage, TRIAGE_PUBLIC_URL="https://errors.example.org/"
    ).start()
    try:
        issue = fake.add_issue(REPO, "crash", PANIC_AVG_POOL)
        payload = issue_payload("opened", issue.number, issue.title, PANIC_AVG_POOL)
        assert (await h.post("issues", payload)).status == 202
        await h.settle()
    finally:
        await h.stop()
    (comment,) = bot_comments(fake, issue.number)
    link = f"**[{texts.FULL_WRITE_UP}](https://errors.example.org/errors/{AVG_POOL})**"
    assert link in comment.body and f"#### {texts.SOLUTIONS}" not in comment.body


async def test_the_discord_bot_renders_with_triage_public_url(tmp_path, triage):
    from bot.discord.client import TriageBot
    from bot.store.sqlite import Store

    settings = Settings.from_mapping(
        {"TRIAGE_DB": str(tmp_path / "d.sqlite3"), "TRIAGE_PUBLIC_URL": "https://e.example.org"}
    )
    store = Store(tmp_path / "d.sqlite3")
    bot = TriageBot(settings=settings, triage=triage, store=store)
    try:
        analysis = triage.analyse(PANIC_AVG_POOL)
        message = bot.renderer(analysis, triage.catalog, triage.history)
    finally:
        await bot.close()
        store.close()
    link = f"[{texts.FULL_WRITE_UP}](https://e.example.org/errors/{AVG_POOL})"
    assert link in message["embeds"][0]["description"]


async def _slow_sender(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A client that sends a paste's headers and a few bytes of its 1,000, then nothing."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(
        b"POST /api/match HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n"
        b"Content-Length: 1000\r\n\r\nthread 'main' "
    )
    await writer.drain()
    return reader, writer


async def test_a_paste_that_never_arrives_is_cut_and_one_client_holds_few(tmp_path):
    server, store = await serve(tmp_path, TRIAGE_READ_TIMEOUT="1")
    try:
        port = server.port
        senders = [await _slow_sender(port) for _ in range(4)]
        # a fifth slow body from the same address is refused at once
        reader, writer = await _slow_sender(port)
        status = await asyncio.wait_for(reader.readline(), 5)
        assert b" 429 " in status
        writer.close()
        # the four are cut after the read timeout, not held open
        for reader, writer in senders:
            status = await asyncio.wait_for(reader.readline(), 5)
            assert b" 408 " in status
            writer.close()
    finally:
        await server.close()
        store.close()
