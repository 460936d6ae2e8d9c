"""`triage-bot catalog scan`, `catalog update` and `catalog history`.

`register_catalog(actions)` adds them to the `catalog` group that `bot.cli.catalog` creates
(bot.cli.CATALOG_MODULES routes these actions here). Records go to stdout or files;
progress, summaries and problems go to stderr. Each handler returns the exit code: 0 done,
2 bad input.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bot.catalog.loader import HOOK_FILE, CatalogError, load_catalog
from bot.catalog.model import ATTR_BY_KEY, WRITE_UP_ATTRS
from bot.cli.output import add_json_option, eta, folder_out_problem, number_in, print_json
from bot.scan.builders import (
    Builder,
    BuilderConfigError,
    hooks_toml,
    load_hooks,
    load_scan_settings,
)
from bot.scan.catalog_io import read_catalog, read_records_file, write_catalog
from bot.scan.history_facts import lineage_events
from bot.scan.lineages import (
    Release,
    attach_records,
    build_history,
    extract_tree,
    history_lines,
    is_runtime_path,
    lineage_records,
    release_tags,
    version_key,
)
from bot.scan.rust.panic_hooks import DerivedHook, hooks_in_tree
from bot.scan.rust.skeletons import skeletons
from bot.scan.rust.walk import package_names, rust_files, scan_tree
from bot.scan.update import (
    DEFAULT_CUTOFF,
    proposals_json,
    record_diff,
    report_markdown,
    scan_identity,
    update_catalog,
)

_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_SHA = re.compile(r"^[0-9a-fA-F]{7,40}$")
# Progress is shown for trees with at least this many files.
PROGRESS_MIN_FILES = 50


def _err(message: str) -> None:
    print(message, file=sys.stderr)


def register_catalog(catalog_subparsers: argparse._SubParsersAction) -> None:
    scan = catalog_subparsers.add_parser(
        "scan",
        help="find the panic sites of a Rust checkout",
        description="Walk a Rust checkout and emit a skeleton record for every panic site with "
        "a literal message (panic!, unimplemented!, todo!, unreachable!, assert*! with a "
        'message, .expect("...")). Tests, benches, examples, #[cfg(test)] code and test-helper '
        "crates (*-tests, *-testgen, xtask) are left out unless --include-tests. Records go to "
        "stdout as JSON lines, or with --out to DIR/scan-<commit>.jsonl; progress goes to stderr.",
    )
    scan.add_argument(
        "path",
        metavar="PATH",
        help="the repository's root folder; record paths are relative to it (crates/x/src/..)",
    )
    scan.add_argument("--repo", required=True, metavar="OWNER/NAME", help="GitHub repository")
    scan.add_argument("--commit", required=True, metavar="SHA", help="the checkout's commit")
    scan.add_argument(
        "--out",
        metavar="DIR",
        help="write DIR/scan-<commit>.jsonl (and DIR/hooks.toml when --config declares hooks)",
    )
    scan.add_argument(
        "--include-tests",
        action="store_true",
        help="also scan tests, benches, examples and test-helper crates",
    )
    scan.add_argument(
        "--config",
        metavar="FILE",
        help="a TOML scan setting declaring builder functions whose string arguments are "
        "panic messages raised elsewhere ([[builder]] tables), the project's assertion macros "
        "([[macro]]) and its panic hook's line format ([[hook]] pattern = REGEX); see the README",
    )
    scan.add_argument(
        "--format",
        choices=("records", "sites"),
        default="records",
        help="skeleton records (default), or the panic-site list format "
        "(file_path, line, kind, message_format, commit)",
    )
    scan.set_defaults(handler=cmd_scan)

    update = catalog_subparsers.add_parser(
        "update",
        help="bring a catalog in step with a fresh scan",
        description="Compare the catalog with a scan of a newer commit. Sites with the same "
        "file and message get the new line, commit and pinned URL (their analysis is kept); "
        "slightly changed messages are proposed, not applied (see --accept and --reject); "
        "sites that are gone are kept and tagged removed-at:<commit>; new sites get skeleton "
        "records. Prints a summary on stderr. Without --out nothing is written and the diff "
        "goes to stdout; with --out, DIR/catalog/ holds the updated catalog, DIR/update.md the "
        "review page, DIR/update.diff the JSON diff and DIR/proposals.json the proposals.",
    )
    update.add_argument("--catalog", required=True, metavar="PATH", help="catalog file or folder")
    update.add_argument(
        "--scan", required=True, metavar="PATH", help="records written by `catalog scan`"
    )
    update.add_argument("--out", metavar="DIR", help="where to write the updated catalog")
    update.add_argument(
        "--accept",
        action="append",
        default=[],
        metavar="ID",
        help="apply the proposed change of this record (repeatable)",
    )
    update.add_argument(
        "--reject",
        action="append",
        default=[],
        metavar="ID",
        help="refuse the proposed change of this record: it is marked removed and the new "
        "site added (repeatable)",
    )
    update.add_argument(
        "--cutoff",
        type=number_in(0, 100, "a score"),
        default=None,
        metavar="SCORE",
        help="least message similarity (0-100) for a change proposal (default 85)",
    )
    add_json_option(
        update, "the summary (counts, proposals, warnings) instead of the diff on stdout"
    )
    update.set_defaults(handler=cmd_update)

    history = catalog_subparsers.add_parser(
        "history",
        help="follow the panic sites of a repository's release tags",
        description="Scan each release tag of a git repository (bare or not; read with git, no "
        "checkout needed) and link the sites across releases into lineages that survive file "
        "moves, crate splits and message edits. Writes DIR/history.ndjson (the lineages: "
        "file, line and message in each release), DIR/panic_sites.jsonl (skeleton records of "
        "the newest release's sites) and DIR/removed_sites.jsonl (sites gone by then, tagged "
        "removed-at:<commit>, removed-in:<version>, last-seen-in:<version>). Runtime code "
        "only: tests, benches, examples, #[cfg(test)] code and test-helper crates are left out.",
    )
    history.add_argument("path", metavar="REPO_CHECKOUT", help="a git repository (bare or not)")
    history.add_argument("--repo", required=True, metavar="OWNER/NAME", help="GitHub repository")
    history.add_argument(
        "--tags",
        metavar="PATTERN",
        help=(
            "regular expression for the tags to scan (default: release tags vX.Y.Z); a tag's "
            "version is read after a `v` or a name (mycrate-1.38.0), also behind a folder "
            "(cli/v1.9.4) or a package name and @ (@scope/name@2.3.10), or is a calendar "
            "(25.01) or a date (2024-07-01)"
        ),
    )
    history.add_argument(
        "--since", metavar="TAG", help="the oldest tag to scan (e.g. v0.13.0; default: all)"
    )
    history.add_argument(
        "--include-head",
        action="store_true",
        help="also scan the repository's HEAD, as the newest release `HEAD`",
    )
    history.add_argument(
        "--catalog",
        action="append",
        default=[],
        metavar="PATH",
        help="catalog whose written-up records (seeds) are attached to their lineages (repeatable)",
    )
    history.add_argument(
        "--config",
        metavar="FILE",
        help="scan setting: builder functions and the project's own assertion macros",
    )
    history.add_argument(
        "--path",
        dest="paths",
        action="append",
        default=[],
        metavar="FOLDER",
        help="scan only this folder of each release (repeatable; e.g. a dependency's crates)",
    )
    history.add_argument("--out", required=True, metavar="DIR", help="where to write the files")
    add_json_option(history, "the summary (releases, lineages, live, removed, files) on stdout")
    history.set_defaults(handler=cmd_history)


class _Progress:
    def __init__(self) -> None:
        self.started = time.monotonic()
        self.tty = sys.stderr.isatty()
        self.last = 0.0

    def __call__(self, done: int, total: int, sites: int) -> None:
        if total < PROGRESS_MIN_FILES:
            return
        now = time.monotonic()
        if done != total and now - self.last < (0.2 if self.tty else 2.0):
            return
        self.last = now
        line = f"scan: {done}/{total} files, {sites} sites"
        if self.tty:
            print("\r" + line, end="\n" if done == total else "", file=sys.stderr, flush=True)
        else:
            _err(line)


def cmd_scan(args: argparse.Namespace) -> int:
    if not _REPO.match(args.repo):
        _err(f"error: --repo must be OWNER/NAME, not `{args.repo}`")
        return 2
    if not _SHA.match(args.commit):
        _err(f"error: --commit must be a commit SHA (7 to 40 hex digits), not `{args.commit}`")
        return 2
    if problem := folder_out_problem(getattr(args, "out", None)):
        _err(problem)
        return 2
    if args.out and (Path(args.out) / "history.ndjson").exists():
        _err(
            f"error: --out {args.out} holds a `catalog history` of the code, which has every site "
            "a scan would add; run `catalog history` (or `catalog refresh`) again to follow "
            "new code, or scan into another folder"
        )
        return 2
    root = Path(args.path)
    if not root.exists():
        _err(f"error: {root}: no such file or folder")
        return 2
    if root.is_dir() and next(iter(rust_files(root, include_tests=True)), None) is None:
        # A bare git repository (no working tree) or the wrong folder: "0 sites" would pass
        # for a clean scan and leave an empty catalog.
        _err(f"error: {root}: no Rust source files (.rs) here; scan a checkout of the code")
        return 2
    builders: list[Builder] = []
    macros: dict[str, str] = {}
    hooks: list[str] = []
    if args.config:
        try:
            builders, macros = load_scan_settings(args.config)
            hooks = load_hooks(args.config)
        except BuilderConfigError as exc:
            _err(f"error: {exc}")
            return 2
    if root.is_file() and not _rust_text(root):
        _err(f"error: {root}: not Rust source text (a binary file, or not UTF-8)")
        return 2
    started = time.monotonic()
    sites = scan_tree(
        root,
        include_tests=args.include_tests,
        progress=_Progress(),
        builders=builders,
        macros=macros,
    )
    if not args.include_tests:
        # As `catalog history` does: test-helper crates (burn-no-std-tests) are tests too.
        sites = [s for s in sites if is_runtime_path(s.file_path)]
    if args.format == "sites":
        rows: list[dict[str, Any]] = [s.as_panic_site(args.commit) for s in sites]
    else:
        # (a crate whose files are not under `src/`, as deno_core's, is known by its manifest)
        folder = root if root.is_dir() else root.parent
        packages = package_names(folder, {s.file_path for s in sites}, args.repo)
        rows = skeletons(sites, repo=args.repo, commit=args.commit, packages=packages)
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    elapsed = time.monotonic() - started
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        name = "panic_sites" if args.format == "sites" else "scan"
        target = out / f"{name}-{args.commit[:12]}.jsonl"
        target.write_text(text, encoding="utf-8")
        _write_hooks(out, hooks, args.config, hooks_in_tree(root, include_tests=args.include_tests))
        _err(f"scan: {len(rows)} sites in {elapsed:.1f}s, written to {target}")
    else:
        sys.stdout.write(text)
        _err(f"scan: {len(rows)} sites in {elapsed:.1f}s")
    return 0


def _write_hooks(
    out: Path, declared: list[str], config: str | None, drafted: list[DerivedHook]
) -> None:
    """The project's panic-hook formats travel with its catalog (`DIR/hooks.toml`): the
    --config file's, then those drafted from its own `set_hook` code, each noted with where it
    came from. Nothing is written when there are none."""
    patterns = list(declared)
    notes = {pattern: f"from {config}" for pattern in patterns}
    for hook in drafted:
        if hook.pattern not in notes and is_runtime_path(hook.file_path):
            patterns.append(hook.pattern)
            notes[hook.pattern] = f"drafted from the panic hook at {hook.file_path}:{hook.line}"
    if patterns:
        (out / HOOK_FILE).write_text(hooks_toml(patterns, notes), encoding="utf-8")


def cmd_update(args: argparse.Namespace) -> int:
    if problem := folder_out_problem(args.out):
        _err(problem)
        return 2
    catalog_path, scan_path = Path(args.catalog), Path(args.scan)
    for path in (catalog_path, scan_path):
        if not path.exists():
            _err(f"error: {path}: no such file or folder")
            return 2
    try:
        load_catalog([catalog_path])  # the catalog must be sound before it is rewritten
    except CatalogError as exc:
        _err(f"error: the catalog has problems; fix them first:\n{exc}")
        return 2
    if scan_path.is_dir():
        found = _scan_in_folder(scan_path)
        if isinstance(found, str):
            _err(f"error: {found}")
            return 2
        scan_path = found
    try:
        catalog = read_catalog(catalog_path)
        scan = read_records_file(scan_path)
        _repo, commit = scan_identity(scan)
    except (ValueError, KeyError) as exc:
        _err(f"error: {exc}")
        return 2
    cutoff = DEFAULT_CUTOFF if args.cutoff is None else args.cutoff
    result = update_catalog(
        catalog.records, scan, accept=args.accept, reject=args.reject, cutoff=cutoff
    )
    unknown = set(args.accept + args.reject) - {
        rid for p in result.proposals for rid in p.record_ids
    }
    for rid in sorted(unknown):
        _err(f"warning: no proposal for record {rid}; --accept/--reject ignored for it")
    new_file = f"new-sites-{commit[:12]}.jsonl"
    origins = [catalog.origin(i) for i in range(len(catalog.records))]
    diff = record_diff(catalog.records, result, origins, new_origin=new_file)
    hint = f"triage-bot catalog update --catalog {args.catalog} --scan {args.scan} --accept ID"
    report = report_markdown(result, accept_hint=hint)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        write_catalog(
            catalog,
            result.records,
            result.changed,
            out / "catalog",
            new_records=result.new,
            new_file=new_file,
        )
        (out / "update.md").write_text(report, encoding="utf-8")
        (out / "update.diff").write_text(diff, encoding="utf-8")
        (out / "proposals.json").write_text(
            json.dumps(proposals_json(result), indent=2, ensure_ascii=False) + "\n",
            encoding="utf-8",
        )
        _err(f"update: wrote {out / 'catalog'}, update.md, update.diff and proposals.json")
    elif not args.json:
        sys.stdout.write(diff)
    _err("update: " + result.summary())
    for warning in result.warnings:
        _err(f"warning: {warning}")
    if args.json:
        pending = sum(1 for p in result.proposals if not p.accepted)
        print_json(
            {
                "repo": result.repo,
                "commit": result.commit,
                "moved": len(result.moved),
                "changed": len(result.proposals),
                "proposed": pending,
                "accepted": len(result.proposals) - pending,
                "removed": len(result.removed),
                "new": len(result.new),
                "unchanged": len(result.unchanged),
                "restored": len(result.restored),
                "out": str(Path(args.out) / "catalog") if args.out else None,
                "proposals": proposals_json(result),
                "warnings": list(result.warnings),
            }
        )
    return 0


def _scan_in_folder(folder: Path) -> Path | str:
    """The one scan-<commit>.jsonl that `catalog scan --out FOLDER` wrote, or what is wrong."""
    scans = sorted(folder.glob("scan-*.jsonl"))
    if len(scans) == 1:
        return scans[0]
    if not scans:
        return (
            f"{folder}: no scan-<commit>.jsonl here; give the folder `catalog scan --out` "
            "wrote, or the scan file itself"
        )
    names = ", ".join(p.name for p in scans)
    return f"{folder} holds {len(scans)} scans ({names}); give --scan the file of the one to use"


def _rust_text(path: Path) -> bool:
    """Whether a file given to `catalog scan` reads as source text: UTF-8, no NUL byte."""
    try:
        data = path.read_bytes()
    except OSError:
        return True  # the scan says what is wrong with it
    if b"\0" in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def git_failure(exc: subprocess.CalledProcessError) -> str:
    """What git said (its stderr, bytes or text), else which git command failed, in words."""
    said = exc.stderr
    text = said.decode("utf-8", "replace") if isinstance(said, bytes) else str(said or "")
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if lines:
        return lines[-1].strip()
    command = exc.cmd if isinstance(exc.cmd, str) else " ".join(map(str, exc.cmd[:4]))
    return f"`{command}` exited with status {exc.returncode}"


def _drafted_at(repo_dir: Path, commit: str, paths: list[str] | None) -> list[DerivedHook]:
    """The panic-hook patterns drafted from the code of `commit` (the newest release scanned)."""
    with tempfile.TemporaryDirectory(prefix="triage-hooks-") as folder:
        extract_tree(repo_dir, commit, Path(folder), paths or ())
        return hooks_in_tree(Path(folder))


def cmd_history(args: argparse.Namespace) -> int:
    if not _REPO.match(args.repo):
        _err(f"error: --repo must be OWNER/NAME, not `{args.repo}`")
        return 2
    if problem := folder_out_problem(args.out):
        _err(problem)
        return 2
    repo_dir = Path(args.path)
    try:
        tags = release_tags(repo_dir, args.tags)
    except (OSError, subprocess.CalledProcessError) as exc:
        _err(f"error: {repo_dir}: not a git repository ({exc})")
        return 2
    except re.error as exc:
        _err(f"error: --tags is not a regular expression: {exc}")
        return 2
    if args.since:
        tags = [t for t in tags if version_key(t) >= version_key(args.since)]
    if not tags and not args.include_head:
        _err("error: no tag matches; give --tags PATTERN or --include-head")
        return 2
    settings = None
    if args.config:
        try:
            settings = load_scan_settings(args.config)
        except BuilderConfigError as exc:
            _err(f"error: {exc}")
            return 2
    written_ups: list[dict[str, Any]] = []
    for path in args.catalog:
        try:
            written_ups.extend(r for r in read_catalog(path).records if _has_write_up(r))
        except (OSError, ValueError) as exc:
            _err(f"error: {exc}")
            return 2

    total = len(tags) + (1 if args.include_head else 0)
    done = [0]

    def progress(release: Release, sites: int, seconds: float) -> None:
        done[0] += 1
        left = eta(started, done[0], total, time.monotonic())
        _err(
            f"history: {release.version} ({release.commit[:12]}): {sites} sites in "
            f"{seconds:.1f}s [{done[0]}/{total} releases{left}]"
        )

    started = time.monotonic()
    try:
        history = build_history(
            repo_dir,
            args.repo,
            tags=tags,
            head_ref="HEAD" if args.include_head else None,
            progress=progress,
            paths=args.paths,
            settings=settings,
        )
        linked = time.monotonic()
        subjects: dict[str, str] = {}
        events = lineage_events(history, repo_dir, subjects)
        _err(
            f"history: the commits of {sum(map(len, events.values()))} changes of "
            f"{len(events)} lineages in {time.monotonic() - linked:.1f}s"
        )
    except subprocess.CalledProcessError as exc:
        _err(f"error: git failed: {git_failure(exc)}")
        return 2
    attached = attach_records(history, written_ups)
    live, gone = lineage_records(history)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    lines = history_lines(history, attached, events, subjects)
    (out / "history.ndjson").write_text("\n".join(lines) + "\n")
    for name, rows in (("panic_sites.jsonl", live), ("removed_sites.jsonl", gone)):
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        (out / name).write_text(text, encoding="utf-8")
    replaced = _replace_scans(out, args.repo)
    try:
        newest = history.releases[-1].commit if history.releases else None
        drafted = _drafted_at(repo_dir, newest, args.paths) if newest else []
        declared = load_hooks(args.config) if args.config else []
    except (OSError, subprocess.CalledProcessError, BuilderConfigError) as exc:
        _err(f"warning: panic-hook formats not drafted: {exc}")
    else:
        _write_hooks(out, declared, args.config, drafted)
    elapsed = time.monotonic() - started
    _err(
        f"history: {len(history.releases)} releases, {len(history.lineages)} lineages "
        f"({len(live)} live, {len(gone)} removed, {sum(map(len, attached.values()))} write-ups "
        f"attached) in {elapsed:.1f}s, written to {out}"
    )
    if args.json:
        print_json(
            {
                "repo": args.repo,
                "releases": [{"version": r.version, "commit": r.commit} for r in history.releases],
                "lineages": len(history.lineages),
                "live": len(live),
                "removed": len(gone),
                "writeups_attached": sum(map(len, attached.values())),
                "out": str(out),
                "files": ["history.ndjson", "panic_sites.jsonl", "removed_sites.jsonl"],
                "replaced": replaced,
                "seconds": round(elapsed, 3),
            }
        )
    return 0


def _replace_scans(out: Path, repo: str) -> list[str]:
    """The history holds every site a `catalog scan` of the same repository wrote into its
    folder, under the same ids: those scans are renamed `*.replaced` (kept, no longer read), and
    said, instead of every id failing as used twice."""
    replaced = []
    for scan in sorted(out.glob("scan-*.jsonl")):
        try:
            with scan.open(encoding="utf-8") as lines:
                first = json.loads(next(lines, "{}") or "{}")
        except (OSError, ValueError):
            continue
        if isinstance(first, dict) and first.get("repo") == repo:
            scan.replace(scan.with_name(scan.name + ".replaced"))
            replaced.append(scan.name)
            _err(
                f"history: replaces {scan.name} (renamed {scan.name}.replaced): the history "
                "holds the same sites under the same ids"
            )
    return replaced


def _has_write_up(record: dict[str, Any]) -> bool:
    return any(record.get(k) for k, attr in ATTR_BY_KEY.items() if attr in WRITE_UP_ATTRS)
