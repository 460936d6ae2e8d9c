"""Fixtures shared by the test modules."""

from __future__ import annotations

import os
import tempfile

import pytest
from fakes.github_api import FakeGitHub

from bot.app import Triage

# The bundled catalog's cache (bot.app.index_cache) in a folder of the test run's, not ~/.cache.
os.environ.setdefault("TRIAGE_BOT_CACHE_DIR", tempfile.mkdtemp(prefix="triage-bot-cache-"))


@pytest.fixture(scope="session")
def triage() -> Triage:
    """The pipeline over the bundled catalog, indexed once for the whole run."""
    return Triage.from_paths()


# The repository GitHub's example webhook payloads name.
GITHUB_REPO = "Codertocat/Hello-World"


@pytest.fixture
def fake():
    """A fake GitHub serving that repository to the bot's token."""
    with FakeGitHub() as gh:
        gh.add_token("ghp_bot_token", "triage-helper")
        gh.add_repo(GITHUB_REPO)
        yield gh
