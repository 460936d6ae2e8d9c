"""`catalog update` pairs repeated identical messages of one file by their enclosing fn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.catalog.model import record_from_dict, record_to_dict
from bot.catalog.sites import site_id
from bot.catalog.validate import check_record
from bot.scan.rust.skeletons import skeletons
from bot.scan.rust.walk import scan_tree
from bot.scan.update import removed_at, update_catalog

REPO = "acme/fns"
SHA1 = "1" * 40
SHA2 = "2" * 40
PATH = "src/ops.rs"
SAME = "value must be set"

FN_UNIQUE = """pub fn unique(x: u32) {
    assert!(x > 0, "x must be positive");
}
"""
FN_ALPHA = """
pub fn alpha(x: Option<u32>) -> u32 {
    let y = x.expect("value must be set");
    y + 1
}
"""
FN_BETA = """
pub fn beta(x: Option<u32>) -> u32 {
    let y = x.expect("value must be set");
    y * 2
}
"""
FN_GAMMA = """
pub fn gamma(x: Option<u32>) -> u32 {
    let y = x.expect("value must be set");
    y * 3
}
"""
FN_TAIL = """
pub fn tail(x: u32) {
    assert!(x < 10, "x must be small");
}
"""
# v2: two lines added at the top (every line shifts by 2), and `alpha` removed.
V1 = FN_UNIQUE + FN_ALPHA + FN_BETA + FN_GAMMA + FN_TAIL
V2 = "// A header comment\n// added in v2\n" + FN_UNIQUE + FN_BETA + FN_GAMMA + FN_TAIL


def _scan(tmp_path: Path, text: str, sha: str) -> list[dict[str, Any]]:
    root = tmp_path / sha[:1]
    (root / "src").mkdir(parents=True)
    (root / PATH).write_text(text)
    return skeletons(scan_tree(root), repo=REPO, commit=sha)


def _line_of(text: str, function: str) -> int:
    """The 1-based line of the first statement of `function` (where its panic site is)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"pub fn {function}("))
    return start + 2


def _without_functions(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k != "enclosingFn"} for r in records]


def test_the_scan_names_each_sites_enclosing_fn(tmp_path):
    records = _scan(tmp_path, V1, SHA1)
    named = {(r["lineNumber"], r["errorMessage"]): r.get("enclosingFn") for r in records}
    assert named == {
        (_line_of(V1, "unique"), "x must be positive"): "unique",
        (_line_of(V1, "alpha"), SAME): "alpha",
        (_line_of(V1, "beta"), SAME): "beta",
        (_line_of(V1, "gamma"), SAME): "gamma",
        (_line_of(V1, "tail"), "x must be small"): "tail",
    }
    # In the canonical order: right after the line it belongs to.
    keys = list(records[0])
    assert keys.index("enclosingFn") == keys.index("lineNumber") + 1


def test_repeated_messages_pair_by_enclosing_fn_when_a_function_is_removed(tmp_path):
    catalog = _scan(tmp_path, V1, SHA1)
    scan = _scan(tmp_path, V2, SHA2)
    ids = {r["enclosingFn"]: r["id"] for r in catalog if r["errorMessage"] == SAME}
    result = update_catalog(catalog, scan)
    by_id = {r["id"]: r for r in result.records}
    # alpha's record is the one that left; beta's and gamma's follow their own functions.
    assert [removal.record_ids for removal in result.removed] == [(ids["alpha"],)]
    assert removed_at(by_id[ids["alpha"]]) == SHA2
    assert by_id[ids["beta"]]["lineNumber"] == _line_of(V2, "beta")
    assert by_id[ids["gamma"]]["lineNumber"] == _line_of(V2, "gamma")
    assert removed_at(by_id[ids["beta"]]) is None and removed_at(by_id[ids["gamma"]]) is None
    assert result.new == [] and result.proposals == []
    assert by_id[ids["beta"]]["enclosingFn"] == "beta"
    assert by_id[ids["gamma"]]["enclosingFn"] == "gamma"


def test_without_enclosing_fn_the_order_pairing_gets_it_wrong(tmp_path):
    """The fallback (and the behaviour before `enclosingFn`): by line order with the file's
    median shift, alpha's record takes beta's site and gamma's record is marked removed."""
    catalog = _without_functions(_scan(tmp_path, V1, SHA1))
    scan = _without_functions(_scan(tmp_path, V2, SHA2))
    alpha, beta, gamma = sorted(
        (r for r in catalog if r["errorMessage"] == SAME), key=lambda r: r["lineNumber"]
    )
    result = update_catalog(catalog, scan)
    by_id = {r["id"]: r for r in result.records}
    assert [removal.record_ids for removal in result.removed] == [(gamma["id"],)]
    assert by_id[alpha["id"]]["lineNumber"] == _line_of(V2, "beta")
    assert by_id[beta["id"]]["lineNumber"] == _line_of(V2, "gamma")


def test_one_side_without_enclosing_fn_falls_back_to_order(tmp_path):
    """A catalog written before `enclosingFn` still updates (by order); the records then take
    the scan's names."""
    catalog = _without_functions(_scan(tmp_path, V1, SHA1))
    scan = _scan(tmp_path, V2, SHA2)
    result = update_catalog(catalog, scan)
    assert len(result.removed) == 1
    kept = [r for r in result.records if r["errorMessage"] == SAME and not removed_at(r)]
    assert sorted(r["enclosingFn"] for r in kept) == ["beta", "gamma"]


def test_enclosing_fn_is_a_known_optional_text_field():
    record = {
        "id": site_id(REPO, PATH, SAME),
        "repo": REPO,
        "errorMessage": SAME,
        "filePath": PATH,
        "lineNumber": 3,
        "enclosingFn": "alpha",
    }
    assert check_record(record, "t.jsonl") == ([], [])
    assert record_from_dict(record).enclosing_fn == "alpha"
    assert record_to_dict(record_from_dict(record)) == record
    errors, _ = check_record({**record, "enclosingFn": 3}, "t.jsonl")
    assert [(p.field, p.message) for p in errors] == [("enclosingFn", "must be text, not a number")]
    assert check_record({k: v for k, v in record.items() if k != "enclosingFn"}, "t.jsonl") == (
        [],
        [],
    )
