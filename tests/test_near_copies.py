"""Catalogs holding many wordings one word apart (a large project, or a catalog that kept every
release's messages): the pasted one must still be found, and answered with confidence."""

from __future__ import annotations

import pytest

import bot.core.match.index as index_module
from bot.catalog.loader import Catalog
from bot.catalog.model import Record
from bot.core.match.matcher import Matcher
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


def test_the_record_whose_every_word_is_pasted_is_a_candidate(matcher):
    index = matcher.index
    assert len(index.postings["implemented"]) > index.max_df  # left out of the search
    found = index.candidates(REAL)
    assert "real" in found and len(found) == 8
    # Forty records tie with it on the rare word; by id alone it would not be among them.
    assert sum(rid < "real" for rid in index.record_ids if "topk" in rid or "near" in rid) > 8


def test_a_whole_pattern_match_is_answered_beside_wordings_one_word_apart(matcher):
    for message, expected in ((REAL, "real"), ("Expected array of length 3, got 2", "0other")):
        result = matcher.match_panic(Panic.mentioned(message, None))
        assert result.matched, message
        assert result.best.record_id == expected
        assert result.best.evidence[0] == "pattern"


def test_a_macro_message_that_only_resembles_from_another_project_is_not_answered():
    # burn#4487: cubecl's reader.rs prints a longer form of a removed burn-router macro's
    # message; the macro could only be invoked in burn's crates or in its own words.
    message = "Failed to read tensor data synchronously on platforms like WASM."
    record = Record(
        id="router",
        repo="tracel-ai/burn",
        error_message=message,
        error_type="expect",
        file_path="crates/burn-router/src/types.rs",
        tags=("rust", "panic-site", "crate:burn-router", "macro-body"),
    )
    caller = Record(
        id="caller",
        repo="tracel-ai/burn",
        error_message="Requested resource {} does not exist in the world of this app.",
        file_path="crates/burn-core/src/world.rs",
        tags=("rust", "panic-site", "crate:burn-core", "track-caller"),
    )
    matcher = Matcher(Catalog({"router": record, "caller": caller}))
    longer = message + " If possible, try using an async variant of this function instead."

    def answer(text: str, path: str) -> str | None:
        header = f"thread 'main' panicked at {path}:9:22:\n{text}\n"
        found = matcher.analyse(header).answered
        return found[0].best.record_id if found else None

    cubecl = "/home/u/.cargo/git/checkouts/cubecl-058c4/97dbe4a/crates/cubecl-common/src/reader.rs"
    burn = (
        "/home/u/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/burn-fusion-0.20.0/src/x.rs"
    )
    assert answer(longer, cubecl) is None  # resembles only, from another project: not its panic
    assert answer(message, cubecl) == "router"  # its own words: printed at an invocation
    assert answer(longer, burn) == "router"  # resembles, from one of burn's crates
    # A `#[track_caller]` function is called from anywhere, older wordings included.
    older = "Requested resource Assets<Water> does not exist in the world of this application."
    assert answer(older, cubecl) == "caller"
