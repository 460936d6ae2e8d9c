"""Error families: many panic sites, one cause, one write-up.

A family names a cause shared by many sites (every `Can't differentiate ... backward.` in
burn-autodiff, every `...: unsupported dtype {:?}`), says which records belong to it, and
carries a write-up written once. A bare site (a skeleton record) that belongs to a family is
answered with the family's advice and labelled with its id.

A catalog file holds families as `{"families": [ {...}, ... ]}`. Each family:

    id                 text, required: a slug (`unimplemented-op-backward`); it is also the
                       label, and records name their family with `backgroundTag`
    name               text, required: a short title for people
    summary            text: what the panic means, in one line (an answer's first view)
    repo               text: only records of this OWNER/NAME belong
    crates             list: only records whose file is in one of these crates belong
    files              list: only records whose file path fits one of these globs
                       (`crates/burn-tensor/src/tensor/api/check.rs`, `src/zip/*`) belong;
                       with no message rule, every message of those files does
    messageFormats     list: Rust-format-like messages; `{}`, `{:?}`, `{name}` stand for any
                       text. A record belongs when its whole message fits one (whitespace
                       runs count as one space)
    messagePatterns    list: regular expressions (RE2 syntax, checked like a record's
                       `messagePattern`); a record belongs when one is found in its message
    records            list: record ids that belong whatever their message
    parent             text: another family's id; its member records are this one's too
    payloadPatterns    list: regular expressions over the *pasted* message; a family with
                       them is a payload family: it answers for a member record only when
                       one is found in what the user pasted (the validation error a generic
                       handler printed, the cause an `.expect` carried), and leads before the
                       record's own write-up and its ordinary family
    slots              list: regular expressions with named groups (`(?P<dtype>\\w+)`), tried
                       on the pasted message, then on the record's message; the write-up's
                       texts name a group as `{dtype}`. `{function}`, `{crate}` and `{type}`
                       (the `impl` block's type) come from the site. A list item naming a slot
                       nothing filled is left out; in prose, the sentence that names it
    contradictingClaims
                       list: regular expressions for claims that the family's explanation,
                       checked against the code, shows to be wrong (`does not implement the
                       backward pass`); lint flags a member record whose own write-up makes
                       one, and its answer leads with the family's explanation instead
    documentation, triggerScenarios, commonSituations, exampleFix, handlingStrategy   text
    solutions, preventionTips, tags                                                   lists

A family needs at least one of `messageFormats`, `messagePatterns`, `records`, `files` and
`parent`.

`family_of(record, families)` decides in this order: a family that lists the record's id; the
family named by the record's `backgroundTag`; the first family (in file order) whose repo,
crates and messages fit. A record with its own write-up still has a family (for the label).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from fnmatch import fnmatchcase
from typing import Any

from bot.catalog.model import Record, field, value_class
from bot.catalog.patterns import (
    PatternError,
    Regex,
    check_pattern,
    compile_safe,
    format_to_regex,
    normalise_message,
)

_SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]{0,79}$")
_TEXT_FIELDS = {
    "id": "id",
    "name": "name",
    "summary": "summary",
    "repo": "repo",
    "documentation": "documentation",
    "triggerScenarios": "trigger_scenarios",
    "commonSituations": "common_situations",
    "exampleFix": "example_fix",
    "handlingStrategy": "handling_strategy",
    "parent": "parent",
}
_LIST_FIELDS = {
    "crates": "crates",
    "messageFormats": "message_formats",
    "messagePatterns": "message_patterns",
    "records": "record_ids",
    "files": "files",
    "contradictingClaims": "contradicting_claims",
    "solutions": "solutions",
    "preventionTips": "prevention_tips",
    "tags": "tags",
    "payloadPatterns": "payload_patterns",
    "slots": "slots",
}
KNOWN_KEYS = frozenset(_TEXT_FIELDS) | frozenset(_LIST_FIELDS)
# Slots every family text may name, filled from the site (see `fill_slots`).
BUILTIN_SLOTS = frozenset({"function", "crate", "type"})
# Family write-up fields, as `Record` spells them: what an answer can show.
WRITE_UP_ATTRS = (
    "documentation",
    "trigger_scenarios",
    "common_situations",
    "solutions",
    "example_fix",
    "prevention_tips",
)


# A record, or a record as a file spells it (camelCase keys): what a family is matched against.
RecordLike = Record | Mapping[str, Any]


@value_class(frozen=True)
class Family:
    id: str
    name: str
    summary: str | None = None
    repo: str | None = None
    crates: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    message_formats: tuple[str, ...] = ()
    message_patterns: tuple[str, ...] = ()
    record_ids: frozenset[str] = frozenset()
    documentation: str | None = None
    trigger_scenarios: str | None = None
    common_situations: str | None = None
    solutions: tuple[str, ...] = ()
    example_fix: str | None = None
    handling_strategy: str | None = None
    prevention_tips: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    contradicting_claims: tuple[str, ...] = ()
    parent: str | None = None
    payload_patterns: tuple[str, ...] = ()
    slots: tuple[str, ...] = ()
    origin: str = field(default="", compare=False)
    # Compiled forms of messageFormats (anchored) and messagePatterns.
    _regexes: tuple[Regex, ...] = field(default=(), compare=False, repr=False)
    # Compiled contradictingClaims, case-insensitive.
    _claims: tuple[Regex, ...] = field(default=(), compare=False, repr=False)
    # Compiled payloadPatterns and slots.
    _payloads: tuple[Regex, ...] = field(default=(), compare=False, repr=False)
    _slots: tuple[Regex, ...] = field(default=(), compare=False, repr=False)

    @property
    def is_payload(self) -> bool:
        """A payload family answers only when its pattern is found in the pasted message."""
        return bool(self.payload_patterns)

    def payload_in(self, pasted: str) -> bool:
        flat = " ".join(pasted.split())
        return any(regex.search(flat) for regex in self._payloads)

    def slot_values(self, *texts: str) -> dict[str, str]:
        """The named groups of `slots` found in `texts`, the first text that fills one wins."""
        values: dict[str, str] = {}
        for text in texts:
            flat = " ".join(text.split())
            for regex in self._slots:
                found = regex.search(flat)
                if found is None:
                    continue
                for name, value in found.groupdict().items():
                    if value and name not in values:
                        values[name] = value
        return values

    @property
    def slot_names(self) -> frozenset[str]:
        return frozenset(n for r in self._slots for n in r.groupindex) | BUILTIN_SLOTS

    @property
    def has_write_up(self) -> bool:
        return any(getattr(self, attr) for attr in WRITE_UP_ATTRS)

    def matches_message(self, message: str) -> bool:
        """Whether a message (a record's format string, or a pasted panic message) fits."""
        text = normalise_message(message)
        return any(regex.search(text) for regex in self._regexes)

    def contradicting_claim(self, text: str) -> str | None:
        """The first passage of `text` that makes a claim this family's explanation refutes."""
        flat = " ".join(text.split())
        for regex in self._claims:
            found = regex.search(flat)
            if found:
                return found.group(0)
        return None

    def admits(self, repo: str | None, crate: str | None, *, lenient: bool = False) -> bool:
        """Whether the family's repo and crate limits let a record of `repo`/`crate` in.

        `lenient` lets an unknown (None) repo or crate through, for pasted panics whose
        location says nothing.
        """
        if self.repo is not None and repo != self.repo and not (lenient and repo is None):
            return False
        if self.crates and crate not in self.crates:
            return lenient and crate is None
        return True

    def matches(self, record: RecordLike) -> bool:
        """Whether `record` (a `Record` or a camelCase dict) belongs, by id or by message."""
        rid, repo, message, _tag, crate = _record_view(record)
        if rid in self.record_ids:
            return True
        return self._fits(record, repo, crate, message)

    def in_files(self, path: str | None) -> bool:
        """Whether a record's file fits the family's `files` (any file when it names none)."""
        if not self.files:
            return True
        return path is not None and any(fnmatchcase(path, glob) for glob in self.files)

    def _fits(
        self, record: RecordLike, repo: str | None, crate: str | None, message: str | None
    ) -> bool:
        if not self.admits(repo, crate) or not self.in_files(_file_of(record)):
            return False
        if not (self.message_formats or self.message_patterns):
            return bool(self.files)
        return message is not None and self.matches_message(message)


def _file_of(record: RecordLike) -> str | None:
    if isinstance(record, Mapping):
        path = record.get("filePath")
        return path if isinstance(path, str) else None
    return record.file_path


def _record_view(
    record: RecordLike,
) -> tuple[str | None, str | None, str | None, str | None, str | None]:
    """(id, repo, message, backgroundTag, crate) of a Record or a camelCase dict."""
    if isinstance(record, Mapping):
        path = record.get("filePath")
        parts = path.split("/") if isinstance(path, str) else []
        crate = parts[1] if len(parts) > 2 and parts[0] == "crates" else None
        return (
            record.get("id"),
            record.get("repo"),
            record.get("errorMessage"),
            record.get("backgroundTag"),
            crate,
        )
    return (record.id, record.repo, record.error_message, record.background_tag, record.crate)


def _fail(origin: str, where: str, message: str) -> ValueError:
    # The loader reports the file itself (`origin`); the message locates the family in it.
    del origin
    return ValueError(f"{where}: {message}")


def _parse_one(item: object, number: int, origin: str) -> Family:
    where = f"family #{number}"
    if not isinstance(item, dict):
        raise _fail(origin, where, "a family must be a JSON object")
    fid = item.get("id")
    if isinstance(fid, str) and fid:
        where = f"family `{fid}`"
    unknown = sorted(set(item) - KNOWN_KEYS)
    if unknown:
        raise _fail(
            origin,
            where,
            f"unknown field(s) {', '.join(f'`{k}`' for k in unknown)}; "
            f"known fields: {', '.join(sorted(KNOWN_KEYS))}",
        )
    kwargs: dict[str, Any] = {}
    for key, attr in _TEXT_FIELDS.items():
        value = item.get(key)
        if value is None:
            continue
        if not isinstance(value, str) or not value.strip():
            raise _fail(origin, where, f"`{key}` must be non-empty text")
        kwargs[attr] = value
    for key, attr in _LIST_FIELDS.items():
        value = item.get(key)
        if value is None:
            continue
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise _fail(origin, where, f"`{key}` must be a list of non-empty texts")
        kwargs[attr] = frozenset(value) if attr == "record_ids" else tuple(value)
    if "id" not in kwargs or "name" not in kwargs:
        raise _fail(origin, where, "every family needs `id` and `name`")
    if not _SLUG.match(kwargs["id"]):
        raise _fail(
            origin,
            where,
            "`id` must be a lower-case slug (letters, digits, `-`, `_`, `.`), "
            "since it is also used as a label",
        )
    repo = kwargs.get("repo")
    if repo is not None and repo.count("/") != 1:
        raise _fail(origin, where, f"`repo` must be OWNER/NAME, not `{repo}`")
    if not (
        kwargs.get("message_formats")
        or kwargs.get("message_patterns")
        or kwargs.get("record_ids")
        or kwargs.get("parent")
        or kwargs.get("files")
    ):
        raise _fail(
            origin,
            where,
            "a family needs at least one of `messageFormats`, `messagePatterns`, `records`, "
            "`files` and `parent`",
        )
    regexes: list[Regex] = []
    for fmt in kwargs.get("message_formats", ()):
        regexes.append(compile_safe("^" + format_to_regex(fmt) + "$"))
    for pattern in kwargs.get("message_patterns", ()):
        try:
            check_pattern(pattern)
        except PatternError as exc:
            raise _fail(origin, where, f"`messagePatterns`: {exc}") from None
        regexes.append(compile_safe(pattern))
    claims: list[Regex] = []
    for pattern in kwargs.get("contradicting_claims", ()):
        try:
            check_pattern(pattern)
        except PatternError as exc:
            raise _fail(origin, where, f"`contradictingClaims`: {exc}") from None
        claims.append(compile_safe("(?i)" + pattern))
    compiled: dict[str, list[Regex]] = {"payload_patterns": [], "slots": []}
    for attr, key in (("payload_patterns", "payloadPatterns"), ("slots", "slots")):
        for pattern in kwargs.get(attr, ()):
            try:
                check_pattern(pattern)
            except PatternError as exc:
                raise _fail(origin, where, f"`{key}`: {exc}") from None
            compiled[attr].append(compile_safe(pattern))
    names = frozenset(n for r in compiled["slots"] for n in r.groupindex) | BUILTIN_SLOTS
    for key in ("summary", "documentation", "triggerScenarios", "commonSituations"):
        _check_slots(origin, where, key, [item.get(key) or ""], names)
    for key in ("solutions", "preventionTips"):
        _check_slots(origin, where, key, item.get(key) or [], names)
    return Family(
        **kwargs,
        origin=origin,
        _regexes=tuple(regexes),
        _claims=tuple(claims),
        _payloads=tuple(compiled["payload_patterns"]),
        _slots=tuple(compiled["slots"]),
    )


def _check_slots(
    origin: str, where: str, key: str, texts: Sequence[str], names: frozenset[str]
) -> None:
    """A prose text may name only declared slots: `{name}` of nothing would show as it is."""
    for text in texts:
        for found in _SLOT.finditer(text):
            if found[1] not in names:
                raise _fail(
                    origin,
                    where,
                    f"`{key}` names the slot `{{{found[1]}}}`, which no `slots` pattern "
                    f"declares (and it is not one of {', '.join(sorted(BUILTIN_SLOTS))})",
                )


def parse_families(data: Mapping[str, Any], origin: str = "") -> list[Family]:
    """The families of a `{"families": [...]}` document; ValueError says what is wrong."""
    if not isinstance(data, Mapping) or "families" not in data:
        raise ValueError('a families document is an object with a "families" list')
    items = data["families"]
    if not isinstance(items, list):
        raise ValueError('"families" must be a list of family objects')
    extra = sorted(set(data) - {"families", "$schema", "comment"})
    if extra:
        raise ValueError(f"unknown top-level field(s) next to `families`: {', '.join(extra)}")
    families: list[Family] = []
    seen: set[str] = set()
    for number, item in enumerate(items, start=1):
        family = _parse_one(item, number, origin)
        if family.id in seen:
            raise ValueError(f"family `{family.id}`: the id is used twice in this document")
        seen.add(family.id)
        families.append(family)
    for family in families:
        if family.parent is not None and family.parent not in seen:
            raise ValueError(f"family `{family.id}`: `parent` names no family: `{family.parent}`")
        if family.parent == family.id:
            raise ValueError(f"family `{family.id}`: `parent` names the family itself")
    return families


def family_of(record: RecordLike, families: Sequence[Family] | Iterable[Family]) -> Family | None:
    """The family `record` (a `Record` or a camelCase dict) belongs to, or None."""
    families = [f for f in families if not f.is_payload]
    rid, repo, message, tag, crate = _record_view(record)
    for family in families:
        if rid is not None and rid in family.record_ids:
            return family
    if tag:
        for family in families:
            if family.id == tag:
                return family
    for family in families:
        if family._fits(record, repo, crate, message):
            return family
    return None


def payload_family(
    record: Record, pasted: str, families: Sequence[Family], own: Family | None
) -> Family | None:
    """The first payload family with a write-up that `record` belongs to (by its own
    membership rules, or as a member of its `parent`, `own` being the record's family) and
    whose payload pattern is found in the `pasted` message."""
    for family in families:
        if not family.is_payload or not family.has_write_up or not family.payload_in(pasted):
            continue
        member = (family.parent is not None and own is not None and own.id == family.parent) or (
            _has_rules(family) and family.matches(record)
        )
        if member:
            return family
    return None


def _has_rules(family: Family) -> bool:
    return bool(
        family.message_formats or family.message_patterns or family.record_ids or family.files
    )


_SLOT = re.compile(r"\{([a-z_]+)\}")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(])")


def fill_text(text: str | None, values: Mapping[str, str], names: frozenset[str]) -> str | None:
    """`text` with its `{slot}`s filled; a sentence naming a slot nothing filled goes."""
    if not text:
        return text
    if not _unfilled(text, values, names):
        return _fill(text, values, names)
    kept = [
        _fill(p, values, names) for p in _SENTENCE.split(text) if not _unfilled(p, values, names)
    ]
    return " ".join(kept) or None


def fill_items(
    items: Sequence[str], values: Mapping[str, str], names: frozenset[str]
) -> tuple[str, ...]:
    """The items with their slots filled; an item naming a slot nothing filled is left out."""
    return tuple(_fill(i, values, names) for i in items if not _unfilled(i, values, names))


def _unfilled(text: str, values: Mapping[str, str], names: frozenset[str]) -> bool:
    return any(m[1] in names and m[1] not in values for m in _SLOT.finditer(text))


def _fill(text: str, values: Mapping[str, str], names: frozenset[str]) -> str:
    return _SLOT.sub(lambda m: values.get(m[1], m[0]) if m[1] in names else m[0], text)


def family_for_message(
    message: str, families: Iterable[Family], repo: str | None = None, crate: str | None = None
) -> Family | None:
    """The first family whose messages fit a pasted panic message.

    A repo or crate given must fit the family's limits; one not known (None) does not exclude.
    """
    for family in families:
        if family.is_payload:
            continue
        if family.admits(repo, crate, lenient=True) and family.matches_message(message):
            return family
    return None


def family_contradiction(record: Record, families: Iterable[Family]) -> tuple[Family, str] | None:
    """(family, the contradicting passage) when the record's own write-up makes a claim that
    its family lists under `contradictingClaims`, else None."""
    if not record.has_write_up:
        return None
    family = family_of(record, list(families))
    if family is None or not family.contradicting_claims:
        return None
    claim = family.contradicting_claim(_write_up_text(record))
    return (family, claim) if claim else None


def _write_up_text(record: Record) -> str:
    parts = [
        record.documentation or "",
        record.trigger_scenarios or "",
        record.common_situations or "",
        *record.solutions,
    ]
    return "\n".join(p for p in parts if p)
