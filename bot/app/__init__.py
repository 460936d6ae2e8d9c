"""The pipeline every source shares: a catalog, indexed once, and the text -> Analysis step."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bot.catalog.loader import Catalog, CatalogError, load_bundled_catalog, load_catalog
from bot.config.settings import Settings, SettingsError
from bot.core.analysis import Analysis
from bot.core.match.matcher import Matcher


class Triage:
    """What every adapter (CLI, GitHub, Discord) calls: one catalog, one index, many texts."""

    def __init__(self, catalog: Catalog):
        self.catalog = catalog
        self.matcher = Matcher(catalog)

    @classmethod
    def from_paths(cls, paths: Sequence[str | Path] | None = None) -> Triage:
        """The given catalogs, or the bundled one when none is given."""
        return cls(load_catalog(paths) if paths else load_bundled_catalog())

    def analyse(self, text: str) -> Analysis:
        return self.matcher.analyse(text)


def load_triage(settings: Settings) -> Triage:
    """The pipeline over TRIAGE_CATALOG (or the bundled catalog); SettingsError if unusable."""
    paths = [settings.triage_catalog] if settings.triage_catalog else None
    try:
        return Triage.from_paths(paths)
    except CatalogError as exc:
        where = settings.triage_catalog or "the bundled catalog"
        shown = "; ".join(str(p) for p in exc.problems[:3])
        more = f" (and {len(exc.problems) - 3} more)" if len(exc.problems) > 3 else ""
        raise SettingsError(
            f"TRIAGE_CATALOG: {where} cannot be loaded: {shown}{more}", ("TRIAGE_CATALOG",)
        ) from exc
