"""Locations and function paths as users paste them, mapped to crates."""

from __future__ import annotations

import pytest

from bot.core.extract.paths import crate_from_function, parse_location, strip_symbol_hash

REG = "index.crates.io-1949cf8c6b5b557f"


def test_registry_path_under_home_tilde() -> None:
    raw = f"~/.cargo/registry/src/{REG}/burn-autodiff-0.18.0/src/ops/module.rs:1933:9"
    loc = parse_location(raw)
    assert loc is not None
    assert loc.raw == raw
    assert loc.path == f"~/.cargo/registry/src/{REG}/burn-autodiff-0.18.0/src/ops/module.rs"
    assert (loc.line, loc.column) == (1933, 9)
    assert loc.kind == "registry"
    assert loc.crate == "burn-autodiff"
    assert loc.crate_version == "0.18.0"
    assert loc.crate_path == "src/ops/module.rs"


@pytest.mark.parametrize(
    ("raw", "crate", "version", "crate_path"),
    [
        (
            "/home/x/.cargo/registry/src/mirrors.ustc.edu.cn-5857e57f01837ef8/"
            "burn-wgpu-0.13.2/src/lib.rs:44:5",
            "burn-wgpu",
            "0.13.2",
            "src/lib.rs",
        ),
        (
            "/Users/ana/.cargo/registry/src/github.com-1ecc6299db9ec823/"
            "burn-core-0.8.0/src/module/param/base.rs:12:7",
            "burn-core",
            "0.8.0",
            "src/module/param/base.rs",
        ),
        (
            f"$CARGO_HOME/registry/src/{REG}/burn-cubecl-0.21.0-pre.2/src/ops/base.rs:88:14",
            "burn-cubecl",
            "0.21.0-pre.2",
            "src/ops/base.rs",
        ),
        (
            f"/usr/local/cargo/registry/src/{REG}/cubecl-runtime-0.5.0/src/memory_management/"
            "memory_pool/sliced_pool.rs:300:13",
            "cubecl-runtime",
            "0.5.0",
            "src/memory_management/memory_pool/sliced_pool.rs",
        ),
        (
            f"/home/x/.cargo/registry/src/{REG}/wgpu-0.19.4/src/backend/wgpu_core.rs:3006:5",
            "wgpu",
            "0.19.4",
            "src/backend/wgpu_core.rs",
        ),
        (
            f"/home/x/.cargo/registry/src/{REG}/half-2.4.1+build.7/src/lib.rs:1:1",
            "half",
            "2.4.1+build.7",
            "src/lib.rs",
        ),
    ],
)
def test_registry_variants(raw: str, crate: str, version: str, crate_path: str) -> None:
    loc = parse_location(raw)
    assert loc is not None
    assert loc.kind == "registry"
    assert (loc.crate, loc.crate_version, loc.crate_path) == (crate, version, crate_path)


def test_windows_registry_path_normalised() -> None:
    raw = (
        r"C:\Users\me\.cargo\registry\src\index.crates.io-6f17d22bba15001f"
        r"\burn-core-0.16.1\src\module\param\base.rs:197:41"
    )
    loc = parse_location(raw)
    assert loc is not None
    assert loc.raw == raw
    assert loc.path == (
        "C:/Users/me/.cargo/registry/src/index.crates.io-6f17d22bba15001f/"
        "burn-core-0.16.1/src/module/param/base.rs"
    )
    assert (loc.line, loc.column) == (197, 41)
    assert (loc.kind, loc.crate, loc.crate_version, loc.crate_path) == (
        "registry",
        "burn-core",
        "0.16.1",
        "src/module/param/base.rs",
    )


def test_windows_verbatim_prefix_and_spaces_in_user_name() -> None:
    raw = (
        r"\\?\C:\Users\John Smith\.cargo\registry\src\index.crates.io-6f17d22bba15001f"
        r"\burn-ndarray-0.14.0\src\ops\base.rs:20:9"
    )
    loc = parse_location(raw)
    assert loc is not None
    assert loc.path.startswith("C:/Users/John Smith/.cargo/")
    assert (loc.crate, loc.crate_version, loc.crate_path) == (
        "burn-ndarray",
        "0.14.0",
        "src/ops/base.rs",
    )


def test_git_checkout_with_crates_folder() -> None:
    raw = (
        "/home/u/.cargo/git/checkouts/burn-178c6829f420dae1/a1b2c3d/crates/burn-tensor/"
        "src/tensor/api/check.rs:1034:9"
    )
    loc = parse_location(raw)
    assert loc is not None
    assert (loc.kind, loc.crate, loc.crate_version, loc.crate_path) == (
        "git",
        "burn-tensor",
        None,
        "src/tensor/api/check.rs",
    )
    assert (loc.line, loc.column) == (1034, 9)


def test_git_checkout_single_crate_repo_and_old_layout() -> None:
    single = parse_location("~/.cargo/git/checkouts/cubecl-0a1b2c3d4e5f6a7b/9f8e7d6/src/lib.rs:3:1")
    assert single is not None
    assert (single.kind, single.crate, single.crate_path) == ("git", "cubecl", "src/lib.rs")
    old = parse_location(
        "~/.cargo/git/checkouts/burn-0a1b2c3d4e5f6a7b/9f8e7d6/burn-tensor/src/tensor/base.rs:70:5"
    )
    assert old is not None
    assert (old.kind, old.crate, old.crate_path) == ("git", "burn-tensor", "src/tensor/base.rs")


@pytest.mark.parametrize(
    ("raw", "crate", "crate_path", "path"),
    [
        (
            "crates/burn-wgpu/src/lib.rs:10:5",
            "burn-wgpu",
            "src/lib.rs",
            "crates/burn-wgpu/src/lib.rs",
        ),
        (
            "/home/u/burn/crates/burn-ndarray/src/ops/x.rs:7:1",
            "burn-ndarray",
            "src/ops/x.rs",
            "/home/u/burn/crates/burn-ndarray/src/ops/x.rs",
        ),
        (
            r".\crates\burn-import\src\onnx\to_burn.rs:412:17",
            "burn-import",
            "src/onnx/to_burn.rs",
            "./crates/burn-import/src/onnx/to_burn.rs",
        ),
    ],
)
def test_workspace_paths(raw: str, crate: str, crate_path: str, path: str) -> None:
    loc = parse_location(raw)
    assert loc is not None
    assert loc.kind == "workspace"
    assert (loc.crate, loc.crate_version, loc.crate_path, loc.path) == (
        crate,
        None,
        crate_path,
        path,
    )


def _crate_of(raw: str) -> tuple[str, str | None, str | None, str | None]:
    found = parse_location(raw)
    assert found is not None, raw
    return found.kind, found.crate, found.crate_version, found.crate_path


def test_vendored_crates_are_registry_like() -> None:
    assert _crate_of("vendor/burn-fusion-0.17.1/src/stream/base.rs:55:13") == (
        "registry",
        "burn-fusion",
        "0.17.1",
        "src/stream/base.rs",
    )
    bare = "/build/app/vendor/burn-fusion/src/stream/base.rs:55:13"
    assert _crate_of(bare) == ("registry", "burn-fusion", None, "src/stream/base.rs")


def test_a_versioned_crate_folder_is_a_registry_crate_wherever_the_path_went() -> None:
    for raw in (
        ".../tokio-1.51.1/src/runtime/task/core.rs:422:22",  # the registry's folders elided
        "/nix/store/x-vendor-cargo-deps/tokio-1.51.1/src/runtime/task/core.rs:422:22",
        # Bazel's rules_rust: the external repository `HUB__NAME-VERSION`
        "external/crate_index__tokio-1.51.1/src/runtime/task/core.rs:422:22",
    ):
        assert _crate_of(raw) == ("registry", "tokio", "1.51.1", "src/runtime/task/core.rs"), raw
    assert _crate_of("/home/me/myapp/src/main.rs:3:5")[0] == "other"


@pytest.mark.parametrize(
    ("raw", "crate", "crate_path"),
    [
        (
            "/rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/core/src/result.rs:1651:5",
            "core",
            "src/result.rs",
        ),
        ("library/std/src/panicking.rs:665:5", "std", "src/panicking.rs"),
        (
            "/home/u/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/lib/rustlib/src/rust/"
            "library/alloc/src/vec/mod.rs:2000:9",
            "alloc",
            "src/vec/mod.rs",
        ),
        (
            "/rustc/4b91a6ea7258a947e59c6522cd5898e7c0a6a88f/src/libcore/result.rs:1188:5",
            "core",
            "result.rs",
        ),
        ("libcore/result.rs:945:5", "core", "result.rs"),
        ("../src/libstd/thread/mod.rs:277", "std", "thread/mod.rs"),
        (
            "/rustc/73528e339aae0f17a15ffa49a8ac608f50c6cf14\\/src\\libstd\\panicking.rs:77",
            "std",
            "panicking.rs",
        ),
    ],
)
def test_std_paths(raw: str, crate: str, crate_path: str) -> None:
    loc = parse_location(raw)
    assert loc is not None
    assert (loc.kind, loc.crate, loc.crate_version, loc.crate_path) == (
        "std",
        crate,
        None,
        crate_path,
    )


@pytest.mark.parametrize(
    "raw",
    ["src/main.rs:14:5", "examples/foo.rs:3:1", "/home/me/proj/src/lib.rs:99:20", "./src/x.rs:3:4"],
)
def test_other_paths(raw: str) -> None:
    loc = parse_location(raw)
    assert loc is not None
    assert (loc.kind, loc.crate, loc.crate_version, loc.crate_path) == ("other", None, None, None)
    assert loc.path == raw.rsplit(":", 2)[0]


def test_line_without_column_and_trailing_punctuation() -> None:
    loc = parse_location("src/libstd/panicking.rs:476")
    assert loc is not None
    assert (loc.line, loc.column, loc.path) == (476, None, "src/libstd/panicking.rs")
    assert (loc.kind, loc.crate) == ("std", "std")
    loc = parse_location("`src/main.rs:3:5:`")
    assert loc is not None
    assert (loc.path, loc.line, loc.column, loc.raw) == ("src/main.rs", 3, 5, "src/main.rs:3:5")


@pytest.mark.parametrize("raw", ["", "   ", "src/main.rs", ":3:4", "no location here", "x.rs:"])
def test_not_a_location(raw: str) -> None:
    assert parse_location(raw) is None


@pytest.mark.parametrize(
    ("function", "crate"),
    [
        (
            "burn_autodiff::ops::module::<impl burn_tensor::ops::ModuleOps<Autodiff<B>>>::f",
            "burn-autodiff",
        ),
        (
            "<burn_autodiff::Autodiff<B> as burn_tensor::ops::FloatTensorOps>::float_reshape",
            "burn-autodiff",
        ),
        ("<alloc::boxed::Box<F,A> as core::ops::function::FnOnce<Args>>::call_once", "alloc"),
        ("<&T as core::fmt::Debug>::fmt", "core"),
        ("<[T] as core::slice::index::Index<I>>::index", "core"),
        ("std::panicking::begin_panic_handler::{{closure}}", "std"),
        ("core::result::unwrap_failed", "core"),
        ("proc_macro::bridge::client::run", "proc_macro"),
        ("burn_train::learner::train::{{closure}}", "burn-train"),
        ("<impl burn_core::module::Module<B> for my_model::Net<B>>::forward", "burn-core"),
        ("rust_begin_unwind", None),
        ("main", None),
        ("<unknown>", None),
        ("__rust_begin_short_backtrace", None),
        ("", None),
    ],
)
def test_crate_from_function(function: str, crate: str | None) -> None:
    assert crate_from_function(function) == crate


def test_strip_symbol_hash() -> None:
    assert strip_symbol_hash("core::panicking::panic_fmt::h1a2b3c4d5e6f7a8b") == (
        "core::panicking::panic_fmt"
    )
    assert strip_symbol_hash("core::panicking::panic_fmt") == "core::panicking::panic_fmt"


def test_hostile_inputs() -> None:
    # Long repetitive strings (the worst case for backtracking regexes) still parse sensibly.
    loc = parse_location(":1" * 900)
    assert loc is not None
    assert (loc.line, loc.column, loc.kind) == (1, 1, "other")
    assert parse_location("a:" * 900 + "x") is None
    loc = parse_location("registry/src/i/" * 100 + "x.rs:1")
    assert loc is not None
    assert (loc.kind, loc.crate, loc.crate_version) == ("registry", "registry", None)
    assert loc.crate_path is not None
    assert loc.crate_path.endswith("/x.rs")
    loc = parse_location("burn-" * 300 + "1.2.3/src/a.rs:1:2")
    assert loc is not None
    assert loc.kind == "other"
    assert parse_location("x" * 5000 + ".rs:1:2") is None  # longer than any real path
    assert crate_from_function("<" * 100_000) is None
    assert crate_from_function("<" * 5 + "burn_core::X as Y>::f") == "burn-core"
