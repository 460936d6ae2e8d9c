"""Keeping a catalog in step with the code: the pure part of `catalog update`.

Given the catalog's records and a fresh scan of a newer commit (skeleton records, as
`catalog scan` writes them), each catalogued site of the scanned repository is one of:

* unchanged / moved: same file and message. The record gets the new line, commit and pinned
  URL (a source range shifts with it); its written analysis is left as it is.
* changed: no exact match, but a new site in the same file has a message close to the old one
  (edit distance), or the same message now stands in another file. This is *proposed*, not
  applied: the record and the new site stay as they were until a person accepts the proposal
  (`accept=` with the record id), which moves the record onto the new site.
* removed: the site is gone. The record is kept (older versions still panic with it) and gets
  the tag `removed-at:<commit>`; `removed_at(record)` reads it back. A removed record whose site
  comes back loses the tag again.
* new: a site no record describes gets a skeleton record.

Repeated identical messages of one file are paired by their enclosing fn (`enclosingFn`, when
the record and the scan both name it) before their order in the file.

Only these fields are ever written: `lineNumber`, `enclosingFn`, `githubUrl`, `analyzedSha`,
`sourceCodeStart`/`sourceCodeEnd` (shifted with the line), the `removed-at:` tag, and, for an
accepted proposal, `errorMessage` and `filePath`. Everything a person wrote stays untouched.
"""

from __future__ import annotations

import difflib
import json
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import median
from typing import Any, Protocol

from bot.catalog.model import ATTR_BY_KEY, REMOVED_TAG_PREFIX, WRITE_UP_ATTRS, Record
from bot.catalog.patterns import normalise_message
from bot.catalog.sites import pinned_url, site_id, with_enclosing_fn
from bot.scan.lineages import message_similarity, path_affinity

# A changed message is proposed when its similarity (rapidfuzz ratio, 0-100) reaches this.
DEFAULT_CUTOFF = 85.0
# Fields `update` may write; everything else in a record is left exactly as it was.
MANAGED_FIELDS = frozenset(
    {
        "lineNumber",
        "enclosingFn",
        "githubUrl",
        "analyzedSha",
        "sourceCodeStart",
        "sourceCodeEnd",
        "tags",
    }
)

_RANGE_ANCHOR = re.compile(r"#L(\d+)-L(\d+)$")


def removed_at(record: Mapping[str, Any] | Record) -> str | None:
    """The commit at which a record's site disappeared, or None while it still exists.

    Accepts a camelCase dict or a `Record`.
    """
    tags = record.get("tags") if isinstance(record, Mapping) else record.tags
    for tag in tags or ():
        if isinstance(tag, str) and tag.startswith(REMOVED_TAG_PREFIX):
            return tag[len(REMOVED_TAG_PREFIX) :]
    return None


@dataclass(frozen=True, slots=True)
class Move:
    record_ids: tuple[str, ...]
    file_path: str
    message: str
    old_line: int | None
    new_line: int


@dataclass(frozen=True, slots=True)
class Proposal:
    """A record whose site seems to have changed; applied only when accepted."""

    record_ids: tuple[str, ...]
    # "message" (edited in place), "file" (same message, other file), "file-and-message"
    reason: str
    score: float  # rapidfuzz ratio of the messages, 0-100
    old_file: str
    old_line: int | None
    old_message: str
    new_file: str
    new_line: int
    new_message: str
    new_kind: str | None
    accepted: bool = False


@dataclass(frozen=True, slots=True)
class Removal:
    record_ids: tuple[str, ...]
    file_path: str
    line: int | None
    message: str


@dataclass(slots=True)
class UpdateResult:
    repo: str
    commit: str
    # The catalog's records in their original order (updated where needed), then new skeletons.
    records: list[dict[str, Any]]
    # Indices (into the input records) of the records this update changed.
    changed: set[int] = field(default_factory=set)
    unchanged: list[str] = field(default_factory=list)
    moved: list[Move] = field(default_factory=list)
    proposals: list[Proposal] = field(default_factory=list)
    removed: list[Removal] = field(default_factory=list)
    restored: list[str] = field(default_factory=list)
    new: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def summary(self) -> str:
        pending = sum(1 for p in self.proposals if not p.accepted)
        accepted = len(self.proposals) - pending
        parts = [
            f"moved {len(self.moved)}",
            f"changed {len(self.proposals)} ({pending} proposed, {accepted} accepted)",
            f"removed {len(self.removed)}",
            f"new {len(self.new)}",
            f"unchanged {len(self.unchanged)}",
        ]
        if self.restored:
            parts.append(f"restored {len(self.restored)}")
        return f"{self.repo} at {self.commit[:12]}: " + ", ".join(parts)


# ---------------------------------------------------------------------------------------------
# Matching
# ---------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Slot:
    """Catalog records that describe one site (a write-up and a skeleton may share one)."""

    indices: list[int]
    file_path: str
    message: str  # as the first record spells it
    key: str  # normalised message
    line: int | None
    removed: bool
    function: str | None = None  # the records' `enclosingFn`, when one of them has it


@dataclass(slots=True)
class _Site:
    record: dict[str, Any]
    file_path: str
    message: str
    key: str
    line: int
    kind: str | None
    function: str | None = None  # the scan's `enclosingFn`


def _pair(slots: list[_Slot], sites: list[_Site], shift: float) -> list[tuple[int, int]]:
    """Pair repeated identical messages of one file: within the same enclosing fn first (when
    both sides name it), then the rest by line order (`_align`). A shift measured on the file's
    other sites says nothing about a function that was removed or added between two others."""
    pairs: list[tuple[int, int]] = []
    slots_by_fn: dict[str, list[int]] = defaultdict(list)
    sites_by_fn: dict[str, list[int]] = defaultdict(list)
    for a, slot in enumerate(slots):
        if slot.function:
            slots_by_fn[slot.function].append(a)
    for b, site in enumerate(sites):
        if site.function:
            sites_by_fn[site.function].append(b)
    for name in sorted(set(slots_by_fn) & set(sites_by_fn)):
        olds, news = slots_by_fn[name], sites_by_fn[name]
        for a, b in _align([slots[a] for a in olds], [sites[b] for b in news], shift):
            pairs.append((olds[a], news[b]))
    paired_slots = {a for a, _ in pairs}
    paired_sites = {b for _, b in pairs}
    rest_slots = [a for a in range(len(slots)) if a not in paired_slots]
    rest_sites = [b for b in range(len(sites)) if b not in paired_sites]
    rest = _align([slots[a] for a in rest_slots], [sites[b] for b in rest_sites], shift)
    pairs.extend((rest_slots[a], rest_sites[b]) for a, b in rest)
    return pairs


class _Lined(Protocol):
    @property
    def line(self) -> int | None: ...


def _align(slots: Sequence[_Lined], sites: Sequence[_Lined], shift: float) -> list[tuple[int, int]]:
    """Pair the shorter list entirely with the longer one, in line order, at least cost.

    Slots are paired with the scan's sites, or (`_merge_commits`) with other slots; a slot
    without a line counts as line 0."""
    if not slots or not sites:
        return []

    def cost(a: _Lined, b: _Lined) -> float:
        return abs((b.line or 0) - (a.line or 0) - shift)

    swap = len(slots) > len(sites)
    short = sites if swap else slots
    long = slots if swap else sites
    n, m = len(short), len(long)
    inf = float("inf")
    # best[i][j]: least cost pairing short[:i] within long[:j].
    best = [[inf] * (m + 1) for _ in range(n + 1)]
    for j in range(m + 1):
        best[0][j] = 0.0
    for i in range(1, n + 1):
        for j in range(i, m + 1):
            a, b = (long[j - 1], short[i - 1]) if swap else (short[i - 1], long[j - 1])
            take = best[i - 1][j - 1] + cost(a, b)
            best[i][j] = min(best[i][j - 1], take)
    pairs: list[tuple[int, int]] = []
    i, j = n, m
    while i > 0:
        if best[i][j] == best[i][j - 1] and j - 1 >= i:
            j -= 1
            continue
        pairs.append((j - 1, i - 1) if swap else (i - 1, j - 1))
        i, j = i - 1, j - 1
    pairs.reverse()
    return pairs  # (slot index, site index)


def _merge_commits(group: list[_Slot], out: list[dict[str, Any]]) -> list[_Slot]:
    """One site described by records analysed at different commits (a seed written at an older
    commit, and its skeleton at the newer one) is one slot, not two: the records of the commit
    that counts most slots (the newest scan, usually) stand for the sites, and the others are
    folded into them in line order."""
    if len(group) < 2:
        return group
    by_commit: dict[str | None, list[_Slot]] = defaultdict(list)
    for slot in group:
        if slot.removed:
            continue  # a site that left is another site, even with the same message
        commits = {out[i].get("analyzedSha") for i in slot.indices}
        by_commit[commits.pop() if len(commits) == 1 else None].append(slot)
    if len(by_commit) < 2:
        return group
    primary_commit = max(
        by_commit, key=lambda c: (len(by_commit[c]), c is not None, _newest(by_commit[c], out))
    )
    primary = by_commit.pop(primary_commit)
    merged = [*primary, *(slot for slot in group if slot.removed)]
    for slots in by_commit.values():
        pairs = _align(slots, primary, 0.0) if len(slots) <= len(primary) else []
        paired = set()
        for a, b in pairs:
            target = primary[b]
            target.indices.extend(slots[a].indices)
            target.removed = target.removed and slots[a].removed
            paired.add(a)
        merged.extend(slot for i, slot in enumerate(slots) if i not in paired)
    merged.sort(key=lambda s: (s.line is None, s.line or 0))
    return merged


def _newest(slots: list[_Slot], out: list[dict[str, Any]]) -> int:
    """How many of the slots' records are skeletons (the scan's own, so the newest commit)."""
    return sum(1 for slot in slots for i in slot.indices if not _has_write_up(out[i]))


def _has_write_up(record: Mapping[str, Any]) -> bool:
    return any(record.get(k) for k, attr in ATTR_BY_KEY.items() if attr in WRITE_UP_ATTRS)


def _file_shifts(
    slot_groups: Mapping[tuple[str, str], list[_Slot]],
    site_groups: Mapping[tuple[str, str], list[_Site]],
) -> dict[str, float]:
    """Per file, the typical line shift of its unambiguous sites (one old, one new)."""
    deltas: dict[str, list[int]] = defaultdict(list)
    for key, slots in slot_groups.items():
        sites = site_groups.get(key)
        if sites and len(slots) == 1 and len(sites) == 1 and slots[0].line is not None:
            deltas[key[0]].append(sites[0].line - slots[0].line)
    return {path: median(values) for path, values in deltas.items()}


# ---------------------------------------------------------------------------------------------
# Record edits
# ---------------------------------------------------------------------------------------------


def _with_tags(record: dict[str, Any], tags: list[str]) -> None:
    if tags or "tags" in record:
        record["tags"] = tags


def _relocate(record: dict[str, Any], repo: str, commit: str, file_path: str, line: int) -> None:
    """Point a record at `file_path:line` of `commit`, shifting a source range with it."""
    old_line = record.get("lineNumber")
    delta = line - old_line if isinstance(old_line, int) else 0
    record["lineNumber"] = line
    start, end = record.get("sourceCodeStart"), record.get("sourceCodeEnd")
    url = record.get("githubUrl")
    has_range = isinstance(url, str) and _RANGE_ANCHOR.search(url) is not None
    if isinstance(start, int) and isinstance(end, int):
        record["sourceCodeStart"] = start + delta
        record["sourceCodeEnd"] = end + delta
        if has_range:
            record["githubUrl"] = (
                pinned_url(repo, commit, file_path, None) + f"#L{start + delta}-L{end + delta}"
            )
        else:
            record["githubUrl"] = pinned_url(repo, commit, file_path, line)
    else:
        record["githubUrl"] = pinned_url(repo, commit, file_path, line)
    record["analyzedSha"] = commit


def _fresh_id(record: dict[str, Any], taken: set[str], repo: str) -> str:
    """The skeleton's id, or (when a kept record already has it) the next free occurrence."""
    rid = record["id"]
    occurrence = 1
    while rid in taken:
        rid = site_id(repo, record["filePath"], record["errorMessage"], occurrence)
        occurrence += 1
    return rid


# ---------------------------------------------------------------------------------------------
# The update
# ---------------------------------------------------------------------------------------------


def scan_identity(scan: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    """(repo, commit) of a scan; raise ValueError when the scan mixes several or has none."""
    repos = {r.get("repo") for r in scan}
    commits = {r.get("analyzedSha") for r in scan}
    if len(repos) != 1 or len(commits) != 1:
        raise ValueError(
            "a scan must come from one repository at one commit; found "
            f"{len(repos)} repositories and {len(commits)} commits"
        )
    repo, commit = next(iter(repos)), next(iter(commits))
    if not isinstance(repo, str) or not isinstance(commit, str):
        raise ValueError("the scan's records need `repo` and `analyzedSha`")
    return repo, commit


def update_catalog(
    records: Sequence[Mapping[str, Any]],
    scan: Sequence[Mapping[str, Any]],
    *,
    repo: str | None = None,
    commit: str | None = None,
    accept: Iterable[str] = (),
    reject: Iterable[str] = (),
    cutoff: float = DEFAULT_CUTOFF,
) -> UpdateResult:
    """Bring `records` in step with `scan` (skeleton records of one repo at one commit).

    `repo` and `commit` default to the scan's own; give them when the scan is empty (every site
    gone). `accept` lists record ids whose proposed change should be applied; `reject` those
    whose proposal is wrong (the record is then marked removed and the site added as new).
    """
    if repo is None or commit is None:
        scan_repo, scan_commit = scan_identity(scan)
        repo = repo or scan_repo
        commit = commit or scan_commit
    accepted_ids = set(accept)
    rejected_ids = set(reject)
    out = [json.loads(json.dumps(r)) for r in records]  # deep copies; inputs stay untouched
    result = UpdateResult(repo=repo, commit=commit, records=out)

    # Catalogued sites of this repository, as slots.
    slot_by_key: dict[tuple[str, str, int | None], _Slot] = {}
    for index, record in enumerate(out):
        path, message = record.get("filePath"), record.get("errorMessage")
        if record.get("repo") != repo or not isinstance(path, str) or not isinstance(message, str):
            continue
        line = record.get("lineNumber") if isinstance(record.get("lineNumber"), int) else None
        normalised = normalise_message(message)
        slot = slot_by_key.get((path, normalised, line))
        if slot is None:
            slot = _Slot([], path, message, normalised, line, removed=True)
            slot_by_key[(path, normalised, line)] = slot
        slot.indices.append(index)
        slot.removed = slot.removed and removed_at(record) is not None
        function = record.get("enclosingFn")
        if slot.function is None and isinstance(function, str) and function:
            slot.function = function
    slot_groups: dict[tuple[str, str], list[_Slot]] = defaultdict(list)
    for slot in slot_by_key.values():
        slot_groups[(slot.file_path, slot.key)].append(slot)
    for key, group in slot_groups.items():
        group.sort(key=lambda s: (s.line is None, s.line or 0))
        slot_groups[key] = _merge_commits(group, out)

    site_groups: dict[tuple[str, str], list[_Site]] = defaultdict(list)
    for item in scan:
        site = _Site(
            record=dict(item),
            file_path=item["filePath"],
            message=item["errorMessage"],
            key=normalise_message(item["errorMessage"]),
            line=item["lineNumber"],
            kind=item.get("errorType"),
            function=item.get("enclosingFn") or None,
        )
        site_groups[(site.file_path, site.key)].append(site)
    for sites in site_groups.values():
        sites.sort(key=lambda s: s.line)

    shifts = _file_shifts(slot_groups, site_groups)
    lonely_slots: list[_Slot] = []
    lonely_sites: list[_Site] = []
    for key in sorted(set(slot_groups) | set(site_groups)):
        slots, sites = slot_groups.get(key, []), site_groups.get(key, [])
        # Live records take the sites first; a removed one comes back only for a site left
        # over (a repeated message whose other occurrence left is not restored by line luck).
        live = [s for s in slots if not s.removed]
        gone = [s for s in slots if s.removed]
        shift = shifts.get(key[0], 0.0)
        pairs = _pair(live, sites, shift)
        paired_sites = {b for _, b in pairs}
        for a, b in pairs:
            _apply_pair(result, live[a], sites[b])
        paired_live = {a for a, _ in pairs}
        lonely_slots.extend(s for i, s in enumerate(live) if i not in paired_live)
        left = [b for b in range(len(sites)) if b not in paired_sites]
        back = _pair(gone, [sites[b] for b in left], shift)
        for a, b in back:
            _apply_pair(result, gone[a], sites[left[b]])
            paired_sites.add(left[b])
        paired_gone = {a for a, _ in back}
        lonely_slots.extend(s for i, s in enumerate(gone) if i not in paired_gone)
        lonely_sites.extend(s for i, s in enumerate(sites) if i not in paired_sites)

    used_sites, proposed_slots = _propose(
        result, lonely_slots, lonely_sites, accepted_ids, rejected_ids, cutoff
    )

    for slot in lonely_slots:
        if slot.removed or id(slot) in proposed_slots:
            continue
        tag = REMOVED_TAG_PREFIX + commit
        for index in slot.indices:
            record = out[index]
            tags = [t for t in record.get("tags") or [] if not t.startswith(REMOVED_TAG_PREFIX)]
            _with_tags(record, [*tags, tag])
            result.changed.add(index)
        result.removed.append(Removal(_ids(out, slot), slot.file_path, slot.line, slot.message))

    catalogued = sum(1 for slot in slot_by_key.values() if not slot.removed)
    if catalogued >= 10 and len(result.removed) * 2 > catalogued:
        result.warnings.append(
            f"{len(result.removed)} of {catalogued} catalogued sites are missing from the scan; "
            "was the whole repository scanned, from its root?"
        )

    taken = {r.get("id") for r in out if isinstance(r.get("id"), str)}
    for site in sorted(lonely_sites, key=lambda s: (s.file_path, s.line, s.message)):
        if id(site) in used_sites:
            continue
        skeleton = dict(site.record)
        skeleton["id"] = _fresh_id(skeleton, taken, repo)
        taken.add(skeleton["id"])
        out.append(skeleton)
        result.new.append(skeleton)
    return result


def _ids(out: list[dict[str, Any]], slot: _Slot) -> tuple[str, ...]:
    return tuple(str(out[i].get("id")) for i in slot.indices)


def _apply_pair(result: UpdateResult, slot: _Slot, site: _Site) -> None:
    out = result.records
    moved = slot.line != site.line
    for index in slot.indices:
        record = out[index]
        before = json.dumps(record, sort_keys=True)
        if removed_at(record) is not None:
            tags = [t for t in record.get("tags") or [] if not t.startswith(REMOVED_TAG_PREFIX)]
            _with_tags(record, tags)
            result.restored.append(str(record.get("id")))
        _relocate(record, result.repo, result.commit, site.file_path, site.line)
        _follow_location_tags(record, site.record)
        record = out[index] = _follow_function(record, site)
        if json.dumps(record, sort_keys=True) != before:
            result.changed.add(index)
    if moved:
        result.moved.append(
            Move(_ids(out, slot), slot.file_path, slot.message, slot.line, site.line)
        )
    else:
        result.unchanged.extend(_ids(out, slot))


# Tags the scanner derives from the code around a site (where Rust prints its location): they
# follow the code, as the line does.
_LOCATION_TAGS = ("track-caller", "macro-body", "raised-at:")


def _follow_function(record: dict[str, Any], site: _Site) -> dict[str, Any]:
    """The record names the site's enclosing fn, as the scan does (it follows the code)."""
    if site.function and record.get("enclosingFn") != site.function:
        return with_enclosing_fn(record, site.function)
    return record


def _follow_location_tags(record: dict[str, Any], scanned: dict[str, Any]) -> None:
    tags = [t for t in record.get("tags") or [] if not t.startswith(_LOCATION_TAGS)]
    tags += [t for t in scanned.get("tags") or [] if t.startswith(_LOCATION_TAGS)]
    if tags != list(record.get("tags") or []):
        _with_tags(record, tags)


def _propose(
    result: UpdateResult,
    slots: list[_Slot],
    sites: list[_Site],
    accepted_ids: set[str],
    rejected_ids: set[str],
    cutoff: float,
) -> tuple[set[int], set[int]]:
    """Find changed sites for unmatched records; apply the accepted ones.

    Returns the `id()`s of the new sites and of the slots that took part in a proposal.
    """
    candidates: list[tuple[float, float, int, int, str]] = []
    for a, slot in enumerate(slots):
        if slot.removed or rejected_ids & set(_ids(result.records, slot)):
            continue
        for b, site in enumerate(sites):
            same_file = site.file_path == slot.file_path
            if site.key == slot.key and not same_file:
                score, reason = 100.0, "file"
            else:
                # A message that grew (or shrank) at its end counts as close (see history).
                score = message_similarity(slot.key, site.key, cutoff)
                if score < cutoff:
                    continue
                reason = "message" if same_file else "file-and-message"
            if same_file:
                closeness = -abs(site.line - (slot.line or 0)) / 1000
            else:
                # Lines of two files say nothing about each other: the paths decide.
                closeness = path_affinity(slot.file_path, site.file_path) - 1
                if reason == "file-and-message" and closeness < -0.9:
                    continue  # an edited message in an unrelated file: a different site
            candidates.append((score, closeness, a, b, reason))
    # Best first; each record and each new site takes part in one proposal at most.
    candidates.sort(key=lambda c: (-c[0], -c[1], c[2], c[3]))
    slot_done: set[int] = set()
    site_done: set[int] = set()
    used: set[int] = set()
    proposed: set[int] = set()
    out = result.records
    for score, _neg_distance, a, b, reason in candidates:
        if a in slot_done or b in site_done:
            continue
        slot_done.add(a)
        site_done.add(b)
        slot, site = slots[a], sites[b]
        ids = _ids(out, slot)
        accepted = bool(accepted_ids & set(ids))
        result.proposals.append(
            Proposal(
                record_ids=ids,
                reason=reason,
                score=round(float(score), 1),
                old_file=slot.file_path,
                old_line=slot.line,
                old_message=slot.message,
                new_file=site.file_path,
                new_line=site.line,
                new_message=site.message,
                new_kind=site.kind,
                accepted=accepted,
            )
        )
        used.add(id(site))
        proposed.add(id(slot))
        if accepted:
            for index in slot.indices:
                record = out[index]
                record["errorMessage"] = site.message
                record["filePath"] = site.file_path
                _relocate(record, result.repo, result.commit, site.file_path, site.line)
                out[index] = _follow_function(record, site)
                result.changed.add(index)
                if record.get("messagePattern"):
                    result.warnings.append(
                        f"record {record.get('id')}: its messagePattern was written for the old "
                        "message; check that it still matches the new one"
                    )
    return used, proposed


# ---------------------------------------------------------------------------------------------
# What a reviewer reads
# ---------------------------------------------------------------------------------------------


def _json_lines(record: Mapping[str, Any] | None) -> list[str]:
    if record is None:
        return []
    return json.dumps(record, indent=2, ensure_ascii=False).splitlines()


def record_diff(
    before: Sequence[Mapping[str, Any]],
    result: UpdateResult,
    origins: Sequence[str] | None = None,
    new_origin: str = "new",
) -> str:
    """A unified diff of the JSON of every record the update changed or added."""
    chunks: list[str] = []
    for index in sorted(result.changed):
        where = origins[index] if origins else "catalog"
        rid = result.records[index].get("id")
        chunks.extend(
            difflib.unified_diff(
                _json_lines(before[index]),
                _json_lines(result.records[index]),
                fromfile=f"a/{where} ({rid})",
                tofile=f"b/{where} ({rid})",
                lineterm="",
            )
        )
    for record in result.new:
        chunks.extend(
            difflib.unified_diff(
                [],
                _json_lines(record),
                fromfile="/dev/null",
                tofile=f"b/{new_origin} ({record.get('id')})",
                lineterm="",
            )
        )
    return "\n".join(chunks) + ("\n" if chunks else "")


_REASON_WORDS = {
    "message": "message edited",
    "file": "same message in another file",
    "file-and-message": "moved to another file and edited",
}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", "\\n")


def _where(path: str, line: int | None) -> str:
    return f"{path}:{line}" if line is not None else path


def _table(title: str, columns: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """A section of the review page: `## title` over a table, then a blank line."""
    lines = [f"## {title}", "", _row(columns), _row(["---"] * len(columns))]
    return [*lines, *(_row(cells) for cells in rows), ""]


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _bullets(title: str, items: Iterable[str]) -> list[str]:
    return [f"## {title}", "", *(f"- {item}" for item in items), ""]


def report_markdown(result: UpdateResult, accept_hint: str = "--accept RECORD_ID") -> str:
    """The update as a review page: what moved, what changed, what is gone, what is new."""
    lines = [f"# Catalog update: {result.repo} at {result.commit}", "", result.summary(), ""]
    if result.warnings:
        lines += _bullets("Warnings", result.warnings)
    if result.moved:
        lines += _table(
            "Moved (applied: new line, commit and pinned URL)",
            ("record", "file", "line", "message"),
            (
                (
                    ", ".join(m.record_ids),
                    m.file_path,
                    f"{m.old_line} → {m.new_line}",
                    _cell(m.message),
                )
                for m in result.moved
            ),
        )
    if result.proposals:
        lines += ["## Changed (proposed; not applied unless accepted)", ""]
        for p in result.proposals:
            state = "accepted" if p.accepted else f"proposed; accept with `{accept_hint}`"
            what = _REASON_WORDS.get(p.reason, p.reason)
            lines += [
                f"### {', '.join(p.record_ids)}: {what} (similarity {p.score:g}, {state})",
                "",
                f"{_where(p.old_file, p.old_line)} → {_where(p.new_file, p.new_line)}",
                "",
                "```diff",
                f"- {p.old_message}",
                f"+ {p.new_message}",
                "```",
                "",
            ]
    if result.removed:
        lines += _table(
            f"Removed (kept, tagged `{REMOVED_TAG_PREFIX}{result.commit}`)",
            ("record", "was at", "message"),
            (
                (", ".join(r.record_ids), _where(r.file_path, r.line), _cell(r.message))
                for r in result.removed
            ),
        )
    if result.restored:
        lines += _bullets(
            "Restored (the site is back; the removed-at tag is gone)", result.restored
        )
    if result.new:
        lines += _table(
            "New (skeleton records added)",
            ("record", "at", "kind", "message"),
            (
                (
                    n["id"],
                    _where(n["filePath"], n.get("lineNumber")),
                    n.get("errorType", ""),
                    _cell(n["errorMessage"]),
                )
                for n in result.new
            ),
        )
    return "\n".join(lines)


def _site_json(path: str, line: int | None, message: str) -> dict[str, Any]:
    return {"filePath": path, "lineNumber": line, "errorMessage": message}


def proposals_json(result: UpdateResult) -> list[dict[str, Any]]:
    return [
        {
            "recordIds": list(p.record_ids),
            "reason": p.reason,
            "score": p.score,
            "accepted": p.accepted,
            "old": _site_json(p.old_file, p.old_line, p.old_message),
            "new": _site_json(p.new_file, p.new_line, p.new_message),
        }
        for p in result.proposals
    ]
