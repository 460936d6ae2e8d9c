"""Skeleton records for bare panic sites: the shared id scheme and record shape.

Both `catalog import --format panic-sites` and `catalog scan` build records here, so a site
gets the same id and fields whichever way it entered the catalog.
"""

from __future__ import annotations

import hashlib
from typing import Any

from bot.catalog.model import CRATE_TAG_PREFIX


# A panic-site kind ("panic!", ".expect", ...) becomes the record's `errorType` without its
# punctuation, so the matcher knows how Rust prints the message (a prefix, an `: err` suffix).
def error_type_for_kind(kind: str) -> str:
    return kind.strip(".!") or "panic"


def site_id(repo: str, file_path: str, message_format: str, occurrence: int = 0) -> str:
    """A stable id from repo, file and message: it survives the site moving to another line.

    `occurrence` tells apart the same message at several places in one file (0 for the first,
    by line order); it is left out of the hash for the first so most ids never depend on it.
    """
    key = f"{repo}\n{file_path}\n{message_format}"
    if occurrence:
        key += f"\n#{occurrence}"
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def pinned_url(repo: str, sha: str, file_path: str, line: int | None) -> str:
    url = f"https://github.com/{repo}/blob/{sha}/{file_path}"
    return f"{url}#L{line}" if line else url


def crate_of(file_path: str) -> str | None:
    parts = file_path.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "crates" else None


def with_enclosing_fn(record: dict[str, Any], name: str | None) -> dict[str, Any]:
    """`record` with `enclosingFn` set after `lineNumber` (the canonical order), when known."""
    if not name:
        return record
    out: dict[str, Any] = {}
    for key, value in record.items():
        if key != "enclosingFn":
            out[key] = value
        if key == "lineNumber":
            out["enclosingFn"] = name
    if "enclosingFn" not in out:
        out["enclosingFn"] = name
    return out


def skeleton_record(
    *,
    repo: str,
    file_path: str,
    line: int,
    kind: str,
    message_format: str,
    commit: str,
    occurrence: int = 0,
) -> dict[str, Any]:
    """The camelCase record for a site nobody has written up yet."""
    tags = ["rust", "panic-site"]
    crate = crate_of(file_path)
    if crate:
        tags.append(f"{CRATE_TAG_PREFIX}{crate}")
    return {
        "id": site_id(repo, file_path, message_format, occurrence),
        "repo": repo,
        "errorMessage": message_format,
        "errorType": error_type_for_kind(kind),
        "filePath": file_path,
        "lineNumber": line,
        "githubUrl": pinned_url(repo, commit, file_path, line),
        "tags": tags,
        "analyzedSha": commit,
    }
