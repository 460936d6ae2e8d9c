"""A damaged or partial mirror (a `.rs` blob missing from its object store) never becomes a
catalog (issue 50): the scan of that release fails naming the file, instead of leaving the file
out and calling its live panics removed. A blob no site is in, missing from a partial mirror, stops
nothing."""

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


def test_a_blob_a_partial_mirror_lacks_no_site_is_in_does_not_stop_the_history(
    tmp_path: Path,
) -> None:
    """tauri's mirror is a partial clone without its large blobs (a prebuilt
    `cli.win32-x64-msvc.node`), one of them added by a commit that also renamed Rust files:
    following a site back through that rename compared every added and deleted file, and
    `catalog history` stopped with `git failed: ... could not fetch ... from promisor remote`."""
    source = tmp_path / "source"
    (source / "src").mkdir(parents=True)
    (source / "fixture").mkdir()
    git(source, "init", "-q", "-b", "main")
    git(source, "config", "uploadpack.allowFilter", "true")
    (source / "Cargo.toml").write_text('[package]\nname = "gears"\nversion = "0.1.0"\n')
    (source / "src" / "old.rs").write_text(
        'pub fn a() { panic!("the gear train slipped a tooth"); }\n'
    )
    old = "".join(f"line {i} of the old fixture\n" for i in range(400))
    (source / "fixture" / "a.txt").write_text(old)
    git(source, "add", "-A")
    git(source, "commit", "-q", "-m", "first")
    git(source, "mv", "src/old.rs", "src/lib.rs")
    with (source / "src" / "lib.rs").open("a") as lib:  # (an inexact rename: blobs compared)
        lib.write("pub fn b() {}\n")
    git(source, "rm", "-q", "fixture/a.txt")
    (source / "fixture").mkdir(exist_ok=True)
    (source / "fixture" / "b.txt").write_text(old.replace("old", "new"))
    git(source, "add", "-A")
    git(source, "commit", "-q", "-m", "rename, and a new fixture")
    git(source, "tag", "v0.1.0")
    mirror = tmp_path / "mirror"
    url = source.as_uri()
    git(tmp_path, "clone", "-q", "--bare", "--no-local", "--filter=blob:limit=4k", url, str(mirror))
    git(mirror, "config", "remote.origin.url", (tmp_path / "gone").as_uri())  # nothing to fetch
    done = run_cli(
        tmp_path, "catalog", "history", str(mirror), "--repo", "acme/gears", "--out", "catalog"
    )
    assert done.returncode == 0, done.stderr
    history = (tmp_path / "catalog" / "history.ndjson").read_text()
    assert "the gear train slipped a tooth" in history
