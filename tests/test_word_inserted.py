"""A word inserted in a message (an older or newer release's wording, a retyped paste) keeps
the message's last words in the comparison: pasted at its file, it is the site."""

from __future__ import annotations

import pytest
from small_catalog import site_row, triage_of

from bot.app import Triage

RESOLVER = "crates/resolver/src/version_map.rs"


@pytest.fixture
def triage(tmp_path) -> Triage:
    rows = [
        site_row(RESOLVER, 40, "Prefix must no change", kind="expect"),
        site_row(RESOLVER, 90, "the lazy distribution index is always in range", kind="expect"),
    ]
    return triage_of(tmp_path, rows)


def test_a_word_inserted_at_the_sites_file_is_the_site(triage: Triage) -> None:
    text = f"thread 'main' panicked at {RESOLVER}:52:9:\nPrefix must now no change\n"
    (match,) = triage.analyse(text).panics
    assert match.matched and match.best is not None
    assert triage.catalog.records[match.best.record_id].line_number == 40
    assert "fuzzy" in match.best.evidence


def test_an_error_tail_after_the_message_still_costs_nothing(triage: Triage) -> None:
    text = (
        f"thread 'main' panicked at {RESOLVER}:52:9:\n"
        "Prefix must no change: Error { kind: InvalidData, at: 4096 }\n"
    )
    (match,) = triage.analyse(text).panics
    assert match.matched and match.best is not None
    assert triage.catalog.records[match.best.record_id].line_number == 40
