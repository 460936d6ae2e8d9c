"""A message's first letter in another case than its site prints it (a title or a sentence
capitalises it, an older release wrote it otherwise) is the same message; a site printing the
paste's own case is preferred where both fit alike."""

from __future__ import annotations

import pytest
from small_catalog import answered_site, site_row, triage_of

from bot.app import Triage
from bot.core.panic import Panic

QUEUE = "Queue submission failed after the device was lost"
# Words many sites share: the index's words alone do not find the first site below.
COMMON = "setting properties should never fail on our dictionary objects"


@pytest.fixture
def triage(tmp_path) -> Triage:
    rows = [
        site_row("crates/gpu/src/device.rs", 40, "Failed to create the swap chain for {surface}"),
        site_row("crates/gpu/src/props.rs", 10, COMMON),
        # sites sharing the common words, so that they are too common for the index
        *(
            site_row(f"crates/gpu/src/other{n}.rs", 5, f"{COMMON} number {n} of many")
            for n in range(120)
        ),
        site_row("crates/gpu/src/queue.rs", 7, "Queue submission failed after the device was lost"),
        site_row(
            "crates/gpu/src/queue.rs", 30, "queue submission failed after the device was lost"
        ),
    ]
    return triage_of(tmp_path, rows)


def test_a_lower_cased_message_at_its_file_is_its_site(triage: Triage) -> None:
    text = (
        "thread 'main' panicked at crates/gpu/src/device.rs:52:9:\n"
        "failed to create the swap chain for Surface(3)\n"
    )
    assert answered_site(triage, text) == ("crates/gpu/src/device.rs", 40)
    # matched as its pattern, not as a fuzzy fit of its characters
    (match,) = triage.analyse(text).panics
    assert match.best is not None and "pattern" in match.best.evidence


def test_a_capitalised_message_of_common_words_alone_in_a_block_is_found(triage: Triage) -> None:
    # Its words are every sibling's: only its opening, in either case, finds the site.
    text = f"Got this:\n```\n{COMMON[0].upper() + COMMON[1:]}\n```\n"
    assert answered_site(triage, text) == ("crates/gpu/src/props.rs", 10)
    lowered = f"Got this:\n```\n{COMMON}\n```\n"
    assert answered_site(triage, lowered) == ("crates/gpu/src/props.rs", 10)


@pytest.mark.parametrize("message", [QUEUE, QUEUE[0].lower() + QUEUE[1:]])
def test_the_site_printing_the_pastes_own_case_comes_first(triage: Triage, message: str) -> None:
    match = triage.matcher.match_panic(Panic.mentioned(message, None))
    first, second = (triage.catalog.records[c.record_id] for c in match.candidates[:2])
    assert first.error_message == message
    assert second.error_message.lower() == message.lower()
    assert second.error_message != message
    # (both are shown alike, the message being ambiguous; the paste's own case ranks first)
    assert match.candidates[0].message_score > match.candidates[1].message_score
