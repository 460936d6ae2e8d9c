"""Write-ups laid over scanned records (issue 24, issue 29 point 13): a `writeups/` file keyed by
the record id adds the write-up; the bundled ones are complete and lint-clean."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from bot.catalog.loader import load_catalog
from bot.cli import main

ROOT = Path(__file__).resolve().parent.parent
WRITEUPS = ROOT / "catalog" / "burn" / "writeups"
SITE = {
    "id": "aaaa000000000001",
    "repo": "o/r",
    "errorMessage": "width {} is too large",
    "errorType": "panic",
    "filePath": "crates/x/src/lib.rs",
    "lineNumber": 10,
    "enclosingFn": "set_width",
}
TWIN = {**SITE, "id": "aaaa000000000002", "lineNumber": 40}


def _catalog(tmp_path, *overlays):
    folder = tmp_path / "cat"
    (folder / "writeups").mkdir(parents=True)
    (folder / "sites.jsonl").write_text("\n".join(json.dumps(r) for r in (SITE, TWIN)) + "\n")
    for n, overlay in enumerate(overlays):
        (folder / "writeups" / f"{n}.json").write_text(json.dumps(overlay))
    return folder


def test_a_copied_scanned_line_is_a_write_up_not_a_second_id(tmp_path, capsys):
    write_up = {
        **SITE,
        "documentation": "`set_width` refuses widths past the limit.",
        "solutions": ["Pass a smaller width."],
    }
    folder = _catalog(tmp_path, write_up)
    assert main(["catalog", "validate", str(folder)]) == 0
    assert "used twice" not in capsys.readouterr().err
    catalog = load_catalog([folder])
    assert catalog.get(SITE["id"]).solutions == ("Pass a smaller width.",)
    assert catalog.get(SITE["id"]).line_number == 10
    # the other site with the same message stays: the write-up is its own site, not theirs
    assert catalog.get(TWIN["id"]) is not None and not catalog.get(TWIN["id"]).has_write_up


def test_a_write_up_follows_the_function_it_names_not_a_sibling_id(tmp_path, capsys):
    """A message at two places of one file: ids number them in line order at the scanned
    commit, so an id from a scan of another release can name the sibling. The write-up that
    names its function covers that function's site, said in a warning, and never the other."""
    other = {**TWIN, "enclosingFn": "set_width_mut"}
    folder = tmp_path / "cat"
    (folder / "writeups").mkdir(parents=True)
    (folder / "sites.jsonl").write_text(json.dumps(SITE) + "\n" + json.dumps(other) + "\n")
    write_up = {"id": SITE["id"], "enclosingFn": "set_width_mut", "documentation": "mut."}
    (folder / "writeups" / "w.json").write_text(json.dumps(write_up))
    assert main(["catalog", "validate", str(folder)]) == 0
    assert f"laid over that site's record {other['id']}" in capsys.readouterr().err
    catalog = load_catalog([folder])
    assert catalog.get(other["id"]).documentation == "mut."
    assert catalog.get(other["id"]).enclosing_fn == "set_width_mut"
    assert not catalog.get(SITE["id"]).has_write_up
    assert catalog.get(SITE["id"]).enclosing_fn == "set_width"

    (folder / "writeups" / "w.json").write_text(json.dumps({**write_up, "enclosingFn": "gone"}))
    assert main(["catalog", "validate", str(folder)]) == 1
    err = capsys.readouterr().err
    assert "the write-up is for another site than the record with its id" in err
    assert "`gone` in crates/x/src/lib.rs, not `set_width`" in err


def test_a_write_up_of_no_record_is_one_line_error(tmp_path, capsys):
    folder = _catalog(tmp_path, {"id": "ffff000000000000", "documentation": "x"})
    assert main(["catalog", "validate", str(folder)]) == 1
    err = capsys.readouterr().err
    assert "the write-up names no record of the catalog" in err and "Traceback" not in err


def test_twice_written_up_is_an_error(tmp_path, capsys):
    overlay = {"id": SITE["id"], "documentation": "x"}
    folder = _catalog(tmp_path, overlay, overlay)
    assert main(["catalog", "validate", str(folder)]) == 1
    assert "the write-up is written up twice" in capsys.readouterr().err


def test_lint_flags_code_the_site_does_not_show(tmp_path, capsys):
    overlay = {"id": SITE["id"], "documentation": "Raised by `Tensor::reshape` in `set_width`."}
    folder = _catalog(tmp_path, overlay)
    main(["catalog", "lint", str(folder)])
    out = capsys.readouterr().out
    assert "warning names-absent-code" in out and "`Tensor::reshape`" in out
    assert "`set_width`" not in out.split("names", 1)[1].split("which")[0]


def test_bundled_write_ups_are_complete_lint_clean_and_survive_a_rescan(tmp_path, capsys):
    files = sorted(WRITEUPS.glob("*.json"))
    assert len(files) >= 59
    catalog = load_catalog([ROOT / "catalog"])
    for file in files:
        data = json.loads(file.read_text())
        assert file.stem == data["id"]
        record = catalog.get(data["id"])
        assert record is not None and record.file_path  # laid over a scanned site
        assert record.documentation and record.solutions and record.example_fix
    assert main(["catalog", "lint", str(ROOT / "catalog")]) == 0
    out = capsys.readouterr().out
    assert "burn/writeups/" not in out
    # a rebuilt scan rewrites the sites' files; the write-ups, keyed by id, still apply
    copy = tmp_path / "catalog"
    shutil.copytree(ROOT / "catalog", copy)
    sites = copy / "burn" / "panic_sites.jsonl"
    sites.write_text("".join(reversed(sites.read_text().splitlines(keepends=True))))
    rebuilt = load_catalog([copy])
    assert all(rebuilt.get(f.stem).has_write_up for f in files)
