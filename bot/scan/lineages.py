"""A catalog's release history: panic sites followed across a repository's tags as lineages.

A *lineage* is one panic site followed from release to release: its file, line and message in
every release it exists in, and the first release where it no longer exists. Linking two
consecutive releases pairs their sites in passes, most certain first:

1. same file, same message: several identical messages in one file are paired by enclosing
   function first, then by their order in the file (never by raw line numbers);
2. same message, another file (a move, a crate split such as burn-tensor `repr/` -> burn-ir):
   the same function or file name decides between several candidates;
3. same file, an edited message (similar, or a message that grew or shrank at its end);
4. another file *and* an edited message: only with the same function or file name, or a very
   close message;
5. a site that is new in this release but equals (same file and message) a lineage that ended
   earlier: the lineage reappears (a revert, a feature brought back).

`link_releases` is pure (lists in, lineages out); `scan_git_release` reads one tag of a git
repository (bare or not) through `git archive` and scans it with `bot.scan.rust.walk`.
The bundled history file (`*.ndjson` beside the catalog's records) is written by
`history_lines` and read back by `bot.core.match.releases`.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from rapidfuzz import fuzz, utils
from tree_sitter import Parser

from bot.catalog.model import CRATE_TAG_PREFIX, REMOVED_TAG_PREFIX
from bot.catalog.patterns import normalise_message
from bot.catalog.sites import site_id, skeleton_record, with_enclosing_fn
from bot.core.match.crates import canonical_crate, crate_folders
from bot.core.match.index import package_folder
from bot.core.match.releases import crate_and_inner
from bot.scan.rust.grammar import RUST_LANGUAGE
from bot.scan.rust.site_finder import PanicSite
from bot.scan.rust.walk import package_names, scan_tree

if TYPE_CHECKING:
    from bot.scan.builders import Builder

# A scan setting's builders and declared macros (`bot.scan.builders.load_scan_settings`).
ScanSettings = tuple["list[Builder]", dict[str, str]]

# Least similarity (rapidfuzz ratio, 0-100) for an edited message in the same file.
EDIT_CUTOFF = 80.0
# ... and in another file, when the function or file name backs the pairing.
MOVE_EDIT_CUTOFF = 85.0
# ... and in another file with nothing else in common.
FAR_EDIT_CUTOFF = 93.0
# ... in the same file and function, when each is that function's only site left unpaired in
# the release (a word inserted and a clause dropped in one edit: `Can't find {:?} in AstIdMap:
# {:?} source text: {}` -> `Can't find SyntaxNodePtr {:?} in AstIdMap: {:?}`) ...
FUNCTION_EDIT_CUTOFF = 60.0
# ... or reworded around the same words (`reworded_similarity`, a token-set ratio, which
# rates a few shared common words higher than a character ratio would).
REWORDED_CUTOFF = 65.0
# A message shorter than this moves to another file only with its function or file name.
SPECIFIC_MESSAGE_CHARS = 20
# A grown (or shortened) message keeps at least this many leading characters of the other.
GROWN_PREFIX_CHARS = 12
HISTORY_FORMAT = 1
HEAD = "HEAD"


@dataclass(frozen=True, slots=True)
class Release:
    version: str  # "0.16.0", or "HEAD"
    tag: str | None  # "v0.16.0"; None for a branch head
    commit: str  # full SHA


@dataclass(frozen=True, slots=True)
class SiteAt:
    """One panic site in one release."""

    file_path: str
    line: int
    kind: str
    message: str
    function: str | None = None  # the enclosing fn's name, when there is one
    # how the printed location relates (`track-caller`, `macro-body`), from the scanner
    tags: tuple[str, ...] = ()
    # what the code checks there (bot.scan.rust.checks), from the scanner
    check: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    # the package its file is in, when its path does not tell it (`walk.package_names`)
    package: str | None = field(default=None, compare=False)

    @property
    def key(self) -> str:
        return normalise_message(self.message)


@dataclass(slots=True)
class Lineage:
    """One site followed across releases: release index -> its state there."""

    states: dict[int, SiteAt] = field(default_factory=dict)
    id: str = ""

    def last(self) -> tuple[int, SiteAt]:
        index = max(self.states)
        return index, self.states[index]

    def present_in(self) -> list[int]:
        return sorted(self.states)


# ---------------------------------------------------------------------------------------------
# Similarity helpers, shared with `catalog update`
# ---------------------------------------------------------------------------------------------


def message_similarity(old: str, new: str, cutoff: float = 0.0) -> float:
    """0-100: rapidfuzz ratio of two normalised messages, or 90 for a message that grew or
    shrank at its end (`Bad shape` -> `Bad shape {shape:?} for tensor {id}`)."""
    if old == new:
        return 100.0
    short, long = (old, new) if len(old) <= len(new) else (new, old)
    if len(short) >= GROWN_PREFIX_CHARS and long.startswith(short.rstrip(" .:")):
        return max(90.0, fuzz.ratio(old, new, processor=None, score_cutoff=0))
    return fuzz.ratio(old, new, processor=None, score_cutoff=cutoff)


def reworded_similarity(old: str, new: str) -> float:
    """0-100: the rapidfuzz token-set ratio of the two messages' words (case, punctuation and
    placeholder braces aside), 0 when they share fewer than two words: a rewording that keeps
    the words but moves them (`Trying to access position outside the buffer: x={x}, y={y},
    area={:?}` -> `index outside of buffer: the area is {area:?} but index is ({x}, {y})`).
    Only for a pairing something else backs (one function's only sites)."""
    a, b = utils.default_process(old), utils.default_process(new)
    if len(set(a.split()) & set(b.split())) < 2:
        return 0.0
    return fuzz.token_set_ratio(a, b, processor=None)


def path_affinity(old: str, new: str) -> float:
    """0-1: how likely a site moved from file `old` to file `new`: the same file name counts,
    and so does each path component they share from the end (`repr/handle.rs` ~ `handle.rs`)."""
    if old == new:
        return 1.0
    a = PurePosixPath(old).parts
    b = PurePosixPath(new).parts
    if a[-1] != b[-1]:
        stem_a, stem_b = PurePosixPath(old).stem, PurePosixPath(new).stem
        return 0.2 if stem_a in ("mod", "lib", "base") and stem_b in ("mod", "lib", "base") else 0
    shared = 0
    for x, y in zip(reversed(a), reversed(b), strict=False):
        if x != y:
            break
        shared += 1
    return min(0.5 + 0.1 * shared, 0.9)


# ---------------------------------------------------------------------------------------------
# Linking
# ---------------------------------------------------------------------------------------------


def _pair_in_order(
    old: list[int], new: list[int], olds: Sequence[SiteAt], news: Sequence[SiteAt]
) -> list[tuple[int, int]]:
    """Pair identical messages of one file: same function first, then by order in the file."""
    pairs: list[tuple[int, int]] = []
    by_fn_old: dict[str | None, list[int]] = defaultdict(list)
    by_fn_new: dict[str | None, list[int]] = defaultdict(list)
    for i in old:
        by_fn_old[olds[i].function].append(i)
    for j in new:
        by_fn_new[news[j].function].append(j)
    rest_old: list[int] = []
    rest_new: list[int] = []
    for name in sorted(set(by_fn_old) | set(by_fn_new), key=lambda n: n or ""):
        a, b = by_fn_old.get(name, []), by_fn_new.get(name, [])
        if name is None:
            rest_old += a
            rest_new += b
            continue
        count = min(len(a), len(b))
        pairs.extend(zip(a[:count], b[:count], strict=True))
        rest_old += a[count:]
        rest_new += b[count:]
    rest_old.sort(key=lambda i: olds[i].line)
    rest_new.sort(key=lambda j: news[j].line)
    pairs.extend(zip(rest_old, rest_new, strict=False))
    return pairs


def _greedy(candidates: list[tuple[float, int, int]]) -> list[tuple[int, int]]:
    candidates.sort(key=lambda c: (-c[0], c[1], c[2]))
    used_old: set[int] = set()
    used_new: set[int] = set()
    pairs = []
    for _score, i, j in candidates:
        if i in used_old or j in used_new:
            continue
        used_old.add(i)
        used_new.add(j)
        pairs.append((i, j))
    return pairs


def link_sites(olds: Sequence[SiteAt], news: Sequence[SiteAt]) -> list[tuple[int, int, str]]:
    """Pair the sites of one release with those of the next: (old index, new index, how),
    `how` being "same", "moved", "edited" or "moved-edited". Unpaired sites are absent."""
    out: list[tuple[int, int, str]] = []
    free_old = set(range(len(olds)))
    free_new = set(range(len(news)))

    def take(pairs: Iterable[tuple[int, int]], how: str) -> None:
        for i, j in pairs:
            free_old.discard(i)
            free_new.discard(j)
            out.append((i, j, how))

    # 1. same file, same message
    groups_old: dict[tuple[str, str], list[int]] = defaultdict(list)
    groups_new: dict[tuple[str, str], list[int]] = defaultdict(list)
    keys_old = [s.key for s in olds]
    keys_new = [s.key for s in news]
    for i, s in enumerate(olds):
        groups_old[(s.file_path, keys_old[i])].append(i)
    for j, s in enumerate(news):
        groups_new[(s.file_path, keys_new[j])].append(j)
    for key, a in groups_old.items():
        b = groups_new.get(key)
        if b:
            take(_pair_in_order(a, b, olds, news), "same")

    # 2. same message, another file
    by_key_new: dict[str, list[int]] = defaultdict(list)
    for j in sorted(free_new):
        by_key_new[keys_new[j]].append(j)
    candidates: list[tuple[float, int, int]] = []
    for i in sorted(free_old):
        for j in by_key_new.get(keys_old[i], ()):
            affinity = _affinity(olds[i], news[j])
            if affinity > 0 or len(keys_old[i]) >= SPECIFIC_MESSAGE_CHARS:
                candidates.append((affinity, i, j))
    take(_greedy(candidates), "moved")

    # 3. same file, edited message
    by_file_new: dict[str, list[int]] = defaultdict(list)
    for j in sorted(free_new):
        by_file_new[news[j].file_path].append(j)
    candidates = []
    for i in sorted(free_old):
        for j in by_file_new.get(olds[i].file_path, ()):
            score = message_similarity(keys_old[i], keys_new[j], EDIT_CUTOFF)
            if score >= EDIT_CUTOFF:
                same_fn = olds[i].function is not None and olds[i].function == news[j].function
                candidates.append((score + (5 if same_fn else 0), i, j))
    take(_greedy(candidates), "edited")
    take(_sole_edits_of_functions(olds, news, free_old, free_new), "edited")

    # 4. another file and an edited message
    candidates = []
    rest_new = sorted(free_new)
    for i in sorted(free_old):
        for j in rest_new:
            score = message_similarity(keys_old[i], keys_new[j], MOVE_EDIT_CUTOFF)
            if score < MOVE_EDIT_CUTOFF:
                continue
            affinity = _affinity(olds[i], news[j])
            if affinity > 0 or (score >= FAR_EDIT_CUTOFF and len(keys_old[i]) >= 30):
                candidates.append((score + 10 * affinity, i, j))
    take(_greedy(candidates), "moved-edited")
    # 5. a function's only site left, its file moved to another crate in the same release
    take(_sole_edits_of_functions(olds, news, free_old, free_new, _folder_and_name), "moved-edited")
    return out


def _folder_and_name(file_path: str) -> str:
    """The file's name and its folder's (`inline/linebreak.rs`): what a file moved to another
    crate or folder keeps. Names every crate has (`src/lib.rs`, `parser/mod.rs`) say nothing of
    where a file went: those keep their whole path."""
    parts = PurePosixPath(file_path).parts
    if len(parts) < 2 or parts[-2] == "src" or parts[-1] in _EVERY_CRATES_FILES:
        return file_path
    return "/".join(parts[-2:])


_EVERY_CRATES_FILES = frozenset({"lib.rs", "mod.rs", "main.rs", "error.rs", "build.rs"})


def _sole_edits_of_functions(
    olds: Sequence[SiteAt],
    news: Sequence[SiteAt],
    free_old: set[int],
    free_new: set[int],
    file_key: Callable[[str], str] = lambda path: path,
) -> list[tuple[int, int]]:
    """Pairs of an unpaired old and new site that are the only unpaired ones of one function
    of one file (the file as `file_key` names it), and whose messages are still alike
    (`FUNCTION_EDIT_CUTOFF`)."""
    by_function_old: dict[tuple[str, str], list[int]] = defaultdict(list)
    by_function_new: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i in sorted(free_old):
        if olds[i].function:
            by_function_old[(file_key(olds[i].file_path), olds[i].function or "")].append(i)
    for j in sorted(free_new):
        if news[j].function:
            by_function_new[(file_key(news[j].file_path), news[j].function or "")].append(j)
    pairs = []
    for key, old in by_function_old.items():
        new = by_function_new.get(key, [])
        if len(old) == 1 and len(new) == 1:
            a, b = olds[old[0]].key, news[new[0]].key
            if (
                message_similarity(a, b, FUNCTION_EDIT_CUTOFF) >= FUNCTION_EDIT_CUTOFF
                or reworded_similarity(a, b) >= REWORDED_CUTOFF
            ):
                pairs.append((old[0], new[0]))
    return pairs


def _affinity(old: SiteAt, new: SiteAt) -> float:
    same_fn = old.function is not None and old.function == new.function
    return path_affinity(old.file_path, new.file_path) + (0.5 if same_fn else 0.0)


def link_releases(sites_by_release: Sequence[Sequence[SiteAt]]) -> list[Lineage]:
    """Follow every site through the releases, oldest first. Lineages come out ordered by
    where they are last seen (file, line)."""
    lineages: list[Lineage] = []
    active: list[int] = []  # lineage indices present in the previous release
    for r, sites in enumerate(sites_by_release):
        active = link_release(lineages, r, sites, active)
    return lineages


def link_release(
    lineages: list[Lineage], r: int, sites: Sequence[SiteAt], active: Sequence[int]
) -> list[int]:
    """Add release `r` to `lineages` (in place): `active` are the lineages present in release
    `r - 1`; sites nobody continues start new lineages (with no id yet). Returns the lineages
    present in `r`. `catalog refresh` calls it for one new release at a time."""
    previous = [lineages[k].states[r - 1] for k in active] if r else []
    pairs = link_sites(previous, sites)
    next_active: list[int] = []
    paired_new: set[int] = set()
    for i, j, _how in pairs:
        lineage = lineages[active[i]]
        lineage.states[r] = sites[j]
        next_active.append(active[i])
        paired_new.add(j)
    # 5. sites that come back: a lineage that ended earlier, same message.
    dormant = [k for k, lin in enumerate(lineages) if lin.states and r not in lin.states]
    dormant = [k for k in dormant if k not in set(active)]
    newcomers = [j for j in range(len(sites)) if j not in paired_new]
    if dormant and newcomers:
        olds = [lineages[k].last()[1] for k in dormant]
        news = [sites[j] for j in newcomers]
        for i, j, how in link_sites(olds, news):
            if how != "same":
                continue  # a gap and a move: more likely another site with its message
            lineages[dormant[i]].states[r] = news[j]
            next_active.append(dormant[i])
            paired_new.add(newcomers[j])
    for j, site in enumerate(sites):
        if j not in paired_new:
            lineages.append(Lineage({r: site}))
            next_active.append(len(lineages) - 1)
    return next_active


def assign_ids(lineages: list[Lineage], repo: str) -> None:
    """Stable ids: the site id (`bot.catalog.sites.site_id`) of the lineage's last state, so a
    lineage alive at the newest release has its skeleton record's id."""
    order = sorted(
        range(len(lineages)),
        key=lambda k: (
            -max(lineages[k].states),
            lineages[k].last()[1].file_path,
            lineages[k].last()[1].message,
            lineages[k].last()[1].line,
        ),
    )
    taken: set[str] = set()
    seen: dict[tuple[str, str], int] = defaultdict(int)
    for k in order:
        _index, state = lineages[k].last()
        key = (state.file_path, state.message)
        occurrence = seen[key]
        rid = site_id(repo, state.file_path, state.message, occurrence)
        while rid in taken:
            occurrence += 1
            rid = site_id(repo, state.file_path, state.message, occurrence)
        seen[key] = occurrence + 1
        taken.add(rid)
        lineages[k].id = rid


# ---------------------------------------------------------------------------------------------
# Reading releases from git
# ---------------------------------------------------------------------------------------------

_TEST_HELPER_CRATE = re.compile(r"-(tests?|testgen|checks)$")


def is_runtime_path(file_path: str) -> bool:
    """Whether a site's file is runtime code, as `catalog scan` reads a checkout: in no
    test-helper crate at any depth (burn-no-std-tests, a crate's nested `multinode-tests` or
    `model-checks`, *-testgen, xtask, a top-level `backend-comparison/build.rs`); tests,
    benches and examples are never walked. A crate need not keep its files under `src/`
    (deno's `cli/lib.rs`)."""
    return not any(is_test_helper_crate(folder) for folder in file_path.split("/")[:-1])


def is_test_helper_crate(folder: str) -> bool:
    """A crate folder that only tests or builds the others (burn-no-std-tests, *-testgen,
    xtask): its panics never reach a user's issue."""
    return bool(_TEST_HELPER_CRATE.search(folder)) or folder in ("xtask", "backend-comparison")


def git(repo_dir: str | Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo_dir), *args], check=True, capture_output=True, text=True
    )
    return done.stdout


def release_tags(repo_dir: str | Path, pattern: str | None = None) -> list[str]:
    """Release tags, oldest version first: `vX.Y.Z` (and `-pre.N` only when `pattern` asks)."""
    tags = git(repo_dir, "tag", "--list").split()
    wanted = re.compile(pattern) if pattern else re.compile(r"^v?\d+\.\d+\.\d+$")
    return sorted((t for t in tags if wanted.search(t)), key=version_key)


# A release tag's version: `v0.18.0`, `0.5.1`, one crate's tag in a monorepo (`tokio-1.38.0`,
# `rs-0.40.0`, release-plz's `ratatui-core-v0.1.0`), a calendar release (`25.01`, `24.07.1`), a
# dated one (`2024-07-01`), behind folders (`cli/v1.9.4`) or a package's name and `@`
# (changesets' `@scope/name@2.3.10`, `name@0.4.0`).
_TAG_VERSION = re.compile(
    r"^(?:[^/\s]{1,200}/){0,8}"
    r"(?:v|[A-Za-z][A-Za-z0-9_.]*(?:-[A-Za-z][A-Za-z0-9_.]*)*-v?|[A-Za-z0-9_.-]{1,200}@v?)?"
    r"(\d+\.\d+(?:\.\d+)?(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?|\d{4}-\d{2}-\d{2})$"
)
# (a `+build` suffix sorts as its version, as it always did)
_VERSION_PARTS = re.compile(
    r"^(\d+)\.(\d+)(?:\.(\d+))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$"
    r"|^(\d{4})-(\d{2})-(\d{2})$"
)


def version_key(tag: str) -> tuple:
    match = _VERSION_PARTS.match(version_of(tag))
    if not match:
        return (1 << 30, tag)
    major, minor, patch, pre, year, month, day = match.groups()
    if year is not None:
        return (int(year), int(month), int(day), (1, ()))
    # A pre-release sorts before its release.
    pre_key = (0, tuple(_num_or_text(p) for p in pre.split("."))) if pre else (1, ())
    return (int(major), int(minor), int(patch or 0), pre_key)


def _num_or_text(part: str) -> tuple[int, Any]:
    return (0, int(part)) if part.isdigit() else (1, part)


def version_of(tag: str) -> str:
    """The version a release tag names (`v0.18.0` -> `0.18.0`, `tokio-1.38.0` -> `1.38.0`);
    any other tag is its own version (`HEAD`)."""
    match = _TAG_VERSION.match(tag)
    return match.group(1) if match else tag


class MissingBlobError(OSError):
    """A `.rs` file of the release is missing from the repository's object store."""

    def __init__(self, path: str, ref: str) -> None:
        super().__init__(2, f"its content is missing from the repository at {ref[:12]}", path)


def extract_tree(repo_dir: str | Path, ref: str, target: Path, paths: Sequence[str] = ()) -> None:
    """The `.rs` files and the `Cargo.toml` manifests of `ref` (only under the folders `paths`,
    when given, and the root's manifest) under `target` (all the scanner reads), from the object
    store: unlike `git archive`, this works on a partial clone missing some large non-Rust
    blobs."""
    listing = subprocess.run(
        ["git", "-C", str(repo_dir), "ls-tree", "-r", "-z", ref, "--", *paths]
        + (["Cargo.toml"] if paths else []),
        check=True,
        capture_output=True,
    ).stdout.split(b"\0")
    wanted: list[tuple[str, str]] = []
    for entry in listing:
        if not entry:
            continue
        meta, _, path = entry.partition(b"\t")
        mode, kind, sha = meta.split()
        wanted_file = path.endswith(b".rs") or path.rsplit(b"/", 1)[-1] == b"Cargo.toml"
        if kind == b"blob" and wanted_file and mode != b"120000":
            wanted.append((sha.decode(), path.decode("utf-8", errors="surrogateescape")))
    if not wanted:
        return
    batch = subprocess.run(
        ["git", "-C", str(repo_dir), "cat-file", "--batch"],
        input=b"".join(f"{sha}\n".encode() for sha, _ in wanted),
        check=True,
        capture_output=True,
    ).stdout
    pos = 0
    for _sha, relative in wanted:
        header_end = batch.index(b"\n", pos)
        header = batch[pos:header_end].split()
        pos = header_end + 1
        if len(header) < 3 or header[1] == b"missing":
            # A file the scan would read is not there (a damaged or partial mirror): a catalog
            # built without it would call its live panics removed, so nothing is built.
            raise MissingBlobError(relative, ref)
        size = int(header[2])
        body = batch[pos : pos + size]
        pos += size + 1
        destination = target / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(body)


def enclosing_functions(source: bytes, lines: Iterable[int]) -> dict[int, str]:
    """For each 1-based line, the name of the innermost `fn` around it (lines outside any fn
    are left out)."""
    wanted = sorted(set(lines))
    if not wanted:
        return {}
    tree = Parser(RUST_LANGUAGE).parse(source.replace(b"\r\n", b"\n"))
    spans: list[tuple[int, int, str]] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "function_item":
            name = node.child_by_field_name("name")
            if name is not None and name.text is not None:
                spans.append((node.start_point.row + 1, node.end_point.row + 1, name.text.decode()))
        stack.extend(node.named_children)
    out: dict[int, str] = {}
    for line in wanted:
        inner = [s for s in spans if s[0] <= line <= s[1]]
        if inner:
            out[line] = max(inner, key=lambda s: s[0])[2]
    return out


def scan_checkout(
    root: Path, *, runtime_only: bool = True, settings: ScanSettings | None = None
) -> list[SiteAt]:
    """The sites of a checkout, each with its enclosing function."""
    builders, macros = settings or ([], {})
    found = scan_tree(root, builders=builders, macros=macros)
    by_file: dict[str, list[PanicSite]] = defaultdict(list)
    for site in found:
        if not site.message_format.strip():
            continue  # `panic!("")` says nothing to match on
        if runtime_only and not is_runtime_path(site.file_path):
            continue
        by_file[site.file_path].append(site)
    out: list[SiteAt] = []
    packages = package_names(root, by_file)
    for path, sites in by_file.items():
        functions = enclosing_functions((root / path).read_bytes(), (s.line for s in sites))
        out.extend(
            SiteAt(
                s.file_path,
                s.line,
                s.kind,
                s.message_format,
                functions.get(s.line),
                s.tags,
                s.check,
                packages.get(path),
            )
            for s in sites
        )
    out.sort(key=lambda s: (s.file_path, s.line, s.message))
    return out


def scan_git_release(
    repo_dir: str | Path,
    ref: str,
    *,
    runtime_only: bool = True,
    paths: Sequence[str] = (),
    settings: ScanSettings | None = None,
) -> list[SiteAt]:
    with tempfile.TemporaryDirectory(prefix="history-") as tmp:
        extract_tree(repo_dir, ref, Path(tmp), paths)
        return scan_checkout(Path(tmp), runtime_only=runtime_only, settings=settings)


# ---------------------------------------------------------------------------------------------
# The history file
# ---------------------------------------------------------------------------------------------


def lineage_json(
    lineage: Lineage,
    release_count: int,
    records: Sequence[str] = (),
    events: Sequence[list[Any]] = (),
) -> dict:
    """`{"lineage": id, "records": [...], "spans": [[first, last, file, message, kind]],
    "lines": [...], "events": [[kind, version, sha, detail?]]}`: `spans` are runs of releases
    (indices) with one file and message; `lines` has the line in each release, 0 where the site
    does not exist; `events` the commits that changed it (`bot.scan.history_facts`)."""
    spans: list[list[Any]] = []
    for r in lineage.present_in():
        s = lineage.states[r]
        last = spans[-1] if spans else None
        if (
            last
            and last[1] == r - 1
            and (last[2], last[3], last[4])
            == (
                s.file_path,
                s.message,
                s.kind,
            )
        ):
            last[1] = r
        else:
            spans.append([r, r, s.file_path, s.message, s.kind])
    lines = [lineage.states[r].line if r in lineage.states else 0 for r in range(release_count)]
    out: dict[str, Any] = {"lineage": lineage.id}
    if records:
        out["records"] = list(records)
    out["spans"] = spans
    out["lines"] = lines
    if events:
        out["events"] = [list(e) for e in events]
    return out


def history_header(
    repo: str,
    releases: Sequence[Release],
    subjects: dict[str, str] | None = None,
    packages: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The first line; `commits` (sha -> subject) holds the subjects the events name,
    `packages` (package -> crate folder) the packages not named as their folder."""
    out: dict[str, Any] = {
        "history": HISTORY_FORMAT,
        "repo": repo,
        "releases": [{"version": r.version, "tag": r.tag, "commit": r.commit} for r in releases],
    }
    if subjects:
        out["commits"] = dict(sorted(subjects.items()))
    if packages:
        out["packages"] = dict(sorted(packages.items()))
    return out


def package_folders(history: History) -> dict[str, str]:
    """Package -> where its files are in the history: the crate folder its sites' paths name,
    then the folders down to the package's own (`tools/gen` for `crates/tools/gen/src/..`), for
    packages published under another name than their folder's (`wasmtime-fiber` in
    `crates/fiber`, `demo-core` at the root of someone/demo, which the history names by its
    repository, `demo`); the oldest lineage's wins."""
    out: dict[str, str] = {}
    for lineage in history.lineages:
        for state in lineage.states.values():
            if not state.package:
                continue
            crate, inner = crate_and_inner(state.file_path)
            if crate is None and state.file_path.startswith("src/"):
                crate = history.repo.rsplit("/", 1)[-1]
            told = {name for name, _folder in crate_folders(state.file_path, history.repo)}
            if crate is None or canonical_crate(state.package) in told:
                continue
            held_in = state.file_path[: len(state.file_path) - len(inner)]  # the crate's folder
            below = package_folder(state.file_path)[len(held_in) :].strip("/")
            out.setdefault(state.package, f"{crate}/{below}" if below else crate)
    return out


ProgressFn = Callable[[Release, int, float], None]  # (release, sites, seconds)


@dataclass(slots=True)
class History:
    repo: str
    releases: list[Release]
    lineages: list[Lineage]
    timings: list[float] = field(default_factory=list)  # seconds to scan each release


def build_history(
    repo_dir: str | Path,
    repo: str,
    *,
    tags: Sequence[str],
    head_ref: str | None = None,
    progress: ProgressFn | None = None,
    paths: Sequence[str] = (),
    settings: ScanSettings | None = None,
) -> History:
    """Scan each tag (and `head_ref` last, as the release "HEAD") and link them; `paths`:
    only these folders (a repository's crates that a catalog covers), `settings`: the scan
    setting's builders and declared macros."""
    refs: list[tuple[str, str | None]] = [(version_of(t), t) for t in tags]
    if head_ref:
        refs.append((HEAD, None))
    releases: list[Release] = []
    scans: list[list[SiteAt]] = []
    timings: list[float] = []
    for version, tag in refs:
        ref = tag or head_ref or HEAD
        started = time.monotonic()
        commit = git(repo_dir, "rev-parse", f"{ref}^{{commit}}").strip()
        sites = scan_git_release(repo_dir, ref, paths=paths, settings=settings)
        release = Release(version, tag, commit)
        elapsed = time.monotonic() - started
        releases.append(release)
        scans.append(sites)
        timings.append(elapsed)
        if progress is not None:
            progress(release, len(sites), elapsed)
    lineages = link_releases(scans)
    assign_ids(lineages, repo)
    return History(repo, releases, lineages, timings)


def _site_key(file_path: str, message: str) -> tuple[str, str]:
    return (file_path, normalise_message(message))


def attach_records(history: History, records: Iterable[dict[str, Any]]) -> dict[str, list[str]]:
    """Lineage id -> ids of written-up records (seeds) describing it: same file and message as
    one of its states, the newest state first; a record attaches to one lineage only."""
    by_site: dict[tuple[str, str], list[tuple[int, str]]] = defaultdict(list)
    for lineage in history.lineages:
        for r, state in lineage.states.items():
            by_site[_site_key(state.file_path, state.message)].append((r, lineage.id))
    out: dict[str, list[str]] = defaultdict(list)
    for record in records:
        path, message, rid = record.get("filePath"), record.get("errorMessage"), record.get("id")
        if not isinstance(path, str) or not isinstance(message, str) or rid == "":
            continue
        found = by_site.get(_site_key(path, message))
        if not found:
            continue
        line = record.get("lineNumber")
        # Several lineages can share file and message: the one nearest the record's line.
        newest = max(r for r, _ in found)
        chosen = [lid for r, lid in found if r == newest]
        if isinstance(line, int) and len(chosen) > 1:
            lines = {
                lin.id: lin.states[newest].line for lin in history.lineages if lin.id in chosen
            }
            chosen.sort(key=lambda lid: abs(lines[lid] - line))
        if chosen[0] != rid:
            out[chosen[0]].append(str(rid))
    return out


def lineage_records(history: History) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Skeleton records: (sites of the newest release, sites gone by then). A gone site is
    pinned to the last release it was in, and tagged `removed-at:<commit>` with the commit of
    the first release without it (as `catalog update` tags it), `removed-in:<version>` and
    `last-seen-in:<version>`."""
    newest = len(history.releases) - 1
    live: list[dict[str, Any]] = []
    gone: list[dict[str, Any]] = []
    for lineage in history.lineages:
        last, state = lineage.last()
        release = history.releases[last]
        record = skeleton_record(
            repo=history.repo,
            file_path=state.file_path,
            line=state.line,
            kind=state.kind,
            message_format=state.message,
            commit=release.commit,
        )
        record["id"] = lineage.id
        record = with_enclosing_fn(record, state.function)
        if state.tags:
            record["tags"] = [*record["tags"], *state.tags]
        if state.check:
            record["check"] = dict(state.check)
        told = {crate for crate, _folder in crate_folders(state.file_path, history.repo)}
        if state.package and canonical_crate(state.package) not in told:
            # the package's name, not the folder's
            kept = [t for t in record["tags"] if not t.startswith(CRATE_TAG_PREFIX)]
            record["tags"] = [*kept, f"{CRATE_TAG_PREFIX}{state.package}"]
        if last == newest:
            live.append(record)
            continue
        removed = history.releases[last + 1]
        record["tags"] = [
            *record["tags"],
            f"{REMOVED_TAG_PREFIX}{removed.commit}",
            f"removed-in:{removed.version}",
            f"last-seen-in:{release.version}",
        ]
        gone.append(record)
    order = lambda r: (r["filePath"], r["lineNumber"], r["errorMessage"])  # noqa: E731
    return sorted(live, key=order), sorted(gone, key=order)


def history_lines(
    history: History,
    attached: dict[str, list[str]] | None = None,
    events: dict[str, list[list[Any]]] | None = None,
    subjects: dict[str, str] | None = None,
) -> list[str]:
    count = len(history.releases)
    rows = [history_header(history.repo, history.releases, subjects, package_folders(history))]
    ordered = sorted(
        history.lineages, key=lambda lin: (lin.last()[1].file_path, lin.last()[1].line, lin.id)
    )
    for lineage in ordered:
        rows.append(
            lineage_json(
                lineage,
                count,
                (attached or {}).get(lineage.id, ()),
                (events or {}).get(lineage.id, ()),
            )
        )
    return [json.dumps(row, ensure_ascii=False, separators=(",", ":")) for row in rows]
