"""The catalog, indexed once for matching: tokens -> records, files -> records, crates -> folders.

A match costs far less than the catalog's size: a panic's words fetch the few records that share
its rarer words, and only those are verified against their patterns and scored.
"""

from __future__ import annotations

import heapq
import math
import re
import zlib
from array import array
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any, Protocol

from bot.catalog.model import CRATE_TAG_PREFIX, Record, collector_paused, value_class
from bot.catalog.patterns import (
    Regex,
    Segment,
    compile_safe,
    format_to_regex,
    normalise_message,
    parse_format,
)
from bot.core.extract.wrappers import split_wrapper
from bot.core.match.crates import canonical_crate, crate_folders
from bot.core.match.drift import MessageForm
from bot.core.match.postings import (
    HEAVIEST_CANDIDATES,
    ArrayPostingsBuilder,
    PackedPostings,
    PackedWeights,
    build_array_postings,
    rank_with_arrays,
)
from bot.core.match.std_messages import is_std_message

_WORD = re.compile(r"[A-Za-z0-9_']+")
# Words that say little about which error this is. Kept short: burn's messages are terse.
STOPWORDS = frozenset(
    "a an the to of in on for be is are was and or with it its this that "
    "at by as yet from into than then has have had no can cannot".split()
)
# Words so frequent in panic messages that they weigh half.
WEAK_WORDS = frozenset(["should", "must", "got", "expected", "found", "failed", "error", "invalid"])
# Std and everyday phrases: a record made only of these is generic whatever its length.
GENERIC_MESSAGES = frozenset(
    normalise_message(m).lower()
    for m in (
        "index out of bounds",
        "attempt to subtract with overflow",
        "attempt to add with overflow",
        "attempt to multiply with overflow",
        "called `Option::unwrap()` on a `None` value",
        "called `Result::unwrap()` on an `Err` value",
        "not implemented",
        "not yet implemented",
        "explicit panic",
        "out of memory",
    )
)


# Share of a record's word weight a text must contain for the record to be a candidate.
MIN_COVERAGE = 0.4
# A word in more records than this is common whatever the catalog's size: it ranks ties
# (`fullest`) but does not find candidates, so a text reaches a bounded number of records.
MAX_DF = 1000
# The least of a record's opening a text must quote for `opened_by` to look it up.
OPENING_CHARS = 32


def words(text: str) -> list[str]:
    return [w.lower().strip("'") for w in _WORD.findall(text)]


@lru_cache(maxsize=4096)
def word_tuple(text: str) -> tuple[str, ...]:
    """`words`, kept: a paste's and its candidates' words are compared pair after pair."""
    return tuple(words(text))


@lru_cache(maxsize=65536)
def _word_weight(word: str) -> float:
    if word in STOPWORDS or len(word) < 2:
        return 0.0
    if word in ("not", "eq", "ne"):
        return 0.5  # short, but they are what `not eq` / `not approx eq` messages say
    weight = min(len(word) / 6, 1.5)
    if word in WEAK_WORDS:
        weight *= 0.5
    if "_" in word or (any(c.isdigit() for c in word) and any(c.isalpha() for c in word)):
        weight = max(weight, 1.0)  # identifiers such as deform_conv2d name one place
    return weight


def _specificity(literal: str) -> float:
    if literal.lower().strip(" .:") in GENERIC_MESSAGES:
        return 0.0
    score = sum(_word_weight(word) for word in sorted(set(words(literal))))  # one order: one sum
    return max(0.0, min(1.0, (score - 0.5) / 3.0))


def specificity(message_format: str) -> float:
    """How much a message says on its own, in [0, 1]: 0 for placeholders only or std phrases."""
    segments = parse_format(normalise_message(message_format))
    return _specificity(
        normalise_message(" ".join(s.text for s in segments if not s.is_placeholder))
    )


def squash(text: str) -> str:
    """Text without any whitespace: how literal fragments are looked for before a regex runs."""
    return "".join(text.split())


@value_class
class IndexedRecord:
    record: Record
    message: str  # normalised errorMessage
    segments: list[Segment]
    literal: str  # the literal text, placeholders as single spaces, normalised
    has_placeholders: bool
    specificity: float
    # The literal fragments without whitespace, in order: every one must appear in a message
    # for the derived pattern to match, which is far cheaper to check than running the regex.
    squashed_fragments: tuple[str, ...]
    _regex: Regex | None = None
    _prefix_regex: Regex | None = None
    _drift_form: MessageForm | None = None
    _std_message: bool | None = None

    @property
    def std_message(self) -> bool:
        """The record's message is one std prints itself (worked out when first scored)."""
        if self._std_message is None:
            self._std_message = is_std_message(self.message)
        return self._std_message

    @property
    def derived(self) -> bool:
        """True when the pattern comes from the message format, not from `messagePattern`."""
        return not self.record.message_pattern

    @property
    def pattern_source(self) -> str:
        return self.record.message_pattern or format_to_regex(self.segments)

    @property
    def regex(self) -> Regex:
        if self._regex is None:
            self._regex = compile_safe(self.pattern_source)
        return self._regex

    @property
    def prefix_regex(self) -> Regex:
        """The pattern followed by `: anything`, as `.expect` prints `MSG: ErrDebug`."""
        if self._prefix_regex is None:
            self._prefix_regex = compile_safe(f"(?:{self.pattern_source})(?:\\s*[:,]\\s.*)?")
        return self._prefix_regex

    @property
    def drift_form(self) -> MessageForm:
        if self._drift_form is None:
            self._drift_form = MessageForm.of(self.segments)
        return self._drift_form

    @property
    def ends_with_placeholder(self) -> bool:
        return bool(self.segments) and self.segments[-1].is_placeholder

    def may_match(self, squashed_query: str) -> bool:
        """False when the derived pattern certainly cannot match (a fragment is missing)."""
        if not self.derived:
            return True
        position = 0
        for fragment in self.squashed_fragments:
            found = squashed_query.find(fragment, position)
            if found < 0:
                return False
            position = found + len(fragment)
        return True


class SiteCatalog(Protocol):
    """What the index reads from a catalog (bot.catalog.loader.Catalog is one)."""

    @property
    def records(self) -> Mapping[str, Record]: ...

    def __len__(self) -> int: ...

    def message(self, record_id: str) -> str: ...

    def site_columns(self) -> tuple[list[str], list[str], list[str | None], list[str]]: ...


# First folders of a relative path that name no crate (`src/` anywhere is ruled out apart).
_NO_CRATE_FOLDERS = frozenset({"tests", "benches", "examples", ".", ".."})


class CatalogIndex:
    """Everything the matcher looks up, computed once per catalog."""

    min_coverage = MIN_COVERAGE  # for bot.core.match.postings, which does not import this module

    def __init__(self, catalog: SiteCatalog):
        with collector_paused():
            self._build(catalog)

    def _build(self, catalog: SiteCatalog) -> None:
        self.catalog = catalog
        # Each record's full analysis (pattern, specificity, fragments) is built the first
        # time it is a candidate: start-up pays only for the word postings.
        self._entries: dict[str, IndexedRecord] = {}
        self._candidate_cache: dict[
            tuple[tuple[frozenset[str], frozenset[str]], int], tuple[str, ...]
        ] = {}
        # Postings hold record numbers (positions in `record_ids`), not ids: lists for small
        # catalogs, numpy arrays from ARRAY_POSTINGS_MIN_RECORDS on (five million postings at
        # a million records).
        large = len(catalog) >= ARRAY_POSTINGS_MIN_RECORDS
        builder: PostingsBuilder | ArrayPostingsBuilder = (
            ArrayPostingsBuilder(_WEIGHTLESS) if large else PostingsBuilder()
        )
        record_ids: list[str] = []
        by_file: defaultdict[str, list[str]] = defaultdict(list)
        self.by_file: Mapping[str, list[str]] = by_file
        # crate name -> repository folder, learned from the catalog's paths
        self.crate_folders: dict[str, str] = {}
        # crate name -> its files, for crates whose paths do not name them (`libs/core/ops.rs`
        # of deno_core): learned from the records' `crate:` tags
        self.crate_files: defaultdict[str, list[str]] = defaultdict(list)
        # the repositories' own names (`deno` for denoland/deno): a clone's folder
        self.repo_names: set[str] = set()
        self._files_by_tail: defaultdict[str, list[str]] | None = None  # by last two segments
        folders_seen: set[tuple[str | None, str]] = set()
        tags_read: set[str] = set()  # crate folders whose package tag was read
        all_ids, all_messages, all_paths, all_repos = catalog.site_columns()
        for first in range(0, len(all_ids), _CHUNK_RECORDS):
            end = first + _CHUNK_RECORDS
            ids, messages = all_ids[first:end], all_messages[first:end]
            file_paths, repos = all_paths[first:end], all_repos[first:end]
            record_ids.extend(ids)
            text = "\n".join(messages)
            if text.count("\n") != len(messages) - 1:
                # A newline inside a message separates words as a space does: one message a line.
                messages = [m.replace("\n", " ") if "\n" in m else m for m in messages]
                text = "\n".join(messages)
            others: list[int] = []
            if not _lowers_cleanly(text):
                # Messages with a character lowering to ASCII (the Kelvin sign) one by one.
                others = [i for i, m in enumerate(messages) if not _lowers_cleanly(m)]
                plain = list(messages)
                for i in others:
                    plain[i] = ""
                text = "\n".join(plain)
            builder.add_words(_chunk_words(text), first)
            for i in others:
                builder.add_record(first + i, _message_tokens(messages[i]))
            for rid, file_path in zip(ids, file_paths, strict=True):
                if file_path:
                    by_file[file_path].append(rid)
            # In order (not a set's, which Python's hash seed shuffles): when two folders name
            # one crate, the same one wins in every process.
            pairs = set(zip(file_paths, repos, strict=True)) - folders_seen
            for file_path, repo in sorted(pairs, key=lambda p: (p[0] or "", p[1] or "")):
                folders_seen.add((file_path, repo))  # records share files
                if repo:
                    self.repo_names.add(repo.rsplit("/", 1)[-1])
                if file_path:
                    folders = crate_folders(file_path, repo)
                    for crate, folder in folders:
                        self.crate_folders.setdefault(crate, folder)
                    if not folders:
                        tagged = _crate_tag(catalog.records[by_file[file_path][0]].tags)
                        if tagged:
                            self.crate_files[canonical_crate(tagged)].append(file_path)
                    elif (package_root := package_folder(file_path)) not in tags_read:
                        # A package named otherwise than its folder (`wasmtime-fiber` in
                        # `crates/fiber`, `demo-core` at the root of someone/demo, `gen` in
                        # `crates/tools/gen`): its tag, read once a folder.
                        tags_read.add(package_root)
                        tagged = _crate_tag(catalog.records[by_file[file_path][0]].tags)
                        if tagged and canonical_crate(tagged) not in dict(folders):
                            self.crate_folders.setdefault(canonical_crate(tagged), package_root)
        postings = builder.finish()
        # The words of each multi-line message's first line (`first_line_weights`), in order.
        self.first_lines: dict[int, tuple[str, ...]] = {
            number: tuple(sorted(_message_tokens(message.strip().split("\n", 1)[0])))
            for number, message in enumerate(all_messages)
            if "\n" in message and "\n" in message.strip()
        }
        total = max(len(record_ids), 1)
        self.record_ids: Sequence[str] = record_ids
        self.project_prefixes = {
            name.split("-", 1)[0] for name in self.crate_folders if "-" in name
        }
        self.postings = postings
        weights = [math.log(1 + total / len(ids)) for ids in postings.values()]
        self.idf: Mapping[str, float] = (
            PackedWeights(postings, weights)
            if isinstance(postings, PackedPostings)
            else dict(zip(postings, weights, strict=True))
        )
        self.uncapped_df = max(50, total // 100)
        self.max_df = min(self.uncapped_df, MAX_DF)
        if large:
            # Built now, so that the load time counts it and the first answer does not.
            build_array_postings(self)
            self._build_opening_table(all_messages)
            return
        self.record_weight = self.record_weights()
        self.record_weight_all = self.record_weights(every_word=True)

    def use_packed(
        self,
        record_ids: Sequence[str],
        by_file: Mapping[str, list[str]],
        words: Mapping[str, int],
        weights: Sequence[float],
    ) -> None:
        """A large index's ids, ids by file, words and their weights swapped for packed
        columns holding the same (bot.app.snapshot packs them for the cache)."""
        postings = self.postings
        if not isinstance(postings, PackedPostings):
            raise TypeError("only a large catalog's index is packed")
        arrays = build_array_postings(self)
        self.record_ids = arrays.record_ids = record_ids
        self.by_file = by_file
        postings.use_where(words)
        self.idf = PackedWeights(postings, weights)

    def record_weights(self, every_word: bool = False) -> list[float]:
        """Each record's total word weight (by record number), for ranking candidates by
        coverage; 1 for a record without informative words. Only the words indexed for
        finding candidates (at most `max_df` records each), or `every_word`."""
        weights = [0.0] * len(self.record_ids)
        # Added in word order, as `_rank_candidates` adds a text's words: a record whose words
        # the text holds all gets the same float twice, a ratio of exactly 1 whatever the
        # hash seed (in set order it could fall a hair short and lose a tie).
        for token in sorted(self.postings):
            numbers = self.postings[token]
            if every_word or len(numbers) <= self.max_df:
                weight = self.idf[token]
                for number in numbers:
                    weights[number] += weight
        if not every_word:
            for number, weight in self.first_line_weights(lambda df: df <= self.max_df).items():
                weights[number] = weight
        return [weight or 1.0 for weight in weights]

    def first_line_weights(self, searched: Callable[[int], bool]) -> dict[int, float]:
        """For each message of several lines, the weight of its first line's words (those
        whose record count `searched` accepts), by record number: a text quoting only that
        line (a title, a hook that prints one line) covers the record as well as a text
        quoting the whole of a one-line message, and the coverage a candidate needs is
        measured on it. Added in word order, as `record_weights` adds them."""
        firsts: dict[int, float] = {}
        postings, idf = self.postings, self.idf
        for number, tokens in self.first_lines.items():
            weight = 0.0
            for token in tokens:
                numbers = postings.get(token)
                if numbers is not None and searched(len(numbers)):
                    weight += idf[token]
            if weight:
                firsts[number] = weight
        return firsts

    def opened_by(self, text: str) -> list[str]:
        """Records whose message opens with the whole of `text` (whitespace collapsed; its first
        letter in either case), when `text` holds at least `OPENING_CHARS` characters: a
        message's first sentence quoted on its own, whose words cover too little of a long
        record to make it a candidate."""
        query = " ".join(text.split())
        if len(query) < OPENING_CHARS:
            return []
        # (a title capitalises a message, an older release wrote its first letter otherwise)
        opened = tuple(
            dict.fromkeys((query, query[0].upper() + query[1:], query[0].lower() + query[1:]))
        )
        table = self.__dict__.get("_opening_table")
        if table is not None:
            found = [
                self.record_ids[n]
                for opening in opened
                for n in _table_lookup(table, _opening_key(opening[:OPENING_CHARS]))
            ]
            read = self.catalog.message  # (near-copies share openings: no record built)
            return [rid for rid in found if " ".join(read(rid).split()).startswith(opened)]
        openings = self.__dict__.get("_openings")
        if openings is None:  # built on first use: most texts never ask
            openings = {}
            ids, messages, _paths, _repos = self.catalog.site_columns()
            for rid, message in zip(ids, messages, strict=True):
                opening = " ".join(message.split())[:OPENING_CHARS]
                if len(opening) == OPENING_CHARS and "{" not in opening:
                    openings.setdefault(opening, []).append(rid)
            self._openings = openings
        found = [rid for opening in opened for rid in openings.get(opening[:OPENING_CHARS], ())]
        read = self.catalog.message
        return [rid for rid in found if " ".join(read(rid).split()).startswith(opened)]

    def _build_opening_table(self, messages: Sequence[str]) -> None:
        """For a large catalog, `opened_by`'s lookup as two arrays (a key of each message's
        opening, sorted, and its record number), built with the index and kept in its
        snapshot: a dict of a million openings, built on the first text that asked, cost a
        cold `match` two seconds."""
        import numpy as np  # why: large catalogs only; numpy is what their index is made of

        keys: list[int] = []
        numbers: list[int] = []
        for number, message in enumerate(messages):
            opening = " ".join(message.split())[:OPENING_CHARS]
            if len(opening) == OPENING_CHARS and "{" not in opening:
                keys.append(_opening_key(opening))
                numbers.append(number)
        key_array = np.array(keys, dtype=np.uint64)
        order = np.argsort(key_array, kind="stable")
        self._opening_table = (key_array[order], np.array(numbers, dtype=np.int64)[order])

    def forget_candidates(self) -> None:
        """Start a new text: candidate lists are reused within one text only, so a figure
        measured on repeated texts is the cost of a text seen once."""
        self._candidate_cache.clear()

    def entry(self, record_id: str) -> IndexedRecord:
        entry = self._entries.get(record_id)
        if entry is None:
            entry = self._entries[record_id] = _index_record(self.catalog.records[record_id])
        return entry

    def repo_path(self, crate: str | None, crate_path: str | None) -> str | None:
        """`burn-autodiff` + `src/ops/module.rs` -> `crates/burn-autodiff/src/ops/module.rs`."""
        if not crate or not crate_path:
            return None
        folder = self.crate_folders.get(canonical_crate(crate))
        if folder is None:
            # Published under the repository's name and the folder's (`wasmtime-fiber` from
            # `crates/fiber`): the registry path names the package, not the folder.
            folder = self._folder_under_repo_name(canonical_crate(crate))
        if folder is None:
            return self._file_without_src(crate, crate_path)
        path = f"{folder}/{crate_path}" if folder else crate_path  # "": the repository's root
        if path not in self.by_file:
            # The crate's layout changed over its releases (`src/lib.rs` at the repository's
            # root once, `bindgen/lib.rs` without `src/` now): the file of today's layout.
            return self._file_without_src(crate, crate_path) or path
        return path

    def _file_without_src(self, crate: str, crate_path: str) -> str | None:
        """A crate without `src/`: its one file that ends with the pasted path."""
        ending = "/" + crate_path
        files = self.crate_files.get(canonical_crate(crate), ())
        found = [f for f in files if f.endswith(ending)]
        return found[0] if len(found) == 1 else None

    def _folder_under_repo_name(self, crate: str) -> str | None:
        found = {
            self.crate_folders[rest]
            for name in self.repo_names
            if crate.startswith(prefix := canonical_crate(name) + "-")
            and (rest := crate[len(prefix) :]) in self.crate_folders
        }
        return found.pop() if len(found) == 1 else None

    def checkout_file(self, path: str) -> str | None:
        """The catalog's file a path names through a clone of its repository, built where it
        lies: `/home/ci/checkout/deno/libs/core/ops.rs` -> `libs/core/ops.rs` (or, in an
        older clone, `.../deno/core/ops.rs` -> `libs/core/ops.rs`: `moved_down`)."""
        parts = path.split("/")
        for at, part in enumerate(parts[:-1]):
            if part in self.repo_names:
                rest = "/".join(parts[at + 1 :])
                found = rest if rest in self.by_file else self.moved_down(rest)
                if found:
                    return found
        return None

    def moved_down(self, path: str) -> str | None:
        """The one catalog file that is a relative path with folders put in front of it:
        `serde_v8/payload.rs` (an older release's layout) -> `libs/serde_v8/payload.rs`. Only
        for crates without `src/`: a path through `src/` is known by its crate's folder, and
        the user's own crates have one."""
        parts = path.split("/")
        if len(parts) < 2 or parts[0] in _NO_CRATE_FOLDERS or "src" in parts or not all(parts):
            return None
        tails = self._files_by_tail
        if tails is None:
            tails = self._files_by_tail = defaultdict(list)
            for file_path in self.by_file:
                tails["/".join(file_path.rsplit("/", 2)[-2:])].append(file_path)
        ending = "/" + path
        found = [f for f in tails.get("/".join(parts[-2:]), ()) if f.endswith(ending)]
        return found[0] if len(found) == 1 else None

    def knows_crate(self, crate: str) -> bool:
        crate = canonical_crate(crate)
        return crate in self.crate_folders or crate in self.crate_files

    def in_project(self, crate: str) -> bool:
        """A crate of the catalog's project: a known crate, or one named like them.

        burn's catalog has no site in burn-wgpu, yet burn-wgpu is burn's: crates share the
        project's name prefix (`burn-`). The prefix alone names no crate of the project unless
        the project has it (actix-net's `actix-rt`, `actix-server`: `actix` is another
        repository's crate).
        """
        crate = canonical_crate(crate)
        head, dash, _ = crate.partition("-")
        return (
            crate in self.crate_folders
            or crate in self.crate_files
            or (bool(dash) and head in self.project_prefixes)
        )

    def candidates(self, text: str, limit: int = 8) -> list[str]:
        """Record ids whose informative words the text covers best, best first.

        Ranked by coverage (the share of a record's word weight found in the text), so a
        record whose words are all there wins over one sharing a rare word that merely came
        with a filled-in value (`TensorId { value: 3 }`).
        """
        postings = self.postings
        max_df = self.max_df
        rare: set[str] = set()
        common: set[str] = set()
        # `words(text)`, lowered at once where that is safe (as `_message_tokens`).
        found = set(_LOWER_WORD.findall(text.lower())) if _lowers_cleanly(text) else words(text)
        for token in found:
            ids = postings.get(token)
            if ids is not None:
                (rare if len(ids) <= max_df else common).add(token)
        if not rare:
            # A catalog of several projects makes short messages' words common (`array`,
            # `length` in ndarray's and cubecl's too): words up to twice the cut still narrow
            # the search to a few hundred records.
            rare = {t for t in common if len(postings[t]) <= 2 * max_df}
        wide = not rare and max_df < self.uncapped_df
        if wide:
            # A catalog past MAX_DF's size, and a text of its common words only: searched as
            # with the cut at a hundredth of the records (`wide`), so such a message is found.
            rare = {t for t in common if len(postings[t]) <= self.uncapped_df}
            if not rare:
                rare = {t for t in common if len(postings[t]) <= 2 * self.uncapped_df}
        common -= rare
        if not rare:
            return []
        key = (frozenset(rare), frozenset(common))
        # Lines of one text repeat their indexed words (log lines differ in their numbers):
        # the ranking depends on nothing else, so it is computed once per word set.
        cache = self._candidate_cache
        cached = cache.get((key, limit))
        if cached is not None:
            return list(cached)
        found = self._rank_candidates(key[0], limit, key[1], wide=wide)
        if len(cache) >= CANDIDATE_CACHE_SIZE:
            cache.clear()
        cache[(key, limit)] = tuple(found)
        return found

    def _rank_candidates(
        self,
        tokens: frozenset[str],
        limit: int,
        common: frozenset[str] = frozenset(),
        *,
        wide: bool = False,
    ) -> list[str]:
        """The `limit` best records for a text's rare words (`tokens`): by coverage of their
        rare words, then by the weight found; where records tie for the last places, by
        coverage of all their words (the text's `common` words too: among a thousand records
        sharing one rare word, the one whose other words are all in the text), then by id.
        Listed by coverage, weight and id. `wide` (coverage on the hundredth's cut) only arises
        past MAX_DF's size, where the arrays rank: the plain loop below never sees it."""
        if len(self.catalog) >= ARRAY_POSTINGS_MIN_RECORDS:
            return rank_with_arrays(self, tokens, limit, common, wide=wide)
        postings = self.postings
        idf = self.idf
        ordered = sorted(tokens)  # the order `record_weights` adds them in
        if not ordered:
            return []
        # (0.0 + weight is weight: the first word's records start at its weight, in C)
        scores: dict[int, float] = dict.fromkeys(postings[ordered[0]], idf[ordered[0]])
        for token in ordered[1:]:
            weight = idf[token]
            get = scores.get
            for number in postings[token]:
                scores[number] = get(number, 0.0) + weight
        totals = self.__dict__.get("record_weight")
        if totals is None:  # an index built for arrays, asked for the plain ranking
            totals = self.record_weight = self.record_weights()
            self.record_weight_all = self.record_weights(every_word=True)
        ids = self.record_ids
        coverage = MIN_COVERAGE
        # A record whose words the text barely covers is not worth verifying.
        # (a ratio past 1: a text quoting the whole of a message its first line counts for)
        chosen = [
            (-min(score / totals[n], 1.0), -score, n)
            for n, score in scores.items()
            if score >= coverage * totals[n]
        ]
        # (postings.HEAVIEST_CANDIDATES: the heaviest are verified whatever their coverage)
        # `sorted(...)[:n]` is what heapq.nsmallest returns, ties in the same order; for the
        # few dozen records a text's words reach, sorting in C is faster than its heap.
        if len(chosen) > limit:
            # (the heaviest are among `chosen` already unless it is cut)
            heaviest = sorted(chosen, key=lambda c: (c[1], ids[c[2]]))[:HEAVIEST_CANDIDATES]
            cut = sorted(chosen)[limit - 1][:2]
            tied = [c for c in chosen if c[:2] == cut]
            chosen = [c for c in chosen if c[:2] < cut]
            slots = limit - len(chosen)
            if len(tied) > slots:
                numbers = [n for *_, n in tied]
                fullest = set(self.fullest(numbers, slots, -cut[1], common))
                tied = [c for c in tied if c[2] in fullest]
            chosen += tied
            chosen.sort(key=lambda c: (c[0], c[1], ids[c[2]]))
            chosen += [c for c in heaviest if c not in chosen]
        else:
            chosen.sort(key=lambda c: (c[0], c[1], ids[c[2]]))
        return [ids[n] for *_, n in chosen]

    def fullest(
        self, numbers: list[int], count: int, found: float, common: frozenset[str]
    ) -> list[int]:
        """The `count` records among `numbers` whose words the text's words cover best, all
        their words counted; then by id. Every record here holds the weight `found` of the
        text's rare words (they tied on it); the common words it holds are added to it, in
        word order."""
        postings = self.postings
        idf = self.idf
        words = sorted(common)
        totals_all = self.record_weight_all
        ids = self.record_ids
        ranked = []
        for n in numbers:
            weight = found
            for token in words:
                held = postings[token]
                at = bisect_left(held, n)
                if at < len(held) and held[at] == n:
                    weight += idf[token]
            ranked.append((-weight / totals_all[n], ids[n], n))
        return [n for *_, n in heapq.nsmallest(count, ranked)]


# Word sets whose candidates are kept; the cache is emptied when full.
CANDIDATE_CACHE_SIZE = 4096
# From this size on, postings are summed as arrays (bot.core.match.postings): the same ranking.
ARRAY_POSTINGS_MIN_RECORDS = 50_000

_PLACEHOLDER_TEXT = re.compile(r"\{[^{}]*\}")
_WEIGHTLESS = STOPWORDS | frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")


# Records tokenised together: one regex pass over many messages instead of one call each.
_CHUNK_RECORDS = 32768
# A word as `words()` finds it, its leading and trailing `'` stripped: `'can't'` -> `can't`.
_CHUNK_WORD = r"[a-z0-9_]+(?:'+[a-z0-9_]+)*"
_CHUNK_TOKEN = re.compile(_CHUNK_WORD + r"|\n")
_LOWER_WORD = re.compile(_CHUNK_WORD)
_CHUNK_PLACEHOLDER = re.compile(r"\{[^{}\n]*\}")


# The only characters whose lowercase holds an ASCII one (the Kelvin sign is a `k`): lowering
# a text without them before finding its words finds the words `words()` finds.
_LOWERS_TO_ASCII = re.compile("[\u0130\u212a]")


def _lowers_cleanly(text: str) -> bool:
    return text.isascii() or _LOWERS_TO_ASCII.search(text) is None


def _chunk_words(text: str) -> list[str]:
    """The words of newline-separated messages, lowered, placeholders left out, with a
    `"\\n"` token between messages."""
    text = text.lower()
    if "{" in text:
        text = _CHUNK_PLACEHOLDER.sub(" ", text)
    return _CHUNK_TOKEN.findall(text)


class PostingsBuilder:
    """Word -> record numbers, built record by record (catalogs below the array size)."""

    def __init__(self) -> None:
        self.postings: dict[str, array] = {}
        self.unsorted: set[str] = set()  # words given a record number out of order

    def add_words(self, words: list[str], first: int) -> None:
        """`_chunk_words`'s output; the i-th message is record `first + i`."""
        postings = self.postings
        number = first
        weightless = _WEIGHTLESS
        for token in words:
            if token == "\n":
                number += 1
            elif token not in weightless:
                numbers = postings.get(token)
                if numbers is None:
                    postings[token] = array("i", (number,))
                elif numbers[-1] != number:  # a word twice in one message counts once
                    numbers.append(number)

    def add_record(self, number: int, tokens: set[str]) -> None:
        postings = self.postings
        for token in tokens:
            numbers = postings.get(token)
            if numbers is None:
                postings[token] = array("i", (number,))
            else:
                if numbers[-1] > number:
                    self.unsorted.add(token)
                numbers.append(number)

    def finish(self) -> dict[str, list[int]]:
        """Word -> its records' numbers, in order (the ranking looks numbers up by bisection).

        Lists, not the arrays they were built in: summing weights over a list reads its
        ints as they are, over an array makes each one anew (a third of a ranking's time)."""
        return {
            token: sorted(numbers) if token in self.unsorted else numbers.tolist()
            for token, numbers in self.postings.items()
        }


def _message_tokens(message: str) -> set[str]:
    """The informative words of a message format, placeholders left out."""
    if "{" in message:
        message = _PLACEHOLDER_TEXT.sub(" ", message)
    if not _lowers_cleanly(message):
        # Lowering first would make word characters of others (the Kelvin sign is a `k`).
        return {w for w in words(message) if _word_weight(w) > 0}
    # The same words as `words()`, lowered at once; weightless words are the stopwords and
    # single characters (see `_word_weight`).
    found = set(_LOWER_WORD.findall(message.lower()))
    found -= _WEIGHTLESS
    return found


def _index_record(record: Record) -> IndexedRecord:
    message = normalise_message(record.error_message)
    wrapper, core = split_wrapper(message)
    if wrapper is not None and core:
        # A site that prints std's wrapper itself (`panic!("not yet implemented: ...")`): a
        # paste is matched without the wrapper (`Panic.core_message`), so is the record.
        message = core
    segments = parse_format(message)
    literal_parts = [s.text for s in segments if not s.is_placeholder]
    literal = normalise_message(" ".join(literal_parts))
    return IndexedRecord(
        record=record,
        message=message,
        segments=segments,
        literal=literal,
        has_placeholders=len(literal_parts) != len(segments),
        specificity=_specificity(literal),
        squashed_fragments=tuple(f for f in (squash(p) for p in literal_parts) if f),
    )


def _opening_key(opening: str) -> int:
    """A 64-bit key of a message's opening, the same in every process (not Python's `hash`);
    a collision only adds a record that the full comparison then drops."""
    data = opening.encode("utf-8")
    return (zlib.crc32(data) << 32) | zlib.adler32(data)


def _table_lookup(table: tuple[Any, Any], key: int) -> list[int]:
    keys, numbers = table
    wanted = keys.dtype.type(key)  # as uint64: a Python int past 2**63 would become a float
    first = int(keys.searchsorted(wanted, side="left"))
    last = int(keys.searchsorted(wanted, side="right"))
    return [int(n) for n in numbers[first:last]]


def package_folder(file_path: str) -> str:
    """The folder of the package a file is in: `crates/tools/gen/src/x.rs` -> `crates/tools/gen`,
    `src/x.rs` -> `` (the repository's root); a file outside `src/` (`build.rs`) is at the
    package's root."""
    parts = file_path.split("/")
    return "/".join(parts[: parts.index("src")] if "src" in parts else parts[:-1])


def _crate_tag(tags: Sequence[str]) -> str | None:
    """The crate a record's `crate:NAME` tag names, if any."""
    return next((t[len(CRATE_TAG_PREFIX) :] for t in tags if t.startswith(CRATE_TAG_PREFIX)), None)
