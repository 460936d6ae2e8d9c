"""Webhook throughput: a burst of deliveries for several App installations, through the real
server and worker, real PyGithub, and the fake GitHub (tests/fakes) on 127.0.0.1.

    python benchmarks/bench_webhooks.py                          # 120 deliveries, 6 installations
    python benchmarks/bench_webhooks.py --deliveries 500 --installations 10 --write-interval 0.5

GitHub's write pacing is kept per installation (one writer, `--write-interval` seconds between
writes), so the time to the last answer is about (deliveries per installation) x (writes per
answer) x interval, whatever the number of installations. `--flood N` keeps N clients pasting
logs of the pages' size cap to `/api/match` (no per-minute budget) while the deliveries arrive:
the time each delivery takes to be acknowledged then shows what the pages cost the webhooks.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

PANIC = (
    "thread 'main' panicked at /home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f/"
    "burn-autodiff-0.18.0/src/ops/module.rs:1933:9:\n"
    "Can't differentiate interpolate backward.\n"
)
SECRET = "benchmark-webhook-secret"


async def run(deliveries: int, installations: int, write_interval: float, flood: int) -> None:
    import aiohttp
    from aiohttp import web
    from fakes.github_api import FakeGitHub

    from bot.app import Triage
    from bot.config.settings import Settings
    from bot.github.auth import ClientOptions
    from bot.github.webhook import sign
    from bot.server.http import STATE, create_app
    from bot.server.site_routes import PAGES, PageLimits

    with FakeGitHub() as fake, tempfile.TemporaryDirectory() as tmp:
        key = Path(tmp) / "app.pem"
        key.write_text(fake.enable_app(app_id=4242))
        repos = [f"org{n}/repo" for n in range(installations)]
        for n, repo in enumerate(repos):
            fake.add_repo(repo)
            fake.add_installation(1000 + n, f"org{n}", [repo])
        settings = Settings.from_mapping(
            {
                "GITHUB_APP_ID": "4242",
                "GITHUB_APP_PRIVATE_KEY_PATH": str(key),
                "GITHUB_WEBHOOK_SECRET": SECRET,
                "GITHUB_API_URL": fake.base_url,
                "TRIAGE_DB": str(Path(tmp) / "bench.sqlite3"),
            }
        )
        app = create_app(
            settings,
            triage=Triage.from_paths(None),
            client_options=ClientOptions(timeout=15, seconds_between_writes=write_interval),
            worker_options={"idle_interval": 0.05},
        )
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        url = f"http://127.0.0.1:{port}/github/webhook"
        state = app[STATE]
        app[PAGES].limits = PageLimits(per_minute=1_000_000)

        bodies = []
        for i in range(deliveries):
            n = i % installations
            issue = fake.add_issue(repos[n], f"crash {i}", PANIC)
            payload = {
                "action": "opened",
                "issue": {"number": issue.number, "title": issue.title, "body": PANIC},
                "repository": {"full_name": repos[n]},
                "installation": {"id": 1000 + n},
                "sender": {"login": "reporter", "type": "User"},
            }
            bodies.append(json.dumps(payload).encode())

        took: list[float] = []
        # The flood comes from another process, as it would from other machines: its clients'
        # own work does not land on the server's loop.
        flooder = None
        if flood:
            base = f"http://127.0.0.1:{port}"
            flooder = subprocess.Popen(
                [sys.executable, __file__, "--flood-client", base, str(flood)],
                stdout=subprocess.PIPE,
                text=True,
            )
            await asyncio.sleep(1.0)  # the pages' queue is full before the first delivery
        async with aiohttp.ClientSession() as session:
            started = time.monotonic()

            async def deliver(body: bytes) -> int:
                sent = time.monotonic()
                headers = {
                    "X-GitHub-Event": "issues",
                    "X-GitHub-Delivery": str(uuid.uuid4()),
                    "X-Hub-Signature-256": sign(SECRET, body),
                    "Content-Type": "application/json",
                }
                async with session.post(url, data=body, headers=headers) as response:
                    await response.read()
                    took.append(time.monotonic() - sent)
                    return response.status

            statuses = await asyncio.gather(*(deliver(b) for b in bodies))
            acknowledged = time.monotonic() - started
            flood_figures = ""
            if flooder is not None:
                flooder.send_signal(signal.SIGINT)
                done = await asyncio.to_thread(flooder.communicate, timeout=120)
                flood_figures = done[0].strip()
            await state.worker.drain(timeout=3600)
            answered = time.monotonic() - started
            async with session.get(f"http://127.0.0.1:{port}/metrics") as response:
                metrics = await response.text()
        await runner.cleanup()

        comments = [
            c
            for repo in repos
            for issue in fake.repo(repo).issues.values()
            for c in fake.comments_on(repo, issue.number)
        ]
        latencies = [
            line
            for line in metrics.splitlines()
            if line.startswith("triage_reply_seconds_sum")
            or line.startswith("triage_reply_seconds_count")
        ]
        total = float(latencies[0].split()[1]) if latencies else 0.0
        count = float(latencies[1].split()[1]) if len(latencies) > 1 else 0.0
        writes = len(fake.writes())
        print(f"deliveries            {deliveries} over {installations} installation(s)")
        print(f"write interval        {write_interval} s per installation")
        print(
            f"acknowledged          {acknowledged:.2f} s ({deliveries / acknowledged:.0f}/s), "
            f"statuses {sorted(set(statuses))}"
        )
        took.sort()
        print(
            f"one acknowledgement   median {took[len(took) // 2] * 1000:.0f} ms, "
            f"p95 {took[int(len(took) * 0.95)] * 1000:.0f} ms, max {took[-1] * 1000:.0f} ms"
        )
        if flood:
            print(f"flood                 {flood} clients: {flood_figures}")
        print(f"last answer after     {answered:.2f} s")
        print(f"answers               {len(comments)} comments, {writes} writes in all")
        if count:
            print(f"mean reply latency    {total / count:.2f} s")
        per_installation = deliveries / installations
        print(
            f"writes per answer     {writes / max(1, len(comments)):.1f}; pacing floor "
            f"{per_installation * writes / max(1, len(comments)) * write_interval:.1f} s"
        )


async def flood_client(base: str, clients: int) -> None:
    """Pastes of the pages' size cap to `/api/match` from `clients` clients until SIGINT; prints
    how many were matched and how many refused."""
    import aiohttp

    from bot.site.pages import MAX_PASTE

    log = (PANIC * (MAX_PASTE // len(PANIC) - 1)).encode()
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGINT, stop.set)
    statuses: list[int] = []
    seconds: list[float] = []

    async def paste(session: aiohttp.ClientSession) -> None:
        while not stop.is_set():
            sent = time.monotonic()
            try:
                async with session.post(f"{base}/api/match", data=log) as response:
                    await response.read()
            except aiohttp.ClientError:
                continue
            statuses.append(response.status)
            if response.status == 200:
                seconds.append(time.monotonic() - sent)

    async with aiohttp.ClientSession() as session:
        await asyncio.gather(*(paste(session) for _ in range(clients)))
    seconds.sort()
    median = seconds[len(seconds) // 2] if seconds else 0.0
    print(
        f"{statuses.count(200)} pastes matched (median {median:.2f} s each, queue included), "
        f"{statuses.count(429)} refused (429)"
    )


def main() -> None:
    if sys.argv[1:2] == ["--flood-client"]:
        asyncio.run(flood_client(sys.argv[2], int(sys.argv[3])))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--deliveries", type=int, default=120)
    parser.add_argument("--installations", type=int, default=6)
    parser.add_argument("--write-interval", type=float, default=0.5)
    parser.add_argument("--flood", type=int, default=0, help="clients pasting to /api/match")
    args = parser.parse_args()
    asyncio.run(run(args.deliveries, args.installations, args.write_interval, args.flood))


if __name__ == "__main__":
    main()
