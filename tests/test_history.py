"""Lineages across release tags, on small git repositories built (and tagged) by each test."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from bot.cli import main
from bot.scan.lineages import (
    SiteAt,
    build_history,
    link_releases,
    link_sites,
    message_similarity,
    path_affinity,
    release_tags,
    version_key,
    version_of,
)

REPO = "acme/widgets"


def _git(root: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(root),
        "PATH": "/usr/bin:/bin:/usr/local/bin",
    }
    done = subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, text=True, env=env
    )
    return done.stdout.strip()


class TaggedRepo:
    """A git repository whose releases are written as {path: source} trees."""

    def __init__(self, root: Path):
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        _git(root, "init", "-q", "-b", "main")

    def release(self, tag: str | None, files: dict[str, str]) -> str:
        for old in self.root.rglob("*.rs"):
            old.unlink()
        for path, text in files.items():
            target = self.root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        _git(self.root, "add", "-A")
        _git(self.root, "commit", "-q", "--allow-empty", "-m", tag or "head")
        if tag:
            _git(self.root, "tag", tag)
        return _git(self.root, "rev-parse", "HEAD")


def _fn(name: str, *messages: str, pad: int = 0) -> str:
    body = "\n".join(f'    panic!("{m}");' for m in messages)
    return "\n" * pad + f"pub fn {name}() {{\n{body}\n}}\n"


def _history(repo: TaggedRepo, head: bool = False):
    tags = release_tags(repo.root)
    return build_history(repo.root, REPO, tags=tags, head_ref="HEAD" if head else None)


def _find(history, message_part: str):
    found = [
        lin
        for lin in history.lineages
        if any(message_part in s.message for s in lin.states.values())
    ]
    assert len(found) == 1, [lin.states for lin in found]
    return found[0]


def _versions(history, lineage) -> list[str]:
    return [history.releases[r].version for r in lineage.present_in()]


def test_a_file_move_and_a_crate_split_keep_one_lineage(tmp_path):
    repo = TaggedRepo(tmp_path / "r")
    message = "Should have handle for tensor {:?}"
    repo.release("v0.1.0", {"crates/core-tensor/src/repr/handle.rs": _fn("get_handle", message)})
    repo.release("v0.2.0", {"crates/core-ir/src/handle.rs": _fn("get_handle", message, pad=10)})
    history = _history(repo)
    lineage = _find(history, "Should have handle")
    assert _versions(history, lineage) == ["0.1.0", "0.2.0"]
    assert lineage.states[0].file_path == "crates/core-tensor/src/repr/handle.rs"
    assert (lineage.states[1].file_path, lineage.states[1].line) == (
        "crates/core-ir/src/handle.rs",
        12,
    )
    assert len(history.lineages) == 1


def test_a_message_edit_and_a_move_with_an_edit_keep_one_lineage(tmp_path):
    repo = TaggedRepo(tmp_path / "r")
    repo.release(
        "v0.1.0", {"crates/a/src/ops.rs": _fn("float_cat", "Can't concatenate tensors {:?}")}
    )
    repo.release(
        "v0.2.0", {"crates/a/src/ops.rs": _fn("float_cat", "Can't concatenate the tensors {:?}")}
    )
    repo.release(
        "v0.3.0",
        {"crates/b/src/ops.rs": _fn("float_cat", "Cannot concatenate the tensors {tensors:?}")},
    )
    history = _history(repo)
    assert len(history.lineages) == 1
    lineage = history.lineages[0]
    assert [s.message for s in lineage.states.values()] == [
        "Can't concatenate tensors {:?}",
        "Can't concatenate the tensors {:?}",
        "Cannot concatenate the tensors {tensors:?}",
    ]


def test_a_message_that_grew_stays_in_its_lineage(tmp_path):
    repo = TaggedRepo(tmp_path / "r")
    repo.release("v0.1.0", {"crates/a/src/x.rs": _fn("f", "Ordering is bigger than operations")})
    repo.release(
        "v0.2.0",
        {
            "crates/a/src/x.rs": _fn(
                "f", "Ordering is bigger than operations: ordering len {}, operations len {}"
            )
        },
    )
    history = _history(repo)
    assert len(history.lineages) == 1
    assert message_similarity("Bad shape given", "Bad shape given {shape:?} for tensor") >= 90


def test_repeated_messages_pair_by_enclosing_function_not_by_line(tmp_path):
    repo = TaggedRepo(tmp_path / "r")
    first = (
        _fn("alpha", "Not supported") + _fn("beta", "Not supported") + _fn("gamma", "Not supported")
    )
    # `alpha` is removed and `gamma` moves above `beta`: raw lines and order both mislead.
    second = _fn("gamma", "Not supported") + _fn("beta", "Not supported")
    repo.release("v0.1.0", {"crates/a/src/x.rs": first})
    repo.release("v0.2.0", {"crates/a/src/x.rs": second})
    history = _history(repo)
    by_fn = {lin.states[0].function: lin for lin in history.lineages}
    assert set(by_fn) == {"alpha", "beta", "gamma"}
    assert 1 not in by_fn["alpha"].states  # removed in 0.2.0
    assert by_fn["beta"].states[1].function == "beta"
    assert by_fn["gamma"].states[1].function == "gamma"
    assert by_fn["gamma"].states[1].line == 2


def test_removal_and_reappearance(tmp_path):
    repo = TaggedRepo(tmp_path / "r")
    kept = _fn("keep", "The device is lost for good")
    flaky = _fn("flaky", "Client already created for device {:?}")
    repo.release("v0.1.0", {"crates/a/src/x.rs": kept + flaky})
    repo.release("v0.2.0", {"crates/a/src/x.rs": kept})
    repo.release("v0.3.0", {"crates/a/src/x.rs": kept + flaky})
    repo.release(None, {"crates/a/src/x.rs": kept})
    history = _history(repo, head=True)
    lineage = _find(history, "Client already created")
    assert _versions(history, lineage) == ["0.1.0", "0.3.0"]
    assert [r.version for r in history.releases] == ["0.1.0", "0.2.0", "0.3.0", "HEAD"]
    assert len(history.lineages) == 2


def test_unrelated_sites_in_other_files_are_not_linked():
    old = [SiteAt("crates/a/src/x.rs", 3, "panic!", "Not supported", "f")]
    new = [SiteAt("crates/b/src/y.rs", 9, "panic!", "Not supported", "g")]
    assert link_sites(old, new) == []  # short message, nothing else in common
    new = [SiteAt("crates/b/src/x.rs", 9, "panic!", "Not supported", "g")]
    assert [how for _, _, how in link_sites(old, new)] == ["moved"]  # same file name
    assert path_affinity("a/src/repr/handle.rs", "b/src/handle.rs") > 0
    assert path_affinity("a/src/x.rs", "b/src/y.rs") == 0


def test_a_functions_only_reworded_site_is_linked_even_far_from_its_wording():
    """rust-analyzer 2025-07: `erased_ast_id` gained a word and lost a clause in one edit
    (ratio 69, below the file's edit cutoff) while `get` in the same file was reworded too;
    each function's only unpaired old and new sites are one lineage."""
    path = "crates/span/src/ast_id.rs"
    old = [
        SiteAt(path, 226, "panic!", "Can't find {:?} in IdMap:\n{:?}\n source text: {}", "erased"),
        SiteAt(path, 204, "panic!", "Can't find {:?} in IdMap:\n{:?}", "get"),
    ]
    new = [
        SiteAt(path, 720, "panic!", "Can't find SyntaxNodePtr {:?} in IdMap:\n{:?}", "erased"),
        SiteAt(path, 747, "panic!", "Can't find ast id {:?} in IdMap:\n{:?}", "get"),
    ]
    assert sorted((i, j) for i, j, _ in link_sites(old, new)) == [(0, 0), (1, 1)]
    # A function's one removed and one new site that share little are not one site.
    old = [SiteAt(path, 10, "panic!", "Can't find {:?} in IdMap: {:?}", "erased")]
    new = [SiteAt(path, 12, "panic!", "the node kind was not expected here", "erased")]
    assert link_sites(old, new) == []


def test_a_functions_only_site_reworded_around_the_same_words_is_linked():
    """ratatui 0.28: `Buffer::index_of`'s check was rewritten from `Trying to access position
    outside the buffer: ..` to `index outside of buffer: ..` (ratio 43: the words moved) and
    clap 4.2 reworded `ArgAction::Count is defaulted` as it moved its file to clap_builder:
    each function's only unpaired sites, sharing their words, are one lineage. Two short
    messages sharing only `Failed to` are not."""
    old = [
        SiteAt(
            "src/buffer/buffer.rs",
            138,
            "debug_assert!",
            "Trying to access position outside the buffer: x={x}, y={y}, area={:?}",
            "index_of",
        )
    ]
    new = [
        SiteAt(
            "src/buffer/buffer.rs",
            238,
            "panic!",
            "index outside of buffer: the area is {area:?} but index is ({x}, {y})",
            "index_of",
        )
    ]
    assert link_sites(old, new) == [(0, 0, "edited")]
    old = [
        SiteAt(
            "src/parser/matches/arg_matches.rs",
            9,
            "panic!",
            "ArgAction::Count is defaulted",
            "get_count",
        )
    ]
    new = [
        SiteAt(
            "clap_builder/src/parser/matches/arg_matches.rs",
            9,
            "panic!",
            "arg `{id}`'s `ArgAction` should be `Count` which should provide a default",
            "get_count",
        )
    ]
    assert link_sites(old, new) == [(0, 0, "moved-edited")]
    old = [
        SiteAt("a/src/compute/server.rs", 9, ".expect", "Failed to write to staging buffer.", "get")
    ]
    new = [SiteAt("b/src/compute/server.rs", 9, ".expect", "Failed to find resource", "get")]
    assert link_sites(old, new) == []


def test_a_functions_only_site_moved_to_another_crate_and_reworded_is_linked():
    """typst 0.13: `linebreak.rs` left `crates/typst/src/layout/inline/` for
    `crates/typst-layout/src/inline/` in the release that reworded its one site of
    `linebreak_optimized_bounded` (`paragraph` to `inline`, ratio 78): one lineage, so a
    0.12 paste is answered with today's site. A file every crate has (`src/lib.rs`) says
    nothing of where it went."""
    old = [
        SiteAt(
            "crates/typst/src/layout/inline/linebreak.rs",
            324,
            "panic!",
            "bounded paragraph layout is incomplete",
            "linebreak_optimized_bounded",
        )
    ]
    new = [
        SiteAt(
            "crates/typst-layout/src/inline/linebreak.rs",
            315,
            "panic!",
            "bounded inline layout is incomplete",
            "linebreak_optimized_bounded",
        )
    ]
    assert link_sites(old, new) == [(0, 0, "moved-edited")]
    old = [
        SiteAt("crates/a/src/lib.rs", 9, "panic!", "bounded paragraph layout is incomplete", "f")
    ]
    new = [SiteAt("crates/b/src/lib.rs", 9, "panic!", "bounded inline layout is incomplete", "f")]
    assert link_sites(old, new) == []


def test_test_code_and_test_helper_crates_are_left_out(tmp_path):
    repo = TaggedRepo(tmp_path / "r")
    repo.release(
        "v0.1.0",
        {
            "crates/a/src/x.rs": _fn("f", "Runtime panic message here")
            + '#[cfg(test)]\nmod tests {\n    fn t() { panic!("In a unit test module"); }\n}\n',
            "crates/a-no-std-tests/src/lib.rs": _fn("g", "A test helper crate's panic"),
            "crates/a/tests/it.rs": _fn("h", "An integration test's panic"),
            "xtask/src/main.rs": _fn("k", "A build task's panic"),
            "crates/a/src/empty.rs": 'fn e() { panic!(""); }\n',
            # Helper crates nested in a crate, or a top-level benchmark's build script.
            "crates/a/multinode-tests/src/bin/node.rs": _fn("m", "A nested test crate's panic"),
            "crates/a/model-checks/net/src/main.rs": _fn("n", "A model check's own panic"),
            "backend-comparison/build.rs": _fn("b", "A benchmark build script's panic"),
            # A crate that keeps its files without `src/` is runtime code.
            "tool/lib.rs": _fn("t", "A src-less crate's runtime panic"),
        },
    )
    history = _history(repo)
    assert sorted(lin.states[0].message for lin in history.lineages) == [
        "A src-less crate's runtime panic",
        "Runtime panic message here",
    ]


def test_link_releases_is_pure_and_ids_follow_the_last_state():
    v1 = [SiteAt("crates/a/src/x.rs", 1, "panic!", "Some specific message text", "f")]
    v2 = [SiteAt("crates/a/src/y.rs", 5, "panic!", "Some specific message text", "f")]
    lineages = link_releases([v1, v2])
    assert len(lineages) == 1 and sorted(lineages[0].states) == [0, 1]


def test_release_tags_sort_by_version_and_skip_other_tags(tmp_path):
    repo = TaggedRepo(tmp_path / "r")
    for tag in ("v0.10.0", "v0.9.0", "v0.10.0-book", "v0.11.0-pre.1", "v0.9.1"):
        repo.release(tag, {"crates/a/src/x.rs": _fn("f", f"message for {tag}")})
    assert release_tags(repo.root) == ["v0.9.0", "v0.9.1", "v0.10.0"]
    assert release_tags(repo.root, r"^v\d+\.\d+\.\d+(-pre\.\d+)?$")[-1] == "v0.11.0-pre.1"
    assert version_key("v0.11.0-pre.1") < version_key("v0.11.0")


def test_release_tags_of_a_monorepo_crate_a_calendar_and_a_date_name_their_version() -> None:
    assert [version_of(t) for t in ("tokio-1.38.0", "tokio-util-0.7.0", "rs-0.40.0")] == [
        "1.38.0",
        "0.7.0",
        "0.40.0",
    ]
    # release-plz's crate tags put a `v` after the crate's name
    assert [version_of(t) for t in ("ratatui-v0.30.0", "ratatui-core-v0.1.2")] == [
        "0.30.0",
        "0.1.2",
    ]
    assert version_key("ratatui-v0.30.0") > version_key("v0.29.0")
    assert [version_of(t) for t in ("25.01", "24.07.1", "2024-07-01", "HEAD")] == [
        "25.01",
        "24.07.1",
        "2024-07-01",
        "HEAD",
    ]
    calendar = ["25.01", "22.12", "24.07.1", "24.07"]
    assert sorted(calendar, key=version_key) == ["22.12", "24.07", "24.07.1", "25.01"]
    dated = ["2024-07-01", "2023-12-25", "2024-01-08"]
    assert sorted(dated, key=version_key) == ["2023-12-25", "2024-01-08", "2024-07-01"]
    assert version_key("tokio-1.9.0") < version_key("tokio-1.10.0")


def test_release_tags_behind_a_folder_or_a_package_name_name_their_version() -> None:
    # a tool's own tags in a monorepo (`cli/v1.9.4`) and changesets' package tags
    tags = ["@acme/tool@2.3.10", "cli/v1.9.4", "@acme/tool@2.3.2", "cli/v1.10.0", "tool@0.4.0"]
    assert [version_of(t) for t in tags] == ["2.3.10", "1.9.4", "2.3.2", "1.10.0", "0.4.0"]
    assert sorted(tags, key=version_key) == [
        "tool@0.4.0",
        "cli/v1.9.4",
        "cli/v1.10.0",
        "@acme/tool@2.3.2",
        "@acme/tool@2.3.10",
    ]
    # a folder or a name alone is no version
    assert [version_of(t) for t in ("release/next", "tool@latest")] == [
        "release/next",
        "tool@latest",
    ]


def test_history_command_writes_lineages_and_records_that_validate(tmp_path, capsys):
    repo = TaggedRepo(tmp_path / "r")
    first = repo.release(
        "v0.1.0",
        {
            "crates/a/src/x.rs": _fn("f", "The first panic message is here")
            + _fn("g", "A panic that goes away later"),
        },
    )
    second = repo.release(
        "v0.2.0", {"crates/b/src/x.rs": _fn("f", "The first panic message is here")}
    )
    head = repo.release(
        None, {"crates/b/src/x.rs": _fn("f", "The first panic message is here", pad=2)}
    )
    out = tmp_path / "out"
    code = main(
        ["catalog", "history", str(repo.root), "--repo", REPO, "--include-head", "--out", str(out)]
    )
    assert code == 0
    err = capsys.readouterr().err
    assert "history: 0.1.0" in err and "3 releases, 2 lineages" in err
    rows = [json.loads(line) for line in (out / "history.ndjson").read_text().splitlines()]
    assert rows[0]["releases"] == [
        {"version": "0.1.0", "tag": "v0.1.0", "commit": first},
        {"version": "0.2.0", "tag": "v0.2.0", "commit": second},
        {"version": "HEAD", "tag": None, "commit": head},
    ]
    moved = next(r for r in rows[1:] if r["spans"][0][3].startswith("The first"))
    assert moved["spans"] == [
        [0, 0, "crates/a/src/x.rs", "The first panic message is here", "panic!"],
        [1, 2, "crates/b/src/x.rs", "The first panic message is here", "panic!"],
    ]
    assert moved["lines"] == [2, 2, 4]
    live = [json.loads(x) for x in (out / "panic_sites.jsonl").read_text().splitlines()]
    gone = [json.loads(x) for x in (out / "removed_sites.jsonl").read_text().splitlines()]
    assert [r["id"] for r in live] == [moved["lineage"]]
    assert live[0]["githubUrl"].endswith(f"/{head}/crates/b/src/x.rs#L4")
    assert gone[0]["tags"][-3:] == [
        f"removed-at:{second}",
        "removed-in:0.2.0",
        "last-seen-in:0.1.0",
    ]
    assert gone[0]["analyzedSha"] == first
    assert main(["catalog", "validate", str(out)]) == 0


def test_history_command_refuses_a_folder_that_is_not_a_repository(tmp_path, capsys):
    code = main(["catalog", "history", str(tmp_path), "--repo", REPO, "--out", str(tmp_path / "o")])
    assert code == 2
    assert "not a git repository" in capsys.readouterr().err


@pytest.mark.parametrize("bad", ["nope", "a/b/c"])
def test_history_command_checks_the_repo_name(tmp_path, capsys, bad):
    assert main(["catalog", "history", str(tmp_path), "--repo", bad, "--out", str(tmp_path)]) == 2
