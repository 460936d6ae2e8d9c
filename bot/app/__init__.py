"""The wiring every adapter (CLI, GitHub, Discord) shares: catalog + index + release history ->
Matcher, as one `Triage`.

The catalog (bot.catalog) only loads records; the core (bot.core) only matches what it is given.
Here the two meet: the catalog's index is built (or, for the bundled catalog, read from the
cache in index_cache.py), its history file is read and parsed, and the matcher gets both.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path

from bot.app.index_cache import LoadedCatalog, load_indexed
from bot.catalog.loader import Catalog, CatalogError, bundled_catalog_path, load_catalog
from bot.config.settings import Settings, SettingsError
from bot.core.analysis import Analysis
from bot.core.match.index import CatalogIndex
from bot.core.match.matcher import Matcher
from bot.core.match.releases import ReleaseHistory, parse_history


class Triage:
    """What every adapter calls: one catalog, one index, its release history, many texts.

    `index` and `history` are built or read from the catalog when not given (a history of None:
    the catalog's history files are read, if it has any).
    """

    def __init__(
        self,
        catalog: Catalog,
        *,
        index: CatalogIndex | None = None,
        history: ReleaseHistory | None = None,
    ):
        self.catalog = catalog
        self.history = history if history is not None else load_history(catalog.history_files)
        self.matcher = Matcher(catalog, index=index, history=self.history)

    @classmethod
    def of(cls, loaded: LoadedCatalog) -> Triage:
        return cls(loaded.catalog, index=loaded.index, history=loaded.history)

    @classmethod
    def from_paths(cls, paths: Sequence[str | Path] | None = None) -> Triage:
        """The given catalogs, or the bundled one when none is given."""
        return cls(load_catalog(paths)) if paths else cls.of(load_bundled())

    def analyse(self, text: str) -> Analysis:
        return self.matcher.analyse(text)


def load_history(files: Sequence[Path]) -> ReleaseHistory | None:
    """The first readable history file among `files` (None when there is none): a file that
    cannot be read or parsed is skipped, as if it were not there."""
    for path in files:
        try:
            history = parse_history(path.read_text(encoding="utf-8").splitlines())
        except (OSError, ValueError, KeyError, TypeError, IndexError, RecursionError):
            continue
        if history is not None:
            return history
    return None


def index_catalog(catalog: Catalog) -> LoadedCatalog:
    """The catalog with its index and release history."""
    return LoadedCatalog(catalog, CatalogIndex(catalog), load_history(catalog.history_files))


@cache
def load_bundled() -> LoadedCatalog:
    """The bundled catalog, indexed, from the user's cache folder when it is current."""
    paths = [bundled_catalog_path()]
    return load_indexed(paths, lambda: index_catalog(load_catalog(paths)))


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
