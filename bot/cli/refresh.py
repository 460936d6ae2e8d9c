"""`triage-bot catalog refresh`: bring a catalog folder up to date with its git source
(`bot.scan.refresh` does the work). What it does and the summary go to stderr, with a count of
releases and an ETA when stderr is a terminal; exit 0 done,
2 bad input or git failing (the catalog is left as it was)."""

from __future__ import annotations

import argparse
import subprocess
import sys

from bot.cli.output import Progress
from bot.config.settings import Settings, SettingsError, load_catalog_sources
from bot.scan.builders import BuilderConfigError
from bot.scan.refresh import RefreshError, refresh_catalog


def _err(message: str) -> None:
    print(message, file=sys.stderr)


def register_catalog(catalog_subparsers: argparse._SubParsersAction) -> None:
    refresh = catalog_subparsers.add_parser(
        "refresh",
        help="bring a catalog folder up to date with its git repository",
        description="Incremental: a new commit on the branch rescans only the changed files "
        "and moves the HEAD column; a new release tag extends every lineage with that release "
        "and its history facts. The folder remembers what it was built from in refresh.state; "
        "an empty folder, or a force-pushed branch, gets a full build (said on stderr). "
        "The options default to the project's catalog source in TRIAGE_CONFIG "
        "([catalog_source.<name>]), then to what refresh.state remembers.",
    )
    refresh.add_argument("--catalog", metavar="DIR", help="one project's catalog folder")
    refresh.add_argument("--source", metavar="GIT_DIR", help="a local git repository (bare or not)")
    refresh.add_argument("--branch", metavar="NAME", help="the branch to follow (default: HEAD's)")
    refresh.add_argument(
        "--tags", metavar="PATTERN", help="regular expression of release tags (default vX.Y.Z)"
    )
    refresh.add_argument("--repo", metavar="OWNER/NAME", help="the GitHub repository")
    refresh.add_argument(
        "--project", metavar="NAME", help="which catalog source of TRIAGE_CONFIG to use"
    )
    refresh.add_argument(
        "--no-fetch", action="store_true", help="do not `git fetch` the source's remotes first"
    )
    refresh.set_defaults(handler=cmd_refresh)


def cmd_refresh(args: argparse.Namespace) -> int:
    catalog, source = args.catalog, args.source
    branch, tags, repo = args.branch, args.tags, args.repo
    if catalog is None or source is None:
        try:
            sources = load_catalog_sources(Settings.load().triage_config)
        except SettingsError as exc:
            _err(f"error: {exc}")
            return 2
        chosen = [s for s in sources if args.project in (None, s.name)]
        if not chosen:
            _err("error: give --catalog DIR and --source GIT_DIR (no catalog source configured)")
            return 2
        if len(chosen) > 1:
            names = ", ".join(s.name for s in chosen)
            _err(f"error: several catalog sources ({names}); give --project NAME")
            return 2
        found = chosen[0]
        catalog = catalog or found.catalog
        source = source or found.git_dir
        branch = branch or found.branch
        tags = tags or found.tags
        repo = repo or found.repo
    shown = Progress("refresh", "releases")
    try:
        result = refresh_catalog(
            catalog,
            source,
            repo=repo,
            branch=branch,
            tags_pattern=tags,
            fetch=not args.no_fetch,
            log=shown.say,
            progress=shown.update,
        )
    except (RefreshError, BuilderConfigError) as exc:
        shown.close()
        _err(f"error: {exc}")
        return 2
    except subprocess.CalledProcessError as exc:
        shown.close()
        detail = exc.stderr or b""
        text = detail.decode("utf-8", "replace") if isinstance(detail, bytes) else detail
        _err(f"error: git failed: {text.strip() or exc}")
        return 2
    shown.close()
    _err(result.summary())
    for line in result.review:
        _err(f"warning: write-up {line}: see `catalog lint`")
    return 0
