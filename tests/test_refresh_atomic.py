"""A refresh puts its files in place as one set (issue 50): a crash before its commit marker
leaves the old set whole (and temp files the next refresh removes), a crash after it is
finished by the next refresh; nothing is left behind."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bot.scan import refresh
from bot.scan.refresh import COMMIT_FILE, recover, replace_set

OLD = {"history.ndjson": "old history\n", "panic_sites.jsonl": "old sites\n"}
NEW = {"history.ndjson": "new history\n", "panic_sites.jsonl": "new sites\n"}


def _folder(tmp_path: Path) -> Path:
    for name, text in OLD.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def _contents(folder: Path) -> dict[str, str]:
    return {name: (folder / name).read_text() for name in OLD}


def test_a_set_is_put_in_place_whole(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    replace_set(folder, NEW)
    assert _contents(folder) == NEW
    assert sorted(p.name for p in folder.iterdir()) == sorted(NEW)  # no marker, no temp


def test_a_crash_before_the_marker_keeps_the_old_set(tmp_path, monkeypatch) -> None:
    folder = _folder(tmp_path)
    real = refresh._write_synced

    def dies_on_the_marker(path: Path, text: str) -> None:
        if path.name == COMMIT_FILE:
            raise KeyboardInterrupt
        real(path, text)

    monkeypatch.setattr(refresh, "_write_synced", dies_on_the_marker)
    with pytest.raises(KeyboardInterrupt):
        replace_set(folder, NEW)
    assert _contents(folder) == OLD
    # a kill -9 leaves the temps the cleanup above could not remove: the next refresh does
    (folder / ".panic_sites.jsonl.999.tmp").write_text("half")
    recover(folder)
    assert sorted(p.name for p in folder.iterdir()) == sorted(OLD)


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
    assert sorted(p.name for p in folder.iterdir()) == sorted(NEW)
