"""Crate names as paths spell them, and which repository folder holds which crate.

A registry folder is `NAME-VERSION` with NAME as published: `tiny_grid-0.3.0-rc.1`,
`wgpu-core-0.19.4`, `x11rb-protocol-0.13.1`. Cargo treats `-` and `_` in a crate name alike, and
a repository named `foo-rs` usually publishes `foo`, so names are compared in one spelling.
"""

from __future__ import annotations

# Top folders of a repository that hold code of no crate of its own.
_NOT_CRATES = frozenset({"tests", "benches", "examples", "src", "docs", "xtask", "target"})


def canonical_crate(name: str) -> str:
    """`tiny_grid`, `Tiny-Grid` -> `tiny-grid`: how crate names are compared."""
    return name.strip().lower().replace("_", "-")


def repo_crate_names(repo: str) -> set[str]:
    """The names the crate at a repository's root may be published under: `acme/foo-rs` ->
    {`foo-rs`, `foo`}."""
    name = canonical_crate(repo.rsplit("/", 1)[-1])
    names = {name}
    for suffix in ("-rs", ".rs", "-rust"):
        if name.endswith(suffix) and len(name) > len(suffix):
            names.add(name[: -len(suffix)])
    return names


def crate_folders(file_path: str, repo: str) -> list[tuple[str, str]]:
    """(canonical crate, repository folder) pairs a record's path tells: `crates/NAME/..` and
    `NAME/src/..` name the crate by folder; a root `src/..` is the repository's own crate."""
    parts = file_path.split("/")
    if len(parts) > 2 and parts[0] == "crates":
        return [(canonical_crate(parts[1]), f"crates/{parts[1]}")]
    if len(parts) > 2 and parts[1] == "src" and parts[0] not in _NOT_CRATES:
        return [(canonical_crate(parts[0]), parts[0])]
    if len(parts) > 3 and parts[2] == "src" and parts[0] not in _NOT_CRATES:
        # `lib/line-index/src/..`, `cranelift/codegen/src/..`: a crate one folder down, published
        # under its folder's name or with its parent's as a prefix (`cranelift-codegen`).
        folder = f"{parts[0]}/{parts[1]}"
        names = (canonical_crate(parts[1]), canonical_crate(f"{parts[0]}-{parts[1]}"))
        return [(name, folder) for name in names]
    if len(parts) > 1 and parts[0] == "src" and repo:
        return [(name, "") for name in sorted(repo_crate_names(repo))]
    return []
