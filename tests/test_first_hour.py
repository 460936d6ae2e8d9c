"""A newcomer's first hour on their own project (issue 29), through the installed CLI.

Each test runs `triage-bot` as a process on real files in tmp_path, with no bot setting
inherited from the environment and no `.env` (cwd is tmp_path).
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from cli_process import console, env_for, read_terminal, run_cli

from bot.cli import build_parser, subcommands
from bot.store.sqlite import Store

ROOT = Path(__file__).resolve().parent.parent
CRATE = ROOT / "tests" / "fixtures" / "first_hour_crate"
EXAMPLE = ROOT / "examples" / "issue.md"
REPO = "my-org/ringbuf-lite"
COMMIT = "4805ca7d1e2f"
ESC = "\x1b["
# A user of the library's paste: the crate's file in cargo's registry, line 17 (`push`).
PASTE = (ROOT / "tests" / "fixtures" / "first_hour_paste.md").read_text()


cli = run_cli


def no_traceback(done: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in done.stderr, done.stderr


@pytest.fixture(scope="module")
def scanned(tmp_path_factory) -> Path:
    """`catalog scan --out` of the fixture crate: the folder the README's walkthrough makes."""
    out = tmp_path_factory.mktemp("walk") / "scan"
    done = subprocess.run(
        console(
            "catalog", "scan", str(CRATE), "--repo", REPO, "--commit", COMMIT, "--out", str(out)
        ),
        capture_output=True,
        text=True,
        timeout=120,
        env=env_for(out.parent),
    )
    assert done.returncode == 0, done.stderr
    assert "scan: 3 sites" in done.stderr
    return out


# -- the walkthrough "Your own catalog, from your sources", end to end ----------------------------


def test_walkthrough_on_a_single_crate_project(tmp_path, scanned):
    (tmp_path / "issue-1.md").write_text(PASTE)
    # 4. validate and lint
    assert cli(tmp_path, "catalog", "validate", str(scanned)).returncode == 0
    lint = cli(tmp_path, "catalog", "lint", "--json", str(scanned))
    assert lint.returncode == 0, lint.stderr
    assert json.loads(lint.stdout)["records"] == 3
    # 5. point the bot at it: doctor reads TRIAGE_CATALOG
    doctor = cli(tmp_path, "doctor", "--offline", "--json", TRIAGE_CATALOG=str(scanned))
    catalog_check = next(c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "catalog")
    assert catalog_check["status"] == "ok"
    assert "3 records" in catalog_check["summary"]
    # 6. check with real texts: TRIAGE_CATALOG alone, as step 5 set it
    done = cli(tmp_path, "match", "--json", "issue-1.md", TRIAGE_CATALOG=str(scanned))
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["verdict"] == "match"
    assert [m["repo"] for m in found["matches"]] == [REPO]
    assert found["matches"][0]["error_message"] == "ring is full: cannot push beyond {} slots"
    text = cli(tmp_path, "match", "issue-1.md", TRIAGE_CATALOG=str(scanned))
    assert text.stdout.startswith("ring is full: cannot push beyond 8 slots\n")
    # and `catalog update` with the same folder as --scan (issue 29, point 3)
    update = cli(tmp_path, "catalog", "update", "--catalog", str(scanned), "--scan", str(scanned))
    no_traceback(update)
    assert update.returncode == 0, update.stderr
    assert "unchanged 3" in update.stderr


# -- 1. TRIAGE_CATALOG ---------------------------------------------------------------------------


def test_match_honours_triage_catalog_and_catalog_replaces_it(tmp_path, scanned):
    (tmp_path / "issue-1.md").write_text(PASTE)
    own = cli(tmp_path, "match", "--json", str(EXAMPLE), TRIAGE_CATALOG=str(scanned))
    assert json.loads(own.stdout)["verdict"] != "match"  # burn's panic is not in my catalog
    bundled = cli(tmp_path, "match", "--json", str(EXAMPLE))
    assert json.loads(bundled.stdout)["verdict"] == "match"
    # --catalog replaces TRIAGE_CATALOG (here: a bad one, not even read)
    replaced = cli(
        tmp_path,
        "match",
        "--json",
        "--catalog",
        str(scanned),
        "issue-1.md",
        TRIAGE_CATALOG=str(tmp_path / "nowhere"),
    )
    assert replaced.returncode == 0, replaced.stderr
    assert json.loads(replaced.stdout)["verdict"] == "match"
    # comma-separated: both catalogs answer
    both = cli(
        tmp_path,
        "match",
        "--json",
        "issue-1.md",
        TRIAGE_CATALOG=f"{scanned},{ROOT / 'catalog'}",
    )
    assert json.loads(both.stdout)["matches"][0]["repo"] == REPO


def test_match_from_dot_env(tmp_path, scanned):
    (tmp_path / "issue-1.md").write_text(PASTE)
    (tmp_path / ".env").write_text(f"TRIAGE_CATALOG={scanned}\n")
    done = cli(tmp_path, "match", "--json", "issue-1.md")
    assert json.loads(done.stdout)["matches"][0]["repo"] == REPO


def test_a_missing_triage_catalog_is_an_error_naming_it(tmp_path):
    missing = tmp_path / "nonexistent"
    done = cli(tmp_path, "match", str(EXAMPLE), TRIAGE_CATALOG=str(missing))
    assert done.returncode == 2
    assert done.stdout == ""  # not the bundled catalog's answer
    assert f"TRIAGE_CATALOG: {missing} does not exist" in done.stderr
    no_traceback(done)
    flag = cli(tmp_path, "match", "--catalog", str(missing), str(EXAMPLE))
    assert flag.returncode == 2 and flag.stdout == ""
    assert str(missing) in flag.stderr


# -- 3. catalog update --scan DIR ------------------------------------------------------------------


def test_update_scan_folder_with_none_or_several_scans(tmp_path, scanned):
    empty = tmp_path / "empty"
    empty.mkdir()
    none = cli(tmp_path, "catalog", "update", "--catalog", str(scanned), "--scan", str(empty))
    assert none.returncode == 2
    assert "no scan-<commit>.jsonl here" in none.stderr
    two = tmp_path / "two"
    shutil.copytree(scanned, two)
    (two / "scan-0000000.jsonl").write_text((scanned / f"scan-{COMMIT}.jsonl").read_text())
    several = cli(tmp_path, "catalog", "update", "--catalog", str(scanned), "--scan", str(two))
    assert several.returncode == 2
    assert "holds 2 scans" in several.stderr
    no_traceback(none)
    no_traceback(several)


# -- 4. GitHub unreachable ---------------------------------------------------------------------


def closed_port() -> int:
    """A local port nothing listens on: connecting is refused, as to a GitHub that is down."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize(
    "argv", [("backfill", "--repo", "o/r"), ("poll", "--once", "--repo", "o/r")]
)
def test_github_unreachable_is_one_line(tmp_path, argv):
    done = cli(
        tmp_path,
        *argv,
        GITHUB_TOKEN="ghp_" + "a" * 36,
        GITHUB_API_URL=f"http://127.0.0.1:{closed_port()}",
    )
    assert done.returncode == 1
    no_traceback(done)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("triage-bot: ") and "ConnectionError" in lines[0]


# -- 5. an empty catalog -----------------------------------------------------------------------


def test_an_empty_catalog_is_refused_by_match_and_failed_by_doctor(tmp_path):
    empty = tmp_path / "emptydir"
    empty.mkdir()
    validate = cli(tmp_path, "catalog", "validate", str(empty))
    assert validate.returncode == 1
    done = cli(tmp_path, "match", "--catalog", str(empty), str(EXAMPLE))
    assert done.returncode == 2
    assert done.stdout == ""
    assert f"no records in {empty}" in done.stderr
    env_done = cli(tmp_path, "match", str(EXAMPLE), TRIAGE_CATALOG=str(empty))
    assert env_done.returncode == 2
    doctor = cli(tmp_path, "doctor", "--offline", TRIAGE_CATALOG=str(empty))
    assert doctor.returncode == 1
    assert f"FAIL  catalog: TRIAGE_CATALOG {empty}: no records" in doctor.stdout


# -- 8. colour -------------------------------------------------------------------------------


def on_a_terminal(tmp_path: Path, argv: list[str], stdin: str = "", **env: str) -> tuple[str, str]:
    """Run with stdout and stdin on a pseudo-terminal (stderr a pipe): (stdout, stderr)."""
    main, child = pty.openpty()
    process = subprocess.Popen(
        console(*argv),
        cwd=tmp_path,
        env=env_for(tmp_path, **env),
        stdin=child,
        stdout=child,
        stderr=subprocess.PIPE,
    )
    os.close(child)
    if stdin:
        os.write(main, stdin.encode() + b"\n\x04")  # one Ctrl-D, as a person ends a paste
    out = read_terminal(main, process, 20)
    process.wait(timeout=10)
    os.close(main)
    assert process.stderr is not None
    return out.decode("utf-8", "replace"), process.stderr.read().decode()


def test_no_color_and_term_dumb_switch_off_escapes(tmp_path):
    plain = {"TERM": "xterm-256color"}
    coloured, _ = on_a_terminal(tmp_path, ["match", str(EXAMPLE)], **plain)
    assert ESC in coloured  # the control: on a terminal, colours are on
    for env in ({"NO_COLOR": "1", **plain}, {"TERM": "dumb"}):
        out, _ = on_a_terminal(tmp_path, ["match", str(EXAMPLE)], **env)
        assert "Node should have a step registered" in out
        assert ESC not in out, env
    forced, _ = on_a_terminal(tmp_path, ["match", "--color", "always", str(EXAMPLE)], TERM="dumb")
    assert ESC in forced  # the flag wins over the environment
    piped = cli(tmp_path, "match", "--color", "always", str(EXAMPLE))
    assert ESC in piped.stdout
    assert ESC not in cli(tmp_path, "match", str(EXAMPLE)).stdout


def test_every_command_that_colours_has_color():
    """Escapes are written only by bot.render.terminal (bot.core.extract strips pasted ones),
    and only `match` prints through it: so `match` is the command that needs --color. A new
    colouring module or caller fails here until its command gets --color too."""
    writers = {
        str(path.relative_to(ROOT))
        for path in (ROOT / "bot").rglob("*.py")
        if "\\x1b[" in path.read_text(encoding="utf-8")
    }
    assert writers == {"bot/render/terminal.py", "bot/core/extract/clean.py"}
    callers = {
        str(path.relative_to(ROOT))
        for path in (ROOT / "bot").rglob("*.py")
        if "bot.render.terminal import" in path.read_text(encoding="utf-8")
    }
    assert callers == {"bot/cli/match.py"}
    commands = subcommands(build_parser())
    assert "--color" in commands["match"]._option_string_actions


# -- 14. conventions ---------------------------------------------------------------------------


def test_fail_on_match_has_a_status_of_its_own(tmp_path, scanned):
    (tmp_path / "plain.md").write_text("It just does not compile, no panic here.\n")
    found = cli(tmp_path, "match", "--fail-on-match", str(EXAMPLE))
    assert found.returncode == 3
    assert "Node should have a step registered" in found.stdout
    assert cli(tmp_path, "match", "--fail-on-match", "plain.md").returncode == 0
    assert cli(tmp_path, "match", str(EXAMPLE)).returncode == 0  # opt-in
    # an unreadable input still says 1: the gate did not see everything
    both = cli(tmp_path, "match", "--fail-on-match", str(EXAMPLE), "missing.md")
    assert both.returncode == 1


def test_match_on_a_terminal_says_it_reads_stdin(tmp_path):
    out, err = on_a_terminal(tmp_path, ["match"], stdin="no panic in here", TERM="dumb")
    assert "reading the paste from stdin" in err
    assert "No panic" in out or "no panic" in out.lower()
    piped = cli(tmp_path, "match", stdin="no panic in here")
    assert "reading the paste" not in piped.stderr


def test_match_json_reports_an_unreadable_input_as_an_object(tmp_path):
    (tmp_path / "issue.md").write_text(EXAMPLE.read_text())
    done = cli(tmp_path, "match", "--json", "missing.md", "issue.md")
    assert done.returncode == 1
    first, second = (json.loads(line) for line in done.stdout.splitlines())
    assert first == {
        "input": "missing.md",
        "error": "cannot read missing.md: No such file or directory",
    }
    assert second["verdict"] == "match"
    assert "cannot read missing.md" in done.stderr


def test_every_option_has_help():
    empty: list[str] = []

    def walk(parser: argparse.ArgumentParser) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                continue
            if not (action.help or "").strip() and action.help != argparse.SUPPRESS:
                empty.append(f"{parser.prog} {'/'.join(action.option_strings) or action.dest}")
        for child in subcommands(parser).values():
            walk(child)

    walk(build_parser())
    assert not empty, f"options without help: {empty}"


def test_json_on_doctor_stats_jobs_and_lint(tmp_path, scanned):
    doctor = cli(tmp_path, "doctor", "--offline", "--json", TRIAGE_CATALOG=str(scanned))
    report = json.loads(doctor.stdout)  # the whole stdout is one object
    # a catalog-only setup passes: fine for `match`, and `serve` would serve the pages alone
    assert doctor.returncode == 0 and report["ok"] is True, doctor.stdout
    settings = next(c for c in report["checks"] if c["name"] == "settings")
    assert any("fine for `match`" in d for d in settings["details"]), settings
    assert [c["name"] for c in report["checks"]] == [
        "settings",
        "config",
        "catalog",
        "catalog-source",  # issue 26's refresh: skipped here, none configured
        "store",
        "github",
        "discord",
    ]
    assert {c["status"] for c in report["checks"]} <= {"ok", "warn", "FAIL", "skip"}

    assert json.loads(cli(tmp_path, "stats", "--json").stdout)["exists"] is False
    assert json.loads(cli(tmp_path, "jobs", "list", "--json").stdout) == {
        "store": str(tmp_path / "store.sqlite3"),
        "exists": False,
        "jobs": [],
    }
    with Store(tmp_path / "store.sqlite3") as store:
        store.enqueue({"repo": "o/r", "number": 7})
    jobs = json.loads(cli(tmp_path, "jobs", "list", "--json").stdout)
    assert jobs["exists"] is True
    assert [(j["repo"], j["number"], j["state"]) for j in jobs["jobs"]] == [("o/r", 7, "queued")]
    stats = json.loads(cli(tmp_path, "stats", "--json").stdout)
    assert stats["exists"] is True and stats["stats"]["answered_subjects"] == 0

    lint = cli(tmp_path, "catalog", "lint", "--json", "--all", str(scanned))
    findings = json.loads(lint.stdout)
    assert findings["records"] == 3
    assert all(
        {"record_id", "file", "code", "level", "message"} <= set(f) for f in findings["findings"]
    )


def test_jobs_list_and_retry_all_agree_on_a_missing_store(tmp_path):
    db = tmp_path / "store.sqlite3"
    missing = (cli(tmp_path, "jobs", "list"), cli(tmp_path, "jobs", "retry", "--all"))
    assert not db.exists()  # reading makes no store
    Store(db).close()
    empty = (cli(tmp_path, "jobs", "list"), cli(tmp_path, "jobs", "retry", "--all"))
    # a missing store means what an empty one means, to both commands
    assert [d.returncode for d in missing] == [d.returncode for d in empty] == [0, 1]
    assert missing[0].stdout.startswith("no jobs (no store yet at")
    assert empty[0].stdout == "no jobs\n"
    # a failure goes to stderr, as every command's (issue 48)
    assert missing[1].stderr.startswith("triage-bot: no dead-lettered job to replay (no store")
    assert empty[1].stderr == "triage-bot: no dead-lettered job to replay\n"
    assert missing[1].stdout == empty[1].stdout == ""


def test_verbose_and_quiet_set_the_log_level(tmp_path, scanned):
    def level(*flags: str) -> str:
        done = cli(tmp_path, *flags, "doctor", "--offline", "--json", TRIAGE_CATALOG=str(scanned))
        settings = json.loads(done.stdout)["checks"][0]["details"]
        return next(line for line in settings if line.startswith("LOG_LEVEL="))

    assert level() == "LOG_LEVEL=INFO"
    assert level("-v") == "LOG_LEVEL=DEBUG"
    assert level("-q") == "LOG_LEVEL=ERROR"
    both = cli(tmp_path, "-v", "-q", "doctor")
    assert both.returncode == 2 and "not allowed with" in both.stderr


# -- 15. no paths of the machine the project was built on ----------------------------------------

MACHINE_PATHS = ("/work/", "/tmp/", "/home/")


def test_no_machine_paths_in_the_code():
    """bot/ names no folder of a build machine; a `/home/...` in a comment is a pasted path
    (what users' panics print), so only /work/ and /tmp/ are refused there."""
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted((ROOT / "bot").rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if any(prefix in line for prefix in MACHINE_PATHS[:2])
    ]
    assert not found, found


def test_no_machine_path_as_a_test_default():
    default = re.compile(r"environ\.get\(\s*[\"'](\w+)[\"']\s*,\s*[^)]*[\"'](/[^\"']*)")
    found = [
        f"{path.name}: {match.group(1)} defaults to {match.group(2)}"
        for path in sorted((ROOT / "tests").glob("*.py"))
        for match in default.finditer(path.read_text(encoding="utf-8"))
        if match.group(1) != "PATH" and match.group(2).startswith(MACHINE_PATHS)
    ]
    assert not found, found


def test_burn_history_comes_from_the_setting_alone(tmp_path):
    probe = "import burn_repo; print(burn_repo.BURN_REPO); print(burn_repo.SKIP_REASON)"
    env = {k: v for k, v in os.environ.items() if k != "TRIAGE_TEST_BURN_REPO"}
    env["PYTHONPATH"] = str(ROOT / "tests")
    unset = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60
    )
    assert unset.stdout.splitlines()[0] == "None"
    assert "TRIAGE_TEST_BURN_REPO is not set" in unset.stdout
    env["TRIAGE_TEST_BURN_REPO"] = str(tmp_path / "burn")
    set_ = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60
    )
    assert set_.stdout.splitlines()[0] == str(tmp_path / "burn")
    assert f"not at {tmp_path / 'burn'}" in set_.stdout


# -- 10/11/12. what the README and the Docker build promise ---------------------------------------


def test_root_dockerignore_is_the_dockerfiles():
    """The legacy builder reads only the context's root .dockerignore (BuildKit the one beside
    the Dockerfile): both must keep .venv and .env out."""
    root = (ROOT / ".dockerignore").read_text().splitlines()
    assert root == (ROOT / "deploy" / "Dockerfile.dockerignore").read_text().splitlines()
    assert root[1:2] == ["*"]  # everything out, then what the build needs back in


def test_readme_action_snippet_has_the_example_workflows_concurrency():
    import yaml

    readme = (ROOT / "docs" / "deploy.md").read_text()
    section = readme.split("### The Action\n", 1)[1]
    snippet = yaml.safe_load(section.split("```yaml\n", 1)[1].split("```", 1)[0])
    example = yaml.safe_load((ROOT / "deploy/github-action/example-workflow.yml").read_text())
    assert snippet["concurrency"] == example["concurrency"]
    assert example["concurrency"]["group"] == "panic-triage-${{ github.event.issue.number }}"


def test_readme_names_the_test_prerequisites():
    readme = (ROOT / "CONTRIBUTING.md").read_text()
    section = readme.split("## Test prerequisites\n", 1)[1].split("\n## ", 1)[0]
    for needed in (
        "127.0.0.1:5432",
        "`test`",
        "TRIAGE_TEST_POSTGRES",
        "TRIAGE_TEST_BURN_REPO",
        "Chromium",
    ):
        assert needed in section, needed


# -- 2. catalog history on a single-crate repository ---------------------------------------------

BUILD_RS = """fn main() {
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR for build scripts");
    println!("cargo:rerun-if-changed=build.rs {out}");
}
"""
BIN_RS = """fn main() {
    let size: usize = std::env::args().nth(1).expect("usage: ringctl SIZE").parse().unwrap();
    if size > 1024 {
        panic!("ringctl: size {} is too large", size);
    }
}
"""


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done.stdout.strip()


def _sites(path: Path) -> set[tuple[str, int, str]]:
    rows = (json.loads(line) for line in path.read_text().splitlines() if line.strip())
    return {(r["filePath"], r["lineNumber"], r["errorMessage"]) for r in rows}


def test_history_of_a_single_crate_repo_finds_what_scan_finds(tmp_path):
    """A root `src/` (and a root build.rs, and src/bin/) over two tags: each release's sites
    are the ones `catalog scan` finds in that release's checkout."""
    repo = tmp_path / "ringbuf-lite"
    shutil.copytree(CRATE, repo)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "first release")
    _git(repo, "tag", "v0.1.0")
    lib = repo / "src" / "lib.rs"
    lib.write_text(lib.read_text().replace("ring is full", "ring buffer is full"))
    (repo / "build.rs").write_text(BUILD_RS)
    (repo / "src" / "bin").mkdir()
    (repo / "src" / "bin" / "ringctl.rs").write_text(BIN_RS)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "second release")
    _git(repo, "tag", "v0.2.0")
    head = _git(repo, "rev-parse", "HEAD")

    history = cli(tmp_path, "catalog", "history", str(repo), "--repo", REPO, "--out", "hist")
    assert history.returncode == 0, history.stderr
    assert "0.1.0 (" in history.stderr and ": 3 sites" in history.stderr
    assert "0.2.0 (" in history.stderr and ": 6 sites" in history.stderr
    assert "[1/2 releases, about " in history.stderr and "[2/2 releases]" in history.stderr
    scan = cli(
        tmp_path, "catalog", "scan", str(repo), "--repo", REPO, "--commit", head, "--out", "scan"
    )
    assert scan.returncode == 0, scan.stderr
    scanned = _sites(tmp_path / "scan" / f"scan-{head[:12]}.jsonl")
    assert len(scanned) == 6
    assert _sites(tmp_path / "hist" / "panic_sites.jsonl") == scanned
    header = json.loads((tmp_path / "hist" / "history.ndjson").read_text().splitlines()[0])
    assert [r["version"] for r in header["releases"]] == ["0.1.0", "0.2.0"]
