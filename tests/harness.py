"""What the GitHub and server tests share: the fake GitHub set up for the bot, GitHub's example
webhook payloads, signed deliveries, the real server app on 127.0.0.1 (`Harness`), `serve` as a
process, and waiting for the bot.

Test modules import these names from here; the fixtures built on them (`fake`, `harness`,
`triage`) are in conftest.py.
"""

from __future__ import annotations

import asyncio
import copy
import json
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp.test_utils import TestServer
from fakes.github_api import FakeGitHub
from serve_process import ServeProcess, serve_process

from bot.app import Triage
from bot.config.settings import Settings
from bot.github.auth import ClientOptions
from bot.github.webhook import sign
from bot.github.worker import RetryPolicy
from bot.render.github import parse_marker
from bot.server.http import STATE, create_app

FIXTURES = Path(__file__).parent / "fixtures" / "webhooks"
# The repository GitHub's example webhook payloads name.
REPO = "Codertocat/Hello-World"
BOT_TOKEN = "ghp_bot_token"
BOT_LOGIN = "triage-helper"

# Two webhook secrets, as during a rotation: the server accepts a delivery signed with either.
FIRST_SECRET = "first-webhook-secret-01"
SECOND_SECRET = "second-webhook-secret-02"
SECRETS = f"{FIRST_SECRET},{SECOND_SECRET}"

INTERPOLATE = "cf30438606d06d30"  # "Can't differentiate interpolate backward."
# The default labels for that answer: known panic, its error family, its crate.
ANSWER_LABELS = ["panic: known", "family: unimplemented-op-backward", "crate: burn-autodiff"]
AVG_POOL = "8d1d2fa6df3880bd"  # "Can't differentiate avg pool 2d backward."
PANIC = (
    "thread 'main' panicked at /home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f/"
    "burn-autodiff-0.18.0/src/ops/module.rs:1933:9:\n"
    "Can't differentiate interpolate backward.\n"
    "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n"
)
PANIC_AVG_POOL = (
    "thread 'main' panicked at /home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f/"
    "burn-autodiff-0.18.0/src/ops/module.rs:1498:9:\n"
    "Can't differentiate avg pool 2d backward.\n"
)
UNKNOWN_PANIC = (
    "thread 'main' panicked at src/main.rs:3:5:\n"
    "the flux capacitor overheated while reticulating splines\n"
)


# --- the fake GitHub and its payloads ------------------------------------------------------------


@contextmanager
def fake_github(token: str, login: str, repo: str) -> Iterator[FakeGitHub]:
    """A fake GitHub on 127.0.0.1 serving `repo` to the user `login`, who holds `token`."""
    with FakeGitHub() as gh:
        gh.add_token(token, login)
        gh.add_repo(repo)
        yield gh


def fixture(name: str) -> dict[str, Any]:
    """One of GitHub's example webhook payloads (tests/fixtures/webhooks/NAME.json)."""
    return json.loads((FIXTURES / f"{name}.json").read_text())


def issue_payload(action: str, number: int, title: str, body: str) -> dict[str, Any]:
    payload = copy.deepcopy(fixture(f"issues.{action}"))
    payload["issue"]["number"] = number
    payload["issue"]["title"] = title
    payload["issue"]["body"] = body
    payload["repository"]["full_name"] = REPO
    return payload


def comment_payload(
    action: str, number: int, comment_id: int, body: str, login="octocat", user_type="User"
) -> dict[str, Any]:
    payload = copy.deepcopy(fixture(f"issue_comment.{action}"))
    payload["issue"]["number"] = number
    payload["comment"]["id"] = comment_id
    payload["comment"]["body"] = body
    payload["comment"]["user"]["login"] = login
    payload["comment"]["user"]["type"] = user_type
    payload.pop("installation", None)
    return payload


def bot_comments(fake: FakeGitHub, number: int) -> list[Any]:
    """The comments on issue `number` that carry the bot's marker."""
    return [c for c in fake.comments_on(REPO, number) if parse_marker(c.body)]


def delivery_headers(
    event: str, body: bytes, *, secret: str | None, delivery: str | None
) -> dict[str, str]:
    """The headers GitHub sends with a webhook delivery: the event, the delivery's id (unless
    None) and the body's signature with `secret` (unless None)."""
    headers = {"X-GitHub-Event": event}
    if delivery is not None:
        headers["X-GitHub-Delivery"] = delivery
    if secret is not None:
        headers["X-Hub-Signature-256"] = sign(secret, body)
    return headers


# --- the server in-process -----------------------------------------------------------------------


class Harness:
    """The real server app on 127.0.0.1, its worker, and helpers to deliver and wait."""

    def __init__(self, fake: FakeGitHub, db: Path, triage: Triage, **env: str) -> None:
        values = {
            "GITHUB_TOKEN": BOT_TOKEN,
            "GITHUB_WEBHOOK_SECRET": SECRETS,
            "GITHUB_API_URL": fake.base_url,
            "TRIAGE_DB": str(db),
        }
        values.update(env)
        self.settings = Settings.from_mapping(values)
        self.fake = fake
        self.triage = triage
        self.server: TestServer | None = None
        self.session: aiohttp.ClientSession | None = None

    async def start(
        self,
        policy: RetryPolicy | None = None,
        start_worker: bool = True,
        client_options: ClientOptions | None = None,
        **worker_options: Any,
    ) -> Harness:
        """Serve the app; without `start_worker` the queue fills but nothing works it off."""
        self.app = create_app(
            self.settings,
            triage=self.triage,
            client_options=client_options or ClientOptions(timeout=5, seconds_between_writes=0),
            worker_options={
                "policy": policy or RetryPolicy(scale=0.001, max_attempts=4),
                "idle_interval": 0.05,
                **worker_options,
            },
        )
        if not start_worker:
            self.app.on_startup.clear()
        self.server = TestServer(self.app, host="127.0.0.1")
        await self.server.start_server()
        self.session = aiohttp.ClientSession()
        return self

    @property
    def state(self):
        return self.app[STATE]

    @property
    def url(self) -> str:
        assert self.server is not None
        return str(self.server.make_url("/github/webhook"))

    async def post(
        self,
        event: str,
        payload: Any,
        *,
        delivery: str | None = None,
        secret: str | None = FIRST_SECRET,
        raw: bytes | None = None,
        named: bool = True,
    ) -> aiohttp.ClientResponse:
        """Deliver `payload` (or the bytes `raw`) as GitHub would; `named=False` leaves out the
        delivery id, `secret=None` the signature."""
        body = raw if raw is not None else json.dumps(payload).encode()
        delivery_id = (delivery or str(uuid.uuid4())) if named else None
        headers = {
            **delivery_headers(event, body, secret=secret, delivery=delivery_id),
            "Content-Type": "application/json",
            "User-Agent": "GitHub-Hookshot/test",
        }
        assert self.session is not None
        async with self.session.post(self.url, data=body, headers=headers) as response:
            await response.read()
            return response

    async def settle(self, timeout: float = 10.0) -> None:
        await self.state.worker.drain(timeout)

    async def stop(self) -> None:
        if self.session is not None:
            await self.session.close()
        if self.server is not None:
            await self.server.close()


# --- `serve` as a process, and waiting -----------------------------------------------------------


@asynccontextmanager
async def served_against(
    fake: FakeGitHub, workdir: Path, *, webhook_secret: str, log_level: str, **options: Any
) -> AsyncIterator[tuple[ServeProcess, aiohttp.ClientSession]]:
    """`serve` as a process against the fake GitHub (see serve_process), and a client session."""
    async with (
        serve_process(
            workdir,
            github_api_url=fake.base_url,
            webhook_secret=webhook_secret,
            log_level=log_level,
            **options,
        ) as served,
        aiohttp.ClientSession() as session,
    ):
        yield served, session


async def eventually(check: Callable[[], Any], *, timeout: float = 15.0) -> Any:
    """Wait until `check()` is truthy and return its value (the bots write their store or
    status just after the request a test sees)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not (value := check()):
        if loop.time() > deadline:
            raise AssertionError(f"still false after {timeout} s: {check}")
        await asyncio.sleep(0.01)
    return value
