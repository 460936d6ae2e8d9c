"""Screenshots of the answers as people see them, in headless Chromium.

GitHub: the comment's markdown through a GFM renderer (cmark-gfm, as GitHub uses), raw HTML kept
(`<details>`, `<summary>`, `<sub>` survive GitHub's sanitiser), with GitHub-like styles; the
`<details>` start closed, so the screenshot is the first view. Discord: the message's content and
embeds drawn as simple HTML (colour bar, linked title, description, footer, buttons).

Set ANSWER_SCREENSHOTS=DIR to keep the PNGs and look at them.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
from pathlib import Path

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options
from test_render_golden import CASES, case_bare_site
from test_stats_browser import CHROMIUM, decode_png, distinct_colours, pixels_of

from bot.app import load_bundled
from bot.render import texts
from bot.render.discord import render_message, render_more
from bot.render.github import render_comment

WIDTH = 900
HEIGHT = 1000

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="needs Debian's chromium (/usr/bin/chromium)"
)

GITHUB_CSS = """
body { font: 14px/1.5 -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif;
       color: #1f2328; background: #ffffff; margin: 16px; }
.comment { border: 1px solid #d1d9e0; border-radius: 6px; max-width: 820px; }
.comment-head { background: #f6f8fa; border-bottom: 1px solid #d1d9e0; padding: 8px 16px;
                color: #59636e; }
.comment-body { padding: 16px; }
a { color: #0969da; text-decoration: none; }
code { background: #eff1f3; border-radius: 6px; padding: .2em .4em; font-size: 85%;
       font-family: ui-monospace, SFMono-Regular, Menlo, monospace; }
pre { background: #f6f8fa; padding: 16px; border-radius: 6px; overflow: auto; }
pre code { background: none; padding: 0; }
h3 { font-size: 1.25em; margin: 16px 0 8px; } h4 { font-size: 1em; }
details summary { cursor: pointer; color: #1f2328; }
hr { border: 0; border-top: 1px solid #d1d9e0; }
sub { color: #59636e; }
"""

DISCORD_CSS = """
body { background: #313338; color: #dbdee1; margin: 16px;
       font: 15px/1.375 "gg sans", "Noto Sans", Helvetica, Arial, sans-serif; }
.content { margin: 0 0 6px 0; white-space: pre-wrap; }
.embed { display: grid; max-width: 520px; background: #2b2d31; border-radius: 4px;
         border-left: 4px solid var(--bar); padding: 8px 16px 16px 12px; margin: 4px 0; }
.embed .title { font-weight: 600; margin-top: 8px; }
.embed .title a { color: #00a8fc; text-decoration: none; }
.embed .desc { font-size: 14px; margin-top: 8px; white-space: pre-wrap; }
.embed .field-name { font-weight: 600; font-size: 14px; margin-top: 8px; }
.embed .field-value { font-size: 14px; white-space: pre-wrap; }
.embed .footer { font-size: 12px; color: #b5bac1; margin-top: 8px; }
code { background: #1e1f22; border-radius: 3px; padding: 0 .2em; font-size: 85%;
       font-family: Consolas, "Liberation Mono", monospace; }
a { color: #00a8fc; text-decoration: none; }
.buttons { margin-top: 8px; }
.button { display: inline-block; border-radius: 3px; padding: 2px 16px; margin-right: 8px;
          font-size: 14px; line-height: 28px; color: #fff; background: #4e5058; }
.button.primary { background: #5865f2; } .button.success { background: #248046; }
"""


@pytest.fixture(scope="module")
def catalog():
    return load_bundled().catalog


def github_html(body: str) -> str:
    rendered = cmarkgfm.github_flavored_markdown_to_html(body, options=Options.CMARK_OPT_UNSAFE)
    return (
        f"<!doctype html><meta charset=utf-8><style>{GITHUB_CSS}</style>"
        f"<div class=comment><div class=comment-head><b>triage-bot</b> commented</div>"
        f"<div class=comment-body>{rendered}</div></div>"
    )


_CODE = re.compile(r"`([^`]+)`")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_LINK = re.compile(r"\[([^\]]+)\]\((https?://[^)\s]+)\)")


def discord_markdown(text: str) -> str:
    """The bits of Discord markdown the answers use: code, bold, links (escaped first)."""
    out = html.escape(text.replace("\u200b", ""), quote=False)
    out = _LINK.sub(lambda m: f'<a href="{m[2]}">{m[1]}</a>', out)
    out = _CODE.sub(lambda m: f"<code>{m[1]}</code>", out)
    return _BOLD.sub(lambda m: f"<b>{m[1]}</b>", out)


def discord_html(message: dict, buttons: list[tuple[str, str]]) -> str:
    parts = [f"<!doctype html><meta charset=utf-8><style>{DISCORD_CSS}</style>"]
    if message.get("content"):
        parts.append(f"<div class=content>{discord_markdown(message['content'])}</div>")
    for embed in message.get("embeds", []):
        colour = f"#{embed.get('color', 0x1E1F22):06x}"
        title = html.escape(embed.get("title", ""))
        if embed.get("url"):
            title = f'<a href="{html.escape(embed["url"])}">{title}</a>'
        inner = [f"<div class=title>{title}</div>"]
        if embed.get("description"):
            inner.append(f"<div class=desc>{discord_markdown(embed['description'])}</div>")
        for field in embed.get("fields", []):
            inner.append(f"<div class=field-name>{discord_markdown(field['name'])}</div>")
            inner.append(f"<div class=field-value>{discord_markdown(field['value'])}</div>")
        if embed.get("footer"):
            inner.append(f"<div class=footer>{html.escape(embed['footer']['text'])}</div>")
        parts.append(f'<div class=embed style="--bar:{colour}">{"".join(inner)}</div>')
    if buttons:
        row = "".join(f'<span class="button {k}">{html.escape(t)}</span>' for t, k in buttons)
        parts.append(f"<div class=buttons>{row}</div>")
    return "".join(parts)


def buttons_for(message: dict) -> list[tuple[str, str]]:
    """The buttons the Discord adapter adds: votes on the shown records, then Show more."""
    ids = message.get("record_ids") or []
    out = []
    for number, _record in enumerate(ids, 1):
        suffix = texts.RECORD_NUMBER.format(number=number) if len(ids) > 1 else ""
        out += [(texts.HELPFUL + suffix, "success"), (texts.WRONG_MATCH + suffix, "")]
    if message.get("show_more"):
        out.append((texts.MORE_DISCORD, "primary"))
    return out


def screenshot(page: str, name: str, tmp_path: Path, height: int = HEIGHT) -> tuple[int, list]:
    source = tmp_path / f"{name}.html"
    source.write_text(page, encoding="utf-8")
    shot = tmp_path / f"{name}.png"
    result = subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            f"--user-data-dir={tmp_path / 'profile'}",
            f"--screenshot={shot}",
            f"--window-size={WIDTH},{height}",
            source.as_uri(),
        ],
        capture_output=True,
        timeout=90,
        env={**os.environ, "HOME": str(tmp_path)},
        check=False,
    )
    assert shot.exists(), result.stdout.decode(errors="replace")[-2000:]
    keep = os.environ.get("ANSWER_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / shot.name)
    width, got_height, bpp, rows = decode_png(shot.read_bytes())
    assert (width, got_height) == (WIDTH, height)
    return bpp, rows


def ink_rows(rows: list[bytes], bpp: int, background: bytes) -> list[int]:
    """Row numbers that hold anything but the page background."""
    out = []
    for y, row in enumerate(rows):
        if any(row[x : x + 3] != background for x in range(0, len(row), bpp * 3)):
            out.append(y)
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_github_first_view_screenshot(case, catalog, tmp_path):
    body = render_comment(CASES[case](catalog))
    page = github_html(body)
    assert "<details open" not in page  # folded: the screenshot is the first view
    bpp, rows = screenshot(page, f"github_{case}", tmp_path)
    assert distinct_colours(rows, bpp) > 5
    used = ink_rows(rows, bpp, b"\xff\xff\xff")
    # The first view ends well within one screen: nothing below 85% of a 1000 px window.
    assert used and used[-1] < HEIGHT * 0.85, used[-1]
    if CASES[case](catalog).sections:
        assert len(pixels_of(rows, bpp, "#0969da")) > 50  # the pinned source link


@pytest.mark.parametrize("case", sorted(CASES))
def test_discord_first_view_screenshot(case, catalog, tmp_path):
    answer = CASES[case](catalog)
    message = render_message(answer)
    bpp, rows = screenshot(discord_html(message, buttons_for(message)), f"discord_{case}", tmp_path)
    used = ink_rows(rows, bpp, bytes.fromhex("313338"))
    assert used and used[-1] < 700, used[-1]  # a short answer, not a screen of text
    for embed in message["embeds"]:
        assert len(pixels_of(rows, bpp, f"#{embed['color']:06x}")) > 100  # the colour bar


def test_discord_show_more_screenshot(catalog, tmp_path):
    more = render_more(case_bare_site(catalog))
    bpp, rows = screenshot(discord_html(more, []), "discord_more_bare_site", tmp_path)
    assert distinct_colours(rows, bpp) > 5
