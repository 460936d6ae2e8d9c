"""`triage-bot catalog site --out DIR`: every page as a static file, for GitHub Pages.

No paste form (one matcher only: the server's). Links are relative, so the folder works at any
base path, or opened from disk. Only record ids shaped as ids become file names: nothing in a
record reaches the file system as a path.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from bot.site.data import ID_SHAPE, Filters
from bot.site.pages import CSS_NAME, Site


def _write(path: Path, data: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)


def export_site(site: Site, out: Path) -> dict[str, int]:
    """Write the site under `out`; how many pages of each kind."""
    assert site.routes.static, "export a Site built with static=True"
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    _write(out / CSS_NAME, site.css())
    _write(out / ".nojekyll", "")  # GitHub Pages: serve the folder as it is
    _write(out / "search.js", site.search_script())  # the list's search, in the browser
    _write(out / "search.json", site.search_index())
    records = skipped = 0
    for record in site.catalog:
        if not ID_SHAPE.match(record.id) or record.id in (".", ".."):
            skipped += 1
            continue
        _write(out / "errors" / record.id / "index.html", site.record_page(record))
        _write(out / "api" / "errors" / f"{record.id}.json", site.record_bytes(record))
        records += 1
    first = Filters()
    _write(out / "index.html", site.list_page(first, at_top=True))
    _write(out / "errors" / "index.html", site.list_page(first))
    _, _, pages = site.lookup.select(first)
    for number in range(2, pages + 1):
        page = site.list_page(replace(first, page=number))
        _write(out / "errors" / "page" / str(number) / "index.html", page)
    _write(out / "404.html", site.not_found_page("this page"))
    return {"records": records, "skipped": skipped, "list_pages": pages, "files": _count(out)}


def _count(out: Path) -> int:
    return sum(len(files) for _, _, files in os.walk(out))
