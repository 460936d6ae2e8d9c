"""Issue 25's matching tail, on small crates of our own under tests/fixtures/tail_<kind>/, each
scanned with `catalog scan` here; every kind has a realistic paste and negatives (a
paraphrase, a similar but different message) that must stay unanswered.

1. `#[track_caller]` helpers printing a heading and a `=> ...` body, reported at the caller;
2. a catalogued panic (older, shorter wording) after an uncatalogued dependency's panic;
3. a catalogued message quoted verbatim in a title or prose, without a header;
4. a check reason quoted without its banner;
5. long messages that are mostly placeholders, on their fixed text.
"""

from __future__ import annotations

import pytest
from fixture_scan import NOTE, REGISTRY, Scanned, scanned_fixtures

from bot.app import Triage
from bot.core.analysis import Analysis
from bot.render import texts
from bot.render.answer.build import build_answer
from bot.render.github import render_comment
from bot.render.terminal import render_text

SHA = "6" * 40
REPOS = {
    "tail_track_caller": "acme/gridcmp",
    "tail_root": "acme/relay",
    "tail_quoted": "acme/tilecache",
    "tail_reason": "acme/shapecheck",
    "tail_placeholders": "acme/taskgraph",
}


@pytest.fixture(scope="module")
def scanned(tmp_path_factory: pytest.TempPathFactory) -> Scanned:
    return scanned_fixtures(tmp_path_factory, REPOS, SHA)


def header(path: str, line: int, message: str, thread: str = "main") -> str:
    return f"thread '{thread}' panicked at {path}:{line}:9:\n{message}\n{NOTE}\n"


def answered(triage: Triage, text: str) -> list[str]:
    """The answered records' messages, root first."""
    out = []
    for item in triage.analyse(text).answered:
        record = triage.catalog.get(item.best.record_id) if item.best else None
        assert record is not None
        out.append(record.error_message)
    return out


def analysed(triage: Triage, text: str) -> Analysis:
    return triage.analyse(text)


# --- 1. #[track_caller] helpers with a multi-line body ------------------------------------------

CLOSE = "Grids are not close enough:{report}"
SAME = "Grids are not the same:{report}"
CLOSE_BODY = (
    "Grids are not close enough:\n"
    "  => Cell 3: 0.5 != 0.75 | gap 0.25 > tolerance 0.001\n"
    "  => Cell 4: 0.5 != 0.8125 | gap 0.3125 > tolerance 0.001\n"
    "  => Cell 9: 1 != 0.5 | gap 0.5 > tolerance 0.001\n"
    "12 more mismatches..."
)
SAME_BODY = "Grids are not the same:\n  => Cell 0: 1 != 2\n  => Length: 4 != 5"


def test_1_a_helpers_heading_and_body_is_answered_at_the_callers_line(scanned: Scanned) -> None:
    triage = scanned("tail_track_caller")
    test_run = f"running 1 test\n{header('tests/blur.rs', 41, CLOSE_BODY, 'blur_keeps_edges')}"
    assert answered(triage, test_run) == [CLOSE]
    # The user's own binary, and the shorter heading of the other helper.
    assert answered(triage, header("/home/u/app/src/main.rs", 20, SAME_BODY)) == [SAME]
    analysis = analysed(triage, header("/home/u/app/src/main.rs", 20, SAME_BODY))
    assert analysis.verdict == "match"
    assert analysis.answered[0].best is not None
    assert analysis.answered[0].best.evidence == ("pattern", "header")


def test_1_another_heading_or_no_body_is_not_the_helper(scanned: Scanned) -> None:
    triage = scanned("tail_track_caller")
    for text in (
        header("/home/u/app/src/main.rs", 20, "Images are not close enough:\n  => Pixel 3: 0 != 1"),
        header("/home/u/app/src/main.rs", 20, "Grids are not close:\n  => Cell 3: 0.5 != 0.75"),
        # The heading with prose after it, no body: the body's shape is what vouches.
        header("/home/u/app/src/main.rs", 20, "Grids are not the same: my sizes differ"),
        "My grids don't seem close enough after the blur, and the test fails. Any idea?\n",
    ):
        assert answered(scanned("tail_track_caller"), text) == [], text
    analysis = analysed(triage, header("/home/u/app/src/main.rs", 20, "Grids are not the same: x"))
    assert analysis.verdict == "uncatalogued-panic"


# --- 2. a catalogued panic after an uncatalogued root -------------------------------------------

DEPENDENCY = header(
    f"{REGISTRY}/gpu-core-0.3.1/src/device/queue.rs",
    412,
    "Validation Error: buffer binding 0 is too small for the bound range",
    "<unnamed>",
)
REPLAY = "Replay order is longer than the recorded steps: order len {}, steps len {}"


def test_2_the_projects_panic_after_a_dependencys_is_answered(scanned: Scanned) -> None:
    triage = scanned("tail_root")
    older = DEPENDENCY + header(
        f"{REGISTRY}/relay-0.4.0/src/replay.rs",
        10,
        "Replay order is longer than the recorded steps",
    )
    assert answered(triage, older) == [REPLAY]
    current = DEPENDENCY + header(
        "crates/relay/src/replay.rs",
        10,
        "Replay order is longer than the recorded steps: order len 4, steps len 3",
    )
    assert answered(triage, current) == [REPLAY]
    checkout = "/home/u/.cargo/git/checkouts/gpu-core-3f1a2b4c5d6e7f80/8a1b2c3/crates/gpu-core"
    from_git = DEPENDENCY.replace(f"{REGISTRY}/gpu-core-0.3.1", checkout)
    assert answered(triage, from_git + older[len(DEPENDENCY) :]) == [REPLAY]
    analysis = analysed(triage, older)
    assert not analysis.panics[0].matched
    answer = build_answer(analysis, triage.catalog)
    first = texts.FIRST_NOT_CATALOGUED.format(
        message="Validation Error: buffer binding 0 is too small for the bound range"
    )
    assert " ".join(first.split()) in " ".join(render_text(answer, color=False).split())
    # On GitHub too, the message set as code.
    comment = " ".join(render_comment(answer).split())
    assert "is not in the catalog; the answer is for a later panic." in comment
    assert "`Validation Error: buffer binding 0 is too small for the bound range`" in comment


def test_2_a_similar_message_or_the_users_file_after_the_root_is_silent(scanned: Scanned) -> None:
    triage = scanned("tail_root")
    for text in (
        DEPENDENCY
        + header(
            f"{REGISTRY}/relay-0.4.0/src/replay.rs",
            10,
            "Replay order is longer than the planned steps",
        ),
        DEPENDENCY
        + header("/home/u/app/src/main.rs", 10, "Replay order is longer than the recorded steps"),
        # The user's own code first: later panics are its consequences, as before.
        header("/home/u/app/src/main.rs", 5, "my job list broke")
        + header(
            "crates/relay/src/replay.rs", 10, "Replay order is longer than the recorded steps"
        ),
    ):
        assert answered(triage, text) == [], text
        assert analysed(triage, text).verdict == "uncatalogued-panic"


# --- 3. a catalogued message quoted in a title or prose -----------------------------------------

DROPPED = "Tile cache was dropped while tiles were still being decoded"


def test_3_a_verbatim_quote_in_a_title_or_prose_is_answered(scanned: Scanned) -> None:
    triage = scanned("tail_quoted")
    body = "\n\nWhen I close the viewer during a scroll the app crashes. Version 0.2.1, Linux.\n"
    assert answered(triage, f'Title: Decoder panics with "{DROPPED}"{body}') == [DROPPED]
    assert answered(triage, f"Title: Decoder panics with `{DROPPED}`{body}") == [DROPPED]
    prose = (
        f'Title: crash when closing the viewer\n\nClosing it panics with "{DROPPED}", every time.\n'
    )
    assert answered(triage, prose) == [DROPPED]
    # Words a fix uses, in a report: not a changelog item.
    report = f'When the window closes it panics with "{DROPPED}". I tried to fix it, no luck.\n'
    assert answered(triage, report) == [DROPPED]


def test_3_a_line_led_by_a_quoted_message_is_answered_with_the_message_alone(
    scanned: Scanned,
) -> None:
    """A chat line that opens with the message in a code span, then says more: the title is the
    message the user saw, not the sentence after it."""
    triage = scanned("tail_quoted")
    for line in (
        "`Decode budget exceeded: used 9000 bytes of 4096` when I open `big.tif`, is 4096 fixed?",
        "quick one: `Decode budget exceeded: used 9000 bytes of 4096` , is that a hard limit?",
    ):
        analysis = triage.analyse(line + "\n")
        assert [m.panic.message for m in analysis.answered] == [
            "Decode budget exceeded: used 9000 bytes of 4096"
        ], line


def test_3_a_message_after_a_lead_in_opening_a_later_sentence_is_answered(
    scanned: Scanned,
) -> None:
    """`The application panics when ... state. It displays this error message : MESSAGE`
    (tauri's tracker): the lead-in opens the line's second sentence, and a line's lead-in was
    read only at its start."""
    triage = scanned("tail_quoted")
    line = (
        "Scrolling fast through the whole archive of scanned maps makes the viewer crash. "
        f"It displays this error message : {DROPPED}\n"
    )
    assert answered(triage, line) == [DROPPED]
    # a sentence that only resembles it stays unanswered
    changed = line.replace("still being decoded", "still being drawn")
    assert answered(triage, changed) == []


def test_3_a_quote_without_the_closing_full_stop_is_the_message(scanned: Scanned) -> None:
    triage = scanned("tail_quoted")
    said = "Opening the scan stops with\n\n`Tile size 300 is not supported. Use 256 or 512`\n"
    assert answered(triage, said) == ["Tile size {size} is not supported. Use 256 or 512."]
    changed = "Opening the scan stops with\n\n`Tile size 300 is not supported. Use 128 or 512`\n"
    assert answered(triage, changed) == []


def test_3_a_leading_clause_quoted_alone_is_answered_when_it_says_enough(scanned: Scanned) -> None:
    triage = scanned("tail_reason")
    title = 'Title: transpose fails with "Transpose needs a matrix of rank two or more"\n'
    assert answered(triage, title) == [
        "Transpose needs a matrix of rank two or more. The given matrix has rank {rank}."
    ]


def test_3_a_paraphrase_a_changed_word_or_a_short_quote_is_not(scanned: Scanned) -> None:
    triage = scanned("tail_quoted")
    for text in (
        "Title: crash when closing the viewer\n\nIt panics because the tile cache gets dropped "
        "while tiles are still decoding.\n",
        'Title: crash on close\n\nIt panics with "Tile cache was dropped while tiles were still '
        'being fetched" on close.\n',
        'Title: Lookup panics with "Tile not found"\n\nLooking up a tile after a reload fails.\n',
        # A fix in release notes names the message without having hit it.
        f'## v0.2.2\n\n### Bug fixes\n- Fix decoder panic ("{DROPPED}") (#41)\n',
    ):
        analysis = analysed(triage, text)
        assert analysis.answered == (), text
    release = (
        '## v0.3.0\n\n- Fix transpose panic ("Transpose needs a matrix of rank two or more")\n'
    )
    assert answered(scanned("tail_reason"), release) == []


# --- 4. a check reason quoted without its banner ------------------------------------------------

TRANSPOSE = "Transpose needs a matrix of rank two or more. The given matrix has rank {rank}."
MATMUL = (
    "The inner dimensions of both matrices must agree for a product. "
    "Left inner dimension {}, right inner dimension {}."
)
REASON = "Transpose needs a matrix of rank two or more. The given matrix has rank 1."


def test_4_a_reason_without_its_banner_is_answered(scanned: Scanned) -> None:
    triage = scanned("tail_reason")
    banner = f"*** Shape Check Failed ***\n  Op: 'transpose'\n  Causes:\n    1) {REASON}"
    for text in (
        header("/home/u/app/src/main.rs", 7, banner),  # the whole banner, for comparison
        f"Calling transpose on a vector panics:\n\n```\nCauses:\n    1) {REASON}\n```\n",
        f"Title: transpose fails\n\nCauses: 1) {REASON}\n",
        header(f"{REGISTRY}/shapecheck-0.4.0/src/ops.rs", 11, f"  Causes:\n    1) {REASON}"),
        f"I get `{REASON}` when I call transpose on a vector.\n",
    ):
        assert answered(triage, text) == [TRANSPOSE], text
    title = "Title: matmul panics: The inner dimensions of both matrices must agree for a product\n"
    assert answered(triage, title) == [MATMUL]


def test_4_a_reworded_reason_is_not(scanned: Scanned) -> None:
    triage = scanned("tail_reason")
    for text in (
        "It fails with `Transpose needs a rank two matrix`.\n",
        "Title: transpose fails on vectors\n\nError: Transpose needs a matrix of rank 2 or more\n",
        "```\nCauses:\n    1) Transpose needs a tensor of rank two or more. "
        "The given tensor has rank 1.\n```\n",
    ):
        assert answered(triage, text) == [], text


# --- 5. long messages that are mostly placeholders ----------------------------------------------

CONFLICT = (
    "error[T0042]: SlotMut<{}> in task {} conflicts with a previous SlotMut<{}> access. "
    "Consider removing the duplicate access. See: https://example.org/taskgraph/T0042"
)
MISSING = (
    "Requested slot {} does not exist in the graph. "
    "Did you forget to add it with `Graph::insert_slot`?"
)
VELOCITY = "my_game::physics::components::Velocity"
SYSTEM = "my_game::physics::systems::integrate_velocities"
HANDLES = (
    "my_game::assets::handles::TextureAtlasHandles<my_game::render::pipelines::SpritePipeline>"
)
OLD_CONFLICT = (
    f"error[T0042]: SlotMut<{VELOCITY}> in task {SYSTEM} conflicts with a previous "
    f"SlotMut<{VELOCITY}> access. Consider removing the duplicate access."
)


def test_5_placeholder_heavy_messages_match_on_their_fixed_text(scanned: Scanned) -> None:
    triage = scanned("tail_placeholders")
    older = f"{REGISTRY}/taskgraph-0.6.0/src/access.rs"
    assert answered(triage, header(older, 8, OLD_CONFLICT)) == [CONFLICT]
    assert answered(triage, f"My app crashes on start:\n\n```\n{OLD_CONFLICT}\n```\n") == [CONFLICT]
    # An older release's shorter form, the long type name filling the placeholder.
    assert answered(triage, header(older, 17, f"Requested slot {HANDLES} does not exist")) == [
        MISSING
    ]
    current = MISSING.replace("{}", HANDLES)
    assert answered(triage, f"Startup fails:\n```\n{current}\n```\n") == [MISSING]


def test_5_other_fixed_text_around_the_same_values_is_not(scanned: Scanned) -> None:
    triage = scanned("tail_placeholders")
    older = f"{REGISTRY}/taskgraph-0.6.0/src/access.rs"
    for text in (
        f"Startup fails:\n```\nRequested texture {HANDLES} does not exist\n```\n",
        header(older, 17, f"Requested texture {HANDLES} does not exist"),
        header("src/main.rs", 17, f"Requested slot {HANDLES} does not exist"),  # the user's file
        header("src/main.rs", 8, OLD_CONFLICT.replace("SlotMut<", "Slot<", 1)),
        # The older, shorter form quoted without a header: values the record cannot vouch for.
        f"Startup fails:\n```\nRequested slot {HANDLES} does not exist\n```\n",
        # A cut that leaves too little fixed text: `Requested slot X does` says nothing.
        header(older, 17, f"Requested slot {HANDLES} does"),
    ):
        assert answered(triage, text) == [], text


def test_3_a_message_alone_in_a_code_block_keeps_its_backticks_and_its_wrapped_lines(
    scanned: Scanned,
) -> None:
    """In a code block a backtick is the message's own character, and a message wrapped over
    the block's lines is read joined."""
    triage = scanned("tail_quoted")
    spans = (
        "Title: spawning fails\n\nIt fails with:\n\n```\n"
        "`spawn_tile` called from outside of a `tile::Pool`\n```\n"
    )
    assert answered(triage, spans) == ["`spawn_tile` called from outside of a `tile::Pool`"]
    wrapped = (
        "Title: blocking sources\n\nThe latest code fails at runtime with:\n\n```\n"
        "Registering a blocking tile source with the decoder is unsupported. If\n"
        "you wish to do anyways, please add `--cfg tiles_allow_blocking`\n"
        "to your RUSTFLAGS.\n```\n"
    )
    assert [m[:40] for m in answered(triage, wrapped)] == [
        "Registering a blocking tile source with "
    ]
    # A line of code in the block: the lines are no one message.
    code = wrapped.replace(
        "to your RUSTFLAGS.\n", "let source = open_blocking(path);\nto your RUSTFLAGS.\n"
    )
    assert answered(triage, code) == []


def test_3_a_sentence_quoted_in_a_code_block_is_read_for_its_code_spans(
    scanned: Scanned,
) -> None:
    """Prose put in a block (a reporter quoting their own words) is read as prose: the message
    in its code span is a mention; a line of code with a span in a comment is not prose."""
    triage = scanned("tail_quoted")
    message = "Tile cache was dropped while tiles were still being decoded"
    prose = (
        "Title: cache\n\n```text\nI noticed that closing the viewer fails. Specifically, it "
        f"panics with `{message}` when a decode is still running.\n```\n"
    )
    assert answered(triage, prose) == [message]
    code = prose.replace("I noticed that", "let x = 1; // I noticed that")
    assert answered(triage, code) == []


def test_3_a_location_and_message_on_one_line_is_read_as_a_flat_header(scanned: Scanned) -> None:
    """`PATH.rs:LINE:COL: MESSAGE` (a header's two lines on one, as in a title) is the message
    after the location."""
    triage = scanned("tail_quoted")
    message = "Tile cache was dropped while tiles were still being decoded"
    for text in (
        f"Title: src/viewer/close.rs:94:17: {message}\n\nThe report is the title.\n",
        f"Title: viewer crash\n\n```\nsrc\\viewer\\close.rs:94:17: {message}\n```\n",
    ):
        assert answered(triage, text) == [message], text
