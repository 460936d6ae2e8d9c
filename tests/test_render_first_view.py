"""What a reporter sees first, and the promises every answer keeps (issue 14).

The first view on GitHub is the comment with every `<details>` folded to its summary line; on
Discord it is the message's content and embeds (Show more is a separate, ephemeral message).
"""

from __future__ import annotations

import re

import pytest
from test_render_golden import (
    CASES,
    SEED_002,
    SEED_003,
    analysis,
    answer_of,
    case_multi,
    make_panic,
    matched,
)

from bot.app import load_bundled
from bot.catalog.loader import Catalog
from bot.catalog.model import Record
from bot.render import texts
from bot.render.answer.links import source_link
from bot.render.answer.words import check_kind_words
from bot.render.discord import first_view_size, render_message, render_more
from bot.render.github import render_comment
from bot.render.markup import plain
from bot.render.terminal import render_text

GITHUB_FIRST_VIEW_LINES = 12
DISCORD_FIRST_VIEW_CHARS = 1000
BLOB = re.compile(r"https://github\.com/[^/\s]+/[^/\s]+/blob/([^/\s]+)/")
HEX40 = re.compile(r"(?<![0-9a-f])[0-9a-f]{40}(?![0-9a-f])")


@pytest.fixture(scope="module")
def catalog():
    return load_bundled().catalog


def github_first_view(body: str) -> list[str]:
    """The lines shown before any click: each top-level <details> reduced to its summary."""
    lines, depth = [], 0
    for line in body.split("\n"):
        if line.startswith("<!-- triage-bot"):
            continue
        if line == "<details>":
            depth += 1
            continue
        if line == "</details>":
            depth -= 1
            continue
        if line.startswith("<summary>") and depth == 1:
            lines.append(line)
            continue
        if depth == 0 and line.strip():
            lines.append(line)
    return lines


@pytest.mark.parametrize("case", sorted(CASES))
def test_first_view_fits_on_github_and_discord(case, catalog):
    answer = CASES[case](catalog)
    shown = github_first_view(render_comment(answer))
    assert len(shown) <= GITHUB_FIRST_VIEW_LINES, "\n".join(shown)
    assert first_view_size(render_message(answer)) <= DISCORD_FIRST_VIEW_CHARS


def test_three_panics_with_the_production_default_fit_the_first_view(catalog):
    answer = case_multi(catalog, max_sections=3)  # build_answer's default and production's
    assert len(answer.sections) == 3
    shown = github_first_view(render_comment(answer))
    assert len(shown) <= GITHUB_FIRST_VIEW_LINES, "\n".join(shown)
    assert first_view_size(render_message(answer)) <= DISCORD_FIRST_VIEW_CHARS
    # each later panic is one line: the panic as pasted and its pinned source
    for section in answer.sections[1:]:
        line = f"### `{section.panic_message}` · [`{section.source.label}`]({section.source.url})"
        assert line in shown


@pytest.mark.parametrize("case", sorted(set(CASES) - {"uncatalogued"}))
def test_first_view_is_the_panic_its_meaning_the_fix_and_the_source(case, catalog):
    answer = CASES[case](catalog)
    root = answer.sections[0]
    shown = "\n".join(github_first_view(render_comment(answer)))
    assert shown.startswith("") and f"### `{root.panic_message}`" in shown
    assert f"**{texts.FIRST_MEANING}**" in shown
    assert f"**{texts.SOURCE}:** [`{root.source.label}`]({root.source.url})" in shown
    if root.first_step:
        assert f"**{texts.FIRST_SOLUTION}**" in shown
    # Everything else is folded: no full section headings before the first click.
    for heading in (texts.SOLUTIONS, texts.EXAMPLE_FIX, texts.RELATED_ERRORS):
        assert f"#### {heading}" not in shown
    embed = render_message(answer)["embeds"][0]
    # Discord caps a title at 256 characters: a longer message is cut and ends with "…".
    title = embed["title"]
    assert embed["color"] and len(title) <= 256
    assert title == root.panic_message or root.panic_message.startswith(title.removesuffix("…"))
    assert "fields" not in embed


def test_the_pasted_message_not_the_format_string(catalog):
    answer = CASES["bare_site"](catalog)
    section = answer.sections[0]
    assert section.record.error_message == "Node {:?} is needed but never checkpointed"
    assert section.panic_message == "Node NodeId { value: 7 } is needed but never checkpointed"
    assert "### `Node NodeId { value: 7 } is needed" in render_comment(answer)


@pytest.mark.parametrize("case", sorted(CASES))
def test_links_pin_the_full_commit_and_labels_show_seven(case, catalog):
    answer = CASES[case](catalog)
    outputs = [render_comment(answer), render_text(answer, color=False)]
    message = render_message(answer)
    outputs += [e.get("url", "") + e.get("description", "") for e in message["embeds"]]
    outputs += [str(e) for e in render_more(answer)["embeds"]]
    for text in outputs:
        for sha in BLOB.findall(text):
            assert re.fullmatch(r"[0-9a-f]{40}", sha), sha
        without_urls = re.sub(r"https?://\S+", "", text)
        assert not HEX40.search(without_urls), "a fact printed a 40-character id"
    for section in answer.sections:
        assert re.search(r" @ [0-9a-f]{7}$", section.source.label)


def test_a_short_sha_nothing_completes_is_said_not_linked(catalog):
    record = catalog.get(SEED_003)
    # A hand-written record with a short id and a githubUrl on a branch: no full SHA is known.
    unknown = record.with_changes(
        analyzed_sha="abc1234",
        github_url="https://github.com/tracel-ai/burn/blob/main/crates/burn-autodiff/src/ops/module.rs",
    )
    source = source_link(unknown, catalog)
    assert source.label == "module.rs:1933 @ abc1234" and source.url is None
    # The same record with its full id (or a githubUrl pinned at one) is linked at that id.
    full = "abc1234" + "0" * 33
    assert source_link(unknown.with_changes(analyzed_sha=full), catalog).url == (
        f"https://github.com/tracel-ai/burn/blob/{full}/crates/burn-autodiff/src/ops/module.rs#L1933"
    )
    pinned = unknown.with_changes(github_url=record.github_url)
    assert BLOB.search(source_link(pinned, catalog).url).group(1) == record.analyzed_sha
    # The answer says the short id as text, with no link at it anywhere
    changed = Catalog({**catalog.records, unknown.id: unknown}, families=catalog.families)
    panic = make_panic("Can't differentiate interpolate backward.")
    answer = answer_of(analysis(matched(panic, unknown.id, ["pattern"])), changed)
    for text in (
        render_comment(answer),
        render_text(answer, color=False),
        str(render_more(answer)),
    ):
        assert "module.rs:1933 @ abc1234" in text
        assert "/blob/abc1234" not in text and "/blob/main/" not in text


def test_related_errors_are_whole_linked_and_at_the_records_commit(catalog):
    section = CASES["seed_002"](catalog).sections[0]
    commit = BLOB.search(section.source.url).group(1)
    assert section.related
    for item in section.related:
        assert item.record_id and item.source and item.source.url
        assert BLOB.search(item.source.url).group(1) == commit
        assert not item.message.endswith("…")
    messages = [r.message for r in section.related]
    # The seed lists it cut off (`...update is not i`); the catalog's record has it whole.
    assert "float_scatter with {other:?} update is not implemented" in messages
    # The line anchor only where the related record was analysed at the same commit.
    same = [r for r in section.related if r.record_id == SEED_003]
    assert same and same[0].source.url.endswith("#L1933")


@pytest.mark.parametrize("seed", ["seed_002", "seed_003"])
def test_a_record_contradicting_its_family_leads_with_the_family(seed, catalog):
    answer = CASES[seed](catalog)
    section = answer.sections[0]
    family = catalog.family(section.record_id)
    assert section.documentation == family.documentation
    assert section.meaning_text == family.summary
    assert section.first_step == family.solutions[0]
    assert section.folded is not None
    assert section.folded.documentation == section.record.documentation
    body = render_comment(answer)
    caution = plain(section.folded.caution)
    # The family's explanation first, then the one-line caution as the fold's summary.
    assert body.index(family.summary) < body.index(caution)
    assert f"<summary>{caution}</summary>" in body.replace("`", "")
    own = section.record.solutions[0]
    assert body.index(caution) < body.index(own)
    shown = "\n".join(github_first_view(body))
    assert own not in shown and "max_pool2d" not in shown


def test_footer_asks_for_reactions_and_keeps_commands_for_maintainers(catalog):
    answer = CASES["seed_001"](catalog)
    body = render_comment(answer)
    shown = "\n".join(github_first_view(body))
    assert texts.REACT_HINT in shown
    assert "/triage" not in shown
    maintainers = body[body.index(f"<summary><sub>{texts.MAINTAINERS}</sub></summary>") :]
    assert "`/triage wrong`" in maintainers
    terminal = render_text(answer, color=False)
    assert texts.REACT_HINT not in terminal and "/triage" not in terminal
    assert "Automatic answer" not in terminal


def test_discord_buttons_vote_only_on_records_the_message_shows(catalog):
    answer = CASES["multi_panic"](catalog)  # three records matched, two shown
    message = render_message(answer)
    assert message["record_ids"] == list(answer.record_ids) == [SEED_002, SEED_003]
    assert len(message["embeds"]) == 2
    assert message["show_more"] == f"triage:more:{SEED_002},{SEED_003}"


def test_uncatalogued_says_what_was_not_found_and_the_next_step(catalog):
    answer = CASES["uncatalogued"](catalog)
    body = render_comment(answer)
    said = (
        "The panic `index out of bounds: the len is 3 but the index is 7` at "
        "`crates/my-app/src/main.rs:40`, raised in `my-app`, is outside the catalog."
    )
    assert said in body
    assert said in render_message(answer)["content"]
    assert f"`{SEED_002}` `Can't differentiate avg pool 2d backward.` (62% confidence" in body
    # What a maintainer runs is not for the reporter: only the terminal names the commands.
    assert "triage-bot" not in body.split("\n", 1)[1]
    assert "triage-bot" not in render_message(answer)["content"]
    assert "`triage-bot catalog draft GROUP`" in render_text(answer, color=False)


def kind(error_type: str, message: str, impl: str | None = None) -> str:
    record = Record(
        id="k",
        repo="tracel-ai/burn",
        error_message=message,
        error_type=error_type,
        file_path="crates/burn-tensor/src/x.rs",
        check={"impl": impl} if impl else None,
    )
    return plain(check_kind_words(record))


def test_a_bare_site_says_the_kind_of_check_and_what_it_guards():
    assert kind("assert_eq", "Shapes of lhs {:?} and rhs {:?} differ") == (
        "An `assert_eq!` on sizes or shapes in `burn-tensor` failed: the values given do not fit "
        "this operation."
    )
    # words any project's site may use: nothing assumes the domain is tensors
    for message in ("Invalid buffer length: expected {} got {}", "dtype mismatch", "wrong device"):
        assert "tensor" not in kind("assert_eq", message).replace("`burn-tensor`", "")
    assert "on data types" in kind("assert", "dtype mismatch")
    assert "on devices" in kind("assert", "tensors must be on the same device")
    assert "not implemented for the data type" in kind("unimplemented", "Unsupported dtype {:?}")
    assert "not implemented by this backend" in kind("unimplemented", "not on this backend")
    # no project's backend names: the message naming the site's `impl .. for TYPE` says it
    impl, said = "impl ModuleOps<Self> for NdArray<E>", "rfft is not supported for ndarray"
    assert "not implemented for `NdArray`" in kind("todo", said, impl)
    assert kind("todo", said).endswith("is not implemented.")
    assert "is poisoned" in kind("expect", "Failed to lock the mutex")
    assert "other end was closed" in kind("expect", "Failed to send to the channel")
    assert "I/O operation" in kind("expect", "Failed to read file")
    assert "likely a bug" in kind("unreachable", "never here")


def test_no_version_note_when_the_line_is_the_records(catalog):
    for case in ("seed_001", "seed_002", "bare_site"):
        assert CASES[case](catalog).sections[0].version_note is None
    moved = make_panic("Can't differentiate avg pool 2d backward.")
    answer = answer_of(analysis(matched(moved, SEED_002, ["pattern"], distance=None)), catalog)
    assert answer.sections[0].version_note is None  # no location pasted: nothing to compare


def test_the_enclosing_function_comes_from_the_source_excerpt(catalog):
    from bot.render.answer.words import enclosing

    assert enclosing(catalog.get(SEED_002)) == ("avg_pool2d_backward", None)
    # The excerpt of 001 starts inside a long function: nothing is guessed.
    assert enclosing(catalog.get("d59d5538758c7e08")) == (None, None)
    record = Record(
        id="e",
        repo="o/r",
        error_message="boom",
        source_code='impl Foo for Bar {\n    pub fn go(&self) {\n        panic!("boom");\n    }\n}',
        source_code_start=10,
        line_number=12,
    )
    assert enclosing(record) == ("go", "impl Foo for Bar")
    # without an excerpt, the function the scan recorded (enclosingFn)
    scanned = Record(id="s", repo="o/r", error_message="boom", enclosing_fn="float_mul")
    assert enclosing(scanned) == ("float_mul", None)
    facts = [plain(f) for f in CASES["seed_000"](catalog).sections[0].facts]
    assert "In `fn deform_conv2d_backward`" in facts
