"""`triage-bot serve` with no GitHub or Discord credential (issue 46): the catalog's pages and
/api/match are served, the adapters stay off, and the log and /healthz (200) say so."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
from serve_process import serve_process

PASTE = (
    "thread 'main' panicked at crates/burn-autodiff/src/runtime/server.rs:69:9:\n"
    "Node should have a step registered, did you forget to call `Tensor::register_grad` on the "
    "tensor where you need gradients?\n"
)


def test_serve_without_credentials_serves_the_pages_and_says_the_adapters_are_off(
    tmp_path: Path,
) -> None:
    async def scenario() -> tuple[dict, dict, int, str, bytes]:
        async with serve_process(
            tmp_path,
            github_api_url="http://127.0.0.1:9",
            webhook_secret="",
            log_level="INFO",
            capture_output=True,
            github=False,
        ) as served, aiohttp.ClientSession() as session:
            async with session.get(served.base_url + "/healthz") as response:
                assert response.status == 200
                health = await response.json()
            async with session.post(
                served.base_url + "/api/match", json={"text": PASTE}
            ) as response:
                assert response.status == 200
                matched = await response.json()
            async with session.get(served.base_url + "/errors/caa0d32853961b70") as page:
                status, body = page.status, await page.text()
            async with session.post(served.base_url + "/github/webhook", data=b"{}") as webhook:
                assert webhook.status in (403, 404, 503)
        return health, matched, status, body, served.output

    health, matched, status, body, output = asyncio.run(scenario())
    components = health["components"]
    assert components["github"] == {
        "status": "ok",
        "detail": "off (no GITHUB_TOKEN or GITHUB_APP_ID set)",
    }
    assert components["discord"]["detail"] == "off (no DISCORD_TOKEN set)"
    assert matched["verdict"] == "match"
    assert matched["matches"][0]["id"] == "caa0d32853961b70"
    assert status == 200 and "require_grad" in body
    log = output.decode("utf-8", "replace")
    assert "GitHub: off (no GITHUB_TOKEN or GITHUB_APP_ID set)" in log
    assert "Traceback" not in log
