"""Acknowledgement load: closed-loop senders post signed deliveries to a real `serve` process
(tests/serve_process.py) against the fake GitHub, for a fixed time; prints deliveries
acknowledged per second and the p50/p99 latency. Asserts nothing.

    python benchmarks/bench_ack.py                 # 8 senders, 10 s
    python benchmarks/bench_ack.py --senders 8 --seconds 20
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

SECRET = "benchmark-webhook-secret"


async def run(senders: int, seconds: float) -> None:
    import aiohttp
    from fakes.github_api import FakeGitHub
    from harness import BOT_LOGIN, BOT_TOKEN, PANIC, REPO, delivery_headers, issue_payload
    from serve_process import serve_process

    with FakeGitHub() as fake, tempfile.TemporaryDirectory() as tmp:
        fake.add_token(BOT_TOKEN, BOT_LOGIN)
        fake.add_repo(REPO)
        issue = fake.add_issue(REPO, "crash", PANIC)
        body = json.dumps(issue_payload("opened", issue.number, "crash", PANIC)).encode()
        async with (
            serve_process(
                Path(tmp), github_api_url=fake.base_url, webhook_secret=SECRET, log_level="WARNING"
            ) as served,
            aiohttp.ClientSession() as session,
        ):
            url = served.base_url + "/github/webhook"
            latencies: list[float] = []
            statuses: dict[int, int] = {}
            end = time.monotonic() + seconds

            async def sender() -> None:
                while time.monotonic() < end:
                    headers = delivery_headers(
                        "issues", body, secret=SECRET, delivery=str(uuid.uuid4())
                    )
                    start = time.perf_counter()
                    async with session.post(url, data=body, headers=headers) as response:
                        await response.read()
                    latencies.append(time.perf_counter() - start)
                    statuses[response.status] = statuses.get(response.status, 0) + 1

            began = time.monotonic()
            await asyncio.gather(*(sender() for _ in range(senders)))
            elapsed = time.monotonic() - began
    latencies.sort()
    acked = statuses.get(202, 0)
    p50 = latencies[len(latencies) // 2] * 1000
    p99 = latencies[int(len(latencies) * 0.99)] * 1000
    print(
        f"{senders} closed-loop senders, {elapsed:.1f} s: {acked / elapsed:.0f} deliveries/s"
        f" acknowledged (202), p50 {p50:.1f} ms, p99 {p99:.1f} ms; statuses {statuses}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--senders", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    asyncio.run(run(args.senders, args.seconds))


if __name__ == "__main__":
    main()
