"""Reading catalogs: files and folders of records, checked, combined, and de-duplicated."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from bot.catalog.model import Record, record_from_dict
from bot.catalog.patterns import normalise_message
from bot.catalog.validate import Problem, check_record

CATALOG_SUFFIXES = (".json", ".jsonl")
# A catalog file larger than this is refused rather than read into memory.
MAX_FILE_BYTES = 256 << 20


class CatalogError(Exception):
    """The catalog cannot be used; `problems` lists each thing wrong, one line each."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


class Catalog:
    """The records the bot knows, by id."""

    def __init__(
        self,
        records: dict[str, Record],
        warnings: list[Problem] | None = None,
        families: list[Any] | None = None,
    ):
        self.records = records
        self.warnings = warnings or []
        self.families = families or []
        self._by_message: dict[str, list[Record]] | None = None
        self._flags: dict[str, frozenset[str]] = {}
        self._families: dict[str, Any] = {}
        # The matcher's index (bot.core.index.CatalogIndex), when built with the catalog
        # (the bundled one, cached between runs by bot.catalog.cache).
        self.prebuilt_index: Any = None
        # Release histories beside the records (`*.ndjson`, read by bot.core.history on use).
        self.history_files: list[Path] = []

    def __len__(self) -> int:
        return len(self.records)

    def __iter__(self) -> Iterator[Record]:
        return iter(self.records.values())

    def get(self, record_id: str) -> Record | None:
        return self.records.get(record_id)

    def by_message(self, text: str) -> list[Record]:
        """Records whose message is `text` (whitespace-insensitive), or the record with that id."""
        if self._by_message is None:
            index: dict[str, list[Record]] = {}
            for record in self.records.values():
                index.setdefault(normalise_message(record.error_message), []).append(record)
            self._by_message = index
        if text in self.records:
            return [self.records[text]]
        return list(self._by_message.get(normalise_message(text), ()))

    def family(self, record_id: str) -> Any | None:
        """The record's error family (bot.catalog.families.Family), or None."""
        if not self.families:
            return None
        if record_id not in self._families:
            from bot.catalog.families import family_of

            record = self.records.get(record_id)
            self._families[record_id] = family_of(record, self.families) if record else None
        return self._families[record_id]

    def flags(self, record_id: str) -> frozenset[str]:
        """Review flags of a record, e.g. `possible-mismatch` when its write-up looks misfiled."""
        if record_id not in self._flags:
            from bot.catalog.lint import review_flags  # lint imports the loader's types

            record = self.records.get(record_id)
            self._flags[record_id] = review_flags(record, self.families) if record else frozenset()
        return self._flags[record_id]


def _documents(path: Path) -> Iterator[tuple[int | None, Any]]:
    """Yield (line, document) for each record-like JSON value in a file; raise on bad files."""
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise CatalogError(
            [Problem(str(path), f"the file is {size} bytes; the limit is {MAX_FILE_BYTES}")]
        )
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CatalogError(
            [Problem(str(path), f"the file is not UTF-8 text (byte {exc.start})")]
        ) from None
    if path.suffix == ".jsonl":
        numbered = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
        try:
            # One parse for the whole file is much faster than one per line; a line-by-line
            # pass below runs only to say which line is broken.
            documents = json.loads("[" + ",".join(line for _, line in numbered) + "]")
        except json.JSONDecodeError:
            documents = None
        if documents is not None and len(documents) == len(numbered):
            yield from ((n, doc) for (n, _), doc in zip(numbered, documents, strict=True))
            return
        for number, line in numbered:
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as exc:
                raise CatalogError(
                    [
                        Problem(
                            str(path),
                            f"the line is not valid JSON: {exc.msg} (column {exc.colno})",
                            number,
                        )
                    ]
                ) from None
        return
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CatalogError(
            [Problem(str(path), f"the file is not valid JSON: {exc.msg}", exc.lineno)]
        ) from None
    yield None, document


def _records_in(document: Any) -> list[Any] | None:
    """The records a JSON document holds: wrapped, bare, or an array; None for families."""
    if isinstance(document, list):
        return document
    if isinstance(document, dict):
        if "families" in document and "id" not in document:
            return None
        if isinstance(document.get("record"), dict):
            return [document["record"]]
    return [document]


def catalog_files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.suffix in CATALOG_SUFFIXES and p.is_file())
    return [path]


def _site_key(record: Record) -> tuple[str, str, str] | None:
    if not record.file_path:
        return None
    return (record.repo, record.file_path, normalise_message(record.error_message))


def load_catalog(paths: Sequence[str | Path]) -> Catalog:
    """Load and check every record under `paths`; raise CatalogError listing all problems."""
    errors: list[Problem] = []
    warnings: list[Problem] = []
    records: dict[str, Record] = {}
    families: list[Any] = []
    history_files: list[Path] = []
    for given in paths:
        path = Path(given)
        if not path.exists():
            errors.append(Problem(str(path), "no such file or folder"))
            continue
        if path.is_file() and path.suffix not in CATALOG_SUFFIXES:
            errors.append(Problem(str(path), "a catalog file must end in .json or .jsonl"))
            continue
        if path.is_dir():
            history_files.extend(sorted(path.rglob("*.ndjson")))
        for file in catalog_files(path):
            try:
                for line, document in _documents(file):
                    items = _records_in(document)
                    if items is None:
                        families.extend(_parse_families(document, str(file), errors))
                        continue
                    for item in items:
                        _add_record(item, str(file), line, records, errors, warnings)
            except CatalogError as exc:
                errors.extend(exc.problems)
            except OSError as exc:
                errors.append(Problem(str(file), f"cannot be read: {exc.strerror or exc}"))
    if errors:
        raise CatalogError(errors)
    catalog = Catalog(_drop_superseded_skeletons(records), warnings, families)
    catalog.history_files = history_files
    return catalog


def _add_record(
    item: Any,
    file: str,
    line: int | None,
    records: dict[str, Record],
    errors: list[Problem],
    warnings: list[Problem],
) -> None:
    problems, notes = check_record(item, file, line)
    warnings.extend(notes)
    if problems:
        errors.extend(problems)
        return
    origin = file if line is None else f"{file}:{line}"
    record = record_from_dict(item, origin)
    previous = records.get(record.id)
    if previous is not None:
        errors.append(
            Problem(
                file,
                f"the id is used twice: here and in {previous.origin}",
                line,
                "id",
                record.id,
            )
        )
        return
    records[record.id] = record


def _drop_superseded_skeletons(records: dict[str, Record]) -> dict[str, Record]:
    """Where a written-up record and a bare site describe one site, keep only the write-up."""
    written_ups = [r for r in records.values() if r.has_write_up]
    written = {_site_key(r) for r in written_ups} - {None}
    if not written:
        return records
    files = {key[1] for key in written}
    superseded = {
        rid
        for rid, r in records.items()
        if r.file_path in files and not r.has_write_up and _site_key(r) in written
    }
    return {rid: r for rid, r in records.items() if rid not in superseded}


def _parse_families(document: dict, file: str, errors: list[Problem]) -> list[Any]:
    try:
        from bot.catalog.families import parse_families
    except ImportError:  # families arrive with the scanner; until then the file is ignored
        return []
    try:
        return list(parse_families(document, file))
    except ValueError as exc:
        errors.append(Problem(file, str(exc), None, "families"))
        return []


def bundled_catalog_path() -> Path:
    """The catalog shipped with the bot: inside the installed package, or the source tree's."""
    package_dir = Path(__file__).resolve().parent.parent
    installed = package_dir / "bundled_catalog"
    if installed.is_dir():
        return installed
    return package_dir.parent / "catalog"


@cache
def load_bundled_catalog() -> Catalog:
    """The bundled catalog with its index, from the user's cache folder when it is current."""
    from bot.catalog.cache import load_indexed

    paths = [bundled_catalog_path()]
    return load_indexed(paths, lambda: _with_index(load_catalog(paths)))


def _with_index(catalog: Catalog) -> Catalog:
    from bot.core.index import CatalogIndex  # the core imports this module

    catalog.prebuilt_index = CatalogIndex(catalog)
    return catalog
