"""Any Rust project: a small crate of our own (tests/fixtures/rust_crate_callers, `tiny_grid`)
scanned with `catalog scan --config`, then panics as its users paste them, matched.

Each case is one of issue 13's: a `#[track_caller]` helper that reports the user's line, a
message held in a `const`, a message built by the crate's own macro, reasons built by a
declared builder function, drifted wordings, a registry folder with an unusual name, the order
of panics and old-format fragments.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from bot.app import Triage
from bot.catalog.loader import Catalog, load_catalog
from bot.catalog.model import record_from_dict
from bot.cli.scan import register_catalog
from bot.core.extract.paths import classify_path
from bot.core.match.index import CatalogIndex
from bot.core.match.matcher import MATCH_THRESHOLD
from bot.render import texts
from bot.render.answer.build import build_answer
from bot.render.terminal import render_text
from bot.scan.update import update_catalog

CRATE = Path(__file__).parent / "fixtures" / "rust_crate_callers"
REPO = "acme/tiny_grid"
SHA = "3" * 40
# A registry folder with an underscore in the name and a pre-release version.
REGISTRY = "/home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f/tiny_grid-0.3.0-rc.1"
NOTE = "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace"


def _scan(out: Path) -> Path:
    parser = argparse.ArgumentParser()
    catalog = parser.add_subparsers().add_parser("catalog")
    register_catalog(catalog.add_subparsers())
    argv = ["catalog", "scan", str(CRATE), "--repo", REPO, "--commit", SHA]
    argv += ["--config", str(CRATE / "scan.toml"), "--out", str(out)]
    args = parser.parse_args(argv)
    assert args.handler(args) == 0
    return out / f"scan-{SHA[:12]}.jsonl"


@pytest.fixture(scope="module")
def scanned(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _scan(tmp_path_factory.mktemp("tiny_grid"))


@pytest.fixture(scope="module")
def triage(scanned: Path) -> Triage:
    return Triage(load_catalog([scanned]))


def header(path: str, line: int, message: str) -> str:
    return f"thread 'main' panicked at {path}:{line}:9:\n{message}\n{NOTE}\n"


def answer(triage: Triage, text: str):
    """(record, best candidate) of the first answered panic, or (None, None)."""
    analysis = triage.analyse(text)
    if not analysis.answered:
        return None, None
    best = analysis.answered[0].best
    return triage.catalog.get(best.record_id), best


def test_the_scan_finds_every_kind_of_site(scanned: Path) -> None:
    records = [json.loads(line) for line in scanned.read_text().splitlines()]
    rows = {
        (r["filePath"], r["lineNumber"], r["errorMessage"]): sorted(
            t for t in r["tags"] if t not in ("rust", "panic-site")
        )
        for r in records
    }
    assert rows == {
        (
            "src/check.rs",
            19,
            "The grid width must be positive. Got width {width} and height {height}.",
        ): [
            "macro-body",
            "raised-at:src/check.rs:34",
        ],
        ("src/check.rs", 23, "A grid of {} cells is too large for the tiny_grid allocator"): [
            "macro-body",
            "raised-at:src/check.rs:34",
        ],
        ("src/check.rs", 34, "Grid check failed: {}"): ["macro-body"],
        (
            "src/grid.rs",
            15,
            "Cannot blit a source of {} cells at offset {} into a destination of {} cells: "
            "the sizes {} and {} disagree",
        ): [],
        (
            "src/grid.rs",
            30,
            "The layout engine could not place {} widgets because the available area of the "
            "grid is exhausted. See: https://example.org/tiny-grid/layout",
        ): [],
        (
            "src/grid.rs",
            39,
            "Tile {} overlaps tile {} at row {} and column {} in layer {} of the grid",
        ): [],
        ("src/lib.rs", 18, "column {} is outside the grid of width {}"): ["track-caller"],
        ("src/lib.rs", 24, "the fallback closure found no cell to return either"): [],
        ("src/lib.rs", 26, "cell {{x}} was never written to the grid"): ["track-caller"],
        ("src/lib.rs", 30, "grid has no cells; call Grid::with_size first"): [],
        ("src/lib.rs", 34, "TINY_GRID_CONFIG is not set; point it at a grid file"): [],
        ("src/lib.rs", 39, "tiny_grid: the row is empty, fill it before drawing"): [],
        ("src/lib.rs", 40, "tiny_grid: the column is empty, fill it before drawing"): [],
    }
    patterns = [r.get("messagePattern") for r in records if r["filePath"] == "src/check.rs"]
    assert patterns[0].startswith("(?:Grid check failed:\\s*)?The\\s*grid\\s*width")


# --- #[track_caller]: the user's file is what Rust prints ---------------------------------------


def test_a_track_caller_assertion_reported_in_the_users_code(triage: Triage) -> None:
    text = header("src/main.rs", 12, "column 7 is outside the grid of width 4")
    record, best = answer(triage, text)
    assert record is not None and record.line_number == 18
    assert best.confidence >= MATCH_THRESHOLD and "location" not in best.evidence


def test_without_the_tag_the_users_file_sinks_the_same_match(scanned: Path) -> None:
    # The same catalog with the track-caller tags taken off: the old penalty applies.
    records = [json.loads(line) for line in scanned.read_text().splitlines()]
    for record in records:
        record["tags"] = [t for t in record["tags"] if t != "track-caller"]
    plain = Triage(load_catalog([_write(scanned.parent / "untagged.jsonl", records)]))
    text = header("src/main.rs", 12, "column 7 is outside the grid of width 4")
    assert answer(plain, text) == (None, None)


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_an_expect_in_a_track_caller_function_prints_its_braces_as_is(triage: Triage) -> None:
    text = header("src/bin/draw.rs", 3, "cell {x} was never written to the grid")
    record, _best = answer(triage, text)
    assert record is not None and record.line_number == 26


# --- consts, macros, builders ------------------------------------------------------------------


def test_a_const_message_in_a_registry_folder_with_an_unusual_name(triage: Triage) -> None:
    text = header(f"{REGISTRY}/src/lib.rs", 30, "grid has no cells; call Grid::with_size first")
    record, best = answer(triage, text)
    assert record is not None and record.line_number == 30
    assert "location" in best.evidence and "line" in best.evidence


def test_a_message_built_by_the_crates_macro_is_found_at_the_call(triage: Triage) -> None:
    text = header(
        f"{REGISTRY}/src/lib.rs", 40, "tiny_grid: the column is empty, fill it before drawing"
    )
    record, best = answer(triage, text)
    assert (record.file_path, record.line_number) == ("src/lib.rs", 40)
    assert "line" in best.evidence


def test_a_builders_reason_pasted_whole_from_the_check_call(triage: Triage) -> None:
    text = header(
        f"{REGISTRY}/src/grid.rs",
        10,
        "Grid check failed: The grid width must be positive. Got width 0 and height 3.",
    )
    record, best = answer(triage, text)
    assert (record.file_path, record.line_number) == ("src/check.rs", 19)
    assert "location" not in best.evidence  # the check! call's file says nothing either way


def test_a_builders_reason_quoted_alone(triage: Triage) -> None:
    text = "Resizing fails with `A grid of 4194304 cells is too large for the tiny_grid allocator`"
    record, _best = answer(triage, text)
    assert (record.file_path, record.line_number) == ("src/check.rs", 23)


def test_the_generic_raise_site_is_not_an_answer_for_a_reason(triage: Triage) -> None:
    text = header(f"{REGISTRY}/src/grid.rs", 10, "Grid check failed: something we never wrote")
    assert answer(triage, text) == (None, None)


# --- drifted wordings ---------------------------------------------------------------------------


def test_an_older_wording_that_diverges_mid_sentence(triage: Triage) -> None:
    text = header(
        f"{REGISTRY}/src/grid.rs",
        15,
        "Cannot blit a source of 4 cells at offset 2 into a destination of 5 cells because "
        "they do not fit",
    )
    record, best = answer(triage, text)
    assert record is not None and record.line_number == 15 and "prefix" in best.evidence


def test_todays_message_without_its_trailing_url(triage: Triage) -> None:
    text = header(
        f"{REGISTRY}/src/grid.rs",
        44,
        "The layout engine could not place 12 widgets because the available area of the grid "
        "is exhausted.",
    )
    record, best = answer(triage, text)
    assert record is not None and record.line_number == 30 and "prefix" in best.evidence


def test_one_word_changed_in_a_message_full_of_placeholders(triage: Triage) -> None:
    values = "[[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]]"
    text = header(
        f"{REGISTRY}/src/grid.rs",
        39,
        f"Tile {values} overlaps tile {values} at line 2 and column 7 in layer {values} "
        "of the grid",
    )
    record, best = answer(triage, text)
    assert record is not None and record.line_number == 39 and "fuzzy" in best.evidence


def test_a_different_message_sharing_a_few_words_is_not_drift(triage: Triage) -> None:
    text = header("src/main.rs", 8, "The layout of my own widgets is broken in the grid")
    assert answer(triage, text) == (None, None)


# --- the order of panics, old-format fragments --------------------------------------------------


def test_a_catalogued_panic_after_an_uncatalogued_unwrap_is_answered(triage: Triage) -> None:
    text = header("src/main.rs", 5, "called `Option::unwrap()` on a `None` value") + header(
        f"{REGISTRY}/src/lib.rs",
        34,
        "TINY_GRID_CONFIG is not set; point it at a grid file: NotPresent",
    )
    analysis = triage.analyse(text)
    assert analysis.verdict == "match"
    assert triage.catalog.get(analysis.answered[0].best.record_id).line_number == 34
    rendered = render_text(build_answer(analysis, triage.catalog), color=False)
    first = texts.FIRST_NOT_CATALOGUED.format(
        message="called `Option::unwrap()` on a `None` value"
    ).replace("``", "`")
    assert " ".join(first.split()) in " ".join(rendered.split())


@pytest.mark.parametrize(
    "first",
    [
        # str slicing as Rust printed it before 1.9x, and as it prints it since
        "byte index 9 is out of bounds of `grid`",
        "end byte index 11 is out of bounds for string of length 8",
        "start byte index 4 is not a char boundary; it is inside 'é' (bytes 3..5 of string)",
        "byte range starts at 4 but ends at 3",
    ],
)
def test_a_catalogued_panic_after_a_std_slicing_panic_is_answered(
    triage: Triage, first: str
) -> None:
    """std raises these in any program: nobody catalogues them, so the catalogued panic a
    debug build printed after one is answered, as after an unwrap."""
    text = header("src/main.rs", 5, first) + header(
        f"{REGISTRY}/src/lib.rs",
        34,
        "TINY_GRID_CONFIG is not set; point it at a grid file: NotPresent",
    )
    assert triage.analyse(text).verdict == "match"


def test_a_later_panic_stays_silent_after_another_uncatalogued_first(triage: Triage) -> None:
    text = header("src/main.rs", 5, "my own code broke") + header(
        f"{REGISTRY}/src/lib.rs",
        34,
        "TINY_GRID_CONFIG is not set; point it at a grid file: NotPresent",
    )
    assert triage.analyse(text).verdict == "uncatalogued-panic"


def test_an_old_format_fragment_without_its_header(triage: Triage) -> None:
    text = (
        "After upgrading I get\n\n```\n'grid has no cells; call Grid::with_size first', "
        f"{REGISTRY}/src/lib.rs:30:20\n```\n"
    )
    analysis = triage.analyse(text)
    assert analysis.panics[0].panic.location.line == 30
    record, _best = answer(triage, text)
    assert record is not None and record.line_number == 30


def test_registry_folder_names_read_as_the_crate_at_its_version() -> None:
    cases = {
        "some_crate-0.14.2": ("some_crate", "0.14.2"),
        "wgpu-core-0.19.4": ("wgpu-core", "0.19.4"),
        "h2-0.4.5": ("h2", "0.4.5"),
        "sdl2-sys-0.37.0": ("sdl2-sys", "0.37.0"),
        "foo-rs-1.2.3": ("foo-rs", "1.2.3"),
        "tiny_grid-0.3.0-rc.1": ("tiny_grid", "0.3.0-rc.1"),
        "x11rb-protocol-0.13.1+build.5": ("x11rb-protocol", "0.13.1+build.5"),
        "crate-2d-1.0.0-alpha.3": ("crate-2d", "1.0.0-alpha.3"),
    }
    for folder, (crate, version) in cases.items():
        path = f"/home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f/{folder}/src/lib.rs"
        assert classify_path(path)[1:3] == (crate, version), folder


def test_crates_named_in_any_spelling_are_the_projects() -> None:
    records = {
        "a": record_from_dict(
            {"id": "a", "repo": "acme/tiny-grid-rs", "errorMessage": "x", "filePath": "src/lib.rs"}
        ),
        "b": record_from_dict(
            {
                "id": "b",
                "repo": "acme/tiny-grid-rs",
                "errorMessage": "y",
                "filePath": "grid_io/src/io.rs",
            }
        ),
    }
    index = CatalogIndex(Catalog(records))
    assert index.in_project("tiny_grid") and index.in_project("Tiny-Grid-rs")
    assert index.repo_path("tiny_grid", "src/lib.rs") == "src/lib.rs"
    assert index.repo_path("grid-io", "src/io.rs") == "grid_io/src/io.rs"
    assert not index.in_project("serde")


def test_catalog_update_brings_the_location_tags_of_a_fresh_scan(scanned: Path) -> None:
    scan = [json.loads(line) for line in scanned.read_text().splitlines()]
    untagged = [dict(r, tags=["rust", "panic-site", "stale"]) for r in scan]
    result = update_catalog(untagged, scan)
    tags = {(r["filePath"], r["lineNumber"]): r["tags"] for r in result.records}
    assert tags[("src/lib.rs", 18)] == ["rust", "panic-site", "stale", "track-caller"]
    assert tags[("src/check.rs", 19)][-2:] == ["macro-body", "raised-at:src/check.rs:34"]
    assert tags[("src/lib.rs", 30)] == ["rust", "panic-site", "stale"]


def test_a_multi_line_old_format_fragment_without_its_header(triage: Triage) -> None:
    text = (
        "An older release printed this, header cut off:\n\n```\n'Grid check failed:\n"
        "  The grid width must be positive. Got width 0 and height 3.\n"
        f"', {REGISTRY}/src/grid.rs:10:9\n```\n"
    )
    analysis = triage.analyse(text)
    panic = analysis.panics[0].panic
    assert (panic.location.line, panic.has_header) == (10, False)
    assert panic.message.startswith("Grid check failed: The grid width")
    record, _best = answer(triage, text)
    assert (record.file_path, record.line_number) == ("src/check.rs", 19)


def test_a_quoted_word_then_a_location_is_not_a_fragment(triage: Triage) -> None:
    text = "I said 'hello' to the grid and\nthen 'bye', see src/grid.rs:1:2\n"
    assert triage.analyse(text).panics == ()


def test_the_prefix_alone_names_no_crate_of_the_project_unless_it_has_it() -> None:
    # actix-net's crates are `actix-rt`, `actix-server`: `actix-web` is named like them, but
    # `actix` (the actor crate, another repository) is not one of them; a project whose
    # crates include the bare name (burn's `burn`) keeps it.
    def index_of(repo: str, *paths: str) -> CatalogIndex:
        records = {
            str(n): record_from_dict(
                {"id": str(n), "repo": repo, "errorMessage": f"m{n}", "filePath": path}
            )
            for n, path in enumerate(paths)
        }
        return CatalogIndex(Catalog(records))

    net = index_of("actix/actix-net", "actix-rt/src/system.rs", "actix-server/src/worker.rs")
    assert net.in_project("actix-rt") and net.in_project("actix_web")
    assert not net.in_project("actix")
    burn = index_of("tracel-ai/burn", "crates/burn/src/lib.rs", "crates/burn-core/src/x.rs")
    assert burn.in_project("burn") and burn.in_project("burn-wgpu")
