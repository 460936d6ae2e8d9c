"""doctor's settings check: every problem in the settings (each named, not only the first), and
the combinations that quietly do less than expected; what `serve` needs is Settings' own rule."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from bot.cli.doctor.check import FAIL, OK, WARN, Check
from bot.config.settings import (
    MIN_WEBHOOK_SECRET,
    NAMES,
    SECRET_NAMES,
    WILDCARD_HOSTS,
    Settings,
    SettingsError,
    read_env_file,
)


def collect_settings(
    environ: Mapping[str, str], env_file: str | Path | None, *, required: bool = False
) -> tuple[Settings, list[str]]:
    """The settings, and every problem in them: a bad setting is reported and then dropped, so
    the next one is found too, and the other checks run on what is usable. `required`: the
    env file was named by the user, so its absence is a problem, not the usual no-.env case."""
    problems: list[str] = []
    values: dict[str, str] = {}
    if required and env_file is not None and not Path(env_file).is_file():
        what = "not a file" if Path(env_file).exists() else "no such file"
        problems.append(f"--env-file {env_file}: {what}, so no setting was read from it")
    if env_file is not None and Path(env_file).is_file():
        try:
            values.update(read_env_file(env_file))
        except SettingsError as exc:
            problems.append(str(exc))
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            problems.append(f"{env_file}: cannot be read as a settings file: {reason}")
    values.update(environ)
    for _ in range(len(NAMES) + 1):
        try:
            return Settings.from_mapping(values), problems
        except SettingsError as exc:
            problems.append(str(exc))
            named = set(exc.names) | {n for n in NAMES if re.search(rf"\b{n}\b", str(exc))}
            dropped = [n for n in named if values.get(n, "").strip()]
            if not dropped:
                break
            for name in dropped:
                values.pop(name, None)
    return Settings(), problems


def check_settings(settings: Settings, problems: list[str]) -> Check:
    details: list[str] = []
    warnings: list[str] = []
    if settings.github_auth == "app":
        github = f"GitHub App {settings.github_app_id}"
    elif settings.github_auth == "token":
        github = "GitHub token"
    else:
        github = "GitHub off"
    discord = "Discord on" if settings.discord_enabled else "Discord off"
    store = settings.store_description
    summary = f"{github}, {discord}, store {store}, LOG_LEVEL {settings.log_level}"

    # a setting that was reported and dropped is not shown with the default that replaced it
    reported = {n for n in NAMES if any(re.search(rf"\b{n}\b", p) for p in problems)}
    credentials = {"GITHUB_TOKEN", "GITHUB_APP_ID", "GITHUB_APP_PRIVATE_KEY", "DISCORD_TOKEN"}
    try:
        settings.require_serve()  # what `serve` refuses to start without, in its words
    except SettingsError as exc:
        if "GITHUB_WEBHOOK_SECRET" in exc.names:
            if not settings.github_webhook_secrets:  # a short one is named below
                warnings.append(
                    "GITHUB_WEBHOOK_SECRET is not set: `triage-bot serve` refuses to start for "
                    "GitHub (`poll` and the GitHub Action do not need it)"
                )
        elif not reported & credentials:  # a bad credential is already named
            problems.append(str(exc))
    if not settings.github_enabled and not settings.discord_enabled and settings.triage_pages:
        warnings.append(
            "no GitHub or Discord credentials: fine for `match`; `triage-bot serve` serves only "
            "the catalog's pages and /api/match"
        )
    try:
        settings.require_strong_webhook_secrets()
    except SettingsError:
        warnings.append(
            f"GITHUB_WEBHOOK_SECRET is short (under {MIN_WEBHOOK_SECRET} characters): use a "
            "random one, e.g. `python -c 'import secrets; print(secrets.token_hex(32))'`"
        )
    if settings.discord_enabled and not settings.discord_channel_ids:
        warnings.append(
            "DISCORD_CHANNEL_IDS is empty: the bot answers only /panic, /error and the message "
            "menu, never pasted panics unasked"
        )
    if not settings.discord_enabled and settings.discord_channel_ids:
        warnings.append("DISCORD_CHANNEL_IDS is set but DISCORD_TOKEN is not: Discord stays off")
    if settings.triage_dry_run:
        warnings.append("TRIAGE_DRY_RUN is on: the bot logs what it would write and writes nothing")
    if getattr(settings, "triage_host", None) in WILDCARD_HOSTS:
        exposed = (
            "/metrics and /stats (token-protected)" if settings.triage_stats_token else ("/metrics")
        )
        warnings.append(
            f"TRIAGE_HOST={settings.triage_host}: `serve` listens on every interface, so "
            f"{exposed} and /healthz are reachable from other machines; listen on 127.0.0.1 "
            "behind a proxy that forwards only POST /github/webhook, or firewall the port"
        )

    shown = []
    for name in NAMES:
        if name in SECRET_NAMES or name == "GITHUB_APP_PRIVATE_KEY_PATH" or name in reported:
            continue
        attr = name.lower()
        if name == "GITHUB_APP_ID":
            attr = "github_app_id"
        value = getattr(settings, attr, None)
        if name == "TRIAGE_DB":
            value = settings.store_description  # a PostgreSQL URL, without its password
        if name == "GITHUB_API_URL" and value == "https://api.github.com":
            continue
        if value not in (None, "", frozenset(), (), False):
            if isinstance(value, bool):
                value = int(value)
            if isinstance(value, frozenset):
                value = ",".join(str(v) for v in sorted(value))
            elif isinstance(value, tuple):  # TRIAGE_CATALOG's folders, TRIAGE_REPOS: as typed
                value = ",".join(str(v) for v in value)
            shown.append(f"{name}={value}")
    secrets_set = [
        n
        for n, v in (
            ("GITHUB_TOKEN", settings.github_token),
            ("GITHUB_APP_PRIVATE_KEY", settings.github_app_private_key),
            ("GITHUB_WEBHOOK_SECRET", settings.github_webhook_secrets),
            ("DISCORD_TOKEN", settings.discord_token),
        )
        if v
    ]
    if secrets_set:
        shown.append("secrets set: " + ", ".join(secrets_set))
    details.extend(shown)

    if problems:
        return Check(
            "settings",
            FAIL,
            f"{len(problems)} problem(s)",
            [f"problem: {p}" for p in problems] + details + [f"warning: {w}" for w in warnings],
            "fix each setting named above in .env or the environment (the environment wins); "
            "every setting is described in .env.example",
        )
    if warnings:
        return Check(
            "settings",
            WARN,
            summary,
            details + [f"warning: {w}" for w in warnings],
            "see the warnings above; they are fine if they are what you meant",
        )
    return Check("settings", OK, summary, details)
