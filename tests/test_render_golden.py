"""Golden tests: the replies, word for word, for the seed records and the special cases.

The expected outputs live in tests/golden/. Without UPDATE_GOLDEN the tests only compare, and
fail on a missing golden file or a changed answer. After a deliberate change, name the goldens
to rewrite, by file name or by case (the part of the file name before the first dot: every
rendering of that case), and read the diff before keeping it:
    UPDATE_GOLDEN=bare_site,multi_panic.github.md .venv/bin/pytest tests/test_render_golden.py
Only the named goldens are written (a named file that is missing is created); every other golden
is still compared, so a missing file or a changed answer outside the named ones still fails. A
name that no golden check of the run matched fails the run too, so `UPDATE_GOLDEN=1` or a typo
rewrites nothing and says so. (test_backfill.py checks bare_site_history.github.md here too.)

Analyses are built by hand (they are plain dataclasses); records come from the bundled catalog.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bot.app import Triage, load_bundled
from bot.catalog.loader import Catalog
from bot.core.analysis import Analysis, Candidate, PanicMatch
from bot.core.panic import Frame, Location, Panic
from bot.render import texts
from bot.render.answer.build import build_answer
from bot.render.answer.parts import Answer
from bot.render.answer.words import version_note
from bot.render.discord import render_message, render_more, render_plain
from bot.render.github import (
    MARKER_PREFIX,
    parse_marker,
    render_comment,
    render_no_longer,
)
from bot.render.terminal import render_text, render_verdict_line

GOLDEN = Path(__file__).parent / "golden"
# The goldens to rewrite (see above), and those of them a check has matched so far.
UPDATE = frozenset(n.strip() for n in os.environ.get("UPDATE_GOLDEN", "").split(",") if n.strip())
_rewritten: set[str] = set()

SEED_000 = "5c5da46720dbbf10"  # deform conv 2d backward; lint flags it possible-mismatch
SEED_001 = "d59d5538758c7e08"  # deform_conv2d_backward: unsupported dtype {:?}
SEED_002 = "8d1d2fa6df3880bd"  # avg pool 2d backward
SEED_003 = "cf30438606d06d30"  # interpolate backward (the JSON seed)
REGISTRY = "/home/dev/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f"


@pytest.fixture(scope="module")
def catalog():
    return load_bundled().catalog


def history_for(catalog: Catalog):
    """The release history answers are built with: the bundled catalog's; none for a catalog
    made here (it has no history file)."""
    loaded = load_bundled()
    return loaded.history if catalog is loaded.catalog else None


def answer_of(found: Analysis, catalog: Catalog, **options) -> Answer:
    return build_answer(found, catalog, history=history_for(catalog), **options)


# --- building inputs by hand ---------------------------------------------------------------------


def registry_location(crate: str, version: str, crate_path: str, line: int) -> Location:
    path = f"{REGISTRY}/{crate}-{version}/{crate_path}"
    return Location(
        raw=f"{path}:{line}:9",
        path=path,
        line=line,
        column=9,
        kind="registry",
        crate=crate,
        crate_version=version,
        crate_path=crate_path,
    )


def workspace_location(path: str, line: int) -> Location:
    parts = path.split("/")
    return Location(
        raw=f"{path}:{line}:13",
        path=path,
        line=line,
        column=13,
        kind="workspace",
        crate=parts[1],
        crate_version=None,
        crate_path="/".join(parts[2:]),
    )


def make_panic(
    message: str,
    location: Location | None = None,
    *,
    core: str | None = None,
    frames: tuple[Frame, ...] = (),
) -> Panic:
    return Panic(
        message=message,
        core_message=core if core is not None else message,
        wrapper=None,
        thread="main",
        location=location,
        has_header=location is not None,
        frames=frames,
        start=0,
        end=len(message),
    )


def matched(panic: Panic, record_id: str, evidence, *, distance=0, score=1.0) -> PanicMatch:
    candidate = Candidate(
        record_id=record_id,
        confidence=0.95,
        evidence=tuple(evidence),
        message_score=score,
        line_distance=distance,
    )
    return PanicMatch(panic=panic, candidates=(candidate,), matched=True)


def unmatched(panic: Panic) -> PanicMatch:
    return PanicMatch(panic=panic, candidates=(), matched=False)


def analysis(*items: PanicMatch, fingerprint: str = "0123456789abcdef") -> Analysis:
    if any(item.matched for item in items):
        verdict = "match"
    elif items:
        verdict = "uncatalogued-panic"
    else:
        verdict = "no-panic"
    return Analysis(verdict=verdict, panics=tuple(items), fingerprint=fingerprint)


# --- the cases ---------------------------------------------------------------------------------


def case_seed_000(catalog) -> Answer:
    # The message quoted without a `panicked at` header: no location to compare.
    panic = make_panic("Can't differentiate deform conv 2d backward.")
    return answer_of(analysis(matched(panic, SEED_000, ["pattern"], distance=None)), catalog)


def case_seed_001(catalog) -> Answer:
    # Workspace path, the same line as the record.
    location = workspace_location("crates/burn-flex/src/ops/module.rs", 243)
    panic = make_panic("deform_conv2d_backward: unsupported dtype I8", location)
    evidence = ["pattern", "location", "line", "crate", "header"]
    return answer_of(analysis(matched(panic, SEED_001, evidence)), catalog)


def case_seed_002(catalog) -> Answer:
    # A registry path with a version: the version note says both.
    location = registry_location("burn-autodiff", "0.18.0", "src/ops/module.rs", 1498)
    panic = make_panic("Can't differentiate avg pool 2d backward.", location)
    evidence = ["pattern", "location", "line", "crate", "header"]
    return answer_of(analysis(matched(panic, SEED_002, evidence)), catalog)


def case_seed_003(catalog) -> Answer:
    # The same file, a few lines off (the line moved since the analysed commit).
    location = workspace_location("crates/burn-autodiff/src/ops/module.rs", 1929)
    panic = make_panic("Can't differentiate interpolate backward.", location)
    evidence = ["pattern", "location", "crate", "header"]
    return answer_of(analysis(matched(panic, SEED_003, evidence, distance=4)), catalog)


def case_multi(catalog, max_sections: int = 2) -> Answer:
    # Root cause first; a repeat of it, an uncatalogued panic, and a third record past the cap.
    root = make_panic(
        "Can't differentiate avg pool 2d backward.",
        registry_location("burn-autodiff", "0.18.0", "src/ops/module.rs", 1498),
    )
    second = make_panic(
        "Can't differentiate interpolate backward.",
        workspace_location("crates/burn-autodiff/src/ops/module.rs", 1933),
    )
    other = make_panic(
        "called `Result::unwrap()` on an `Err` value: Os { code: 2 }",
        workspace_location("crates/my-app/src/main.rs", 12),
    )
    third = make_panic("deform_conv2d_backward: unsupported dtype I8")
    full = ["pattern", "location", "line", "header"]
    items = (
        matched(root, SEED_002, full),
        matched(second, SEED_003, full),
        matched(root, SEED_002, full),
        unmatched(other),
        matched(third, SEED_001, ["pattern"], distance=None),
    )
    return answer_of(
        analysis(*items, fingerprint="fedcba9876543210"), catalog, max_sections=max_sections
    )


def case_bare_site(catalog) -> Answer:
    (record,) = catalog.by_message("Node {:?} is needed but never checkpointed")
    location = registry_location(
        "burn-autodiff", "0.22.0-pre.2", "src/checkpoint/builder.rs", record.line_number
    )
    panic = make_panic("Node NodeId { value: 7 } is needed but never checkpointed", location)
    evidence = ["pattern", "location", "line", "crate", "header"]
    return answer_of(analysis(matched(panic, record.id, evidence)), catalog)


def case_removed_site(catalog) -> Answer:
    # `catalog update` tagged the site removed at a later commit; older versions still raise it.
    (record,) = catalog.by_message("Node {:?} is needed but never checkpointed")
    removed = record.with_changes(tags=(*record.tags, "removed-at:" + "ab12cd34" * 5))
    records = {**catalog.records, record.id: removed}
    location = registry_location(
        "burn-autodiff", "0.19.0", "src/checkpoint/builder.rs", record.line_number
    )
    panic = make_panic("Node NodeId { value: 3 } is needed but never checkpointed", location)
    evidence = ["pattern", "location", "line", "crate", "header"]
    changed = Catalog(records, families=catalog.families)
    return answer_of(analysis(matched(panic, record.id, evidence)), changed)


CORPUS = Path(__file__).parent / "corpus" / "cases"


def case_from_corpus(name: str):
    """A real text of the corpus, analysed by the bundled catalog's matcher."""

    def build(catalog) -> Answer:
        loaded = load_bundled()
        text = (CORPUS / name).read_text(encoding="utf-8")
        triage = Triage.of(loaded)
        return answer_of(triage.analyse(text), catalog, projects=triage.projects)

    return build


def case_uncatalogued(catalog) -> Answer:
    panic = make_panic(
        "index out of bounds: the len is 3 but the index is 7",
        workspace_location("crates/my-app/src/main.rs", 40),
    )
    # Close to a catalogued message, but not enough to answer with: named with its score.
    near = make_panic(
        "Can't differentiate avg pool 3d backward.",
        workspace_location("crates/my-ops/src/pool.rs", 77),
    )
    candidate = Candidate(
        record_id=SEED_002,
        confidence=0.62,
        evidence=("fuzzy",),
        message_score=0.9,
        line_distance=None,
    )
    near_match = PanicMatch(panic=near, candidates=(candidate,), matched=False)
    return answer_of(analysis(unmatched(panic), near_match), catalog)


CASES = {
    "seed_000": case_seed_000,
    "seed_001": case_seed_001,
    "seed_002": case_seed_002,
    "seed_003": case_seed_003,
    "multi_panic": case_multi,
    "bare_site": case_bare_site,
    "removed_site": case_removed_site,
    "uncatalogued": case_uncatalogued,
    # Real texts: a tensor check with the user's values, a site of a crate that moved out.
    "tensor_check": case_from_corpus("078_check-matmul-tensor-op-error.md"),
    "moved_crate": case_from_corpus("157_import-out-dir-0191.md"),
    # One message at three sites, pasted without a location: said to be a tie.
    "tie": case_from_corpus("077_ce-weights-no-location.md"),
}

RENDERINGS = {
    "github.md": render_comment,
    "discord.json": lambda a: json.dumps(render_message(a), indent=2, ensure_ascii=False) + "\n",
    "discord_plain.txt": render_plain,
    "discord_more.json": lambda a: json.dumps(render_more(a), indent=2, ensure_ascii=False) + "\n",
    "terminal.txt": lambda a: render_text(a, color=False),
}


def check_golden(name: str, actual: str) -> None:
    """Compare `actual` with the golden file `name`, or write it when UPDATE_GOLDEN names it."""
    path = GOLDEN / name
    named = UPDATE & {name, name.split(".")[0]}
    if named:
        _rewritten.update(named)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
        return
    assert path.exists(), f"missing golden file {path}; UPDATE_GOLDEN={name} creates it"
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, (
        f"{name} differs from its golden file; if that is meant, UPDATE_GOLDEN={name} rewrites it"
    )


@pytest.fixture(scope="module", autouse=True)
def _update_golden_names_only_goldens():
    """After this module's tests: every name in UPDATE_GOLDEN matched a golden that was checked."""
    yield
    unmatched = sorted(UPDATE - _rewritten)
    assert not unmatched, (
        f"UPDATE_GOLDEN names {', '.join(unmatched)}, which no golden checked in this run is "
        "(name goldens by file name or by case, e.g. UPDATE_GOLDEN=bare_site,multi_panic.github.md)"
    )


@pytest.mark.parametrize("rendering", sorted(RENDERINGS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_golden(case, rendering, catalog):
    answer = CASES[case](catalog)
    check_golden(f"{case}.{rendering}", RENDERINGS[rendering](answer))


def test_golden_terminal_colour(catalog):
    check_golden("seed_000.terminal_color.txt", render_text(case_seed_000(catalog), color=True))


def test_golden_no_longer(catalog):
    check_golden("no_longer.github.md", render_no_longer(case_seed_002(catalog)))
    check_golden("no_longer_none.github.md", render_no_longer(None))


# --- facts the golden files rest on, checked directly -------------------------------------------


def test_seed_records_come_from_the_bundled_catalog(catalog):
    for record_id in (SEED_000, SEED_001, SEED_002, SEED_003):
        assert catalog.get(record_id) is not None
    assert "possible-mismatch" in catalog.flags(SEED_000)
    assert "possible-mismatch" not in catalog.flags(SEED_002)


def test_confidence_words_follow_the_evidence(catalog):
    assert "".join(s.text for s in case_seed_002(catalog).sections[0].confidence) == (
        "Matched the message and the location burn-autodiff-0.18.0/src/ops/module.rs:1498."
    )
    assert "".join(s.text for s in case_seed_000(catalog).sections[0].confidence) == (
        texts.MATCH_MESSAGE_NO_LOCATION
    )
    words003 = "".join(s.text for s in case_seed_003(catalog).sections[0].confidence)
    assert words003.endswith("the catalogued line is 1933.")


def test_source_link_is_pinned_to_the_exact_line(catalog):
    source = case_seed_003(catalog).sections[0].source
    assert source.label == "module.rs:1933 @ d16f7ba"
    # The record's githubUrl covers the snippet (#L1915-L1951); the answer points at the line.
    assert source.url == (
        "https://github.com/tracel-ai/burn/blob/d16f7ba2ed0d41408189384044cc886fb4c8f957/"
        "crates/burn-autodiff/src/ops/module.rs#L1933"
    )


def test_version_note_only_when_the_pasted_line_differs(catalog):
    # 0.18.0 at line 1498, the record's line: nothing moved, so no note.
    assert case_seed_002(catalog).sections[0].version_note is None
    assert "may have moved" not in render_comment(case_seed_002(catalog))
    moved = make_panic(
        "Can't differentiate avg pool 2d backward.",
        registry_location("burn-autodiff", "0.18.0", "src/ops/module.rs", 1502),
    )
    record = catalog.get(SEED_002)
    note = "".join(s.text for s in version_note(moved, record))
    assert note == (
        "Your paste shows burn-autodiff-0.18.0 at line 1502; this record was analysed at commit "
        "d16f7ba (2026-09-05), where the line is 1498, so the code has moved between the two."
    )
    # In the answer, the release history says more where it knows the release: burn 0.18.0
    # raised this panic at line 1333 (its tag's commit), today's line is 1498.
    evidence = ["pattern", "location", "crate", "header"]
    answer = answer_of(analysis(matched(moved, SEED_002, evidence, distance=4)), catalog)
    shown = "".join(s.text for s in answer.sections[0].version_note)
    assert shown.startswith(
        "This panic was raised at 0.18.0 module.rs:1333; today it lives at module.rs:1498."
    )
    assert case_seed_003(catalog).sections[0].version_note is not None  # 1929 against 1933
    assert case_seed_001(catalog).sections[0].version_note is None  # the same line


def test_flagged_record_is_cautioned_and_its_write_up_folded(catalog):
    # Without an error family to fall back on, the flagged write-up is shown, folded, cautioned.
    alone = Catalog(catalog.records, families=[])
    body = render_comment(case_seed_000(alone))
    caution = body.index("Caution:")
    folded = body.index(f"<summary>{texts.UNVERIFIED_WRITE_UP}</summary>")
    assert caution < folded < body.index(f"#### {texts.WHAT_IT_MEANS}")
    embed = render_message(case_seed_000(alone))["embeds"][0]
    assert embed["description"].startswith("Caution:")
    assert "q_to_device" not in embed["description"]  # not in the first view
    more = render_more(case_seed_000(alone))["embeds"][0]
    assert texts.UNVERIFIED_WRITE_UP in more["description"]


def test_flagged_record_in_a_family_is_answered_with_the_familys_advice(catalog):
    section = case_seed_000(catalog).sections[0]
    family = catalog.family(SEED_000)
    assert family.id == "unimplemented-op-backward"
    assert section.documentation == family.documentation
    assert "q_to_device" not in render_comment(case_seed_000(catalog))  # the flagged write-up
    intro = texts.FLAGGED_FAMILY.format(family=family.name)
    assert intro in render_text(case_seed_000(catalog), color=False)


def test_bare_site_says_only_what_the_catalog_knows(catalog):
    answer = case_bare_site(catalog)
    section = answer.sections[0]
    assert section.bare
    assert not section.documentation and not section.solutions and not section.example_fix
    body = render_comment(answer)
    for heading in (texts.WHAT_IT_MEANS, texts.SOLUTIONS, texts.EXAMPLE_FIX):
        assert f"#### {heading}" not in body
    assert texts.BARE_SITE in body
    assert section.record.github_url in body
    # What can be known without a write-up: what the code checks there, from the scan.
    check = section.record.site_check
    assert check["kind"] and check["code"]
    assert f"**{texts.FIRST_MEANING}** Raised by `" in body
    assert f"`{check['code']}`" in body.split("<details>", 1)[0]
    assert "the code stops on a state it does not handle" not in body
    # Nothing the Source line says is repeated below the fold.
    assert body.count(f"line {section.record.line_number}") == 0


def test_multi_panic_root_first_capped_and_counted(catalog):
    answer = case_multi(catalog)
    assert answer.record_ids == (SEED_002, SEED_003)
    body = render_comment(answer)
    assert body.index("avg pool 2d") < body.index("interpolate backward")
    assert texts.OMITTED_ONE in body and texts.UNMATCHED_ONE in body
    assert parse_marker(body) == {
        "kind": "answer",
        "ids": [SEED_002, SEED_003],
        "fp": "fedcba9876543210",
    }
    assert len(render_message(answer)["embeds"]) == 2


def test_marker_first_line_and_round_trip(catalog):
    body = render_comment(case_seed_002(catalog))
    first = body.split("\n", 1)[0]
    assert first.startswith(MARKER_PREFIX)
    assert first == f"<!-- triage-bot:answer ids={SEED_002} fp=0123456789abcdef -->"
    assert parse_marker(body) == {"kind": "answer", "ids": [SEED_002], "fp": "0123456789abcdef"}
    gone = render_no_longer(case_seed_002(catalog))
    assert parse_marker(gone)["kind"] == "no-longer"
    assert texts.NO_LONGER in gone
    assert parse_marker("no marker here") is None


def test_verdict_lines(catalog):
    assert render_verdict_line(analysis()) == texts.NO_PANIC
    line = render_verdict_line(case_uncatalogued_analysis())
    assert line == (
        "No catalogued panic found; 1 panic extracted: "
        "`index out of bounds: the len is 3 but the index is 7` at `crates/my-app/src/main.rs:40`"
    )
    assert render_verdict_line(
        analysis(matched(make_panic("x"), SEED_002, ["pattern"], distance=None))
    ) == (f"Matched 1 catalogued panic: record `{SEED_002}`.")


def case_uncatalogued_analysis() -> Analysis:
    panic = make_panic(
        "index out of bounds: the len is 3 but the index is 7",
        workspace_location("crates/my-app/src/main.rs", 40),
    )
    return analysis(unmatched(panic))


def test_terminal_colour_only_when_asked(catalog):
    answer = case_seed_002(catalog)
    assert "\x1b[" not in render_text(answer, color=False)
    coloured = render_text(answer, color=True)
    assert "\x1b[1m" in coloured
    assert coloured.replace("\x1b[1m", "").replace("\x1b[2m", "").replace("\x1b[36m", "").replace(
        "\x1b[33m", ""
    ).replace("\x1b[0m", "") == render_text(answer, color=False)
