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

Every catalog is cached this way, the bundled one and those `--catalog` and `TRIAGE_CATALOG`
name. Finding the file costs one `stat` and two small reads per catalog file (`quick_key`): the
catalog is hashed whole only when one of those changed. Caches of different catalogs live side
by side, at most MAX_CACHED files and MAX_CACHED_BYTES, the least recently used removed first.

`TRIAGE_BOT_CACHE_DIR` names the folder; `off` turns the cache off. Default:
`$XDG_CACHE_HOME/triage-bot`, else `~/.cache/triage-bot`.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import sys
import time
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
    hook_files_of,
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


# Caches of different catalogs live side by side; past these, the least recently used go.
MAX_CACHED = 8
MAX_CACHED_BYTES = 4 << 30
_SAMPLE = 4096  # bytes read from each end of a catalog file for its quick key


def _inputs(paths: list[Path]) -> list[Path]:
    """The files the cached objects depend on: the catalog files, and in folders the history
    and project files (they decide the cached histories), the drafts (which answer when the
    folder's switch says so) and the hook formats (the cached catalog lists them; beside a
    catalog file too)."""
    files: list[Path] = []
    for given in paths:
        folder = Path(given)
        if folder.is_dir():
            extra = [
                *folder.rglob("*.ndjson"),
                *folder.rglob(PROJECT_FILE),
                *folder.rglob(f"*{DRAFT_SUFFIX}"),
                *folder.glob(f"{DRAFTS_DIR}/{DRAFTS_ANSWER_FILE}"),
            ]
        else:
            extra = []
        files.extend([*catalog_files(folder), *sorted(extra), *hook_files_of(folder)])
    return files


def _code_digest() -> hashlib._Hash:
    digest = hashlib.sha256()
    digest.update(f"{bot.__version__}\n{sys.version}\n{pickle.HIGHEST_PROTOCOL}\n".encode())
    for source in _SOURCES:
        _feed(digest, source.name, source)
    return digest


def cache_key(paths: list[Path]) -> str:
    """A digest of the catalog files' bytes and of the code that turns them into the cached
    objects: the name of the cache file."""
    digest = _code_digest()
    # Each piece fed apart: concatenating copied the catalog's megabytes twice.
    for file in _inputs(paths):
        _feed(digest, str(file), file)
    return digest.hexdigest()[:32]


def quick_key(paths: list[Path]) -> str:
    """A digest of what can be read without reading the catalog whole: each file's name,
    size, modification time and first and last 4 KiB. It names a small file holding the
    `cache_key` it was last seen with, so an unchanged catalog is not hashed again; a changed
    one (any of those) is hashed whole, and a file only touched finds its cache again."""
    digest = _code_digest()
    for file in _inputs(paths):
        stat = file.stat()
        digest.update(f"{file}\0{stat.st_size}\0{stat.st_mtime_ns}\0{stat.st_ino}\0".encode())
        with file.open("rb") as stream:
            digest.update(stream.read(_SAMPLE))
            if stat.st_size > 2 * _SAMPLE:
                stream.seek(-_SAMPLE, os.SEEK_END)
            digest.update(stream.read(_SAMPLE))
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
        quick = folder / f"key-{quick_key(paths)}"
        try:
            key = quick.read_text(encoding="ascii").strip()
        except OSError:
            key = cache_key(paths)
            _remember(folder, quick, key)
        path = folder / f"catalog-{key}.pickle"
    except OSError:
        return build()  # a catalog file went missing: let the loader say so
    try:
        # The cyclic collector paused: the objects built only grow, and each pass it made
        # while they did walked all of them (a fifth of a cold `match`).
        with collector_paused():
            loaded = _read(path)
        if isinstance(loaded, LoadedCatalog):
            _touch(path)
            return loaded
    except Exception:  # missing, unreadable, corrupt or from other code: rebuild it
        pass
    loaded = build()
    _write(folder, path, loaded)
    return loaded


def _remember(folder: Path, quick: Path, key: str) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        temporary = quick.with_name(f".{quick.name}.{os.getpid()}.tmp")
        temporary.write_text(key + "\n", encoding="ascii")
        os.replace(temporary, quick)
        _evict(folder, "key-*", 64, None)
    except OSError:
        pass  # a read-only cache folder: hashed whole next time too


def _touch(path: Path) -> None:
    """Mark a cache file the most recently used (eviction drops the least recently used): its
    time set past every other's, so uses closer together than the clock's step keep order."""
    with contextlib.suppress(OSError):
        newest = max(
            (f.stat().st_mtime_ns for f in path.parent.glob("catalog-*.pickle") if f != path),
            default=0,
        )
        now = max(time.time_ns(), newest + 1)
        os.utime(path, ns=(now, now))


def _evict(
    folder: Path, pattern: str, keep: int, max_bytes: int | None, spare: Path | None = None
) -> None:
    """Remove the least recently used files of `pattern` past `keep` files or `max_bytes`;
    `spare` (the one just written) stays."""
    found = []
    for file in folder.glob(pattern):
        try:
            stat = file.stat()
        except OSError:
            continue
        found.append((stat.st_mtime_ns, file.name, file, stat.st_size))
    found.sort(reverse=True)  # newest first
    total = 0
    for count, (_mtime, _name, file, size) in enumerate(found, 1):
        total += size
        over = count > keep or (max_bytes is not None and total > max_bytes)
        if over and file != spare:
            file.unlink(missing_ok=True)


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
        # other catalogs' caches stay (two catalogs used in turn keep theirs), within a cap
        _touch(path)
        _evict(folder, "catalog-*.pickle", MAX_CACHED, MAX_CACHED_BYTES, spare=path)
    except (OSError, pickle.PicklingError):
        pass  # a read-only home or a full disk: run without the cache
