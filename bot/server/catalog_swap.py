"""`serve` keeps its catalog current (issue 26): the catalog sources of TRIAGE_CONFIG
(`[catalog_source.NAME]`) are refreshed (`bot.scan.refresh`) in a background thread on a `push`
to the followed branch, a `release` or a tag `create` of the followed repository, on a timer
(`poll_interval`, for deployments without webhooks) and once at start. The new catalog is loaded
whole in that thread, then swapped in on the event loop in one step: an answer under way keeps
the catalog it started with (the pipeline reads `triage` once per answer), the next one gets the
new one. A refresh or a load that fails leaves the old catalog serving; `/healthz` (component
`catalog`, degraded) and the log say so. `/healthz` and `/metrics` name the version served
(`catalog_version`: newest release + branch head) and since when.

`wants_refresh` is the pure decision; `CatalogFollower` acts.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from bot.app import Triage
from bot.config.settings import CatalogSource, Settings, load_catalog_sources
from bot.health import Status
from bot.scan.refresh import (
    Target,
    fetch_source,
    newest_target,
    read_state,
    refresh_catalog,
    supersedes,
)

if TYPE_CHECKING:
    from aiohttp import web

log = logging.getLogger(__name__)

REFRESH_EVENTS = ("push", "release", "create")
# Replicas on PostgreSQL: how often each reads the target the others published (one SELECT).
TARGET_CHECK_SECONDS = 2.0
TARGET_CURSOR = "catalog-target:{name}"
RETRY_FAILED_SECONDS = 60.0  # after a failed refresh, the next one the target asks for


class SharedTarget:
    """The catalog target every replica builds, in the shared store's cursors; called from the
    refresh thread, run on the store's own thread through the event loop."""

    def __init__(self, read: Callable[[str], str | None], write: Callable[[str, str], None]):
        self.read = read
        self.write = write


RELEASE_ACTIONS = frozenset({"published", "released", "created", "prereleased"})


def wants_refresh(event: str, payload: Mapping[str, Any], source: CatalogSource) -> bool:
    """Whether a delivery says the source's branch or tags moved."""
    if event not in REFRESH_EVENTS:
        return False
    repo = payload.get("repository")
    name = repo.get("full_name") if isinstance(repo, Mapping) else None
    wanted = source.repo or (read_state(source.catalog) or {}).get("repo")
    if wanted and (not isinstance(name, str) or name.lower() != str(wanted).lower()):
        return False
    if event == "push":
        ref = payload.get("ref")
        branch = source.branch
        if branch is None and isinstance(repo, Mapping):
            branch = repo.get("default_branch") or (read_state(source.catalog) or {}).get("branch")
        return isinstance(ref, str) and (
            ref == f"refs/heads/{branch}" or (branch is None and ref.startswith("refs/heads/"))
        )
    if event == "create":
        return payload.get("ref_type") == "tag"
    return payload.get("action") in RELEASE_ACTIONS


def served_version(sources: Sequence[CatalogSource]) -> str:
    """`name=version` of each source's catalog folder, as its state file says."""
    parts = []
    for source in sources:
        state = read_state(source.catalog)
        parts.append(f"{source.name}={state['version'] if state else 'unbuilt'}")
    return ",".join(parts)


class LiveTriage(Triage):
    """The served `Triage` for the Discord side, which keeps the object it was started with:
    every read goes to the one swapped in last (its handlers read `triage` anew per answer)."""

    def __init__(self, current: Callable[[], Triage]) -> None:  # holds nothing of its own
        self._current = current

    def __getattr__(self, name: str) -> Any:
        return getattr(self._current(), name)

    def analyse(self, text: str) -> Any:
        return self._current().analyse(text)


class CatalogFollower:
    def __init__(
        self,
        sources: Sequence[CatalogSource],
        load: Callable[[], Triage],
        swap: Callable[[Triage], None],
        *,
        on_metrics: Callable[[str, str], None] | None = None,
        shared: SharedTarget | None = None,
    ) -> None:
        self.sources = list(sources)
        self.shared = shared
        self._load = load
        self._swap = swap
        self._on_metrics = on_metrics or (lambda _name, _outcome: None)
        self._lock = threading.Lock()
        self._pending = False
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.version = served_version(self.sources)
        self.since = time.time()
        self.last_error: str | None = None
        self.failed_since: float | None = None  # wall clock of the first failure in a row
        self.refreshing_since: float | None = None  # wall clock, while a refresh runs
        self.refreshes = 0
        self.live: Triage | None = None  # what the Discord side is given (`install` sets it)
        # source name -> the version its folder holds (what `watch` compares with the target)
        self.built = {s.name: (read_state(s.catalog) or {}).get("version") for s in self.sources}
        self._failed_at = float("-inf")

    # --- deciding what to do ------------------------------------------------------------------

    def notice(self, event: str, payload: Mapping[str, Any]) -> bool:
        """A verified delivery: refresh when it concerns a followed source."""
        if any(wants_refresh(event, payload, s) for s in self.sources):
            log.info("catalog: %s event: refreshing", event)
            self.schedule()
            return True
        return False

    def schedule(self) -> None:
        """Refresh soon; a refresh already running runs once more after itself."""
        with self._lock:
            self._pending = True
            if self._thread is not None and self._thread.is_alive():
                return
            self._thread = threading.Thread(target=self._work, name="catalog-refresh", daemon=True)
            self._thread.start()

    # --- acting -------------------------------------------------------------------------------

    def _work(self) -> None:
        while True:
            with self._lock:
                if not self._pending:
                    return
                self._pending = False
            self._refresh_once()

    def _refresh_once(self) -> None:
        self.refreshing_since = time.time()
        try:
            self._refresh()
        finally:
            self.refreshing_since = None

    def _refresh(self) -> None:
        try:
            changed = False
            for source in self.sources:
                target = self._agree(source) if self.shared is not None else None
                result = refresh_catalog(
                    source.catalog,
                    source.git_dir,
                    repo=source.repo,
                    branch=source.branch,
                    tags_pattern=source.tags,
                    fetch=target is None,
                    log=log.info,
                    pinned=target,
                )
                log.info("catalog: %s", result.summary())
                self.built[source.name] = result.version
                changed |= result.mode != "unchanged"
            version = served_version(self.sources)
            if not changed and version == self.version and self.last_error is None:
                self._on_metrics("triage_catalog_refreshes_total", "unchanged")
                return
            triage = self._load()  # whole, before anyone sees it
        except Exception as exc:  # any failure keeps the catalog that serves
            self.last_error = f"{type(exc).__name__}: {exc}"
            self._failed_at = time.monotonic()
            if self.failed_since is None:
                self.failed_since = time.time()
            self._on_metrics("triage_catalog_refreshes_total", "failed")
            log.error("catalog refresh failed; still serving %s: %s", self.version, exc)
            return
        self._hand_over(triage, version)

    def _agree(self, source: CatalogSource) -> Target:
        """Fetch, then the target all replicas build: ours when it is ahead of the published
        one (then published), else the published one."""
        assert self.shared is not None
        fetch_source(source.git_dir)
        branch = source.branch or (read_state(source.catalog) or {}).get("branch")
        mine = newest_target(source.git_dir, branch, source.tags)
        name = TARGET_CURSOR.format(name=source.name)
        published = Target.from_json(self.shared.read(name))
        if supersedes(source.git_dir, mine, published):
            self.shared.write(name, mine.to_json())
            log.info("catalog: %s target %s published", source.name, mine.version)
            return mine
        assert published is not None
        return published

    async def watch(self, read: Callable[[str], Any]) -> None:
        """Replicas: refresh when another replica published a target this one does not serve."""
        while True:
            await asyncio.sleep(TARGET_CHECK_SECONDS)
            if self.last_error and time.monotonic() - self._failed_at < RETRY_FAILED_SECONDS:
                continue  # a target this replica cannot build: not every 2 s
            try:
                for source in self.sources:
                    target = Target.from_json(await read(TARGET_CURSOR.format(name=source.name)))
                    if target is not None and target.version != self.built.get(source.name):
                        self.schedule()
                        break
            except Exception as exc:  # the store's own health check reports it
                log.warning("catalog: cannot read the shared target: %s", exc)

    def _hand_over(self, triage: Triage, version: str) -> None:
        def apply() -> None:
            self._swap(triage)
            self.version, self.since, self.last_error = version, time.time(), None
            self.failed_since = None
            self.refreshes += 1
            self._on_metrics("triage_catalog_refreshes_total", "swapped")
            log.info("catalog: now serving %s", version)

        if self._loop is not None and self._loop.is_running():
            self._loop.call_soon_threadsafe(apply)
        else:
            apply()

    def start(self) -> asyncio.Future[None]:
        """On the running loop: refresh now, then on the timer (the returned task)."""
        self._loop = asyncio.get_running_loop()
        self.schedule()
        return asyncio.ensure_future(self.poll())

    async def poll(self) -> None:
        """Refresh on a timer: the shortest poll interval of the sources."""
        interval = min(s.poll_interval for s in self.sources)
        while True:
            await asyncio.sleep(interval)
            self.schedule()

    # --- saying what is served ----------------------------------------------------------------

    def status(self) -> Status:
        since = _iso(self.since)
        refresh: dict[str, Any] = {"state": "idle"}
        if self.refreshing_since is not None:
            refresh = {"state": "running", "since": _iso(self.refreshing_since)}
        elif self.last_error:
            refresh = {
                "state": "failed",
                "since": _iso(self.failed_since or self.since),
                "error": self.last_error,
            }
        extra = {"version": self.version, "since": since, "refresh": refresh}
        unbuilt = not self.version or "=unbuilt" in self.version
        if unbuilt and self.refreshing_since is not None:
            detail = f"the first build is running since {refresh['since']}; nothing served yet"
            return Status(True, detail, extra, degraded=True)
        if self.last_error:
            detail = (
                f"refresh failed: {self.last_error}, since {refresh.get('since', since)}; "
                f"serving {self.version}"
            )
            return Status(True, detail, {**extra, "error": self.last_error}, degraded=True)
        running = f"; a refresh is running since {refresh['since']}" if "since" in refresh else ""
        return Status(True, f"serving {self.version} since {since}{running}", extra)

    def metrics_text(self) -> str:
        version = self.version.replace("\\", "\\\\").replace('"', '\\"')
        return (
            "# HELP triage_catalog_info The catalog version served (newest release+head)\n"
            "# TYPE triage_catalog_info gauge\n"
            f'triage_catalog_info{{version="{version}"}} 1\n'
            "# HELP triage_catalog_since_seconds When the served catalog was swapped in "
            "(Unix time)\n"
            "# TYPE triage_catalog_since_seconds gauge\n"
            f"triage_catalog_since_seconds {self.since:.0f}\n"
            "# HELP triage_catalog_refresh_failing 1 while the last refresh failed\n"
            "# TYPE triage_catalog_refresh_failing gauge\n"
            f"triage_catalog_refresh_failing {1 if self.last_error else 0}\n"
        )


def _iso(stamp: float) -> str:
    return datetime.fromtimestamp(stamp, UTC).isoformat(timespec="seconds")


def install(state: Any, app: web.Application) -> CatalogFollower | None:
    """Follow the configured catalog sources (none: nothing changes for this deployment).
    `state`: the server's `ServerState` (not imported: http.py imports this module)."""
    settings: Settings = state.settings
    sources = load_catalog_sources(settings.triage_config)
    if not sources:
        return None
    paths = list(settings.triage_catalog) or None

    def swap(triage: Triage) -> None:
        state.triage = triage
        if state.pipeline is not None:
            state.pipeline.triage = triage
            state.pipeline.commands.catalog = triage.catalog

    loop_box: list[asyncio.AbstractEventLoop] = []

    def on_store(fn: Callable[..., Any], *args: Any) -> Any:
        future = asyncio.run_coroutine_threadsafe(state.db.call(fn, *args), loop_box[0])
        return future.result(timeout=30)

    shared = None
    if settings.triage_db_url:  # replicas share PostgreSQL: they agree on one target
        shared = SharedTarget(
            lambda name: on_store(state.store.get_cursor, name),
            lambda name, value: on_store(state.store.set_cursor, name, value),
        )
    follower = CatalogFollower(
        sources,
        lambda: Triage.from_paths(paths),
        swap,
        on_metrics=lambda name, outcome: state.metrics.inc(name, outcome=outcome),
        shared=shared,
    )
    state.metrics.counter(
        "triage_catalog_refreshes_total",
        "Catalog refreshes, by outcome (swapped, unchanged, failed)",
    )
    state.health.register("catalog", follower.status)
    follower.live = LiveTriage(lambda: state.triage)

    async def start(app: web.Application) -> None:
        follower._loop = asyncio.get_running_loop()
        loop_box.append(follower._loop)
        follower.schedule()  # catch up with what happened while the server was down
        state.background.append(asyncio.ensure_future(follower.poll()))
        if shared is not None:
            watched = follower.watch(lambda name: state.db.call(state.store.get_cursor, name))
            state.background.append(asyncio.ensure_future(watched))

    app.on_startup.append(start)
    return follower


def for_poll(settings: Settings, pipeline: Any) -> CatalogFollower | None:
    """`triage-bot poll`: the same following, on the timer only (no webhooks reach it); the
    new catalog is swapped into the pipeline. Call `start()` on the running loop."""
    sources = load_catalog_sources(settings.triage_config)
    if not sources:
        return None
    paths = list(settings.triage_catalog) or None

    def swap(triage: Triage) -> None:
        pipeline.triage = triage
        pipeline.commands.catalog = triage.catalog

    return CatalogFollower(sources, lambda: Triage.from_paths(paths), swap)
