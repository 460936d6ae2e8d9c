"""`catalog refresh` benchmark on burn: the time to take one new commit on the branch, and one
new release tag, into a catalog built incrementally (issue 26), against the full build.

    python benchmarks/bench_refresh.py --repo-dir /work/.mirror/tracel-ai+burn/repo

Works on a throwaway clone (`git clone --mirror --shared`: the mirror's objects, its own refs),
so the mirror is never changed: the clone's `main` is set one commit back and its tags cut to
`--tag` (a release of burn), the catalog built in full, then `main` moved one commit forward
(one commit) and a tag `v99.0.0` cut at the new head (one release). Prints figures; asserts
nothing.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.scan.refresh import refresh_catalog  # noqa: E402


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo-dir", required=True, help="a clone or mirror of tracel-ai/burn")
    parser.add_argument("--branch", default="main")
    parser.add_argument("--tag", default="v0.21.0", help="the one release the catalog starts with")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-refresh-") as tmp:
        clone = Path(tmp) / "burn.git"
        git(Path(tmp), "clone", "-q", "--mirror", "--shared", args.repo_dir, str(clone))
        git(clone, "remote", "remove", "origin")  # nothing to fetch: no network
        head = git(clone, "rev-parse", f"{args.branch}^{{commit}}")
        for tag in git(clone, "tag", "--list").split():
            if tag != args.tag:
                git(clone, "tag", "-d", tag)
        git(clone, "update-ref", f"refs/heads/{args.branch}", f"{head}~1")
        catalog = Path(tmp) / "catalog"
        catalog.mkdir()
        shutil.copy(ROOT / "catalog" / "burn" / "scan.toml", catalog / "scan.toml")

        def run(what: str) -> None:
            started = time.perf_counter()
            result = refresh_catalog(
                catalog, clone, repo="tracel-ai/burn", branch=args.branch, fetch=False
            )
            seconds = time.perf_counter() - started
            counts = (
                f", {result.changed_files} files scanned, {result.live} live, "
                f"{result.removed} removed sites"
                if result.mode != "unchanged"
                else ""
            )
            print(f"refresh {what:<28} {seconds:7.2f} s  mode={result.mode}{counts}")

        run(f"full build ({args.tag} + HEAD~1)")
        git(clone, "update-ref", f"refs/heads/{args.branch}", head)
        run(f"one commit ({head[:9]})")
        git(clone, "tag", "v99.0.0", head)
        run("one release tag (v99.0.0)")
        run("nothing new")
        for name in ("history.ndjson", "refresh.state", "panic_sites.jsonl"):
            print(f"size {name:<20} {(catalog / name).stat().st_size / 1e6:6.2f} MB")


if __name__ == "__main__":
    main()
