"""The index and the matcher's shortcuts (bot.core.match.index, postings, drift, history) give what
their plain definitions give, only faster."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from difflib import SequenceMatcher
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bot.core.match.index as index_module
from bot.catalog.loader import Catalog, bundled_catalog_path, load_catalog
from bot.catalog.model import Record
from bot.catalog.patterns import normalise_message, parse_format
from bot.core.match import drift as drift_module
from bot.core.match.index import CatalogIndex, _message_tokens, _word_weight, words
from bot.core.match.releases import shares_run

ROOT = Path(__file__).resolve().parent.parent

# Text made of what changes tokenising: apostrophes, braces, newlines, non-ASCII letters that
# lower to ASCII (the Kelvin sign), digits, underscores and stopwords.
PIECES = st.sampled_from(
    ["can't", "'x'", "''", "a''b", "{x}", "{:?}", "{", "}", "\n", "K", "\u212a", "\u0130", "é",
     "deform_conv2d", "2d", "the", "is", "not", "eq", "a", "I", " ", "  ", ".", "-", "Tensor"]
)  # fmt: skip
MESSAGES = st.lists(PIECES, max_size=12).map("".join)


def _tokens_by_definition(message: str) -> set[str]:
    text = index_module._PLACEHOLDER_TEXT.sub(" ", message)
    return {w for w in words(text) if _word_weight(w) > 0}


@settings(max_examples=400, deadline=None)
@given(MESSAGES)
def test_a_messages_words_are_the_defined_ones(message):
    assert _message_tokens(message) == _tokens_by_definition(message)


def _catalog(messages: list[str]) -> Catalog:
    records = {
        f"r{n:04d}": Record(
            id=f"r{n:04d}",
            repo="o/r",
            error_message=message,
            file_path=f"crates/c{n % 3}/src/f{n % 5}.rs",
        )
        for n, message in enumerate(messages)
    }
    return Catalog(records)


def _postings(index: CatalogIndex) -> dict[str, list[str]]:
    return {t: sorted(index.record_ids[n] for n in ns) for t, ns in index.postings.items()}


@settings(max_examples=60, deadline=None)
@given(st.lists(MESSAGES, min_size=1, max_size=40))
def test_both_postings_builders_and_the_definition_agree(messages):
    catalog = _catalog(messages)
    expected: dict[str, list[str]] = {}
    for n, message in enumerate(messages):
        for token in _tokens_by_definition(message):
            expected.setdefault(token, []).append(f"r{n:04d}")
    plain = CatalogIndex(catalog)
    assert _postings(plain) == expected
    original = index_module.ARRAY_POSTINGS_MIN_RECORDS
    index_module.ARRAY_POSTINGS_MIN_RECORDS = 1
    try:
        arrays = CatalogIndex(catalog)
    finally:
        index_module.ARRAY_POSTINGS_MIN_RECORDS = original
    assert _postings(arrays) == expected
    assert list(arrays.record_ids) == list(plain.record_ids)


def test_chunks_of_the_bundled_catalog_index_as_one(monkeypatch):
    catalog = load_catalog([bundled_catalog_path()])
    whole = CatalogIndex(catalog)
    monkeypatch.setattr(index_module, "_CHUNK_RECORDS", 7)
    chunked = CatalogIndex(catalog)
    assert _postings(chunked) == _postings(whole)
    assert dict(chunked.by_file) == dict(whole.by_file)
    assert chunked.crate_folders == whole.crate_folders


def _drift_by_definition(query: str, fmt: str):
    """drift() without stopping early: the whole alignment, then the same decision."""
    form = drift_module.MessageForm.of(parse_format(normalise_message(fmt)))
    pasted = drift_module.PastedForm.of(query)
    original = drift_module._align

    def whole(message, tokens, allowed):
        return original(message, tokens, 10**9)

    drift_module._align = whole
    try:
        return drift_module.drift_between(pasted, form)
    finally:
        drift_module._align = original


WORDS = st.sampled_from("the tile covers layer grid row column of in at , . : {} {:?}".split())


@settings(max_examples=300, deadline=None)
@given(st.lists(WORDS, min_size=8, max_size=20), st.lists(WORDS, max_size=30))
def test_stopping_the_alignment_early_changes_no_answer(fmt_words, pasted_words):
    fmt = " ".join(fmt_words)
    # Pastes near the format are where the decision is close: edit a copy of it as well.
    near = " ".join(w if w not in ("{}", "{:?}") else "7" for w in fmt_words[:-1] + pasted_words)
    for query in (" ".join(pasted_words), near):
        expected = _drift_by_definition(query, fmt)
        form = drift_module.MessageForm.of(parse_format(normalise_message(fmt)))
        assert drift_module.drift_between(drift_module.PastedForm.of(query), form) == expected


@settings(max_examples=400, deadline=None)
@given(
    st.text(alphabet="abc de", max_size=60),
    st.text(alphabet="abc de", max_size=80),
    st.integers(2, 40),
)
def test_a_shared_run_is_found_exactly_when_the_longest_common_run_is_long_enough(
    literal, query, run
):
    longest = SequenceMatcher(None, literal, query, autojunk=False)
    size = longest.find_longest_match(0, len(literal), 0, len(query)).size
    assert shares_run(literal, query, run) == (size >= run)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="abcdefgh ", min_size=12, max_size=80), st.data())
def test_a_run_of_exactly_the_length_is_found_wherever_it_starts(literal, data):
    run = data.draw(st.integers(12, len(literal)))
    start = data.draw(st.integers(0, len(literal) - run))
    noise = data.draw(st.text(alphabet="xyz", max_size=20))
    assert shares_run(literal, noise + literal[start : start + run] + noise, run)


def test_the_candidates_do_not_depend_on_the_hash_seed():
    # Summing a text's word weights in set order made a record whose words the text holds
    # all fall a hair short of a ratio of 1 under some seeds, and lose its place.
    script = (
        "import json\n"
        "from bot.catalog.loader import load_catalog, bundled_catalog_path\n"
        "from bot.core.match.index import CatalogIndex\n"
        "index = CatalogIndex(load_catalog([bundled_catalog_path()]))\n"
        "query = ('=== Tensor Operation Error === Operation: Matmul Reason: 1. The inner "
        "dimension of matmul should be the same, but got 784 and 512. Lhs shape [32, 784], "
        "rhs shape [512, 10].')\n"
        "print(json.dumps(index.candidates(query)))\n"
    )
    seen = set()
    for seed in ("1", "5", "7", "11"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True
        )
        assert out.returncode == 0, out.stderr
        seen.add(tuple(json.loads(out.stdout)))
    assert len(seen) == 1
    (ranking,) = seen
    assert ranking[0] == "e86f172b6d6af37e"  # check.rs: the matmul inner-dimension reason


@pytest.mark.parametrize("size", [1, 3])
def test_large_catalog_arrays_rank_as_the_plain_loop(size, monkeypatch):
    catalog = load_catalog([bundled_catalog_path()])
    monkeypatch.setattr(index_module, "ARRAY_POSTINGS_MIN_RECORDS", size)
    arrays = CatalogIndex(catalog)
    monkeypatch.setattr(index_module, "ARRAY_POSTINGS_MIN_RECORDS", 10**12)
    plain = CatalogIndex(catalog)
    for query in (
        "Can't differentiate avg pool 2d backward.",
        "deform_conv2d_backward: unsupported dtype I8",
        "The inner dimension of matmul should be the same, but got 784 and 512.",
    ):
        assert arrays.candidates(query) == plain.candidates(query)


def test_a_large_catalogs_opening_table_finds_what_the_plain_lookup_finds(monkeypatch):
    """`opened_by` of a large catalog reads two arrays built with its index (and kept in its
    snapshot), not a dict built on the first text: the same records for every opening."""
    catalog = load_catalog([bundled_catalog_path()])
    monkeypatch.setattr(index_module, "ARRAY_POSTINGS_MIN_RECORDS", 1)
    arrays = CatalogIndex(catalog)
    monkeypatch.setattr(index_module, "ARRAY_POSTINGS_MIN_RECORDS", 10**12)
    plain = CatalogIndex(catalog)
    assert "_opening_table" in arrays.__dict__ and "_opening_table" not in plain.__dict__
    queries = [r.error_message for r in catalog if "{" not in r.error_message[:40]][::25]
    queries += [q.lower() for q in queries[:20]] + ["no record opens with these words at all"]
    assert len(queries) > 100
    for query in queries:
        assert sorted(arrays.opened_by(query)) == sorted(plain.opened_by(query)), query
