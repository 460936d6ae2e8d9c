"""Checking one record document: required fields, types, patterns, unknown fields."""

from __future__ import annotations

from itertools import chain
from operator import itemgetter, methodcaller
from typing import Any

from bot.catalog.model import REQUIRED, TYPE_BY_KEY, WRITE_UP_KEYS, is_draft_text, value_class
from bot.catalog.patterns import PatternError, check_pattern

# The message of a placeholder write-up text: `catalog validate` fails on it, the loader keeps
# the record (answers treat the text as absent) and reports it as a warning.
DRAFT_TEXT = "is a draft placeholder, not a write-up; write it or remove the field"

_TYPE_WORDS = {"str": "text", "int": "a whole number", "list": "a list of texts"}


@value_class(frozen=True)
class Problem:
    """One thing wrong (or worth a warning) in a catalog file, located for its author."""

    file: str
    message: str
    line: int | None = None
    field: str | None = None
    record_id: str | None = None

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        parts = [where]
        if self.record_id:
            parts.append(f"record {self.record_id}")
        if self.field:
            parts.append(f"field `{self.field}`")
        return ": ".join(parts) + ": " + self.message


def _type_ok(kind: str, value: object) -> bool:
    """Exact type tests (a bool is an int to isinstance); None is always allowed."""
    if value is None or kind == "any":
        return True
    if kind == "str":
        return type(value) is str
    if kind == "int":
        return type(value) is int
    return type(value) is list and all(type(item) is str for item in value)


def _describe(value: object) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, (int, float)):
        return "a number"
    return "text"


# Per set of keys (records of one file share theirs): the optional keys by expected type
# (text, whole number, list of texts), or None when a key is unknown or a required one missing
# (the full check then says which).
_Plan = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]
_SHAPES: dict[tuple[str, ...], _Plan | None] = {}
_NONE = type(None)
_TEXT_OR_NONE = frozenset({str, _NONE})
_INT_OR_NONE = frozenset({int, _NONE})
_TEXT = frozenset({str})
_LIST_OR_NONE = frozenset({list, _NONE})


def _shape(keys: tuple[str, ...]) -> _Plan | None:
    try:
        return _SHAPES[keys]
    except KeyError:
        pass
    plan: _Plan | None = None
    # A pattern is compiled and checked: the full check does it.
    known = all(key in TYPE_BY_KEY for key in keys) and "messagePattern" not in keys
    if known and all(key in keys for key in REQUIRED):
        optional = [key for key in keys if key not in REQUIRED]

        def of_kind(kind: str) -> tuple[str, ...]:
            return tuple(key for key in optional if TYPE_BY_KEY[key] == kind)

        plan = (of_kind("str"), of_kind("int"), of_kind("list"))
    if len(_SHAPES) < 1024:  # hostile files could invent any number of key sets
        _SHAPES[keys] = plan
    return plan


def record_is_clean(data: object) -> bool:
    """True when `check_record` would find nothing to say (no error, no warning), decided
    fast: a catalog of a million records is checked at load time."""
    if type(data) is not dict:
        return False
    plan = _shape(tuple(data))
    if plan is None:
        return False
    record_id, repo, message = data["id"], data["repo"], data["errorMessage"]
    if type(record_id) is not str or type(repo) is not str or type(message) is not str:
        return False
    if not record_id.strip() or not message.strip() or repo.count("/") != 1 or not repo.strip():
        return False
    texts, ints, lists = plan
    if _has_draft_text(data):
        return False
    get = data.__getitem__
    if texts and not _TEXT_OR_NONE.issuperset(map(type, map(get, texts))):
        return False
    if ints and not _INT_OR_NONE.issuperset(map(type, map(get, ints))):
        return False
    for key in lists:
        value = data[key]
        if value is not None and (
            type(value) is not list or not _TEXT.issuperset(map(type, value))
        ):
            return False
    return True


def _has_draft_text(data: dict[str, Any]) -> bool:
    return bool(draft_keys(data))


def draft_keys(data: dict[str, Any]) -> list[str]:
    """The write-up keys of a document whose text, or an item of whose list, is a placeholder."""
    found = []
    for key in WRITE_UP_KEYS:
        value = data.get(key)
        if value is None:
            continue
        items = value if type(value) is list else (value,)
        if any(map(is_draft_text, items)):
            found.append(key)
    return found


def batch_is_clean(documents: list[Any]) -> bool:
    """True when `record_is_clean` holds for every one of the documents: one key set for all,
    checked a field at a time over the whole batch (a loop in C rather than in Python, for
    catalogs of a million records)."""
    if not documents:
        return False
    if set(map(type, documents)) != {dict}:
        return False
    shapes = set(map(tuple, documents))
    if len(shapes) != 1:
        return False
    keys = shapes.pop()
    plan = _shape(keys)
    if plan is None:
        return False

    def column(key: str) -> list[Any]:
        return list(map(itemgetter(key), documents))

    for key in REQUIRED:
        values = column(key)
        if set(map(type, values)) != _TEXT or not all(map(str.strip, values)):
            return False
    if set(map(methodcaller("count", "/"), column("repo"))) != {1}:
        return False
    texts, ints, lists = plan
    # `draft_keys` of each document, a write-up key at a time (most batches have none)
    for key in WRITE_UP_KEYS:
        if key not in keys:
            continue
        values = [v for v in column(key) if v is not None]
        texts_of = [v for v in values if type(v) is not list]
        items = [item for v in values if type(v) is list for item in v]
        if any(map(is_draft_text, texts_of)) or any(map(is_draft_text, items)):
            return False
    for key in texts:
        if not _TEXT_OR_NONE.issuperset(map(type, column(key))):
            return False
    for key in ints:
        if not _INT_OR_NONE.issuperset(map(type, column(key))):
            return False
    for key in lists:
        values = column(key)
        if not _LIST_OR_NONE.issuperset(map(type, values)):
            return False
        if not _TEXT.issuperset(map(type, chain.from_iterable(filter(None, values)))):
            return False
    return True


def check_record(
    data: object, file: str, line: int | None = None
) -> tuple[list[Problem], list[Problem]]:
    """Return (errors, warnings) for one record document."""
    if record_is_clean(data):
        return [], []
    if not isinstance(data, dict):
        return [Problem(file, f"a record must be a JSON object, not {_describe(data)}", line)], []
    record_id = data.get("id") if isinstance(data.get("id"), str) else None
    errors: list[Problem] = []
    warnings: list[Problem] = []
    for key in REQUIRED:
        value = data.get(key)
        if value is None:
            message = "is missing; every record needs `id`, `repo` and `errorMessage`"
            errors.append(Problem(file, message, line, key, record_id))
        elif type(value) is not str or not value.strip():
            message = f"must be non-empty text, not {_describe(value)}"
            errors.append(Problem(file, message, line, key, record_id))
    for key, value in data.items():
        kind = TYPE_BY_KEY.get(key)
        if kind is None:
            message = "is not a known field; it is kept as is"
            warnings.append(Problem(file, message, line, key, record_id))
        elif key not in REQUIRED and not _type_ok(kind, value):
            message = f"must be {_TYPE_WORDS[kind]}, not {_describe(value)}"
            errors.append(Problem(file, message, line, key, record_id))
    for key in draft_keys(data):
        warnings.append(Problem(file, DRAFT_TEXT, line, key, record_id))
    repo = data.get("repo")
    if type(repo) is str and repo.count("/") != 1:
        errors.append(Problem(file, f"must be OWNER/NAME, not `{repo}`", line, "repo", record_id))
    pattern = data.get("messagePattern")
    if type(pattern) is str:
        try:
            check_pattern(pattern)
        except PatternError as exc:
            errors.append(Problem(file, str(exc), line, "messagePattern", record_id))
    return errors, warnings
