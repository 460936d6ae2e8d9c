"""Shared by the site tests: the bundled catalog's Triage (once), a served app, HTML helpers."""

from __future__ import annotations

import html
import re
from functools import cache
from pathlib import Path

from aiohttp.test_utils import TestServer

from bot.app import Triage
from bot.catalog.importers import parse_page
from bot.config.settings import Settings
from bot.server.http import create_app
from bot.store.sqlite import Store

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT / "tests" / "fixtures" / "seeds"
PAGE_SEEDS = sorted(SEEDS.glob("00[012]_*.txt"))
JSON_SEED = SEEDS / "003_8c616292047d3ca7.txt"
EXAMPLE = ROOT / "examples" / "issue.md"
HEADINGS = (
    "Error message",
    "What it means",
    "Source",
    "Solutions",
    "Example fix",
    "Defensive patterns",
    "Prevention",
    "When it happens",
    "Related errors",
)


@cache
def bundled() -> Triage:
    return Triage.from_paths(None)


def seed_headings(path: Path) -> list[str]:
    """The seed page's section headings that have content, in its order (seed 000 shows an
    empty "Related errors": the pages leave such a section out)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[str] = []
    filled: set[str] = set()
    for line in lines:
        if line in HEADINGS:
            found.append(line)
        elif found and line.strip() and not line.startswith("AI-assisted analysis of"):
            filled.add(found[-1])
    return [h for h in found if h in filled]


def seed_record(path: Path) -> dict:
    return parse_page(path.read_text(encoding="utf-8"), str(path))


def h2s(page: str) -> list[str]:
    return [html.unescape(h) for h in re.findall(r"<h2>(.*?)</h2>", page)]


def text_of(page: str) -> str:
    """The page's text, tags dropped, entities decoded, whitespace collapsed."""
    inline = re.sub(r"</?(?:a|code|span|strong|em|sub)\b[^>]*>", "", page)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", inline)).split())


async def serve(tmp_path: Path, **env: str) -> tuple[TestServer, Store]:
    db = tmp_path / "site.sqlite3"
    store = Store(db)
    settings = Settings.from_mapping({"TRIAGE_DB": str(db), **env})
    app = create_app(settings, triage=bundled(), store=store, start_discord=False)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    return server, store
