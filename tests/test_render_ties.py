"""One message raised at several sites (issue 24): decided by the pasted location, or said to be
a tie in the first view with the other sites linked; never one picked in silence."""

from __future__ import annotations

import pytest
from small_catalog import site_row, triage_of

from bot.app import Triage
from bot.render.answer.build import build_answer
from bot.render.github import render_comment

ROOT = (
    "https://github.com/tracel-ai/burn/blob/2c06be351006851d42fdb6df16b976f4a82d9747/crates/"
    "burn-train/src/renderer/tui/renderer.rs"
)


@pytest.fixture(scope="module")
def triage() -> Triage:
    return Triage.from_paths()


def _root(triage: Triage, text: str):
    answer = build_answer(
        triage.analyse(text), triage.catalog, history=triage.history, projects=triage.projects
    )
    return answer, answer.sections[0]


def test_a_message_of_two_sites_pasted_alone_is_said_to_be_a_tie(triage: Triage) -> None:
    answer, root = _root(triage, "Killing training from user input.\n")
    assert root.source is not None and root.source.url == f"{ROOT}#L135"
    assert root.tie and root.note_up_front
    assert "".join(span.text for span in root.version_note or ()) == (
        "The same message is raised at 2 sites and the paste has no panicked at location to "
        "tell which; shown: the first in the catalog. The others: renderer.rs:638 @ 2c06be3."
    )
    # In the first view, before the fold.
    first_view = render_comment(answer).split("<details>", 1)[0]
    assert f"[renderer.rs:638 @ 2c06be3]({ROOT}#L638)" in first_view


def test_the_pasted_location_decides_and_no_tie_is_said(triage: Triage) -> None:
    text = (
        "thread 'main' panicked at /home/u/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/"
        "burn-train-0.20.1/src/renderer/tui/renderer.rs:345:17:\n"
        "Killing training from user input.\n"
    )
    _answer, root = _root(triage, text)
    assert root.source is not None and root.source.url == f"{ROOT}#L638"
    assert not root.tie
    assert "same message" not in "".join(span.text for span in root.version_note or ())


def test_a_message_of_one_site_is_no_tie(triage: Triage) -> None:
    _answer, root = _root(triage, "Can't differentiate interpolate backward.\n")
    assert root.record.id == "cf30438606d06d30" and not root.tie


def test_a_tie_counts_every_site_of_the_message_not_only_the_candidates_shown(tmp_path) -> None:
    # Seven encoders print one message: the matcher keeps its best few candidates, the answer
    # counts the catalog's seven.
    message = "Invalid buffer length: expected {} got {}"
    rows = [site_row(f"src/codecs/format{n}.rs", 10 + n, message) for n in range(7)]
    seven = triage_of(tmp_path, rows)
    answer = build_answer(seven.analyse(f"{message.replace('{}', '12')}\n"), seven.catalog)
    note = "".join(span.text for span in answer.sections[0].version_note or ())
    assert note.startswith("The same message is raised at 7 sites"), note
