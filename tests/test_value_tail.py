"""A message pasted at its site's file under a `panicked at` header, its last words printed as a
value (a later release formats what it names: `.. for given type`, then `.. for
app::Shortcut<Wry>`): the site whose message opens with the paste's words, unless another
message of the file opens with them too; a value's quote or number is a placeholder's, not this."""

from __future__ import annotations

import pytest
from small_catalog import answered_site, panicked_at, site_row, triage_of

from bot.app import Triage

STATE = "crates/engine/src/lib.rs"
WRITE = "crates/engine/src/clone.rs"


@pytest.fixture
def triage(tmp_path) -> Triage:
    rows = [
        site_row(STATE, 40, "state() called before manage() for given type"),
        site_row(STATE, 90, "resource requested before the plugin was built"),
        site_row(STATE, 95, "resource requested before the plugin was added"),
        site_row(WRITE, 20, "Trying to write component multiple times"),
        site_row(WRITE, 30, "Trying to write component '{name}' multiple times"),
    ]
    return triage_of(tmp_path, rows)


TYPED = "state() called before manage() for app_shortcuts::Shortcut<runtime::Wry<u8>>"


def test_the_last_words_printed_as_a_value_at_the_file_are_its_site(triage: Triage) -> None:
    # twelve lines off: the line is no evidence, the file and the opening words are
    assert answered_site(triage, panicked_at(STATE, 52, TYPED)) == (STATE, 40)


def test_the_same_without_a_header_or_at_another_file_is_not_answered(triage: Triage) -> None:
    assert answered_site(triage, f"Got this:\n```\n{TYPED}\n```\n") is None
    assert answered_site(triage, panicked_at("crates/other/src/lib.rs", 52, TYPED)) is None


def test_opening_words_two_messages_of_the_file_share_are_not_answered(triage: Triage) -> None:
    pasted = "resource requested before the plugin was app::Plugin<Render>"
    (match,) = triage.analyse(panicked_at(STATE, 93, pasted)).panics
    assert not match.matched


def test_a_quoted_value_is_a_placeholders_not_a_shortened_wording(triage: Triage) -> None:
    # `'42'` fills `'{name}'` of the longer message, cut after it: neither site is answered
    # for the shorter message that the paste's words open
    assert answered_site(triage, panicked_at(WRITE, 60, "Trying to write component '42'")) != (
        WRITE,
        20,
    )
