"""`catalog update` on the history's linking rules, and the scan -> update -> validate loop.

The loop runs twice in a row on the fixture crates always, and on burn's HEAD when burn's
repository is on this machine (TRIAGE_TEST_BURN_REPO names its clone).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from burn_repo import SKIP_REASON, burn_repo, burn_repo_present

from bot.catalog.sites import skeleton_record
from bot.cli import main
from bot.scan.lineages import extract_tree, git
from bot.scan.update import update_catalog

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures"
REPO = "acme/widgets"
OLD, NEW = "a" * 40, "b" * 40


def _site(path: str, line: int, message: str, commit: str = NEW, **extra) -> dict[str, Any]:
    record = skeleton_record(
        repo=REPO, file_path=path, line=line, kind="panic!", message_format=message, commit=commit
    )
    record.update(extra)
    return record


def test_a_seed_at_an_older_commit_and_its_skeleton_are_one_live_site():
    seed = _site("src/ops.rs", 90, "Can't differentiate avg pool backward.", OLD, documentation="x")
    seed["id"] = "seed"
    skeleton = _site("src/ops.rs", 97, "Can't differentiate avg pool backward.")
    scan = [_site("src/ops.rs", 99, "Can't differentiate avg pool backward.")]
    result = update_catalog([seed, skeleton], scan)
    assert result.removed == []
    assert result.new == []
    by_id = {r["id"]: r for r in result.records}
    assert by_id["seed"]["lineNumber"] == 99
    assert not [t for t in by_id["seed"]["tags"] if t.startswith("removed-at:")]


def test_a_move_with_an_edit_is_proposed():
    old = _site("crates/a/src/repr/handle.rs", 73, "Should have handle for tensor {:?}", OLD)
    scan = [_site("crates/b/src/handle.rs", 97, "Should have handle for the tensor {id:?}")]
    result = update_catalog([old], scan)
    assert [(p.reason, p.new_file) for p in result.proposals] == [
        ("file-and-message", "crates/b/src/handle.rs")
    ]
    assert result.removed == []


def test_a_message_that_grew_is_proposed():
    old = _site("src/x.rs", 10, "Ordering is bigger than operations", OLD)
    scan = [_site("src/x.rs", 12, "Ordering is bigger than operations: ordering len {}, ops {}")]
    result = update_catalog([old], scan)
    assert [p.reason for p in result.proposals] == ["message"]


def test_cross_file_proposals_follow_the_path_not_the_line_number():
    old = _site("crates/a/src/conv.rs", 500, "Kernel dimensions must be positive here", OLD)
    scan = [
        # Same line number, unrelated file: a raw-line ranking picked this one.
        _site("crates/a/src/pool.rs", 500, "Kernel dimensions must be positive here"),
        _site("crates/b/src/conv.rs", 20, "Kernel dimensions must be positive here"),
    ]
    result = update_catalog([old], scan)
    assert [p.new_file for p in result.proposals] == ["crates/b/src/conv.rs"]


def test_an_empty_message_never_becomes_a_record(tmp_path, capsys):
    crate = tmp_path / "crate" / "src"
    crate.mkdir(parents=True)
    (crate / "lib.rs").write_text(
        'fn f(x: u8) { match x { 0 => panic!(""), _ => panic!("real") } }'
    )
    out = tmp_path / "scan"
    assert main(["catalog", "scan", str(tmp_path / "crate"), "--repo", REPO, "--commit", NEW,
                 "--out", str(out)]) == 0  # fmt: skip
    rows = [json.loads(x) for x in next(out.glob("*.jsonl")).read_text().splitlines()]
    assert [r["errorMessage"] for r in rows] == ["real"]


def _loop(
    root: Path, catalog: Path, work: Path, commit: str, repo: str, config: Path | None = None
) -> list[str]:
    """scan -> update -> validate, twice; returns the two update summaries."""
    scan_dir = work / "scan"
    extra = ["--config", str(config)] if config else []
    assert main(["catalog", "scan", str(root), "--repo", repo, "--commit", commit,
                 "--out", str(scan_dir), *extra]) == 0  # fmt: skip
    scan = next(scan_dir.glob("scan-*.jsonl"))
    summaries = []
    current = catalog
    for round_ in (1, 2):
        out = work / f"round{round_}"
        assert main(["catalog", "update", "--catalog", str(current), "--scan", str(scan),
                     "--out", str(out)]) == 0  # fmt: skip
        assert main(["catalog", "validate", str(out / "catalog")]) == 0
        summaries.append((out / "update.md").read_text().splitlines()[2])
        current = out / "catalog"
    return summaries


def test_scan_update_validate_twice_on_the_fixture_crates(tmp_path, capsys):
    first = tmp_path / "v1"
    assert main(["catalog", "scan", str(FIXTURES / "rust_crate_v1"), "--repo", REPO,
                 "--commit", OLD, "--out", str(first)]) == 0  # fmt: skip
    summaries = _loop(FIXTURES / "rust_crate_v2", first, tmp_path / "w", NEW, REPO)
    assert "unchanged 0" not in summaries[0]
    # The second update finds the catalog already in step: nothing moves, goes or arrives.
    assert "moved 0" in summaries[1] and "removed 0" in summaries[1] and "new 0" in summaries[1]


@pytest.mark.skipif(not burn_repo_present(), reason=SKIP_REASON)
def test_scan_update_validate_twice_on_burn_head(tmp_path, capsys):
    tree = tmp_path / "burn"
    extract_tree(burn_repo(), "HEAD", tree)
    commit = git(burn_repo(), "rev-parse", "HEAD").strip()
    catalog = tmp_path / "catalog"
    shutil.copytree(ROOT / "catalog", catalog)
    # with burn's builder setting, as the bundled check.rs reasons were scanned
    config = catalog / "burn" / "scan.toml"
    summaries = _loop(tree, catalog, tmp_path / "w", commit, "tracel-ai/burn", config)
    # Seeds and skeletons of one site are one slot: no live site is ever marked removed.
    second = tmp_path / "w" / "round2" / "catalog"
    for seed in (second / "seeds").glob("*.json"):
        assert "removed-at:" not in seed.read_text(), seed.name
    assert "moved 0" in summaries[1] and "removed 0" in summaries[1] and "new 0" in summaries[1]
    assert "removed 0" in summaries[0] and "restored" not in summaries[0]
    # The scan leaves out test-helper crates (burn-no-std-tests) as the history does: the
    # bundled catalog, built from the history at this HEAD, already has every site it finds.
    assert "moved 0" in summaries[0] and "new 0" in summaries[0], summaries[0]
