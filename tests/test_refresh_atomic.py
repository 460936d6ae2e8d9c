"""A refresh puts its files in place as one set: a crash before its commit marker leaves the
old set whole (and temp files the next refresh removes), a crash after it is finished by the
next refresh or the next load of the folder; a load never sees half of two sets."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bot.catalog import fileset
from bot.catalog.fileset import COMMIT_FILE, SET_LOCK, recover, replace_set

OLD = {"history.ndjson": "old history\n", "panic_sites.jsonl": "old sites\n"}
NEW = {"history.ndjson": "new history\n", "panic_sites.jsonl": "new sites\n"}


def _folder(tmp_path: Path) -> Path:
    for name, text in OLD.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def _contents(folder: Path) -> dict[str, str]:
    return {name: (folder / name).read_text() for name in OLD}


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name != SET_LOCK)


def test_a_set_is_put_in_place_whole(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    replace_set(folder, NEW)
    assert _contents(folder) == NEW
    assert _names(folder) == sorted(NEW)  # no marker, no temp


def test_a_crash_before_the_marker_keeps_the_old_set(tmp_path, monkeypatch) -> None:
    folder = _folder(tmp_path)
    real = fileset._write_synced

    def dies_on_the_marker(path: Path, text: str) -> None:
        if path.name == COMMIT_FILE:
            raise KeyboardInterrupt
        real(path, text)

    monkeypatch.setattr(fileset, "_write_synced", dies_on_the_marker)
    with pytest.raises(KeyboardInterrupt):
        replace_set(folder, NEW)
    assert _contents(folder) == OLD
    # a kill -9 leaves the temps the cleanup above could not remove: the next refresh does
    (folder / ".panic_sites.jsonl.999.tmp").write_text("half")
    recover(folder)
    assert _names(folder) == sorted(OLD)


def test_a_crash_after_the_marker_is_finished_by_the_next_refresh(tmp_path) -> None:
    folder = _folder(tmp_path)
    temps = {name: f".{name}.999.tmp" for name in NEW}
    for name, text in NEW.items():
        (folder / temps[name]).write_text(text)
    (folder / COMMIT_FILE).write_text(json.dumps(temps))
    # killed after renaming the first file of the set: half new, half old
    os.replace(folder / temps["history.ndjson"], folder / "history.ndjson")
    recover(folder)
    assert _contents(folder) == NEW
    assert _names(folder) == sorted(NEW)


def _record(rid: str, message: str) -> str:
    return (
        json.dumps(
            {
                "id": rid,
                "repo": "o/r",
                "errorMessage": message,
                "errorType": "panic",
                "filePath": "src/lib.rs",
                "lineNumber": 3,
            }
        )
        + "\n"
    )


def test_a_load_finishes_a_set_a_killed_refresh_committed(tmp_path) -> None:
    """serve restarted after a refresh was killed between its renames: the load puts the
    committed set in place under the lock and reads it whole, not half old and half new."""
    from bot.catalog.loader import load_catalog

    old = {"a.jsonl": _record("a1", "old a"), "b.jsonl": _record("b1", "old b")}
    new = {"a.jsonl": _record("a2", "new a"), "b.jsonl": _record("b2", "new b")}
    for name, text in old.items():
        (tmp_path / name).write_text(text)
    (tmp_path / SET_LOCK).write_text("")
    temps = {name: f".{name}.999.tmp" for name in new}
    for name, text in new.items():
        (tmp_path / temps[name]).write_text(text)
    (tmp_path / COMMIT_FILE).write_text(json.dumps(temps))
    os.replace(tmp_path / temps["a.jsonl"], tmp_path / "a.jsonl")  # killed here
    catalog = load_catalog([tmp_path])
    assert sorted(r.id for r in catalog) == ["a2", "b2"]
    assert _names(tmp_path) == ["a.jsonl", "b.jsonl"]


def test_a_load_waits_for_the_renames_of_a_set(tmp_path) -> None:
    """A reader takes the set lock shared: while a writer holds it to rename, the load waits,
    and then reads the new set."""
    import fcntl
    import threading

    from bot.catalog.loader import load_catalog

    (tmp_path / "a.jsonl").write_text(_record("a1", "old a"))
    lock = open(tmp_path / SET_LOCK, "a")  # noqa: SIM115
    fcntl.flock(lock, fcntl.LOCK_EX)
    seen: list[list[str]] = []
    reader = threading.Thread(target=lambda: seen.append([r.id for r in load_catalog([tmp_path])]))
    reader.start()
    reader.join(0.3)
    assert reader.is_alive() and not seen  # waiting for the writer
    (tmp_path / "a.jsonl").write_text(_record("a2", "new a"))
    fcntl.flock(lock, fcntl.LOCK_UN)
    lock.close()
    reader.join(5)
    assert seen == [["a2"]]
