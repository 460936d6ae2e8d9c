"""`--json` on the catalog commands a script reads (validate, history, update): one object on
stdout, valid against its schema in schemas/, with the same exit status as the text output. The
GitHub commands' objects (handle-event, poll --once, backfill) are checked where those commands
run against the fake GitHub (test_github_app_poll, test_backfill)."""

from __future__ import annotations

import json
from pathlib import Path

from git_project import git
from json_schemas import one_object

from bot.cli import main


def _crate(root: Path) -> Path:
    crate = root / "crate"
    (crate / "src").mkdir(parents=True)
    git(crate, "init", "-q", "-b", "main")
    for version, messages in (("0.1.0", ["too wide {}", "gone soon"]), ("0.2.0", ["too wide {}"])):
        body = "".join(
            f'pub fn f{i}(w: usize) {{\n    if w > 1 {{ panic!("{m}", w); }}\n}}\n'
            for i, m in enumerate(messages)
        )
        (crate / "Cargo.toml").write_text(f'[package]\nname = "w"\nversion = "{version}"\n')
        (crate / "src" / "lib.rs").write_text(body)
        git(crate, "add", "-A")
        git(crate, "commit", "-q", "-m", f"Release {version}")
        git(crate, "tag", f"v{version}")
    return crate


def test_validate_json_says_ok_problems_and_warnings(tmp_path, capsys):
    good = tmp_path / "good.jsonl"
    good.write_text(
        json.dumps(
            {
                "id": "a1",
                "repo": "o/r",
                "errorMessage": "too wide {}",
                "errorType": "panic",
                "filePath": "src/lib.rs",
                "lineNumber": 2,
            }
        )
        + "\n"
    )
    assert main(["catalog", "validate", "--json", str(good)]) == 0
    document = one_object(capsys.readouterr().out, "validate")
    assert document["ok"] is True and document["records"] == 1 and document["problems"] == []

    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "a1"}\n{"id": 3}\n')
    assert main(["catalog", "validate", "--json", str(broken)]) == 1
    document = one_object(capsys.readouterr().out, "validate")
    assert document["ok"] is False and document["records"] is None
    assert document["problems"] and all(p["file"] == str(broken) for p in document["problems"])
    assert {p["line"] for p in document["problems"]} == {1, 2}

    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["catalog", "validate", "--json", str(empty)]) == 1
    document = one_object(capsys.readouterr().out, "validate")
    assert document["records"] == 0 and "no records" in document["problems"][0]["message"]


def test_history_then_update_json_summaries(tmp_path, capsys):
    crate = _crate(tmp_path)
    out = tmp_path / "catalog"
    argv = ["catalog", "history", str(crate), "--repo", "o/w", "--out", str(out), "--json"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    document = one_object(captured.out, "history")
    assert [r["version"] for r in document["releases"]] == ["0.1.0", "0.2.0"]
    assert (document["live"], document["removed"], document["lineages"]) == (1, 1, 2)
    assert document["replaced"] == [] and "history: 2 releases" in captured.err

    scan = tmp_path / "scan"
    head = git(crate, "rev-parse", "HEAD")
    assert (
        main(["catalog", "scan", str(crate), "--repo", "o/w", "--commit", head, "--out", str(scan)])
        == 0
    )
    capsys.readouterr()
    argv = ["catalog", "update", "--catalog", str(out), "--scan", str(scan), "--json"]
    assert main(argv) == 0
    document = one_object(capsys.readouterr().out, "update")
    assert document["commit"] == head and document["out"] is None
    assert document["new"] == 0 and document["unchanged"] + document["moved"] == 1


def test_history_replaces_a_scan_in_its_folder_and_says_so(tmp_path, capsys):
    """A scan and a history of one repository in one folder hold the same sites under the same
    ids: the history renames the scan aside (kept), says it, and the folder validates; a scan
    into a history's folder is refused in one line."""
    crate = _crate(tmp_path)
    out = tmp_path / "catalog"
    head = git(crate, "rev-parse", "HEAD")
    scan = ["catalog", "scan", str(crate), "--repo", "o/w", "--commit", head, "--out", str(out)]
    assert main(scan) == 0
    capsys.readouterr()
    argv = ["catalog", "history", str(crate), "--repo", "o/w", "--out", str(out), "--json"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    name = f"scan-{head[:12]}.jsonl"
    assert one_object(captured.out, "history")["replaced"] == [name]
    assert f"history: replaces {name}" in captured.err
    assert (out / f"{name}.replaced").is_file() and not (out / name).exists()
    assert main(["catalog", "validate", str(out)]) == 0
    capsys.readouterr()

    assert main(scan) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds a `catalog history`" in err
    assert not (out / name).exists()


def test_a_catalog_that_does_not_load_is_exit_2_for_the_commands_that_use_it(tmp_path, capsys):
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "a1"}\n')
    assert main(["catalog", "lint", str(broken)]) == 2
    assert main(["catalog", "site", str(broken), "--out", str(tmp_path / "site")]) == 2
    assert main(["catalog", "show", "a1", "--catalog", str(broken)]) == 2
    assert main(["match", "--catalog", str(broken), "-"]) == 2
    assert not (tmp_path / "site").exists()
    # validate's finding is the catalog's problems: exit 1, as its help says
    assert main(["catalog", "validate", str(broken)]) == 1
    assert "Traceback" not in capsys.readouterr().err
