"""What every doctor check returns: a status, a one-line summary, details and what to do."""

from __future__ import annotations

from dataclasses import dataclass, field

OK, WARN, FAIL, SKIP = "ok", "warn", "FAIL", "skip"
NETWORK_TIMEOUT = 15  # seconds, for the GitHub and Discord checks


@dataclass
class Check:
    name: str
    status: str
    summary: str
    details: list[str] = field(default_factory=list)
    fix: str | None = None

    @property
    def failed(self) -> bool:
        return self.status == FAIL
