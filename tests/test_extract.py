"""Panic extraction from pastes shaped like real tracel-ai/burn issues and Discord messages."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core.extract.clean import clean_text
from bot.core.extract.scanner import extract_panics
from bot.core.panic import Frame, Panic

REG = "/home/ana/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f"
NOTE = "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace"
RUSTC = "/rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf"


def only(text: str) -> Panic:
    panics = extract_panics(text)
    assert len(panics) == 1, panics
    return panics[0]


# --- headers ----------------------------------------------------------------------------------


def test_new_format_header_with_message_on_next_line() -> None:
    text = (
        "thread 'main' panicked at src/main.rs:5:10:\n"
        "index out of bounds: the len is 3 but the index is 5\n"
        f"{NOTE}\n"
    )
    panic = only(text)
    assert panic.message == "index out of bounds: the len is 3 but the index is 5"
    assert panic.core_message == panic.message
    assert panic.wrapper is None
    assert panic.thread == "main"
    assert panic.has_header is True
    assert panic.frames == ()
    assert panic.location is not None
    assert (panic.location.path, panic.location.line, panic.location.column) == (
        "src/main.rs",
        5,
        10,
    )
    assert panic.location.kind == "other"
    assert panic.start == 0
    assert text[panic.start : panic.end] == text.split("\nnote:")[0]


def test_a_blank_line_between_header_and_message_is_skipped() -> None:
    # burn-import's logger (burn#2822): `PANIC => panicked at P:L:C:`, a blank line, the message.
    text = (
        "ERROR burn_import::logger: PANIC => panicked at C:\\Users\\u\\.cargo\\registry\\src\\"
        "index.crates.io-6f17d22bba15001f\\onnx-ir-0.17.1\\src\\rank_inference.rs:926:17:\n"
        "\n"
        "Split: Input tensor shape is not defined\n"
    )
    panic = only(text)
    assert panic.message == "Split: Input tensor shape is not defined"
    assert panic.location.crate == "onnx-ir" and panic.location.line == 926


def test_a_title_that_copies_the_header_is_not_a_panic() -> None:
    # The issue's title is the header; the prose below it is no message: the body's panic is.
    header = "thread 'main' panicked at helix-core/src/transaction.rs:499:9:"
    text = f"{header}\n\nIt crashed while I was typing.\n\n```\n{header}\nPositions are out\n```\n"
    assert only(text).message == "Positions are out"
    # The same header at another place, or without the copy below, is still read.
    other = header.replace("499", "12")
    assert len(extract_panics(f"{other}\n\nIt crashed.\n\n```\n{header}\nout\n```\n")) == 2
    assert only(f"{header}\n\nIt crashed while I was typing.\n").message.startswith("It crashed")


def test_an_empty_message_stays_empty() -> None:
    # `panic!("")`: the header, then std's note; a blank line before it changes nothing.
    for gap in ("", "\n"):
        panic = only(f"thread 'main' panicked at src/main.rs:2:5:\n{gap}{NOTE}\n")
        assert panic.message == ""


def test_old_format_header_single_line() -> None:
    text = (
        "Running the example gives\n\n"
        "thread 'main' panicked at 'Can't differentiate interpolate backward.', "
        "/home/u/.cargo/registry/src/github.com-1ecc6299db9ec823/burn-autodiff-0.8.0/"
        "src/ops/module.rs:512:9\n"
        f"{NOTE}\n"
    )
    panic = only(text)
    assert panic.message == "Can't differentiate interpolate backward."
    assert panic.core_message == "Can't differentiate interpolate backward."
    assert panic.wrapper is None
    assert panic.thread == "main"
    loc = panic.location
    assert loc is not None
    assert (loc.kind, loc.crate, loc.crate_version, loc.crate_path, loc.line, loc.column) == (
        "registry",
        "burn-autodiff",
        "0.8.0",
        "src/ops/module.rs",
        512,
        9,
    )
    assert text[panic.start :].startswith("thread 'main' panicked at 'Can't")
    assert text[: panic.end].endswith("module.rs:512:9")


def test_old_format_multiline_assert_eq_with_message() -> None:
    text = (
        "thread 'main' panicked at 'assertion failed: `(left == right)`\n"
        "  left: `[2, 3]`,\n"
        " right: `[3, 2]`: Shapes must match', src/main.rs:10:5\n"
        f"{NOTE}\n"
    )
    panic = only(text)
    assert panic.message == (
        "assertion failed: `(left == right)` left: `[2, 3]`, right: `[3, 2]`: Shapes must match"
    )
    assert panic.wrapper == "assert-eq"
    assert panic.core_message == "Shapes must match"
    assert panic.location is not None
    assert (panic.location.path, panic.location.line) == ("src/main.rs", 10)


def test_old_format_unwrap_err_without_column() -> None:
    text = (
        "thread '<unnamed>' panicked at 'called `Result::unwrap()` on an `Err` value: "
        "Error { kind: InvalidData }', libcore/result.rs:945:5\n"
    )
    panic = only(text)
    assert panic.thread == "<unnamed>"
    assert panic.wrapper == "unwrap-err"
    assert panic.core_message == "Error { kind: InvalidData }"
    assert panic.location is not None
    assert (panic.location.kind, panic.location.crate, panic.location.crate_path) == (
        "std",
        "core",
        "result.rs",
    )


@pytest.mark.parametrize(
    ("header", "thread"),
    [
        ("thread 'tokio-runtime-worker' panicked at", "tokio-runtime-worker"),
        ("thread '<unnamed>' panicked at", "<unnamed>"),
        ("thread 'burn worker 3' panicked at", "burn worker 3"),
        ("thread 'DSU-4-0' (16796949) panicked at", "DSU-4-0"),
        ("thread 'main' (1) panicked at", "main"),
    ],
)
def test_thread_names(header: str, thread: str) -> None:
    text = f"{header} crates/burn-fusion/src/stream/base.rs:55:13:\nStream not found\n{NOTE}"
    panic = only(text)
    assert panic.thread == thread
    assert panic.message == "Stream not found"
    assert panic.location is not None
    assert (panic.location.kind, panic.location.crate, panic.location.crate_path) == (
        "workspace",
        "burn-fusion",
        "src/stream/base.rs",
    )


def test_header_after_log_prefix_timestamp_and_target() -> None:
    text = (
        "2024-05-01T10:00:00.123456Z  INFO burn_train::learner::epoch: Executing epoch 1\n"
        "2024-05-01T10:00:03.001Z ERROR burn_train::learner::application_logger: PANIC => "
        f"panicked at {REG}/burn-tensor-0.14.0/src/tensor/api/check.rs:1120:9:\n"
        "Tensors are not on the same device\n"
        "2024-05-01T10:00:03.002Z  INFO burn_train::learner: shutting down\n"
    )
    panic = only(text)
    assert panic.thread is None
    assert panic.message == "Tensors are not on the same device"
    assert panic.location is not None
    assert (panic.location.crate, panic.location.crate_version, panic.location.line) == (
        "burn-tensor",
        "0.14.0",
        1120,
    )
    assert text[panic.start :].startswith("panicked at /home/ana")
    assert text[: panic.end].endswith("Tensors are not on the same device")


def test_header_after_env_logger_prefix() -> None:
    text = (
        "[2024-05-01T10:00:00Z ERROR my_app] thread 'main' panicked at src/train.rs:88:41:\n"
        "called `Option::unwrap()` on a `None` value\n"
    )
    panic = only(text)
    assert panic.thread == "main"
    assert panic.wrapper == "unwrap-none"
    assert panic.core_message == ""
    assert panic.message == "called `Option::unwrap()` on a `None` value"
    assert panic.location is not None
    assert (panic.location.path, panic.location.line, panic.location.column) == (
        "src/train.rs",
        88,
        41,
    )
    assert text[panic.start :].startswith("thread 'main'")


def test_flattened_log_line_with_message_on_same_line() -> None:
    text = "ERROR my_app::hooks: panicked at src/lib.rs:3:9: attempt to subtract with overflow\n"
    panic = only(text)
    assert panic.message == "attempt to subtract with overflow"
    assert panic.location is not None
    assert (panic.location.path, panic.location.line, panic.location.column) == (
        "src/lib.rs",
        3,
        9,
    )


def test_blockquoted_panic() -> None:
    text = (
        "@someone I still get it on main:\n\n"
        "> thread 'main' panicked at crates/burn-wgpu/src/ops/bool_ops.rs:42:9:\n"
        "> not yet implemented: bool_and\n"
        f"> {NOTE}\n\n"
        "Any idea?\n"
    )
    panic = only(text)
    assert panic.message == "not yet implemented: bool_and"
    assert panic.wrapper == "todo"
    assert panic.core_message == "bool_and"
    assert panic.location is not None
    assert (panic.location.kind, panic.location.crate, panic.location.crate_path) == (
        "workspace",
        "burn-wgpu",
        "src/ops/bool_ops.rs",
    )
    assert text[panic.start :].startswith("thread 'main' panicked at crates/")


def test_nested_quote_ends_message_when_quote_ends() -> None:
    text = (
        "> > thread 'main' panicked at src/main.rs:1:1:\n"
        "> > explicit panic\n"
        "this line is my own reply, not the message\n"
    )
    panic = only(text)
    assert panic.message == "explicit panic"


def test_header_broken_by_terminal_path_on_next_line() -> None:
    text = (
        "thread 'main' panicked at\n"
        f"{REG}/burn-core-0.16.1/src/module/param/base.rs:197:41:\n"
        "Parameter was moved, call `.clone()` first\n"
        f"{NOTE}\n"
    )
    panic = only(text)
    assert panic.message == "Parameter was moved, call `.clone()` first"
    assert panic.location is not None
    assert (panic.location.crate, panic.location.crate_path, panic.location.line) == (
        "burn-core",
        "src/module/param/base.rs",
        197,
    )


def test_header_wrapped_in_the_middle_of_the_path() -> None:
    text = (
        f"thread 'main' panicked at {REG}/burn-cubecl-0.16.0/src/ker\n"
        "nel/conv/conv2d/base.rs:77:14:\n"
        "Unsupported convolution layout\n"
    )
    panic = only(text)
    assert panic.message == "Unsupported convolution layout"
    assert panic.location is not None
    assert panic.location.crate_path == "src/kernel/conv/conv2d/base.rs"
    assert (panic.location.crate, panic.location.line, panic.location.column) == (
        "burn-cubecl",
        77,
        14,
    )


def test_windows_header_path() -> None:
    text = (
        "thread 'main' panicked at C:\\Users\\me\\.cargo\\registry\\src\\"
        "index.crates.io-6f17d22bba15001f\\burn-core-0.16.1\\src\\module\\param\\base.rs:197:41:\r\n"
        "Parameter was moved\r\n"
        "note: run with `RUST_BACKTRACE=1`\r\n"
    )
    panic = only(text)
    assert panic.message == "Parameter was moved"
    loc = panic.location
    assert loc is not None
    assert loc.path.startswith("C:/Users/me/.cargo/registry/src/")
    assert (loc.kind, loc.crate, loc.crate_version, loc.crate_path) == (
        "registry",
        "burn-core",
        "0.16.1",
        "src/module/param/base.rs",
    )
    assert text[panic.end - len("Parameter was moved") : panic.end] == "Parameter was moved"


def test_prose_panicked_at_is_not_a_header() -> None:
    assert extract_panics("It panicked at runtime when I called forward twice.") == []
    assert extract_panics("my code panicked at\nsome point yesterday") == []


# --- wrappers ---------------------------------------------------------------------------------


def _with_header(message: str) -> str:
    return f"thread 'main' panicked at src/main.rs:7:5:\n{message}\n{NOTE}\n"


@pytest.mark.parametrize(
    ("message", "wrapper", "core"),
    [
        (
            "called `Result::unwrap()` on an `Err` value: "
            'Os { code: 2, kind: NotFound, message: "No such file or directory" }',
            "unwrap-err",
            'Os { code: 2, kind: NotFound, message: "No such file or directory" }',
        ),
        ("called `Option::unwrap()` on a `None` value", "unwrap-none", ""),
        ("assertion failed: index < self.len()", "assert", "index < self.len()"),
        (
            "not implemented: Unsupported operation for quantized tensors",
            "unimplemented",
            "Unsupported operation for quantized tensors",
        ),
        ("not implemented", "unimplemented", ""),
        (
            "not yet implemented: Int tensors are not supported",
            "todo",
            "Int tensors are not supported",
        ),
        ("not yet implemented", "todo", ""),
        (
            "internal error: entered unreachable code: Invalid dtype F16",
            "unreachable",
            "Invalid dtype F16",
        ),
        ("internal error: entered unreachable code", "unreachable", ""),
        # `.expect("MSG")` prints `MSG: ErrDebug`: left alone, the matcher handles the suffix.
        (
            "Failed to load the model: Io(Os { code: 2 })",
            None,
            "Failed to load the model: Io(Os { code: 2 })",
        ),
        # Not wrappers, only similar words.
        ("not implementedyet", None, "not implementedyet"),
    ],
)
def test_std_wrappers(message: str, wrapper: str | None, core: str) -> None:
    panic = only(_with_header(message))
    assert panic.message == message
    assert panic.wrapper == wrapper
    assert panic.core_message == core
    assert panic.has_header is True


def test_assert_eq_with_message_and_left_right_lines() -> None:
    text = (
        "---- tests::reshape_should_keep_data stdout ----\n"
        "thread 'tests::reshape_should_keep_data' panicked at "
        "crates/burn-tensor/src/tests/ops/reshape.rs:20:9:\n"
        "assertion `left == right` failed: Shapes should match\n"
        "  left: [2, 3]\n"
        " right: [3, 2]\n"
        f"{NOTE}\n\n"
        "failures:\n    tests::reshape_should_keep_data\n"
    )
    panic = only(text)
    assert panic.wrapper == "assert-eq"
    assert panic.core_message == "Shapes should match"
    assert panic.message == (
        "assertion `left == right` failed: Shapes should match left: [2, 3] right: [3, 2]"
    )
    assert panic.thread == "tests::reshape_should_keep_data"
    assert panic.location is not None
    assert (panic.location.crate, panic.location.crate_path) == (
        "burn-tensor",
        "src/tests/ops/reshape.rs",
    )


def test_assert_eq_without_message_and_assert_ne() -> None:
    eq = only(_with_header("assertion `left == right` failed\n  left: 4\n right: 5"))
    assert (eq.wrapper, eq.core_message) == ("assert-eq", "")
    assert eq.message == "assertion `left == right` failed left: 4 right: 5"
    ne = only(
        _with_header("assertion `left != right` failed: ids must differ\n  left: 1\n right: 1")
    )
    assert (ne.wrapper, ne.core_message) == ("assert-ne", "ids must differ")


def test_assert_eq_multiline_message() -> None:
    panic = only(
        _with_header(
            "assertion `left == right` failed: Expected the same\n"
            "  number of dims\n  left: 3\n right: 4"
        )
    )
    assert panic.core_message == "Expected the same number of dims"


def test_main_returning_error() -> None:
    text = (
        "$ cargo run --release\n"
        "    Finished `release` profile [optimized] target(s) in 0.21s\n"
        "     Running `target/release/infer`\n"
        'Error: Record(Io(Os { code: 2, kind: NotFound, message: "No such file or directory" }))\n'
    )
    panic = only(text)
    assert panic.wrapper == "main-error"
    assert panic.has_header is False
    assert panic.location is None
    assert panic.message == (
        'Error: Record(Io(Os { code: 2, kind: NotFound, message: "No such file or directory" }))'
    )
    assert panic.core_message == (
        'Record(Io(Os { code: 2, kind: NotFound, message: "No such file or directory" }))'
    )


def test_main_error_only_at_line_start() -> None:
    assert extract_panics("The log says Error: nothing works") == []
    assert extract_panics("SomeError: not a main error") == []


def test_anyhow_main_error_with_cause_and_backtrace() -> None:
    text = (
        "Error: failed to import ONNX model\n\n"
        "Caused by:\n"
        "    Unsupported op: NonMaxSuppression\n\n"
        "Stack backtrace:\n"
        "   0: anyhow::error::<impl anyhow::Error>::msg\n"
        "             at /home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f/"
        "anyhow-1.0.86/src/error.rs:83:36\n"
        "   1: import::main\n"
        "             at ./src/main.rs:12:5\n"
    )
    panic = only(text)
    assert panic.wrapper == "main-error"
    assert panic.message == (
        "Error: failed to import ONNX model Caused by: Unsupported op: NonMaxSuppression"
    )
    assert (
        panic.core_message
        == "failed to import ONNX model Caused by: Unsupported op: NonMaxSuppression"
    )
    assert [f.function for f in panic.frames] == [
        "anyhow::error::<impl anyhow::Error>::msg",
        "import::main",
    ]
    assert [f.crate for f in panic.frames] == ["anyhow", "import"]
    assert panic.frames[1].location is not None
    assert panic.frames[1].location.path == "./src/main.rs"


# --- headerless wrappers -----------------------------------------------------------------------


def test_unwrap_err_without_header() -> None:
    text = (
        "**Describe the bug**\n"
        "When I run inference on the GPU I get\n"
        "called `Result::unwrap()` on an `Err` value: DeviceLost\n"
        "and the process exits.\n"
    )
    panic = only(text)
    assert panic.has_header is False
    assert panic.location is None
    assert panic.thread is None
    assert panic.wrapper == "unwrap-err"
    assert panic.core_message == "DeviceLost"
    assert panic.message == "called `Result::unwrap()` on an `Err` value: DeviceLost"
    assert text[panic.start : panic.end] == panic.message


def test_headerless_in_code_span_and_prose() -> None:
    text = "Title: crash with `called `Result::unwrap()` on an `Err` value: OutOfMemory`"
    panic = only(text)
    assert panic.core_message == "OutOfMemory"
    none = only("It fails with called `Option::unwrap()` on a `None` value in the dataloader")
    assert none.message == "called `Option::unwrap()` on a `None` value"
    assert none.wrapper == "unwrap-none"


@pytest.mark.parametrize(
    ("line", "wrapper", "core"),
    [
        (
            "assertion failed: shape.num_elements() == data.len()",
            "assert",
            "shape.num_elements() == data.len()",
        ),
        (
            "not implemented: Cannot call bool_not on wgpu",
            "unimplemented",
            "Cannot call bool_not on wgpu",
        ),
        ("not yet implemented: conv3d backward", "todo", "conv3d backward"),
        ("internal error: entered unreachable code: bad kind", "unreachable", "bad kind"),
        (
            "  ERROR burn_core::record: not yet implemented: conv3d backward",
            "todo",
            "conv3d backward",
        ),
    ],
)
def test_line_start_wrappers_without_header(line: str, wrapper: str, core: str) -> None:
    panic = only(f"I see this:\n{line}\n")
    assert (panic.wrapper, panic.core_message, panic.has_header, panic.location) == (
        wrapper,
        core,
        False,
        None,
    )


def test_headerless_assert_eq_takes_left_right_lines() -> None:
    text = "assertion `left == right` failed: batch size\n  left: 32\n right: 16\nthen it stops"
    panic = only(text)
    assert panic.message == "assertion `left == right` failed: batch size left: 32 right: 16"
    assert (panic.wrapper, panic.core_message) == ("assert-eq", "batch size")


def test_prose_words_are_not_headerless_wrappers() -> None:
    assert extract_panics("not implemented yet for the ndarray backend, sadly") == []
    assert extract_panics("This assertion is wrong") == []


def test_title_repeating_the_message_is_dropped() -> None:
    text = (
        "called `Result::unwrap()` on an `Err` value: DeviceLost\n\n"
        "```\n"
        "thread 'main' panicked at src/main.rs:20:31:\n"
        "called `Result::unwrap()` on an `Err` value: DeviceLost\n"
        "```\n"
    )
    panic = only(text)
    assert panic.has_header is True
    assert panic.location is not None
    assert panic.location.line == 20


# --- backtraces -------------------------------------------------------------------------------


def test_modern_backtrace_frames_attach_to_panic() -> None:
    text = (
        f"thread 'main' panicked at {REG}/burn-autodiff-0.18.0/src/ops/module.rs:1933:9:\n"
        "Can't differentiate interpolate backward.\n"
        "stack backtrace:\n"
        "   0: rust_begin_unwind\n"
        f"             at {RUSTC}/library/std/src/panicking.rs:665:5\n"
        "   1: core::panicking::panic_fmt\n"
        f"             at {RUSTC}/library/core/src/panicking.rs:76:14\n"
        "  12: burn_autodiff::ops::module::<impl burn_tensor::ops::modules::base::ModuleOps"
        "<burn_autodiff::backend::Autodiff<B,C>> for burn_autodiff::backend::Autodiff<B,C>>"
        "::interpolate_backward\n"
        f"             at {REG}/burn-autodiff-0.18.0/src/ops/module.rs:1933:9\n"
        "  13: <burn_autodiff::Autodiff<B> as burn_tensor::ops::FloatTensorOps>::float_reshape\n"
        "  14: unet::train\n"
        "             at ./src/train.rs:3:4\n"
        "note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.\n"
    )
    panic = only(text)
    assert panic.message == "Can't differentiate interpolate backward."
    assert [f.index for f in panic.frames] == [0, 1, 12, 13, 14]
    assert [f.crate for f in panic.frames] == [
        None,
        "core",
        "burn-autodiff",
        "burn-autodiff",
        "unet",
    ]
    first = panic.frames[0]
    assert first.function == "rust_begin_unwind"
    assert first.location is not None
    assert (first.location.kind, first.location.crate, first.location.line) == ("std", "std", 665)
    autodiff = panic.frames[2]
    assert autodiff.location is not None
    assert (autodiff.location.crate, autodiff.location.crate_path, autodiff.location.line) == (
        "burn-autodiff",
        "src/ops/module.rs",
        1933,
    )
    assert panic.frames[3].location is None
    last = panic.frames[4]
    assert last == Frame(
        14,
        "unet::train",
        "unet",
        last.location,
    )
    assert last.location is not None
    assert (last.location.path, last.location.line, last.location.column) == (
        "./src/train.rs",
        3,
        4,
    )
    assert panic.stack_crates == ("burn-autodiff", "core", "unet")
    assert text[: panic.end].endswith("at ./src/train.rs:3:4")


def test_full_backtrace_with_addresses_and_hashes() -> None:
    text = (
        "thread 'main' panicked at src/main.rs:3:5:\n"
        "boom\n"
        "stack backtrace:\n"
        "   0:     0x55d5c0a1b2c3 - "
        "std::backtrace_rs::backtrace::libunwind::trace::h1a2b3c4d5e6f7a8b\n"
        f"                               at {RUSTC}/library/std/src/../../backtrace/src/backtrace/"
        "libunwind.rs:116:5\n"
        "   3: 0x55d5c0a1c000 - burn_ndarray::ops::tensor::reshape::h0011223344556677\n"
        "   4:     0x7ff6 - <unknown>\n"
    )
    panic = only(text)
    assert [(f.index, f.function, f.crate) for f in panic.frames] == [
        (0, "std::backtrace_rs::backtrace::libunwind::trace", "std"),
        (3, "burn_ndarray::ops::tensor::reshape", "burn-ndarray"),
        (4, "<unknown>", None),
    ]
    assert panic.frames[0].location is not None
    assert panic.frames[0].location.kind == "std"


def test_backtrace_in_a_later_block_attaches_to_previous_panic() -> None:
    text = (
        "```\nthread 'main' panicked at src/main.rs:9:9:\nout of memory\n" + NOTE + "\n```\n\n"
        "<details><summary>Full backtrace</summary>\n\n"
        "```\nstack backtrace:\n   0: rust_begin_unwind\n   1: my_app::main\n"
        "             at .\\src\\main.rs:9:9\n```\n</details>\n"
    )
    panic = only(text)
    assert [f.function for f in panic.frames] == ["rust_begin_unwind", "my_app::main"]
    assert panic.frames[1].location is not None
    assert panic.frames[1].location.path == "./src/main.rs"


def test_frames_right_after_message_without_backtrace_line() -> None:
    text = (
        "thread 'main' panicked at src/main.rs:2:2:\nboom\n"
        "   0: rust_begin_unwind\n   1: core::panicking::panic_fmt\n"
    )
    panic = only(text)
    assert panic.message == "boom"
    assert [f.index for f in panic.frames] == [0, 1]


def test_frames_of_two_panics_are_kept_apart() -> None:
    text = (
        "thread 'main' panicked at src/a.rs:1:1:\nfirst\nstack backtrace:\n"
        "   0: a::f\n"
        "thread '<unnamed>' panicked at src/b.rs:2:2:\nsecond\nstack backtrace:\n"
        "   0: b::g\n   1: b::h\n"
    )
    first, second = extract_panics(text)
    assert (first.message, [f.function for f in first.frames]) == ("first", ["a::f"])
    assert (second.message, [f.function for f in second.frames]) == ("second", ["b::g", "b::h"])
    assert second.thread == "<unnamed>"


# --- multi-line messages, several panics ---------------------------------------------------------


BURN_SHAPE_ISSUE = (
    "### Describe the bug\n"
    "Reshape fails after upgrading to 0.15.\n\n"
    "```console\n"
    "     Running `target/debug/mnist`\n"
    "=== PANIC ===\n"
    "A fatal error happened, you can check the experiment logs here => "
    "'/tmp/guide/experiment.log'\n"
    "=============\n"
    f"thread 'main' panicked at {REG}/burn-tensor-0.15.0/src/tensor/api/base.rs:722:9:\n"
    "=== Tensor Operation Error ===\n"
    "  Operation: 'Reshape'\n"
    "  Reason:\n"
    "    1. The given shape doesn't have the same number of elements as the current tensor.\n"
    "       Current shape: [2, 3],   target shape: [4, 2].\n"
    "\n"
    f"{NOTE}\n"
    "```\n\n"
    "### Expected behavior\nIt should work.\n"
)


def test_burn_tensor_check_message_is_one_multiline_message() -> None:
    panic = only(BURN_SHAPE_ISSUE)
    expected = (
        "=== Tensor Operation Error === Operation: 'Reshape' Reason: 1. The given shape doesn't "
        "have the same number of elements as the current tensor. Current shape: [2, 3], target "
        "shape: [4, 2]."
    )
    assert panic.message == expected
    assert panic.core_message == expected
    assert panic.wrapper is None
    assert panic.location is not None
    assert (panic.location.crate, panic.location.crate_version, panic.location.line) == (
        "burn-tensor",
        "0.15.0",
        722,
    )


def test_wgpu_validation_error_keeps_caused_by_block() -> None:
    text = (
        f"thread 'main' panicked at {REG}/wgpu-0.19.4/src/backend/wgpu_core.rs:3006:5:\n"
        "wgpu error: Validation Error\n"
        "\n"
        "Caused by:\n"
        "    In Device::create_bind_group\n"
        "      note: label = `matmul`\n"
        "    Buffer binding 0 range 268435456 exceeds `max_*_buffer_binding_size` limit 134217728\n"
        "\n"
        f"{NOTE}\n"
    )
    panic = only(text)
    assert panic.message == (
        "wgpu error: Validation Error Caused by: In Device::create_bind_group note: label = "
        "`matmul` Buffer binding 0 range 268435456 exceeds `max_*_buffer_binding_size` limit "
        "134217728"
    )
    assert panic.location is not None
    assert (panic.location.crate, panic.location.crate_version) == ("wgpu", "0.19.4")


def test_message_ends_at_blank_line_followed_by_prose_and_at_fence() -> None:
    prose = only("thread 'main' panicked at src/main.rs:1:1:\nboom\n\nI think this is a bug.\n")
    assert prose.message == "boom"
    fence = only("```\nthread 'main' panicked at src/main.rs:1:1:\nboom\n```\nMy code:\n")
    assert fence.message == "boom"
    end = only("thread 'main' panicked at src/main.rs:1:1:\nlast line of the paste")
    assert end.message == "last line of the paste"


def test_empty_message() -> None:
    panic = only(f"thread 'main' panicked at src/main.rs:1:1:\n{NOTE}\n")
    assert (panic.message, panic.core_message, panic.wrapper) == ("", "", None)


def test_several_panics_in_order_and_repeats_once() -> None:
    worker = (
        "thread 'burn-worker' panicked at crates/burn-fusion/src/stream/base.rs:55:13:\n"
        "Stream not found\n"
    )
    text = (
        "thread 'main' panicked at src/main.rs:10:5:\nfirst failure\n"
        + worker
        + worker
        + "thread 'main' panicked at 'old style', src/old.rs:1:2\n"
        + worker.replace("'burn-worker'", "'burn-worker-2'")
        + "\nand in another run:\ncalled `Option::unwrap()` on a `None` value\n"
    )
    panics = extract_panics(text)
    assert [p.message for p in panics] == [
        "first failure",
        "Stream not found",
        "old style",
        "called `Option::unwrap()` on a `None` value",
    ]
    assert [p.has_header for p in panics] == [True, True, True, False]
    assert [p.start for p in panics] == sorted(p.start for p in panics)


def test_max_panics_cap() -> None:
    text = "".join(
        f"thread 'main' panicked at src/main.rs:{n}:1:\nfailure number {n}\n" for n in range(1, 40)
    )
    panics = extract_panics(text, max_panics=5)
    assert [p.message for p in panics] == [f"failure number {n}" for n in range(1, 6)]
    assert len(extract_panics(text)) == 20
    assert extract_panics(text, max_panics=0) == []


# --- noise ------------------------------------------------------------------------------------


def test_ansi_colours_crlf_and_control_characters() -> None:
    text = (
        "\x1b]8;;https://example.com\x07link\x1b]8;;\x07\r\n"
        "\x1b[1m\x1b[32m   Compiling\x1b[0m burn-wgpu v0.16.0\r\n"
        "\x1b[0m\x1b[1m\x1b[31mthread 'main' panicked at \x1b[0msrc/main.rs:4:5:\x1b[0m\r\n"
        "\x1b[31mtensor\x00 on the wrong\x07 device\x1b[0m\r\n"
        "\r\n"
    )
    panic = only(text)
    assert panic.message == "tensor on the wrong device"
    assert panic.location is not None
    assert (panic.location.path, panic.location.line) == ("src/main.rs", 4)
    # Cleaning changed the header line, so the start widens to its beginning.
    assert text[panic.start :].startswith("\x1b[0m\x1b[1m\x1b[31mthread")
    assert text[: panic.end].endswith("device\x1b[0m")
    assert clean_text(text).splitlines()[0] == "link"


def test_orphan_escape_codes_from_lost_esc() -> None:
    text = "[1m[31mthread 'main' panicked at src/main.rs:4:5:[0m\n[31mboom[0m\n"
    panic = only(text)
    assert panic.message == "boom"
    assert panic.thread == "main"


def test_discord_ansi_block_and_details_tags() -> None:
    text = (
        "<details>\n<summary>Panic</summary>\n\n"
        "```ansi\n"
        "\x1b[2;31mthread 'main' panicked at crates/burn-cuda/src/lib.rs:1:1:\x1b[0m\n"
        "CUDA_ERROR_OUT_OF_MEMORY\n"
        "```\n</details>\n"
    )
    panic = only(text)
    assert panic.message == "CUDA_ERROR_OUT_OF_MEMORY"
    assert panic.location is not None
    assert panic.location.crate == "burn-cuda"


def test_lines_padded_with_hundreds_of_spaces() -> None:
    pad = " " * 700
    text = (
        f"{pad}thread 'main' panicked at src/main.rs:4:5:{pad}\n"
        f"{pad}the   message\t\twith  gaps{pad}\n"
        f"{NOTE}{pad}\n"
    )
    panic = only(text)
    assert panic.message == "the message with gaps"
    assert panic.start == len(pad)


def test_odd_unicode_and_lone_surrogates_do_not_raise() -> None:
    text = (
        "\ud800thread 'main' panicked at src/m\u00e4in.rs:4:5:\n"
        "\ufeffΔ tensor 形状 \udfff mismatch \u2028 here\n"
    )
    panic = only(text)
    assert panic.message == "Δ tensor 形状 mismatch here"
    assert panic.location is not None
    assert panic.location.path == "src/mäin.rs"


def test_typographic_quotes_read_as_the_ascii_ones_rust_printed() -> None:
    # A paste that went through a word processor or a chat client: the old header's quotes and
    # the message's apostrophe curled.
    text = (
        "thread \u2018main\u2019 panicked at \u2018can\u2019t open \u201cconfig.toml\u201d\u2019, "
        "src/main.rs:4:5\n"
    )
    panic = only(text)
    assert panic.thread == "main"
    assert panic.message == 'can\'t open "config.toml"'
    assert panic.location is not None
    assert (panic.location.path, panic.location.line) == ("src/main.rs", 4)


def test_a_paste_that_lost_its_line_breaks_keeps_the_old_headers_location() -> None:
    # The backtrace joined onto the header's line: the first `.rs:LINE:COL` after `', ` is
    # the header's, not the last one of the line.
    text = (
        "thread 'main' panicked at 'index 9 out of range', /home/u/.cargo/registry/src/"
        "github.com-1ecc6299db9ec823/tui-0.15.0/src/buffer.rs:217:9 stack backtrace: "
        "0: rust_begin_unwind at /rustc/abc/library/std/src/panicking.rs:515:5 "
        "1: tui::buffer::Buffer::index_of at /home/u/src/app/src/main.rs:21:9\n"
    )
    panic = only(text)
    assert panic.message == "index 9 out of range"
    assert panic.location is not None
    assert (panic.location.crate, panic.location.crate_path) == ("tui", "src/buffer.rs")
    assert panic.location.line == 217


def test_std_notes_and_backtrace_joined_onto_a_message_are_cut_off() -> None:
    text = (
        "thread 'main' panicked at src/view.rs:62:9: content must not fill its axis "
        "stack backtrace:\n"
    )
    assert only(text).message == "content must not fill its axis"
    text = (
        "thread '<unnamed>' panicked at src/vocab.rs:428:22: bad split note: run with "
        "`RUST_BACKTRACE=1` environment variable to display a backtrace\n"
    )
    assert only(text).message == "bad split"


def test_html_line_breaks_inside_a_line_separate_its_words() -> None:
    text = (
        "thread 'main' panicked at src/x.rs:1:2:<br>boom went the thing<br/>"
        "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n"
    )
    panic = only(text)
    assert panic.message == "boom went the thing"
    assert panic.location is not None and panic.location.path == "src/x.rs"


@pytest.mark.parametrize(
    "text",
    [
        "**thread 'main' panicked at src/x.rs:1:2:**\n**boom went the thing**\n",
        "**thread 'main' panicked at src/x.rs:1:2:**\nboom went the thing\n",
        "**thread 'main' panicked at 'boom went the thing', src/x.rs:1:2**\n",
        "It says: **thread 'main' panicked at 'boom went the thing', src/x.rs:1:2**\n",
        "_thread 'main' panicked at 'boom went the thing', src/x.rs:1:2_\n",
        "* thread 'main' panicked at src/x.rs:1:2:\n* boom went the thing\n",
    ],
)
def test_markdown_emphasis_around_a_header_is_no_part_of_it(text: str) -> None:
    # a header set in bold or italics in prose (and a list's markers, a prefix of every line)
    panic = only(text)
    assert panic.message == "boom went the thing"
    assert panic.location is not None
    assert (panic.location.path, panic.location.line) == ("src/x.rs", 1)


def test_a_tasks_panic_carried_in_a_join_error_is_a_panic_of_its_own() -> None:
    # tokio's JoinError as `{:?}` prints the task's panic message: that panic came first, and
    # was raised elsewhere (the header is the unwrap's, at the user's file).
    text = (
        "thread 'main' panicked at src/main.rs:9:5:\n"
        'called `Result::unwrap()` on an `Err` value: JoinError::Panic(Id(18), "pool \\"db\\" '
        'exhausted after 3 retries", ...)\n'
    )
    task, unwrap = extract_panics(text)
    assert task.message == 'pool "db" exhausted after 3 retries'
    assert task.location is None and not task.has_header
    assert unwrap.has_header and unwrap.location is not None
    # a payload left out is no panic of its own
    elided = "thread 'main' panicked at src/main.rs:9:5:\nJoinError::Panic(Id(1), ...)\n"
    assert len(extract_panics(elided)) == 1


def test_pyo3s_panic_exception_as_pythons_repr_prints_it() -> None:
    # A `PyErr`'s `{:?}` (or a logged exception) shows the exception as Python's repr does.
    text = (
        "PyErr { type: <class 'pyo3_runtime.PanicException'>, value: "
        "PanicException('the pool was closed twice: PoolError(())'), traceback: None }"
    )
    assert only(text).message == "the pool was closed twice: PoolError(())"
    assert only('raised PanicException("can\'t open the index")').message == "can't open the index"
    assert extract_panics("except PanicException(err): pass") == []


def test_offsets_with_crlf_are_in_the_original_text() -> None:
    text = "intro\r\n\r\nthread 'main' panicked at src/main.rs:4:5:\r\nboom\r\nnote: x\r\n"
    panic = only(text)
    assert text[panic.start : panic.end] == "thread 'main' panicked at src/main.rs:4:5:\r\nboom"


def test_clean_text() -> None:
    raw = (
        "a\x1b[31mb\x1b[0m\r\nc\rd\x00e\x1b]0;title\x07f   \n"
        "<details><summary>Log</summary>\n"
        "> quoted\u00a0line\n"
    )
    assert clean_text(raw) == "ab\nc\nd" + "ef\nLog\n> quoted line\n"


# --- robustness -------------------------------------------------------------------------------


def test_five_megabytes_of_garbage() -> None:
    rng = random.Random(7)
    chunks = [
        rng.randbytes(4000).decode("latin-1"),  # binary, C0/C1 controls, lone CRs
        rng.randbytes(4000).decode("utf-16-le", "surrogatepass"),  # any BMP char, surrogates
        "panicked at " * 300,
        "'" * 4000 + "panicked at '" + "', " * 2000,
        ":1:1" * 3000,
        " " * 20000 + "x",
        "\x1b[" * 5000,
        "0: " * 3000,
        ">" * 9000,
        "called `" * 1000,
        "Error: " * 1000 + "\n",
        "\n" * 3000,
    ]
    pieces = []
    size = 0
    while size < 5_000_000:
        piece = chunks[rng.randrange(len(chunks))]
        pieces.append(piece)
        size += len(piece)
    garbage = "".join(pieces)
    panics = extract_panics(garbage)
    assert isinstance(panics, list)
    assert len(panics) <= 20
    for panic in panics:
        assert 0 <= panic.start <= panic.end <= len(garbage)
    one_huge_line = "x" * 5_000_000 + "\nthread 'main' panicked at src/a.rs:1:1:\nstill found\n"
    assert [p.message for p in extract_panics(one_huge_line)] == ["still found"]


def test_empty_and_trivial_inputs() -> None:
    assert extract_panics("") == []
    assert extract_panics("\n\n\n") == []
    assert extract_panics("hello world") == []


# --- more shapes --------------------------------------------------------------------------------


def test_old_format_without_terminator_stops_at_note() -> None:
    text = (
        "thread 'main' panicked at 'Unable to find a device\n"
        f"{NOTE}\n"
        "thread 'x' panicked at 'other', src/x.rs:1:1\n"
    )
    first, second = extract_panics(text)
    assert (first.message, first.location) == ("Unable to find a device", None)
    assert first.has_header is True
    assert second.message == "other"
    assert second.location is not None
    assert second.location.path == "src/x.rs"


def test_old_format_cut_before_its_location_reads_to_the_closing_quote() -> None:
    # A multi-line old header whose `', PATH:LINE:COL` the paste left out: the message runs to
    # the quote that closes it, not only its first line; the prose after a blank line is not
    # part of it, nor is a quote further down.
    text = (
        "thread 'worker' panicked at 'assertion failed: `(left == right)`\n"
        "  left: `4`,\n"
        " right: `3`: Nodes must match the count declared up front'\n"
        "\n"
        "It only happens with some payloads, the 'big' ones.\n"
    )
    panic = only(text)
    assert panic.wrapper == "assert-eq"
    assert panic.core_message == "Nodes must match the count declared up front"
    assert panic.location is None
    assert text[: panic.end].endswith("declared up front'")
    # No closing quote before the blank line: the first line alone, as before.
    cut = "thread 'main' panicked at 'Unable to find\n  a device\n\nthe 'x' one'\n"
    assert only(cut).message == "Unable to find"


def test_an_old_header_opening_its_message_below_and_cut_before_the_quote_closes() -> None:
    # openssl-sys's build script panicked with a message that starts on the line below
    # `panicked at '` (two newlines first); pastes often end before its `', PATH:LINE`: the
    # lines below the header are the message, up to the end of the block.
    text = (
        "--- stderr\n"
        "thread 'main' panicked at '\n"
        "\n"
        "Could not find directory of the installation, and this crate cannot\n"
        "proceed without this knowledge.\n"
        "\n"
        "    $HOST = x86_64-unknown-linux-gnu\n"
        "    version = 0.9.13\n"
        "\n"
    )
    panic = only(f"```\n{text}```\nAny idea?\n")
    assert panic.message == (
        "Could not find directory of the installation, and this crate cannot proceed without "
        "this knowledge. $HOST = x86_64-unknown-linux-gnu version = 0.9.13"
    )
    assert panic.location is None


def test_omitted_frames_marker_and_windows_frames() -> None:
    text = (
        "thread 'main' panicked at src\\main.rs:12:10:\r\n"
        "called `Result::unwrap()` on an `Err` value: AdapterNotFound\r\n"
        "stack backtrace:\r\n"
        "   0: std::panicking::begin_panic_handler\r\n"
        "             at /rustc/abc/library\\std\\src\\panicking.rs:652\r\n"
        "      [... omitted 2 frames ...]\r\n"
        "   3: wgpu_app::main\r\n"
        "             at C:\\Users\\me\\wgpu_app\\src\\main.rs:12\r\n"
        "   4: <unknown>\r\n"
    )
    panic = only(text)
    assert panic.wrapper == "unwrap-err"
    assert panic.core_message == "AdapterNotFound"
    assert panic.location is not None
    assert panic.location.path == "src/main.rs"
    assert [(f.index, f.function, f.crate) for f in panic.frames] == [
        (0, "std::panicking::begin_panic_handler", "std"),
        (3, "wgpu_app::main", "wgpu-app"),
        (4, "<unknown>", None),
    ]
    std_loc = panic.frames[0].location
    assert std_loc is not None
    assert (std_loc.kind, std_loc.crate, std_loc.line, std_loc.column) == ("std", "std", 652, None)
    app_loc = panic.frames[1].location
    assert app_loc is not None
    assert (app_loc.path, app_loc.line, app_loc.kind) == (
        "C:/Users/me/wgpu_app/src/main.rs",
        12,
        "other",
    )
    assert text[: panic.end].endswith("   4: <unknown>")


def test_backtrace_without_any_panic_is_ignored() -> None:
    text = "stack backtrace:\n   0: rust_begin_unwind\n   1: core::panicking::panic_fmt\n"
    assert extract_panics(text) == []


def test_prose_after_panic_is_not_a_frame() -> None:
    text = (
        "thread 'main' panicked at src/main.rs:1:1:\nboom\n\n"
        "Steps:\n1: see below\n2: run it\n"
        "stack backtrace:\n   0: my_app::main\n"
    )
    panic = only(text)
    assert panic.message == "boom"
    assert [f.function for f in panic.frames] == ["my_app::main"]


def test_quoted_panic_with_quoted_backtrace() -> None:
    text = (
        "> thread '<unnamed>' panicked at crates/burn-ndarray/src/ops/base.rs:300:14:\n"
        "> index out of bounds: the len is 2 but the index is 2\n"
        "> stack backtrace:\n"
        ">    0: rust_begin_unwind\n"
        ">    1: burn_ndarray::ops::base::NdArrayOps::gather\n"
        ">              at ./crates/burn-ndarray/src/ops/base.rs:300:14\n"
    )
    panic = only(text)
    assert panic.message == "index out of bounds: the len is 2 but the index is 2"
    assert [f.crate for f in panic.frames] == [None, "burn-ndarray"]
    loc = panic.frames[1].location
    assert loc is not None
    assert (loc.kind, loc.crate, loc.crate_path) == ("workspace", "burn-ndarray", "src/ops/base.rs")


def test_wrapper_text_inside_a_message_is_not_a_second_panic() -> None:
    text = (
        "thread 'main' panicked at src/main.rs:3:3:\n"
        "Failed to import: called `Option::unwrap()` on a `None` value\n"
        "assertion failed: this is part of the same message\n"
        f"{NOTE}\n"
    )
    panic = only(text)
    assert panic.message == (
        "Failed to import: called `Option::unwrap()` on a `None` value "
        "assertion failed: this is part of the same message"
    )
    assert panic.wrapper is None


def test_full_backtrace_with_inlined_frames() -> None:
    text = (
        "thread 'tokio-runtime-worker' panicked at 'called `Result::unwrap()` on an `Err` value: "
        "RecvError', src/server.rs:40:22\n"
        "stack backtrace:\n"
        "  19:     0x56102b9af43f - "
        "tokio::runtime::task::harness::Harness<T,S>::poll::h75d9e5ed16e8a542\n"
        "                               at /root/.cargo/registry/src/github.com-1ecc6299db9ec823/"
        "tokio-1.37.0/src/runtime/task/harness.rs:100\n"
        "                           "
        "tokio::loom::std::unsafe_cell::UnsafeCell<T>::with_mut::he13ac1ba8e921412\n"
        "                               at /root/.cargo/registry/src/github.com-1ecc6299db9ec823/"
        "tokio-1.37.0/src/loom/std/unsafe_cell.rs:16:9\n"
        "  20:     0x56102b9af500 - server::handle\n"
    )
    panic = only(text)
    assert (panic.wrapper, panic.core_message, panic.thread) == (
        "unwrap-err",
        "RecvError",
        "tokio-runtime-worker",
    )
    assert [(f.index, f.function) for f in panic.frames] == [
        (19, "tokio::runtime::task::harness::Harness<T,S>::poll"),
        (None, "tokio::loom::std::unsafe_cell::UnsafeCell<T>::with_mut"),
        (20, "server::handle"),
    ]
    inlined = panic.frames[1].location
    assert inlined is not None
    assert (inlined.crate, inlined.crate_version, inlined.crate_path, inlined.line) == (
        "tokio",
        "1.37.0",
        "src/loom/std/unsafe_cell.rs",
        16,
    )


def test_log_panics_crate_format() -> None:
    text = (
        "09:50:21.959 [panic][ERROR] thread 'main' panicked at 'called `Result::unwrap()` on an "
        "`Err` value: InitializationFailed': C:\\Users\\me\\.cargo\\registry\\src\\"
        "github.com-1ecc6299db9ec823\\wgpu-core-0.5.6\\src\\instance.rs:552\n"
        "   0: <unknown>\n"
    )
    panic = only(text)
    assert (panic.wrapper, panic.core_message) == ("unwrap-err", "InitializationFailed")
    assert panic.location is not None
    assert (panic.location.crate, panic.location.crate_version, panic.location.line) == (
        "wgpu-core",
        "0.5.6",
        552,
    )
    assert [f.function for f in panic.frames] == ["<unknown>"]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(max_size=80),
            st.sampled_from(
                [
                    "thread 'main' panicked at ",
                    "src/main.rs:1:2:",
                    "panicked at '",
                    "', src/a.rs:3:4",
                    "called `Result::unwrap()` on an `Err` value: ",
                    "Error: ",
                    "stack backtrace:",
                    "   0: a::b",
                    "      at ./x.rs:1:1",
                    "\n",
                    "\r\n",
                    "> ",
                    "\x1b[31m",
                    "```",
                    "assertion `left == right` failed",
                    "  left: 1",
                    "\ud800",
                ]
            ),
        ),
        max_size=30,
    )
)
def test_any_text_is_safe(parts: list[str]) -> None:
    text = "".join(parts)
    panics = extract_panics(text)
    assert len(panics) <= 20
    for panic in panics:
        assert 0 <= panic.start <= panic.end <= len(text)
        assert panic.message == " ".join(panic.message.split())
        if panic.wrapper is None:
            assert panic.core_message == panic.message
    assert "\r" not in clean_text(text)


def test_header_and_message_in_one_inline_code_span() -> None:
    text = (
        "It fails right away: `thread 'main' panicked at "
        f"{REG}/burn-dataset-0.20.0/src/dataset/sqlite.rs:474:13: The database file does not exist`"
    )
    panic = only(text)
    assert panic.message == "The database file does not exist"
    assert panic.location is not None
    assert (panic.location.crate, panic.location.line, panic.location.column) == (
        "burn-dataset",
        474,
        13,
    )


def test_code_block_message_runs_to_std_note_across_blank_lines() -> None:
    text = (
        "```\n"
        f"thread 'main' panicked at {REG}/wgpu-25.0.2/src/backend/wgpu_core.rs:1051:30:\n"
        "wgpu error: Validation Error\n\n"
        "Caused by:\n"
        "  In Device::create_shader_module\n\n"
        "Shader 'matmul' parsing error: unknown identifier `lhs_1`\n"
        "   ┌─ wgsl:12:5\n\n"
        f"{NOTE}\n"
        "```\n"
        "Then the window closes.\n"
    )
    panic = only(text)
    assert panic.message == (
        "wgpu error: Validation Error Caused by: In Device::create_shader_module "
        "Shader 'matmul' parsing error: unknown identifier `lhs_1` ┌─ wgsl:12:5"
    )
    # Outside a code block the same blank line ends the message: prose may follow.
    outside = only(text.replace("```\n", ""))
    assert outside.message == (
        "wgpu error: Validation Error Caused by: In Device::create_shader_module"
    )


def test_build_script_output_is_indented_as_a_whole() -> None:
    text = (
        "error: failed to run custom build command for `burn-tch v0.18.0`\n\n"
        "Caused by:\n"
        "  process didn't exit successfully: `target/debug/build/burn-tch/build-script-build`\n"
        "  --- stderr\n"
        f"  thread 'main' panicked at {REG}/burn-tch-0.18.0/build.rs:74:10:\n"
        "  error running python interpreter: Os { code: 2, kind: NotFound }\n"
        "  note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n"
    )
    panic = only(text)
    assert panic.message == "error running python interpreter: Os { code: 2, kind: NotFound }"
    assert panic.location is not None
    assert (panic.location.crate, panic.location.crate_path) == ("burn-tch", "build.rs")


def test_location_line_without_its_header() -> None:
    text = (
        "In the browser console:\n\n"
        "> /rustc/4a4ef493e3a1488c6e321570238084b38948f6db/library/std/src/sys/sync/condvar/"
        "no_threads.rs:20:9:\n"
        "> condvar wait not supported\n\n"
        "Compiler output for comparison (not a panic):\n"
        " --> src/main.rs:3:9\n"
    )
    panic = only(text)
    assert panic.message == "condvar wait not supported"
    assert panic.has_header is False
    assert panic.location is not None
    assert (panic.location.kind, panic.location.crate, panic.location.line) == ("std", "std", 20)
    assert extract_panics("src/main.rs:3:9:\n") == []  # a location and no message


def test_color_eyre_report() -> None:
    text = (
        "With color-eyre installed the panic reads:\n\n"
        "\x1b[31mThe application panicked (crashed).\x1b[0m\n"
        "Message:  \x1b[36mCan't differentiate adaptive avg pool2d backward.\x1b[0m\n"
        f"Location: \x1b[35m{REG}/burn-autodiff-0.17.1/src/ops/module.rs\x1b[0m:"
        "\x1b[35m1402\x1b[0m\n\n"
        "Backtrace omitted. Run with RUST_BACKTRACE=1 environment variable to display it.\n"
    )
    panic = only(text)
    assert panic.message == "Can't differentiate adaptive avg pool2d backward."
    assert (panic.has_header, panic.thread, panic.wrapper) == (True, None, None)
    assert panic.location is not None
    assert (panic.location.crate, panic.location.crate_version, panic.location.line) == (
        "burn-autodiff",
        "0.17.1",
        1402,
    )
    assert panic.location.column is None


def test_a_hooks_labelled_lines_in_either_order() -> None:
    # A program's own hook: the location first, under another label, a thread line between.
    text = (
        "Source Location: D:\\a\\tool\\tool\\crates\\tool_ast\\src\\ast\\mod.rs:651:41\n"
        "Thread Name: tool::worker_5\n"
        "Message: Malformed list, node expected but found token COMMA@446..447 instead.\n"
        "Stack Trace: Re-run with `RUST_BACKTRACE=1` to capture the stack trace\n"
    )
    panic = only(text)
    assert panic.message == "Malformed list, node expected but found token COMMA@446..447 instead."
    assert panic.has_header
    assert panic.location is not None
    assert (panic.location.path.endswith("mod.rs"), panic.location.line) == (True, 651)
    # A user's hook printing each value in brackets, a timestamp first.
    text = (
        "Time: [2025-07-23-17-03-23]\n"
        f"Location: [{REG}/tauri-2.5.1/src/lib.rs:742:7]\n"
        "Message: [state() called before manage() for Foo]\n"
    )
    panic = only(text)
    assert panic.message == "state() called before manage() for Foo"
    assert panic.location is not None and panic.location.crate == "tauri"
    # Two reports one after the other, each message with the location nearest to it, once each.
    text = (
        "Message: first failure here\n"
        "Location: src/alpha.rs:10:5\n\n"
        "Message: second failure here\n"
        "Location: src/beta.rs:20:7\n"
    )
    found = extract_panics(text)
    assert [(p.message, p.location and p.location.line) for p in found] == [
        ("first failure here", 10),
        ("second failure here", 20),
    ]
    # A `Message:` line without a location nearby is no such report (a log's, an error's).
    assert all(p.location is None for p in extract_panics("Message: connection reset by peer\n"))


def _change_description_by_regex(text: str) -> bool:
    """looks_like_change_description without its word check: the pattern on every text."""
    from bot.core.extract import quoted

    head = text[:20_000]
    if quoted._CHANGE_TITLE.match(head.lstrip().split("\n", 1)[0]):
        return True
    return len(quoted._CHANGE_SECTIONS.findall(head)) >= 2 or "- [x]" in head or "- [ ]" in head


@pytest.mark.parametrize(
    "text",
    [
        "## Changes\nfoo\n## Test plan\nran it",
        "   CHANGELOG\n\n#### Related issues\n",
        "Changes: one\nchecklist\n",
        "## Changes\nonly one section",
        "A log\nINFO testing\nchangeset 4 applied\n",
        "## Çhanges\n## Test plan\n",  # not ASCII: the pattern decides
        "## Changes\n## TeſTING\n",  # the long s matches `s` case-blind
        "thread 'main' panicked at src/lib.rs:1:1:\nboom",
    ],
)
def test_the_change_description_word_check_agrees_with_the_pattern(text):
    from bot.core.extract.quoted import looks_like_change_description

    assert looks_like_change_description(text) == _change_description_by_regex(text)


def test_the_change_description_word_check_agrees_on_the_corpus():
    from pathlib import Path

    from bot.core.extract.quoted import looks_like_change_description

    root = Path(__file__).parent
    texts = [p.read_text(encoding="utf-8") for p in sorted(root.glob("corpus*/**/*.md"))]
    assert len(texts) > 100
    found = [looks_like_change_description(t) for t in texts]
    assert found == [_change_description_by_regex(t) for t in texts]
    assert any(found) and not all(found)


def test_interleaved_old_headers_on_one_line_give_the_last_ones_message() -> None:
    """Threads panicking at once print over each other: the last header's message is whole."""
    text = "thread 'a<unnamed>' panicked at '' panicked at 'Resource does not exist'\n"
    assert only(text).core_message == "Resource does not exist"
    quoted = "thread 'main' panicked at 'it said panicked at noon', src/a.rs:1:2\n"
    assert only(quoted).core_message == "it said panicked at noon"


@pytest.mark.parametrize("elided", ["...", "…", "...:", "[...]", "<redacted>"])
def test_a_header_whose_location_was_cut_reads_the_message_below(elided: str) -> None:
    # `thread 'main' panicked at ...` (the reporter cut the path), the message on the next line:
    # a header without a location, behind a logger's prefix too.
    body = (
        f"thread 'main' panicked at {elided}\n"
        "The pool was started twice: PoolError { kind: AlreadyStarted }\n"
        "stack backtrace:\n"
    )
    for text in (body, "".join(f"web-1  | {line}\n" for line in body.splitlines())):
        panic = only(text)
        assert panic.has_header
        assert panic.location is None
        assert panic.core_message.startswith("The pool was started twice: PoolError {")


def test_a_report_inside_a_json_log_record_is_read_as_a_paste_of_its_own() -> None:
    # A logger writing JSON escapes the report's line breaks, quotes and backslashes inside a
    # string value: the value is decoded and read, in any of std's formats, with its backtrace.
    old = (
        '{"level":"ERROR","target":"panic","message":"thread \'main\' panicked at \'internal '
        "error: missing block', crates\\\\nu-protocol\\\\src\\\\engine\\\\state.rs:525:14\\n"
        'stack backtrace:\\n   0: std::panicking::begin_panic\\n   1: nu_protocol::get_block\\n"}'
    )
    panic = only(old)
    assert panic.message == "internal error: missing block"
    assert panic.location is not None
    assert panic.location.path == "crates/nu-protocol/src/engine/state.rs"
    assert [frame.function for frame in panic.frames] == [
        "std::panicking::begin_panic",
        "nu_protocol::get_block",
    ]
    new = (
        '2024-01-02 {"fields":{"message":"thread \'main\' panicked at src/main.rs:5:5:\\n'
        'the lint \\"x\\" broke\\nnote: run with `RUST_BACKTRACE=1`"},"target":"app"}'
    )
    assert only(new).message == 'the lint "x" broke'
    # a value without escapes ends at its closing quote, not at the line's end
    plain = '{"message":"thread \'main\' panicked at src/main.rs:5:5: boom","level":"ERROR"}'
    assert only(plain).message == "boom"
    # the report's place is the string's, within the record's line
    assert old[only(old).start] == "t" and old[only(old).end] == '"'
    # a message quoted in prose, and a Debug value, are no log records: read as they stand
    prose = "It said: \"thread 'main' panicked at 'x', src/a.rs:1:2\""
    panic = only(prose)
    assert panic.message == "x" and panic.location is not None and panic.location.line == 1


def test_a_loggers_prefix_is_read_off_every_formats_report() -> None:
    # env_logger's prefix before each line of a miette report: the shape is learned from the
    # report's header line as from std's, so the location under it is read.
    body = (
        "  × Main thread panicked.\n"
        "  ├─▶ at crates/nu-cmd-lang/src/core_commands/if_.rs:71:14\n"
        "  ╰─▶ internal error: missing block\n"
    )
    text = "".join(f"[2024-01-02T03:04:05Z ERROR app] {line}\n" for line in body.splitlines())
    panic = only(text)
    assert panic.message == "internal error: missing block"
    assert panic.location is not None and panic.location.line == 71


def test_a_paste_indented_as_a_whole_ends_its_message_at_a_blank_line() -> None:
    # A code block inside a list item is indented as a whole: a line after a blank one goes on
    # with the message only when indented deeper than the header.
    text = (
        "1. Open the app:\n\n"
        "   ```\n"
        "   app.js:1 panicked at src/traits.rs:394:39:\n"
        "   Tried to access a value that has already been disposed.\n"
        "\n"
        "   Stack:\n"
        "\n"
        "   Error\n"
        "       at https://example.test/app.wasm:1:2\n"
        "   ```\n"
    )
    assert only(text).message == "Tried to access a value that has already been disposed."
    deeper = text.replace("   Stack:", "     details follow").replace("   Error", "     more")
    assert only(deeper).message.endswith("disposed. details follow more")


def test_a_text_escaped_for_html_is_read_unescaped() -> None:
    text = (
        "thread 'main' panicked at src/query.rs:10:5:\n"
        "$state_name&lt;Vol&gt; conflicts with &quot;a&quot; &amp;&#39;b&#39;\n"
    )
    assert only(text).message == "$state_name<Vol> conflicts with \"a\" &'b'"
    # without an escaped `<`, `>` or `"`, an `&` is text (`&{}`, a URL's `&amp`-like parameter)
    kept = "thread 'main' panicked at src/query.rs:10:5:\n&{} conflicts, see ?a=1&amp=2\n"
    assert only(kept).message == "&{} conflicts, see ?a=1&amp=2"


def test_old_rusts_location_inside_a_std_macro_ends_the_message() -> None:
    # Before 1.42 a panic in a std macro's expansion was placed in the macro: the message ends
    # at `', <...macros>:L:C` and the location is std's (it says nothing of the caller's file).
    for place in ("<::std::macros::panic macros>:2:4", "<::core::macros::panic macros>:3:10"):
        panic = only(f"thread 'main' panicked at 'System is not running', {place}\n")
        assert panic.message == "System is not running"
        assert panic.location is not None and panic.location.kind == "std"
    assert only("thread 'x' panicked at 'boom', <std macros>:1:33\n").message == "boom"


def test_an_old_header_cut_after_its_separator_keeps_its_message_whole() -> None:
    # `panicked at 'MESSAGE', ` with the location cut off: the separator is no part of it.
    text = "thread '<unnamed>' panicked at 'there is no reactor running', \n\nHas anyone seen it?\n"
    assert only(text).message == "there is no reactor running"
    two_lines = "thread 'main' panicked at 'first line\nsecond line', \n"
    assert only(two_lines).message == "first line second line"


def test_an_old_header_whose_separator_lost_its_space_keeps_its_location() -> None:
    # A reporter who shortened the path (`[PATH]` for the registry folder) dropped the space.
    text = (
        "thread 'main' panicked at 'not implemented: path index.html/',"
        "[PATH]\\demo-0.1.3\\src\\lib.rs:347:26\n"
    )
    panic = only(text)
    assert panic.message == "not implemented: path index.html/"
    assert panic.location is not None and panic.location.line == 347
    # a `',` inside the message, with no location after it, is text
    assert only("thread 'main' panicked at 'a',b', src/x.rs:1:2\n").message == "a',b"


def test_a_miette_report_with_blank_lines_between_its_lines_is_read() -> None:
    # A copy that set each line apart: the causes are still the report's.
    text = (
        "Error:\n\n  × Main thread panicked.\n\n  ├─▶ at crates/x/src/y.rs:12:5\n\n  ╰─▶ it broke\n"
    )
    panic = only(text)
    assert panic.message == "it broke"
    assert panic.location is not None and panic.location.line == 12
    assert extract_panics("  × Main thread panicked.\n\nok then\n") == []


def test_a_path_a_terminal_cut_over_several_lines_is_joined() -> None:
    # A terminal 80 columns wide cut a long registry path twice, in either header format.
    old = (
        "thread 'Worker' panicked at 'invalid offset', /Users/brew/Library/Caches/Homebre\n"
        "w/cargo_cache/registry/src/index.crates.io-6f17d22bba15001f/line-index-0.1.0-pre\n"
        ".1/src/lib.rs:148:35\n"
        "stack backtrace:\n"
    )
    panic = only(old)
    assert panic.message == "invalid offset"
    assert panic.location is not None and panic.location.crate_path == "src/lib.rs"
    new = (
        "thread 'w' panicked at /usr/local/cargo/registry/src/index.crates.io-1949cf8c6b5b557\n"
        "f/vrl-0.28.1/src/stdlib/dns_look\n"
        "up.rs:48:22:\n"
        "can call blocking only when running on the multi-threaded runtime\n"
    )
    panic = only(new)
    assert panic.message == "can call blocking only when running on the multi-threaded runtime"
    assert panic.location is not None and panic.location.path.endswith("stdlib/dns_lookup.rs")
    # prose after a cut path is no part of it
    cut = extract_panics("thread 'm' panicked at src/a.r\ns is where:\nboom\n")
    assert all(found.location is None for found in cut)


def test_a_location_field_a_terminal_cut_is_joined() -> None:
    # color-eyre's `Location:` line cut at 80 columns, in its report and as fields alone.
    report = (
        "The application panicked (crashed).\n"
        "Message:  A context was found, but it is being shutdown.\n"
        "Location: /home/runner/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/tokio-1\n"
        ".45.1/src/runtime/time/entry.rs:557\n"
        "\n"
        "Backtrace omitted.\n"
    )
    panic = only(report)
    assert panic.location is not None and panic.location.line == 557
    assert panic.location.crate_version == "1.45.1"
    fields = "Message:  boom\nLocation: /home/u/registry/src/x/demo-\n1.0.0/src/lib.rs:12\n"
    found = only(fields)
    assert found.message == "boom" and found.location is not None and found.location.line == 12


def test_a_backtrace_cut_with_dots_is_still_read_behind_a_build_logs_prefix() -> None:
    # A reporter cut the backtrace with `...` lines (typed, so without the build log's clock);
    # the frames between them are the panic's, and the clock is every logged line's prefix.
    frames = (
        "   7:     0x7ff63f888a2f - core::result::unwrap_failed<app::parse::Error>\n"
        "                        at C:\\rust\\src\\libcore\\macros.rs:29\n"
        "   8:     0x7ff63f8d46d0 - app::ir::ty::Type::from_node\n"
        "                        at S:\\src\\app\\src\\ir\\ty.rs:1024\n"
    )
    header = (
        "thread '<unnamed>' panicked at 'Cannot go on: Continue', C:\\rust\\libcore\\result.rs:837"
    )
    for clock in ("", " 0:17.10 "):
        logged = "".join(clock + line + "\n" for line in frames.splitlines())
        (found,) = extract_panics(f"{clock}{header}\n...\n{logged}...\n")
        assert found.core_message == "Cannot go on: Continue"
        assert [f.function for f in found.frames][-1] == "app::ir::ty::Type::from_node"
        assert found.frames[-1].location is not None
        assert found.frames[-1].location.path.endswith("src/ir/ty.rs")


def _cut_at(text: str, width: int) -> str:
    """`text` as a terminal `width` columns wide copies it: each longer line in pieces."""
    return "\n".join(
        "\n".join(line[i : i + width] for i in range(0, len(line), width)) if line else line
        for line in text.split("\n")
    )


def test_lines_a_terminal_cut_at_its_width_are_read_joined() -> None:
    registry = "/home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f"
    paste = (
        f"thread 'main' panicked at {registry}/app_ecs-0.11.2/src/system/system_param.rs:516:5:\n"
        "error[B0002]: ResMut<app::Events<Foo>> in system app::main::{{closure}} conflicts "
        "with a previous Res<app::Events<Foo>> access. Consider removing the duplicate access.\n"
        f"note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n"
    )
    (whole,) = extract_panics(paste)
    for width in (72, 80):
        text = "Starting the app:\n```\n" + _cut_at(paste, width) + "```\n"
        (cut,) = extract_panics(text)
        assert cut.message == whole.message  # `co` + `nflicts`: one word again
        assert cut.location == whole.location
        assert text[cut.start :].startswith("thread 'main' panicked at")
        assert text[: cut.end].replace("\n", "").endswith("duplicate access.")


def test_a_header_a_terminal_cut_right_after_panicked_is_joined() -> None:
    # A log line whose old header the terminal cut just after `panicked`: the rest opens with
    # ` at '..`, which is the header's, not a backtrace's `at` line.
    paste = (
        "Apr 20 14:56:53 host cms[15916]: thread 'tokio-runtime-worker-3' panicked at 'cannot "
        "find pid 6 in view_for_key, looking for key [105, 116, 101, 109, 58, 56, 98, 49, 50, "
        "101, 49, 55, 102, 49, 55, 99, 55, 54, 98, 98, 55, 98, 99] in tree', /usr/local/cargo/"
        "registry/src/github.com-1ecc6299db9ec823/sled-0.29.1/src/tree.rs:1709:9\n"
    )
    (whole,) = extract_panics(paste)
    for width in (73, 74):  # the cut before the space after `panicked`, and after it
        cut = _cut_at(paste, width)
        assert cut.split("\n")[0].rstrip().endswith(" panicked")
        (read,) = extract_panics("```\n" + cut + "```\n")
        assert read.message == whole.message
        assert read.location == whole.location


def test_an_old_header_a_terminal_cut_over_two_lines_joins_the_cut_word() -> None:
    # Two lines at an 80-column terminal's width are too few for the block's cut to show
    # (bot.core.extract.hard_wrap), but inside an old header's quote a line as long as the
    # header's was cut there: `f` + `or changeset` is one word.
    paste = (
        "thread 'main' panicked at 'Positions [(1, After), (1, After)] are out of range for "
        "changeset len 2!', /var/home/mo/code/helix/helix-core/src/transaction.rs:413:9\n"
    )
    (whole,) = extract_panics(paste)
    cut = _cut_at(paste, 80)
    assert [len(line) for line in cut.split("\n")[:2]] == [80, 80]
    (read,) = extract_panics("```\n" + cut + "note: run with `RUST_BACKTRACE=1`\n```\n")
    assert read.message == whole.message
    assert read.location is not None and whole.location is not None
    assert (read.location.path, read.location.line) == (whole.location.path, whole.location.line)
    # A writer's own line break inside the quote keeps its space.
    broken = "thread 'main' panicked at 'Positions are out of range\nfor x', a.rs:1:1\n"
    assert only(broken).message == "Positions are out of range for x"


def _xxd(data: bytes) -> str:
    """`data` as `xxd` prints it: offset, eight groups of two bytes, the printable column."""
    lines = []
    for at in range(0, len(data), 16):
        chunk = data[at : at + 16]
        groups = " ".join(chunk[i : i + 2].hex() for i in range(0, len(chunk), 2))
        shown = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        lines.append(f"{at:08x}: {groups:<39}  {shown}")
    return "\n".join(lines)


def _hexdump_c(data: bytes) -> str:
    """`data` as `hexdump -C` prints it: offset, sixteen bytes in two halves, `|column|`."""
    lines = []
    for at in range(0, len(data), 16):
        chunk = data[at : at + 16]
        left = " ".join(f"{b:02x}" for b in chunk[:8])
        right = " ".join(f"{b:02x}" for b in chunk[8:])
        shown = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        lines.append(f"{at:08x}  {left:<23}  {right:<23}  |{shown}|")
    return "\n".join(lines)


def test_a_panic_in_a_hex_dump_of_the_terminal_is_read() -> None:
    output = (
        b"\x1b[35mdoc/passes.texi\x1b[0m\r\nthread 'main' panicked at src/paint.rs:898:17:\r\n"
        b"String mismatch encountered while superimposing style sections: ' ' vs 'm'\r\n"
        b"note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\r\n"
    )
    for dump in (_xxd(output), _hexdump_c(output)):
        title = "Title: Panic running `git grep`: thread 'main' panicked at src/paint.rs:898:17\n\n"
        text = f"{title}The output as a hex dump:\n\n```\n{dump}\n```\n"
        (found,) = extract_panics(text)  # the title's copy of the header gives way
        assert found.message == (
            "String mismatch encountered while superimposing style sections: ' ' vs 'm'"
        )
        assert found.location is not None and found.location.line == 898
        assert text[found.start :].startswith("00000000")


def test_an_old_header_with_more_text_after_its_location_on_the_line() -> None:
    """An old header quoted inline, the note and the exit status joined onto its line: the
    message ends at `', ` before the location, and the location at its column."""
    text = (
        "Running it stops with \"thread 'main' panicked at 'cannot sample empty range', "
        r"C:\Users\me\cargo\registry\src\github.com-1ecc6299db9ec823\rand-0.8.3\src\rng.rs:132:9"
        " note: run with RUST_BACKTRACE=1 environment variable to display a backtrace error: "
        "process didn't exit successfully (exit code: 101)\"\n"
    )
    [panic] = extract_panics(text)
    assert panic.message == "cannot sample empty range"
    assert panic.location is not None
    assert (panic.location.crate, panic.location.crate_version) == ("rand", "0.8.3")
    assert (panic.location.crate_path, panic.location.line) == ("src/rng.rs", 132)
