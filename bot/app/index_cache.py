"""The bundled catalog, loaded and indexed, kept in the user's cache folder between runs.

Reading, checking and indexing the bundled catalog (and parsing its release history) is most of
a cold `triage-bot match`; unpickling the result, a `LoadedCatalog`, costs a fraction. Nothing is
committed: the file is written on first use. Its name is a digest of everything the result
depends on (the catalog files' names and bytes, the package version, the Python version, and
the source of the modules whose objects it holds), so an edited or rebuilt catalog, or an
upgraded bot, never reads a stale file. A missing, unreadable or corrupt file is rebuilt; a cache
folder that cannot be written is ignored.

A large catalog (one whose index holds packed postings: ARRAY_POSTINGS_MIN_RECORDS records and
more) is packed into columns first and written as a snapshot (bot.app.snapshot): read back by
mapping the file, not by unpickling a million objects (issue 25).

`TRIAGE_BOT_CACHE_DIR` names the folder; `off` turns the cache off. Default:
`$XDG_CACHE_HOME/triage-bot`, else `~/.cache/triage-bot`.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
from collections.abc import Callable
from pathlib import Path

import bot
import bot.app.snapshot as snapshot
from bot.catalog.loader import (
    DRAFT_SUFFIX,
    DRAFTS_ANSWER_FILE,
    DRAFTS_DIR,
    PROJECT_FILE,
    Catalog,
    catalog_files,
)
from bot.catalog.model import RecordTable, collector_paused, value_class
from bot.core.match.index import CatalogIndex
from bot.core.match.postings import PackedPostings
from bot.core.match.projects import Projects
from bot.core.match.releases import ReleaseHistory

CACHE_ENV = "TRIAGE_BOT_CACHE_DIR"
_PACKAGE = Path(__file__).resolve().parent.parent
# Modules whose classes are in the pickle, or that decide its contents.
_SOURCES = (
    *sorted((_PACKAGE / "catalog").glob("*.py")),
    _PACKAGE / "core" / "match" / "index.py",
    _PACKAGE / "core" / "match" / "postings.py",
    _PACKAGE / "core" / "match" / "drift.py",
    _PACKAGE / "core" / "match" / "releases.py",
    _PACKAGE / "core" / "match" / "projects.py",
    _PACKAGE / "app" / "index_cache.py",
    _PACKAGE / "app" / "snapshot.py",
    _PACKAGE / "__init__.py",
)


@value_class(frozen=True)
class LoadedCatalog:
    """A catalog with what the app derives from it once: the matcher's index and the release
    history of its history file (None without one). Pickled whole."""

    catalog: Catalog
    index: CatalogIndex
    history: ReleaseHistory | None
    projects: Projects | None = None  # a catalog of several projects (issue 25)


def cache_dir() -> Path | None:
    value = os.environ.get(CACHE_ENV)
    if value is not None:
        return None if value.strip().lower() in ("", "off", "0", "false", "no") else Path(value)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "triage-bot"


def cache_key(paths: list[Path]) -> str:
    """A digest of the catalog files and of the code that turns them into the cached objects."""
    digest = hashlib.sha256()
    digest.update(f"{bot.__version__}\n{sys.version}\n{pickle.HIGHEST_PROTOCOL}\n".encode())
    # Each piece fed apart: concatenating copied the catalog's megabytes twice (issue 25).
    for source in _SOURCES:
        _feed(digest, source.name, source)
    for given in paths:
        folder = Path(given)
        # the history and project files decide the cached histories too
        # (and drafts, which answer when the folder's switch says so)
        extra = (
            [
                *folder.rglob("*.ndjson"),
                *folder.rglob(PROJECT_FILE),
                *folder.rglob(f"*{DRAFT_SUFFIX}"),
                *folder.glob(f"{DRAFTS_DIR}/{DRAFTS_ANSWER_FILE}"),
            ]
            if folder.is_dir()
            else []
        )
        for file in [*catalog_files(folder), *sorted(extra)]:
            _feed(digest, str(file), file)
    return digest.hexdigest()[:32]


def _feed(digest: hashlib._Hash, name: str, file: Path) -> None:
    digest.update(name.encode())
    digest.update(b"\0")
    digest.update(file.read_bytes())
    digest.update(b"\0")


def load_indexed(paths: list[Path], build: Callable[[], LoadedCatalog]) -> LoadedCatalog:
    """`build()`'s result, from the cache when a file for these catalog files is there."""
    folder = cache_dir()
    if folder is None:
        return build()
    try:
        path = folder / f"catalog-{cache_key(paths)}.pickle"
    except OSError:
        return build()  # a catalog file went missing: let the loader say so
    try:
        # The cyclic collector paused: the objects built only grow, and each pass it made
        # while they did walked all of them (a fifth of a cold `match`).
        with collector_paused():
            loaded = _read(path)
        if isinstance(loaded, LoadedCatalog):
            return loaded
    except Exception:  # missing, unreadable, corrupt or from other code: rebuild it
        pass
    loaded = build()
    _write(folder, path, loaded)
    return loaded


def _read(path: Path) -> object:
    with path.open("rb") as stream:
        if not snapshot.is_snapshot(stream.read(len(snapshot.MAGIC))):
            stream.seek(0)
            return pickle.load(stream)
    return snapshot.read(path)


def _packable(loaded: LoadedCatalog) -> bool:
    return isinstance(loaded.index.postings, PackedPostings) and isinstance(
        loaded.catalog.records, RecordTable
    )


def _write(folder: Path, path: Path, loaded: LoadedCatalog) -> None:
    import tempfile  # only when writing: its imports cost a cold start

    try:
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("catalog-*.pickle"):
            old.unlink(missing_ok=True)  # files for other catalog versions are never read again
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=".catalog-", suffix=".tmp")
        try:
            with os.fdopen(handle, "w+b") as stream:  # read back: the snapshot's checksum
                if _packable(loaded):
                    # Packed in place: the caller's objects are then the ones later runs map.
                    snapshot.pack(loaded.catalog, loaded.index)
                    snapshot.write(stream, loaded)
                else:
                    pickle.dump(loaded, stream, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(temporary, path)  # whole or not at all, even with two writers
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except (OSError, pickle.PicklingError):
        pass  # a read-only home or a full disk: run without the cache
