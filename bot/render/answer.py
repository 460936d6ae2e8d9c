"""The answer model: what the bot says about one input, before any platform formats it.

`build_answer(analysis, catalog)` turns the matcher's result and the catalog's records into
sections, one per answered panic (root first), holding raw catalog text and `Words` built from
the templates in texts.py. The renderers (github, discord, terminal) only format and escape.
Nothing here is invented: every sentence is a template from texts.py filled with values from
the record, the candidate's evidence or the pasted panic.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from bot.catalog.model import Record
from bot.core.analysis import Analysis, Candidate, PanicMatch, Verdict
from bot.core.cascade import is_uncatalogued_unwrap
from bot.core.panic import Location, Panic
from bot.render import texts
from bot.render.history_note import history_note
from bot.render.markup import Words, join_words, one_line, shorten, words

TITLE_LIMIT = 300  # the error message as a heading
LOCATION_LIMIT = 200  # a pasted path in the confidence words
SHORT_LIMIT = 100  # crate names, versions, tags
FLAG_MISMATCH = "possible-mismatch"

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
    shown = sections[: max(1, max_sections)]
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
    return Answer(
        verdict=analysis.verdict,
        fingerprint=analysis.fingerprint,
        sections=tuple(shown),
        intro=intro,
        notes=tuple(notes),
        footer=footer,
        wrong_hint=words(texts.WRONG_HINT),
        panics=tuple(p.panic for p in analysis.panics),
    )


def _count_words(count: int, one: str, many: str) -> Words:
    return words(one) if count == 1 else words(many, count=count)


def _section(item: PanicMatch, best: Candidate, record: Record, catalog: CatalogLike) -> Section:
    flagged = FLAG_MISMATCH in catalog.flags(record.id)
    bare = not record.has_write_up
    # A bare site in an error family is answered with the family's advice, written once; so is
    # a record whose own write-up lint flagged as possibly about another error.
    family = _family_with_write_up(catalog, record) if bare or flagged else None
    write_up: Any = family or record
    caution = words(texts.CAUTION) if flagged else None
    if family is not None:
        name = shorten(one_line(family.name), TITLE_LIMIT)
        intro = words(texts.FLAGGED_FAMILY if flagged else texts.FAMILY_SITE, family=name)
        bare, caution = True, None  # shown like a bare site: the facts, then the family's advice
    else:
        intro = words(texts.BARE_SITE) if bare else None
    return Section(
        record=record,
        match=item,
        title=shorten(one_line(record.error_message), TITLE_LIMIT) or texts.NO_MESSAGE,
        confidence=confidence_words(item, best, record),
        source=source_link(record),
        version_note=history_note(catalog, item, record)
        or _removed_note(record)
        or version_note(item.panic, record),
        caution=caution,
        documentation=_text(write_up.documentation),
        solutions=_items(write_up.solutions),
        example_fix=_text(write_up.example_fix),
        related=tuple(_related(record, catalog)),
        extras=_extras(write_up, bare),
        bare=bare,
        facts=_facts(record) if bare else (),
        bare_intro=intro,
    )


def _removed_note(record: Record) -> Words | None:
    sha = record.removed_at
    return words(texts.REMOVED_SITE, sha=short_sha(sha) or sha) if sha else None


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


def source_link(record: Record) -> SourceLink | None:
    """The pinned source: built from sha/path/line when the record has them, else githubUrl.

    Building it gives the exact line even when `githubUrl` points at the whole snippet
    (`#L1915-L1951`).
    """
    path, line, sha = record.file_path, record.line_number, record.analyzed_sha
    if sha and path and record.repo:
        url = f"https://github.com/{record.repo}/blob/{sha}/{path}"
        url = f"{url}#L{line}" if line else url
    else:
        url = record.github_url
    if not path and not url:
        return None
    name = shorten(path.rsplit("/", 1)[-1], SHORT_LIMIT) if path else shorten(url or "", 80)
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
    """The paste names a crate version and the record was analysed at a commit: say both."""
    if not record.analyzed_sha:
        return None
    locations = [panic.location] + [f.location for f in panic.frames]
    shown = [loc for loc in locations if loc and loc.crate and loc.crate_version]
    if not shown:
        return None
    same_crate = [loc for loc in shown if loc.crate == record.crate]
    loc = (same_crate or shown)[0]
    date = ""
    if record.analyzed_at:
        date = texts.VERSION_NOTE_DATE.format(date=one_line(record.analyzed_at)[:10])
    return words(
        texts.VERSION_NOTE,
        crate=shorten(one_line(loc.crate or ""), SHORT_LIMIT),
        version=shorten(one_line(loc.crate_version or ""), SHORT_LIMIT),
        sha=short_sha(one_line(record.analyzed_sha)),
        date=date,
    )


def _related(record: Record, catalog: CatalogLike) -> Iterable[RelatedError]:
    seen: set[str] = set()
    for message in record.related_errors:
        if not message or not message.strip() or message in seen:
            continue
        seen.add(message)
        found = [r for r in catalog.by_message(message) if r.id != record.id]
        other = found[0] if found else None
        yield RelatedError(
            message=message,
            record_id=other.id if other else None,
            source=source_link(other) if other else None,
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


def _facts(record: Record) -> tuple[Words, ...]:
    out: list[Words] = []
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
        sha = shorten(one_line(record.analyzed_sha), 40)
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
