"""Reading a catalog's files for an update, and writing them back with their layout kept.

Records stay in the file, document and position they came from (`.jsonl` lines, arrays,
`{"record": ...}` wrappers, bare records). Files with no changed record are copied byte for
byte; in a `.jsonl` file only the changed lines are rewritten.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.catalog.loader import catalog_files


@dataclass(slots=True)
class _Document:
    value: Any
    line: int | None  # for a .jsonl line
    raw: str  # the document's text as read


@dataclass(slots=True)
class CatalogFile:
    path: Path
    relpath: str
    documents: list[_Document] = field(default_factory=list)
    is_jsonl: bool = False


@dataclass(frozen=True, slots=True)
class RecordRef:
    file: int
    document: int
    index: int | None  # position in an array document, or None
    wrapped: bool  # inside {"record": ...}


@dataclass(slots=True)
class CatalogFiles:
    root: Path  # the folder relative paths start from
    files: list[CatalogFile]
    records: list[dict[str, Any]]
    refs: list[RecordRef]

    def origin(self, index: int) -> str:
        ref = self.refs[index]
        file = self.files[ref.file]
        line = file.documents[ref.document].line
        return file.relpath if line is None else f"{file.relpath}:{line}"


def _items(value: Any) -> list[tuple[int | None, bool, dict[str, Any]]] | None:
    """(array index, wrapped, record) for each record in a document; None for families."""
    if isinstance(value, dict):
        if "families" in value and "id" not in value:
            return None
        if isinstance(value.get("record"), dict):
            return [(None, True, value["record"])]
        return [(None, False, value)]
    if isinstance(value, list):
        out: list[tuple[int | None, bool, dict[str, Any]]] = []
        for i, item in enumerate(value):
            if isinstance(item, dict) and isinstance(item.get("record"), dict):
                out.append((i, True, item["record"]))
            elif isinstance(item, dict):
                out.append((i, False, item))
        return out
    return []


def read_catalog(path: str | Path) -> CatalogFiles:
    """Every record under `path` (a file or a folder), with where it came from.

    Raises ValueError for a file that is not valid JSON (run `catalog lint` for the details).
    """
    path = Path(path)
    root = path if path.is_dir() else path.parent
    files: list[CatalogFile] = []
    records: list[dict[str, Any]] = []
    refs: list[RecordRef] = []
    for file_path in catalog_files(path):
        text = file_path.read_text(encoding="utf-8")
        file = CatalogFile(file_path, file_path.relative_to(root).as_posix())
        file.is_jsonl = file_path.suffix == ".jsonl"
        try:
            if file.is_jsonl:
                for number, line in enumerate(text.splitlines(), start=1):
                    if line.strip():
                        file.documents.append(_Document(json.loads(line), number, line))
            else:
                file.documents.append(_Document(json.loads(text), None, text))
        except json.JSONDecodeError as exc:
            problem = f"{file_path}: not valid JSON: {exc.msg} (line {exc.lineno})"
            raise ValueError(problem) from None
        for d, document in enumerate(file.documents):
            for index, wrapped, record in _items(document.value) or []:
                records.append(record)
                refs.append(RecordRef(len(files), d, index, wrapped))
        files.append(file)
    return CatalogFiles(root, files, records, refs)


def _dump(value: Any, *, compact: bool) -> str:
    if compact:
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def write_catalog(
    catalog: CatalogFiles,
    updated: list[dict[str, Any]],
    changed: set[int],
    out_dir: str | Path,
    *,
    new_records: Sequence[dict[str, Any]] = (),
    new_file: str = "new-sites.jsonl",
) -> list[Path]:
    """Write the catalog to `out_dir` with `updated[i]` in place of record i.

    New records go to `new_file` (a `.jsonl` relative to `out_dir`), appended when the catalog
    already has that file. Returns the files written.
    """
    out_dir = Path(out_dir)
    touched_docs: dict[tuple[int, int], None] = {}
    for index in changed:
        ref = catalog.refs[index]
        document = catalog.files[ref.file].documents[ref.document]
        record = updated[index]
        if ref.index is None:
            if ref.wrapped:
                document.value["record"] = record
            else:
                document.value = record
        elif ref.wrapped:
            document.value[ref.index]["record"] = record
        else:
            document.value[ref.index] = record
        touched_docs[(ref.file, ref.document)] = None
    written: list[Path] = []
    new_lines = [_dump(r, compact=True) for r in new_records]
    for f, file in enumerate(catalog.files):
        target = out_dir / file.relpath
        target.parent.mkdir(parents=True, exist_ok=True)
        extra = new_lines if file.relpath == new_file else []
        if extra:
            new_lines = []
        touched = any((f, d) in touched_docs for d in range(len(file.documents)))
        if not touched and not extra:
            if target.resolve() != file.path.resolve():
                shutil.copyfile(file.path, target)
            continue
        if file.is_jsonl:
            lines = [
                _dump(doc.value, compact=True) if (f, d) in touched_docs else doc.raw
                for d, doc in enumerate(file.documents)
            ]
            target.write_text("\n".join([*lines, *extra]) + "\n", encoding="utf-8")
        else:
            target.write_text(_dump(file.documents[0].value, compact=False), encoding="utf-8")
        written.append(target)
    if new_lines:
        target = out_dir / new_file
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("\n".join(new_lines) + "\n", encoding="utf-8")
        written.append(target)
    return written


def read_records_file(path: str | Path) -> list[dict[str, Any]]:
    """Records from a `.json` (array, or one record) or `.jsonl` file, as `catalog scan` writes."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    out: list[dict[str, Any]] = []
    try:
        if path.suffix == ".jsonl":
            values = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            loaded = json.loads(text)
            values = loaded if isinstance(loaded, list) else [loaded]
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON: {exc.msg} (line {exc.lineno})") from None
    for value in values:
        if isinstance(value, dict) and isinstance(value.get("record"), dict):
            value = value["record"]
        if not isinstance(value, dict):
            raise ValueError(f"{path}: every entry must be a JSON object (a record)")
        out.append(value)
    return out
