"""The installed `triage-bot` run as a user runs it: its command line, a clean environment (no
bot setting leaks in from the test's), and what a pseudo-terminal received from it."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path

from bot.config.settings import NAMES


def console(*argv: str) -> list[str]:
    script = Path(sys.executable).parent / "triage-bot"
    return [str(script), *argv] if script.exists() else [sys.executable, "-m", "bot", *argv]


def env_for(tmp_path: Path, **extra: str) -> dict[str, str]:
    # NO_COLOR from the developer's shell would change what the colour tests see
    env = {k: v for k, v in os.environ.items() if k not in NAMES and k != "NO_COLOR"}
    env["TRIAGE_DB"] = str(tmp_path / "store.sqlite3")
    env.update(extra)
    return env


def run_cli(
    tmp_path: Path, *argv: str, stdin: str | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    """`triage-bot ARGV` in `tmp_path`, with a clean environment plus `env` (and `stdin` as its
    input), its output read."""
    return subprocess.run(
        console(*argv),
        cwd=tmp_path,
        env=env_for(tmp_path, **env),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def read_terminal(main: int, process: subprocess.Popen, seconds: float) -> bytes:
    """Everything written to the pseudo-terminal `main` until `process` ends (or `seconds`)."""
    out = b""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        ready, _, _ = select.select([main], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
        elif process.poll() is not None:
            break
    return out
