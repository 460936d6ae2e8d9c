"""Draft placeholders (issue 29 point 6): `catalog draft` writes placeholders and a generalised
message; `catalog validate` fails on them, `catalog lint` flags them, `match` never shows them."""

from __future__ import annotations

import json

from bot.cli import main
from bot.stats.report import draft_record

PASTE = "thread 'main' panicked at crates/burn-x/src/lib.rs:10:5:\nwidth 42 > 7 allowed\n"


def _draft(tmp_path):
    rows = [
        {
            "norm_message": "width N > N allowed",
            "crate": "burn-x",
            "message": "width 42 > 7 allowed",
            "repo": "o/r",
            "location": "crates/burn-x/src/lib.rs:10",
            "last_at": 1.0,
        }
    ]
    record = draft_record(rows)
    folder = tmp_path / "cat"
    folder.mkdir()
    (folder / "draft.json").write_text(json.dumps(record))
    return record, folder


def test_draft_generalises_the_pasted_values(tmp_path):
    record, _ = _draft(tmp_path)
    assert record["errorMessage"] == "width {} > {} allowed"
    assert "42" not in json.dumps(record) and "7 allowed" not in json.dumps(record)
    assert record["messagePattern"].startswith("width\\ -?\\d+")


def test_validate_fails_on_a_draft(tmp_path, capsys):
    _, folder = _draft(tmp_path)
    assert main(["catalog", "validate", str(folder)]) == 1
    err = capsys.readouterr().err
    assert "field `documentation`" in err or "documentation" in err
    assert "draft placeholder" in err


def test_lint_flags_a_draft(tmp_path, capsys):
    record, folder = _draft(tmp_path)
    assert main(["catalog", "lint", "--strict", str(folder)]) == 1
    out = capsys.readouterr().out
    assert f"record {record['id']}: warning draft-text" in out
    assert "`documentation` is a placeholder" in out and "`solutions` is a placeholder" in out


def test_match_never_shows_a_draft_text(tmp_path, capsys):
    _, folder = _draft(tmp_path)
    paste = tmp_path / "issue.md"
    paste.write_text(PASTE)
    assert main(["match", "--catalog", str(folder), str(paste)]) == 0
    out = capsys.readouterr().out
    assert "width" in out  # it answered from the draft record
    assert "TODO" not in out
    assert main(["match", "--json", "--catalog", str(folder), str(paste)]) == 0
    assert "TODO" not in capsys.readouterr().out
