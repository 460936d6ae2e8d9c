"""Catalogs holding many wordings one word apart (a large project, or a catalog that kept every
release's messages): the pasted one must still be found, and answered with confidence."""

from __future__ import annotations

import pytest

import bot.core.index as index_module
from bot.catalog.loader import Catalog
from bot.catalog.model import Record
from bot.core.matcher import Matcher
from bot.core.panic import Panic

REAL = "topk is not implemented for autodiff"
SWAPS = ["device2d", "tensor_op", "shape", "layout", "kernel", "stride", "gradient", "buffer"]


def _catalog() -> Catalog:
    messages = {"real": REAL, "other": "Expected array of length {}, got {}"}
    # `not implemented for autodiff` and the swapped-in words are in more than `max_df`
    # records each, so they are left out of the candidate search: only `topk` is rare, and
    # the forty wordings one word apart cover it as the pasted text does.
    for swap in SWAPS:
        for n in range(55):
            messages[f"{swap}{n:02d}"] = f"{swap} not implemented for autodiff"
    for n in range(40):
        messages[f"near{n:02d}"] = f"topk {SWAPS[n % len(SWAPS)]} not implemented for autodiff"
    for n in range(8):
        messages[f"len{n}"] = f"Expected array of length {SWAPS[n]} got {{}}"
    # Ids that sort before "real": an id-ordered tie-break would pick one of them.
    records = {
        f"0{key}": Record(id=f"0{key}", repo="o/r", error_message=message)
        for key, message in messages.items()
        if key != "real"
    }
    records["real"] = Record(id="real", repo="o/r", error_message=REAL)
    return Catalog(records)


@pytest.fixture(params=["plain", "arrays"])
def matcher(request, monkeypatch) -> Matcher:
    threshold = 1 if request.param == "arrays" else 10**12
    monkeypatch.setattr(index_module, "ARRAY_POSTINGS_MIN_RECORDS", threshold)
    return Matcher(_catalog())


def test_the_record_whose_every_word_is_pasted_is_the_first_candidate(matcher):
    index = matcher.index
    assert len(index.postings["implemented"]) > index.max_df  # left out of the search
    assert index.candidates(REAL)[0] == "real"


def test_a_whole_pattern_match_is_answered_beside_wordings_one_word_apart(matcher):
    for message, expected in ((REAL, "real"), ("Expected array of length 3, got 2", "0other")):
        result = matcher.match_panic(Panic.mentioned(message, None))
        assert result.matched, message
        assert result.best.record_id == expected
        assert result.best.evidence[0] == "pattern"
