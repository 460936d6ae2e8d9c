"""Prints a digest of `match --json` over every labelled corpus (burn's with the bundled catalog,
the other projects' with theirs), for tests/test_hash_seed.py to compare across hash seeds."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent.parent), str(Path(__file__).parent)]

from corpus_scoring import PROJECTS, load_cases, read_cases  # noqa: E402
from test_project_corpora import NAMES, project_triage  # noqa: E402

from bot.app import Triage  # noqa: E402
from bot.app.match_report import analysis_json  # noqa: E402


def main() -> None:
    out = {}
    bundled = Triage.from_paths(None)
    for case in load_cases():
        out[f"burn/{case['case']}"] = analysis_json(
            case["case"], bundled.analyse(case["text"]), bundled
        )
    for project in NAMES:
        triage = project_triage(project)
        for folder in (PROJECTS / project, PROJECTS / project / "heldout"):
            for case in read_cases(folder):
                key = f"{folder.relative_to(PROJECTS)}/{case['case']}"
                out[key] = analysis_json(case["case"], triage.analyse(case["text"]), triage)
    blob = json.dumps(out, sort_keys=True).encode()
    print(len(out), hashlib.sha256(blob).hexdigest())


if __name__ == "__main__":
    main()
