"""doctor's catalog check: TRIAGE_CATALOG (or the bundled catalog) loads and is indexed as at
start-up, and its lint summary."""

from __future__ import annotations

from bot.app import Triage
from bot.catalog.lint import WARNING, lint_catalog
from bot.catalog.loader import CatalogError, bundled_catalog_path
from bot.cli.doctor.check import FAIL, OK, WARN, Check
from bot.config.settings import Settings

SHOWN_PROBLEMS = 10


def check_catalog(settings: Settings) -> Check:
    custom = bool(settings.triage_catalog)
    path = ",".join(map(str, settings.triage_catalog)) if custom else bundled_catalog_path()
    label = f"TRIAGE_CATALOG {path}" if custom else f"bundled catalog ({path})"
    try:  # the catalog and its index, as the bot builds them at start-up
        catalog = Triage.from_paths(list(settings.triage_catalog) or None).catalog
    except CatalogError as exc:
        shown = [str(p) for p in exc.problems[:SHOWN_PROBLEMS]]
        if len(exc.problems) > SHOWN_PROBLEMS:
            shown.append(f"... and {len(exc.problems) - SHOWN_PROBLEMS} more")
        return Check(
            "catalog",
            FAIL,
            f"{label}: {len(exc.problems)} problem(s); the catalog cannot be used",
            shown,
            f"run `triage-bot catalog validate {str(path).replace(',', ' ')}` and fix each problem"
            + (", or unset TRIAGE_CATALOG to use the bundled catalog" if custom else ""),
        )
    if not len(catalog):  # as `catalog validate` and `match`: a catalog that answers nothing
        return Check(
            "catalog",
            FAIL,
            f"{label}: no records; the catalog cannot be used",
            [],
            "point TRIAGE_CATALOG at a folder of .json/.jsonl records (`triage-bot catalog "
            "scan --out` writes one), or unset it to use the bundled catalog",
        )
    findings = lint_catalog(catalog)
    warnings = [f for f in findings if f.level == WARNING]
    by_code: dict[str, int] = {}
    for finding in findings:
        by_code[finding.code] = by_code.get(finding.code, 0) + 1
    lint = ", ".join(f"{n} {code}" for code, n in sorted(by_code.items())) or "no findings"
    details = [f"lint: {lint}"]
    summary = f"{label}: {len(catalog)} records, {len(warnings)} lint warning(s)"
    if warnings and custom:
        return Check(
            "catalog",
            WARN,
            summary,
            details,
            f"run `triage-bot catalog lint {path}` to see each warning",
        )
    return Check("catalog", OK, summary, details)
