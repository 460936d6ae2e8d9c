"""What changed each lineage, from the repository's commits: which commit introduced a site,
changed its message, moved it to another crate or removed it, and why it left (issue 24).

Between two consecutive releases the linker (`bot.scan.lineages`) knows *that* a site appeared,
changed or vanished; this module finds *which commit* did it. The commits that touched the
site's file between the two tags are listed oldest first (`git rev-list`), and a bisection over
them reads the file at each probe (`git cat-file --batch`) and counts a literal run of the
message: the first commit at which the count reaches the later release's count did the change.
A site of the first release is followed back through the whole history before it, through the
renames `git diff-tree -M` reports.

A removal is classified from what the history shows, never guessed: the crate folder gone in
that release and a subject that says where it moved (`Move ONNX crates to burn-onnx repository`)
-> `moved` to that repository; the crate folder gone otherwise -> `removed`, naming the crate;
a subject that says it fixes something, in a release -> `fixed`; otherwise `removed`. A site
gone at the branch head but still in the newest release is `removed` with no version.
"""

from __future__ import annotations

import re
import subprocess
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from bot.core.match.releases import crate_and_inner
from bot.scan.lineages import History, Lineage, SiteAt, git, version_key, version_of

# The shortest literal run of a message worth counting in a file.
MIN_NEEDLE = 4
# How many renames to follow back when a site's file was created by one.
MAX_RENAMES = 5
RELEASE_TAG = re.compile(r"^v?\d+\.\d+\.\d+$")
_PLACEHOLDER = re.compile(r"\{[^{}]*\}|\\.|[\"\n]")
_FIX_SUBJECT = re.compile(r"^(fix|bugfix|hotfix)\b|\bfix(es|ed)?\b", re.IGNORECASE)
_MOVED_TO_CRATE = re.compile(r"\bmove\b.*?\bto\s+(?:the\s+)?`?([\w.-]+)`?\s+crate\b", re.IGNORECASE)
_MOVED_TO = re.compile(
    r"\bmove\b.*?\bto\s+(?:the\s+)?(?:`?([\w.-]+)/)?`?([\w.-]+)`?\s+repo(?:sitory)?\b",
    re.IGNORECASE,
)


def needle(message: str) -> str | None:
    """The longest literal run of a message format, as it stands in the source."""
    parts = [p for p in _PLACEHOLDER.split(message) if p.strip()]
    best = max(parts, key=len, default="")
    return best if len(best) >= MIN_NEEDLE else None


class Blobs:
    """Files at commits, through one `git cat-file --batch` process."""

    def __init__(self, repo_dir: str | Path) -> None:
        self._proc = subprocess.Popen(
            ["git", "-C", str(repo_dir), "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self._cache: dict[tuple[str, str], str | None] = {}

    def text(self, commit: str, path: str) -> str | None:
        key = (commit, path)
        if key in self._cache:
            return self._cache[key]
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(f"{commit}:{path}\n".encode())
        self._proc.stdin.flush()
        header = self._proc.stdout.readline().split()
        body: str | None = None
        if len(header) == 3 and header[1] == b"blob":
            raw = self._proc.stdout.read(int(header[2]))
            self._proc.stdout.read(1)
            body = raw.decode("utf-8", errors="replace")
        elif len(header) == 3:  # a tree or another object: read past it
            self._proc.stdout.read(int(header[2]) + 1)
        self._cache[key] = body
        return body

    def count(self, commit: str, path: str, text: str) -> int:
        body = self.text(commit, path)
        return body.count(text) if body is not None else 0

    def forget(self) -> None:
        self._cache.clear()

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        self._proc.wait()


@dataclass(slots=True)
class Finder:
    repo_dir: str | Path
    blobs: Blobs
    _commits: dict[tuple[str | None, str, str], list[str]]

    def commits(self, since: str | None, until: str, path: str) -> list[str]:
        """Commits that touched `path` after `since` up to `until`, oldest first."""
        key = (since, until, path)
        if key not in self._commits:
            spec = [f"{since}..{until}"] if since else [until]
            out = git(self.repo_dir, "rev-list", "--reverse", *spec, "--", path)
            self._commits[key] = out.split()
        return self._commits[key]

    def first_reaching(
        self, since: str | None, until: str, path: str, text: str, target: int, rising: bool
    ) -> str | None:
        """The first commit of the range at which the count of `text` in `path` reaches
        `target` (from below when `rising`, from above otherwise) and stays there."""
        commits = self.commits(since, until, path)
        if not commits:
            return None

        def reached(commit: str) -> bool:
            found = self.blobs.count(commit, path, text)
            return found >= target if rising else found <= target

        if not reached(commits[-1]):
            return None
        low, high = 0, len(commits) - 1
        while low < high:
            middle = (low + high) // 2
            if reached(commits[middle]):
                high = middle
            else:
                low = middle + 1
        return commits[low]

    def renamed_from(self, commit: str, path: str) -> str | None:
        """The path `path` had before `commit` renamed it, if it did. Only Rust files are
        compared: rename detection reads every added and deleted blob it is given, and a
        mirror may lack a large one (a test fixture) that no site is in."""
        out = git(
            self.repo_dir, "diff-tree", "-r", "-M", "--name-status", "--root", commit, "--", "*.rs"
        )
        for line in out.splitlines():
            fields = line.split("\t")
            if len(fields) == 3 and fields[0].startswith("R") and fields[2] == path:
                return fields[1]
        return None


def _introduced(
    finder: Finder, since: str | None, until: str, state: SiteAt, text: str
) -> str | None:
    """The commit that brought the site's message into its file (followed back through
    renames when the range reaches back before the first release)."""
    path = state.file_path
    target = finder.blobs.count(until, path, text)
    if target == 0:
        return None
    base = finder.blobs.count(since, path, text) if since else 0
    if base >= target:
        return None  # the count alone cannot tell (another site of the message left meanwhile)
    found = finder.first_reaching(since, until, path, text, target, rising=True)
    for _ in range(MAX_RENAMES):
        if found is None or since is not None:
            break
        old = finder.renamed_from(found, path)
        if old is None:
            break
        earlier = finder.first_reaching(None, f"{found}^", old, text, 1, rising=True)
        if earlier is None:
            break
        found, path = earlier, old
    return found


def _gone(finder: Finder, since: str, until: str, state: SiteAt, text: str) -> str | None:
    path = state.file_path
    base = finder.blobs.count(since, path, text)
    target = finder.blobs.count(until, path, text)
    if target >= base:
        return None
    return finder.first_reaching(since, until, path, text, target, rising=False)


@lru_cache(maxsize=4096)
def _path_exists(repo_dir: str | Path, commit: str, folder: str) -> bool:
    out = git(repo_dir, "ls-tree", "--name-only", commit, "--", folder)
    return bool(out.strip())


def _crate_folder(file_path: str) -> str | None:
    crate, inner = crate_and_inner(file_path)
    if crate is None:
        return None
    return file_path[: len(file_path) - len(inner)].rstrip("/")


def lineage_events(
    history: History,
    repo_dir: str | Path,
    subjects: dict[str, str] | None = None,
    *,
    first: int = 0,
    only: set[str] | None = None,
) -> dict[str, list[list[Any]]]:
    """Lineage id -> its events `[kind, release index | None, sha, detail?]`, oldest first;
    the subjects of the commits named are added to `subjects` (sha -> subject). `first`: only
    the changes that reached release `first` or a later one (`catalog refresh` keeps the
    older events it found before); `only`: just these lineages."""
    finder = Finder(repo_dir, Blobs(repo_dir), {})
    commits = [r.commit for r in history.releases]
    newest = len(commits) - 1
    found: dict[str, list[list[Any]]] = defaultdict(list)
    removals: list[tuple[Lineage, int, str]] = []
    early: list[list[Any]] = []  # introduced before the first release
    try:
        # Work file by file so each file's versions are read once.
        by_file: dict[str, list[tuple[Lineage, int, str]]] = defaultdict(list)
        for lineage in history.lineages:
            if only is not None and lineage.id not in only:
                continue
            present = lineage.present_in()
            for position, r in enumerate(present):
                if r < first:
                    continue
                state = lineage.states[r]
                before = lineage.states.get(present[position - 1]) if position else None
                if before is None:
                    by_file[state.file_path].append((lineage, r, "introduced"))
                elif before.key != state.key:
                    by_file[state.file_path].append((lineage, r, "changed"))
                elif _crate_folder(before.file_path) != _crate_folder(state.file_path):
                    by_file[state.file_path].append((lineage, r, "moved"))
            last = present[-1]
            if first <= last + 1 <= newest:
                by_file[lineage.states[last].file_path].append((lineage, last + 1, "gone"))
        for path in sorted(by_file):
            for lineage, r, kind in by_file[path]:
                state = lineage.states[r - 1] if kind == "gone" else lineage.states[r]
                text = needle(state.message)
                if text is None:
                    continue
                since = commits[r - 1] if r else None
                if kind == "gone":
                    assert since is not None
                    sha = _gone(finder, since, commits[r], state, text)
                    if sha is not None:
                        removals.append((lineage, r, sha))
                    continue
                sha = _introduced(finder, since, commits[r], state, text)
                if sha is not None:
                    found[lineage.id].append([kind, _version(history, r), sha])
                    if since is None:
                        early.append(found[lineage.id][-1])
            finder.blobs.forget()
        first_tag = first_releases(repo_dir, {e[2] for e in early})
        for event in early:
            event[1] = first_tag.get(event[2]) or event[1]
        shas = {e[2] for events in found.values() for e in events} | {s for *_, s in removals}
        titles = commit_subjects(repo_dir, sorted(shas))
        for lineage, r, sha in removals:
            found[lineage.id].append(_removal(history, repo_dir, lineage, r, sha, titles[sha]))
        named = {e[2] for events in found.values() for e in events}
        titles.update(commit_subjects(repo_dir, sorted(named - titles.keys())))
        if subjects is not None:
            subjects.update(titles)
    finally:
        finder.blobs.close()
    order = {"introduced": 0, "moved": 1, "changed": 1, "removed": 2, "fixed": 2}
    for events in found.values():
        events.sort(key=lambda e: order[e[0]])
    return dict(found)


def _version(history: History, r: int) -> str | None:
    """The release's version; None for the branch head (not released)."""
    release = history.releases[r]
    return release.version if release.tag is not None else None


def first_releases(repo_dir: str | Path, shas: set[str]) -> dict[str, str]:
    """The oldest release tag (`vX.Y.Z`) holding each commit, as a version (commits no release
    holds are left out). The release tags are walked oldest first, each listing the commits it
    is the first to hold: one `git rev-list` a tag, where a `git tag --contains` a commit cost
    a big workspace's history minutes."""
    found: dict[str, str] = {}
    if not shas:
        return found
    tags = sorted(
        (t for t in git(repo_dir, "tag", "--list").split() if RELEASE_TAG.search(t)),
        key=version_key,
    )
    older: list[str] = []
    for tag in tags:
        for sha in git(repo_dir, "rev-list", tag, *(f"^{t}" for t in older)).split():
            if sha in shas:
                found.setdefault(sha, version_of(tag))
        if len(found) == len(shas):
            break
        older.append(tag)
    return found


def _removal(
    history: History, repo_dir: str | Path, lineage: Lineage, r: int, sha: str, subject: str
) -> list[Any]:
    """`moved` (to a repository the subject names), `removed` (with the crate, when its folder
    left), `fixed` (a fix by its subject, gone in a release) or `removed`."""
    state = lineage.states[r - 1]
    version = _version(history, r)
    released = version is not None
    folder = _crate_folder(state.file_path)
    until = history.releases[r].commit
    if folder is not None and not _path_exists(repo_dir, until, folder):
        moved = _MOVED_TO.search(subject)
        if moved is None:
            # Moved to a sibling crate that left the repository itself before the release
            # (burn-import -> crates/burn-onnx in #4361 -> tracel-ai/burn-onnx in #4393).
            crate = _MOVED_TO_CRATE.search(subject)
            sibling = f"{folder.rsplit('/', 1)[0]}/{crate.group(1)}" if crate else None
            if sibling and sibling != folder and not _path_exists(repo_dir, until, sibling):
                since = history.releases[r - 1].commit
                last = git(repo_dir, "rev-list", "-1", f"{since}..{until}", "--", sibling).strip()
                later = commit_subjects(repo_dir, [last]).get(last, "") if last else ""
                moved = _MOVED_TO.search(later)
                if moved is not None:
                    sha = last
        if moved is not None:
            owner = moved.group(1) or history.repo.split("/", 1)[0]
            return ["moved", version, sha, f"{owner}/{moved.group(2)}"]
        return ["removed", version, sha, folder.rsplit("/", 1)[-1]]
    if released and _FIX_SUBJECT.search(subject):
        return ["fixed", version, sha]
    return ["removed", version, sha]


def commit_subjects(repo_dir: str | Path, shas: Sequence[str]) -> dict[str, str]:
    if not shas:
        return {}
    done = subprocess.run(
        ["git", "-C", str(repo_dir), "log", "--no-walk=unsorted", "--stdin", "--format=%H %s"],
        input="".join(f"{s}\n" for s in shas),
        check=True,
        capture_output=True,
        text=True,
    )
    out = {}
    for line in done.stdout.splitlines():
        sha, _, subject = line.partition(" ")
        out[sha] = subject
    return out
