"""The answer model: what the bot says about one input, before any platform formats it.

An `Answer` holds sections, one per answered panic (root first), with raw catalog text and
`Words` built from the templates in texts.py (bot.render.answer.build makes it); the renderers
(github, discord, terminal) only format and escape.
"""

from __future__ import annotations

from typing import Protocol

from bot.catalog.families import Family
from bot.catalog.model import Record, value_class
from bot.core.analysis import PanicMatch, Verdict
from bot.core.panic import Panic
from bot.render.markup import Words

TITLE_LIMIT = 300  # an error message quoted in a sentence or a list
HEADING_LIMIT = 120  # the answer's heading: the pasted message, its middle left out past this
LOCATION_LIMIT = 200  # a pasted path in the confidence words
SHORT_LIMIT = 100  # crate names, versions, tags


class CatalogLike(Protocol):
    """What the answer needs from `bot.catalog.loader.Catalog`."""

    def get(self, record_id: str) -> Record | None: ...

    def by_message(self, text: str) -> list[Record]: ...

    def flags(self, record_id: str) -> frozenset[str]: ...

    def family(self, record_id: str) -> Family | None: ...

    def contradiction(self, record_id: str) -> str | None: ...


@value_class(frozen=True)
class SourceLink:
    """A record's source, pinned to the analysed commit: `module.rs:1498 @ d16f7ba`."""

    label: str
    url: str | None  # raw; renderers pass it through markup.safe_url
    path: str | None
    line: int | None


@value_class(frozen=True)
class RelatedError:
    message: str  # as the record lists it
    record_id: str | None  # the catalog record with that message, when there is one
    source: SourceLink | None  # that record's pinned source


@value_class(frozen=True)
class Extra:
    """A long, collapsed part: text, a list, or a code block."""

    title: str
    text: str | None = None
    items: tuple[str, ...] = ()
    code: str | None = None


@value_class(frozen=True)
class FoldedWriteUp:
    """A record's own write-up kept out of the answer's way: lint found it contradicts the
    family's explanation, which the answer leads with instead."""

    caution: Words  # one line, shown as the fold's summary
    documentation: str | None
    solutions: tuple[str, ...]
    example_fix: str | None
    claim: str = ""  # what the write-up says that the code contradicts


@value_class(frozen=True)
class Nearest:
    """A catalog record close to an uncatalogued panic, with its score."""

    record_id: str
    message: str
    percent: int


@value_class(frozen=True)
class Uncatalogued:
    panic: Panic
    nearest: tuple[Nearest, ...]


@value_class(frozen=True)
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
    # or words built from what the code checks for a bare site); `first_step` below.
    panic_message: str = ""
    meaning_text: str | None = None
    meaning_words: Words | None = None
    folded: FoldedWriteUp | None = None
    # The write-up is the one an earlier section shows (same family): said, not repeated.
    same_as: Words | None = None
    # What to try first, plain text: the write-up's first solution, else one built from what
    # the code checks (bot.render.answer.meaning); None when neither says anything specific.
    first_step: str | None = None
    # A tensor check: where it was raised in the user's release (their call into burn-tensor).
    call_site: SourceLink | None = None
    # The version note is a same-message tie: the reader must see it before trusting the site.
    tie: bool = False
    # Where the meaning and first step came from: "writeup" (the record's overlay), "family",
    # "payload" (a payload family the paste showed), "seed" (a written-up record as the catalog
    # gives it) or "code" (sentences built from what the scan read of the site).
    answer_source: str = "code"
    # The version note says whose code it is (a dependency's panic): the first view shows it.
    dependency: bool = False

    @property
    def record_id(self) -> str:
        return self.record.id

    @property
    def note_up_front(self) -> bool:
        """The version note belongs in the first view: the shown source is older code (a removed
        site), only one of several sites raising the message (a tie), or a dependency's code
        (whose it is, and what of the user's reaches it)."""
        return bool(self.version_note) and (
            bool(self.record.removed_at) or self.tie or self.dependency
        )


@value_class(frozen=True)
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
