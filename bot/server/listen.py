"""The listening socket of `serve`, with a cap on open connections below the process's
open-file limit, so a flood of connections sheds load instead of exhausting file descriptors.

Past the cap, the oldest open connection is closed to make room for the new one: a delivery
takes milliseconds, so the oldest connections are those that send nothing, or send slowly
(their header and body deadlines would close them anyway, later). The process never reaches
its open-file limit, where every accept fails and the log fills with the same error.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import signal
from collections.abc import Callable

from aiohttp import web

log = logging.getLogger(__name__)

# Descriptors kept for what is not a client connection (the store, the catalog's files, the
# GitHub and Discord clients, PostgreSQL pools, log files): a sixteenth of the limit, at least 64.
RESERVED_FILES = 64
SMALLEST_CAP = 16


def backlog_for(limit: int) -> int:
    """The listen backlog: connections the kernel completes before the server takes them. It is
    also how many asyncio accepts in one go before any protocol runs (so before the cap can
    close one): a sixteenth of the limit, from 16 to 256."""
    return max(16, min(256, limit // 16))


def _limit() -> int:
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft if soft != resource.RLIM_INFINITY else 1 << 20


def connection_cap(limit: int | None = None) -> int:
    """How many client connections to keep open at most: the soft open-file limit
    (RLIMIT_NOFILE) less the reserve for everything else and three accept bursts (`backlog_for`:
    a connection closed to make room lets its descriptor go one loop turn later, while the
    next bursts may already be in)."""
    limit = _limit() if limit is None else limit
    reserve = max(RESERVED_FILES, limit // 16)
    return max(SMALLEST_CAP, limit - 3 * backlog_for(limit) - reserve)


class CappedSite(web.TCPSite):
    """aiohttp's TCP site, whose protocol factory closes the oldest connection when `cap` are
    open (`on_shed()` counts it)."""

    def __init__(
        self,
        runner: web.BaseRunner,
        host: str,
        port: int,
        cap: int,
        on_shed: Callable[[], None] = lambda: None,
    ) -> None:
        super().__init__(runner, host, port, backlog=backlog_for(_limit()))
        self.cap, self.on_shed = cap, on_shed

    async def start(self) -> None:
        await web.BaseSite.start(self)  # registers the site with its runner, as TCPSite's does
        server = self._runner.server
        assert server is not None

        def factory() -> asyncio.Protocol:
            # oldest first; a closed connection stays listed until its handler has finished
            open_now = [c for c in server.connections if c.transport is not None]
            if len(open_now) >= self.cap:
                open_now[0].force_close()
                self.on_shed()
            return server()

        self._server = await asyncio.get_running_loop().create_server(
            factory,
            self._host,
            self._port,
            backlog=self._backlog,
            reuse_address=self._reuse_address,
            reuse_port=self._reuse_port,
        )


async def serve_until_stopped(
    app: web.Application,
    host: str,
    port: int,
    *,
    keepalive_timeout: float,
    cap: int,
    on_shed: Callable[[], None] = lambda: None,
) -> None:
    """Run `app` on host:port until SIGINT or SIGTERM, then shut down as aiohttp's run_app
    does (the app's shutdown and cleanup hooks)."""
    runner = web.AppRunner(app, access_log=None, keepalive_timeout=keepalive_timeout)
    await runner.setup()
    try:
        await CappedSite(runner, host, port, cap, on_shed).start()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        log.debug("at most %d client connections open at once", cap)
        await stop.wait()
    finally:
        await runner.cleanup()
