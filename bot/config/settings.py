"""Typed settings from the environment and a `.env` file, validated once at start-up.

The environment wins over `.env`. A missing or invalid setting raises `SettingsError`, whose
message names the setting and says what is expected; commands print it and stop.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from bot.config.env import SettingsError, catalog_paths, read_env_file
from bot.config.redact import redact_url

DEFAULT_API_URL = "https://api.github.com"
DEFAULT_DB = "triage-bot.sqlite3"
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
TRUE = frozenset({"1", "true", "yes", "on"})
FALSE = frozenset({"0", "false", "no", "off", ""})

# Every setting the bot reads, for `.env.example`, doctor and the README.
NAMES = (
    "GITHUB_TOKEN",
    "GITHUB_APP_ID",
    "GITHUB_APP_PRIVATE_KEY",
    "GITHUB_APP_PRIVATE_KEY_PATH",
    "GITHUB_WEBHOOK_SECRET",
    "GITHUB_API_URL",
    "DISCORD_TOKEN",
    "DISCORD_CHANNEL_IDS",
    "DISCORD_GUILD_ID",
    "DISCORD_EDIT_DEBOUNCE",
    "TRIAGE_DB",
    "TRIAGE_JOB_LEASE",
    "TRIAGE_DEGRADED_AGE",
    "TRIAGE_BOT_LOGIN",
    "TRIAGE_CATALOG",
    "TRIAGE_DRY_RUN",
    "TRIAGE_ANSWER_PULLS",
    "TRIAGE_CONFIG",
    "LOG_LEVEL",
    "TRIAGE_REPOS",
    "TRIAGE_STATS_TOKEN",
    "TRIAGE_HOST",
    "TRIAGE_READ_TIMEOUT",
    "TRIAGE_DISCORD_ANSWER_DEADLINE",
    "TRIAGE_PAGES",
    "TRIAGE_PUBLIC_URL",
    "TRIAGE_LLM_BASE_URL",
    "TRIAGE_LLM_MODEL",
    "TRIAGE_LLM_API_KEY",
)
SECRET_NAMES = frozenset(
    {
        "GITHUB_TOKEN",
        "GITHUB_APP_PRIVATE_KEY",
        "GITHUB_WEBHOOK_SECRET",
        "DISCORD_TOKEN",
        "TRIAGE_LLM_API_KEY",
        "TRIAGE_STATS_TOKEN",
    }
)
MIN_WEBHOOK_SECRET = 16  # characters; `serve` refuses shorter webhook secrets
DEFAULT_HOST = "127.0.0.1"  # `serve` listens on loopback unless told otherwise
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", "*", ""})
_OWNER = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})")
_NAME = re.compile(r"[A-Za-z0-9._-]{1,100}")
_PUBLIC_URL = re.compile(r"https?://[^\s/?#]+(?:/[^\s?#]*)?")


def valid_full_name(full_name: object) -> bool:
    """`owner/name` as GitHub spells repositories: one slash, no `.`/`..` segments."""
    if not isinstance(full_name, str) or full_name.count("/") != 1:
        return False
    owner, name = full_name.split("/")
    return bool(_OWNER.fullmatch(owner) and _NAME.fullmatch(name)) and name not in (".", "..")


@dataclass(frozen=True)
class Settings:
    github_token: str | None = None
    github_app_id: int | None = None
    github_app_private_key: str | None = field(default=None, repr=False)
    github_webhook_secrets: tuple[str, ...] = field(default=(), repr=False)
    github_api_url: str = DEFAULT_API_URL
    discord_token: str | None = field(default=None, repr=False)
    discord_channel_ids: frozenset[int] = frozenset()
    discord_guild_id: int | None = None
    discord_edit_debounce: float = 2.0  # seconds an edit waits for the next before it is followed
    triage_db: Path = Path(DEFAULT_DB)
    # TRIAGE_DB=postgresql://…: the shared PostgreSQL store (may hold a password: not shown)
    triage_db_url: str | None = field(default=None, repr=False)
    triage_job_lease: float = 30.0
    # /healthz says "degraded" when the oldest queued job, or GitHub's refusal of writes, is older
    triage_degraded_age: float = 120.0
    # the login the bot writes as, where it cannot be asked (a personal token); None: ask GitHub
    triage_bot_login: str | None = None
    # TRIAGE_CATALOG=a,b: several catalogs, the first one's project is the own one (issue 25)
    triage_catalog: tuple[Path, ...] = ()
    triage_dry_run: bool = False
    # answer panics quoted in pull requests (their authors usually fix what they quote)
    triage_answer_pulls: bool = False
    triage_config: Path | None = None
    log_level: str = "INFO"
    # repositories (`owner/name`) or owners (`owner`) the bot may act on; empty: anywhere
    triage_repos: tuple[str, ...] = ()
    triage_stats_token: str | None = field(default=None, repr=False)
    triage_host: str = DEFAULT_HOST
    # seconds a webhook request may take to send its headers and its body (then 408)
    triage_read_timeout: float = 10.0
    # seconds a Discord answer may wait for Discord (429s, 5xx) before it is dropped
    triage_discord_answer_deadline: float = 120.0
    # the catalog's pages (/, /errors, /api/...) in `serve`; TRIAGE_PAGES=0 switches them off
    triage_pages: bool = True
    # the pages' public base (https://errors.example.org): answers link "Full write-up" there
    triage_public_url: str | None = None
    # `catalog explain`: an OpenAI-compatible chat-completions server, its model and key
    triage_llm_base_url: str | None = None
    triage_llm_model: str | None = None
    triage_llm_api_key: str | None = field(default=None, repr=False)

    def repo_allowed(self, full_name: str) -> bool:
        """True when TRIAGE_REPOS is empty or lists the repository or its owner."""
        if not self.triage_repos:
            return True
        key = full_name.lower()
        return key in self.triage_repos or key.split("/", 1)[0] in self.triage_repos

    def describe(self) -> str:
        """The settings a log line names, in words (no secret): `GitHub token, Discord off,
        store triage-bot.sqlite3`."""
        github = {"app": "GitHub App", "token": "GitHub token"}.get(self.github_auth or "")
        parts = [
            github or "GitHub off",
            "Discord on" if self.discord_enabled else "Discord off",
            f"store {self.store_description}",
        ]
        if self.triage_dry_run:
            parts.append("dry run")
        return ", ".join(parts)

    def __repr__(self) -> str:  # never print secrets
        shown = {
            "github_auth": self.github_auth,
            "github_api_url": self.github_api_url,
            "webhook_secrets": len(self.github_webhook_secrets),
            "discord": bool(self.discord_token),
            "triage_db": self.store_description,
            "dry_run": self.triage_dry_run,
        }
        return f"Settings({shown})"

    @property
    def github_auth(self) -> str | None:
        """ "app", "token", or None when GitHub is not configured."""
        if self.github_app_id is not None:
            return "app"
        if self.github_token:
            return "token"
        return None

    @property
    def store_location(self) -> str | Path:
        """What `bot.store.open.open_store` opens: the PostgreSQL URL, else the SQLite file."""
        return self.triage_db_url or self.triage_db

    @property
    def store_description(self) -> str:
        """The store for messages: the SQLite path, or the PostgreSQL URL without a password."""
        if self.triage_db_url:
            return redact_url(self.triage_db_url)
        return str(self.triage_db)

    @property
    def github_enabled(self) -> bool:
        return self.github_auth is not None

    @property
    def discord_enabled(self) -> bool:
        return bool(self.discord_token)

    def require_github(self, *, webhook: bool = False) -> None:
        """Stop with a message naming what is missing for the GitHub side."""
        if not self.github_enabled:
            raise SettingsError(
                "GITHUB_TOKEN (a token) or GITHUB_APP_ID with GITHUB_APP_PRIVATE_KEY or "
                "GITHUB_APP_PRIVATE_KEY_PATH (a GitHub App) must be set",
                ("GITHUB_TOKEN", "GITHUB_APP_ID"),
            )
        if webhook and not self.github_webhook_secrets:
            raise SettingsError(
                "GITHUB_WEBHOOK_SECRET must be set to receive webhooks (the secret configured "
                "on the GitHub webhook or App; several may be given, comma-separated)",
                ("GITHUB_WEBHOOK_SECRET",),
            )
        if webhook:
            self.require_strong_webhook_secrets()

    def require_serve(self) -> None:
        """What `serve` needs (doctor asks the same): GitHub with its webhook secret, or
        Discord, or the catalog's pages (on by default: then `serve` runs with the adapters
        that lack credentials off); SettingsError naming what is missing."""
        if self.github_enabled:
            self.require_github(webhook=True)
        elif not self.discord_enabled and not self.triage_pages:
            raise SettingsError(
                "nothing to serve: set GITHUB_TOKEN or GITHUB_APP_ID (with "
                "GITHUB_WEBHOOK_SECRET) for GitHub, and/or DISCORD_TOKEN for Discord, or leave "
                "TRIAGE_PAGES on for the catalog's pages",
                ("GITHUB_TOKEN", "GITHUB_APP_ID", "DISCORD_TOKEN", "TRIAGE_PAGES"),
            )

    def adapters_off(self) -> list[str]:
        """The adapters `serve` leaves off for want of credentials, each with why, in words."""
        off = []
        if not self.github_enabled:
            off.append("GitHub: off (no GITHUB_TOKEN or GITHUB_APP_ID set)")
        if not self.discord_enabled:
            off.append("Discord: off (no DISCORD_TOKEN set)")
        return off

    def require_strong_webhook_secrets(self) -> None:
        """Stop when a webhook secret is too short to keep forged deliveries out."""
        if any(len(s) < MIN_WEBHOOK_SECRET for s in self.github_webhook_secrets):
            raise SettingsError(
                f"GITHUB_WEBHOOK_SECRET: every secret must have at least {MIN_WEBHOOK_SECRET} "
                "characters (make one with `python -c 'import secrets; "
                "print(secrets.token_hex(32))'` and set it on GitHub too)",
                ("GITHUB_WEBHOOK_SECRET",),
            )

    @classmethod
    def load(
        cls,
        environ: Mapping[str, str] | None = None,
        env_file: str | Path | None = ".env",
    ) -> Settings:
        """Read the settings from `environ` (default os.environ) over the `.env` file. An
        unreadable `.env` (no permission, not text) is a SettingsError too."""
        values: dict[str, str] = {}
        if env_file is not None and Path(env_file).is_file():
            try:
                values.update(read_env_file(env_file))
            except (OSError, UnicodeDecodeError) as exc:
                raise SettingsError(f"{env_file} cannot be read: {exc}") from exc
        values.update(os.environ if environ is None else environ)
        return cls.from_mapping(values)

    @classmethod
    def from_mapping(cls, values: Mapping[str, str]) -> Settings:
        def get(name: str) -> str | None:
            raw = values.get(name)
            if raw is None:
                return None
            raw = raw.strip()
            return raw or None

        token = get("GITHUB_TOKEN")
        app_id = _int(get("GITHUB_APP_ID"), "GITHUB_APP_ID", positive=True)
        key = values.get("GITHUB_APP_PRIVATE_KEY") or None
        key_path = get("GITHUB_APP_PRIVATE_KEY_PATH")
        if key and "\\n" in key and "\n" not in key:
            key = key.replace("\\n", "\n")  # a PEM written on one line in .env
        if app_id is not None:
            if token:
                raise SettingsError(
                    "GITHUB_TOKEN and GITHUB_APP_ID are both set: use a token or an App, not both",
                    ("GITHUB_TOKEN", "GITHUB_APP_ID"),
                )
            if key and key_path:
                raise SettingsError(
                    "GITHUB_APP_PRIVATE_KEY and GITHUB_APP_PRIVATE_KEY_PATH are both set: use one",
                    ("GITHUB_APP_PRIVATE_KEY", "GITHUB_APP_PRIVATE_KEY_PATH"),
                )
            if key_path:
                path = Path(key_path).expanduser()
                try:
                    key = path.read_text()
                except OSError as exc:
                    raise SettingsError(
                        f"GITHUB_APP_PRIVATE_KEY_PATH: cannot read {path}: {exc.strerror or exc}",
                        ("GITHUB_APP_PRIVATE_KEY_PATH",),
                    ) from exc
            if not key:
                raise SettingsError(
                    "GITHUB_APP_ID is set but GITHUB_APP_PRIVATE_KEY or "
                    "GITHUB_APP_PRIVATE_KEY_PATH is missing (the App's private key, PEM)",
                    ("GITHUB_APP_PRIVATE_KEY", "GITHUB_APP_PRIVATE_KEY_PATH"),
                )
            if "PRIVATE KEY" not in key:
                raise SettingsError(
                    "GITHUB_APP_PRIVATE_KEY: not a PEM private key "
                    "(expected '-----BEGIN RSA PRIVATE KEY-----')",
                    ("GITHUB_APP_PRIVATE_KEY",),
                )
        elif key or key_path:
            raise SettingsError(
                "GITHUB_APP_PRIVATE_KEY(_PATH) is set but GITHUB_APP_ID is missing",
                ("GITHUB_APP_ID",),
            )

        secrets = tuple(s.strip() for s in (get("GITHUB_WEBHOOK_SECRET") or "").split(","))
        secrets = tuple(s for s in secrets if s)

        api_url = (get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/")
        parsed = urlparse(api_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise SettingsError(
                f"GITHUB_API_URL: {api_url!r} is not an http(s) URL "
                f"(default {DEFAULT_API_URL}; GitHub Enterprise: https://HOST/api/v3)",
                ("GITHUB_API_URL",),
            )

        channel_ids: list[int] = []
        for part in (get("DISCORD_CHANNEL_IDS") or "").split(","):
            if part.strip():
                value = _int(part.strip(), "DISCORD_CHANNEL_IDS", positive=True)
                assert value is not None
                channel_ids.append(value)
        guild_id = _int(get("DISCORD_GUILD_ID"), "DISCORD_GUILD_ID", positive=True)
        debounce_raw = get("DISCORD_EDIT_DEBOUNCE") or "2"
        try:
            edit_debounce = float(debounce_raw)
        except ValueError:
            edit_debounce = -1.0
        if not 0 <= edit_debounce <= 60:
            raise SettingsError(
                f"DISCORD_EDIT_DEBOUNCE: {debounce_raw!r} is not a number of seconds from 0 to 60",
                ("DISCORD_EDIT_DEBOUNCE",),
            )

        catalogs = catalog_paths(get("TRIAGE_CATALOG"))
        config = get("TRIAGE_CONFIG")
        if config is not None and not Path(config).expanduser().is_file():
            raise SettingsError(
                f"TRIAGE_CONFIG: {config} is not a file (a TOML file such as triage-bot.toml)",
                ("TRIAGE_CONFIG",),
            )

        dry = (get("TRIAGE_DRY_RUN") or "").lower()
        if dry not in TRUE | FALSE:
            raise SettingsError(
                f"TRIAGE_DRY_RUN: {dry!r} is not a boolean (use 1 or 0)", ("TRIAGE_DRY_RUN",)
            )
        level = log_level(get("LOG_LEVEL"))

        repos: list[str] = []
        for part in re.split(r"[,\s]+", get("TRIAGE_REPOS") or ""):
            if not part:
                continue
            if not (valid_full_name(part) or _OWNER.fullmatch(part)):
                raise SettingsError(
                    f"TRIAGE_REPOS: {part!r} is not OWNER/NAME or OWNER "
                    "(comma-separated, e.g. acme/engine,my-org)",
                    ("TRIAGE_REPOS",),
                )
            repos.append(part.lower())
        host = get("TRIAGE_HOST") or DEFAULT_HOST
        db = get("TRIAGE_DB") or DEFAULT_DB
        db_url = db if db.startswith(("postgresql://", "postgres://")) else None
        lease_raw = get("TRIAGE_JOB_LEASE") or "30"
        try:
            job_lease = float(lease_raw)
        except ValueError:
            job_lease = -1.0
        if not 0 < job_lease <= 86400:
            raise SettingsError(
                f"TRIAGE_JOB_LEASE: {lease_raw!r} is not a number of seconds between 0 and 86400 "
                "(how long a replica keeps a job without renewing its lease; default 30)",
                ("TRIAGE_JOB_LEASE",),
            )
        degraded_raw = get("TRIAGE_DEGRADED_AGE") or "120"
        try:
            degraded_age = float(degraded_raw)
        except ValueError:
            degraded_age = -1.0
        if not 0 < degraded_age <= 86400:
            raise SettingsError(
                f"TRIAGE_DEGRADED_AGE: {degraded_raw!r} is not a number of seconds between 0 and "
                "86400 (how old the oldest job may get before /healthz says degraded; default 120)",
                ("TRIAGE_DEGRADED_AGE",),
            )

        read_timeout = _seconds(
            get("TRIAGE_READ_TIMEOUT"),
            "TRIAGE_READ_TIMEOUT",
            10.0,
            "how long a webhook request may take to send its headers and body",
        )
        answer_deadline = _seconds(
            get("TRIAGE_DISCORD_ANSWER_DEADLINE"),
            "TRIAGE_DISCORD_ANSWER_DEADLINE",
            120.0,
            "how long a Discord answer is retried before it is dropped",
        )
        pulls = (get("TRIAGE_ANSWER_PULLS") or "0").strip().lower()
        if pulls not in TRUE | FALSE:
            raise SettingsError(
                f"TRIAGE_ANSWER_PULLS: {pulls!r} is not 1 or 0 (whether pull requests are "
                "answered)",
                ("TRIAGE_ANSWER_PULLS",),
            )
        pages_raw = (get("TRIAGE_PAGES") or "1").strip().lower()
        if pages_raw not in TRUE | FALSE:
            raise SettingsError(
                f"TRIAGE_PAGES: {pages_raw!r} is not 1 or 0 (the catalog's pages in serve)",
                ("TRIAGE_PAGES",),
            )
        pages = pages_raw in TRUE
        public_url = (get("TRIAGE_PUBLIC_URL") or "").strip().rstrip("/") or None
        if public_url is not None and not _PUBLIC_URL.fullmatch(public_url):
            raise SettingsError(
                f"TRIAGE_PUBLIC_URL: {public_url!r} is not an http(s) URL (the pages' public "
                "base, e.g. https://errors.example.org)",
                ("TRIAGE_PUBLIC_URL",),
            )

        llm_url = (get("TRIAGE_LLM_BASE_URL") or "").strip().rstrip("/") or None
        if llm_url is not None and not _PUBLIC_URL.fullmatch(llm_url):
            raise SettingsError(
                f"TRIAGE_LLM_BASE_URL: {llm_url!r} is not an http(s) URL (the chat-completions "
                "server's base, e.g. http://127.0.0.1:8000/v1)",
                ("TRIAGE_LLM_BASE_URL",),
            )

        return cls(
            github_token=token,
            github_app_id=app_id,
            github_app_private_key=key if app_id is not None else None,
            github_webhook_secrets=secrets,
            github_api_url=api_url,
            discord_token=get("DISCORD_TOKEN"),
            discord_channel_ids=frozenset(channel_ids),
            discord_guild_id=guild_id,
            triage_db=Path(DEFAULT_DB if db_url else db).expanduser(),
            triage_db_url=db_url,
            triage_job_lease=job_lease,
            triage_degraded_age=degraded_age,
            triage_bot_login=get("TRIAGE_BOT_LOGIN"),
            discord_edit_debounce=edit_debounce,
            triage_catalog=catalogs,
            triage_dry_run=dry in TRUE,
            triage_answer_pulls=pulls in TRUE,
            triage_config=Path(config).expanduser() if config else None,
            log_level=level,
            triage_repos=tuple(repos),
            triage_stats_token=get("TRIAGE_STATS_TOKEN"),
            triage_host=host,
            triage_read_timeout=read_timeout,
            triage_discord_answer_deadline=answer_deadline,
            triage_pages=pages,
            triage_public_url=public_url,
            triage_llm_base_url=llm_url,
            triage_llm_model=(get("TRIAGE_LLM_MODEL") or "").strip() or None,
            triage_llm_api_key=get("TRIAGE_LLM_API_KEY"),
        )


def log_level(raw: str | None) -> str:
    """LOG_LEVEL's level (INFO when unset); SettingsError when it names none."""
    level = (raw or "INFO").strip().upper()
    if level not in LOG_LEVELS:
        raise SettingsError(
            f"LOG_LEVEL: {level!r} is not one of {', '.join(LOG_LEVELS)}", ("LOG_LEVEL",)
        )
    return level


def _seconds(raw: str | None, name: str, default: float, meaning: str) -> float:
    """A number of seconds in (0, 86400]; SettingsError naming the setting otherwise."""
    try:
        value = float(raw) if raw else default
    except ValueError:
        value = -1.0
    if not 0 < value <= 86400:
        raise SettingsError(
            f"{name}: {raw!r} is not a number of seconds between 0 and 86400 "
            f"({meaning}; default {default:g})",
            (name,),
        )
    return value


def _int(raw: str | None, name: str, *, positive: bool = False) -> int | None:
    if raw is None:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise SettingsError(f"{name}: {raw!r} is not an integer", (name,)) from None
    if positive and value <= 0:
        raise SettingsError(f"{name}: {raw!r} must be a positive integer", (name,))
    return value


def read_triage_config(path: str | Path) -> dict[str, Any]:
    """The TOML file named by TRIAGE_CONFIG, parsed; SettingsError naming it when unreadable."""
    try:
        return tomllib.loads(Path(path).read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(
            f"TRIAGE_CONFIG: cannot read {path}: {exc}", ("TRIAGE_CONFIG",)
        ) from exc


# ---------------------------------------------------------------------------------------------
# Catalog sources (`[catalog_source.<name>]` in TRIAGE_CONFIG): opt-in, one per followed project
# ---------------------------------------------------------------------------------------------

DEFAULT_SOURCE_POLL = 900.0  # seconds between refreshes when no webhook says there is news
_SOURCE_KEYS = frozenset({"catalog", "git_dir", "branch", "tags", "repo", "poll_interval"})


@dataclass(frozen=True)
class CatalogSource:
    name: str
    catalog: Path  # the project's catalog folder (refresh writes there)
    git_dir: Path  # a local clone or mirror the bot keeps and fetches
    branch: str | None = None  # None: the source's HEAD
    tags: str | None = None  # regular expression of release tags; None: vX.Y.Z
    repo: str | None = None  # owner/name; None: from the history file or the remote
    poll_interval: float = DEFAULT_SOURCE_POLL


def catalog_sources_from_dict(data: Mapping[str, Any], source: str) -> tuple[CatalogSource, ...]:
    """The `[catalog_source.<name>]` tables, checked; SettingsError names the bad key."""
    tables = data.get("catalog_source", {})
    where = f"TRIAGE_CONFIG ({source}): catalog_source"
    if not isinstance(tables, Mapping):
        raise SettingsError(f"{where} must be tables [catalog_source.NAME]", ("TRIAGE_CONFIG",))
    out: list[CatalogSource] = []
    for name, table in tables.items():
        here = f"{where}.{name}"
        if not isinstance(table, Mapping):
            raise SettingsError(f"{here} must be a table", ("TRIAGE_CONFIG",))
        unknown = sorted(set(table) - _SOURCE_KEYS)
        if unknown:
            raise SettingsError(
                f"{here}: unknown key {unknown[0]} (known: {', '.join(sorted(_SOURCE_KEYS))})",
                ("TRIAGE_CONFIG",),
            )
        texts: dict[str, str | None] = {}
        for key in ("catalog", "git_dir", "branch", "tags", "repo"):
            value = table.get(key)
            if value is not None and not (isinstance(value, str) and value.strip()):
                raise SettingsError(f"{here}.{key} must be a text", ("TRIAGE_CONFIG",))
            texts[key] = value
        for key in ("catalog", "git_dir"):
            if texts[key] is None:
                raise SettingsError(f"{here}.{key} is required", ("TRIAGE_CONFIG",))
        if texts["tags"] is not None:
            try:
                re.compile(texts["tags"])
            except re.error as exc:
                raise SettingsError(
                    f"{here}.tags is not a regular expression: {exc}", ("TRIAGE_CONFIG",)
                ) from exc
        if texts["repo"] is not None and not valid_full_name(texts["repo"]):
            raise SettingsError(f"{here}.repo must be OWNER/NAME", ("TRIAGE_CONFIG",))
        poll = table.get("poll_interval", DEFAULT_SOURCE_POLL)
        if isinstance(poll, bool) or not isinstance(poll, int | float) or poll < 10:
            raise SettingsError(
                f"{here}.poll_interval must be a number of seconds, at least 10",
                ("TRIAGE_CONFIG",),
            )
        out.append(
            CatalogSource(
                name=str(name),
                catalog=Path(str(texts["catalog"])).expanduser(),
                git_dir=Path(str(texts["git_dir"])).expanduser(),
                branch=texts["branch"],
                tags=texts["tags"],
                repo=texts["repo"],
                poll_interval=float(poll),
            )
        )
    return tuple(out)


def load_catalog_sources(path: str | Path | None) -> tuple[CatalogSource, ...]:
    """The catalog sources of the TRIAGE_CONFIG file (none without one)."""
    if path is None:
        return ()
    return catalog_sources_from_dict(read_triage_config(path), str(path))
