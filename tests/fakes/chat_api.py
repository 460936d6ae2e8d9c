"""A fake OpenAI-compatible chat-completions server on 127.0.0.1, for `catalog explain`: it speaks
the wire protocol the `openai` client speaks (`POST {base}/chat/completions` with `model` and
`messages`, a `chat.completion` object back, errors as `{"error": {...}}` with their HTTP
status and `Retry-After`), and answers each request with what the test's `reply` says for it.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass
class Reply:
    """What the server does with one request: `content` as the assistant's message, or an
    HTTP `status` with an error body; after `delay` seconds."""

    content: str | None = None
    status: int = 200
    delay: float = 0.0
    retry_after: float | None = None


@dataclass
class FakeChat:
    reply: Callable[[dict[str, Any]], Reply]
    prefix: str = "/v1"
    requests: list[dict[str, Any]] = field(default_factory=list)
    port: int = 0
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None
    _runner: web.AppRunner | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.prefix}"

    def prompts(self) -> list[str]:
        """The user message of every request, in order."""
        return [r["messages"][-1]["content"] for r in self.requests]

    def __enter__(self) -> FakeChat:
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            loop.run_until_complete(self._start())
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._runner.cleanup() if self._runner else asyncio.sleep(0))
            loop.close()

        self._thread = threading.Thread(target=run, name="fake-chat", daemon=True)
        self._thread.start()
        assert ready.wait(10), "the fake chat server did not start"
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    async def _start(self) -> None:
        app = web.Application()
        app.router.add_post(f"{self.prefix}/chat/completions", self._completions)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        assert site._server is not None
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def _completions(self, request: web.Request) -> web.Response:
        if not request.headers.get("Authorization", "").startswith("Bearer "):
            return _error(401, "no API key", "invalid_request_error")
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "the body is not JSON", "invalid_request_error")
        if not isinstance(body.get("messages"), list) or not body.get("model"):
            return _error(400, "model and messages are required", "invalid_request_error")
        self.requests.append(body)
        reply = self.reply(body)
        if reply.delay:
            await asyncio.sleep(reply.delay)
        if reply.status != 200:
            headers = (
                {"Retry-After": str(reply.retry_after)} if reply.retry_after is not None else {}
            )
            return _error(reply.status, "try again later", "rate_limit_error", headers)
        return web.json_response(
            {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": reply.content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150},
            }
        )


def _error(
    status: int, message: str, kind: str, headers: dict[str, str] | None = None
) -> web.Response:
    body = {"error": {"message": message, "type": kind, "param": None, "code": None}}
    return web.Response(
        status=status, text=json.dumps(body), content_type="application/json", headers=headers
    )
