"""Hostile text on the pages: a record's fields and a paste are escaped, markdown's raw HTML and
script links are not rendered, the CSP allows no script and no outside resource."""

from __future__ import annotations

import json
from pathlib import Path

from site_helpers import serve, text_of

from bot.app import Triage
from bot.catalog.loader import load_catalog
from bot.server.site_routes import CSP
from bot.site.data import Filters
from bot.site.pages import Site

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = {
    "id": "abad1dea00000001",
    "repo": "tracel-ai/burn",
    "errorMessage": "boom <script>alert(1)</script>",
    "filePath": "crates/burn-core/src/x.rs",
    "lineNumber": 3,
    "sourceCode": 'fn a() {\n    panic!("</code><script>alert(2)</script>");\n}',
    "sourceCodeStart": 2,
    "documentation": "Raw <img src=x onerror=alert(3)> and [a link](javascript:alert(4)).",
    "solutions": ["<b onclick=alert(5)>bold</b>"],
    "relatedErrors": ['"><script>alert(6)</script>'],
    "analyzedSha": "0123456789abcdef0123456789abcdef01234567",
}


def hostile_site(tmp_path) -> Site:
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(HOSTILE), encoding="utf-8")
    return Site(Triage(load_catalog([path])))


def test_a_records_fields_are_escaped_everywhere(tmp_path):
    site = hostile_site(tmp_path)
    record = site.catalog.get(HOSTILE["id"])
    assert record is not None
    for page in (site.record_page(record), site.list_page(Filters())):
        assert "<script" not in page and "onerror" not in page.replace("onerror=alert", "")
        assert "<img" not in page and "<b " not in page and "href=\"javascript" not in page
    page = site.record_page(record)
    text = text_of(page)
    assert "boom <script>alert(1)</script>" in text  # shown as text
    assert "Raw <img src=x onerror=alert(3)>" in text
    # the panic line is marked and its source shown as text
    assert '<li class="panic"' in page and "&lt;/code&gt;&lt;script&gt;" in page


def test_a_pasted_script_is_text_in_the_answer(tmp_path):
    site = hostile_site(tmp_path)
    page = site.home_page(
        "thread 'main' panicked at src/x.rs:1:1:\nboom <script>alert(1)</script>\n"
    )
    assert "<script" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.split('id="answer"')[1]


async def test_every_page_carries_a_strict_csp(tmp_path):
    import aiohttp

    server, store = await serve(tmp_path)
    try:
        async with aiohttp.ClientSession() as session:
            for path in ("/", "/errors", "/errors/cf30438606d06d30", "/errors/nope", "/site.css"):
                async with session.get(server.make_url(path)) as response:
                    assert response.headers["Content-Security-Policy"] == CSP, path
                    assert response.headers["X-Content-Type-Options"] == "nosniff"
                    body = await response.text()
                if path == "/site.css":
                    assert "prefers-color-scheme: dark" in body and "max-width" in body
                else:
                    assert 'name="viewport" content="width=device-width' in body
    finally:
        await server.close()
        store.close()
    assert "script-src" not in CSP and "default-src 'none'" in CSP


def test_a_pasted_tag_of_the_comments_own_kinds_stays_text(tmp_path):
    # <details>, <summary> and <sub> are the comment's own tags on the form; pasted, they are
    # text like any other (and so are the placeholders the form uses for its own tags)
    site = hostile_site(tmp_path)
    pasted = "<details><summary>x</summary> <sub>secret</sub> \ue0000\ue001 broke"
    page = site.home_page(f"thread 'main' panicked at src/main.rs:1:1:\n{pasted}\n")
    answer = page.split('id="answer"')[1]
    assert "&lt;sub&gt;secret&lt;/sub&gt;" in answer and "<sub>secret" not in answer
    assert "<details>" not in answer and "<summary>" not in answer
    # the bot's own collapsed parts are still tags, on an answered paste
    bundled = Site(Triage.from_paths(None))
    answered = bundled.home_page((ROOT / "examples" / "issue.md").read_text(encoding="utf-8"))
    assert "<details>" in answered.split('id="answer"')[1]
