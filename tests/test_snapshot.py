"""A large catalog's cache file (bot.app.snapshot): packed columns mapped in place, the same
answers as the catalog read from its files, and a damaged file rebuilt, never read."""

from __future__ import annotations

import json
import pickle
import random
import shutil
from pathlib import Path

import pytest
from corpus_scoring import load_cases

import bot.core.match.index as index_module
from bot.app import index_cache as cache
from bot.app import index_catalog, snapshot
from bot.app.index_cache import LoadedCatalog
from bot.catalog.columns import CodedColumn, NumberColumn, Positions, StringColumn
from bot.catalog.loader import bundled_catalog_path, load_catalog
from bot.catalog.model import RecordTable
from bot.core.match.matcher import Matcher

WORDS = "tensor shape kernel buffer device stream gradient layout stride padding".split()


@pytest.fixture
def large(monkeypatch):
    """Every catalog indexed as a large one (packed postings), so that it is snapshotted."""
    monkeypatch.setattr(index_module, "ARRAY_POSTINGS_MIN_RECORDS", 1)


@pytest.fixture
def cache_folder(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(cache.CACHE_ENV, str(folder))
    return folder


@pytest.fixture
def made_up(tmp_path) -> Path:
    """3,000 records of a made-up project, and one `.json` record (kept as a document)."""
    folder = tmp_path / "made-up"
    folder.mkdir()
    rng = random.Random(7)
    with (folder / "sites.jsonl").open("w", encoding="utf-8") as stream:
        for i in range(3000):
            message = " ".join(rng.choice(WORDS) for _ in range(5)) + f" {{}} spot{i}"
            row = {
                "id": f"{i:016x}",
                "repo": "acme/made-up",
                "errorMessage": message,
                "filePath": f"crates/c{i % 40}/src/m{i % 7}.rs" if i % 5 else None,
                "lineNumber": 1 + i % 900,
            }
            stream.write(json.dumps(row) + "\n")
    record = {"id": "doc-1", "repo": "acme/made-up", "errorMessage": "ünïcode \ud800 spot"}
    (folder / "one.json").write_text(json.dumps(record), encoding="utf-8")
    return folder


class Builds:
    def __init__(self, paths: list[Path]):
        self.paths = paths
        self.count = 0

    def __call__(self) -> LoadedCatalog:
        self.count += 1
        return index_catalog(load_catalog(self.paths))

    def load(self) -> LoadedCatalog:
        return cache.load_indexed(self.paths, self)


def answers(loaded: LoadedCatalog, texts: list[str]) -> list:
    matcher = Matcher(loaded.catalog, index=loaded.index, history=loaded.history)
    return [matcher.analyse(text) for text in texts]


def the_cache_file(folder: Path) -> Path:
    (path,) = folder.glob("catalog-*.pickle")
    return path


def test_the_bundled_catalog_answers_the_same_from_its_snapshot(large, cache_folder, tmp_path):
    catalog = tmp_path / "catalog"
    shutil.copytree(bundled_catalog_path(), catalog)
    texts = [case["text"] for case in load_cases()]
    expected = answers(index_catalog(load_catalog([catalog])), texts)
    builds = Builds([catalog])
    built = builds.load()  # packed in place, then written
    assert the_cache_file(cache_folder).read_bytes()[:16] == snapshot.MAGIC
    read = builds.load()
    assert builds.count == 1
    assert isinstance(read.index.record_ids, StringColumn)
    assert type(read.catalog.records._position) is Positions  # type: ignore[attr-defined]
    assert answers(built, texts) == expected
    assert answers(read, texts) == expected
    assert any(a.verdict == "match" for a in expected)


def test_every_column_reads_back_as_built(large, cache_folder, made_up):
    plain = index_catalog(load_catalog([made_up]))
    builds = Builds([made_up])
    builds.load()
    read = builds.load()
    assert builds.count == 1
    records, index = read.catalog.records, read.index
    assert isinstance(records, RecordTable)
    assert list(records) == list(plain.catalog.records)
    for rid in plain.catalog.records:
        assert records[rid] == plain.catalog.records[rid]
        assert records[rid].origin == plain.catalog.records[rid].origin
    assert records["doc-1"].error_message == "ünïcode \ud800 spot"
    assert records.site_columns() == plain.catalog.records.site_columns()  # type: ignore[attr-defined]
    assert list(index.record_ids) == list(plain.index.record_ids)
    assert dict(index.by_file) == dict(plain.index.by_file)
    assert index.by_file.get("crates/c1/src/m1.rs") == plain.index.by_file["crates/c1/src/m1.rs"]
    assert "crates/nowhere.rs" not in index.by_file
    assert list(index.postings) == list(plain.index.postings)
    assert dict(index.idf) == dict(plain.index.idf)
    assert all(index.postings[w].tolist() == plain.index.postings[w].tolist() for w in WORDS)
    assert index.postings.get("no-such-word") is None and "spot17" in index.postings
    assert "missing" not in records and records.get("missing") is None


DAMAGES = {
    "empty": lambda data: b"",
    "header only": lambda data: data[:64],
    "half": lambda data: data[: len(data) // 2],
    "one byte short": lambda data: data[:-1],
    "one byte more": lambda data: data + b"\0",
    "another magic": lambda data: b"X" + data[1:],
    "a byte of the pickle": lambda data: _flip(data, 64 + 16 * _count(data) + 5),
    "a byte in the middle": lambda data: _flip(data, len(data) // 2),
    "the last byte": lambda data: _flip(data, len(data) - 1),
    "the checksum": lambda data: _flip(data, 40),
}


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x10]) + data[at + 1 :]


def _count(data: bytes) -> int:
    return int.from_bytes(data[24:32], "little")


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_snapshot_is_rebuilt(large, cache_folder, made_up, damage):
    builds = Builds([made_up])
    texts = ["thread 'main' panicked at src/x.rs:1:1:\ntensor shape kernel buffer device 3 spot42"]
    expected = answers(builds.load(), texts)
    path = the_cache_file(cache_folder)
    data = path.read_bytes()
    path.write_bytes(DAMAGES[damage](data))
    with pytest.raises(snapshot.SnapshotError):
        snapshot.read(path)
    loaded = builds.load()
    assert builds.count == 2
    assert answers(loaded, texts) == expected
    assert path.read_bytes() == data  # written again, whole
    builds.load()
    assert builds.count == 2


def test_a_changed_byte_anywhere_is_refused(large, cache_folder, made_up):
    Builds([made_up]).load()
    path = the_cache_file(cache_folder)
    data = path.read_bytes()
    for at in range(0, len(data), len(data) // 97):
        if 44 <= at < 64:
            continue  # the header's padding is not read
        path.write_bytes(_flip(data, at))
        with pytest.raises(snapshot.SnapshotError):
            snapshot.read(path)
    path.write_bytes(data)
    assert isinstance(snapshot.read(path), LoadedCatalog)


def test_a_snapshot_read_catalog_pickles_with_any_protocol(large, cache_folder, made_up):
    builds = Builds([made_up])
    builds.load()
    read = builds.load()
    texts = ["tensor shape kernel buffer device 3 spot42 failed"]
    expected = answers(read, texts)
    for protocol in (2, 4, 5):
        copy = pickle.loads(pickle.dumps(read, protocol=protocol))
        assert answers(copy, texts) == expected
        assert list(copy.index.record_ids) == list(read.index.record_ids)


def test_a_packed_table_is_edited_as_a_plain_one(made_up):
    plain = load_catalog([made_up]).records
    packed = load_catalog([made_up]).records
    assert isinstance(plain, RecordTable) and isinstance(packed, RecordTable)
    del plain["0000000000000003"]
    packed.pack()  # a deleted record is left out of the columns
    assert packed.packed_ids() is not None
    del packed["0000000000000003"]
    assert list(packed) == list(plain)
    for table in (plain, packed):
        table["0000000000000005"] = table["0000000000000005"].with_changes(error_message="new")
        del table["0000000000000009"]
    assert packed.packed_ids() is None  # unpacked by the first edit
    assert list(packed) == list(plain) and packed.site_columns() == plain.site_columns()
    assert packed.origin("0000000000000010") == plain.origin("0000000000000010")
    assert packed["0000000000000005"].error_message == "new"


@pytest.mark.parametrize("protocol", [4, 5])
def test_columns_keep_what_they_hold(protocol):
    values = ["", "plain", "ünïcode", "\ud800 lone surrogate", "a\nnewline", "plain2"]
    column = StringColumn.of(values, lookup=True)
    for copy in (column, pickle.loads(pickle.dumps(column, protocol=protocol))):
        assert list(copy) == values and copy[-1] == values[-1] and copy[1:3] == values[1:3]
        assert [copy.find(v) for v in values] == list(range(len(values)))
        assert copy.find("absent") == -1 and copy.find("plain ") == -1
    positions = Positions(column)
    assert positions["ünïcode"] == 2 and positions.get("absent") is None
    assert 3 not in positions and "plain" in positions  # type: ignore[comparison-overlap]
    with pytest.raises(KeyError):
        positions["absent"]
    with pytest.raises(ValueError, match="repeated"):
        StringColumn.of(["a", "b", "a"], lookup=True)
    with pytest.raises(TypeError):
        StringColumn.of(values).find("plain")
    coded = CodedColumn.of(["x", None, "y", "x"])
    copy = pickle.loads(pickle.dumps(coded, protocol=protocol))
    assert list(copy) == ["x", None, "y", "x"] and copy[1] is None and copy[3] == "x"
    numbers = pickle.loads(pickle.dumps(NumberColumn.of([0.1, 1e300, -0.0], "d"), protocol))
    assert list(numbers) == [0.1, 1e300, -0.0] and str(numbers[2]) == "-0.0"
