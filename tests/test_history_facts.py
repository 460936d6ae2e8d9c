"""What changed each lineage, from the commits (issue 24): the commit, PR and title that
introduced a site, changed its message, moved or removed it, and the first release with it.
A small repository of our own stands in for burn: squash-merge subjects ending in `(#N)`."""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path

import pytest

from bot.app import Triage
from bot.app.match_report import analysis_json
from bot.catalog.loader import load_catalog
from bot.cli import main
from bot.cli.match import analyse_input
from bot.core.match.releases import subject_parts
from bot.render.answer.build import build_answer
from bot.render.github import render_comment as render_github
from bot.scan.history_facts import first_releases, lineage_events, needle
from bot.scan.lineages import build_history, release_tags

REPO = "acme/widgets"
ALPHA = "alpha state is broken here"
BETA = "beta value too large: {value}"
BETA2 = "beta value is far too large: {value}"
GAMMA = "gamma reader lost its input"
DELTA = "delta importer needs OUT_DIR set"


def _git(root: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(root),
        "PATH": "/usr/bin:/bin:/usr/local/bin",
    }
    done = subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, text=True, env=env
    )
    return done.stdout.strip()


def _src(*messages: str) -> str:
    return "".join(f'pub fn f{i}() {{\n    panic!("{m}");\n}}\n' for i, m in enumerate(messages))


class Repo:
    def __init__(self, root: Path):
        self.root = root
        root.mkdir(parents=True)
        _git(root, "init", "-q", "-b", "main")

    def commit(self, subject: str, files: dict[str, str | None], tag: str | None = None) -> str:
        for path, text in files.items():
            target = self.root / path
            if text is None:
                target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        _git(self.root, "add", "-A")
        _git(self.root, "commit", "-q", "-m", subject)
        if tag:
            _git(self.root, "tag", tag)
        return _git(self.root, "rev-parse", "HEAD")


A = "crates/widgets-core/src/lib.rs"
B = "crates/widgets-import/src/gen.rs"


@pytest.fixture
def repo(tmp_path) -> tuple[Repo, dict[str, str]]:
    repo = Repo(tmp_path / "r")
    shas = {}
    shas["alpha"] = repo.commit("Add alpha (#1)", {A: _src(ALPHA)})
    shas["delta"] = repo.commit("Add the importer (#2)", {B: _src(DELTA)})
    repo.commit("Bump version", {"README.md": "0.1"}, tag="v0.1.0")
    shas["beta"] = repo.commit("Check beta values (#3)", {A: _src(ALPHA, BETA)})
    repo.commit("Unrelated docs (#4)", {"README.md": "docs"}, tag="v0.2.0")
    shas["fix"] = repo.commit("Fix alpha crash on empty input (#5)", {A: _src(BETA)})
    shas["reword"] = repo.commit("Reword beta check (#6)", {A: _src(BETA2, GAMMA)})
    shas["move"] = repo.commit("Move import crates to widgets-import repository (#7)", {B: None})
    repo.commit("Release 0.3.0", {"README.md": "0.3"}, tag="v0.3.0")
    shas["gamma"] = repo.commit("refactor: drop the gamma reader", {A: _src(BETA2)})
    return repo, shas


def _events(repo: Repo):
    history = build_history(repo.root, REPO, tags=release_tags(repo.root), head_ref="HEAD")
    subjects: dict[str, str] = {}
    events = lineage_events(history, repo.root, subjects)
    by_message = {}
    for lineage in history.lineages:
        for state in lineage.states.values():
            by_message.setdefault(state.message, events.get(lineage.id, []))
    return by_message, subjects


def test_each_change_is_found_with_its_commit_and_first_release(repo):
    repo, shas = repo
    events, subjects = _events(repo)
    assert events[ALPHA] == [
        ["introduced", "0.1.0", shas["alpha"]],
        ["fixed", "0.3.0", shas["fix"]],
    ]
    assert events[BETA2] == [
        ["introduced", "0.2.0", shas["beta"]],
        ["changed", "0.3.0", shas["reword"]],
    ]
    # The crate folder left, and the subject says where to: moved, not fixed.
    assert events[DELTA] == [
        ["introduced", "0.1.0", shas["delta"]],
        ["moved", "0.3.0", shas["move"], "acme/widgets-import"],
    ]
    # Gone on the branch, still in the newest release: no version, and not "fixed".
    assert events[GAMMA] == [
        ["introduced", "0.3.0", shas["reword"]],
        ["removed", None, shas["gamma"]],
    ]
    assert subjects[shas["fix"]] == "Fix alpha crash on empty input (#5)"


def test_the_first_release_holding_a_commit_is_the_oldest_by_version(tmp_path):
    """A patch release on a branch (0.1.1) holds its fix before a later minor release does; a
    commit no release holds yet is left out. One `git rev-list` a tag, the same answer as
    `git tag --contains` for each commit (which took a big workspace's history minutes)."""
    repo = Repo(tmp_path / "r")
    first = repo.commit("first", {A: _src(ALPHA)}, tag="v0.1.0")
    _git(repo.root, "checkout", "-q", "-b", "release-0.1")
    patch = repo.commit("Fix on the branch", {A: _src(ALPHA, BETA)}, tag="v0.1.1")
    _git(repo.root, "checkout", "-q", "main")
    minor = repo.commit("Next feature", {A: _src(ALPHA, GAMMA)}, tag="v0.2.0")
    _git(repo.root, "merge", "-q", "--no-edit", "-X", "ours", "release-0.1")
    merged = _git(repo.root, "rev-parse", "HEAD")
    later = repo.commit("Unreleased", {A: _src(GAMMA)}, tag="v0.3.0")
    unreleased = repo.commit("After the last release", {A: _src(DELTA)})
    found = first_releases(repo.root, {first, patch, minor, merged, later, unreleased})
    assert found == {
        first: "0.1.0",
        patch: "0.1.1",
        minor: "0.2.0",
        merged: "0.3.0",
        later: "0.3.0",
    }
    for sha, version in found.items():
        holding = _git(repo.root, "tag", "--contains", sha).split()
        assert f"v{version}" == min(holding, key=lambda t: tuple(map(int, t[1:].split("."))))


def test_subjects_give_the_pr_and_the_title():
    assert subject_parts("Move ONNX crates to burn-onnx repository (#4393)") == (
        4393,
        "Move ONNX crates to burn-onnx repository",
    )
    assert subject_parts("refactor: drop it") == (None, "refactor: drop it")
    assert needle("Node {node_id:?} is not in the backward_states. ") == (
        " is not in the backward_states. "
    )
    assert needle("{} {}") is None


def test_the_history_file_carries_the_events_and_answers_say_why(repo, tmp_path, capsys):
    repo, shas = repo
    out = tmp_path / "catalog"
    argv = ["catalog", "history", str(repo.root), "--repo", REPO, "--include-head"]
    assert main([*argv, "--out", str(out)]) == 0
    assert "the commits of" in capsys.readouterr().err
    rows = [json.loads(line) for line in (out / "history.ndjson").read_text().splitlines()]
    assert rows[0]["commits"][shas["move"]] == (
        "Move import crates to widgets-import repository (#7)"
    )
    triage = Triage(load_catalog([out]))
    paste = (
        "thread 'main' panicked at /home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f/"
        f"widgets-import-0.2.0/src/gen.rs:2:5:\n{DELTA}\n"
    )
    analysis, version = analyse_input(triage, io.BytesIO(paste.encode()))
    found = analysis_json("paste", analysis, triage, version)
    assert found["verdict"] == "removed-site"
    assert found["matches"][0]["answer"]["history"] == [
        {
            "event": "introduced",
            "version": "0.1.0",
            "commit": shas["delta"],
            "pr": 2,
            "title": "Add the importer",
            "url": f"https://github.com/{REPO}/pull/2",
        },
        {
            "event": "moved",
            "version": "0.3.0",
            "commit": shas["move"],
            "pr": 7,
            "title": "Move import crates to widgets-import repository",
            "url": f"https://github.com/{REPO}/pull/7",
        },
    ]
    body = render_github(build_answer(analysis, triage.catalog, history=triage.history))
    assert (
        f"This code moved to acme/widgets-import in [#7](https://github.com/{REPO}/pull/7) "
        "(0.3.0): upgrading widgets does not change it; look there." in body
    )
    assert "upgrading may fix it" not in body
    assert f"[v0.2.0…v0.3.0](https://github.com/{REPO}/compare/v0.2.0...v0.3.0)" in body
    assert "What changed: https://" not in body

    # A fix released: "upgrade"; a removal only on the branch: no release to upgrade to.
    fixed = f"thread 'main' panicked at crates/widgets-core/src/lib.rs:2:5:\n{ALPHA}\n"
    analysis, _ = analyse_input(triage, io.BytesIO(fixed.encode()))
    body = render_github(build_answer(analysis, triage.catalog, history=triage.history))
    assert (
        f"Fixed in [#5](https://github.com/{REPO}/pull/5) (0.3.0): upgrade to widgets 0.3.0 or "
        "later." in body
    )
    gone = f"thread 'main' panicked at crates/widgets-core/src/lib.rs:6:5:\n{GAMMA}\n"
    analysis, _ = analyse_input(triage, io.BytesIO(gone.encode()))
    body = render_github(build_answer(analysis, triage.catalog, history=triage.history))
    short = shas["gamma"][:7]
    assert (
        f"It was removed on the main branch in [{short}](https://github.com/{REPO}/commit/"
        f"{shas['gamma']}); every release up to 0.3.0 still has it." in body
    )
    assert "upgrad" not in body.split("every release up to")[0].split("\n")[-1]
