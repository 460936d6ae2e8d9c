"""Drifted wordings: a pasted message that is almost a record's, compared on its fixed text.

Messages change between releases while users keep pasting the old ones. Three kinds of drift
are common, and whole-string similarity misses all of them once a message has placeholders:

- an older wording that shares the start of today's and diverges mid-sentence;
- today's message without its tail (`... exhausted.` for `... exhausted. See: URL`);
- one word changed in a message full of `{}` placeholders, whose filled-in values make the
  pasted text far longer than the format's literal text.

Both texts become word and punctuation tokens; a placeholder absorbs any run of pasted tokens
at no cost, and fixed tokens are aligned with edits (an edit distance over tokens). The result
says how much of the message's fixed text the paste carries, in order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.catalog.patterns import Segment

# A whole message may differ by this share of its fixed tokens (at least one token).
MAX_EDIT_SHARE = 0.1
# Fewer fixed tokens than this say too little for a drifted match.
MIN_FIXED_TOKENS = 8
# An older wording must share this many fixed tokens with the start of today's message...
MIN_SHARED_PREFIX = 10
# ... and this share of them (the missing tail may be short: `See: URL`),
MIN_PREFIX_SHARE = 0.6
# ... or this many when they part where today's message starts a new clause (an older
# release said the first sentence, then something else).
MIN_SHARED_CLAUSE = 12
_CLAUSE_BREAKS = frozenset({",", ".", ":", ";"})
# Share of the message's fixed words that must appear in the paste before aligning at all.
MIN_WORD_COVERAGE = 0.7
# Pasted tokens looked at: placeholders filled with long values make pastes long.
MAX_QUERY_TOKENS = 400

WHOLE_SCORE = 0.95  # minus half the edit share
PREFIX_SCORE = 0.9  # as strong as the older-wording check it generalises

# A URL is one token: a trailing `See: URL` is one missing thing, not fifteen.
_TOKEN = re.compile(r"https?://\S{1,2000}|[A-Za-z0-9_]+|[^\sA-Za-z0-9_]")
_PLACEHOLDER = None  # a placeholder's token


@dataclass(frozen=True, slots=True)
class Drift:
    score: float
    kind: str  # "whole": small edits over the whole message; "prefix": a shared start


def _tokens(text: str) -> list[str]:
    return [t.lower() for t in _TOKEN.findall(text)]


def _message_tokens(segments: list[Segment]) -> list[str | None]:
    out: list[str | None] = []
    for segment in segments:
        if segment.is_placeholder:
            if not out or out[-1] is not _PLACEHOLDER:
                out.append(_PLACEHOLDER)
        else:
            out.extend(_tokens(segment.text))
    return out


def drift(query: str, segments: list[Segment]) -> Drift | None:
    """How `query` relates to the format `segments` when it is a drifted wording, else None."""
    message = _message_tokens(segments)
    fixed_total = sum(token is not _PLACEHOLDER for token in message)
    if fixed_total < MIN_FIXED_TOKENS:
        return None
    pasted = _tokens(query)[:MAX_QUERY_TOKENS]
    ordered = [t for t in message if t is not _PLACEHOLDER and t[0].isalnum()]
    words, seen = set(ordered), set(pasted)
    # Cheap before aligning: most of the message's words are there, or most of its opening.
    head = set(ordered[:MIN_SHARED_CLAUSE])
    if not words or (
        len(words & seen) < MIN_WORD_COVERAGE * len(words)
        and len(head & seen) < MIN_WORD_COVERAGE * len(head)
    ):
        return None
    rows = _align(message, pasted)
    edits = rows[-1][-1]
    allowed = max(1, round(MAX_EDIT_SHARE * fixed_total))
    if 0 < edits <= allowed:
        return Drift(WHOLE_SCORE - 0.5 * edits / fixed_total, "whole")
    shared, at_clause_end = _shared_prefix(message, rows)
    if shared >= MIN_SHARED_PREFIX and (
        shared >= MIN_PREFIX_SHARE * fixed_total or (at_clause_end and shared >= MIN_SHARED_CLAUSE)
    ):
        return Drift(PREFIX_SCORE, "prefix")
    return None


def _align(message: list[str | None], pasted: list[str]) -> list[list[int]]:
    """rows[i][j]: the fewest token edits turning message[:i] into pasted[:j], a placeholder
    standing for any run of pasted tokens."""
    width = len(pasted) + 1
    previous = list(range(width))
    rows = [previous]
    for token in message:
        current = [0] * width
        if token is _PLACEHOLDER:
            current[0] = previous[0]
            for j in range(1, width):
                # the placeholder ends here (previous row) or swallows one more token
                current[j] = min(previous[j], current[j - 1])
        else:
            current[0] = previous[0] + 1
            for j in range(1, width):
                substitute = previous[j - 1] + (pasted[j - 1] != token)
                current[j] = min(substitute, previous[j] + 1, current[j - 1] + 1)
        rows.append(current)
        previous = current
    return rows


def _shared_prefix(message: list[str | None], rows: list[list[int]]) -> tuple[int, bool]:
    """Fixed tokens of the longest start of the message that a start of the paste matches
    exactly (placeholders filled), when the rest of the message is missing or differs; and
    whether the message goes on there with a new clause (`,` `.` `:` `;`)."""
    shared = 0
    fixed = 0
    end = 0
    for i, token in enumerate(message, start=1):
        if token is not _PLACEHOLDER:
            fixed += 1
        if 0 in rows[i]:
            shared, end = fixed, i
        else:
            break
    return shared, end < len(message) and message[end] in _CLAUSE_BREAKS
