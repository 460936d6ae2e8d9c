"""Issue 29, point 14 (rest): long work shows a count and an ETA on a terminal and nothing of
the kind otherwise (`catalog refresh`, `backfill`; `catalog history` in tests/test_first_hour.py),
and -v/-q are accepted after the command too. Each run is `triage-bot` as a process, with
stderr on a pseudo-terminal or a pipe."""

from __future__ import annotations

import json
import os
import pty
import subprocess
from pathlib import Path

import pytest
from cli_process import console, env_for, read_terminal, run_cli
from git_project import Project, src
from harness import fake_github

from bot.cli import build_parser, subcommands
from bot.github.backfill import cursor_name
from bot.store.sqlite import Store

REPO = "my-org/widgets"
AVG = (
    "thread 'main' panicked at /home/u/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/"
    "burn-autodiff-0.18.0/src/ops/module.rs:1498:9:\nCan't differentiate avg pool 2d backward.\n"
)


piped = run_cli


def on_a_terminal(tmp_path: Path, *argv: str, **env: str) -> tuple[int, str]:
    """Run with stdout and stderr on one pseudo-terminal: (status, what the terminal got)."""
    main, child = pty.openpty()
    process = subprocess.Popen(
        console(*argv),
        cwd=tmp_path,
        env=env_for(tmp_path, **env),
        stdin=subprocess.DEVNULL,
        stdout=child,
        stderr=child,
    )
    os.close(child)
    out = read_terminal(main, process, 60)
    status = process.wait(timeout=10)
    os.close(main)
    return status, out.decode("utf-8", "replace")


# -- catalog refresh ----------------------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> Project:
    project = Project(tmp_path / "p")
    project.commit("Add alpha (#1)", {"src/lib.rs": src("alpha went wrong")}, tag="v0.1.0")
    project.commit("Add beta (#2)", {"src/io.rs": src("beta went wrong")}, tag="v0.2.0")
    project.commit("Add gamma (#3)", {"src/net.rs": src("gamma went wrong")})
    project.push()
    return project


def test_refresh_counts_releases_with_an_eta_on_a_terminal(project, tmp_path):
    argv = ["catalog", "refresh", "--source", str(project.mirror), "--repo", REPO, "--no-fetch"]
    status, seen = on_a_terminal(tmp_path, *argv, "--catalog", str(tmp_path / "tty"))
    assert status == 0, seen
    # two tags and HEAD: a full build of three columns, counted as they are built
    assert "refresh: 1/3 releases, about " in seen and " left" in seen
    assert "refresh: 3/3 releases" in seen
    # a step drawn late (at most five a second) still shows under the next log line
    assert "refresh: 2/3 releases" in seen
    assert "\r" in seen  # rewritten in place
    assert "full build (no catalog yet)" in seen
    assert "full build" in seen and "refresh: 0.2.0 (" in seen  # the log lines stay
    done = piped(tmp_path, *argv, "--catalog", str(tmp_path / "pipe"))
    assert done.returncode == 0, done.stderr
    assert "full build" in done.stderr and "refresh: 0.2.0 (" in done.stderr
    assert "releases, about" not in done.stderr and "/3 releases" not in done.stderr
    assert "\r" not in done.stderr
    # both built the same catalog
    tty_sites = (tmp_path / "tty" / "panic_sites.jsonl").read_text()
    assert tty_sites == (tmp_path / "pipe" / "panic_sites.jsonl").read_text()
    assert tty_sites.count("\n") == 3


def test_an_incremental_refresh_counts_the_new_columns(project, tmp_path):
    catalog = tmp_path / "catalog"
    argv = ["catalog", "refresh", "--catalog", str(catalog), "--source", str(project.mirror)]
    assert piped(tmp_path, *argv, "--repo", REPO, "--no-fetch").returncode == 0
    project.commit("Add delta (#4)", {"src/db.rs": src("delta went wrong")}, tag="v0.3.0")
    project.commit("Add epsilon (#5)", {"src/ui.rs": src("epsilon went wrong")})
    project.push()
    status, seen = on_a_terminal(tmp_path, *argv)
    assert status == 0, seen
    assert "refresh: 1/2 releases, about " in seen  # v0.3.0, then HEAD
    assert "refresh: 2/2 releases" in seen
    assert "mode=incremental" in seen or "incremental" in seen


# -- backfill -----------------------------------------------------------------------------------


@pytest.fixture
def busy_fake():
    """250 issues: three pages of GitHub's 100, so the count and its ETA move."""
    with fake_github("ghp_progress", "maintainer", REPO) as gh:
        for n in range(250):
            gh.add_issue(REPO, f"issue {n}", AVG if n % 10 == 0 else "How do I save a model?")
        yield gh


def test_backfill_counts_issues_against_the_total_on_a_terminal(busy_fake, tmp_path):
    env = {"GITHUB_TOKEN": "ghp_progress", "GITHUB_API_URL": busy_fake.base_url}
    status, seen = on_a_terminal(tmp_path, "backfill", "--repo", REPO, **env)
    assert status == 0, seen
    assert "backfill: 100/250 issues and pull requests listed, about " in seen
    assert "backfill: 250/250 issues and pull requests listed" in seen
    assert "page 3: 250 issue(s) read, 25 hit catalogued records" in seen
    assert f"backfilled {REPO}: 250 issue(s) read, 25 hit catalogued records" in seen
    asked = [c.query.get("per_page") for c in busy_fake.calls("GET", r"/issues$")]
    assert asked.count("1") == 1  # the total: one request of one item a page


def test_backfill_is_quiet_about_progress_when_piped(busy_fake, tmp_path):
    env = {"GITHUB_TOKEN": "ghp_progress", "GITHUB_API_URL": busy_fake.base_url}
    done = piped(tmp_path, "backfill", "--repo", REPO, **env)
    assert done.returncode == 0, done.stderr
    assert "page 3: 250 issue(s) read" in done.stderr
    assert "listed" not in done.stderr and "\r" not in done.stderr
    asked = [c.query.get("per_page") for c in busy_fake.calls("GET", r"/issues$")]
    assert "1" not in asked  # no request for a total nobody sees


def test_a_resumed_backfill_counts_what_is_left(busy_fake, tmp_path):
    # an earlier run stopped after two pages (as tests/test_backfill.py interrupts one)
    store = Store(tmp_path / "store.sqlite3")
    store.set_cursor(cursor_name(REPO), json.dumps({"page": 2, "since": None, "done": False}))
    store.close()
    env = {"GITHUB_TOKEN": "ghp_progress", "GITHUB_API_URL": busy_fake.base_url}
    status, seen = on_a_terminal(tmp_path, "backfill", "--repo", REPO, **env)
    assert status == 0, seen
    assert "resuming my-org/widgets at page 3" in seen
    assert "backfill: 50/50 issues and pull requests listed" in seen  # the third page's 50
    assert f"backfilled {REPO}: 50 issue(s) read, 5 hit catalogued records" in seen


# -- -v/-q after the command --------------------------------------------------------------------


def leaf_commands(parser, prefix=()) -> dict[tuple[str, ...], object]:
    found = {}
    for name, child in subcommands(parser).items():
        inner = leaf_commands(child, (*prefix, name))
        found.update(inner or {(*prefix, name): child})
    return found


def test_every_command_takes_v_and_q_after_its_name():
    leaves = leaf_commands(build_parser())
    assert ("poll",) in leaves and ("catalog", "refresh") in leaves and len(leaves) > 15
    for name, parser in leaves.items():
        options = parser._option_string_actions  # type: ignore[attr-defined]
        assert {"-v", "--verbose", "-q", "--quiet"} <= set(options), name


def test_v_after_the_command_sets_the_log_level(tmp_path):
    def level(*argv: str) -> str:
        done = piped(tmp_path, *argv)  # its status says whether the setup is ready; not asked here
        settings = json.loads(done.stdout)["checks"][0]["details"]
        return next(line for line in settings if line.startswith("LOG_LEVEL="))

    assert level("doctor", "--offline", "--json") == "LOG_LEVEL=INFO"
    assert level("doctor", "--offline", "--json", "-v") == "LOG_LEVEL=DEBUG"
    assert level("doctor", "-q", "--offline", "--json") == "LOG_LEVEL=ERROR"
    # before the command, and not undone by the command's own (unset) option
    assert level("-v", "doctor", "--offline", "--json") == "LOG_LEVEL=DEBUG"
    both = piped(tmp_path, "-v", "doctor", "-q", "--offline")
    assert both.returncode == 2 and "not allowed with" in both.stderr
    assert "Traceback" not in both.stderr
    poll = piped(tmp_path, "poll", "-v", "--help")
    assert poll.returncode == 0 and "-v, --verbose" in poll.stdout
