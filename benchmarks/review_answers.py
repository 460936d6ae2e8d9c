"""The answer review (docs/review.md): ten answers to held-out texts, as GitHub and Discord
show them, screenshotted in headless Chromium (Debian's `chromium`).

    python benchmarks/review_answers.py [--out docs/review] [--count 10]

Takes the held-out texts of burn's corpus, then cubecl's and burn-onnx's (labelled by hand,
never tuned on), in case order, keeps the first `--count` the bot answers, and writes for each
`github_<case>.png`, `discord_<case>.png` and one line of facts (case, record, source, meaning,
first step) to `answers.json`, for the review's hand-written verdicts.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from corpus_scoring import BURN, HELDOUT, PROJECTS, read_cases  # noqa: E402
from test_render_screenshots import (  # noqa: E402
    buttons_for,
    discord_html,
    github_html,
    screenshot,
)

from bot.app import Triage  # noqa: E402
from bot.app.match_report import analysis_json  # noqa: E402
from bot.render.answer.build import build_answer  # noqa: E402
from bot.render.discord import render_message  # noqa: E402
from bot.render.github import render_comment  # noqa: E402


def held_out() -> list[dict]:
    cases = [dict(c, corpus="burn") for c in read_cases(BURN / HELDOUT)]
    for project in ("cubecl", "burn-onnx"):
        folder = PROJECTS / project / HELDOUT
        cases += [dict(c, corpus=project) for c in read_cases(folder)]
    return cases


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "review")
    parser.add_argument("--count", type=int, default=10)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    triage = Triage.from_paths(None)
    facts = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in held_out():
            if len(facts) >= args.count:
                break
            analysis = triage.analyse(case["text"])
            if not analysis.answered:
                continue
            answer = build_answer(
                analysis, triage.catalog, history=triage.history, projects=triage.projects
            )
            name = f"{case['corpus']}_{case['case'][:3]}"
            screenshot(github_html(render_comment(answer)), f"github_{name}", Path(tmp))
            message = render_message(answer)
            page = discord_html(message, buttons_for(message))
            screenshot(page, f"discord_{name}", Path(tmp))
            for kind in ("github", "discord"):
                (args.out / f"{kind}_{name}.png").write_bytes(
                    (Path(tmp) / f"{kind}_{name}.png").read_bytes()
                )
            match = analysis_json(case["case"], analysis, triage)["matches"][0]
            facts.append(
                {
                    "name": name,
                    "case": f"{case['corpus']}/heldout/{case['case']}",
                    "label": case["expect"],
                    "accepted": any(
                        a["file_path"] == match["file_path"]
                        and a["message"] == match["error_message"]
                        for a in case.get("accept", [])
                    ),
                    "record": match["id"],
                    "source": match["answer"]["source"],
                    "title": match["answer"]["title"],
                    "meaning": match["answer"]["meaning"],
                    "first_step": match["answer"]["first_step"],
                }
            )
    text = json.dumps(facts, indent=2, ensure_ascii=False) + "\n"
    (args.out / "answers.json").write_text(text, encoding="utf-8")
    print(f"{len(facts)} answers written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
