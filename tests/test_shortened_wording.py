"""A message pasted at its site's file under a `panicked at` header, its last words missing (an
older release printed fewer, a title cut it): the site whose message opens with those words,
unless another message of that file opens with them too; and a shortened message says only
what its own words say, so a site printing the paste whole is not outranked by a longer one."""

from __future__ import annotations

import pytest
from small_catalog import answered_site, triage_of

from bot.app import Triage
from bot.catalog.sites import skeleton_record

REPO = "someone/engine"
LOADER = "crates/loader/src/lib.rs"
INDEX = "crates/parse/src/index.rs"


def _row(path: str, line: int, message: str) -> dict:
    return skeleton_record(
        repo=REPO, file_path=path, line=line, kind="panic!", message_format=message, commit="1" * 40
    )


@pytest.fixture
def triage(tmp_path) -> Triage:
    rows = [
        _row(LOADER, 20, "Unable to open the shader cache for writing"),
        _row(LOADER, 60, "Unable to find the config directory!"),
        _row(LOADER, 64, "Unable to find the data directory!"),
        _row(INDEX, 30, "decl should have ident"),
        _row(INDEX, 50, "decl should have ident for redefinition"),
    ]
    return triage_of(tmp_path, rows)


def _at(path: str, line: int, message: str) -> str:
    return f"thread 'main' panicked at {path}:{line}:9:\n{message}\n"


def test_a_message_without_its_last_words_at_its_file_is_its_site(triage: Triage) -> None:
    # twelve lines off: the line is no evidence, the file and the opening words are
    assert answered_site(triage, _at(LOADER, 32, "Unable to open the shader cache")) == (LOADER, 20)


def test_the_same_without_a_header_or_at_another_file_is_not_answered(triage: Triage) -> None:
    cut = "Unable to open the shader cache"
    assert answered_site(triage, f"Got this:\n```\n{cut}\n```\n") is None
    assert answered_site(triage, _at("crates/other/src/lib.rs", 32, cut)) is None


def test_opening_words_two_messages_of_the_file_share_are_not_answered(triage: Triage) -> None:
    # near line 64, but the paste fits the config directory's message as well as the data one's
    (match,) = triage.analyse(_at(LOADER, 66, "Unable to find the")).panics
    assert not match.matched
    assert match.best is not None and match.best.confidence < 0.8


def test_a_message_printed_whole_outranks_a_longer_one_it_opens(triage: Triage) -> None:
    # `decl should have ident.` is one site's whole message (its full stop aside) and the
    # opening of the other's: the one it says whole is the answer
    assert answered_site(triage, _at(INDEX, 80, "decl should have ident.")) == (INDEX, 30)
