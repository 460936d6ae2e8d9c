"""Fixtures shared by the test modules (the helpers they are built on are in harness.py)."""

from __future__ import annotations

import os
import tempfile

import pytest
from harness import BOT_LOGIN, BOT_TOKEN, REPO, Harness, fake_github

from bot.app import Triage
from bot.catalog.loader import load_bundled_catalog

# The bundled catalog's cache (bot.app.index_cache) in a folder of the test run's, not ~/.cache.
os.environ.setdefault("TRIAGE_BOT_CACHE_DIR", tempfile.mkdtemp(prefix="triage-bot-cache-"))


@pytest.fixture(scope="session")
def triage() -> Triage:
    """The pipeline over the bundled catalog, indexed once for the whole run."""
    return Triage(load_bundled_catalog())


@pytest.fixture
def fake():
    """A fake GitHub serving GitHub's example repository to the bot's token."""
    with fake_github(BOT_TOKEN, BOT_LOGIN, REPO) as gh:
        yield gh


@pytest.fixture
async def harness(fake, tmp_path, triage):
    """The server app with its worker, on the `fake` GitHub and a fresh store."""
    h = await Harness(fake, tmp_path / "triage.sqlite3", triage).start()
    yield h
    await h.stop()
