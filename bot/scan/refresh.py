"""`catalog refresh`: a catalog folder brought up to date with its git source, incrementally.

The folder (as `catalog history --out` writes it: `history.ndjson`, `panic_sites.jsonl`,
`removed_sites.jsonl`, optionally `scan.toml` and `writeups/`) gets a state file,
`refresh.state` (JSON; its suffix keeps the catalog loader from reading it as records): the
branch head and the release tags the catalog was built from, the sites of the newest release
and of the head (with their enclosing fns, which the history file does not keep), and what each
write-up's site said when the write-up was last edited.

* A new commit on the branch: only the `.rs` files the commits changed are read and scanned;
  the rest of the head's sites come from the state file. The "HEAD" column is linked again from
  the newest release, and the events of that column found again.
* A new release tag: the same, from the previous release to the tag; the tag becomes a column
  before HEAD, so every lineage gets that release and its events.
* No state, a head that is not a descendant of the old one (a force-push), or a built tag that
  moved or vanished, or a new tag older than the newest built one: a full build, said in the
  result's `mode` and `reason`.

Lineage ids, and so record ids and the write-ups keyed by them, never change once given. A
site gone on the branch but still in the newest release stays in `panic_sites.jsonl` (users of
that release still hit it). A write-up whose site changed its message, or vanished, since the
write-up file was last edited gets the tag `writeup-review:<why>`, which `catalog lint` flags;
a write-up whose lineage a full build no longer finds keeps its old record (in
`removed_sites.jsonl`), so nothing a person wrote is dropped.

Known limit: a changed file is scanned alone, so a message held in a `const` of another,
unchanged file is not resolved until the next full build.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import re
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.catalog.fileset import COMMIT_FILE, recover, replace_set  # noqa: F401 (re-exported)
from bot.catalog.lint import WRITEUP_REVIEW_TAG as REVIEW_TAG_PREFIX
from bot.catalog.model import REMOVED_TAG_PREFIX
from bot.catalog.patterns import normalise_message
from bot.catalog.sites import site_id
from bot.scan.builders import load_scan_settings
from bot.scan.history_facts import lineage_events
from bot.scan.lineages import (
    HEAD,
    History,
    Lineage,
    Release,
    ScanSettings,
    SiteAt,
    build_history,
    extract_tree,
    git,
    history_lines,
    lineage_records,
    link_release,
    link_sites,
    release_tags,
    scan_checkout,
    version_key,
    version_of,
)

STATE_FILE = "refresh.state"
LOCK_FILE = ".refresh.lock"
STATE_FORMAT = 1
HISTORY_FILE = "history.ndjson"
LIVE_FILE = "panic_sites.jsonl"
GONE_FILE = "removed_sites.jsonl"
SCAN_SETTINGS_FILE = "scan.toml"
WRITEUPS_DIR = "writeups"
REVIEW_CHANGED = "message-changed"
REVIEW_GONE = "site-gone"
_GITHUB_URL = re.compile(r"github\.com[:/]([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/?$")


class RefreshError(Exception):
    """The refresh cannot run (bad source, branch, settings); the catalog is left as it was."""


@dataclass(slots=True)
class RefreshResult:
    mode: str  # "full", "incremental" or "unchanged"
    reason: str  # why a full build, or what the incremental one did
    repo: str
    head: str
    tags: list[str]  # the release tags the catalog now holds
    new_tags: list[str] = field(default_factory=list)
    changed_files: int = 0  # .rs files read and scanned again
    live: int = 0
    removed: int = 0
    review: list[str] = field(default_factory=list)  # write-ups tagged for review
    seconds: float = 0.0

    @property
    def version(self) -> str:
        return catalog_version(self.tags, self.head)

    def summary(self) -> str:
        what = {
            "full": f"full build ({self.reason})",
            "incremental": f"incremental: {self.reason}",
            "unchanged": "already up to date",
        }[self.mode]
        if self.mode == "unchanged":
            return f"refresh: {self.repo} at {self.version}: {what} in {self.seconds:.1f}s"
        return (
            f"refresh: {self.repo} at {self.version}: {what}; {self.live} live, "
            f"{self.removed} removed sites, {self.changed_files} files scanned, "
            f"in {self.seconds:.1f}s"
        )


@dataclass(frozen=True, slots=True)
class Target:
    """The refs a catalog is built from: the branch head and the release tags (tag -> commit).
    Replicas publish one in the shared store and all build it (`bot.server.catalog_swap`)."""

    head: str
    tags: dict[str, str]

    def to_json(self) -> str:
        return json.dumps({"head": self.head, "tags": self.tags}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str | None) -> Target | None:
        try:
            data = json.loads(text or "")
            return cls(str(data["head"]), {str(k): str(v) for k, v in data["tags"].items()})
        except (ValueError, KeyError, TypeError, AttributeError):
            return None

    @property
    def version(self) -> str:
        return catalog_version(list(self.tags), self.head)


def newest_target(source: str | Path, branch: str | None, tags_pattern: str | None) -> Target:
    """The refs of the (fetched) source now."""
    branch = branch or default_branch(source)
    tags = release_tags(source, tags_pattern)
    return Target(
        branch_commit(source, branch),
        {t: git(source, "rev-parse", f"{t}^{{commit}}").strip() for t in tags},
    )


def supersedes(source: str | Path, mine: Target, published: Target | None) -> bool:
    """Whether `mine` (just fetched) should replace the published target: not when it is
    behind (its head an ancestor of the published one, or a published tag missing here: this
    replica fetched earlier); otherwise yes, a force-push included."""
    if published is None:
        return True
    if mine == published or not set(published.tags) <= set(mine.tags):
        return False
    if mine.head == published.head:
        return True  # a new tag
    known = _git_ok(source, "cat-file", "-e", f"{published.head}^{{commit}}") is not None
    return not (known and _is_ancestor(source, mine.head, published.head))


def catalog_version(tags: Sequence[str], head: str) -> str:
    """What `/healthz` and `/metrics` call the catalog: the newest release and the head."""
    newest = max(tags, key=version_key) if tags else "-"
    return f"{newest}+{head[:12]}"


def read_state(catalog_dir: str | Path) -> dict[str, Any] | None:
    path = Path(catalog_dir) / STATE_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("format") == STATE_FORMAT else None


# ---------------------------------------------------------------------------------------------
# git
# ---------------------------------------------------------------------------------------------


def _git_ok(repo_dir: str | Path, *args: str) -> str | None:
    try:
        return git(repo_dir, *args).strip()
    except subprocess.CalledProcessError:
        return None


def fetch_source(source: str | Path) -> bool:
    """`git fetch` from each remote of the source, tags included; False when it has none."""
    remotes = git(source, "remote").split()
    for remote in remotes:
        bare = _git_ok(source, "rev-parse", "--is-bare-repository") == "true"
        refspecs = ["+refs/heads/*:refs/heads/*"] if bare else []
        git(source, "fetch", "--quiet", "--tags", "--force", remote, *refspecs)
    return bool(remotes)


def default_branch(source: str | Path) -> str:
    name = _git_ok(source, "symbolic-ref", "--short", "HEAD")
    if not name:
        raise RefreshError(f"{source}: HEAD names no branch; give --branch")
    return name


def branch_commit(source: str | Path, branch: str) -> str:
    """The branch's commit: the remote-tracking one of a clone first (it is what was fetched)."""
    for ref in (f"refs/remotes/origin/{branch}", f"refs/heads/{branch}", branch):
        sha = _git_ok(source, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
        if sha:
            return sha
    raise RefreshError(f"{source}: no branch {branch}")


def repo_from_remote(source: str | Path) -> str | None:
    for remote in (_git_ok(source, "remote") or "").split():
        url = _git_ok(source, "remote", "get-url", remote) or ""
        match = _GITHUB_URL.search(url)
        if match:
            return f"{match.group(1)}/{match.group(2)}"
    return None


def _is_ancestor(source: str | Path, old: str, new: str) -> bool:
    done = subprocess.run(
        ["git", "-C", str(source), "merge-base", "--is-ancestor", old, new], capture_output=True
    )
    return done.returncode == 0


def changed_rust_files(source: str | Path, old: str, new: str) -> list[str]:
    """The `.rs` paths that differ between two commits (a rename counts as both its paths)."""
    out = subprocess.run(
        ["git", "-C", str(source), "diff", "--no-renames", "--name-only", "-z", old, new],
        check=True,
        capture_output=True,
    ).stdout
    names = [p.decode("utf-8", errors="surrogateescape") for p in out.split(b"\0") if p]
    return sorted(p for p in names if p.endswith(".rs"))


def rescan(
    source: str | Path,
    old_commit: str | None,
    old_sites: Sequence[SiteAt],
    new_commit: str,
    settings: ScanSettings | None,
) -> tuple[list[SiteAt], int]:
    """The sites at `new_commit`, scanning only the files changed since `old_commit` (whose
    sites are `old_sites`); and how many files were scanned."""
    with tempfile.TemporaryDirectory(prefix="refresh-") as tmp:
        if old_commit is None:
            extract_tree(source, new_commit, Path(tmp))
            return scan_checkout(Path(tmp), settings=settings), -1
        changed = changed_rust_files(source, old_commit, new_commit)
        if not changed:
            return list(old_sites), 0
        # ls-tree takes paths as prefixes; the changed list is exact file names.
        for start in range(0, len(changed), 500):
            extract_tree(source, new_commit, Path(tmp), changed[start : start + 500])
        fresh = scan_checkout(Path(tmp), settings=settings)
    # Only the changed files were read, without their crates' manifests: a file's package is
    # what it was.
    packages = {s.file_path: s.package for s in old_sites if s.package}
    fresh = [
        replace(s, package=packages[s.file_path])
        if s.package is None and s.file_path in packages
        else s
        for s in fresh
    ]
    gone = set(changed)
    sites = [s for s in old_sites if s.file_path not in gone] + fresh
    sites.sort(key=lambda s: (s.file_path, s.line, s.message))
    return sites, len(changed)


# ---------------------------------------------------------------------------------------------
# The state and the history file, read back
# ---------------------------------------------------------------------------------------------


def _site_row(site: SiteAt) -> list[Any]:
    return [
        site.file_path,
        site.line,
        site.kind,
        site.message,
        site.function,
        list(site.tags),
        dict(site.check),
        site.package,
    ]


def _site_from_row(row: Sequence[Any]) -> SiteAt:
    path, line, kind, message, function, tags, check, *rest = row
    package = rest[0] if rest else None  # (a row cached before packages were kept has none)
    return SiteAt(path, line, kind, message, function, tuple(tags), tuple(check.items()), package)


@dataclass(slots=True)
class _Loaded:
    history: History
    events: dict[str, list[list[Any]]]
    attached: dict[str, list[str]]
    subjects: dict[str, str]


def read_history(path: Path, cached: dict[int, list[SiteAt]]) -> _Loaded:
    """The history file as a `History`; the states of the columns in `cached` (release index
    -> its sites) get their enclosing fn, tags and check from there."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    header = rows[0]
    releases = [Release(r["version"], r["tag"], r["commit"]) for r in header["releases"]]
    full: dict[int, dict[tuple[str, int, str], SiteAt]] = {
        r: {(s.file_path, s.line, s.message): s for s in sites} for r, sites in cached.items()
    }
    lineages: list[Lineage] = []
    events: dict[str, list[list[Any]]] = {}
    attached: dict[str, list[str]] = {}
    for row in rows[1:]:
        lineage = Lineage(id=row["lineage"])
        for first, last, file_path, message, kind in row["spans"]:
            for r in range(first, last + 1):
                line = row["lines"][r]
                found = full.get(r, {}).get((file_path, line, message))
                lineage.states[r] = found or SiteAt(file_path, line, kind, message)
        lineages.append(lineage)
        if row.get("events"):
            events[lineage.id] = row["events"]
        if row.get("records"):
            attached[lineage.id] = row["records"]
    history = History(header["repo"], releases, lineages)
    return _Loaded(history, events, attached, dict(header.get("commits") or {}))


def _column(history: History, r: int | None) -> list[SiteAt]:
    if r is None:
        return []
    return sorted(
        (lin.states[r] for lin in history.lineages if r in lin.states),
        key=lambda s: (s.file_path, s.line, s.message),
    )


# ---------------------------------------------------------------------------------------------
# Refreshing
# ---------------------------------------------------------------------------------------------


def refresh_catalog(
    catalog_dir: str | Path,
    source: str | Path,
    *,
    repo: str | None = None,
    branch: str | None = None,
    tags_pattern: str | None = None,
    fetch: bool = True,
    log: Callable[[str], None] | None = None,
    pinned: Target | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> RefreshResult:
    """Bring the catalog in `catalog_dir` up to date with `source`; see the module's text.
    The files are replaced as one set (`replace_set`; a set a crash interrupted is finished or
    cleaned first, under the lock). `pinned`:
    build exactly these refs (the head and tags replicas agreed on) instead of the newest.
    One refresh of a folder at a time (a lock file beside the catalog: `serve` and a cron job
    may share a folder). `progress(done, total)`: after each release column built."""
    out = Path(catalog_dir)
    if out.exists() and not out.is_dir():
        raise RefreshError(f"{out}: a file is there, not a catalog folder")
    if _git_ok(Path(source), "rev-parse", "--git-dir") is None:
        raise RefreshError(f"{source}: not a git repository")
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    try:
        with open(out / LOCK_FILE, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            recover(out)  # what a killed refresh left: its committed set put in place, temps gone
            step = progress or (lambda _done, _total: None)
            return _refresh(out, Path(source), repo, branch, tags_pattern, fetch, log, pinned, step)
    except BaseException:
        if created:  # a folder this call made and nothing was built in: nothing is left behind
            (out / LOCK_FILE).unlink(missing_ok=True)
            with contextlib.suppress(OSError):
                out.rmdir()
        raise


def _refresh(
    out: Path,
    source: Path,
    repo: str | None,
    branch: str | None,
    tags_pattern: str | None,
    fetch: bool,
    log: Callable[[str], None] | None,
    pinned: Target | None,
    step: Callable[[int, int], None],
) -> RefreshResult:
    started = time.monotonic()
    say = log or (lambda _m: None)
    if _git_ok(source, "rev-parse", "--git-dir") is None:
        raise RefreshError(f"{source}: not a git repository")
    if fetch and fetch_source(source):
        say(f"refresh: fetched {source}")
    state = read_state(out)
    history_path = out / HISTORY_FILE
    old_header = _history_header(history_path)
    repo = (
        repo
        or (state or {}).get("repo")
        or (old_header or {}).get("repo")
        or repo_from_remote(source)
    )
    if not repo:
        raise RefreshError("which GitHub repository is this? give --repo OWNER/NAME")
    branch = branch or (state or {}).get("branch") or default_branch(source)
    if tags_pattern is None:
        tags_pattern = (state or {}).get("tags_pattern")
    try:
        tags = release_tags(source, tags_pattern)
    except re.error as exc:
        raise RefreshError(f"the tag pattern is not a regular expression: {exc}") from None
    tag_commits = {t: git(source, "rev-parse", f"{t}^{{commit}}").strip() for t in tags}
    head = branch_commit(source, branch)
    if pinned is not None:
        missing = [t for t, sha in pinned.tags.items() if tag_commits.get(t) != sha]
        if missing or _git_ok(source, "cat-file", "-e", f"{pinned.head}^{{commit}}") is None:
            what = f"tag {missing[0]}" if missing else f"commit {pinned.head[:12]}"
            raise RefreshError(f"{source} lacks {what}, which the catalog is to be built at")
        tags = [t for t in tags if t in pinned.tags]
        tag_commits = {t: tag_commits[t] for t in tags}
        head = pinned.head
    settings = _settings(out)

    reason = _full_build_reason(source, state, history_path, head, tag_commits)
    if reason is None and state is not None:
        old_tags: dict[str, str] = state["tags"]
        digests = {k: v.get("digest") for k, v in (state.get("writeups") or {}).items()}
        edited = digests != _writeups(out)
        if state["head"] == head and list(old_tags) == tags and not edited:
            result = RefreshResult("unchanged", "", repo, head, tags)
            result.seconds = time.monotonic() - started
            return result
        built = _incremental(source, out, state, repo, head, tags, tag_commits, settings, say, step)
    else:
        say(f"refresh: full build ({reason or 'no catalog yet'})")
        built = _full(source, out, repo, head, tags, settings, say, step)
        built.reason = reason or "no catalog yet"
    result = _write(out, built, repo, branch, tags_pattern, head, tags, tag_commits, str(source))
    result.seconds = time.monotonic() - started
    return result


def _settings(out: Path) -> ScanSettings | None:
    path = out / SCAN_SETTINGS_FILE
    return load_scan_settings(path) if path.is_file() else None


def _history_header(path: Path) -> dict[str, Any] | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.loads(handle.readline())
    except (OSError, ValueError):
        return None


def _full_build_reason(
    source: Path,
    state: dict[str, Any] | None,
    history_path: Path,
    head: str,
    tag_commits: dict[str, str],
) -> str | None:
    if state is None:
        return "no refresh state in the catalog folder" if history_path.exists() else None
    if not history_path.exists():
        return f"{HISTORY_FILE} is missing"
    old_head = state["head"]
    header = _history_header(history_path) or {}
    built = [(r.get("tag"), r.get("commit")) for r in header.get("releases", [])]
    if built != [*state["tags"].items(), (None, old_head)]:
        return f"{HISTORY_FILE} and {STATE_FILE} disagree (an interrupted refresh?)"
    if _git_ok(source, "cat-file", "-e", f"{old_head}^{{commit}}") is None:
        return f"force-push: the old head {old_head[:12]} is gone from the branch"
    if old_head != head and not _is_ancestor(source, old_head, head):
        return f"force-push: {head[:12]} does not descend from {old_head[:12]}"
    old_tags: dict[str, str] = state["tags"]
    for tag, sha in old_tags.items():
        if tag_commits.get(tag) != sha:
            return f"tag {tag} moved or was deleted"
    newest = max(old_tags, key=version_key) if old_tags else None
    for tag in tag_commits:
        if tag not in old_tags and newest is not None and version_key(tag) < version_key(newest):
            return f"tag {tag} is older than the newest built release {newest}"
    return None


@dataclass(slots=True)
class _Built:
    history: History
    events: dict[str, list[list[Any]]]
    attached: dict[str, list[str]]
    subjects: dict[str, str]
    changed_files: int
    new_tags: list[str]
    reason: str = ""
    # incremental: the versions of the releases built before (their removals are kept)
    kept_versions: set[str] = field(default_factory=set)


def _full(
    source: Path,
    out: Path,
    repo: str,
    head: str,
    tags: list[str],
    settings: ScanSettings | None,
    say: Callable[[str], None],
    step: Callable[[int, int], None],
) -> _Built:
    done = [0]

    def progress(release: Release, sites: int, seconds: float) -> None:
        say(f"refresh: {release.version} ({release.commit[:12]}): {sites} sites in {seconds:.1f}s")
        done[0] += 1
        step(done[0], len(tags) + 1)  # the tags, then HEAD

    history = build_history(
        source, repo, tags=tags, head_ref=head, progress=progress, settings=settings
    )
    old = _old_history(out)
    if old is not None:
        _keep_ids(history, old)
    subjects: dict[str, str] = {}
    events = lineage_events(history, source, subjects)
    attached = old.attached if old is not None else {}
    ids = {lin.id for lin in history.lineages}
    attached = {k: v for k, v in attached.items() if k in ids}
    return _Built(history, events, attached, subjects, -1, list(tags))


def _old_history(out: Path) -> _Loaded | None:
    path = out / HISTORY_FILE
    if not path.exists():
        return None
    try:
        return read_history(path, {})
    except (ValueError, KeyError, IndexError):
        return None


def _keep_ids(history: History, old: _Loaded) -> None:
    """A full build over an existing catalog: a lineage that reaches an old lineage's newest
    state (same release commit, file, line, message) keeps the old id."""
    where: dict[tuple[str, str, int, str], str] = {}
    for lineage in old.history.lineages:
        r, state = lineage.last()
        commit = old.history.releases[r].commit
        where[(commit, state.file_path, state.line, state.message)] = lineage.id
    taken: set[str] = set()
    renamed: dict[int, str] = {}
    for k, lineage in enumerate(history.lineages):
        for r, state in lineage.states.items():
            commit = history.releases[r].commit
            old_id = where.get((commit, state.file_path, state.line, state.message))
            if old_id is not None and old_id not in taken:
                renamed[k] = old_id
                taken.add(old_id)
                break
    others = {lin.id for k, lin in enumerate(history.lineages) if k not in renamed}
    for k, new_id in renamed.items():
        if new_id in others:
            continue  # another lineage already holds that id
        history.lineages[k].id = new_id


def _incremental(
    source: Path,
    out: Path,
    state: dict[str, Any],
    repo: str,
    head: str,
    tags: list[str],
    tag_commits: dict[str, str],
    settings: ScanSettings | None,
    say: Callable[[str], None],
    step: Callable[[int, int], None],
) -> _Built:
    old_tags: dict[str, str] = state["tags"]
    cached_tag = [_site_from_row(r) for r in state["sites"]["tag"]]
    cached_head = [_site_from_row(r) for r in state["sites"]["head"]]
    count = len(old_tags)  # the HEAD column's index in the old history
    cached = {count: cached_head}
    if count:
        cached[count - 1] = cached_tag
    loaded = read_history(Path(out) / HISTORY_FILE, cached)
    history = loaded.history
    if [r.tag for r in history.releases[:count]] != list(old_tags):
        raise RefreshError(f"{HISTORY_FILE} does not hold the releases the state file names")
    new_tags = [t for t in tags if t not in old_tags]
    before = {lin.id: _head_key(lin, count) for lin in history.lineages}
    old_head_only = _drop_column(history, count)
    history.releases = history.releases[:count]
    scanned = 0
    prev_commit = history.releases[-1].commit if count else None
    prev_sites = cached_tag if count else []
    for number, tag in enumerate(new_tags, 1):
        # From the previous release or from the old head, whichever differs in fewer files
        # (a tag cut from the branch is usually the head already scanned).
        base_commit, base_sites = prev_commit, prev_sites
        if prev_commit is None or len(
            changed_rust_files(source, state["head"], tag_commits[tag])
        ) < len(changed_rust_files(source, prev_commit, tag_commits[tag])):
            base_commit, base_sites = state["head"], cached_head
        sites, files = rescan(source, base_commit, base_sites, tag_commits[tag], settings)
        scanned += max(files, 0)
        say(f"refresh: {tag}: {len(sites)} sites, {files} files scanned")
        step(number, len(new_tags) + 1)
        _append_column(history, sites, old_head_only)
        history.releases.append(Release(version_of(tag), tag, tag_commits[tag]))
        prev_commit, prev_sites = tag_commits[tag], sites
    # The head descends from the old head: the fewest files to read again.
    head_sites, files = rescan(source, state["head"], cached_head, head, settings)
    scanned += max(files, 0)
    say(f"refresh: HEAD {head[:12]}: {len(head_sites)} sites, {files} files scanned")
    step(len(new_tags) + 1, len(new_tags) + 1)
    _append_column(history, head_sites, old_head_only)
    history.releases.append(Release(HEAD, None, head))
    # The events of the columns built again; the older ones are kept as they were.
    # With no new release, a lineage whose head state is as before keeps its head events
    # (the commit that changed it is still the one): the cost follows the commits' changes.
    same = set()
    if not new_tags:
        for lineage in history.lineages:
            if lineage.id in before and before[lineage.id] == _head_key(lineage, count):
                same.add(lineage.id)
    subjects: dict[str, str] = {}
    todo = {lin.id for lin in history.lineages} - same
    fresh = lineage_events(history, source, subjects, first=count, only=todo)
    events: dict[str, list[list[Any]]] = {}
    for lineage in history.lineages:
        old = loaded.events.get(lineage.id, [])
        # Events with no version were the old head's; that column is found again, or kept.
        kept = [e for e in old if e[1] is not None or lineage.id in same]
        kept.extend(fresh.get(lineage.id, []))
        if kept:
            events[lineage.id] = kept
    subjects = {**loaded.subjects, **subjects}
    what = []
    if new_tags:
        what.append("new release " + ", ".join(new_tags))
    if head != state["head"]:
        what.append(f"branch {state['head'][:12]}..{head[:12]}")
    built = _Built(history, events, loaded.attached, subjects, scanned, new_tags)
    built.reason = ", ".join(what) or "nothing new"
    built.kept_versions = {version_of(t) for t in old_tags}
    return built


def _head_key(lineage: Lineage, r: int) -> tuple[Any, ...]:
    """What a lineage's events at the head column depend on: its state there and just before."""
    head = lineage.states.get(r)
    prev = lineage.states.get(r - 1)
    return (
        (head.file_path, head.key) if head else None,
        (prev.file_path, prev.key) if prev else None,
        max((k for k in lineage.states if k < r), default=None),
    )


def _drop_column(history: History, r: int) -> list[tuple[str, SiteAt]]:
    """Remove release `r` from every lineage; the lineages only it held are dropped and
    returned (id, state) so their ids can be given back to the same sites."""
    only: list[tuple[str, SiteAt]] = []
    kept: list[Lineage] = []
    for lineage in history.lineages:
        state = lineage.states.pop(r, None)
        if lineage.states:
            kept.append(lineage)
        elif state is not None:
            only.append((lineage.id, state))
    history.lineages = kept
    return only


def _append_column(
    history: History, sites: Sequence[SiteAt], reusable: list[tuple[str, SiteAt]]
) -> None:
    r = len(history.releases)
    active = [k for k, lin in enumerate(history.lineages) if r - 1 in lin.states]
    before = len(history.lineages)
    link_release(history.lineages, r, sites, active)
    newcomers = history.lineages[before:]
    # A site new since the last release keeps the id it had in the previous refresh.
    if reusable and newcomers:
        olds = [state for _, state in reusable]
        news = [lin.states[r] for lin in newcomers]
        used = []
        for i, j, _how in link_sites(olds, news):
            newcomers[j].id = reusable[i][0]
            used.append(i)
        for i in sorted(used, reverse=True):
            del reusable[i]
    _give_ids(history.lineages, history.repo)


def _give_ids(lineages: Iterable[Lineage], repo: str) -> None:
    lineages = list(lineages)
    taken = {lin.id for lin in lineages if lin.id}
    for lineage in lineages:
        if lineage.id:
            continue
        _r, state = lineage.last()
        occurrence = 0
        rid = site_id(repo, state.file_path, state.message, occurrence)
        while rid in taken:
            occurrence += 1
            rid = site_id(repo, state.file_path, state.message, occurrence)
        taken.add(rid)
        lineage.id = rid


# ---------------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------------


def _write(
    out: Path,
    built: _Built,
    repo: str,
    branch: str,
    tags_pattern: str | None,
    head: str,
    tags: list[str],
    tag_commits: dict[str, str],
    source: str,
) -> RefreshResult:
    history = built.history
    old_live = _records(out / LIVE_FILE)
    old_gone = _records(out / GONE_FILE)
    live, gone = lineage_records(history)
    live, gone = _current_on_release(live, gone)
    if built.kept_versions:
        # Sites gone before this refresh's columns: their old records are kept as written
        # (their last state's enclosing fn and check are not in the history file).
        gone = [
            old_gone.get(r["id"], r) if _removed_in(r) in built.kept_versions else r for r in gone
        ]
    writeups = _writeups(out)
    state = read_state(out) or {}
    baselines: dict[str, dict[str, Any]] = dict(state.get("writeups") or {})
    review: list[str] = []
    for record in (*live, *gone):  # old records kept as written may carry an earlier flag
        if any(t.startswith(REVIEW_TAG_PREFIX) for t in record.get("tags", [])):
            record["tags"] = [t for t in record["tags"] if not t.startswith(REVIEW_TAG_PREFIX)]
    by_id = {r["id"]: (r, True) for r in live} | {r["id"]: (r, False) for r in gone}
    for rid, digest in sorted(writeups.items()):
        found = by_id.get(rid)
        if found is None:
            old = old_live.get(rid) or old_gone.get(rid)
            if old is None:
                continue  # another file's record (check_reasons.jsonl), or none: the loader says
            # A full build found no lineage for it: the old record stays, for review.
            record = _tagged(old, REVIEW_GONE)
            gone.append(record)
            review.append(f"{rid}: {REVIEW_GONE}")
            continue
        record, is_live = found
        key = normalise_message(str(record.get("errorMessage", "")))
        base = baselines.get(rid)
        if base is None or base.get("digest") != digest:
            baselines[rid] = {"digest": digest, "message": key, "live": is_live}
            continue
        why = None
        if base.get("live") and not is_live:
            why = REVIEW_GONE
        elif base.get("message") != key:
            why = REVIEW_CHANGED
        if why:
            record["tags"] = _tagged(record, why)["tags"]
            review.append(f"{rid}: {why}")
    for rid in list(baselines):
        if rid not in writeups:
            del baselines[rid]
    order = lambda r: (r["filePath"], r["lineNumber"], r["errorMessage"])  # noqa: E731
    gone.sort(key=order)
    head_index = len(history.releases) - 1
    tag_index = head_index - 1 if head_index else None
    lines = history_lines(history, built.attached, built.events, _named(built))
    new_state = {
        "format": STATE_FORMAT,
        "repo": repo,
        "source": source,
        "branch": branch,
        "tags_pattern": tags_pattern,
        "head": head,
        "tags": {t: tag_commits[t] for t in tags},
        "version": catalog_version(tags, head),
        "built": datetime.now(UTC).isoformat(timespec="seconds"),
        "sites": {
            "tag": [_site_row(s) for s in _column(history, tag_index)],
            "head": [_site_row(s) for s in _column(history, head_index)],
        },
        "writeups": baselines,
    }
    out.mkdir(parents=True, exist_ok=True)
    replace_set(
        out,
        {
            HISTORY_FILE: "\n".join(lines) + "\n",
            LIVE_FILE: _jsonl(live),
            GONE_FILE: _jsonl(gone),
            STATE_FILE: json.dumps(new_state, ensure_ascii=False) + "\n",
        },
    )
    mode = "full" if built.changed_files < 0 else "incremental"
    return RefreshResult(
        mode,
        built.reason,
        repo,
        head,
        list(tags),
        new_tags=built.new_tags,
        changed_files=max(built.changed_files, 0),
        live=len(live),
        removed=len(gone),
        review=review,
    )


def _removed_in(record: dict[str, Any]) -> str | None:
    for tag in record.get("tags", []):
        if tag.startswith("removed-in:"):
            return str(tag[len("removed-in:") :])
    return None


def _tagged(record: dict[str, Any], why: str) -> dict[str, Any]:
    out = dict(record)
    tags = [t for t in out.get("tags", []) if not t.startswith(REVIEW_TAG_PREFIX)]
    out["tags"] = [*tags, REVIEW_TAG_PREFIX + why]
    return out


def _current_on_release(
    live: list[dict[str, Any]], gone: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A site gone on the branch but still in the newest release stays current for users of
    that release: a live record pinned to the release (the history says it left the branch)."""
    still: list[dict[str, Any]] = []
    rest: list[dict[str, Any]] = []
    for record in gone:
        tags = record.get("tags", [])
        if f"removed-in:{HEAD}" in tags:
            record = dict(record)
            record["tags"] = [
                t
                for t in tags
                if not t.startswith((REMOVED_TAG_PREFIX, "removed-in:", "last-seen-in:"))
            ]
            still.append(record)
        else:
            rest.append(record)
    order = lambda r: (r["filePath"], r["lineNumber"], r["errorMessage"])  # noqa: E731
    return sorted(live + still, key=order), rest


def _named(built: _Built) -> dict[str, str]:
    named = {e[2] for events in built.events.values() for e in events}
    return {sha: s for sha, s in built.subjects.items() if sha in named}


def _records(path: Path) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return out
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            out[row["id"]] = row
    return out


def _writeups(out: Path) -> dict[str, str]:
    """Write-up id -> a digest of its file (an edit of the file is a person's review)."""
    found: dict[str, str] = {}
    folder = out / WRITEUPS_DIR
    if not folder.is_dir():
        return found
    for path in sorted(folder.rglob("*.json*")):
        text = path.read_bytes()
        digest = hashlib.sha256(text).hexdigest()[:16]
        try:
            docs: list[Any] = (
                [json.loads(line) for line in text.decode().splitlines() if line.strip()]
                if path.suffix == ".jsonl"
                else [json.loads(text)]
            )
        except ValueError:
            continue
        for doc in docs:
            for item in doc if isinstance(doc, list) else [doc]:
                if isinstance(item, dict) and isinstance(item.get("id"), str):
                    found[item["id"]] = digest
    return found


def _jsonl(rows: Iterable[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
