"""Two real `serve` replicas on one PostgreSQL follow one catalog source (issue 26): a `push`
webhook reaches one of them; both switch to the same catalog version within seconds (the one
that fetched publishes the target in the shared store, the other builds exactly that)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import aiohttp
from git_project import Project, git, src
from harness import REPO, delivery_headers
from postgres_schema import fresh_schema, postgres_or_skip
from serve_process import free_port

from bot.scan.refresh import refresh_catalog

SECRET = "replica-webhook-secret-0123"
CORE = "crates/widgets-core/src/lib.rs"


async def start(index: int, tmp: Path, db: str, api_url: str, project: Project):
    mirror = tmp / f"mirror-{index}.git"
    git(tmp, "clone", "-q", "--bare", str(project.upstream), str(mirror))
    catalog = tmp / f"catalog-{index}"
    refresh_catalog(catalog, mirror, repo=REPO)
    config = tmp / f"config-{index}.toml"
    config.write_text(
        f'[catalog_source.widgets]\ncatalog = "{catalog}"\ngit_dir = "{mirror}"\n'
        f'repo = "{REPO}"\npoll_interval = 3600\n'
    )
    port = free_port()
    env = {
        **os.environ,
        "GITHUB_TOKEN": "ghp_bot_token",
        "GITHUB_WEBHOOK_SECRET": SECRET,
        "GITHUB_API_URL": api_url,
        "TRIAGE_DB": db,
        "TRIAGE_CATALOG": str(catalog),
        "TRIAGE_CONFIG": str(config),
        "LOG_LEVEL": "INFO",
    }
    env.pop("DISCORD_TOKEN", None)
    log = open(tmp / f"replica-{index}.log", "wb")  # noqa: SIM115 (closed at the end)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "serve", "--port", str(port),
        env=env, cwd=str(tmp), stdout=log, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    return process, f"http://127.0.0.1:{port}", log


async def catalog_status(session: aiohttp.ClientSession, url: str) -> dict | None:
    try:
        async with session.get(url + "/healthz") as response:
            return (await response.json())["components"].get("catalog")
    except (aiohttp.ClientError, ValueError, KeyError):
        return None


async def test_two_replicas_switch_to_the_same_catalog(fake, tmp_path: Path):
    with fresh_schema(postgres_or_skip()) as db:
        project = Project(tmp_path / "p")
        project.commit("Add alpha (#1)", {CORE: src("alpha state is broken here")}, tag="v0.1.0")
        project.push()
        replicas = [await start(i, tmp_path, db, fake.base_url, project) for i in range(2)]
        urls = [url for _, url, _ in replicas]
        try:
            async with aiohttp.ClientSession() as session:
                for url in urls:
                    for _ in range(300):
                        if await catalog_status(session, url):
                            break
                        await asyncio.sleep(0.05)
                beta = project.commit("Check beta (#2)", {CORE: src("beta value too large")})
                git(project.work, "push", "-q", "origin", "main")
                body = json.dumps(
                    {"ref": "refs/heads/main", "repository": {"full_name": REPO}}
                ).encode()
                headers = delivery_headers("push", body, secret=SECRET, delivery="push-1")
                async with session.post(
                    urls[0] + "/github/webhook", data=body, headers=headers
                ) as response:
                    assert response.status == 200
                seen: list[dict | None] = []
                for _ in range(300):
                    seen = [await catalog_status(session, url) for url in urls]
                    if all(s and beta[:12] in s["version"] for s in seen):
                        break
                    await asyncio.sleep(0.1)
                versions = {s["version"] if s else None for s in seen}
                assert versions == {f"widgets=v0.1.0+{beta[:12]}"}, seen
        finally:
            for process, _, log in replicas:
                process.terminate()
                await asyncio.wait_for(process.wait(), 30)
                log.close()
        second = (tmp_path / "replica-1.log").read_text()
        assert "catalog: now serving widgets=v0.1.0+" + beta[:12] in second
