"""What the pages show of a record, as plain data: lookups, filters, lineage, history facts."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from bot.catalog.loader import Catalog
from bot.catalog.model import Record, record_to_dict
from bot.core.match.releases import ReleaseHistory, history_events

PAGE_SIZE = 50
# A record id as the catalog spells them; anything else is a 404 without a lookup (and never
# a path: ids only index the catalog's own dict).
ID_SHAPE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
MIN_PREFIX = 4  # shorter prefixes fit too many records to mean one
_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}(?:T[\d:.]+Z?)?$")


def record_json(record: Record) -> dict[str, Any]:
    """The record in the catalog's schema, field for field as its file holds it."""
    return record_to_dict(record)


def dataset_version(catalog: Catalog) -> str | None:
    """The catalog's version: the newest change any record states (contentChangedAt, else
    analyzedAt), so an unchanged catalog keeps its version across exports."""
    newest: str | None = None
    for record in catalog:
        for stamp in (record.content_changed_at, record.analyzed_at):
            if stamp and _TIMESTAMP.match(stamp) and (newest is None or stamp > newest):
                newest = stamp
    return newest


@dataclass(frozen=True, slots=True)
class Row:
    """One record in the list, with what its filters test."""

    id: str
    repo: str
    message: str
    file_path: str | None
    line: int | None
    crate: str | None
    family: str | None
    written: bool
    removed: bool
    kind: str = ""  # the record's errorType: panic, assert, expect, unimplemented, ...

    @property
    def haystack(self) -> str:
        """What `?q=` searches: the message, the crate and the file, lower-cased."""
        return f"{self.message} {self.crate or ''} {self.file_path or ''}".lower()


@dataclass(frozen=True, slots=True)
class Filters:
    project: str = ""
    crate: str = ""
    family: str = ""
    written: str = ""  # "yes", "no" or "" (any)
    removed: str = ""
    q: str = ""  # words that must all appear in the message, crate or file
    kind: str = ""
    page: int = 1

    @classmethod
    def of(cls, query: Mapping[str, str]) -> Filters:
        def choice(name: str) -> str:
            value = query.get(name, "")
            return value if value in ("yes", "no") else ""

        try:
            page = max(1, min(int(query.get("page", "1")), 1_000_000))
        except ValueError:
            page = 1
        return cls(
            project=(query.get("project", "") or query.get("repo", ""))[:200],
            crate=query.get("crate", "")[:200],
            family=query.get("family", "")[:200],
            written=choice("written"),
            removed=choice("removed"),
            q=" ".join(query.get("q", "").split())[:200],
            kind=query.get("kind", "")[:40],
            page=page,
        )

    def keep(self, row: Row) -> bool:
        return (
            (not self.project or row.repo == self.project)
            and (not self.crate or row.crate == self.crate)
            and (not self.family or row.family == self.family)
            and (not self.written or row.written == (self.written == "yes"))
            and (not self.removed or row.removed == (self.removed == "yes"))
            and (not self.kind or row.kind == self.kind)
            and (not self.q or all(w in row.haystack for w in self.q.lower().split()))
        )

    def query(self, page: int) -> str:
        """The query string of this filter at another page."""
        parts = [
            (k, v)
            for k, v in (
                ("project", self.project),
                ("crate", self.crate),
                ("family", self.family),
                ("written", self.written),
                ("removed", self.removed),
                ("q", self.q),
                ("kind", self.kind),
            )
            if v
        ]
        if page > 1:
            parts.append(("page", str(page)))
        from urllib.parse import urlencode  # why: only the list builds queries

        return ("?" + urlencode(parts)) if parts else ""


class Lookup:
    """The catalog's records by id and by id prefix, and the list's rows (built once)."""

    def __init__(self, catalog: Catalog):
        self.catalog = catalog
        self.ids = sorted(catalog.records)
        rows = []
        for record in catalog:
            family = catalog.family(record.id)
            rows.append(
                Row(
                    record.id,
                    record.repo,
                    " ".join(record.error_message.split()),
                    record.file_path,
                    record.line_number,
                    record.crate or _crate_tag(record),
                    family.id if family is not None else None,
                    record.has_write_up,
                    record.removed_at is not None,
                    record.error_type or "",
                )
            )
        # written-up records first, then by project, file and line: the list reads as a catalog
        rows.sort(key=lambda r: (not r.written, r.repo, r.file_path or "", r.line or 0, r.id))
        self.rows = rows
        self.projects = sorted({r.repo for r in rows})
        self.crates = sorted({r.crate for r in rows if r.crate})
        self.families = sorted({r.family for r in rows if r.family})
        self.kinds = sorted({r.kind for r in rows if r.kind})

    def find(self, ident: str) -> tuple[Record | None, str | None]:
        """(the record, None) for an id; (None, the id) for a unique prefix; (None, None)."""
        if not ID_SHAPE.match(ident):
            return None, None
        record = self.catalog.get(ident)
        if record is not None:
            return record, None
        if len(ident) < MIN_PREFIX:
            return None, None
        at = bisect.bisect_left(self.ids, ident)
        fits = self.ids[at : at + 2]
        fits = [i for i in fits if i.startswith(ident)]
        return (None, fits[0]) if len(fits) == 1 else (None, None)

    def ambiguous(self, ident: str) -> bool:
        """More than one id starts with `ident` (a 404 page says so)."""
        at = bisect.bisect_left(self.ids, ident)
        return len([i for i in self.ids[at : at + 2] if i.startswith(ident)]) > 1

    def select(self, filters: Filters) -> tuple[list[Row], int, int]:
        """(the page's rows, how many match, how many pages)."""
        kept = [r for r in self.rows if filters.keep(r)]
        pages = max(1, -(-len(kept) // PAGE_SIZE))
        page = min(filters.page, pages)
        return kept[(page - 1) * PAGE_SIZE : page * PAGE_SIZE], len(kept), pages


def _crate_tag(record: Record) -> str | None:
    for tag in record.tags:
        if tag.startswith("crate:"):
            return tag[len("crate:") :]
    return None


@dataclass(frozen=True, slots=True)
class ReleaseRow:
    version: str
    url: str | None  # the site at that release's commit
    where: str | None  # `file:line`, None where the site was not in that release


def lineage_rows(history: ReleaseHistory | None, record_id: str) -> list[ReleaseRow]:
    """The site in every release of the history (empty when the history does not know it)."""
    if history is None:
        return []
    index = history.by_record.get(record_id)
    if index is None:
        return []
    lineage = history.lineages[index]
    rows = []
    for number, release in enumerate(history.releases):
        state = lineage.state(number)
        if state is None:
            rows.append(ReleaseRow(release.version, None, None))
            continue
        file, line, _message = state
        url = f"https://github.com/{history.repo}/blob/{release.commit}/{file}#L{line}"
        rows.append(ReleaseRow(release.version, url, f"{file}:{line}"))
    return rows


def history_facts(history: ReleaseHistory | None, record_id: str) -> list[dict[str, Any]]:
    """What changed the site, oldest first: event, version, title, url, detail."""
    return [
        {
            "event": e.event,
            "version": e.version,
            "title": e.title or e.commit[:10],
            "url": e.url,
            "detail": e.detail,
        }
        for e in history_events(history, record_id)
    ]


def public_issue_rows(
    rows: Iterable[Mapping[str, Any]], public_repos: Iterable[str]
) -> list[dict[str, Any]]:
    """Known issues of the given (public) repositories only."""
    allowed = {r.lower() for r in public_repos}
    seen: dict[tuple[str, int], str] = {}
    for row in rows:
        repo = str(row.get("repo", "")).lower()
        if repo not in allowed:
            continue
        key = (repo, int(row["number"]))
        state = "closed" if row.get("state") == "closed" else "open"
        if seen.get(key) != "closed":
            seen[key] = state
    return [
        {"repo": r, "number": n, "state": s, "url": f"https://github.com/{r}/issues/{n}"}
        for (r, n), s in sorted(seen.items())
    ]
