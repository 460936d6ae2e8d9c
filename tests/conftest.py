"""Fixtures shared by the test modules."""

from __future__ import annotations

import pytest

from bot.app import Triage
from bot.catalog.loader import load_bundled_catalog


@pytest.fixture(scope="session")
def triage() -> Triage:
    """The pipeline over the bundled catalog, indexed once for the whole run."""
    return Triage(load_bundled_catalog())
