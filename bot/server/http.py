"""`triage-bot serve`: one aiohttp process for GitHub webhooks, health, metrics, and Discord.

- POST /github/webhook: before reading the body, refuse what cannot be genuine: no signature
  header (401), a Content-Length over 25 MB (413). Headers and body must be in within
  TRIAGE_READ_TIMEOUT seconds (headers: the connection is closed; body: 408, counted in
  triage_webhook_slow_requests_total). Small bodies (64 KiB) are read before taking a slot, so
  slow senders cannot hold the slots genuine deliveries need. At most `WebhookLimits` requests
  and body bytes are read or stored at once; others wait their turn, a bounded while (then
  503). Then read
  the body with a cap, verify the signature (401, nothing stored), parse (400, never a 500),
  refuse repositories outside TRIAGE_REPOS (403), store the delivery and its job durably (503
  when the store is locked or broken), answer 202, work afterwards in the worker. A delivery id
  seen before is acknowledged (200) and not processed again.
- GET /healthz: JSON with a status per component (`bot.health`): 200 when all are ok,
  else 503.
  With Discord on, a Discord client that is not connected makes it "degraded" (200 while GitHub
  is served too, 503 when Discord is all this process serves), with a line saying why.
- GET /metrics: Prometheus text format (counts only: no repository names, no texts), and the
  Discord client's state when Discord is on.
- GET /stats: the stats page (answers by record, precision, uncatalogued panics; no JS). It shows
  repository names and panic texts, so it is off (404) unless TRIAGE_STATS_TOKEN is set, and then
  asks for that token (`Authorization: Bearer TOKEN`, or basic auth with the token as password).
- With DISCORD_TOKEN set, the Discord client runs in the same event loop.
- Open connections are capped below the open-file limit (bot.server.listen): past the cap the
  oldest is closed (triage_connections_shed_total), so a flood never exhausts descriptors.
- The catalog's pages (bot.server.site_routes), unless TRIAGE_PAGES=0: GET /, /errors, /errors/ID,
  /api/errors/ID, POST / and POST /api/match, on their own bounded thread.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import hashlib
import hmac
import inspect
import logging
import sqlite3
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

from bot.app import Triage, load_triage
from bot.config.settings import WILDCARD_HOSTS, Settings, SettingsError
from bot.discord import client as discord_client  # by module: tests replace run_discord
from bot.discord.status import DiscordStatus
from bot.github import webhook
from bot.github.adapter import GitHubAdapter
from bot.github.auth import ClientOptions, GitHubClients
from bot.github.metrics import Metrics
from bot.github.pipeline import IssuePipeline, pipeline_from_settings
from bot.github.worker import Worker
from bot.health import Health, Status
from bot.server import catalog_swap, site_routes
from bot.server.listen import connection_cap, serve_until_stopped
from bot.server.stats_page import stats_page
from bot.site.data import public_issue_rows
from bot.store import open as store_open
from bot.store.interface import TriageStore
from bot.store.thread import StoreAccess, store_errors

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WebhookLimits:
    """What one webhook request may cost before its signature is known."""

    max_body: int = webhook.MAX_BODY
    # bodies being read at once, in bytes (a request reserves its Content-Length, or max_body)
    max_inflight_bytes: int = 64 * 1024 * 1024
    max_concurrent: int = 32  # webhook requests being read or stored at once
    # more wait their turn, unread (aiohttp buffers at most ~128 KiB of each), this long at most;
    # past `max_waiting` waiting, or the wait, a 503: GitHub does not redeliver by itself, so a
    # burst of genuine deliveries queues rather than being refused
    max_waiting: int = 128
    turn_wait: float = 5.0
    store_wait: float = 5.0  # seconds a delivery waits for the store before a 503
    # seconds from a request's headers to its last body byte (TRIAGE_READ_TIMEOUT), then 408
    read_timeout: float = 10.0
    # bodies up to this size are read before taking a slot: aiohttp buffers about this much of
    # each connection anyway, so slow senders of small bodies cost no slot a genuine one needs
    unslotted_body: int = 64 * 1024
    max_unslotted: int = 1024  # small bodies being read at once (then 503)


class InflightBudget:
    """Webhook requests being read at once, and their bytes, bounded; others wait a while."""

    def __init__(self) -> None:
        self.bytes = 0
        self.requests = 0
        self.waiting = 0
        self._changed = asyncio.Condition()

    async def acquire(self, size: int, limits: WebhookLimits) -> bool:
        def fits() -> bool:
            return (
                self.requests < limits.max_concurrent
                and self.bytes + size <= limits.max_inflight_bytes
            )

        if not fits() and self.waiting >= limits.max_waiting:
            return False
        async with self._changed:
            self.waiting += 1
            try:
                await asyncio.wait_for(self._changed.wait_for(fits), limits.turn_wait)
            except TimeoutError:
                return False
            finally:
                self.waiting -= 1
            self.bytes += size
            self.requests += 1
            return True

    async def release(self, size: int) -> None:
        async with self._changed:
            self.bytes -= size
            self.requests -= 1
            self._changed.notify_all()


@dataclass
class ServerState:
    settings: Settings
    store: TriageStore
    triage: Triage
    metrics: Metrics
    db: StoreAccess  # the store's own thread: webhooks, worker, Discord
    worker: Worker | None = None  # when GitHub is configured
    pipeline: IssuePipeline | None = None
    clients: GitHubClients | None = None
    background: list[asyncio.Future[Any]] = field(default_factory=list)
    owns_store: bool = False
    http_session: aiohttp.ClientSession | None = None  # the process's one aiohttp session
    health: Health = field(default_factory=Health)
    limits: WebhookLimits = field(default_factory=WebhookLimits)
    inflight: InflightBudget = field(default_factory=InflightBudget)
    unslotted: int = 0  # small bodies being read outside the budget
    discord_status: DiscordStatus | None = None  # while Discord runs
    follower: catalog_swap.CatalogFollower | None = None  # catalog sources followed (issue 26)


STATE = web.AppKey("triage_state", ServerState)


def create_app(
    settings: Settings,
    *,
    triage: Triage | None = None,
    store: TriageStore | None = None,
    clients: GitHubClients | None = None,
    worker_options: dict[str, Any] | None = None,
    client_options: ClientOptions | None = None,
    start_discord: bool = True,
    limits: WebhookLimits | None = None,
) -> web.Application:
    """Build the application. Missing pieces (store, catalog, GitHub clients) come from settings.

    A short webhook secret, or a TRIAGE_DB that is not a sound SQLite database, stops start-up
    with a SettingsError naming the setting (and the file)."""
    if settings.github_enabled and settings.github_webhook_secrets:
        settings.require_strong_webhook_secrets()
    owns_store = store is None
    if store is None:
        store = open_store(settings)
    if triage is None:
        triage = load_triage(settings)
    metrics = Metrics()
    state = ServerState(
        settings,
        store,
        triage,
        metrics,
        StoreAccess.of(store),
        owns_store=owns_store,
        limits=limits or WebhookLimits(read_timeout=settings.triage_read_timeout),
    )
    metrics.counter(
        "triage_webhook_slow_requests_total",
        "Webhook requests cut (408) because their body was not in within TRIAGE_READ_TIMEOUT",
    )
    metrics.inc("triage_webhook_slow_requests_total", 0)
    metrics.counter(
        "triage_connections_shed_total",
        "Connections closed because the connection cap (below the open-file limit) was reached",
    )
    metrics.inc("triage_connections_shed_total", 0)
    metrics.gauge("triage_queue_depth", "Jobs queued or running", store.queue_depth)
    metrics.gauge(
        "triage_dead_jobs", "Jobs in the dead-letter list", lambda: store.job_counts()["dead"]
    )
    oldest = getattr(store, "oldest_queued_age", None)
    if oldest is not None:
        metrics.gauge(
            "triage_queue_oldest_age_seconds", "Seconds the oldest queued job has waited", oldest
        )
    state.health.register(
        "store",
        state.db.check,
        slow="the store does not answer: the database is locked by another connection, "
        "or its server is unreachable",
    )

    if settings.github_enabled:
        if clients is None:
            clients = GitHubClients(settings, client_options)
        state.clients = clients
        adapter = GitHubAdapter(clients, metrics)
        state.pipeline = pipeline_from_settings(settings, triage, adapter, store, metrics)
        options: dict[str, Any] = {
            "gates": getattr(clients, "gates", None),
            "allowed": settings.repo_allowed if settings.triage_repos else None,
        }
        if hasattr(clients, "gate_key"):
            options["gate_key"] = clients.gate_key
        options.update(worker_options or {})
        state.worker = Worker(store, state.pipeline.handle_job, metrics=metrics, **options)
        state.health.register(
            "worker", _worker_check(state.worker, store, settings.triage_degraded_age)
        )

    # An adapter without credentials stays off, and health says so (still 200: the pages and
    # /api/match serve without them).
    for line in settings.adapters_off():
        name, _, detail = line.partition(": ")
        state.health.register(name.lower(), _off(detail))

    # The body cap is ours (checked before reading); aiohttp's own limit sits just above it.
    app = web.Application(client_max_size=webhook.MAX_BODY + 1024, middlewares=[client_gone])
    app[STATE] = state
    state.follower = catalog_swap.install(state, app)
    app.router.add_post("/github/webhook", handle_webhook)
    app.router.add_get("/healthz", handle_health)
    app.router.add_get("/metrics", handle_metrics)
    app.router.add_get("/stats", handle_stats)
    if settings.triage_pages:
        pages = site_routes.PageService(
            triage,
            limits=site_routes.PageLimits(read_timeout=settings.triage_read_timeout),
            issues=_page_issues(state),
            current=lambda: state.triage,
        )
        site_routes.add_routes(app, pages)
    app.on_startup.append(_startup(start_discord))
    app.on_cleanup.append(_cleanup)
    return app


def _page_issues(state: ServerState) -> site_routes.IssuesFor:
    """A record page's known issues: those of the record's own project (a public repository:
    the catalog links its source); with TRIAGE_STATS_TOKEN given, every repository's."""

    def every_repo(repo: str, record_id: str) -> tuple[list[dict[str, Any]], list[str]]:
        repos = {repo.lower()}
        for answer in state.store.list_answers("github"):
            if record_id in answer["record_ids"]:
                repos.add(str(answer["subject"]).rsplit("#", 1)[0].lower())
        rows = [
            r for name in sorted(repos) for r in state.store.issues_for_records(name, [record_id])
        ]
        return rows, sorted(repos)

    async def issues(repo: str, record_id: str, authorization: str | None) -> list[dict[str, Any]]:
        try:
            if stats_authorized(state.settings, authorization):
                rows, repos = await asyncio.wait_for(
                    state.db.call(every_repo, repo, record_id), 2.0
                )
                return public_issue_rows(rows, repos)
            rows = await asyncio.wait_for(
                state.db.call(state.store.issues_for_records, repo, [record_id]), 1.0
            )
        except (TimeoutError, *store_errors()):  # type: ignore[misc]  # a tuple, built at run time
            return []  # the page without them rather than no page
        return public_issue_rows(rows, [repo])

    return issues


def open_store(settings: Settings) -> TriageStore:
    """TRIAGE_DB opened, migrated and checked; a SettingsError naming the file when it cannot be
    used (one clear error at start, not a worker dying later). A PostgreSQL URL opens the shared
    store (its own errors name the URL, password hidden)."""
    try:
        return store_open.open_store(settings)
    except store_open.StoreUnusable as exc:
        raise SettingsError(str(exc), ("TRIAGE_DB",)) from exc


def _worker_check(
    worker: Worker, store: TriageStore, degraded_age: float
) -> Callable[[], Awaitable[Status]]:
    async def check() -> Status:
        if not worker.alive:
            reason = getattr(worker, "stopped_by", None)
            return Status(False, f"stopped: {reason}" if reason else "not running")
        reasons = worker.troubles(degraded_age)
        try:
            oldest = await asyncio.wait_for(worker.db.call(store.oldest_queued_age), 1.0)
        except (TimeoutError, *store_errors()):  # type: ignore[misc]  # a tuple, built at run time
            oldest = 0.0  # the store's own check names a lock or an outage
        if oldest > degraded_age:
            reasons.append(
                f"the oldest queued job has waited {oldest:.0f} s (over {degraded_age:g} s)"
            )
        if reasons:
            return Status(True, "; ".join(reasons), degraded=True)
        return Status(True)

    return check


def _off(detail: str) -> Callable[[], Status]:
    def check() -> Status:
        return Status(True, detail)

    return check


def _discord_check(status: DiscordStatus, window: float) -> Callable[[], Status]:
    def check() -> Status:
        health, line = status.health()
        trouble = status.answers_trouble(window) if health == "ok" else None
        if trouble:  # connected, but answers are being dropped: degraded, still 200
            return Status(True, f"{line}; {trouble}", degraded=True)
        return Status(health == "ok", line)

    return check


def _startup(start_discord: bool) -> Callable[[web.Application], Awaitable[None]]:
    async def startup(app: web.Application) -> None:
        state = app[STATE]
        if state.worker is not None:
            state.background.append(state.worker.start())
        if start_discord and state.settings.discord_enabled:
            # One aiohttp session per process, shared with the Discord side (discord.py keeps
            # its own for the Discord API).
            state.http_session = aiohttp.ClientSession()
            state.discord_status = DiscordStatus()
            state.health.register(
                "discord",
                _discord_check(state.discord_status, state.settings.triage_degraded_age),
            )
            result = discord_client.run_discord(
                state.settings,
                state.follower.live if state.follower and state.follower.live else state.triage,
                state.store,
                state.http_session,
                status=state.discord_status,
                db=state.db,  # one store thread for the process: webhooks, worker, Discord
            )
            if inspect.isawaitable(result):
                task = asyncio.ensure_future(result)
                task.add_done_callback(_report_discord_end)
                state.background.append(task)
            log.info("discord client started")

    return startup


def _report_discord_end(task: asyncio.Future[Any]) -> None:
    if task.cancelled():
        return
    exc = task.exception()
    if exc is not None:
        log.error("discord client stopped: %s", exc, exc_info=exc)


async def _cleanup(app: web.Application) -> None:
    state = app[STATE]
    if state.worker is not None:
        await state.worker.stop()
    for task in state.background:
        if not task.done():
            task.cancel()
    for task in state.background:
        with contextlib.suppress(BaseException):
            await task
    if state.clients is not None:
        await asyncio.to_thread(state.clients.close)
    if state.http_session is not None:
        await state.http_session.close()
    state.db.close()
    if state.owns_store:
        state.store.close()


def _refuse(
    state: ServerState, status: int, reason: str, message: str, retry_after: int | None = None
) -> web.Response:
    state.metrics.inc("triage_deliveries_refused_total", reason=reason)
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
    return web.json_response({"error": message}, status=status, headers=headers)


async def _read_capped(request: web.Request, cap: int) -> bytearray | None:
    """The body, or None as soon as it exceeds `cap` bytes (without reading the rest).

    With a Content-Length the buffer is allocated once at its size: growing it chunk by chunk
    would copy it over and over, holding two copies at the moment of each copy."""
    length = request.content_length
    if length is not None and length <= cap:
        body = bytearray(length)
        view = memoryview(body)
        filled = 0
        while filled < length:
            chunk = await request.content.read(min(64 * 1024, length - filled))
            if not chunk:
                break
            view[filled : filled + len(chunk)] = chunk
            filled += len(chunk)
        view.release()
        del body[filled:]
        return body
    body = bytearray()
    while True:
        chunk = await request.content.read(64 * 1024)
        if not chunk:
            return body
        if len(body) + len(chunk) > cap:
            return None
        body += chunk


async def handle_webhook(request: web.Request) -> web.Response:
    state = request.app[STATE]
    limits = state.limits
    received_at = time.time()
    if state.worker is None or not state.settings.github_webhook_secrets:
        return _refuse(state, 404, "not-configured", "GitHub webhooks are not configured")
    # everything that can be refused without reading the body is refused first
    length = request.content_length
    if length is not None and length > limits.max_body:
        return _refuse(state, 413, "too-large", "payload exceeds 25 MB")
    signature = request.headers.get("X-Hub-Signature-256")
    if not signature or not signature.startswith("sha256="):
        reason = "missing-signature" if not signature else "bad-signature"
        return _refuse(state, 401, reason, "signature missing or wrong")
    event = request.headers.get("X-GitHub-Event", "")
    if not event:
        return _refuse(state, 400, "malformed", "X-GitHub-Event is required")
    problem = state.db.problem()
    if problem:
        log.error("delivery refused (503): store unavailable: %s", problem)
        return _refuse(state, 503, "store-unavailable", "the store is unavailable", 60)
    deadline = asyncio.get_running_loop().time() + limits.read_timeout
    if length is not None and length <= limits.unslotted_body:
        # small: read first (bounded in time), then take a slot for its bytes
        if state.unslotted >= limits.max_unslotted:
            return _refuse(state, 503, "busy", "too many deliveries at once; try again", 5)
        state.unslotted += 1
        try:
            body = await _read_until(request, limits.max_body, deadline)
        finally:
            state.unslotted -= 1
        if isinstance(body, web.Response):
            return _slow(state, body)
        if body is not None and not webhook.verify_signature(
            state.settings.github_webhook_secrets, body, signature
        ):
            # unauthenticated work is done before a slot is taken: forged or junk deliveries
            # never hold the slots genuine ones need
            return _refuse(state, 401, "bad-signature", "signature missing or wrong")
        reserve = len(body) if body is not None else 0
        if not await state.inflight.acquire(reserve, limits):
            return _refuse(state, 503, "busy", "too many deliveries at once; try again", 5)
        try:
            return await _accept(request, state, event, signature, received_at, body)
        finally:
            await state.inflight.release(reserve)
    reserve = length if length is not None else limits.max_body
    if not await state.inflight.acquire(reserve, limits):
        return _refuse(state, 503, "busy", "too many deliveries at once; try again", 5)
    try:
        body = await _read_until(request, limits.max_body, deadline)
        if isinstance(body, web.Response):
            return _slow(state, body)
        return await _accept(request, state, event, signature, received_at, body)
    finally:
        await state.inflight.release(reserve)


async def _read_until(
    request: web.Request, cap: int, deadline: float
) -> bytearray | web.Response | None:
    """The body (None over `cap`), or a 408 when it is not all in by `deadline`."""
    try:
        async with asyncio.timeout_at(deadline):  # no task per request, unlike wait_for
            return await _read_capped(request, cap)
    except TimeoutError:
        response = web.json_response({"error": "the body was not sent in time"}, status=408)
        # the rest of the body is unread: the connection cannot carry another request
        response.force_close()
        return response


def _slow(state: ServerState, response: web.Response) -> web.Response:
    state.metrics.inc("triage_webhook_slow_requests_total")
    state.metrics.inc("triage_deliveries_refused_total", reason="slow")
    log.warning(
        "webhook request cut (408): its body was not in within %g s", state.limits.read_timeout
    )
    return response


async def _accept(
    request: web.Request,
    state: ServerState,
    event: str,
    signature: str,
    received_at: float,
    body: bytearray | None,
) -> web.Response:
    if body is None:
        return _refuse(state, 413, "too-large", "payload exceeds 25 MB")
    if not webhook.verify_signature(state.settings.github_webhook_secrets, body, signature):
        return _refuse(state, 401, "bad-signature", "signature missing or wrong")
    # GitHub always names the delivery; a sender that does not gets one from the body, so that
    # the same body sent twice is still processed once.
    delivery_id = request.headers.get("X-GitHub-Delivery") or (
        "body-" + hashlib.sha256(body).hexdigest()[:32]
    )
    try:
        payload = webhook.parse_body(bytes(body), request.content_type)
        del body
        decision = webhook.decide(event, payload, received_at=received_at)
    except webhook.MalformedDelivery as exc:
        return _refuse(state, 400, "malformed", str(exc))
    except (RecursionError, TypeError, ValueError, AttributeError, KeyError) as exc:
        # a signed but odd payload: a clear 400, never a 500 with a traceback
        log.warning("delivery %s (%s) refused: unreadable payload (%s)", delivery_id, event, exc)
        return _refuse(state, 400, "malformed", "payload has an unexpected shape")
    repo = decision.job["repo"] if decision.job else None
    if repo is None and decision.issue_state is not None:
        repo = decision.issue_state[0]
    if repo is not None and not state.settings.repo_allowed(repo):
        log.warning(
            "delivery %s (%s) for %s refused: not in TRIAGE_REPOS", delivery_id, event, repo
        )
        return _refuse(state, 403, "repo-not-allowed", "repository not in TRIAGE_REPOS")

    try:
        accepted = await asyncio.wait_for(
            state.db.call(_store_delivery, state.store, delivery_id, event, decision),
            state.limits.store_wait,
        )
    except TimeoutError:
        log.error("delivery %s refused (503): the store did not answer in time", delivery_id)
        return _refuse(state, 503, "store-busy", "the store is busy; try again", 5)
    except sqlite3.Error as exc:
        log.error("delivery %s refused (503): the store failed: %s", delivery_id, exc)
        return _refuse(state, 503, "store-error", "the store is unavailable; try again", 5)
    if not accepted:
        state.metrics.inc("triage_deliveries_total", event=event, outcome="duplicate")
        log.info("delivery %s (%s) seen before: acknowledged, not processed", delivery_id, event)
        return web.json_response({"status": "duplicate"}, status=200)
    state.metrics.inc("triage_deliveries_total", event=event, outcome=decision.reason)
    if state.follower is not None:
        state.follower.notice(event, payload)
    if decision.job is None:
        log.info(
            "delivery %s event=%s action=%s: %s",
            delivery_id,
            event,
            decision.action,
            decision.reason,
        )
        status = "pong" if decision.reason == "ping" else decision.reason
        return web.json_response({"status": status}, status=200)
    assert state.worker is not None  # handle_webhook answered 404 without one
    state.worker.wake()
    log.info(
        "delivery %s event=%s action=%s repo=%s issue=%s: queued",
        delivery_id,
        event,
        decision.action,
        decision.job["repo"],
        decision.job["number"],
    )
    return web.json_response({"status": "queued"}, status=202)


def _store_delivery(
    store: TriageStore, delivery_id: str, event: str, decision: webhook.Decision
) -> bool:
    """On the store's thread: the delivery and its job, and the issue's open/closed state."""
    accepted = store.accept_delivery(delivery_id, event, decision.action, decision.job)
    if accepted and decision.issue_state is not None:
        # open/closed, for "Also reported in #12 (closed)" (closing an issue queues no job)
        store.set_issue_open_state(*decision.issue_state)
    return accepted


async def handle_health(request: web.Request) -> web.Response:
    """Each component's status; never waits on a locked database (checks are time-bound)."""
    state = request.app[STATE]
    ok, report = await state.health.report()
    components = report["components"]
    # the flat `name: "ok"` keys kept for probes written against the earlier answer; Discord's
    # is its own line ("connected as …", "stopped: …")
    flat = {
        name: "ok" if c["status"] == "ok" else f"{c['status']}: {c.get('detail', '')}"
        for name, c in components.items()
    }
    if "discord" in components:
        flat["discord"] = components["discord"].get("detail", "")
        others_ok = all(c["status"] != "error" for n, c in components.items() if n != "discord")
        if components["discord"]["status"] == "error" and others_ok:
            # GitHub still served: degraded, not down; Discord alone: down
            report["status"] = "degraded"
            ok = state.worker is not None
    return web.json_response({**flat, **report}, status=200 if ok else 503)


def stats_authorized(settings: Settings, header: str | None) -> bool:
    """`Bearer TOKEN`, or basic auth whose password is TRIAGE_STATS_TOKEN (any user name)."""
    token = settings.triage_stats_token
    if not token or not header:
        return False
    scheme, _, value = header.strip().partition(" ")
    value = value.strip()
    if scheme.lower() == "basic":
        try:
            decoded = base64.b64decode(value, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return False
        value = decoded.partition(":")[2]
    elif scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(value.encode(), token.encode())


async def handle_stats(request: web.Request) -> web.Response:
    """The stats page: answers by record over time, precision, uncatalogued panics.

    Query: `repo=OWNER/NAME`, `since=YYYY-MM-DD`. No scripts, no outside resources."""

    state = request.app[STATE]
    if not state.settings.triage_stats_token:
        raise web.HTTPNotFound(text="GET /stats is off: set TRIAGE_STATS_TOKEN to serve it\n")
    if not stats_authorized(state.settings, request.headers.get("Authorization")):
        return web.Response(
            status=401,
            text="GET /stats needs TRIAGE_STATS_TOKEN (Bearer, or basic auth password)\n",
            headers={"WWW-Authenticate": 'Basic realm="triage-bot stats", charset="UTF-8"'},
        )
    repo = request.query.get("repo") or None
    since = request.query.get("since") or None
    try:
        # not on the store's thread: a long page must not hold deliveries up (its queries are
        # short reads, which WAL lets run beside the writes)
        page = await asyncio.to_thread(stats_page, state.store, state.triage, repo, since)
    except ValueError as exc:
        return web.json_response({"error": str(exc)}, status=400)
    return web.Response(
        text=page,
        content_type="text/html",
        charset="utf-8",
        headers={
            "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
            "img-src data:",
            "X-Content-Type-Options": "nosniff",
        },
    )


async def handle_metrics(request: web.Request) -> web.Response:
    state = request.app[STATE]
    try:
        # the gauges read the store: on its thread, time-bound
        text = await asyncio.wait_for(state.db.call(state.metrics.render), 5.0)
    except TimeoutError:
        return web.json_response({"error": "the store is busy; try again"}, status=503)
    # --- Discord: connected 0/1, state, errors by kind (bot/discord/status.py) ---
    if state.discord_status is not None:
        text += state.discord_status.metrics_text()
    if state.follower is not None:
        text += state.follower.metrics_text()
    return web.Response(
        body=text.encode(),
        headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"},
    )


@web.middleware
async def client_gone(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """A request whose connection went away while its body was read (the client left, or the
    connection cap closed it) ends quietly, not as a 500 with a traceback in the log."""
    try:
        return await handler(request)
    except ConnectionResetError:
        if request.transport is not None and not request.transport.is_closing():
            raise  # not this request's own connection: a real error
        raise web.HTTPBadRequest(text="the connection was lost\n") from None


def run(settings: Settings, host: str, port: int) -> None:
    """Serve until interrupted."""
    app = create_app(settings)
    if host in WILDCARD_HOSTS:
        log.warning(
            "listening on %s: /metrics%s reachable from other machines; put the server "
            "behind a proxy that only forwards /github/webhook, or use --host 127.0.0.1",
            host,
            " and /stats (token-protected) are" if settings.triage_stats_token else " is",
        )
    metrics = app[STATE].metrics
    cap = connection_cap()

    def shed() -> None:
        metrics.inc("triage_connections_shed_total")
        log.warning("%d connections open: the oldest was closed to make room", cap)

    # aiohttp's keep-alive timer also runs from a connection's start: a request whose headers
    # are not all in by then is closed, which bounds the time to send headers
    asyncio.run(
        serve_until_stopped(
            app,
            host,
            port,
            keepalive_timeout=settings.triage_read_timeout,
            cap=cap,
            on_shed=shed,
        )
    )
