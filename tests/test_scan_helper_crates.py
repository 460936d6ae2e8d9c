"""`catalog scan` leaves out test-helper crates as `catalog history` does, unless asked."""

from __future__ import annotations

import json

from bot.cli import main

SOURCES = {
    "crates/engine/src/lib.rs": 'pub fn run() {\n    panic!("engine needs work");\n}\n',
    "crates/engine-tests/src/lib.rs": 'pub fn check() {\n    panic!("helper crate failed");\n}\n',
    "crates/engine-testgen/src/lib.rs": 'pub fn gen() {\n    panic!("testgen failed");\n}\n',
    "xtask/src/main.rs": 'fn main() {\n    panic!("xtask failed");\n}\n',
    "src/lib.rs": 'pub fn top() {\n    panic!("single-crate root");\n}\n',
}


def _scan(tmp_path, capsys, *extra: str) -> list[str]:
    root = tmp_path / "repo"
    for path, text in SOURCES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    capsys.readouterr()
    argv = ["catalog", "scan", str(root), "--repo", "acme/engine", "--commit", "a" * 40]
    assert main([*argv, *extra]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    return sorted(r["errorMessage"] for r in records)


def test_scan_leaves_out_test_helper_crates(tmp_path, capsys):
    assert _scan(tmp_path, capsys) == ["engine needs work", "single-crate root"]


def test_include_tests_keeps_test_helper_crates(tmp_path, capsys):
    assert _scan(tmp_path, capsys, "--include-tests") == [
        "engine needs work",
        "helper crate failed",
        "single-crate root",
        "testgen failed",
        "xtask failed",
    ]
