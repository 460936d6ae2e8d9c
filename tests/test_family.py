"""Issue 25: one catalog of several projects (burn, cubecl, burn-onnx, wgpu, ndarray), each
with its release history and crate names; dependency answers and labels; the scan setting's
declared assertion macros; the cache and `--version` at this size."""

from __future__ import annotations

import contextlib
import io
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from bot.app import Triage, index_catalog
from bot.catalog.loader import bundled_catalog_path, load_catalog
from bot.catalog.model import record_from_dict
from bot.cli import main
from bot.config.settings import SettingsError, catalog_paths
from bot.github.labels import LabelConfig, label_config_from_dict
from bot.render.answer.build import build_answer
from bot.render.dependency_note import dependency_note
from bot.scan.builders import BuilderConfigError, load_scan_settings
from bot.scan.rust.walk import scan_tree

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = Path(__file__).parent / "fixtures" / "family_ndassert"
CATALOG = bundled_catalog_path()


@pytest.fixture(scope="module")
def triage() -> Triage:
    return Triage.from_paths(None)


def _match_json(*args: str, stdin: str | None = None) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["match", "--json", *args]) == 0
    return json.loads(out.getvalue().splitlines()[0])


# -- the scan setting: a project's own assertion macro ---------------------------------------


def test_a_declared_assertion_macro_makes_its_messages_sites(tmp_path: Path) -> None:
    message = "collapse: index {} must be less than axis length {}"
    assert message not in {s.message_format for s in scan_tree(FIXTURE)}
    setting = tmp_path / "scan.toml"
    setting.write_text('[[macro]]\nname = "ndassert"\nlike = "assert"\n')
    builders, macros = load_scan_settings(setting)
    sites = {s.message_format: s for s in scan_tree(FIXTURE, builders=builders, macros=macros)}
    assert sites[message].kind == "ndassert!" and sites[message].line == 8
    assert "plain: n must be positive" in sites


@pytest.mark.parametrize(
    "body, says",
    [
        ('[[macro]]\nname = "ndassert"\nlike = "nope"\n', "`like` must be one of"),
        ('[[macro]]\nname = "nd!"\nlike = "assert"\n', "`name` must be a macro name"),
        ('[[macro]]\nname = "x"\n', "needs exactly `name` and `like`"),
    ],
)
def test_a_bad_macro_declaration_is_one_line(tmp_path: Path, body: str, says: str) -> None:
    setting = tmp_path / "scan.toml"
    setting.write_text(body)
    with pytest.raises(BuilderConfigError, match=says):
        load_scan_settings(setting)


def test_the_bundled_ndarray_setting_declares_ndassert() -> None:
    assert load_scan_settings(CATALOG / "ndarray" / "scan.toml") == ([], {"ndassert": "assert"})


# -- several projects in one catalog -----------------------------------------------------------


def test_triage_catalog_takes_paths_separated_by_commas(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    assert catalog_paths(f"{a}, {b}") == (a, b)
    assert catalog_paths("") == ()
    with pytest.raises(SettingsError, match="missing does not exist"):
        catalog_paths(f"{a},{tmp_path / 'missing'}")


def test_the_bundled_catalog_holds_five_projects_own_first(triage: Triage) -> None:
    projects = triage.projects
    assert projects is not None and projects.own == "tracel-ai/burn"
    assert projects.histories[0].repo == "tracel-ai/burn"
    assert {h.repo for h in projects.histories} == {
        "tracel-ai/burn",
        "tracel-ai/burn-onnx",
        "tracel-ai/cubecl",
        "gfx-rs/wgpu",
        "rust-ndarray/ndarray",
    }
    assert projects.is_dependency("gfx-rs/wgpu") and projects.is_dependency("rust-ndarray/ndarray")
    assert not projects.is_dependency("tracel-ai/cubecl")


def test_a_registry_path_picks_the_project_and_its_release(tmp_path: Path) -> None:
    paste = tmp_path / "issue.md"
    paste.write_text(
        "panicked at /home/u/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/"
        "cubecl-runtime-0.10.0/src/tune/local.rs:172:22:\n"
        'Should run when selected by autotune.: Unknown { name: "x" }\n'
    )
    found = _match_json(str(paste))
    (match,) = found["matches"][:1]
    assert match["repo"] == "tracel-ai/cubecl"
    assert match["file_path"] == "crates/cubecl-runtime/src/tune/local.rs"
    assert match["release"]["version"] == "0.10.0"
    assert "/tracel-ai/cubecl/blob/" in match["release"]["url"]


def test_a_git_checkout_of_cubecl_picks_cubecl(triage: Triage) -> None:
    text = (
        "thread 'main' panicked at /root/.cargo/git/checkouts/cubecl-058c47895211d464/97dbe4a/"
        "crates/cubecl-common/src/reader.rs:9:22:\nFailed to read tensor data synchronously. "
        "This can happen on platforms that don't support blocking futures like WASM. If "
        "possible, try using an async variant of this function instead.\n"
    )
    best = triage.analyse(text).answered[0].best
    assert best is not None
    assert triage.catalog.get(best.record_id).repo == "tracel-ai/cubecl"


def test_catalog_may_be_repeated_and_replaces_the_bundled_one(tmp_path: Path) -> None:
    paste = tmp_path / "issue.md"
    paste.write_text(
        "thread 'main' panicked at /home/u/.cargo/registry/src/index.crates.io-x/"
        "ndarray-0.16.1/src/linalg/impl_linalg.rs:298:13:\n"
        "ndarray: inputs 3 × 4 and 5 × 2 are not compatible for matrix multiplication\n"
    )
    only_seeds = _match_json("--catalog", str(CATALOG / "seeds"), str(paste))
    assert only_seeds["matches"] == []
    both = _match_json(
        "--catalog", str(CATALOG / "seeds"), "--catalog", str(CATALOG / "ndarray"), str(paste)
    )
    assert [m["repo"] for m in both["matches"]] == ["rust-ndarray/ndarray"]
    assert both["matches"][0]["release"]["version"] == "0.16.1"


def _record(rid: str, repo: str, message: str, path: str) -> dict:
    return {
        "id": rid,
        "repo": repo,
        "errorMessage": message,
        "errorType": "panic",
        "filePath": path,
        "lineNumber": 10,
    }


def test_the_own_projects_record_wins_a_tie_with_a_dependencys(tmp_path: Path) -> None:
    message = "the gizmo frobnicator overflowed its widget capacity"
    own, dep = tmp_path / "own", tmp_path / "dep"
    own.mkdir()
    dep.mkdir()
    (own / "sites.jsonl").write_text(
        json.dumps(_record("00000000000000a1", "acme/own", message, "crates/own-core/src/a.rs"))
        + "\n"
    )
    (dep / "sites.jsonl").write_text(
        json.dumps(_record("00000000000000b2", "dep/lib", message, "crates/lib-core/src/b.rs"))
        + "\n"
    )
    (dep / "project.toml").write_text('repo = "dep/lib"\nname = "lib"\ndependency = true\n')
    text = f"thread 'main' panicked:\n{message}\n"
    for order in ([dep, own], [own, dep]):
        triage = Triage.from_paths(order)
        best = triage.analyse(text).answered[0].best
        assert best is not None and best.record_id == "00000000000000a1", order


# -- dependency answers and labels ---------------------------------------------------------------


WGPU_TEXT = (
    "thread 'main' panicked at /home/u/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/"
    "wgpu-25.0.2/src/backend/wgpu_core.rs:1051:30:\nwgpu error: Validation Error\n\n"
    "Caused by:\n  In Device::create_shader_module\n\nstack backtrace:\n"
    "   0: wgpu::backend::wgpu_core::default_error_handler\n"
    "             at /home/u/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/"
    "wgpu-25.0.2/src/backend/wgpu_core.rs:1051:30\n"
    "   1: cubecl_wgpu::compute::server::WgpuServer::pipeline\n"
    "             at /home/u/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/"
    "cubecl-wgpu-0.6.0/src/compute/server.rs:120:9\n"
)


def test_a_wgpu_validation_error_names_wgpu_its_version_the_check_and_the_caller(
    triage: Triage,
) -> None:
    analysis = triage.analyse(WGPU_TEXT)
    item = analysis.answered[0]
    assert item.best is not None
    record = triage.catalog.get(item.best.record_id)
    assert record.repo == "gfx-rs/wgpu"
    note = "".join(span.text for span in dependency_note(triage.projects, item, record) or ())
    assert note.startswith("This panic comes from wgpu 25.0.2 (gfx-rs/wgpu), a dependency, not ")
    assert "burn's own code" in note
    assert "validation reporting an invalid call made by the code above it" in note
    assert "cubecl_wgpu::compute::server::WgpuServer::pipeline" in note
    assert "https://github.com/gfx-rs/wgpu/blob/v25.0.2/wgpu/src/backend/wgpu_core.rs#L1051" in note
    answer = build_answer(
        analysis, triage.catalog, history=triage.history, projects=triage.projects
    )
    assert answer.sections[0].version_note is not None


def test_a_dependency_gets_one_upstream_label_and_no_crate_label() -> None:
    path = "crates/wgpu-core/src/x.rs"
    record = record_from_dict(_record("00000000000000c3", "gfx-rs/wgpu", "wgpu error: {err}", path))
    labels = LabelConfig().for_records([record], None, lambda r: "wgpu")
    assert labels == ["panic: known", "upstream: wgpu"]
    assert LabelConfig().for_records([record]) == ["panic: known", "crate: wgpu-core"]
    custom = label_config_from_dict({"labels": {"upstream_projects": {"wgpu": "A-wgpu"}}})
    assert custom.for_records([record], None, lambda r: "wgpu") == ["panic: known", "A-wgpu"]
    with pytest.raises(SettingsError, match=r"labels\.upstream must contain"):
        label_config_from_dict({"labels": {"upstream": "upstream"}})


def test_burn_imports_site_that_lives_on_is_answered_in_burn_onnx(triage: Triage) -> None:
    text = (
        "ERROR burn_import::logger: PANIC => panicked at /Users/u/.cargo/registry/src/"
        "index.crates.io-1949cf8c6b5b557f/burn-import-0.19.1/src/onnx/model_gen.rs:405:53:\n"
        "OUT_DIR env is not set: NotPresent\n"
    )
    analysis = triage.analyse(text)
    item = analysis.answered[0]
    assert analysis.verdict == "match" and item.best is not None
    record = triage.catalog.get(item.best.record_id)
    assert (record.repo, record.file_path) == (
        "tracel-ai/burn-onnx",
        "crates/burn-onnx/src/model_gen.rs",
    )
    answer = build_answer(
        analysis, triage.catalog, history=triage.history, projects=triage.projects
    )
    spans = answer.sections[0].version_note or ()
    note = "".join(span.text for span in spans)
    # burn's history knows the commit that moved the crate: its PR, linked, and the release.
    assert note == (
        "This code moved to tracel-ai/burn-onnx with #4393, released in burn 0.21.0: upgrading "
        "burn does not change it; it is answered from there."
    )
    assert [getattr(span, "url", None) for span in spans if span.text == "#4393"] == [
        "https://github.com/tracel-ai/burn/pull/4393"
    ]


# -- real texts of cubecl's and burn-onnx's trackers, labelled before the bot ran -------------


def _cases(folder: Path) -> list[dict]:
    rows = [json.loads(line) for line in (folder / "labels.jsonl").read_text().splitlines()]
    for row in rows:
        row["text"] = (folder / "cases" / row["case"]).read_text(encoding="utf-8")
    return rows


def _score(triage: Triage, cases: list[dict]) -> tuple[int, list[str], list[str], list[str]]:
    """(catalogued panics, misses, false answers, dependency answers without their note)."""
    misses, wrong, unnamed = [], [], []
    for case in cases:
        analysis = triage.analyse(case["text"])
        item = analysis.answered[0] if analysis.answered else None
        record = triage.catalog.get(item.best.record_id) if item and item.best else None
        ok = record is not None and any(
            (record.repo, record.file_path, record.error_message)
            == (site["repo"], site["file_path"], site["message"])
            for site in case["accept"]
        )
        if record is not None and not ok:
            wrong.append(case["case"])
        elif case["expect"] == "match" and not ok:
            misses.append(case["case"])
        dependency = record is not None and triage.projects.is_dependency(record.repo)
        if dependency and dependency_note(triage.projects, item, record) is None:
            unnamed.append(case["case"])
    positives = sum(c["expect"] == "match" for c in cases)
    return positives, misses, wrong, unnamed


@pytest.mark.parametrize("project", ["cubecl", "burn-onnx"])
def test_project_texts_answered_without_a_false_answer(triage: Triage, project: str) -> None:
    folder = Path(__file__).parent / "corpus_projects" / project
    positives, misses, wrong, unnamed = _score(triage, _cases(folder))
    print(f"\n{project}: {positives} catalogued panics, {len(misses)} missed, {len(wrong)} false")
    assert (misses, wrong, unnamed) == ([], [], [])


@pytest.mark.parametrize("project", ["cubecl", "burn-onnx"])
def test_project_held_out_texts_reported_apart(triage: Triage, project: str) -> None:
    folder = Path(__file__).parent / "corpus_projects" / project / "heldout"
    positives, misses, wrong, unnamed = _score(triage, _cases(folder))
    line = f"{project} held out: {positives} catalogued, {len(misses)} missed, {len(wrong)} false"
    print("\n" + line)
    counts = (len(misses), len(wrong), len(unnamed))  # counts only, even on failure
    assert counts == (0, 0, 0), line


def test_every_dependency_answer_in_burns_corpus_is_named(triage: Triage) -> None:
    folder = Path(__file__).parent / "corpus"
    named = 0
    for path in sorted((folder / "cases").glob("*.md")):
        analysis = triage.analyse(path.read_text(encoding="utf-8"))
        for item in analysis.answered:
            record = triage.catalog.get(item.best.record_id) if item.best else None
            if record is not None and triage.projects.is_dependency(record.repo):
                assert dependency_note(triage.projects, item, record) is not None, path.name
                named += 1
    assert named >= 4  # 054, 089, 174, 186: wgpu's and ndarray's


# -- speed at this size -------------------------------------------------------------------------


def test_a_large_catalogs_index_survives_the_cache(tmp_path: Path) -> None:
    """From 50k records on the index holds numpy postings and a lock; pickling the loaded
    catalog failed with `cannot pickle '_thread.lock'` and the cache was never written."""
    with (tmp_path / "big.jsonl").open("w") as stream:
        for i in range(50_000):
            message = f"widget {i % 977} failed gadget{i % 313} frobnicate{i}"
            row = _record(f"{i:016x}", "acme/x", message, f"crates/x{i % 50}/src/a.rs")
            stream.write(json.dumps(row) + "\n")
    loaded = index_catalog(load_catalog([tmp_path]))
    query = "widget 3 failed gadget5 frobnicate300"
    before = loaded.index.candidates(query)
    copy = pickle.loads(pickle.dumps(loaded))
    assert copy.index.candidates(query) == before and before[0] == f"{300:016x}"


def test_version_imports_no_command_module() -> None:
    code = (
        "import sys; from bot.cli import main; main(['--version']); "
        "print(sorted(m for m in sys.modules if m.startswith(('bot.cli.', 'bot.config', "
        "'importlib.metadata'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    version, loaded = done.stdout.splitlines()
    assert version.startswith("triage-bot ")
    # bot.cli.output (the -v/-q options; standard library only) is the one module allowed.
    assert loaded in ("[]", "['bot.cli.output']")


def test_a_cold_match_from_the_cache_imports_only_what_it_uses(tmp_path) -> None:
    """Issue 25: `triage-bot match` on a header text, the index from the cache, imports no
    command module but its own, no settings (tomllib), no orjson (files are not read), no
    shutil, and none of the adapters' libraries."""
    code = (
        "import sys, io, contextlib; from bot.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()): main(['match', sys.argv[1]])\n"
        "print(sorted(m for m in ('tomllib', 'orjson', 'shutil', 'numpy', 'jinja2', 'aiohttp',"
        " 'discord', 'github', 'tree_sitter', 'bot.config.settings', 'bot.cli.catalog',"
        " 'bot.cli.service', 'bot.store', 'bot.core.extract.quoted') if m in sys.modules))"
    )
    env = {**os.environ, "TRIAGE_BOT_CACHE_DIR": str(tmp_path)}
    example = str(ROOT / "examples" / "issue.md")
    for _ in range(2):  # the first run writes the cache, the second reads it
        done = subprocess.run(
            [sys.executable, "-c", code, example],
            capture_output=True,
            text=True,
            check=True,
            cwd=tmp_path,
            env=env,
        )
    assert list(tmp_path.glob("catalog-*.pickle"))
    assert done.stdout.strip() == "[]"
