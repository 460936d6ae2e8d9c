"""The bundled catalog's cache (bot.app.index_cache): used when current, rebuilt when stale or
corrupt, ignored when it cannot be written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import bot
from bot.app import index_cache as cache
from bot.app import index_catalog
from bot.app.index_cache import LoadedCatalog
from bot.catalog.loader import bundled_catalog_path, load_catalog
from bot.core.match.matcher import Matcher

AVG_POOL = (
    "thread 'main' panicked at /home/u/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/"
    "burn-autodiff-0.18.0/src/ops/module.rs:1498:9:\n"
    "Can't differentiate avg pool 2d backward.\n"
)


@pytest.fixture
def catalog_copy(tmp_path) -> Path:
    folder = tmp_path / "catalog"
    shutil.copytree(bundled_catalog_path(), folder)
    return folder


@pytest.fixture
def cache_folder(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(cache.CACHE_ENV, str(folder))
    return folder


class Builds:
    """`build` for load_indexed, counting its calls."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.count = 0

    def __call__(self) -> LoadedCatalog:
        self.count += 1
        return index_catalog(load_catalog([self.folder]))

    def load(self) -> LoadedCatalog:
        return cache.load_indexed([self.folder], self)


def test_the_second_load_reads_the_cache_and_matches_the_same(catalog_copy, cache_folder):
    builds = Builds(catalog_copy)
    first = builds.load()
    assert builds.count == 1
    assert len(list(cache_folder.glob("catalog-*.pickle"))) == 1
    second = builds.load()
    assert builds.count == 1  # not rebuilt
    assert second is not first
    assert second.catalog.records.keys() == first.catalog.records.keys()
    assert second.index.postings == first.index.postings
    assert second.history == first.history
    matcher = Matcher(second.catalog, index=second.index, history=second.history)
    assert matcher.index is second.index
    again = Matcher(first.catalog, index=first.index, history=first.history)
    assert matcher.analyse(AVG_POOL).answered == again.analyse(AVG_POOL).answered
    assert matcher.analyse(AVG_POOL).verdict == "match"


def test_an_edited_catalog_file_is_never_read_stale(catalog_copy, cache_folder):
    builds = Builds(catalog_copy)
    builds.load()
    sites = catalog_copy / "burn" / "panic_sites.jsonl"
    lines = sites.read_text().splitlines()
    record = json.loads(lines[0])
    record["errorMessage"] = "a message written after the cache was made"
    sites.write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n")
    reloaded = builds.load()
    assert builds.count == 2
    assert reloaded.catalog.records[record["id"]].error_message == record["errorMessage"]
    # the older file stays beside it (least recently used goes first, past the cap)
    assert len(list(cache_folder.glob("catalog-*.pickle"))) == 2


def test_two_catalogs_used_in_turn_keep_both_caches(catalog_copy, cache_folder, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(catalog_copy / "burn", other)
    first, second = Builds(catalog_copy), Builds(other)
    for _ in range(3):
        first.load()
        second.load()
    assert (first.count, second.count) == (1, 1)
    assert len(list(cache_folder.glob("catalog-*.pickle"))) == 2


def test_the_least_recently_used_cache_goes_past_the_cap(
    catalog_copy, cache_folder, tmp_path, monkeypatch
):
    monkeypatch.setattr(cache, "MAX_CACHED", 2)
    folders = []
    for name in ("a", "b", "c"):
        folder = tmp_path / name
        shutil.copytree(catalog_copy / "ndarray", folder)
        folders.append(Builds(folder))
    a, b, c = folders
    a.load()
    b.load()
    a.load()  # a used again: b is now the least recently used
    c.load()
    assert len(list(cache_folder.glob("catalog-*.pickle"))) == 2
    a.load()
    c.load()
    assert (a.count, c.count) == (1, 1)
    b.load()
    assert b.count == 2  # evicted, rebuilt


def test_an_unchanged_catalog_is_not_hashed_again(catalog_copy, cache_folder, monkeypatch):
    """The quick key (sizes, times, both ends of each file) finds the cache; the catalog is
    hashed whole only when one of those changed, and a file only touched finds its cache."""
    builds = Builds(catalog_copy)
    builds.load()
    hashed = []
    real = cache.cache_key
    monkeypatch.setattr(cache, "cache_key", lambda paths: hashed.append(1) or real(paths))
    builds.load()
    assert hashed == [] and builds.count == 1
    sites = catalog_copy / "burn" / "panic_sites.jsonl"
    sites.touch()
    import os

    os.utime(sites, ns=(sites.stat().st_atime_ns, sites.stat().st_mtime_ns + 10**9))
    builds.load()
    assert hashed == [1] and builds.count == 1  # hashed whole, the same bytes: the same cache


def test_a_new_package_version_does_not_read_the_old_cache(catalog_copy, cache_folder, monkeypatch):
    builds = Builds(catalog_copy)
    builds.load()
    monkeypatch.setattr(bot, "__version__", "99.0.0")
    builds.load()
    assert builds.count == 2


@pytest.mark.parametrize("content", [b"", b"not a pickle", b"\x80\x05garbage", b"\x80\x04N."])
def test_a_corrupt_cache_file_is_rebuilt(catalog_copy, cache_folder, content):
    builds = Builds(catalog_copy)
    expected = builds.load()
    (path,) = cache_folder.glob("catalog-*.pickle")
    path.write_bytes(content)
    loaded = builds.load()
    assert builds.count == 2
    assert loaded.catalog.records.keys() == expected.catalog.records.keys()
    assert path.read_bytes() != content  # written again, whole
    builds.load()
    assert builds.count == 2


def test_a_cache_folder_that_cannot_be_written_is_ignored(catalog_copy, tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(cache.CACHE_ENV, str(blocker / "cache"))
    builds = Builds(catalog_copy)
    assert len(builds.load().catalog) == len(builds.load().catalog) > 1000
    assert builds.count == 2


def test_off_turns_the_cache_off(catalog_copy, tmp_path, monkeypatch):
    monkeypatch.setenv(cache.CACHE_ENV, "off")
    assert cache.cache_dir() is None
    builds = Builds(catalog_copy)
    builds.load()
    builds.load()
    assert builds.count == 2


def test_cached_histories_keep_their_lineages_pickled_until_read(catalog_copy, cache_folder):
    builds = Builds(catalog_copy)
    built = builds.load()
    read = builds.load()
    assert builds.count == 1 and read.projects is not None and built.projects is not None
    for old, new in zip(built.projects.histories, read.projects.histories, strict=True):
        items = new.lineages._items  # type: ignore[attr-defined]
        assert len(items) == len(old.lineages) and all(isinstance(i, bytes) for i in items)
        assert new.lineages[-1] == old.lineages[-1]  # built on first read, then kept
        assert not isinstance(items[-1], bytes) and isinstance(items[0], bytes)
        assert list(new.lineages) == list(old.lineages)
        assert new == old
