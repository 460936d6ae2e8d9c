"""Drifted wordings compared on a message's fixed text (bot/core/match/drift.py), on plain
strings."""

from __future__ import annotations

from bot.catalog.patterns import normalise_message, parse_format
from bot.core.match.drift import WHOLE_SCORE, Drift, drift

TILE = "Tile {} overlaps tile {} at row {} and column {} in layer {} of the grid"
LAYOUT = (
    "The layout engine could not place {} widgets because the available area of the grid is "
    "exhausted. See: https://example.org/tiny-grid/layout"
)
SCOPE = (
    "Resource `{}` was inserted during a call to World::resource_scope, which may result in "
    "unexpected behavior.\nIn release builds, the value inserted will be overwritten at the "
    "end of the scope."
)


def _drift(query: str, fmt: str) -> Drift | None:
    return drift(query, parse_format(normalise_message(fmt)))


def test_one_word_changed_among_long_placeholder_values() -> None:
    value = "[" + ", ".join(str(i) for i in range(60)) + "]"
    query = (
        f"Tile {value} overlaps tile {value} at line 2 and column 7 in layer {value} of the grid"
    )
    found = _drift(query, TILE)
    assert found is not None and found.kind == "whole" and 0.85 < found.score < 0.95


def test_two_words_changed_in_a_short_message_is_too_much() -> None:
    assert (
        _drift("Tile 1 covers tile 2 at line 2 and column 7 in layer 3 of the grid", TILE) is None
    )


def test_todays_message_without_its_trailing_url() -> None:
    query = (
        "The layout engine could not place 12 widgets because the available area of the grid "
        "is exhausted."
    )
    assert _drift(query, LAYOUT) == Drift(0.9, "prefix")


def test_an_older_wording_parting_where_a_new_clause_starts() -> None:
    query = (
        "Resource `my::Params` was inserted during a call to World::resource_scope. This is not "
        "allowed as the original resource is reinserted to the world after the FnOnce param is "
        "invoked."
    )
    assert _drift(query, SCOPE) == Drift(0.9, "prefix")


def test_an_older_wording_parting_mid_clause_needs_most_of_the_message() -> None:
    # Parts after 6 fixed tokens, mid-clause: too little shared to say it is this message.
    query = "Resource `my::Params` was inserted during a reload of the asset server"
    assert _drift(query, SCOPE) is None


def test_a_message_sharing_only_a_few_words_is_no_drift() -> None:
    assert _drift("The layout of my own widgets is broken in the grid", LAYOUT) is None


def test_short_messages_never_drift() -> None:
    assert _drift("index 3 out of range", "index {} out of bounds") is None


def test_the_exact_message_is_a_whole_drift_above_any_sibling() -> None:
    # The pattern check answers exact matches first; one it misses only for its letters' case
    # (`command 42: Long option names ...`) is the whole message, and scores above a sibling
    # message one word apart (it scored as a shared start, 0.9, below the sibling's 0.93).
    query = "Tile 1 overlaps tile 2 at row 3 and column 4 in layer 5 of the grid"
    assert _drift(query, TILE) == Drift(WHOLE_SCORE, "whole")
    sibling = _drift(query.lower(), TILE.replace("row", "line"))
    assert sibling is not None and sibling.kind == "whole"
    assert _drift(query.lower(), TILE) == Drift(WHOLE_SCORE, "whole")
    assert sibling.score < WHOLE_SCORE


NESTED = (
    "Cannot start a runtime from within a runtime. This happens because a function (like "
    "`block_on`) attempted to block the current thread while the thread is being used to drive "
    "asynchronous tasks."
)


def test_the_first_sentence_alone_is_the_message_quoted_short() -> None:
    assert _drift("Cannot start a runtime from within a runtime.", NESTED) == Drift(0.9, "prefix")
    # Cut mid-sentence, or a first sentence the message does not have: no drift.
    assert _drift("Cannot start a runtime from within a", NESTED) is None
    assert _drift("Cannot start a runtime from within a thread pool.", NESTED) is None
    # Too few tokens to say which message it is.
    assert _drift("Cannot start a runtime.", "Cannot start a runtime. Use {} instead.") is None


def test_the_first_sentence_without_its_full_stop_is_quoted_short_too() -> None:
    # (a title drops the stop; a paste that ends in punctuation of its own is something else)
    assert _drift("Cannot start a runtime from within a runtime", NESTED) == Drift(0.9, "prefix")
    assert _drift("cannot start a runtime from within a runtime", NESTED) == Drift(0.9, "prefix")
    assert _drift("Cannot start a runtime from within a runtime,", NESTED) is None


def test_the_alignment_is_the_textbook_recurrence() -> None:
    """`_align`'s rows are the edit-distance table (a placeholder swallowing any run of pasted
    tokens), cell for cell, on random messages and pastes, stopped at the same row."""
    import random

    from bot.core.match import drift

    placeholder = drift._PLACEHOLDER

    def table(message, pasted, allowed):
        width = len(pasted) + 1
        previous = list(range(width))
        rows = [previous]
        for token in message:
            current = [0] * width
            if token is placeholder:
                current[0] = previous[0]
                for j in range(1, width):
                    current[j] = min(previous[j], current[j - 1])
            else:
                current[0] = previous[0] + 1
                for j in range(1, width):
                    substitute = previous[j - 1] + (pasted[j - 1] != token)
                    current[j] = min(substitute, previous[j] + 1, current[j - 1] + 1)
            rows.append(current)
            previous = current
            if min(current) > allowed:
                break
        return rows

    rng = random.Random(5)
    words = ("shape", "of", "the", "tensor", ".", ",")
    for _ in range(3000):
        message = tuple(
            placeholder if rng.random() < 0.2 else rng.choice(words)
            for _ in range(rng.randint(0, 12))
        )
        pasted = tuple(rng.choice(words) for _ in range(rng.randint(0, 15)))
        allowed = rng.randint(0, 5)
        assert drift._align(message, pasted, allowed) == table(message, pasted, allowed)


def test_without_placeholders_the_shared_start_needs_no_table() -> None:
    """`_unaligned` (a message without placeholders, lengths too far apart for a whole match)
    reads what `_first_sentences` and `_shared_prefix` read off the alignment table, on random
    messages and pastes that open alike for a while, then part."""
    import random

    from bot.core.match import drift

    rng = random.Random(11)
    words = ("shape", "of", "the", "tensor", ".", ",", ":", "!")
    checked = 0
    for _ in range(4000):
        message = tuple(rng.choice(words) for _ in range(rng.randint(1, 14)))
        cut = rng.randint(0, len(message))
        pasted = message[:cut] + tuple(rng.choice(words) for _ in range(rng.randint(0, 6)))
        allowed = rng.randint(1, 3)
        if abs(len(message) - len(pasted)) <= allowed:
            continue  # (a whole match may be in reach: the table is read)
        rows = drift._align(message, pasted, allowed)
        expected = (
            drift._first_sentences(message, rows, pasted),
            *drift._shared_prefix(message, rows),
        )
        assert drift._unaligned(message, pasted) == expected, (message, pasted)
        checked += 1
    assert checked > 1000
