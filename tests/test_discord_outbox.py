"""What happens to a queued Discord write that failed (bot.discord.outbox), decided alone."""

from __future__ import annotations

import pytest

from bot.discord import outbox


@pytest.mark.parametrize(
    ("status", "text", "kind"),
    [
        (None, "", "retry"),
        (429, "You are being rate limited.", "retry"),
        (502, "", "retry"),
        (404, "Unknown Message", "gone"),
        (400, "In message_reference: Unknown message", "gone"),
        (400, "Invalid Form Body: embeds", "refused"),
        (403, "Missing Permissions", "refused"),
    ],
)
def test_failure_kind(status, text, kind):
    assert outbox.failure_kind(status, text) == kind


def test_backoff_doubles_up_to_its_cap_and_respects_retry_after():
    assert [outbox.backoff(n) for n in range(7)] == [1, 2, 4, 8, 16, 30, 30]
    step = outbox.after_failure("retry", now=0, deadline_at=100, attempts=0, retry_after=7.5)
    assert step.delay == 7.5


def test_a_retry_that_would_land_past_the_deadline_drops_the_write():
    assert outbox.after_failure("retry", now=95, deadline_at=100, attempts=2).delay == 4
    assert outbox.after_failure("retry", now=97, deadline_at=100, attempts=2).delay is None
    assert outbox.after_failure("refused", now=0, deadline_at=100, attempts=0).delay is None
