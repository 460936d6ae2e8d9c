"""Links to a record's source, pinned to a full commit id: `module.rs:1498 @ d16f7ba`."""

from __future__ import annotations

import contextlib
import re
import weakref

from bot.catalog.model import Record
from bot.render import texts
from bot.render.answer.parts import SHORT_LIMIT, CatalogLike, SourceLink
from bot.render.markup import one_line, shorten


def page_url(public_url: str | None, record_id: str) -> str | None:
    """The record's page on the catalog's website (TRIAGE_PUBLIC_URL), or None without one."""
    if not public_url:
        return None
    return f"{public_url.rstrip('/')}/errors/{record_id}"


def short_sha(sha: str | None) -> str | None:
    return sha[:7] if sha else None


_FULL_SHA = re.compile(r"^[0-9a-f]{40}$")
_URL_SHA = re.compile(r"/(?:blob|tree|raw)/([0-9a-fA-F]{40})/")
_SHA_INDEX: weakref.WeakKeyDictionary[CatalogLike, tuple[str, ...]] = weakref.WeakKeyDictionary()


def _known_shas(catalog: CatalogLike | None) -> tuple[str, ...]:
    """Every full commit id the catalog names (analysedSha, githubUrl), to complete short ones."""
    if catalog is None:
        return ()
    try:
        return _SHA_INDEX[catalog]
    except (KeyError, TypeError):
        pass
    known = getattr(catalog, "known_commits", None)
    shas = tuple(sorted(known())) if known is not None else ()
    with contextlib.suppress(TypeError):  # a catalog that cannot be weakly referenced
        _SHA_INDEX[catalog] = shas
    return shas


def full_sha(sha: str | None, catalog: CatalogLike | None = None) -> str | None:
    """The 40-character commit id for `sha`: itself when full, else the one full id the catalog
    knows that starts with it; None when it cannot be completed (a link would be ambiguous)."""
    if not sha:
        return None
    sha = sha.strip().lower()
    if _FULL_SHA.match(sha):
        return sha
    if len(sha) < 7:
        return None
    fits = [full for full in _known_shas(catalog) if full.startswith(sha)]
    return fits[0] if len(fits) == 1 else None


def source_link(
    record: Record, catalog: CatalogLike | None = None, *, at_sha: str | None = None
) -> SourceLink | None:
    """The pinned source at the full commit id: built from sha/path/line.

    Building it gives the exact line even when `githubUrl` points at the whole snippet
    (`#L1915-L1951`). `at_sha` pins it to another record's commit (related errors): the line
    is kept only when this record was analysed at that same commit.
    """
    path, line = record.file_path, record.line_number
    own = full_sha(record.analyzed_sha, catalog)
    if own is None:
        found = _URL_SHA.search(record.github_url or "")
        own = found.group(1).lower() if found else None
    # A short id nothing completes is said as text, never linked: every link names a full SHA.
    sha = own or (one_line(record.analyzed_sha).strip() if record.analyzed_sha else None)
    if at_sha is not None:
        sha = at_sha
        line = line if own == at_sha else None
    url = None
    if sha and _FULL_SHA.match(sha) and path and record.repo:
        url = f"https://github.com/{record.repo}/blob/{sha}/{path}"
        url = f"{url}#L{line}" if line else url
    if not path and not url:
        return None
    name = shorten(path.rsplit("/", 1)[-1], SHORT_LIMIT) if path else ""
    if line and sha:
        label = texts.SOURCE_LABEL.format(file=name, line=line, sha=short_sha(sha))
    elif sha:
        label = texts.SOURCE_LABEL_NO_LINE.format(file=name, sha=short_sha(sha))
    elif line:
        label = texts.SOURCE_LABEL_NO_SHA.format(file=name, line=line)
    else:
        label = name
    return SourceLink(label=label, url=url, path=path, line=line)
