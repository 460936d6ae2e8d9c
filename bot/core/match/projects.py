"""Several projects in one catalog: each with its release history and crate names (issue 25).

burn's tracker sees panics from burn, from the same maintainers' cubecl and burn-onnx, and from
dependencies (wgpu, ndarray). One catalog holds them all; the pasted crate, version and path pick
the project whose history revises a match (`cubecl-runtime-0.9.0/src/..` -> tracel-ai/cubecl at
0.9.0), and where records of two projects fit a panic equally, the own project's wins (the
catalog's first project; a server passes the repository an issue is filed in).

A site that left one project for another (burn's burn-import, now in tracel-ai/burn-onnx) is
answered with the project that still has it: `moved` maps the removed record to the live one.

Pure: histories, records and matches in, revised matches out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bot.catalog.model import Record, field, replace, value_class
from bot.catalog.patterns import normalise_message
from bot.core.analysis import Candidate, PanicMatch
from bot.core.match.answer_rule import revised, stronger_first
from bot.core.match.releases import (
    ReleaseHistory,
    crate_and_inner,
    pasted_crate_file,
    release_order,
    revise_at,
    text_version_of,
)


@value_class(frozen=True)
class ProjectInfo:
    """What a catalog folder's `project.toml` says of its project."""

    repo: str  # owner/name
    name: str  # how answers name it: `wgpu`
    dependency: bool = False  # a dependency's code (wgpu, ndarray), not the maintainers' own
    tag: str = "v{version}"  # the release tag of a version, for source links
    # The dependency's versions burn's releases pinned that the catalog has no scan of.
    missing: tuple[str, ...] = ()
    # own project's version -> the version of this project it pinned (burn 0.18.0 -> wgpu 25.0.2)
    pinned: Mapping[str, str] = field(default_factory=dict)

    def tag_of(self, version: str) -> str:
        return self.tag.format(version=version)


@value_class
class Projects:
    """The catalog's projects, own first, with their release histories."""

    histories: list[ReleaseHistory]
    infos: dict[str, ProjectInfo] = field(default_factory=dict)  # by repo
    # removed record id -> the record of another project that still has the site
    moved: dict[str, str] = field(default_factory=dict)
    own: str | None = None  # the repository whose panics win ties; default: the first's

    def __post_init__(self) -> None:
        if self.own is None and self.histories:
            self.own = self.histories[0].repo
        self.moved = self.moved or _moved_sites(self.histories)

    def own_history(self) -> ReleaseHistory | None:
        """The own project's history (the first), what single-project readers use."""
        return self.histories[0] if self.histories else None

    def of_repo(self, repo: str | None) -> ReleaseHistory | None:
        return next((h for h in self.histories if h.repo == repo), None)

    def info(self, repo: str | None) -> ProjectInfo | None:
        return self.infos.get(repo or "")

    def own_release_with(self, repo: str | None, version: str) -> str | None:
        """The first release of the own project whose pinned version of `repo` is `version` or
        newer (burn 0.20.0 for cubecl 0.9.0), or None when the pins do not say."""
        found = self.info(repo)
        if found is None or repo == self.own:
            return None
        wanted = release_order(version)
        fits = [own for own, pinned in found.pinned.items() if release_order(pinned) >= wanted]
        return min(fits, key=release_order) if fits else None

    def is_dependency(self, repo: str | None) -> bool:
        found = self.info(repo)
        return bool(found and found.dependency)

    def for_match(self, match: PanicMatch, records: Mapping[str, Record]) -> ReleaseHistory | None:
        """The history that places this panic: the project whose crates the pasted path goes
        through (at the pasted version, when several have the crate), else the best
        candidate's project, else the own project's."""
        location = match.panic.location
        if location is not None and location.kind != "std":
            holders = [h for h in self.histories if pasted_crate_file(location.path, h.by_crate)]
            version = location.crate_version
            if version and len(holders) > 1:
                exact = [h for h in holders if any(r.version == version for r in h.releases)]
                holders = exact or holders
            if holders:
                return holders[0]
        best = match.best
        record = records.get(best.record_id) if best is not None else None
        if record is not None:
            found = self.of_repo(record.repo)
            if found is not None:
                return found
        return self.histories[0] if self.histories else None

    def revise(
        self,
        records: Mapping[str, Record],
        text: str,
        matches: list[PanicMatch],
    ) -> list[PanicMatch]:
        """Each match revised with its project's history, moved sites answered where they
        live now, and the own project's record first among equals."""
        out = []
        versions: dict[int, str | None] = {}  # by history: each read from the text once
        for match in matches:
            history = self.for_match(match, records)
            if history is not None:
                key = id(history)
                if key not in versions:
                    versions[key] = text_version_of(history, text)
                revised = revise_at(history, records, [match], versions[key])[0]
                match = _in_pasted_release(history, records, revised)
            out.append(self._prefer_own(self._follow_move(match, records), records))
        return out

    def _follow_move(self, match: PanicMatch, records: Mapping[str, Record]) -> PanicMatch:
        best = match.best
        if best is None or best.record_id not in self.moved:
            return match
        target = self.moved[best.record_id]
        if target not in records:
            return match
        chosen = replace(best, record_id=target)
        rest = tuple(c for c in match.candidates[1:] if c.record_id != target)
        return revised(match, (chosen, *rest))

    def _prefer_own(self, match: PanicMatch, records: Mapping[str, Record]) -> PanicMatch:
        """Among the candidates as confident as the best: a live site before one that moved
        to another project, the maintainers' code before a dependency's, the own project's
        before the others'."""
        if len(match.candidates) < 2 or self.own is None:
            return match
        top = match.candidates[0].confidence

        def key(candidate: Candidate) -> tuple[bool, ...]:
            record = records.get(candidate.record_id)
            repo = record.repo if record is not None else None
            return (
                *stronger_first(candidate, top),
                candidate.record_id in self.moved,  # answered where the site lives now
                self.is_dependency(repo),
                repo != self.own,
            )

        ordered = tuple(sorted(match.candidates, key=key))
        if ordered[0].record_id == match.candidates[0].record_id:
            return match
        return revised(match, ordered)


def _in_pasted_release(
    history: ReleaseHistory, records: Mapping[str, Record], match: PanicMatch
) -> PanicMatch:
    """When the best candidate's site was not in the pasted release and another as confident
    with the same message was (nearest the pasted line there), that one: records sharing a
    message in one file (cubecl's `Should run when selected by autotune.`) are told apart by
    the release."""
    location = match.panic.location
    version = location.crate_version if location else None
    if len(match.candidates) < 2 or location is None or not version:
        return match
    release = next((i for i, r in enumerate(history.releases) if r.version == version), None)
    if release is None:
        return match

    def state(candidate: Candidate) -> tuple[str, int, str] | None:
        index = history.by_record.get(candidate.record_id)
        return history.lineages[index].state(release) if index is not None else None

    best = match.candidates[0]
    if best.record_id not in history.by_record or state(best) is not None:
        return match
    message = _message(records, best)
    present = [
        (abs(found[1] - (location.line or 0)), n)
        for n, c in enumerate(match.candidates)
        if c.confidence >= best.confidence - 1e-9
        and _message(records, c) == message
        and (found := state(c)) is not None
        and found[0].endswith(location.crate_path or "\0")  # in the pasted file then
    ]
    if not present:
        return match
    chosen = match.candidates[min(present)[1]]
    rest = tuple(c for c in match.candidates if c is not chosen)
    return revised(match, (chosen, *rest))


def _message(records: Mapping[str, Record], candidate: Candidate) -> str | None:
    record = records.get(candidate.record_id)
    return normalise_message(record.error_message) if record is not None else None


def _moved_sites(histories: Sequence[ReleaseHistory]) -> dict[str, str]:
    """Lineages gone from one project that live on in another's newest release (the projects
    share a crate, as burn and burn-onnx share burn-import and onnx-ir): the removed lineage's
    id -> the live one's. The same message at the same path inside the crate wins, then in the
    same crate, then the one live site with that message (burn-import became burn-onnx)."""
    moved: dict[str, str] = {}
    for old in histories:
        for new in histories:
            if new is old or not set(old.by_crate) & set(new.by_crate):
                continue
            live = _live_sites(new)
            for lineage in old.lineages:
                if lineage.lines[old.newest] or not lineage.spans:
                    continue
                _first, _last, file, message, _kind = lineage.spans[-1]
                sites = live.get(normalise_message(message), [])
                crate, inner = crate_and_inner(file)
                target = (
                    next((i for c, p, i in sites if (c, p) == (crate, inner)), None)
                    or next((i for c, p, i in sites if p == inner), None)
                    or next((i for c, _p, i in sites if c == crate), None)
                    or (sites[0][2] if len(sites) == 1 else None)
                )
                if target is not None:
                    moved.setdefault(lineage.id, target)
    return moved


def _live_sites(history: ReleaseHistory) -> dict[str, list[tuple[str | None, str, str]]]:
    """Normalised message -> (crate, path inside it, lineage id) of the newest release's sites."""
    out: dict[str, list[tuple[str | None, str, str]]] = {}
    for lineage in history.lineages:
        state = lineage.state(history.newest)
        if state is not None:
            crate, inner = crate_and_inner(state[0])
            out.setdefault(normalise_message(state[2]), []).append((crate, inner, lineage.id))
    return out
