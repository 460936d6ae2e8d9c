"""doctor's GitHub check: who the token is or which App, its permissions and events, which
installations and repositories it reaches (the same endpoints as the bot, GITHUB_API_URL)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from github import GithubException

from bot.cli.doctor.check import FAIL, NETWORK_TIMEOUT, OK, SKIP, Check
from bot.config.settings import Settings
from bot.github.auth import ClientOptions, GitHubClients

SHOWN_REPOS = 10


def _listed(names: Sequence[str]) -> str:
    shown = ", ".join(names[:SHOWN_REPOS])
    more = f" and {len(names) - SHOWN_REPOS} more" if len(names) > SHOWN_REPOS else ""
    return (shown + more) or "none"


def _github_error(exc: Exception) -> str:
    if isinstance(exc, GithubException):
        message = exc.data.get("message") if isinstance(exc.data, dict) else exc.data
        return f"{exc.status} {message}".strip()
    return f"{type(exc).__name__}: {exc}"


def check_github(settings: Settings, repos: Sequence[str] = ()) -> Check:
    if not settings.github_enabled:
        return Check("github", SKIP, "not configured (no GITHUB_TOKEN or GITHUB_APP_ID)")
    options = ClientOptions(timeout=NETWORK_TIMEOUT, seconds_between_writes=0.0)
    clients = GitHubClients(settings, options)
    try:
        if clients.mode == "app":
            return _check_app(clients, settings, repos)
        return _check_token(clients, settings, repos)
    except Exception as exc:
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


def _check_token(clients: GitHubClients, settings: Settings, repos: Sequence[str]) -> Check:
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
    return _outcome(
        identity,
        details,
        problems,
        "give the token access to the repositories with Issues: Read and write (or the "
        "`repo`/`public_repo` scope for a classic token)",
    )


def _check_repo(gh: Any, name: str, visible: Sequence[str] | None) -> str | None:
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


def _check_app(clients: GitHubClients, settings: Settings, repos: Sequence[str]) -> Check:
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
    return _outcome(summary, details, problems, "; ".join(dict.fromkeys(fixes)))


def _outcome(summary: str, details: list[str], problems: list[str], fix: str) -> Check:
    """OK, or FAIL counting the problems in the summary and naming each after the details."""
    if problems:
        return Check(
            "github",
            FAIL,
            f"{summary}: {len(problems)} problem(s)",
            details + [f"problem: {p}" for p in problems],
            fix,
        )
    return Check("github", OK, summary, details)
