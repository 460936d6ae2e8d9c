"""Candidate ranking for large catalogs: postings as integer arrays, summed by numpy.

With 100k records and more, one query's words reach tens of thousands of postings, and adding
their weights one by one in Python is most of a match. Here each word's postings are an array
of record numbers; a query's postings are sorted by record and each record's weights added
word by word in the same order as the plain loop in `CatalogIndex._rank_candidates`, so every
sum, the coverage filter and the ranking are the same to the last bit. Built with a large
catalog's index (so its load time counts them). numpy is imported by the functions that use
it, on first use: only large catalogs need it, and its import would cost every small
catalog's start-up (about 0.1 s).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from bot.core.match.index import CatalogIndex


# The records with the most shared word weight are verified whatever their coverage: in a
# catalog of several projects, short messages sharing one word (`max: ...`) fill the places by
# coverage ahead of the long message a text garbles (`max pool2d with indecies backward`).
HEAVIEST_CANDIDATES = 2
# Tied records are looked up in a common word's bitset from this many on, for a word of more
# records than BITSET_MIN_POSTINGS (below either, a binary search is as quick); the bitsets
# kept take at most BITSET_BYTES (256 words at a million records).
BITSET_MIN_RECORDS = 64
BITSET_MIN_POSTINGS = 4096
BITSET_BYTES = 32 << 20


class ArrayPostingsBuilder:
    """`index.PostingsBuilder` for large catalogs: words become numbers, and (word, record)
    pairs are sorted and split into one array per word by numpy, not appended one by one."""

    def __init__(self, weightless: frozenset[str]):
        self.weightless = weightless
        self.vocabulary: dict[str, int] = {"\n": 0}
        self.skip = [True]  # by word number: the separator and weightless words
        self.words: list[np.ndarray] = []
        self.records: list[np.ndarray] = []

    def _numbers(self, tokens: Iterable[str]) -> list[int]:
        vocabulary = self.vocabulary
        for token in sorted(t for t in set(tokens) if t not in vocabulary):
            vocabulary[token] = len(vocabulary)
            self.skip.append(token in self.weightless)
        return list(map(vocabulary.__getitem__, tokens))

    def add_words(self, words: list[str], first: int) -> None:
        import numpy as np

        numbers = np.array(self._numbers(words), dtype=np.int32)
        records = np.cumsum(numbers == 0, dtype=np.int32) + first
        keep = ~np.array(self.skip, dtype=bool)[numbers]
        self.words.append(numbers[keep])
        self.records.append(records[keep])

    def add_record(self, number: int, tokens: set[str]) -> None:
        import numpy as np

        ordered = sorted(tokens)
        self.words.append(np.array(self._numbers(ordered), dtype=np.int32))
        self.records.append(np.full(len(ordered), number, dtype=np.int32))

    def finish(self) -> Mapping[str, np.ndarray]:
        import numpy as np

        if not self.words:
            return {}
        # One key per (word, record), sorted and without repeats (a word twice in a message).
        keys = (np.concatenate(self.words).astype(np.int64) << 32) | np.concatenate(
            self.records
        ).astype(np.int64)
        if not len(keys):
            return {}  # no informative word in any message
        keys.sort()
        keys = keys[np.concatenate(([True], keys[1:] != keys[:-1]))]
        words = (keys >> 32).astype(np.int32)
        records = (keys & 0xFFFFFFFF).astype(np.int32)
        starts = np.flatnonzero(np.diff(words)) + 1
        names = [""] * len(self.vocabulary)
        for token, number in self.vocabulary.items():
            names[number] = token
        firsts = words[np.concatenate(([0], starts))].tolist()
        bounds = np.concatenate(([0], starts, [len(records)])).astype(np.int64)
        return PackedPostings([names[word] for word in firsts], records, bounds)


class PackedPostings(Mapping[str, "np.ndarray"]):
    """Word -> its records' numbers, every word's in one array (`flat[bounds[i]:bounds[i+1]]`
    for the i-th word). Pickled as three objects: one array per word (a million of them from a
    million records, most holding one record) took seconds to read back from the cache."""

    __slots__ = ("_bounds", "_flat", "_where")

    def __init__(
        self, tokens: list[str] | Mapping[str, int], flat: np.ndarray, bounds: np.ndarray
    ) -> None:
        # Word -> its number. A large catalog's cache maps a packed lookup column in place of
        # the dict (`use_where`, bot.catalog.columns.Positions): no million keys to rebuild.
        self._where: Mapping[str, int] = (
            tokens
            if isinstance(tokens, Mapping)
            else dict(zip(tokens, range(len(tokens)), strict=True))
        )
        self._flat = flat
        self._bounds = bounds

    def use_where(self, where: Mapping[str, int]) -> None:
        """Words looked up in `where` instead: the same words and numbers, in the same order."""
        self._where = where

    def __getitem__(self, token: str) -> np.ndarray:
        i = self._where[token]
        return self._flat[self._bounds[i] : self._bounds[i + 1]]

    def get(self, token: str, default: Any = None) -> Any:
        i = self._where.get(token)
        if i is None:
            return default
        return self._flat[self._bounds[i] : self._bounds[i + 1]]

    def __contains__(self, token: object) -> bool:
        return token in self._where

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)

    def __reduce__(self) -> tuple[Any, ...]:
        where = self._where
        tokens = list(where) if isinstance(where, dict) else where
        return (PackedPostings, (tokens, self._flat, self._bounds))


class PackedWeights(Mapping[str, float]):
    """Word -> weight for the words of a PackedPostings, in its order: one list of floats
    beside it, not a second dict of a million words to read back from the cache."""

    __slots__ = ("_postings", "_weights")

    def __init__(self, postings: PackedPostings, weights: Sequence[float]) -> None:
        self._postings = postings
        self._weights = weights  # a list, or a packed column (bot.catalog.columns)

    @property
    def weights(self) -> Sequence[float]:
        return self._weights

    def __getitem__(self, token: str) -> float:
        return self._weights[self._postings._where[token]]

    def __contains__(self, token: object) -> bool:
        return token in self._postings._where

    def __iter__(self) -> Iterator[str]:
        return iter(self._postings)

    def __len__(self) -> int:
        return len(self._weights)

    def __reduce__(self) -> tuple[Any, ...]:
        return (PackedWeights, (self._postings, self._weights))


class ArrayPostings:
    def __init__(self, index: CatalogIndex):
        import numpy as np  # large catalogs only (see the module's docstring)

        self.record_ids = index.record_ids
        count = len(index.record_ids)
        idf = index.idf
        # The searched words' int arrays (at most max_df records each), read in place.
        searched = {
            token: np.asarray(numbers, dtype=np.int32)
            for token, numbers in index.postings.items()
            if len(numbers) <= index.max_df
        }
        # Past MAX_DF's size, the totals on the words a hundredth's cut searches, for a text of
        # common words only (`CatalogIndex.candidates`' `wide` search).
        wider = {
            token: np.asarray(numbers, dtype=np.int32)
            for token, numbers in index.postings.items()
            if index.max_df < len(numbers) <= index.uncapped_df
        }
        # Each record's total word weight: the sum of its words' weights, added in the same
        # order as `CatalogIndex.record_weights` adds them (so the same float), 1 without words;
        # on the searched words, and on every word for the ranking's tie-break.
        # A message of several lines is measured on its first line, as the plain ranking does.
        self.totals = _weights(searched, idf, count)
        for number, weight in index.first_line_weights(lambda df: df <= index.max_df).items():
            self.totals[number] = weight
        self.totals_wide = self.totals
        if wider:
            self.totals_wide = _weights({**searched, **wider}, idf, count)
            uncapped = index.first_line_weights(lambda df: df <= index.uncapped_df)
            for number, weight in uncapped.items():
                self.totals_wide[number] = weight
        self.totals_all = _weights(index.postings, idf, count)
        self.min_coverage = index.min_coverage
        self.id_ranks = _id_ranks(self.record_ids)
        self._start_bitsets()

    def _start_bitsets(self) -> None:
        # Common words' postings as bitsets (one bit per record), built on first use and the
        # most recently used kept within BITSET_BYTES: telling which of a thousand tied records
        # hold a word of fifty thousand records is a lookup each, not a binary search each.
        self.bitsets: OrderedDict[str, np.ndarray] = OrderedDict()
        self.bitsets_kept = max(16, BITSET_BYTES // max(1, (len(self.record_ids) + 7) // 8))
        self.bitsets_lock = threading.Lock()

    def __getstate__(self) -> dict:
        # The cache pickles a large catalog's index whole: a lock cannot be pickled, and the
        # bitsets are a cache of the postings.
        state = dict(self.__dict__)
        for name in ("bitsets", "bitsets_kept", "bitsets_lock"):
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._start_bitsets()

    def bitset(self, index: CatalogIndex, token: str) -> np.ndarray:
        """A word's records as a bitset: bit `n % 8` of byte `n // 8` is set for record n."""
        import numpy as np

        with self.bitsets_lock:
            bits = self.bitsets.get(token)
            if bits is not None:
                self.bitsets.move_to_end(token)
                return bits
        held = np.zeros(len(self.record_ids), dtype=bool)
        held[self.words(index, token)] = True
        bits = np.packbits(held, bitorder="little")
        with self.bitsets_lock:
            self.bitsets[token] = bits
            while len(self.bitsets) > self.bitsets_kept:
                self.bitsets.popitem(last=False)
        return bits

    def words(self, index: CatalogIndex, token: str) -> np.ndarray:
        """A searched word's postings, from the index (the same int arrays)."""
        import numpy as np

        return np.asarray(index.postings[token], dtype=np.int32)

    def fullest(
        self,
        index: CatalogIndex,
        numbers: np.ndarray,
        count: int,
        found: float,
        common: frozenset[str],
    ) -> np.ndarray:
        """`CatalogIndex.fullest` over arrays, the same sums in the same order; the places in
        `numbers` of the records chosen, best first."""
        import numpy as np

        weights = np.full(len(numbers), found)
        many = len(numbers) >= BITSET_MIN_RECORDS
        if many:
            byte, bit = numbers >> 3, (numbers & 7).astype(np.uint8)
        for token in sorted(common):
            held = self.words(index, token)
            if many and len(held) > BITSET_MIN_POSTINGS:
                hit = (self.bitset(index, token).take(byte) >> bit) & 1
            else:  # (`held` and `numbers` are int32 both: a wider `numbers` would copy `held`)
                hit = held.take(np.searchsorted(held, numbers), mode="clip") == numbers
            weights += hit * index.idf[token]  # (x + 0.0 is x: a miss adds nothing)
        ratios = weights / self.totals_all[numbers]
        return _first_by_value(numbers, ratios, count, self.id_ranks)


def _id_ranks(record_ids: Sequence[str]) -> np.ndarray:
    """Each record's place among the ids in order (numpy orders text by code point, as Python
    does), so ties are told by id in numpy."""
    import numpy as np

    count = len(record_ids)
    ranks = np.empty(count, dtype=np.int32)
    longest = max(map(len, record_ids), default=0)
    if longest <= _RANKED_ID_CHARS:
        order = np.argsort(np.array(record_ids, dtype=f"U{max(longest, 1)}"), kind="stable")
    else:  # (long ids: a fixed-width array of them would be large)
        order = np.array(sorted(range(count), key=record_ids.__getitem__), dtype=np.int64)
    ranks[order] = np.arange(count, dtype=np.int32)
    return ranks


# Ids up to this long are ordered in a fixed-width numpy array (4 bytes a character: 64 MB for
# a million ids of 16 characters, for the time the order takes).
_RANKED_ID_CHARS = 40


def _first_by_value(
    numbers: np.ndarray, values: np.ndarray, count: int, id_ranks: np.ndarray
) -> np.ndarray:
    """The places of the `count` records of the largest values, ties by id, best first: what
    sorting every `(-value, id)` pair gives, sorting only the few that can be first (a common
    word reaches hundreds of thousands of a large catalog's records, and they often share one
    value). Ids are compared by their ranks (`_id_ranks`), in the order Python sorts them."""
    import numpy as np

    if len(values) > count:
        cut = _kth_largest(values, count)
        above = np.flatnonzero(values > cut)
        slots = count - len(above)
        tied = np.flatnonzero(values == cut)
        if len(tied) > slots:
            tied = tied[np.argpartition(id_ranks[numbers[tied]], slots - 1)[:slots]]
        places = np.concatenate([above, tied])
    else:
        places = np.arange(len(values))
    order = np.lexsort((id_ranks[numbers[places]], -values[places]))
    return places[order[:count]]


def _kth_largest(values: np.ndarray, k: int) -> float:
    """The k-th largest of `values` (repeats counted): a partition, or for the first one or
    two a pass or two of `max`, several times quicker on the long arrays a common word gives."""
    import numpy as np

    if k > 2:
        return np.partition(values, len(values) - k)[len(values) - k]
    top = values.max()
    if k == 1 or int((values == top).sum()) >= k:
        return top
    return values[values < top].max()


def _weights(postings: Mapping, idf: Mapping[str, float], count: int) -> np.ndarray:
    """Per record, the weights of its words in `postings` summed in word order (`bincount`
    adds them in the order given, as the plain loop does), 1 where it has none."""
    import numpy as np

    words = sorted(postings)
    if not words:
        return np.ones(count, dtype=np.float64)
    numbers = np.concatenate([np.asarray(postings[w], dtype=np.int32) for w in words])
    sizes = [len(postings[w]) for w in words]
    weights = np.repeat(np.array([idf[w] for w in words], dtype=np.float64), sizes)
    totals = np.bincount(numbers, weights=weights, minlength=count).astype(np.float64)
    totals[totals == 0.0] = 1.0
    return totals


_BUILD_LOCK = threading.Lock()


def build_array_postings(index: CatalogIndex) -> ArrayPostings:
    """The index's arrays, built once."""
    arrays = index.__dict__.get("_array_postings")
    if arrays is None:
        with _BUILD_LOCK:
            arrays = index.__dict__.get("_array_postings")
            if arrays is None:
                arrays = index.__dict__["_array_postings"] = ArrayPostings(index)
    return arrays


def rank_with_arrays(
    index: CatalogIndex,
    tokens: frozenset[str],
    limit: int,
    common: frozenset[str] = frozenset(),
    *,
    wide: bool = False,
) -> list[str]:
    """`CatalogIndex._rank_candidates`, with the weights summed over arrays. Linear in the
    postings read: no sort of every candidate (the first `limit` are found by partitions)."""
    import numpy as np

    arrays = build_array_postings(index)
    idf = index.idf
    words = sorted(tokens)  # the order `record_weights` adds them in
    if not words:
        return []
    lists = [arrays.words(index, token) for token in words]
    # Each record once, with its weights summed in word order: the few thousand postings of
    # a text's searched words (MAX_DF caps them) sorted by record, stably, and added up by
    # `bincount` in that order. No pass over a million-long array.
    if len(lists) == 1:
        touched = lists[0]
        values = np.full(len(touched), idf[words[0]])
    else:
        joined = np.concatenate(lists)
        weights = np.repeat(np.array([idf[t] for t in words]), [len(n) for n in lists])
        order = np.argsort(joined, kind="stable")  # (sorted runs: a merge)
        joined = joined[order]
        first = np.empty(len(joined), dtype=bool)
        first[0] = True
        np.not_equal(joined[1:], joined[:-1], out=first[1:])
        touched = joined[first]
        values = np.bincount(np.cumsum(first) - 1, weights=weights[order])
    totals = (arrays.totals_wide if wide else arrays.totals).take(touched)
    keep = values >= arrays.min_coverage * totals
    numbers, scores, totals = touched[keep], values[keep], totals[keep]
    ratios = np.minimum(scores / totals, 1.0)
    record_ids = arrays.record_ids
    heaviest = [
        record_ids[n]
        for n in numbers[
            _first_by_value(numbers, scores, HEAVIEST_CANDIDATES, arrays.id_ranks)
        ].tolist()
    ]
    if len(numbers) > limit:
        # The records certainly among the first `limit` by (ratio, score), and those tied with
        # the last place: the limit-th ratio, then the score that is last among that ratio's.
        ratio = _kth_largest(ratios, limit)
        above = ratios > ratio
        at = ratios == ratio
        room = limit - int(above.sum())
        level = scores[at]
        score = _kth_largest(level, room)
        better = above | (at & (scores > score))
        tied = at & (scores == score)
        slots = limit - int(better.sum())
        if int(tied.sum()) > slots:
            places = np.flatnonzero(tied)
            chosen = arrays.fullest(index, numbers[places], slots, score, common)
            tied[places] = False
            tied[places[chosen]] = True
        keep = better | tied
        numbers, scores, ratios = numbers[keep], scores[keep], ratios[keep]
    ranked = sorted(
        (-ratio, -score, record_ids[n])
        for n, score, ratio in zip(numbers.tolist(), scores.tolist(), ratios.tolist(), strict=True)
    )
    out = [rid for *_, rid in ranked]
    return out + [rid for rid in heaviest if rid not in out]
