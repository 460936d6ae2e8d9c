"""The Discord side's state, for `/healthz` and `/metrics`: connected, reconnecting, or stopped.

Written by the client (`bot.discord.client`) as the gateway connects and drops, read by the
server. No discord.py import here: the server reads it without starting Discord.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

State = Literal["connecting", "connected", "disconnected", "retrying", "stopped"]
Health = Literal["ok", "degraded"]

# Why Discord stopped or failed, by kind (a label in /metrics, so a short fixed set).
ERROR_KINDS = (
    "intents-refused",  # close code 4014: the Message Content intent is off in the portal
    "token-rejected",  # 401 at login, or close code 4004: a wrong or revoked token
    "gateway-refused",  # another close code Discord does not resume from (4010-4013)
    "login-failed",  # a transient failure while logging in (network, 5xx); retried
    "disconnected",  # the gateway connection dropped; discord.py reconnects
)
# What became of a queued Discord write (bot.discord.outbox), a label in /metrics.
WRITE_OUTCOMES = (
    "sent",  # posted (or deleted), at the first try or a later one
    "retried",  # Discord refused for now (429, 5xx, the network): tried again after a backoff
    "dropped",  # still refused at TRIAGE_DISCORD_ANSWER_DEADLINE, or refused for good: given up
    "source-deleted",  # the answered message was deleted before the answer got through
)


@dataclass
class DiscordStatus:
    """What the Discord client is doing now, and the last thing that went wrong."""

    clock: Callable[[], float] = time.time
    state: State = "connecting"
    user: str | None = None
    last_error: str | None = None
    last_error_kind: str | None = None
    last_error_at: float | None = None
    errors: dict[str, int] = field(default_factory=dict)
    retry_in: float | None = None
    writes: dict[str, int] = field(default_factory=dict)  # queued writes, by outcome
    orphans_removed: int = 0  # answers whose message was deleted, removed at start
    last_dropped_at: float | None = None

    def wrote(self, outcome: str) -> None:
        self.writes[outcome] = self.writes.get(outcome, 0) + 1
        if outcome == "dropped":
            self.last_dropped_at = self.clock()

    @property
    def connected(self) -> bool:
        return self.state == "connected"

    def set_connected(self, user: str | None = None) -> None:
        self.state = "connected"
        self.retry_in = None
        if user is not None:
            self.user = user

    def set_disconnected(self) -> None:
        if self.state == "connected":
            self.state = "disconnected"
            self.failed("disconnected", "the gateway connection dropped; reconnecting")

    def set_retrying(self, kind: str, detail: str, delay: float) -> None:
        self.state = "retrying"
        self.retry_in = delay
        self.failed(kind, detail)

    def set_stopped(self, kind: str, detail: str) -> None:
        self.state = "stopped"
        self.retry_in = None
        self.failed(kind, detail)

    def failed(self, kind: str, detail: str) -> None:
        self.last_error_kind = kind
        self.last_error = detail
        self.last_error_at = self.clock()
        self.errors[kind] = self.errors.get(kind, 0) + 1

    def health(self) -> tuple[Health, str]:
        """("ok" | "degraded", a line saying why) for `/healthz`."""
        if self.state == "connected":
            return "ok", f"connected as {self.user}" if self.user else "connected"
        if self.state == "connecting":
            return "degraded", "connecting to Discord"
        if self.state == "disconnected":
            return "degraded", "disconnected from Discord; reconnecting"
        if self.state == "retrying":
            return "degraded", f"not connected ({self.last_error}); retrying in {self.retry_in:g} s"
        return "degraded", f"stopped: {self.last_error}"

    def answers_trouble(self, window: float) -> str | None:
        """Why answers are not getting through, when one was dropped in the last `window`
        seconds (for a "degraded" /healthz), else None."""
        if self.last_dropped_at is None or self.clock() - self.last_dropped_at > window:
            return None
        dropped = self.writes.get("dropped", 0)
        ago = max(0.0, self.clock() - self.last_dropped_at)
        return (
            f"{dropped} answer{'s' if dropped != 1 else ''} dropped: Discord refused "
            f"{'them' if dropped != 1 else 'it'} past TRIAGE_DISCORD_ANSWER_DEADLINE "
            f"(last {ago:.0f} s ago)"
        )

    def metrics_text(self) -> str:
        """The Prometheus lines for `/metrics`."""
        lines = [
            "# HELP triage_discord_connected 1 while the Discord gateway connection is up",
            "# TYPE triage_discord_connected gauge",
            f"triage_discord_connected {int(self.connected)}",
            "# HELP triage_discord_state The Discord client's state (1 for the current one)",
            "# TYPE triage_discord_state gauge",
        ]
        for state in ("connecting", "connected", "disconnected", "retrying", "stopped"):
            lines.append(f'triage_discord_state{{state="{state}"}} {int(self.state == state)}')
        lines += [
            "# HELP triage_discord_errors_total Discord failures, by kind",
            "# TYPE triage_discord_errors_total counter",
        ]
        for kind in ERROR_KINDS:
            lines.append(f'triage_discord_errors_total{{kind="{kind}"}} {self.errors.get(kind, 0)}')
        lines += [
            "# HELP triage_discord_last_error_timestamp_seconds When the last Discord error "
            "happened (its kind as a label)",
            "# TYPE triage_discord_last_error_timestamp_seconds gauge",
        ]
        if self.last_error_at is not None:
            lines.append(
                f'triage_discord_last_error_timestamp_seconds{{kind="{self.last_error_kind}"}} '
                f"{self.last_error_at:.3f}"
            )
        lines += [
            "# HELP triage_discord_writes_total Discord answers and deletions queued in the "
            "store, by outcome",
            "# TYPE triage_discord_writes_total counter",
        ]
        for outcome in WRITE_OUTCOMES:
            lines.append(
                f'triage_discord_writes_total{{outcome="{outcome}"}} {self.writes.get(outcome, 0)}'
            )
        lines += [
            "# HELP triage_discord_answers_dropped_total Discord answers given up (refused past "
            "TRIAGE_DISCORD_ANSWER_DEADLINE, or for good)",
            "# TYPE triage_discord_answers_dropped_total counter",
            f"triage_discord_answers_dropped_total {self.writes.get('dropped', 0)}",
            "# HELP triage_discord_orphans_removed_total Answers to deleted messages removed at "
            "start",
            "# TYPE triage_discord_orphans_removed_total counter",
            f"triage_discord_orphans_removed_total {self.orphans_removed}",
        ]
        return "\n".join(lines) + "\n"
