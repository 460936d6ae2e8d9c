"""Walking a source tree: the Rust files worth scanning, and every panic site in them."""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path, PurePosixPath

from bot.core.match.crates import canonical_crate, crate_folders
from bot.scan.rust.definitions import ScanContext, collect_definitions
from bot.scan.rust.site_finder import PanicSite, scan_source

# Folders whose code is not part of a crate's runtime.
TEST_DIRS = frozenset({"tests", "benches", "examples"})
# Folders never worth walking.
SKIP_DIRS = frozenset({"target", "node_modules"})


def _is_test_path(relative: PurePosixPath) -> bool:
    return any(part in TEST_DIRS for part in relative.parts[:-1])


def rust_files(root: Path, *, include_tests: bool = False) -> Iterator[Path]:
    """The `.rs` files under `root`, sorted, without build output, VCS and (unless asked) tests."""
    for dirpath, dirnames, filenames in os.walk(root):
        keep = []
        for name in sorted(dirnames):
            if name.startswith(".") or name in SKIP_DIRS:
                continue
            if not include_tests and name in TEST_DIRS:
                continue
            keep.append(name)
        dirnames[:] = keep
        for name in sorted(filenames):
            if name.endswith(".rs"):
                yield Path(dirpath) / name


def _under(path: str, excluded: set[str]) -> bool:
    """Whether `path` is one of `excluded` or inside one of them (folders)."""
    if path in excluded:
        return True
    return any(str(parent) in excluded for parent in PurePosixPath(path).parents)


ProgressFn = Callable[[int, int, int], None]  # (files done, files total, sites so far)


# Files worth a first pass for the crate's consts and macros (most files have neither).
_DEFINES_SOMETHING = re.compile(
    rb"macro_rules!|(?:const|static)\s+[A-Za-z_][A-Za-z0-9_]*\s*:\s*&|\)\s*->\s*!\s*\{"
)


def scan_tree(
    root: str | Path,
    *,
    include_tests: bool = False,
    progress: ProgressFn | None = None,
    builders: Iterable = (),
    macros: Mapping[str, str] | None = None,
) -> list[PanicSite]:
    """Every panic site under `root`, ordered by file, then line, then column.

    A first pass reads every `const`/`static` `&str` and panicking `macro_rules!` of the tree,
    so a message held in a const or built by the crate's macro is found where it is used.
    `builders`: the catalog author's builder functions (`bot.scan.builders`); `macros`: the
    declared assertion macros (name -> the std macro each acts as).
    """
    root = Path(root)
    if root.is_file():
        files = [root]
        root = root.parent
    else:
        files = list(rust_files(root, include_tests=include_tests))
    total = len(files)
    sites: list[PanicSite] = []
    test_paths: list[str] = []
    context = ScanContext(builders=tuple(builders), like=dict(macros or {}))
    for path in files:
        data = path.read_bytes()
        if _DEFINES_SOMETHING.search(data):
            collect_definitions(data, context, path.relative_to(root).as_posix())
    for done, path in enumerate(files, start=1):
        relative = path.relative_to(root).as_posix()
        if not include_tests and _is_test_path(PurePosixPath(relative)):
            continue
        scan = scan_source(
            path.read_bytes(), relative, include_tests=include_tests, context=context
        )
        sites.extend(scan.sites)
        test_paths.extend(scan.test_module_paths)
        if progress is not None:
            progress(done, total, len(sites))
    if test_paths:
        excluded = set(test_paths)
        sites = [s for s in sites if not _under(s.file_path, excluded)]
    sites.sort()
    return sites


def package_names(root: str | Path, file_paths: Iterable[str], repo: str = "") -> dict[str, str]:
    """The crate each file is in, by the nearest `Cargo.toml` with a `[package] name`, for the
    files whose path does not tell it: `libs/core/ops.rs` is in `deno_core`, `crates/fiber/..` in
    `wasmtime-fiber`, a root `src/` of `someone/demo` in `demo-core` (a path through
    `crates/NAME/` or `NAME/src/` of a package named NAME tells it already, and so does a root
    `src/` of a package named as `repo`). A manifest TOML cannot read names nothing."""
    root = Path(root)
    names: dict[str, str | None] = {}  # folder (relative) -> package name, None: none there

    def package_of(folder: PurePosixPath) -> str | None:
        key = folder.as_posix()
        if key not in names:
            manifest = root / folder / "Cargo.toml"
            name = None
            if manifest.is_file():
                try:
                    package = tomllib.loads(manifest.read_text(encoding="utf-8")).get("package")
                except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
                    package = None
                value = package.get("name") if isinstance(package, dict) else None
                name = value if isinstance(value, str) and value.strip() else None
            if name is None and folder != folder.parent:
                name = package_of(folder.parent)
            names[key] = name
        return names[key]

    found: dict[str, str] = {}
    for file_path in file_paths:
        name = package_of(PurePosixPath(file_path).parent)
        told = {crate for crate, _folder in crate_folders(file_path, repo)}
        if name and canonical_crate(name) not in told:
            found[file_path] = name
    return found
