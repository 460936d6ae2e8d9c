"""Catalog lint: the bundled catalog's findings, and each check on records made to trip it."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.catalog.families import Family, parse_families
from bot.catalog.lint import (
    CONTRADICTS_FAMILY,
    INFO,
    POSSIBLE_MISMATCH,
    WARNING,
    identifiers,
    lint_catalog,
    lint_records,
    mismatch_flags,
    review_flags,
)
from bot.catalog.loader import load_catalog
from bot.catalog.model import Record

ROOT = Path(__file__).resolve().parent.parent
SEED_IDS = {
    "000": "5c5da46720dbbf10",
    "001": "d59d5538758c7e08",
    "002": "8d1d2fa6df3880bd",
    "003": "cf30438606d06d30",
}
SHA = "2c06be351006851d42fdb6df16b976f4a82d9747"


@pytest.fixture(scope="module")
def bundled():
    return load_catalog([ROOT / "catalog"])


@pytest.fixture(scope="module")
def bundled_findings(bundled):
    return lint_catalog(bundled)


def rec(**fields) -> Record:
    fields.setdefault("id", "r1")
    fields.setdefault("repo", "tracel-ai/burn")
    fields.setdefault("error_message", "Tensor shape mismatch in matmul: lhs {:?} rhs {:?}")
    fields.setdefault("origin", "test.json")
    return Record(**fields)


def codes(findings, record_id=None) -> list[str]:
    return [f.code for f in findings if record_id is None or f.record_id == record_id]


# --- the bundled catalog --------------------------------------------------------------------


def test_seed_000_is_flagged_possible_mismatch(bundled, bundled_findings):
    mine = [f for f in bundled_findings if f.record_id == SEED_IDS["000"]]
    assert [f.code for f in mine] == [POSSIBLE_MISMATCH]
    finding = mine[0]
    assert finding.level == WARNING
    assert finding.file.endswith("catalog/seeds/5c5da46720dbbf10.json")
    for name in ("q_to_device", "BackendRouter", "QTensorOps"):
        assert f"`{name}`" in finding.message
    assert "may describe a different error" in finding.message
    assert bundled.flags(SEED_IDS["000"]) == frozenset({POSSIBLE_MISMATCH})


def test_seed_002_cut_off_related_error_is_dangling(bundled_findings):
    # 002's last related error is cut off mid-string in the page it was imported from
    mine = [f for f in bundled_findings if f.record_id == SEED_IDS["002"]]
    assert ("dangling-related-error", WARNING) in [(f.code, f.level) for f in mine]
    [dangling] = [f for f in mine if f.code == "dangling-related-error"]
    assert '`unimplemented!("float_scatter with {other:?} update is not i`' in dangling.message


def test_seed_001_has_no_findings(bundled, bundled_findings):
    record_id = SEED_IDS["001"]
    assert codes(bundled_findings, record_id) == []
    assert bundled.flags(record_id) == frozenset()
    assert mismatch_flags(bundled.get(record_id)) == frozenset()


@pytest.mark.parametrize(
    ("seed", "claim"),
    [
        ("002", "does not implement the backward pass"),
        ("003", "gradients through the interpolate (resize) op are not implemented"),
    ],
)
def test_seeds_contradicting_their_family_are_flagged(bundled, bundled_findings, seed, claim):
    # burn-autodiff's forward avg_pool2d/interpolate register a backward step that calls the
    # inner backend's `*_backward`; only the autodiff backend's own `*_backward` is a stub.
    record_id = SEED_IDS[seed]
    (finding,) = [
        f for f in bundled_findings if f.record_id == record_id and f.code == CONTRADICTS_FAMILY
    ]
    assert finding.code == CONTRADICTS_FAMILY and finding.level == WARNING
    assert f"“{claim}”" in finding.message and "`unimplemented-op-backward`" in finding.message
    assert bundled.flags(record_id) == frozenset({CONTRADICTS_FAMILY})
    assert mismatch_flags(bundled.get(record_id)) == frozenset()  # it is about this error


def test_contradiction_rule_comes_from_the_family_data():
    family = Family(
        id="f",
        name="F",
        message_formats=("Boom {}",),
        contradicting_claims=("the moon is cheese",),
    )
    # parse through the real parser so the claims are compiled
    (family,) = parse_families({"families": [family_dict(family)]})
    saying = rec(error_message="Boom {}", documentation="As we know, the Moon is  cheese.")
    silent = rec(id="r2", error_message="Boom {}", documentation="Something else entirely.")
    assert review_flags(saying, [family]) == frozenset({CONTRADICTS_FAMILY})
    assert review_flags(silent, [family]) == frozenset()
    found = codes(lint_records([saying, silent], [family]))
    assert found.count(CONTRADICTS_FAMILY) == 1
    assert CONTRADICTS_FAMILY not in codes(lint_records([saying, silent]))  # no families
    plain = Family(id="g", name="G", message_formats=("Boom {}",))
    assert review_flags(saying, [plain]) == frozenset()


def family_dict(family) -> dict:
    return {
        "id": family.id,
        "name": family.name,
        "messageFormats": list(family.message_formats),
        "contradictingClaims": list(family.contradicting_claims),
    }


def test_bundled_summary_is_not_a_flood(bundled, bundled_findings):
    warnings = [f for f in bundled_findings if f.level == WARNING]
    # 000's mismatch, 002's cut-off related error, 002's and 003's claims that their family's
    # checked explanation contradicts, and burn messages that are only placeholders or a few
    # short words.
    assert set(codes(warnings)) == {
        POSSIBLE_MISMATCH,
        CONTRADICTS_FAMILY,
        "broad-pattern",
        "dangling-related-error",
    }
    # burn's own folder and the seeds stay under the old cap; the dependency projects' scanned
    # catalogs (cubecl's many `{}`-only messages, issue 25) are counted apart, close to today's.
    dependencies = {"cubecl", "wgpu", "ndarray", "burn-onnx"}
    own = [f for f in warnings if not dependencies & set(Path(f.file).parts)]
    assert len(own) < 100
    assert len(warnings) - len(own) <= 90
    duplicates = [f for f in bundled_findings if f.code == "duplicate-message"]
    assert duplicates and all(f.level == INFO for f in duplicates)
    # once per shared message, not once per record
    counts: dict[str, int] = {}
    for record in bundled:
        key = " ".join(record.error_message.split())
        counts[key] = counts.get(key, 0) + 1
    assert len(duplicates) == sum(1 for n in counts.values() if n > 1)
    shared_float = [f for f in duplicates if "`Should be Float primitive kind`" in f.message]
    assert len(shared_float) == 1
    assert shared_float[0].message.startswith("65 records share the message")
    # no skeleton is pinned to a branch or has an inconsistent link
    for code in ("unpinned-url", "url-mismatch", "line-outside-excerpt", "excerpt-length"):
        assert code not in codes(bundled_findings)


def test_placeholder_only_bundled_sites_are_broad(bundled_findings):
    broad = {f.message.split("`")[1] for f in bundled_findings if f.code == "broad-pattern"}
    assert {"{}", "{msg}", "{err:?}", "Unsupported"} <= broad
    assert "Should be Float primitive kind" not in broad


def test_skeletons_are_not_checked_for_mismatch(bundled):
    skeleton = next(r for r in bundled if not r.has_write_up)
    assert mismatch_flags(skeleton) == frozenset()


# --- possible-mismatch ----------------------------------------------------------------------


SOURCE = """    fn avg_pool2d_backward(
        _x: AutodiffTensor<B>,
    ) -> AutodiffTensor<B> {
        panic!("Can't differentiate avg pool 2d backward.");
    }"""


def test_mismatch_when_write_up_names_only_foreign_identifiers():
    record = rec(
        error_message="Can't differentiate avg pool 2d backward.",
        source_code=SOURCE,
        documentation="`q_to_device` is stubbed in BackendRouter's QTensorOps.",
        solutions=("Avoid to_device on quantized tensors under BackendRouter",),
    )
    assert mismatch_flags(record) == frozenset({POSSIBLE_MISMATCH})
    # `q_to_device` is also code the site does not show
    assert codes(lint_records([record])) == ["names-absent-code", POSSIBLE_MISMATCH]


def test_no_mismatch_when_the_write_up_names_the_source():
    record = rec(
        error_message="Can't differentiate avg pool 2d backward.",
        source_code=SOURCE,
        documentation="avg_pool2d_backward on AutodiffTensor is not implemented; QTensorOps "
        "are unrelated.",
        solutions=("Use max_pool2d",),
    )
    assert mismatch_flags(record) == frozenset()
    # CamelCase and snake_case spellings of one name meet: BackendRouter ~ backend_router
    record = rec(
        source_code="let r = backend_router.route(x);",
        documentation="BackendRouter cannot route this op.",
        solutions=("Call QuantizedOps instead",),
    )
    assert mismatch_flags(record) == frozenset()


def test_no_mismatch_check_without_source_or_with_too_few_names():
    no_source = rec(documentation="`q_to_device` in BackendRouter and QTensorOps")
    assert mismatch_flags(no_source) == frozenset()
    one_name = rec(source_code=SOURCE, documentation="QTensorOps is a stub.")
    assert mismatch_flags(one_name) == frozenset()


def test_identifiers_in_prose():
    text = "Call `to_device()` or Tensor::to_device on BackendRouter; GPU and F32 are not names."
    assert identifiers(text) == ["to_device", "BackendRouter"]
    assert "GPU" not in identifiers(text) and "F32" not in identifiers(text)
    assert identifiers("q_to_device and _x and DType::QFloat") == ["q_to_device", "DType", "QFloat"]


# --- broad patterns -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    ["{}", "{msg}", "{err:?} - {:?}", "got {}", "iter {i}", "Unsupported"],
)
def test_broad_messages(message):
    findings = lint_records([rec(error_message=message)])
    assert codes(findings) == ["broad-pattern"]
    assert f"`{message}`" in findings[0].message


@pytest.mark.parametrize(
    "message",
    [
        "Can't differentiate avg pool 2d backward.",
        "dim {} out of bounds for {} dimensions",
        "Should be Float primitive kind",
    ],
)
def test_specific_messages_are_not_broad(message):
    assert codes(lint_records([rec(error_message=message)])) == []


def test_broad_explicit_pattern():
    broad = rec(error_message="Can't differentiate avg pool 2d backward.", message_pattern=".*")
    assert codes(lint_records([broad])) == ["broad-pattern"]
    few = rec(message_pattern=r"(?:got|saw) \d+")
    assert codes(lint_records([few])) == ["broad-pattern"]
    fine = rec(message_pattern=r"Can't differentiate avg pool 2d backward\.")
    assert codes(lint_records([fine])) == []


# --- links and excerpts ---------------------------------------------------------------------


def test_url_on_a_branch_is_unpinned():
    record = rec(
        file_path="crates/burn-core/src/x.rs",
        line_number=4,
        github_url="https://github.com/tracel-ai/burn/blob/main/crates/burn-core/src/x.rs#L4",
        analyzed_sha=SHA,
    )
    findings = lint_records([record])
    assert codes(findings) == ["unpinned-url"]
    assert "`main`" in findings[0].message and SHA in findings[0].message


@pytest.mark.parametrize("ref", [SHA, SHA[:10], SHA[:7]])
def test_url_on_a_commit_is_pinned(ref):
    record = rec(
        file_path="crates/burn-core/src/x.rs",
        line_number=4,
        github_url=f"https://github.com/tracel-ai/burn/blob/{ref}/crates/burn-core/src/x.rs#L4",
        analyzed_sha=SHA[:10],
    )
    assert codes(lint_records([record])) == []


def test_url_that_disagrees_with_the_record():
    record = rec(
        file_path="crates/burn-core/src/x.rs",
        line_number=40,
        github_url=f"https://github.com/tracel-ai/burn/blob/{SHA}/crates/burn-core/src/y.rs#L4",
        analyzed_sha="d16f7ba2ed",
    )
    assert codes(lint_records([record])) == ["url-mismatch"] * 3
    not_a_file = rec(github_url="https://github.com/tracel-ai/burn/issues/1")
    assert codes(lint_records([not_a_file])) == ["unpinned-url"]


def test_line_outside_excerpt():
    code = "\n".join(f"line {n}" for n in range(10, 20))
    inside = rec(source_code=code, source_code_start=10, source_code_end=19, line_number=15)
    assert codes(lint_records([inside])) == []
    outside = rec(source_code=code, source_code_start=10, source_code_end=19, line_number=25)
    findings = lint_records([outside])
    assert codes(findings) == ["line-outside-excerpt"]
    assert "25" in findings[0].message and "10-19" in findings[0].message
    wrong_length = rec(source_code=code, source_code_start=10, source_code_end=30, line_number=15)
    assert codes(lint_records([wrong_length])) == ["excerpt-length"]
    backwards = rec(source_code_start=30, source_code_end=10)
    assert codes(lint_records([backwards])) == ["line-outside-excerpt"]


# --- shared messages ------------------------------------------------------------------------


def test_shared_message_is_one_info_finding():
    records = [
        rec(id=f"s{n}", error_message="Should read data", file_path="a.rs", line_number=n)
        for n in range(4)
    ]
    findings = lint_records(records)
    assert [(f.code, f.level) for f in findings] == [("duplicate-message", INFO)]
    assert "4 records" in findings[0].message and "4 places" in findings[0].message


def test_shared_message_with_two_write_ups_needs_a_person():
    records = [
        rec(id="a", error_message="Should read data", documentation="One explanation."),
        rec(id="b", error_message="Should  read data ", documentation="Another one."),
        rec(id="c", error_message="Should read data"),
    ]
    findings = lint_records(records)
    assert [(f.code, f.level) for f in findings] == [("conflicting-write-ups", WARNING)]
    assert "a, b" in findings[0].message


def test_write_ups_of_one_message_in_different_files_are_their_own_sites():
    # each write-up covers its own site; the pasted file tells them apart
    apart = [
        rec(id="a", error_message="Could not get cache directory", file_path="mnist.rs",
            documentation="The MNIST download needs a cache directory."),
        rec(id="b", error_message="Could not get cache directory", file_path="lpips.rs",
            documentation="The LPIPS weights need a cache directory."),
    ]
    assert [f.code for f in lint_records(apart)] == ["duplicate-message"]
    # in one file, the same write-up on both lines agrees; different ones need a person
    same = [
        rec(id="c", error_message="Killed by the user.", file_path="tui.rs", line_number=n,
            documentation="The user stopped it.")
        for n in (10, 20)
    ]
    assert [f.code for f in lint_records(same)] == ["duplicate-message"]
    differ = [same[0], same[1].with_changes(documentation="Something else.")]
    assert [f.code for f in lint_records(differ)] == ["conflicting-write-ups"]
