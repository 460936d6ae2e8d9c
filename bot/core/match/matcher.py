"""Matching panics to catalog records, with a confidence and the evidence that decided.

The bot would rather stay silent than be wrong, so a record wins only when the message says
enough on its own (specificity) or the pasted location backs it up, and a location that
contradicts the record (a panic raised in another crate, or in the user's own code) pulls the
confidence down hard.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Callable
from functools import cache
from itertools import chain
from typing import TYPE_CHECKING, Any, Protocol

from bot.catalog.model import (
    RAISED_AT_TAG_PREFIX,
    TRACK_CALLER_TAG,
    Record,
    replace,
    value_class,
)
from bot.catalog.patterns import Regex, RegexMatch, normalise_message, placeholders_fit
from bot.core.analysis import (
    Analysis,
    Candidate,
    Evidence,
    PanicMatch,
    Refusal,
    Verdict,
    with_step,
)
from bot.core.extract.hooks import HookFormat
from bot.core.extract.paths import is_absolute, parse_location
from bot.core.extract.scanner import extract_panics
from bot.core.match.answer_rule import answers, revised, silenced
from bot.core.match.calibration import MODEL, Model, calibrate
from bot.core.match.caller import line_is_evidence, reports_caller
from bot.core.match.cascade import (
    answers_after_dependency,
    answers_after_unwrap,
    is_uncatalogued_dependency,
    is_uncatalogued_unwrap,
)
from bot.core.match.crates import repo_crate_names
from bot.core.match.drift import MIN_FIXED_TOKENS, WHOLE_SCORE, PastedForm, drift_between
from bot.core.match.index import (
    OPENING_CHARS,
    STOPWORDS,
    CatalogIndex,
    IndexedRecord,
    SiteCatalog,
    specificity,
    squash,
    word_tuple,
)
from bot.core.match.projects import Projects
from bot.core.match.raised_in import impl_type, owner_and_name, panicked_in, panicking_frame
from bot.core.match.releases import (
    FILE_HIT_CONFIDENCE,
    ReleaseHistory,
    earlier_wording_at,
    older_wording_record,
)
from bot.core.match.releases import revise as revise_with_history
from bot.core.match.scorer import WEIGHTS
from bot.core.match.std_messages import is_std_message
from bot.core.match.tail import (
    heading_with_body,
    leading_lines,
    older_filled_wording,
    says_enough,
    typo_only,
)
from bot.core.panic import PANIC_WRAPPERS, Location, Panic

if TYPE_CHECKING:
    from bot.core.extract.quoted import Snippet

W = WEIGHTS  # the scorer's weights (bot/core/match/scorer.json)
# Confidence at or above which the bot answers. Set for almost no false matches.
MATCH_THRESHOLD = W.threshold
# Records searched for the other sites of a tied message (a text naming one of them).
SIBLING_SEARCH = 64
# A paste that is word for word an older release's wording of one record (no location).
OLDER_WORDING_CONFIDENCE = FILE_HIT_CONFIDENCE
# A record whose message says less than this on its own never matches on the message alone.
MIN_SPECIFICITY = W.min_specificity
FUZZY_CUTOFF = 88.0
# A candidate a rule refused (see `Refusal`) keeps at most this: listed, never answered.
REFUSED_CAP = W.cap_refused
MAX_QUERY_CHARS = 1_000
# A message fitting another site of the pasted file this much better than the site at the
# pasted line: the two disagree (`_settle_ties`).
MESSAGE_LEAD = 0.01
# A message covering the paste and fitting it this well leaves a format of placeholders
# nothing to say (`_formats_say_less`).
COVERING_FIT = 0.9


@value_class
class _Query:
    """A pasted message as every candidate record is compared with it: prepared once."""

    text: str
    squashed: str
    _drift_form: PastedForm | None = None
    _std_message: bool | None = None

    @property
    def std_message(self) -> bool:
        if self._std_message is None:
            self._std_message = is_std_message(self.text)
        return self._std_message

    @classmethod
    def of(cls, text: str) -> _Query:
        return cls(text, squash(text))

    def cased_as(self, message: str) -> _Query:
        """The query with its first letter in `message`'s case."""
        head, first = message[:1], self.text[:1]
        if first == head or first.lower() != head.lower():
            return self
        return _Query.of(head + self.text[1:])

    @property
    def drift_form(self) -> PastedForm:
        if self._drift_form is None:
            self._drift_form = PastedForm.of(self.text)
        return self._drift_form


@value_class(frozen=True)
class _MessageScore:
    score: float
    evidence: tuple[Evidence, ...]


class MatchCatalog(SiteCatalog, Protocol):
    """What the matcher reads from a catalog (bot.catalog.loader.Catalog is one)."""

    def flags(self, record_id: str) -> frozenset[str]: ...


class Matcher:
    """Matches the panics in a text against one catalog, indexed once.

    `index`: the catalog's, when built already (the app caches the bundled catalog's); built
    here otherwise. `history`: the catalog's release history, when it has one; `projects`:
    its projects' histories, when it holds several (issue 25; then `history` is unused).
    """

    def __init__(
        self,
        catalog: MatchCatalog,
        *,
        index: CatalogIndex | None = None,
        history: ReleaseHistory | None = None,
        projects: Projects | None = None,
        hooks: tuple[HookFormat, ...] = (),
        model: Model | None = MODEL,
    ):
        if index is not None and index.catalog is not catalog:
            raise ValueError("the index was built for another catalog")
        self.catalog = catalog
        self.index = index if index is not None else CatalogIndex(catalog)
        self.history = history
        self.projects = projects
        self.hooks = hooks  # the catalog's declared panic-hook formats
        # The fitted model that turns the stages' scores into the confidence shown and decides
        # whether to answer (bot/core/match/calibration.py); None: the stages' scores as they are
        # (what benchmarks/fit_scorer.py fits on).
        self.model = model

    # -- one text ------------------------------------------------------------------------

    def analyse(self, text: str) -> Analysis:
        self.index.forget_candidates()
        panics = extract_panics(text, hooks=self.hooks)
        matches = [self.match_panic(panic) for panic in panics]
        if any(_at_std_unanswered(m) for m in matches):
            # Old Rust printed an `expect`/`unwrap` panic at libcore's own line: where the
            # text writes the crate's line instead, that location is the paste's.
            located = _locations_in(text)
            matches = [
                self._at_a_named_location(m, located, False) if _at_std_unanswered(m) else m
                for m in matches
            ]
        tied = [self._tied(m) for m in matches]
        if any(tied):
            named = _named_in(text)
            matches = [
                self._named_site_first(m, *named) if t else m
                for m, t in zip(matches, tied, strict=True)
            ]
        if not any(panic.has_header for panic in panics):
            seen = {normalise_message(m.panic.core_message) for m in matches}
            matches.extend(self._quoted_matches(text, seen))
        elif any(_message_left_out(m) for m in matches):
            matches = self._with_quoted_messages(text, matches)
        if self.projects is not None:  # issue 25: each panic revised by its project's history
            records = self.catalog.records
            matches = self.projects.revise(records, text, matches)
        elif self.history is not None:  # issue 12: the release history
            records = self.catalog.records
            matches = revise_with_history(self.history, records, text, matches)
        matches = _without_cascades(matches, self.index.in_project)
        if self.model is not None:
            matches = calibrate(matches, self.model, self._message_of)
        verdict = _verdict(matches)
        return Analysis(verdict=verdict, panics=tuple(matches), fingerprint=_fingerprint(matches))

    def _message_of(self, record_id: str) -> str | None:
        try:
            return self.catalog.message(record_id)  # (without building the record)
        except KeyError:
            return None

    # -- one panic -----------------------------------------------------------------------

    def match_panic(self, panic: Panic, limit: int = 5, *, in_sentence: bool = False) -> PanicMatch:
        """Score the records that could explain `panic`, best first.

        `in_sentence`: the message may be followed by more prose (a quoted mention), so the
        pattern may match at the start of the text rather than the whole of it.
        """
        query = _clean_query(panic.core_message)
        ids = list(self.index.candidates(query))
        if query[:1].isalpha():
            # A long message's first sentence(s) alone (in a title, maybe without its full
            # stop or lower-cased, maybe cut short): its words cover too little of it.
            opening = _before_ellipsis(query)
            ids.extend(rid for rid in self.index.opened_by(opening) if rid not in ids)
        location_path = self._repo_path(panic.location)
        known = set(ids)  # a set: thousands of records can share one file
        more = self.index.by_file.get(location_path, ()) if location_path else ()
        for rid in chain(more, self._raised_in_records(panic)):
            if rid not in known:
                known.add(rid)
                ids.append(rid)
        scored: list[tuple[float, Candidate]] = []
        prepared = _Query.of(query)
        for rid in ids:
            entry = self.index.entry(rid)
            found = self._score(panic, prepared, location_path, entry, in_sentence)
            if found is not None:
                scored.append(found)
        if location_path and not any("pattern" in c.evidence for _, c in scored):
            scored = self._with_earlier_wording(panic, prepared, location_path, scored)
        fixed = len(squash(query))

        @cache  # (asked by three steps of the ranking, of the same few records)
        def covers_record(record_id: str) -> bool:
            # the record's fixed text is at least half the paste: not a format of placeholders
            # (`Command {}: {}`) that any message of its file fits; a builder's reason also
            # prints its raising site's text around it
            own = len(squash(self.index.entry(record_id).literal))
            return 2 * (own + self._raiser_literal(record_id)) >= fixed

        def covers(candidate: Candidate) -> bool:
            return covers_record(candidate.record_id)

        ranked = _rank(_formats_say_less(scored, covers), covers)
        candidates = _settle_ties(ranked, self.index, covers)[:limit]
        if panic.location is None or (not location_path and _crate_relative(panic.location)):
            # (a location outside the project is another's code; old Rust's path from a build
            # script's package root, `build.rs:150`, names no package to tell)
            candidates = self._older_wording_first(query, candidates, limit)
        matched = answers(candidates[0] if candidates else None)
        return PanicMatch(panic=panic, candidates=tuple(candidates), matched=matched)

    def _raiser_literal(self, record_id: str) -> int:
        """How much fixed text the site that raises a builder's reason (`raised-at:FILE:LINE`,
        a panic helper's `panic!`) prints around it: none for any other record."""
        tags = self.catalog.records[record_id].tags
        raised = next(
            (t[len(RAISED_AT_TAG_PREFIX) :] for t in tags if t.startswith(RAISED_AT_TAG_PREFIX)), ""
        )
        file, _, line = raised.rpartition(":")
        if not file or not line.isdigit():
            return 0
        for rid in self.index.by_file.get(file, ()):
            if self.catalog.records[rid].line_number == int(line):
                return len(squash(self.index.entry(rid).literal))
        return 0

    def _with_earlier_wording(
        self,
        panic: Panic,
        query: _Query,
        location_path: str,
        scored: list[tuple[float, Candidate]],
    ) -> list[tuple[float, Candidate]]:
        """No record's wording fits the paste whole, pasted at a file: the site of the file
        whose lineage printed these words there in an older release (valueloc.rs:44's
        `Expected register: {:?}`, reworded since), scored on that wording. Several sites
        printed them: the one the pasted line is at in those releases, when it is one."""
        if self.history is None and self.projects is None:
            return scored  # no release history to ask (a scan alone)
        found: dict[str, tuple[str, tuple[int, ...]]] = {}
        for rid in self.index.by_file.get(location_path, ()):
            history = self._history_of(self.catalog.records[rid])
            printed = history and earlier_wording_at(history, rid, location_path, query.text)
            if printed:
                found[rid] = printed
        line = panic.location.line if panic.location is not None else None
        if len(found) > 1 and line is not None:
            found = {
                rid: printed
                for rid, printed in found.items()
                if any(abs(line - at) <= W.line_near_lines for at in printed[1])
            }
        if len(found) != 1:
            return scored
        [(rid, printed)] = found.items()
        again = self._score(panic, query, location_path, self.index.entry(rid), False, printed)
        if again is None:
            return scored
        return [again, *(item for item in scored if item[1].record_id != rid)]

    def _raised_in_records(self, panic: Panic) -> list[str]:
        """The records of the function the backtrace's panicking frame names, in that frame's
        file: a site whose message is mostly placeholders (`{file}:{line} {err}`) has too few
        words to be found by them, and a `#[track_caller]` site's header names its caller."""
        frame = panicking_frame(panic.frames)
        if frame is None or frame.location is None:
            return []
        path = self._repo_path(frame.location)
        if not path:
            return []
        _, name = owner_and_name(frame.function)
        records = self.catalog.records  # (the records alone: no index entry built to filter)
        in_file = self.index.by_file.get(path, ())
        return [rid for rid in in_file if records[rid].enclosing_fn == name]

    def _older_wording_first(
        self, query: str, candidates: list[Candidate], limit: int
    ) -> list[Candidate]:
        """With no location: a message one record's site printed word for word
        in an older release (`older_wording_record`) is that record's, as strong as a release
        hit in its file, unless a record's own wording already matches as well."""
        best = candidates[0] if candidates else None
        # (every project's history in a catalog of several: a dependency's older wording too)
        if self.projects is not None:
            histories = self.projects.histories
        else:
            histories = [self.history] if self.history is not None else []
        if not histories or (best is not None and best.confidence >= OLDER_WORDING_CONFIDENCE):
            return candidates
        rid = older_wording_record(histories, self.catalog.records, query)
        if rid is None or rid not in self.catalog.records:
            return candidates
        older = next((c for c in candidates if c.record_id == rid), None)
        chosen = Candidate(
            record_id=rid,
            confidence=OLDER_WORDING_CONFIDENCE,
            evidence=tuple(dict.fromkeys((*(older.evidence if older else ()), "release"))),
            message_score=older.message_score if older else 0.0,
            line_distance=None,
            steps=(
                *(older.steps if older else ()),
                (
                    "an older release's wording of this site, word for word",
                    OLDER_WORDING_CONFIDENCE,
                ),
            ),
        )
        return [chosen, *(c for c in candidates if c.record_id != rid)][:limit]

    def _repo_path(self, location: Location | None) -> str | None:
        if location is None or location.kind == "std":
            return None
        if location.crate and location.crate_path:
            return self.index.repo_path(location.crate, location.crate_path)
        # `burn-autodiff/src/ops/module.rs`, `/home/u/burn/burn-core/src/..`: old layouts kept
        # crates at the top of the repository; a known crate's folder name in the path says which.
        found = self._crate_in_path(location.path)
        if found:
            return self.index.repo_path(*found)
        # `src/lib.rs` of a single-crate project: a relative path that is the catalog's own file.
        relative = location.path.removeprefix("./")
        if relative in self.index.by_file:
            return relative
        if location.kind != "other":
            return None
        if is_absolute(location.path):
            # A crate folder without `src/` (`libs/core/ops.rs`) in a clone named as the
            # repository; any other absolute path is the user's machine.
            return self.index.checkout_file(location.path)
        # A file an older release kept higher up (`serde_v8/payload.rs`, now under `libs/`).
        return self.index.moved_down(relative)

    def _score(
        self,
        panic: Panic,
        query: _Query,
        location_path: str | None,
        entry: IndexedRecord,
        in_sentence: bool,
        earlier: tuple[str, tuple[int, ...]] | None = None,
    ) -> tuple[float, Candidate] | None:
        """The candidate and its uncapped score (for ranking), or None when the message differs.
        `earlier`: an older wording of the record's site, printed at the pasted file, that the
        paste is whole output of, and the lines the site had there then."""
        if earlier is not None:
            # Pasted at the file where the site printed these words in an older release (its
            # lineage in the release history): that wording's whole output.
            message = _MessageScore(1.0, ("pattern", "release"))
            said, shortened_alike = specificity(earlier[0]), False
        elif (message := _score_message(query, entry, in_sentence)).score <= 0:
            if not (
                panic.has_header
                and location_path is not None
                and location_path == entry.record.file_path
                and (
                    _older_shorter_wording(query.text, entry)
                    or leading_lines(query.text, entry, at_site=True)
                )
            ):
                return None
            # Raised in the record's file, in fewer of its words: an older wording of it,
            # unless another message of the file has those words as well (`Unable to find the`
            # of `.. config directory!` and `.. data directory!`): the paste does not say which.
            message = _MessageScore(0.85, ("fuzzy",))
            # (it says what its own words say, not what the record's others would)
            said = min(entry.specificity, specificity(query.text))
            shortened_alike = any(
                other.literal != entry.literal and _older_shorter_wording(query.text, other)
                for other in map(self.index.entry, self.index.by_file.get(location_path, ()))
            )
        else:
            said, shortened_alike = entry.specificity, False
        if panic.wrapper == "assert" and "pattern" not in message.evidence:
            # `assertion failed: path.is_absolute()` prints the condition's source, not words
            # of a message: resembling a record's prose is no evidence.
            return None
        if (
            message.evidence == ("prefix",)
            and not panic.has_header
            and not _quote_says_enough(query.text, entry)
        ):
            # An older, shorter wording mentioned in prose is too weak to answer on, unless
            # the quoted clause says enough on its own (a verbatim quote is evidence).
            message = _MessageScore(0.8, message.evidence)
        if (
            message.evidence == ("fuzzy",)
            and not panic.has_header
            and not typo_only(query.text, entry)
        ):
            # Quoted without a header, a changed word is another message (or a paraphrase).
            message = _MessageScore(0.8, message.evidence)
        evidence = list(message.evidence)
        confidence = message.score * (W.message_base + W.message_specificity * said)
        steps: list[tuple[str, float]] = []

        def step(what: str) -> None:
            steps.append((what, round(confidence, 4)))

        step(f"message {message.score:.2f} x specificity {said:.2f}")
        record = entry.record
        line_distance = None
        location = panic.location
        # (an older wording's file is the site's, then)
        own_file = bool(location_path) and (location_path == record.file_path or bool(earlier))
        refusal: Refusal | None = "near-miss" if shortened_alike else None
        # (a location path comes only from a location: `_repo_path`)
        if location is not None and own_file:
            evidence.append("location")
            confidence += W.add_location
            step("pasted at the record's file")
            lines = earlier[1] if earlier else (record.line_number,)
            if location.line is not None and any(lines) and line_is_evidence(record):
                line_distance = min(abs(location.line - n) for n in lines if n)
                if line_distance <= W.line_near_lines:
                    evidence.append("line")
                    confidence += W.add_line
                    step(f"line {line_distance} from the record's")
            if (
                "line" not in evidence
                and "pattern" not in message.evidence
                and _adds_words(query.text, entry)
            ):
                # More words after the record's whole text, away from its line: another site
                # of the file (or one it no longer has).
                refusal = "near-miss"
        elif (
            location is not None
            and {"pattern", "prefix"} & set(message.evidence)
            and panicked_in(record, panic.frames, self._project_crate(record))
        ):
            # The backtrace's panicking frame is the record's function, of the project's crate:
            # the site, in the file an older release kept it in (or one the path cut), or the
            # header names a caller (a panic inside `Index::index` is printed at the caller's
            # line by newer Rust) while the frame is at the site.
            evidence.append("function")
            confidence += W.add_function
            step("the backtrace's panicking frame is the record's function")
            line_distance = self._frame_line_distance(panic, record)
            if line_distance is not None and line_distance <= W.line_near_lines:
                evidence.append("line")
                confidence += W.add_frame_line
                step(f"that frame's line {line_distance} from the record's")
        elif location is not None and not self._printed_there(record, location, message):
            in_project = bool(location_path) or self._in_project(location)
            confidence = self._weigh_other_location(
                confidence, message.score, location, record, in_project
            )
            step("pasted at another file" + (" of the project" if in_project else ""))
            refusal = self._other_file_refusal(location, entry, message, query.text, in_project)
        if (
            "line" not in evidence
            and "pattern" not in message.evidence
            and _replaces_a_word(query.text, entry)
        ):
            # Another word where the message opens (`expression should belong to` for
            # `definition should belong to`), away from the site's line: a sibling message.
            refusal = "near-miss"
        if not own_file and (query.std_message or entry.std_message):
            # Any program prints it anywhere: only the record's own file (or the release
            # history, later) says it is this site.
            refusal = "std-message"
        if record.crate and record.crate in panic.stack_crates and "location" not in evidence:
            evidence.append("crate")
            confidence += W.add_crate_on_stack
            step("the record's crate is on the stack")
        if panic.has_header:
            evidence.append("header")
            confidence += W.add_header
            step("a `panicked at` header")
            if (
                reports_caller(record)
                and "pattern" in evidence
                and heading_with_body(entry, query.text)
            ):
                # A helper's short heading and its body's shape, reported at the caller.
                confidence += W.add_caller_heading
                step("a caller-reported helper's heading and body")
        elif panic.wrapper in PANIC_WRAPPERS:
            # `assertion `left == right` failed: ...` is panic output even without its header.
            evidence.append("wrapper")
            confidence += W.add_wrapper
            step("a wrapper only a panic prints")
        if "possible-mismatch" in self.catalog.flags(record.id):
            confidence *= W.factor_possible_mismatch
            step("the record is flagged possible-mismatch")
        if entry.specificity < MIN_SPECIFICITY:
            # Placeholders only (`{}`), or a std phrase: nothing the location can vouch for.
            confidence = min(confidence, W.cap_saying_nothing)
            step(f"the message says almost nothing on its own: at most {W.cap_saying_nothing}")
        if refusal is not None:
            if confidence < MATCH_THRESHOLD:
                refusal = None  # too weak to answer anyway: nothing was refused
            else:
                confidence = min(confidence, REFUSED_CAP)
                step(f"refused ({refusal}): at most {REFUSED_CAP}")
        if confidence > 1.0:
            steps.append(("capped at 1.0", 1.0))
        return confidence, Candidate(
            record_id=record.id,
            confidence=round(min(confidence, 1.0), 4),
            evidence=tuple(evidence),
            message_score=round(message.score, 4),
            line_distance=line_distance,
            refused=refusal,
            steps=tuple(steps),
        )

    def _frame_line_distance(self, panic: Panic, record: Record) -> int | None:
        """Lines from the panicking frame's place to the record's, when that frame is in the
        record's own file."""
        frame = panicking_frame(panic.frames)
        at = frame.location if frame is not None else None
        if at is None or at.line is None or not record.line_number or not line_is_evidence(record):
            return None
        if self._repo_path(at) != record.file_path:
            return None
        return abs(at.line - record.line_number)

    def _other_file_refusal(
        self,
        location: Location,
        entry: IndexedRecord,
        message: _MessageScore,
        query: str,
        in_project: bool,
    ) -> Refusal | None:
        """Whether a pasted file that is not the record's (nor printed there) rules it out.

        A file that kept its name moved (`burn-core/src/nn/conv.rs` to `burn-nn/..`); another
        file of the project is another site, unless the release history places it there
        (`revise`, later); a wording that only resembles the record's is another message.
        """
        record = entry.record
        if _kept_name(location.path, record.file_path or ""):
            return None
        if "pattern" not in message.evidence and (
            _changes_words(query, entry) or _adds_words(query, entry)
        ):
            return "near-miss"
        if not in_project:
            return None
        if (
            self._history_of(record) is None
            and location.crate_version
            and self.index.knows_crate(location.crate or "")
        ):
            # No history to ask, and a release of a crate we scanned that may predate a move
            # between its files (a crate named like the project's but never scanned, as a
            # removed `nu-source` beside `nu-protocol`, is another crate's code).
            return None
        return "other-file"

    def _history_of(self, record: Record) -> ReleaseHistory | None:
        if self.projects is not None:
            return self.projects.of_repo(record.repo)
        return self.history

    def _printed_there(self, record: Record, location: Location, message: _MessageScore) -> bool:
        """Whether Rust may print this record's panic at the pasted place, another file.

        A `#[track_caller]` function reports any caller, the user's code or another library.
        A `macro_rules!` body reports where the macro is invoked: in the project's crates; in
        a crate outside the project only in the macro's own words (cubecl's `reader.rs` prints
        a longer form of a removed burn-router macro's message: another panic).
        """
        if not reports_caller(record):
            return False
        if TRACK_CALLER_TAG in record.tags or "pattern" in message.evidence:
            return True
        crate = self._pasted_crate(location)
        return crate is None or self.index.in_project(crate)

    def _project_crate(self, record: Record) -> Callable[[str], bool]:
        """Whether a frame's crate is the record's project: a crate of the catalog, or one the
        record's repository is published as (`deno` for denoland/deno)."""
        names = repo_crate_names(record.repo or "")
        return lambda crate: crate in names or self.index.in_project(crate)

    def _in_project(self, location: Location) -> bool:
        crate = self._pasted_crate(location)
        return crate is not None and self.index.in_project(crate)

    def _weigh_other_location(
        self,
        confidence: float,
        message_score: float,
        location: Location,
        record: Record,
        in_project: bool,
    ) -> float:
        """Confidence given a pasted location that is not the record's file (`in_project`:
        a file of the catalog's projects)."""
        if location.kind == "std":
            return confidence  # old Rust reported unwrap/expect inside the standard library
        record_file = (record.file_path or "").rsplit("/", 1)[-1]
        pasted_file = location.path.rsplit("/", 1)[-1]
        if "/" not in location.path.lstrip("./ "):
            # `... renderer.rs:345`: the user cut the path; the file name is all it says.
            bonus = W.add_same_file_name * message_score if pasted_file == record_file else 0.0
            return confidence + bonus
        if in_project:
            # The panic is the project's own. Code moves between files and crates across
            # versions (burn-core/src/nn/.. became burn-nn/src/modules/..), and #[track_caller]
            # functions report their caller's file, so the message decides; a full pattern
            # match is backed by knowing it is the project's panic.
            if pasted_file == record_file or message_score >= 1.0:
                return confidence + W.add_same_file_name * message_score
            return confidence * W.factor_other_file_of_project
        if (
            location.kind == "workspace"
            and message_score >= 1.0
            and pasted_file == record_file
            and pasted_file not in _GENERIC_FILES
        ):
            # A crate of a checkout the catalog does not know (`crates/ra_parser/src/parser.rs`
            # for today's `crates/parser/..`), the file's name and every word kept: renamed.
            return confidence + W.add_same_file_name * message_score
        # Raised in another project's crate (wgpu, cubecl) or in the user's own code.
        return confidence * W.factor_other_project

    def _pasted_crate(self, location: Location) -> str | None:
        """The crate a pasted location names, or the project crate folder its path runs through."""
        found = self._crate_in_path(location.path)
        return location.crate or (found[0] if found else None)

    def _crate_in_path(self, path: str) -> tuple[str, str] | None:
        """(crate, path inside it) for a path through one of the project's crate folders."""
        parts = path.split("/")
        for i, part in enumerate(parts[:-1]):
            if parts[i + 1] in ("src", "tests") and self.index.in_project(part):
                return part, "/".join(parts[i + 1 :])
        return None

    # -- messages quoted without a header -------------------------------------------------

    def _quoted_matches(self, text: str, seen: set[str]) -> list[PanicMatch]:
        # why here: only texts without a header read quoted messages; the module's patterns
        # cost a cold `match` of a header text 14 ms
        from bot.core.extract.quoted import (
            bare_span,
            looks_like_change_description,
            names_a_change,
            quoted_snippets,
            reads_like_report,
        )

        found: list[PanicMatch] = []
        found_ids: set[str] = set()
        # A pull request or a changelog names messages it changes; only a panic it shows as
        # output (alone in a code block) or says was hit counts there.
        strict = looks_like_change_description(text)
        # What the text names and where it writes locations, read once, when a mention asks.
        named: tuple[frozenset[str], frozenset[tuple[str, str]]] | None = None
        located: list[Location] | None = None
        for snippet in quoted_snippets(text):
            query = normalise_message(snippet.text)[:MAX_QUERY_CHARS]
            if query in seen:
                continue
            # A span in a chat line that does not say it was hit: answered only as a message
            # the span holds whole (its pattern, no fuzzy fit).
            whole_only = False
            if not reads_like_report(snippet, strict=strict):
                if strict or not bare_span(snippet):
                    continue
                whole_only = True
            panic = Panic.mentioned(query, snippet.wrapper)
            in_sentence = snippet.source in _SENTENCE_SOURCES
            result = self.match_panic(panic, in_sentence=in_sentence)
            best = result.best
            if result.candidates and (best is None or best.confidence < MATCH_THRESHOLD):
                if located is None:
                    located = _locations_in(text)
                if located:
                    result = self._at_a_named_location(result, located, in_sentence)
                    best = result.best
            if best is not None and (
                (best.evidence == ("prefix",) and strict)
                or names_a_change(snippet.context, text)
                or (_fuzzy_only(best) and not _pasted(snippet))
            ):
                # A message named by a fix or in release notes is no hit (nor a leading
                # clause named in a change description).
                result = silenced(result)
                best = None
            else:
                if self._tied(result):
                    named = named if named is not None else _named_in(text)
                    result = self._named_site_first(result, *named, in_sentence)
                best = result.best
            if whole_only and best is not None and not _whole_pattern(best):
                result, best = silenced(result), None
            if best is None or best.confidence < MATCH_THRESHOLD or best.record_id in found_ids:
                if snippet.wrapper not in (None, "main-error") and not found:
                    # `assertion failed: ...` quoted in a title: a std panic, uncatalogued.
                    found.append(PanicMatch(panic=panic, candidates=(), matched=False))
                continue
            found_ids.add(best.record_id)
            seen.add(query)
            found.append(result)
        answered = _without_parts_of_longer([m for m in found if m.matched])
        return answered or found[:1]

    def _at_a_named_location(
        self, result: PanicMatch, locations: list[Location], in_sentence: bool
    ) -> PanicMatch:
        """A message quoted without a header, its location written elsewhere in the text
        (`raised at tauri-2.10.3/src/app.rs:1299:11`): matched again at that location, when it
        is the one location of the text at a candidate's file."""
        files = {self.index.entry(c.record_id).record.file_path for c in result.candidates}
        at_a_candidate = {
            location.raw: location
            for location in locations
            if (path := self._repo_path(location)) is not None and path in files
        }
        if len(at_a_candidate) != 1:
            return result
        [location] = at_a_candidate.values()
        again = self.match_panic(replace(result.panic, location=location), in_sentence=in_sentence)
        best = again.best
        return again if best is not None and "location" in best.evidence else result

    def _with_quoted_messages(self, text: str, matches: list[PanicMatch]) -> list[PanicMatch]:
        """A header pasted without its message (the paste stops after `panicked at FILE:..:`),
        the message quoted in the prose instead: a quoted message of a record at the header's
        own file stands for the header's."""
        out = []
        quoted: list[PanicMatch] | None = None  # read once, for the first header that asks
        for match in matches:
            path = self._repo_path(match.panic.location) if _message_left_out(match) else None
            if path is None:
                out.append(match)
                continue
            if quoted is None:
                quoted = [m for m in self._quoted_matches(text, set()) if m.matched and m.best]
            at_file = [
                m
                for m in quoted
                if m.best is not None
                and self.index.entry(m.best.record_id).record.file_path == path
            ]
            out.append(at_file[0] if len(at_file) == 1 else match)
        return out

    def _tied(self, result: PanicMatch) -> bool:
        """No location pasted, and another site of the best candidate's message as sure as it."""
        best = result.best
        if best is None or len(result.candidates) < 2 or result.panic.location is not None:
            return False
        literal = self.index.entry(best.record_id).literal
        return any(
            other.confidence >= best.confidence
            and self.index.entry(other.record_id).literal == literal
            for other in result.candidates[1:]
        )

    def _named_site_first(
        self,
        result: PanicMatch,
        files: frozenset[str],
        methods: frozenset[tuple[str, str]],
        in_sentence: bool = False,
    ) -> PanicMatch:
        """Among sites of one message, the one whose file (`at state.rs:903`) or method
        (`PngEncoder::write_image`, its type's and its own name) the text names, first and
        marked `named`, which the stages that reorder later keep (`stronger_first`)."""
        best = result.best
        if best is None or not (files or methods):
            return result

        def site_named(record_id: str) -> bool:
            record = self.index.entry(record_id).record
            path = record.file_path or ""
            if path.rsplit("/", 1)[-1] in files:
                return True
            owner = impl_type(record.site_check.get("impl"))
            return owner is not None and (owner, record.enclosing_fn or "") in methods

        literal = self.index.entry(best.record_id).literal
        for position, other in enumerate(result.candidates):
            if (
                other.confidence >= best.confidence
                and self.index.entry(other.record_id).literal == literal
                and site_named(other.record_id)
            ):
                rest = [c for i, c in enumerate(result.candidates) if i != position]
                return revised(result, (_named(other), *rest))
        # More sites print the message than the candidates hold (twelve encoders' one check):
        # the one the text names among them, scored as the others were, when it is one. (They
        # share the message's words, so a wider search of the same words finds them.)
        listed = {c.record_id for c in result.candidates}
        text = _clean_query(result.panic.core_message)
        message = self.catalog.message(best.record_id)
        named = [
            rid
            for rid in self.index.candidates(text, limit=SIBLING_SEARCH)
            if rid not in listed and self.catalog.message(rid) == message and site_named(rid)
        ]
        if len(named) == 1 and result.panic.location is None:
            query = _Query.of(text)
            scored = self._score(result.panic, query, None, self.index.entry(named[0]), in_sentence)
            if scored is not None and scored[1].confidence >= best.confidence:
                return revised(result, (_named(scored[1]), *result.candidates))
        return result


def _named(candidate: Candidate) -> Candidate:
    return with_step(
        candidate,
        "the text names its file or method",
        evidence=tuple(dict.fromkeys((*candidate.evidence, "named"))),
    )


def _at_std_unanswered(match: PanicMatch) -> bool:
    """A panic placed inside the standard library (old Rust's `expect`), not answered, with
    candidates to place elsewhere."""
    location = match.panic.location
    at_std = location is not None and location.kind == "std"
    return at_std and not match.matched and bool(match.candidates)


def _message_left_out(match: PanicMatch) -> bool:
    """A header whose message line is empty, and nothing answered."""
    panic = match.panic
    return panic.has_header and not panic.core_message.strip() and not match.matched


# `src/app.rs:1299:11`, `tauri-2.10.3/src/app.rs:1299`: a location written in the text.
_PROSE_LOCATION = re.compile(r"(?<![\w./\\-])[\w./\\-]{1,200}\.rs:\d{1,7}(?::\d{1,5})?")


def _locations_in(text: str) -> list[Location]:
    """The locations a text writes (at most a few dozen: a backtrace is not prose)."""
    if ".rs:" not in text:
        return []
    found = []
    for raw in _PROSE_LOCATION.findall(text, 0, 200_000)[:32]:
        location = parse_location(raw)
        if location is not None:
            found.append(location)
    return found


def _named_in(text: str) -> tuple[frozenset[str], frozenset[tuple[str, str]]]:
    """The file names (`state.rs`) and methods (`PngEncoder::write_image`) a text names."""
    files = frozenset(_RS_FILE_NAME.findall(text)) if ".rs" in text else frozenset()
    methods = frozenset(_TYPE_METHOD.findall(text)) if "::" in text else frozenset()
    return files, methods


_RS_FILE_NAME = re.compile(r"(?<![\w.-])[A-Za-z0-9_-]+\.rs\b")
# `PngEncoder::write_image`, `Slab<T>::index`: a type's method, named in the text.
_TYPE_METHOD = re.compile(
    r"\b([A-Z][A-Za-z0-9_]{0,80})(?:<[^<>\n]{0,80}>)?::([a-z_][a-z0-9_]{0,80})\b"
)

_SENTENCE_SOURCES = frozenset({"title", "line", "tail"})


def _whole_pattern(best: Candidate) -> bool:
    """The message fits whole as its pattern (placeholders filled), not fuzzily."""
    return best.message_score >= 1.0 and "pattern" in best.evidence and "fuzzy" not in best.evidence


def _fuzzy_only(best: Candidate) -> bool:
    """The message fits only fuzzily (no pattern or prefix of it was found)."""
    return "fuzzy" in best.evidence and not {"pattern", "prefix"} & set(best.evidence)


def _pasted(snippet: Snippet) -> bool:
    """Not a fragment quoted in backticks inside prose (a review comment naming code): a
    message the user pasted alone (a title, a line of its own, a code block's line) or with
    its std wrapper may be answered by a fuzzy fit; a backticked fragment only exactly."""
    backticked = snippet.source == "span" and f"`{snippet.raw}`" in snippet.context
    return not backticked or snippet.wrapper not in (None, "main-error")


_QUERY_NOISE = re.compile(r"^(?:\\n)+")


def _clean_query(message: str) -> str:
    """The message as matched: whitespace collapsed, and markdown residue around it dropped
    (an escaped `\\n` before it, a fence's backticks after it, from pastes in one code span).
    Backticks that close the message's own code span (`Unexpected Vulkan error: `7``, an even
    count) are the message's."""
    text = _QUERY_NOISE.sub("", normalise_message(message))
    trailing = len(text) - len(text.rstrip("`"))
    if trailing >= 3 or (trailing and text.count("`") % 2):
        text = text.rstrip("`")
    return text.strip()[:MAX_QUERY_CHARS]


def _quote_says_enough(query: str, entry: IndexedRecord) -> bool:
    """A quoted leading clause of the message's fixed text that says enough alone (a clause
    with filled placeholders holds values the record cannot vouch for: not from a quote)."""
    clause = query.rstrip(" .…")  # (or cut short: `_cut_short`)
    capital = clause[:1].upper() + clause[1:]  # (a title lower-cases it)
    return entry.message.startswith((clause, capital)) and says_enough(query)


def _score_message(
    prepared: _Query, entry: IndexedRecord, in_sentence: bool = False
) -> _MessageScore:
    """How well a pasted message matches a record's message, and how we know. The first
    letter's case counts as little (a title capitalises a message, an older release wrote it
    otherwise): compared in the record's case, a little below the same fit in the paste's."""
    recased = prepared.cased_as(entry.message)
    found = _message_fit(recased, entry, in_sentence)
    if recased is prepared:
        return found
    return _MessageScore(found.score * CASE_CHANGED, found.evidence)


CASE_CHANGED = 0.99


def _message_fit(prepared: _Query, entry: IndexedRecord, in_sentence: bool) -> _MessageScore:
    query = prepared.text
    if not query:
        return _MessageScore(0.0, ())
    if entry.may_match(prepared.squashed):
        found = _fullmatch(entry.regex, query, entry)
        if found:
            return _MessageScore(1.0, ("pattern",))
        if _fullmatch(entry.prefix_regex, query, entry):
            # `.expect("MSG")` prints `MSG: ErrDebug`; other kinds rarely carry a tail.
            score = 1.0 if entry.record.error_type == "expect" else 0.95
            return _MessageScore(score, ("pattern", "prefix"))
        if in_sentence:
            # A mention followed by more prose: the message must open the text and say enough.
            found = entry.regex.match(query)
            if (
                found
                and (not entry.derived or placeholders_fit(found, entry.ends_with_placeholder))
                and found.end() >= 20
                and query[found.end() : found.end() + 1] in _CLAUSE_ENDS
            ):
                return _MessageScore(0.95, ("pattern",))
    if (
        (entry.record.error_message or "").endswith(".")
        and not query.endswith(".")
        and entry.may_match(prepared.squashed + ".")
        and _fullmatch(entry.regex, query + ".", entry)
    ):
        return _MessageScore(1.0, ("pattern",))  # quoted without its closing full stop
    if _is_older_wording(query, entry) or _cut_short(query, entry.message):
        # Only as strong as a full match when a pasted panic backs it (see `_score`).
        return _MessageScore(0.9, ("prefix",))
    if leading_lines(query, entry):
        # A message of several lines, down to a line break: a paste ends at a blank line, a
        # title keeps the first line.
        return _MessageScore(0.95, ("pattern", "prefix"))
    ratio = _fuzzy(query, entry)
    fuzzy = ratio / 100 * 0.95
    # compared on the fixed text, placeholders filled
    form = entry.drift_form
    # (drift_between answers None below MIN_FIXED_TOKENS: the paste's form is not needed then;
    # nor above the best a drift with one edit scores, which the characters' ratio beats)
    drifted = (
        drift_between(prepared.drift_form, form)
        if form.fixed_total >= MIN_FIXED_TOKENS
        and not (ratio >= FUZZY_CUTOFF and fuzzy >= WHOLE_SCORE - 0.5 / form.fixed_total)
        else None
    )
    if ratio >= FUZZY_CUTOFF and (
        drifted is None or drifted.kind != "whole" or fuzzy >= drifted.score
    ):
        return _MessageScore(fuzzy, ("fuzzy",))
    if drifted is not None:
        # (also where the characters' ratio is lower: a long value sinks it, not the words;
        # a leading part alone, `prefix`, never displaces a whole comparison)
        return _MessageScore(drifted.score, ("fuzzy",) if drifted.kind == "whole" else ("prefix",))
    if older_filled_wording(query, entry):
        return _MessageScore(0.9, ("prefix",))  # as `_is_older_wording`, values filled
    return _MessageScore(0.0, ())


_GENERIC_FILES = frozenset({"lib.rs", "mod.rs", "main.rs", "error.rs", "tests.rs", "utils.rs"})


def _kept_name(pasted: str, record_file: str) -> bool:
    """Whether the pasted file may be the record's, moved: the same name, and for names every
    crate has (`lib.rs`, `mod.rs`) the same folder name too; or its module split into a
    folder of the same name (`src/resolution.rs` to `src/resolution/output.rs`)."""
    pasted_parts, record_parts = pasted.rsplit("/", 2), record_file.rsplit("/", 2)
    if _split_module(pasted, record_file):
        return True
    if pasted_parts[-1] != record_parts[-1]:
        return False
    if pasted_parts[-1] not in _GENERIC_FILES:
        return True
    return len(pasted_parts) > 1 and len(record_parts) > 1 and pasted_parts[-2] == record_parts[-2]


def _split_module(pasted: str, record_file: str) -> bool:
    """`a/x.rs` pasted, `a/x/y.rs` recorded: the module `x` became a folder of files."""
    pasted_parts, record_parts = pasted.rsplit("/", 2), record_file.rsplit("/", 3)
    if len(pasted_parts) < 2 or len(record_parts) < 3 or not pasted_parts[-1].endswith(".rs"):
        return False
    stem = pasted_parts[-1][: -len(".rs")]
    return stem == record_parts[-2] and pasted_parts[-2] == record_parts[-3]


def _changes_words(query: str, entry: IndexedRecord) -> bool:
    """Whether a resembling message changes the record's words, not only drops its tail.

    An older release printing today's message without its last clause (`... ParamSet`, today
    `... ParamSet. See: URL`) is the same site; a word replaced before the end (`expression
    should belong to` for `definition should belong to`) is a sibling message.
    """
    pasted = word_tuple(query)
    position, dropped = 0, False
    for word in word_tuple(entry.literal):  # the record's words, looked for in order
        try:
            position = pasted.index(word, position) + 1
        except ValueError:
            dropped = True
            continue
        if dropped:
            return True  # a word missing before one that is there: changed, not cut
    return False


def _replaces_a_word(query: str, entry: IndexedRecord) -> bool:
    """Whether the paste puts another word in place of one of the content words the record's
    message opens with (`expression should belong to` for `definition should belong to`): a
    sibling message, not an older wording, which keeps its opening words' stems (`Position 18
    is` for `Positions .. are`) and rewrites, if anything, what follows them."""
    pasted, recorded = word_tuple(query), word_tuple(entry.literal)
    blocks = difflib.SequenceMatcher(None, recorded, pasted, autojunk=False).get_opcodes()
    for tag, r1, r2, p1, p2 in blocks:
        if tag != "replace" or r1 >= _OPENING_WORDS:
            continue
        # (a value printed where the record has a word, `CONST_ARG@1..2` for `SyntaxNodePtr`,
        # is an older format's placeholder, not another word)
        words = [w for w in pasted[p1:p2] if len(w) >= _CONTENT_WORD and w.isalpha()]
        for word in recorded[r1:r2]:
            if len(word) < _CONTENT_WORD or not word.isalpha() or not words:
                continue
            if not any(
                difflib.SequenceMatcher(None, word, other).ratio() >= _SAME_STEM
                for other in pasted[p1:p2]
            ):
                return True
    return False


_OPENING_WORDS = 3  # the words that say what the message is about
_CONTENT_WORD = 4  # shorter words (`is`, `are`, `the`) change with the grammar around them
_SAME_STEM = 0.75  # `Position` / `Positions`; `definition` / `expression` is 0.5


# a token printed from a value (a path, a type, a struct), not prose nor a placeholder's quote
_VALUE = re.compile(r"::|[<>\[\]{}()=/\\]")


def _older_shorter_wording(query: str, entry: IndexedRecord) -> bool:
    """Whether the pasted message is the record's words with some left out, its first and
    last kept (`HirDisplay failed when calling Display::fmt!`, today `HirDisplay::hir_fmt
    failed with DisplaySourceCodeError when calling Display::fmt!`), or its leading words
    alone (`Unable to open the shader cache`, today `.. cache for writing`), maybe followed by
    a value where the record's last words are (`_VALUE`); at least four words and half of the
    record's."""
    if entry.has_placeholders:
        return False
    pasted, recorded = word_tuple(query), word_tuple(entry.literal)
    head, _, last = query.rstrip().rpartition(" ")
    if _VALUE.search(last):
        # its leading words, then a value where the record's last words are: a later release
        # formats what it names (`.. for given type`, then `.. for app::Shortcut<Wry>`)
        lead = word_tuple(head)
        if 4 <= len(lead) < len(recorded) <= 2 * len(lead) and lead == recorded[: len(lead)]:
            return True
    if len(pasted) < 4 or 2 * len(pasted) < len(recorded) or len(pasted) >= len(recorded):
        return False
    if pasted[0] != recorded[0]:
        return False
    if pasted[-1] != recorded[-1]:
        return pasted == recorded[: len(pasted)]  # its leading words: an older, shorter text
    position = 0
    for word in pasted:
        try:
            position = recorded.index(word, position) + 1
        except ValueError:
            return False
    return True


def _adds_words(query: str, entry: IndexedRecord) -> bool:
    """Whether the pasted message goes on, word after word, past the record's whole text.

    `missing span contents in file cache` is not `missing span`: a record whose message ends in
    literal text prints nothing after it, except `expect`'s `: {error:?}` and clause marks.
    """
    if entry.has_placeholders:
        return False
    message = normalise_message(entry.record.error_message or "")
    pasted = normalise_message(query)
    if len(message) < 8 or not pasted.lower().startswith(message.lower()):
        return False
    rest = pasted[len(message) :]
    return len(rest) > 1 and rest[0] == " " and rest[1].isalnum()


def _fullmatch(regex: Regex, query: str, entry: IndexedRecord) -> RegexMatch | None:
    found = regex.fullmatch(query)
    if found and entry.derived and not placeholders_fit(found, entry.ends_with_placeholder):
        return None
    return found


_CLAUSE_ENDS = ("", " ", ",", ")", "(")


def _cut_short(query: str, message: str) -> bool:
    """The message's opening, cut inside a word or where an ellipsis says so (a title trimmed to
    fit, a log line's width): no release prints half a word."""
    text = _before_ellipsis(query)
    inside_a_word = text == query
    text = text.rstrip()
    if len(text) < OPENING_CHARS or len(text) >= len(message) or not message.startswith(text):
        return False
    if not inside_a_word:
        return True
    # (a stopword may be whole: `.. valid in a` of `.. in a tag name`)
    partial = re.search(r"[^\W_]+$", text)
    return (
        partial is not None
        and partial.group().lower() not in STOPWORDS
        and message[len(text)].isalnum()
    )


def _before_ellipsis(text: str) -> str:
    """`text` without the ellipsis that says it was cut (`…`, `...`)."""
    return text.removesuffix("…").removesuffix("...")


def _crate_relative(location: Location) -> bool:
    """A build script's path as old Rust printed it from its package's root (`build.rs`,
    `build/main.rs`): no folder to say whose package it is (std's own files say nothing
    either). A `src/main.rs` is the user's own crate's."""
    if location.kind == "std":
        return True
    return location.path.replace("\\", "/").split("/")[0] in ("build.rs", "build")


def _is_older_wording(query: str, entry: IndexedRecord) -> bool:
    """An older release printed only the first clause of today's message.

    `Ordering is bigger than operations` for today's `Ordering is bigger than operations:
    ordering len {}, ...`: the pasted text is a whole leading clause of the record's.
    """
    clause = query.rstrip(" .")
    if len(clause) < 20 or len(clause) >= len(entry.message):
        return False
    message = entry.message
    return message.startswith(clause) and message[len(clause)] in ":,;(.-"


_rapidfuzz: tuple[Any, Any] | None = None


def _import_rapidfuzz() -> tuple[Any, Any]:
    """rapidfuzz's `fuzz` and `utils`, imported on the first fuzzy score: a text answered by
    its patterns does not pay for the import (a cold `triage-bot match`)."""
    global _rapidfuzz
    from rapidfuzz import fuzz, utils

    _rapidfuzz = (fuzz, utils)
    return _rapidfuzz


def _fuzzy(query: str, entry: IndexedRecord) -> float:
    """Similarity for typos and small drift, on the literal text when there are placeholders."""
    target = entry.literal if entry.has_placeholders else entry.message
    if len(target) < 15:
        return 0.0
    fuzz, utils = _rapidfuzz or _import_rapidfuzz()
    if entry.has_placeholders:
        # Values fill the placeholders, so the query is longer; align the literal inside it,
        # but only when the literal is most of the query. A number is a value: how many digits
        # it has (`Position 18` or `Position 6934`) is no evidence either way.
        query = _values_as_zero(query, target)
        if len(target) < 0.6 * len(query) or len(query) < 0.9 * len(target):
            return 0.0
        return fuzz.partial_ratio(
            target, query, processor=utils.default_process, score_cutoff=FUZZY_CUTOFF
        )
    # Compare against the same length of query, so an `: err` tail does not count against;
    # and against the whole query, so a word inserted does not push the message's end out.
    if len(query) < 0.85 * len(target):
        return 0.0
    head = query[: len(target) + 2]
    return max(
        fuzz.ratio(text, target, processor=utils.default_process, score_cutoff=FUZZY_CUTOFF)
        for text in ((head, query) if len(query) > len(head) else (head,))
    )


_NUMBER = re.compile(r"\d+")


def _values_as_zero(query: str, literal: str) -> str:
    """The query with each number the literal does not have written as `0`: a value filling a
    placeholder, whose length says nothing (`Use 256 or 512` keeps its own numbers)."""
    own = set(_NUMBER.findall(literal))
    return _NUMBER.sub(lambda found: found[0] if found[0] in own else "0", query)


def _rank(
    scored: list[tuple[float, Candidate]], covers: Callable[[Candidate], bool]
) -> list[tuple[float, Candidate]]:
    """Best first: by uncapped score, the location breaking ties between records that share a
    message (burn has `{other:?} reduction is not supported` in fifteen files). A record the
    message only resembles never outranks one whose pattern it matches, when that pattern's
    fixed text `covers` the paste (is at least half of it)."""
    # A placeholder-only record (`{e}`) matches anything and is capped: it is no exact match;
    # nor is a format mostly of placeholders (`Command {}: {}`).
    exact = any(
        "pattern" in c.evidence and c.confidence >= MATCH_THRESHOLD and covers(c) for _, c in scored
    )

    def key(item: tuple[float, Candidate]) -> tuple[bool, float, bool, bool, float, int, str]:
        raw, c = item
        resembles_only = exact and "pattern" not in c.evidence
        return (
            resembles_only,
            -raw,
            "location" not in c.evidence,
            "line" not in c.evidence,
            -c.message_score,
            # sites of one message in one file: the nearer to the pasted line first
            c.line_distance if c.line_distance is not None else 1 << 30,
            c.record_id,
        )

    return sorted(scored, key=key)


def _settle_ties(
    ranked: list[tuple[float, Candidate]],
    index: CatalogIndex,
    covers: Callable[[Candidate], bool],
) -> list[Candidate]:
    """Lower below the bar the candidates the evidence does not tell apart: the best and every
    different message scoring about the same (a score capped at 1.0 a tenth lower still
    cleared it), or the best at the pasted line and the sites of its file whose messages cover
    the paste and fit it better."""
    candidates = [c for _, c in ranked]
    if len(ranked) < 2:
        return candidates
    (best_raw, best), (second_raw, second) = ranked[0], ranked[1]
    # Messages differing only in placeholder names (`{entity}`, `{first_entity}`) are one.
    best_message = index.entry(best.record_id).literal
    second_message = index.entry(second.record_id).literal
    # A message matching the best record's pattern whole is that record's, not one that
    # only resembles it (a catalog may hold wordings one word apart).
    whole = "pattern" in best.evidence and "prefix" not in best.evidence
    if whole and "pattern" not in second.evidence:
        return candidates
    # The pasted line points at one site, the message at another of the file (sibling messages
    # a word apart, `Long`/`Short option names`, pasted from a release whose lines shifted):
    # the evidence disagrees, and neither is answered.
    if "line" in best.evidence:
        fits_better = {
            c.record_id
            for c in candidates[1:]
            if "location" in c.evidence
            and "line" not in c.evidence
            and c.message_score >= best.message_score + MESSAGE_LEAD
            and covers(c)
            and index.entry(c.record_id).literal != best_message
        }
        if fits_better:
            why = "the pasted line names one site, the message fits another better"
            return [
                _below_the_bar(c, why) if c is best or c.record_id in fits_better else c
                for c in candidates
            ]
    if best_message != second_message and best_raw - second_raw < W.tie_margin:
        # every candidate of the tie, so no later stage reordering candidates capped alike
        # puts one of them first again
        tied = {
            c.record_id
            for raw, c in ranked[1:]
            if best_raw - raw < W.tie_margin and index.entry(c.record_id).literal != best_message
        }
        why = "another message scores about the same"
        return [
            _below_the_bar(c, why) if c is best or c.record_id in tied else c for c in candidates
        ]
    return candidates


def _without_parts_of_longer(matches: list[PanicMatch]) -> list[PanicMatch]:
    """Quoted messages answered, less those that are part of a longer one answered with
    another record (a block's first line read alone, the block read joined): the longer
    reading explains more of the paste."""
    queries = [m.panic.message for m in matches]
    return [
        m
        for m, query in zip(matches, queries, strict=True)
        if not any(
            query != other
            and query in other
            and m.best is not None
            and o.best is not None
            and o.best.record_id != m.best.record_id
            for o, other in zip(matches, queries, strict=True)
        )
    ]


def _below_the_bar(candidate: Candidate, why: str) -> Candidate:
    return with_step(
        candidate,
        why,
        confidence=round(max(min(candidate.confidence, W.threshold) - W.tie_penalty, 0.0), 4),
        refused=None,
    )


def _formats_say_less(
    scored: list[tuple[float, Candidate]], covers: Callable[[Candidate], bool]
) -> list[tuple[float, Candidate]]:
    """A format mostly of placeholders (`Command {}: {}`), which any message of its file fits,
    says almost nothing when another record's message covers the paste and fits it nearly
    whole (a drifted `Command 42: Long option names ..`): capped as a message saying nothing."""
    if not any(c.message_score >= COVERING_FIT and covers(c) for _, c in scored):
        return scored
    cap = W.cap_saying_nothing
    return [
        (min(raw, cap), with_step(c, "another message covers the paste", confidence=cap))
        if "pattern" in c.evidence and c.confidence > cap and not covers(c)
        else (raw, c)
        for raw, c in scored
    ]


def _without_cascades(
    matches: list[PanicMatch], in_project: Callable[[str], bool]
) -> list[PanicMatch]:
    """Later panics are usually consequences of the first: answer them only with the root."""
    if not matches or matches[0].matched or not matches[0].panic.has_header:
        return matches
    if matches[0].panic.location is None:
        # A hook's report without a location (pyo3's `PanicException: ..`) is one raised error
        # among others a caller caught: a list of them are separate reports, not a cascade.
        return matches
    unwrap_first = is_uncatalogued_unwrap(matches[0])
    dependency_first = is_uncatalogued_dependency(matches[0], in_project)
    return [
        m
        if not m.matched
        or (unwrap_first and answers_after_unwrap(m))
        or (dependency_first and answers_after_dependency(m))
        else silenced(m)
        for m in matches
    ]


def _verdict(matches: list[PanicMatch]) -> Verdict:
    if any(m.matched for m in matches):
        return "match"
    if any(_is_panic(m.panic) for m in matches):
        return "uncatalogued-panic"
    return "no-panic"


def _is_panic(panic: Panic) -> bool:
    """A panic was reported: a header, a std wrapper or a location, not `Error:` from main."""
    if panic.wrapper == "main-error":
        return False
    return panic.has_header or panic.wrapper is not None or panic.location is not None


def _fingerprint(matches: list[PanicMatch]) -> str:
    digest = hashlib.sha256()
    for m in matches:
        loc = m.panic.location
        digest.update(normalise_message(m.panic.core_message).encode("utf-8", "replace"))
        digest.update(f"|{loc.path if loc else ''}\n".encode("utf-8", "replace"))
    return digest.hexdigest()[:12]
