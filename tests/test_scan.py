"""`catalog scan`: panic sites of the fixture crates, exactly, and the parsing behind them."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest

from bot.catalog.importers import skeletons_from_sites
from bot.catalog.sites import pinned_url, site_id
from bot.cli.scan import register_catalog
from bot.scan.builders import BuilderConfigError, load_builders
from bot.scan.rust.cfg import cfg_requires_test
from bot.scan.rust.definitions import ScanContext, collect_definitions
from bot.scan.rust.site_finder import PanicSite, scan_source
from bot.scan.rust.skeletons import skeletons
from bot.scan.rust.walk import scan_tree

FIXTURES = Path(__file__).parent / "fixtures"
V1 = FIXTURES / "rust_crate_v1"
V2 = FIXTURES / "rust_crate_v2"
REPO = "acme/fixture"
SHA1 = "1" * 40

# Every site of rust_crate_v1, by (file, line, kind, message); read off the sources by hand.
V1_SITES = [
    ("src/data.rs", 14, ".expect", "key not in store"),
    ("src/data.rs", 18, ".expect", "variable {} is not set"),
    ("src/data.rs", 22, ".expect", "missing entry"),
    ("src/data.rs", 26, ".expect", 'the "raw" entry is missing'),
    ("src/data.rs", 30, ".expect", 'tab\there, quote " and \u2192 arrow'),
    ("src/data.rs", 34, ".expect", "a long message split over lines"),
    ("src/data.rs", 41, ".expect", "joined message 42"),
    ("src/data.rs", 45, ".expect", "entry must exist"),
    ("src/data.rs", 46, ".expect", "entry must exist"),
    ("src/dtype.rs", 11, "panic!", "softmax: unsupported dtype {:?}"),
    ("src/dtype.rs", 18, "panic!", "cat: unsupported dtype {other:?}"),
    ("src/dtype.rs", 26, "unimplemented!", "cast from {:?}"),
    ("src/lib.rs", 22, "assert!", "division by zero: {} / {}"),
    ("src/lib.rs", 23, "assert_ne!", "a must not be u32::MAX"),
    ("src/lib.rs", 29, "assert_eq!", "length mismatch: {} != {}"),
    ("src/lib.rs", 30, "debug_assert_eq!", "pair contents differ"),
    ("src/lib.rs", 31, "debug_assert_ne!", "empty pair"),
    ("src/lib.rs", 37, "panic!", "{}"),
    ("src/lib.rs", 54, "panic!", "compiled with feature extra"),
    ("src/lib.rs", 59, "unreachable!", "only outside tests"),
    ("src/macros.rs", 6, "panic!", "expected rank {}, got {}"),
    ("src/macros.rs", 13, ".expect", "no first byte"),
    ("src/macros.rs", 20, ".expect", "no second byte"),
    ("src/macros.rs", 22, "panic!", "zero lead byte"),
    ("src/macros.rs", 29, "unreachable!", "value is required"),
    ("src/ops/grad.rs", 5, "panic!", "Can't differentiate embedding backward."),
    ("src/ops/grad.rs", 9, "panic!", "Can't differentiate avg pool 2d backward."),
    ("src/ops/grad.rs", 13, "panic!", "Can't differentiate interpolate backward."),
    ("src/ops/grad.rs", 17, "unimplemented!", "topk is not implemented for autodiff"),
    ("src/ops/mod.rs", 4, "assert!", "dim {} out of bounds for {} dimensions"),
]
# What --include-tests adds: test folders, #[test], #[cfg(test)] items and module files.
V1_TEST_SITES = [
    ("benches/bench.rs", 2, "panic!", "benchmark"),
    ("examples/demo.rs", 2, ".expect", "example"),
    ("src/data.rs", 52, "panic!", "helper for tests"),
    ("src/lib.rs", 64, "panic!", "test-only with extra"),
    ("src/lib.rs", 69, "panic!", "a test function"),
    ("src/ops/grad.rs", 25, "panic!", "inside cfg(test) module"),
    ("src/test_util/mod.rs", 2, "panic!", "in a #[cfg(test)] module folder"),
    ("src/tests.rs", 3, "panic!", "in a #[cfg(test)] mod tests; file"),
    ("tests/integration.rs", 3, "panic!", "integration test"),
]
V2_SITES = [
    ("src/data.rs", 11, ".expect", "entry must exist"),
    ("src/data.rs", 18, ".expect", "key not in store"),
    ("src/data.rs", 22, ".expect", "variable {} is not set"),
    ("src/data.rs", 26, ".expect", "missing entry"),
    ("src/data.rs", 30, ".expect", 'the "raw" entry is missing'),
    ("src/data.rs", 34, ".expect", 'tab\there, quote " and \u2192 arrow'),
    ("src/data.rs", 38, ".expect", "joined message 42"),
    ("src/data.rs", 42, ".expect", "entry must exist"),
    ("src/data.rs", 43, ".expect", "entry must exist"),
    ("src/dtype.rs", 11, "panic!", "softmax: unsupported dtype {:?}"),
    ("src/dtype.rs", 18, "panic!", "cat: unsupported dtype {other:?}"),
    ("src/dtype.rs", 26, "unimplemented!", "cast from {:?}"),
    ("src/lib.rs", 23, "assert!", "division by zero: {} / {}"),
    ("src/lib.rs", 29, "assert_eq!", "length mismatch: {} != {}"),
    ("src/lib.rs", 30, "debug_assert_eq!", "pair contents differ"),
    ("src/lib.rs", 31, "debug_assert_ne!", "empty pair"),
    ("src/lib.rs", 37, "panic!", "{}"),
    ("src/lib.rs", 45, "assert!", "rank {rank} is above the supported maximum of 8"),
    ("src/lib.rs", 58, "panic!", "compiled with feature extra"),
    ("src/lib.rs", 63, "unreachable!", "only outside tests"),
    ("src/macros.rs", 6, "panic!", "expected rank {}, got {}"),
    ("src/macros.rs", 13, ".expect", "no first byte"),
    ("src/macros.rs", 20, ".expect", "no second byte"),
    ("src/macros.rs", 22, "panic!", "zero lead byte"),
    ("src/macros.rs", 29, "unreachable!", "value is required"),
    ("src/ops/grad.rs", 8, "panic!", "Cannot differentiate embedding backward."),
    ("src/ops/grad.rs", 12, "panic!", "Can't differentiate avg pool 2d backward."),
    ("src/ops/grad.rs", 16, "unimplemented!", "topk is not implemented for autodiff"),
    ("src/ops/grad.rs", 20, "panic!", "Can't differentiate max pool 2d backward."),
    ("src/ops/mod.rs", 4, "assert!", "dim {} out of bounds for {} dimensions"),
    ("src/store_extra.rs", 4, ".expect", "a long message split over lines"),
]


def _rows(sites: list[PanicSite]) -> list[tuple[str, int, str, str]]:
    return [(s.file_path, s.line, s.kind, s.message_format) for s in sites]


def _one(source: str, **kwargs) -> list[tuple[int, str, str]]:
    return [
        (s.line, s.kind, s.message_format) for s in scan_source(source, "src/x.rs", **kwargs).sites
    ]


# ---------------------------------------------------------------------------------------------
# The fixture crates, exactly
# ---------------------------------------------------------------------------------------------


def test_v1_sites_exactly() -> None:
    assert _rows(scan_tree(V1)) == V1_SITES


def test_v1_with_tests_adds_exactly_the_test_sites() -> None:
    assert _rows(scan_tree(V1, include_tests=True)) == sorted(V1_SITES + V1_TEST_SITES)


def test_v2_sites_exactly() -> None:
    assert _rows(scan_tree(V2)) == V2_SITES


def test_columns_point_at_the_macro_or_method() -> None:
    by_message = {s.message_format: s for s in scan_tree(V1)}
    # `std::panic!` nested in a `vec![..]` token tree starts at `std`.
    assert by_message["zero lead byte"].column == 13
    # `.expect` in a chain split over lines: the method name's column on its own line.
    assert (by_message["key not in store"].line, by_message["key not in store"].column) == (14, 14)


def test_skeletons_share_ids_with_the_panic_site_import() -> None:
    sites = scan_tree(V1)
    records = skeletons(sites, repo=REPO, commit=SHA1)
    imported = skeletons_from_sites([s.as_panic_site(SHA1) for s in reversed(sites)], REPO)
    assert sorted(r["id"] for r in records) == sorted(r["id"] for r in imported)
    assert len({r["id"] for r in records}) == len(records)
    twice = [r for r in records if r["errorMessage"] == "entry must exist"]
    assert [(r["lineNumber"], r["id"]) for r in twice] == [
        (45, site_id(REPO, "src/data.rs", "entry must exist", 0)),
        (46, site_id(REPO, "src/data.rs", "entry must exist", 1)),
    ]
    first = records[0]
    assert first == {
        "id": site_id(REPO, "src/data.rs", "key not in store"),
        "repo": REPO,
        "errorMessage": "key not in store",
        "errorType": "expect",
        "filePath": "src/data.rs",
        "lineNumber": 14,
        "enclosingFn": "get",
        "githubUrl": pinned_url(REPO, SHA1, "src/data.rs", 14),
        "tags": ["rust", "panic-site"],
        "analyzedSha": SHA1,
        "check": {
            "kind": "expect",
            "code": "self.items.get(key).map(|v| v.as_slice())",
            "impl": "impl Store",
        },
    }


# ---------------------------------------------------------------------------------------------
# Parsing details
# ---------------------------------------------------------------------------------------------


def test_every_macro_form_and_its_message_argument() -> None:
    source = """
fn f(a: u32, b: u32) {
    panic!("p {}", a);
    unimplemented!("u {a}");
    todo!("t");
    unreachable!("r");
    assert!(a > b, "a {}", a);
    assert_eq!(a, b, "eq");
    assert_ne!(a, b, "ne");
    debug_assert!(a > 0, "da");
    debug_assert_eq!(a, 1, "deq");
    debug_assert_ne!(a, 2, "dne");
    assert!(a > 0);
    assert_eq!(a, 3);
    todo!();
}
"""
    assert _one(source) == [
        (3, "panic!", "p {}"),
        (4, "unimplemented!", "u {a}"),
        (5, "todo!", "t"),
        (6, "unreachable!", "r"),
        (7, "assert!", "a {}"),
        (8, "assert_eq!", "eq"),
        (9, "assert_ne!", "ne"),
        (10, "debug_assert!", "da"),
        (11, "debug_assert_eq!", "deq"),
        (12, "debug_assert_ne!", "dne"),
    ]


def test_assert_arguments_are_parsed_not_split_on_commas() -> None:
    source = """
fn f(m: Map) {
    assert_eq!(Map::<u32, u32>::new().len(), "zero".len(), "generic {}", 1);
    assert!(m.all(|a, b| a == "x"), "closure");
    assert_eq!(m.name(), "not a message");
    assert!(m.name() == "nor this");
}
"""
    assert _one(source) == [(3, "assert_eq!", "generic {}"), (4, "assert!", "closure")]


def test_strings_escapes_raw_strings_and_continuations() -> None:
    source = r"""
fn f(o: Option<u8>) {
    panic!("tab\t nl\n quote\" back\\ nul\0 hex\x41 uni\u{1F600} brace{{}}");
    panic!(r"raw \n {}");
    panic!(r##"hashes "# inside"##);
    o.expect("one \
              two\
three");
    panic!("real newline
   kept");
    o.expect(b"bytes".as_ref());
}
"""
    assert _one(source) == [
        (3, "panic!", 'tab\t nl\n quote" back\\ nul\0 hexA uni\U0001f600 brace{{}}'),
        (4, "panic!", r"raw \n {}"),
        (5, "panic!", 'hashes "# inside'),
        (6, ".expect", "one twothree"),
        (9, "panic!", "real newline\n   kept"),
    ]


def test_literal_messages_through_concat_and_format() -> None:
    source = """
fn f(o: Option<u8>, name: &str) {
    o.expect(concat!("a", 'b', 1, true));
    o.expect(&format!("no {}", name));
    o.expect(format!("owned {}", name).as_str());
    panic!(concat!("x", concat!("y", "z")));
    o.expect(concat!("a", name));
    o.expect(MESSAGE);
    panic!(msg);
    std::panic!("std path");
    core::panic!("core path");
}
"""
    assert _one(source) == [
        (3, ".expect", "ab1true"),
        (4, ".expect", "no {}"),
        (6, "panic!", "xyz"),
        (10, "panic!", "std path"),
        (11, "panic!", "core path"),
    ]


def test_macros_nested_in_macros_and_macro_rules() -> None:
    source = """
macro_rules! check {
    ($x:expr) => {
        if !$x { panic!("check failed: {}", stringify!($x)); }
    };
}
fn f(v: Vec<Option<u8>>) {
    println!("{:?}", vec![v[0].expect("first"), v[1].expect("second")]);
    let w = vec![
        match v[2] { Some(x) => x, None => unreachable!("third") },
    ];
}
"""
    assert _one(source) == [
        (4, "panic!", "check failed: {}"),
        (8, ".expect", "first"),
        (8, ".expect", "second"),
        (10, "unreachable!", "third"),
    ]


def test_comments_and_strings_that_look_like_panics_are_not_sites() -> None:
    source = """
/// ```
/// panic!("doc test");
/// ```
fn f() {
    // panic!("line comment");
    /* panic!("block comment"); x.expect("no") */
    let s = "panic!(\\"in a string\\")";
    let t = r#"x.expect("raw")"#;
    panic!(/* comment */ "after a comment");
}
"""
    assert _one(source) == [(10, "panic!", "after a comment")]


def test_lines_are_the_macro_start_and_the_expect_line() -> None:
    source = """
fn f(o: Option<u8>) -> u8 {
    assert!(
        o.is_some(),
        "multi-line assert"
    );
    o.map(|x| x + 1)
        .filter(|x| *x > 0)
        .expect(
            "chain",
        )
}
"""
    assert _one(source) == [(3, "assert!", "multi-line assert"), (9, ".expect", "chain")]


def test_crlf_sources_read_like_lf() -> None:
    source = 'fn f() {\r\n    panic!("a\r\nb");\r\n    panic!("c");\r\n}\r\n'
    assert _one(source) == [(2, "panic!", "a\nb"), (4, "panic!", "c")]


def test_cfg_test_predicates() -> None:
    assert cfg_requires_test("test")
    assert cfg_requires_test('all(test, feature = "x")')
    assert cfg_requires_test("all(unix, all(test))")
    assert not cfg_requires_test('any(test, feature = "x")')
    assert not cfg_requires_test("not(test)")
    assert not cfg_requires_test('feature = "test"')
    assert cfg_requires_test("any(test, all(test, unix))")


def test_test_items_are_skipped_unless_asked() -> None:
    source = """
#[cfg(test)]
fn helper() { panic!("cfg test fn"); }
#[tokio::test]
async fn t() { panic!("tokio test"); }
#[cfg_attr(test, derive(Debug))]
struct S;
impl S {
    #[inline]
    // a comment between attributes
    #[cfg(test)]
    fn m(&self) { panic!("test method"); }
    fn n(&self) { panic!("kept"); }
}
"""
    assert _one(source) == [(13, "panic!", "kept")]
    assert [m for _, _, m in _one(source, include_tests=True)] == [
        "cfg test fn",
        "tokio test",
        "test method",
        "kept",
    ]


def test_inner_cfg_test_attribute_skips_the_whole_file() -> None:
    source = '#![cfg(test)]\nfn f() { panic!("x"); }\n'
    assert _one(source) == []
    assert _one(source, include_tests=True) == [(2, "panic!", "x")]


def test_cfg_test_module_declarations_skip_their_files(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "net" / "checks").mkdir(parents=True)
    (src / "lib.rs").write_text("pub mod net;\n")
    (src / "net.rs").write_text(
        '#[cfg(test)]\nmod checks;\n#[cfg(test)]\n#[path = "odd_name.rs"]\nmod odd;\n'
        'pub fn f() { panic!("net"); }\n'
    )
    (src / "net" / "checks" / "mod.rs").write_text('fn a() { panic!("checks"); }\nmod deep;\n')
    (src / "net" / "checks" / "deep.rs").write_text('fn b() { panic!("deep"); }\n')
    (src / "odd_name.rs").write_text('fn c() { panic!("odd"); }\n')
    assert [s.message_format for s in scan_tree(tmp_path)] == ["net"]
    assert sorted(s.message_format for s in scan_tree(tmp_path, include_tests=True)) == [
        "checks",
        "deep",
        "net",
        "odd",
    ]


def test_build_output_and_hidden_folders_are_not_walked(tmp_path: Path) -> None:
    for folder in ("target/debug", ".git", "src"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "a.rs").write_text(f'fn f() {{ panic!("{folder}"); }}\n')
    assert [s.file_path for s in scan_tree(tmp_path)] == ["src/a.rs"]


# ---------------------------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------------------------


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    catalog = parser.add_subparsers().add_parser("catalog")
    register_catalog(catalog.add_subparsers())
    args = parser.parse_args(["catalog", *argv])
    return args.handler(args)


def test_scan_command_writes_records(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = _run(["scan", str(V1), "--repo", REPO, "--commit", SHA1, "--out", str(tmp_path)])
    assert code == 0
    written = tmp_path / f"scan-{SHA1[:12]}.jsonl"
    records = [json.loads(line) for line in written.read_text().splitlines()]
    sites = scan_tree(V1)
    # the package (`fixture-crate`) is not named as the repository (acme/fixture): its name
    packages = {site.file_path: "fixture-crate" for site in sites}
    assert records == skeletons(sites, repo=REPO, commit=SHA1, packages=packages)
    assert {"crate:fixture-crate"} <= set(records[0]["tags"])
    assert len(records) == len(V1_SITES)
    assert f"{len(V1_SITES)} sites" in capsys.readouterr().err


def test_scan_command_to_stdout_and_sites_format(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(["scan", str(V2), "--repo", REPO, "--commit", "abcdef1", "--format", "sites"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["file_path"], r["line"], r["kind"], r["message_format"]) for r in rows] == V2_SITES
    assert {r["commit"] for r in rows} == {"abcdef1"}


def test_scan_command_refuses_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(["scan", str(V1), "--repo", "no-slash", "--commit", SHA1]) == 2
    assert _run(["scan", str(V1), "--repo", REPO, "--commit", "not-hex"]) == 2
    assert _run(["scan", str(V1 / "missing"), "--repo", REPO, "--commit", SHA1]) == 2
    err = capsys.readouterr().err
    assert "OWNER/NAME" in err and "commit SHA" in err and "no such file" in err


def test_scan_command_refuses_a_folder_without_rust_sources(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A bare git repository has no working tree: "0 sites" would read as a clean scan.
    (tmp_path / "HEAD").write_text("ref: refs/heads/main\n")
    (tmp_path / "objects").mkdir()
    assert _run(["scan", str(tmp_path), "--repo", REPO, "--commit", SHA1]) == 2
    assert capsys.readouterr().err == (
        f"error: {tmp_path}: no Rust source files (.rs) here; scan a checkout of the code\n"
    )


def test_scan_command_shows_progress_on_large_trees(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for i in range(60):
        (tmp_path / f"f{i:02}.rs").write_text(f'fn f() {{ panic!("site {i}"); }}\n')
    assert _run(["scan", str(tmp_path), "--repo", REPO, "--commit", SHA1]) == 0
    captured = capsys.readouterr()
    assert "scan: 60/60 files, 60 sites" in captured.err
    assert len(captured.out.splitlines()) == 60


# ---------------------------------------------------------------------------------------------
# Caller-reported locations, consts, macro-built messages, builders (issue 13)
# ---------------------------------------------------------------------------------------------


def _tagged(source: str, **kwargs) -> list[tuple[int, str, tuple[str, ...]]]:
    return [
        (s.line, s.message_format, s.tags) for s in scan_source(source, "src/x.rs", **kwargs).sites
    ]


def test_track_caller_and_macro_bodies_are_tagged_closures_are_not() -> None:
    source = """#[track_caller]
#[inline]
fn helper(v: Option<u8>) -> u8 {
    let fallback = || panic!("closure has its own location");
    v.expect("helper got nothing")
}
fn plain() { panic!("plain site"); }
macro_rules! boom { () => { panic!("from a macro body") }; }
macro_rules! gen { ($t:ty) => { impl X for $t { fn f() { panic!("in a generated fn") } } }; }
fn gen() -> TokenStream { quote! { panic!("generated into the user's crate") } }
doc! {macro_rules! select { () => { panic!("defined inside another macro's tokens") }; }}
cfg_rt! { fn wrapped() { panic!("a function inside another macro's tokens") } }
"""
    assert _tagged(source) == [
        (4, "closure has its own location", ()),
        (5, "helper got nothing", ("track-caller",)),
        (7, "plain site", ()),
        (8, "from a macro body", ("macro-body",)),
        (9, "in a generated fn", ("macro-body",)),
        (10, "generated into the user's crate", ("macro-body", "proc-macro-output")),
        (11, "defined inside another macro's tokens", ("macro-body",)),
        (12, "a function inside another macro's tokens", ()),
    ]


def test_track_caller_functions_inside_another_macros_tokens() -> None:
    source = """cfg_rt! {
    impl Handle {
        #[track_caller]
        pub(crate) fn current() -> Handle { panic!("no runtime {}", 1) }
        fn other() {
            let c = |x| { panic!("in a closure") };
            match x { A => { panic!("in an arm") } }
        }
    }
}"""
    assert _tagged(source) == [
        (4, "no runtime {}", ("track-caller",)),
        (6, "in a closure", ()),
        (7, "in an arm", ()),
    ]


def test_a_traits_track_caller_declaration_tags_its_implementations() -> None:
    # `#[track_caller]` on a trait's method declaration applies to every implementation: Rust
    # prints the caller's line for a panic in the impl's body, attribute or not.
    source = """pub trait OrDie<T> {
    #[track_caller]
    fn or_die(self) -> T;
    fn quietly(self);
}
impl<T> OrDie<T> for Option<T> {
    fn or_die(self) -> T { self.expect("the value was required") }
    fn quietly(self) { panic!("no attribute on this one") }
}
impl Other for Thing {
    fn or_die(self) { panic!("another trait's method of the same name") }
}
"""
    assert _tagged(source) == [
        (7, "the value was required", ("track-caller",)),
        (8, "no attribute on this one", ()),
        (11, "another trait's method of the same name", ()),
    ]


def test_empty_messages_are_not_sites() -> None:
    assert _one('fn f() { unreachable!(""); panic!("  "); x.expect(""); }') == []


def test_expect_messages_are_literal_text_not_format_strings() -> None:
    source = """fn f() {
    a.expect("rank {D} is wrong");
    b.expect(&format!("rank {} is wrong", d));
    panic!("rank {D} is wrong");
}"""
    assert _one(source) == [
        (2, ".expect", "rank {{D}} is wrong"),
        (3, ".expect", "rank {} is wrong"),
        (4, "panic!", "rank {D} is wrong"),
    ]


def test_messages_held_in_const_and_static_strs() -> None:
    source = """const MSG: &str = "no {cell} here";
static OTHER: &'static str = "the other one";
fn f() {
    a.expect(MSG);
    panic!("{}", OTHER);
    panic!("{}: {}", MSG, value);
    panic!("{OTHER} and {value}");
    b.expect(not_a_const);
}"""
    assert _one(source) == [
        (4, ".expect", "no {{cell}} here"),
        (5, "panic!", "the other one"),
        (6, "panic!", "no {{cell}} here: {}"),
        (7, "panic!", "the other one and {value}"),
    ]


def test_a_const_defined_with_different_texts_stays_unknown_in_every_later_file() -> None:
    context = ScanContext()
    for text in ("one", "two", "three"):  # three files of the crate
        collect_definitions(f'const MSG: &str = "{text}";', context)
    assert "MSG" not in context.constants
    assert scan_source("fn f() { a.expect(MSG); }", "src/x.rs", context=context).sites == []


def test_messages_held_in_a_let_bound_str_of_the_same_function() -> None:
    # The shape of burn-backend 0.21.0 backend/ops/sort.rs (burn#5110): one `.expect` site per
    # call, each on its own `.expect(` line, with the local's text escaped like a const's.
    source = """fn sort_with_indices() {
    let msg = "Failed to read {data} synchronously.";
    let data = try_read_sync(K::into_data_async(tensor))
        .expect(msg)
        .expect(msg);
    panic!("{}", msg);
    panic!("{msg} at {n}");
    x.unwrap_or_else(|| panic!("{}: {}", msg, n));
    let raw = r#"a "raw" text"#;
    y.expect(raw);
}"""
    assert _one(source) == [
        (4, ".expect", "Failed to read {{data}} synchronously."),
        (5, ".expect", "Failed to read {{data}} synchronously."),
        (6, "panic!", "Failed to read {{data}} synchronously."),
        (7, "panic!", "Failed to read {{data}} synchronously. at {n}"),
        (8, "panic!", "Failed to read {{data}} synchronously.: {}"),
        (10, ".expect", 'a "raw" text'),
    ]


def test_a_shadowed_or_non_literal_let_is_not_a_message() -> None:
    source = """fn f(v: Vec<u8>) {
    let msg = "the literal";
    let msg = describe(v.len());
    a.expect(msg);
    let mut text = "may change";
    b.expect(text);
    z.expect(late);
    let late = "bound after its use";
}
fn g() {
    let other = "outer text";
    {
        let other = compute();
        c.expect(other);
    }
    d.map(|other| panic!("{}", other));
    match e { Err(other) => panic!("{}", other), Ok(_) => {} }
    if let Some(other) = h { panic!("{}", other) }
}
fn k() {
    i.expect(late);
    j.expect(msg);
}"""
    assert _one(source) == [
        (16, "panic!", "{}"),
        (17, "panic!", "{}"),
        (18, "panic!", "{}"),
    ]


def test_a_message_built_with_format_in_a_local_is_its_format_string() -> None:
    # The shape of openssl-sys's build script before 0.9.104 (find_normal.rs): a `let mut msg =
    # format!(..)`, paragraphs pushed on for some targets, then `panic!(msg)` (2018 edition);
    # the panic prints the format string's text first, its placeholders the values.
    source = """fn find(host: &str) {
    let mut msg = format!(
        "

Could not find the installation.

    $HOST = {}
    version = {}
",
        host,
        env!("CARGO_PKG_VERSION")
    );
    if host.contains("mingw") {
        msg.push_str("It looks like you're compiling for MinGW.");
    }
    panic!(msg);
}
fn other(path: &str, n: usize) {
    let msg = format!("bad path {}", path);
    a.expect(&msg);
    panic!("{}: {}", msg, n);
    let inline = format!("no {path} here");
    panic!("{inline}");
    let msg = describe(path);
    panic!("{}", msg);
}
fn protoc(hint: &str) {
    let error_msg = "Could not find `protoc` {here}";
    let msg = format!("{}{}\n\nFor more information: {url}", error_msg, hint, url = URL);
    b.expect(&msg);
}"""
    text = "\n\nCould not find the installation.\n\n    $HOST = {}\n    version = {}\n"
    assert _one(source) == [
        (16, "panic!", text),
        (20, ".expect", "bad path {}"),
        (21, "panic!", "bad path {}: {}"),
        (23, "panic!", "no {path} here"),
        (25, "panic!", "{}"),
        # (prost-build's: a text bound before fills its placeholder, braces kept literal)
        (32, ".expect", "Could not find `protoc` {{here}}{}\n\nFor more information: {url}"),
    ]


def test_the_calls_of_a_panic_helper_are_sites_printed_at_its_panic() -> None:
    # cmake's build helper: `fail` panics with its argument between fixed text, so each call's
    # message is a site of its own (at the call; Rust prints the helper's `panic!` line), and
    # the helper's own generic site stays.
    source = """fn run(status: i32, program: &str) {
    if status == 127 {
        fail(&format!("command did not execute, is `{}` not installed?", program));
    }
    fail("no valid generator found");
    fail(&reason());
}
fn fail(s: &str) -> ! {
    panic!("\\n{}\\n\\nbuild script failed, must exit now", s)
}
fn quiet(s: &str) -> ! {
    panic!("{}", s)
}
fn shout(s: &str) {
    panic!("loud: {}", s)
}
fn g() { quiet("said as is"); shout("not a helper: it may return"); }"""
    sites = scan_source(source, "src/lib.rs").sites
    assert [(s.line, s.message_format) for s in sites] == [
        (3, "command did not execute, is `{}` not installed?"),
        (5, "no valid generator found"),
        (9, "\n{}\n\nbuild script failed, must exit now"),
        (12, "{}"),
        (15, "loud: {}"),
    ]
    helper_calls = [s for s in sites if s.line in (3, 5)]
    assert all("raised-at:src/lib.rs:9" in s.tags and "macro-body" in s.tags for s in helper_calls)
    # (as the matcher reads a paste: whitespace runs as one space, the ends trimmed)
    printed = "\nno valid generator found\n\nbuild script failed, must exit now"
    assert re.fullmatch(helper_calls[1].message_pattern, " ".join(printed.split()))


def test_an_err_arm_of_a_call_failing_with_one_literal_is_that_message() -> None:
    # tokio's block_in_place: `match maybe_move_runtime() { Err(msg) => panic!("{}", msg) }`,
    # the function returning `Result<_, &'static str>` with one `Err("..")` (in a closure).
    source = """fn one() -> Result<(bool, bool), &'static str> {
    with_current(|cx| { if cx { return Err("can call blocking {here}"); } Ok(()) })?;
    Ok((true, false))
}
fn two() -> Result<(), &'static str> { if a { Err("first") } else { Err("second") } }
fn boxed() -> Result<(), Box<dyn Error>> { Err("not a str result".into()) }
fn elsewhere() -> Result<(), &'static str> { other()?; Err("another way to fail") }
fn callers() {
    match one() { Ok(r) => r, Err(msg) => panic!("{}", msg) };
    match two() { Ok(r) => r, Err(msg) => panic!("{}", msg) };
    match boxed() { Ok(r) => r, Err(msg) => panic!("{}", msg) };
    match elsewhere() { Ok(r) => r, Err(msg) => panic!("{}", msg) };
    match one() { Ok(r) => r, Err(msg) => { let msg = other(); panic!("{}", msg) } };
}"""
    assert _one(source) == [
        (9, "panic!", "can call blocking {{here}}"),
        (10, "panic!", "{}"),
        (11, "panic!", "{}"),
        (12, "panic!", "{}"),
        (13, "panic!", "{}"),
    ]


def test_a_panic_showing_an_error_of_the_files_own_enum_has_each_variants_text() -> None:
    # bevy's scene spawner: `.unwrap_or_else(|err| panic!("{}", err))` on a call returning
    # `Result<(), SceneSpawnError>`, a thiserror enum of the same file.
    source = """#[derive(Debug, Error)]
pub enum SpawnError {
    #[error("scene contains `{type_path}`. \\
        consider registering it")]
    Unregistered { type_path: String },
    #[error("scene {0} does not exist")]
    Missing(u32),
}
pub enum PlainError { A, B }
impl S {
    fn spawn(&mut self) -> Result<(), SpawnError> { Ok(()) }
    fn plain(&self) -> Result<(), PlainError> { Ok(()) }
}
fn system(s: &mut S) {
    s.spawn().unwrap_or_else(|err| panic!("{}", err));
    match s.spawn() { Ok(()) => {}, Err(e) => panic!("{e}") }
    if let Err(e) = s.spawn() { panic!("{}", e) }
    s.plain().unwrap_or_else(|err| panic!("{}", err));
    s.spawn().unwrap_or_else(|err| { let err = other(); panic!("{}", err) });
    s.spawn().unwrap_or_else(|err| panic!("{:?}", err));
}"""
    assert _one(source) == [
        (15, "panic!", "scene contains `{type_path}`. consider registering it"),
        (15, "panic!", "scene {0} does not exist"),
        (16, "panic!", "scene contains `{type_path}`. consider registering it"),
        (16, "panic!", "scene {0} does not exist"),
        (17, "panic!", "scene contains `{type_path}`. consider registering it"),
        (17, "panic!", "scene {0} does not exist"),
        (18, "panic!", "{}"),
        (19, "panic!", "{}"),
        (20, "panic!", "{:?}"),
    ]


def test_an_error_variant_without_a_text_keeps_the_sites_own_message() -> None:
    source = """#[derive(thiserror::Error, Debug)]
enum LoadError {
    #[error("no asset at {0}")]
    Missing(String),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}
fn load() -> Result<(), LoadError> { Ok(()) }
fn run() {
    load().unwrap_or_else(|e| panic!("{e}"));
}"""
    assert _one(source) == [(10, "panic!", "no asset at {0}"), (10, "panic!", "{e}")]


def test_a_call_of_another_shape_than_the_files_function_is_someone_elses() -> None:
    # `other.load()` is a method, the file's `load` a free function (and the reverse): the call
    # is another type's function of the same name, whose error the file's enum is not.
    source = """#[derive(thiserror::Error, Debug)]
enum LoadError {
    #[error("no asset at {0}")]
    Missing(String),
}
fn load() -> Result<(), LoadError> { Ok(()) }
impl Loader { fn fetch(&self) -> Result<(), LoadError> { Ok(()) } }
fn run(other: &Other, loader: &Loader) {
    other.load().unwrap_or_else(|e| panic!("{e}"));
    fetch().unwrap_or_else(|e| panic!("{e}"));
    loader.fetch().unwrap_or_else(|e| panic!("{e}"));
    Loader::fetch(loader).unwrap_or_else(|e| panic!("{e}"));
    crate::load().unwrap_or_else(|e| panic!("{e}"));
}"""
    assert _one(source) == [
        (9, "panic!", "{e}"),
        (10, "panic!", "{e}"),
        (11, "panic!", "no asset at {0}"),
        (12, "panic!", "no asset at {0}"),
        (13, "panic!", "no asset at {0}"),
    ]


def test_a_derive_more_display_enum_gives_its_variants_texts_too() -> None:
    # bevy 0.15's SceneSpawnError: `#[derive(Error, Display)]`, `#[display("..")]` per variant;
    # derive_more before 1.0 wrote `#[display(fmt = "..", ..)]`.
    source = """#[derive(Error, Display, Debug)]
enum SpawnError {
    #[display("scene contains `{type_path}`")]
    Unregistered { type_path: String },
    #[display(fmt = "scene {} does not exist", _0)]
    Missing(u32),
}
fn spawn() -> Result<(), SpawnError> { Ok(()) }
fn system() {
    spawn().unwrap_or_else(|err| panic!("{}", err));
}"""
    assert _one(source) == [
        (10, "panic!", "scene contains `{type_path}`"),
        (10, "panic!", "scene {} does not exist"),
    ]


def test_a_let_bound_message_does_not_leak_out_of_its_block_or_function() -> None:
    source = """fn outer() {
    {
        let msg = "inner block text";
        a.expect(msg);
    }
    b.expect(msg);
    fn nested() { c.expect(msg); }
    let f = || d.expect(msg);
}
fn another() { e.expect(msg); }"""
    assert _one(source) == [(4, ".expect", "inner block text")]


def test_messages_built_by_the_crates_own_macro_are_sites_at_each_call() -> None:
    source = """macro_rules! bail {
    ($what:literal) => { panic!(concat!("grid: ", $what)) };
    ($fmt:literal, $($arg:tt)*) => { panic!($fmt, $($arg)*) };
}
macro_rules! fixed { ($x:expr) => { panic!("fixed text {}", $x) }; }
fn f() {
    bail!("row is empty");
    bail!("bad size {}", n);
    fixed!(3);
}"""
    assert _one(source) == [
        (5, "panic!", "fixed text {}"),
        (7, "panic!", "grid: row is empty"),
        (8, "panic!", "bad size {}"),
    ]


def test_builder_functions_declared_by_the_author(tmp_path: Path) -> None:
    setting = tmp_path / "scan.toml"
    setting.write_text(
        """[[builder]]
function = "GridError::new"
append = ["hint"]
raised_at = "src/check.rs:9"
prefix = '''Grid check failed:\\s*'''
""",
        encoding="utf-8",
    )
    builders = load_builders(setting)
    source = """fn f() {
    let a = GridError::new("The width must be positive.").hint(format!("Got {w}."));
    let b = crate::check::GridError::new(format!("{} cells is too many", n));
    let c = GridError::new("no hint readable").hint(reason);
    let d = GridError::new(text);
}"""
    sites = scan_tree_source(source, builders)
    assert [(s.line, s.kind, s.message_format, s.tags) for s in sites] == [
        (
            2,
            "panic!",
            "The width must be positive. Got {w}.",
            ("macro-body", "raised-at:src/check.rs:9"),
        ),
        (3, "panic!", "{} cells is too many", ("macro-body", "raised-at:src/check.rs:9")),
        (4, "panic!", "no hint readable {}", ("macro-body", "raised-at:src/check.rs:9")),
    ]
    assert sites[0].message_pattern.startswith("(?:Grid check failed:\\s*)?The\\s*width")


def test_a_builder_prefix_names_the_operation_and_the_record_keeps_it(tmp_path: Path) -> None:
    setting = tmp_path / "scan.toml"
    setting.write_text(
        """[[builder]]
function = "GridError::new"
raised_at = "src/check.rs:9"
prefix = '''Grid check of (?P<operation>\\w+) failed:\\s*'''
""",
        encoding="utf-8",
    )
    (site,) = scan_tree_source(
        'fn f() { GridError::new("The width must be positive."); }', load_builders(setting)
    )
    # The record's pattern holds no group name (the scorer reads its groups by number); its
    # check keeps the declared prefix, with the name, for the answer.
    assert site.message_pattern.startswith("(?:Grid check of (?:\\w+) failed:\\s*)?The")
    assert dict(site.check)["prefix"] == "Grid check of (?P<operation>\\w+) failed:\\s*"
    setting.write_text(
        '[[builder]]\nfunction = "E::new"\nprefix = "at (?P<place>\\\\w+)"\n', encoding="utf-8"
    )
    with pytest.raises(BuilderConfigError, match=r"unknown group.*place.*known: operation"):
        load_builders(setting)


def scan_tree_source(source: str, builders) -> list[PanicSite]:
    return scan_source(source, "src/x.rs", context=ScanContext(builders=tuple(builders))).sites


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[[builder]]\nargument = 0\n", "`function`"),
        ('[[builder]]\nfunction = "E::new"\nreported_at = "there"\n', "`reported_at`"),
        ('[[builder]]\nfunction = "E::new"\nprefix = "(a+)+"\n', "`prefix`"),
        ('[[builder]]\nfunction = "E::new"\ncolour = 1\n', "colour"),
        ('[builders]\nfunction = "E::new"\n', "builders"),
        ("[[builder]\n", "not valid TOML"),
    ],
)
def test_bad_builder_settings_name_the_problem(tmp_path: Path, text: str, problem: str) -> None:
    setting = tmp_path / "scan.toml"
    setting.write_text(text, encoding="utf-8")
    with pytest.raises(BuilderConfigError, match=problem.replace("(", r"\(").replace("[", r"\[")):
        load_builders(setting)


def test_scan_command_refuses_a_bad_setting_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    setting = tmp_path / "scan.toml"
    setting.write_text('[[builder]]\nfunction = "E::new"\nargument = -1\n', encoding="utf-8")
    argv = ["scan", str(V1), "--repo", REPO, "--commit", SHA1, "--config", str(setting)]
    assert _run(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {setting}: builder 1: `argument` must be a whole number")
    assert _run([*argv[:-1], str(tmp_path / "missing.toml")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_a_file_nested_thousands_deep_is_left_out_and_said(caplog) -> None:
    """Walking up from a node costs its depth, so a generated file 20,000 blocks deep took
    minutes a refresh; it is left out (said on the log) after one walk of its tree, and code
    nested as deep as people write it is scanned as before."""
    from bot.scan.rust.site_finder import MAX_NESTING

    def nested(depth: int) -> str:
        return "pub fn f() {\n" + "{\n" * depth + 'panic!("deep");\n' + "}\n" * depth + "}\n"

    with caplog.at_level("WARNING"):
        deep = scan_source(nested(20_000), "src/gen.rs")
    assert deep.sites == [] and deep.too_deep
    assert "src/gen.rs: nested more than 256 levels deep; not scanned" in caplog.text
    shallow = scan_source(nested(MAX_NESTING // 4), "src/lib.rs")
    assert [s.message_format for s in shallow.sites] == ["deep"] and not shallow.too_deep


def test_a_file_larger_than_the_cap_is_left_out_and_said(caplog, monkeypatch) -> None:
    from bot.scan.rust import site_finder

    monkeypatch.setattr(site_finder, "MAX_FILE_BYTES", 1000)
    big = 'pub fn f() {\n    panic!("big");\n}\n' + "// table\n" * 200
    with caplog.at_level("WARNING"):
        scanned = scan_source(big, "src/table.rs")
    assert scanned.sites == [] and scanned.too_deep
    assert (
        f"src/table.rs: {len(big)} bytes, over the 1000-byte cap for one file; not scanned"
        in caplog.text
    )
    assert [s.message_format for s in scan_source(big[:900], "src/lib.rs").sites] == ["big"]
