"""Stats: aggregation, text and HTML, `stats` and `catalog draft`, GET /stats, reactions."""

from __future__ import annotations

import argparse
import json
import re
from datetime import UTC, datetime

import aiohttp
import pytest
from harness import INTERPOLATE, PANIC, REPO, UNKNOWN_PANIC, Harness, issue_payload

from bot.catalog.loader import load_catalog
from bot.cli import run
from bot.cli.stats import register, register_catalog
from bot.stats.report import (
    OTHER,
    PALETTE,
    TOP_SERIES,
    compute_stats,
    draft_record,
    find_gap,
    group_id,
    group_message,
    parse_since,
    render_html,
    render_text,
)
from bot.store.sqlite import Store


def ts(day: str) -> float:
    return datetime.fromisoformat(day).replace(tzinfo=UTC).timestamp()


def answer(subject, records, day, platform="github", verdict="match"):
    return {
        "platform": platform,
        "subject": subject,
        "verdict": verdict,
        "record_ids": records,
        "at": ts(day),
    }


def vote(subject, record, value, day="2026-03-02", platform="github", user="u"):
    return {
        "platform": platform,
        "subject": subject,
        "user_id": user,
        "record_id": record,
        "vote": value,
        "at": ts(day),
    }


def gap(subject, message, crate="", day="2026-03-02", platform="github", number=None):
    repo = subject.split("#")[0] if platform == "github" else None
    return {
        "platform": platform,
        "subject": subject,
        "repo": repo,
        "number": number if number is not None else (int(subject.split("#")[1]) if repo else None),
        "norm_message": group_message(message),
        "crate": crate,
        "message": message,
        "location": None,
        "first_at": ts(day),
        "last_at": ts(day),
    }


# --- pure ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "normalised"),
    [
        (
            "index out of bounds: the len is 3 but the index is 5",
            "index out of bounds: the len is N but the index is N",
        ),
        ("Shape mismatch [2, 3, 4] vs [2, 3]", "Shape mismatch [N, …] vs [N, …]"),
        ('Os { code: 2, message: "No such file" }', 'Os { code: N, message: "…" }'),
        ("cannot open /home/u/data/x.bin at 0x7ffd", "cannot open PATH at 0xX"),
        ("wgpu2  backend\n failed", "wgpu2 backend failed"),
    ],
)
def test_normalise_message(message, normalised):
    assert group_message(message) == normalised


def test_answers_by_record_over_time():
    rows = [
        answer("o/r#1", ["a"], "2026-03-02"),  # a Monday
        answer("o/r#1", ["a"], "2026-03-20"),  # the same issue again: counted once
        answer("o/r#2", ["a", "b"], "2026-03-04"),
        answer("o/r#3", ["b"], "2026-03-17"),
        answer("o/r#4", [], "2026-03-17", verdict="uncatalogued-panic"),
        answer("123:9", ["a"], "2026-03-18", platform="discord"),
    ]
    stats = compute_stats(rows, [], [])
    assert stats.weeks == ("2026-03-02", "2026-03-09", "2026-03-16")
    assert [(s.record_id, s.counts) for s in stats.series] == [("a", (2, 0, 1)), ("b", (1, 0, 1))]
    assert stats.series[0].colour == PALETTE[0]
    assert stats.answered_subjects == 4
    only_repo = compute_stats(rows, [], [], repo="O/R")
    assert [s.total for s in only_repo.series] == [2, 2]  # discord is not in a repository
    since = compute_stats(rows, [], [], since=parse_since("2026-03-10"))
    assert since.weeks == ("2026-03-16",)
    assert [(s.record_id, s.total) for s in since.series] == [("a", 2), ("b", 1)]


def test_records_beyond_the_top_are_other():
    rows = [answer(f"o/r#{i}", [f"r{i:02}"], "2026-03-02") for i in range(TOP_SERIES + 3)]
    stats = compute_stats(rows, [], [])
    assert len(stats.series) == TOP_SERIES + 1
    assert stats.series[-1].record_id == OTHER and stats.series[-1].total == 3


def test_precision_per_record():
    rows = [
        vote("o/r#1:a", "a", 1, user="x"),
        vote("o/r#1:a", "a", 1, user="reaction:y"),
        vote("o/r#2:a", "a", -1),
        vote("99:b", "b", -1, platform="discord"),
        vote("o/r#3:c", "c", 0),
    ]
    stats = compute_stats([], rows, [])
    got = [(p.record_id, p.helpful, p.wrong, round(p.precision, 2)) for p in stats.precision]
    assert got == [("a", 2, 1, 0.67), ("b", 0, 1, 0.0)]
    assert [p.record_id for p in compute_stats([], rows, [], repo="o/r").precision] == ["a"]


def test_uncatalogued_groups_most_frequent_first():
    rows = [
        gap("o/r#1", "index out of bounds: the len is 3 but the index is 5", "burn-tensor"),
        gap(
            "o/r#2",
            "index out of bounds: the len is 4 but the index is 9",
            "burn-tensor",
            "2026-03-03",
        ),
        gap("o/r#3", "index out of bounds: the len is 1 but the index is 1", "burn-wgpu"),
        gap(
            "77",
            "index out of bounds: the len is 2 but the index is 2",
            "burn-tensor",
            "2026-03-05",
            "discord",
        ),
        gap("o/r#4", "out of memory", "burn-wgpu", "2026-03-09"),
    ]
    stats = compute_stats([], [], rows)
    top = stats.gaps[0]
    assert (top.crate, top.count) == ("burn-tensor", 3)
    assert top.norm_message == "index out of bounds: the len is N but the index is N"
    assert [(i.repo, i.number) for i in top.issues] == [("o/r", 2), ("o/r", 1)]
    assert top.id == group_id(top.norm_message, "burn-tensor")
    # equal counts: the most recent first
    assert [g.norm_message for g in stats.gaps[1:]] == [
        "out of memory",
        "index out of bounds: the len is N but the index is N",
    ]
    assert stats.gap_total == 3
    text = render_text(stats)
    assert "https://github.com/o/r/issues/2 https://github.com/o/r/issues/1" in text
    assert text.index(top.id) < text.index("out of memory")


def test_html_page_is_self_contained_and_escapes_everything():
    evil = '<script>alert(1)</script><img src=x onerror=alert(2)> "quoted"'
    stats = compute_stats(
        [answer("o/r#1", ["a"], "2026-03-02"), answer("o/r#2", ["b"], "2026-03-10")],
        [vote("o/r#1:a", "a", 1), vote("o/r#1:a", "a", -1, user="z")],
        [gap("o/r#5", evil, "burn-<b>")],
        names={"a": "A <record>"},
    )
    page = render_html(stats)
    assert page.startswith("<!doctype html>")
    assert "<script" not in page and "<img" not in page and "&lt;script&gt;" in page
    assert "burn-&lt;b&gt;" in page and "A &lt;record&gt;" in page
    # no outside resources: the only URLs are the links to issues
    urls = re.findall(r"(?:src|href)=\"([^\"]+)\"", page)
    assert urls == ["https://github.com/o/r/issues/5"]
    assert not re.search(r"@import|url\(", page)
    # the charts: one bar per record per week, in the record's colour
    assert len(re.findall(rf'<rect class="bar"[^>]*fill="{PALETTE[0]}"', page)) == 1
    assert len(re.findall(rf'<rect class="bar"[^>]*fill="{PALETTE[1]}"', page)) == 1
    assert 'id="precision-chart"' in page and "50%" in page


def test_empty_page():
    page = render_html(compute_stats([], [], []))
    assert "No answers yet." in page and "No feedback yet." in page
    assert "No uncatalogued panics." in page


def test_draft_record_loads_as_a_catalog_record(tmp_path):
    rows = [
        gap(
            "tracel-ai/burn#1",
            "index out of bounds: the len is 3 but the index is 5",
            "burn-tensor",
        ),
        {
            **gap(
                "tracel-ai/burn#2",
                "index out of bounds: the len is 4 but the index is 9",
                "burn-tensor",
                "2026-04-01",
            ),
            "location": "crates/burn-tensor/src/tensor/api/base.rs:120",
        },
    ]
    gid = group_id(rows[0]["norm_message"], "burn-tensor")
    assert find_gap(rows, gid[:6]) == rows
    assert find_gap(rows, "zzzz") == []
    record = draft_record(find_gap(rows, gid))
    assert record["repo"] == "tracel-ai/burn"
    assert record["errorMessage"] == "index out of bounds: the len is {} but the index is {}"
    assert record["filePath"] == "crates/burn-tensor/src/tensor/api/base.rs"
    assert record["lineNumber"] == 120
    assert "crate:burn-tensor" in record["tags"] and "draft" in record["tags"]
    path = tmp_path / "draft.json"
    path.write_text(json.dumps(record))
    catalog = load_catalog([path])
    assert catalog.get(record["id"]) is not None


# --- the commands -------------------------------------------------------------------------------


def run_cli(argv, monkeypatch, tmp_path, db):
    monkeypatch.chdir(tmp_path)  # no .env from the work tree
    for name in ("GITHUB_TOKEN", "GITHUB_APP_ID", "TRIAGE_CATALOG", "TRIAGE_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TRIAGE_DB", str(db))
    parser = argparse.ArgumentParser(prog="triage-bot")
    sub = parser.add_subparsers(dest="command")
    register(sub)
    catalog = sub.add_parser("catalog").add_subparsers(dest="catalog_command")
    register_catalog(catalog)
    args = parser.parse_args(argv)
    return run(args)


def filled_store(db):
    with Store(db) as store:
        store.record_answer("github", "o/r#1", "match", [INTERPOLATE], "fp")
        store.record_feedback("github", f"o/r#1:{INTERPOLATE}", INTERPOLATE, "maint", -1)
        store.record_feedback("discord", f"5:{INTERPOLATE}", INTERPOLATE, "42", 1)
        store.replace_uncatalogued(
            "github",
            "o/r#2",
            [{"norm_message": "out of memory", "crate": "burn-wgpu", "message": "out of memory"}],
            repo="o/r",
            number=2,
        )


def test_stats_command_prints_and_writes_html(monkeypatch, tmp_path, capsys):
    db = tmp_path / "s.db"
    filled_store(db)
    html_file = tmp_path / "stats.html"
    assert run_cli(["stats", "--html", str(html_file)], monkeypatch, tmp_path, db) == 0
    out = capsys.readouterr().out
    assert f"1  {INTERPOLATE}" in out and "Can't differentiate interpolate backward." in out
    assert "50%" in out and "1 helpful, 1 wrong" in out
    assert "out of memory" in out and "https://github.com/o/r/issues/2" in out
    assert "<svg" in html_file.read_text()
    assert run_cli(["stats", "--repo", "o/r"], monkeypatch, tmp_path, db) == 0
    assert "0 helpful, 1 wrong" in capsys.readouterr().out
    assert run_cli(["stats", "--since", "yesterday"], monkeypatch, tmp_path, db) == 2


def test_catalog_draft_command(monkeypatch, tmp_path, capsys):
    db = tmp_path / "s.db"
    filled_store(db)
    gid = group_id("out of memory", "burn-wgpu")
    assert run_cli(["catalog", "draft", gid], monkeypatch, tmp_path, db) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["errorMessage"] == "out of memory" and record["repo"] == "o/r"
    out = tmp_path / "rec.json"
    argv = ["catalog", "draft", gid[:5], "--repo", "tracel-ai/burn", "--out", str(out)]
    assert run_cli(argv, monkeypatch, tmp_path, db) == 0
    assert json.loads(out.read_text())["repo"] == "tracel-ai/burn"
    assert run_cli(["catalog", "draft", "ffffffff"], monkeypatch, tmp_path, db) == 2
    assert "no uncatalogued-panic group" in capsys.readouterr().err


STATS_TOKEN = "a-stats-token-for-tests"

# --- through the server -------------------------------------------------------------------------


async def test_stats_page_from_real_issues(fake, tmp_path, triage):
    h = await Harness(fake, tmp_path / "t.sqlite3", triage, TRIAGE_STATS_TOKEN=STATS_TOKEN).start()
    await h.session.close()  # /stats asks for its token
    h.session = aiohttp.ClientSession(headers={"Authorization": f"Bearer {STATS_TOKEN}"})
    try:
        known = fake.add_issue(REPO, "crash", PANIC)
        unknown = fake.add_issue(REPO, "weird", UNKNOWN_PANIC)
        for issue in (known, unknown):
            await h.post("issues", issue_payload("opened", issue.number, issue.title, issue.body))
        await h.settle()
        base = str(h.server.make_url("/stats"))
        async with h.session.get(base) as response:
            assert response.status == 200
            assert response.headers["Content-Type"].startswith("text/html")
            assert "default-src 'none'" in response.headers["Content-Security-Policy"]
            page = await response.text()
        assert f"<code>{INTERPOLATE}</code>" in page
        assert "the flux capacitor overheated while reticulating splines" in page
        assert f"https://github.com/{REPO}/issues/{unknown.number}" in page
        assert f'fill="{PALETTE[0]}"' in page
        async with h.session.get(base + "?repo=someone/else") as response:
            assert "No answers yet." in await response.text()
        async with h.session.get(base + "?since=garbage") as response:
            assert response.status == 400
        # the panic goes away: it is no longer a gap
        fake.edit_issue(REPO, unknown.number, body="never mind")
        await h.post("issues", issue_payload("edited", unknown.number, "weird", "never mind"))
        await h.settle()
        async with h.session.get(base) as response:
            assert "flux capacitor" not in await response.text()
    finally:
        await h.stop()


async def test_stats_refresh_reads_reactions(fake, tmp_path, triage, monkeypatch, capsys):
    db = tmp_path / "r.sqlite3"
    h = await Harness(fake, db, triage).start()
    try:
        issue = fake.add_issue(REPO, "crash", PANIC)
        await h.post("issues", issue_payload("opened", issue.number, issue.title, PANIC))
        await h.settle()
    finally:
        await h.stop()
    h.state.store.close()
    [comment] = [c for c in fake.comments_on(REPO, issue.number)]
    fake.add_reaction(REPO, comment.id, "-1", "alice")
    fake.add_reaction(REPO, comment.id, "-1", "bob")
    fake.add_reaction(REPO, comment.id, "+1", "carol")
    fake.add_reaction(REPO, comment.id, "+1", "ci[bot]")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_bot_token")
    monkeypatch.setenv("GITHUB_API_URL", fake.base_url)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRIAGE_DB", str(db))
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["stats", "--refresh"])
    assert await _in_thread(args.handler, args) == 0
    captured = capsys.readouterr()
    assert "33%" in captured.out and "1 helpful, 2 wrong" in captured.out
    assert len(fake.calls("GET", rf"/issues/comments/{comment.id}/reactions$")) == 1


async def _in_thread(function, *args):
    import asyncio

    return await asyncio.to_thread(function, *args)


def test_uncatalogued_items_are_the_panics_the_answer_does_not_cover(triage):
    from bot.stats.report import uncatalogued_items

    registry = "/home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f/"
    unknown_in_burn = (
        f"thread 'main' panicked at {registry}burn-wgpu-0.18.0/src/ops/tensor.rs:77:9:\n"
        "buffer 4096 exceeds the limit of 2048 bytes\n"
    )
    analysis = triage.analyse(PANIC + "\n" + UNKNOWN_PANIC + "\n" + unknown_in_burn)
    items = uncatalogued_items(analysis, [INTERPOLATE])
    assert [(i["norm_message"], i["crate"], i["location"]) for i in items] == [
        ("the flux capacitor overheated while reticulating splines", "", "src/main.rs:3"),
        (
            "buffer N exceeds the limit of N bytes",
            "burn-wgpu",
            "crates/burn-wgpu/src/ops/tensor.rs:77",
        ),
    ]
    assert items[1]["message"] == "buffer 4096 exceeds the limit of 2048 bytes"
    # nothing answered: every panic is a gap; a maintainer's choice covers the first
    assert len(uncatalogued_items(analysis, [])) == 3
    assert len(uncatalogued_items(analysis, [], skip_first=True)) == 2
