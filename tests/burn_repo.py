"""Where the tests find burn's git history (every release tag): `TRIAGE_TEST_BURN_REPO`.

It names a clone (bare or not) of tracel-ai/burn with its tags; there is no default, since a
clone is wherever its owner put it. Tests that need it skip, saying so, when it is unset or
absent.
"""

from __future__ import annotations

import os
from pathlib import Path

VARIABLE = "TRIAGE_TEST_BURN_REPO"
_SETTING = os.environ.get(VARIABLE, "").strip()
BURN_REPO: Path | None = Path(_SETTING).expanduser() if _SETTING else None


def burn_repo_present() -> bool:
    return BURN_REPO is not None and (
        (BURN_REPO / "HEAD").exists() or (BURN_REPO / ".git").exists()
    )


def burn_repo() -> Path:
    """The clone, for a test that skipped unless burn_repo_present()."""
    assert BURN_REPO is not None, SKIP_REASON
    return BURN_REPO


SKIP_REASON = (
    f"{VARIABLE} is not set: set it to a clone of tracel-ai/burn with its tags "
    "(git clone --bare https://github.com/tracel-ai/burn)"
    if BURN_REPO is None
    else f"burn's git history is not at {BURN_REPO} ({VARIABLE}; a clone of tracel-ai/burn "
    "with its tags)"
)
