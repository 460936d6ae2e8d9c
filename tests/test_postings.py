"""Large catalogs rank candidates over numpy arrays (bot.core.match.postings): the same answers as
the plain loop, to the last bit."""

from __future__ import annotations

import json
import random

import pytest
from corpus_scoring import load_cases

import bot.core.match.index as index_module
import bot.core.match.postings as postings_module
from bot.app import load_bundled
from bot.catalog.loader import bundled_catalog_path, load_catalog
from bot.catalog.sites import skeleton_record
from bot.core.match.index import CatalogIndex, words
from bot.core.match.matcher import Matcher
from bot.core.match.postings import rank_with_arrays

SWAPS = "tensor shape dtype kernel buffer device stream gradient backward layout".split()


@pytest.fixture(scope="module")
def grown_catalog(tmp_path_factory):
    """The bundled catalog and 6,000 near-copies of its messages: many ties and shared words."""
    rng = random.Random(3)
    templates = [r.error_message for r in load_bundled().catalog if len(r.error_message) > 15]
    path = tmp_path_factory.mktemp("grown") / "grown.jsonl"
    seen: set[str] = set()
    lines = []
    while len(lines) < 6000:
        message = templates[rng.randrange(len(templates))].split(" ")
        message[rng.randrange(len(message))] = rng.choice(SWAPS)
        text = " ".join(message)
        if text in seen:
            continue
        seen.add(text)
        record = skeleton_record(
            repo="test/grown",
            file_path=f"crates/burn-{rng.choice(SWAPS)}/src/{rng.choice(SWAPS)}.rs",
            line=rng.randint(1, 900),
            kind="panic!",
            message_format=text,
            commit="0" * 40,
        )
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n")
    return load_catalog([bundled_catalog_path(), path])


@pytest.mark.parametrize("bitsets", [False, True])
def test_the_array_ranking_equals_the_plain_loop(grown_catalog, monkeypatch, bitsets):
    """Every line of the corpus, searched on its rare words with its common words for the
    tie-break among near-copies: the same records in the same order (tied records looked up
    in the common words' postings or, as from thousands of ties on, in their bitsets)."""
    monkeypatch.setattr(index_module, "ARRAY_POSTINGS_MIN_RECORDS", 10**12)
    if bitsets:
        monkeypatch.setattr(postings_module, "BITSET_MIN_RECORDS", 1)
        monkeypatch.setattr(postings_module, "BITSET_MIN_POSTINGS", 0)
        monkeypatch.setattr(postings_module, "BITSET_BYTES", 1)  # 16 kept: some evicted
    index = CatalogIndex(grown_catalog)
    keys = set()
    for case in load_cases():
        for line in case["text"].splitlines():
            found = {w: len(ids) for w in words(line) if (ids := index.postings.get(w))}
            rare = frozenset(w for w, n in found.items() if n <= index.max_df)
            if rare:
                keys.add((rare, frozenset(found) - rare))
    assert len(keys) > 300
    assert sum(bool(common) for _, common in keys) > 100
    tie_breaks = 0
    for limit in (1, 8):
        for rare, common in keys:
            plain = index._rank_candidates(rare, limit, common)
            assert rank_with_arrays(index, rare, limit, common) == plain
            tie_breaks += plain != index._rank_candidates(rare, limit)
    assert tie_breaks > 10  # the common words decided among tied records


def test_a_large_catalog_answers_as_with_the_plain_loop(grown_catalog, monkeypatch):
    texts = [case["text"] for case in load_cases()]
    monkeypatch.setattr(index_module, "ARRAY_POSTINGS_MIN_RECORDS", 10**12)
    plain = Matcher(grown_catalog)
    expected = [plain.analyse(text) for text in texts]
    monkeypatch.setattr(index_module, "ARRAY_POSTINGS_MIN_RECORDS", 1)
    arrays = Matcher(grown_catalog)
    assert [arrays.analyse(text) for text in texts] == expected
    assert arrays.index.__dict__.get("_array_postings") is not None  # the arrays were used


def test_a_large_index_read_back_from_its_pickle_answers_the_same(grown_catalog, monkeypatch):
    """The cache pickles a large catalog's postings as one array (PackedPostings), not one
    array per word: read back, every word's records and every answer are the same."""
    import pickle

    from bot.core.match.postings import PackedPostings

    texts = [case["text"] for case in load_cases()]
    monkeypatch.setattr(index_module, "ARRAY_POSTINGS_MIN_RECORDS", 1)
    built = Matcher(grown_catalog)
    expected = [built.analyse(text) for text in texts]
    assert isinstance(built.index.postings, PackedPostings)
    copy = pickle.loads(pickle.dumps(built.index))
    assert list(copy.postings) == list(built.index.postings)
    assert dict(copy.idf) == dict(built.index.idf)
    assert all(
        copy.postings[w].tolist() == built.index.postings[w].tolist() for w in built.index.postings
    )
    read = Matcher(copy.catalog, index=copy)
    assert [read.analyse(text) for text in texts] == expected


@pytest.mark.parametrize("count", [1, 2, 8])
def test_the_first_records_by_value_are_those_of_sorting_them_all(count):
    """Only the records that can be first are sorted (ties at the cut by id, compared by
    rank): the same first `count` as sorting every (value, id) pair, when thousands share the
    best values."""
    import numpy as np

    from bot.core.match.postings import _first_by_value, _id_ranks

    rng = random.Random(count)
    record_ids = [f"{rng.getrandbits(64):016x}" for _ in range(5000)]
    ranks = _id_ranks(record_ids)
    for _ in range(50):
        numbers = np.array(sorted(rng.sample(range(5000), 3000)), dtype=np.int32)
        values = np.array([rng.choice((0.5, 1.0, 1.5, 2.0)) for _ in numbers])
        everything = sorted(
            (-v, record_ids[n], n) for n, v in zip(numbers.tolist(), values.tolist(), strict=True)
        )
        expected = [n for *_, n in everything[:count]]
        places = _first_by_value(numbers, values, count, ranks)
        assert numbers[places].tolist() == expected


@pytest.mark.parametrize("long", [False, True])
def test_id_ranks_order_ids_as_python_does(long):
    import numpy as np

    from bot.core.match.postings import _id_ranks

    rng = random.Random(5)
    alphabet = "abcXYZ019-_éß"
    ids = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))) for _ in range(400)]
    ids = list(dict.fromkeys(ids + (["x" * 60] if long else [])))
    ranks = _id_ranks(ids)
    assert np.argsort(ranks).tolist() == sorted(range(len(ids)), key=ids.__getitem__)


@pytest.mark.parametrize("k", [1, 2, 3, 8])
def test_the_kth_largest_counts_repeats_as_a_sort_does(k):
    """`_kth_largest`, by `max` for the first two and a partition past them: the k-th of the
    values sorted from the largest, repeats counted (a unique best, a tied best, all alike)."""
    import numpy as np

    from bot.core.match.postings import _kth_largest

    rng = random.Random(k)
    for _ in range(200):
        size = rng.randint(k, 40)
        pool = rng.choice(((0.5, 1.0), (0.25, 0.5, 1.0, 2.0), tuple(range(100))))
        values = np.array([float(rng.choice(pool)) for _ in range(size)])
        if rng.random() < 0.3:
            values[rng.randrange(size)] = 500.0  # one best above all the others
        assert _kth_largest(values, k) == sorted(values.tolist(), reverse=True)[k - 1]


def test_past_the_cut_a_text_of_common_words_is_searched_as_before(grown_catalog, monkeypatch):
    """A word in more records than MAX_DF finds no candidates (a text reaches a bounded number
    of records however large the catalog), except in a text made only of such words: that one
    is searched with the hundredth's cut, the same candidates as without the cap."""
    monkeypatch.setattr(index_module, "ARRAY_POSTINGS_MIN_RECORDS", 1)
    uncapped = CatalogIndex(grown_catalog)
    monkeypatch.setattr(index_module, "MAX_DF", 20)
    capped = CatalogIndex(grown_catalog)
    assert capped.max_df == 20 < capped.uncapped_df == uncapped.max_df
    common_only = reached = 0
    for record in list(grown_catalog)[:3000]:
        found = [capped.postings[w] for w in words(record.error_message) if w in capped.postings]
        if not found:
            continue
        if all(len(ids) > 2 * capped.max_df for ids in found):
            common_only += 1
            assert capped.candidates(record.error_message) == uncapped.candidates(
                record.error_message
            )
            if any(len(ids) <= capped.uncapped_df for ids in found):
                reached += 1
                assert record.id in capped.candidates(record.error_message, limit=50)
    assert common_only > 20 and reached > 10, (common_only, reached)
    arrays = index_module.build_array_postings(capped)
    searched = [w for w in capped.postings if len(capped.postings[w]) <= capped.max_df]
    assert searched and all(len(arrays.words(capped, w)) <= 20 for w in searched)


def test_messages_of_several_lines_rank_on_their_first_line_as_the_plain_loop(
    grown_catalog, tmp_path, monkeypatch
):
    """Messages of two lines (a hint of many words after the first): searched on their first
    line's words, the arrays rank as the plain loop, and each message is found by its own."""
    rng = random.Random(5)
    templates = [r.error_message for r in grown_catalog if 20 < len(r.error_message) < 80]
    hint_words = [*SWAPS, "may", "mean", "that", "was", "called"]
    hinted = []
    for n in range(200):
        first = templates[rng.randrange(len(templates))]
        hint = " ".join(rng.choice(hint_words) for _ in range(14))
        record = skeleton_record(
            repo="test/hinted",
            file_path=f"src/hint{n}.rs",
            line=n + 1,
            kind="panic!",
            message_format=f"{first}\nHint {n}: {hint}.",
            commit="0" * 40,
        )
        hinted.append(record)
    path = tmp_path / "hinted.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in hinted) + "\n")
    catalog = load_catalog([bundled_catalog_path(), path])
    monkeypatch.setattr(index_module, "ARRAY_POSTINGS_MIN_RECORDS", 10**12)
    index = CatalogIndex(catalog)
    found = 0
    for record in hinted:
        line = record["errorMessage"].split("\n")[0]
        counts = {w: len(ids) for w in words(line) if (ids := index.postings.get(w))}
        rare = frozenset(w for w, n in counts.items() if n <= index.max_df)
        if not rare:
            continue
        for limit in (1, 8):
            plain = index._rank_candidates(rare, limit, frozenset(counts) - rare)
            assert rank_with_arrays(index, rare, limit, frozenset(counts) - rare) == plain
        found += record["id"] in index.candidates(line)
    assert found >= 150
