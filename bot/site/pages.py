"""The pages: Jinja2 templates over the catalog (autoescaped; markdown with raw HTML off)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import orjson
from jinja2 import Environment, PackageLoader, select_autoescape
from markdown_it import MarkdownIt
from markupsafe import Markup

from bot.app import Triage
from bot.catalog.model import Record, replace
from bot.render.answer.build import build_answer, record_answer
from bot.render.answer.links import source_link
from bot.render.github import render_comment
from bot.site.data import (
    Filters,
    Lookup,
    dataset_version,
    history_facts,
    lineage_rows,
    record_json,
)

MAX_PASTE = 256 * 1024  # bytes of text the form and POST /api/match read
CSS_NAME = "site.css"
# The only tags of a GitHub comment the form shows as tags (they carry no attributes); every
# other `<` of the comment stays text.
_OWN_TAG = re.compile(r"<(/?(?:details|summary|sub))>")
_CODE_SPANS = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
_TAG_MARK = re.compile("\ue000(\\d+)\ue001")  # private-use characters: markdown keeps them
_MARKER_LINE = re.compile(r"^<!-- triage-bot[^\n]*-->\n?")


@dataclass(frozen=True)
class Routes:
    """Where pages are, relative to the site's root: served (`/errors/ID`) or exported as files
    (`errors/ID/index.html`, read from disk or GitHub Pages, so every link is relative)."""

    static: bool = False

    def root(self, depth: int) -> str:
        if not self.static:
            return "/"
        return "../" * depth if depth else "./"

    def record(self, record_id: str) -> str:
        return f"errors/{record_id}/" if self.static else f"errors/{record_id}"

    def api(self, record_id: str) -> str:
        return f"api/errors/{record_id}.json" if self.static else f"api/errors/{record_id}"

    def list(self, query: str = "", page: int = 1) -> str:
        if self.static:
            return "errors/" if page <= 1 else f"errors/page/{page}/"
        return f"errors{query}"

    @property
    def home(self) -> str:
        return "" if not self.static else "errors/"


class Site:
    """Every page of one catalog. Build once (it indexes the list); rendering is read-only."""

    def __init__(self, triage: Triage, *, static: bool = False):
        self.triage = triage
        self.catalog = triage.catalog
        self.routes = Routes(static)
        self.lookup = Lookup(self.catalog)
        self.version = dataset_version(self.catalog)
        self.env = Environment(
            loader=PackageLoader("bot.site", "templates"),
            autoescape=select_autoescape(default=True, default_for_string=True),
            trim_blocks=False,
            lstrip_blocks=False,
        )
        self.md = MarkdownIt("commonmark", {"html": False})
        # related messages resolved once per record: a cut-short one scans the catalog
        self._related_ids: dict[str, list[tuple[str, str | None]]] = {}

    # --- helpers ------------------------------------------------------------------------------

    def _markdown(self, text: str | None) -> Markup | None:
        if not text:
            return None
        return Markup(self.md.render(text))  # raw HTML off: markdown-it escapes

    def _inline(self, text: str) -> Markup:
        """One line of a family's (hand-written) markdown: code spans, emphasis."""
        return Markup(self.md.renderInline(text))  # raw HTML off: markdown-it escapes

    def _page(self, template: str, depth: int, **context: Any) -> str:
        root = self.routes.root(depth)
        return self.env.get_template(template).render(
            root=root,
            css=CSS_NAME,
            home_href=self.routes.home,
            list_href=self.routes.list(),
            **context,
        )

    def css(self) -> str:
        return self._asset(CSS_NAME)

    def search_script(self) -> str:
        return self._asset("search.js")

    def _asset(self, name: str) -> str:
        loader = self.env.loader
        assert loader is not None
        return loader.get_source(self.env, name)[0]

    def search_index(self) -> bytes:
        """The static export's search data: `[id, repo, crate, kind, file, message]` a record."""
        rows = [
            [r.id, r.repo, r.crate or "", r.kind, r.file_path or "", r.message[:300]]
            for r in self.lookup.rows
        ]
        return orjson.dumps(rows)

    # --- /errors/ID ---------------------------------------------------------------------------

    def record_page(self, record: Record, issues: Sequence[Mapping[str, Any]] = ()) -> str:
        depth = 2 if self.routes.static else 0
        root = self.routes.root(depth)
        family = self.catalog.family(record.id)
        link = source_link(record, self.catalog)
        history = self.triage.history_for(record.repo)
        solutions = [s for s in record.solutions if not record.is_draft_text(s)]
        answer = record_answer(record, self.catalog)
        pinned_sha = _sha_in(link.url) if link and link.url else None
        return self._page(
            "error.html",
            depth,
            title=f"{' '.join(record.error_message.split())[:120]} · {record.repo}",
            r=record,
            label=record.severity or "error",  # as the seed pages label a record
            answer=answer,
            inline=self._inline,
            removed=record.removed_at is not None,
            documentation=self._markdown(_text(record.documentation)),
            source=link,
            pinned=(pinned_sha or "")[:10],
            excerpt=_excerpt(record),
            solutions=solutions,
            prevention=[t for t in record.prevention_tips if not record.is_draft_text(t)],
            trigger=_text(record.trigger_scenarios),
            situations=_text(record.common_situations),
            related=self._related(record, root),
            family=family,
            family_documentation=self._markdown(family.documentation) if family else None,
            family_solutions=[self._inline(s) for s in family.solutions] if family else [],
            family_prevention=[self._inline(t) for t in family.prevention_tips] if family else [],
            family_href=(
                root + self.routes.list(f"?family={quote(family.id)}")
                if family and not self.routes.static
                else root + self.routes.list()
            ),
            lineage=lineage_rows(history, record.id),
            history=history_facts(history, record.id),
            issues=list(issues),
            short_sha=(pinned_sha or record.analyzed_sha or "unknown")[:10],
            date=(record.analyzed_at or "")[:10],
            api_href=root + self.routes.api(record.id),
            report_url=f"https://github.com/{record.repo}/issues?q="
            + quote(f'"{" ".join(record.error_message.split())[:200]}"'),
        )

    def _related(self, record: Record, root: str) -> list[dict[str, str | None]]:
        found = self._related_ids.get(record.id)
        if found is None:
            found = self._related_ids[record.id] = self._resolve_related(record)
        return [
            {"message": message, "href": root + self.routes.record(rid) if rid else None}
            for message, rid in found
        ]

    def _resolve_related(self, record: Record) -> list[tuple[str, str | None]]:
        out: list[tuple[str, str | None]] = []
        for message in record.related_errors:
            found = self.catalog.by_message(message)
            same = [r for r in found if r.repo == record.repo] or found
            if not same and len(message.strip()) >= 12:
                # pages list related errors cut short ("… is not i"): a unique start is its record
                starts = self.catalog.by_message_start(" ".join(message.split()), record.repo)
                same = starts if len(starts) == 1 else []
            target = same[0] if same else None
            own = target is None or target.id == record.id
            out.append((message, None if own or target is None else target.id))
        return out

    def not_found_page(self, ident: str, ambiguous: bool = False) -> str:
        return self._page(
            "notfound.html",
            0,
            title="No such error",
            ident=ident[:200],
            ambiguous=ambiguous,
        )

    # --- /errors ------------------------------------------------------------------------------

    def list_page(self, filters: Filters, *, at_top: bool = False) -> str:
        """The list; `at_top`: the static export's index.html (its first page, at the root)."""
        rows, total, pages = self.lookup.select(filters)
        page = min(filters.page, pages)
        depth = (1 if page <= 1 else 3) if self.routes.static and not at_top else 0
        root = self.routes.root(depth)

        def at(number: int) -> str | None:
            if number < 1 or number > pages:
                return None
            return root + self.routes.list(filters.query(number), number)

        return self._page(
            "list.html",
            depth,
            title="Errors in the catalog",
            filtering=not self.routes.static,
            static_search=self.routes.static and page <= 1,
            f=filters,
            projects=self.lookup.projects,
            crates=self.lookup.crates,
            families=self.lookup.families,
            kinds=self.lookup.kinds,
            rows=[
                {
                    "href": root + self.routes.record(row.id),
                    "message": row.message[:300],
                    "repo": row.repo,
                    "site": f"{row.file_path}:{row.line}" if row.file_path else "",
                    "written": row.written,
                    "removed": row.removed,
                    "family": row.family,
                }
                for row in rows
            ],
            total=total,
            page=page,
            pages=pages,
            prev_href=at(page - 1),
            next_href=at(page + 1),
        )

    # --- / (the paste form) -------------------------------------------------------------------

    def home_page(self, text: str | None = None) -> str:
        context: dict[str, Any] = {"answered": None, "text": text or ""}
        if text is not None and text.strip():
            analysis = self.triage.analyse(text)
            answer = build_answer(
                analysis,
                self.catalog,
                history=self.triage.history,
                projects=self.triage.projects,
            )
            # A page has no reactions to count nor `/triage` commands: the comment without them.
            answer = replace(answer, wrong_hint=(), maintainers=())
            context.update(
                answered=answer.answered,
                answer_html=self.comment_html(render_comment(answer)),
                links=[
                    {
                        "href": "/" + self.routes.record(s.record.id),
                        "message": " ".join(s.record.error_message.split())[:160],
                    }
                    for s in answer.sections
                ],
            )
        return self._page(
            "home.html",
            0,
            title="panic-triage: what does this panic mean?",
            count=f"{len(self.catalog):,}",
            max_chars=MAX_PASTE,
            max_kb=MAX_PASTE // 1024,
            **context,
        )

    def comment_html(self, comment: str) -> Markup:
        """A GitHub comment as the form shows it: markdown with raw HTML off (a pasted tag is
        text), then the comment's own attribute-less <details>/<summary>/<sub> made tags."""
        tags: list[str] = []

        def mark(found: re.Match[str]) -> str:
            tags.append(found.group(1))
            return f"\ue000{len(tags) - 1}\ue001"

        # Only the comment's own tags, outside code spans: a tag the user pasted sits in a code
        # span (or in escaped prose) and stays text.
        own = _MARKER_LINE.sub("", comment).replace("\ue000", "").replace("\ue001", "")
        html = self.md.render(_protect_tags(own, mark))
        return Markup(_TAG_MARK.sub(lambda m: f"<{tags[int(m.group(1))]}>", html))

    # --- JSON ---------------------------------------------------------------------------------

    def record_document(self, record: Record) -> dict[str, Any]:
        """`{"record": {...}, "datasetVersion": ...}`, the shape of the seed JSON."""
        return {"record": record_json(record), "datasetVersion": self.version}

    def record_bytes(self, record: Record) -> bytes:
        return orjson.dumps(self.record_document(record))


def _protect_tags(text: str, mark: Callable[[re.Match[str]], str]) -> str:
    """`text` with its own tags (outside code spans) replaced by `mark`'s placeholders."""
    out, at = [], 0
    for span in _CODE_SPANS.finditer(text):
        out.append(_OWN_TAG.sub(mark, text[at : span.start()]))
        out.append(span.group(0))
        at = span.end()
    out.append(_OWN_TAG.sub(mark, text[at:]))
    return "".join(out)


def _text(value: str | None) -> str | None:
    return value if value and not Record.is_draft_text(value) else None


_SHA = re.compile(r"/blob/([0-9a-f]{40})/")


def _sha_in(url: str) -> str | None:
    found = _SHA.search(url)
    return found.group(1) if found else None


def _excerpt(record: Record) -> list[dict[str, Any]]:
    """The source excerpt's lines, numbered when the record says where it starts; the panic
    line (the record's line) marked."""
    if not record.source_code:
        return []
    start = record.source_code_start
    lines = record.source_code.split("\n")
    out = []
    for offset, text in enumerate(lines):
        number = start + offset if start is not None else None
        out.append(
            {
                "number": number,
                "text": text,
                "panic": number is not None and number == record.line_number,
            }
        )
    return out
