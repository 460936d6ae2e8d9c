"""`catalog update`: the fixture crate's v1 catalog brought to v2, checked exactly."""

from __future__ import annotations

import argparse
import copy
import json
from pathlib import Path
from typing import Any

import pytest

from bot.catalog.loader import load_catalog
from bot.catalog.sites import pinned_url, site_id
from bot.cli.scan import register_catalog
from bot.scan.rust.skeletons import skeletons
from bot.scan.rust.walk import scan_tree
from bot.scan.update import (
    REMOVED_TAG_PREFIX,
    record_diff,
    removed_at,
    report_markdown,
    update_catalog,
)

FIXTURES = Path(__file__).parent / "fixtures"
REPO = "acme/fixture"
SHA1 = "1" * 40
SHA2 = "2" * 40
GRAD = "src/ops/grad.rs"
AVG = "Can't differentiate avg pool 2d backward."
EMB = "Can't differentiate embedding backward."

WRITTEN_AVG: dict[str, Any] = {
    "id": "written-avg-pool",
    "repo": REPO,
    "slug": "avg-pool-backward",
    "errorMessage": AVG,
    "messagePattern": "Can't differentiate avg pool 2d backward\\.",
    "errorType": "panic",
    "severity": "error",
    "filePath": GRAD,
    "lineNumber": 9,
    "sourceCode": "    pub fn avg_pool2d_backward(&self) {\n        panic!(..);\n    }",
    "sourceCodeStart": 4,
    "sourceCodeEnd": 14,
    "githubUrl": f"https://github.com/{REPO}/blob/{SHA1}/{GRAD}#L4-L14",
    "documentation": "Written by a person: the backward function itself is not differentiable.",
    "solutions": ["Call it on the inner backend.", "Do not differentiate twice."],
    "preventionTips": ["Keep backward code on the inner backend."],
    "tags": ["rust", "autodiff"],
    "backgroundTag": "unimplemented-op-backward",
    "analyzedSha": SHA1,
    "analyzedAt": "2026-09-05T13:19:14.260Z",
    "schemaVersion": 2,
}
WRITTEN_EMB: dict[str, Any] = {
    "id": "written-embedding",
    "repo": REPO,
    "errorMessage": EMB,
    "messagePattern": "Can't differentiate embedding backward\\.",
    "filePath": GRAD,
    "lineNumber": 5,
    "githubUrl": pinned_url(REPO, SHA1, GRAD, 5),
    "documentation": "Written by a person about embedding.",
    "analyzedSha": SHA1,
}
OTHER_REPO: dict[str, Any] = {
    "id": "other-repo",
    "repo": "acme/other",
    "errorMessage": "key not in store",
    "filePath": "src/data.rs",
    "lineNumber": 14,
}
NO_FILE: dict[str, Any] = {
    "id": "no-file",
    "repo": REPO,
    "errorMessage": "called `Option::unwrap()` on a `None` value",
    "documentation": "Generic advice.",
}


def _scan(version: int, sha: str) -> list[dict[str, Any]]:
    return skeletons(scan_tree(FIXTURES / f"rust_crate_v{version}"), repo=REPO, commit=sha)


def _catalog() -> list[dict[str, Any]]:
    return [*_scan(1, SHA1), WRITTEN_AVG, WRITTEN_EMB, OTHER_REPO, NO_FILE]


def _sid(path: str, message: str, occurrence: int = 0) -> str:
    return site_id(REPO, path, message, occurrence)


def _by_id(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in records}


EXPECTED_MOVES = {
    # (file, old line, new line): record ids
    ("src/data.rs", 14, 18): {_sid("src/data.rs", "key not in store")},
    ("src/data.rs", 18, 22): {_sid("src/data.rs", "variable {} is not set")},
    ("src/data.rs", 22, 26): {_sid("src/data.rs", "missing entry")},
    ("src/data.rs", 26, 30): {_sid("src/data.rs", 'the "raw" entry is missing')},
    ("src/data.rs", 30, 34): {_sid("src/data.rs", 'tab\there, quote " and \u2192 arrow')},
    ("src/data.rs", 41, 38): {_sid("src/data.rs", "joined message 42")},
    ("src/data.rs", 45, 42): {_sid("src/data.rs", "entry must exist", 0)},
    ("src/data.rs", 46, 43): {_sid("src/data.rs", "entry must exist", 1)},
    ("src/lib.rs", 22, 23): {_sid("src/lib.rs", "division by zero: {} / {}")},
    ("src/lib.rs", 54, 58): {_sid("src/lib.rs", "compiled with feature extra")},
    ("src/lib.rs", 59, 63): {_sid("src/lib.rs", "only outside tests")},
    (GRAD, 9, 12): {_sid(GRAD, AVG), "written-avg-pool"},
    (GRAD, 17, 16): {_sid(GRAD, "topk is not implemented for autodiff")},
}
EXPECTED_UNCHANGED = {
    _sid("src/dtype.rs", "softmax: unsupported dtype {:?}"),
    _sid("src/dtype.rs", "cat: unsupported dtype {other:?}"),
    _sid("src/dtype.rs", "cast from {:?}"),
    _sid("src/lib.rs", "length mismatch: {} != {}"),
    _sid("src/lib.rs", "pair contents differ"),
    _sid("src/lib.rs", "empty pair"),
    _sid("src/lib.rs", "{}"),
    _sid("src/macros.rs", "expected rank {}, got {}"),
    _sid("src/macros.rs", "no first byte"),
    _sid("src/macros.rs", "no second byte"),
    _sid("src/macros.rs", "zero lead byte"),
    _sid("src/macros.rs", "value is required"),
    _sid("src/ops/mod.rs", "dim {} out of bounds for {} dimensions"),
}


def test_update_v1_to_v2_exactly() -> None:
    catalog = _catalog()
    before = copy.deepcopy(catalog)
    result = update_catalog(catalog, _scan(2, SHA2))
    assert catalog == before  # the input is not modified

    assert {(m.file_path, m.old_line, m.new_line): set(m.record_ids) for m in result.moved} == (
        EXPECTED_MOVES
    )
    assert set(result.unchanged) == EXPECTED_UNCHANGED

    proposals = {p.record_ids: p for p in result.proposals}
    assert set(proposals) == {
        (_sid(GRAD, EMB), "written-embedding"),
        (_sid("src/data.rs", "a long message split over lines"),),
    }
    edited = proposals[(_sid(GRAD, EMB), "written-embedding")]
    assert (edited.reason, edited.score, edited.accepted) == ("message", 96.2, False)
    assert (edited.old_file, edited.old_line, edited.old_message) == (GRAD, 5, EMB)
    assert (edited.new_file, edited.new_line, edited.new_message) == (
        GRAD,
        8,
        "Cannot differentiate embedding backward.",
    )
    relocated = proposals[(_sid("src/data.rs", "a long message split over lines"),)]
    assert (relocated.reason, relocated.score) == ("file", 100.0)
    assert (relocated.old_file, relocated.old_line) == ("src/data.rs", 34)
    assert (relocated.new_file, relocated.new_line) == ("src/store_extra.rs", 4)

    gone_assert, gone_backward = (
        "a must not be u32::MAX",
        "Can't differentiate interpolate backward.",
    )
    assert {(r.record_ids, r.file_path, r.line, r.message) for r in result.removed} == {
        ((_sid("src/lib.rs", gone_assert),), "src/lib.rs", 23, gone_assert),
        ((_sid(GRAD, gone_backward),), GRAD, 13, gone_backward),
    }

    # New sites: the third "entry must exist" takes the next free occurrence, since the kept
    # records already hold occurrences 0 and 1.
    assert [(r["id"], r["filePath"], r["lineNumber"], r["errorMessage"]) for r in result.new] == [
        (_sid("src/data.rs", "entry must exist", 2), "src/data.rs", 11, "entry must exist"),
        (
            _sid("src/lib.rs", "rank {rank} is above the supported maximum of 8"),
            "src/lib.rs",
            45,
            "rank {rank} is above the supported maximum of 8",
        ),
        (
            _sid(GRAD, "Can't differentiate max pool 2d backward."),
            GRAD,
            20,
            "Can't differentiate max pool 2d backward.",
        ),
    ]
    assert all(r["analyzedSha"] == SHA2 for r in result.new)
    assert result.warnings == []
    assert result.summary() == (
        f"{REPO} at {SHA2[:12]}: moved 13, changed 2 (2 proposed, 0 accepted), removed 2, "
        "new 3, unchanged 13"
    )
    ids = [r["id"] for r in result.records]
    assert len(ids) == len(set(ids)) == len(catalog) + 3


def test_update_keeps_write_ups_and_moves_pinned_ranges() -> None:
    result = update_catalog(_catalog(), _scan(2, SHA2))
    records = _by_id(result.records)
    avg = records["written-avg-pool"]
    changed = {k for k in set(avg) | set(WRITTEN_AVG) if avg.get(k) != WRITTEN_AVG.get(k)}
    assert changed == {
        "lineNumber",
        "sourceCodeStart",
        "sourceCodeEnd",
        "githubUrl",
        "analyzedSha",
        "enclosingFn",
    }
    # The write-up now names its enclosing fn, as the scan does (it follows the code).
    assert avg["enclosingFn"] == "avg_pool2d_backward"
    assert list(avg).index("enclosingFn") == list(avg).index("lineNumber") + 1
    assert (avg["lineNumber"], avg["sourceCodeStart"], avg["sourceCodeEnd"]) == (12, 7, 17)
    assert avg["githubUrl"] == f"https://github.com/{REPO}/blob/{SHA2}/{GRAD}#L7-L17"
    assert avg["analyzedSha"] == SHA2
    skeleton = records[_sid(GRAD, AVG)]
    assert (skeleton["lineNumber"], skeleton["githubUrl"]) == (12, pinned_url(REPO, SHA2, GRAD, 12))
    # A proposal is not applied: the records stay exactly as they were.
    assert records["written-embedding"] == WRITTEN_EMB
    # Other repositories and records without a file are never touched.
    assert records["other-repo"] == OTHER_REPO
    assert records["no-file"] == NO_FILE
    # An unchanged site still gets the new commit in its pinned URL.
    softmax = records[_sid("src/dtype.rs", "softmax: unsupported dtype {:?}")]
    assert softmax["githubUrl"] == pinned_url(REPO, SHA2, "src/dtype.rs", 11)


def test_removed_sites_are_kept_and_tagged() -> None:
    result = update_catalog(_catalog(), _scan(2, SHA2))
    gone = _by_id(result.records)[_sid(GRAD, "Can't differentiate interpolate backward.")]
    assert gone["tags"] == ["rust", "panic-site", f"{REMOVED_TAG_PREFIX}{SHA2}"]
    assert removed_at(gone) == SHA2
    assert (gone["lineNumber"], gone["analyzedSha"]) == (13, SHA1)  # where it last was
    assert removed_at(_by_id(result.records)[_sid(GRAD, AVG)]) is None


def test_accepting_a_proposal_moves_the_record_onto_the_new_site() -> None:
    result = update_catalog(_catalog(), _scan(2, SHA2), accept=["written-embedding"])
    records = _by_id(result.records)
    embedding = records["written-embedding"]
    assert embedding["errorMessage"] == "Cannot differentiate embedding backward."
    assert (embedding["lineNumber"], embedding["analyzedSha"]) == (8, SHA2)
    assert embedding["documentation"] == WRITTEN_EMB["documentation"]
    # Both records of the slot follow, and keep their ids.
    assert records[_sid(GRAD, EMB)]["errorMessage"] == "Cannot differentiate embedding backward."
    assert "Cannot differentiate embedding backward." not in {r["errorMessage"] for r in result.new}
    assert [p.accepted for p in result.proposals if "written-embedding" in p.record_ids] == [True]
    assert any("messagePattern" in w and "written-embedding" in w for w in result.warnings)
    assert result.summary().startswith(f"{REPO} at {SHA2[:12]}: moved 13, changed 2 (1 proposed")


def test_rejecting_a_proposal_removes_the_record_and_adds_the_site() -> None:
    result = update_catalog(_catalog(), _scan(2, SHA2), reject=["written-embedding"])
    assert {p.record_ids for p in result.proposals} == {
        (_sid("src/data.rs", "a long message split over lines"),)
    }
    assert removed_at(_by_id(result.records)["written-embedding"]) == SHA2
    assert ("Cannot differentiate embedding backward.", 8) in {
        (r["errorMessage"], r["lineNumber"]) for r in result.new
    }


def test_a_higher_cutoff_drops_the_edited_message_proposal() -> None:
    result = update_catalog(_catalog(), _scan(2, SHA2), cutoff=97)
    assert [p.reason for p in result.proposals] == ["file"]
    assert removed_at(_by_id(result.records)["written-embedding"]) == SHA2


def test_updating_again_with_the_same_scan_changes_nothing() -> None:
    first = update_catalog(_catalog(), _scan(2, SHA2), accept=["written-embedding"])
    again = update_catalog(first.records, _scan(2, SHA2))
    assert again.changed == set()
    assert (again.moved, again.removed, again.new) == ([], [], [])
    # The file move is still a proposal until someone accepts it.
    assert [p.reason for p in again.proposals] == ["file"]
    assert again.records == first.records


def test_a_site_that_comes_back_is_restored() -> None:
    forward = update_catalog(_catalog(), _scan(2, SHA2), accept=["written-embedding"])
    sha3 = "3" * 40
    back = update_catalog(forward.records, _scan(1, sha3))
    interpolate = _by_id(back.records)[_sid(GRAD, "Can't differentiate interpolate backward.")]
    assert removed_at(interpolate) is None
    assert interpolate["tags"] == ["rust", "panic-site"]
    assert (interpolate["lineNumber"], interpolate["analyzedSha"]) == (13, sha3)
    assert _sid(GRAD, "Can't differentiate interpolate backward.") in back.restored


def test_every_site_gone() -> None:
    result = update_catalog(_catalog(), [], repo=REPO, commit=SHA2)
    assert result.moved == [] and result.new == [] and result.proposals == []
    expected = {r["id"] for r in _scan(1, SHA1)} | {"written-avg-pool", "written-embedding"}
    assert {rid for r in result.removed for rid in r.record_ids} == expected
    assert result.warnings == [
        "30 of 30 catalogued sites are missing from the scan; "
        "was the whole repository scanned, from its root?"
    ]


def test_an_empty_scan_needs_repo_and_commit() -> None:
    with pytest.raises(ValueError, match="one repository at one commit"):
        update_catalog(_catalog(), [])


def test_diff_and_report_are_readable() -> None:
    catalog = _catalog()
    result = update_catalog(catalog, _scan(2, SHA2))
    diff = record_diff(catalog, result, [f"cat.jsonl:{i + 1}" for i in range(len(catalog))])
    assert "--- a/cat.jsonl:" in diff and "(written-avg-pool)" in diff
    assert '-  "lineNumber": 9,' in diff and '+  "lineNumber": 12,' in diff
    assert f'+    "{REMOVED_TAG_PREFIX}{SHA2}"' in diff
    assert "+++ b/new (" + _sid(GRAD, "Can't differentiate max pool 2d backward.") + ")" in diff
    assert "documentation" not in diff.replace('"documentation": "Written', "")  # not rewritten
    report = report_markdown(result)
    assert report.splitlines()[0] == f"# Catalog update: {REPO} at {SHA2}"
    assert f"| {_sid(GRAD, AVG)}, written-avg-pool | {GRAD} | 9 → 12 | {AVG} |" in report
    assert f"- {EMB}\n+ Cannot differentiate embedding backward." in report
    assert f"## Removed (kept, tagged `{REMOVED_TAG_PREFIX}{SHA2}`)" in report
    assert "| src/lib.rs:45 | assert | rank {rank} is above the supported maximum of 8 |" in report


# ---------------------------------------------------------------------------------------------
# The command, on files
# ---------------------------------------------------------------------------------------------


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    catalog = parser.add_subparsers().add_parser("catalog")
    register_catalog(catalog.add_subparsers())
    args = parser.parse_args(["catalog", *argv])
    return args.handler(args)


def _write_catalog(folder: Path) -> None:
    folder.mkdir()
    skeleton_lines = [json.dumps(r) for r in _scan(1, SHA1)]
    (folder / "sites.jsonl").write_text("\n".join(skeleton_lines) + "\n")
    (folder / "avg.json").write_text(
        json.dumps({"record": WRITTEN_AVG, "datasetVersion": "2026-09-12"}, indent=1)
    )
    (folder / "more.json").write_text(json.dumps([WRITTEN_EMB, OTHER_REPO, NO_FILE]))
    (folder / "families.json").write_text(
        '{"families": [{"id": "f", "name": "F", "messageFormats": ["{} backward."]}]}'
    )


def test_update_command_writes_catalog_report_and_diff(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    catalog, out = tmp_path / "catalog", tmp_path / "out"
    _write_catalog(catalog)
    scan_file = tmp_path / "scan.jsonl"
    scan_file.write_text("".join(json.dumps(r) + "\n" for r in _scan(2, SHA2)))
    argv = ["update", "--catalog", str(catalog), "--scan", str(scan_file), "--out", str(out)]
    assert _run([*argv, "--accept", "written-embedding", "--accept", "nonsense"]) == 0
    err = capsys.readouterr().err
    assert "moved 13, changed 2 (1 proposed, 1 accepted), removed 2, new 3" in err
    assert "no proposal for record nonsense" in err

    written = out / "catalog"
    assert sorted(p.name for p in written.iterdir()) == [
        "avg.json",
        "families.json",
        "more.json",
        f"new-sites-{SHA2[:12]}.jsonl",
        "sites.jsonl",
    ]
    assert (written / "families.json").read_bytes() == (catalog / "families.json").read_bytes()
    wrapped = json.loads((written / "avg.json").read_text())
    assert wrapped["datasetVersion"] == "2026-09-12"
    assert wrapped["record"]["lineNumber"] == 12
    assert wrapped["record"]["documentation"] == WRITTEN_AVG["documentation"]
    more = json.loads((written / "more.json").read_text())
    assert [r["id"] for r in more] == ["written-embedding", "other-repo", "no-file"]
    assert more[0]["errorMessage"] == "Cannot differentiate embedding backward."
    new_lines = (written / f"new-sites-{SHA2[:12]}.jsonl").read_text().splitlines()
    assert [json.loads(line)["lineNumber"] for line in new_lines] == [11, 45, 20]
    sites = (written / "sites.jsonl").read_text().splitlines()
    original = (catalog / "sites.jsonl").read_text().splitlines()
    assert len(sites) == len(original)
    unchanged_softmax = next(i for i, line in enumerate(original) if "softmax" in line)
    assert json.loads(sites[unchanged_softmax])["analyzedSha"] == SHA2

    # The written catalog loads, and its families came along.
    # (The loader hides the skeletons of the two written-up sites.)
    loaded = load_catalog([written])
    assert len(loaded) == len(_catalog()) + 3 - 2
    assert [f.id for f in loaded.families] == ["f"]

    report = (out / "update.md").read_text()
    assert "## Changed (proposed; not applied unless accepted)" in report
    assert "(similarity 96.2, accepted)" in report
    diff = (out / "update.diff").read_text()
    assert "--- a/avg.json (written-avg-pool)" in diff
    assert f"+++ b/new-sites-{SHA2[:12]}.jsonl (" in diff
    proposals = json.loads((out / "proposals.json").read_text())
    assert sorted(p["reason"] for p in proposals) == ["file", "message"]


def test_update_command_without_out_prints_the_diff_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    catalog = tmp_path / "catalog"
    _write_catalog(catalog)
    before = {p.name: p.read_bytes() for p in catalog.iterdir()}
    scan_file = tmp_path / "scan.json"
    scan_file.write_text(json.dumps(_scan(2, SHA2)))
    assert _run(["update", "--catalog", str(catalog), "--scan", str(scan_file)]) == 0
    captured = capsys.readouterr()
    assert '+  "lineNumber": 12,' in captured.out
    assert "removed 2, new 3" in captured.err
    assert {p.name: p.read_bytes() for p in catalog.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["catalog", "scan.json"]


def test_update_command_refuses_a_broken_catalog(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    (catalog / "bad.json").write_text('{"id": "x", "repo": "acme/fixture"}')
    scan_file = tmp_path / "scan.jsonl"
    scan_file.write_text("".join(json.dumps(r) + "\n" for r in _scan(2, SHA2)))
    assert _run(["update", "--catalog", str(catalog), "--scan", str(scan_file)]) == 2
    assert "errorMessage" in capsys.readouterr().err


def test_records_of_one_site_at_two_commits_merge_when_one_has_no_line() -> None:
    # Folding the older commit's record into the newer commit's slots compared lines, and a
    # slot without `lineNumber` raised TypeError.
    def record(rid: str, sha: str, line: int | None) -> dict[str, Any]:
        out: dict[str, Any] = {"id": rid, "repo": REPO, "errorMessage": AVG, "filePath": GRAD}
        out["analyzedSha"] = sha
        if line is not None:
            out["lineNumber"] = line
        return out

    records = [record("old", SHA1, 10), record("new", SHA2, None), record("new2", SHA2, 20)]
    scan = [{**record("site", SHA2, 12), "errorType": "panic!"}]
    result = update_catalog(records, scan)
    assert [r["id"] for r in result.records] == ["old", "new", "new2"]
