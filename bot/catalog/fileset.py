"""A catalog folder's files replaced as one set, and read as one set.

`replace_set` (a refresh) writes every file whole beside its target, then a commit marker
naming them, then renames them into place; `reading` (a catalog load) holds a shared lock for
as long as it reads, so it sees the old set or the new one, never half of each. A crash before
the marker leaves the old set and temp files; after it, the renames are finished by whoever
comes next (the next refresh, or the next load of the folder), under the lock.

The lock is a file, `.refresh.set.lock`, that the first `replace_set` creates: a folder no
refresh ever wrote (the bundled catalog, a read-only install) is read without one.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path

COMMIT_FILE = ".refresh.commit"  # a set of files written whole, waiting to be put in place
SET_LOCK = ".refresh.set.lock"  # writers hold it exclusively while renaming, readers shared


def replace_set(out: Path, files: dict[str, str]) -> None:
    """Put `files` (name -> text) in place as a set: every one written whole beside its
    target first, then (under the set lock) a commit marker naming them and the renames."""
    temps = {name: f".{name}.{os.getpid()}.tmp" for name in files}
    try:
        for name, text in files.items():
            _write_synced(out / temps[name], text)
        with open(out / SET_LOCK, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            _write_synced(out / COMMIT_FILE, json.dumps(temps) + "\n")
            _finish(out)
    except BaseException:
        for temp in temps.values():
            (out / temp).unlink(missing_ok=True)
        raise


def recover(out: Path) -> None:
    """Finish a set a crash interrupted after its commit marker, and remove the temp files
    of one interrupted before it (a writer calls it under the folder's refresh lock)."""
    with open(out / SET_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _finish(out)
    for stale in out.glob(".*.tmp"):
        stale.unlink(missing_ok=True)


@contextlib.contextmanager
def reading(folder: Path) -> Iterator[None]:
    """Hold the folder's set lock shared while its files are read. A marker found under it
    is a set a killed refresh committed but did not finish: it is finished first (when the
    folder can be written), so the load sees the new set whole."""
    try:
        lock = open(folder / SET_LOCK)  # noqa: SIM115 (held across the yield)
    except OSError:
        yield  # no refresh ever wrote here (or the folder is not ours to lock): nothing to wait for
        return
    with lock:
        fcntl.flock(lock, fcntl.LOCK_SH)
        if (folder / COMMIT_FILE).exists() and os.access(folder, os.W_OK):
            fcntl.flock(lock, fcntl.LOCK_EX)
            _finish(folder)
            fcntl.flock(lock, fcntl.LOCK_SH)
        yield


def _finish(out: Path) -> None:
    """The renames of the committed set, then the marker goes (call with the set lock held)."""
    marker = out / COMMIT_FILE
    try:
        temps = json.loads(marker.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return
    except (OSError, ValueError):
        temps = {}  # a marker cut short: it was never complete, so neither is its set
    if isinstance(temps, dict):
        for name, temp in temps.items():
            if (out / temp).exists():
                os.replace(out / temp, out / name)
    marker.unlink(missing_ok=True)


def _write_synced(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8") as out:
        out.write(text)
        out.flush()
        os.fsync(out.fileno())
