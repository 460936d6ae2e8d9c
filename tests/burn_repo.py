"""Where the tests find burn's git history (every release tag), when this machine has it.

`TRIAGE_TEST_BURN_REPO` names a clone (bare or not) of tracel-ai/burn; by default the copy the
development and CI machines keep. Tests that need it skip, saying so, when it is absent.
"""

from __future__ import annotations

import os
from pathlib import Path

BURN_REPO = Path(os.environ.get("TRIAGE_TEST_BURN_REPO", "/work/.mirror/tracel-ai+burn/repo"))


def burn_repo_present() -> bool:
    return (BURN_REPO / "HEAD").exists() or (BURN_REPO / ".git").exists()


SKIP_REASON = (
    f"burn's git history is not at {BURN_REPO} (set TRIAGE_TEST_BURN_REPO to a clone of "
    "tracel-ai/burn with its tags)"
)
