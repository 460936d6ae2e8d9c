"""Discord writes queued in the store, as GitHub's jobs are: what to do when one fails.

An answer is queued before it is sent; discord.py retries a 429 a few times on its own, and when
that runs out the write waits in the store and is tried again with a backoff, until
TRIAGE_DISCORD_ANSWER_DEADLINE has passed since the message: then it is dropped and counted (an
answer minutes late is worse than none). Decided here without discord.py; `client.py` acts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

FIRST_BACKOFF = 1.0  # seconds before the first retry; doubled each time
MAX_BACKOFF = 30.0
HOLD = 60.0  # seconds a write being sent is not handed out again (a process dying mid-send)
POLL = 0.5  # seconds between looks at the queue
DELETE_DEADLINE = 3600.0  # an orphaned answer is still worth deleting late
ORPHAN_SWEEP = 200  # answers checked at start (the newest)

Failure = Literal["retry", "gone", "refused"]


def failure_kind(status: int | None, text: str = "") -> Failure:
    """A failed write: `retry` (429, 5xx, the network: None), `gone` (the message it answers or
    deletes no longer exists), `refused` (another 4xx: trying again gives the same answer)."""
    if status is None or status == 429 or status >= 500:
        return "retry"
    if status == 404 or (status == 400 and "message_reference" in text):
        return "gone"
    return "refused"


def backoff(attempts: int, first: float = FIRST_BACKOFF, cap: float = MAX_BACKOFF) -> float:
    return float(min(cap, first * 2 ** max(0, attempts)))


@dataclass(frozen=True, slots=True)
class Next:
    """After a failed write: try again in `delay` seconds, or (None) drop it."""

    delay: float | None


def after_failure(
    kind: Failure, *, now: float, deadline_at: float, attempts: int, retry_after: float = 0.0
) -> Next:
    if kind != "retry":
        return Next(None)
    delay = max(backoff(attempts), retry_after)
    if now + delay > deadline_at:
        return Next(None)
    return Next(delay)
