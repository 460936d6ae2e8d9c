"""Matcher benchmark: start-up, load-and-index time, peak memory and match latency on the labelled
corpus's real texts padded to 4 KB, header and headerless texts apart, beside a naive baseline
measured in the same run.

    python benchmarks/bench_match.py                       # bundled, 10k, 100k (a few minutes)
    python benchmarks/bench_match.py --sizes bundled 10000 100000 1000000
    python benchmarks/bench_match.py --sizes bundled --repeat 1

Catalogs: the bundled one, and the bundled one grown to N records with synthetic records made
from its real burn messages (words swapped, new files and crates), so the corpus's answers are
still in it and the rest has the shape of real panic messages. Each size is measured in a
fresh process that has loaded nothing before: its peak RSS (VmHWM, which an exec starts
afresh, unlike `ru_maxrss`) is that size's alone; the synthetic file is written by yet another
process. Texts: tests/corpus/ cases padded with log noise to 4 KB (tests/corpus_padding.py),
split by whether the text has a `panicked at` header; each is analysed once to warm up (and
to score accuracy), then `--repeat` times timed. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "tests"))

WORDS = (
    "tensor shape dtype kernel buffer device stream quantized gradient backward forward "
    "layout stride padding dilation axis rank slice chunk handle fusion autotune cache "
    "checkpoint optimizer scheduler dataset batch record module param adapter pool conv "
    "matmul reduce scatter gather index mask attention embedding norm dropout"
).split()
CRATES = [f"burn-{w}" for w in ("alpha", "beta", "gamma", "delta", "core", "flex", "wgpu", "nn")]
TEXT_BYTES = 4096
BIG_BYTES = 1 << 20
HUGE_BYTES = 50 << 20


def peak_rss_mb() -> float:
    """This process's peak resident memory (VmHWM), in MB."""
    return _rss_mb("VmHWM")


def write_synthetic(path: Path, size: int, seed: int = 7) -> None:
    """`size` records in all with the bundled catalog: the synthetic ones, as JSON lines."""
    from bot.app import load_bundled
    from bot.catalog.sites import skeleton_record

    rng = random.Random(seed)
    bundled = load_bundled().catalog
    templates = [r.error_message for r in bundled if len(r.error_message) > 15]
    seen = {r.error_message for r in bundled}
    count = size - len(bundled)
    # Files of at most 100k records: the loader refuses a file over 256 MB.
    path.mkdir(parents=True, exist_ok=True)
    part = 0
    out = (path / "part-0.jsonl").open("w", encoding="utf-8")
    written = opened_at = 0
    with contextlib.ExitStack() as stack:
        stack.callback(lambda: out.close())
        while count > 0:
            if written and written % 100_000 == 0 and written != opened_at:
                opened_at = written
                out.close()
                part += 1
                out = (path / f"part-{part}.jsonl").open("w", encoding="utf-8")
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
            record = skeleton_record(
                repo="bench/repo",
                file_path=file_path,
                line=rng.randint(10, 3000),
                kind=rng.choice(("panic!", ".expect", "assert!", "unimplemented!")),
                message_format=message,
                commit="0" * 40,
            )
            out.write(json.dumps(record) + "\n")
            count -= 1
            written += 1


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


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def huge_input(seed: int = 50) -> tuple[bytes, str]:
    """50 MB of log noise with one catalogued panic in the middle, and the expected message."""
    from corpus_padding import noise

    block = noise(1 << 20, seed).encode()
    panic = (
        b"thread 'main' panicked at /home/u/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/"
        b"burn-autodiff-0.18.0/src/ops/module.rs:1498:9:\n"
        b"Can't differentiate avg pool 2d backward.\n"
        b"note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n"
    )
    half = round(HUGE_BYTES / len(block) / 2)
    return block * half + panic + block * half, "Can't differentiate avg pool 2d backward."


def run_size(size: str, synthetic: Path | None, repeat: int, naive_seconds: float) -> dict:
    """Measure one catalog size, in a process that has loaded no catalog before."""
    from corpus_padding import pad
    from corpus_scoring import accepted, load_cases

    from bot.app import load_bundled
    from bot.catalog.loader import bundled_catalog_path, load_catalog
    from bot.catalog.patterns import compile_safe, format_to_regex
    from bot.core.extract.scanner import extract_panics
    from bot.core.match.matcher import Matcher

    rss_start = peak_rss_mb()
    started, cpu = time.perf_counter(), time.process_time()
    if synthetic is None:
        catalog = load_bundled().catalog  # from the cache the parent filled
    else:
        catalog = load_catalog([bundled_catalog_path(), synthetic])
    matcher = Matcher(catalog)
    load_seconds = time.perf_counter() - started
    load_cpu = time.process_time() - cpu
    rss_loaded = peak_rss_mb()

    cases = load_cases()
    texts = []
    for number, case in enumerate(cases):
        header = any(p.has_header for p in extract_panics(case["text"]))
        texts.append((case, header, pad(case["text"], TEXT_BYTES, seed=number)))
    positives = correct = false = 0
    for case, _header, text in texts:  # the warm-up pass, scored
        answered = matcher.analyse(text).answered
        top = catalog.get(answered[0].best.record_id) if answered else None
        ok = accepted(case, top)
        positives += case["expect"] == "match"
        correct += ok
        false += top is not None and not ok
    # CPU time: the machine is shared, and wall time there counts other processes' turns.
    timings: dict[bool, list[float]] = {True: [], False: []}
    walls: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(repeat):
        for _case, header, text in texts:
            began, cpu = time.perf_counter(), time.process_time()
            matcher.analyse(text)
            timings[header].append(time.process_time() - cpu)
            walls[header].append(time.perf_counter() - began)

    # A text of catalogued messages, one per line, at 1 MB and 10 MB: every pass over a text
    # must stay linear in its size, whatever it holds.
    plain = [r.error_message for r in catalog if "{" not in r.error_message][:5000]
    catalogued: dict[str, float] = {}
    for label, size_bytes in (("1mb", 1 << 20), ("10mb", 10 << 20)):
        lines, total, at = [], 0, 0
        while total < size_bytes:
            lines.append(plain[at % len(plain)])
            total += len(lines[-1]) + 1
            at += 7
        cpu = time.process_time()
        matcher.analyse("\n".join(lines))
        catalogued[f"catalogued_{label}_s"] = time.process_time() - cpu
    # The floor: one `str.find` pass over each 4 KB text, the least any matcher spends on it.
    floor = []
    for _case, _header, text in texts:
        cpu = time.perf_counter()
        text.find("\0never\0")
        floor.append(time.perf_counter() - cpu)

    big = []
    for case, header, _text in texts[:: max(1, len(texts) // 6)][:6]:
        text = pad(case["text"], BIG_BYTES, seed=1)
        cpu = time.process_time()
        matcher.analyse(text)
        big.append((time.process_time() - cpu, header))
    rss_matching = peak_rss_mb()

    result = {
        "size": size,
        "records": len(catalog),
        "load_index_s": load_seconds,
        "load_index_cpu_s": load_cpu,
        "rss_start_mb": rss_start,
        "rss_loaded_mb": rss_loaded,
        "rss_peak_mb": rss_matching,
        "top1": correct / max(positives, 1),
        "false": false,
        "texts": len(texts),
        "find_floor_us": statistics.median(floor) * 1e6,
        **catalogued,
    }
    for header, name in ((True, "header"), (False, "headerless")):
        values = timings[header]
        result[f"{name}_n"] = len([t for t in texts if t[1] == header])
        result[f"{name}_median_ms"] = statistics.median(values) * 1000
        result[f"{name}_p99_ms"] = _percentile(values, 0.99) * 1000
        result[f"{name}_wall_median_ms"] = statistics.median(walls[header]) * 1000
        mb = [t for t, h in big if h == header]
        result[f"{name}_1mb_ms"] = statistics.median(mb) * 1000 if mb else float("nan")

    if size == "bundled":
        result.update(_huge(matcher))
        cpu = time.process_time()
        Matcher(load_catalog([bundled_catalog_path()]))
        result["uncached_load_index_cpu_s"] = time.process_time() - cpu

    # The naive baseline, after the peak RSS was taken: its compiled patterns are its own.
    # Past 100k records compiling every pattern alone takes minutes: left out.
    if len(catalog) > 200_000:
        result.update(naive_median_ms=float("nan"), naive_top1=float("nan"), naive_n=0)
        return result
    records = list(catalog)
    patterns = [(r.id, compile_safe(format_to_regex(r.error_message))) for r in records]
    messages = {r.id: r.error_message for r in records}
    sample = [t for t in texts if t[0]["expect"] == "match"]
    naive_times = []
    naive_correct = 0
    spent = 0.0
    for case, _header, text in sample:
        cpu = time.process_time()
        got = naive_match(text, patterns, messages)
        naive_times.append(time.process_time() - cpu)
        spent += naive_times[-1]
        naive_correct += accepted(case, catalog.get(got) if got else None)
        if spent > naive_seconds and len(naive_times) >= 3:
            break
    result["naive_median_ms"] = statistics.median(naive_times) * 1000
    result["naive_top1"] = naive_correct / len(naive_times)
    result["naive_n"] = len(naive_times)
    # Ours on the same texts the naive matcher ran on, in the same run: the ratio's other half.
    ours = []
    for _case, _header, text in sample[: len(naive_times)]:
        cpu = time.process_time()
        matcher.analyse(text)
        ours.append(time.process_time() - cpu)
    result["ours_on_naive_texts_ms"] = statistics.median(ours) * 1000
    result["naive_ratio"] = result["naive_median_ms"] / max(result["ours_on_naive_texts_ms"], 1e-9)
    return result


def _rss_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _huge(matcher) -> dict:
    """50 MB with a panic in the middle, read from a file as `triage-bot match` reads one."""
    import gc

    from bot.core.match.windows import analyse_windows

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "huge.log"
        data, expected = huge_input()
        path.write_bytes(data)
        size = len(data)
        del data
        gc.collect()
        # Reset the peak-RSS mark (Linux), so the figure is the reading's alone.
        Path("/proc/self/clear_refs").write_text("5")
        before = _rss_mb("VmRSS")
        began = time.perf_counter()
        cpu = time.process_time()
        with path.open("rb") as stream:
            analysis = analyse_windows(matcher.analyse, stream)
        cpu = time.process_time() - cpu
        seconds = time.perf_counter() - began
        growth = _rss_mb("VmHWM") - before
    found = any(expected in m.panic.message for m in analysis.panics)
    return {
        "huge_s": seconds,
        "huge_cpu_s": cpu,
        "huge_found": found,
        "huge_verdict": analysis.verdict,
        "huge_mb": size / (1 << 20),
        "huge_rss_growth_mb": growth,
    }


def cli_start(runs: int) -> tuple[float, float]:
    """Wall time of `triage-bot match examples/issue.md`, a fresh interpreter each run."""
    example = ROOT / "examples" / "issue.md"
    import compileall
    import resource

    # As an installed package runs: its modules byte-compiled (a checkout run with
    # PYTHONDONTWRITEBYTECODE, as this machine's shells are, would compile every module edited
    # since its last `.pyc` on every start).
    compileall.compile_dir(ROOT / "bot", quiet=1)
    times, cpu = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        began = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "bot", "match", str(example)],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        times.append(time.perf_counter() - began)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return statistics.median(times), min(times), statistics.median(cpu)


def cli_catalog_start(catalog: Path, runs: int) -> float:
    """Wall time of `triage-bot match --catalog FILE examples/issue.md` with its cache built
    beforehand (one run that builds it, not counted): the median of `runs`."""
    example = ROOT / "examples" / "issue.md"
    command = [sys.executable, "-m", "bot", "match", "--catalog", str(catalog), str(example)]
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def _child(args: list[str]) -> dict:
    out = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True)
    if out.returncode:
        print(out.stderr, file=sys.stderr)
        raise SystemExit(f"bench_match.py {' '.join(args)} failed")
    return json.loads(out.stdout.strip().splitlines()[-1]) if out.stdout.strip() else {}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="*", default=["bundled", "10000", "100000"])
    parser.add_argument("--repeat", type=int, default=3, help="timed passes over the texts")
    parser.add_argument("--naive-seconds", type=float, default=20.0)
    parser.add_argument("--cli-runs", type=int, default=7)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--synthetic", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--write", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write:
        write_synthetic(args.write, int(args.one))
        return 0
    if args.one:
        print(json.dumps(run_size(args.one, args.synthetic, args.repeat, args.naive_seconds)))
        return 0

    import os
    import platform

    print(
        f"machine: {os.cpu_count()} cores, {platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )
    # The bundled catalog's cache (bot.app.index_cache), filled before anything is measured:
    # what every start after the first one reads.
    subprocess.run(
        [sys.executable, "-c", "from bot.app import load_bundled as f; f()"],
        cwd=ROOT,
        check=True,
    )
    rows = []
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            child = ["--one", size, "--repeat", str(args.repeat)]
            child += ["--naive-seconds", str(args.naive_seconds)]
            if size != "bundled":
                path = Path(tmp) / "synthetic"
                _child(["--one", size, "--write", str(path)])
                child += ["--synthetic", str(path)]
            rows.append(_child(child))
            if size != "bundled":
                rows[-1]["cli_catalog_s"] = cli_catalog_start(path, max(3, args.cli_runs // 2))
        print(json.dumps(rows[-1]), file=sys.stderr)
    print()
    print(
        "| catalog | records | load + index (CPU) | peak RSS | header 4 KB median / p99 "
        "| headerless 4 KB median / p99 | 1 MB header / headerless | top-1 | false "
        "| naive 4 KB median |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        naive = f"{r['naive_median_ms']:.1f} ms (n={r['naive_n']})" if r["naive_n"] else "—"
        print(
            f"| {r['size']} | {r['records']:,} | {r['load_index_s']:.2f} s "
            f"({r['load_index_cpu_s']:.2f} s) | {r['rss_peak_mb']:.0f} MB "
            f"| {r['header_median_ms']:.2f} / {r['header_p99_ms']:.2f} ms "
            f"| {r['headerless_median_ms']:.2f} / {r['headerless_p99_ms']:.2f} ms "
            f"| {r['header_1mb_ms']:.0f} / {r['headerless_1mb_ms']:.0f} ms "
            f"| {r['top1']:.3f} | {r['false']} | {naive} |"
        )
    first = rows[0] if rows else {}
    print()
    print(
        f"texts: {first.get('texts')} corpus cases padded to {TEXT_BYTES} bytes "
        f"({first.get('header_n')} with a header, {first.get('headerless_n')} without), "
        f"{args.repeat} timed passes after a warm-up pass; latencies are CPU time per text"
    )
    for r in rows:
        if "uncached_load_index_cpu_s" in r:
            print(
                f"bundled catalog: {r['load_index_cpu_s'] * 1000:.0f} ms CPU from the cache, "
                f"{r['uncached_load_index_cpu_s'] * 1000:.0f} ms CPU read, checked and indexed"
            )
    for r in rows:
        if "huge_s" in r:
            print(
                f"{r['huge_mb']:.0f} MB log file, one panic in the middle, read window by window "
                f"as `triage-bot match` reads it: {r['huge_s']:.2f} s ({r['huge_cpu_s']:.2f} s "
                f"CPU), memory growth {r['huge_rss_growth_mb']:.0f} MB, panic found: "
                f"{r['huge_found']} ({r['huge_verdict']})"
            )
    for r in rows:
        naive = (
            f"; naive regex matcher {r['naive_median_ms']:.1f} ms on the same texts, "
            f"{r['naive_ratio']:.0f}x ours ({r['ours_on_naive_texts_ms']:.2f} ms)"
            if r.get("naive_n")
            else ""
        )
        start = (
            f"; cold `match --catalog` {r['cli_catalog_s']:.2f} s (cache built beforehand)"
            if "cli_catalog_s" in r
            else ""
        )
        print(
            f"{r['size']}: catalogued messages one per line, 1 MB {r['catalogued_1mb_s']:.2f} s, "
            f"10 MB {r['catalogued_10mb_s']:.2f} s CPU; str.find floor "
            f"{r['find_floor_us']:.1f} µs per 4 KB text{naive}{start}"
        )
    median, best, cpu = cli_start(args.cli_runs)
    print(
        f"cold `triage-bot match examples/issue.md` (bundled catalog, start-up included): "
        f"{median:.3f} s median, {best:.3f} s best of {args.cli_runs}; {cpu:.3f} s CPU median"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
