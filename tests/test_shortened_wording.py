"""A message pasted at its site's file under a `panicked at` header, its last words missing (an
older release printed fewer, a title cut it): the site whose message opens with those words,
unless another message of that file opens with them too; and a shortened message says only
what its own words say, so a site printing the paste whole is not outranked by a longer one."""

from __future__ import annotations

import pytest
from small_catalog import answered_site, panicked_at, site_row, triage_of

from bot.app import Triage

LOADER = "crates/loader/src/lib.rs"
INDEX = "crates/parse/src/index.rs"


@pytest.fixture
def triage(tmp_path) -> Triage:
    rows = [
        site_row(LOADER, 20, "Unable to open the shader cache for writing"),
        site_row(LOADER, 60, "Unable to find the config directory!"),
        site_row(LOADER, 64, "Unable to find the data directory!"),
        site_row(INDEX, 30, "decl should have ident"),
        site_row(INDEX, 50, "decl should have ident for redefinition"),
    ]
    return triage_of(tmp_path, rows)


def test_a_message_without_its_last_words_at_its_file_is_its_site(triage: Triage) -> None:
    # twelve lines off: the line is no evidence, the file and the opening words are
    assert answered_site(triage, panicked_at(LOADER, 32, "Unable to open the shader cache")) == (
        LOADER,
        20,
    )


def test_the_same_without_a_header_or_at_another_file_is_not_answered(triage: Triage) -> None:
    cut = "Unable to open the shader cache"
    assert answered_site(triage, f"Got this:\n```\n{cut}\n```\n") is None
    assert answered_site(triage, panicked_at("crates/other/src/lib.rs", 32, cut)) is None


def test_opening_words_two_messages_of_the_file_share_are_not_answered(triage: Triage) -> None:
    # near line 64, but the paste fits the config directory's message as well as the data one's
    (match,) = triage.analyse(panicked_at(LOADER, 66, "Unable to find the")).panics
    assert not match.matched
    assert match.best is not None and match.best.confidence < 0.8


def test_a_message_printed_whole_outranks_a_longer_one_it_opens(triage: Triage) -> None:
    # `decl should have ident.` is one site's whole message (its full stop aside) and the
    # opening of the other's: the one it says whole is the answer
    assert answered_site(triage, panicked_at(INDEX, 80, "decl should have ident.")) == (INDEX, 30)
