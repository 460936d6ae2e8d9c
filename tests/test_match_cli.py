"""`triage-bot match`: the JSON contract, inputs of every kind, exit status."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli import main

AVG_POOL = (
    "Training fails:\n```\n"
    "thread 'main' panicked at /home/u/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/"
    "burn-autodiff-0.18.0/src/ops/module.rs:1498:9:\n"
    "Can't differentiate avg pool 2d backward.\n"
    "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n```\n"
)
DTYPE = (
    "thread 'main' panicked at crates/burn-flex/src/ops/module.rs:241:25:\n"
    "deform_conv2d_backward: unsupported dtype I8\n"
)
USER_PANIC = (
    "thread 'main' panicked at src/main.rs:12:5:\n"
    "index out of bounds: the len is 3 but the index is 5\n"
)


def run_json(capsys, *args: str) -> tuple[int, list[dict]]:
    status = main(["match", "--json", *args])
    out = capsys.readouterr().out
    return status, [json.loads(line) for line in out.splitlines()]


def write(tmp_path: Path, name: str, content: str | bytes) -> str:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return str(path)


def test_json_contract_for_a_match(tmp_path, capsys):
    status, (result,) = run_json(capsys, write(tmp_path, "issue.md", AVG_POOL))
    assert status == 0
    assert result["input"].endswith("issue.md")
    assert result["verdict"] == "match"
    assert result["panics"] == [
        {
            "message": "Can't differentiate avg pool 2d backward.",
            "file": "crates/burn-autodiff/src/ops/module.rs",
            "line": 1498,
            "crate": "burn-autodiff",
            "crate_version": "0.18.0",
        }
    ]
    (match,) = result["matches"]
    assert match["id"] == "8d1d2fa6df3880bd"  # seed 002: its write-up wins over the bare site
    assert match["file_path"] == "crates/burn-autodiff/src/ops/module.rs"
    assert match["error_message"] == "Can't differentiate avg pool 2d backward."
    # burn 0.18.0 had this site at line 1333: the pasted 1498 is no `line` evidence (29.7).
    assert match["evidence"] == ["pattern", "location", "header"]
    assert 0.85 <= match["confidence"] <= 1.0
    assert result["refused"] == []


def test_placeholders_filled_in_match_the_format(tmp_path, capsys):
    _, (result,) = run_json(capsys, write(tmp_path, "a.txt", DTYPE))
    assert result["verdict"] == "match"
    assert result["matches"][0]["error_message"] == "deform_conv2d_backward: unsupported dtype {:?}"
    assert result["matches"][0]["id"] == "d59d5538758c7e08"  # seed 001


def test_uncatalogued_and_no_panic(tmp_path, capsys):
    paths = [
        write(tmp_path, "u.txt", USER_PANIC),
        write(tmp_path, "n.txt", "How do I save a model?"),
    ]
    status, results = run_json(capsys, *paths)
    assert status == 0
    assert [r["verdict"] for r in results] == ["uncatalogued-panic", "no-panic"]
    assert [r["matches"] for r in results] == [[], []]
    assert results[0]["panics"][0]["file"] == "src/main.rs"
    assert results[0]["panics"][0]["crate"] is None


def test_stdin_is_read_for_dash(monkeypatch, capsys):
    import io

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(DTYPE.encode())))
    _, (result,) = run_json(capsys, "-")
    assert result["input"] == "-"
    assert result["verdict"] == "match"


def test_unreadable_input_is_named_and_others_still_answered(tmp_path, capsys):
    good = write(tmp_path, "good.txt", DTYPE)
    status = main(["match", "--json", str(tmp_path / "missing.txt"), good])
    captured = capsys.readouterr()
    assert status == 1
    assert f"cannot read {tmp_path / 'missing.txt'}" in captured.err
    error, answer = (json.loads(line) for line in captured.out.splitlines())
    assert error["input"] == str(tmp_path / "missing.txt") and "error" in error  # issue 29
    assert answer["verdict"] == "match"


def test_invalid_catalog_is_named(tmp_path, capsys):
    broken = write(tmp_path, "broken.json", "{not json")
    status = main(["match", "--catalog", broken, write(tmp_path, "a.txt", DTYPE)])
    captured = capsys.readouterr()
    assert status == 2
    assert "the catalog is invalid" in captured.err
    assert f"{broken}:1: the file is not valid JSON" in captured.err


def test_custom_catalog_replaces_the_bundled_one(tmp_path, capsys):
    record = {
        "id": "mine",
        "repo": "o/r",
        "errorMessage": "index out of bounds: the len is {} but the index is {}",
    }
    catalog = write(tmp_path, "mine.json", json.dumps(record))
    _, (result,) = run_json(capsys, "--catalog", catalog, write(tmp_path, "u.txt", USER_PANIC))
    # The message matches, but the panic was raised in the user's own file: no answer.
    assert result["verdict"] == "uncatalogued-panic"


def test_binary_and_invalid_utf8_inputs_get_an_answer(tmp_path, capsys):
    binary = write(tmp_path, "core.bin", bytes(range(256)) * 4000)
    broken = write(tmp_path, "latin1.txt", DTYPE.encode() + b"\xff\xfe caf\xe9\n")
    status, results = run_json(capsys, binary, broken)
    assert status == 0
    assert [r["verdict"] for r in results] == ["no-panic", "match"]


def test_a_50_mb_log_is_answered(tmp_path, capsys):
    line = "2025-01-01T00:00:00Z  INFO burn_train::learner: epoch 1 step 12 loss 0.4312\n"
    path = tmp_path / "big.log"
    with path.open("w") as out:
        out.write(line * (50 * 1024 * 1024 // len(line)))
        out.write(AVG_POOL)
    status, (result,) = run_json(capsys, str(path))
    assert status == 0
    assert result["verdict"] == "match"


@pytest.mark.parametrize("module", [["-m", "bot"]])
def test_console_entry_runs_as_a_process(tmp_path, module):
    issue = write(tmp_path, "issue.md", AVG_POOL)
    done = subprocess.run(
        [sys.executable, *module, "match", "--json", issue],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["verdict"] == "match"
