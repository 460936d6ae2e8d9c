"""The matching tail (issue 25): message shapes the main scoring misses or over-trusts.

- a `#[track_caller]` helper's heading followed by its body (`Grids differ:{report}` printed
  as the heading, then `=> ...` lines): the body's shape backs the short heading up;
- an older release's leading clause of a message with placeholders (`Requested slot X does
  not exist` for today's `Requested slot {} does not exist in the graph. ...`);
- a message of several lines pasted or quoted down to a line break (a title keeps the first);
- a quoted leading clause is evidence only when it says enough on its own;
- a message quoted without a header and only resembling a record counts only when its words
  differ by typos, not by a changed word (`decoded` for `fetched` is another message).
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from typing import Any

from bot.catalog.patterns import (
    Regex,
    Segment,
    compile_safe,
    format_to_regex,
    normalise_message,
    parse_format,
    placeholders_fit,
)
from bot.core.match.index import IndexedRecord, specificity, word_tuple, words

# The first line of a helper's body: `=> Position 3: ...`, `- cell 3`, `1) ...`, `* ...`.
_BODY_ITEM = re.compile(r"(?:=>|->|-|\*|\d{1,4}[.)])\s")
# A clause of a message ends at one of these, followed by a space.
_CLAUSE_END = re.compile(r"[.:;,](?=\s)")
# A quoted leading clause must name at least this many words and say this much on its own
# (`Tile not found` does not).
CLAUSE_MIN_WORDS = 4
CLAUSE_MIN_SPECIFICITY = 0.6
# Two words are one with a typo at this similarity (`dropepd`/`dropped` 86, `decoded`/`fetched` 43).
TYPO_RATIO = 75.0


def heading_with_body(entry: IndexedRecord, query: str) -> bool:
    """Whether `query` is the record's heading (`Grids are not the same:`) followed by a body
    in the shape such helpers print: the format glues its last placeholder to a colon (the
    body brings its own line breaks), and the pasted rest opens with a list item."""
    segments = entry.segments
    if len(segments) != 2 or segments[0].is_placeholder or not segments[1].is_placeholder:
        return False
    heading = segments[0].text
    if not heading.endswith(":") or not query.startswith(heading):
        return False
    return bool(_BODY_ITEM.match(query[len(heading) :].lstrip()))


def says_enough(clause: str) -> bool:
    """A quoted clause long and specific enough to stand for a catalogued message alone."""
    fixed = re.sub(r"\{[^{}]*\}", " ", clause)
    return len(words(fixed)) >= CLAUSE_MIN_WORDS and specificity(fixed) >= CLAUSE_MIN_SPECIFICITY


def older_filled_wording(query: str, entry: IndexedRecord) -> bool:
    """An older release printed a leading clause of today's message, placeholders filled.

    The cut is inside the fixed text after the last placeholder and what is left says enough
    on its own (`says_enough`): `Requested slot X does not exist` for a longer form today.
    Only a pasted panic backs it (see the matcher's `_score`).
    """
    if not entry.has_placeholders or not entry.derived:
        return False
    first = entry.segments[0]
    if not first.is_placeholder and not query.startswith(first.text.strip()):
        return False  # cheap: most candidates differ at once
    clause = query.rstrip(" .")
    for regex, trailing_free in _leading_clauses(tuple(entry.segments)):
        found = regex.fullmatch(clause)
        if found and placeholders_fit(found, trailing_free):
            return True
    return False


@lru_cache(maxsize=4096)
def _leading_clauses(segments: tuple[Segment, ...]) -> tuple[tuple[Regex, bool], ...]:
    """Patterns of the message cut inside its last fixed text (at a clause end or between
    words) whose fixed text still says enough; the cut keeps every placeholder."""
    last = len(segments) - 1
    if last < 1 or segments[last].is_placeholder:
        return ()
    text = segments[last].text
    cuts = {m.start() for m in _CLAUSE_END.finditer(text)} | {
        m.start() for m in re.finditer(r"(?<=\w) (?=\S)", text)
    }
    out: list[tuple[Regex, bool]] = []
    for cut in sorted(cuts):
        head = [*segments[:last], Segment(text[:cut], False)]
        if says_enough(" ".join(s.text for s in head if not s.is_placeholder)):
            out.append((compile_safe(format_to_regex(head)), False))
    return tuple(out)


def leading_lines(query: str, entry: IndexedRecord, *, at_site: bool = False) -> bool:
    """Whether `query` is the record's message of several lines cut at one of its line
    breaks (placeholders filled; the matcher compares it in the record's first letter's
    case), the part kept saying enough alone and ending in fixed text: a title or a hook keeps
    the first line, a paste ends at a blank line. `at_site`: pasted at the record's own file,
    where any of its leading lines will do (`failed to get owners for {name}`)."""
    raw = entry.record.error_message or ""
    if "\n" not in raw.strip() or not entry.derived:
        return False
    for regex in _line_heads(raw.strip(), at_site):
        found = regex.fullmatch(query.rstrip())
        if found and placeholders_fit(found):
            return True
    return False


@lru_cache(maxsize=4096)
def _line_heads(message: str, at_site: bool = False) -> tuple[Regex, ...]:
    out = []
    for cut in (m.start() for m in re.finditer(r"\n", message)):
        segments = parse_format(normalise_message(message[:cut]))
        fixed = " ".join(s.text for s in segments if not s.is_placeholder)
        if segments and (at_site or (not segments[-1].is_placeholder and says_enough(fixed))):
            out.append(compile_safe(format_to_regex(segments)))
    return tuple(out)


@cache
def _rapidfuzz() -> tuple[Any, Any]:
    """rapidfuzz's `fuzz` and `utils`, imported on first use (as the matcher's fuzzy score):
    a cold `match` whose text needs no typo check does not pay for it."""
    from rapidfuzz import fuzz, utils

    return fuzz, utils


def typo_only(query: str, entry: IndexedRecord) -> bool:
    """Whether a resembling message differs from the record's words by typos only."""
    if entry.has_placeholders:
        return True  # values fill the gaps: words cannot be paired one to one
    pasted, record = word_tuple(query), word_tuple(entry.literal)
    if len(pasted) < len(record):
        return False
    fuzz, utils = _rapidfuzz()
    for mine, theirs in zip(pasted, record, strict=False):
        if mine != theirs and (
            fuzz.ratio(mine, theirs, processor=utils.default_process, score_cutoff=TYPO_RATIO) == 0
        ):
            return False
    return True
