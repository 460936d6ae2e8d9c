"""The matcher's decisions, one behaviour at a time, on plain strings and the bundled catalog."""

from __future__ import annotations

import json

from bot.app import Triage
from bot.catalog.loader import load_catalog
from bot.core.extract.quoted import quoted_snippets
from bot.core.match.matcher import MATCH_THRESHOLD

REGISTRY = "/home/u/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f"


def top(triage: Triage, text: str):
    analysis = triage.analyse(text)
    answered = analysis.answered
    record = triage.catalog.get(answered[0].best.record_id) if answered else None
    return analysis, record


def header(path: str, line: int, message: str) -> str:
    note = "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace"
    return f"thread 'main' panicked at {path}:{line}:9:\n{message}\n{note}\n"


def test_filled_placeholders_match_the_format(triage):
    text = header(
        "crates/burn-flex/src/ops/module.rs", 241, "deform_conv2d_backward: unsupported dtype I8"
    )
    analysis, record = top(triage, text)
    assert analysis.verdict == "match"
    assert record.error_message == "deform_conv2d_backward: unsupported dtype {:?}"
    assert analysis.answered[0].best.evidence == ("pattern", "location", "line", "header")


def test_expect_output_carries_the_error_after_the_message(triage):
    text = header(
        f"{REGISTRY}/burn-train-0.16.0/src/checkpoint/async_checkpoint.rs",
        94,
        "Can send message to checkpointer thread.: SendError { .. }",
    )
    _, record = top(triage, text)
    assert record.error_message == "Can send message to checkpointer thread."
    assert record.error_type == "expect"


def test_the_location_decides_between_sites_sharing_a_message(triage):
    text = header(
        f"{REGISTRY}/burn-nn-0.19.0/src/loss/huber.rs", 95, "BatchMean reduction is not supported"
    )
    _, record = top(triage, text)
    assert record.file_path == "crates/burn-nn/src/loss/huber.rs"


def test_a_panic_in_the_users_own_code_is_not_burns(triage):
    text = header("src/main.rs", 12, "Can't differentiate avg pool 2d backward.")
    analysis, record = top(triage, text)
    assert record is None
    assert analysis.verdict == "uncatalogued-panic"
    best = analysis.panics[0].best
    assert best is not None and best.confidence < MATCH_THRESHOLD


def test_a_generic_message_needs_the_location(triage):
    # (burn-dataset never held this message: with the release history that paste is not
    # confident, see tests/test_history_match.py; burn-dispatch's own site is.)
    located = header("crates/burn-dispatch/src/ops/tensor.rs", 54, "Should read data")
    _, record = top(triage, located)
    assert record is not None and record.error_message == "Should read data"
    bare, record = top(triage, "```\nShould read data\n```")
    assert record is None and bare.verdict == "no-panic"


def test_std_panics_are_uncatalogued(triage):
    analysis, record = top(
        triage, header("src/lib.rs", 3, "index out of bounds: the len is 3 but the index is 5")
    )
    assert record is None and analysis.verdict == "uncatalogued-panic"


def test_a_later_panic_is_not_answered_when_the_first_is_unknown(triage):
    text = header("src/main.rs", 5, "something of mine broke") + header(
        f"{REGISTRY}/burn-train-0.16.0/src/checkpoint/async_checkpoint.rs",
        94,
        "Can send message to checkpointer thread.: SendError { .. }",
    )
    analysis, record = top(triage, text)
    assert record is None and analysis.verdict == "uncatalogued-panic"


def test_the_root_panic_comes_first(triage):
    text = header(
        f"{REGISTRY}/burn-autodiff-0.18.0/src/ops/module.rs",
        1498,
        "Can't differentiate avg pool 2d backward.",
    ) + header(
        f"{REGISTRY}/burn-train-0.18.0/src/checkpoint/async_checkpoint.rs",
        94,
        "Can send message to checkpointer thread.: SendError { .. }",
    )
    analysis, record = top(triage, text)
    assert record.error_message == "Can't differentiate avg pool 2d backward."
    assert len(analysis.answered) == 2


def test_an_older_shorter_wording_with_a_header(triage):
    text = header(
        f"{REGISTRY}/burn-fusion-0.13.0/src/stream/execution/ordering.rs",
        24,
        "Ordering is bigger than operations",
    )
    _, record = top(triage, text)
    assert record.error_message.startswith("Ordering is bigger than operations: ordering len")


def test_a_message_retyped_with_a_typo(triage):
    _, record = top(
        triage, 'I get "Can\'t differentiate max pool2d with indecies backward." when training'
    )
    assert record.error_message == "Can't differentiate max pool2d with indices backward."


def test_a_message_quoted_in_a_discord_sentence(triage):
    text = (
        "getting this when training: Can't consume the gradients before they are registered"
        " at least once. any idea?"
    )
    _, record = top(triage, text)
    assert (
        record.error_message
        == "Can't consume the gradients before they are registered at least once."
    )


def test_a_pull_request_naming_a_message_is_not_a_report(triage):
    text = (
        "Title: feat(autodiff): implement avg_pool2d backward\n\n"
        "This removes the `Can't differentiate avg pool 2d backward.` stub.\n\n"
        "## Checklist\n- [x] tests\n"
    )
    analysis, record = top(triage, text)
    assert record is None and analysis.verdict == "no-panic"


def test_a_sentence_discussing_a_message_is_not_a_report(triage):
    text = (
        "The book page says avg pool raises `Can't differentiate avg pool 2d backward.`"
        " but it is outdated."
    )
    _, record = top(triage, text)
    assert record is None


def test_a_format_string_quoted_from_source_is_not_output(triage):
    text = 'Why does this line exist?\n```rust\n    "Should have handle for tensor {id:?}"\n```\n'
    _, record = top(triage, text)
    assert record is None


def test_a_message_alone_in_a_code_block_is_answered(triage):
    text = "During training:\n```\nShould have handle for tensor TensorId { value: 42 }\n```\n"
    _, record = top(triage, text)
    assert record.error_message == "Should have handle for tensor {id:?}"


def _one_record(tmp_path, rid: str, message: str, file_path: str, line: int) -> Triage:
    """A catalog of one record (a site of `file_path` printing `message`), matched against."""
    record = {
        "id": rid,
        "repo": "o/r",
        "errorMessage": message,
        "filePath": file_path,
        "lineNumber": line,
    }
    (tmp_path / "c.json").write_text(json.dumps(record))
    return Triage(load_catalog([tmp_path]))


def test_a_site_whose_message_has_typographic_quotes_matches_the_ascii_paste(tmp_path):
    # The source wrote a curly apostrophe; a paste (or a terminal's font) shows it straight.
    message = "can\u2019t open the \u201cconfig\u201d file"
    triage = _one_record(tmp_path, "curly", message, "src/cfg.rs", 7)
    text = "thread 'main' panicked at src/cfg.rs:7:9:\ncan't open the \"config\" file\n"
    analysis, found = top(triage, text)
    assert found is not None and found.id == "curly"
    # the message itself, word for word, not a near fit
    best = analysis.answered[0].best
    assert "pattern" in best.evidence and "fuzzy" not in best.evidence


def test_a_tasks_panic_inside_the_join_error_an_unwrap_printed_is_answered(tmp_path):
    triage = _one_record(tmp_path, "pool", "pool exhausted after {} retries", "src/pool.rs", 40)
    text = (
        "thread 'main' panicked at src/main.rs:9:5:\n"
        "called `Result::unwrap()` on an `Err` value: "
        'JoinError::Panic(Id(18), "pool exhausted after 3 retries", ...)\n'
    )
    _, found = top(triage, text)
    assert found is not None and found.id == "pool"


def test_a_message_a_terminal_cut_over_two_lines_of_a_block_is_read_whole(tmp_path):
    # An 80-column terminal cut the message mid-word (`a` + `dded`); two lines are too few for
    # the block's cut to show, so the block is also read with the cut word whole.
    message = "Error adding plugin {}: plugin was already added in application and may not be again"
    triage = _one_record(tmp_path, "dup", message, "crates/app/src/app.rs", 9)
    printed = message.replace("{}", "demo::wire::WireframePlugin")
    assert len(printed) > 80 and printed[79].isalpha() and printed[80].isalpha()
    text = f"It says:\n```\n{printed[:80]}\n{printed[80:]}\n```\n"
    _, found = top(triage, text)
    assert found is not None and found.id == "dup"


def test_a_report_quoted_with_escaped_line_breaks_on_a_log_line_is_read(tmp_path):
    # An editor's log prints a language server's stderr as one quoted value, its line breaks
    # escaped (gleam's crash report inside nvim's LSP log): the string is read as its lines.
    triage = _one_record(
        tmp_path, "lsp", "Receiving LSP message", "crates/core/src/messages.rs", 180
    )
    report = (
        "error: Fatal compiler bug!\\n\\nPlease report this crash.\\n\\n"
        "Panic: crates/core/src/messages.rs:180\\n\\tReceiving LSP message: RecvError\\n"
    )
    text = (
        'The LSP log:\n\n[ERROR][2025-10-21 10:54:01] ...p/_transport.lua:36     "rpc"   '
        f'"/opt/homebrew/bin/tool"       "stderr"       "{report}"\n'
    )
    _, found = top(triage, text)
    assert found is not None and found.id == "lsp"


def test_a_caller_location_in_the_project_does_not_sink_a_full_match(triage):
    # #[track_caller] assertions report the caller (a backend's test module), not compare.rs.
    text = header(
        "crates/burn-wgpu/src/lib.rs", 127, "Tensors are not approx eq:\n  => Position 0: 1.5 != 2"
    )
    _, record = top(triage, text)
    assert record.file_path == "crates/burn-std/src/data/compare.rs"


def test_an_unfilled_placeholder_only_record_never_wins(tmp_path):
    triage = _one_record(tmp_path, "any", "{}", "crates/x/src/lib.rs", 3)
    analysis = triage.analyse(header("crates/x/src/lib.rs", 3, "anything at all"))
    assert analysis.verdict == "uncatalogued-panic"


def test_fingerprint_ignores_cosmetic_edits(triage):
    text = header(
        f"{REGISTRY}/burn-autodiff-0.18.0/src/ops/module.rs",
        1498,
        "Can't differentiate avg pool 2d backward.",
    )
    edited = "Edit: added the version.\n\n" + text.replace("\n", "\r\n") + "\nburn 0.18\n"
    assert triage.analyse(text).fingerprint == triage.analyse(edited).fingerprint


def test_a_record_the_message_only_resembles_never_outranks_an_exact_one(triage):
    # Two siblings in one file: the pasted line is nearer the `float` one, the text is `int`'s.
    text = header("crates/burn-std/src/tensor/dtype.rs", 214, "Expected int data type, got F32")
    _, record = top(triage, text)
    assert record.error_message == "Expected int data type, got {value:?}"


def test_a_header_without_a_column(triage):
    text = (
        "thread 'DSU-4-0' panicked at burn-ir/src/handle.rs:97:\n"
        "  Should have handle for tensor TensorId { value: 3 }\n"
    )
    analysis, record = top(triage, text)
    assert record.file_path == "crates/burn-ir/src/handle.rs"
    assert analysis.panics[0].panic.location.line == 97


def test_a_std_assertion_wrapper_is_evidence_without_a_header(triage):
    text = (
        "assertion `left == right` failed: Data types differ (F32 != F64)\n"
        "  left: F32\n right: F64\n"
    )
    analysis, record = top(triage, text)
    assert record.error_message == "Data types differ ({:?} != {:?})"
    assert "wrapper" in analysis.answered[0].best.evidence


def test_a_projects_assertion_called_from_a_users_test(triage):
    message = "Tensors are not approx eq:\n  => Position 0: 0 != -0.76 diff (rel = +1.00e0)"
    _, record = top(triage, header("crates/my-app/src/model/tests/cross_test.rs", 127, message))
    assert record.file_path == "crates/burn-std/src/data/compare.rs"
    # `assert_approx_eq` is #[track_caller] (the scan tags the record): Rust prints the caller's
    # line, so the user's own non-test code is where this panic is expected too
    _, record = top(triage, header("crates/my-app/src/model/mod.rs", 127, message))
    assert record.file_path == "crates/burn-std/src/data/compare.rs"
    assert "track-caller" in record.tags


def test_a_long_value_in_a_trailing_placeholder_still_matches(triage):
    positions = "\n".join(
        f"  => Position {i}: {i}.5 != {i}.25 diff (rel = +1.00e0)" for i in range(40)
    )
    text = header("crates/burn-wgpu/src/lib.rs", 127, "Tensors are not approx eq:\n" + positions)
    analysis, record = top(triage, text)
    assert record.error_message == "Tensors are not approx eq:{message}"
    assert analysis.answered[0].best.evidence[0] == "pattern"


def test_a_path_cut_to_its_file_name_says_only_the_file_name(triage):
    text = "PANIC: thread panicked at ... renderer.rs:345:9:\nKilling training from user input.\n"
    _, record = top(triage, text)
    assert record.file_path == "crates/burn-train/src/renderer/tui/renderer.rs"


def test_a_pull_request_showing_the_panic_it_fixes(triage):
    shown = (
        "Title: fix(core): let a mapped parameter train on an autodiff device\n\n"
        "It panics the first time it is used:\n\n```\n"
        "Can't convert a non leaf tensor into a tracked tensor\n```\n\n## Changes\n\n## Testing\n"
    )
    _, record = top(triage, shown)
    assert record.error_message == "Can't convert a non leaf tensor into a tracked tensor"
    change_list = (
        "Title: feat(ndarray): better shape messages\n\n## Changes\n\n"
        '- matmul: `"Dimensions differ and cannot be broadcasted."` → now reports the sizes\n'
        "## Testing\n"
    )
    analysis, record = top(triage, change_list)
    assert record is None and analysis.verdict == "no-panic"


def test_chat_shorthand_around_a_quoted_panic(triage):
    _, record = top(
        triage,
        "save_image on an RGBA tensor -> `not implemented: More than 3 channels not supported (4)`",
    )
    assert record.error_message == "More than 3 channels not supported ({channels})"
    _, record = top(
        triage, "anyone seen this? `Can't differentiate deform conv 2d backward.` on wgpu"
    )
    assert record.error_message == "Can't differentiate deform conv 2d backward."
    _, record = top(
        triage, "we renamed `Can't differentiate deform conv 2d backward.` -> something clearer"
    )
    assert record is None


def test_a_long_messages_first_sentence_alone_is_looked_up_by_its_opening(tmp_path):
    """The words of `Cannot open a ledger from within a ledger.` cover too little of the record
    to make it a candidate; the record's opening finds it (tokio's nested-runtime panic)."""
    long_tail = (
        " This happens because a function (like `open_blocking`) attempted to block the current"
        " thread while the thread is being used to drive asynchronous ledger tasks and their"
        " journal writers, which would deadlock the scheduler that owns both of them."
    )
    records = [
        {
            "id": "nested",
            "repo": "o/r",
            "errorMessage": "Cannot open a ledger from within a ledger." + long_tail,
            "filePath": "src/ledger/context.rs",
            "lineNumber": 40,
        },
        {
            "id": "other",
            "repo": "o/r",
            "errorMessage": "Cannot open a ledger while the journal is closed: {}",
            "filePath": "src/ledger/journal.rs",
            "lineNumber": 12,
        },
    ]
    (tmp_path / "c.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    triage = Triage(load_catalog([tmp_path]))
    quoted = "thread 'main' panicked at 'Cannot open a ledger from within a ledger.'\n"
    assert triage.analyse(quoted).verdict == "match"
    _, record = top(triage, quoted)
    assert record.id == "nested"
    # Cut before its sentence ends, it is no message's opening sentence.
    cut = "thread 'main' panicked at 'Cannot open a ledger from within a'\n"
    assert triage.analyse(cut).verdict == "uncatalogued-panic"
    # In a title, lower-cased and without its full stop, it is still that opening sentence.
    title = 'Title: closing fails with "cannot open a ledger from within a ledger"\n\nHelp.\n'
    assert triage.analyse(title).verdict == "match"
    _, record = top(triage, title)
    assert record.id == "nested"


def test_a_long_value_does_not_make_a_sibling_wording_win(tmp_path):
    """A long value sinks the characters' ratio of the record the paste's words say (`gadget
    resource`, an older wording of it), not the words' comparison, by which a sibling (`gadget
    data`) must not rank first (bevy's `World::non_send` and `DeferredWorld::non_send_mut`)."""
    tail = (
        " {} does not exist in the `World`.\n                Did you forget to add it using"
        " `app.insert_non_send` / `app.init_non_send`?\n                Gadget {} can also be"
        " added by plugins."
    )
    records = [
        {
            "id": "resource",
            "repo": "o/r",
            "errorMessage": "Requested gadget resource"
            + tail.replace("Gadget {}", "Gadget resources"),
            "filePath": "crates/shop/src/world.rs",
            "lineNumber": 40,
            "tags": ["track-caller"],  # printed at the caller's file
        },
        {
            "id": "data",
            "repo": "o/r",
            "errorMessage": "Requested gadget data" + tail.replace("Gadget {}", "Gadget data"),
            "filePath": "crates/shop/src/deferred.rs",
            "lineNumber": 12,
            "tags": ["track-caller"],
        },
    ]
    (tmp_path / "c.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    triage = Triage(load_catalog([tmp_path]))
    pasted = (
        "thread 'main' panicked at /home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f/"
        "helper-0.13.3/src/lib.rs:257:14:\nRequested gadget resource"
        " bevy_defer::executor::AsyncExecutor does not exist in the `World`.\n"
        "                Did you forget to add it using `app.insert_non_send_resource` /"
        " `app.init_non_send_resource`?\n                Gadget resources can also be added by"
        " plugins.\n"
    )
    analysis, record = top(triage, pasted)
    best = analysis.panics[0].best
    assert best is not None and best.record_id == "resource"
    assert record is None or record.id == "resource"  # (close enough to be told as a tie)


def one_record_triage(folder, message: str, file_path: str) -> Triage:
    """A catalog of one scanned-like record (`r`, line 40) in `folder`."""
    record = {"id": "r", "repo": "o/r", "errorMessage": message, "filePath": file_path}
    (folder / "c.jsonl").write_text(json.dumps({**record, "lineNumber": 40}) + "\n")
    return Triage(load_catalog([folder]))


def test_an_odd_backtick_inside_a_quoted_message_is_the_messages_own(tmp_path):
    """A title cut inside a value's backticks (`.. from text `mod $;`) is still the message, read
    whole beside the part before its first backtick (a line led by a code span: the span)."""
    triage = one_record_triage(
        tmp_path, "Failed to build a syntax node `{node}` from text {text}", "src/make.rs"
    )
    title = "Title: panic: Failed to build a syntax node `ast::Name` from text `mod $;\n\nRepro.\n"
    assert triage.analyse(title).verdict == "match"
    led = "Title: crash\n\n`Failed to build a syntax node` when I open `x.rs\n"
    assert triage.analyse(led).verdict != "match"


def test_a_titles_message_after_a_few_words_is_read_from_its_capitalised_word(tmp_path):
    """`[Bug] LedgerServer Cannot open a ledger ..`: the message starts at a capitalised word
    after the title's first; a near wording there is no more a match than in prose."""
    message = (
        "Cannot open a ledger from within a ledger. This happens because a function attempted "
        "to block the current thread while it drives ledger tasks."
    )
    triage = one_record_triage(tmp_path, message, "src/ledger/context.rs")
    title = "Title: [Bug] LedgerServer Cannot open a ledger from within a ledger\n\nA screenshot.\n"
    assert triage.analyse(title).verdict == "match"
    near = title.replace("within a ledger", "within a journal")
    assert triage.analyse(near).verdict != "match"


def test_a_message_in_single_quotes_is_read_as_quoted_apostrophes_are_not_quotes(tmp_path):
    """`panic 'MESSAGE' in fn`: single quotes around a message, as std's old header printed it,
    mark it as quoted like double ones; an apostrophe inside or after a word opens nothing."""
    triage = one_record_triage(tmp_path, "Grid cell index out of bounds.", "src/grid/ops.rs")
    title = "Title: panic 'Grid cell index out of bounds.' in check_invariants\n\nRepro below.\n"
    assert triage.analyse(title).verdict == "match"
    line = "Hello,\n\nCalling resize gives 'Grid cell index out of bounds.' every time.\n"
    assert triage.analyse(line).verdict == "match"
    apostrophes = "Title: it's the users' Grid cell index out of bounds. thing\n\nno panic here\n"
    assert quoted_snippets(apostrophes)[0].source == "title"
    assert all(s.text != "Grid cell index out of bounds." for s in quoted_snippets(apostrophes))


def test_a_backticked_fragment_in_prose_is_answered_only_exactly() -> None:
    """A fuzzy fit needs output the user pasted (a header, a std wrapper, a message on a line
    of its own or in a block, or quoted as said): a fragment in backticks inside prose is how
    reviews name code, so it is answered only when it is the message exactly."""
    triage = Triage.from_paths(None)
    said = "When I build the layer I get {q}Standart deviation is required to be non negative, "
    exact = "When I build the layer I get `Standard deviation is required to be non-negative, "
    tail = "but got -0.1{q} and it stops."
    backticked = triage.analyse(said.format(q="`") + tail.format(q="`"))
    assert backticked.answered == ()
    quoted = triage.analyse(said.format(q='"') + tail.format(q='"'))
    assert [m.best.evidence for m in quoted.answered if m.best] == [("fuzzy",)]
    spelled = triage.analyse(exact + tail.format(q="`"))
    assert [m.best.record_id for m in spelled.answered if m.best] == ["448f60ca35483470"]


def test_a_title_quoting_a_message_then_an_aside_is_that_message(triage):
    """A mention followed by more prose (a title's aside in parentheses): the message opens it
    and says enough, so it is the message's own site."""
    analysis, record = top(
        triage, "# BatchMean reduction is not supported (huber loss)\n\nsee above"
    )
    assert record is not None and record.error_message == "{other:?} reduction is not supported"
    assert analysis.answered[0].best.evidence == ("pattern",)


def test_a_std_assertion_quoted_in_a_title_is_an_uncatalogued_panic(triage):
    """`assertion failed: ...` alone in a title is a panic std printed, not one of the catalog's:
    labelled as an uncatalogued panic, not taken for a text without one."""
    for text in (
        "# assertion failed: shape.num_dims() == 2\n\nWhen I run my model it crashes.",
        "Title: `assertion failed: idx < len`\n\nhappens on startup",
    ):
        analysis, record = top(triage, text)
        assert record is None and analysis.verdict == "uncatalogued-panic", text


def test_a_panic_at_the_users_test_file_is_the_users_unless_a_helper_reports_it(triage):
    """A user's test file is the user's code, as `src/main.rs` is: a message of the project's
    printed there is the project's only when its site reports its caller (a `#[track_caller]`
    helper such as burn's approx-eq check)."""
    plain = header("tests/it.rs", 12, "Can't differentiate avg pool 2d backward.")
    analysis, record = top(triage, plain)
    assert record is None and analysis.verdict == "uncatalogued-panic"
    helper = header(
        "tests/conv.rs",
        41,
        "Tensors are not approx eq:\n  => Position 3: 0.5 != 0.75 | difference 0.25 > "
        "tolerance 0.001",
    )
    _, record = top(triage, helper)
    assert record is not None and record.enclosing_fn == "assert_approx_eq"
