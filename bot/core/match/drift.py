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

from bot.catalog.model import value_class
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
_SENTENCE_ENDS = frozenset({".", "!", "?"})
# Share of the message's fixed words that must appear in the paste before aligning at all.
MIN_WORD_COVERAGE = 0.7
# Pasted tokens looked at: placeholders filled with long values make pastes long.
MAX_QUERY_TOKENS = 400

WHOLE_SCORE = 0.95  # minus half the edit share
PREFIX_SCORE = 0.9  # as strong as the older-wording check it generalises

# A URL is one token: a trailing `See: URL` is one missing thing, not fifteen.
_TOKEN = re.compile(r"https?://\S{1,2000}|[A-Za-z0-9_]+|[^\sA-Za-z0-9_]")
_PLACEHOLDER = None  # a placeholder's token


@value_class(frozen=True)
class Drift:
    score: float
    kind: str  # "whole": small edits over the whole message; "prefix": a shared start


def _tokens(text: str) -> list[str]:
    return [t.lower() for t in _TOKEN.findall(text)]


@value_class(frozen=True)
class MessageForm:
    """A message format as drift compares it: computed once per record."""

    tokens: tuple[str | None, ...]  # fixed tokens, `_PLACEHOLDER` for each placeholder run
    fixed_total: int
    words: frozenset[str]  # the fixed words
    head: frozenset[str]  # ... of its opening clause

    @classmethod
    def of(cls, segments: list[Segment]) -> MessageForm:
        tokens: list[str | None] = []
        for segment in segments:
            if segment.is_placeholder:
                if not tokens or tokens[-1] is not _PLACEHOLDER:
                    tokens.append(_PLACEHOLDER)
            else:
                tokens.extend(_tokens(segment.text))
        ordered = [t for t in tokens if t is not _PLACEHOLDER and t[0].isalnum()]
        return cls(
            tokens=tuple(tokens),
            fixed_total=sum(token is not _PLACEHOLDER for token in tokens),
            words=frozenset(ordered),
            head=frozenset(ordered[:MIN_SHARED_CLAUSE]),
        )


@value_class(frozen=True)
class PastedForm:
    """A pasted message as drift compares it: computed once per query."""

    tokens: tuple[str, ...]
    words: frozenset[str]
    alnum_words: frozenset[str]  # the words without punctuation, as a form's `head` holds them

    @classmethod
    def of(cls, query: str) -> PastedForm:
        tokens = tuple(_tokens(query)[:MAX_QUERY_TOKENS])
        words = frozenset(tokens)
        return cls(
            tokens=tokens, words=words, alnum_words=frozenset(t for t in words if t[0].isalnum())
        )

    def words_only_of(self, head: frozenset[str]) -> bool:
        return len(self.tokens) >= MIN_FIXED_TOKENS and self.alnum_words <= head


def drift(query: str, segments: list[Segment]) -> Drift | None:
    """How `query` relates to the format `segments` when it is a drifted wording, else None."""
    return drift_between(PastedForm.of(query), MessageForm.of(segments))


def drift_between(pasted: PastedForm, form: MessageForm) -> Drift | None:
    """`drift`, on forms computed beforehand (the matcher compares one query to many records)."""
    if form.fixed_total < MIN_FIXED_TOKENS:
        return None
    words, head, seen = form.words, form.head, pasted.words
    # Cheap before aligning: most of the message's words are there, or most of its opening,
    # or the paste says nothing but words of its opening (its first sentence, alone).
    if not words or (
        len(words & seen) < MIN_WORD_COVERAGE * len(words)
        and len(head & seen) < MIN_WORD_COVERAGE * len(head)
        and not pasted.words_only_of(head)
    ):
        return None
    allowed = max(1, round(MAX_EDIT_SHARE * form.fixed_total))
    if (
        form.fixed_total == len(form.tokens)
        and abs(form.fixed_total - len(pasted.tokens)) > allowed
    ):
        # No placeholder, and lengths further apart than the edits allowed: no whole match,
        # and a shared start is the tokens the two open with alike (`_unaligned`).
        first, shared, at_clause_end = _unaligned(form.tokens, pasted.tokens)
        if first >= MIN_FIXED_TOKENS:
            return Drift(PREFIX_SCORE, "prefix")
    else:
        rows = _align(form.tokens, pasted.tokens, allowed)
        edits = rows[-1][-1] if len(rows) == len(form.tokens) + 1 else allowed + 1
        if edits <= allowed:
            return Drift(WHOLE_SCORE - 0.5 * edits / form.fixed_total, "whole")
        if _first_sentences(form.tokens, rows, pasted.tokens) >= MIN_FIXED_TOKENS:
            return Drift(PREFIX_SCORE, "prefix")
        shared, at_clause_end = _shared_prefix(form.tokens, rows)
    if shared >= MIN_SHARED_PREFIX and (
        shared >= MIN_PREFIX_SHARE * form.fixed_total
        or (at_clause_end and shared >= MIN_SHARED_CLAUSE)
    ):
        return Drift(PREFIX_SCORE, "prefix")
    return None


def _align(
    message: tuple[str | None, ...], pasted: tuple[str, ...], allowed: int
) -> list[list[int]]:
    """rows[i][j]: the fewest token edits turning message[:i] into pasted[:j], a placeholder
    standing for any run of pasted tokens.

    Stops after a row whose every cell exceeds `allowed`: a row's least cell never decreases
    further down, so the whole message is then too far and no longer start is shared."""
    width = len(pasted) + 1
    previous = list(range(width))
    rows = [previous]
    for token in message:
        # (comparisons, not `min`: this loop is most of a drifted match's time)
        if token is _PLACEHOLDER:
            # the placeholder ends here (previous row) or swallows one more token
            left = previous[0]
            current = [left]
            for above in previous[1:]:
                if above < left:
                    left = above
                current.append(left)
        else:
            left = previous[0] + 1
            current = [left]
            for diagonal, above, word in zip(previous, previous[1:], pasted, strict=False):
                cell = diagonal if word == token else diagonal + 1
                if above + 1 < cell:
                    cell = above + 1
                if left + 1 < cell:
                    cell = left + 1
                current.append(cell)
                left = cell
        rows.append(current)
        previous = current
        if min(current) > allowed:
            break
    return rows


def _unaligned(message: tuple[str | None, ...], pasted: tuple[str, ...]) -> tuple[int, int, bool]:
    """`_first_sentences`, then `_shared_prefix`, for a message without placeholders: without
    them `message[:i]` turns into a start of the paste with no edit only when the paste opens
    with exactly those tokens, so both read the tokens the two open with alike, not a table.
    """
    same = 0
    for token, word in zip(message, pasted, strict=False):
        if token != word:
            break
        same += 1
    size = len(pasted)
    first = 0
    if same >= size:  # the whole paste opens the message
        if size < len(message) and size and message[size - 1] in _SENTENCE_ENDS:
            first = size  # ... and ends where a sentence of it ends
        elif (
            size + 1 < len(message)
            and message[size] in _SENTENCE_ENDS
            and (bool(pasted) and pasted[-1] not in _SENTENCE_ENDS)
        ):
            first = size  # ... without the sentence's full stop
    return first, same, same < len(message) and message[same] in _CLAUSE_BREAKS


def _first_sentences(
    message: tuple[str | None, ...], rows: list[list[int]], pasted: tuple[str, ...]
) -> int:
    """Fixed tokens of the message's opening sentences when the whole paste is exactly those,
    ending where a sentence of the message ends (`Cannot start a runtime from within a
    runtime.`, quoted without what the message goes on to explain; in a title, often without
    its full stop); 0 otherwise."""
    fixed = 0
    found = 0
    size = len(pasted)
    # (a paste ending in a word may stop short of the sentence's full stop alone)
    unstopped = bool(pasted) and pasted[-1] not in _SENTENCE_ENDS
    for i, token in enumerate(message, start=1):
        if i >= len(rows):
            break
        if token is not _PLACEHOLDER:
            fixed += 1
        if token in _SENTENCE_ENDS and i < len(message):
            if rows[i][size] == 0:
                found = fixed
            elif unstopped and rows[i - 1][size] == 0:
                found = fixed - 1
    return found


def _shared_prefix(message: tuple[str | None, ...], rows: list[list[int]]) -> tuple[int, bool]:
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
