"""`triage-bot catalog site --out DIR`: the static pages, checked by a link checker (every
internal href and src resolves to a file of the export) and for outside requests (none)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from site_helpers import HEADINGS, JSON_SEED, PAGE_SEEDS, ROOT, h2s, seed_headings, seed_record

from bot.catalog.loader import load_catalog

CATALOG = ROOT / "catalog"


class Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.srcs: list[str] = []
        self.stylesheets: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if values.get("href") is not None:
            self.hrefs.append(values["href"] or "")
            if tag == "link":
                self.stylesheets.append(values["href"] or "")
        if values.get("src") is not None:
            self.srcs.append(values["src"] or "")


def broken_links(out: Path) -> tuple[list[str], int]:
    """(every internal link that names no file, how many internal links were checked)."""
    broken, checked = [], 0
    for page in out.rglob("*.html"):
        parser = Links()
        parser.feed(page.read_text(encoding="utf-8"))
        for link in parser.hrefs + parser.srcs:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc:
                assert parts.scheme == "https", (page, link)  # outside links: https only
                continue
            checked += 1
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file() or out.resolve() not in target.parents:
                broken.append(f"{page.relative_to(out)}: {link}")
    return broken, checked


def small_catalog(tmp: Path) -> Path:
    """The seeds, the families, 60 scanned burn sites and burn's history: two list pages."""
    folder = tmp / "catalog"
    shutil.copytree(CATALOG / "seeds", folder / "seeds")
    shutil.copy(CATALOG / "families.json", folder / "families.json")
    shutil.copy(CATALOG / "burn" / "history.ndjson", folder / "history.ndjson")
    lines = (CATALOG / "burn" / "panic_sites.jsonl").read_text(encoding="utf-8").splitlines()
    (folder / "panic_sites.jsonl").write_text("\n".join(lines[:60]) + "\n", encoding="utf-8")
    return folder


def test_the_static_export_has_every_page_and_no_broken_link(tmp_path):
    catalog = small_catalog(tmp_path)
    out = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "bot", "catalog", "site", "--out", str(out), str(catalog)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    count = len(load_catalog([catalog]))  # a skeleton of a written-up site is left out
    assert count > 50 and f"{count} record pages, 2 list pages" in done.stderr
    for name in ("index.html", "errors/index.html", "errors/page/2/index.html", "site.css"):
        assert (out / name).is_file(), name
    assert len(list((out / "errors").glob("*/index.html"))) == count

    broken, checked = broken_links(out)
    assert not broken, broken[:10]
    assert checked > count * 3  # every page links the stylesheet, home, list, its JSON

    # no outside requests: one local stylesheet, and the list's own search script
    for page in out.rglob("*.html"):
        parser = Links()
        parser.feed(page.read_text(encoding="utf-8"))
        assert all("://" not in s for s in parser.srcs + parser.stylesheets), page
        for src in parser.srcs:
            assert src.endswith("search.js") and (page.parent / src).resolve().is_file(), src
    index = json.loads((out / "search.json").read_text(encoding="utf-8"))
    assert len(index) == count and all(len(row) == 6 for row in index)
    assert (
        "url(" not in (out / "site.css").read_text()
        and "@import" not in (out / "site.css").read_text()
    )

    # the seed pages, in the seeds' order, and the JSON of seed 003
    for seed in PAGE_SEEDS:
        record = seed_record(seed)
        page = (out / "errors" / record["id"] / "index.html").read_text(encoding="utf-8")
        assert [h for h in h2s(page) if h in HEADINGS] == seed_headings(seed)
    document = json.loads((out / "api" / "errors" / "cf30438606d06d30.json").read_text())
    assert document["record"] == json.loads(JSON_SEED.read_text())["record"]


def test_the_checker_finds_a_broken_link(tmp_path):
    out = tmp_path / "site"
    (out / "errors").mkdir(parents=True)
    (out / "index.html").write_text('<a href="errors/">list</a> <a href="errors/nope/">x</a>')
    (out / "errors" / "index.html").write_text('<a href="../index.html">home</a>')
    broken, checked = broken_links(out)
    assert broken == ["index.html: errors/nope/"] and checked == 3
