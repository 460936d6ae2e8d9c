"""Wrong inputs answered in one line with exit status 2, never a traceback (issue 48): a port out
of range or in use, an `--out` that is a file, a score out of range; and no Python repr in
what `serve` logs."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

from cli_process import run_cli


def _one_line(done: subprocess.CompletedProcess[str], says: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and says in done.stderr, done.stderr


def test_a_port_out_of_range_is_refused_by_the_parser(tmp_path: Path) -> None:
    done = run_cli(tmp_path, "serve", "--port", "99999")
    _one_line(done, "argument --port: 99999 is not a port (0-65535)")
    assert "serving on" not in done.stderr


def test_a_port_in_use_is_one_line_and_serve_says_what_it_runs(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run_cli(tmp_path, "serve", "--port", str(port))
    _one_line(done, "address already in use")
    assert "Settings(" not in done.stderr and "GitHub off, Discord off" in done.stderr


def test_an_out_that_is_a_file_is_refused_before_any_work(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "lib.rs").write_text('pub fn f() { panic!("the widget is gone"); }\n')
    for argv in (
        ("catalog", "scan", "src", "--repo", "o/r", "--commit", "0123456", "--out", "taken"),
        ("catalog", "history", "src", "--repo", "o/r", "--out", "taken"),
    ):
        done = run_cli(tmp_path, *argv)
        _one_line(done, "--out taken: a file is there, not a folder")
    assert (tmp_path / "taken").read_text() == "a file"


def test_a_cutoff_outside_0_to_100_is_refused(tmp_path: Path) -> None:
    done = run_cli(
        tmp_path, "catalog", "update", "--catalog", "x", "--scan", "y", "--cutoff", "500"
    )
    _one_line(done, "argument --cutoff: 500 is not a score (0-100)")


def test_a_git_failure_is_one_line_whatever_git_printed() -> None:
    import subprocess as sp

    from bot.cli.scan import git_failure

    as_text = sp.CalledProcessError(128, ["git", "-C", "x", "ls-tree"], stderr="fatal: bad tree\n")
    as_bytes = sp.CalledProcessError(128, ["git", "show"], stderr=b"warning: x\nfatal: gone\n")
    silent = sp.CalledProcessError(1, ["git", "cat-file", "--batch"], stderr=None)
    assert git_failure(as_text) == "fatal: bad tree"
    assert git_failure(as_bytes) == "fatal: gone"
    assert git_failure(silent) == "`git cat-file --batch` exited with status 1"


def test_a_binary_file_given_to_scan_is_refused(tmp_path: Path) -> None:
    (tmp_path / "blob.rs").write_bytes(b"\x7fELF\x00\x01\xff\xfe" * 64)
    done = run_cli(tmp_path, "catalog", "scan", "blob.rs", "--repo", "o/r", "--commit", "0123456")
    _one_line(done, "blob.rs: not Rust source text (a binary file, or not UTF-8)")
    assert done.stdout == ""


def test_a_log_level_that_is_no_level_stops_any_command(tmp_path: Path) -> None:
    (tmp_path / "paste.md").write_text("no panic here\n")
    done = run_cli(tmp_path, "match", "paste.md", LOG_LEVEL="LOUD")
    _one_line(done, "configuration error: LOG_LEVEL: 'LOUD' is not one of DEBUG, INFO")
    assert run_cli(tmp_path, "match", "paste.md", LOG_LEVEL="debug").returncode == 0


def test_every_out_that_cannot_be_written_is_one_line_and_leaves_nothing(tmp_path: Path) -> None:
    """`catalog update --out`, `catalog refresh --catalog`, `stats --html` and `catalog draft
    --out`: refused in one line with exit 2 before any work, nothing created."""
    (tmp_path / "taken").write_text("a file")
    (tmp_path / "folder").mkdir()
    cat = tmp_path / "cat.jsonl"
    cat.write_text(
        '{"id": "a1", "repo": "o/r", "errorMessage": "the widget is gone", "errorType": "panic",'
        ' "filePath": "src/lib.rs", "lineNumber": 1}\n'
    )
    done = run_cli(
        tmp_path, "catalog", "update", "--catalog", str(cat), "--scan", str(cat), "--out", "taken"
    )
    _one_line(done, "--out taken: a file is there, not a folder")
    done = run_cli(tmp_path, "catalog", "refresh", "--catalog", "taken", "--source", "src")
    _one_line(done, "taken: a file is there, not a catalog folder")
    done = run_cli(tmp_path, "catalog", "refresh", "--catalog", "new", "--source", "nowhere")
    _one_line(done, "nowhere: not a git repository")
    assert not (tmp_path / "new").exists()  # no folder, no .refresh.lock left behind
    done = run_cli(tmp_path, "stats", "--html", "folder")
    _one_line(done, "--html folder: a folder is there, not a file")
    done = run_cli(tmp_path, "stats", "--html", "missing/stats.html")
    _one_line(done, "--html missing/stats.html: no folder missing")
    done = run_cli(tmp_path, "catalog", "draft", "g1", "--out", "folder")
    _one_line(done, "--out folder: a folder is there, not a file")
    assert (tmp_path / "taken").read_text() == "a file"
