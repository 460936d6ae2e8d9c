"""The catalog, indexed once for matching: tokens -> records, files -> records, crates -> folders.

A match costs far less than the catalog's size: a panic's words fetch the few records that share
its rarer words, and only those are verified against their patterns and scored.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass

from bot.catalog.loader import Catalog
from bot.catalog.model import Record
from bot.catalog.patterns import (
    compile_safe,
    format_to_regex,
    normalise_message,
    parse_format,
)

_WORD = re.compile(r"[A-Za-z0-9_']+")
# Words that say little about which error this is. Kept short: burn's messages are terse.
STOPWORDS = frozenset(
    "a an the to of in on for be is are was not and or with it its this that "
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


def words(text: str) -> list[str]:
    return [w.lower().strip("'") for w in _WORD.findall(text)]


def _word_weight(word: str) -> float:
    if word in STOPWORDS or len(word) < 2:
        return 0.0
    weight = min(len(word) / 6, 1.5)
    if word in WEAK_WORDS:
        weight *= 0.5
    if "_" in word or (any(c.isdigit() for c in word) and any(c.isalpha() for c in word)):
        weight = max(weight, 1.0)  # identifiers such as deform_conv2d name one place
    return weight


def specificity(message_format: str) -> float:
    """How much a message says on its own, in [0, 1]: 0 for placeholders only or std phrases."""
    literal = " ".join(s.text for s in parse_format(message_format) if not s.is_placeholder)
    if normalise_message(literal).lower().strip(" .:") in GENERIC_MESSAGES:
        return 0.0
    seen = set()
    score = 0.0
    for word in words(literal):
        if word not in seen:
            seen.add(word)
            score += _word_weight(word)
    return max(0.0, min(1.0, (score - 1.0) / 3.0))


@dataclass(slots=True)
class IndexedRecord:
    record: Record
    message: str  # normalised errorMessage
    literal: str  # the literal text, placeholders as single spaces, normalised
    first_fragment: str  # the literal text before the first placeholder
    has_placeholders: bool
    specificity: float
    tokens: frozenset[str]
    pattern_source: str
    _regex: object | None = None
    _prefix_regex: object | None = None

    @property
    def regex(self):
        if self._regex is None:
            self._regex = compile_safe(self.pattern_source)
        return self._regex

    @property
    def prefix_regex(self):
        """The pattern followed by `: anything`, as `.expect` prints `MSG: ErrDebug`."""
        if self._prefix_regex is None:
            self._prefix_regex = compile_safe(f"(?:{self.pattern_source})(?:\\s*[:,]\\s.*)?")
        return self._prefix_regex


class CatalogIndex:
    """Everything the matcher looks up, computed once per catalog."""

    def __init__(self, catalog: Catalog):
        self.catalog = catalog
        self.entries: dict[str, IndexedRecord] = {}
        postings: dict[str, list[str]] = defaultdict(list)
        self.by_file: dict[str, list[str]] = defaultdict(list)
        # crate name -> repository folder, learned from the catalog's paths
        self.crate_folders: dict[str, str] = {}
        for record in catalog:
            entry = _index_record(record)
            self.entries[record.id] = entry
            for token in entry.tokens:
                postings[token].append(record.id)
            if record.file_path:
                self.by_file[record.file_path].append(record.id)
                folder = _crate_folder(record.file_path)
                if folder:
                    self.crate_folders.setdefault(folder[0], folder[1])
        total = max(len(self.entries), 1)
        self.postings = dict(postings)
        self.idf = {token: math.log(1 + total / len(ids)) for token, ids in self.postings.items()}
        self.max_df = max(50, total // 20)

    def repo_path(self, crate: str | None, crate_path: str | None) -> str | None:
        """`burn-autodiff` + `src/ops/module.rs` -> `crates/burn-autodiff/src/ops/module.rs`."""
        if not crate or not crate_path:
            return None
        folder = self.crate_folders.get(crate)
        return f"{folder}/{crate_path}" if folder else None

    def knows_crate(self, crate: str) -> bool:
        return crate in self.crate_folders

    def candidates(self, text: str, limit: int = 40) -> list[str]:
        """Record ids sharing the most informative words with `text`, best first."""
        scores: dict[str, float] = defaultdict(float)
        for token in set(words(text)):
            ids = self.postings.get(token)
            if not ids or len(ids) > self.max_df:
                continue
            weight = self.idf[token]
            for rid in ids:
                scores[rid] += weight
        if not scores:
            return []
        return sorted(scores, key=lambda rid: (-scores[rid], rid))[:limit]


def _crate_folder(file_path: str) -> tuple[str, str] | None:
    parts = file_path.split("/")
    if len(parts) > 2 and parts[0] == "crates":
        return parts[1], f"crates/{parts[1]}"
    return None


def _index_record(record: Record) -> IndexedRecord:
    message = normalise_message(record.error_message)
    segments = parse_format(message)
    has_placeholders = any(s.is_placeholder for s in segments)
    literal = normalise_message(" ".join(s.text for s in segments if not s.is_placeholder))
    first = ""
    for segment in segments:
        if segment.is_placeholder:
            break
        first += segment.text
    pattern = record.message_pattern or format_to_regex(message)
    return IndexedRecord(
        record=record,
        message=message,
        literal=literal,
        first_fragment=normalise_message(first),
        has_placeholders=has_placeholders,
        specificity=specificity(message),
        tokens=frozenset(w for w in words(literal) if _word_weight(w) > 0),
        pattern_source=pattern,
    )
