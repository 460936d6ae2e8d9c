"""Issue 25's speed targets, in CPU time (`time.process_time`, and the children's user+sys for
the commands), on this machine:

- per 4 KB text, median, with the combined bundled catalog (burn, cubecl, burn-onnx, wgpu,
  ndarray), texts with a `panicked at` header and headerless texts apart;
- a cold `triage-bot match` (a new process, the index read from the user's cache);
- `triage-bot --version`;
- N synthetic records (default 1M): loaded from the cache, and matched headerless.

    python benchmarks/bench_family.py                  # bundled, and 1,000,000 synthetic
    python benchmarks/bench_family.py --synthetic 0    # the bundled catalog only

Texts: tests/corpus/ and tests/corpus_projects/{cubecl,burn-onnx}/ cases, padded with log noise
to 4 KB (tests/corpus_padding.py). Prints figures and the targets; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "tests"))

TEXT_BYTES = 4096
TARGETS = {"per_text_ms": 1.0, "cold_match_s": 0.15, "version_s": 0.05, "load_1m_s": 1.0}


def texts() -> tuple[list[str], list[str]]:
    """(with a header, headerless) padded cases."""
    from corpus_padding import pad

    folders = [ROOT / "tests" / "corpus" / "cases"] + [
        ROOT / "tests" / "corpus_projects" / p / "cases" for p in ("cubecl", "burn-onnx")
    ]
    header, headerless = [], []
    for n, path in enumerate(sorted(p for f in folders for p in f.glob("*.md"))):
        text = pad(path.read_text(encoding="utf-8"), TEXT_BYTES, seed=n)
        (header if "panicked at" in text else headerless).append(text)
    return header, headerless


def per_text(triage, items: list[str], repeat: int) -> float:
    """Median CPU milliseconds of one analysis."""
    for text in items:
        triage.analyse(text)  # warm: each text's candidates and records built once
    times = []
    for _ in range(repeat):
        for text in items:
            started = time.process_time()
            triage.analyse(text)
            times.append((time.process_time() - started) * 1000)
    return statistics.median(times)


def child_cpu(args: list[str], env: dict[str, str]) -> float:
    """CPU seconds (user + sys) of a command run to its end."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(args, check=True, capture_output=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def write_synthetic(folder: Path, size: int) -> None:
    """`size` records over 1,000 crates of a made-up project, in files of 100k lines."""
    import random

    rng = random.Random(25)
    words = (
        "tensor shape kernel buffer device stream gradient layout stride padding axis rank "
        "slice handle fusion autotune cache module param pool conv matmul reduce gather mask"
    ).split()
    folder.mkdir(parents=True, exist_ok=True)
    out = None
    for i in range(size):
        if i % 100_000 == 0:
            if out:
                out.close()
            out = (folder / f"part-{i // 100_000}.jsonl").open("w", encoding="utf-8")
        message = " ".join(rng.choice(words) for _ in range(6)) + f" {{}} site{i}"
        row = {
            "id": f"{i:016x}",
            "repo": "bench/repo",
            "errorMessage": message,
            "errorType": "panic",
            "filePath": f"crates/c{i % 1000}/src/m{i % 37}.rs",
            "lineNumber": 1 + i % 3000,
        }
        out.write(json.dumps(row) + "\n")  # type: ignore[union-attr]
    if out:
        out.close()


def synthetic(size: int, repeat: int) -> dict[str, float]:
    """Load from the cache (a fresh process measures it) and match headerless texts."""
    with tempfile.TemporaryDirectory(prefix="bench-family-") as tmp:
        folder, cache = Path(tmp) / "catalog", Path(tmp) / "cache"
        write_synthetic(folder, size)
        env = {**os.environ, "TRIAGE_BOT_CACHE_DIR": str(cache)}
        code = (
            "import sys, time; from pathlib import Path; from bot.app import load_indexed_paths; "
            "t = time.process_time(); loaded = load_indexed_paths([Path(sys.argv[1])]); "
            "print(time.process_time() - t)"
        )
        build = subprocess.run(
            [sys.executable, "-c", code, str(folder)], env=env, capture_output=True, text=True
        )
        if build.returncode:
            raise SystemExit(build.stderr)
        load = subprocess.run(
            [sys.executable, "-c", code, str(folder)], env=env, capture_output=True, text=True
        )
        os.environ["TRIAGE_BOT_CACHE_DIR"] = str(cache)
        from bot.app import Triage, load_indexed_paths

        triage = Triage.of(load_indexed_paths([folder]))
        headerless = [
            f"the job stopped: {w} after the update, see below\nwhile running step {n}\n"
            for n, w in enumerate(("tensor shape kernel buffer device stream site42 failed",) * 5)
        ]
        return {
            "build_s": float(build.stdout.strip().splitlines()[-1]),
            "load_s": float(load.stdout.strip().splitlines()[-1]),
            "match_headerless_ms": per_text(triage, headerless, repeat),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--synthetic", type=int, default=1_000_000, metavar="N")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    from bot.app import load_bundled

    started = time.process_time()
    loaded = load_bundled()
    print(
        f"bundled catalog: {len(loaded.catalog)} records, loaded in "
        f"{time.process_time() - started:.3f} s CPU (cache filled if it was empty)"
    )
    from bot.app import Triage

    triage = Triage.of(loaded)
    header, headerless = texts()
    print(
        f"per 4 KB text, median: header {per_text(triage, header, args.repeat):.3f} ms "
        f"({len(header)} texts), headerless {per_text(triage, headerless, args.repeat):.3f} ms "
        f"({len(headerless)} texts); target {TARGETS['per_text_ms']} ms"
    )
    env = dict(os.environ)
    script = str(Path(sys.executable).parent / "triage-bot")
    example = str(ROOT / "examples" / "issue.md")
    cold = [child_cpu([script, "match", example], env) for _ in range(3)]
    version = [child_cpu([script, "--version"], env) for _ in range(3)]
    print(f"cold `match`: {min(cold):.3f} s CPU (best of 3); target {TARGETS['cold_match_s']} s")
    print(f"`--version`: {min(version):.3f} s CPU (best of 3); target {TARGETS['version_s']} s")
    if args.synthetic:
        found = synthetic(args.synthetic, args.repeat)
        print(
            f"{args.synthetic} synthetic records: built and cached in {found['build_s']:.2f} s, "
            f"loaded from the cache in {found['load_s']:.3f} s CPU (target "
            f"{TARGETS['load_1m_s']} s), headerless match {found['match_headerless_ms']:.3f} ms"
        )


if __name__ == "__main__":
    main()
