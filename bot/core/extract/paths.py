"""Where a panic was raised: `PATH:LINE[:COL]` strings and function paths mapped to crates.

Users paste paths from many machines: a crate unpacked from a registry (crates.io or a
mirror, on Linux, macOS or Windows), a git checkout, a workspace (`crates/NAME/...`), a
vendored copy, the Rust standard library (`/rustc/HASH/library/core/...`), or their own code.
Everything here is linear-time: bounded quantifiers only, never nested ones.
"""

from __future__ import annotations

import re
from functools import lru_cache

from bot.core.panic import Location, PathKind

# The crates of the standard library as they appear in paths and function names.
STD_CRATES = frozenset(
    {
        "std",
        "core",
        "alloc",
        "proc_macro",
        "test",
        "panic_unwind",
        "panic_abort",
        "std_detect",
        "unwind",
        "backtrace",
    }
)

_MAX_RAW = 2000

# `:LINE` or `:LINE:COL` at the very end of a location string.
_TAIL = re.compile(r":(\d{1,9})(?::(\d{1,9}))?$")

# `/rustc/HASH/library/core/src/option.rs`, `.../rustlib/src/rust/library/std/src/...`,
# `library/std/src/panicking.rs`.
_STD_LIBRARY = re.compile(
    r"(?:^|/)library/(core|std|alloc|proc_macro|test|panic_unwind|panic_abort|std_detect|unwind"
    r"|backtrace)/(src/.*)$"
)
# Before 1.47 the library lived in `src/libcore/...`; very old panics print `libcore/...`.
_STD_OLD = re.compile(
    r"^(?:/rustc/[0-9a-f]{6,64}/|\.\./)?(?:src/)?lib(core|std|alloc|proc_macro|test|panic_unwind)/(.+)$"
)
# Before 1.42 a panic inside a std macro's expansion was placed in the macro, not the caller:
# `<::std::macros::panic macros>:2:4`, `<::core::macros::panic macros>:3:10`, `<std macros>:1:33`.
_STD_MACROS = re.compile(r"^<(?:::)?(core|std|alloc)\b[^<>\n]{0,120} macros>$")
_SLASHES = re.compile(r"/{2,}")
_DRIVE = re.compile(r"[A-Za-z]:/")
# `~/.cargo/registry/src/INDEX-DIR/NAME-VERSION/REST`, whatever CARGO_HOME is.
_REGISTRY = re.compile(r"(?:^|/)registry/src/[^/]{1,200}/([^/]{1,200})/(.*)$")
# `~/.cargo/git/checkouts/REPO-HASH/SHA/REST`
_GIT = re.compile(r"(?:^|/)git/checkouts/([^/]{1,200})/[^/]{1,200}/(.*)$")
_VENDOR = re.compile(r"(?:^|/)vendor/([^/]{1,200})/(.*)$")
_WORKSPACE = re.compile(r"(?:^|/)crates/([^/]{1,200})/(.*)$")
# A versioned crate folder is how cargo unpacks a published crate, wherever the rest of the
# path went: `.../tokio-1.51.1/src/runtime/task/core.rs` (elided), a build's own vendor copy.
_VERSIONED_CRATE = re.compile(r"(?:^|/)([^/]{1,200}-\d{1,9}\.\d{1,9}\.\d{1,9}[^/]{0,80})/(src/.*)$")
# `burn-autodiff-0.18.0`, `burn-core-0.21.0-pre.2`, `foo-1.0.0+build.5`
_NAME_VERSION = re.compile(
    r"([A-Za-z0-9_][A-Za-z0-9_-]{0,120}?)-(\d{1,9}\.\d{1,9}\.\d{1,9}(?:[-+][0-9A-Za-z.+-]{0,80})?)"
)
# A git checkout directory: `burn-1a2b3c4d5e6f7a8b`.
_CHECKOUT_HASH = re.compile(r"-[0-9a-f]{8,40}$")
_FIRST_SEGMENT_SRC = re.compile(r"([^/]{1,200})/(src/.*)$")
_IDENT_PATH = re.compile(r"([A-Za-z_][A-Za-z0-9_]{0,120})::")
# Symbol hash suffix of full backtraces: `...::call_once::h1a2b3c4d5e6f7a8b`.
_SYMBOL_HASH = re.compile(r"::h[0-9a-f]{16}$")


def normalise_path(path: str) -> str:
    """Forward slashes, no Windows verbatim prefix (`\\\\?\\C:\\...`)."""
    path = path.replace("\\", "/")
    if path.startswith("//?/"):
        path = path[4:]
    if "//" in path[1:]:
        # `/rustc/HASH\/src\libstd\...` (old Windows backtraces) has doubled separators.
        path = path[:1] + _SLASHES.sub("/", path[1:])
    return path


def is_absolute(path: str) -> bool:
    """A normalised path from a filesystem's root: `/home/..`, `C:/Users/..`."""
    return path.startswith("/") or bool(_DRIVE.match(path))


def parse_location(raw: str) -> Location | None:
    """`PATH:LINE[:COL]` -> Location, or None when there is no line number or no path."""
    if not raw:
        return None
    text = raw.strip()
    if len(text) > _MAX_RAW:
        return None
    # Tolerate what surrounds a location in prose: backticks, quotes, markdown emphasis, a
    # trailing `:` or `,`.
    text = text.strip("`\"'*")
    text = text.rstrip(":,.;)*_")
    text = text.strip()
    match = _TAIL.search(text)
    if not match:
        return None
    path_raw = text[: match.start()].strip()
    if path_raw.startswith("("):
        path_raw = path_raw[1:]
    if not path_raw:
        return None
    path = normalise_path(path_raw)
    line = int(match.group(1))
    column = int(match.group(2)) if match.group(2) else None
    kind, crate, version, crate_path = classify_path(path)
    return Location(
        raw=text,
        path=path,
        line=line,
        column=column,
        kind=kind,
        crate=crate,
        crate_version=version,
        crate_path=crate_path,
    )


def _split_name_version(dirname: str) -> tuple[str, str | None]:
    match = _NAME_VERSION.fullmatch(dirname)
    if match:
        return match.group(1), match.group(2)
    return dirname, None


@lru_cache(maxsize=4096)
def classify_path(path: str) -> tuple[PathKind, str | None, str | None, str | None]:
    """(kind, crate, crate_version, crate_path) for a normalised path (forward slashes).

    Cached: a backtrace names the same few files again and again.
    """
    match = _STD_LIBRARY.search(path)
    if match:
        return "std", match.group(1), None, match.group(2)
    match = _STD_OLD.match(path)
    if match:
        return "std", match.group(1), None, match.group(2)
    match = _STD_MACROS.match(path)
    if match:
        return "std", match.group(1), None, None
    match = _REGISTRY.search(path)
    if match:
        name, version = _split_name_version(match.group(1))
        return "registry", name, version, match.group(2)
    match = _GIT.search(path)
    if match:
        repo = _CHECKOUT_HASH.sub("", match.group(1))
        rest = match.group(2)
        inner = _WORKSPACE.search(rest)
        if inner:
            return "git", inner.group(1), None, inner.group(2)
        if rest.startswith("src/"):
            return "git", repo, None, rest
        inner = _FIRST_SEGMENT_SRC.match(rest)
        if inner:
            return "git", inner.group(1), None, inner.group(2)
        return "git", repo, None, rest
    match = _VENDOR.search(path)
    if match:
        name, version = _split_name_version(match.group(1))
        return "registry", name, version, match.group(2)
    match = _WORKSPACE.search(path)
    if match:
        return "workspace", match.group(1), None, match.group(2)
    match = _VERSIONED_CRATE.search(path)
    if match:
        name, version = _split_name_version(match.group(1))
        if version is not None:
            # Bazel's rules_rust names a crate's external repository `HUB__NAME-VERSION`
            # (`external/crate_index__prost-build-0.11.9/src/lib.rs`).
            return "registry", name.rsplit("__", 1)[-1], version, match.group(2)
    return "other", None, None, None


def crate_name(segment: str) -> str:
    """A crate as Rust code names it (`burn_autodiff`) -> as Cargo names it (`burn-autodiff`)."""
    return segment if segment in STD_CRATES else segment.replace("_", "-")


_TYPE_PREFIXES = ("&", "mut ", "dyn ", "impl ", "*const ", "*mut ", "const ", "[", "(", "'")


def _strip_type_prefixes(text: str) -> str:
    for _ in range(16):
        for prefix in _TYPE_PREFIXES:
            if text.startswith(prefix):
                text = text[len(prefix) :].lstrip()
                break
        else:
            return text
    return text


@lru_cache(maxsize=4096)
def crate_from_function(function: str) -> str | None:
    """The crate a backtrace function belongs to, by its first path segment.

    `burn_autodiff::ops::module::<impl ..>::f` -> `burn-autodiff`;
    `<burn_autodiff::Autodiff<B> as burn_tensor::...>::f` -> `burn-autodiff`;
    `<&T as core::fmt::Debug>::fmt` -> `core` (the type has no path, so the trait's);
    `rust_begin_unwind`, `main`, `<unknown>` -> None.
    """
    text = function.strip()[:_MAX_RAW]
    if not text:
        return None
    text = _strip_type_prefixes(text)
    qualified = False
    for _ in range(8):
        if not text.startswith("<"):
            break
        qualified = True
        text = _strip_type_prefixes(text[1:].lstrip())
    match = _IDENT_PATH.match(text)
    if match:
        crate = crate_name(match.group(1))
        if qualified and crate in STD_CRATES:
            # `<core::result::Result<T,E> as re_log::ResultExt<T,E>>::f`: std's type, another
            # crate's trait; only the trait's crate may hold that impl (the orphan rule).
            trait = _trait_of(text)
            found = _IDENT_PATH.match(trait) if trait else None
            if found and crate_name(found.group(1)) not in STD_CRATES:
                return crate_name(found.group(1))
        return crate
    if qualified:
        # `<T as Trait>`: the self type has no crate path, take the trait's.
        end = text.find(">")
        head = text if end < 0 else text[:end]
        position = head.find(" as ")
        if position >= 0:
            trait = _strip_type_prefixes(head[position + 4 :].lstrip())
            match = _IDENT_PATH.match(trait)
            if match:
                return crate_name(match.group(1))
    return None


def _trait_of(text: str) -> str | None:
    """The trait of a qualified path's `TYPE as TRAIT>` (the `<` already cut): the text after
    the ` as ` outside the type's own generics."""
    depth = 0
    for position, char in enumerate(text):
        if char == "<":
            depth += 1
        elif char == ">":
            if depth == 0:
                return None
            depth -= 1
        elif depth == 0 and text.startswith(" as ", position):
            return _strip_type_prefixes(text[position + 4 :].lstrip())
    return None


def strip_symbol_hash(function: str) -> str:
    """`core::panicking::panic_fmt::h1a2b...` -> `core::panicking::panic_fmt`."""
    return _SYMBOL_HASH.sub("", function)
