"""`serve` as a separate process, the real console entry configured only by its environment, as
a maintainer runs it: started on a free port against the fake GitHub, awaited until healthy,
stopped with SIGTERM."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest


@dataclass
class ServeProcess:
    process: asyncio.subprocess.Process
    base_url: str  # http://127.0.0.1:PORT
    output: bytes = b""  # stdout and stderr, once stopped (when captured)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@asynccontextmanager
async def serve_process(
    workdir: Path,
    *,
    github_api_url: str,
    webhook_secret: str,
    log_level: str,
    host: str | None = None,
    capture_output: bool = False,
    github: bool = True,
    open_files: int | None = None,
) -> AsyncIterator[ServeProcess]:
    """`python -m bot serve` in `workdir` with its store there; without `host`, serve's default
    (loopback). Yields once /healthz answers 200; on leaving, SIGTERM and the process's end.
    `github=False`: no GitHub (nor Discord) credential at all, as a first look at the pages.
    `open_files`: the process's open-file limit (RLIMIT_NOFILE), as systemd's default sets one."""
    port = free_port()
    env = {
        **os.environ,
        "GITHUB_TOKEN": "ghp_bot_token",
        "GITHUB_WEBHOOK_SECRET": webhook_secret,
        "GITHUB_API_URL": github_api_url,
        "TRIAGE_DB": str(workdir / "serve.sqlite3"),
        "LOG_LEVEL": log_level,
    }
    env.pop("DISCORD_TOKEN", None)
    if not github:
        for name in ("GITHUB_TOKEN", "GITHUB_WEBHOOK_SECRET", "GITHUB_APP_ID"):
            env.pop(name, None)
    host_args = ["--host", host] if host else []
    output = asyncio.subprocess.PIPE if capture_output else asyncio.subprocess.DEVNULL
    process = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "bot", "serve", *host_args, "--port", str(port)),
        env=env,
        cwd=str(workdir),
        stdout=output,
        stderr=asyncio.subprocess.STDOUT if capture_output else asyncio.subprocess.DEVNULL,
        preexec_fn=None if open_files is None else lambda: _limit_files(open_files),
    )
    served = ServeProcess(process, f"http://127.0.0.1:{port}")
    try:
        await _until_healthy(served.base_url)
        yield served
    finally:
        process.send_signal(signal.SIGTERM)
        stdout, _ = await asyncio.wait_for(process.communicate(), 30)
        served.output = stdout or b""


def _limit_files(count: int) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_NOFILE, (count, count))


async def _until_healthy(base_url: str) -> None:
    async with aiohttp.ClientSession() as session:
        for _ in range(400):
            try:
                async with session.get(base_url + "/healthz") as response:
                    if response.status == 200:
                        return
            except aiohttp.ClientConnectionError:
                pass
            await asyncio.sleep(0.05)
    pytest.fail("serve did not become healthy")
