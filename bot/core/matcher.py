"""Matching panics to catalog records, with a confidence and the evidence that decided.

The bot would rather stay silent than be wrong, so a record wins only when the message says
enough on its own (specificity) or the pasted location backs it up, and a location that
contradicts the record (a panic raised in another crate, or in the user's own code) pulls the
confidence down hard.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from rapidfuzz import fuzz, utils

from bot.catalog.loader import Catalog
from bot.catalog.patterns import normalise_message
from bot.core.analysis import Analysis, Candidate, Evidence, PanicMatch, Verdict
from bot.core.extract import candidate_lines, extract_panics
from bot.core.index import CatalogIndex, IndexedRecord
from bot.core.panic import Location, Panic

# Confidence at or above which the bot answers. Set for almost no false matches.
MATCH_THRESHOLD = 0.80
# A record whose message says less than this on its own never matches on the message alone.
MIN_SPECIFICITY = 0.15
FUZZY_CUTOFF = 88.0
MAX_QUERY_CHARS = 1_000
MAX_QUOTED_LINES = 400


@dataclass(frozen=True, slots=True)
class _MessageScore:
    score: float
    evidence: tuple[Evidence, ...]


class Matcher:
    """Matches the panics in a text against one catalog, indexed once."""

    def __init__(self, catalog: Catalog):
        self.catalog = catalog
        self.index = CatalogIndex(catalog)

    # -- one text ------------------------------------------------------------------------

    def analyse(self, text: str) -> Analysis:
        panics = extract_panics(text)
        matches = [self.match_panic(panic) for panic in panics]
        if not any(panic.has_header for panic in panics):
            matches.extend(self._quoted_matches(text, {m.panic.core_message for m in matches}))
        verdict = _verdict(matches)
        return Analysis(verdict=verdict, panics=tuple(matches), fingerprint=_fingerprint(matches))

    # -- one panic -----------------------------------------------------------------------

    def match_panic(self, panic: Panic, limit: int = 5) -> PanicMatch:
        query = normalise_message(panic.core_message)[:MAX_QUERY_CHARS]
        ids = list(self.index.candidates(query))
        location_path = self._repo_path(panic.location)
        if location_path:
            for rid in self.index.by_file.get(location_path, ()):
                if rid not in ids:
                    ids.append(rid)
        scored = []
        for rid in ids:
            candidate = self._score(panic, query, location_path, self.index.entries[rid])
            if candidate is not None:
                scored.append(candidate)
        scored.sort(key=lambda c: (-c.confidence, -c.message_score, c.record_id))
        scored = _settle_ties(scored, self.index)[:limit]
        matched = bool(scored) and scored[0].confidence >= MATCH_THRESHOLD
        return PanicMatch(panic=panic, candidates=tuple(scored), matched=matched)

    def _repo_path(self, location: Location | None) -> str | None:
        if location is None:
            return None
        if location.kind in ("registry", "git", "workspace"):
            return self.index.repo_path(location.crate, location.crate_path)
        return None

    def _score(
        self, panic: Panic, query: str, location_path: str | None, entry: IndexedRecord
    ) -> Candidate | None:
        message = _score_message(query, entry)
        if message.score <= 0:
            return None
        evidence = list(message.evidence)
        confidence = message.score * (0.5 + 0.4 * entry.specificity)
        if entry.specificity < MIN_SPECIFICITY:
            confidence = min(confidence, 0.5)
        record = entry.record
        line_distance = None
        location = panic.location
        if location_path and location_path == record.file_path:
            evidence.append("location")
            confidence += 0.2
            if location.line is not None and record.line_number is not None:
                line_distance = abs(location.line - record.line_number)
                if line_distance <= 3:
                    evidence.append("line")
                    confidence += 0.1
                elif line_distance <= 60:
                    confidence += 0.05
        elif location is not None:
            confidence *= self._location_penalty(location, record.crate)
        if record.crate and record.crate in panic.stack_crates and "location" not in evidence:
            evidence.append("crate")
            confidence += 0.05
        if panic.has_header:
            evidence.append("header")
            confidence += 0.05
        if "possible-mismatch" in self.catalog.flags(record.id):
            confidence *= 0.9
        return Candidate(
            record_id=record.id,
            confidence=round(min(confidence, 1.0), 4),
            evidence=tuple(evidence),
            message_score=round(message.score, 4),
            line_distance=line_distance,
        )

    def _location_penalty(self, location: Location, record_crate: str | None) -> float:
        """How much a location that is not the record's file weakens the match."""
        if location.kind == "std":
            return 1.0  # old Rust reported unwrap/expect inside the standard library
        if location.crate and record_crate and location.crate == record_crate:
            return 0.9  # same crate, another file: the code may have moved
        if location.crate and self.index.knows_crate(location.crate):
            return 0.8  # another crate of the same project: code moves between crates
        # Raised in another project's crate (wgpu, cubecl) or in the user's own code.
        return 0.45

    # -- messages quoted without a header -------------------------------------------------

    def _quoted_matches(self, text: str, seen: set[str]) -> list[PanicMatch]:
        found: list[PanicMatch] = []
        found_ids: set[str] = set()
        for line in candidate_lines(text)[:MAX_QUOTED_LINES]:
            query = normalise_message(line)[:MAX_QUERY_CHARS]
            if query in seen:
                continue
            panic = _quoted_panic(query)
            result = self.match_panic(panic)
            best = result.best
            if best is None or best.confidence < MATCH_THRESHOLD or best.record_id in found_ids:
                continue
            found_ids.add(best.record_id)
            seen.add(query)
            found.append(result)
        return found


def _quoted_panic(message: str) -> Panic:
    return Panic(
        message=message,
        core_message=message,
        wrapper=None,
        thread=None,
        location=None,
        has_header=False,
        frames=(),
        start=0,
        end=0,
    )


def _score_message(query: str, entry: IndexedRecord) -> _MessageScore:
    """How well a pasted message matches a record's message, and how we know."""
    if not query:
        return _MessageScore(0.0, ())
    if entry.regex.fullmatch(query):
        return _MessageScore(1.0, ("pattern",))
    if entry.prefix_regex.fullmatch(query):
        # `.expect("MSG")` prints `MSG: ErrDebug`; other kinds rarely carry a tail.
        score = 1.0 if entry.record.error_type == "expect" else 0.95
        return _MessageScore(score, ("pattern", "prefix"))
    # Version drift: an older release printed only the first part of today's message.
    first = entry.first_fragment.rstrip(" :,.")
    if entry.has_placeholders and len(first) >= 20 and query.rstrip(" .") == first:
        return _MessageScore(0.9, ("prefix",))
    ratio = _fuzzy(query, entry)
    if ratio >= FUZZY_CUTOFF:
        return _MessageScore(ratio / 100 * 0.95, ("fuzzy",))
    return _MessageScore(0.0, ())


def _fuzzy(query: str, entry: IndexedRecord) -> float:
    """Similarity for typos and small drift, on the literal text when there are placeholders."""
    if not entry.has_placeholders:
        # Compare against the same length of query, so an `: err` tail does not count against.
        head = query[: len(entry.message) + 2]
        return fuzz.ratio(head, entry.message, processor=utils.default_process, score_cutoff=FUZZY_CUTOFF)
    # With placeholders, every literal fragment must be (nearly) present in the query.
    literal = entry.literal
    if len(literal) < 12:
        return 0.0
    return fuzz.partial_token_sort_ratio(
        literal, query, processor=utils.default_process, score_cutoff=FUZZY_CUTOFF
    ) * min(1.0, len(literal) / max(len(query), 1) + 0.35)


def _settle_ties(scored: list[Candidate], index: CatalogIndex) -> list[Candidate]:
    """Lower the best candidate's confidence when a different message scores about the same."""
    if len(scored) < 2:
        return scored
    best, second = scored[0], scored[1]
    best_message = index.entries[best.record_id].message
    second_message = index.entries[second.record_id].message
    if best_message != second_message and best.confidence - second.confidence < 0.05:
        lowered = Candidate(
            record_id=best.record_id,
            confidence=round(max(best.confidence - 0.1, 0.0), 4),
            evidence=best.evidence,
            message_score=best.message_score,
            line_distance=best.line_distance,
        )
        return [lowered, *scored[1:]]
    return scored


def _verdict(matches: list[PanicMatch]) -> Verdict:
    if any(m.matched for m in matches):
        return "match"
    if any(m.panic.has_header or m.panic.wrapper for m in matches):
        return "uncatalogued-panic"
    return "no-panic"


def _fingerprint(matches: list[PanicMatch]) -> str:
    digest = hashlib.sha256()
    for m in matches:
        loc = m.panic.location
        digest.update(normalise_message(m.panic.core_message).encode("utf-8", "replace"))
        digest.update(f"|{loc.path if loc else ''}\n".encode("utf-8", "replace"))
    return digest.hexdigest()[:12]
