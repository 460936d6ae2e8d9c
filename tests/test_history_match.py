"""Matching and answering with the bundled catalog's release history (issue 12).

The first three texts are the pastes quoted in the issue (real user reports; burn's tracker):
an old crate layout with a garbled message, a crate that left the repository, and a check that
was removed from burn-cubecl.
"""

from __future__ import annotations

import json
from functools import cache

import pytest
from test_project_corpora import project_triage

from bot.app import Triage, load_bundled
from bot.app.match_report import analysis_json
from bot.core.match.releases import (
    _quality,
    message_consistent,
    pasted_crate_file,
    version_in_text,
)
from bot.render.answer.build import build_answer
from bot.render.terminal import render_text

GARBLED_OLD_LAYOUT = (
    "thread '<unnamed>' panicked at /home/u/.cargo/registry/src/"
    "index.crates.io-6f17d22bba15001f/burn-tensor-0.16.0/src/repr/handle.rs:73:32:\n"
    "│ ▏ │ handle for tensor TensorId { value: 560132 }\n"
)
GONE_CRATE = (
    "thread 'main' panicked at C:\\Users\\u\\burn\\burn-compute\\src\\compute.rs:77:17:\n"
    "Client already created for device BestAvailable\n"
)
REMOVED_CHECK = (
    "thread 'main' panicked at /home/u/.cargo/registry/src/"
    "index.crates.io-6f17d22bba15001f/burn-cubecl-0.18.0/src/ops/float_ops.rs:250:9:\n"
    "Data type mismatch (lhs: F32, rhs: F16)\n"
)


@cache
def _triage() -> Triage:
    return Triage.from_paths()


def _json(text: str) -> dict:
    triage = _triage()
    return analysis_json(
        "paste", triage.analyse(text), triage, text_version=version_in_text(text, {"burn"})
    )


def test_the_bundled_catalog_has_its_history():
    history = load_bundled().history
    assert history is not None and history.repo == "tracel-ai/burn"
    versions = [r.version for r in history.releases]
    assert versions[0] == "0.13.0" and versions[-1] == "HEAD"
    assert all(len(r.commit) == 40 for r in history.releases)


def test_an_old_layout_with_a_garbled_message_is_answered_from_its_release():
    out = _json(GARBLED_OLD_LAYOUT)
    assert out["verdict"] == "match"
    best = out["matches"][0]
    assert (best["file_path"], best["error_message"]) == (
        "crates/burn-ir/src/handle.rs",
        "Should have handle for tensor {id:?}",
    )
    assert "release" in best["evidence"] and "line" in best["evidence"]
    assert best["release"]["version"] == "0.16.0"
    assert best["release"]["file_path"] == "crates/burn-tensor/src/repr/handle.rs"
    assert best["release"]["line"] == 73
    assert "/blob/dd628ec91c8dafa7f5767d85f822d46dec8f4707/" in best["release"]["url"]
    assert best["current"]["file_path"] == "crates/burn-ir/src/handle.rs"


def test_a_crate_that_left_the_repository_is_answered_as_its_own_removed_site():
    out = _json(GONE_CRATE)
    assert out["verdict"] == "removed-site"
    best = out["matches"][0]
    assert best["file_path"] == "crates/burn-compute/src/compute.rs"
    assert best["removed_in"] == "0.14.0" and best["last_seen_in"] == "0.13.2"
    assert best["compare_url"] == "https://github.com/tracel-ai/burn/compare/v0.13.2...v0.14.0"


def test_a_check_removed_from_its_crate_is_not_answered_as_another_crates_site():
    out = _json(REMOVED_CHECK)
    assert out["verdict"] == "removed-site"
    best = out["matches"][0]
    assert best["file_path"].startswith("crates/burn-cubecl/")
    assert "release" in best["evidence"] and "crate" in best["evidence"]
    assert best["release"]["version"] == "0.18.0"
    assert best["last_seen_in"] and best["removed_in"]


def test_the_same_message_from_a_crate_that_never_held_it_is_not_confident():
    text = (
        "thread 'main' panicked at /home/u/.cargo/registry/src/"
        "index.crates.io-6f17d22bba15001f/burn-train-0.18.0/src/learner/base.rs:120:9:\n"
        "Data type mismatch (lhs: F32, rhs: F16)\n"
    )
    out = _json(text)
    assert out["verdict"] == "uncatalogued-panic"
    assert out["matches"] == []


def test_a_current_paste_is_answered_as_before():
    text = (
        "thread 'main' panicked at crates/burn-ir/src/handle.rs:97:32:\n"
        "Should have handle for tensor TensorId { value: 3 }\n"
    )
    out = _json(text)
    assert out["verdict"] == "match"
    best = out["matches"][0]
    assert best["file_path"] == "crates/burn-ir/src/handle.rs"
    assert "removed_in" not in best


def test_the_answer_says_where_the_panic_was_then_and_is_now():
    triage = _triage()
    answer = build_answer(
        triage.analyse(GARBLED_OLD_LAYOUT), triage.catalog, history=triage.history
    )
    text = render_text(answer, color=False)
    assert (
        "This panic was raised at 0.16.0 burn-tensor handle.rs:73 (https://github.com/tracel-ai/"
        "burn/blob/dd628ec91c8dafa7f5767d85f822d46dec8f4707/crates/burn-tensor/src/repr/handle.rs"
        "#L73); today it lives at burn-ir handle.rs:97 ("
    ) in text
    assert (
        "https://github.com/tracel-ai/burn/blob/dd628ec91c8dafa7f5767d85f822d46dec8f4707/" in text
    )


def test_the_answer_to_a_removed_site_says_when_it_left():
    triage = _triage()
    answer = build_answer(triage.analyse(GONE_CRATE), triage.catalog, history=triage.history)
    text = render_text(answer, color=False)
    # Why, from the commit that removed it (issue 24), then when, with labelled links.
    assert (
        "burn-compute was removed in #2041 (https://github.com/tracel-ai/burn/pull/2041) (0.14.0). "
        "This panic was removed in burn 0.14.0 (last seen in 0.13.2); what changed: "
        "v0.13.2…v0.14.0 (https://github.com/tracel-ai/burn/compare/v0.13.2...v0.14.0)."
    ) in text
    assert "upgrading may fix it" not in text


@pytest.mark.parametrize(
    ("text", "version"),
    [
        ('[[package]]\nname = "burn-core"\nversion = "0.16.1"\n', "0.16.1"),
        ("I am on burn 0.18 with wgpu", "0.18"),
        ('burn = { version = "0.17.0", features = ["wgpu"] }', "0.17.0"),
        ("no version here", None),
        ("I am on tokio 1.38 with burn", None),  # another project's version
        ("aburn 0.18 is not burn", None),
        # a registry path in a frame or a crash report's payload, Unix or Windows
        ('"filename": "/root/.cargo/registry/src/x/burn-core-0.16.1/src/lib.rs"', "0.16.1"),
        (r"at C:\Users\me\.cargo\registry\src\x\burn-0.17.0\src\lib.rs:3", "0.17.0"),
        ("/cargo/registry/src/x/aburn-0.18.0/src/lib.rs", None),
    ],
)
def test_version_in_text(text, version):
    assert version_in_text(text, {"burn"}) == version


@pytest.mark.parametrize(
    ("text", "version"),
    [
        ('[[package]]\nname = "tokio-util"\nversion = "0.7.11"\n', "0.7.11"),
        ("Using Tokio 1.38.0 on Linux", "1.38.0"),
        ('tokio = { version = "1.40", features = ["full"] }', "1.40"),
        ("I am on burn 0.18", None),
    ],
)
def test_the_version_of_any_project_is_read_by_its_name(text, version):
    assert version_in_text(text, {"tokio"}) == version


def test_pasted_paths_name_their_crate():
    crates = {"burn-tensor", "burn-compute"}
    assert pasted_crate_file("/r/burn-tensor-0.16.0/src/repr/handle.rs", crates) == (
        "burn-tensor",
        "src/repr/handle.rs",
    )
    assert pasted_crate_file("C:\\u\\burn\\burn-compute\\src\\compute.rs", crates) == (
        "burn-compute",
        "src/compute.rs",
    )
    assert pasted_crate_file("/home/u/my-app/src/main.rs", crates) is None


def test_garbled_messages_are_recognised_but_other_messages_are_not():
    fmt = "Should have handle for tensor {:?}"
    assert message_consistent("handle for tensor TensorId { value: 560132 }", fmt)
    assert message_consistent("Should have handle for tensor TensorId { value: 1 }", fmt)
    assert not message_consistent("Client already created for device Cpu", fmt)


def test_json_stays_one_line_per_input():
    assert "\n" not in json.dumps(_json(GONE_CRATE))


def test_a_generic_message_from_a_released_crate_that_never_held_it_is_not_answered():
    # burn-dataset 0.19.0 has no `Should read data` site in any release; burn-dispatch has.
    text = (
        "thread 'main' panicked at /home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f/"
        "burn-dataset-0.19.0/src/source/huggingface/downloader.rs:300:14:\nShould read data\n"
    )
    out = _json(text)
    assert out["verdict"] == "uncatalogued-panic"


def test_a_removed_site_never_outranks_a_live_one_sharing_its_message():
    # `Tensors are not approx eq:{}` was burn-tensor's (removed); burn-std's is live today.
    text = (
        "thread 'main' panicked at crates/burn-wgpu/src/lib.rs:127:5:\n"
        "Tensors are not approx eq:\n  => Position 0: 1.5 != 2\n"
    )
    out = _json(text)
    assert out["verdict"] == "match"
    assert out["matches"][0]["file_path"] == "crates/burn-std/src/data/compare.rs"


def _history_header(repo: str, versions: list[str]) -> str:
    """A history file's first line: each version a release tagged `v<version>` (HEAD
    untagged), with commits 1111.., 2222.. in order."""
    releases = [
        {"version": v, "tag": None if v == "HEAD" else f"v{v}", "commit": str(n) * 40}
        for n, v in enumerate(versions, start=1)
    ]
    return json.dumps({"history": 1, "repo": repo, "releases": releases})


SYNTHETIC = [
    _history_header("acme/widgets", ["0.1.0", "0.1.1", "0.2.0", "HEAD"]),
    json.dumps(
        {
            "lineage": "moved",
            "records": ["seed"],
            "spans": [
                [
                    0,
                    1,
                    "crates/w-core/src/repr/handle.rs",
                    "Should have handle for tensor {:?}",
                    "panic!",
                ],
                [
                    2,
                    3,
                    "crates/w-ir/src/handle.rs",
                    "Should have handle for tensor {id:?}",
                    "panic!",
                ],
            ],
            "lines": [70, 73, 90, 97],
        }
    ),
    json.dumps(
        {
            "lineage": "gone",
            "spans": [[0, 1, "crates/w-core/src/ops.rs", "Data type mismatch", "panic!"]],
            "lines": [10, 12, 0, 0],
        }
    ),
]


def test_release_lookups_on_a_synthetic_history():
    from bot.core.match.releases import find_hit, parse_history, story_for

    history = parse_history(SYNTHETIC)
    assert history.releases_for("0.1") == [0, 1]
    assert history.releases_for("0.1.1") == [1]
    assert history.releases_for("0.1.7") == [0, 1]  # an unknown patch: its minor series
    assert history.releases_for(None) == [0, 1, 2, 3]
    hit = find_hit(
        history,
        ("w-core", "src/repr/handle.rs"),
        73,
        "handle for tensor TensorId { value: 5 }",
        "0.1.1",
    )
    assert (history.lineages[hit.lineage].id, hit.release, hit.how) == ("moved", 1, "line")
    # The pasted file never held the message at 0.1.x, its crate did: a crate hit.
    hit = find_hit(history, ("w-core", "src/api.rs"), 5, "Data type mismatch", "0.1.0")
    assert (history.lineages[hit.lineage].id, hit.how) == ("gone", "crate")
    assert find_hit(history, ("w-core", "src/api.rs"), 5, "Data type mismatch", "0.2.0") is None
    story = story_for(history, "seed", "0.1.1")
    assert (story.then_file, story.then_line, story.now_file, story.now_line) == (
        "crates/w-core/src/repr/handle.rs",
        73,
        "crates/w-ir/src/handle.rs",
        97,
    )
    assert story.then_url == (
        "https://github.com/acme/widgets/blob/" + "2" * 40 + "/crates/w-core/src/repr/handle.rs#L73"
    )
    gone = story_for(history, "gone", None)
    assert (gone.removed_in, gone.last_seen_in, gone.now_file) == ("0.2.0", "0.1.1", None)
    assert gone.compare_url == "https://github.com/acme/widgets/compare/v0.1.1...v0.2.0"


def test_a_version_named_in_the_text_places_the_match_in_that_release():
    text = (
        "On burn 0.16.0 with the wgpu backend:\n"
        "thread 'main' panicked at burn-tensor/src/repr/handle.rs:73:32:\n"
        "Should have handle for tensor TensorId { value: 7 }\n"
    )
    best = _json(text)["matches"][0]
    assert best["release"]["version"] == "0.16.0"
    assert best["release"]["file_path"] == "crates/burn-tensor/src/repr/handle.rs"


def test_two_sites_printing_the_pasted_wording_elsewhere_in_the_file_leave_it_unplaced():
    """rust-analyzer's `ast_id_map.rs` held two `Can't find {:?} in AstIdMap:` sites (131 and
    207 by then); a nightly's paste at line 213 is at neither, and its line does not say which."""
    from bot.core.match.releases import find_hit, parse_history

    file = "crates/expand/src/ast_id_map.rs"
    wording = "Can't find {:?} in AstIdMap:\n{:?}"
    rows = [
        _history_header("acme/analyzer", ["0.1.0", "0.2.0"]),
        json.dumps(
            {"lineage": "erased", "spans": [[0, 1, file, wording, "panic!"]], "lines": [131, 176]}
        ),
        json.dumps(
            {"lineage": "get", "spans": [[1, 1, file, wording, "panic!"]], "lines": [0, 207]}
        ),
    ]
    history = parse_history(rows)
    pasted = ("expand", "src/ast_id_map.rs")
    message = "Can't find Idx::<Fn>(3) in AstIdMap:\n[SOURCE_FILE]"
    assert find_hit(history, pasted, 213, message, None) is None
    hit = find_hit(history, pasted, 208, message, None)
    assert (history.lineages[hit.lineage].id, hit.how) == ("get", "line")
    # One site alone at another line is still that site's file.
    hit = find_hit(history, pasted, 150, message, "0.1.0")
    assert (history.lineages[hit.lineage].id, hit.how) == ("erased", "file")


def test_a_label_many_messages_open_with_is_no_shared_run():
    # A garbled paste (a terminal cut `cache` as `cach e`) shares only nushell's `internal
    # error: ` with the site its release had at the pasted line: that says nothing of which.
    garbled = "internal error: span missing in file contents cach e"
    assert _quality(garbled, "internal error: missing overlay") == 1  # the label alone, before
    assert (
        _quality(garbled, "internal error: missing overlay", frozenset({"internal error: "})) == 0
    )
    assert (
        _quality(
            "internal error: missing overlay for scope 3",
            "internal error: missing overlay",
            frozenset({"internal error: "}),
        )
        == 2
    )
    nushell = project_triage("nushell")
    text = (
        "thread 'main' panicked at 'internal error: span missing in file contents cach e', "
        "crates/nu-protocol/src/engine/engine_state.rs:380:9\n"
    )
    assert not nushell.analyse(text).answered
