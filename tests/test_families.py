"""Error families: parsing, membership, the committed families, and the loader's use of them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.catalog.families import Family, family_for_message, family_of, parse_families
from bot.catalog.loader import CatalogError, load_catalog
from bot.catalog.model import record_from_dict

ROOT = Path(__file__).parent.parent
FAMILIES_FILE = ROOT / "catalog" / "families.json"
SEED_JSON = next((ROOT / "tests" / "fixtures" / "seeds").glob("003_*.txt"))
BURN = "tracel-ai/burn"


def _families(*items: dict[str, Any]) -> list[Family]:
    return parse_families({"families": list(items)}, "test.json")


def _record(message: str, path: str = "crates/burn-autodiff/src/ops/module.rs", **extra: Any):
    return {"id": extra.pop("id", "r1"), "repo": BURN, "errorMessage": message, "filePath": path,
            **extra}  # fmt: skip


DEPENDENCIES = {"gfx-rs/wgpu", "rust-ndarray/ndarray", "tracel-ai/cubecl"}


@pytest.fixture(scope="module")
def committed() -> list[Family]:
    return parse_families(json.loads(FAMILIES_FILE.read_text()), str(FAMILIES_FILE))


# ---------------------------------------------------------------------------------------------
# The committed families
# ---------------------------------------------------------------------------------------------


def test_committed_families_parse_and_are_written_up(committed: list[Family]) -> None:
    ids = [f.id for f in committed]
    assert len(ids) == len(set(ids))
    assert "unimplemented-op-backward" in ids and "unsupported-dtype" in ids
    by_id = {f.id: f for f in committed}
    for family in committed:
        assert family.has_write_up and family.documentation and family.solutions, family.id
        assert len(family.solutions) >= 2, family.id
        # A payload family hangs below the family of the generic site whose payload it reads.
        if family.is_payload:
            assert family.parent in by_id and not by_id[family.parent].is_payload, family.id
        else:
            assert family.repo in (BURN, None) or family.repo in DEPENDENCIES, family.id


@pytest.mark.parametrize(
    ("message", "path", "family_id"),
    [
        ("Can't differentiate avg pool 2d backward.", "crates/burn-autodiff/src/ops/module.rs",
         "unimplemented-op-backward"),
        ("Can't differentiate linear_x_backward.", "crates/burn-autodiff/src/ops/module.rs",
         "unimplemented-op-backward"),
        ("deform_conv2d_backward: unsupported dtype {:?}", "crates/burn-flex/src/ops/module.rs",
         "unsupported-dtype"),
        ("Unsupported dtype for `bool_from_data` {other:?}", "crates/burn-cubecl/src/ops/b.rs",
         "unsupported-dtype"),
        ("float_cast: unsupported target dtype {:?}", "crates/burn-flex/src/ops/float.rs",
         "unsupported-dtype"),
        ("int_scatter_nd is not implemented for this backend", "crates/burn-backend/src/x.rs",
         "op-not-implemented-for-backend"),
        ("Quantization not supported yet", "crates/burn-fusion/src/ops/transaction.rs",
         "quantization-not-supported"),
        ("cat: dim {} out of bounds for {} dimensions", "crates/burn-flex/src/ops/cat.rs",
         "dim-out-of-bounds"),
        ("Index out of bounds for PartialDataset: {} >= {}", "crates/burn-dataset/src/p.rs",
         "dataset-index-out-of-bounds"),
        ("Requires `autodiff` feature", "crates/burn-dispatch/src/backend.rs",
         "autodiff-feature-required"),
        # Not members: an index (not a dim) out of bounds, another crate, another message.
        ("index {raw} out of bounds for dimension of size {dim_size}",
         "crates/burn-flex/src/ops/gather_scatter.rs", None),
        ("Can't differentiate avg pool 2d backward.", "crates/burn-other/src/x.rs", None),
        ("Should be Float primitive kind", "crates/burn-tensor/src/bridge/kind.rs", None),
    ],
)  # fmt: skip
def test_committed_family_membership(
    committed: list[Family], message: str, path: str, family_id: str | None
) -> None:
    found = family_of(_record(message, path), committed)
    assert (found.id if found else None) == family_id


def test_the_seed_record_belongs_to_the_backward_family(committed: list[Family]) -> None:
    document = json.loads(SEED_JSON.read_text())
    record = record_from_dict(document["record"], str(SEED_JSON))
    family = family_of(record, committed)
    assert family is not None and family.id == "unimplemented-op-backward"
    assert family.id == record.background_tag


def test_pasted_messages_find_their_family(committed: list[Family]) -> None:
    found = family_for_message("softmax: unsupported dtype F16", committed)
    assert found is not None and found.id == "unsupported-dtype"
    found = family_for_message("Can't differentiate interpolate backward.", committed)
    assert found is not None and found.id == "unimplemented-op-backward"
    # A known crate outside the family's crates excludes; an unknown one does not.
    assert family_for_message("Can't differentiate x backward.", committed, crate="burn-nn") is None
    assert family_for_message("Can't differentiate x backward.", committed, repo="a/b") is None
    assert family_for_message("all is well", committed) is None


# ---------------------------------------------------------------------------------------------
# Membership rules
# ---------------------------------------------------------------------------------------------


def test_formats_match_whole_messages_with_placeholders() -> None:
    (family,) = _families({"id": "f", "name": "F", "messageFormats": ["bad {} value {:?}!"]})
    assert family.matches_message("bad op value {:?}!")  # a record's format string
    assert family.matches_message("bad op   value\n 3!")  # a pasted message, rewrapped
    assert not family.matches_message("a bad op value 3!")  # the whole message must fit
    assert not family.matches_message("bad op value 3! and more")
    assert not family.matches_message("good op value 3!")


def test_patterns_are_searched() -> None:
    (family,) = _families({"id": "f", "name": "F", "messagePatterns": ["(?i)out of memory"]})
    assert family.matches_message("CUDA: Out Of Memory while allocating")
    assert not family.matches_message("memory is fine")


def test_listed_ids_then_background_tag_then_patterns() -> None:
    families = _families(
        {"id": "by-pattern", "name": "P", "messageFormats": ["boom {}"]},
        {"id": "by-tag", "name": "T", "messageFormats": ["never"]},
        {"id": "by-id", "name": "I", "records": ["special"]},
    )
    assert family_of(_record("boom 1"), families).id == "by-pattern"
    assert family_of(_record("boom 1", backgroundTag="by-tag"), families).id == "by-tag"
    assert family_of(_record("boom 1", id="special", backgroundTag="by-tag"), families).id == (
        "by-id"
    )
    assert family_of(_record("quiet"), families) is None
    assert family_of(_record("quiet", backgroundTag="unknown-tag"), families) is None


def test_repo_and_crate_limits() -> None:
    (family,) = _families(
        {"id": "f", "name": "F", "repo": BURN, "crates": ["burn-nn"], "messageFormats": ["x"]}
    )
    assert family.matches(_record("x", "crates/burn-nn/src/a.rs"))
    assert not family.matches(_record("x", "crates/burn-core/src/a.rs"))
    assert not family.matches({**_record("x", "crates/burn-nn/src/a.rs"), "repo": "a/b"})
    # A listed id belongs whatever the limits say.
    (listed,) = _families({"id": "g", "name": "G", "crates": ["burn-nn"], "records": ["r1"]})
    assert listed.matches(_record("anything", "src/lib.rs"))


def test_records_and_dicts_are_both_accepted() -> None:
    (family,) = _families({"id": "f", "name": "F", "crates": ["burn-nn"], "messageFormats": ["x"]})
    as_dict = _record("x", "crates/burn-nn/src/a.rs")
    assert family_of(as_dict, [family]) is family
    assert family_of(record_from_dict(as_dict), [family]) is family


# ---------------------------------------------------------------------------------------------
# Problems
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("document", "complaint"),
    [
        ({"families": {}}, '"families" must be a list'),
        ({"families": [], "extra": 1}, "unknown top-level field"),
        ({"families": ["x"]}, "family #1: a family must be a JSON object"),
        ({"families": [{"name": "N", "records": ["a"]}]}, "needs `id` and `name`"),
        ({"families": [{"id": "Bad Id", "name": "N", "records": ["a"]}]}, "lower-case slug"),
        ({"families": [{"id": "f", "name": "N"}]}, "at least one of `messageFormats`"),
        ({"families": [{"id": "f", "name": "N", "records": "a"}]}, "`records` must be a list"),
        ({"families": [{"id": "f", "name": "", "records": ["a"]}]}, "`name` must be non-empty"),
        ({"families": [{"id": "f", "name": "N", "records": ["a"], "solution": ["x"]}]},
         "family `f`: unknown field(s) `solution`"),
        ({"families": [{"id": "f", "name": "N", "repo": "norepo", "records": ["a"]}]},
         "must be OWNER/NAME"),
        ({"families": [{"id": "f", "name": "N", "messagePatterns": ["(a+)+$"]}]},
         "family `f`: `messagePatterns`: the pattern `(a+)+$` repeats"),
        ({"families": [{"id": "f", "name": "N", "messagePatterns": ["(unclosed"]}]},
         "not a valid regular expression"),
        ({"families": [{"id": "f", "name": "N", "records": ["a"]},
                       {"id": "f", "name": "M", "records": ["b"]}]}, "used twice"),
    ],
)  # fmt: skip
def test_problems_are_reported(document: dict[str, Any], complaint: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_families(document, "fam.json")
    assert complaint in str(caught.value)


# ---------------------------------------------------------------------------------------------
# Through the loader
# ---------------------------------------------------------------------------------------------


def test_the_loader_hands_families_documents_here(tmp_path: Path) -> None:
    (tmp_path / "families.json").write_text(FAMILIES_FILE.read_text())
    (tmp_path / "r.json").write_text(json.dumps(_record("Can't differentiate x backward.")))
    catalog = load_catalog([tmp_path])
    assert [f.id for f in catalog.families] == [
        f["id"] for f in json.loads(FAMILIES_FILE.read_text())["families"]
    ]
    record = catalog.get("r1")
    assert record is not None
    assert family_of(record, catalog.families).id == "unimplemented-op-backward"


def test_the_loader_reports_a_bad_families_file(tmp_path: Path) -> None:
    (tmp_path / "families.json").write_text('{"families": [{"id": "f", "name": "F"}]}')
    with pytest.raises(CatalogError) as caught:
        load_catalog([tmp_path])
    text = str(caught.value)
    assert "families.json" in text and "at least one of `messageFormats`" in text
