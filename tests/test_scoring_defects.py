"""Defects of the scorer found from outside, each on a catalog built as a user builds one:

- one message raised at several sites of one file: the pasted release's line names one of them,
  and that one answers (not a sibling a few lines away, at full confidence);
- a panic inside `Index::index` / `IndexMut::index_mut` printed at the caller's line: the
  backtrace's panicking frame is at the site, in the library's own file, and names which of
  the two it was;
- a crate published under the repository's name and its folder's (`foo-fiber` from
  `crates/fiber`): the registry path names the package, and it is the folder's file;
- a package named neither as its repository nor as its folder (`store-core` at the root of
  acme/store, `acme-net` in `crates/network`): `catalog scan` and `catalog history` record its
  name, and a registry path through it is the package's own file.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_process import run_cli
from git_project import git
from test_project_corpora import project_triage

from bot.app import Triage, load_bundled
from bot.core.match.releases import find_hit, pasted_crate_file
from bot.render import texts
from bot.render.answer.build import build_answer
from bot.render.github import render_comment

HEADER = "thread 'main' panicked at {path}:\n{message}\n"
REGISTRY = "/home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f"


def _answer(
    tmp_path: Path, catalog: Path, text: str
) -> tuple[str, list[tuple[str, float, list[str]]]]:
    paste = tmp_path / "paste.txt"
    paste.write_text(text)
    done = run_cli(tmp_path, "match", "--catalog", str(catalog), "--json", str(paste))
    report = json.loads(done.stdout)
    return report["verdict"], [(m["id"], m["confidence"], m["evidence"]) for m in report["matches"]]


def _scanned_crate(tmp_path: Path, name: str, version: str, source: str, repo: str) -> Path:
    """A one-crate project (`src/lib.rs` = `source`) scanned with `catalog scan`: its folder."""
    crate = tmp_path / name
    (crate / "src").mkdir(parents=True)
    (crate / "Cargo.toml").write_text(f'[package]\nname = "{name}"\nversion = "{version}"\n')
    (crate / "src" / "lib.rs").write_text(source)
    argv = ["catalog", "scan", str(crate), "--repo", repo, "--commit", "abcdef12"]
    built = run_cli(tmp_path, *argv, "--out", str(tmp_path / "catalog"))
    assert built.returncode == 0, built.stderr
    return tmp_path / "catalog"


def _release(root: Path, version: str) -> None:
    """Commit the tree as release `version`, tagged `vVERSION` (the repository made first)."""
    if not (root / ".git").exists():
        git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", f"Release {version}")
    git(root, "tag", f"v{version}")


def _release_crate(crate: Path, root: Path, name: str, version: str, source: str) -> None:
    """Write the crate (`Cargo.toml`, `src/lib.rs` = `source`) and commit `root` as `version`."""
    (crate / "src").mkdir(parents=True, exist_ok=True)
    (crate / "Cargo.toml").write_text(f'[package]\nname = "{name}"\nversion = "{version}"\n')
    (crate / "src" / "lib.rs").write_text(source)
    _release(root, version)


def _history_catalog(tmp_path: Path, root: Path, repo: str) -> Path:
    """`catalog history` of the releases committed in `root`, HEAD included: its folder."""
    argv = ["catalog", "history", str(root), "--repo", repo, "--include-head"]
    built = run_cli(tmp_path, *argv, "--out", str(tmp_path / "c"))
    assert built.returncode == 0, built.stderr
    return tmp_path / "c"


def test_the_pasted_release_line_picks_among_sites_of_one_message_in_one_file() -> None:
    """wgpu-core's `hal_api.rs` raised `called empty api` at four lines; in 22.1.0 line 20 was
    `create_instance_from_hal`'s, in 0.18.0 line 22 was. Its sibling three lines further down
    was answered at 1.0 before."""
    triage = Triage.of(load_bundled())
    catalog = triage.catalog
    for release, line in (("22.1.0", 20), ("0.18.0", 22), ("0.19.4", 21)):
        path = f"{REGISTRY}/wgpu-core-{release}/src/hal_api.rs:{line}:9"
        text = HEADER.format(path=path, message="not implemented: called empty api")
        [panic] = triage.analyse(text).answered
        best = catalog.get(panic.best.record_id)
        assert best.enclosing_fn == "create_instance_from_hal", (release, best.enclosing_fn)
    path = f"{REGISTRY}/wgpu-core-22.1.0/src/hal_api.rs:23:9"
    [panic] = triage.analyse(
        HEADER.format(path=path, message="not implemented: called empty api")
    ).answered
    assert catalog.get(panic.best.record_id).enclosing_fn == "instance_as_hal"


SLAB = """use core::ops::{Index, IndexMut};

pub struct Slab<T> {
    entries: Vec<Entry<T>>,
}

enum Entry<T> {
    Vacant(usize),
    Occupied(T),
}

impl<T> Index<usize> for Slab<T> {
    type Output = T;

    fn index(&self, key: usize) -> &T {
        match self.entries.get(key) {
            Some(Entry::Occupied(v)) => v,
            _ => panic!("invalid key"),
        }
    }
}

impl<T> IndexMut<usize> for Slab<T> {
    fn index_mut(&mut self, key: usize) -> &mut T {
        match self.entries.get_mut(key) {
            Some(&mut Entry::Occupied(ref mut v)) => v,
            _ => panic!("invalid key"),
        }
    }
}
"""

CALLER_PASTE = """thread 'main' panicked at src/main.rs:5:13:
invalid key
stack backtrace:
   0: rust_begin_unwind
             at /rustc/abc/library/std/src/panicking.rs:665:5
   1: core::panicking::panic_fmt
             at /rustc/abc/library/core/src/panicking.rs:76:14
   2: <slab::Slab<T> as core::ops::index::{trait_}<usize>>::{method}
             at {registry}/slab-0.4.9/src/lib.rs:{line}:18
   3: demo::main
             at ./src/main.rs:5:13
"""


def test_a_panic_inside_index_printed_at_the_caller_is_answered_from_its_frame(tmp_path) -> None:
    _scanned_crate(tmp_path, "slab", "0.4.9", SLAB, "tokio-rs/slab")
    records = {
        r["enclosingFn"]: r
        for r in map(json.loads, next((tmp_path / "catalog").glob("scan-*.jsonl")).open())
    }
    assert set(records) == {"index", "index_mut"}
    for trait_, method, windows in (
        ("Index", "index", False),
        ("IndexMut", "index_mut", False),
        ("IndexMut", "index_mut", True),
    ):
        line = records[method]["lineNumber"]
        text = CALLER_PASTE.format(trait_=trait_, method=method, registry=REGISTRY, line=line)
        if windows:  # MSVC symbols name the impl block by number, not its type
            text = text.replace(
                f"<slab::Slab<T> as core::ops::index::{trait_}<usize>>", "slab::impl$1"
            )
        verdict, answers = _answer(tmp_path, tmp_path / "catalog", text)
        assert verdict == "match" and answers[0][0] == records[method]["id"], (method, answers)
        # the panicking frame is the site's function, at the site's own line
        assert {"function", "line"} <= set(answers[0][2]), answers


def test_a_package_named_after_the_repository_and_its_folder_is_that_folder(tmp_path) -> None:
    root = tmp_path / "foo"
    (root / "crates" / "fiber" / "src").mkdir(parents=True)
    (root / "Cargo.toml").write_text('[workspace]\nmembers = ["crates/*"]\n')
    (root / "crates" / "fiber" / "Cargo.toml").write_text(
        '[package]\nname = "foo-fiber"\nversion = "0.1.0"\n'
    )
    (root / "crates" / "fiber" / "src" / "lib.rs").write_text(
        'pub fn spawn(n: usize) {\n    if n == 0 {\n        panic!("a fiber needs a stack of at '
        'least one page");\n    }\n}\n'
    )
    _release(root, "0.1.0")
    built = run_cli(
        tmp_path, "catalog", "history", str(root), "--repo", "o/foo", "--out", str(tmp_path / "c")
    )
    assert built.returncode == 0, built.stderr
    path = f"{REGISTRY}/foo-fiber-0.1.0/src/lib.rs:3:9"
    text = HEADER.format(path=path, message="a fiber needs a stack of at least one page")
    verdict, answers = _answer(tmp_path, tmp_path / "c", text)
    assert verdict == "match" and answers[0][1] >= 0.95


def test_a_message_reworded_whole_is_answered_at_todays_site(tmp_path) -> None:
    """A site whose message was reworded past what the linker pairs (no shared opening) ends
    one lineage and starts another; a paste of the old wording, from the old release or with no
    location, is answered with today's site of the same function and check, not as removed."""
    crate = tmp_path / "widgets"
    for version, message in (
        ("0.1.0", "the requested width {} does not fit"),
        ("0.2.0", "width {} is larger than the frame allows"),
    ):
        source = (
            f'pub fn set_width(w: usize) {{\n    if w > 100 {{\n        panic!("{message}", w);'
            "\n    }\n}\n"
        )
        _release_crate(crate, crate, "widgets", version, source)
    _history_catalog(tmp_path, crate, "o/widgets")
    [live] = [json.loads(line) for line in (tmp_path / "c" / "panic_sites.jsonl").open()]
    assert live["errorMessage"].startswith("width")
    old = "the requested width 500 does not fit"
    for text in (HEADER.format(path=f"{REGISTRY}/widgets-0.1.0/src/lib.rs:3:9", message=old), old):
        verdict, answers = _answer(tmp_path, tmp_path / "c", text + "\n")
        assert verdict == "match" and answers[0][0] == live["id"], (text, verdict, answers)


def test_an_older_wording_pasted_at_its_file_is_that_sites(tmp_path) -> None:
    """A site reworded in place (`Expected register: {:?}` became `unwrap_reg expected
    register, found {:?}`: not a prefix, one lineage), in a crate folder that is neither
    `crates/<name>` nor `<name>/src` (wasmtime's `cranelift/codegen`, published as
    `cranelift-codegen`, whose files the history keys by their path): the old wording pasted
    at its file is that site's, answered at today's record; two sites of the file that
    printed it leave the paste unanswered when its line is neither's."""
    root = tmp_path / "regs"
    crate = root / "acme" / "regs"
    crate.mkdir(parents=True)
    (root / "Cargo.toml").write_text('[workspace]\nmembers = ["acme/regs"]\n')
    wordings = {
        "0.1.0": ("Expected register: {:?}", "Expected register: {:?}"),
        "0.2.0": (
            "unwrap_reg expected register, found {:?}",
            "take_reg expected register, got {:?}",
        ),
    }
    for version, (first, second) in wordings.items():
        source = (
            f'pub fn unwrap_reg(v: u32) -> u32 {{\n    if v == 0 {{\n        panic!("{first}", v);'
            "\n    }\n    v\n}\n\n"
            f'pub fn spill(v: u32) -> u32 {{\n    if v > 9 {{\n        panic!("{second}", v);'
            "\n    }\n    v\n}\n"
        )
        _release_crate(crate, root, "acme-regs", version, source)
    _history_catalog(tmp_path, root, "o/regs")
    live = {
        r["enclosingFn"]: r["id"]
        for r in map(json.loads, (tmp_path / "c" / "panic_sites.jsonl").open())
    }
    text = HEADER.format(path="acme-regs/src/lib.rs:3:9", message="Expected register: Unassigned")
    verdict, answers = _answer(tmp_path, tmp_path / "c", text)
    assert verdict == "match" and answers[0][0] == live["unwrap_reg"], answers
    # Both sites printed those words in 0.1.0: at a line of neither, nothing tells which.
    text = HEADER.format(path="acme-regs/src/lib.rs:30:9", message="Expected register: Unassigned")
    verdict, answers = _answer(tmp_path, tmp_path / "c", text)
    assert verdict != "match", answers


OWNERS_LIB = """pub fn owners(name: &str) {
    panic!(
        "\\nfailed to get owners for {name}\\n\\nIf this crate is not published yet see\\n\\n  \\
         https://example.org/adding-crates\\n\\nand follow the steps there\\n"
    );
}
"""


def test_a_message_of_several_paragraphs_pasted_to_its_first_blank_line_is_its_sites(
    tmp_path,
) -> None:
    """A message that opens with a line break and holds blank lines (wasmtime's publish
    tool's `failed to get owners for {name}` and its advice), pasted down to its first blank
    line at its own file and line: that site, though the line alone says little."""
    catalog = _scanned_crate(tmp_path, "owners", "0.3.0", OWNERS_LIB, "o/owners")
    [record] = map(json.loads, next(catalog.glob("scan-*.jsonl")).open())
    text = HEADER.format(
        path=f"{REGISTRY}/owners-0.3.0/src/lib.rs:2:5",
        message="\nfailed to get owners for demo\n\nIf this crate is not published yet see\n",
    )
    verdict, answers = _answer(tmp_path, catalog, text)
    assert verdict == "match" and answers[0][0] == record["id"], answers


TWO_FILES = {
    "src/date.rs": 'pub fn and_hms(h: u32) -> u32 {\n    checked(h).expect("invalid time")\n}\n',
    "src/naive.rs": 'pub fn from_hms(h: u32) -> u32 {\n    checked(h).expect("invalid time")\n}\n',
}


def test_an_old_rust_expect_placed_in_libcore_is_placed_at_the_line_the_text_writes(
    tmp_path,
) -> None:
    """Old Rust printed an `expect` panic at libcore's `option.rs`; two files print the
    message. The line the reporter writes in the prose (`chrono-0.4.0/src/date.rs:2`) is
    where it was raised, and picks that site."""
    crate = tmp_path / "dates"
    (crate / "src").mkdir(parents=True)
    (crate / "Cargo.toml").write_text('[package]\nname = "dates"\nversion = "0.4.0"\n')
    lib = "mod date;\nmod naive;\nfn checked(h: u32) -> Option<u32> {\n    Some(h)\n}\n"
    (crate / "src" / "lib.rs").write_text(lib)
    for path, source in TWO_FILES.items():
        (crate / path).write_text(source)
    argv = ["catalog", "scan", str(crate), "--repo", "o/dates", "--commit", "abcdef12"]
    built = run_cli(tmp_path, *argv, "--out", str(tmp_path / "catalog"))
    assert built.returncode == 0, built.stderr
    ids = {
        r["filePath"]: r["id"]
        for r in map(json.loads, next((tmp_path / "catalog").glob("scan-*.jsonl")).open())
    }
    text = (
        "It panics with 'invalid time'; I looked at `dates-0.4.0/src/date.rs:2` but cannot "
        "tell why.\n\nthread 'main' panicked at 'invalid time', src/libcore/option.rs:874:4\n"
    )
    verdict, answers = _answer(tmp_path, tmp_path / "catalog", text)
    assert verdict == "match" and answers[0][0] == ids["src/date.rs"], answers


STORE_LIB = """pub fn shrink(cap: usize, to: usize) {
    if to > cap {
        panic!("cannot shrink a store of capacity {} to {}", cap, to);
    }
}
"""
NET_LIB = """pub fn connect(port: u16) {
    assert!(port != 0, "port zero cannot be dialled for peer {}", port);
}
"""
GEN_LIB = """pub fn emit(depth: usize) {
    if depth > 64 {
        panic!("generated code nests deeper than the emitter allows: {}", depth);
    }
}
"""


def _store_project(root: Path) -> None:
    """acme/store: the package `store-core` at the root, `acme-net` in `crates/network`, `gen`
    in `crates/tools/gen` (one folder further down than `crates/NAME`)."""
    (root / "src").mkdir(parents=True)
    (root / "crates" / "network" / "src").mkdir(parents=True)
    (root / "Cargo.toml").write_text(
        '[package]\nname = "store-core"\nversion = "0.3.0"\n\n[workspace]\nmembers = ["crates/*"]\n'
    )
    (root / "crates" / "network" / "Cargo.toml").write_text(
        '[package]\nname = "acme-net"\nversion = "0.3.0"\n'
    )
    (root / "src" / "lib.rs").write_text(STORE_LIB)
    (root / "crates" / "network" / "src" / "lib.rs").write_text(NET_LIB)
    (root / "crates" / "tools" / "gen" / "src").mkdir(parents=True)
    (root / "crates" / "tools" / "gen" / "Cargo.toml").write_text(
        '[package]\nname = "gen"\nversion = "0.3.0"\n'
    )
    (root / "crates" / "tools" / "gen" / "src" / "lib.rs").write_text(GEN_LIB)
    # a build script, at the package's root, sorts before its `src/`
    (root / "crates" / "tools" / "gen" / "build.rs").write_text(
        'fn main() {\n    if std::env::var("GEN_TARGET").is_err() {\n'
        '        panic!("the generator needs GEN_TARGET set at build time");\n    }\n}\n'
    )
    _release(root, "0.3.0")
    # 0.4.0: every site ten lines further down; a 0.3.0 paste's line is the history's to tell
    for source in (root / "src" / "lib.rs", *root.glob("crates/**/src/lib.rs")):
        source.write_text("// -\n" * 10 + source.read_text())
    _release(root, "0.4.0")


PACKAGE_PASTES = (
    ("store-core", "src/lib.rs:3:9", "cannot shrink a store of capacity 4 to 9"),
    ("acme-net", "src/lib.rs:2:5", "port zero cannot be dialled for peer 0"),
    ("gen", "src/lib.rs:3:9", "generated code nests deeper than the emitter allows: 65"),
)


def test_a_package_named_otherwise_than_its_repository_or_folder_is_its_files(tmp_path) -> None:
    root = tmp_path / "store"
    _store_project(root)
    scan = run_cli(
        tmp_path,
        "catalog",
        "scan",
        str(root),
        "--repo",
        "acme/store",
        "--commit",
        "abcdef12",
        "--out",
        str(tmp_path / "scan"),
    )
    assert scan.returncode == 0, scan.stderr
    history = run_cli(
        tmp_path,
        "catalog",
        "history",
        str(root),
        "--repo",
        "acme/store",
        "--out",
        str(tmp_path / "history"),
    )
    assert history.returncode == 0, history.stderr
    header = json.loads((tmp_path / "history" / "history.ndjson").read_text().splitlines()[0])
    assert header["packages"] == {"acme-net": "network", "gen": "tools/gen", "store-core": "store"}
    for package, inner, message in PACKAGE_PASTES:
        # today's release: the file's own line, whichever catalog
        path, line = inner.rsplit(":", 2)[0], int(inner.split(":")[1])
        today = f"{REGISTRY}/{package}-0.4.0/{path}:{line + 10}:9"
        for catalog in ("scan", "history"):
            verdict, answers = _answer(
                tmp_path, tmp_path / catalog, HEADER.format(path=today, message=message)
            )
            assert verdict == "match", (catalog, package, answers)
            assert {"location", "line"} <= set(answers[0][2]), (catalog, package, answers)
        # the older release: its line is the history's
        text = HEADER.format(path=f"{REGISTRY}/{package}-0.3.0/{inner}", message=message)
        verdict, answers = _answer(tmp_path, tmp_path / "history", text)
        assert verdict == "match", (package, answers)
        assert {"location", "release", "line"} <= set(answers[0][2]), (package, answers)


def test_a_whole_match_at_the_pasted_line_outranks_a_resemblance_of_the_own_project() -> None:
    """burn's removed `Unsupported dtype {:?} for empty tensor` (line 240) and burn-onnx's live
    `... for empty tensor '{}' (data_type={})` (line 244) are both capped at full confidence
    on a paste of the second at its line: burn's own project went first, on a resemblance."""
    triage = Triage.of(load_bundled())
    path = f"{REGISTRY}/onnx-ir-0.21.0/src/proto_conversion.rs:244:9"
    text = HEADER.format(
        path=path, message="Unsupported dtype F16 for empty tensor 'w' (data_type=10)"
    )
    [panic] = triage.analyse(text).answered
    best = triage.catalog.get(panic.best.record_id)
    assert (best.repo, best.line_number) == ("tracel-ai/burn-onnx", 244)
    assert {"pattern", "line"} <= set(panic.best.evidence)


def test_two_messages_of_one_file_a_paste_resembles_alike_are_not_answered() -> None:
    """tokio's park.rs raises `inconsistent park_timeout state; actual = {actual}` (line 153)
    and `inconsistent park_timeout state: {n}` (line 173); a paste resembling both as much,
    between their lines, was answered with one of them at 0.99 (the near-tie penalty took a
    tenth off a score capped at 1.0, which still cleared the bar). (`Inconsistent ..; actual =
    42` was that paste until a first letter's case stopped counting: it is line 153's message
    since, and this one resembles both.)"""
    triage = project_triage("tokio")
    path = f"{REGISTRY}/tokio-1.0.0/src/runtime/park.rs:165:9"
    text = HEADER.format(path=path, message="Inconsistent park_timeout state, actual 42")
    analysis = triage.analyse(text)
    assert analysis.verdict == "uncatalogued-panic" and not analysis.answered
    [panic] = analysis.panics
    assert any(what == "another message scores about the same" for what, _ in panic.best.steps)


def test_the_pasted_releases_site_at_the_pasted_line_outranks_a_resemblance_in_its_file() -> None:
    """nushell 0.60.0's engine_state.rs printed `internal error: missing stack frame` at line
    1226 (the site since reworded); a paste of it there was answered with the file's
    `internal error: missing span`, which it only resembles, at 0.99."""
    triage = project_triage("nushell")
    path = f"{REGISTRY}/nu-protocol-0.60.0/src/engine/engine_state.rs:1226:9"
    text = HEADER.format(path=path, message="internal error: missing stack frame")
    [panic] = triage.analyse(text).answered
    assert {"release", "line"} <= set(panic.best.evidence)
    history = triage.matcher.history
    lineage = history.lineages[history.by_record[panic.best.record_id]]
    assert lineage.spans[0][2:4] == (
        "crates/nu-protocol/src/engine/engine_state.rs",
        "internal error: missing stack frame",
    )
    assert lineage.lines[0] == 1226


INFER_LIB = """pub fn definition_type(map: &std::collections::HashMap<u32, u32>, id: u32) -> u32 {
    *map.get(&id).expect(
        "definition should belong to this inference region and the builder should have \\
         inferred a type for it",
    )
}

pub fn apply(positions: &[usize], len: usize) {
    let out_of_bounds: Vec<usize> = positions.iter().copied().filter(|p| *p > len).collect();
    if !out_of_bounds.is_empty() {
        panic!("Positions {out_of_bounds:?} are out of range for changeset len {len}!");
    }
}
"""


def test_a_paste_that_changes_the_word_a_message_opens_with_is_a_sibling_message(tmp_path) -> None:
    """`expression should belong to ...` pasted at a file whose site prints `definition should
    belong to ...` (ty's infer.rs, a real report) was answered with it at 0.99: the subject
    word differs, so it is another message. An older wording that keeps the opening words'
    stems (`Position 18 is ...` for `Positions {..} are ...`) is still the site."""
    _scanned_crate(tmp_path, "infer", "0.2.0", INFER_LIB, "acme/infer")
    path = f"{REGISTRY}/infer-0.1.0/src/lib.rs"
    sibling = HEADER.format(
        path=f"{path}:90:14",
        message="expression should belong to this inference region and the builder should "
        "have inferred a type for it",
    )
    verdict, answers = _answer(tmp_path, tmp_path / "catalog", sibling)
    assert verdict == "uncatalogued-panic" and answers == [], answers
    older = HEADER.format(
        path=f"{path}:40:9", message="Position 18 is out of range for changeset len 13!"
    )
    verdict, answers = _answer(tmp_path, tmp_path / "catalog", older)
    assert verdict == "match", answers


ASSERTS_LIB = """pub fn check(name: &str, flag: &str, err: &str) {
    if flag.starts_with('-') {
        panic!(
            "Command {}: long_flag {:?} must not start with a `-`, that will be handled by \\
             the parser",
            name, flag
        );
    }
    if !err.is_empty() {
        panic!("Command {}: {}", name, err);
    }
}
"""


def test_a_format_mostly_of_placeholders_does_not_outrank_the_message_a_paste_resembles(
    tmp_path,
) -> None:
    """clap's debug_asserts.rs has `Command {}: {}` beside its specific messages: a paste of a
    specific one in another wording (its full stop added) fitted `Command {}: {}` whole, and a
    whole fit always went first, so that format was the answer. Its fixed text is a tenth of
    the paste: it no longer outranks the message the paste resembles."""
    _scanned_crate(tmp_path, "cli", "0.2.0", ASSERTS_LIB, "acme/cli")
    records = {
        r["errorMessage"]: r["id"]
        for r in map(json.loads, next((tmp_path / "catalog").glob("scan-*.jsonl")).open())
    }
    text = HEADER.format(
        path=f"{REGISTRY}/cli-0.1.0/src/lib.rs:3:9",
        message='Command app: long_flag "--x" must not start with a `-`, that will be handled '
        "by the parser.",
    )
    verdict, answers = _answer(tmp_path, tmp_path / "catalog", text)
    assert verdict == "match" and answers[0][0] != records["Command {}: {}"], answers


SIBLINGS_LIB = """pub fn check(name: &str, long: &str, short: &str, a: &str, b: &str, err: &str) {
    if !long.is_empty() {
        panic!("Command {}: Long option names must be unique for each argument, \\
                but '--{}' is in use by both '{}' and '{}'", name, long, a, b);
    }
    if long == short {
        return;
    }
    if !short.is_empty() {
        panic!("Command {}: Short option names must be unique for each argument, \\
                but '-{}' is in use by both '{}' and '{}'", name, short, a, b);
    }
    if !err.is_empty() {
        panic!("Command {}: {}", name, err);
    }
}
"""


def test_a_drifted_sibling_pasted_near_the_other_siblings_line_is_not_answered_with_it(
    tmp_path,
) -> None:
    """clap's `Long option names must be unique ..` and `Short option names ..` sites are a
    few lines apart, beside `Command {}: {}`: the first, its case changed and pasted at a
    release whose lines had shifted onto the second's, was answered with the second at 0.99
    (the line outweighed a word of the message; the exact message scored as a shared start,
    below the sibling), or with the format of placeholders. The line and the message disagree
    there: no answer but the message's own site."""
    _scanned_crate(tmp_path, "cli", "0.2.0", SIBLINGS_LIB, "acme/cli")
    records = {
        r["errorMessage"].split()[2]: (r["id"], r["lineNumber"])
        for r in map(json.loads, next((tmp_path / "catalog").glob("scan-*.jsonl")).open())
    }
    long_site, long_line = records["Long"]
    short_line = records["Short"][1]
    assert short_line - long_line > 3  # (pasted at the second's line, the first's is no evidence)
    for message in (
        "command app: Long option names must be unique for each argument, but '--x' is in use "
        "by both 'a' and 'b'",
        "Command app: Long option names must be unique for each argument, but '--x' is in use "
        "by both 'a' and 'b'.",
    ):
        text = HEADER.format(
            path=f"{REGISTRY}/cli-0.1.0/src/lib.rs:{short_line}:9", message=message
        )
        verdict, answers = _answer(tmp_path, tmp_path / "catalog", text)
        assert verdict == "uncatalogued-panic" or answers[0][0] == long_site, (message, answers)


def test_a_tie_lowers_every_candidate_of_it_so_no_stage_puts_one_first_again() -> None:
    """burn-train's `weights.rs` raises `Failed to create cache directory` and, ten lines
    down, `Failed to create cache file`. The first, lower-cased, pasted next to the second's
    line: the two scored about the same, and the tie lowered the best below the bar; then the
    release history's stage, which orders candidates capped alike by the pasted line, put the
    other one first again, at 1.0. Every candidate of a tie is lowered now."""
    triage = Triage.of(load_bundled())
    path = f"{REGISTRY}/burn-train-1.0.0/src/metric/vision/dists/weights.rs:39:9"
    analysis = triage.analyse(HEADER.format(path=path, message="failed to create cache directory"))
    answered = [triage.catalog.get(m.best.record_id).error_message for m in analysis.answered]
    assert answered in ([], ["Failed to create cache directory"]), answered


def test_a_version_no_release_has_places_no_garbled_message_at_a_line() -> None:
    """With a pasted version the history has, a garbled message (its tail cut) at a line some
    lineage held in that release is that lineage; with a version no release has, every
    release's line would do, so only a message fitting whole is placed there."""
    history = project_triage("nushell").matcher.history
    cut = "internal error: missing stack fr"
    for version, placed in (("0.60.0", True), ("9.9.9", False)):
        path = f"{REGISTRY}/nu-protocol-{version}/src/engine/engine_state.rs"
        hit = find_hit(history, pasted_crate_file(path, history.by_crate), 1226, cut, version)
        assert (hit is not None and hit.how == "line") == placed, (version, hit)


SHIM_MACRO = """pub fn expand(name: &str) -> TokenStream {
    quote! {
        fn call() {
            panic!("cannot call shim functions outside the host target");
        }
    }
}
"""
SHIM_RULES = """macro_rules! guard {
    ($v:expr) => {
        if $v > 8 { panic!("guarded value exceeds the table width of the shim"); }
    };
}
"""


def test_a_quote_body_is_answered_in_any_crate_a_macro_rules_body_in_its_own(tmp_path) -> None:
    """A `quote!` body is a proc macro's output, compiled into each crate that uses the macro:
    pasted at a file of another crate of the repository (one the release history scanned and
    that never held the message) it is still the site. A `macro_rules!` body is invoked in its
    own crate: pasted in another crate that never held it, it is not answered."""
    root = tmp_path / "shim"
    for folder, name, source in (
        ("macro", "shim-macro", SHIM_MACRO + SHIM_RULES),
        ("sys", "shim-sys", 'pub fn now() -> u64 {\n    panic!("no clock on this host")\n}\n'),
    ):
        (root / "crates" / folder / "src").mkdir(parents=True)
        (root / "crates" / folder / "Cargo.toml").write_text(
            f'[package]\nname = "{name}"\nversion = "0.2.0"\n'
        )
        (root / "crates" / folder / "src" / "lib.rs").write_text(source)
    (root / "Cargo.toml").write_text('[workspace]\nmembers = ["crates/*"]\n')
    _release(root, "0.2.0")
    argv = ["catalog", "history", str(root), "--repo", "acme/shim", "--include-head"]
    built = run_cli(tmp_path, *argv, "--out", str(tmp_path / "c"))
    assert built.returncode == 0, built.stderr
    sites = {
        r["errorMessage"]: r for r in map(json.loads, (tmp_path / "c" / "panic_sites.jsonl").open())
    }
    quoted = sites["cannot call shim functions outside the host target"]
    assert "proc-macro-output" in quoted["tags"]
    at_sys = f"{REGISTRY}/shim-sys-0.2.0/src/lib.rs:2:5"
    verdict, answers = _answer(
        tmp_path, tmp_path / "c", HEADER.format(path=at_sys, message=quoted["errorMessage"])
    )
    assert verdict == "match" and answers[0][0] == quoted["id"], answers
    rules = "guarded value exceeds the table width of the shim"
    assert "proc-macro-output" not in sites[rules]["tags"]
    verdict, answers = _answer(tmp_path, tmp_path / "c", HEADER.format(path=at_sys, message=rules))
    assert verdict != "match", answers


def test_the_method_a_text_names_picks_among_many_sites_of_one_message() -> None:
    # image's encoders print one check's message at twelve sites: more than the candidates a
    # match lists. A text that names one encoder's method is answered at that encoder's site,
    # and its answer says why; without a name, the tie is said as before.
    triage = project_triage("image")
    message = (
        "assertion `left == right` failed: Invalid buffer length: expected 400 got 300 for 10x10"
        " image\n  left: 400\n right: 300\n"
    )

    def answered(prose: str) -> tuple[str, tuple[str, ...]]:
        analysis = triage.analyse(f"{prose}\n\n{message}")
        best = analysis.answered[0].best
        assert best is not None
        record = triage.catalog.get(best.record_id)
        assert record is not None and record.file_path is not None
        return record.file_path, best.evidence

    for method, path in (
        ("TiffEncoder::write_image", "src/codecs/tiff.rs"),
        ("QoiEncoder::write_image", "src/codecs/qoi.rs"),
        ("PngEncoder<W>::write_image", "src/codecs/png.rs"),
    ):
        found, evidence = answered(f"Writing the frame with `{method}` fails with:")
        assert found == path and "named" in evidence, (method, found)
    # a method no site is in (`write_all` of the same type), or no name: the catalog's first
    unnamed = answered("Writing the frame fails with:")[0]
    assert answered("Writing it with `TiffEncoder::write_all` fails with:")[0] == unnamed
    assert unnamed != "src/codecs/tiff.rs"
    analysis = triage.analyse(f"Writing it with `TiffEncoder::write_image` fails with:\n{message}")
    assert texts.TIE_WHY_NAMED in render_comment(build_answer(analysis, triage.catalog))


def test_a_quoted_message_is_matched_at_the_location_the_prose_writes() -> None:
    # tauri's `Failed to setup app: {e}` is mostly its placeholder: quoted alone, without a
    # header, it is too unspecific to answer. The location written elsewhere in the text is
    # the header's, split off: matched there, it is answered; a location at no site of the
    # message leaves it unanswered, as do two at its sites (which one?); another location at no
    # site of it changes nothing.
    triage = project_triage("tauri")
    message = "Failed to setup app: error encountered during setup hook: Permission denied"

    def answer(prose: str) -> str | None:
        analysis = triage.analyse(
            f"Title: app will not start\n\nThe panic is:\n{message}\n\n{prose}"
        )
        if not analysis.answered:
            return None
        best = analysis.answered[0].best
        assert best is not None
        record = triage.catalog.get(best.record_id)
        assert record is not None
        return f"{record.file_path}:{record.line_number}"

    registry = "/home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f"
    assert answer("It happens at launch.") is None
    at = answer(f"It comes from {registry}/tauri-2.10.3/src/app.rs:1178:11 at launch.")
    assert at is not None and at.startswith("crates/tauri/src/app.rs:")
    assert answer("It comes from src/main.rs:12:5 at launch.") is None
    assert answer(f"Seen at {registry}/tauri-2.10.3/src/app.rs:1178:11 and src/lib.rs:4:1.") == at
    two = (
        f"{registry}/tauri-2.10.3/src/app.rs:1178:11 and {registry}/tauri-2.10.3/src/app.rs:1132:9"
    )
    assert answer(f"Seen at {two}.") is None


def test_a_whole_message_in_a_chat_lines_code_span_is_answered_a_fragment_is_not() -> None:
    # A chat line that quotes a message in backticks without saying it was hit: answered when
    # the span holds the message whole (its placeholders filled), not for a fragment of it nor
    # in a sentence discussing it.
    triage = Triage.of(load_bundled())
    catalog = triage.catalog

    def answer(text: str) -> str | None:
        answered = triage.analyse(text).answered
        if not answered or answered[0].best is None:
            return None
        record = catalog.get(answered[0].best.record_id)
        return record.file_path if record is not None else None

    whole = "`Server uses Burn Remote protocol version 2, expected 5`"
    assert answer(f"reinstalled both boxes, still :( {whole}") == (
        "crates/burn-remote/src/client/service.rs"
    )
    assert answer("reinstalled both boxes, still :( `Burn Remote protocol version`") is None
    assert answer(f"the docs page on remote backends lists {whole} as outdated") is None


def test_a_build_scripts_older_wording_is_its_sites_pasted_alone(tmp_path) -> None:
    """openssl-sys's build script (`openssl-sys/build.rs`, later `build/find_normal.rs`)
    printed a long message that grew a paragraph in a later release; a paste of the older
    wording, with no location, is that site's (the release stage did not read a package's
    build script as its crate's, so its older wordings were nobody's)."""
    root = tmp_path / "repo"
    package = root / "demo-sys"
    (root / "demo-sys" / "src").mkdir(parents=True)
    (root / "Cargo.toml").write_text('[workspace]\nmembers = ["demo-sys"]\n')
    (package / "src" / "lib.rs").write_text("pub fn nothing() {}\n")
    advice = (
        "Make sure the development packages are installed as well: `libdemo-dev` on one\n"
        "distribution, `demo-devel` on another, and the headers beside the library itself.\n\n"
    )
    for version, extra in (("0.1.0", ""), ("0.2.0", advice)):
        (package / "Cargo.toml").write_text(
            f'[package]\nname = "demo-sys"\nversion = "{version}"\nbuild = "build.rs"\n'
        )
        (package / "build.rs").write_text(
            'fn main() {\n    let host = std::env::var("HOST").unwrap();\n'
            '    panic!("\\n\\nCould not find the directory of the Demo installation, and this\\n'
            "crate cannot proceed without it. Set the `DEMO_DIR` environment variable to\\n"
            f"where it is installed.\\n\\n{extra.replace(chr(10), chr(92) + 'n')}"
            'Host: {}\\n", host);\n}\n'
        )
        _release(root, version)
    catalog = _history_catalog(tmp_path, root, "o/demo")
    text = (
        "thread 'main' panicked at '\n\nCould not find the directory of the Demo installation,"
        " and this\ncrate cannot proceed without it. Set the `DEMO_DIR` environment variable to"
        "\nwhere it is installed.\n\nHost: x86_64-unknown-linux-gnu\n"
    )
    verdict, answers = _answer(tmp_path, catalog, text)
    [record] = map(json.loads, (catalog / "panic_sites.jsonl").open())  # today's wording
    assert record["filePath"] == "demo-sys/build.rs"
    assert verdict == "match" and answers[0][0] == record["id"], answers
    # Old Rust printed the path from the crate's root (`', build.rs:3`): no package named, the
    # same answer.
    verdict, answers = _answer(tmp_path, catalog, text + "', build.rs:3\n")
    assert verdict == "match" and answers[0][0] == record["id"], answers


RUNNER_LIB = """pub fn run(found: bool, status: i32, program: &str) {
    if !found {
        fail(&format!("failed to execute command: not found\\nis `{}` not installed?", program));
    }
    if status != 0 {
        fail(&format!("failed to execute command: {}", status));
    }
}

fn fail(s: &str) -> ! {
    panic!("\\n{}\\n\\nbuild script failed, must exit now", s)
}
"""


def test_a_panic_helpers_reason_is_answered_with_the_call_that_passed_it(tmp_path) -> None:
    """cmake's `fail` helper panics with the reason its caller passes: each call is a site of
    its own, printed at the helper's line. Pasted whole there, the call's site answers (its
    reason and the helper's text cover the paste; the helper's own site, mostly a placeholder,
    tied with it before); a block holding the reason alone, over two lines, is the call whose
    reason spans both, not the shorter one its first line fits alone."""
    catalog = _scanned_crate(tmp_path, "runner", "0.1.45", RUNNER_LIB, "o/runner")
    records = {
        r["lineNumber"]: r["id"] for r in map(json.loads, next(catalog.glob("scan-*.jsonl")).open())
    }
    header = (
        "thread 'main' panicked at '\nfailed to execute command: not found\nis `cmake` not "
        "installed?\n\nbuild script failed, must exit now', "
        f"{REGISTRY}/runner-0.1.45/src/lib.rs:11:5\n"
    )
    verdict, answers = _answer(tmp_path, catalog, header)
    assert verdict == "match" and answers[0][0] == records[3], answers
    block = (
        "CI fails with:\n\n```\nfailed to execute command: not found\n"
        "is `cmake` not installed?\n```\n"
    )
    verdict, answers = _answer(tmp_path, catalog, block)
    assert verdict == "match" and answers[0][0] == records[3], answers
