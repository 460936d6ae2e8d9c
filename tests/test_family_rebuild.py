"""The bundled catalog's other projects can be rebuilt from their git histories (the Makefile's
`catalog` target): on a sample of tags, a fresh `triage-bot catalog history` of one release
gives exactly the sites the committed history holds for that release. A full rebuild is not
run in CI (minutes); a project whose clone is absent is skipped, saying so."""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path

import pytest
from burn_repo import BURN_REPO

from bot.cli import main

ROOT = Path(__file__).resolve().parent.parent
# TRIAGE_TEST_* each, else beside burn's clone as OWNER+NAME/repo (when TRIAGE_TEST_BURN_REPO
# is set and laid out so).
MIRRORS = BURN_REPO.parent.parent if BURN_REPO is not None else None
CLONES = {
    "cubecl": ("TRIAGE_TEST_CUBECL_REPO", "tracel-ai+cubecl", "v0.2.0"),
    "ndarray": ("TRIAGE_TEST_NDARRAY_REPO", "rust-ndarray+ndarray", "0.16.1"),
    "wgpu": ("TRIAGE_TEST_WGPU_REPO", "gfx-rs+wgpu", "v0.18.0"),
}


def _recipe(project: str) -> list[str]:
    """The Makefile's `catalog history` arguments for a project, after the clone."""
    text = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    rule = re.search(rf"^catalog/{re.escape(project)}/history\.ndjson:.*\n\t(.+)$", text, re.M)
    assert rule, project
    words = shlex.split(rule.group(1).replace("$$", "$"))
    return words[words.index("--repo") :]


def _states(history_lines: list[str], version: str) -> set[tuple[str, int, str]]:
    header, *rows = (json.loads(line) for line in history_lines if line.strip())
    release = [r["version"] for r in header["releases"]].index(version)
    found = set()
    for row in rows:
        line = row["lines"][release]
        for first, last, file, message, _kind in row["spans"]:
            if line and first <= release <= last:
                found.add((file, line, message))
    return found


@pytest.mark.parametrize("project", sorted(CLONES))
def test_one_release_rebuilds_as_committed(project: str, tmp_path: Path) -> None:
    variable, folder, tag = CLONES[project]
    setting = os.environ.get(variable)
    if not setting and MIRRORS is None:
        pytest.skip(f"no clone of {project}: {variable} (or TRIAGE_TEST_BURN_REPO) is not set")
    clone = Path(setting) if setting else Path(MIRRORS or ".") / folder / "repo"
    if not (clone / "HEAD").exists() and not (clone / ".git").exists():
        pytest.skip(f"no clone of {project} at {clone} (set {variable})")
    args = _recipe(project)
    args[args.index("--tags") + 1] = f"^{re.escape(tag)}$"
    args.remove("--include-head")
    args[args.index("--out") + 1] = str(tmp_path)
    assert main(["catalog", "history", str(clone), *args]) == 0
    version = tag.removeprefix("v")
    fresh = _states((tmp_path / "history.ndjson").read_text().splitlines(), version)
    committed = (ROOT / "catalog" / project / "history.ndjson").read_text().splitlines()
    assert fresh and fresh == _states(committed, version)
