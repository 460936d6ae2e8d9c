"""The catalog's pages in `serve` (issue 27): GET /, /errors, /errors/ID, /api/errors/ID,
/site.css; POST / (the paste form) and POST /api/match.

Pages are built by bot.site on one worker thread of their own, at a lower OS priority, with a
bounded queue: a flood of pastes waits there (then 429) while webhooks, answered on the event
loop and the store's thread, never queue behind it. Pastes are capped in size (413) and in
rate per client address (429). Every page carries a strict Content-Security-Policy.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import parse_qs

import orjson
from aiohttp import web

from bot.app import Triage
from bot.app.match_report import match_bytes_json
from bot.site.data import Filters
from bot.site.pages import MAX_PASTE, Site

log = logging.getLogger(__name__)
T = TypeVar("T")
# (the record's repo, its id, the request's Authorization header) -> its known issues
IssuesFor = Callable[[str, str, str | None], Awaitable[list[dict[str, Any]]]]

# No scripts at all, styles from our own origin, no frames, forms post only to us.
CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


@dataclass(frozen=True)
class PageLimits:
    max_body: int = MAX_PASTE  # bytes of a paste (form or /api/match)
    max_pending: int = 8  # page jobs queued or running at once; more: 429
    per_minute: int = 30  # pastes per client address per minute
    wait: float = 20.0  # seconds a page job may take before a 503
    read_timeout: float = 10.0  # seconds a paste's body may take to arrive (then 408)
    per_client_reading: int = 4  # bodies one client address may be sending at once (then 429)


@dataclass
class PageService:
    triage: Triage
    limits: PageLimits = field(default_factory=PageLimits)
    issues: IssuesFor | None = None
    # The catalog served now (serve swaps in a refreshed one): pages follow it.
    current: Callable[[], Triage] | None = None
    _site: Site | None = None
    _pool: ThreadPoolExecutor | None = None
    _pending: int = 0
    _hits: dict[str, list[float]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _reading: dict[str, int] = field(default_factory=dict)  # bodies being read, by client

    def pool(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(
                max_workers=1, thread_name_prefix="pages", initializer=_lower_priority
            )
        return self._pool

    def site(self) -> Site:
        with self._lock:  # on the pool's one thread; the lock keeps a second build out anyway
            live = self.current() if self.current is not None else self.triage
            if self._site is None or live is not self.triage:
                self.triage = live
                self._site = Site(live)
            return self._site

    async def run(self, fn: Callable[..., T], *args: Any) -> T | None:
        """`fn(site, *args)` on the pages' thread; None when the queue is full."""
        if self._pending >= self.limits.max_pending:
            return None
        self._pending += 1
        try:
            loop = asyncio.get_running_loop()
            future = loop.run_in_executor(self.pool(), lambda: fn(self.site(), *args))
            return await asyncio.wait_for(future, self.limits.wait)
        finally:
            self._pending -= 1

    def full(self) -> bool:
        """No room for another page job: a paste is refused before its body is read."""
        return self._pending >= self.limits.max_pending

    def allow(self, client: str) -> bool:
        """A paste from `client` within its per-minute budget (a sliding minute)."""
        now = time.monotonic()
        hits = [t for t in self._hits.get(client, ()) if now - t < 60.0]
        if len(hits) >= self.limits.per_minute:
            self._hits[client] = hits
            return False
        hits.append(now)
        self._hits[client] = hits
        if len(self._hits) > 10_000:  # forget idle clients
            self._hits = {k: v for k, v in self._hits.items() if v and now - v[-1] < 60.0}
        return True

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)


def _lower_priority() -> None:
    # Linux applies a nice value per thread: page work yields the CPU to webhooks.
    with contextlib.suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)


PAGES = web.AppKey("triage_pages", PageService)


def add_routes(app: web.Application, service: PageService) -> None:
    app[PAGES] = service
    app.router.add_get("/", handle_home)
    app.router.add_post("/", handle_paste)
    app.router.add_get("/site.css", handle_css)
    app.router.add_get("/errors", handle_list)
    app.router.add_get("/errors/", handle_list)
    app.router.add_get("/errors/{ident}", handle_record)
    app.router.add_get("/api/errors/{ident}", handle_api_record)
    app.router.add_post("/api/match", handle_api_match)
    app.on_cleanup.append(_close)


async def _close(app: web.Application) -> None:
    app[PAGES].close()


def _html(text: str, status: int = 200) -> web.Response:
    return web.Response(
        text=text, status=status, content_type="text/html", charset="utf-8", headers=HEADERS
    )


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(
        body=orjson.dumps(data),
        status=status,
        content_type="application/json",
        headers={**HEADERS, **(headers or {})},
    )


def _busy(api: bool) -> web.Response:
    message = "the pages are busy; try again in a few seconds"
    if api:
        return _json({"error": message}, 429, {"Retry-After": "5"})
    return web.Response(status=429, text=message + "\n", headers={**HEADERS, "Retry-After": "5"})


async def _page(request: web.Request, fn: Callable[..., str], *args: Any) -> web.Response:
    try:
        page = await request.app[PAGES].run(fn, *args)
    except TimeoutError:
        return web.Response(status=503, text="the page took too long\n", headers=HEADERS)
    return _busy(False) if page is None else _html(page)


async def handle_home(request: web.Request) -> web.Response:
    return await _page(request, Site.home_page)


async def handle_css(request: web.Request) -> web.Response:
    css = await request.app[PAGES].run(Site.css)
    if css is None:
        return _busy(False)
    return web.Response(
        text=css,
        content_type="text/css",
        charset="utf-8",
        headers={**HEADERS, "Cache-Control": "public, max-age=3600"},
    )


async def handle_list(request: web.Request) -> web.Response:
    return await _page(request, Site.list_page, Filters.of(request.query))


async def handle_record(request: web.Request) -> web.Response:
    service = request.app[PAGES]
    ident = request.match_info["ident"]
    found = await service.run(lambda site, i: site.lookup.find(i), ident)
    if found is None:
        return _busy(False)
    record, redirect = found
    if redirect is not None:
        raise web.HTTPFound(f"/errors/{redirect}", headers=HEADERS)
    if record is None:
        page = await service.run(
            lambda site, i: site.not_found_page(i, site.lookup.ambiguous(i)), ident
        )
        return _busy(False) if page is None else _html(page, 404)
    issues: list[dict[str, Any]] = []
    authorization = request.headers.get("Authorization")
    if service.issues is not None:
        issues = await service.issues(record.repo, record.id, authorization)
    response = await _page(request, Site.record_page, record, issues)
    if authorization:
        response.headers["Cache-Control"] = "private, no-store"  # may list private issues
    return response


async def handle_api_record(request: web.Request) -> web.Response:
    service = request.app[PAGES]
    ident = request.match_info["ident"]
    found = await service.run(lambda site, i: site.lookup.find(i), ident)
    if found is None:
        return _busy(True)
    record, redirect = found
    if redirect is not None:
        raise web.HTTPFound(f"/api/errors/{redirect}", headers=HEADERS)
    if record is None:
        return _json({"error": f"no record {ident[:200]!r} in the catalog"}, 404)
    body = await service.run(Site.record_bytes, record)
    if body is None:
        return _busy(True)
    return web.Response(body=body, content_type="application/json", headers=HEADERS)


async def _paste_body(request: web.Request, api: bool) -> bytes | web.Response:
    """The paste, or the refusal: too large (413), over the client's rate (429)."""
    service = request.app[PAGES]
    cap = service.limits.max_body
    kb = cap // 1024
    too_large = f"the text is over {kb} KB: paste the panic and the lines around it"
    length = request.content_length
    if length is not None and length > cap * 4:  # a form body is url-encoded: up to 3x longer
        return _json({"error": too_large}, 413) if api else _plain(too_large, 413)
    client = request.remote or "?"
    if not service.allow(client):
        message = f"at most {service.limits.per_minute} pastes a minute; try again shortly"
        headers = {"Retry-After": "60"}
        if api:
            return _json({"error": message}, 429, headers)
        return _plain(message, 429, headers)
    if service.full():
        # Reading a body only to refuse it would cost the event loop what webhooks need.
        return _busy(api)
    if service._reading.get(client, 0) >= service.limits.per_client_reading:
        # One address sending many slow bodies holds no more connections than this.
        message = "too many pastes of yours are still arriving; try again shortly"
        return _json({"error": message}, 429) if api else _plain(message, 429)
    service._reading[client] = service._reading.get(client, 0) + 1
    body = bytearray()
    try:
        async with asyncio.timeout(service.limits.read_timeout):
            while True:
                chunk = await request.content.read(64 * 1024)
                if not chunk:
                    break
                body += chunk
                if len(body) > cap * 4:
                    return _json({"error": too_large}, 413) if api else _plain(too_large, 413)
    except TimeoutError:
        slow = f"the text did not arrive within {service.limits.read_timeout:g} s"
        return _json({"error": slow}, 408) if api else _plain(slow, 408)
    finally:
        left = service._reading.get(client, 1) - 1
        if left:
            service._reading[client] = left
        else:
            service._reading.pop(client, None)
    data = bytes(body)
    if api:
        if request.content_type == "application/json":
            try:
                document = orjson.loads(data)
            except orjson.JSONDecodeError:
                return _json({"error": 'the body is not JSON; send {"text": "…"}'}, 400)
            text = document.get("text") if isinstance(document, dict) else None
            if not isinstance(text, str):
                return _json({"error": 'send {"text": "…"}, or the text as text/plain'}, 400)
            data = text.encode("utf-8", "replace")
    else:
        fields = parse_qs(data.decode("utf-8", "replace"), keep_blank_values=True)
        data = (fields.get("text") or [""])[0].encode("utf-8", "replace")
    if len(data) > cap:
        return _json({"error": too_large}, 413) if api else _plain(too_large, 413)
    return data


def _plain(message: str, status: int, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(status=status, text=message + "\n", headers={**HEADERS, **(headers or {})})


async def handle_paste(request: web.Request) -> web.Response:
    data = await _paste_body(request, api=False)
    if isinstance(data, web.Response):
        return data
    return await _page(request, Site.home_page, data.decode("utf-8", "replace"))


async def handle_api_match(request: web.Request) -> web.Response:
    data = await _paste_body(request, api=True)
    if isinstance(data, web.Response):
        return data
    service = request.app[PAGES]
    try:
        found = await service.run(lambda site, d: match_bytes_json(site.triage, d), data)
    except TimeoutError:
        return _json({"error": "the match took too long"}, 503)
    return _busy(True) if found is None else _json(found)
