"""Release history benchmark: the time to scan each release and link them, and the bundled
catalog's load time (records, then the history file), with the CLI's cold start.

    python benchmarks/bench_history.py                      # the bundled catalog only
    python benchmarks/bench_history.py --repo-dir /work/.mirror/tracel-ai+burn/repo \\
        --since v0.19.0                                     # also build a history (tags >= since)

Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def bench_build(repo_dir: str, since: str | None, head: bool) -> None:
    from bot.scan.lineages import build_history, release_tags, version_key

    tags = release_tags(repo_dir)
    if since:
        tags = [t for t in tags if version_key(t) >= version_key(since)]

    def progress(release, sites: int, seconds: float) -> None:
        print(f"history build: {release.version:>12}  {sites:5d} sites  {seconds:6.2f} s")

    started = time.perf_counter()
    history = build_history(
        repo_dir, "tracel-ai/burn", tags=tags, head_ref="HEAD" if head else None, progress=progress
    )
    total = time.perf_counter() - started
    scans = sum(history.timings)
    print(
        f"history build: {len(history.releases)} releases, {len(history.lineages)} lineages in "
        f"{total:.1f} s ({scans / max(len(history.releases), 1):.2f} s per release to scan, "
        f"{total - scans:.2f} s to link)"
    )


def bench_load(repeats: int) -> None:
    code = (
        "import time; t = time.perf_counter();"
        "from bot.catalog.loader import bundled_catalog_path, load_catalog;"
        "c = load_catalog([bundled_catalog_path()]);"
        "t1 = time.perf_counter();"
        "from bot.app import load_projects; p = load_projects(c);"
        "t2 = time.perf_counter();"
        "print(len(c), sum(len(h.lineages) for h in p.histories), t1 - t, t2 - t1)"
    )
    records = history = []
    for _ in range(repeats):
        out = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.split()
        records = [*records, float(out[2])]
        history = [*history, float(out[3])]
    print(
        f"bundled catalog load: {int(out[0])} records in "
        f"{statistics.median(records) * 1000:.0f} ms, history of {int(out[1])} lineages in "
        f"{statistics.median(history) * 1000:.0f} ms "
        f"(median of {repeats} fresh processes)"
    )
    example = ROOT / "examples" / "issue.md"
    walls = []
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "bot", "match", str(example)],
            cwd=ROOT,
            capture_output=True,
            check=True,
        )
        walls.append(time.perf_counter() - started)
    print(f"cold start `triage-bot match examples/issue.md`: {statistics.median(walls):.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo-dir", help="a git repository to build a history from")
    parser.add_argument("--since", help="the oldest tag to scan")
    parser.add_argument("--no-head", action="store_true", help="leave HEAD out of the build")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    if args.repo_dir:
        bench_build(args.repo_dir, args.since, not args.no_head)
    bench_load(args.repeats)


if __name__ == "__main__":
    main()
