"""`catalog explain` and `catalog review` (issue 49) on a crate of our own with two tagged
releases, against a fake chat-completions server on 127.0.0.1 driven by the real `openai`
client: drafts are checked and kept, bad ones refused with their reasons, nothing answers until
a person accepts it, a rerun asks nothing twice, an interrupted run resumes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_process import run_cli
from fakes.chat_api import FakeChat, Reply
from git_project import git

LIB = """pub fn set_width(w: usize) {
    if w > 100 {
        panic!("width {} is larger than the frame allows", w);
    }
}

pub fn load_config(path: &str) -> String {
    std::fs::read_to_string(path).expect("the config file could not be read")
}

pub fn resize_frame() {
    unimplemented!("resize_frame is not supported for frames yet");
}

pub fn quantize_frame() {
    panic!("quantized frames are refused by the blitter");
}
"""

GOOD = {
    "documentation": "`set_width` refuses a width over 100: the frame cannot hold it.",
    "solutions": ["Clamp the width first: `set_width(w.min(100))`.", "Use a wider frame."],
    "exampleFix": "// before\nset_width(w);\n// after\nset_width(w.min(100));",
    "triggerScenarios": "A width computed from user input.",
}
MISSING_NAME = {
    "documentation": "`load_config` could not read the config file.",
    "solutions": ["Call `read_config_or_default(path)` instead.", "Check the path."],
    "exampleFix": "// before\nload_config(p);\n// after\nread_config_or_default(p);",
}
ANOTHER_SITE = {
    "documentation": "`q_to_device` on the `BackendRouter` moved a quantized tensor wrongly.",
    "solutions": ["Dequantize before moving.", "Use another backend."],
}


def _reply(body: dict) -> Reply:
    prompt = body["messages"][-1]["content"]
    if "Function: set_width" in prompt:
        return Reply(json.dumps(GOOD))
    if "Function: load_config" in prompt:
        return Reply("```json\n" + json.dumps(MISSING_NAME) + "\n```")
    if "Function: resize_frame" in prompt:
        return Reply("Sure! Here is the write-up you asked for: it means the frame")
    return Reply(json.dumps(ANOTHER_SITE))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    crate = tmp_path / "crate"
    (crate / "src").mkdir(parents=True)
    git(crate, "init", "-q", "-b", "main")
    for version, head in (("0.1.0", ""), ("0.2.0", "// frames\n\n")):
        (crate / "Cargo.toml").write_text(f'[package]\nname = "frames"\nversion = "{version}"\n')
        (crate / "src" / "lib.rs").write_text(head + LIB)
        git(crate, "add", "-A")
        git(crate, "commit", "-q", "-m", f"Release {version}")
        git(crate, "tag", f"v{version}")
    _build(tmp_path)
    return tmp_path


def _build(tmp_path: Path) -> None:
    """`catalog history` of the crate into `catalog/`, as the README's route says."""
    built = run_cli(
        tmp_path,
        "catalog",
        "history",
        "crate",
        "--repo",
        "acme/frames",
        "--include-head",
        "--out",
        "catalog",
    )
    assert built.returncode == 0, built.stderr


def _ids(tmp_path: Path) -> dict[str, str]:
    rows = [json.loads(x) for x in (tmp_path / "catalog" / "panic_sites.jsonl").open()]
    return {r["enclosingFn"]: r["id"] for r in rows}


def _explain(tmp_path: Path, chat: FakeChat, *extra: str):
    return run_cli(
        tmp_path,
        "catalog",
        "explain",
        "--catalog",
        "catalog",
        "--source",
        "crate",
        "--json",
        *extra,
        TRIAGE_LLM_BASE_URL=chat.base_url,
        TRIAGE_LLM_MODEL="tiny-coder",
        TRIAGE_LLM_API_KEY="sk-test",
    )


def _review(tmp_path: Path, *extra: str) -> list[dict]:
    done = run_cli(tmp_path, "catalog", "review", "--catalog", "catalog", "--json", *extra)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def _answer(tmp_path: Path) -> dict:
    (tmp_path / "paste.md").write_text(
        "thread 'main' panicked at src/lib.rs:5:9:\nwidth 250 is larger than the frame allows\n"
    )
    done = run_cli(tmp_path, "match", "--catalog", "catalog", "--json", "paste.md")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[0])["matches"][0]["answer"]


def test_drafts_are_checked_refused_with_reasons_and_answer_only_once_accepted(project):
    tmp_path, ids = project, _ids(project)
    with FakeChat(_reply) as chat:
        done = _explain(tmp_path, chat)
        assert done.returncode == 0, done.stderr
        assert len(chat.requests) == 4 and {r["model"] for r in chat.requests} == {"tiny-coder"}
        # the grounding: the site's code at its commit, marked, with its function
        prompt = next(p for p in chat.prompts() if "Function: set_width" in p)
        assert 'panic!("width {} is larger than the frame allows", w);' in prompt
        assert "Commit: " in prompt and "Placeholders" in prompt
    summary = json.loads(done.stdout)
    assert summary["counts"] == {"drafted": 1, "refused": 3}
    rows = {r["id"]: r for r in _review(tmp_path)}
    assert rows[ids["set_width"]]["status"] == "draft"
    assert rows[ids["set_width"]]["model"] == "tiny-coder"
    missing = rows[ids["load_config"]]
    assert missing["status"] == "refused" and "`read_config_or_default`" in missing["reasons"][0]
    assert "malformed answer" in rows[ids["resize_frame"]]["reasons"][0]
    other = " ".join(rows[ids["quantize_frame"]]["reasons"])
    assert "`q_to_device`" in other and "may be about another site" in other

    # a draft does not answer anyone
    assert _answer(tmp_path)["source"] == "code"
    assert (tmp_path / "catalog" / "writeups").exists() is False

    # accepted, it does
    rows = {r["id"]: r for r in _review(tmp_path, "--accept", ids["set_width"])}
    assert rows[ids["set_width"]]["status"] == "accepted"
    answer = _answer(tmp_path)
    assert answer["source"] == "writeup"
    assert answer["first_step"] == "Clamp the width first: set_width(w.min(100))."
    # a refused draft cannot be accepted
    refused = run_cli(
        tmp_path, "catalog", "review", "--catalog", "catalog", "--accept", ids["load_config"]
    )
    assert refused.returncode == 2 and "refused draft cannot be accepted" in refused.stderr


def test_a_rerun_asks_nothing_and_an_interrupted_run_resumes(project):
    tmp_path = project
    with FakeChat(_reply) as chat:
        first = _explain(tmp_path, chat, "--limit", "1")  # stopped after one site
        assert first.returncode == 0 and len(chat.requests) == 1
        rest = _explain(tmp_path, chat)
        assert rest.returncode == 0 and len(chat.requests) == 4  # the three left, once each
        again = _explain(tmp_path, chat)
        assert len(chat.requests) == 4  # nothing new
        assert json.loads(again.stdout)["counts"] == {"skipped (already drafted)": 4}


def test_rate_limits_and_server_errors_are_retried_and_a_slow_server_is_a_failure(project):
    tmp_path = project
    calls = {"n": 0}

    def flaky(body: dict) -> Reply:
        calls["n"] += 1
        if calls["n"] == 1:
            return Reply(status=429, retry_after=0)
        if calls["n"] == 2:
            return Reply(status=503)
        return _reply(body)

    with FakeChat(flaky) as chat:
        done = _explain(tmp_path, chat, "--only", _ids(tmp_path)["set_width"])
        assert done.returncode == 0, done.stderr
        assert len(chat.requests) == 3
        assert json.loads(done.stdout)["counts"] == {"drafted": 1}
    with FakeChat(lambda body: Reply(json.dumps(GOOD), delay=5)) as chat:
        slow = _explain(
            tmp_path, chat, "--only", _ids(tmp_path)["quantize_frame"], "--timeout", "1"
        )
        assert slow.returncode == 1
        assert json.loads(slow.stdout)["counts"] == {"failed": 1}
    assert not (
        tmp_path / "catalog" / "drafts" / f"{_ids(tmp_path)['quantize_frame']}.draft"
    ).exists()


def test_without_a_server_setting_one_line_and_dry_run_prints_the_prompts(project):
    tmp_path = project
    done = run_cli(tmp_path, "catalog", "explain", "--catalog", "catalog", "--source", "crate")
    assert done.returncode == 2 and "TRIAGE_LLM_BASE_URL and TRIAGE_LLM_MODEL" in done.stderr
    assert "Traceback" not in done.stderr
    dry = run_cli(
        tmp_path, "catalog", "explain", "--catalog", "catalog", "--source", "crate", "--dry-run"
    )
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.count("--- ") == 4 and "tokens)" in dry.stdout
    assert "Function: set_width" in dry.stdout and not (tmp_path / "catalog" / "drafts").exists()


FAMILY = {
    "families": [
        {
            "id": "frame-refusals",
            "name": "The frame refuses an operation",
            "files": ["src/lib.rs"],
            "messagePatterns": ["frames"],
        }
    ]
}
FAMILY_DRAFT = {
    "documentation": "The frame refuses operations it has no code for, such as "
    "`resize_frame` and `quantize_frame`.",
    "solutions": ["Do not call them on frames.", "Convert the frame first."],
}


def test_a_family_is_drafted_once_and_answers_for_its_sites_once_accepted(project):
    tmp_path = project
    (tmp_path / "catalog" / "families.json").write_text(json.dumps(FAMILY))

    def reply(body: dict) -> Reply:
        prompt = body["messages"][-1]["content"]
        assert "Facts of the family" in prompt and "Family: frame-refusals" in prompt
        return Reply(json.dumps(FAMILY_DRAFT))

    with FakeChat(reply) as chat:
        done = _explain(tmp_path, chat, "--family", "frame-refusals")
        assert done.returncode == 0, done.stderr
        assert len(chat.requests) == 1  # one draft for the family, not one a site
        prompt = chat.prompts()[0]
        assert "Function: resize_frame" in prompt and "Function: quantize_frame" in prompt
    rows = {r["id"]: r for r in _review(tmp_path)}
    assert rows["family:frame-refusals"]["status"] == "draft"
    _review(tmp_path, "--accept", "family:frame-refusals")
    (tmp_path / "paste.md").write_text(
        "thread 'main' panicked at src/lib.rs:18:5:\nquantized frames are refused by the blitter\n"
    )
    done = run_cli(tmp_path, "match", "--catalog", "catalog", "--json", "paste.md")
    answer = json.loads(done.stdout.splitlines()[0])["matches"][0]["answer"]
    assert answer["source"] == "family"
    assert answer["first_step"] == "Do not call them on frames."


def test_a_maintainer_may_let_drafts_answer_and_the_answer_says_so(project):
    tmp_path = project
    with FakeChat(_reply) as chat:
        assert _explain(tmp_path, chat, "--only", _ids(tmp_path)["set_width"]).returncode == 0
    assert _answer(tmp_path)["source"] == "code"
    _review(tmp_path, "--drafts-answer", "on")
    answer = _answer(tmp_path)
    assert answer["source"] == "writeup"
    assert answer["meaning"].startswith("Unreviewed draft, written by a model from the code:")
    _review(tmp_path, "--drafts-answer", "off")
    assert _answer(tmp_path)["source"] == "code"


def test_a_write_up_whose_function_changed_is_stale(project):
    tmp_path, ids = project, _ids(project)
    with FakeChat(_reply) as chat:
        assert _explain(tmp_path, chat, "--only", ids["set_width"]).returncode == 0
    _review(tmp_path, "--accept", ids["set_width"])
    crate = tmp_path / "crate"

    def rebuild(version: str, source: str) -> dict:
        (crate / "src" / "lib.rs").write_text(source)
        git(crate, "commit", "-q", "-am", f"Release {version}")
        git(crate, "tag", f"v{version}")
        _build(tmp_path)
        return {r["id"]: r for r in _review(tmp_path, "--source", "crate")}

    lib = (crate / "src" / "lib.rs").read_text()
    same = rebuild("0.3.0", lib + "\npub fn unrelated() {}\n")
    assert same[ids["set_width"]]["status"] == "accepted"  # other code changed, not its own
    changed = rebuild("0.4.0", lib.replace("if w > 100 {", "if w > 120 {"))
    assert changed[ids["set_width"]]["status"] == "stale"
