"""The first ten minutes: every command and flag the README lists exists and the reverse, and
every mistake a new user makes gets a clear message (issue 18).

The README/parser checks derive everything from `bot.cli.build_parser()` and the README's
Commands table, so a command or flag added later is checked too.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
import yaml
from burn_repo import SKIP_REASON, burn_repo, burn_repo_present
from docs_text import docs_text
from harness import PANIC, REPO, bot_comments, fake_github

from bot.cli import build_parser, main, subcommands
from bot.config.settings import NAMES
from bot.store.sqlite import Store

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


def console(*argv: str) -> list[str]:
    """The installed console entry (`triage-bot`), or the same program as a module."""
    script = Path(sys.executable).parent / "triage-bot"
    return [str(script), *argv] if script.exists() else [sys.executable, "-m", "bot", *argv]


def clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in NAMES}
    env["TRIAGE_DB"] = str(tmp_path / "store.sqlite3")
    env.update(extra)
    return env


@pytest.fixture
def no_settings(tmp_path, monkeypatch):
    """No bot setting in the environment, no .env, the store in tmp_path (not created)."""
    for name in NAMES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "store.sqlite3"
    monkeypatch.setenv("TRIAGE_DB", str(db))
    return db


# -- the README's Commands table and the parser -------------------------------------------------

_WORD = re.compile(r"^[a-z][a-z0-9-]*$")
_FLAG = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")


def parser_commands() -> dict[tuple[str, ...], set[str]]:
    """Every command (a path of subcommand names; () is `triage-bot` itself) that has options
    of its own or no subcommands, with its option strings (`--help` left out)."""
    found: dict[tuple[str, ...], set[str]] = {}

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> None:
        children = subcommands(parser)
        flags = {
            flag
            for action in parser._actions
            if not isinstance(action, argparse._HelpAction)
            for flag in action.option_strings
        }
        if flags or not children:
            found[path] = flags
        for name, child in children.items():
            walk(child, (*path, name))

    walk(build_parser(), ())
    return found


def readme_commands() -> dict[tuple[str, ...], set[str]]:
    """The README's Commands table: command path -> the flags its row shows."""
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Commands\n", 1)[1].split("\n#", 1)[0]
    found: dict[tuple[str, ...], set[str]] = {}
    for line in section.splitlines():
        if not line.startswith("| `triage-bot"):
            continue
        cell = re.split(r"(?<!\\)\|", line)[1].strip().replace("\\|", "|")
        for span in re.findall(r"`(triage-bot[^`]*)`", cell):
            words = span.split()[1:]
            path = []
            for word in words:
                if not _WORD.match(word):
                    break
                path.append(word)
            flags = set(_FLAG.findall(span))
            found.setdefault(tuple(path), set()).update(flags)
    return found


def test_readme_table_is_read():
    rows = readme_commands()
    assert ("match",) in rows and ("catalog", "validate") in rows and ("jobs", "retry") in rows
    assert rows[("jobs", "retry")] == {"--all", "--run"}


def test_every_command_and_flag_of_the_parser_is_in_the_readme():
    readme = readme_commands()
    # -v/-q are global, as git's: the table lists them once, on `triage-bot`'s own row
    shared = readme[()] & {"-v", "--verbose", "-q", "--quiet"}
    missing = {
        " ".join(("triage-bot", *path)): sorted(flags - readme.get(path, set()) - shared)
        for path, flags in parser_commands().items()
        if path not in readme or flags - readme[path] - shared
    }
    assert not missing, f"in --help but not in the README's Commands table: {missing}"


def test_every_command_and_flag_in_the_readme_is_in_the_parser():
    parser = parser_commands()
    unknown = {
        " ".join(("triage-bot", *path)): sorted(flags - parser.get(path, set()))
        for path, flags in readme_commands().items()
        if path not in parser or flags - parser[path]
    }
    assert not unknown, f"in the README's Commands table but not in --help: {unknown}"


def all_parsers() -> list[tuple[str, argparse.ArgumentParser]]:
    out: list[tuple[str, argparse.ArgumentParser]] = []

    def walk(parser: argparse.ArgumentParser) -> None:
        out.append((parser.prog, parser))
        for child in subcommands(parser).values():
            walk(child)

    walk(build_parser())
    return out


def test_every_command_has_a_description_and_shows_its_defaults():
    for prog, parser in all_parsers():
        assert parser.description, f"`{prog} --help` has no description"
        formatter = parser._get_formatter()
        for action in parser._actions:
            default = action.default
            if not action.option_strings or default in (None, False, [], argparse.SUPPRESS):
                continue
            # the help line of this option, as --help prints it, names its default
            assert "default" in formatter._expand_help(action), (prog, action.option_strings)


def test_help_shows_defaults_and_descriptions(capsys):
    for argv, expected in (
        (
            ["serve", "--help"],
            ["Serve GitHub webhooks", "(default: 8080)", "(default TRIAGE_HOST, else 127.0.0.1"],
        ),
        (["poll", "--help"], ["Ask GitHub for the issues", "(default: 60.0)", "(default: 24.0)"]),
        (["handle-event", "--help"], ["Run one GitHub event", "(default: 3)"]),
        (["jobs", "--help"], ["The durable queue"]),
        (["match", "--help"], ["(default: auto)"]),
    ):
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 0
        out = " ".join(capsys.readouterr().out.split())
        for words in expected:
            assert words in out, (argv, words)


def test_top_level_help_lists_every_action_of_each_group(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = " ".join(capsys.readouterr().out.split())
    for name, group in subcommands(build_parser()).items():
        actions = list(subcommands(group))
        if actions:
            assert f"{name} " in out and f"({', '.join(actions)})" in out
    assert "scan, update, history, draft" in out  # the catalog actions issue 18 found missing


def test_version_from_the_console_entry(tmp_path):
    done = subprocess.run(
        console("--version"), cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0
    assert done.stdout.strip() == f"triage-bot {metadata.version('panic-triage')}"
    import bot

    assert bot.__version__ == metadata.version("panic-triage")  # the fallback agrees


@pytest.mark.parametrize(
    "group", sorted(n for n, p in subcommands(build_parser()).items() if subcommands(p))
)
def test_a_group_without_its_action_prints_its_help_and_exits_2(group, capsys):
    assert main([group]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"usage: triage-bot {group} [-h] ACTION ...")
    for action in subcommands(subcommands(build_parser())[group]):
        assert f"    {action} " in err


# -- match --------------------------------------------------------------------------------------


def test_match_with_stdin_closed_is_a_clear_error(tmp_path):
    command = " ".join(f"'{part}'" for part in console("match"))
    done = subprocess.run(
        ["bash", "-c", f"{command} <&-"],
        cwd=tmp_path,
        env=clean_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == (
        "triage-bot: cannot read stdin: it is closed; give a file, or pipe the text in\n"
    )


# -- jobs, stats: reading makes no store ------------------------------------------------------


def test_stats_and_jobs_list_do_not_create_a_store(no_settings, capsys):
    db = no_settings
    assert main(["stats"]) == 0
    out = capsys.readouterr().out
    assert f"no store yet at {db} (TRIAGE_DB)" in out
    assert main(["jobs", "list"]) == 0
    assert f"no store yet at {db} (TRIAGE_DB)" in capsys.readouterr().out
    assert main(["jobs", "retry", "--all"]) == 1
    assert f"no store yet at {db}" in capsys.readouterr().err
    assert main(["catalog", "draft", "abc"]) == 2
    assert f"no store yet at {db}" in capsys.readouterr().err
    assert not db.exists()


def test_jobs_retry_without_run_says_it_only_requeues(no_settings, capsys):
    with Store(no_settings) as store:
        job = store.enqueue({"repo": "o/r", "number": 7})
        store.claim_job()
        store.bury_job(job, "HTTP 502")
    assert main(["jobs", "retry", str(job)]) == 0
    out = capsys.readouterr().out
    assert out == (
        "requeued 1 job(s), not run yet: a running `triage-bot serve` or `triage-bot poll` picks "
        "them up, or `triage-bot jobs retry --all --run` runs the queue now\n"
    )
    with Store(no_settings) as store:
        assert store.get_job(job).state == "queued"


# -- doctor ---------------------------------------------------------------------------------


def test_doctor_names_a_missing_env_file_and_every_problem(
    no_settings, tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("LOG_LEVEL", "bogus")
    missing = tmp_path / "nonexistent.env"
    assert main(["doctor", "--offline", "--env-file", str(missing)]) == 1
    out = capsys.readouterr().out
    settings = out.split("\nok ", 1)[0]
    assert settings.startswith("FAIL  settings: 2 problem(s)\n")
    assert (
        f"problem: --env-file {missing}: no such file, so no setting was read from it" in settings
    )
    assert "problem: LOG_LEVEL: 'BOGUS' is not one of" in settings
    assert "nothing to serve" not in settings  # the pages serve without credentials
    assert "LOG_LEVEL=" not in out  # the dropped value is not shown as its default


def test_doctor_without_env_file_does_not_need_one(no_settings, capsys, monkeypatch):
    monkeypatch.setenv("DISCORD_TOKEN", "x")
    monkeypatch.setenv("DISCORD_CHANNEL_IDS", "1")
    main(["doctor", "--offline"])
    out = capsys.readouterr().out
    assert "--env-file" not in out and "problem" not in out


# -- catalog validate, show -----------------------------------------------------------------


def test_catalog_validate_on_a_folder_without_records_fails(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("not a record\n")
    assert main(["catalog", "validate", str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"no records in {tmp_path}: a catalog is .json and .jsonl record files")
    assert "ok:" not in err


def records_catalog(tmp_path: Path) -> Path:
    records = [
        {"id": "shape-mismatch", "repo": "o/r", "errorMessage": "Shape mismatch: {} vs {}"},
        {"id": "shape-rank", "repo": "o/r", "errorMessage": "Rank mismatch: {} vs {}"},
        {"id": "dtype", "repo": "o/r", "errorMessage": "unsupported dtype {:?}"},
    ]
    path = tmp_path / "records.json"
    path.write_text(json.dumps(records))
    return path


def test_catalog_show_accepts_an_id_prefix(tmp_path, capsys):
    catalog = str(records_catalog(tmp_path))
    assert main(["catalog", "show", "dt", "--catalog", catalog]) == 0
    assert json.loads(capsys.readouterr().out)["id"] == "dtype"
    assert main(["catalog", "show", "shape", "--catalog", catalog]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        "2 records have ids starting with shape: shape-mismatch, shape-rank; give more of the id\n"
    )
    assert main(["catalog", "show", "nothing", "--catalog", catalog]) == 1
    assert "no record has the id nothing" in capsys.readouterr().err
    # the bundled catalog, with a prefix of a written-up record's id
    assert main(["catalog", "show", "cf304386"]) == 0
    assert json.loads(capsys.readouterr().out)["id"] == "cf30438606d06d30"


# -- relatedErrors --------------------------------------------------------------------------


def test_related_errors_are_messages_and_a_dangling_one_is_linted(tmp_path, capsys):
    records = [
        {
            "id": "a",
            "repo": "o/r",
            "errorMessage": "Shape mismatch: {} vs {}",
            "documentation": "Shapes differ.",
            "relatedErrors": ["Rank  mismatch: {} vs {}", "b", "No such message {}"],
        },
        {"id": "b", "repo": "o/r", "errorMessage": "Rank mismatch: {} vs {}"},
    ]
    (tmp_path / "c.json").write_text(json.dumps(records))
    assert main(["catalog", "lint", str(tmp_path)]) == 0
    out, _ = capsys.readouterr()
    lines = [line for line in out.splitlines() if "dangling-related-error" in line]
    assert len(lines) == 1
    assert lines[0].startswith(f"{tmp_path / 'c.json'}: record a: warning dangling-related-error:")
    assert "`No such message {}`" in lines[0]
    assert main(["catalog", "lint", "--strict", str(tmp_path)]) == 1
    capsys.readouterr()
    readme = docs_text()
    assert "`relatedErrors` lists related errors by their message" in readme
    assert '"relatedErrors": ["other-record-id"]' not in readme


# -- the GitHub Action snippet --------------------------------------------------------------


def test_action_snippet_names_a_ref_that_exists_and_explains_owner_repo():
    readme = (ROOT / "docs" / "deploy.md").read_text(encoding="utf-8")
    [readme_uses] = re.findall(r"- uses: (\S+/deploy/github-action@\S+)", readme)
    workflow = yaml.safe_load((ROOT / "deploy/github-action/example-workflow.yml").read_text())
    [job] = workflow["jobs"].values()
    [step] = [s for s in job["steps"] if "uses" in s]
    assert step["uses"] == readme_uses
    owner_repo, _, ref = readme_uses.partition("@")
    assert owner_repo == "OWNER/REPO/deploy/github-action"
    # a branch the project has, or a full commit SHA; no release tag is published yet
    assert ref == "main" or re.fullmatch(r"[0-9a-f]{40}", ref)
    after = readme.split(readme_uses, 1)[1][:800]
    assert "Replace `OWNER/REPO` with the GitHub repository that holds this project" in after
    assert "commit SHA" in after


# -- catalog/README.md: the regeneration recipe ----------------------------------------------


@pytest.mark.skipif(not burn_repo_present(), reason=SKIP_REASON)
def test_catalog_regeneration_recipe_works_from_a_clone(tmp_path):
    text = (ROOT / "catalog" / "README.md").read_text(encoding="utf-8")
    recipe = text.split("## Regenerating", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    # only paths inside the repository (burn's clone is $BURN), no virtualenv assumed
    assert ".venv" not in recipe
    assert not re.search(r"(?<![\w.-])/\w", recipe), "a path outside the repository"
    clone = tmp_path / "clone"
    shutil.copytree(ROOT / "catalog", clone / "catalog")
    shutil.copytree(ROOT / "tests" / "fixtures", clone / "tests" / "fixtures")
    # $BURN as a user has it: a clone with its tags, HEAD checked out (its Rust files suffice)
    burn = tmp_path / "burn"
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(burn_repo()), str(burn)], check=True)
    archive = subprocess.run(
        ["git", "-C", str(burn), "archive", "HEAD", "--", "*.rs", "*Cargo.toml"],
        check=True,
        capture_output=True,
    )
    subprocess.run(["tar", "-x", "-C", str(burn)], input=archive.stdout, check=True)
    env = clean_env(tmp_path)
    env["PATH"] = f"{Path(console()[0]).parent}{os.pathsep}{env.get('PATH', '')}"
    env["BURN"] = str(burn)
    if not shutil.which("triage-bot", path=env["PATH"]):
        pytest.skip("no triage-bot console script beside this Python")
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", recipe],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    for folder in ("seeds", "burn"):
        ours = ROOT / "catalog" / folder
        theirs = clone / "catalog" / folder
        names = sorted(p.name for p in ours.iterdir())
        assert names == sorted(p.name for p in theirs.iterdir())
        # (burn/writeups/ is written by hand and laid over the regenerated records: kept as is)
        files = [name for name in names if (ours / name).is_file()]
        _, mismatch, errors = filecmp.cmpfiles(ours, theirs, files, shallow=False)
        assert not mismatch and not errors, (folder, mismatch, errors)


# -- Quick start and --version's fallback ---------------------------------------------------


def test_quick_start_match_command_answers_the_example(tmp_path):
    text = README.read_text(encoding="utf-8")
    block = text.split("## Quick start", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    [command] = re.findall(r"triage-bot match (\S+)", block)
    done = subprocess.run(
        [*console("match", command)],
        cwd=ROOT,
        env=clean_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Node should have a step registered" in done.stdout


def test_version_falls_back_to_the_source_tree(monkeypatch):
    import bot
    from bot import cli

    def not_installed(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    # no wire here: an uninstalled source tree is simulated by the metadata lookup failing
    monkeypatch.setattr(metadata, "version", not_installed)
    assert cli.version() == bot.__version__


def test_jobs_retry_run_after_a_plain_retry_runs_the_queue(no_settings, monkeypatch, capsys):
    """The hint of a plain retry works: `--all --run` runs what the first retry queued."""
    from bot.github import auth
    from bot.github.auth import ClientOptions

    with fake_github("ghp_contract", "bot", REPO) as fake:
        issue = fake.add_issue(REPO, "crash", PANIC)
        monkeypatch.setattr(auth, "DEFAULT_OPTIONS", ClientOptions(seconds_between_writes=0))
        monkeypatch.setenv("GITHUB_TOKEN", "ghp_contract")
        monkeypatch.setenv("GITHUB_API_URL", fake.base_url)
        with Store(no_settings) as store:
            job = store.enqueue({"repo": REPO, "number": issue.number})
            store.claim_job()
            store.bury_job(job, "HTTP 502: Server Error")
        assert main(["jobs", "retry", str(job)]) == 0
        assert "not run yet" in capsys.readouterr().out
        assert bot_comments(fake, issue.number) == []
        assert main(["jobs", "retry", "--all", "--run"]) == 0
        assert capsys.readouterr().out == "replayed 1 job(s); 0 job(s) dead-lettered\n"
        assert len(bot_comments(fake, issue.number)) == 1
        assert main(["jobs", "retry", "--all", "--run"]) == 1  # nothing dead, nothing queued
        assert capsys.readouterr().err == "triage-bot: no dead-lettered job to replay\n"


def test_bad_inputs_are_named_even_with_nothing_to_do(no_settings, tmp_path, capsys):
    assert main(["stats", "--since", "bogus"]) == 2
    assert capsys.readouterr().err == (
        "triage-bot: --since: not a date: 'bogus' (expected YYYY-MM-DD)\n"
    )
    assert not no_settings.exists()
    missing = tmp_path / "no-catalog"
    assert main(["match", "--catalog", str(missing), str(README)]) == 2
    assert capsys.readouterr().err == (
        f"triage-bot: the catalog is invalid (1 problem):\n  {missing}: no such file or folder\n"
    )


def test_doctor_names_an_env_file_that_is_not_text(no_settings, tmp_path, capsys):
    env_file = tmp_path / "binary.env"
    env_file.write_bytes(b"\xff\xfe\x00LOG")
    assert main(["doctor", "--offline", "--env-file", str(env_file)]) == 1
    out = capsys.readouterr().out
    assert f"problem: {env_file}: cannot be read as a settings file: " in out
    directory = tmp_path / "a-folder.env"
    directory.mkdir()
    assert main(["doctor", "--offline", "--env-file", str(directory)]) == 1
    assert f"problem: --env-file {directory}: not a file, so no setting" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [["jobs", "list"], ["stats"], ["serve"]])
def test_a_dotenv_that_is_not_text_is_a_configuration_error(argv, no_settings, tmp_path, capsys):
    (tmp_path / ".env").write_bytes(b"\xff\xfe\x00LOG")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("triage-bot: configuration error: .env cannot be read: ")
    assert not no_settings.exists()
