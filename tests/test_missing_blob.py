"""A damaged or partial mirror (a `.rs` blob missing from its object store) never becomes a
catalog (issue 50): the scan of that release fails naming the file, instead of leaving the file
out and calling its live panics removed."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_process import run_cli
from git_project import git

from bot.scan.lineages import MissingBlobError, extract_tree


def _repo_missing_a_blob(root: Path) -> Path:
    repo = root / "repo"
    (repo / "src").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "Cargo.toml").write_text('[package]\nname = "gears"\nversion = "0.1.0"\n')
    (repo / "src" / "lib.rs").write_text(
        'pub fn a() { panic!("the gear train slipped a tooth"); }\n'
    )
    (repo / "src" / "more.rs").write_text('pub fn b() { panic!("the gear box is out of oil"); }\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "first")
    git(repo, "tag", "v0.1.0")
    blob = git(repo, "rev-parse", "HEAD:src/more.rs")
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()  # loose: no gc has run
    return repo


def test_a_missing_blob_is_an_error_naming_the_file(tmp_path: Path) -> None:
    repo = _repo_missing_a_blob(tmp_path)
    with pytest.raises(MissingBlobError) as raised:
        extract_tree(repo, "v0.1.0", tmp_path / "out")
    assert raised.value.filename == "src/more.rs"
    done = run_cli(
        tmp_path, "catalog", "history", str(repo), "--repo", "acme/gears", "--out", "catalog"
    )
    assert done.returncode == 2, done.stdout
    assert "src/more.rs" in done.stderr and "missing" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "catalog" / "panic_sites.jsonl").exists()
