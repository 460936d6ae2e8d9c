"""`catalog refresh` (issue 26): a catalog that follows its git source incrementally. A small
repository of our own (a working clone pushing to a bare `upstream.git` that stands in for
GitHub, and a bare mirror of it that the bot keeps and fetches) with squash-merge subjects."""

from __future__ import annotations

import io
import json
import shlex
from pathlib import Path

import pytest
from git_project import Project, git, src

from bot.app import Triage
from bot.app.match_report import analysis_json
from bot.catalog.lint import WRITEUP_SITE_CHANGED, lint_catalog
from bot.catalog.loader import load_catalog
from bot.cli import build_parser, main
from bot.cli.doctor.check import FAIL, OK, SKIP, WARN
from bot.cli.doctor.source_check import check_catalog_sources
from bot.cli.match import analyse_input
from bot.cli.refresh import cmd_refresh
from bot.config.settings import Settings, load_catalog_sources
from bot.scan.refresh import (
    STATE_FILE,
    RefreshError,
    RefreshResult,
    Target,
    fetch_source,
    newest_target,
    read_state,
    refresh_catalog,
    supersedes,
)

REPO = "acme/widgets"
ALPHA = "alpha state is broken here"
BETA = "beta value too large: {value}"
GAMMA = "gamma reader lost its input"
GAMMA2 = "gamma reader lost all of its input"
CORE = "crates/widgets-core/src/lib.rs"
IO = "crates/widgets-io/src/read.rs"


def paste(path: str, line: int, message: str) -> bytes:
    return f"thread 'main' panicked at {path}:{line}:5:\n{message}\n".encode()


def answer(catalog: Path, text: bytes) -> dict:
    triage = Triage(load_catalog([catalog]))
    analysis, version = analyse_input(triage, io.BytesIO(text))
    return analysis_json("paste", analysis, triage, version)


def state(catalog: Path) -> dict:
    found = read_state(catalog)
    assert found is not None
    return found


def history_rows(catalog: Path) -> list[dict]:
    return [json.loads(line) for line in (catalog / "history.ndjson").read_text().splitlines()]


@pytest.fixture
def project(tmp_path: Path) -> Project:
    project = Project(tmp_path / "p")
    project.commit("Add alpha (#1)", {CORE: src(ALPHA)})
    project.commit("Add the reader (#2)", {IO: src(GAMMA)}, tag="v0.1.0")
    project.push()
    return project


def refresh(catalog: Path, project: Project) -> RefreshResult:
    return refresh_catalog(catalog, project.mirror, repo=REPO)


def test_a_new_commit_is_scanned_alone_and_answered(project, tmp_path):
    catalog = tmp_path / "catalog"
    first = refresh(catalog, project)
    assert first.mode == "full" and first.live == 2
    assert state(catalog)["tags"] == {"v0.1.0": git(project.work, "rev-parse", "v0.1.0")}

    beta = project.commit("Check beta values (#3)", {CORE: src(ALPHA, BETA)})
    project.push()
    assert answer(catalog, paste(CORE, 5, "beta value too large: 7"))["verdict"] != "match"
    result = refresh(catalog, project)  # fetches the mirror from upstream.git first
    assert result.mode == "incremental"
    assert result.changed_files == 1  # only lib.rs, not the reader
    assert state(catalog)["head"] == beta
    found = answer(catalog, paste(CORE, 5, "beta value too large: 7"))
    assert found["verdict"] == "match"
    assert found["matches"][0]["error_message"] == BETA
    assert found["matches"][0]["answer"]["history"][0]["commit"] == beta
    # The today column moved; the release column did not.
    header, *rows = history_rows(catalog)
    assert [r["version"] for r in header["releases"]] == ["0.1.0", "HEAD"]
    beta_row = next(r for r in rows if r["spans"][0][3] == BETA)
    assert beta_row["lines"] == [0, 5]
    assert refresh(catalog, project).mode == "unchanged"


def test_a_new_tag_extends_every_lineage_as_a_full_build_would(project, tmp_path):
    catalog = tmp_path / "catalog"
    refresh(catalog, project)
    beta = project.commit("Check beta values (#3)", {CORE: src(ALPHA, BETA)})
    project.push()
    refresh(catalog, project)
    project.commit("Release 0.2.0", {"README.md": "0.2"}, tag="v0.2.0")
    project.push()
    result = refresh(catalog, project)
    assert result.mode == "incremental" and result.new_tags == ["v0.2.0"]
    assert result.changed_files == 0  # the tag changed no .rs file since the head scanned
    header, *rows = history_rows(catalog)
    assert [r["version"] for r in header["releases"]] == ["0.1.0", "0.2.0", "HEAD"]
    assert all(len(r["lines"]) == 3 for r in rows)
    beta_row = next(r for r in rows if r["spans"][0][3] == BETA)
    assert beta_row["events"] == [["introduced", "0.2.0", beta]]
    assert header["commits"][beta] == "Check beta values (#3)"

    full = tmp_path / "full"
    assert refresh_catalog(full, project.mirror, repo=REPO).mode == "full"
    assert history_rows(full) == [header, *rows]
    for name in ("panic_sites.jsonl", "removed_sites.jsonl"):
        assert (full / name).read_text() == (catalog / name).read_text()


def test_a_removed_site_stays_current_until_a_release_drops_it(project, tmp_path):
    catalog = tmp_path / "catalog"
    refresh(catalog, project)
    gone = project.commit("Fix the reader crash (#4)", {IO: src()})
    project.push()
    refresh(catalog, project)
    live = (catalog / "panic_sites.jsonl").read_text()
    assert GAMMA in live  # 0.1.0 still has it: current for users of that release
    assert GAMMA not in (catalog / "removed_sites.jsonl").read_text()

    project.commit("Release 0.2.0", {"README.md": "0.2"}, tag="v0.2.0")
    project.push()
    refresh(catalog, project)
    assert GAMMA not in (catalog / "panic_sites.jsonl").read_text()
    found = answer(catalog, paste(IO, 2, GAMMA))
    assert found["verdict"] == "removed-site"
    history = found["matches"][0]["answer"]["history"]
    assert history[-1]["event"] == "fixed"
    assert history[-1]["commit"] == gone and history[-1]["pr"] == 4
    assert history[-1]["version"] == "0.2.0"


def test_a_force_push_falls_back_to_a_full_build(project, tmp_path, capsys):
    catalog = tmp_path / "catalog"
    project.commit("Check beta values (#3)", {CORE: src(ALPHA, BETA)})
    project.push()
    argv = ["catalog", "refresh", "--catalog", str(catalog), "--source", str(project.mirror)]
    assert main([*argv, "--repo", REPO]) == 0
    assert "full build" in capsys.readouterr().err
    git(project.work, "reset", "-q", "--hard", "v0.1.0")
    project.commit("Check gamma input (#5)", {IO: src(GAMMA2)})
    project.push(force=True)
    assert main(argv) == 0  # the repo is remembered in refresh.state
    err = capsys.readouterr().err
    assert "full build (force-push:" in err
    live = (catalog / "panic_sites.jsonl").read_text()
    assert BETA not in live and GAMMA2 in live
    assert not list(catalog.glob(".*.tmp"))
    assert (catalog / STATE_FILE).is_file()


def test_write_ups_stay_attached_and_a_changed_site_is_flagged(project, tmp_path):
    catalog = tmp_path / "catalog"
    refresh(catalog, project)
    gamma_id = next(
        json.loads(line)["id"]
        for line in (catalog / "panic_sites.jsonl").read_text().splitlines()
        if GAMMA in line
    )
    (catalog / "writeups").mkdir()
    writeup = catalog / "writeups" / f"{gamma_id}.json"
    writeup.write_text(
        json.dumps({"id": gamma_id, "documentation": "The reader's input ended early."})
    )
    refresh(catalog, project)  # nothing new; the write-up's baseline is taken
    project.commit("Reword the reader (#6)", {IO: src(GAMMA2)})
    project.push()
    result = refresh(catalog, project)
    assert result.review == [f"{gamma_id}: message-changed"]
    loaded = load_catalog([catalog])
    record = loaded.get(gamma_id)
    assert record is not None and record.error_message == GAMMA2
    assert record.documentation == "The reader's input ended early."
    codes = [(f.record_id, f.code) for f in lint_catalog(loaded)]
    assert (gamma_id, WRITEUP_SITE_CHANGED) in codes
    # A person edits the write-up: reviewed, the flag goes at the next refresh.
    writeup.write_text(
        json.dumps({"id": gamma_id, "documentation": "The reader's input ended too early."})
    )
    assert refresh(catalog, project).review == []
    codes = [(f.record_id, f.code) for f in lint_catalog(load_catalog([catalog]))]
    assert (gamma_id, WRITEUP_SITE_CHANGED) not in codes


def test_the_catalog_source_comes_from_triage_config_and_doctor_checks_it(
    project, tmp_path, monkeypatch, capsys
):
    catalog = tmp_path / "catalog"
    config = tmp_path / "triage-bot.toml"
    config.write_text(
        f'[catalog_source.widgets]\ncatalog = "{catalog}"\ngit_dir = "{project.mirror}"\n'
        f'branch = "main"\ntags = "^v\\\\d+\\\\.\\\\d+\\\\.\\\\d+$"\nrepo = "{REPO}"\n'
    )
    unserved = Settings.from_mapping({"TRIAGE_CONFIG": str(config)})
    (source,) = load_catalog_sources(unserved.triage_config)
    assert (source.branch, source.repo, source.poll_interval) == ("main", REPO, 900.0)
    check = check_catalog_sources(unserved)
    assert check.status == WARN and "is not in TRIAGE_CATALOG" in check.details[0]
    catalog.mkdir()
    settings = Settings.from_mapping(
        {"TRIAGE_CONFIG": str(config), "TRIAGE_CATALOG": str(tmp_path)}
    )
    check = check_catalog_sources(settings)
    assert check.status == OK, check.details
    assert "main at" in check.details[0] and "1 release tag(s)" in check.details[0]
    assert "not built yet" in check.details[0]

    monkeypatch.chdir(tmp_path)  # no .env here
    monkeypatch.setenv("TRIAGE_CONFIG", str(config))
    assert main(["catalog", "refresh", "--no-fetch"]) == 0
    assert "refresh: acme/widgets at v0.1.0+" in capsys.readouterr().err
    assert "built at v0.1.0+" in check_catalog_sources(settings).details[0]

    config.write_text(f'[catalog_source.widgets]\ncatalog = "{catalog}"\ngit_dir = "{tmp_path}"\n')
    check = check_catalog_sources(settings)
    assert check.status == FAIL and "is not a git repository" in check.details[0]
    config.write_text('[catalog_source.widgets]\ncatalog = "x"\ngit_dir = "y"\ncolour = 1\n')
    check = check_catalog_sources(settings)
    assert check.status == FAIL and "unknown key colour" in check.summary
    config.write_text("[labels]\n")
    assert check_catalog_sources(settings).status == SKIP


def test_the_image_has_git_for_following_a_repository():
    text = (Path(__file__).parent.parent / "deploy" / "Dockerfile").read_text()
    final = text.split("\nFROM ")[-1]
    assert "apt-get install -y --no-install-recommends git" in final


def test_replicas_agree_on_the_newest_target(project, tmp_path):
    old = newest_target(project.mirror, None, None)
    assert old.head == git(project.work, "rev-parse", "HEAD") and list(old.tags) == ["v0.1.0"]
    assert Target.from_json(old.to_json()) == old and Target.from_json("{}") is None
    assert supersedes(project.mirror, old, None) and not supersedes(project.mirror, old, old)
    project.commit("Check beta values (#3)", {CORE: src(ALPHA, BETA)}, tag="v0.2.0")
    project.push()
    fetch_source(project.mirror)
    new = newest_target(project.mirror, "main", None)
    assert supersedes(project.mirror, new, old)  # ahead: published
    assert not supersedes(project.mirror, old, new)  # behind: this replica fetched earlier
    untagged = Target(new.head, {"v0.1.0": old.tags["v0.1.0"]})
    assert supersedes(project.mirror, new, untagged)  # a new tag at the same head
    assert not supersedes(project.mirror, untagged, new)
    # A target is built exactly, whatever is newer in the clone.
    catalog = tmp_path / "catalog"
    result = refresh_catalog(catalog, project.mirror, repo=REPO, fetch=False, pinned=old)
    assert result.version == old.version == state(catalog)["version"]
    assert BETA not in (catalog / "panic_sites.jsonl").read_text()
    with pytest.raises(RefreshError, match="lacks commit"):
        refresh_catalog(catalog, project.mirror, fetch=False, pinned=Target("ab" * 20, {}))


def test_a_project_without_releases_follows_its_branch(tmp_path):
    project = Project(tmp_path / "p")
    project.commit("Add alpha (#1)", {CORE: src(ALPHA)})
    project.push()
    catalog = tmp_path / "catalog"
    assert refresh(catalog, project).mode == "full"
    project.commit("Check beta values (#3)", {CORE: src(ALPHA, BETA)})
    project.commit("Drop alpha (#4)", {CORE: src(BETA)})
    project.push()
    result = refresh(catalog, project)
    assert (result.mode, result.changed_files, result.tags) == ("incremental", 1, [])
    header, *rows = history_rows(catalog)
    assert [r["version"] for r in header["releases"]] == ["HEAD"]
    assert [r["spans"][0][3] for r in rows] == [BETA]  # no release keeps alpha
    assert result.version.startswith("-+")


def test_a_written_up_site_that_leaves_the_code_is_flagged_and_kept(project, tmp_path):
    catalog = tmp_path / "catalog"
    refresh(catalog, project)
    gamma_id = next(
        json.loads(line)["id"]
        for line in (catalog / "panic_sites.jsonl").read_text().splitlines()
        if GAMMA in line
    )
    writeup = catalog / "writeups" / f"{gamma_id}.json"
    writeup.parent.mkdir()
    writeup.write_text(json.dumps({"id": gamma_id, "documentation": "The input ended early."}))
    refresh(catalog, project)
    project.commit("Drop the reader (#7)", {IO: None})
    project.commit("Release 0.2.0", {"README.md": "0.2"}, tag="v0.2.0")
    project.push()
    assert refresh(catalog, project).review == [f"{gamma_id}: site-gone"]
    record = load_catalog([catalog]).get(gamma_id)
    assert record is not None and record.removed_at and record.documentation
    assert "writeup-review:site-gone" in (catalog / "removed_sites.jsonl").read_text()
    writeup.write_text(json.dumps({"id": gamma_id, "documentation": "Gone since 0.2.0."}))
    assert refresh(catalog, project).review == []
    assert "writeup-review:" not in (catalog / "removed_sites.jsonl").read_text()


def test_the_action_workflow_refreshes_and_opens_one_pull_request():
    yaml = pytest.importorskip("yaml")
    path = (
        Path(__file__).parent.parent / "deploy" / "github-action" / "refresh-catalog-workflow.yml"
    )
    workflow = yaml.safe_load(path.read_text())
    on = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert "schedule" in on and "workflow_dispatch" in on
    assert workflow["permissions"] == {"contents": "write", "pull-requests": "write"}
    [job] = workflow["jobs"].values()
    runs = [s["run"] for s in job["steps"] if "run" in s]
    [command] = [r for r in runs if r.startswith("triage-bot catalog refresh")]
    words = shlex.split(command.replace("${{", "").replace("}}", ""))[1:]
    args = build_parser().parse_args(words)
    assert args.handler is cmd_refresh and args.no_fetch and args.source == "."
    [pull] = [s for s in job["steps"] if s.get("uses", "").startswith("peter-evans/")]
    assert pull["with"]["branch"] == "panic-triage/catalog-refresh"  # one pull request, updated


def test_an_interrupted_refresh_is_followed_by_a_full_build(project, tmp_path):
    catalog = tmp_path / "catalog"
    refresh(catalog, project)
    saved = (catalog / STATE_FILE).read_text()
    project.commit("Release 0.2.0", {"README.md": "0.2"}, tag="v0.2.0")
    project.push()
    refresh(catalog, project)
    (catalog / STATE_FILE).write_text(saved)  # as if it stopped before the state file
    result = refresh(catalog, project)
    assert result.mode == "full" and "disagree" in result.reason
    assert result.tags == ["v0.1.0", "v0.2.0"]
