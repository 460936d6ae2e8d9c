"""Which conditions of a module the labelled corpora do not depend on.

    python benchmarks/rule_scan.py bot/core/match/matcher.py [more modules]

Each one-line `if`/`elif` condition of the module is replaced by `False` in turn, the module
written back, and `benchmarks/fit_scorer.py` run: a condition whose removal leaves every
project's left-out figures (texts, catalogued panics, top-1, false answers, tuned and held
out) as they are is printed. Such a rule is a candidate for deletion only: delete it when the
whole test suite still passes without it (a test describes what the corpora do not hold), and
pin it with a test when it should stay. The module is restored after each run, and on any
error; run it on a clean working tree.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONDITION = re.compile(r"^(\s*)(if|elif) (.+):\s*(#.*)?$")


def left_out_figures() -> list[str]:
    """The fit script's table rows, project and part with the left-out model's figures."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "fit_scorer.py")],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    if done.returncode:
        return [f"failed: {done.stderr.strip().splitlines()[-1:]}"]
    rows = []
    for line in done.stdout.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 5 and cells[2] in ("tuned", "held out"):
            rows.append(" | ".join(cells[1:3] + cells[4:5]))
    return rows


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: python benchmarks/rule_scan.py MODULE [MODULE ...]", file=sys.stderr)
        return 2
    base = left_out_figures()
    if not base or base[0].startswith("failed"):
        print(f"the fit script does not run: {base}", file=sys.stderr)
        return 1
    found = total = 0
    for name in sys.argv[1:]:
        path = ROOT / name
        original = path.read_text(encoding="utf-8")
        lines = original.split("\n")
        try:
            for number, line in enumerate(lines, start=1):
                match = CONDITION.match(line)
                if not match or "TYPE_CHECKING" in line or "__name__" in line:
                    continue
                changed = lines[:]
                changed[number - 1] = f"{match.group(1)}{match.group(2)} False:"
                path.write_text("\n".join(changed), encoding="utf-8")
                total += 1
                if left_out_figures() == base:
                    found += 1
                    print(f"{name}:{number}: {line.strip()}", flush=True)
        finally:
            path.write_text(original, encoding="utf-8")
    print(f"{found} of {total} conditions leave every project's left-out figures unchanged")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
