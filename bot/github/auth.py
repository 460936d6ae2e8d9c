"""PyGithub clients for the configured identity: a token, or a GitHub App's installations.

App authentication is PyGithub's own: `github.Auth.AppAuth` signs the JWT (PyJWT, a PyGithub
dependency) and `AppInstallationAuth` asks for an installation token and refreshes it before it
expires. Clients are cached, one per installation, so connections are reused.

PyGithub's own retries are turned off (`retry=None`): the worker decides when to try again, from
the status and the rate-limit headers, without blocking a thread in a sleep.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from github import Auth, Github, GithubException, GithubIntegration

from bot.config.settings import Settings
from bot.github.gate import InstallationGates

USER_AGENT = "panic-triage-bot"
ACTION_LOGIN = "github-actions[bot]"  # who writes with the Action's GITHUB_TOKEN


@dataclass(frozen=True)
class ClientOptions:
    timeout: int = 15
    # GitHub asks integrators to pace writes: done per installation by InstallationGates
    # (0 in tests); PyGithub's own pacing is per client object, which `get_repo` copies.
    seconds_between_requests: float | None = 0.0
    seconds_between_writes: float | None = 0.5
    per_page: int = 100


DEFAULT_OPTIONS = ClientOptions()


class GitHubClients:
    def __init__(self, settings: Settings, options: ClientOptions | None = None) -> None:
        settings.require_github()
        self.settings = settings
        self.options = options or DEFAULT_OPTIONS
        self._lock = threading.Lock()
        self._by_installation: dict[int, Github] = {}
        self._installation_by_repo: dict[str, int] = {}
        self._token_client: Github | None = None
        self._app_auth: Auth.AppAuth | None = None
        self._integration: GithubIntegration | None = None
        self._bot_login: str | None = None
        self.gates = InstallationGates(self.options.seconds_between_writes or 0.0)
        if settings.github_auth == "app":
            assert settings.github_app_id is not None and settings.github_app_private_key
            self._app_auth = Auth.AppAuth(settings.github_app_id, settings.github_app_private_key)

    @property
    def mode(self) -> str:
        return "app" if self._app_auth is not None else "token"

    def _kwargs(self) -> dict:
        o = self.options
        return {
            "base_url": self.settings.github_api_url,
            "timeout": o.timeout,
            "user_agent": USER_AGENT,
            "per_page": o.per_page,
            "retry": None,
            "seconds_between_requests": o.seconds_between_requests,
            "seconds_between_writes": o.seconds_between_writes,
        }

    def integration(self) -> GithubIntegration:
        """The App-level client (JWT): installations, access tokens. Only with App auth."""
        if self._app_auth is None:
            raise RuntimeError("GitHub App authentication is not configured")
        with self._lock:
            if self._integration is None:
                self._integration = GithubIntegration(auth=self._app_auth, **self._kwargs())
            return self._integration

    def installation_for(self, repo: str) -> int:
        """The App's installation id on a repository (cached). Blocking."""
        key = repo.lower()
        with self._lock:
            if key in self._installation_by_repo:
                return self._installation_by_repo[key]
        owner, name = repo.split("/", 1)
        installation_id = self.integration().get_repo_installation(owner, name).id
        with self._lock:
            self._installation_by_repo[key] = installation_id
        return installation_id

    def gate_key(self, repo: str, installation_id: int | None = None) -> int | str:
        """Whose rate limit a request for `repo` counts against: the installation, or the token
        (an installation not known yet is named by its repository until it is looked up)."""
        if self._app_auth is None:
            return "token"
        if installation_id is not None:
            return installation_id
        with self._lock:
            return self._installation_by_repo.get(repo.lower(), f"repo:{repo.lower()}")

    def client(self, repo: str, installation_id: int | None = None) -> Github:
        """A client allowed to act on `repo`, once its rate-limit gate is open (else
        GateClosed). Blocking (may look the installation up)."""
        self.gates.check(self.gate_key(repo, installation_id))
        if self._app_auth is None:
            with self._lock:
                if self._token_client is None:
                    assert self.settings.github_token
                    self._token_client = Github(
                        auth=Auth.Token(self.settings.github_token), lazy=True, **self._kwargs()
                    )
                return self._token_client
        if installation_id is None:
            installation_id = self.installation_for(repo)
        else:
            with self._lock:
                self._installation_by_repo.setdefault(repo.lower(), installation_id)
        with self._lock:
            client = self._by_installation.get(installation_id)
            if client is None:
                auth = self._app_auth.get_installation_auth(installation_id)
                client = Github(auth=auth, lazy=True, **self._kwargs())
                self._by_installation[installation_id] = client
            return client

    def bot_login(self, repo: str, installation_id: int | None = None) -> str:
        """The login the bot's own comments are written by (cached; blocking): TRIAGE_BOT_LOGIN
        when set; an App's `SLUG[bot]` (`GET /app`); a personal token's user (`GET /user`);
        else `github-actions[bot]`, the Action's token, to which `GET /user` is refused."""
        with self._lock:
            if self._bot_login is not None:
                return self._bot_login
        if self.settings.triage_bot_login:
            login = self.settings.triage_bot_login
        elif self._app_auth is not None:
            login = f"{self.integration().get_app().slug}[bot]"
        else:
            try:
                login = self.client(repo, installation_id).get_user().login
            except GithubException as exc:
                if exc.status not in (401, 403):
                    raise
                login = ACTION_LOGIN
        with self._lock:
            self._bot_login = login
        return login

    def close(self) -> None:
        with self._lock:
            clients = list(self._by_installation.values())
            if self._token_client is not None:
                clients.append(self._token_client)
            if self._integration is not None:
                self._integration.close()
            self._by_installation.clear()
            self._token_client = None
            self._integration = None
        for client in clients:
            client.close()
