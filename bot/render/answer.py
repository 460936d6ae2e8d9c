"""The answer model: what the bot says about one input, before any platform formats it.

`build_answer(analysis, catalog)` turns the matcher's result and the catalog's records into
sections, one per answered panic (root first), holding raw catalog text and `Words` built from
the templates in texts.py. The renderers (github, discord, terminal) only format and escape.
Nothing here is invented: every sentence is a template from texts.py filled with values from
the record, the candidate's evidence or the pasted panic.
"""

from __future__ import annotations

import contextlib
import re
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from bot.catalog.model import Record
from bot.core.analysis import Analysis, Candidate, PanicMatch, Verdict
from bot.core.match.cascade import is_uncatalogued_unwrap
from bot.core.panic import Location, Panic
from bot.render import texts
from bot.render.history_note import history_note
from bot.render.markup import Words, join_words, one_line, shorten, words

TITLE_LIMIT = 300  # the error message as a heading
LOCATION_LIMIT = 200  # a pasted path in the confidence words
SHORT_LIMIT = 100  # crate names, versions, tags
FLAG_MISMATCH = "possible-mismatch"
FLAG_CONTRADICTS = "contradicts-family"
MEANING_LIMIT = 300  # the one line on what the panic means
NEAREST_MIN = 0.3  # an uncatalogued panic's nearest records are named from this confidence on
NEAREST_SHOWN = 3

# `errorType` of a record -> how the panic is raised in the code, for bare panic sites.
_RAISED_BY = {
    "panic": "panic!",
    "expect": ".expect",
    "unwrap": ".unwrap",
    "unimplemented": "unimplemented!",
    "todo": "todo!",
    "unreachable": "unreachable!",
    "assert": "assert!",
    "assert_eq": "assert_eq!",
    "assert_ne": "assert_ne!",
    "debug_assert": "debug_assert!",
    "debug_assert_eq": "debug_assert_eq!",
    "debug_assert_ne": "debug_assert_ne!",
}


class CatalogLike(Protocol):
    """What the answer needs from `bot.catalog.loader.Catalog`."""

    def get(self, record_id: str) -> Record | None: ...

    def by_message(self, text: str) -> list[Record]: ...

    def flags(self, record_id: str) -> frozenset[str]: ...

    def family(self, record_id: str) -> Any | None: ...


@dataclass(frozen=True, slots=True)
class SourceLink:
    """A record's source, pinned to the analysed commit: `module.rs:1498 @ d16f7ba`."""

    label: str
    url: str | None  # raw; renderers pass it through markup.safe_url
    path: str | None
    line: int | None


@dataclass(frozen=True, slots=True)
class RelatedError:
    message: str  # as the record lists it
    record_id: str | None  # the catalog record with that message, when there is one
    source: SourceLink | None  # that record's pinned source


@dataclass(frozen=True, slots=True)
class Extra:
    """A long, collapsed part: text, a list, or a code block."""

    title: str
    text: str | None = None
    items: tuple[str, ...] = ()
    code: str | None = None


@dataclass(frozen=True, slots=True)
class FoldedWriteUp:
    """A record's own write-up kept out of the answer's way: lint found it contradicts the
    family's explanation, which the answer leads with instead."""

    caution: Words  # one line, shown as the fold's summary
    documentation: str | None
    solutions: tuple[str, ...]
    example_fix: str | None


@dataclass(frozen=True, slots=True)
class Nearest:
    """A catalog record close to an uncatalogued panic, with its score."""

    record_id: str
    message: str
    percent: int


@dataclass(frozen=True, slots=True)
class Uncatalogued:
    panic: Panic
    nearest: tuple[Nearest, ...]


@dataclass(frozen=True, slots=True)
class Section:
    """The answer for one panic."""

    record: Record
    match: PanicMatch
    title: str  # the catalogued error, in one line
    confidence: Words  # how sure, and why
    source: SourceLink | None
    version_note: Words | None
    caution: Words | None  # lint flagged the record: its write-up may not apply
    documentation: str | None
    solutions: tuple[str, ...]
    example_fix: str | None
    related: tuple[RelatedError, ...]
    extras: tuple[Extra, ...]
    bare: bool  # no write-up: only the source and the facts below
    facts: tuple[Words, ...]
    # For a bare site: what the catalog knows, or that its family's advice follows.
    bare_intro: Words | None = None
    # The first view: the pasted (filled-in) message, one line on what it means (catalog prose,
    # or words built from the kind of check for a bare site), and the best solution.
    panic_message: str = ""
    meaning_text: str | None = None
    meaning_words: Words | None = None
    best_solution: str | None = None
    folded: FoldedWriteUp | None = None
    # The write-up is the one an earlier section shows (same family): said, not repeated.
    same_as: Words | None = None

    @property
    def record_id(self) -> str:
        return self.record.id


@dataclass(frozen=True, slots=True)
class Answer:
    verdict: Verdict
    fingerprint: str
    sections: tuple[Section, ...]  # root first, at most max_sections
    intro: Words | None  # several panics
    notes: tuple[Words, ...]  # panics not shown, panics not catalogued
    footer: Words | None
    wrong_hint: Words
    panics: tuple[Panic, ...]  # every panic extracted, for the verdict line
    # A collapsed note for maintainers: the `/triage` commands (GitHub only).
    maintainers: tuple[Words, ...] = ()
    # No section: the panics not found, each with its nearest records.
    uncatalogued: tuple[Uncatalogued, ...] = ()

    @property
    def record_ids(self) -> tuple[str, ...]:
        return tuple(s.record.id for s in self.sections)

    @property
    def answered(self) -> bool:
        return bool(self.sections)


# --- building ------------------------------------------------------------------------------------


def build_answer(analysis: Analysis, catalog: CatalogLike, *, max_sections: int = 3) -> Answer:
    sections: list[Section] = []
    answered_panics: set[int] = set()
    for item in analysis.answered:
        best = item.best
        record = catalog.get(best.record_id) if best else None
        if best is None or record is None:
            continue
        answered_panics.add(id(item))
        sections.append(_section(item, best, record, catalog))
    shown = _without_repeats(sections[: max(1, max_sections)])
    omitted = len(sections) - len(shown)
    # Panics neither answered nor a repeat of an answered record: the ones the catalog lacks.
    answered_records = {s.record.id for s in sections}
    unmatched = [
        p
        for p in analysis.panics
        if id(p) not in answered_panics
        and not (p.matched and p.best and p.best.record_id in answered_records)
    ]
    notes: list[Words] = []
    if omitted:
        notes.append(_count_words(omitted, texts.OMITTED_ONE, texts.OMITTED_MANY))
    first = analysis.panics[0] if analysis.panics else None
    if shown and unmatched and unmatched[0] is first and is_uncatalogued_unwrap(first):
        # An uncatalogued first panic (a plain unwrap) with a later one answered: say which.
        message = shorten(one_line(first.panic.message), TITLE_LIMIT)
        notes.append(words(texts.FIRST_NOT_CATALOGUED, message=message))
        unmatched = unmatched[1:]
    if shown and unmatched:
        notes.append(_count_words(len(unmatched), texts.UNMATCHED_ONE, texts.UNMATCHED_MANY))
    intro = words(texts.SEVERAL_PANICS, count=len(sections)) if len(sections) > 1 else None
    ids = ", ".join(s.record.id for s in shown)
    footer = None
    if shown:
        template = texts.FOOTER_ONE if len(shown) == 1 else texts.FOOTER_MANY
        footer = words(template, ids=ids)
    maintainers = tuple(words(t) for t in texts.MAINTAINERS_COMMANDS) if shown else ()
    uncatalogued = () if shown else tuple(_uncatalogued(analysis, catalog))
    return Answer(
        verdict=analysis.verdict,
        fingerprint=analysis.fingerprint,
        sections=tuple(shown),
        intro=intro,
        notes=tuple(notes),
        footer=footer,
        wrong_hint=words(texts.REACT_HINT),
        panics=tuple(p.panic for p in analysis.panics),
        maintainers=maintainers,
        uncatalogued=uncatalogued,
    )


def _uncatalogued(analysis: Analysis, catalog: CatalogLike) -> Iterable[Uncatalogued]:
    for item in analysis.panics[:MAX_LISTED_PANICS]:
        nearest = []
        for candidate in item.candidates:
            if len(nearest) >= NEAREST_SHOWN or candidate.confidence < NEAREST_MIN:
                break
            record = catalog.get(candidate.record_id)
            if record is not None:
                nearest.append(
                    Nearest(
                        record.id,
                        shorten(one_line(record.error_message), TITLE_LIMIT),
                        round(candidate.confidence * 100),
                    )
                )
        yield Uncatalogued(item.panic, tuple(nearest))


def _first_sentence(text: str | None) -> str | None:
    """The first sentence of catalog prose, in one line, for the answer's first view."""
    if not text or not text.strip():
        return None
    flat = one_line(text)
    end = re.search(r"(?<=[.!?])\s+(?=[A-Z`])", flat)
    return shorten(flat[: end.start()] if end else flat, MEANING_LIMIT)


def _without_repeats(sections: list[Section]) -> list[Section]:
    """A section whose write-up (a family's, usually) an earlier section already shows points
    to it instead of repeating it."""
    out: list[Section] = []
    for section in sections:
        earlier = next(
            (
                o
                for o in out
                if section.documentation
                and o.documentation == section.documentation
                and o.solutions == section.solutions
            ),
            None,
        )
        if earlier is not None:
            section = replace(
                section,
                documentation=None,
                solutions=(),
                example_fix=None,
                extras=(),
                same_as=words(texts.SAME_AS_ABOVE, message=earlier.panic_message),
            )
        out.append(section)
    return out


def _count_words(count: int, one: str, many: str) -> Words:
    return words(one) if count == 1 else words(many, count=count)


def _section(item: PanicMatch, best: Candidate, record: Record, catalog: CatalogLike) -> Section:
    flags = catalog.flags(record.id)
    flagged = FLAG_MISMATCH in flags
    contradicts = FLAG_CONTRADICTS in flags
    bare = not record.has_write_up
    # A bare site in an error family is answered with the family's advice, written once; so is
    # a record whose own write-up lint flagged as possibly about another error, or as making a
    # claim its family's code-checked explanation refutes.
    family = _family_with_write_up(catalog, record) if bare or flagged or contradicts else None
    write_up: Any = family or record
    caution = words(texts.CAUTION) if flagged else None
    folded = None
    if family is not None and contradicts and not flagged:
        # Its own write-up is about this error but wrong on a point the family settles: lead
        # with the family's explanation, keep the record's own folded under one caution line.
        claim = _claim(catalog, record, family)
        folded = FoldedWriteUp(
            caution=words(texts.CONTRADICTS_FAMILY, claim=claim),
            documentation=_text(record.documentation),
            solutions=_items(record.solutions),
            example_fix=_text(record.example_fix),
        )
        intro = None
        caution = None
    elif family is not None:
        name = shorten(one_line(family.name), TITLE_LIMIT)
        intro = words(texts.FLAGGED_FAMILY if flagged else texts.FAMILY_SITE, family=name)
        bare, caution = True, None  # shown like a bare site: the facts, then the family's advice
    else:
        intro = words(texts.BARE_SITE) if bare else None
    solutions = _items(write_up.solutions)
    documentation = _text(write_up.documentation)
    meaning_text = None
    if family is not None and _text(getattr(family, "summary", None)):
        meaning_text = shorten(one_line(family.summary), MEANING_LIMIT)
    elif not (caution and family is None):
        meaning_text = _first_sentence(documentation)
    kind = check_kind_words(record)
    return Section(
        record=record,
        match=item,
        title=shorten(one_line(record.error_message), TITLE_LIMIT) or texts.NO_MESSAGE,
        confidence=confidence_words(item, best, record),
        source=source_link(record, catalog),
        version_note=history_note(catalog, item, record)
        or _removed_note(record)
        or (version_note(item.panic, record) if "location" in best.evidence else None),
        caution=caution,
        documentation=documentation,
        solutions=solutions,
        example_fix=_text(write_up.example_fix),
        related=tuple(_related(record, catalog)),
        extras=_extras(write_up, bare),
        bare=bare,
        # The kind of check leads the facts unless it is already the first view's meaning.
        facts=((kind,) if meaning_text else ()) + _facts(record) if bare else (),
        bare_intro=intro,
        panic_message=_panic_message(item, best, record),
        meaning_text=meaning_text,
        meaning_words=None if meaning_text else kind,
        best_solution=None if caution and family is None else (solutions[0] if solutions else None),
        folded=folded,
    )


def _panic_message(item: PanicMatch, best: Candidate, record: Record) -> str:
    """The message as the user's panic filled it in, when the match rests on the message; the
    catalogued one when it does not (a record a maintainer chose)."""
    by_message = {"pattern", "prefix", "fuzzy"} & set(best.evidence)
    pasted = shorten(one_line(item.panic.message), TITLE_LIMIT) if by_message else ""
    return pasted or shorten(one_line(record.error_message), TITLE_LIMIT) or texts.NO_MESSAGE


def _claim(catalog: CatalogLike, record: Record, family: Any) -> str:
    from bot.catalog.lint import family_contradiction  # lint imports the catalog's types

    found = family_contradiction(record, getattr(catalog, "families", ()) or [family])
    return shorten(one_line(found[1]), SHORT_LIMIT) if found else ""


# --- what a bare site can say without a write-up ------------------------------------------------

_ASSERTS = {
    "assert",
    "assert_eq",
    "assert_ne",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
}
_SHAPE_WORDS = r"\b(?:shape|shapes|dims?|dimensions?|rank|size|sizes|len|length)\b"
_CHANNEL_WORDS = r"\b(?:channel|send|sender|recv|receive|receiver|disconnected)\b"
_GUARDS = (  # (words in the message, what the check guards), first fit wins
    (re.compile(_SHAPE_WORDS, re.I), "shape"),
    (re.compile(r"\b(?:dtype|dtypes|data ?type|element type|precision)\b", re.I), "dtype"),
    (re.compile(r"\bdevices?\b", re.I), "device"),
)
_RESOURCES = (
    (re.compile(_CHANNEL_WORDS, re.I), "channel"),
    (re.compile(r"\b(?:lock|mutex|rwlock|poison(?:ed)?)\b", re.I), "lock"),
    (re.compile(r"\b(?:file|read|write|open|create|io|directory|path)\b", re.I), "io"),
)
_BACKEND = re.compile(r"\b(?:backend|backends|device|wgpu|cuda|ndarray|tch|candle|metal)\b", re.I)


def check_kind_words(record: Record) -> Words:
    """What kind of check raised the panic and what it guards, from the macro and message."""
    kind = record.error_type or ""
    macro = _RAISED_BY.get(kind, kind or "panic!")
    message = record.error_message or ""
    crate = shorten(record.crate or record.repo or "", SHORT_LIMIT)
    values = {"macro": macro, "crate": crate}
    if kind in _ASSERTS:
        for regex, guard in _GUARDS:
            if regex.search(message):
                return words(texts.KIND_ASSERT_GUARD[guard], **values)
        return words(texts.KIND_ASSERT, **values)
    if kind in ("unimplemented", "todo"):
        if _GUARDS[1][0].search(message):
            return words(texts.KIND_UNIMPLEMENTED_DTYPE, **values)
        if _BACKEND.search(message):
            return words(texts.KIND_UNIMPLEMENTED_BACKEND, **values)
        return words(texts.KIND_UNIMPLEMENTED, **values)
    if kind in ("expect", "unwrap"):
        for regex, resource in _RESOURCES:
            if regex.search(message):
                return words(texts.KIND_EXPECT_ON[resource], **values)
        return words(texts.KIND_EXPECT, **values)
    if kind == "unreachable":
        return words(texts.KIND_UNREACHABLE, **values)
    if _GUARDS[1][0].search(message):
        return words(texts.KIND_PANIC_DTYPE, **values)
    return words(texts.KIND_PANIC, **values)


def _removed_note(record: Record) -> Words | None:
    sha = record.removed_at
    return words(texts.REMOVED_SITE, sha=short_sha(sha)) if sha else None


def _family_with_write_up(catalog: CatalogLike, record: Record) -> Any | None:
    lookup = getattr(catalog, "family", None)
    family = lookup(record.id) if lookup else None
    return family if family is not None and family.has_write_up else None


def _text(value: str | None) -> str | None:
    return value if value and value.strip() else None


def _items(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(v for v in values if v and v.strip())


def short_sha(sha: str | None) -> str | None:
    return sha[:7] if sha else None


_FULL_SHA = re.compile(r"^[0-9a-f]{40}$")
_URL_SHA = re.compile(r"/(?:blob|tree|raw)/([0-9a-fA-F]{40})/")
_SHA_INDEX: weakref.WeakKeyDictionary[Any, tuple[str, ...]] = weakref.WeakKeyDictionary()


def _known_shas(catalog: CatalogLike | None) -> tuple[str, ...]:
    """Every full commit id the catalog names (analysedSha, githubUrl), to complete short ones."""
    if catalog is None:
        return ()
    try:
        return _SHA_INDEX[catalog]
    except (KeyError, TypeError):
        pass
    known = getattr(catalog, "known_commits", None)
    shas = tuple(sorted(known())) if known is not None else ()
    with contextlib.suppress(TypeError):  # a catalog that cannot be weakly referenced
        _SHA_INDEX[catalog] = shas
    return shas


def full_sha(sha: str | None, catalog: CatalogLike | None = None) -> str | None:
    """The 40-character commit id for `sha`: itself when full, else the one full id the catalog
    knows that starts with it; None when it cannot be completed (a link would be ambiguous)."""
    if not sha:
        return None
    sha = sha.strip().lower()
    if _FULL_SHA.match(sha):
        return sha
    if len(sha) < 7:
        return None
    fits = [full for full in _known_shas(catalog) if full.startswith(sha)]
    return fits[0] if len(fits) == 1 else None


def source_link(
    record: Record, catalog: CatalogLike | None = None, *, at_sha: str | None = None
) -> SourceLink | None:
    """The pinned source at the full commit id: built from sha/path/line.

    Building it gives the exact line even when `githubUrl` points at the whole snippet
    (`#L1915-L1951`). `at_sha` pins it to another record's commit (related errors): the line
    is kept only when this record was analysed at that same commit.
    """
    path, line = record.file_path, record.line_number
    own = full_sha(record.analyzed_sha, catalog)
    if own is None:
        found = _URL_SHA.search(record.github_url or "")
        own = found.group(1).lower() if found else None
    # A short id nothing completes is said as text, never linked: every link names a full SHA.
    sha = own or (one_line(record.analyzed_sha).strip() if record.analyzed_sha else None)
    if at_sha is not None:
        sha = at_sha
        line = line if own == at_sha else None
    url = None
    if sha and _FULL_SHA.match(sha) and path and record.repo:
        url = f"https://github.com/{record.repo}/blob/{sha}/{path}"
        url = f"{url}#L{line}" if line else url
    if not path and not url:
        return None
    name = shorten(path.rsplit("/", 1)[-1], SHORT_LIMIT) if path else ""
    if line and sha:
        label = texts.SOURCE_LABEL.format(file=name, line=line, sha=short_sha(sha))
    elif sha:
        label = texts.SOURCE_LABEL_NO_LINE.format(file=name, sha=short_sha(sha))
    elif line:
        label = texts.SOURCE_LABEL_NO_SHA.format(file=name, line=line)
    else:
        label = name
    return SourceLink(label=label, url=url, path=path, line=line)


def pasted_location(location: Location, *, with_line: bool = True) -> str:
    """How the paste names the place: `burn-autodiff-0.18.0/src/ops/module.rs:1498`."""
    path = location.path
    if location.crate and location.crate_path:
        if location.crate_version:
            path = f"{location.crate}-{location.crate_version}/{location.crate_path}"
        else:
            marker = f"crates/{location.crate}/"
            at = path.find(marker)
            path = path[at:] if at >= 0 else path
    text = f"{path}:{location.line}" if with_line and location.line else path
    return shorten(one_line(text), LOCATION_LIMIT)


def confidence_words(item: PanicMatch, best: Candidate, record: Record) -> Words:
    """How sure we are, and why, from the candidate's evidence."""
    evidence = set(best.evidence)
    location = item.panic.location
    exact_message = bool(evidence & {"pattern", "prefix"})
    fuzzy = not exact_message and "fuzzy" in evidence
    same_file = "location" in evidence
    same_line = same_file and (
        record.line_number is None or ("line" in evidence and not best.line_distance)
    )
    percent = round(best.message_score * 100)
    pasted = pasted_location(location) if location else None
    if exact_message:
        if same_line:
            return words(texts.MATCH_MESSAGE_AND_LOCATION, location=pasted)
        if same_file:
            return words(
                texts.MATCH_MESSAGE_AND_FILE, location=pasted, record_line=record.line_number
            )
        if location is None:
            crates = item.panic.stack_crates
            if "crate" in evidence and record.crate and record.crate in crates:
                return words(texts.MATCH_MESSAGE_AND_CRATE, crate=record.crate)
            return words(texts.MATCH_MESSAGE_NO_LOCATION)
        return words(texts.MATCH_MESSAGE_OTHER_LOCATION, location=pasted)
    if fuzzy:
        if same_line:
            return words(texts.MATCH_FUZZY_AND_LOCATION, percent=percent, location=pasted)
        if same_file:
            return words(
                texts.MATCH_FUZZY_AND_FILE,
                percent=percent,
                location=pasted,
                record_line=record.line_number,
            )
        if location is None:
            return words(texts.MATCH_FUZZY_NO_LOCATION, percent=percent)
        return words(texts.MATCH_FUZZY_OTHER_LOCATION, percent=percent, location=pasted)
    if same_file and pasted:
        return words(texts.MATCH_LOCATION_ONLY, location=pasted)
    return words(texts.MATCH_OTHER, percent=round(best.confidence * 100))


def version_note(panic: Panic, record: Record) -> Words | None:
    """Said only when the pasted line of the record's file differs from the record's line."""
    if not record.analyzed_sha or not record.line_number or not record.file_path:
        return None
    tail = record.file_path.split("/", 2)[-1] if record.crate else record.file_path
    locations = [panic.location] + [f.location for f in panic.frames]
    same_file = [
        loc
        for loc in locations
        if loc
        and loc.line
        and (loc.crate_path or loc.path or "").endswith(tail)
        and (loc.crate in (None, record.crate))
    ]
    if not same_file or any(loc.line == record.line_number for loc in same_file):
        return None
    loc = same_file[0]
    date = ""
    if record.analyzed_at:
        date = texts.VERSION_NOTE_DATE.format(date=one_line(record.analyzed_at)[:10])
    values = {
        "line": loc.line,
        "record_line": record.line_number,
        "sha": short_sha(one_line(record.analyzed_sha)),
        "date": date,
    }
    if loc.crate and loc.crate_version:
        return words(
            texts.VERSION_NOTE,
            crate=shorten(one_line(loc.crate), SHORT_LIMIT),
            version=shorten(one_line(loc.crate_version), SHORT_LIMIT),
            **values,
        )
    return words(texts.VERSION_NOTE_NO_VERSION, **values)


_MACRO_PREFIX = re.compile(r"^\s*[a-z_]+!\(\s*\"?")


def _related_record(message: str, record: Record, catalog: CatalogLike) -> Record | None:
    """The catalog record a related error names: by its message, else by a cut-off prefix
    (`unimplemented!("float_scatter with {other:?} update is not i`), same file first."""
    found = [r for r in catalog.by_message(message) if r.id != record.id]
    if not found:
        prefix = one_line(_MACRO_PREFIX.sub("", message)).rstrip("\"'); ")
        by_start = getattr(catalog, "by_message_start", None)
        if len(prefix) >= 12 and by_start is not None:
            found = [r for r in by_start(prefix, record.repo) if r.id != record.id]
    found.sort(key=lambda r: (r.file_path != record.file_path, r.crate != record.crate, r.id))
    return found[0] if found else None


def _related(record: Record, catalog: CatalogLike) -> Iterable[RelatedError]:
    """Related errors that the catalog can link, each in full, pinned at this record's commit.

    One the catalog does not know is left out rather than shown cut or unlinked."""
    seen: set[str] = set()
    at_sha = full_sha(record.analyzed_sha, catalog)
    for message in record.related_errors:
        if not message or not message.strip():
            continue
        other = _related_record(message, record, catalog)
        if other is None or other.id in seen:
            continue
        seen.add(other.id)
        yield RelatedError(
            message=other.error_message,
            record_id=other.id,
            source=source_link(other, catalog, at_sha=at_sha) if at_sha else None,
        )


def _extras(write_up: Any, bare: bool) -> tuple[Extra, ...]:
    """Collapsed sections from a record's write-up, or from its family's (no code there)."""
    out: list[Extra] = []
    if _text(write_up.trigger_scenarios):
        out.append(Extra(texts.TRIGGER, text=write_up.trigger_scenarios))
    if _text(write_up.common_situations):
        out.append(Extra(texts.COMMON_SITUATIONS, text=write_up.common_situations))
    if _items(write_up.prevention_tips):
        out.append(Extra(texts.PREVENTION, items=_items(write_up.prevention_tips)))
    for title, attr in (
        (texts.VALIDATION, "validation_code"),
        (texts.TYPE_GUARD, "type_guard"),
        (texts.TRY_CATCH, "try_catch_pattern"),
    ):
        code = getattr(write_up, attr, None)
        if _text(code):
            out.append(Extra(title, code=code))
    source_code = getattr(write_up, "source_code", None)
    if bare and _text(source_code):
        out.append(Extra(texts.SOURCE_CODE, code=source_code))
    return tuple(out)


_FN = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s+(\w+)")
_IMPL = re.compile(r"^\s*impl\b([^{]*)")


def enclosing(record: Record) -> tuple[str | None, str | None]:
    """(function, impl) around the panic line, read from the record's source excerpt when it
    has one; else the function the scan recorded (`enclosingFn`), with no impl."""
    scanned = shorten(one_line(record.enclosing_fn), SHORT_LIMIT) if record.enclosing_fn else None
    code, start, line = record.source_code, record.source_code_start, record.line_number
    if not code or start is None or line is None or not start <= line:
        return scanned, None
    lines = code.replace("\r\n", "\n").split("\n")[: line - start + 1]
    function = impl = None
    for text in reversed(lines):
        if function is None:
            found = _FN.match(text)
            if found:
                function = found.group(1)
                continue
        elif impl is None:
            found = _IMPL.match(text)
            if found:
                impl = shorten(one_line("impl" + found.group(1)), SHORT_LIMIT)
                break
    return function or scanned, impl


def _facts(record: Record) -> tuple[Words, ...]:
    out: list[Words] = []
    function, impl = enclosing(record)
    if function and impl:
        out.append(words(texts.FACT_IN_FN_IMPL, function=function, impl=impl))
    elif function:
        out.append(words(texts.FACT_IN_FN, function=function))
    if record.error_type:
        kind = _RAISED_BY.get(record.error_type, record.error_type)
        out.append(words(texts.FACT_RAISED_BY, kind=shorten(one_line(kind), SHORT_LIMIT)))
    if record.file_path:
        path = shorten(one_line(record.file_path), LOCATION_LIMIT)
        if record.line_number:
            out.append(words(texts.FACT_FILE, file=path, line=record.line_number))
        else:
            out.append(words(texts.FACT_FILE_NO_LINE, file=path))
    if record.crate:
        out.append(words(texts.FACT_CRATE, crate=shorten(record.crate, SHORT_LIMIT)))
    if record.analyzed_sha:
        sha = short_sha(one_line(record.analyzed_sha))
        date = ""
        if record.analyzed_at:
            date = texts.VERSION_NOTE_DATE.format(date=one_line(record.analyzed_at)[:10])
        out.append(words(texts.FACT_ANALYSED, sha=sha, date=date))
    return tuple(out)


# --- the one-line verdict ------------------------------------------------------------------------

MAX_LISTED_PANICS = 3


def verdict_words(verdict: Verdict, panics: Iterable[Panic], record_ids: Iterable[str]) -> Words:
    """One line: what was found. For `triage-bot match` and the uncatalogued case."""
    panics, ids = tuple(panics), tuple(record_ids)
    if ids:
        template = texts.MATCHED_ONE if len(ids) == 1 else texts.MATCHED_MANY
        return words(template, count=len(ids), ids=", ".join(ids))
    if verdict == "no-panic" or not panics:
        return words(texts.NO_PANIC)
    head = _count_words(len(panics), texts.UNCATALOGUED_ONE, texts.UNCATALOGUED_MANY)
    items = [panic_words(p) for p in panics[:MAX_LISTED_PANICS]]
    if len(panics) > MAX_LISTED_PANICS:
        items.append(words(texts.MORE_PANICS, count=len(panics) - MAX_LISTED_PANICS))
    listed: Words = ()
    for item in items:
        listed = join_words(listed, item, sep="; ")
    return join_words(head, listed)


def panic_words(panic: Panic) -> Words:
    message = shorten(one_line(panic.message), TITLE_LIMIT)
    if panic.location:
        return words(texts.PANIC_ITEM, message=message, location=pasted_location(panic.location))
    return words(texts.PANIC_ITEM_NO_LOCATION, message=message)


def answer_verdict(answer: Answer) -> Words:
    return verdict_words(answer.verdict, answer.panics, answer.record_ids)


def analysis_verdict(analysis: Analysis, catalog: CatalogLike | None = None) -> Words:
    """The verdict line from an Analysis alone; record ids of the answered panics."""
    ids = []
    for item in analysis.answered:
        if item.best and (catalog is None or catalog.get(item.best.record_id)):
            ids.append(item.best.record_id)
    return verdict_words(analysis.verdict, (p.panic for p in analysis.panics), ids)
