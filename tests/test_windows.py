"""Inputs of any size are read whole, a window at a time (bot.core.match.windows)."""

from __future__ import annotations

import io
import json
import random

import pytest
from corpus_padding import noise

from bot.cli import main
from bot.core.match.windows import analyse_windows, windows

PANIC = (
    "thread 'main' panicked at /home/u/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/"
    "burn-autodiff-0.18.0/src/ops/module.rs:1498:9:\n"
    "Can't differentiate avg pool 2d backward.\n"
    "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n"
)
MESSAGE = "Can't differentiate avg pool 2d backward."


@pytest.mark.parametrize("seed", range(6))
def test_windows_cover_the_text_once_apart_from_their_overlaps(seed):
    rng = random.Random(seed)
    lines = ["é" * rng.randint(0, 30) + "x" * rng.randint(0, 300) for _ in range(400)]
    text = "\n".join(lines) + ("\n" if seed % 2 else "")
    parts = list(windows(io.BytesIO(text.encode()), window_bytes=2048, overlap_bytes=256))
    assert len(parts) > 10
    assert parts[-1][3] and not any(last for *_, last in parts[:-1])
    rebuilt = ""
    for offset, window, overlap, _last in parts:
        assert offset == len(rebuilt)
        assert text.startswith(window, offset)  # lines whole, no character cut
        assert window.endswith("\n") or _last
        rebuilt += window[: len(window) - overlap]
    assert rebuilt == text


def test_a_line_longer_than_a_window_is_cut_not_lost():
    text = "a" * 10_000 + "\n" + "b" * 10
    parts = list(windows(io.BytesIO(text.encode()), window_bytes=2048, overlap_bytes=256))
    assert "".join(w[: len(w) - o] for _, w, o, _ in parts) == text


@pytest.mark.parametrize("where", [0.0, 0.37, 0.5, 0.999])
def test_a_panic_anywhere_in_a_long_input_is_answered_as_in_the_whole_text(triage, where):
    filler = noise(300_000, 3)
    cut = filler.find("\n", int(len(filler) * where)) + 1
    text = filler[:cut] + PANIC + filler[cut:]
    whole = triage.analyse(text)
    windowed = analyse_windows(
        triage.analyse, io.BytesIO(text.encode()), window_bytes=32_768, overlap_bytes=4096
    )
    assert whole.verdict == windowed.verdict == "match"
    assert [m.best.record_id for m in windowed.answered] == [
        m.best.record_id for m in whole.answered
    ]
    panic = windowed.panics[0].panic
    assert panic.message == MESSAGE
    assert text[panic.start : panic.end].startswith("thread 'main' panicked at")
    assert (panic.start, panic.end) == (whole.panics[0].panic.start, whole.panics[0].panic.end)


def test_a_panic_across_a_window_boundary_is_read_whole(triage):
    head = "x" * 100 + "\n"
    for start in range(32_768 - 400, 32_768 + 50, 37):
        text = head * (start // len(head)) + PANIC + noise(40_000, 1)
        windowed = analyse_windows(
            triage.analyse, io.BytesIO(text.encode()), window_bytes=32_768, overlap_bytes=4096
        )
        assert windowed.verdict == "match", start
        assert windowed.panics[0].panic.message == MESSAGE


def test_without_a_header_the_first_window_that_answers_decides(triage):
    quoted = "I keep getting `Can't differentiate avg pool 2d backward.` when training\n"
    text = noise(100_000, 2) + quoted + noise(100_000, 5)
    windowed = analyse_windows(
        triage.analyse, io.BytesIO(text.encode()), window_bytes=32_768, overlap_bytes=4096
    )
    whole = triage.analyse(text)
    assert windowed.verdict == whole.verdict == "match"
    assert windowed.answered[0].best.record_id == whole.answered[0].best.record_id


def test_match_reads_a_panic_in_the_middle_of_a_20_mb_log(tmp_path, capsys):
    block = noise(1 << 20, 7)
    path = tmp_path / "big.log"
    path.write_text(block * 10 + PANIC + block * 10)
    assert path.stat().st_size > 20 << 20
    status = main(["match", "--json", str(path)])
    result = json.loads(capsys.readouterr().out)
    assert status == 0
    assert result["verdict"] == "match"
    assert result["matches"][0]["error_message"] == MESSAGE
