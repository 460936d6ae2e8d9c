"""The bundled write-ups and families name only code that exists (issue 46): every identifier in
their solutions and example fixes (a `Type::method`, a `.method(` call, a CamelCase type, a
snake_case name) is a word of the project's Rust sources at the record's analysed commit, or of
its family's repository (wgpu, cubecl, ndarray) at its newest one. Needs the git histories
(`TRIAGE_TEST_BURN_REPO`, the others beside it as OWNER+NAME/repo); skips, saying so, without.
"""

from __future__ import annotations

import json
import re
import subprocess
from functools import cache
from pathlib import Path

import pytest
from burn_repo import BURN_REPO, SKIP_REASON, burn_repo_present

from bot.catalog.explain import code_names
from bot.catalog.loader import load_catalog

ROOT = Path(__file__).resolve().parent.parent
CATALOG = ROOT / "catalog"
MIRRORS = BURN_REPO.parent.parent if BURN_REPO is not None else None

pytestmark = pytest.mark.skipif(not burn_repo_present(), reason=SKIP_REASON)

_CODE_SPAN = re.compile(r"`([^`]+)`")


def _identifiers(code: str) -> set[str]:
    """The names a person's code or code span uses that the project must have (a made-up
    snake_case helper of the reader's own is allowed: `code_names(snake=False)`)."""
    return code_names(code, snake=False)


def _exists(name: str, words: frozenset[str]) -> bool:
    """In the sources; `with_FIELD` also when FIELD is (burn's `Config` derive writes them)."""
    return name in words or (name.startswith("with_") and name[5:] in words)


def _names(solutions: list[str] | tuple[str, ...], example_fix: str | None) -> set[str]:
    names: set[str] = set()
    for text in solutions:
        for span in _CODE_SPAN.findall(text):
            if " " not in span.strip() or "(" in span or "::" in span:
                names |= _identifiers(span)
    if example_fix and not re.search(r"^\s*#", example_fix, re.M):  # shell/TOML: not Rust
        names |= _identifiers(example_fix)
    return {n for n in names if "{" not in n}


@cache
def _words(repo: str, commit: str) -> frozenset[str]:
    folder = BURN_REPO if repo == "tracel-ai/burn" else MIRRORS / repo.replace("/", "+") / "repo"
    if folder is None or not folder.exists():
        pytest.skip(f"no git history of {repo} beside {BURN_REPO}")
    out = subprocess.run(
        [
            "git",
            "-C",
            str(folder),
            "grep",
            "-h",
            "-o",
            "-w",
            "-E",
            "[A-Za-z_][A-Za-z0-9_]*",
            commit,
            "--",
            "*.rs",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return frozenset(out.split())


def _head(repo: str) -> str:
    folder = MIRRORS / repo.replace("/", "+") / "repo" if MIRRORS else None
    if folder is None or not folder.exists():
        pytest.skip(f"no git history of {repo}")
    return subprocess.run(
        ["git", "-C", str(folder), "rev-parse", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def _write_ups() -> list[Path]:
    return sorted(CATALOG.glob("*/writeups/*.json"))


@pytest.mark.parametrize("path", _write_ups(), ids=lambda p: f"{p.parent.parent.name}/{p.stem}")
def test_a_write_ups_code_exists_at_its_commit(path: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    record = load_catalog([CATALOG]).get(data["id"])
    assert record is not None and record.analyzed_sha
    words = _words(record.repo, record.analyzed_sha)
    names = _names(data.get("solutions", []), data.get("exampleFix"))
    missing = sorted(n for n in names if not _exists(n, words))
    assert missing == [], f"{path.name}: not in {record.repo}@{record.analyzed_sha[:10]}"


def test_the_families_code_exists_in_burn_or_their_repository() -> None:
    families = json.loads((CATALOG / "families.json").read_text(encoding="utf-8"))["families"]
    burn = _words("tracel-ai/burn", "2c06be351006851d42fdb6df16b976f4a82d9747")
    problems = {}
    for family in families:
        words = burn
        repo = family.get("repo")
        if repo and repo != "tracel-ai/burn":
            words = burn | _words(repo, _head(repo))
        names = _names(family.get("solutions", []), family.get("exampleFix"))
        missing = sorted(n for n in names if not _exists(n, words))
        if missing:
            problems[family["id"]] = missing
    assert problems == {}


def test_the_check_finds_a_name_that_does_not_exist() -> None:
    burn = _words("tracel-ai/burn", "2c06be351006851d42fdb6df16b976f4a82d9747")
    names = _names(["Use `LearnerBuilder::new(dir)`."], "let x = y.require_grad();")
    assert {"LearnerBuilder", "require_grad"} <= names
    assert "LearnerBuilder" not in burn and "require_grad" in burn
