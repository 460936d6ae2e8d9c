"""`triage-bot doctor`: is this installation ready to answer issues, and if not, what to do.

Checks, in order, each printed as one status line, its details, and (when it is not ok) a line
saying what to do:

- settings: every setting parses (each problem named, not only the first), something is
  configured to serve, and the combinations that quietly do less than expected are pointed out;
- config: the TRIAGE_CONFIG label mapping;
- catalog: TRIAGE_CATALOG (or the bundled catalog) loads and validates, and its lint summary;
- store: the SQLite file (or its folder) is writable and its schema migrations are current;
- github (only when a token or App is configured): who the token is or which App, which
  permissions and events, which installations and repositories;
- discord (only when DISCORD_TOKEN is set): the token logs in, and the Message Content intent.

The network checks use the same endpoints as the bot (GITHUB_API_URL; discord.py's API base).
The exit status is 0 when nothing failed (warnings do not fail), 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

OK, WARN, FAIL, SKIP = "ok", "warn", "FAIL", "skip"
# None: discord.py's own base (discord.http.Route.BASE). Tests point it at a stub.
DISCORD_API_BASE: str | None = None
NETWORK_TIMEOUT = 15
# Discord application flags: may read message content (verified / unverified apps).
MESSAGE_CONTENT_FLAGS = (1 << 18) | (1 << 19)
SHOWN_REPOS = 10
SHOWN_PROBLEMS = 10


@dataclass
class Check:
    name: str
    status: str
    summary: str
    details: list[str] = field(default_factory=list)
    fix: str | None = None

    @property
    def failed(self) -> bool:
        return self.status == FAIL


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="check the settings, catalog, store and GitHub/Discord credentials",
        description="Check that this installation is ready, and say what to do when it is not. "
        "Exit status 0 when every check passed (warnings included), 1 when one failed.",
    )
    parser.add_argument(
        "--env-file",
        metavar="F",
        help="the settings file read under the environment (default: .env, when there is one; "
        "a file named here must exist)",
    )
    parser.add_argument(
        "--repo",
        action="append",
        default=[],
        metavar="OWNER/NAME",
        help="also check that the GitHub identity can reach this repository (repeatable)",
    )
    parser.add_argument(
        "--offline", action="store_true", help="skip the GitHub and Discord checks (no network)"
    )
    parser.set_defaults(handler=cmd_doctor)


def cmd_doctor(args: argparse.Namespace) -> int:
    checks = run_checks(
        os.environ,
        args.env_file or ".env",
        repos=args.repo,
        offline=args.offline,
        out=sys.stdout,
        env_file_required=args.env_file is not None,
    )
    failed = [c.name for c in checks if c.failed]
    warned = [c.name for c in checks if c.status == WARN]
    if failed:
        print(f"\n{len(failed)} check(s) failed: {', '.join(failed)}")
        return 1
    note = f" ({len(warned)} with warnings: {', '.join(warned)})" if warned else ""
    print(f"\nall {len([c for c in checks if c.status != SKIP])} checks passed{note}")
    return 0


def run_checks(
    environ: Mapping[str, str],
    env_file: str | Path | None = ".env",
    *,
    repos: Sequence[str] = (),
    offline: bool = False,
    out: Any = None,
    env_file_required: bool = False,
) -> list[Check]:
    """Run every check, printing each as it completes when `out` is a stream."""
    checks: list[Check] = []

    def run(step: Callable[[], Check]) -> Check:
        try:
            check = step()
        except Exception as exc:  # a check that crashes is a failed check, not a traceback
            name = getattr(step, "check_name", "check")
            check = Check(name, FAIL, f"unexpected error: {type(exc).__name__}: {exc}")
            check.fix = "run again with LOG_LEVEL=DEBUG and report the error"
        checks.append(check)
        if out is not None:
            print_check(check, out)
        return check

    settings, problems = collect_settings(environ, env_file, required=env_file_required)
    run(lambda: check_settings(settings, problems))
    run(lambda: check_config(settings))
    run(lambda: check_catalog(settings))
    run(lambda: check_store(settings))
    if offline:
        run(lambda: Check("github", SKIP, "--offline: not checked"))
        run(lambda: Check("discord", SKIP, "--offline: not checked"))
    else:
        run(lambda: check_github(settings, repos))
        run(lambda: check_discord(settings))
    return checks


def print_check(check: Check, out: Any) -> None:
    from bot.config.logs import Redactor

    redact = Redactor()  # belt and braces: no token-shaped text reaches the terminal
    print(f"{check.status:<4}  {check.name}: {redact(check.summary)}", file=out)
    for line in check.details:
        print(f"      {redact(line)}", file=out)
    if check.fix and check.status in (FAIL, WARN):
        print(f"      -> {redact(check.fix)}", file=out)
    out.flush()


# -------------------------------------------------------------------------- PostgreSQL store


def check_postgres_store(url: str) -> Check:
    """TRIAGE_DB=postgresql://…: connect, read the schema version and the job counts, and try a
    write that is rolled back (doctor changes nothing; migrations run when `serve` starts)."""
    try:
        import psycopg

        from bot.config.redact import redact_url
        from bot.store.postgres import PgStore
    except ImportError as exc:
        return Check("store", FAIL, f"PostgreSQL driver missing: {exc}", fix="pip install psycopg")
    where = redact_url(url)
    latest = PgStore.latest_version()
    try:
        with psycopg.connect(url, connect_timeout=5) as conn:
            if conn.execute("SELECT to_regclass('schema_version')").fetchone()[0] is None:
                return Check(
                    "store",
                    OK,
                    f"{where}: connected; no schema yet, created (schema {latest}) at first start",
                )
            row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
            version = int(row[0] or 0)
            if version > latest:
                return Check(
                    "store",
                    FAIL,
                    f"{where} has schema {version}, newer than this version knows ({latest})",
                    fix="run the newer triage-bot on every replica, or restore a backup",
                )
            if version < latest:
                return Check(
                    "store",
                    WARN,
                    f"{where}: schema {version}, {latest - version} migration(s) pending",
                    ["the first replica to start applies them (once, under an advisory lock)"],
                )
            rows = conn.execute("SELECT state, COUNT(*) FROM jobs GROUP BY state").fetchall()
            counts = dict(rows)
            conn.execute(
                "INSERT INTO cursors (name, value, updated_at) VALUES ('_doctor', 'ok', 0)"
                " ON CONFLICT (name) DO NOTHING"
            )
            conn.rollback()
    except psycopg.Error as exc:
        return Check(
            "store",
            FAIL,
            f"{where}: {str(exc).strip().splitlines()[0] if str(exc).strip() else exc}",
            fix="check that PostgreSQL runs and TRIAGE_DB's host, port, user, password and "
            "database are right (and the user may create tables in its schema)",
        )
    details = [
        f"jobs: {counts.get('queued', 0)} queued, {counts.get('running', 0)} running, "
        f"{counts.get('dead', 0)} dead"
    ]
    return Check("store", OK, f"{where}: PostgreSQL, schema {version} (current), writable", details)


# ---------------------------------------------------------------------------------- settings


def collect_settings(
    environ: Mapping[str, str], env_file: str | Path | None, *, required: bool = False
) -> tuple[Any, list]:
    """The settings, and every problem in them: a bad setting is reported and then dropped, so
    the next one is found too, and the other checks run on what is usable. `required`: the
    env file was named by the user, so its absence is a problem, not the usual no-.env case."""
    from bot.config.settings import NAMES, Settings, SettingsError, read_env_file

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


def check_settings(settings: Any, problems: list[str]) -> Check:
    from bot.config.settings import NAMES, SECRET_NAMES

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
    if (
        not settings.github_enabled
        and not settings.discord_enabled
        and not reported & credentials  # a bad credential is already named
    ):
        problems.append(
            "nothing to serve: neither GitHub (GITHUB_TOKEN, or GITHUB_APP_ID with its private "
            "key) nor Discord (DISCORD_TOKEN) is configured"
        )
    if settings.github_enabled and not settings.github_webhook_secrets:
        warnings.append(
            "GITHUB_WEBHOOK_SECRET is not set: `triage-bot serve` refuses to start for GitHub "
            "(`poll` and the GitHub Action do not need it)"
        )
    for secret in settings.github_webhook_secrets:
        if len(secret) < 16:
            warnings.append(
                "GITHUB_WEBHOOK_SECRET is short (under 16 characters): use a random one, e.g. "
                "`python -c 'import secrets; print(secrets.token_hex(32))'`"
            )
            break
    if settings.discord_enabled and not settings.discord_channel_ids:
        warnings.append(
            "DISCORD_CHANNEL_IDS is empty: the bot answers only /panic, /error and the message "
            "menu, never pasted panics unasked"
        )
    if not settings.discord_enabled and settings.discord_channel_ids:
        warnings.append("DISCORD_CHANNEL_IDS is set but DISCORD_TOKEN is not: Discord stays off")
    if settings.triage_dry_run:
        warnings.append("TRIAGE_DRY_RUN is on: the bot logs what it would write and writes nothing")
    from bot.config.settings import WILDCARD_HOSTS

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


def check_config(settings: Any) -> Check:
    from bot.config.settings import SettingsError
    from bot.github.labels import load_label_config

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


# ---------------------------------------------------------------------------------- catalog


def check_catalog(settings: Any) -> Check:
    from bot.app import Triage
    from bot.catalog.lint import WARNING, lint_catalog
    from bot.catalog.loader import CatalogError, bundled_catalog_path

    custom = settings.triage_catalog is not None
    path = settings.triage_catalog if custom else bundled_catalog_path()
    label = f"TRIAGE_CATALOG {path}" if custom else f"bundled catalog ({path})"
    try:
        # The catalog with the index and history the bot builds at start-up.
        catalog = Triage.from_paths([path] if custom else None).catalog
    except CatalogError as exc:
        shown = [str(p) for p in exc.problems[:SHOWN_PROBLEMS]]
        if len(exc.problems) > SHOWN_PROBLEMS:
            shown.append(f"... and {len(exc.problems) - SHOWN_PROBLEMS} more")
        return Check(
            "catalog",
            FAIL,
            f"{label}: {len(exc.problems)} problem(s); the catalog cannot be used",
            shown,
            f"run `triage-bot catalog validate {path}` and fix each problem"
            + (", or unset TRIAGE_CATALOG to use the bundled catalog" if custom else ""),
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


# ---------------------------------------------------------------------------------- store


def _schema_version(path: Path) -> int:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    try:
        has = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
        ).fetchone()
        if not has:
            return 0
        return int(conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] or 0)
    finally:
        conn.close()


def _writable_dir(folder: Path) -> bool:
    while not folder.exists():  # the bot creates missing folders
        if folder.parent == folder:
            return False
        folder = folder.parent
    return folder.is_dir() and os.access(folder, os.W_OK | os.X_OK)


def check_store(settings: Any) -> Check:
    from bot.store.open import StoreUnusable, open_store
    from bot.store.sqlite import Store

    if settings.triage_db_url:
        return check_postgres_store(settings.triage_db_url)
    path = Path(settings.triage_db)
    latest = Store.latest_version()
    if not path.exists():
        if _writable_dir(path.parent):
            return Check(
                "store",
                OK,
                f"{path} does not exist yet; it is created (schema {latest}) at first start",
            )
        return Check(
            "store",
            FAIL,
            f"{path} cannot be created: {path.parent} is not writable",
            fix=f"make {path.parent} writable by the bot's user, or point TRIAGE_DB elsewhere",
        )
    try:
        version = _schema_version(path)
    except sqlite3.Error as exc:
        return Check(
            "store",
            FAIL,
            f"{path} is not a readable SQLite database: {exc}",
            fix="point TRIAGE_DB at the bot's store, or move this file away to start afresh",
        )
    if version > latest:
        return Check(
            "store",
            FAIL,
            f"{path} has schema {version}, newer than this version knows ({latest})",
            fix="run the newer triage-bot that wrote it, or restore a backup of the store",
        )
    if not os.access(path, os.W_OK) or not _writable_dir(path.parent):
        return Check(
            "store",
            FAIL,
            f"{path} is not writable (the file and its folder must be, for the WAL journal)",
            fix=f"give the bot's user write access to {path} and {path.parent}",
        )
    if version < latest:
        return Check(
            "store",
            WARN,
            f"{path}: schema {version}, {latest - version} migration(s) pending",
            ["they are applied when the bot next starts; the data is kept"],
            f"back up {path} first if you want to be able to go back to the previous version",
        )
    try:
        with open_store(settings) as store:
            store.check_writable()
            counts = store.job_counts()
    except StoreUnusable as exc:  # damaged, locked: the line names the file and what to do
        return Check("store", FAIL, str(exc))
    except sqlite3.Error as exc:
        return Check(
            "store",
            FAIL,
            f"{path} cannot be written: {exc}",
            fix=f"give the bot's user write access to {path} and {path.parent}; "
            "stop any other process holding a write lock on it",
        )
    details = [
        f"jobs: {counts['queued']} queued, {counts['running']} running, {counts['dead']} dead"
    ]
    if counts["dead"]:
        return Check(
            "store",
            WARN,
            f"{path}: schema {version} (current), writable",
            details,
            "`triage-bot jobs list` shows the dead-lettered jobs; `triage-bot jobs retry --all` "
            "replays them",
        )
    return Check("store", OK, f"{path}: schema {version} (current), writable", details)


# ---------------------------------------------------------------------------------- GitHub


def _listed(names: Sequence[str]) -> str:
    shown = ", ".join(names[:SHOWN_REPOS])
    more = f" and {len(names) - SHOWN_REPOS} more" if len(names) > SHOWN_REPOS else ""
    return (shown + more) or "none"


def _github_error(exc: Exception) -> str:
    from github import GithubException

    if isinstance(exc, GithubException):
        message = exc.data.get("message") if isinstance(exc.data, dict) else exc.data
        return f"{exc.status} {message}".strip()
    return f"{type(exc).__name__}: {exc}"


def check_github(settings: Any, repos: Sequence[str] = ()) -> Check:
    if not settings.github_enabled:
        return Check("github", SKIP, "not configured (no GITHUB_TOKEN or GITHUB_APP_ID)")
    from bot.github.auth import ClientOptions, GitHubClients

    options = ClientOptions(timeout=NETWORK_TIMEOUT, seconds_between_writes=0.0)
    clients = GitHubClients(settings, options)
    try:
        if clients.mode == "app":
            return _check_app(clients, settings, repos)
        return _check_token(clients, settings, repos)
    except Exception as exc:
        from github import GithubException

        if isinstance(exc, GithubException):
            summary = _github_error(exc)
        else:
            summary = f"cannot reach {settings.github_api_url}: {type(exc).__name__}: {exc}"
        return Check(
            "github",
            FAIL,
            summary,
            fix=f"check GITHUB_API_URL ({settings.github_api_url}) and the network",
        )
    finally:
        clients.close()


def _check_token(clients: Any, settings: Any, repos: Sequence[str]) -> Check:
    from github import GithubException

    gh = clients.client("")
    details: list[str] = []
    problems: list[str] = []
    installation_repos: list[str] | None = None
    try:
        login = gh.get_user().login
        scopes = gh.oauth_scopes
        identity = f"token of {login}"
        if scopes is None:
            details.append(
                "a fine-grained token (GitHub does not list its permissions): it needs Issues: "
                "Read and write and Metadata: Read on each repository"
            )
        else:
            details.append("classic token scopes: " + (", ".join(scopes) or "(none)"))
            if not {"repo", "public_repo"} & set(scopes):
                problems.append(
                    "the token has neither the `repo` nor the `public_repo` scope, so it cannot "
                    "comment or label"
                )
    except GithubException as exc:
        if exc.status == 401:
            return Check(
                "github",
                FAIL,
                f"GITHUB_TOKEN is rejected: {_github_error(exc)}",
                fix="create a new token (fine-grained: Issues read and write, Metadata read) "
                "and set GITHUB_TOKEN to it",
            )
        if exc.status != 403:
            raise
        # an installation token (the Action's GITHUB_TOKEN) may not read /user
        _, data = gh.requester.requestJsonAndCheck(
            "GET", "/installation/repositories", parameters={"per_page": 100}
        )
        installation_repos = [r["full_name"] for r in data.get("repositories", [])]
        identity = "an installation token (e.g. a workflow's GITHUB_TOKEN)"
        details.append(
            f"repositories ({data.get('total_count', len(installation_repos))}): "
            + _listed(installation_repos)
        )
    for name in repos:
        problem = _check_repo(gh, name, installation_repos)
        if problem:
            problems.append(problem)
        else:
            details.append(f"{name}: reachable")
    if problems:
        return Check(
            "github",
            FAIL,
            f"{identity}: {len(problems)} problem(s)",
            details + [f"problem: {p}" for p in problems],
            "give the token access to the repositories with Issues: Read and write (or the "
            "`repo`/`public_repo` scope for a classic token)",
        )
    return Check("github", OK, identity, details)


def _check_repo(gh: Any, name: str, visible: Sequence[str] | None) -> str | None:
    from github import GithubException

    if visible is not None and name.lower() not in {v.lower() for v in visible}:
        return f"{name}: not among the repositories this identity can reach"
    try:
        repo = gh.get_repo(name)
        permissions = repo.raw_data.get("permissions")
    except GithubException as exc:
        return f"{name}: {_github_error(exc)} (the identity cannot see it)"
    if isinstance(permissions, dict) and not (
        permissions.get("push") or permissions.get("triage") or permissions.get("maintain")
    ):
        return f"{name}: read-only access (labels need at least triage access)"
    return None


def _check_app(clients: Any, settings: Any, repos: Sequence[str]) -> Check:
    from github import GithubException

    integration = clients.integration()
    try:
        app = integration.get_app()
    except GithubException as exc:
        if exc.status == 401:
            return Check(
                "github",
                FAIL,
                f"the App's credentials are rejected: {_github_error(exc)}",
                fix="check GITHUB_APP_ID (App settings, 'App ID') and that the private key is "
                "one of the App's current keys (App settings -> Private keys)",
            )
        raise
    permissions = dict(app.permissions or {})
    events = list(app.events or [])
    name = app.name or app.slug
    details = [
        "permissions: " + ", ".join(f"{k}={v}" for k, v in sorted(permissions.items())),
        "events: " + (", ".join(sorted(events)) or "(none)"),
    ]
    problems: list[str] = []
    fixes: list[str] = []
    if permissions.get("issues") != "write":
        problems.append(f"Issues permission is {permissions.get('issues', 'none')}, not write")
    if permissions.get("metadata") not in ("read", "write"):
        problems.append("Metadata permission is missing (read is needed)")
    missing_events = [e for e in ("issues", "issue_comment") if e not in events]
    if missing_events:
        problems.append("not subscribed to " + ", ".join(missing_events))
    if problems:
        fixes.append(
            "in the App's settings -> Permissions & events set Issues: Read and write, "
            "Metadata: Read, and subscribe to Issues and Issue comment"
        )
    installations = list(integration.get_installations())
    every_repo: list[str] = []
    for inst in installations:
        account = inst.raw_data.get("account", {}).get("login", "?")
        granted = dict(inst.raw_data.get("permissions") or {})
        names = [r.full_name for r in inst.get_repos()]
        every_repo.extend(names)
        details.append(f"installation {inst.id} on {account}: {_listed(names)}")
        if granted.get("issues") != "write" and permissions.get("issues") == "write":
            problems.append(f"installation {inst.id} on {account} has not granted Issues: write")
            fixes.append(
                f"an owner of {account} must accept the App's new permissions (Settings -> "
                "GitHub Apps -> Configure -> Review request)"
            )
    if not installations:
        problems.append("the App is not installed anywhere")
        fixes.append(f"install it on your repositories: the App's page -> Install ({app.html_url})")
    for repo in repos:
        if repo.lower() not in {r.lower() for r in every_repo}:
            problems.append(f"{repo}: the App is not installed on it")
            fixes.append(f"add {repo} to the App's installation (Configure -> Repository access)")
    summary = f"App {name} (id {settings.github_app_id}), {len(installations)} installation(s)"
    if problems:
        return Check(
            "github",
            FAIL,
            f"{summary}: {len(problems)} problem(s)",
            details + [f"problem: {p}" for p in problems],
            "; ".join(dict.fromkeys(fixes)),
        )
    return Check("github", OK, summary, details)


# ---------------------------------------------------------------------------------- Discord


def _discord_get(base: str, path: str, token: str) -> tuple[int, Any]:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(
        base.rstrip("/") + path,
        headers={
            "Authorization": f"Bot {token}",
            "User-Agent": "DiscordBot (https://github.com/tracel-ai/panic-triage, 0.1) doctor",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=NETWORK_TIMEOUT) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        body = exc.read()
        try:
            return exc.code, json.loads(body or b"null")
        except ValueError:
            return exc.code, body.decode(errors="replace")


def check_discord(settings: Any) -> Check:
    if not settings.discord_enabled:
        return Check("discord", SKIP, "not configured (no DISCORD_TOKEN)")
    base = DISCORD_API_BASE
    if base is None:
        import discord.http

        base = discord.http.Route.BASE
    try:
        status, me = _discord_get(base, "/users/@me", settings.discord_token)
    except OSError as exc:
        return Check(
            "discord",
            FAIL,
            f"cannot reach {base}: {exc}",
            fix="check the network (the bot needs HTTPS to discord.com and its gateway)",
        )
    if status == 401:
        return Check(
            "discord",
            FAIL,
            "DISCORD_TOKEN is rejected (401 Unauthorized)",
            fix="reset the token in the developer portal (Bot -> Reset Token) and set "
            "DISCORD_TOKEN to the new one",
        )
    if status != 200 or not isinstance(me, dict):
        return Check("discord", FAIL, f"GET /users/@me answered {status}: {me}")
    name = me.get("username", "?")
    details = [f"watching {len(settings.discord_channel_ids)} channel(s)"]
    if not me.get("bot"):
        return Check(
            "discord",
            FAIL,
            f"DISCORD_TOKEN belongs to {name}, a user account, not a bot",
            fix="use the token from the application's Bot page",
        )
    status, app = _discord_get(base, "/oauth2/applications/@me", settings.discord_token)
    summary = f"logged in as {name} (id {me.get('id')})"
    if status == 200 and isinstance(app, dict):
        flags = int(app.get("flags") or 0)
        if not flags & MESSAGE_CONTENT_FLAGS:
            return Check(
                "discord",
                FAIL,
                f"{summary}, but the Message Content intent is off",
                details,
                "switch on Message Content Intent in the developer portal (Bot -> Privileged "
                "Gateway Intents); without it Discord refuses the bot's connection",
            )
        details.append("Message Content intent: on")
    return Check("discord", OK, summary, details)
