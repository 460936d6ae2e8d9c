"""doctor's catalog-source check: each `[catalog_source.NAME]` of TRIAGE_CONFIG (opt-in) names
a git repository with the branch and release tags to follow, a writable catalog folder, and
git is installed (`serve` refreshes the catalog from there)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from bot.cli.doctor.check import FAIL, OK, SKIP, WARN, Check
from bot.config.settings import CatalogSource, Settings, SettingsError, load_catalog_sources
from bot.scan.lineages import git, release_tags
from bot.scan.refresh import RefreshError, branch_commit, default_branch, read_state


def check_catalog_sources(settings: Settings) -> Check:
    try:
        sources = load_catalog_sources(settings.triage_config)
    except SettingsError as exc:
        return Check(
            "catalog-source",
            FAIL,
            str(exc),
            fix="fix the [catalog_source.NAME] tables of the TRIAGE_CONFIG file (see the README, "
            '"Keeping the catalog current")',
        )
    if not sources:
        return Check("catalog-source", SKIP, "none configured: the catalog is not refreshed")
    if shutil.which("git") is None:
        return Check(
            "catalog-source",
            FAIL,
            "git is not installed; following a repository needs it",
            fix="install git in the image (the Dockerfile does)",
        )
    details: list[str] = []
    worst = OK
    for source in sources:
        status, line = _one(source)
        if status == OK and not _served(source.catalog, settings.triage_catalog):
            status = WARN
            line = f"problem: {source.catalog} is not in TRIAGE_CATALOG, so not served; " + line
        details.append(f"{source.name}: {line}")
        if status == FAIL or (status == WARN and worst == OK):
            worst = status
    summary = f"{len(sources)} catalog source(s)" + (
        "" if worst == OK else f", {sum(1 for d in details if 'problem' in d)} with problems"
    )
    fix = None
    if worst != OK:
        fix = "clone the project (`git clone --mirror URL DIR`), set branch/tags to what it has"
    return Check("catalog-source", worst, summary, details, fix)


def _served(folder: Path, served: tuple[Path, ...]) -> bool:
    here = folder.resolve()
    return any(here == p.resolve() or p.resolve() in here.parents for p in served)


def _one(source: CatalogSource) -> tuple[str, str]:
    where = source.git_dir
    try:
        git(where, "rev-parse", "--git-dir")
    except (OSError, Exception):
        return FAIL, f"problem: {where} is not a git repository"
    try:
        branch = source.branch or default_branch(where)
        head = branch_commit(where, branch)
        tags = release_tags(where, source.tags)
    except RefreshError as exc:
        return FAIL, f"problem: {exc}"
    catalog = Path(source.catalog)
    target = catalog if catalog.exists() else catalog.parent
    if not os.access(target, os.W_OK):
        return FAIL, f"problem: {target} is not writable (refresh writes the catalog there)"
    state = read_state(catalog)
    built = f"built at {state['version']}" if state else "not built yet (the first refresh is full)"
    line = f"{where} {branch} at {head[:12]}, {len(tags)} release tag(s); {catalog} {built}"
    if not tags:
        return WARN, "problem: no tag matches the pattern; " + line
    return OK, line
