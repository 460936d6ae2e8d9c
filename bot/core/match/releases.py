"""The catalog's release history, used when matching: where each site lived in every release.

A catalog folder may hold a history file (`history.ndjson`, written by `triage-bot catalog
history`): the repository's releases, then one *lineage* per panic site with its file, line and
message in each release. A pasted location names a crate, a file and a line, and often a version
(`burn-tensor-0.16.0/src/..`, a `Cargo.lock` entry, "burn 0.18" in the text). With the history:

* an exact (crate, version, file, line) hit on a lineage is strong evidence, even when the
  message was garbled on its way to the issue;
* when the pasted file never held the message in any release but its crate did (at the user's
  version), the crate's lineage is the answer (a site raised through a macro or a
  `#[track_caller]` function is reported at its caller);
* a message matching a site while the pasted file and crate never held that message in any
  release is evidence against: no confident answer;
* between records that share a message, the one that existed in the user's version wins, and a
  removed site never outranks a live one unless the paste points at it.

Pure: the history's lines, records and matches in, decisions out. The app (bot.app) reads the
catalog's history file and gives the parsed `ReleaseHistory` to the matcher (`revise` is the
matcher's hook) and to the renderers (`story_of`, `project_name`).
"""

from __future__ import annotations

import json
import pickle
import re
from collections import Counter
from collections.abc import Container, Iterable, Iterator, Mapping, MutableSequence, Sequence
from functools import lru_cache
from typing import Any, Literal, TypeVar, overload

from bot.catalog.model import (
    CRATE_TAG_PREFIX,
    MACRO_BODY_TAG,
    PROC_MACRO_OUTPUT_TAG,
    TRACK_CALLER_TAG,
    Record,
    field,
    replace,
    value_class,
)
from bot.catalog.patterns import normalise_message
from bot.core.analysis import Candidate, Evidence, PanicMatch, with_step
from bot.core.extract.paths import is_absolute, normalise_path
from bot.core.match.answer_rule import revised, stronger_first
from bot.core.match.crates import repo_crate_names
from bot.core.match.scorer import WEIGHTS
from bot.core.match.std_messages import is_std_message

HISTORY_FILE_SUFFIX = ".ndjson"
# Confidence of an exact (crate, version, file, line) hit whose message is consistent.
RELEASE_HIT_CONFIDENCE = WEIGHTS.release_line
# ... of a hit in the pasted file at another line, or in the pasted crate (a caller's location).
FILE_HIT_CONFIDENCE = WEIGHTS.release_file
CRATE_HIT_CONFIDENCE = WEIGHTS.release_crate
# A message the pasted file and crate never held is answered with at most this.
AGAINST_CAP = WEIGHTS.cap_against_history
# Lines within this distance count as the same site (a patch release shifting a few lines).
NEAR_LINES = 3
# The crate of `by_file` keys for files outside any `src/` layout, kept by repository path.
REPO_FILE = ""

_PLACEHOLDER = re.compile(r"\{[^{}]*\}")


@lru_cache(maxsize=64)
def _version_patterns(name: str) -> tuple[re.Pattern, ...]:
    """How a text names a version of the project `name` (`burn`, `tokio`) or of one of its
    crates (`burn-core`): a Cargo.lock entry, a Cargo.toml table, prose, a registry path
    (`hyper-0.12.36/src/..` in a frame or a crash report's payload).

    The patterns start with the literal name and check the word boundary behind it
    (`(?<!\\wburn)`): a leading `\\b` would make the engine try every position of a long paste.
    """
    word = re.escape(name)
    version = r"(\d+\.\d+(?:\.\d+)?)"
    # Cargo.lock: name = "burn-core"\nversion = "0.16.0"
    lock = re.compile(
        rf'name\s*=\s*"{word}(?:[-_][a-z_-]+)?"\s*\n\s*version\s*=\s*"(\d+\.\d+\.\d+)"'
    )
    # Cargo.toml: burn = { version = "0.17.0", ... }
    toml = re.compile(
        rf"{word}(?<!\w{word})(?:[-_][a-z]+)?\s*=\s*\{{[^}}\n]{{0,80}}?version\s*=\s*\"v?{version}"
    )
    # `burn 0.18`, `burn = "0.16.0"`, `burn v0.17.1`, `burn-core 0.13`
    prose = re.compile(
        rf"{word}(?<!\w{word})(?:[-_][a-z]+)?\s*(?:=\s*)?[\"']?\s*(?:version\s*)?v?{version}\b",
        re.IGNORECASE,
    )
    # .cargo/registry/src/index/burn-core-0.16.0/src/..: the folder cargo unpacks a release to
    registry = re.compile(rf"{word}(?<=[/\\]{word})(?:[-_][a-z]+)?-(\d+\.\d+\.\d+)[/\\]src[/\\]")
    return lock, toml, prose, registry


@value_class(frozen=True)
class ReleaseInfo:
    version: str
    tag: str | None
    commit: str


# What a commit did to a lineage (the history file's `events`, issue 24).
EventKind = Literal["introduced", "changed", "removed", "moved", "fixed"]
_PR_SUFFIX = re.compile(r"\s*\(#(\d+)\)\s*$")


@value_class(frozen=True)
class HistoryEvent:
    """One commit's change to a lineage: `version` is the first release that shipped it (None
    while unreleased), `pr` and `title` come from the commit's subject (`... (#4393)`), `detail`
    names where a moved site went (`tracel-ai/burn-onnx`) or the crate a removal took with it."""

    event: EventKind
    version: str | None
    commit: str
    pr: int | None
    title: str
    url: str
    detail: str | None = None


def subject_parts(subject: str) -> tuple[int | None, str]:
    """(PR number, title) of a squash-merge subject: `Move ONNX crates (#4393)` -> (4393, ...)."""
    found = _PR_SUFFIX.search(subject)
    if found is None:
        return None, subject.strip()
    return int(found.group(1)), subject[: found.start()].strip()


@value_class
class LineageInfo:
    id: str
    records: tuple[str, ...]  # written-up records attached to it (seeds)
    spans: list[tuple[int, int, str, str, str]]  # (first, last release, file, message, kind)
    lines: list[int]  # per release; 0 where absent
    events: tuple[HistoryEvent, ...] = ()  # oldest first

    def state(self, release: int) -> tuple[str, int, str] | None:
        """(file, line, message) in a release, or None when the site did not exist there."""
        line = self.lines[release] if release < len(self.lines) else 0
        if not line:
            return None
        for first, last, file, message, _kind in self.spans:
            if first <= release <= last:
                return file, line, message
        return None

    def present(self) -> list[int]:
        return [r for r, line in enumerate(self.lines) if line]


class Lineages(MutableSequence[LineageInfo]):
    """A history's lineages; read from the cache, each is kept pickled until first asked for.

    Unpickling the combined catalog's 5,000 lineages and 8,000 events as objects was most of a
    cold `triage-bot match` (0.13 s); a match reads a handful of them."""

    __slots__ = ("_items",)

    def __init__(self, items: Iterable[LineageInfo | bytes] = ()) -> None:
        self._items: list[LineageInfo | bytes] = list(items)

    def _built(self, index: int) -> LineageInfo:
        item = self._items[index]
        if isinstance(item, bytes):
            item = self._items[index] = pickle.loads(item)
        return item

    @overload
    def __getitem__(self, index: int) -> LineageInfo: ...
    @overload
    def __getitem__(self, index: slice) -> Lineages: ...
    def __getitem__(self, index: int | slice) -> LineageInfo | Lineages:
        if isinstance(index, slice):
            return Lineages(self._built(i) for i in range(len(self._items))[index])
        return self._built(index)

    @overload
    def __setitem__(self, index: int, value: LineageInfo) -> None: ...
    @overload
    def __setitem__(self, index: slice, value: Iterable[LineageInfo]) -> None: ...
    def __setitem__(self, index: int | slice, value: Any) -> None:
        if isinstance(index, slice):
            self._items[index] = list(value)
        else:
            self._items[index] = value

    def __delitem__(self, index: int | slice) -> None:
        del self._items[index]

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[LineageInfo]:
        return (self._built(i) for i in range(len(self._items)))

    def insert(self, index: int, value: LineageInfo) -> None:
        self._items.insert(index, value)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Lineages | list):
            return list(self) == list(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"Lineages({len(self._items)})"

    def __reduce__(self) -> tuple[Any, ...]:
        blobs = [
            item if isinstance(item, bytes) else pickle.dumps(item, pickle.HIGHEST_PROTOCOL)
            for item in self._items
        ]
        return (Lineages, (blobs,))


@value_class
class ReleaseHistory:
    repo: str
    releases: list[ReleaseInfo]
    lineages: MutableSequence[LineageInfo]
    # (crate, path inside it) -> [(lineage index, first release, last release)]
    by_file: dict[tuple[str, str], list[tuple[int, int, int]]] = field(default_factory=dict)
    # crate -> {normalised message: [(lineage index, first release, last release)]}
    by_crate: dict[str, dict[str, list[tuple[int, int, int]]]] = field(default_factory=dict)
    by_record: dict[str, int] = field(default_factory=dict)
    live: set[int] = field(default_factory=set)  # lineages present in the newest release
    # package -> crate folder, for packages published under another name (the header's
    # `packages`): `by_crate` and `by_file` know them by both
    packages: dict[str, str] = field(default_factory=dict)
    # Messages no live site prints, by how their text opens (`removed_by_opening`), built on
    # first use: a paste without a location is weighed against them.
    removed_openings: dict[str, list[tuple[str, list[tuple[int, int, int]]]]] | None = field(
        default=None, compare=False, repr=False
    )
    # Every crate message by how its text opens (`wordings_by_opening`), built on first use:
    # a paste without a location that no record's wording matches is looked up there.
    wording_openings: dict[str, list[tuple[str, list[tuple[int, int, int]]]]] | None = field(
        default=None, compare=False, repr=False
    )
    # The same, only those saying enough alone, each with what a whole fit checks (`_Wording`):
    # every location-less paste is looked up there, in each project's history.
    older_wordings: dict[str, list[_Wording]] | None = field(
        default=None, compare=False, repr=False
    )
    # Labels many of the project's messages open with (`internal error: `), built on first use:
    # sharing one says nothing of which message a garbled paste was (`common_labels`).
    shared_labels: frozenset[str] | None = field(default=None, compare=False, repr=False)

    @property
    def newest(self) -> int:
        return len(self.releases) - 1

    def releases_for(self, version: str | None) -> list[int]:
        """Release indices for a pasted version: `0.16.0` -> that release, `0.18` -> every
        0.18.x; an unknown or missing version -> every release."""
        if not version:
            return list(range(len(self.releases)))
        exact = [i for i, r in enumerate(self.releases) if r.version == version]
        if exact:
            return exact
        prefix = version.rstrip(".") + "."
        found = [i for i, r in enumerate(self.releases) if r.version.startswith(prefix)]
        if found:
            return found
        # `0.16.2` with no such tag: its minor series.
        minor = ".".join(version.split(".")[:2]) + "."
        found = [i for i, r in enumerate(self.releases) if r.version.startswith(minor)]
        return found or list(range(len(self.releases)))

    def record_id(self, lineage: LineageInfo, known: Container[str]) -> str | None:
        """The catalog record answering for a lineage: its write-up if attached, else its own."""
        for rid in (*lineage.records, lineage.id):
            if rid in known:
                return rid
        return None


# What a package folder's code lives in besides `src/`: its build script (`build.rs`, or a
# folder a manifest's `build =` names, `build/main.rs`; a `src/build/` is a module).
_PACKAGE_CODE = frozenset({"build.rs", "build"})


def crate_and_inner(file_path: str) -> tuple[str | None, str]:
    """(crate folder, path inside it): `crates/burn-ir/src/handle.rs` -> (burn-ir, src/handle.rs);
    older layouts kept crates at the top (`burn-tensor/src/..`, `openssl-sys/build.rs`)."""
    parts = file_path.split("/")
    if len(parts) > 2 and parts[0] == "crates":
        return parts[1], "/".join(parts[2:])
    if len(parts) > 1 and (parts[1] == "src" or (parts[0] != "src" and parts[1] in _PACKAGE_CODE)):
        return parts[0], "/".join(parts[1:])
    return None, file_path


def file_key(history: ReleaseHistory, file: str) -> tuple[str, str]:
    """The `by_file` key of a repository path: (crate, path inside it)."""
    crate, inner = crate_and_inner(file)
    if crate is None and inner.startswith("src/"):
        # A single-crate repository (ndarray): named after it.
        return history.repo.rsplit("/", 1)[-1], inner
    if crate is None:
        # A crate without a `src/` folder (deno's `cli/lib.rs`): its path in the repository.
        return REPO_FILE, file
    return crate, inner


def parse_history(lines: list[str]) -> ReleaseHistory | None:
    """The history in a history file's lines; None when they hold none. A malformed file
    raises ValueError, KeyError, TypeError, IndexError or RecursionError (a reader skips it)."""
    rows = [json.loads(line) for line in lines if line.strip()]
    if not rows or "history" not in rows[0]:
        return None
    header = rows[0]
    releases = [ReleaseInfo(r["version"], r.get("tag"), r["commit"]) for r in header["releases"]]
    history = ReleaseHistory(header["repo"], releases, Lineages())
    subjects: dict[str, str] = header.get("commits", {})
    for row in rows[1:]:
        spans = [tuple(s) for s in row["spans"]]
        events = tuple(_event(history, subjects, e) for e in row.get("events", ()))
        lineage = LineageInfo(
            row["lineage"], tuple(row.get("records", ())), spans, row["lines"], events
        )
        index = len(history.lineages)
        history.lineages.append(lineage)
        if lineage.state(len(releases) - 1) is not None:
            history.live.add(index)
        history.by_record[lineage.id] = index
        for rid in lineage.records:
            history.by_record.setdefault(rid, index)
        for first, last, file, message, _kind in spans:
            crate, inner = file_key(history, file)
            # A span is a run of releases the site is in: stored once, expanded on query.
            entry = (index, first, last)
            history.by_file.setdefault((crate, inner), []).append(entry)
            if crate == REPO_FILE:
                continue  # no crate to fall back on
            by_message = history.by_crate.setdefault(crate, {})
            by_message.setdefault(normalise_message(message), []).append(entry)
    _add_packages(history, header.get("packages", {}))
    return history


def _add_packages(history: ReleaseHistory, packages: dict[str, str]) -> None:
    """A registry path names a package as published (`demo-core-0.3.0/src/lib.rs`), the
    history its crate folder (`demo`, the repository's root; `tools` and then `gen/src/..` for
    `crates/tools/gen`): the package's name stands for it."""
    if not isinstance(packages, dict):
        raise TypeError("a history's `packages` maps package names to crate folders")
    aliases: dict[str, tuple[str, str]] = {}  # package -> (crate, the folders below it)
    for package, where in sorted(packages.items()):
        crate, _, below = str(where).partition("/")
        if package != where and crate in history.by_crate and package not in history.by_crate:
            aliases[str(package)] = (crate, f"{below}/" if below else "")
    if not aliases:
        return
    history.packages = {package: crate for package, (crate, _below) in aliases.items()}
    for package, (crate, _below) in aliases.items():
        history.by_crate[package] = history.by_crate[crate]
    for (crate, inner), entries in list(history.by_file.items()):
        for package, (held_in, below) in aliases.items():
            if held_in == crate and inner.startswith(below):
                history.by_file.setdefault((package, inner[len(below) :]), entries)


def _event(history: ReleaseHistory, subjects: dict[str, str], row: list[Any]) -> HistoryEvent:
    """`[kind, version or null, sha, detail?]`: the version is the first release that shipped
    the commit (null: in no release yet)."""
    kind, version, commit = row[0], row[1], row[2]
    if kind not in ("introduced", "changed", "removed", "moved", "fixed"):
        raise ValueError(f"unknown history event {kind!r}")
    if version is not None and not isinstance(version, str):
        raise TypeError("a history event's version is a string or null")
    pr, title = subject_parts(subjects.get(commit, ""))
    url = (
        f"https://github.com/{history.repo}/pull/{pr}"
        if pr is not None
        else f"https://github.com/{history.repo}/commit/{commit}"
    )
    detail = row[3] if len(row) > 3 else None
    return HistoryEvent(kind, version, commit, pr, title, url, detail)


def history_events(history: ReleaseHistory | None, record_id: str) -> tuple[HistoryEvent, ...]:
    """What changed a record's lineage, oldest first (none without a history)."""
    if history is None:
        return ()
    index = history.by_record.get(record_id)
    if index is None:
        return ()
    events = history.lineages[index].events
    # By the release that shipped each change (an unreleased one last); the file's order breaks
    # ties, so the commits of one release keep theirs.
    ranked = sorted(enumerate(events), key=lambda e: (release_order(e[1].version), e[0]))
    return tuple(event for _, event in ranked)


_RELEASE = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:-([0-9A-Za-z.-]+))?")


def release_order(version: str | None) -> tuple[int, int, int, int, tuple[tuple[int, Any], ...]]:
    """A release's place among releases: by number, a pre-release before its release; an
    unreleased change (None) or an unreadable version last."""
    found = _RELEASE.match(version) if version else None
    if found is None:
        return (1 << 30, 0, 0, 0, ())
    major, minor, patch, pre = found.groups()
    parts = tuple((0, int(p)) if p.isdigit() else (1, p) for p in (pre or "").split(".") if p)
    return (int(major), int(minor), int(patch or 0), 0 if pre else 1, parts)


def _expand(entries: Iterable[tuple[int, int, int]]) -> Iterator[tuple[int, int]]:
    """(lineage index, release) for each release of each stored span."""
    for index, first, last in entries:
        for release in range(first, last + 1):
            yield index, release


# ---------------------------------------------------------------------------------------------
# Reading the paste
# ---------------------------------------------------------------------------------------------


def version_in_text(text: str, names: Iterable[str]) -> str | None:
    """A version of the project the text names (`names`: what its crates are called, see
    `project_names`): a Cargo.lock entry first, then a Cargo.toml table, then prose such as
    `burn 0.18`, then a registry path."""
    patterns = [_version_patterns(name) for name in sorted(names)]
    # every name's Cargo.lock entry first, then every name's next form
    for kind in zip(*patterns, strict=True):
        for pattern in kind:
            found = pattern.search(text)
            if found:
                return found.group(1)
    return None


def project_names(history: ReleaseHistory) -> set[str]:
    """The names a history's project publishes under: its repository's name (`tracel-ai/burn`
    -> `burn`, `acme/foo-rs` -> `foo-rs`, `foo`), whose crates (`burn-core`) start with it, or
    the package at its root when that is named otherwise (`demo-core` of someone/demo)."""
    names = repo_crate_names(history.repo)
    root = history.repo.rsplit("/", 1)[-1]
    return names | {package for package, crate in history.packages.items() if crate == root}


def pasted_crate_file(path: str, crates: Container[str]) -> tuple[str, str] | None:
    """(crate, path inside it) for a pasted path through one of the history's crate folders:
    `burn-tensor-0.16.0/src/x.rs`, `C:\\burn\\burn-compute\\src\\compute.rs`, `crates/a/src/..`."""
    parts = normalise_path(path).split("/")
    for i in range(len(parts) - 2, -1, -1):
        if parts[i + 1] not in ("src", "build.rs"):
            continue
        name = parts[i]
        inner = "/".join(parts[i + 1 :])
        if name in crates:
            return name, inner
        versioned = re.match(r"^(.+?)-\d+\.\d+\.\d+(?:[-+].*)?$", name)
        if versioned and versioned.group(1) in crates:
            return versioned.group(1), inner
    return None


def pasted_repo_file(path: str, by_file: Container[tuple[str, str]]) -> tuple[str, str] | None:
    """(REPO_FILE, repository path) for a pasted path that is a file the history keeps by its
    repository path (a crate without `src/`): `cli\\main.rs`, `/home/ci/deno/cli/main.rs`. A
    relative path is the file itself; an absolute one ends with it, from two parts up
    (`build.rs` alone says nothing)."""
    parts = normalise_path(path).removeprefix("./").split("/")
    if is_absolute(path):
        tails = ["/".join(parts[start:]) for start in range(len(parts) - 1)]
    else:
        tails = ["/".join(parts)]
    return next(((REPO_FILE, t) for t in tails if (REPO_FILE, t) in by_file), None)


def pasted_root_file(path: str, history: ReleaseHistory) -> tuple[str, str] | None:
    """The `by_file` key of a relative pasted path into the repository's root package
    (`src/core/resolver.rs`): rustc prints the root package's files from `src/`, with no crate
    folder before it to name the crate (`file_key`)."""
    if is_absolute(path):
        return None
    key = file_key(history, normalise_path(path).removeprefix("./"))
    return key if key[0] != REPO_FILE and key in history.by_file else None


def message_quality(pasted: str, message: str) -> int:
    """How well a pasted (possibly garbled: cut, wrapped, values filled in) message fits the
    output of the format `message`: 2 when every literal part is there in order, 1 when a
    long run of its literal text is (a garbled head or tail), 0 otherwise."""
    return _quality(normalise_message(pasted), message)


def _quality(query: str, message: str, labels: frozenset[str] = frozenset()) -> int:
    """`message_quality` of a paste already normalised (`query`). A label many of the
    project's messages open with (`labels`: `internal error: `), which both open with, is no
    part of the run a garbled paste must share."""
    parts = _literal_parts(message)
    if not parts or not query:
        return 0
    if _parts_in_order(query, parts):
        return 2
    literal = " ".join(parts)
    label = _label(literal)
    if label in labels and query.startswith(label):
        literal, query = literal[len(label) :], query[len(label) :]
    need = max(12, -(-len(literal) // 2))  # the shortest run that counts
    return 1 if shares_run(literal, query, need) else 0


_LABEL = re.compile(r"[^:]{1,40}: ")
_LABEL_SHARED_BY = 3  # distinct messages opening with a label that make it a common one


def _label(text: str) -> str:
    """What `text` opens with up to its first `: `, if that comes early (`internal error: `)."""
    found = _LABEL.match(text)
    return found.group() if found else ""


def common_labels(history: ReleaseHistory) -> frozenset[str]:
    """The labels (`_label`) at least `_LABEL_SHARED_BY` of the history's messages open with."""
    if history.shared_labels is None:
        distinct = {message for messages in history.by_crate.values() for message in messages}
        counts = Counter(
            label for message in distinct if (label := _label(" ".join(_literal_parts(message))))
        )
        history.shared_labels = frozenset(
            label for label, count in counts.items() if count >= _LABEL_SHARED_BY
        )
    return history.shared_labels


def shares_run(literal: str, query: str, run: int) -> bool:
    """Whether `literal` and `query` share a run of at least `run` characters (`run` >= 2).

    Cut the literal into pieces of `run // 2` characters from its start: any run of `run`
    characters holds one whole piece, so only the runs around a piece the query holds are
    looked up in it (a few `in` tests, not an alignment of the two texts)."""
    piece = run // 2
    last = len(literal) - run  # the last place a run of the literal can start
    for start in range(0, len(literal) - piece + 1, piece):
        if literal[start : start + piece] not in query:
            continue
        for first in range(max(0, start + piece - run), min(start, last) + 1):
            if literal[first : first + run] in query:
                return True
    return False


@lru_cache(maxsize=8192)
def _literal_parts(message: str) -> tuple[str, ...]:
    parts = (normalise_message(p) for p in _PLACEHOLDER.split(message.replace("{{", "{")))
    return tuple(p for p in parts if p)


_LITERAL_WORD = re.compile(r"[A-Za-z]{2,}")


@lru_cache(maxsize=8192)
def _says_words(message: str) -> bool:
    """Whether a format's literal text holds two words: `({:?})` fits any text with brackets,
    which is no sign that a crate printed it."""
    return len(_LITERAL_WORD.findall(" ".join(_literal_parts(message)))) >= 2


def _parts_in_order(query: str, parts: tuple[str, ...]) -> bool:
    position = 0
    for part in parts:
        found = query.find(part, position)
        if found < 0:
            return False
        position = found + len(part)
    return True


def full_fit(pasted: str, message: str) -> bool:
    """Every literal part of the format is in the pasted message, in order (cheap: no
    alignment), for scanning all the messages of a crate."""
    return _full_fit(normalise_message(pasted), message)


def _full_fit(query: str, message: str) -> bool:
    """`full_fit` of a paste already normalised (`query`)."""
    parts = _literal_parts(message)
    return bool(parts) and _parts_in_order(query, parts)


def _whole_fit(query: str, message: str) -> bool:
    """The pasted message (`query`, normalised) is the format's whole output: its literal parts
    in order, starting and ending where the format's text does (`{dt:?} not supported` is not
    all of `Arrow datatype .. not supported by Polars. ..`)."""
    parts = _literal_parts(message)
    if not parts or not _parts_in_order(query, parts):
        return False
    opens_with_value, ends_with_value = _value_ends(message)
    if not opens_with_value and not query.startswith(parts[0]):
        return False
    return ends_with_value or query.endswith(parts[-1])


def _opens_like(pasted: str, message: str) -> bool:
    """The pasted message starts with the format's opening text (any text, when the format
    opens with a value)."""
    parts = _literal_parts(message)
    return not parts or _value_ends(message)[0] or normalise_message(pasted).startswith(parts[0])


def _value_ends(message: str) -> tuple[bool, bool]:
    """Whether the (normalised) message opens with a value, and whether it ends with one."""
    text = normalise_message(message)
    placeholders = [m.span() for m in _PLACEHOLDER.finditer(text)]
    if not placeholders:
        return False, False
    return placeholders[0][0] == 0, placeholders[-1][1] == len(text)


def message_consistent(pasted: str, message: str) -> bool:
    return message_quality(pasted, message) > 0


# ---------------------------------------------------------------------------------------------
# The matcher's hook
# ---------------------------------------------------------------------------------------------


# "line" (the exact site), "file" (the pasted file, another line), "crate" (another file of it)
HitKind = Literal["line", "file", "crate"]


@value_class(frozen=True)
class ReleaseHit:
    """Where the history places a pasted panic: a lineage, and the release it was raised in."""

    lineage: int
    release: int
    how: HitKind


def find_hit(
    history: ReleaseHistory,
    pasted: tuple[str, str],
    line: int | None,
    message: str,
    version: str | None,
) -> ReleaseHit | None:
    """The lineage a pasted (crate, file, line, message) at a version belongs to, if any."""
    releases = set(history.releases_for(version))
    # A version no release has (a fork's, a typo) tells no release: a line then is any release's
    # line, no sign alone that a garbled message was this site.
    unplaced = bool(version) and len(releases) == len(history.releases) > 1
    crate, inner = pasted
    wanted = normalise_message(message)
    labels = common_labels(history)
    best: tuple[tuple[int, int, int], ReleaseHit] | None = None
    qualities: dict[str, int] = {}
    # Lineages that printed the pasted wording whole in the file, at another line: when two
    # did, the line tells neither (nor does it between two releases).
    whole_elsewhere: set[int] = set()
    for index, release in _expand(history.by_file.get((crate, inner), ())):
        if release not in releases:
            continue
        lineage = history.lineages[index]
        state = lineage.state(release)
        if state is None:
            continue
        # A lineage keeps its message over many releases: each wording is weighed once.
        quality = qualities.get(state[2])
        if quality is None:
            quality = qualities[state[2]] = _quality(wanted, state[2], labels)
        distance = abs(state[1] - line) if line is not None else 10**6
        if not quality and distance <= NEAR_LINES and version and not _literal_parts(state[2]):
            # A format of placeholders only (`panic!("{e}")`) prints any text: the pasted
            # release's line (give or take a patch release's shift) is what says it was this
            # site.
            quality = 1
        elif (
            quality
            and not _says_words(state[2])
            and (distance > NEAR_LINES or not _opens_like(message, state[2]))
        ):
            # A format with no words (`({:?})`) fits any text with brackets: only its own line
            # and its opening say it was this site (a paste may run on past its end).
            continue
        if not quality:
            continue
        how: HitKind = "line" if distance <= NEAR_LINES else "file"
        if (how == "file" or unplaced) and quality < 2:
            continue  # another line and a garbled message: too little to go on
        if how == "file":
            whole_elsewhere.add(index)
        key = (-quality, distance, -release)
        if best is None or key < best[0]:
            best = (key, ReleaseHit(index, release, how))
    if best is not None:
        if best[1].how == "file" and len(whole_elsewhere) > 1:
            return None
        return best[1]
    # The pasted file never held it at that version: its crate may have (a caller's location).
    held = history.by_crate.get(crate, {})
    candidates: list[tuple[int, int]] = []
    for stored, where in held.items():
        # (the paste normalised once for all the crate's messages)
        if stored == wanted or (_says_words(stored) and _full_fit(wanted, stored)):
            candidates.extend(w for w in _expand(where) if w[1] in releases)
    if not candidates:
        return None
    distinct = {index for index, _ in candidates}
    if len(distinct) > 1:
        # Several sites of the crate print it: the one alive in the newest of those releases,
        # and only if it is alone there.
        newest = max(r for _, r in candidates)
        distinct = {index for index, r in candidates if r == newest}
        if len(distinct) > 1:
            return None
    index = next(iter(distinct))
    release = max(r for i, r in candidates if i == index)
    return ReleaseHit(index, release, "crate")


# A removed site whose message was reworded past what the linker pairs (two sites merged into
# one, a placeholder renamed and text added) lives on in the site that appeared in its file in
# the very next release with the same opening words: at least this many characters, and this
# share of the shorter message, placeholders read as `{}`.
SUCCESSOR_PREFIX_CHARS = 24
SUCCESSOR_PREFIX_SHARE = 0.4


def _opening(message: str) -> str:
    return _PLACEHOLDER.sub("{}", normalise_message(message))


def _shared_start(a: str, b: str) -> int:
    """How many characters `a` and `b` open with alike."""
    count = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        count += 1
    return count


def successors(history: ReleaseHistory, index: int) -> list[int]:
    """The lineages that may have taken over a removed lineage's message: the sites new in its
    file in the next release opening with the most of its words (several when they tie); when
    its file has none, those new anywhere else in its crate (the site moved and was reworded
    in one release: `src/gil.rs` to `src/interpreter_lifecycle.rs`)."""
    lineage = history.lineages[index]
    present = lineage.present()
    if not present or present[-1] >= history.newest:
        return []
    last = present[-1]
    state = lineage.state(last)
    if state is None:
        return []
    key, opening = file_key(history, state[0]), _opening(state[2])
    in_file = history.by_file.get(key, ())
    in_crate = (entry for entries in history.by_crate.get(key[0], {}).values() for entry in entries)
    for entries in (in_file, in_crate):
        found = _opening_alike(history, index, opening, last + 1, entries)
        if found:
            return found
    return []


def _opening_alike(
    history: ReleaseHistory,
    index: int,
    opening: str,
    release: int,
    entries: Iterable[tuple[int, int, int]],
) -> list[int]:
    """Among `entries`' lineages new in `release`, those opening with the most of `opening`."""
    scored: dict[int, int] = {}
    for other, first, _last in entries:
        if first != release or other == index or other in scored:
            continue
        newcomer = history.lineages[other]
        if newcomer.present()[0] != first:
            continue  # a site that was there before, moved into the file
        following = newcomer.state(first)
        if following is None:
            continue
        theirs = _opening(following[2])
        shared = _shared_start(opening, theirs)
        least = max(SUCCESSOR_PREFIX_CHARS, SUCCESSOR_PREFIX_SHARE * min(len(opening), len(theirs)))
        if shared >= least:
            scored[other] = shared
    if not scored:
        return []
    most = max(scored.values())
    return sorted(other for other, shared in scored.items() if shared == most)


def successor_record(history: ReleaseHistory, index: int, known: Container[str]) -> str | None:
    """The record of the site that took over a removed lineage's message, when exactly one
    site of its file, new in the next release, opens with the same words; else, with the
    records at hand, the one such site in the same function raising the same way on the same
    check (a message reworded whole: `the requested width {} does not fit` became `width {} is
    larger than the frame allows` in `set_width`, on `w > 100`)."""
    found = successors(history, index)
    if len(found) > 1:
        return None  # two sites open alike: no telling which took it over
    if found:
        return history.record_id(history.lineages[found[0]], known)
    if not isinstance(known, Mapping):
        return None
    return _successor_in_function(history, index, known)


def _successor_in_function(
    history: ReleaseHistory, index: int, records: Mapping[str, Record]
) -> str | None:
    lineage = history.lineages[index]
    present = lineage.present()
    if not present or present[-1] >= history.newest:
        return None
    last = present[-1]
    state = lineage.state(last)
    old = records.get(history.record_id(lineage, records) or "")
    if state is None or old is None or not old.enclosing_fn:
        return None
    found = []
    for other, first, _last in history.by_file.get(file_key(history, state[0]), ()):
        if first != last + 1 or other == index or history.lineages[other].present()[0] != first:
            continue  # only a site new in the file in the very next release
        new = records.get(history.record_id(history.lineages[other], records) or "")
        if (
            new is not None
            and new.enclosing_fn == old.enclosing_fn
            and new.error_type == old.error_type
            and new.site_check.get("code") == old.site_check.get("code")
        ):
            found.append(new.id)
    return found[0] if len(found) == 1 else None


def to_todays_site(
    history: ReleaseHistory, records: Mapping[str, Record], match: PanicMatch
) -> PanicMatch:
    """An answer with a removed site whose message lives on, reworded, in a site new in its
    file the release it left (`successor_record`): answered with that site, where the code is
    today, the pasted release still evidence."""
    best = match.best
    record = records.get(best.record_id) if best is not None and match.matched else None
    index = history.by_record.get(record.id) if record is not None else None
    if best is None or record is None or not record.removed_at or index is None:
        return match
    rid = successor_record(history, index, records)
    if rid is None or rid == best.record_id or rid not in records or records[rid].removed_at:
        return match
    followed = with_step(
        best,
        "reworded in a later release: answered with today's site",
        record_id=rid,
        evidence=tuple(dict.fromkeys((*best.evidence, "release"))),
        line_distance=None,
    )
    rest = tuple(c for c in match.candidates[1:] if c.record_id != rid)
    return revised(match, (followed, *rest))


def line_contradicted(
    history: ReleaseHistory, record_id: str, line: int | None, version: str | None
) -> bool:
    """Whether the pasted version's lineage of the record puts the site at another line.

    Only a version the history knows counts (`releases_for` falls back to every release);
    a version without the site says nothing about its line.
    """
    index = history.by_record.get(record_id)
    if index is None or line is None or not version:
        return False
    series = ".".join(version.split(".")[:2])
    wanted = [
        r for r in history.releases_for(version) if history.releases[r].version.startswith(series)
    ]
    lineage = history.lineages[index]
    lines = [state[1] for state in map(lineage.state, wanted) if state is not None]
    return bool(lines) and all(abs(found - line) > NEAR_LINES for found in lines)


def _crate_in_release(history: ReleaseHistory, crate: str, version: str | None) -> bool:
    """Whether the crate had runtime sites in the pasted release (so the scan saw it)."""
    releases = set(history.releases_for(version))
    return any(
        r in releases
        for where in history.by_crate.get(crate, {}).values()
        for _, r in _expand(where)
    )


def crate_ever_held(history: ReleaseHistory, crate: str, message: str) -> bool:
    key = normalise_message(message)
    held = history.by_crate.get(crate, {})
    return key in held or any(full_fit(message, m) for m in held)


def revise(
    history: ReleaseHistory,
    records: Mapping[str, Record],
    text: str,
    matches: list[PanicMatch],
) -> list[PanicMatch]:
    """The matcher's hook: the same matches, revised with the catalog's release history (a
    revised best candidate answers by the one rule, bot.core.match.answer_rule)."""
    if not matches:
        return matches
    return revise_at(history, records, matches, text_version_of(history, text))


def text_version_of(history: ReleaseHistory, text: str) -> str | None:
    """The version of the history's project that the text names, if any (one pass per text)."""
    return version_in_text(text, project_names(history))


def revise_at(
    history: ReleaseHistory,
    records: Mapping[str, Record],
    matches: list[PanicMatch],
    text_version: str | None,
) -> list[PanicMatch]:
    """`revise`, with the version the text names already read (`text_version_of`)."""
    return [
        to_todays_site(history, records, _revise_one(history, records, m, text_version))
        for m in matches
    ]


def _printed_elsewhere(record: Record, pasted_crate: str) -> bool:
    """Rust prints this record's panic at another place that may be the pasted one: any caller
    for `#[track_caller]`; for a macro body, an invocation, which is in the macro's own crate
    (burn-tensor's `check!` reasons, printed at the tensor op that called `check!`), or for a
    `quote!` body (a proc macro's output, compiled into each crate that uses the macro) in any
    crate."""
    tags = record.tags
    if TRACK_CALLER_TAG in tags or PROC_MACRO_OUTPUT_TAG in tags:
        return True
    return MACRO_BODY_TAG in tags and f"{CRATE_TAG_PREFIX}{pasted_crate}" in tags


def _candidate(
    record_id: str, confidence: float, evidence: tuple[Evidence, ...], line_distance: int | None
) -> Candidate:
    return Candidate(
        record_id=record_id,
        confidence=round(min(confidence, 1.0), 4),
        evidence=evidence,
        message_score=0.0,
        line_distance=line_distance,
    )


# Panics whose text is no site's message: a bare assertion prints its condition's code, an
# `unwrap()` its std message or its error's Debug (which may hold words of the crate's errors).
_NO_SITE_MESSAGE = frozenset({"assert", "unwrap-err", "unwrap-none"})


def _revise_one(
    history: ReleaseHistory,
    records: Mapping[str, Record],
    match: PanicMatch,
    text_version: str | None,
) -> PanicMatch:
    panic = match.panic
    location = panic.location
    pasted = None
    if location is not None and location.kind != "std":
        pasted = (
            pasted_crate_file(location.path, history.by_crate)
            or pasted_repo_file(location.path, history.by_file)
            or pasted_root_file(location.path, history)
        )
    version = (location.crate_version if location else None) or text_version
    if location is None and match.matched and match.best is not None:
        refused = _removed_wording(history, records, match)
        if refused is not None:
            return refused
    if location is None or pasted is None:  # (no pasted file without a location)
        return _prefer_existing(history, match, records, version)
    best = match.best
    at_file = best is not None and match.matched and "location" in best.evidence
    elsewhere = (
        _release_line_elsewhere(history, records, match, pasted, version) if at_file else None
    )
    if best is not None and at_file and elsewhere is None:
        # The pasted file is the record's own: the catalog agrees, but on the line only if
        # the pasted release had the site there.
        line_hit = _pasted_line_hit(history, records, best, pasted, location.line, version)
        which = "the pasted release" if version else "a release"
        sibling = _release_line_sibling(history, records, match, line_hit, location.line, which)
        if sibling is not None:
            return sibling
        if "line" in best.evidence and line_contradicted(
            history, best.record_id, location.line, version
        ):
            unlined = with_step(
                best,
                "the pasted release had the site at another line",
                confidence=round(max(best.confidence - WEIGHTS.penalty_line_contradicted, 0.0), 4),
                evidence=tuple(e for e in best.evidence if e != "line"),
                line_distance=None,
            )
            return revised(match, (unlined, *match.candidates[1:]))
        if "line" not in best.evidence:
            # The site moved since: the pasted release may have had it at the pasted line.
            confirmed = _line_confirmed(history, records, best, line_hit, which)
            if confirmed is not None:
                return revised(match, (confirmed, *match.candidates[1:]))
        return match
    if panic.wrapper in _NO_SITE_MESSAGE:
        return match  # whatever site lived at the pasted line, it did not print this
    hit = elsewhere or find_hit(history, pasted, location.line, panic.core_message, version)
    if hit is None:
        if (
            best is not None
            and match.matched
            and location.crate_version
            # a caller-reported record is pasted with another location by design
            and not _printed_elsewhere(records[best.record_id], pasted[0])
            and _crate_in_release(history, pasted[0], version)
            and not crate_ever_held(history, pasted[0], records[best.record_id].error_message)
        ):
            # A released crate we scanned, which never printed this message in any release.
            lowered = with_step(
                best,
                "a released crate that never printed this message",
                confidence=min(best.confidence, AGAINST_CAP),
            )
            return revised(match, (lowered, *match.candidates[1:]))
        return _prefer_existing(history, match, records, version)
    lineage = history.lineages[hit.lineage]
    rid = history.record_id(lineage, records)
    successor = False
    if rid is None and hit.how != "crate":
        rid = successor_record(history, hit.lineage, records)
        successor = rid is not None
    if rid is None:
        return match
    existing = next((c for c in match.candidates if c.record_id == rid), None)
    # Only the crate held it, not the pasted file: not enough for a message any code prints,
    # nor against a rule that refused the candidate.
    weak = hit.how == "crate" and not _printed_elsewhere(records[rid], pasted[0])
    if weak and (is_std_message(panic.core_message) or (existing and existing.refused)):
        return match
    state = lineage.state(hit.release)
    # (a successor is another site: the removed one's line says nothing of its distance)
    line = None if successor else location.line
    distance = abs(state[1] - line) if state and line is not None else None
    evidence: list[Evidence] = (
        ["release", "location"] if hit.how != "crate" else ["release", "crate"]
    )
    if hit.how == "line" and not successor:  # (the line was the removed site's)
        evidence.append("line")
    if panic.has_header:
        evidence.append("header")
    floor = {
        "line": RELEASE_HIT_CONFIDENCE,
        "file": FILE_HIT_CONFIDENCE,
        "crate": CRATE_HIT_CONFIDENCE,
    }[hit.how]
    if existing is not None:
        merged = tuple(dict.fromkeys((*existing.evidence, *evidence)))
        chosen = with_step(
            existing,
            f"the release history places the paste at this site ({hit.how})",
            confidence=max(existing.confidence, floor),
            evidence=merged,
            refused=None,
        )
    else:
        chosen = _candidate(rid, floor, tuple(evidence), distance if hit.how != "crate" else None)
        chosen = replace(
            chosen,
            steps=((f"the release history places the paste at this site ({hit.how})", floor),),
        )
    rest = tuple(c for c in match.candidates if c.record_id != rid)
    return revised(match, (chosen, *rest))


def _release_line_elsewhere(
    history: ReleaseHistory,
    records: Mapping[str, Record],
    match: PanicMatch,
    pasted: tuple[str, str],
    version: str | None,
) -> ReleaseHit | None:
    """When the best candidate only resembles the paste (no whole match) and the pasted release
    had another site at the pasted line printing the pasted wording whole, that site's hit: its
    lineage answers (`internal error: missing stack frame` at nushell 0.60.0's line, since
    reworded, is not today's `internal error: missing span` of the same file)."""
    best, location = match.best, match.panic.location
    if best is None or location is None or location.line is None:
        return None
    if "pattern" in best.evidence and "prefix" not in best.evidence:
        return None
    message = match.panic.core_message
    hit = find_hit(history, pasted, location.line, message, version)
    if hit is None or hit.how != "line":
        return None
    state = history.lineages[hit.lineage].state(hit.release)
    if state is None or message_quality(message, state[2]) < 2:
        return None
    rid = history.record_id(history.lineages[hit.lineage], records)
    return hit if rid is not None and rid != best.record_id else None


_OPENING_KEY_CHARS = 8


# An older wording answers alone only when its fixed text says this much.
MIN_OLDER_WORDING_CHARS = 24


def _wordings_by_opening(
    history: ReleaseHistory,
) -> dict[str, list[tuple[str, list[tuple[int, int, int]]]]]:
    """Every message of the crates, live or removed, with its lineages, keyed by the first
    characters of its first literal part ("" for a message opening with a value)."""
    found = history.wording_openings
    if found is not None:
        return found
    found = {}
    for messages in history.by_crate.values():
        for message, entries in messages.items():
            parts = _literal_parts(message)
            if not parts or not _says_words(message):
                continue
            key = "" if _PLACEHOLDER.match(message) else parts[0][:_OPENING_KEY_CHARS]
            found.setdefault(key, []).append((message, entries))
    history.wording_openings = found
    return found


def _removed_by_opening(
    history: ReleaseHistory,
) -> dict[str, list[tuple[str, list[tuple[int, int, int]]]]]:
    """The crates' messages no live lineage prints, with their lineages, keyed as
    `_wordings_by_opening` keys them."""
    found = history.removed_openings
    if found is None:
        found = {}
        for key, items in _wordings_by_opening(history).items():
            removed = [
                (message, entries)
                for message, entries in items
                # (a live site prints it: an older wording of that site)
                if not any(i in history.live for i, _, _ in entries)
            ]
            if removed:
                found[key] = removed
        history.removed_openings = found
    return found


_T = TypeVar("_T")


def _opening_like(query: str, openings: Mapping[str, list[_T]]) -> Iterator[_T]:
    """The messages of `openings` that a (normalised) paste may be whole output of: those
    opening with a value, and those whose opening key starts the paste (a message opening with
    literal text is whole only in a paste opening with it)."""
    for key in _opening_keys(query):
        yield from openings.get(key, ())


def _opening_keys(query: str) -> list[str]:
    """The opening keys a paste may be whole output under: "" (a message opening with a value)
    and each of its first characters up to `_OPENING_KEY_CHARS`."""
    return ["", *dict.fromkeys(query[:size] for size in range(1, _OPENING_KEY_CHARS + 1))]


@value_class(frozen=True)
class _Wording:
    """A crate message as `_whole_fit` reads it, prepared once: its literal parts and whether
    it opens or ends with a value."""

    message: str
    entries: list[tuple[int, int, int]]
    parts: tuple[str, ...]
    opens_with_value: bool
    ends_with_value: bool

    def fits(self, query: str) -> bool:
        """`_whole_fit(query, self.message)`, the cheap tests first."""
        parts = self.parts
        if not self.opens_with_value and not query.startswith(parts[0]):
            return False
        if not self.ends_with_value and not query.endswith(parts[-1]):
            return False
        return _parts_in_order(query, parts)


def _older_wordings(history: ReleaseHistory) -> dict[str, list[_Wording]]:
    """`_wordings_by_opening`, only the messages with MIN_OLDER_WORDING_CHARS of fixed text."""
    found = history.older_wordings
    if found is not None:
        return found
    found = {}
    for key, messages in _wordings_by_opening(history).items():
        for message, entries in messages:
            parts = _literal_parts(message)
            if sum(map(len, parts)) < MIN_OLDER_WORDING_CHARS:
                continue
            opens, ends = _value_ends(message)
            if key == "" and not ends:
                # opening with a value: keyed by how it ends (`$` and its last characters)
                key = "$" + parts[-1][-_OPENING_KEY_CHARS:]
            found.setdefault(key, []).append(_Wording(message, entries, parts, opens, ends))
    history.older_wordings = found
    return found


def _older_keys(query: str) -> list[str]:
    """The keys of `_older_wordings` a paste may be the whole output of a message under: how
    it opens (as `_opening_like`), and, for a message opening with a value, how it ends."""
    endings = dict.fromkeys("$" + query[-size:] for size in range(1, _OPENING_KEY_CHARS + 1))
    return [*_opening_keys(query), *endings]


def older_wording_record(
    histories: Sequence[ReleaseHistory], records: Mapping[str, Record], pasted: str
) -> str | None:
    """The record whose site printed `pasted`, word for word (every literal part, in order,
    from start to end), in an older release than the catalog's, in any of the catalog's
    projects' histories: the one site (file and message; two records alike there are one to a
    reader) every lineage that ever printed such a message answers for. None when a site the
    catalog lacks printed it too, when two sites did (in one project or in two), when the
    message says too little alone (fewer than MIN_OLDER_WORDING_CHARS of fixed text) or is
    one of std's."""
    query = normalise_message(pasted)
    if len(query) < MIN_OLDER_WORDING_CHARS or is_std_message(pasted):
        return None
    found: dict[tuple[str | None, str] | None, str | None] = {}
    keys = _older_keys(query)
    for history in histories:
        wordings = _older_wordings(history)
        for wording in (w for key in keys for w in wordings.get(key, ())):
            if not wording.fits(query):
                continue
            for index, _, _ in wording.entries:
                rid = history.record_id(history.lineages[index], records)
                record = records[rid] if rid is not None else None
                site = (record.file_path, record.error_message) if record is not None else None
                found.setdefault(site, rid)
            if len(found) > 1:
                return None
    return next(iter(found.values())) if len(found) == 1 else None


def earlier_wording_at(
    history: ReleaseHistory, record_id: str, file: str, pasted: str
) -> tuple[str, tuple[int, ...]] | None:
    """The wording the record's site printed at `file` in an older release, when `pasted` is
    its whole output (valueloc.rs:44's `Expected register: {:?}`, reworded later to
    `unwrap_reg expected register, found {:?}`), with the lines the site had there in those
    releases: the site's lineage, not a prefix of today's words, says what the paste was. None
    when no span of the lineage there fits."""
    index = history.by_record.get(record_id)
    if index is None:
        return None
    lineage = history.lineages[index]
    query = normalise_message(pasted)
    for first, last, at, message, _kind in lineage.spans:
        if at == file and _says_words(message) and _whole_fit(query, message):
            lines = tuple(sorted({n for n in lineage.lines[first : last + 1] if n}))
            return message, lines
    return None


def _removed_wording(
    history: ReleaseHistory, records: Mapping[str, Record], match: PanicMatch
) -> PanicMatch | None:
    """`match` refused when, pasted without a location, its message is word for word (every
    literal part, in order, case kept) a removed site's while the best record's wording only
    resembles it (bevy 0.4's `Resource does not exist {}` against today's `resource does not
    exist: {}`). A removed lineage of the record itself, or one it took over, is its wording."""
    best = match.best
    assert best is not None
    record = records[best.record_id]
    pasted = match.panic.core_message
    if full_fit(pasted, record.error_message):
        return None
    query = normalise_message(pasted)
    own = history.by_record.get(best.record_id)
    for message, entries in _opening_like(query, _removed_by_opening(history)):
        if not _whole_fit(query, message):
            continue
        if any(
            index == own or history.record_id(history.lineages[index], records) is not None
            for index, _, _ in entries
        ):
            # The record's own older wording; or a removed site the catalog holds, whose own
            # record matches the paste whole and ranks first.
            continue
        if any(
            history.record_id(history.lineages[k], records) == best.record_id
            for i, _, _ in entries
            for k in successors(history, i)
        ):
            continue  # reworded into the record's site (or into it and a sibling alike)
        lowered = with_step(
            best,
            "a wording the site had removed",
            confidence=min(best.confidence, AGAINST_CAP),
            refused="removed-wording",
        )
        return revised(match, (lowered, *match.candidates[1:]))
    return None


def _pasted_line_hit(
    history: ReleaseHistory,
    records: Mapping[str, Record],
    best: Candidate,
    pasted: tuple[str, str],
    line: int | None,
    version: str | None,
) -> ReleaseHit | None:
    """The site the pasted release had exactly at the pasted line with the best candidate's
    message, if any (read once for `_release_line_sibling` and `_line_confirmed`). Without a
    pasted version, the one site of the message that any release had exactly there."""
    if line is None:
        return None
    message = records[best.record_id].error_message
    if not version:
        return _unversioned_line_hit(history, pasted, line, message)
    hit = find_hit(history, pasted, line, message, version)
    return hit if hit is not None and hit.how == "line" else None


def _unversioned_line_hit(
    history: ReleaseHistory, pasted: tuple[str, str], line: int, message: str
) -> ReleaseHit | None:
    """The lineage printing `message` whole that some release had exactly at the pasted file
    and line, when no other lineage of it ever was there (its newest such release): with no
    version pasted, the line alone names the site only when it names one."""
    found: dict[int, int] = {}
    for index, release in _expand(history.by_file.get(pasted, ())):
        state = history.lineages[index].state(release)
        if state is not None and state[1] == line and message_quality(message, state[2]) == 2:
            found[index] = max(release, found.get(index, release))
    if len(found) != 1:
        return None
    ((index, release),) = found.items()
    return ReleaseHit(index, release, "line")


def _line_confirmed(
    history: ReleaseHistory,
    records: Mapping[str, Record],
    best: Candidate,
    hit: ReleaseHit | None,
    which: str = "the pasted release",
) -> Candidate | None:
    """`best` with `release` and `line` evidence when the pasted release had its site exactly at
    the pasted line (burn-autodiff 0.18.0 `server.rs:34`, today line 69)."""
    if hit is None or history.record_id(history.lineages[hit.lineage], records) != best.record_id:
        return None
    evidence = tuple(dict.fromkeys((*best.evidence, "release", "line")))
    return with_step(
        best,
        f"{which} had the site at the pasted line",
        confidence=max(best.confidence, RELEASE_HIT_CONFIDENCE),
        evidence=evidence,
    )


def _release_line_sibling(
    history: ReleaseHistory,
    records: Mapping[str, Record],
    match: PanicMatch,
    hit: ReleaseHit | None,
    line: int | None,
    which: str = "the pasted release",
) -> PanicMatch | None:
    """One message raised at several sites of one file: the pasted release's own lines say
    which site printed it. When that release had another candidate's site exactly at the
    pasted line (`hit`, and the best's not), that candidate answers, with the release and line
    as evidence (wgpu-core 22.1.0 `hal_api.rs:20` is `create_instance_from_hal`, whatever line
    each site has today)."""
    best = match.best
    if best is None or hit is None or line is None:
        return None
    rid = history.record_id(history.lineages[hit.lineage], records)
    if rid is None or rid == best.record_id:
        return None
    chosen = next((c for c in match.candidates if c.record_id == rid), None)
    if chosen is None or records[rid].error_message != records[best.record_id].error_message:
        return None
    state = history.lineages[hit.lineage].state(hit.release)
    promoted = with_step(
        chosen,
        f"{which} had this site at the pasted line",
        refused=None,
        confidence=max(chosen.confidence, best.confidence),
        evidence=tuple(dict.fromkeys((*chosen.evidence, "release", "line"))),
        line_distance=abs(state[1] - line) if state is not None else chosen.line_distance,
    )
    rest = tuple(c for c in match.candidates if c.record_id != rid)
    return revised(match, (promoted, *rest))


def _prefer_existing(
    history: ReleaseHistory, match: PanicMatch, records: Mapping[str, Record], version: str | None
) -> PanicMatch:
    """Without a location: among candidates as confident as the best, prefer a site that
    existed in the user's version, and a live site over a removed one."""
    if len(match.candidates) < 2:
        return match
    wanted = set(history.releases_for(version)) if version else {history.newest}
    top = match.candidates[0].confidence

    def key(c: Candidate) -> tuple[bool, ...]:
        index = history.by_record.get(c.record_id)
        existed = index is not None and any(
            history.lineages[index].lines[r]
            for r in wanted
            if r < len(history.lineages[index].lines)
        )
        record = records.get(c.record_id)
        removed = bool(record is not None and record.removed_at)
        return (*stronger_first(c, top), not existed, removed)

    ordered = tuple(sorted(match.candidates, key=key))
    if ordered[0].record_id == match.candidates[0].record_id:
        return match
    return revised(match, ordered)


# ---------------------------------------------------------------------------------------------
# What answers say
# ---------------------------------------------------------------------------------------------


@value_class(frozen=True)
class VersionStory:
    """Where a record's site was in the user's release and where it is now (or when it left)."""

    version: str | None  # the user's release ("0.16.0"), when known
    then_file: str | None
    then_line: int | None
    then_url: str | None  # pinned to the release's commit
    now_file: str | None  # None when the site is gone
    now_line: int | None
    now_url: str | None
    removed_in: str | None  # the first release without it
    last_seen_in: str | None
    compare_url: str | None  # between the last release with it and the first without


def _blob(repo: str, commit: str, file: str, line: int) -> str:
    return f"https://github.com/{repo}/blob/{commit}/{file}#L{line}"


def story_for(
    history: ReleaseHistory, record_id: str, version: str | None, pasted_line: int | None = None
) -> VersionStory | None:
    index = history.by_record.get(record_id)
    if index is None:
        return None
    lineage = history.lineages[index]
    present = lineage.present()
    if not present:
        return None
    then = None
    user_releases = (
        [r for r in history.releases_for(version) if lineage.lines[r]] if version else []
    )
    if user_releases:
        release = max(user_releases)
        state = lineage.state(release)
        if state is not None:
            then = (history.releases[release], state)
    last = present[-1]
    now_state = lineage.state(history.newest) if last == history.newest else None
    removed_in = last_seen = compare = None
    if now_state is None and last < history.newest:
        gone, seen = history.releases[last + 1], history.releases[last]
        removed_in, last_seen = gone.version, seen.version
        compare = (
            f"https://github.com/{history.repo}/compare/{seen.tag or seen.commit}..."
            f"{gone.tag or gone.commit}"
        )
    newest = history.releases[history.newest]
    return VersionStory(
        version=then[0].version if then else None,
        then_file=then[1][0] if then else None,
        then_line=then[1][1] if then else None,
        then_url=_blob(history.repo, then[0].commit, then[1][0], then[1][1]) if then else None,
        now_file=now_state[0] if now_state else None,
        now_line=now_state[1] if now_state else None,
        now_url=_blob(history.repo, newest.commit, now_state[0], now_state[1])
        if now_state
        else None,
        removed_in=removed_in,
        last_seen_in=last_seen,
        compare_url=compare,
    )


def user_version(match: PanicMatch, text_version: str | None) -> str | None:
    location = match.panic.location
    return (location.crate_version if location else None) or text_version


def story_json(story: VersionStory | None) -> dict[str, Any]:
    """Fields added to a `match --json` match (none when the catalog has no history)."""
    if story is None:
        return {}
    out: dict[str, Any] = {}
    if story.version and story.then_file:
        out["release"] = {
            "version": story.version,
            "file_path": story.then_file,
            "line": story.then_line,
            "url": story.then_url,
        }
    if story.removed_in:
        out["removed_in"] = story.removed_in
        out["last_seen_in"] = story.last_seen_in
        out["compare_url"] = story.compare_url
    elif story.now_file:
        out["current"] = {"file_path": story.now_file, "line": story.now_line, "url": story.now_url}
    return out


def story_of(
    history: ReleaseHistory | None,
    match: PanicMatch,
    record_id: str,
    text_version: str | None = None,
) -> VersionStory | None:
    """The record's story for the user's version: the pasted path's, else the text's (None
    without a history)."""
    if history is None:
        return None
    return story_for(history, record_id, user_version(match, text_version))


def project_name(history: ReleaseHistory | None) -> str:
    return history.repo.rsplit("/", 1)[-1] if history else "the project"
