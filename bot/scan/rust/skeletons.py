"""Skeleton catalog records for scanned sites."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import cast

from bot.catalog.importers import skeletons_from_sites
from bot.catalog.model import CRATE_TAG_PREFIX
from bot.catalog.sites import with_enclosing_fn
from bot.scan.rust.site_finder import PanicSite


def skeletons(
    sites: Iterable[PanicSite],
    *,
    repo: str,
    commit: str,
    packages: Mapping[str, str] | None = None,
) -> list[dict[str, object]]:
    """Skeleton records for scanned sites, with the ids `catalog import --format panic-sites`
    gives the same sites (the shared scheme of `bot.catalog.sites`).

    A site's tags (`track-caller`, `macro-body`, `raised-at:..`) join the record's, and a
    builder's wrapper pattern becomes its `messagePattern`. `packages`: the crate of each file
    whose path does not name it (`walk.package_names`), tagged `crate:NAME` (instead of its
    folder's name)."""
    ordered = sorted(sites)
    records = skeletons_from_sites((s.as_panic_site(commit) for s in ordered), repo)
    for site, record in zip(ordered, records, strict=True):
        if site.tags:
            record["tags"] = [*record["tags"], *site.tags]
        package = (packages or {}).get(site.file_path)
        tags = cast("list[str]", record["tags"])
        if package:  # the package's name, not the folder's
            kept = [tag for tag in tags if not tag.startswith(CRATE_TAG_PREFIX)]
            record["tags"] = [*kept, f"{CRATE_TAG_PREFIX}{package}"]
        if site.message_pattern:
            record["messagePattern"] = site.message_pattern
        if site.check:
            record["check"] = dict(site.check)
    return [
        with_enclosing_fn(record, site.function)
        for site, record in zip(ordered, records, strict=True)
    ]
