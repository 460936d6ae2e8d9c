"""A message of several lines quoted down to a line break: a title keeps the first line (its
placeholders filled, its first letter a capital), a paste stops at a blank line. The record is
found by the words of that line, not of its whole message, and the cut is scored as the
pattern's own."""

from __future__ import annotations

import json

import pytest

from bot.app import Triage
from bot.catalog.loader import load_catalog
from bot.catalog.sites import skeleton_record
from bot.core.match.index import CatalogIndex

HINTED = (
    "cannot attach handle {:?}, the pool holds no such entry\n"
    "This usually means the handle was released earlier through `release` on a clone, or the "
    "pool was rebuilt after a configuration reload dropped every registered worker thread."
)
NOISE = [
    "worker pool exhausted while scheduling {} tasks",
    "handle table corrupted at slot {}",
    "configuration reload failed: {}",
    "entry {} was released twice",
    "the scheduler lost track of a registered worker",
    "clone of a released handle observed in the reclaim queue",
    "thread {} panicked while holding the registry lock",
    "pool rebuilt during an active borrow of slot {}",
]


def _catalog(tmp_path, messages):
    lines = [
        json.dumps(
            skeleton_record(
                repo="someone/pool",
                file_path=f"src/part{n}.rs",
                line=10 + n,
                kind="panic!",
                message_format=message,
                commit="1" * 40,
            )
        )
        for n, message in enumerate(messages)
    ]
    path = tmp_path / "catalog.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return load_catalog([path])


@pytest.fixture
def triage(tmp_path):
    return Triage(_catalog(tmp_path, [HINTED, *NOISE]))


def _answered(triage: Triage, text: str) -> list[str]:
    analysis = triage.analyse(text)
    return [triage.catalog.records[m.best.record_id].error_message for m in analysis.answered]


def test_a_title_quoting_the_first_line_with_its_value_is_answered(triage):
    text = (
        'Title: "Cannot attach handle Handle(7), the pool holds no such entry" after an upgrade\n'
        "\n"
        "It started once we moved to the new release; nothing else changed on our side.\n"
    )
    assert _answered(triage, text) == [HINTED]


def test_a_paste_of_the_first_line_under_a_header_is_answered(triage):
    text = (
        "thread 'main' panicked at src/part0.rs:10:5:\n"
        "cannot attach handle Handle(7), the pool holds no such entry\n"
    )
    assert _answered(triage, text) == [HINTED]


def test_the_hint_line_alone_or_a_changed_first_line_is_not_an_answer(triage):
    hint = (
        'Title: "the pool was rebuilt after a configuration reload dropped every registered '
        'worker thread" in production\n'
    )
    changed = 'Title: "Cannot attach socket Handle(7), the pool holds no such entry"\n'
    assert _answered(triage, hint) == []
    assert _answered(triage, changed) == []


def test_the_first_line_is_enough_for_the_record_to_be_a_candidate(tmp_path):
    """The hint's many words would leave the first line's below the coverage a candidate
    needs, measured over the whole message; measured over its first line they are all there."""
    index = CatalogIndex(_catalog(tmp_path, [HINTED, *NOISE]))
    quoted = "cannot attach handle Handle(7), the pool holds no such entry"
    assert index.candidates(quoted)[0] == index.record_ids[0]
    single = CatalogIndex(_catalog(tmp_path, [HINTED.replace("\n", " "), *NOISE]))
    assert single.record_ids[0] not in single.candidates(quoted)
