"""`triage-bot serve`: one aiohttp process for GitHub webhooks, health, metrics, and Discord.

- POST /github/webhook: verify the signature before anything else (401, nothing stored), refuse
  bodies over 25 MB without reading them whole (413), parse (400), store the delivery and its job
  durably, answer 202, work afterwards in the worker. A delivery id seen before is acknowledged
  (200) and not processed again.
- GET /healthz: 200 when the store answers and the worker runs, else 503. With Discord on, a
  Discord client that is not connected makes it "degraded" (200 while GitHub is served too, 503
  when Discord is all this process serves), with a line saying why.
- GET /metrics: Prometheus text format (and the Discord client's state when Discord is on).
- GET /stats: the stats page (answers by record, precision, uncatalogued panics; no JS).
- With DISCORD_TOKEN set, the Discord client runs in the same event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import inspect
import logging
import time
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

from bot.github import webhook
from bot.github.metrics import Metrics
from bot.settings import Settings, SettingsError
from bot.store import Store

log = logging.getLogger(__name__)


@dataclass
class ServerState:
    settings: Settings
    store: Store
    triage: Any
    metrics: Metrics
    worker: Any = None  # bot.github.worker.Worker when GitHub is configured
    pipeline: Any = None
    clients: Any = None
    background: list[asyncio.Task[Any]] = field(default_factory=list)
    owns_store: bool = False
    http_session: aiohttp.ClientSession | None = None  # the process's one aiohttp session
    discord_status: Any = None  # bot.discord.health.DiscordStatus while Discord runs


STATE = web.AppKey("triage_state", ServerState)


def load_triage(settings: Settings) -> Any:
    """The pipeline over TRIAGE_CATALOG (or the bundled catalog); SettingsError if unusable."""
    from bot.app import Triage
    from bot.catalog.loader import CatalogError

    paths = [settings.triage_catalog] if settings.triage_catalog else None
    try:
        return Triage.from_paths(paths)
    except CatalogError as exc:
        where = settings.triage_catalog or "the bundled catalog"
        shown = "; ".join(str(p) for p in exc.problems[:3])
        more = f" (and {len(exc.problems) - 3} more)" if len(exc.problems) > 3 else ""
        raise SettingsError(
            f"TRIAGE_CATALOG: {where} cannot be loaded: {shown}{more}", ("TRIAGE_CATALOG",)
        ) from exc


def create_app(
    settings: Settings,
    *,
    triage: Any = None,
    store: Store | None = None,
    clients: Any = None,
    worker_options: dict[str, Any] | None = None,
    client_options: Any = None,
    start_discord: bool = True,
) -> web.Application:
    """Build the application. Missing pieces (store, catalog, GitHub clients) come from settings."""
    owns_store = store is None
    if store is None:
        store = Store(settings.triage_db)
    if triage is None:
        triage = load_triage(settings)
    metrics = Metrics()
    state = ServerState(settings, store, triage, metrics, owns_store=owns_store)
    metrics.gauge("triage_queue_depth", "Jobs queued or running", store.queue_depth)
    metrics.gauge(
        "triage_dead_jobs", "Jobs in the dead-letter list", lambda: store.job_counts()["dead"]
    )

    if settings.github_enabled:
        from bot.github.adapter import GitHubAdapter
        from bot.github.auth import GitHubClients
        from bot.github.pipeline import pipeline_from_settings
        from bot.github.worker import Worker

        if clients is None:
            clients = GitHubClients(settings, client_options)
        state.clients = clients
        adapter = GitHubAdapter(clients, metrics)
        state.pipeline = pipeline_from_settings(settings, triage, adapter, store, metrics)
        state.worker = Worker(
            store, state.pipeline.handle_job, metrics=metrics, **(worker_options or {})
        )

    # The body cap is ours (checked before reading); aiohttp's own limit sits just above it.
    app = web.Application(client_max_size=webhook.MAX_BODY + 1024)
    app[STATE] = state
    app.router.add_post("/github/webhook", handle_webhook)
    app.router.add_get("/healthz", handle_health)
    app.router.add_get("/metrics", handle_metrics)
    app.router.add_get("/stats", handle_stats)
    app.on_startup.append(_startup(start_discord))
    app.on_cleanup.append(_cleanup)
    return app


def _startup(start_discord: bool):
    async def startup(app: web.Application) -> None:
        state = app[STATE]
        if state.worker is not None:
            state.background.append(state.worker.start())
        if start_discord and state.settings.discord_enabled:
            from bot.discord.client import run_discord  # imported only when a token is set
            from bot.discord.health import DiscordStatus

            # One aiohttp session per process, shared with the Discord side (discord.py keeps
            # its own for the Discord API).
            state.http_session = aiohttp.ClientSession()
            state.discord_status = DiscordStatus()
            result = run_discord(
                state.settings,
                state.triage,
                state.store,
                state.http_session,
                status=state.discord_status,
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
    if state.owns_store:
        state.store.close()


def _refuse(state: ServerState, status: int, reason: str, message: str) -> web.Response:
    state.metrics.inc("triage_deliveries_refused_total", reason=reason)
    return web.json_response({"error": message}, status=status)


async def _read_capped(request: web.Request, cap: int) -> bytes | None:
    """The body, or None as soon as it exceeds `cap` bytes (without reading the rest)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = await request.content.read(64 * 1024)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > cap:
            return None
        chunks.append(chunk)


async def handle_webhook(request: web.Request) -> web.Response:
    state = request.app[STATE]
    received_at = time.time()
    if state.worker is None or not state.settings.github_webhook_secrets:
        return _refuse(state, 404, "not-configured", "GitHub webhooks are not configured")
    length = request.content_length
    if length is not None and length > webhook.MAX_BODY:
        return _refuse(state, 413, "too-large", "payload exceeds 25 MB")
    body = await _read_capped(request, webhook.MAX_BODY)
    if body is None:
        return _refuse(state, 413, "too-large", "payload exceeds 25 MB")
    signature = request.headers.get("X-Hub-Signature-256")
    if not webhook.verify_signature(state.settings.github_webhook_secrets, body, signature):
        reason = "missing-signature" if not signature else "bad-signature"
        return _refuse(state, 401, reason, "signature missing or wrong")
    event = request.headers.get("X-GitHub-Event", "")
    if not event:
        return _refuse(state, 400, "malformed", "X-GitHub-Event is required")
    # GitHub always names the delivery; a sender that does not gets one from the body, so that
    # the same body sent twice is still processed once.
    delivery_id = request.headers.get("X-GitHub-Delivery") or (
        "body-" + hashlib.sha256(body).hexdigest()[:32]
    )
    try:
        payload = webhook.parse_body(body, request.content_type)
        decision = webhook.decide(event, payload, received_at=received_at)
    except webhook.MalformedDelivery as exc:
        return _refuse(state, 400, "malformed", str(exc))

    accepted = state.store.accept_delivery(delivery_id, event, decision.action, decision.job)
    if accepted and decision.issue_state is not None:
        # open/closed, for "Also reported in #12 (closed)" (closing an issue queues no job)
        state.store.set_issue_open_state(*decision.issue_state)
    if not accepted:
        state.metrics.inc("triage_deliveries_total", event=event, outcome="duplicate")
        log.info("delivery %s (%s) seen before: acknowledged, not processed", delivery_id, event)
        return web.json_response({"status": "duplicate"}, status=200)
    state.metrics.inc("triage_deliveries_total", event=event, outcome=decision.reason)
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


async def handle_health(request: web.Request) -> web.Response:
    state = request.app[STATE]
    checks: dict[str, str] = {}
    ok = True
    try:
        await asyncio.to_thread(state.store.check_writable)
        checks["store"] = "ok"
    except Exception as exc:
        checks["store"] = f"error: {exc}"
        ok = False
    if state.worker is not None:
        alive = state.worker.alive
        checks["worker"] = "ok" if alive else "stopped"
        ok = ok and alive
        checks["queue_depth"] = str(state.store.queue_depth())
    overall = "ok" if ok else "unhealthy"
    # --- Discord: its own (status, detail), from bot/discord/health.py ---
    if state.discord_status is not None:
        discord_health, checks["discord"] = state.discord_status.health()
        if discord_health != "ok" and ok:
            ok = state.worker is not None  # GitHub still served: degraded, not down
            overall = "degraded"
    return web.json_response({"status": overall, **checks}, status=200 if ok else 503)


async def handle_stats(request: web.Request) -> web.Response:
    """The stats page: answers by record over time, precision, uncatalogued panics.

    Query: `repo=OWNER/NAME`, `since=YYYY-MM-DD`. No scripts, no outside resources."""
    from bot.stats_command import stats_page

    state = request.app[STATE]
    repo = request.query.get("repo") or None
    since = request.query.get("since") or None
    try:
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
    text = state.metrics.render()
    # --- Discord: connected 0/1, state, errors by kind (bot/discord/health.py) ---
    if state.discord_status is not None:
        text += state.discord_status.metrics_text()
    return web.Response(
        body=text.encode(),
        headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"},
    )


def run(settings: Settings, host: str, port: int) -> None:
    """Serve until interrupted."""
    app = create_app(settings)
    web.run_app(app, host=host, port=port, access_log=None, print=None)
