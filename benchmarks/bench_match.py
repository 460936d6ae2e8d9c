"""Matcher benchmark: load-and-index time, memory, match latency and accuracy, beside a naive
baseline measured in the same run, on synthetic catalogs of 1k, 10k and 100k records.

    python benchmarks/bench_match.py            # all sizes (about a minute)
    python benchmarks/bench_match.py --sizes 1000 10000 --bodies 200

Synthetic records are made from the bundled catalog's real burn messages (words swapped, new
files and crates), so their shape is that of real panic messages. Each size runs in its own
process so the memory figure is that size's alone. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

WORDS = (
    "tensor shape dtype kernel buffer device stream quantized gradient backward forward "
    "layout stride padding dilation axis rank slice chunk handle fusion autotune cache "
    "checkpoint optimizer scheduler dataset batch record module param adapter pool conv "
    "matmul reduce scatter gather index mask attention embedding norm dropout"
).split()
CRATES = [f"burn-{w}" for w in ("alpha", "beta", "gamma", "delta", "core", "flex", "wgpu", "nn")]


def synthetic_catalog(size: int, seed: int = 7) -> list[dict]:
    from bot.catalog.loader import load_bundled_catalog
    from bot.catalog.sites import skeleton_record

    rng = random.Random(seed)
    templates = [r.error_message for r in load_bundled_catalog() if len(r.error_message) > 15]
    records, seen = [], set()
    while len(records) < size:
        words = templates[rng.randrange(len(templates))].split(" ")
        for _ in range(rng.randint(1, 3)):
            words[rng.randrange(len(words))] = rng.choice(WORDS) + rng.choice(
                ("", "s", "_op", "2d")
            )
        message = " ".join(words)
        if message in seen:
            continue
        seen.add(message)
        crate = rng.choice(CRATES)
        file_path = f"crates/{crate}/src/{rng.choice(WORDS)}/{rng.choice(WORDS)}.rs"
        records.append(
            skeleton_record(
                repo="bench/repo",
                file_path=file_path,
                line=rng.randint(10, 3000),
                kind=rng.choice(("panic!", ".expect", "assert!", "unimplemented!")),
                message_format=message,
                commit="0" * 40,
            )
        )
    return records


def fill(message: str, rng: random.Random) -> str:
    return re.sub(
        r"\{[^{}]*\}", lambda _: rng.choice(("I8", "3", "[2, 3]", "Shape { dims: [4] }")), message
    )


def prose(rng: random.Random, chars: int) -> str:
    out = []
    while sum(len(s) for s in out) < chars:
        out.append(" ".join(rng.choice(WORDS) for _ in range(12)) + ".\n")
    return "".join(out)


def body(record: dict | None, rng: random.Random, size: int) -> str:
    """An issue body: prose, logs, a fenced panic with a 30-frame backtrace (or none)."""
    logs = "".join(
        f"2025-01-0{rng.randint(1, 9)}T10:00:00Z  INFO wgpu_core::device: step {i} ok\n"
        for i in range(20)
    )
    if record is None:
        panic = (
            "thread 'main' panicked at src/main.rs:12:5:\n"
            "index out of bounds: the len is 3 but the index is 5\n"
        )
    else:
        crate = record["filePath"].split("/")[1]
        path = record["filePath"].split("/", 2)[2]
        registry = "/home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f"
        message = fill(record["errorMessage"], rng)
        panic = (
            f"thread 'main' panicked at {registry}/"
            f"{crate}-0.18.0/{path}:{record['lineNumber']}:9:\n{message}\n"
        )
    frames = "".join(
        f"  {i}: {rng.choice(CRATES).replace('-', '_')}::{rng.choice(WORDS)}::run\n"
        f"             at ./src/{rng.choice(WORDS)}.rs:{rng.randint(1, 900)}:5\n"
        for i in range(30)
    )
    head = "Describe the bug\n" + prose(rng, 600) + "```\n" + logs
    tail = panic + "stack backtrace:\n" + frames + "```\n"
    filler = max(0, size - len(head) - len(tail))
    return head + prose(rng, filler) + tail


def naive_match(text: str, patterns, messages: dict[str, str]):
    """Every pattern tried on the whole text (the longest match wins), then rapidfuzz over
    every message for each line when no pattern matched: the way that does not scale."""
    from rapidfuzz import fuzz, process, utils

    best_pattern = None
    for rid, regex in patterns:
        found = regex.search(text)
        if found and (best_pattern is None or len(messages[rid]) > len(messages[best_pattern])):
            best_pattern = rid
    if best_pattern:
        return best_pattern
    best = None
    for line in text.splitlines()[:200]:
        hit = process.extractOne(
            line, messages, scorer=fuzz.ratio, processor=utils.default_process, score_cutoff=90
        )
        if hit and (best is None or hit[1] > best[1]):
            best = (hit[2], hit[1])
    return best[0] if best else None


def run_size(path: Path, bodies: int) -> dict:
    """Measure one catalog size, in a process that has done nothing else before loading it."""
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    from bot.catalog.loader import load_catalog
    from bot.catalog.patterns import compile_safe, format_to_regex
    from bot.core.matcher import Matcher

    started = time.perf_counter()
    matcher = Matcher(load_catalog([path]))
    load_seconds = time.perf_counter() - started
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    size = len(records)
    rng = random.Random(size)

    cases = []
    for i in range(bodies):
        negative = i % 4 == 3
        record = None if negative else records[rng.randrange(len(records))]
        cases.append((record["id"] if record else None, body(record, rng, 4096)))
    latencies, correct, false_matches, positives = [], 0, 0, 0
    for expected, text in cases:
        started = time.perf_counter()
        analysis = matcher.analyse(text)
        latencies.append(time.perf_counter() - started)
        answered = analysis.answered
        got = answered[0].best.record_id if answered else None
        if expected:
            positives += 1
            correct += got == expected
        if got is not None and got != expected:
            false_matches += 1
    rss_matching = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    big = body(records[0], rng, 1 << 20)
    big_times = []
    for _ in range(5):
        started = time.perf_counter()
        matcher.analyse(big)
        big_times.append(time.perf_counter() - started)

    sample = cases[:8]
    patterns = [(r["id"], compile_safe(format_to_regex(r["errorMessage"]))) for r in records]
    messages = {r["id"]: r["errorMessage"] for r in records}
    naive_times, naive_correct = [], 0
    for expected, text in sample:
        started = time.perf_counter()
        got = naive_match(text, patterns, messages)
        naive_times.append(time.perf_counter() - started)
        naive_correct += expected is not None and got == expected
    latencies.sort()
    return {
        "records": size,
        "load_index_s": load_seconds,
        "rss_growth_mb": (rss_after - rss_before) / 1024,
        "max_rss_mb": rss_matching / 1024,
        "median_4k_ms": statistics.median(latencies) * 1000,
        "p99_4k_ms": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000,
        "median_1m_ms": statistics.median(big_times) * 1000,
        "top1": correct / max(positives, 1),
        "false_match_rate": false_matches / len(cases),
        "naive_median_4k_ms": statistics.median(naive_times) * 1000,
        "naive_top1_sample": naive_correct / max(sum(1 for e, _ in sample if e), 1),
    }


def cli_latency(runs: int = 5) -> float:
    example = ROOT / "examples" / "issue.md"
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "bot", "match", str(example)],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="*", type=int, default=[1_000, 10_000, 100_000])
    parser.add_argument("--bodies", type=int, default=400)
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_size(args.one, args.bodies)))
        return 0
    print(
        f"{'records':>8} {'load+index':>10} {'rss+MB':>7} {'maxMB':>6} {'4KB med':>8} "
        f"{'4KB p99':>8} {'1MB med':>8} {'top1':>5} {'false':>6} {'naive 4KB':>10} "
        f"{'naive top1':>10}"
    )
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "catalog.jsonl"
            records = synthetic_catalog(size)
            path.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
            del records
            out = subprocess.run(
                [sys.executable, __file__, "--one", str(path), "--bodies", str(args.bodies)],
                check=True,
                capture_output=True,
                text=True,
            )
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(
            f"{r['records']:>8} {r['load_index_s']:>9.3f}s {r['rss_growth_mb']:>7.0f} "
            f"{r['max_rss_mb']:>6.0f} {r['median_4k_ms']:>6.2f}ms {r['p99_4k_ms']:>6.2f}ms "
            f"{r['median_1m_ms']:>6.1f}ms {r['top1']:>5.2f} {r['false_match_rate']:>6.3f} "
            f"{r['naive_median_4k_ms']:>8.1f}ms {r['naive_top1_sample']:>10.2f}"
        )
    print(
        "CLI, one paste against the bundled catalog, start-up included: "
        f"{cli_latency():.3f}s median"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
