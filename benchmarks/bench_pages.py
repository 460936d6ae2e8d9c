"""Issue 27's speed target: a page under 100 ms to serve at the bundled catalog's size.

Serves the real app (bot.server.http, pages on) on 127.0.0.1 with the bundled catalog and
times requests end to end over HTTP (wall time, median and 95th percentile of N each, after one
warm-up request that builds the site's index), then renders every record's page in-process.

    python benchmarks/bench_pages.py            # 50 requests of each page
    python benchmarks/bench_pages.py -n 200

Prints figures and the target; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TARGET_MS = 100.0


def _figures(name: str, times: list[float]) -> str:
    times = sorted(times)
    p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
    flag = "ok" if p95 * 1000 < TARGET_MS else "OVER"
    return (
        f"{name:<40} median {statistics.median(times) * 1000:7.2f} ms   "
        f"p95 {p95 * 1000:7.2f} ms   [{flag}]"
    )


async def served(count: int) -> None:
    import aiohttp
    from aiohttp.test_utils import TestServer

    from bot.app import Triage
    from bot.config.settings import Settings
    from bot.server.http import create_app
    from bot.server.site_routes import PAGES, PageLimits
    from bot.store.sqlite import Store

    triage = Triage.from_paths(None)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.sqlite3"
        store = Store(db)
        app = create_app(
            Settings.from_mapping({"TRIAGE_DB": str(db)}),
            triage=triage,
            store=store,
            start_discord=False,
        )
        app[PAGES].limits = PageLimits(per_minute=1_000_000)
        server = TestServer(app, host="127.0.0.1")
        await server.start_server()
        example = (ROOT / "examples" / "issue.md").read_text(encoding="utf-8")
        scanned = next(r.id for r in triage.catalog if not r.has_write_up)
        gets = {
            "GET /errors/ID (seed, written up)": "/errors/8d1d2fa6df3880bd",
            "GET /errors/ID (scanned, lineage)": f"/errors/{scanned}",
            "GET /errors (first page)": "/errors",
            "GET /errors?written=no&page=3": "/errors?written=no&page=3",
            "GET /api/errors/ID": "/api/errors/cf30438606d06d30",
            "GET / (the form)": "/",
        }
        posts = {
            "POST / (examples/issue.md)": ("/", {"text": example}),
            "POST /api/match (examples/issue.md)": ("/api/match", example.encode()),
        }
        try:
            async with aiohttp.ClientSession() as session:
                started = time.perf_counter()
                async with session.get(server.make_url("/errors")) as r:
                    await r.read()
                print(
                    f"first request (builds the list's index): "
                    f"{(time.perf_counter() - started) * 1000:.0f} ms"
                )
                for name, path in gets.items():
                    times = []
                    for _ in range(count):
                        t = time.perf_counter()
                        async with session.get(server.make_url(path)) as r:
                            await r.read()
                            assert r.status == 200, (path, r.status)
                        times.append(time.perf_counter() - t)
                    print(_figures(name, times))
                for name, (path, data) in posts.items():
                    times = []
                    for _ in range(count):
                        t = time.perf_counter()
                        async with session.post(server.make_url(path), data=data) as r:
                            await r.read()
                            assert r.status == 200, (path, r.status)
                        times.append(time.perf_counter() - t)
                    print(_figures(name, times))
        finally:
            await server.close()
            store.close()


def every_record() -> None:
    from bot.app import Triage
    from bot.site.pages import Site

    site = Site(Triage.from_paths(None))
    times = []
    for record in site.catalog:
        t = time.perf_counter()
        site.record_page(record)
        times.append(time.perf_counter() - t)
    print(_figures(f"render every record page ({len(times)})", times))
    print(f"{'slowest record page':<40} {max(times) * 1000:7.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=50, help="requests of each page")
    args = parser.parse_args()
    print(f"target: each page under {TARGET_MS:.0f} ms (p95)")
    asyncio.run(served(args.n))
    every_record()


if __name__ == "__main__":
    main()
