"""A message's opening cut inside a word, or before an ellipsis (a title trimmed to fit, a log
line's width), is that message: no release prints half a word. Quoted alone it is answered
when the opening says enough on its own; a stopword at the cut may be whole, and an opening
two messages share says neither."""

from __future__ import annotations

import pytest
from small_catalog import answered_site, site_row, triage_of

from bot.app import Triage

LIGHTS = "crates/render/src/light.rs"
DOM = "crates/html/src/dom.rs"


@pytest.fixture
def triage(tmp_path) -> Triage:
    rows = [
        site_row(LIGHTS, 40, "Failed to get directional light visible entities for the cascade"),
        site_row(LIGHTS, 90, "Shadow map resolution must be a power of two and at most 8192"),
        site_row(DOM, 20, "not all characters are valid in a tag name"),
        site_row(DOM, 30, "not all characters are valid in an attribute name"),
    ]
    return triage_of(tmp_path, rows)


def _title(text: str) -> str:
    return f"Title: {text}\n\nThe app crashes when the scene loads.\n"


def test_an_opening_cut_inside_a_word_is_its_message(triage: Triage) -> None:
    assert answered_site(triage, _title("Failed to get directional light visi")) == (LIGHTS, 40)
    at = f"thread 'main' panicked at {LIGHTS}:102:9:\nShadow map resolution must be a pow\n"
    assert answered_site(triage, at) == (LIGHTS, 90)


def test_an_opening_before_an_ellipsis_is_its_message(triage: Triage) -> None:
    assert answered_site(triage, _title("Failed to get directional light visible…")) == (
        LIGHTS,
        40,
    )


def test_a_stopword_at_the_cut_may_be_whole(triage: Triage) -> None:
    # `.. valid in a` opens `.. in a tag name` with whole words, and `.. in an attribute name`
    # with half of one: neither is answered
    assert answered_site(triage, _title("not all characters are valid in a")) is None


def test_an_opening_two_messages_share_says_neither(triage: Triage) -> None:
    assert answered_site(triage, _title("not all characters are valid in a t…")) == (DOM, 20)
    assert answered_site(triage, _title("not all characters are valid in…")) is None
