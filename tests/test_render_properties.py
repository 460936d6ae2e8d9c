"""Property tests: whatever the catalog and the paste say, no rendering breaks its platform.

Records, panics and analyses are generated with hypothesis, from text built out of the pieces
that cause trouble: mentions, backtick and tilde runs, HTML that would close a `<details>` or
open a comment, terminal escapes, bidi overrides, and very long runs that overflow every limit.
"""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.catalog.model import Record
from bot.core.analysis import Analysis, Candidate, PanicMatch
from bot.core.panic import Location, Panic
from bot.render.answer.build import build_answer
from bot.render.discord import render_message, render_more, render_plain
from bot.render.github import MARKER_PREFIX, parse_marker, render_comment, render_no_longer
from bot.render.markup import ZW, safe_url, ulen
from bot.render.terminal import render_text, render_verdict_line

SETTINGS = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

NASTY = [
    "@everyone",
    "@here",
    "@octocat",
    "@ team/x",
    "<@123456789>",
    "<@&42>",
    "a@b.c",
    "`",
    "``",
    "```",
    "````",
    "```rust\n",
    "~~~",
    "\n```\n",
    "\n~~~~\n",
    "<!--",
    "-->",
    "<details>",
    "</details>",
    "<summary>",
    "</sub>",
    "<b>",
    "<script>",
    "\n",
    "\n\n",
    "    ",
    "# ",
    "> ",
    "- ",
    "1. ",
    "[x](https://e.com)",
    "](",
    "\\",
    "\\`",
    "\x1b[31m",
    "\x1b]0;title\x07",
    "\r",
    "\u202e",
    "\u2066",
    "é",
    "🦀",
    "**",
    "_",
    "|",
    "#12",
    "{:?}",
    "\u200b",
]

piece = st.one_of(st.sampled_from(NASTY), st.text(max_size=12))
small_text = st.lists(piece, max_size=8).map("".join)
big_text = st.builds(lambda p, n: p * n, st.sampled_from([*NASTY, "word "]), st.integers(1, 4000))
text = st.one_of(small_text, small_text, small_text, big_text)
maybe_text = st.one_of(st.none(), text)
record_ids = st.one_of(st.text("0123456789abcdef", min_size=16, max_size=16), small_text)
urls = st.one_of(
    st.none(),
    text,
    st.builds(lambda p: "https://github.com/o/r/blob/abc/" + p, small_text),
)
shas = st.one_of(st.none(), st.text("0123456789abcdef", min_size=7, max_size=40), small_text)
text_lists = st.lists(text, max_size=4).map(tuple)


@st.composite
def records(draw, record_id: str) -> Record:
    return Record(
        id=record_id,
        repo=draw(st.one_of(st.just("tracel-ai/burn"), small_text)),
        error_message=draw(text),
        error_type=draw(st.one_of(st.none(), st.sampled_from(["panic", "expect"]), small_text)),
        file_path=draw(st.one_of(st.none(), st.just("crates/burn-x/src/a.rs"), small_text)),
        line_number=draw(st.one_of(st.none(), st.integers(1, 10**9))),
        github_url=draw(urls),
        documentation=draw(maybe_text),
        trigger_scenarios=draw(maybe_text),
        common_situations=draw(maybe_text),
        solutions=draw(text_lists),
        example_fix=draw(maybe_text),
        validation_code=draw(maybe_text),
        type_guard=draw(maybe_text),
        try_catch_pattern=draw(maybe_text),
        prevention_tips=draw(text_lists),
        related_errors=draw(text_lists),
        source_code=draw(maybe_text),
        analyzed_sha=draw(shas),
        analyzed_at=draw(st.one_of(st.none(), small_text)),
    )


class FakeCatalog:
    def __init__(self, records: list[Record], flagged: set[str]):
        self.records = {r.id: r for r in records}
        self.flagged = flagged

    def get(self, record_id: str) -> Record | None:
        return self.records.get(record_id)

    def by_message(self, message: str) -> list[Record]:
        return [r for r in self.records.values() if r.error_message == message]

    def flags(self, record_id: str) -> frozenset[str]:
        return frozenset({"possible-mismatch"}) if record_id in self.flagged else frozenset()


@st.composite
def locations(draw) -> Location | None:
    if draw(st.booleans()):
        return None
    return Location(
        raw=draw(small_text),
        path=draw(text),
        line=draw(st.one_of(st.none(), st.integers(0, 10**9))),
        column=None,
        kind=draw(st.sampled_from(["registry", "git", "workspace", "std", "other"])),
        crate=draw(st.one_of(st.none(), small_text)),
        crate_version=draw(st.one_of(st.none(), small_text)),
        crate_path=draw(st.one_of(st.none(), small_text)),
    )


@st.composite
def panics(draw) -> Panic:
    return Panic(
        message=draw(text),
        core_message=draw(small_text),
        wrapper=None,
        thread=None,
        location=draw(locations()),
        has_header=draw(st.booleans()),
        frames=(),
        start=0,
        end=1,
    )


EVIDENCE = ["pattern", "prefix", "fuzzy", "location", "line", "crate", "header"]


@st.composite
def cases(draw):
    """(catalog, analysis, max_sections): several records, several panics, some matched."""
    ids = draw(st.lists(record_ids, min_size=1, max_size=4, unique=True))
    recs = [draw(records(i)) for i in ids]
    # Some related errors name other records, so that links to them are rendered too.
    if len(recs) > 1 and draw(st.booleans()):
        first = recs[0]
        recs[0] = first.with_changes(related_errors=(*first.related_errors, recs[1].error_message))
    flagged = set(draw(st.lists(st.sampled_from(ids), max_size=len(ids))))
    catalog = FakeCatalog(recs, flagged)
    items = []
    for _ in range(draw(st.integers(0, 5))):
        panic = draw(panics())
        if draw(st.booleans()):
            candidate = Candidate(
                record_id=draw(st.sampled_from([*ids, "not-in-catalog"])),
                confidence=draw(st.floats(0, 1)),
                evidence=tuple(draw(st.lists(st.sampled_from(EVIDENCE), unique=True))),
                message_score=draw(st.floats(0, 1)),
                line_distance=draw(st.one_of(st.none(), st.integers(0, 50))),
            )
            items.append(PanicMatch(panic, (candidate,), draw(st.booleans())))
        else:
            items.append(PanicMatch(panic, (), False))
    if any(i.matched for i in items):
        verdict = "match"
    else:
        verdict = "uncatalogued-panic" if items else "no-panic"
    fingerprint = draw(st.one_of(st.text("0123456789abcdef", max_size=16), small_text))
    analysis = Analysis(verdict=verdict, panics=tuple(items), fingerprint=fingerprint)
    return catalog, analysis, draw(st.integers(1, 4))


# --- checks -------------------------------------------------------------------------------------

MENTION = re.compile(r"@[^\s" + ZW + r"]")
FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
CONTAINER = re.compile(r"^(?: {0,3}(?:>|[-*+]|\d{1,9}[.)])(?: |$))+")


def assert_no_mentions(text: str) -> None:
    found = MENTION.search(text)
    assert found is None, f"unescaped mention {text[found.start() : found.start() + 20]!r}"


def strip_code_spans(line: str) -> str:
    """A line without its inline code spans (CommonMark's backtick-run rule, one line)."""
    out, i = [], 0
    while i < len(line):
        if line[i] == "\\" and i + 1 < len(line):
            out.append(line[i : i + 2])
            i += 2
            continue
        if line[i] == "`":
            j = i
            while j < len(line) and line[j] == "`":
                j += 1
            run = line[i:j]
            close = re.search(r"(?<!`)" + run + r"(?!`)", line[j:])
            if close:
                i = j + close.end()
                continue
            out.append(run)
            i = j
            continue
        out.append(line[i])
        i += 1
    return "".join(out)


ALLOWED_TAGS = ("<details>", "</details>", "<summary>", "</summary>", "<sub>", "</sub>")


def check_github_markdown(body: str) -> None:
    assert ulen(body) <= 65_536
    assert_no_mentions(body)
    lines = body.split("\n")
    assert lines[0].startswith(MARKER_PREFIX)
    fence: str | None = None
    details = 0
    for number, line in enumerate(lines):
        if fence is not None:
            stripped = line.strip()
            if stripped and set(stripped) == {fence[0]} and len(stripped) >= len(fence):
                fence = None
            continue
        opened = FENCE_OPEN.match(line)
        if opened:
            assert re.fullmatch(r"`{3,}rust", line), f"unexpected fence {line!r}"
            fence = opened.group(1)
            continue
        inner = CONTAINER.sub("", line)
        assert not FENCE_OPEN.match(inner), f"stray fence {line!r}"
        if number == 0:
            continue
        visible = strip_code_spans(line)
        assert "```" not in visible and "~~~" not in visible, f"stray fence {line!r}"
        assert "<!--" not in visible
        for at in re.finditer("<", visible):
            tag = visible[at.start() :]
            assert tag.startswith(ALLOWED_TAGS), f"raw HTML {tag[:20]!r}"
        details += visible.count("<details>") - visible.count("</details>")
        assert details >= 0
    assert fence is None, "a code block was left open"
    assert details == 0, "unbalanced <details>"


def check_discord_markdown(value: str) -> None:
    assert_no_mentions(value)
    blocks = value.split("```")
    assert len(blocks) % 2 == 1, "unbalanced code block"
    for inner in blocks[1::2]:
        assert inner.startswith("rust\n")


def check_terminal(text: str, color: bool) -> None:
    plain = re.sub(r"\x1b\[(?:0|1|2|33|36)m", "", text) if color else text
    for ch in plain:
        assert ch in "\n\t" or (ord(ch) >= 0x20 and not 0x7F <= ord(ch) < 0xA0), repr(ch)
    assert "\u202e" not in plain and "\u2066" not in plain


# --- the properties -----------------------------------------------------------------------------


@SETTINGS
@given(cases())
def test_github_comment_is_safe_and_within_limits(case):
    catalog, analysis, max_sections = case
    answer = build_answer(analysis, catalog, max_sections=max_sections)
    body = render_comment(answer)
    check_github_markdown(body)
    marker = parse_marker(body)
    assert marker is not None and marker["kind"] == "answer"
    assert len(marker["ids"]) <= len(answer.sections)
    # The answer and its link survive trimming.
    for section in answer.sections:
        url = safe_url(section.source.url) if section.source else None
        if url:
            assert url in body
    gone = render_no_longer(answer)
    check_github_markdown(gone)
    assert parse_marker(gone)["kind"] == "no-longer"


def check_discord_message(message, answer) -> None:
    assert message["allowed_mentions"] == {"parse": []}
    assert ulen(message["content"]) <= 2000
    check_discord_markdown(message["content"])
    embeds = message["embeds"]
    assert len(embeds) <= 10
    total = 0
    for embed in embeds:
        assert 0 < ulen(embed["title"]) <= 256
        assert ulen(embed["description"]) <= 4096
        assert len(embed.get("fields", [])) <= 25
        assert ulen(embed.get("footer", {}).get("text", "")) <= 2048
        assert_no_mentions(embed["title"])
        assert_no_mentions(embed.get("footer", {}).get("text", ""))
        check_discord_markdown(embed["description"])
        if "url" in embed:
            assert re.fullmatch(r"https?://\S+", embed["url"])
        total += ulen(embed["title"]) + ulen(embed["description"])
        total += ulen(embed.get("footer", {}).get("text", ""))
        for field in embed.get("fields", []):
            assert 0 < ulen(field["name"]) <= 256
            assert 0 < ulen(field["value"]) <= 1024
            assert_no_mentions(field["name"])
            check_discord_markdown(field["value"])
            total += ulen(field["name"]) + ulen(field["value"])
    assert total <= 6000
    if answer.sections:
        assert embeds, "the first answer is always sent"


@SETTINGS
@given(cases())
def test_discord_message_is_safe_and_within_limits(case):
    catalog, analysis, max_sections = case
    answer = build_answer(analysis, catalog, max_sections=max_sections)
    for message in (render_message(answer), render_more(answer)):
        check_discord_message(message, answer)
    plain = render_plain(answer)
    assert 0 < ulen(plain) <= 2000
    check_discord_markdown(plain)


@SETTINGS
@given(cases(), st.booleans())
def test_terminal_text_has_no_foreign_control_codes(case, color):
    catalog, analysis, max_sections = case
    answer = build_answer(analysis, catalog, max_sections=max_sections)
    check_terminal(render_text(answer, color=color), color)
    check_terminal(render_verdict_line(analysis), False)


# --- the checks themselves must be able to fail ---------------------------------------------------


def test_checks_catch_what_they_are_for():
    good = "<!-- triage-bot:answer ids= fp= -->\nhello `<b>` there\n\n```rust\nx ``` \n```"
    check_github_markdown(good)
    for bad in (
        good + "\n@everyone",
        good + "\n<!-- hidden",
        good + "\n</details>",
        good + "\n```",
        good + "\n~~~",
        good.replace("```rust", "```sh"),
    ):
        try:
            check_github_markdown(bad)
        except AssertionError:
            continue
        raise AssertionError(f"check missed {bad!r}")
    for bad in ("```rust\nx", "@here", "```\nx\n```", "<@1>"):
        try:
            check_discord_markdown(bad)
        except AssertionError:
            continue
        raise AssertionError(f"check missed {bad!r}")
    try:
        check_terminal("a\x1b[31mb", False)
    except AssertionError:
        pass
    else:
        raise AssertionError("check missed an escape")


# --- the limits, reached on purpose -------------------------------------------------------------


def huge_case(count: int = 3):
    """`count` records whose every field is far too long, each answering one panic."""
    recs, items = [], []
    for n in range(count):
        rec = Record(
            id=f"{n:016x}",
            repo="tracel-ai/burn",
            error_message=f"boom {n} " + "@everyone " * 50,
            error_type="panic",
            file_path=f"crates/burn-x/src/f{n}.rs",
            line_number=10 + n,
            analyzed_sha="d16f7ba2ed0d41408189384044cc886fb4c8f957",
            documentation="Long <details> text ``` @here. " * 3000,
            solutions=tuple("Do this `@x` ~~~ thing. " * 200 for _ in range(20)),
            example_fix="let x = 1; // ``` ```` @y\n" * 2000,
            trigger_scenarios="When </details> happens. " * 2000,
            prevention_tips=("Tip " * 500,) * 10,
            validation_code="check();\n" * 5000,
            related_errors=tuple(f"other {k} @team" for k in range(50)),
        )
        recs.append(rec)
        panic = Panic(
            message=rec.error_message,
            core_message=rec.error_message,
            wrapper=None,
            thread="main",
            location=None,
            has_header=False,
            frames=(),
            start=0,
            end=1,
        )
        candidate = Candidate(rec.id, 0.9, ("pattern",), 1.0, None)
        items.append(PanicMatch(panic, (candidate,), True))
    catalog = FakeCatalog(recs, set())
    return catalog, Analysis("match", tuple(items), "abc")


def test_github_trims_long_sections_first_and_keeps_the_answer():
    catalog, analysis = huge_case()
    answer = build_answer(analysis, catalog)
    body = render_comment(answer)
    check_github_markdown(body)
    assert ulen(body) > 50_000  # trimmed to the limit, not far below it
    assert "Some long sections were left out" in body
    for section in answer.sections:
        assert safe_url(section.source.url) in body
        assert section.title.split()[1] in body
    # The first section keeps its explanation (shortened), the extras go first.
    assert body.count("#### What it means") >= 1


def test_discord_trims_to_6000_and_keeps_the_first_answer():
    catalog, analysis = huge_case()
    answer = build_answer(analysis, catalog)
    message = render_more(answer)
    embeds = message["embeds"]
    assert embeds and embeds[0]["url"] == safe_url(answer.sections[0].source.url)
    total = sum(
        ulen(e["title"])
        + ulen(e["description"])
        + ulen(e.get("footer", {}).get("text", ""))
        + sum(ulen(f["name"]) + ulen(f["value"]) for f in e.get("fields", []))
        for e in embeds
    )
    assert 5000 < total <= 6000
    assert ulen(render_plain(answer)) <= 2000


def test_a_fence_inside_an_example_fix_cannot_close_the_block():
    catalog, analysis = huge_case(1)
    rec = next(iter(catalog.records.values()))
    code = "fn main() {}\n````\n```\n@everyone"
    catalog.records[rec.id] = rec.with_changes(
        documentation="short",
        solutions=(),
        trigger_scenarios=None,
        prevention_tips=(),
        validation_code=None,
        related_errors=(),
        example_fix=code,
    )
    body = render_comment(build_answer(analysis, catalog))
    check_github_markdown(body)
    assert "`````rust\nfn main() {}\n````\n```\n@\u200beveryone\n`````" in body
    value = render_more(build_answer(analysis, catalog))["embeds"][0]["fields"][0]["value"]
    check_discord_markdown(value)
