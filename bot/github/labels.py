"""Which labels an answer earns: a TOML mapping (`TRIAGE_CONFIG`) with a sensible default.

[labels]
matched = "panic: known"            # on every issue the bot answered ("" for none)
uncatalogued = "panic: uncatalogued" # on issues with a panic the catalog lacks
family = "family: {family}"         # template from the record's error family ("" for none)
crate = "crate: {crate}"            # template from the record's crate ("" for none)
upstream = "upstream: {project}"    # a dependency's panic (wgpu, ndarray): one label per
                                    # dependency, instead of crate labels ("" for none)

[labels.upstream_projects]          # dependency -> label (wins over the template)
"wgpu" = "upstream: wgpu"

[labels.background_tag]             # family/backgroundTag -> label
"tensor-shape" = "A-shape"

[labels.tags]                       # record tag -> label
"wgpu" = "backend: wgpu"

[labels.crates]                     # crate -> label (wins over the template)
"burn-autodiff" = "A-autodiff"

[github]
comment_uncatalogued = false        # also comment on uncatalogued panics (default: label only)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.catalog.model import Record
from bot.config.settings import SettingsError, read_triage_config

DEFAULT_MATCHED = "panic: known"
DEFAULT_UNCATALOGUED = "panic: uncatalogued"
DEFAULT_FAMILY = "family: {family}"
DEFAULT_CRATE = "crate: {crate}"
DEFAULT_UPSTREAM = "upstream: {project}"


@dataclass(frozen=True)
class LabelConfig:
    matched: str | None = DEFAULT_MATCHED
    uncatalogued: str | None = DEFAULT_UNCATALOGUED
    crate_template: str | None = DEFAULT_CRATE
    family_template: str | None = DEFAULT_FAMILY
    background_tag: Mapping[str, str] = field(default_factory=dict)
    tags: Mapping[str, str] = field(default_factory=dict)
    crates: Mapping[str, str] = field(default_factory=dict)
    comment_uncatalogued: bool = False
    upstream_template: str | None = DEFAULT_UPSTREAM
    upstream_projects: Mapping[str, str] = field(default_factory=dict)

    def for_records(
        self,
        records: Iterable[Record],
        family_of: Callable[[Record], str | None] | None = None,
        dependency_of: Callable[[Record], str | None] | None = None,
    ) -> list[str]:
        """The labels for an answer citing these records, in a stable order without repeats.

        `family_of` names a record's error family (the catalog's families, or its
        `backgroundTag`); a mapped family wins over the `family` template. `dependency_of`
        names the dependency (`wgpu`) whose code a record is: one `upstream` label for it,
        and no crate label.
        """
        out: dict[str, None] = {}
        if self.matched:
            out[self.matched] = None
        for record in records:
            family = (family_of(record) if family_of else None) or record.background_tag
            if family and family in self.background_tag:
                out[self.background_tag[family]] = None
            elif family and self.family_template:
                out[self.family_template.format(family=family)] = None
            for tag in record.tags:
                if tag in self.tags:
                    out[self.tags[tag]] = None
            dependency = dependency_of(record) if dependency_of else None
            if dependency:
                if dependency in self.upstream_projects:
                    out[self.upstream_projects[dependency]] = None
                elif self.upstream_template:
                    out[self.upstream_template.format(project=dependency)] = None
                continue
            crate = record.crate
            if crate:
                if crate in self.crates:
                    out[self.crates[crate]] = None
                elif self.crate_template:
                    out[self.crate_template.format(crate=crate)] = None
        return [name for name in out if name]

    def for_uncatalogued(self, crates: Iterable[str] = ()) -> list[str]:
        """`panic: uncatalogued`, and the crates (of the project) the panics were raised in."""
        out: dict[str, None] = {}
        if self.uncatalogued:
            out[self.uncatalogued] = None
        for crate in crates:
            if crate in self.crates:
                out[self.crates[crate]] = None
            elif self.crate_template:
                out[self.crate_template.format(crate=crate)] = None
        return [name for name in out if name]


def load_label_config(path: str | Path | None) -> LabelConfig:
    """Read the `[labels]` and `[github]` tables of a TOML file; the default when path is None."""
    if path is None:
        return LabelConfig()
    return label_config_from_dict(read_triage_config(path), source=str(path))


def label_config_from_dict(data: Mapping[str, Any], source: str = "config") -> LabelConfig:
    labels = data.get("labels", {})
    github = data.get("github", {})
    if not isinstance(labels, dict) or not isinstance(github, dict):
        raise SettingsError(f"TRIAGE_CONFIG: {source}: [labels] and [github] must be tables")

    def text(key: str, default: str | None) -> str | None:
        value = labels.get(key, default)
        if value is None or value == "":
            return None
        if not isinstance(value, str):
            raise SettingsError(f"TRIAGE_CONFIG: {source}: labels.{key} must be a string")
        return value

    def table(key: str) -> dict[str, str]:
        value = labels.get(key, {})
        if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        ):
            raise SettingsError(
                f"TRIAGE_CONFIG: {source}: [labels.{key}] must map strings to label names"
            )
        return dict(value)

    template = text("crate", DEFAULT_CRATE)
    if template is not None and "{crate}" not in template:
        raise SettingsError(f"TRIAGE_CONFIG: {source}: labels.crate must contain {{crate}}")
    family_template = text("family", DEFAULT_FAMILY)
    if family_template is not None and "{family}" not in family_template:
        raise SettingsError(f"TRIAGE_CONFIG: {source}: labels.family must contain {{family}}")
    upstream = text("upstream", DEFAULT_UPSTREAM)
    if upstream is not None and "{project}" not in upstream:
        raise SettingsError(f"TRIAGE_CONFIG: {source}: labels.upstream must contain {{project}}")
    comment_uncatalogued = github.get("comment_uncatalogued", False)
    if not isinstance(comment_uncatalogued, bool):
        raise SettingsError(f"TRIAGE_CONFIG: {source}: github.comment_uncatalogued must be a bool")
    return LabelConfig(
        matched=text("matched", DEFAULT_MATCHED),
        uncatalogued=text("uncatalogued", DEFAULT_UNCATALOGUED),
        crate_template=template,
        family_template=family_template,
        background_tag=table("background_tag"),
        tags=table("tags"),
        crates=table("crates"),
        comment_uncatalogued=comment_uncatalogued,
        upstream_template=upstream,
        upstream_projects=table("upstream_projects"),
    )
