"""The catalog record: one known error, with its field names as the data spells them.

Files keep the source's camelCase names; Python code uses the snake_case attributes below.
The mapping is one table, `FIELDS`, so the two never drift apart.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace
from typing import Any

# (name in files, attribute, expected JSON type). Order is the canonical order for writing.
# "str", "int", "list" (of strings), "any" (kept as given).
FIELDS: tuple[tuple[str, str, str], ...] = (
    ("id", "id", "str"),
    ("repo", "repo", "str"),
    ("slug", "slug", "str"),
    ("errorCode", "error_code", "any"),
    ("errorMessage", "error_message", "str"),
    ("messagePattern", "message_pattern", "str"),
    ("errorType", "error_type", "str"),
    ("errorClass", "error_class", "str"),
    ("httpStatus", "http_status", "int"),
    ("severity", "severity", "str"),
    ("filePath", "file_path", "str"),
    ("lineNumber", "line_number", "int"),
    # The enclosing fn's name (`float_mul`): `catalog update` pairs repeated messages of one
    # file by it before their order.
    ("enclosingFn", "enclosing_fn", "str"),
    ("sourceCode", "source_code", "str"),
    ("sourceCodeStart", "source_code_start", "int"),
    ("sourceCodeEnd", "source_code_end", "int"),
    ("githubUrl", "github_url", "str"),
    ("documentation", "documentation", "str"),
    ("triggerScenarios", "trigger_scenarios", "str"),
    ("commonSituations", "common_situations", "str"),
    ("solutions", "solutions", "list"),
    ("exampleFix", "example_fix", "str"),
    ("handlingStrategy", "handling_strategy", "str"),
    ("validationCode", "validation_code", "str"),
    ("typeGuard", "type_guard", "str"),
    ("tryCatchPattern", "try_catch_pattern", "str"),
    ("preventionTips", "prevention_tips", "list"),
    ("tags", "tags", "list"),
    ("backgroundTag", "background_tag", "str"),
    ("relatedErrors", "related_errors", "list"),
    ("analyzedSha", "analyzed_sha", "str"),
    ("analyzedAt", "analyzed_at", "str"),
    ("contentChangedAt", "content_changed_at", "str"),
    ("schemaVersion", "schema_version", "int"),
)
REQUIRED = ("id", "repo", "errorMessage")
ATTR_BY_KEY = {key: attr for key, attr, _ in FIELDS}
KEY_BY_ATTR = {attr: key for key, attr, _ in FIELDS}
TYPE_BY_KEY = {key: kind for key, _, kind in FIELDS}
LIST_ATTRS = frozenset(attr for _, attr, kind in FIELDS if kind == "list")

# `catalog update` keeps a site that left the code, tagged with the commit it left at:
# older versions still panic with it.
REMOVED_TAG_PREFIX = "removed-at:"

# The fields a person writes; a record with none of them is a bare panic site (a skeleton).
WRITE_UP_ATTRS = (
    "documentation",
    "solutions",
    "example_fix",
    "trigger_scenarios",
    "common_situations",
    "prevention_tips",
    "validation_code",
    "type_guard",
    "try_catch_pattern",
)


@dataclass(eq=True)
class Record:
    """One catalog record. Treat as immutable: use `with_changes` for a modified copy.

    Not a slots/frozen dataclass on purpose: catalogs hold up to 100k records, and building
    each through a 36-keyword `__init__` dominated load time. Unset fields fall back to the
    class-level defaults, so `record_from_dict` fills only the instance dict.
    """

    id: str
    repo: str
    error_message: str
    slug: str | None = None
    error_code: Any = None
    message_pattern: str | None = None
    error_type: str | None = None
    error_class: str | None = None
    http_status: int | None = None
    severity: str | None = None
    file_path: str | None = None
    line_number: int | None = None
    enclosing_fn: str | None = None
    source_code: str | None = None
    source_code_start: int | None = None
    source_code_end: int | None = None
    github_url: str | None = None
    documentation: str | None = None
    trigger_scenarios: str | None = None
    common_situations: str | None = None
    solutions: tuple[str, ...] = ()
    example_fix: str | None = None
    handling_strategy: str | None = None
    validation_code: str | None = None
    type_guard: str | None = None
    try_catch_pattern: str | None = None
    prevention_tips: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    background_tag: str | None = None
    related_errors: tuple[str, ...] = ()  # messages (errorMessage as written); an id works too
    analyzed_sha: str | None = None
    analyzed_at: str | None = None
    content_changed_at: str | None = None
    schema_version: int | None = None
    # Fields the file had that this version does not know; kept so a rewrite loses nothing.
    extra: dict[str, Any] = field(default_factory=dict, compare=False)
    # Keys present in the source document (nulls included), so writing back is faithful.
    present: frozenset[str] = field(default_factory=frozenset, compare=False)
    # Where the record was read from, e.g. "catalog/seeds/x.json" or "sites.jsonl:12".
    origin: str = field(default="", compare=False)

    @property
    def has_write_up(self) -> bool:
        fields = self.__dict__  # unset fields are class defaults: empty, so not a write-up
        return any(fields.get(attr) for attr in WRITE_UP_ATTRS)

    @property
    def removed_at(self) -> str | None:
        """The commit at which this site left the code (`catalog update` tags it), or None."""
        for tag in self.tags:
            if tag.startswith(REMOVED_TAG_PREFIX):
                return tag[len(REMOVED_TAG_PREFIX) :]
        return None

    @property
    def crate(self) -> str | None:
        """The crate folder of `file_path` (`crates/burn-autodiff/src/..` -> `burn-autodiff`)."""
        if not self.file_path:
            return None
        parts = self.file_path.split("/")
        if len(parts) > 2 and parts[0] == "crates":
            return parts[1]
        return None

    def with_changes(self, **changes: Any) -> Record:
        return replace(self, **changes)


# Values that repeat across thousands of records (repo, kind, commit, tags, file): one string
# object each instead of one per record, which a 100k-record catalog notices.
_SHARED_VALUES = frozenset(
    {"repo", "errorType", "severity", "filePath", "analyzedSha", "backgroundTag"}
)
_PRESENT_KEYS: dict[tuple[str, ...], frozenset[str]] = {}


def record_from_dict(data: dict[str, Any], origin: str = "") -> Record:
    """Build a Record from an already validated camelCase dict (see `validate.check_record`)."""
    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in data.items():
        attr = ATTR_BY_KEY.get(key)
        if attr is None:
            extra[key] = value
        elif attr in LIST_ATTRS:
            items = value or ()
            values[attr] = tuple(sys.intern(v) for v in items) if key == "tags" else tuple(items)
        elif key in _SHARED_VALUES and type(value) is str:
            values[attr] = sys.intern(value)
        else:
            values[attr] = value
    keys = tuple(data)
    present = _PRESENT_KEYS.get(keys)
    if present is None:
        present = _PRESENT_KEYS[keys] = frozenset(keys)
    record = object.__new__(Record)
    record.__dict__.update(values, extra=extra, present=present, origin=origin)
    return record


def record_to_dict(record: Record) -> dict[str, Any]:
    """The camelCase form for files: known fields in canonical order, then unknown ones.

    A field is written when it has a value or was present (even as null) in the source, so that
    importing a record and writing it back gives the same document field for field.
    """
    out: dict[str, Any] = {}
    for key, attr, kind in FIELDS:
        value = getattr(record, attr)
        if kind == "list":
            if value or key in record.present:
                out[key] = list(value)
        elif value is not None or key in record.present:
            out[key] = value
    out.update(record.extra)
    return out
