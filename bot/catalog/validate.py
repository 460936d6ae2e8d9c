"""Checking one record document: required fields, types, patterns, unknown fields."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.catalog.model import REQUIRED, TYPE_BY_KEY
from bot.catalog.patterns import PatternError, check_pattern

_TYPE_WORDS = {"str": "text", "int": "a whole number", "list": "a list of texts"}


@dataclass(frozen=True, slots=True)
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


def _is_text_list(value: Any) -> bool:
    return type(value) is list and all(type(item) is str for item in value)


# One check per kind of field; exact type tests, since a bool is an int to isinstance.
_TYPE_CHECKS = {
    "str": lambda value: type(value) is str,
    "int": lambda value: type(value) is int,
    "list": _is_text_list,
    "any": lambda value: True,
}
_CHECK_BY_KEY = {key: _TYPE_CHECKS[kind] for key, kind in TYPE_BY_KEY.items()}


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, (int, float)):
        return "a number"
    return "text"


def check_record(
    data: Any, file: str, line: int | None = None
) -> tuple[list[Problem], list[Problem]]:
    """Return (errors, warnings) for one record document."""
    if not isinstance(data, dict):
        return [Problem(file, f"a record must be a JSON object, not {_describe(data)}", line)], []
    record_id = data.get("id") if isinstance(data.get("id"), str) else None
    errors: list[Problem] = []
    warnings: list[Problem] = []

    def error(field: str | None, message: str) -> None:
        errors.append(Problem(file, message, line, field, record_id))

    for key in REQUIRED:
        value = data.get(key)
        if value is None:
            error(key, "is missing; every record needs `id`, `repo` and `errorMessage`")
        elif not isinstance(value, str) or not value.strip():
            error(key, f"must be non-empty text, not {_describe(value)}")
    for key, value in data.items():
        check = _CHECK_BY_KEY.get(key)
        if check is None:
            warnings.append(
                Problem(file, "is not a known field; it is kept as is", line, key, record_id)
            )
        elif value is not None and key not in REQUIRED and not check(value):
            error(key, f"must be {_TYPE_WORDS[TYPE_BY_KEY[key]]}, not {_describe(value)}")
    if isinstance(data.get("repo"), str) and data["repo"].count("/") != 1:
        error("repo", f"must be OWNER/NAME, not `{data['repo']}`")
    pattern = data.get("messagePattern")
    if isinstance(pattern, str):
        try:
            check_pattern(pattern)
        except PatternError as exc:
            error("messagePattern", str(exc))
    return errors, warnings
