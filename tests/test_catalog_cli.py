"""`triage-bot catalog validate|lint|show|import`, through the real command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli import main

ROOT = Path(__file__).resolve().parent.parent
SEEDS = sorted((ROOT / "tests" / "fixtures" / "seeds").glob("*.txt"))
CATALOG = ROOT / "catalog"
COMMIT = "2c06be351006851d42fdb6df16b976f4a82d9747"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["catalog", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_entry_point_runs_as_a_module(tmp_path):
    """One real process: `python -m bot catalog show` prints the record on stdout."""
    done = subprocess.run(
        [sys.executable, "-m", "bot", "catalog", "show", "cf30438606d06d30"],
        cwd=tmp_path,  # the bundled catalog is found from the package, not the working folder
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    seed = json.loads((SEEDS[3]).read_text(encoding="utf-8"))["record"]
    assert record == seed
    assert "catalog/seeds/cf30438606d06d30.json" in done.stderr


# --- validate -------------------------------------------------------------------------------


def test_validate_bundled_catalog(capsys):
    code, out, err = run(capsys, "validate", str(CATALOG))
    assert code == 0
    assert out == ""
    # burn: 2876 sites + 75 check.rs reasons; issue 25: 2380 (2026-12-05: the histories rebuilt
    # with the linker's one-site-per-function rule join 17 removed sites to their rewordings;
    # 2026-12-06: burn's two more, reworded around the same words)
    assert "ok: 5325 records" in err


def test_validate_reports_each_problem_on_its_own_line(capsys, tmp_path):
    (tmp_path / "a.json").write_text('{"id": "x", "repo": "a/b"}', encoding="utf-8")
    (tmp_path / "b.json").write_text('{"id": "y", "repo": "a/b", "errorMessage": ', "utf-8")
    (tmp_path / "c.json").write_text(
        '{"id": "z", "repo": "a/b", "errorMessage": "m", "lineNumber": "7"}', "utf-8"
    )
    code, out, err = run(capsys, "validate", str(tmp_path))
    assert code == 1
    assert out == ""
    lines = err.strip().split("\n")
    assert lines[-1] == "3 problems; the catalog cannot be used"
    problems = lines[:-1]
    assert len(problems) == 3
    assert any("a.json" in p and "errorMessage" in p for p in problems)
    assert any("b.json" in p and "not valid JSON" in p for p in problems)
    assert any("c.json" in p and "lineNumber" in p for p in problems)


# --- lint -----------------------------------------------------------------------------------


def test_lint_bundled_catalog(capsys):
    code, out, err = run(capsys, "lint", str(CATALOG))
    assert code == 0
    lines = out.strip().split("\n")
    mismatch = [line for line in lines if "possible-mismatch" in line]
    assert len(mismatch) == 1 and "record 5c5da46720dbbf10" in mismatch[0]
    assert "d59d5538758c7e08" not in out
    # 002 and 003 say what their family's code-checked explanation refutes
    contradicts = [line for line in lines if "contradicts-family" in line]
    assert {line.split("record ")[1][:16] for line in contradicts} == {
        "8d1d2fa6df3880bd",
        "cf30438606d06d30",
    }
    # 002's related error cut off mid-string names no record exactly
    [dangling] = [line for line in lines if "dangling-related-error" in line]
    assert "8d1d2fa6df3880bd" in dangling
    # shared messages are summarised, not listed
    assert "duplicate-message" not in out
    # among the live and removed panic sites, and 3 among check.rs's reasons
    assert "info: 715 duplicate-message (use --all to list them)" in err  # issue 25: 5 projects
    code, out_all, _ = run(capsys, "lint", "--all", str(CATALOG))
    assert out_all.count("duplicate-message") == 715
    code, _, _ = run(capsys, "lint", "--strict", str(CATALOG))
    assert code == 1


def test_lint_a_catalog_that_does_not_load(capsys, tmp_path):
    (tmp_path / "bad.json").write_text("[", encoding="utf-8")
    code, out, err = run(capsys, "lint", str(tmp_path))
    assert code == 2 and out == ""
    assert "bad.json" in err and "catalog validate" in err


# --- show -----------------------------------------------------------------------------------


def test_show_with_flags(capsys):
    code, out, err = run(capsys, "show", "5c5da46720dbbf10", "--catalog", str(CATALOG))
    assert code == 0
    record = json.loads(out)
    assert record["errorMessage"] == "Can't differentiate deform conv 2d backward."
    assert "flags: possible-mismatch" in err


def test_show_unknown_id(capsys):
    code, out, err = run(
        capsys, "show", "Can't differentiate avg pool 2d backward.", "--catalog", str(CATALOG)
    )
    assert code == 1 and out == ""
    assert "no record has the id" in err
    assert "records with that message: 8d1d2fa6df3880bd" in err


# --- import ---------------------------------------------------------------------------------


def test_import_seeds_writes_one_file_per_record(capsys, tmp_path):
    out_dir = tmp_path / "seeds"
    code, out, err = run(capsys, "import", *map(str, SEEDS), "--out", str(out_dir))
    assert code == 0, err
    assert out == ""
    assert f"wrote 4 record files to {out_dir}" in err
    written = sorted(p.name for p in out_dir.iterdir())
    assert written == sorted(p.name for p in (CATALOG / "seeds").glob("*.json"))
    for name in written:
        assert (out_dir / name).read_bytes() == (CATALOG / "seeds" / name).read_bytes()
    # The files load as a catalog.
    code, _, err = run(capsys, "validate", str(out_dir))
    assert code == 0 and "ok: 4 records" in err


def test_import_forced_format(capsys, tmp_path):
    code, _, err = run(capsys, "import", str(SEEDS[3]), "--format", "page", "--out", str(tmp_path))
    assert code == 1
    assert "footer" in err and "nothing written" in err
    assert list(tmp_path.iterdir()) == []
    code, _, err = run(capsys, "import", str(SEEDS[0]), "--format", "json", "--out", str(tmp_path))
    assert code == 1 and "not valid JSON" in err


def test_import_checks_repo(capsys, tmp_path):
    code, _, err = run(capsys, "import", str(SEEDS[1]), "--repo", "x/y", "--out", str(tmp_path))
    assert code == 1
    assert "d59d5538758c7e08" in err and "not x/y" in err


def test_import_refuses_duplicates_and_writes_nothing(capsys, tmp_path):
    copy = tmp_path / "copy.txt"
    copy.write_text(SEEDS[2].read_text(encoding="utf-8"), encoding="utf-8")
    out_dir = tmp_path / "out"
    code, _, err = run(capsys, "import", str(SEEDS[2]), str(copy), "--out", str(out_dir))
    assert code == 1
    assert "8d1d2fa6df3880bd" in err and "also used" in err
    assert not out_dir.exists()


def test_import_refuses_ids_that_are_not_file_names(capsys, tmp_path):
    doc = tmp_path / "evil.json"
    doc.write_text(json.dumps({"id": "../../x", "repo": "a/b", "errorMessage": "m"}), "utf-8")
    code, _, err = run(capsys, "import", str(doc), "--out", str(tmp_path / "out"))
    assert code == 1 and "cannot be a file name" in err
    assert not (tmp_path / "x.json").exists()


@pytest.mark.parametrize("forced", [None, "panic-sites"])
def test_import_panic_sites(capsys, tmp_path, forced):
    rows = [
        {
            "id": f"burn-{n:05d}",
            "file_path": "crates/burn-core/src/a.rs",
            "line": line,
            "kind": "panic!",
            "message_format": "Should read data",
            "commit": COMMIT,
        }
        for n, line in enumerate([40, 12])
    ]
    source = tmp_path / "sites.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out_dir = tmp_path / "out"
    extra = ["--format", forced] if forced else []
    code, out, err = run(
        capsys, "import", str(source), *extra, "--repo", "o/r", "--out", str(out_dir)
    )
    assert code == 0, err
    assert out == ""
    assert [p.name for p in out_dir.iterdir()] == ["panic_sites.jsonl"]
    written = [
        json.loads(line) for line in (out_dir / "panic_sites.jsonl").read_text().splitlines()
    ]
    assert [r["lineNumber"] for r in written] == [40, 12]  # input order
    assert all(r["repo"] == "o/r" for r in written)
    assert len({r["id"] for r in written}) == 2
    assert "wrote 2 panic sites" in err
    code, _, err = run(capsys, "validate", str(out_dir))
    assert code == 0 and "ok: 2 records" in err
    # Without --repo: the bundled catalog's own project, read from its first history.
    code, _, err = run(capsys, "import", str(source), "--out", str(tmp_path / "own"), *extra)
    assert code == 0, err
    written = (tmp_path / "own" / "panic_sites.jsonl").read_text().splitlines()
    assert {json.loads(line)["repo"] for line in written} == {"tracel-ai/burn"}
