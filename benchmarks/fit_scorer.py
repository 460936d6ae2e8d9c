"""Fits the model that gives an answer its confidence (bot/core/match/calibration.py) on the
labelled corpora, and says how it does on projects it was not fitted on.

    python benchmarks/fit_scorer.py            # figures only
    python benchmarks/fit_scorer.py --write    # and write bot/core/match/model.json
    python benchmarks/fit_scorer.py --without score,cleared   # features held at zero (figures only)

Every corpus is analysed once with the matcher's stages alone (no model); each text gives one
example, the best candidate of its first panic with candidates, right when its label accepts
that record. Only the tuned parts are ever fitted on.

1. Leave one project out: for each project, a model fitted on the other projects' tuned parts
   scores that project's texts (tuned and held-out). The threshold is the lowest probability
   at which those left-out predictions answer the tuned parts with PRECISION at least (one
   false answer in 200; a false answer no feature can tell from a right one, as a message
   another repository's crate printed word for word, would otherwise push it to the top).
2. The shipped model is fitted on every tuned part, with that threshold; held-out parts are
   scored once with it.

Prints, per project and part: today's rules (answer from a score of 0.80) beside the
left-out model and the shipped one (texts, catalogued panics, top-1, false answers); then the
reliability of the left-out predictions on the held-out parts, by probability band.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "tests"))

from bot.catalog.model import replace  # noqa: E402
from bot.core.analysis import PanicMatch  # noqa: E402
from bot.core.match.calibration import FEATURES, MODEL_FILE, Model, calibrate, features  # noqa: E402

L2 = 1.0  # ridge on the weights (not the intercept), in the units of the features ([0, 1])
GRID = tuple(round(0.80 + 0.01 * k, 2) for k in range(20))  # an answer is at least 80% sure
PRECISION = 0.995  # of the left-out answers on the tuned parts, at the chosen threshold
BANDS = ((0.95, "0.95 and more"), (0.9, "0.90-0.95"), (0.8, "0.80-0.90"), (0.5, "0.50-0.80"))
BELOW = "below 0.50"


@dataclass
class Text:
    project: str
    part: str  # "tuned" or "held out"
    case: dict
    matches: list[PanicMatch]  # the stages' result, before any model
    accept: Callable[[str], bool]  # whether a record id is one the label accepts
    message_of: Callable[[str], str | None]


def corpora() -> list[Text]:
    from corpus_scoring import BURN, HELDOUT, PROJECTS, accepted, read_cases

    from bot.app import Triage
    from bot.catalog.loader import load_catalog

    bundled = Triage.from_paths()
    sources = [("burn", bundled, BURN)]
    for project in sorted(PROJECTS.iterdir()):
        if not (project / "labels.jsonl").is_file():
            continue
        own, history = project / "catalog.jsonl", project / "history"
        if own.is_file():
            paths = [own, *([history] if history.is_dir() else [])]
            sources.append((project.name, Triage(load_catalog(paths)), project))
        else:  # the family's texts: the bundled catalog, as burn's tracker sees them
            sources.append((project.name, bundled, project))
    texts = []
    for name, triage, folder in sources:
        triage.matcher.model = None
        catalog = triage.catalog

        def message_of(rid: str, catalog=catalog) -> str | None:
            record = catalog.get(rid)
            return record.error_message if record is not None else None

        for part, where in (("tuned", folder), ("held out", folder / HELDOUT)):
            if not where.is_dir():
                continue
            for case in read_cases(where):
                analysis = triage.analyse(case["text"])
                texts.append(
                    Text(
                        name,
                        part,
                        case,
                        list(analysis.panics),
                        lambda rid, case=case, catalog=catalog: accepted(case, catalog.get(rid)),
                        message_of,
                    )
                )
    return texts


def example(text: Text) -> tuple[tuple[float, ...], bool] | None:
    """The features of the text's first panic's best candidate, and whether it is right."""
    first = next((m for m in text.matches if m.candidates), None)
    if first is None:
        return None
    return features(first, 0, text.message_of), text.accept(first.candidates[0].record_id)


WITHOUT: frozenset[str] = frozenset()  # features held at zero (`--without`)


def fit(examples: list[tuple[tuple[float, ...], bool]]) -> tuple[float, np.ndarray]:
    """Logistic regression, monotone: every feature is evidence for the candidate, so a
    weight that comes out below zero is held at zero and the rest refitted."""
    kept = np.array([name not in WITHOUT for name in FEATURES])
    while True:
        intercept, weights = _fit(examples, kept)
        if (weights >= 0).all():
            return intercept, weights
        kept &= weights > 0


def _fit(
    examples: list[tuple[tuple[float, ...], bool]], kept: np.ndarray
) -> tuple[float, np.ndarray]:
    """Logistic regression by Newton's method over the `kept` features, L2 on the weights."""
    x = np.array([[1.0, *np.array(v)[kept]] for v, _ in examples])
    y = np.array([float(right) for _, right in examples])
    w = np.zeros(x.shape[1])
    ridge = np.full(x.shape[1], L2)
    ridge[0] = 1e-6
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -60, 60)))
        grad = x.T @ (p - y) + ridge * w
        hess = (x * (p * (1 - p))[:, None]).T @ x + np.diag(ridge)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-10:
            break
    weights = np.zeros(len(FEATURES))
    weights[kept] = w[1:]
    return float(w[0]), weights


def model_of(intercept: float, weights: np.ndarray, threshold: float, version: str) -> Model:
    return Model(
        version=version,
        threshold=threshold,
        intercept=round(intercept, 4),
        weights=tuple(round(float(v), 4) for v in weights),
    )


@dataclass
class Outcome:
    positives: int = 0
    right: int = 0
    false: int = 0
    texts: int = 0
    answered: int = 0

    def cells(self) -> str:
        top1 = f"{self.right / self.positives:.1%}" if self.positives else "-"
        return f"{self.texts} / {self.positives} / {top1} ({self.right}) / {self.false}"


def outcome(texts: list[Text], decide: Callable[[Text], list[PanicMatch]]) -> Outcome:
    """How texts score when `decide` gives their panics: the first answered panic's best."""
    out = Outcome()
    for text in texts:
        matches = decide(text)
        top = next((m.best.record_id for m in matches if m.matched and m.best), None)
        right = top is not None and text.accept(top)
        out.texts += 1
        out.positives += text.case["expect"] == "match"
        out.right += text.case["expect"] == "match" and right
        out.false += top is not None and not right
        out.answered += top is not None
    return out


def with_model(model: Model) -> Callable[[Text], list[PanicMatch]]:
    return lambda text: calibrate(text.matches, model, text.message_of)


def rules(text: Text) -> list[PanicMatch]:
    return text.matches


def left_out_models(texts: list[Text]) -> dict[str, Model]:
    """Per project, the model fitted on the other projects' tuned parts."""
    tuned = [t for t in texts if t.part == "tuned"]
    out = {}
    for project in sorted({t.project for t in texts}):
        train = [e for t in tuned if t.project != project and (e := example(t)) is not None]
        intercept, weights = fit(train)
        out[project] = model_of(intercept, weights, GRID[0], f"without-{project}")
    return out


def lopo(left_out: dict[str, Model], threshold: float) -> Callable[[Text], list[PanicMatch]]:
    """Each text decided by the model fitted without its project, at `threshold`."""

    def decide(text: Text) -> list[PanicMatch]:
        model = replace(left_out[text.project], threshold=threshold)
        return calibrate(text.matches, model, text.message_of)

    return decide


def choose_threshold(texts: list[Text], left_out: dict[str, Model]) -> float:
    """The lowest threshold of GRID at which the left-out models' answers on the tuned parts
    are right at least PRECISION of the time."""
    tuned = [t for t in texts if t.part == "tuned"]

    def precise(found: Outcome) -> bool:
        return found.false <= (1 - PRECISION) * found.answered

    return next((t for t in GRID if precise(outcome(tuned, lopo(left_out, t)))), GRID[-1])


def model_version(model: Model) -> str:
    """`logit-DATE-DIGEST`: the day it was fitted and six hex digits of its numbers, so two
    fits of one day with different weights never share a name."""
    numbers = json.dumps([model.threshold, model.intercept, list(model.weights)])
    return f"logit-{date.today().isoformat()}-{hashlib.sha256(numbers.encode()).hexdigest()[:6]}"


def shipped_model(texts: list[Text], threshold: float, version: str) -> Model:
    """The model fitted on every tuned part."""
    intercept, weights = fit([e for t in texts if t.part == "tuned" and (e := example(t))])
    return model_of(intercept, weights, threshold, version)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write bot/core/match/model.json")
    parser.add_argument(
        "--without",
        default="",
        metavar="NAME[,NAME]",
        help="fit with these features held at zero, to see what the model does without them",
    )
    args = parser.parse_args()
    global WITHOUT
    WITHOUT = frozenset(n for n in args.without.split(",") if n)
    unknown = sorted(WITHOUT - set(FEATURES))
    if unknown:
        print(f"error: unknown feature(s) {', '.join(unknown)}: one of {', '.join(FEATURES)}")
        return 2
    if WITHOUT and args.write:
        print("error: --without is for figures only; the shipped model uses every feature")
        return 2

    texts = corpora()
    projects = sorted({t.project for t in texts})
    tuned = [t for t in texts if t.part == "tuned"]
    print(f"{len(texts)} texts of {len(projects)} projects; {len(tuned)} tuned", file=sys.stderr)

    left_out = left_out_models(texts)
    threshold = choose_threshold(texts, left_out)
    print(f"threshold (lowest with {PRECISION:.1%} right left out, tuned parts): {threshold}")
    shipped = shipped_model(texts, threshold, "")
    version = model_version(shipped)
    shipped = replace(shipped, version=version)
    print(f"model {version}: intercept {shipped.intercept}")
    for name, value in zip(FEATURES, shipped.weights, strict=True):
        print(f"  {name:10} {value:+.4f}")

    print()
    print(
        "| project | part | rules (0.80): texts / catalogued / top-1 / false | left out | shipped |"
    )
    print("| --- | --- | --- | --- | --- |")
    for project in projects:
        for part in ("tuned", "held out"):
            group = [t for t in texts if t.project == project and t.part == part]
            if not group:
                continue
            cells = [
                outcome(group, d).cells()
                for d in (rules, lopo(left_out, threshold), with_model(shipped))
            ]
            print(f"| {project} | {part} | " + " | ".join(cells) + " |")

    print()
    print("Reliability, left-out predictions (the first panic's best candidate):")
    print(
        "| probability | held out: candidates | mean probability | right "
        "| tuned: candidates | mean probability | right |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    bands: dict[str, dict[str, list[float]]] = {
        p: defaultdict(lambda: [0, 0.0, 0]) for p in ("held out", "tuned")
    }
    brier: dict[str, list[float]] = {"held out": [], "tuned": []}
    for text in texts:
        first = next((m for m in lopo(left_out, threshold)(text) if m.candidates), None)
        if first is None:
            continue
        p = first.candidates[0].confidence
        right = text.accept(first.candidates[0].record_id)
        name = next((n for low, n in BANDS if p >= low), BELOW)
        counts = bands[text.part][name]
        counts[0] += 1
        counts[1] += p
        counts[2] += right
        brier[text.part].append((p - right) ** 2)
    for name in [*(n for _low, n in BANDS), BELOW]:
        cells = []
        for part in ("held out", "tuned"):
            total, p_sum, hits = bands[part][name]
            cells += (
                [str(int(total)), f"{p_sum / total:.2f}", f"{hits / total:.1%}"]
                if total
                else ["0", "-", "-"]
            )
        print(f"| {name} | " + " | ".join(cells) + " |")
    for part, values in brier.items():
        print(f"Brier score, {part}: {sum(values) / len(values):.4f} ({len(values)} candidates)")

    if args.write:
        about = (
            "Fitted by benchmarks/fit_scorer.py on the tuned parts of the labelled corpora: "
            "a logistic model over bot/core/match/calibration.py's features; `threshold` is "
            "the one probability from which the bot answers."
        )
        data = {
            "version": version,
            "about": about,
            "threshold": threshold,
            "intercept": shipped.intercept,
            "weights": dict(zip(FEATURES, shipped.weights, strict=True)),
        }
        MODEL_FILE.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {MODEL_FILE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
