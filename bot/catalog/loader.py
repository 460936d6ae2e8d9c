"""Reading catalogs: files and folders of records, checked, combined, and de-duplicated.

The catalog is records and nothing derived from matching: the index and the release history
are built beside it by the app (bot.app), which also caches the bundled catalog's."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from bot.catalog.families import (
    Family,
    family_contradiction,
    family_of,
    parse_families,
    payload_family,
)
from bot.catalog.fileset import reading
from bot.catalog.lint import review_flags
from bot.catalog.model import (
    UNREVIEWED_TAG,
    DocumentBatch,
    Record,
    RecordTable,
    collector_paused,
    commits_named,
    record_to_dict,
)
from bot.catalog.patterns import normalise_message
from bot.catalog.validate import Problem, batch_is_clean, check_record

CATALOG_SUFFIXES = (".json", ".jsonl")
# Files under a folder of this name are write-ups of records the other files hold: each is an
# object with the record's `id` and the fields it adds or replaces, read after every other file,
# so a rebuilt scan keeps its write-ups.
WRITEUPS_DIR = "writeups"
# What a catalog folder says of its project: repo, name, whether it is a dependency (issue 25).
PROJECT_FILE = "project.toml"
HOOK_FILE = "hooks.toml"
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
        records: Mapping[str, Record],
        warnings: list[Problem] | None = None,
        families: list[Family] | None = None,
    ):
        self.records = records
        self.warnings = warnings or []
        self.families = families or []
        self._by_message: dict[str, list[str]] | None = None
        self._flags: dict[str, frozenset[str]] = {}
        self._families: dict[str, Family | None] = {}
        # Release histories beside the records (`*.ndjson`): read by the app (bot.app), parsed
        # by bot.core.match.releases.
        self.history_files: list[Path] = []
        # Each folder's `project.toml` (issue 25: several projects in one catalog).
        self.project_files: list[Path] = []
        # `hooks.toml`: the project's panic-hook formats, from its scan settings (issue 30).
        self.hook_files: list[Path] = []

    def __len__(self) -> int:
        return len(self.records)

    def __iter__(self) -> Iterator[Record]:
        return iter(self.records.values())

    def sites(self) -> Iterator[tuple[str, str, str | None, str]]:
        """(id, errorMessage, filePath, repo) of every record: what the matcher indexes, read
        without building records that are never matched."""
        if isinstance(self.records, RecordTable):
            return self.records.sites()
        return ((r.id, r.error_message, r.file_path, r.repo) for r in self.records.values())

    def message(self, record_id: str) -> str:
        """A record's errorMessage, read without building the record where it is not built."""
        if isinstance(self.records, RecordTable):
            return self.records.message(record_id)
        return self.records[record_id].error_message

    def site_columns(self) -> tuple[list[str], list[str], list[str | None], list[str]]:
        """`sites()` as four lists: ids, messages, file paths, repos."""
        if isinstance(self.records, RecordTable):
            return self.records.site_columns()
        rows = list(self.sites())
        if not rows:
            return [], [], [], []
        ids, messages, paths, repos = map(list, zip(*rows, strict=True))
        return ids, messages, paths, repos

    def known_commits(self) -> set[str]:
        """Every full commit id the records name, to complete short ones in links."""
        if isinstance(self.records, RecordTable):
            return self.records.commits()
        found: set[str] = set()
        for record in self.records.values():
            found.update(commits_named(record.analyzed_sha, record.github_url))
        return found

    def get(self, record_id: str) -> Record | None:
        return self.records.get(record_id)

    def by_message(self, text: str) -> list[Record]:
        """Records whose message is `text` (whitespace-insensitive), or the record with that id."""
        if self._by_message is None:
            index: dict[str, list[str]] = {}
            for rid, message, _file_path, _repo in self.sites():
                index.setdefault(normalise_message(message), []).append(rid)
            self._by_message = index
        if text in self.records:
            return [self.records[text]]
        return [self.records[rid] for rid in self._by_message.get(normalise_message(text), ())]

    def by_message_start(self, prefix: str, repo: str) -> list[Record]:
        """The repository's records whose message starts with `prefix` (whitespace collapsed)."""
        return [
            self.records[rid]
            for rid, message, _file_path, record_repo in self.sites()
            if record_repo == repo and " ".join(message.split()).startswith(prefix)
        ]

    def family(self, record_id: str) -> Family | None:
        """The record's error family, or None."""
        if not self.families:
            return None
        if record_id not in self._families:
            record = self.records.get(record_id)
            self._families[record_id] = family_of(record, self.families) if record else None
        return self._families[record_id]

    def payload_family(self, record_id: str, pasted: str) -> Family | None:
        """The payload family whose pattern the `pasted` message shows, for this record."""
        record = self.records.get(record_id)
        if record is None or not any(f.is_payload for f in self.families):
            return None
        return payload_family(record, pasted, self.families, self.family(record_id))

    def flags(self, record_id: str) -> frozenset[str]:
        """Review flags of a record, e.g. `possible-mismatch` when its write-up looks misfiled."""
        if record_id not in self._flags:
            record = self.records.get(record_id)
            self._flags[record_id] = review_flags(record, self.families) if record else frozenset()
        return self._flags[record_id]

    def contradiction(self, record_id: str) -> str | None:
        """The passage of the record's own write-up that its family's explanation (checked
        against the code) refutes, or None (lint flags it `contradicts-family`)."""
        record = self.records.get(record_id)
        found = family_contradiction(record, self.families) if record else None
        return found[1] if found else None


def _document_batches(path: Path) -> Iterator[DocumentBatch]:
    """The record-like JSON values of a file, in batches (one for a `.json` file); raise
    CatalogError on a bad file, after the batch of the lines before a broken one."""
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise CatalogError(
            [Problem(str(path), f"the file is {size} bytes; the limit is {MAX_FILE_BYTES}")]
        )
    raw = path.read_bytes()
    if path.suffix != ".jsonl":
        try:
            document = json.loads(_utf8(path, raw))
        except json.JSONDecodeError as exc:
            raise CatalogError(
                [Problem(str(path), f"the file is not valid JSON: {exc.msg}", exc.lineno)]
            ) from None
        except RecursionError:
            raise CatalogError([Problem(str(path), _TOO_DEEP)]) from None
        yield DocumentBatch([None], [document], [None])
        return
    # Lines as bytes: orjson checks their UTF-8 as it parses them (a file is decoded whole
    # only to say where it is not UTF-8), and only `\n` and `\r` end one (`str.splitlines`
    # would also cut at a U+2028 inside a JSON string).
    lines = raw.splitlines()
    if all(map(bytes.strip, lines)):
        numbers: Sequence[int] = range(1, len(lines) + 1)  # no blank line: the usual file
    else:
        numbers = [n for n, line in enumerate(lines, start=1) if line.strip()]
        lines = [lines[n - 1] for n in numbers]
    for start in range(0, len(lines), _BATCH_LINES):
        end = start + _BATCH_LINES
        batch, error = _parse_lines(path, raw, numbers[start:end], lines[start:end])
        yield batch
        if error is not None:
            raise error


def _utf8(path: Path, raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CatalogError(
            [Problem(str(path), f"the file is not UTF-8 text (byte {exc.start})")]
        ) from None


# A hostile file can nest arrays deeper than a parser's stack: a problem to report, not a crash.
_TOO_DEEP = "the JSON is nested too deeply to be a catalog record"

# Lines of a `.jsonl` file parsed at once: one parse of many lines is much faster than one per
# line, and batches keep the documents alive at a time few (their memory is reused).
_BATCH_LINES = 4096


def _parse_lines(
    path: Path, raw: bytes, numbers: Sequence[int], lines: list[bytes]
) -> tuple[DocumentBatch, CatalogError | None]:
    documents = _parse_array(b"[" + b",".join(lines) + b"]")
    if documents is not None and len(documents) == len(lines):
        return DocumentBatch(numbers, documents, lines), None
    # A line-by-line pass, only to say which line is broken.
    read_numbers: list[int] = []
    read_lines: list[bytes] = []
    parsed = DocumentBatch(read_numbers, [], read_lines)
    for number, line in zip(numbers, lines, strict=True):
        try:
            document = json.loads(line.decode("utf-8"))
        except UnicodeDecodeError:
            _utf8(path, raw)  # raises, saying where in the file
            raise
        except json.JSONDecodeError as exc:
            message = f"the line is not valid JSON: {exc.msg} (column {exc.colno})"
            return parsed, CatalogError([Problem(str(path), message, number)])
        except RecursionError:
            return parsed, CatalogError([Problem(str(path), _TOO_DEEP, number)])
        read_numbers.append(number)
        parsed.documents.append(document)
        read_lines.append(line)
    return parsed, None


def _parse_array(data: bytes) -> list[Any] | None:
    """The JSON array in `data` (UTF-8), or None when it is not valid JSON or not UTF-8.

    orjson reads a large catalog about twice as fast; what it refuses and the standard
    library accepts (NaN, integers past 64 bits) is read by the latter, so both give the same
    documents."""
    import orjson  # why: imported when files are read, not when the catalog comes from the cache

    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    try:
        return json.loads(data.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return None


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


def load_catalog(paths: Sequence[str | Path]) -> Catalog:
    """Load and check every record under `paths`; raise CatalogError listing all problems."""
    with collector_paused(), contextlib.ExitStack() as held:
        for given in paths:
            if Path(given).is_dir():  # a refresh's set of files, seen whole (bot.catalog.fileset)
                held.enter_context(reading(Path(given)))
        return _load_catalog(paths)


def hook_files_of(path: Path) -> list[Path]:
    """The panic-hook format files (`hooks.toml`) read with the catalog at `path`: a folder's,
    anywhere in it; a catalog file's, beside it (`catalog scan --out DIR` writes a scan and
    its hooks side by side, so naming the scan file alone keeps them)."""
    if path.is_dir():
        return sorted(path.rglob(HOOK_FILE))
    beside = path.parent / HOOK_FILE
    return [beside] if beside.is_file() else []


def _load_catalog(paths: Sequence[str | Path]) -> Catalog:
    errors: list[Problem] = []
    warnings: list[Problem] = []
    records = RecordTable()
    families: list[Family] = []
    history_files: list[Path] = []
    overlays: list[Path] = []
    project_files: list[Path] = []
    hook_files: list[Path] = []
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
            project_files.extend(sorted(path.rglob(PROJECT_FILE)))
        hook_files.extend(f for f in hook_files_of(path) if f not in hook_files)
        for file in catalog_files(path):
            if path.is_dir() and WRITEUPS_DIR in file.relative_to(path).parts[:-1]:
                overlays.append(file)
                continue
            name = str(file)
            try:
                for batch in _document_batches(file):
                    if batch_is_clean(batch.documents) and records.add_batch(batch, name):
                        continue  # the common case: checked and added a column at a time
                    for line, document, source in zip(
                        batch.lines, batch.documents, batch.texts, strict=True
                    ):
                        _add_document(
                            line, document, source, name, records, families, errors, warnings
                        )
            except CatalogError as exc:
                errors.extend(exc.problems)
            except OSError as exc:
                errors.append(Problem(str(file), f"cannot be read: {exc.strerror or exc}"))
    overlaid: set[str] = set()
    for file in overlays:
        _apply_overlays(file, records, overlaid, errors, warnings)
    for given in paths:
        if Path(given).is_dir():
            _apply_answering_drafts(Path(given), records, overlaid, errors)
    if errors:
        raise CatalogError(errors)
    catalog = Catalog(_drop_superseded_skeletons(records, overlaid), warnings, families)
    catalog.history_files = history_files
    catalog.project_files = project_files
    catalog.hook_files = hook_files
    return catalog


def _add_document(
    line: int | None,
    document: Any,
    source: bytes | None,
    file: str,
    records: RecordTable,
    families: list[Family],
    errors: list[Problem],
    warnings: list[Problem],
) -> None:
    """Add the records (or families) one JSON value holds."""
    items = _records_in(document)
    if items is None:
        families.extend(_parse_families(document, file, errors))
        return
    for item in items:
        # A line holding one record is kept as text (half the memory).
        text = source if items == [document] else None
        _add_record(item, file, line, text, records, errors, warnings)


def _add_record(
    item: Any,
    file: str,
    line: int | None,
    source: bytes | None,
    records: RecordTable,
    errors: list[Problem],
    warnings: list[Problem],
) -> None:
    problems, notes = check_record(item, file, line)
    warnings.extend(notes)
    if problems:
        errors.extend(problems)
        return
    record_id = item["id"]
    if record_id in records:
        errors.append(
            Problem(
                file,
                f"the id is used twice: here and in {records.origin(record_id)}",
                line,
                "id",
                record_id,
            )
        )
        return
    records.add(item, file, line, source)


def _apply_overlays(
    file: Path,
    records: RecordTable,
    overlaid: set[str],
    errors: list[Problem],
    warnings: list[Problem],
) -> None:
    """Lay each write-up of a `writeups/` file over the record with its id."""
    name = str(file)
    try:
        batches = list(_document_batches(file))
    except CatalogError as exc:
        errors.extend(exc.problems)
        return
    except OSError as exc:
        errors.append(Problem(name, f"cannot be read: {exc.strerror or exc}"))
        return
    for batch in batches:
        for line, document in zip(batch.lines, batch.documents, strict=True):
            for item in _records_in(document) or []:
                record_id = item.get("id") if isinstance(item, dict) else None
                if type(record_id) is not str:
                    errors.append(
                        Problem(
                            name,
                            "a write-up must be an object with the `id` of a record",
                            line,
                            "id",
                        )
                    )
                    continue
                if record_id in records:
                    keyed = records[record_id]
                    target = _anchored(item, keyed, records)
                    if target is None:
                        errors.append(
                            Problem(
                                name,
                                "the write-up is for another site than the record with its id "
                                f"({_site_words(keyed, item)}, not {_site_words(keyed)})",
                                line,
                                "id",
                                record_id,
                            )
                        )
                        continue
                    if target.id != record_id:
                        warnings.append(
                            Problem(
                                name,
                                f"the write-up names {_site_words(target)}: laid over that "
                                f"site's record {target.id}, not {record_id}",
                                line,
                                "id",
                                record_id,
                            )
                        )
                        record_id = target.id
                if record_id in overlaid or record_id not in records:
                    why = (
                        "is written up twice"
                        if record_id in overlaid
                        else "names no record of the catalog"
                    )
                    errors.append(Problem(name, f"the write-up {why}", line, "id", record_id))
                    continue
                merged = record_to_dict(records[record_id]) | item | {"id": record_id}
                problems, notes = check_record(merged, name, line)
                warnings.extend(notes)
                if problems:
                    errors.extend(problems)
                    continue
                records.add(merged, name, line)
                overlaid.add(record_id)


# What a write-up may name of its site: when it names them, they must be the record's (a message
# at several places in one file has one id per place, numbered in line order at the scanned
# commit, so an id copied from a scan of another release can name a sibling site).
_ANCHOR_FIELDS = (
    ("filePath", "file_path"),
    ("errorMessage", "error_message"),
    ("enclosingFn", "enclosing_fn"),
)


def _fits(item: dict[str, Any], record: Record) -> bool:
    return all(
        key not in item or item[key] == getattr(record, attr) for key, attr in _ANCHOR_FIELDS
    )


def _anchored(item: dict[str, Any], record: Record, records: RecordTable) -> Record | None:
    """The record a write-up covers: the one with its id, unless the write-up names another
    function (or file, or message); then the one site of the same file and message that fits
    what it names, and None when no site or several do."""
    if _fits(item, record):
        return record
    fitting = [
        other
        for other in records.values()
        if other.repo == record.repo
        and other.file_path == item.get("filePath", record.file_path)
        and other.error_message == item.get("errorMessage", record.error_message)
        and _fits(item, other)
    ]
    return fitting[0] if len(fitting) == 1 else None


def _site_words(record: Record, item: dict[str, Any] | None = None) -> str:
    """`fn` in file: the record's site, or (with `item`) the site a write-up names over it."""
    named = {key: getattr(record, attr) for key, attr in _ANCHOR_FIELDS} | (item or {})
    where = named["filePath"] or "?"
    return f"`{named['enclosingFn']}` in {where}" if named["enclosingFn"] else where


# A catalog folder whose maintainer lets unreviewed drafts answer (`catalog review
# --drafts-answer on`) holds this file in its drafts folder.
DRAFTS_DIR = "drafts"
DRAFT_SUFFIX = ".draft"  # not a catalog suffix: a draft is never read as a record
DRAFTS_ANSWER_FILE = "ANSWER"


def drafts_answer(folder: Path) -> bool:
    return (folder / DRAFTS_DIR / DRAFTS_ANSWER_FILE).is_file()


def _apply_answering_drafts(
    folder: Path, records: RecordTable, overlaid: set[str], errors: list[Problem]
) -> None:
    """With the folder's switch on, each draft (`drafts/<id>.draft`, status draft, made at the
    record's own commit) is laid over a record no write-up covers, tagged `unreviewed-draft`
    so the answer says so."""
    if not drafts_answer(folder):
        return
    for file in sorted((folder / DRAFTS_DIR).glob(f"*{DRAFT_SUFFIX}")):
        try:
            entry = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # a draft being written, or broken: `catalog review` says which
        if not isinstance(entry, dict) or entry.get("status") != "draft":
            continue
        record_id = entry.get("id")
        writeup = entry.get("writeup")
        if not isinstance(record_id, str) or record_id in overlaid or record_id not in records:
            continue
        record = records[record_id]
        if not isinstance(writeup, dict) or entry.get("commit") != record.analyzed_sha:
            continue  # stale: made for other code
        merged = record_to_dict(record) | writeup
        merged["tags"] = [*merged.get("tags", []), UNREVIEWED_TAG]
        problems, _notes = check_record(merged, str(file), None)
        if problems:
            errors.extend(problems)
            continue
        records.add(merged, str(file), None)
        overlaid.add(record_id)


def _site_key(record: Record) -> tuple[str, str | None, str]:
    return (record.repo, record.file_path, normalise_message(record.error_message))


def _drop_superseded_skeletons(records: RecordTable, overlaid: set[str]) -> RecordTable:
    """Where a written-up record and a bare site describe one site, keep only the write-up.

    A write-up laid over a scanned record (`overlaid`) is that site already: the other sites
    with its message stay."""
    written = {
        _site_key(record)
        for record in map(records.__getitem__, records.written_up())
        if record.file_path and record.id not in overlaid
    }
    if not written:
        return records
    superseded = {
        record.id
        for record in map(records.__getitem__, records.at_files({p for _, p, _ in written if p}))
        if not record.has_write_up and _site_key(record) in written
    }
    records.drop(superseded)
    return records


def _parse_families(document: dict, file: str, errors: list[Problem]) -> list[Family]:
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
