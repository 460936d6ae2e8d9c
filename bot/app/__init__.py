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
from typing import TYPE_CHECKING

from bot.app.index_cache import LoadedCatalog, load_indexed
from bot.catalog.loader import Catalog, CatalogError, bundled_catalog_path, load_catalog
from bot.config.env import SettingsError
from bot.core.analysis import Analysis
from bot.core.extract.hooks import HookFormat
from bot.core.match.index import CatalogIndex
from bot.core.match.matcher import Matcher
from bot.core.match.projects import ProjectInfo, Projects
from bot.core.match.releases import ReleaseHistory, parse_history

if TYPE_CHECKING:
    from bot.config.settings import Settings


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
        projects: Projects | None = None,
    ):
        self.catalog = catalog
        if history is None and projects is None:
            projects = load_projects(catalog)
            history = load_history(catalog.history_files) if projects is None else None
        # `history`: the own project's (the first), what single-project callers read.
        self.projects = projects
        self.history = projects.own_history() if projects is not None else history
        self.matcher = Matcher(
            catalog,
            index=index,
            history=self.history,
            projects=projects,
            hooks=load_hooks(catalog.hook_files),
        )

    @classmethod
    def of(cls, loaded: LoadedCatalog) -> Triage:
        return cls(
            loaded.catalog, index=loaded.index, history=loaded.history, projects=loaded.projects
        )

    def version_for(self, repo: str | None, own_version: str | None) -> str | None:
        """The version of a record's project for the own project's version a text names
        (`burn 0.13.2` -> ndarray 0.15.6, as burn pinned it); None when it says nothing."""
        if self.projects is None or own_version is None or repo == self.projects.own:
            return own_version
        info = self.projects.info(repo)
        return info.pinned.get(own_version) if info is not None else None

    def history_for(self, repo: str | None) -> ReleaseHistory | None:
        """The release history of a record's project (the only one, with a single project)."""
        if self.projects is None:
            return self.history
        return self.projects.of_repo(repo)

    @classmethod
    def from_paths(cls, paths: Sequence[str | Path] | None = None) -> Triage:
        """The given catalogs, or the bundled one when none is given."""
        if not paths:
            return cls.of(load_bundled())
        return cls.of(load_indexed_paths([Path(p) for p in paths]))

    def analyse(self, text: str) -> Analysis:
        return self.matcher.analyse(text)


def load_hooks(files: Sequence[Path]) -> tuple[HookFormat, ...]:
    """The panic-hook formats of the catalog's `hooks.toml` files; a file or pattern that
    cannot be used is skipped, as an unreadable history file is."""
    hooks: list[HookFormat] = []
    for path in files:
        import tomllib  # why: only catalogs of projects with their own panic hook have these

        try:
            tables = tomllib.loads(path.read_text(encoding="utf-8")).get("hook", [])
            for table in tables:
                hooks.append(HookFormat.of(str(table["pattern"]), str(path)))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
    return tuple(hooks)


def load_history(files: Sequence[Path]) -> ReleaseHistory | None:
    """The first readable history file among `files` (None when there is none): a file that
    cannot be read or parsed is skipped, as if it were not there."""
    for path in files:
        history = _read_history(path)
        if history is not None:
            return history
    return None


def _read_history(path: Path) -> ReleaseHistory | None:
    try:
        return parse_history(path.read_text(encoding="utf-8").splitlines())
    except (OSError, ValueError, KeyError, TypeError, IndexError, RecursionError):
        return None


def load_projects(catalog: Catalog) -> Projects | None:
    """The catalog's projects when it holds several histories or declares its projects
    (`project.toml`), in the order of the catalog paths (the first is the own project);
    None for a catalog of one project, matched as before."""
    histories = [h for h in map(_read_history, catalog.history_files) if h is not None]
    infos = _project_infos(catalog.project_files)
    if len(histories) < 2 and not infos:
        return None
    # The own project: the first history's, else the first record's (catalog paths in order).
    own = histories[0].repo if histories else next((r for *_, r in catalog.sites()), None)
    return Projects(histories, infos, own=own)


def _project_infos(files: Sequence[Path]) -> dict[str, ProjectInfo]:
    """The `project.toml` files that can be read (one that cannot is skipped, as a history
    file is)."""
    import tomllib  # why: only catalogs of several projects have these files

    infos: dict[str, ProjectInfo] = {}
    for path in files:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
            repo = str(data["repo"])
            pinned = data.get("pinned", {})
            infos[repo] = ProjectInfo(
                repo=repo,
                name=str(data.get("name") or repo.rsplit("/", 1)[-1]),
                dependency=bool(data.get("dependency", False)),
                tag=str(data.get("tag", "v{version}")),
                missing=tuple(str(v) for v in data.get("missing", ())),
                pinned={str(k): str(v) for k, v in pinned.items()},
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
    return infos


def index_catalog(catalog: Catalog) -> LoadedCatalog:
    """The catalog with its index and release history (or its projects' histories)."""
    projects = load_projects(catalog)
    history = load_history(catalog.history_files) if projects is None else projects.own_history()
    return LoadedCatalog(catalog, CatalogIndex(catalog), history, projects)


@cache
def load_bundled() -> LoadedCatalog:
    """The bundled catalog, indexed, from the user's cache folder when it is current."""
    return load_indexed_paths([bundled_catalog_path()])


def load_indexed_paths(paths: list[Path]) -> LoadedCatalog:
    """The catalogs at `paths`, indexed, from the user's cache folder when it is current."""
    return load_indexed(paths, lambda: index_catalog(load_catalog(paths)))


def load_triage(settings: Settings) -> Triage:
    """The pipeline over TRIAGE_CATALOG (or the bundled catalog); SettingsError if unusable."""
    paths = list(settings.triage_catalog) or None
    try:
        return Triage.from_paths(paths)
    except CatalogError as exc:
        where = ",".join(map(str, settings.triage_catalog)) or "the bundled catalog"
        shown = "; ".join(str(p) for p in exc.problems[:3])
        more = f" (and {len(exc.problems) - 3} more)" if len(exc.problems) > 3 else ""
        raise SettingsError(
            f"TRIAGE_CATALOG: {where} cannot be loaded: {shown}{more}", ("TRIAGE_CATALOG",)
        ) from exc
