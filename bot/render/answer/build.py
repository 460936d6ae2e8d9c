"""Building the answer: `build_answer(analysis, catalog, history=...)` turns the matcher's
result, the catalog's records and the release history into an `Answer` (model.py). Nothing
here is invented: every sentence is a template from texts.py filled with values from the
record, the candidate's evidence or the pasted panic.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from bot.catalog.families import Family, fill_items, fill_text
from bot.catalog.model import UNREVIEWED_TAG, Record, replace, value_class
from bot.core.analysis import Analysis, Candidate, PanicMatch
from bot.core.match.cascade import is_uncatalogued_root
from bot.core.match.projects import Projects
from bot.core.match.releases import ReleaseHistory, project_name
from bot.render import texts
from bot.render.answer.links import full_sha, source_link
from bot.render.answer.meaning import (
    check_report_step,
    check_report_words,
    filled_message,
    first_step,
    impl_type,
    is_check_reason,
    meaning_words,
    subject,
    user_call_site,
)
from bot.render.answer.parts import (
    SHORT_LIMIT,
    TITLE_LIMIT,
    Answer,
    CatalogLike,
    Extra,
    FoldedWriteUp,
    Nearest,
    RelatedError,
    Section,
    Uncatalogued,
)
from bot.render.answer.words import (
    MAX_LISTED_PANICS,
    bare_facts,
    check_kind_words,
    confidence_words,
    count_words,
    removed_note,
    tie_note,
    tied_sites,
    version_note,
)
from bot.render.dependency_note import dependency_note, moved_note
from bot.render.history_note import history_note, upgrade_step
from bot.render.markup import Words, one_line, plain, shorten, words

FLAG_MISMATCH = "possible-mismatch"
FLAG_CONTRADICTS = "contradicts-family"
MEANING_LIMIT = 300  # the one line on what the panic means
NEAREST_MIN = 0.3  # an uncatalogued panic's nearest records are named from this confidence on
NEAREST_SHOWN = 3


def build_answer(
    analysis: Analysis,
    catalog: CatalogLike,
    *,
    history: ReleaseHistory | None = None,
    max_sections: int = 3,
    projects: Projects | None = None,
) -> Answer:
    """The answer to `analysis`: its records from `catalog`, where their sites were in the
    user's release from `history` (the catalog's release history, when it has one); with
    `projects` (a catalog of several), a dependency's panic says whose code it is."""
    sections: list[Section] = []
    answered_panics: set[int] = set()
    for item in analysis.answered:
        best = item.best
        record = catalog.get(best.record_id) if best else None
        if best is None or record is None:
            continue
        answered_panics.add(id(item))
        sections.append(_section(item, best, record, catalog, history, projects))
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
        notes.append(count_words(omitted, texts.OMITTED_ONE, texts.OMITTED_MANY))
    first = analysis.panics[0] if analysis.panics else None
    if shown and unmatched and unmatched[0] is first and is_uncatalogued_root(first):
        # An uncatalogued first panic (a plain unwrap, a dependency's) with a later one
        # answered: say which.
        message = shorten(one_line(first.panic.message), TITLE_LIMIT)
        notes.append(words(texts.FIRST_NOT_CATALOGUED, message=message))
        unmatched = unmatched[1:]
    if shown and unmatched:
        notes.append(count_words(len(unmatched), texts.UNMATCHED_ONE, texts.UNMATCHED_MANY))
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
        nearest: list[Nearest] = []
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


def _section(
    item: PanicMatch,
    best: Candidate,
    record: Record,
    catalog: CatalogLike,
    history: ReleaseHistory | None,
    projects: Projects | None = None,
) -> Section:
    flags = catalog.flags(record.id)
    flagged = FLAG_MISMATCH in flags
    contradicts = FLAG_CONTRADICTS in flags
    bare = not record.has_write_up
    # What the pasted payload says comes first: a generic handler's validation error, the cause
    # an `.expect` carried (a payload family, declared in the catalog).
    payload = _payload_family(catalog, record, item.panic.message)
    # A bare site in an error family is answered with the family's advice, written once; so is
    # a record whose own write-up lint flagged as possibly about another error, or as making a
    # claim its family's code-checked explanation refutes.
    family = payload or (
        _family_with_write_up(catalog, record) if bare or flagged or contradicts else None
    )
    if payload is not None:
        flagged = contradicts = False
    write_up: Family | Record = _filled(family, record, item) if family else record
    origin = _answer_source(record, family, payload)
    caution = words(texts.CAUTION) if flagged else None
    folded = None
    if family is not None and contradicts and not flagged:
        # Its own write-up is about this error but wrong on a point the family settles: lead
        # with the family's explanation, keep the record's own folded under one caution line.
        contradiction = catalog.contradiction(record.id)
        claim = shorten(one_line(contradiction), SHORT_LIMIT) if contradiction else ""
        folded = FoldedWriteUp(
            caution=words(texts.CONTRADICTS_FAMILY, claim=claim),
            documentation=_text(record.documentation),
            solutions=_items(record.solutions),
            example_fix=_text(record.example_fix),
            claim=claim,
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
    summary = _text(write_up.summary) if isinstance(write_up, Family) else None
    if summary:
        meaning_text = shorten(one_line(summary), MEANING_LIMIT)
    elif not (caution and family is None):
        meaning_text = _first_sentence(documentation)
    if meaning_text and UNREVIEWED_TAG in record.tags and family is None:
        meaning_text = texts.UNREVIEWED_DRAFT + meaning_text  # said before anything of it
    kind = check_kind_words(record)
    message = _panic_message(item, best, record)
    specific = None
    if meaning_text is None and not (caution and family is None):
        specific = check_report_words(record, item.panic) or meaning_words(record)
    step = None if caution and family is None else (solutions[0] if solutions else None)
    if step is None and not caution:
        step = check_report_step(record, item.panic) or first_step(record, message)
    if step is None and not caution:
        origin = "code"  # nothing written says what to do: the step (if any) is the code's
    # A fixed, removed or moved site leads with the release to upgrade to (or where it went).
    upgrade = upgrade_step(
        projects.of_repo(record.repo) if projects else history,
        item,
        record,
        _own_release_via(projects, record.repo),
    )
    if upgrade is not None:
        step = upgrade
    call_site = None
    if is_check_reason(record):
        call_site = user_call_site(item.panic, history, record.repo)
    dependency = dependency_note(projects, item, record)
    version = (
        dependency
        or moved_note(projects, item, record)
        or history_note(projects.of_repo(record.repo) if projects else history, item, record)
        or removed_note(record)
        or (version_note(item.panic, record) if "location" in best.evidence else None)
    )
    tie = tie_note(item, record, catalog) if version is None else None
    functions = _tied_functions(item, record, catalog) if tie is not None else ()
    if functions:
        # Sites of different functions tie and nothing pasted tells which: no sentence says
        # one of them raised it, and no step built for one of them leads.
        meaning_text = shorten(
            texts.TIE_MEANING.format(
                count=len(functions), functions=", ".join(f"`{f}`" for f in functions)
            ),
            MEANING_LIMIT,
        )
        specific = None
        if not isinstance(write_up, Family):
            step = None
            origin = "code"  # the tie's sentence is the bot's own, not a write-up's
    return Section(
        record=record,
        match=item,
        title=message,
        confidence=confidence_words(item, best, record),
        source=source_link(record, catalog),
        version_note=version or tie,
        tie=version is None and tie is not None,
        caution=caution,
        documentation=documentation,
        solutions=solutions,
        example_fix=_text(write_up.example_fix),
        related=tuple(_related(record, catalog)),
        extras=_extras(write_up, bare),
        bare=bare,
        facts=_facts(record, kind, meaning_text, specific) if bare else (),
        bare_intro=intro,
        panic_message=message,
        meaning_text=meaning_text,
        meaning_words=None if meaning_text else (specific or kind),
        folded=folded,
        first_step=step,
        call_site=call_site,
        answer_source=origin,
        dependency=dependency is not None,
    )


def _facts(
    record: Record, kind: Words, meaning_text: str | None, specific: Words | None
) -> tuple[Words, ...]:
    """Below the fold, only what the first view does not say: the kind of check under a
    family's explanation (unless it is the generic one), the function unless the first view's
    sentence names it, and the macro unless it is a tensor check's reason (one generic
    `panic!` raises all of them)."""
    generic = kind == check_kind_words(record.with_changes(error_message="", error_type="panic"))
    lead = (kind,) if meaning_text and not generic and not is_check_reason(record) else ()
    facts = bare_facts(record, raised_by=not is_check_reason(record), function=specific is None)
    return lead + facts


def _panic_message(item: PanicMatch, best: Candidate, record: Record) -> str:
    """The message as the user's panic filled it in, when the match rests on the message; the
    catalogued one with `…` for its values when it does not (a location match, a record a
    maintainer chose): never a raw format string."""
    by_message = bool({"pattern", "prefix", "fuzzy"} & set(best.evidence))
    return filled_message(record, item.panic, by_message) or texts.NO_MESSAGE


def _own_release_via(projects: Projects | None, repo: str) -> Callable[[str], str | None] | None:
    """For a dependency's site: the own project's release that brings a version of it."""
    if projects is None or repo == projects.own or projects.info(repo) is None:
        return None
    name = project_name(projects.own_history())

    def via(version: str) -> str | None:
        release = projects.own_release_with(repo, version)
        return f"{name} {release}" if release else None

    return via


def _tied_functions(item: PanicMatch, record: Record, catalog: CatalogLike) -> tuple[str, ...]:
    """The functions of a tie's sites, when they differ and neither a pasted frame nor the
    text names one."""
    if item.best is not None and "named" in item.best.evidence:
        return ()  # the text names the site's file or method: its own answer
    tied = [record, *tied_sites(item, record, catalog)]
    names = sorted({who for r in tied if (who := subject(r) or r.enclosing_fn)})
    if len(names) < 2 or len({_told_as(r, catalog) for r in tied}) < 2:
        return ()  # one function, or every site is answered alike: nothing to tell apart
    framed = {frame.function.rsplit("::", 1)[-1] for frame in item.panic.frames}
    if framed & {r.enclosing_fn for r in tied if r.enclosing_fn}:
        return ()  # a pasted frame names one of them
    return tuple(names)


def _told_as(record: Record, catalog: CatalogLike) -> tuple[object, ...]:
    """What a site's answer is made of: its write-up, else its family's, else its code."""
    if record.has_write_up:
        return ("write-up", record.documentation, tuple(record.solutions))
    family = _family_with_write_up(catalog, record)
    if family is not None:
        return ("family", family.id)
    return ("code", record.id)


def _payload_family(catalog: CatalogLike, record: Record, pasted: str) -> Family | None:
    lookup = getattr(catalog, "payload_family", None)
    return lookup(record.id, pasted) if lookup and pasted else None


def _answer_source(record: Record, family: Family | None, payload: Family | None) -> str:
    """Where the answer's meaning and first step come from (`match --json`'s `source`)."""
    if payload is not None:
        return "payload"
    if family is not None:
        return "family"
    if record.has_write_up:
        folders = record.origin.replace("\\", "/").split("/")
        overlay = "writeups" in folders[:-1] or UNREVIEWED_TAG in record.tags
        return "writeup" if overlay else "seed"
    return "code"


def _filled(family: Family, record: Record, item: PanicMatch) -> Family:
    """The family's write-up with its slots filled from the paste and the site."""
    return _filled_from(family, record, item.panic.message)


def _filled_from(family: Family, record: Record, pasted: str) -> Family:
    values = family.slot_values(pasted, record.error_message)
    builtin = {
        "function": record.enclosing_fn,
        "crate": record.crate,
        "type": impl_type(record),
    }
    for name, value in builtin.items():
        if value and name not in values:
            values[name] = value
    names = family.slot_names
    return replace(
        family,
        summary=fill_text(family.summary, values, names),
        documentation=fill_text(family.documentation, values, names),
        trigger_scenarios=fill_text(family.trigger_scenarios, values, names),
        common_situations=fill_text(family.common_situations, values, names),
        example_fix=fill_text(family.example_fix, values, names),
        solutions=fill_items(family.solutions, values, names),
        prevention_tips=fill_items(family.prevention_tips, values, names),
    )


def _family_with_write_up(catalog: CatalogLike, record: Record) -> Family | None:
    lookup = getattr(catalog, "family", None)
    family = lookup(record.id) if lookup else None
    return family if family is not None and family.has_write_up else None


def _text(value: str | None) -> str | None:
    # A draft placeholder (`TODO: …`) is no answer: left out as if absent.
    return value if value and value.strip() and not Record.is_draft_text(value) else None


def _items(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(v for v in values if v and v.strip() and not Record.is_draft_text(v))


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


def _extras(write_up: Family | Record, bare: bool) -> tuple[Extra, ...]:
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


@value_class(frozen=True)
class RecordAnswer:
    """What the bot says of a record with no paste to fill it in (its page): the meaning, the
    first step, and where they came from (`Section.answer_source`'s words)."""

    meaning: str
    first_step: str | None
    source: str


def record_answer(record: Record, catalog: CatalogLike) -> RecordAnswer:
    """The meaning and first step an answer with this record would lead with, its slots filled
    from the record alone; for a site nobody wrote up, the sentence built from its code (or
    the kind of check), so that every page says what its error means."""
    flagged = bool({FLAG_MISMATCH, FLAG_CONTRADICTS} & catalog.flags(record.id))
    family = _family_with_write_up(catalog, record) if not record.has_write_up or flagged else None
    origin = _answer_source(record, family, None)
    meaning: str | None = None
    step: str | None = None
    if family is not None:
        filled = _filled_from(family, record, "")
        meaning = _text(filled.summary) and shorten(one_line(filled.summary or ""), MEANING_LIMIT)
        meaning = meaning or _first_sentence(_text(filled.documentation))
        solutions = _items(filled.solutions)
        step = solutions[0] if solutions else None
    elif record.has_write_up and not flagged:
        meaning = _first_sentence(_text(record.documentation))
        solutions = _items(record.solutions)
        step = solutions[0] if solutions else None
    if not meaning:
        origin = "code"
        built = meaning_words(record) or check_kind_words(record)
        meaning = plain(built, backticks=True)
    if step is None:
        step = first_step(record, record.error_message)
    return RecordAnswer(meaning=meaning, first_step=step, source=origin)
