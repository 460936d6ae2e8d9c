"""Turning outside documents into catalog records (camelCase dicts, as files spell them).

Three inputs:

* JSON records: `{"record": {...}, "datasetVersion": ...}`, a bare record, or an array of either.
* Rendered pages: the same record shown as text (see tests/fixtures/seeds/000-002), with headings
  such as "What it means", "Source", "Solutions", and a footer naming repo, commit and id.
* Panic-site lists (JSON lines with id, file_path, line, kind, message_format, commit), which
  become skeleton records through `bot.catalog.sites.skeleton_record`.

Everything a record says is taken from its document; nothing is filled in by guesswork. Where a
page leaves a field unsaid (slug, tags, severity, messagePattern), the field is left out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from bot.catalog.model import FIELDS
from bot.catalog.sites import error_type_for_kind, pinned_url, skeleton_record


class ImportFormatError(ValueError):
    """A document that cannot be imported; the message names the file and what is wrong."""


# ---------------------------------------------------------------------------------------------
# Rendered pages
# ---------------------------------------------------------------------------------------------

# Top-level headings in the order pages show them. A heading is a line equal to one of these,
# with a blank line (or the page's start) before it; it is only taken as a heading when it comes
# after the section we are in, so a code line reading "Source" inside "Example fix" stays code.
_HEADINGS = (
    "Error message",
    "What it means",
    "Source",
    "Solutions",
    "Example fix",
    "Defensive patterns",
    "Prevention",
    "When it happens",
    "Related errors",
)
_HEADING_RANK = {name: rank for rank, name in enumerate(_HEADINGS)}

# Sub-headings inside "Defensive patterns", in page order, and the record field each fills.
_DEFENSIVE = {
    "Validate before calling": "validationCode",
    "Type guard": "typeGuard",
    "Try / catch": "tryCatchPattern",
}
_DEFENSIVE_RANK = {name: rank for rank, name in enumerate(_DEFENSIVE)}

_FOOTER = re.compile(
    r"^AI-assisted analysis of (?P<repo>[\w.-]+/[\w.-]+)@(?P<sha>[0-9A-Fa-f]{7,40})"
    r" \((?P<date>[^)]*)\)\.\s+Data as JSON: /api/errors/(?P<id>[\w-]+)\b"
)
_TITLE_QUESTION = re.compile(r'^What causes "(?P<message>.*)" in (?P<repo>[\w.-]+/[\w.-]+)\?$')
_TITLE_LABEL = re.compile(r"^(?P<repo>[\w.-]+/[\w.-]+) · (?P<label>\S.*)$")
_THROWN_AT = re.compile(r"^Thrown at (?P<file>\S+?):(?P<line>\d+)\s*$")
_PINNED = re.compile(r"^View on GitHub \(pinned to (?P<sha>[0-9A-Fa-f]{7,40})\)\s*$")
_NUMBERED = re.compile(r"^(\d+)[.)]\s+(.*)$")
_BULLET = re.compile(r"^\s*(?:[•*\-‣◦▪]|\d+[.)])\s+(.*)$")
_STRATEGY = re.compile(r"^Strategy:\s*(?P<value>.*\S)\s*$")

# A macro call (`panic!(`, `assert!(`, ...) or `.expect(` opening on a line before its message.
_CALL = re.compile(r"(?:\b(?P<macro>[a-z_]+)!\s*[(\[{]|\.(?P<method>expect)\s*\()")
# The calls whose kind names the record's errorType (as `sites.error_type_for_kind` spells it).
_PANIC_KINDS = frozenset(
    {
        "panic!",
        "unimplemented!",
        "todo!",
        "unreachable!",
        "assert!",
        "assert_eq!",
        "assert_ne!",
        "debug_assert!",
        "debug_assert_eq!",
        "debug_assert_ne!",
        ".expect",
    }
)


def _blank(line: str) -> bool:
    return not line.strip()


def _trim_blank_lines(lines: list[str]) -> list[str]:
    """Drop blank lines at both ends; inner lines (and their indentation) stay as they are."""
    start, end = 0, len(lines)
    while start < end and _blank(lines[start]):
        start += 1
    while end > start and _blank(lines[end - 1]):
        end -= 1
    return [line.rstrip() for line in lines[start:end]]


def _paragraphs(lines: list[str]) -> list[str]:
    """Prose paragraphs: runs of non-blank lines, each run joined with spaces."""
    out: list[str] = []
    current: list[str] = []
    for line in [*lines, ""]:
        if _blank(line):
            if current:
                out.append(" ".join(part.strip() for part in current))
                current = []
        else:
            current.append(line)
    return out


def _split_sections(
    lines: list[str], ranks: dict[str, int], start_rank: int = -1
) -> tuple[list[str], dict[str, list[str]]]:
    """Split lines at headings (in `ranks`, page order only); return (preamble, sections)."""
    preamble: list[str] = []
    sections: dict[str, list[str]] = {}
    current: list[str] = preamble
    rank = start_rank
    for index, line in enumerate(lines):
        name = line.strip()
        heading_rank = ranks.get(name)
        if (
            heading_rank is not None
            and heading_rank > rank
            and line == line.lstrip()  # headings are not indented; code lines usually are
            and (index == 0 or _blank(lines[index - 1]))
            and (index + 1 == len(lines) or _blank(lines[index + 1]))
        ):
            rank = heading_rank
            current = sections.setdefault(name, [])
            continue
        current.append(line)
    return preamble, sections


def _list_items(lines: list[str]) -> list[str]:
    """Items of a list section: bullets or numbers stripped; unmarked lines are one item each.

    A line that does not start with a marker while the list is marked continues the item above
    (long items may wrap).
    """
    items: list[str] = []
    marked = any(_BULLET.match(line) for line in lines if not _blank(line))
    for line in lines:
        if _blank(line):
            continue
        found = _BULLET.match(line)
        if found:
            items.append(found.group(1).rstrip())
        elif marked and items:
            items[-1] = f"{items[-1]} {line.strip()}"
        else:
            items.append(line.strip())
    return items


def _block(lines: list[str]) -> str | None:
    """A code or prose block kept verbatim (blank lines at the ends dropped); None when empty."""
    kept = _trim_blank_lines(lines)
    return "\n".join(kept) if kept else None


def _rust_escaped(message: str) -> str:
    return message.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _anchor(code_lines: list[str], message: str) -> tuple[int, str | None] | None:
    """(index, call kind) of the excerpt line that raises `message`, when exactly one does.

    The line must hold the message's first line as a string literal (as written, or with Rust
    escapes) with the call that raises it (`panic!(`, `.expect(`, ...) opening before it on the
    same line, so a multi-line call whose message sits below the macro is not mistaken for the
    reported line. The kind is that call's (`panic!`), or None for other macros (`format!`).
    """
    first = message.split("\n", 1)[0].strip()
    if not first:
        return None
    needles = {f'"{first}', f'"{_rust_escaped(first)}'}
    hits: list[tuple[int, str | None]] = []
    for index, line in enumerate(code_lines):
        at = min((line.find(n) for n in needles if n in line), default=-1)
        calls = list(_CALL.finditer(line[:at])) if at >= 0 else []
        if calls:
            last = calls[-1]
            kind = f"{last['macro']}!" if last["macro"] else f".{last['method']}"
            hits.append((index, kind if kind in _PANIC_KINDS else None))
    return hits[0] if len(hits) == 1 else None


def _error(origin: str, message: str) -> ImportFormatError:
    return ImportFormatError(f"{origin}: {message}" if origin else message)


def parse_page(text: str, origin: str = "") -> dict[str, Any]:
    """Read a rendered record page into a camelCase record dict.

    Raises ImportFormatError when the page lacks what every record needs (id, repo, message).
    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff").split("\n")
    footer_at = None
    footer = None
    for index in range(len(lines) - 1, -1, -1):
        footer = _FOOTER.match(lines[index].strip())
        if footer:
            footer_at = index
            break
    if footer is None or footer_at is None:
        raise _error(
            origin,
            "no footer line `AI-assisted analysis of OWNER/REPO@SHA (DATE). Data as JSON: "
            "/api/errors/ID` was found, so the page names no record id",
        )
    preamble, sections = _split_sections(lines[:footer_at], _HEADING_RANK)

    record: dict[str, Any] = {"id": footer["id"], "repo": footer["repo"]}

    # Title: `What causes "MSG" in REPO?` or `REPO · LABEL`. The "Error message" section is the
    # authority for the message; the title's is the fallback.
    title_message = None
    for line in preamble:
        question = _TITLE_QUESTION.match(line.strip())
        label = _TITLE_LABEL.match(line.strip())
        found = question or label
        if found:
            if found["repo"] != footer["repo"]:
                raise _error(
                    origin,
                    f"the title names {found['repo']} but the footer names {footer['repo']}",
                )
            if question:
                title_message = question["message"]
            break
    message = _block(sections.get("Error message", [])) or title_message
    if not message:
        raise _error(origin, "the page has no `Error message` section and no title message")
    record["errorMessage"] = message

    documentation = _paragraphs(sections.get("What it means", []))
    if documentation:
        record["documentation"] = "\n\n".join(documentation)

    _read_source(sections.get("Source"), record)

    if "Solutions" in sections:
        record["solutions"] = _solutions(sections["Solutions"])

    example = _block(sections.get("Example fix", []))
    if example:
        record["exampleFix"] = example

    if "Defensive patterns" in sections:
        _read_defensive(sections["Defensive patterns"], record)

    if "Prevention" in sections:
        record["preventionTips"] = _list_items(sections["Prevention"])

    if "When it happens" in sections:
        for paragraph in _paragraphs(sections["When it happens"]):
            key, _, value = paragraph.partition(":")
            field = {"Trigger": "triggerScenarios", "Common situations": "commonSituations"}.get(
                key.strip()
            )
            if field and value.strip():
                record[field] = value.strip()

    if "Related errors" in sections:
        # Kept as shown, truncated entries included: the page is the record's only source.
        record["relatedErrors"] = _list_items(sections["Related errors"])

    record["analyzedSha"] = footer["sha"]  # as the page gives it (short); the full one is unsaid
    date = footer["date"].strip()
    if date:
        record["analyzedAt"] = date
    return _canonical(record)


def _solutions(lines: list[str]) -> list[str]:
    """Numbered items (`1. ...`, wrapped lines joined) or, unnumbered, one solution a line."""
    items: list[str] = []
    numbered = any(_NUMBERED.match(line) for line in lines if not _blank(line))
    for line in lines:
        if _blank(line):
            continue
        found = _NUMBERED.match(line) if numbered else None
        if found:
            items.append(found.group(2).rstrip())
        elif numbered and items:
            items[-1] = f"{items[-1]} {line.strip()}"
        else:
            items.append(line.strip())
    return items


def _read_source(lines: list[str] | None, record: dict[str, Any]) -> None:
    if not lines:
        return
    body = list(lines)
    thrown = None
    for index, line in enumerate(body):
        thrown = _THROWN_AT.match(line.strip())
        if thrown:
            del body[: index + 1]
            break
    sha = None
    for index in range(len(body) - 1, -1, -1):
        pinned = _PINNED.match(body[index].strip())
        if pinned:
            sha = pinned["sha"]
            del body[index:]
            break
    if thrown:
        record["filePath"] = thrown["file"]
        record["lineNumber"] = int(thrown["line"])
    code_lines = _trim_blank_lines(body)
    if code_lines:
        record["sourceCode"] = "\n".join(code_lines)
    if thrown and code_lines:
        anchor = _anchor(code_lines, record["errorMessage"])
        if anchor is not None:
            index, kind = anchor
            # The page does not print the excerpt's line numbers. They are derived only when
            # exactly one excerpt line raises the record's message: that line is the one the
            # page says the error is thrown at, so the excerpt starts `index` lines above it.
            # (Seed pages put that line 18 lines into a 37-line excerpt, as the JSON seed's
            # 1915..1951 around 1933 does, which is consistent with this; but the centring is
            # not assumed.)
            start = record["lineNumber"] - index
            record["sourceCodeStart"] = start
            record["sourceCodeEnd"] = start + len(code_lines) - 1
            if kind:
                # `panic!(` -> "panic", `.expect(` -> "expect": what the line shows.
                record["errorType"] = error_type_for_kind(kind)
    if sha and thrown:
        # GitHub resolves an abbreviated commit in /blob/ URLs, so the short SHA the page shows
        # gives a URL pinned to that commit without inventing the full SHA. It points at the
        # line the page says the error is thrown at (not at the excerpt's range, which the
        # page does not state).
        record["githubUrl"] = pinned_url(
            record["repo"], sha, record["filePath"], record["lineNumber"]
        )


def _read_defensive(lines: list[str], record: dict[str, Any]) -> None:
    preamble, parts = _split_sections(lines, _DEFENSIVE_RANK)
    for line in preamble:
        strategy = _STRATEGY.match(line.strip())
        if strategy:
            record["handlingStrategy"] = strategy["value"]
            break
    for heading, field in _DEFENSIVE.items():
        code = _block(parts.get(heading, []))
        if code:
            record[field] = code


def _canonical(record: dict[str, Any]) -> dict[str, Any]:
    """Keys in the catalog's canonical order (as `record_to_dict` writes them)."""
    order = {key: index for index, (key, _attr, _kind) in enumerate(FIELDS)}
    return dict(sorted(record.items(), key=lambda item: order.get(item[0], len(order))))


# ---------------------------------------------------------------------------------------------
# JSON documents and page files
# ---------------------------------------------------------------------------------------------


def _read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8").lstrip("\ufeff")
    except UnicodeDecodeError as exc:
        raise ImportFormatError(f"{path}: the file is not UTF-8 text (byte {exc.start})") from None


def looks_like_json(text: str) -> bool:
    return text.lstrip()[:1] in ("{", "[")


def records_from_json(document: Any, origin: str = "") -> list[dict[str, Any]]:
    """The record objects of a JSON document: wrapped, bare, or an array of either."""
    items = document if isinstance(document, list) else [document]
    out: list[dict[str, Any]] = []
    for number, item in enumerate(items):
        where = f"{origin} item {number}" if isinstance(document, list) else origin
        if isinstance(item, dict) and isinstance(item.get("record"), dict):
            item = item["record"]  # the wrapper's other keys (datasetVersion) are not record data
        if not isinstance(item, dict):
            raise _error(where, "a record must be a JSON object")
        if "id" not in item:
            raise _error(where, "the object has no `id`, so it is not a record")
        out.append(item)
    return out


def _records_from_json_lines(text: str, path: Path) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            document = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ImportFormatError(
                f"{path}:{number}: the line is not valid JSON: {exc.msg}"
            ) from None
        records.extend(records_from_json(document, f"{path}:{number}"))
    return records


def import_document(path: str | Path, format: str = "auto") -> list[dict[str, Any]]:
    """Records from a JSON document or a rendered page; `format` is auto, json or page."""
    path = Path(path)
    text = _read_text(path)
    kind = format
    if kind == "auto":
        kind = "json" if looks_like_json(text) else "page"
    if kind == "json":
        try:
            document = json.loads(text)
        except json.JSONDecodeError as exc:
            if exc.msg == "Extra data":  # several documents: JSON lines, one record a line
                return _records_from_json_lines(text, path)
            raise ImportFormatError(
                f"{path}:{exc.lineno}: the file is not valid JSON: {exc.msg}"
            ) from None
        return records_from_json(document, str(path))
    if kind == "page":
        return [parse_page(text, str(path))]
    raise ValueError(f"unknown document format {format!r}")


# ---------------------------------------------------------------------------------------------
# Panic-site lists
# ---------------------------------------------------------------------------------------------

_SITE_FIELDS = {"file_path": str, "line": int, "kind": str, "message_format": str, "commit": str}


def _read_sites(path: Path) -> list[tuple[int, dict[str, Any]]]:
    sites: list[tuple[int, dict[str, Any]]] = []
    for number, line in enumerate(_read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            site = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ImportFormatError(
                f"{path}:{number}: the line is not valid JSON: {exc.msg}"
            ) from None
        if not isinstance(site, dict):
            raise ImportFormatError(f"{path}:{number}: a panic site must be a JSON object")
        for field, kind in _SITE_FIELDS.items():
            value = site.get(field)
            if not isinstance(value, kind) or isinstance(value, bool):
                raise ImportFormatError(
                    f"{path}:{number}: `{field}` must be "
                    f"{'a whole number' if kind is int else 'text'}, got {value!r}"
                )
        sites.append((number, site))
    return sites


def looks_like_panic_sites(path: str | Path) -> bool:
    """True when the file's first non-blank line is a panic-site object."""
    try:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    first = json.loads(line)
                    return isinstance(first, dict) and all(k in first for k in _SITE_FIELDS)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return False


def skeletons_from_sites(sites: Iterable[dict[str, Any]], repo: str) -> list[dict[str, Any]]:
    """Skeleton records for panic sites, in the order given.

    `occurrence` numbers the sites that share a file and message, by line (0 for the first), so
    each gets its own stable id.
    """
    # `panic!("")` has no message to match on, and a record needs a non-empty errorMessage.
    sites = [s for s in sites if str(s.get("message_format") or "").strip()]
    order = sorted(
        range(len(sites)),
        key=lambda i: (sites[i]["file_path"], sites[i]["message_format"], sites[i]["line"], i),
    )
    occurrence: dict[int, int] = {}
    seen: dict[tuple[str, str], int] = {}
    for i in order:
        key = (sites[i]["file_path"], sites[i]["message_format"])
        occurrence[i] = seen.get(key, 0)
        seen[key] = occurrence[i] + 1
    return [
        skeleton_record(
            repo=repo,
            file_path=site["file_path"],
            line=site["line"],
            kind=site["kind"],
            message_format=site["message_format"],
            commit=site["commit"],
            occurrence=occurrence[i],
        )
        for i, site in enumerate(sites)
    ]


def import_panic_sites(path: str | Path, repo: str) -> list[dict[str, Any]]:
    """Skeleton records for a panic-site list: JSON lines of `file_path`, `line`, `kind`,
    `message_format` and `commit` (what `catalog scan --format sites` writes)."""
    path = Path(path)
    return skeletons_from_sites((site for _number, site in _read_sites(path)), repo)
