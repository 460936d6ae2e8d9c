"""Where an answer's words come from (issue 46): a record's write-up, its family's (with slots
filled from the site and the paste), a payload family that reads what a generic site printed, a
written-up record as the catalog holds it, or sentences from the code; `match --json` says which
as `answer.source`. A fixed or removed site leads with the release to upgrade to."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import jsonschema
import pytest

from bot.app import Triage
from bot.catalog.families import fill_items, fill_text, parse_families
from bot.cli import main
from bot.core.match.releases import history_events
from bot.render.answer.build import build_answer
from bot.render.discord import render_message
from bot.render.github import render_comment

SCHEMA = json.loads((Path(__file__).parent.parent / "schemas" / "match.schema.json").read_text())
CORPUS = Path(__file__).parent / "corpus" / "cases"

HANDLER = "acme/gpu"
SITES = [
    # a generic handler that prints whatever error reached it
    {
        "id": "00000000000000a1",
        "repo": HANDLER,
        "errorMessage": "the gpu library reported an unhandled error: {err}",
        "errorType": "panic",
        "filePath": "gpu/src/handler.rs",
        "lineNumber": 40,
        "enclosingFn": "default_handler",
    },
    # a site no family covers and nobody wrote up
    {
        "id": "00000000000000a2",
        "repo": HANDLER,
        "errorMessage": "the frobnicator queue overflowed its capacity",
        "errorType": "panic",
        "filePath": "gpu/src/queue.rs",
        "lineNumber": 12,
    },
    # written up in the record itself (the seed format)
    {
        "id": "00000000000000a3",
        "repo": HANDLER,
        "errorMessage": "the shader cache directory is not writable",
        "errorType": "panic",
        "filePath": "gpu/src/cache.rs",
        "lineNumber": 7,
        "documentation": "The shader cache could not be written.",
        "solutions": ["Point the cache at a writable folder.", "Run as a user who owns it."],
    },
    # written up through the overlay folder
    {
        "id": "00000000000000a4",
        "repo": HANDLER,
        "errorMessage": "the adapter list is empty after probing every backend",
        "errorType": "panic",
        "filePath": "gpu/src/probe.rs",
        "lineNumber": 99,
    },
]
OVERLAY = {
    "id": "00000000000000a4",
    "documentation": "No GPU adapter was found.",
    "solutions": ["Install the GPU driver.", "Use the CPU backend."],
}
FAMILIES = {
    "families": [
        {
            "id": "gpu-error",
            "name": "The GPU library reported an error",
            "repo": HANDLER,
            "files": ["gpu/src/handler.rs"],
            "summary": "`{function}` panics on any error nobody handled; read what follows it.",
            "documentation": "The handler prints the error it got.",
            "solutions": ["Read the text after the colon.", "Install an error handler."],
        },
        {
            "id": "gpu-too-many-groups",
            "name": "Too many workgroups",
            "parent": "gpu-error",
            "payloadPatterns": ["groups \\(\\d+\\) over the limit"],
            "slots": [
                "groups \\((?P<groups>\\d+)\\) over the limit (?P<limit>\\d+)",
                "a batch of (?P<batch>\\d+)",
            ],
            "summary": "The launch asked for {groups} workgroups; at most {limit} fit.",
            "documentation": "One launch was too large. A batch of {batch} was too large.",
            "solutions": [
                "Split the work so each launch has at most {limit} groups.",
                "Lower the batch size to {batch}.",
                "Lower the batch size.",
            ],
        },
    ]
}


GROUPS = (
    "the gpu library reported an unhandled error: In a dispatch: groups (70000) over the "
    "limit 65535"
)


@pytest.fixture(scope="module")
def catalog_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("gpu")
    lines = "".join(json.dumps(s) + "\n" for s in SITES)
    (folder / "sites.jsonl").write_text(lines, encoding="utf-8")
    (folder / "writeups").mkdir()
    (folder / "writeups" / "00000000000000a4.json").write_text(json.dumps(OVERLAY))
    (folder / "families.json").write_text(json.dumps(FAMILIES), encoding="utf-8")
    return folder


def _json(catalog_dir: Path, text: str) -> dict:
    paste = catalog_dir.parent / "paste.md"
    paste.write_text(text, encoding="utf-8")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["match", "--json", "--catalog", str(catalog_dir), str(paste)]) == 0
    doc = json.loads(out.getvalue().splitlines()[0])
    jsonschema.validate(doc, SCHEMA)
    return doc


def _panic(message: str, path: str, line: int) -> str:
    return f"thread 'main' panicked at {path}:{line}:5:\n{message}\n"


@pytest.mark.parametrize(
    ("text", "source", "meaning", "step"),
    [
        (
            _panic(
                GROUPS,
                "gpu/src/handler.rs",
                40,
            ),
            "payload",
            "The launch asked for 70000 workgroups; at most 65535 fit.",
            "Split the work so each launch has at most 65535 groups.",
        ),
        (
            _panic(
                "the gpu library reported an unhandled error: device lost", "gpu/src/handler.rs", 40
            ),
            "family",
            "default_handler panics on any error nobody handled; read what follows it.",
            "Read the text after the colon.",
        ),
        (
            _panic("the shader cache directory is not writable", "gpu/src/cache.rs", 7),
            "seed",
            "The shader cache could not be written.",
            "Point the cache at a writable folder.",
        ),
        (
            _panic("the adapter list is empty after probing every backend", "gpu/src/probe.rs", 99),
            "writeup",
            "No GPU adapter was found.",
            "Install the GPU driver.",
        ),
        (
            _panic("the frobnicator queue overflowed its capacity", "gpu/src/queue.rs", 12),
            "code",
            None,
            None,
        ),
    ],
)
def test_each_answer_says_where_its_words_come_from(
    catalog_dir: Path, text: str, source: str, meaning: str | None, step: str | None
) -> None:
    doc = _json(catalog_dir, text)
    answer = doc["matches"][0]["answer"]
    assert answer["source"] == source
    if meaning is not None:
        assert answer["meaning"] == meaning
    assert answer["first_step"] == step


def test_a_payload_family_leads_in_the_first_view_on_github_and_discord(catalog_dir) -> None:
    triage = Triage.from_paths([catalog_dir])
    text = _panic(
        GROUPS,
        "gpu/src/handler.rs",
        40,
    )
    answer = build_answer(triage.analyse(text), triage.catalog, history=triage.history)
    (section,) = answer.sections
    # Slots nothing filled ({batch}) take their sentence or item with them, never shown raw.
    assert section.documentation == "One launch was too large."
    assert section.solutions == (
        "Split the work so each launch has at most 65535 groups.",
        "Lower the batch size.",
    )
    body = render_comment(answer)
    first_view = body.split("<details>", 1)[0]
    assert "at most 65535 fit" in first_view and "{" not in first_view
    discord = json.dumps(render_message(answer), ensure_ascii=False)
    assert "at most 65535 fit" in discord


def test_slots_fill_prose_and_items_and_drop_what_they_cannot() -> None:
    names = frozenset({"op", "dtype"})
    text = "`{op}` got a tensor. Its dtype was {dtype}. Cast it first."
    assert fill_text(text, {"op": "matmul"}, names) == "`matmul` got a tensor. Cast it first."
    assert fill_text(text, {"op": "a", "dtype": "I8"}, names) == (
        "`a` got a tensor. Its dtype was I8. Cast it first."
    )
    # braces that are no slot (code) stay as they are
    assert fill_text("let x = {y}; {op}", {"op": "sum"}, names) == "let x = {y}; sum"
    assert fill_items(["use {dtype}", "use f32"], {}, names) == ("use f32",)


def test_a_family_text_naming_an_undeclared_slot_is_refused() -> None:
    bad = {
        "families": [
            {
                "id": "f",
                "name": "f",
                "files": ["a.rs"],
                "summary": "It got {dtype}.",
                "solutions": ["a", "b"],
            }
        ]
    }
    with pytest.raises(ValueError, match=r"names the slot `\{dtype\}`"):
        parse_families(bad)


def test_a_payload_family_needs_a_parent_that_exists() -> None:
    bad = {
        "families": [
            {
                "id": "child",
                "name": "c",
                "parent": "nobody",
                "payloadPatterns": ["x"],
                "solutions": ["a"],
            }
        ]
    }
    with pytest.raises(ValueError, match="`parent` names no family"):
        parse_families(bad)


# -- the bundled catalog: the sites real reports land on ---------------------------------------


@pytest.fixture(scope="module")
def bundled() -> Triage:
    return Triage.from_paths(None)


def _section(triage: Triage, text: str):
    analysis = triage.analyse(text)
    answer = build_answer(
        analysis, triage.catalog, history=triage.history, projects=triage.projects
    )
    return answer.sections[0]


WGPU_DISPATCH = (
    "thread '<unnamed>' panicked at /home/u/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/"
    "wgpu-25.0.2/src/backend/wgpu_core.rs:1051:30:\nwgpu error: Validation Error\n\nCaused by:\n"
    "  In a ComputePass\n    note: encoder = `<CommandBuffer-(0, 1, Vulkan)>`\n"
    "  In a dispatch command, indirect:false\n"
    "  Each current dispatch group size dimension ([65536, 1, 1]) must be less or equal to 65535\n"
)


def test_wgpus_handler_with_a_dispatch_too_large_leads_with_that(bundled: Triage) -> None:
    section = _section(bundled, WGPU_DISPATCH)
    assert section.answer_source == "payload"
    assert "[65536, 1, 1] workgroups" in (section.meaning_text or "")
    assert "65535" in (section.meaning_text or "")
    assert "Tensor::chunk" in (section.first_step or "")


def test_a_device_check_names_the_users_devices_and_the_fix(bundled: Triage) -> None:
    text = (
        "thread 'main' panicked at crates/burn-tensor/src/tensor/api/check.rs:1485:13:\n"
        "=== Tensor Operation Error ===\n  Operation: 'Add'\n  Reason:\n"
        "    1. The provided tensors are not on the same device. Lhs tensor device Cpu, Rhs "
        "tensor device Cuda(0). \n"
    )
    section = _section(bundled, text)
    assert section.answer_source == "family"
    assert "`Add`" in (section.meaning_text or "")
    assert "`Cpu`" in (section.meaning_text or "") and "`Cuda(0)`" in section.meaning_text
    assert (section.first_step or "").startswith("Move one tensor to the other's device")
    assert "to_device" in section.first_step


def test_an_autotune_expect_leads_with_the_cause_its_payload_names(bundled: Triage) -> None:
    text = (
        "thread 'main' panicked at /home/u/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/"
        "cubecl-runtime-0.6.0/src/tune/local.rs:161:22:\nShould run when selected by "
        'autotune.: Unknown("Atomic add not supported by the client for f32")\n'
    )
    section = _section(bundled, text)
    assert section.answer_source == "payload"
    assert "atomic add for f32" in (section.meaning_text or "")


def test_a_removed_site_leads_with_the_release_to_upgrade_to(bundled: Triage) -> None:
    text = (CORPUS / "160_onnx-ir-topological-git.md").read_text(encoding="utf-8")
    section = _section(bundled, text)
    assert section.record.removed_at
    assert (section.first_step or "").startswith("Upgrade burn to 0.20.0 or newer:")
    assert "#3872" in section.first_step


def test_a_lineages_history_is_listed_oldest_first(bundled: Triage) -> None:
    history = bundled.projects.of_repo("tracel-ai/burn") if bundled.projects else None
    events = history_events(history, "cf9e381642cc66f3")
    versions = [e.version for e in events]
    assert versions == ["0.11.0", "0.14.0", "0.17.0"]


def test_a_dependencys_fix_is_reached_through_the_own_projects_release(bundled: Triage) -> None:
    projects = bundled.projects
    assert projects is not None
    # burn's Cargo.lock pinned cubecl 0.9.0 first in burn 0.20.0
    assert projects.own_release_with("tracel-ai/cubecl", "0.9.0") == "0.20.0"
    assert projects.own_release_with("tracel-ai/cubecl", "0.8.1") == "0.19.1"
    assert projects.own_release_with("tracel-ai/cubecl", "99.0.0") is None
    assert projects.own_release_with("tracel-ai/burn", "0.9.0") is None


def test_titles_keep_the_users_values_within_120_characters(bundled: Triage) -> None:
    matmul = (
        "thread 'main' panicked at crates/burn-tensor/src/tensor/api/check.rs:1485:13:\n"
        "=== Tensor Operation Error ===\n  Operation: 'Matmul'\n  Reason:\n    1. The inner "
        "dimension of matmul should be the same, but got 768 and 512. Lhs shape [32, 128, 768], "
        "rhs shape [32, 512, 64]. \n"
    )
    title = _section(bundled, matmul).title
    assert len(title) <= 120
    assert title.startswith("Matmul: The inner dimension of matmul")
    assert title.endswith("rhs shape [32, 512, 64].")  # the shapes survive the cut
    pasted = _section(bundled, "**" + WGPU_DISPATCH.replace("\n  ", "\\n  ") + "**").title
    assert len(pasted) <= 120 and "**" not in pasted and "\\n" not in pasted
    assert pasted.endswith("must be less or equal to 65535")
