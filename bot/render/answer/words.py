"""The answer's sentences that are built, not written: how sure the match is and why, what
kind of check a bare site is, its facts, the version note, and the one-line verdict. Each is a
template from texts.py filled with values from the record, the evidence or the pasted panic.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from bot.catalog.model import RAISED_AT_TAG_PREFIX, Record
from bot.core.analysis import Analysis, Candidate, PanicMatch, Verdict
from bot.core.impl_header import impl_parts
from bot.core.panic import Location, Panic
from bot.render import texts
from bot.render.answer.links import short_sha, source_link
from bot.render.answer.meaning import subject
from bot.render.answer.parts import (
    LOCATION_LIMIT,
    SHORT_LIMIT,
    TITLE_LIMIT,
    Answer,
    CatalogLike,
    Section,
)
from bot.render.markup import Link, Span, Words, join_words, one_line, shorten, words

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


def count_words(count: int, one: str, many: str) -> Words:
    return words(one) if count == 1 else words(many, count=count)


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
_BACKEND = re.compile(r"\b(?:backends?|devices?|gpu|cuda|metal)\b", re.I)


def _named_impl_type(record: Record, message: str) -> str | None:
    """The type of the site's `impl .. for TYPE` when the message names it (`rfft is not
    supported for ndarray` in `impl ModuleOps<Self> for NdArray`)."""
    impl = record.site_check.get("impl")
    if not impl:
        return None
    kind, trait = impl_parts(one_line(impl))
    if not trait or len(kind) < 3:
        return None
    return kind if re.search(rf"\b{re.escape(kind)}\b", message, re.I) else None


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
        named = _named_impl_type(record, message)
        if named is not None:
            return words(texts.KIND_UNIMPLEMENTED_FOR, type=named, **values)
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


def removed_note(record: Record) -> Words | None:
    sha = record.removed_at
    return words(texts.REMOVED_SITE, sha=short_sha(sha)) if sha else None


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
        if "function" in evidence:
            who = subject(record) or record.enclosing_fn or ""
            return words(
                texts.MATCH_MESSAGE_FUNCTION, function=shorten(who, SHORT_LIMIT), location=pasted
            )
        if location is None:
            crates = item.panic.stack_crates
            if "crate" in evidence and record.crate and record.crate in crates:
                return words(texts.MATCH_MESSAGE_AND_CRATE, crate=record.crate)
            return words(texts.MATCH_MESSAGE_NO_LOCATION)
        if any(tag.startswith(RAISED_AT_TAG_PREFIX) for tag in record.tags):
            return words(texts.MATCH_CHECK_REASON, location=pasted)
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


def says_more(section: Section) -> bool:
    """Whether a bare section's part below the fold has anything to say: facts, or an intro
    that names the family whose advice follows (not the plain "no write-up" line alone)."""
    if not section.bare:
        return False
    return bool(section.facts) or section.bare_intro not in (None, words(texts.BARE_SITE))


def bare_facts(
    record: Record, *, raised_by: bool = True, function: bool = True
) -> tuple[Words, ...]:
    """What the catalog knows of a bare site that the Source line does not show (and, with
    `function=False`, that the first view's sentence does not name)."""
    out: list[Words] = []
    function_name, impl = enclosing(record) if function else (None, None)
    impl = impl or (
        shorten(one_line(record.site_check["impl"]), SHORT_LIMIT)
        if "impl" in record.site_check
        else None
    )
    if function_name and impl:
        out.append(words(texts.FACT_IN_FN_IMPL, function=function_name, impl=impl))
    elif function_name:
        out.append(words(texts.FACT_IN_FN, function=function_name))
    if record.error_type and raised_by:
        kind = _RAISED_BY.get(record.error_type, record.error_type)
        out.append(words(texts.FACT_RAISED_BY, kind=shorten(one_line(kind), SHORT_LIMIT)))
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
    head = count_words(len(panics), texts.UNCATALOGUED_ONE, texts.UNCATALOGUED_MANY)
    items = [panic_words(p) for p in panics[:MAX_LISTED_PANICS]]
    if len(panics) > MAX_LISTED_PANICS:
        items.append(words(texts.MORE_PANICS, count=len(panics) - MAX_LISTED_PANICS))
    listed: Words = ()
    for item in items:
        listed = join_words(listed, item, sep="; ")
    return join_words(head, listed)


def not_found_words(panic: Panic) -> Words:
    """Which panic was not found, where, and in which crate when the path names one."""
    message = shorten(one_line(panic.message), TITLE_LIMIT)
    location = panic.location
    if location is None:
        return words(texts.NOT_FOUND_NO_LOCATION, message=message)
    where = pasted_location(location)
    if location.crate:
        crate = shorten(one_line(location.crate), SHORT_LIMIT)
        return words(texts.NOT_FOUND_CRATE, message=message, location=where, crate=crate)
    return words(texts.NOT_FOUND, message=message, location=where)


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


# Evidence that the paste's location chose the site: then same-message sites are not a tie.
_LOCATION_EVIDENCE = frozenset({"location", "line", "release"})
TIE_LINKS_SHOWN = 4


def tied_sites(item: PanicMatch, record: Record, catalog: CatalogLike | None) -> list[Record]:
    """The other live sites of the same project that raise the best record's very message,
    when nothing pasted tells them apart."""
    best = item.best
    if best is None or catalog is None or _LOCATION_EVIDENCE & set(best.evidence):
        return []
    others = []
    for candidate in item.candidates[1:]:
        other = catalog.get(candidate.record_id)
        if (
            other is not None
            and other.repo == record.repo
            and other.error_message == record.error_message
            and other.removed_at is None
            and candidate.message_score >= best.message_score
        ):
            others.append(other)
    if others:
        # The candidates are the best few: the catalog's other live sites of the very message
        # tie as well (nothing pasted tells any of them apart), so the count is the whole.
        seen = {record.id, *(other.id for other in others)}
        others += [
            other
            for other in catalog.by_message(record.error_message)
            if other.id not in seen
            and other.repo == record.repo
            and other.error_message == record.error_message
            and other.removed_at is None
        ]
    return others


def tie_note(item: PanicMatch, record: Record, catalog: CatalogLike | None) -> Words | None:
    """The other live sites that raise the best record's very message, linked, when nothing
    pasted tells them apart."""
    others = tied_sites(item, record, catalog)
    if not others:
        return None
    if item.best is not None and "named" in item.best.evidence:
        why = texts.TIE_WHY_NAMED
    elif record.has_write_up and not any(o.has_write_up for o in others):
        why = texts.TIE_WHY_WRITTEN_UP
    else:
        why = texts.TIE_WHY_FIRST
    links = [
        words("{site}", site=Link(link.label, link.url))
        for other in others[:TIE_LINKS_SHOWN]
        if (link := source_link(other, catalog)) is not None
    ]
    rest = len(others) - len(links)
    if rest > 0:
        links.append(words(texts.TIE_MORE, count=rest))
    return join_words(words(texts.TIE_NOTE, count=len(others) + 1, why=why), *_commas(links))


def _commas(groups: list[Words]) -> list[Words]:
    """`a,` `b,` `c.`: a comma after each but the last, a full stop after the last."""
    return [(*group, Span("," if i < len(groups) - 1 else ".")) for i, group in enumerate(groups)]
