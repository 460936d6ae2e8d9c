"""doctor's config check: the TRIAGE_CONFIG label mapping, read as `serve` reads it."""

from __future__ import annotations

from bot.cli.doctor.check import FAIL, OK, Check
from bot.config.settings import Settings, SettingsError
from bot.github.labels import load_label_config


def check_config(settings: Settings) -> Check:
    try:
        labels = load_label_config(settings.triage_config)
    except SettingsError as exc:
        return Check(
            "config",
            FAIL,
            str(exc),
            fix="fix the TOML file named by TRIAGE_CONFIG (see the [labels] example in the "
            "guide), or unset TRIAGE_CONFIG for the default labels",
        )
    where = str(settings.triage_config) if settings.triage_config else "defaults"
    parts = [
        f"matched -> {labels.matched or '(none)'}",
        f"uncatalogued -> {labels.uncatalogued or '(none)'}",
    ]
    if getattr(labels, "family_template", None):
        parts.append(f"family -> {labels.family_template}")
    if labels.crate_template:
        parts.append(f"crate -> {labels.crate_template}")
    mapped = len(labels.background_tag) + len(labels.tags) + len(labels.crates)
    if mapped:
        parts.append(f"{mapped} mapped label(s)")
    if labels.comment_uncatalogued:
        parts.append("comments on uncatalogued panics")
    return Check("config", OK, f"labels from {where}: " + "; ".join(parts))
