"""deploy/: the GitHub Action run for real against the fake GitHub, and what can be checked of the
Dockerfile, the compose file and the systemd unit without Docker or systemd running."""

from __future__ import annotations

import asyncio
import copy
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from docs_text import docs_text
from fakes.github_api import FakeGitHub
from harness import PANIC, REPO, bot_comments, fixture

from bot.cli import build_parser
from bot.config.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
ACTION = DEPLOY / "github-action"
VENV_BIN = Path(sys.executable).parent
INSTALLATION = 9
ACTION_TOKEN = "ghs_" + "W0rkfl0wT0k3n" * 3  # what `${{ github.token }}` is: an installation token
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def load_yaml(path: Path) -> dict[str, Any]:
    yaml = pytest.importorskip("yaml")  # PyYAML: a test dependency
    return yaml.safe_load(path.read_text())


# -- the GitHub Action --------------------------------------------------------------------------


def render(value: str, context: dict[str, str]) -> str:
    """Evaluate `${{ a.b }}` the way the runner does for the plain lookups an action uses; an
    expression the test does not know fails the test."""

    def lookup(match: re.Match[str]) -> str:
        expression = match.group(1)
        if expression not in context:
            raise AssertionError(f"unexpected expression in action.yml: {expression}")
        return context[expression]

    return EXPRESSION.sub(lookup, value)


def action_context(runner_temp: Path, inputs: dict[str, str]) -> dict[str, str]:
    action = load_yaml(ACTION / "action.yml")
    context = {"github.token": ACTION_TOKEN, "runner.temp": str(runner_temp)}
    context["steps.python.outputs.python-path"] = sys.executable
    for name, spec in action["inputs"].items():
        value = inputs.get(name, str(spec.get("default", "")))
        context[f"inputs.{name}"] = render(value, context)
    return context


def run_step(step: dict[str, Any], context: dict[str, str], env: dict[str, str]) -> Any:
    """Run a composite `run:` step as the runner does: bash -e -o pipefail, the step's env."""
    assert step["shell"] == "bash"
    step_env = {k: render(str(v), context) for k, v in (step.get("env") or {}).items()}
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
        env=env | step_env,
        cwd=env["GITHUB_WORKSPACE"],
        capture_output=True,
        text=True,
        timeout=120,
    )


def runner_env(tmp_path: Path, fake: FakeGitHub, event: dict[str, Any], name: str) -> dict:
    """What the runner provides: the event file, its name, the API URL, temp and workspace."""
    temp = tmp_path / "runner-temp"
    workspace = tmp_path / "workspace"
    temp.mkdir(exist_ok=True)
    workspace.mkdir(exist_ok=True)
    event_path = tmp_path / f"{name}.json"
    event_path.write_text(json.dumps(event))
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_EVENT_NAME": name,
        "GITHUB_API_URL": fake.base_url,
        "GITHUB_ACTION_PATH": str(ACTION),
        "GITHUB_WORKSPACE": str(workspace),
        "RUNNER_TEMP": str(temp),
    }


def install_into(runner_temp: Path) -> None:
    """Stand-in for the install step's result: its venv's triage-bot is this checkout's."""
    bin_dir = runner_temp / "panic-triage" / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    target = bin_dir / "triage-bot"
    if not target.exists():
        target.symlink_to(VENV_BIN / "triage-bot")


def steps() -> dict[str, dict[str, Any]]:
    action = load_yaml(ACTION / "action.yml")
    return {step["name"]: step for step in action["runs"]["steps"]}


@pytest.fixture
def github():
    with FakeGitHub() as gh:
        gh.add_repo(REPO)
        gh.add_installation(INSTALLATION, "Codertocat", [REPO])
        gh.installation_tokens[ACTION_TOKEN] = (
            INSTALLATION,
            datetime.now(UTC) + timedelta(hours=1),
        )
        gh.actions_tokens.add(ACTION_TOKEN)
        yield gh


def issue_event(action: str, number: int, body: str) -> dict[str, Any]:
    event = copy.deepcopy(fixture(f"issues.{action}"))  # GitHub's own example payload
    event["issue"]["number"] = number
    event["issue"]["body"] = body
    return event


def test_action_answers_an_issue_like_the_server_would(github, tmp_path):
    issue = github.add_issue(REPO, "Crash when training", PANIC)
    event = issue_event("opened", issue.number, PANIC)
    assert event["repository"]["full_name"] == REPO
    env = runner_env(tmp_path, github, event, "issues")
    install_into(Path(env["RUNNER_TEMP"]))
    context = action_context(Path(env["RUNNER_TEMP"]), {})
    result = run_step(steps()["Answer the issue"], context, env)
    assert result.returncode == 0, result.stderr
    assert f"{REPO}#{issue.number}: match cf30438606d06d30 comment=create" in result.stdout
    [comment] = bot_comments(github, issue.number)
    assert "Can't differentiate interpolate backward" in comment.body
    assert "panic: known" in github.repo(REPO).issues[issue.number].labels
    writes = github.writes()
    assert writes and {w.auth for w in writes} == {f"token:{ACTION_TOKEN}"}  # the input's token
    assert ACTION_TOKEN not in result.stdout + result.stderr
    assert " event source=github " in result.stderr  # the one structured line per event

    # A later run (a fresh runner: no store) edits the same comment instead of adding one.
    github.edit_issue(REPO, issue.number, body=PANIC + "\nstill happens on 0.18.1")
    later = tmp_path / "later"
    later.mkdir()
    env = runner_env(later, github, issue_event("edited", issue.number, PANIC), "issues")
    install_into(Path(env["RUNNER_TEMP"]))
    result = run_step(steps()["Answer the issue"], action_context(later / "runner-temp", {}), env)
    assert result.returncode == 0, result.stderr
    assert len(bot_comments(github, issue.number)) == 1


def test_action_inputs_reach_the_bot(github, tmp_path):
    """dry-run writes nothing; a catalog path replaces the bundled catalog."""
    issue = github.add_issue(REPO, "crash", PANIC)
    env = runner_env(tmp_path, github, issue_event("opened", issue.number, PANIC), "issues")
    install_into(Path(env["RUNNER_TEMP"]))
    context = action_context(Path(env["RUNNER_TEMP"]), {"dry-run": "true"})
    result = run_step(steps()["Answer the issue"], context, env)
    assert result.returncode == 0, result.stderr
    assert "DRY RUN, would write: comment=create" in result.stderr
    assert github.writes() == []

    # a catalog in the workspace without the record: the same panic is uncatalogued now
    workspace = Path(env["GITHUB_WORKSPACE"])
    lines = (ROOT / "catalog" / "burn" / "panic_sites.jsonl").read_text().splitlines()
    other = [line for line in lines if "cf30438606d06d30" not in line][:5]
    (workspace / "my-catalog").mkdir()
    (workspace / "my-catalog" / "records.jsonl").write_text("\n".join(other) + "\n")
    context = action_context(Path(env["RUNNER_TEMP"]), {"catalog": "my-catalog"})
    result = run_step(steps()["Answer the issue"], context, env)
    assert result.returncode == 0, result.stderr
    assert f"{REPO}#{issue.number}: uncatalogued-panic" in result.stdout

    bad = run_step(
        steps()["Answer the issue"],
        action_context(Path(env["RUNNER_TEMP"]), {"catalog": "no-such-folder"}),
        env,
    )
    assert bad.returncode == 2 and "TRIAGE_CATALOG" in bad.stderr


def test_action_ignores_events_it_has_nothing_to_do_with(github, tmp_path):
    env = runner_env(tmp_path, github, fixture("star.created"), "star")
    install_into(Path(env["RUNNER_TEMP"]))
    result = run_step(steps()["Answer the issue"], action_context(tmp_path, {}), env)
    assert result.returncode == 0 and "nothing to do for star" in result.stdout
    assert github.writes() == []


def test_action_install_step_installs_this_repository(tmp_path):
    """The install step makes a venv and pip-installs `$GITHUB_ACTION_PATH/../..`, which must be
    this project. A stand-in python records the calls (no network, no real install)."""
    log = tmp_path / "calls.log"
    stub = tmp_path / "python"
    stub.write_text(
        "#!/bin/bash\n"
        f'echo "$0 $*" >> {shlex.quote(str(log))}\n'
        'if [ "$1 $2" = "-m venv" ]; then mkdir -p "$3/bin" && cp "$0" "$3/bin/python"; fi\n'
    )
    stub.chmod(0o755)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "GITHUB_ACTION_PATH": str(ACTION),
        "GITHUB_WORKSPACE": str(tmp_path),
        "RUNNER_TEMP": str(tmp_path / "temp"),
    }
    context = action_context(tmp_path / "temp", {})
    context["steps.python.outputs.python-path"] = str(stub)
    result = run_step(steps()["Install panic-triage"], context, env)
    assert result.returncode == 0, result.stderr
    venv_call, pip_call = log.read_text().splitlines()
    assert venv_call == f"{stub} -m venv {tmp_path / 'temp' / 'panic-triage'}"
    assert pip_call.startswith(f"{tmp_path / 'temp' / 'panic-triage' / 'bin' / 'python'} -m pip")
    target = Path(pip_call.split()[-1]).resolve()
    assert target == ROOT
    project = tomllib.loads((target / "pyproject.toml").read_text())["project"]
    assert project["scripts"]["triage-bot"] == "bot.cli:main"


def test_action_metadata():
    action = load_yaml(ACTION / "action.yml")
    assert action["runs"]["using"] == "composite"
    inputs = action["inputs"]
    assert inputs["github-token"]["default"] == "${{ github.token }}"
    assert {"catalog", "config", "dry-run"} <= set(inputs)
    for name, spec in inputs.items():
        assert spec.get("description"), name
        assert spec.get("required") is False, name  # everything has a default
    text = (ACTION / "action.yml").read_text()
    used = set(re.findall(r"inputs\.([\w-]+)", text))
    assert used == set(inputs), "every input is used, and only declared inputs are"
    setup = action["runs"]["steps"][0]
    assert setup["uses"].startswith("actions/setup-python@")
    answer = steps()["Answer the issue"]
    assert 'handle-event --event-path "$GITHUB_EVENT_PATH" --event-name "$GITHUB_EVENT_NAME"' in (
        " ".join(answer["run"].replace("\\\n", " ").split())
    )
    assert "${{" not in answer["run"]  # inputs reach the script through env, never spliced in
    # the command the step runs exists, with those options
    args = build_parser("handle-event").parse_args(
        ["handle-event", "--event-path", "e.json", "--event-name", "issues"]
    )
    assert args.handler.__name__ == "cmd_handle_event"


def test_example_workflow():
    workflow = load_yaml(ACTION / "example-workflow.yml")
    on = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert on == {
        "issues": {"types": ["opened", "edited", "reopened"]},
        "issue_comment": {"types": ["created", "edited"]},
    }
    assert workflow["permissions"] == {"issues": "write", "contents": "read"}
    [job] = workflow["jobs"].values()
    [use] = [s for s in job["steps"] if "uses" in s]
    owner_repo, _, ref = use["uses"].partition("@")
    assert owner_repo.split("/", 2)[2] == "deploy/github-action" and ref
    action = load_yaml(ACTION / "action.yml")
    assert set(use.get("with") or {}) <= set(action["inputs"])


# -- the container ----------------------------------------------------------------------------


def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    text = (DEPLOY / "Dockerfile").read_text()
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    joined = re.sub(r"\\\n\s*", " ", "\n".join(lines))
    out = []
    for line in joined.splitlines():
        if line.strip():
            word, _, rest = line.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def stages() -> list[list[tuple[str, str]]]:
    result: list[list[tuple[str, str]]] = []
    for instruction in dockerfile():
        if instruction[0] == "FROM":
            result.append([])
        result[-1].append(instruction)
    return result


def test_dockerfile_builds_from_files_that_exist():
    build, final = stages()
    assert build[0][1].startswith("python:3.11-slim") and final[0][1] == "python:3.11-slim"
    copied: set[str] = set()
    for word, args in build:
        if word == "COPY":
            *sources, _ = args.split()
            for source in sources:
                assert (ROOT / source).exists(), source
                copied.add(source.rstrip("/"))
    # everything the wheel is built from is copied in
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    wheel = pyproject["tool"]["hatch"]["build"]["targets"]["wheel"]
    needed = {"pyproject.toml", pyproject["project"]["readme"], *wheel["packages"]}
    needed |= set(wheel["force-include"])
    assert needed <= copied, needed - copied
    assert wheel["force-include"]["catalog"] == "bot/bundled_catalog"
    # ... and not ignored by the Dockerfile's own .dockerignore
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text().splitlines()
    assert ignore[ignore.index("*") :].count("*") == 1
    for source in copied:
        assert f"!{source}" in ignore, source


def test_dockerfile_runs_the_server_as_a_non_root_user_with_the_store_on_a_volume():
    _, final = stages()
    words = dict(final)  # last of each
    user = [args for word, args in final if word == "USER"]
    assert user and user[-1] not in ("root", "0")
    env = " ".join(args for word, args in final if word == "ENV")
    db = re.search(r"TRIAGE_DB=(\S+)", env)
    assert db and Settings.from_mapping({"TRIAGE_DB": db.group(1)}).triage_db.parent == Path(
        "/data"
    )
    assert json.loads(words["VOLUME"]) == ["/data"]
    assert any(w == "COPY" and a.startswith("--from=build") for w, a in final)
    command = json.loads(words["CMD"])
    assert command[:2] == ["triage-bot", "serve"]
    args = build_parser("serve").parse_args(command[1:])
    assert args.handler.__name__ == "cmd_serve" and args.host == "0.0.0.0"
    assert words["EXPOSE"] == str(args.port)


def healthcheck_code() -> str:
    _, final = stages()
    [args] = [a for w, a in final if w == "HEALTHCHECK"]
    options, _, command = args.partition(" CMD ")
    assert "--interval=" in options and "--timeout=" in options
    command_list = json.loads(command)
    assert command_list[:2] == ["python", "-c"]  # no curl in python:slim
    return command_list[2]


async def test_dockerfile_healthcheck_asks_the_real_server(tmp_path):
    """The HEALTHCHECK's own code, run against `serve`'s application: 0 when healthy, not 0
    when the store is broken or nothing listens."""
    from aiohttp import web

    from bot.app import Triage
    from bot.server.http import create_app
    from bot.store.sqlite import Store

    code = healthcheck_code()
    assert "/healthz" in code and ":8080/" in code
    settings = Settings.from_mapping({"DISCORD_TOKEN": "x" * 30, "TRIAGE_DB": str(tmp_path / "d")})
    store = Store(tmp_path / "db.sqlite3")
    app = create_app(settings, triage=Triage.from_paths(None), store=store, start_discord=False)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def probe() -> int:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", code.replace(":8080/", f":{port}/")
        )
        return await asyncio.wait_for(proc.wait(), 30)

    try:
        assert await probe() == 0
        store.close()  # the store stops answering: /healthz says 503
        assert await probe() != 0
    finally:
        await runner.cleanup()
    assert await probe() != 0  # nobody listening


def test_compose_file():
    compose = load_yaml(DEPLOY / "docker-compose.yml")
    [service] = compose["services"].values()
    context = (DEPLOY / service["build"]["context"]).resolve()
    assert context == ROOT
    assert (context / service["build"]["dockerfile"]).resolve() == DEPLOY / "Dockerfile"
    assert service["env_file"] == ["../.env"]  # the settings, next to .env.example
    assert (DEPLOY / "../.env.example").resolve().is_file()
    volume, _, mount = service["volumes"][0].partition(":")
    assert mount == "/data" and volume in compose["volumes"]
    assert Path(service["environment"]["TRIAGE_DB"]).parent == Path(mount)
    assert any(p.endswith(":8080") for p in service["ports"])
    assert service["restart"] in ("unless-stopped", "always", "on-failure")
    _limited(service)


def _limited(service: dict) -> None:
    """Open files and memory are set, as the systemd unit sets them."""
    assert service["ulimits"]["nofile"]["soft"] >= 4096
    assert service["mem_limit"] and service["pids_limit"]


def test_replicas_compose_file_sets_the_limits_too():
    compose = load_yaml(DEPLOY / "docker-compose.postgres.yml")
    replicas = [s for name, s in compose["services"].items() if name.startswith("triage-bot")]
    assert len(replicas) == 2
    for service in replicas:
        _limited(service)


# -- systemd ----------------------------------------------------------------------------------


def unit() -> dict[str, list[tuple[str, str]]]:
    sections: dict[str, list[tuple[str, str]]] = {}
    current = ""
    for line in (DEPLOY / "triage-bot.service").read_text().splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            current = line.strip("[]")
            sections[current] = []
            continue
        key, sep, value = line.partition("=")
        assert sep, line
        sections[current].append((key, value))
    return sections


def test_systemd_unit_settings():
    sections = unit()
    assert set(sections) == {"Unit", "Service", "Install"}
    service = dict(sections["Service"])
    assert service["Restart"] == "on-failure"
    assert service["EnvironmentFile"].startswith("/")
    assert service["User"] not in ("root", "0") and service["Group"]
    exec_start = shlex.split(service["ExecStart"])
    assert exec_start[0].startswith("/") and exec_start[0].endswith("/triage-bot")
    args = build_parser("serve").parse_args(exec_start[1:])
    assert args.handler.__name__ == "cmd_serve"
    db = [v for k, v in sections["Service"] if k == "Environment" and "TRIAGE_DB=" in v]
    assert db and db[0].split("=", 1)[1].startswith(f"/var/lib/{service['StateDirectory']}/")
    for hardening in ("NoNewPrivileges", "ProtectSystem", "ProtectHome", "PrivateTmp"):
        assert hardening in service, hardening
    assert service["ProtectSystem"] == "strict"
    assert int(service["LimitNOFILE"]) >= 4096 and service["MemoryMax"] and service["TasksMax"]
    assert dict(sections["Install"])["WantedBy"] == "multi-user.target"


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze here")
def test_systemd_unit_verifies(tmp_path):
    """`systemd-analyze verify` on the unit, with ExecStart pointed at this checkout's
    triage-bot (verify insists the program exists). Unknown keys are reported, not fatal, so
    any word about the unit fails the test."""
    text = (DEPLOY / "triage-bot.service").read_text()
    path = re.search(r"^ExecStart=(\S+)", text, re.M).group(1)  # type: ignore[union-attr]
    copy_path = tmp_path / "triage-bot.service"
    copy_path.write_text(text.replace(path, str(VENV_BIN / "triage-bot")))
    result = subprocess.run(
        ["systemd-analyze", "verify", str(copy_path)], capture_output=True, text=True, timeout=60
    )
    said = [
        line
        for line in (result.stdout + result.stderr).splitlines()
        if "triage-bot.service" in line
    ]
    assert result.returncode == 0 and not said, result.stdout + result.stderr


# -- the guide ----------------------------------------------------------------------------------


def test_guide_documents_every_setting_and_input():
    from bot.config.settings import NAMES

    guide = docs_text()  # the maintainer's guide: README.md and docs/
    example = (ROOT / ".env.example").read_text()
    rows = {m.group(1) for m in re.finditer(r"^\| `([A-Z_]+)` \|", guide, re.M)}
    assert rows == set(NAMES)  # the configuration reference: every setting, nothing else
    for name in NAMES:
        assert re.search(rf"^{name}=", example, re.M), name
    inputs = load_yaml(ACTION / "action.yml")["inputs"]
    for name in inputs:
        assert f"| `{name}` |" in guide, name
    for permission in ("Issues: Read and write", "Metadata: Read-only", "Issue comment"):
        assert permission in guide
