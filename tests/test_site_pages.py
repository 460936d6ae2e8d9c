"""The catalog's pages over real HTTP (aiohttp on 127.0.0.1): record pages in the seeds' order
and texts, the record JSON field for field, prefixes, 404s, the list's filters and paging."""

from __future__ import annotations

import itertools
import json
import re

import aiohttp
import pytest
from site_helpers import (
    HEADINGS,
    JSON_SEED,
    PAGE_SEEDS,
    bundled,
    h2s,
    seed_headings,
    seed_record,
    serve,
    text_of,
)

from bot.site.data import PAGE_SIZE


@pytest.fixture
async def site(tmp_path):
    server, store = await serve(tmp_path)
    async with aiohttp.ClientSession() as session:
        yield server, session
    await server.close()
    store.close()


async def get(site, path: str, **kw) -> tuple[int, str, aiohttp.ClientResponse]:
    server, session = site
    async with session.get(server.make_url(path), **kw) as response:
        return response.status, await response.text(), response


@pytest.mark.parametrize("seed", PAGE_SEEDS, ids=lambda p: p.name[:3])
async def test_a_seed_page_has_the_seeds_sections_in_order_with_its_texts(site, seed):
    record = seed_record(seed)
    status, page, response = await get(site, f"/errors/{record['id']}")
    assert status == 200
    assert "default-src 'none'" in response.headers["Content-Security-Policy"]
    wanted = seed_headings(seed)
    shown = [h for h in h2s(page) if h in HEADINGS]
    assert shown == wanted  # the seed's sections, in its order; empty ones left out
    text = text_of(page)
    assert f'What causes "{record["errorMessage"]}" in tracel-ai/burn?' in text
    for solution in record.get("solutions", []):
        assert solution in text
    assert " ".join(record["documentation"].split()) in text
    assert f"Thrown at {record['filePath']}:{record['lineNumber']}" in text
    assert "View on GitHub (pinned to d16f7ba2ed)" in text
    assert f"Data as JSON: /api/errors/{record['id']}. Report an issue: GitHub." in text
    # the source link is pinned to the full commit, at the panic line
    assert re.search(
        rf'href="https://github.com/tracel-ai/burn/blob/[0-9a-f]{{40}}/{record["filePath"]}'
        rf'#L{record["lineNumber"]}"',
        page,
    )
    # the panic line is marked in the excerpt
    marked = re.search(r'<li class="panic"[^>]*><span class="n">(\d+)</span>', page)
    assert marked and int(marked.group(1)) == record["lineNumber"]


async def test_related_errors_link_to_their_pages(site):
    avg_pool = next(p for p in PAGE_SEEDS if p.name.startswith("002"))
    record = seed_record(avg_pool)
    _, page, _ = await get(site, f"/errors/{record['id']}")
    section = page.split('id="related-errors"')[1].split("</section>")[0]
    links = re.findall(r'href="(/errors/[0-9a-f]+)"', section)
    assert links, section
    assert "/errors/cf30438606d06d30" in links  # "Can't differentiate interpolate backward."
    for link in links:
        status, _, _ = await get(site, link)
        assert status == 200, link


async def test_a_scanned_page_shows_lineage_family_and_history(site):
    catalog = bundled().catalog
    history = bundled().history
    assert history is not None
    with_events = next(
        r
        for r in catalog
        if not r.has_write_up
        and history.by_record.get(r.id) is not None
        and history.lineages[history.by_record[r.id]].events
        and catalog.family(r.id) is not None
    )
    status, page, _ = await get(site, f"/errors/{with_events.id}")
    assert status == 200
    headings = h2s(page)
    assert "In each release" in headings and "History" in headings
    assert any(h.startswith("Family: ") for h in headings)
    assert "What it means" not in headings and "Solutions" not in headings
    releases = page.split('id="releases"')[1].split("</table>")[0]
    assert releases.count("<tr>") == len(history.releases) + 1  # a header and every release


async def test_the_api_returns_seed_003_field_for_field(site):
    seed = json.loads(JSON_SEED.read_text(encoding="utf-8"))
    status, body, response = await get(site, "/api/errors/cf30438606d06d30")
    assert status == 200 and response.content_type == "application/json"
    document = json.loads(body)
    assert set(document) == {"record", "datasetVersion"}
    assert document["record"] == seed["record"]
    assert list(document["record"]) == list(seed["record"])  # same fields, same order
    assert isinstance(document["datasetVersion"], str)


async def test_a_unique_prefix_redirects_and_anything_else_is_a_404_page(site):
    status, _, response = await get(site, "/errors/cf304386", allow_redirects=False)
    assert status == 302 and response.headers["Location"] == "/errors/cf30438606d06d30"
    status, _, response = await get(site, "/api/errors/cf304386", allow_redirects=False)
    assert response.headers["Location"] == "/api/errors/cf30438606d06d30"
    for wrong in ("cf3", "0000000000000000", "..%2F..%2Fetc%2Fpasswd", "%3Cscript%3E"):
        status, page, response = await get(site, f"/errors/{wrong}", allow_redirects=False)
        assert status == 404, wrong
        assert "No such error" in page and "<script>" not in page
    catalog = bundled().catalog
    ids = sorted(catalog.records)
    shared = next(a[:5] for a, b in itertools.pairwise(ids) if a[:5] == b[:5])
    status, page, _ = await get(site, f"/errors/{shared}", allow_redirects=False)
    assert status == 404 and "more than one starts with it" in page
    status, body, _ = await get(site, "/api/errors/0000000000000000")
    assert status == 404 and "error" in json.loads(body)


def rows_of(page: str) -> list[str]:
    return re.findall(r'<td class="msg"><a href="/errors/([0-9a-f]+)"', page)


async def test_the_list_filters_and_pages(site):
    catalog = bundled().catalog
    _, page, _ = await get(site, "/errors?written=yes")
    written = {r.id for r in catalog if r.has_write_up}
    shown = rows_of(page)
    assert f"{len(written)} records" in text_of(page)
    assert set(shown) <= written and len(shown) == min(len(written), PAGE_SIZE)

    _, page, _ = await get(site, "/errors?removed=yes&project=tracel-ai/burn")
    shown = rows_of(page)
    assert shown and all(
        catalog.get(i).removed_at and catalog.get(i).repo == "tracel-ai/burn" for i in shown
    )

    _, page, _ = await get(site, "/errors?family=unimplemented-op-backward&written=yes")
    assert "cf30438606d06d30" in rows_of(page)

    _, page, _ = await get(site, "/errors?crate=burn-autodiff&written=no")
    shown = rows_of(page)
    assert shown and all(catalog.get(i).crate == "burn-autodiff" for i in shown)

    _, first, _ = await get(site, "/errors")
    _, second, _ = await get(site, "/errors?page=2")
    assert rows_of(first) and rows_of(second) and not set(rows_of(first)) & set(rows_of(second))
    assert 'href="/errors?page=2" rel="next"' in first
    assert "page 2 of" in second


async def test_known_issues_are_the_records_own_projects_unless_the_stats_token_is_given(
    tmp_path,
):
    server, store = await serve(tmp_path, TRIAGE_STATS_TOKEN="page-token")
    record = "cf30438606d06d30"
    try:
        store.put_issue_records("tracel-ai/burn", 4242, [record], "fp")
        store.set_issue_open_state("tracel-ai/burn", 4242, "closed")
        store.record_answer("github", "someone/private-repo#7", "match", [record], "fp")
        store.put_issue_records("someone/private-repo", 7, [record], "fp")
        pages = {}
        async with aiohttp.ClientSession() as session:
            for who, headers in (
                ("anyone", {}),
                ("wrong", {"Authorization": "Bearer nope"}),
                ("token", {"Authorization": "Bearer page-token"}),
            ):
                url = server.make_url(f"/errors/{record}")
                async with session.get(url, headers=headers) as response:
                    pages[who] = (await response.text(), response.headers.get("Cache-Control"))
    finally:
        await server.close()
        store.close()
    for who in ("anyone", "wrong"):
        page = pages[who][0]
        section = page.split('id="known-issues"')[1].split("</section>")[0]
        assert 'href="https://github.com/tracel-ai/burn/issues/4242"' in section
        assert "(closed)" in section
        assert "private-repo" not in page
    page, cache = pages["token"]
    assert "https://github.com/someone/private-repo/issues/7" in page
    assert "https://github.com/tracel-ai/burn/issues/4242" in page
    assert cache == "private, no-store"


async def test_every_page_says_what_its_error_means_and_what_to_try(site):
    # a family's site (the wgpu handler), a written-up site, a bare site outside any family
    for rid, meaning, step in (
        ("c15e560c151794df", "wgpu's default error handler", "Caused by:"),
        ("caa0d32853961b70", "no registered step", "require_grad"),
        ("d964f20f6da07ecf", "Raised by", None),
    ):
        status, page, _ = await get(site, f"/errors/{rid}")
        assert status == 200, rid
        text = text_of(page)
        assert "What it means:" in text and meaning in text, rid
        if step is not None:
            assert "Try first:" in text and step in text, rid


async def test_the_list_searches_message_crate_and_file_and_filters_by_kind(site):
    status, page, _ = await get(site, "/errors?q=dispatch+group")
    assert status == 200
    status, page, _ = await get(site, "/errors?q=wrong+device&crate=burn-dispatch")
    text = text_of(page)
    assert "Input tensor {} is on the wrong device" in text
    assert "record" in text and "0 records" not in text
    status, page, _ = await get(site, "/errors?q=autotune.rs+nothing-like-this-anywhere")
    assert "0 records" in text_of(page)
    status, page, _ = await get(site, "/errors?kind=todo&repo=tracel-ai/burn")
    rows = re.findall(r'<td class="msg">', page)
    assert rows and "0 records" not in text_of(page)
