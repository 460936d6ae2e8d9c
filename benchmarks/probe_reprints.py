"""The tuned texts re-printed the ways other tools print a paste, answer by answer.

    python benchmarks/probe_reprints.py [VARIATION ...]     (default: every variation)

Each tuned text of the other projects' corpora whose code block holds a panic header and that
the bot answers right as pasted is re-printed (tests/test_paste_variations.py's variations, which
must keep every answer, and these, which may lose some): its blocks' lines joined into one (a
chat client that dropped the line breaks), joined by `<br>` (HTML), cut at 80 columns (a
terminal), each header line set in bold (`**..**`), and each header taken out of its block
into a bold line of prose. Printed per variation: right texts, lost answers, wrong answers
(any tuned text answered with a record its label does not accept, negatives included), with
the first cases named. Held-out parts are never read. Not accuracy figures: nobody wrote these
pastes; they show which shapes a change makes the bot lose, before and after it.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "tests"))

from corpus_scoring import accepted  # noqa: E402
from test_paste_variations import (  # noqa: E402
    _FENCED_HEADER,
    VARIATIONS,
    _block_lines,
    _top,
    _tuned,
)
from test_project_corpora import NAMES, TUNED_FALSE  # noqa: E402

_BLOCK = re.compile(r"(```[^\n`]*\n)(.*?)```", re.S)


def _blocks(join: Callable[[list[str]], str]) -> Callable[[str], str]:
    """Each code block's lines, joined back by `join`."""

    def apply(text: str) -> str:
        return _BLOCK.sub(lambda m: m[1] + join(m[2].rstrip("\n").split("\n")) + "\n```", text)

    return apply


def _each_line(change: Callable[[str], list[str]]) -> Callable[[str], str]:
    """Each line inside a code fence replaced by the lines `change` makes of it."""
    return _block_lines(lambda _number, line: change(line))


def _cut(width: int) -> Callable[[str], list[str]]:
    return lambda line: [line[i : i + width] for i in range(0, len(line), width)] or [""]


def _header(change: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    return lambda line: change(line) if "panicked at" in line else [line]


EXTRA: dict[str, Callable[[str], str]] = {
    "one line": _blocks(lambda lines: " ".join(line.strip() for line in lines if line.strip())),
    "<br> joined": _blocks("<br>".join),
    "80 columns": _each_line(_cut(80)),
    "bold header": _each_line(_header(lambda line: [f"**{line}**"])),
    # the header out of its block, into a bold line of prose between two blocks
    "header in bold prose": _each_line(
        _header(lambda line: ["```", "", f"**{line.strip()}**", "", "```"])
    ),
}


def main() -> int:
    every = {**VARIATIONS, **EXTRA}
    chosen = sys.argv[1:] or list(every)
    unknown = [name for name in chosen if name not in every]
    if unknown:
        print(f"unknown variation(s): {', '.join(unknown)}; known: {', '.join(every)}")
        return 2
    print("| variation | right texts | lost | wrong | first lost / wrong |")
    print("| --- | ---: | ---: | ---: | --- |")
    for name in chosen:
        vary = every[name]
        total, lost, wrong = 0, [], []
        for project in NAMES:
            triage, results = _tuned(project)
            known = TUNED_FALSE.get(project, set())
            for r in results:
                top = _top(triage, vary(r["text"]))
                if r["expect"] == "match" and r["accepted"] and _FENCED_HEADER.search(r["text"]):
                    total += 1
                    if not accepted(r, top):
                        lost.append(f"{project}/{r['case'][:3]}")
                if r["case"] not in known and top is not None and not accepted(r, top):
                    wrong.append(f"{project}/{r['case'][:3]}")
        named = ", ".join(lost[:3] + wrong[:3])
        print(f"| {name} | {total} | {len(lost)} | {len(wrong)} | {named} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
