"""Accuracy on every labelled corpus, and what a confidence has meant there.

    python benchmarks/accuracy_report.py

Prints, for burn's corpus (the bundled catalog) and each other project (its full scan, with
its release history), the tuned and held-out parts' top-1 and false answers; then the
reliability table of docs/accuracy.md: the top candidate of each text's first panic, by
confidence band, and how many were right. Held-out parts are reported as counts only. Prints
figures; asserts nothing.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "tests"))

BANDS = ((0.95, "0.95 and more"), (0.9, "0.90-0.95"), (0.8, "0.80-0.90"), (0.6, "0.60-0.80"))
BELOW = "below 0.60"


def band(confidence: float) -> str:
    return next((name for low, name in BANDS if confidence >= low), BELOW)


def main() -> int:
    from corpus_scoring import BURN, HELDOUT, PROJECTS, accepted, figures, read_cases, score

    from bot.app import Triage
    from bot.catalog.loader import load_catalog

    bundled = Triage.from_paths()
    corpora: list[tuple[str, Triage, Path]] = [("burn", bundled, BURN)]
    for project in sorted(PROJECTS.iterdir()):
        if not (project / "labels.jsonl").is_file():
            continue
        own = project / "catalog.jsonl"
        history = project / "history"
        if own.is_file():
            paths = [own, *([history] if history.is_dir() else [])]
            corpora.append((project.name, Triage(load_catalog(paths)), project))
        else:  # cubecl's and burn-onnx's texts: the bundled catalog, as burn's tracker sees them
            corpora.append((project.name, bundled, project))

    print("| corpus | part | texts | catalogued panics | top-1 | false answers |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    bands: dict[str, dict[str, list[int]]] = {
        part: defaultdict(lambda: [0, 0]) for part in ("tuned", "held out")
    }
    for name, triage, folder in corpora:
        for part, where in (("tuned", folder), ("held out", folder / HELDOUT)):
            if not where.is_dir():
                continue
            cases = read_cases(where)
            found = figures(score(triage, cases))
            print(
                f"| {name} | {part} | {found.texts} | {found.positives} | {found.top1:.1%} "
                f"| {len(found.false_matches)} |"
            )
            for case in cases:
                panics = triage.analyse(case["text"]).panics
                best = panics[0].best if panics else None
                if best is None:
                    continue
                right = accepted(case, triage.catalog.get(best.record_id))
                counts = bands[part][band(best.confidence)]
                counts[0] += 1
                counts[1] += right
    print()
    print("| confidence | held out: top candidates | right | tuned parts: top candidates | right |")
    print("| --- | --- | --- | --- | --- |")
    for name in [*(n for _low, n in BANDS), BELOW]:
        cells = []
        for part in ("held out", "tuned"):
            total, right = bands[part][name]
            cells += [str(total), f"{right / total:.0%}" if total else "-"]
        print(f"| {name} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
