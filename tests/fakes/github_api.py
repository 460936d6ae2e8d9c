"""A fake GitHub REST API on 127.0.0.1 that answers like GitHub, for driving the real PyGithub.

It runs an aiohttp server in a thread of its own (so synchronous PyGithub calls, sync tests and
async tests all reach it alike), keeps repositories, issues, comments, labels, collaborators,
reactions and a GitHub App with installations in memory, answers with GitHub's status codes,
JSON shapes, `Link` pagination and rate-limit headers, validates tokens and App JWTs, and records
every request. Faults are scripted: `fake.fail("POST", r"/comments$", 502, times=2)`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import secrets
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import jwt
from aiohttp import web
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

DOCS = "https://docs.github.com/rest"
SECONDARY_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
)
PRIMARY_MESSAGE = "API rate limit exceeded for installation."
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass
class Recorded:
    method: str
    path: str  # without the prefix and the query
    query: dict[str, str]
    headers: dict[str, str]
    body: Any
    auth: str | None  # "token:<value>", "jwt:<app id>", or None
    status: int = 0
    started: float = field(default_factory=time.monotonic)  # when the request arrived
    finished: float = 0.0  # when the answer was ready (after any scripted delay)


@dataclass
class Fault:
    method: str
    pattern: re.Pattern[str]
    status: int
    times: int
    headers: dict[str, str]
    body: Any
    after: bool = False  # carry the request out first, then answer with the fault


@dataclass
class Slowdown:
    """A scripted delay: before the request takes effect, or after (the write landed, the
    answer is late), or the connection reset after the request took effect."""

    method: str
    pattern: re.Pattern[str]
    seconds: float
    times: int
    after: bool = False
    reset: bool = False


@dataclass
class User:
    login: str
    id: int
    type: str = "User"  # or "Bot"


@dataclass
class Issue:
    number: int
    id: int
    title: str
    body: str | None
    user: User
    state: str = "open"
    labels: list[str] = field(default_factory=list)
    locked: bool = False
    pull_request: bool = False
    created_at: datetime = EPOCH
    updated_at: datetime = EPOCH
    closed_at: datetime | None = None  # set with edit_issue(closed_at=...)
    state_reason: str | None = None  # "completed" / "not_planned" / "reopened"
    merged_at: datetime | None = None  # a pull request's, set by close_by_pull
    # timeline events: ("cross-referenced", pull number, at) / ("closed", commit sha or None, at)
    timeline: list[tuple[str, Any, datetime]] = field(default_factory=list)


@dataclass
class Comment:
    id: int
    issue_number: int
    body: str
    user: User
    created_at: datetime = EPOCH
    updated_at: datetime = EPOCH
    reactions: list[tuple[str, User, int]] = field(default_factory=list)


@dataclass
class Repo:
    owner: str
    name: str
    id: int
    issues: dict[int, Issue] = field(default_factory=dict)
    comments: dict[int, Comment] = field(default_factory=dict)
    labels: dict[str, dict[str, Any]] = field(default_factory=dict)  # lower name -> label
    permissions: dict[str, str] = field(default_factory=dict)  # login -> admin/write/read

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"


class FakeGitHub:
    """Start with `with FakeGitHub() as gh:` (or start()/stop()); `gh.base_url` is the API URL."""

    def __init__(self, prefix: str = "", per_page_default: int = 30) -> None:
        self.prefix = prefix.rstrip("/")
        self.per_page_default = per_page_default
        self.lock = threading.RLock()
        self.requests: list[Recorded] = []
        self.faults: list[Fault] = []
        self.slowdowns: list[Slowdown] = []
        self.repos: dict[str, Repo] = {}
        self.tokens: dict[str, User] = {}  # personal tokens -> user
        self.installation_tokens: dict[str, tuple[int, datetime]] = {}  # token -> (inst, expiry)
        # installation tokens that are a workflow's GITHUB_TOKEN: they write as github-actions[bot]
        self.actions_tokens: set[str] = set()
        self.installations: dict[int, dict[str, Any]] = {}  # id -> {"account", "repos"}
        self.app_id: int | None = None
        self.app_slug = "triage-bot"
        self.app_public_key: Any = None
        self.app_private_key_pem: str | None = None
        self.token_lifetime = timedelta(hours=1)
        self.rate_limit_remaining = 5000
        self._ids = itertools.count(1000)
        self._clock = EPOCH
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None

    # -- lifecycle ------------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.prefix}"

    def start(self) -> FakeGitHub:
        ready = threading.Event()
        errors: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._start_server())
            except BaseException as exc:  # pragma: no cover - start-up failure
                errors.append(exc)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._runner.cleanup() if self._runner else asyncio.sleep(0))
            loop.close()

        self._thread = threading.Thread(target=run, name="fake-github", daemon=True)
        self._thread.start()
        ready.wait(10)
        if errors:
            raise errors[0]
        return self

    async def _start_server(self) -> None:
        app = web.Application(client_max_size=30 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._dispatch)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    def stop(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- set-up helpers -------------------------------------------------------------------------

    def now(self) -> datetime:
        """The fake's clock: advances one second per write, so `since` filters are exact."""
        with self.lock:
            self._clock += timedelta(seconds=1)
            return self._clock

    def add_token(self, token: str, login: str, user_type: str = "User") -> User:
        user = User(login, next(self._ids), user_type)
        with self.lock:
            self.tokens[token] = user
        return user

    def add_repo(self, full_name: str) -> Repo:
        owner, name = full_name.split("/")
        repo = Repo(owner, name, next(self._ids))
        with self.lock:
            self.repos[full_name.lower()] = repo
        return repo

    def repo(self, full_name: str) -> Repo:
        return self.repos[full_name.lower()]

    def add_issue(
        self,
        full_name: str,
        title: str,
        body: str | None,
        author: str = "reporter",
        number: int | None = None,
        pull_request: bool = False,
    ) -> Issue:
        with self.lock:
            repo = self.repo(full_name)
            if number is None:
                number = max(repo.issues, default=0) + 1
            at = self.now()
            issue = Issue(
                number,
                next(self._ids),
                title,
                body,
                User(author, next(self._ids)),
                pull_request=pull_request,
                created_at=at,
                updated_at=at,
            )
            repo.issues[number] = issue
            return issue

    def edit_issue(self, full_name: str, number: int, **changes: Any) -> Issue:
        with self.lock:
            issue = self.repo(full_name).issues[number]
            for key, value in changes.items():
                setattr(issue, key, value)
            issue.updated_at = self.now()
            return issue

    def close_by_pull(
        self, full_name: str, number: int, pull_number: int, at: datetime, commit_id: str
    ) -> Issue:
        """As when a merged pull request ("Fixes #N") closes an issue: the pull request is
        merged at `at`, the issue's timeline gets its cross-reference and a `closed` event with
        the merge commit, and the issue is closed as completed."""
        with self.lock:
            repo = self.repo(full_name)
            pull, issue = repo.issues[pull_number], repo.issues[number]
            pull.state, pull.merged_at, pull.closed_at = "closed", at, at
            issue.timeline.append(("cross-referenced", pull_number, at))
            issue.timeline.append(("closed", commit_id, at))
            issue.state, issue.state_reason, issue.closed_at = "closed", "completed", at
            issue.updated_at = self.now()
            return issue

    def add_comment(
        self, full_name: str, number: int, body: str, author: str = "reporter", user_type="User"
    ) -> Comment:
        with self.lock:
            repo = self.repo(full_name)
            at = self.now()
            comment = Comment(
                next(self._ids), number, body, User(author, next(self._ids), user_type), at, at
            )
            repo.comments[comment.id] = comment
            repo.issues[number].updated_at = at
            return comment

    def edit_comment(self, full_name: str, comment_id: int, body: str) -> Comment:
        with self.lock:
            repo = self.repo(full_name)
            comment = repo.comments[comment_id]
            comment.body = body
            comment.updated_at = self.now()
            repo.issues[comment.issue_number].updated_at = comment.updated_at
            return comment

    def comments_on(self, full_name: str, number: int) -> list[Comment]:
        with self.lock:
            repo = self.repo(full_name)
            return sorted(
                (c for c in repo.comments.values() if c.issue_number == number),
                key=lambda c: c.id,
            )

    def enable_app(self, app_id: int = 4242) -> str:
        """Make this fake a GitHub App host; returns the App's private key (PEM)."""
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        ).decode()
        with self.lock:
            self.app_id = app_id
            self.app_public_key = key.public_key()
            self.app_private_key_pem = pem
        return pem

    def add_installation(self, installation_id: int, account: str, repos: list[str]) -> None:
        with self.lock:
            self.installations[installation_id] = {
                "account": account,
                "repos": [r.lower() for r in repos],
            }

    # -- faults ---------------------------------------------------------------------------------

    def fail(
        self,
        method: str,
        pattern: str,
        status: int,
        times: int = 1,
        headers: dict[str, str] | None = None,
        body: Any = None,
        after: bool = False,
    ) -> None:
        """The next `times` requests matching METHOD and the path regex get this answer.

        With `after=True` the request takes effect first (a 502 after the write landed)."""
        if body is None:
            body = {"message": {502: "Server Error", 500: "Server Error"}.get(status, "Error")}
        with self.lock:
            self.faults.append(
                Fault(
                    method.upper(), re.compile(pattern), status, times, headers or {}, body, after
                )
            )

    def slow(
        self, method: str, pattern: str, seconds: float, times: int = 1, after: bool = False
    ) -> None:
        """Delay the next `times` matching requests by `seconds`: before they take effect, or
        with `after=True` after (the write is stored at once, the answer comes late)."""
        with self.lock:
            self.slowdowns.append(
                Slowdown(method.upper(), re.compile(pattern), seconds, times, after)
            )

    def reset_connection(self, method: str, pattern: str, times: int = 1) -> None:
        """The next `times` matching requests take effect, then the connection is reset with
        no answer (a write that landed, seen by the client as a connection error)."""
        with self.lock:
            self.slowdowns.append(
                Slowdown(method.upper(), re.compile(pattern), 0.0, times, True, reset=True)
            )

    def secondary_rate_limit(self, method: str, pattern: str, retry_after: int | None = 3) -> None:
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
        headers["X-RateLimit-Remaining"] = "4000"
        self.fail(
            method,
            pattern,
            403,
            headers=headers,
            body={
                "message": SECONDARY_MESSAGE,
                "documentation_url": f"{DOCS}/overview/rate-limits",
            },
        )

    def too_many_requests(self, method: str, pattern: str, retry_after: int = 2) -> None:
        self.fail(
            method,
            pattern,
            429,
            headers={"Retry-After": str(retry_after)},
            body={
                "message": SECONDARY_MESSAGE,
                "documentation_url": f"{DOCS}/overview/rate-limits",
            },
        )

    def primary_rate_limit(self, method: str, pattern: str, reset_in: int = 5) -> None:
        reset = int(time.time()) + reset_in
        self.fail(
            method,
            pattern,
            403,
            headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(reset)},
            body={"message": PRIMARY_MESSAGE, "documentation_url": f"{DOCS}/overview/rate-limits"},
        )

    # -- inspection -----------------------------------------------------------------------------

    def calls(self, method: str | None = None, pattern: str | None = None) -> list[Recorded]:
        with self.lock:
            return [
                r
                for r in self.requests
                if (method is None or r.method == method.upper())
                and (pattern is None or re.search(pattern, r.path))
            ]

    def writes(self) -> list[Recorded]:
        return [
            r
            for r in self.calls()
            if r.method in ("POST", "PATCH", "PUT", "DELETE") and not r.path.startswith("/app/")
        ]

    # -- JSON shapes ----------------------------------------------------------------------------

    def _url(self, path: str) -> str:
        return f"{self.base_url}{path}"

    def _user_json(self, user: User) -> dict[str, Any]:
        return {
            "login": user.login,
            "id": user.id,
            "node_id": f"U_{user.id}",
            "avatar_url": f"https://avatars.example/u/{user.id}",
            "url": self._url(f"/users/{user.login}"),
            "html_url": f"https://github.example/{user.login}",
            "type": user.type,
            "site_admin": False,
        }

    def _label_json(self, repo: Repo, label: dict[str, Any]) -> dict[str, Any]:
        name = label["name"]
        return {
            "id": label["id"],
            "node_id": f"LA_{label['id']}",
            "url": self._url(f"/repos/{repo.full_name}/labels/{urllib.parse.quote(name)}"),
            "name": name,
            "color": label.get("color", "ededed"),
            "default": False,
            "description": label.get("description"),
        }

    def _issue_json(self, repo: Repo, issue: Issue) -> dict[str, Any]:
        base = f"/repos/{repo.full_name}/issues/{issue.number}"
        comments = sum(1 for c in repo.comments.values() if c.issue_number == issue.number)
        data: dict[str, Any] = {
            "id": issue.id,
            "node_id": f"I_{issue.id}",
            "url": self._url(base),
            "repository_url": self._url(f"/repos/{repo.full_name}"),
            "labels_url": self._url(base + "/labels{/name}"),
            "comments_url": self._url(base + "/comments"),
            "events_url": self._url(base + "/events"),
            "html_url": f"https://github.example/{repo.full_name}/issues/{issue.number}",
            "number": issue.number,
            "state": issue.state,
            "title": issue.title,
            "body": issue.body,
            "user": self._user_json(issue.user),
            "labels": [self._label_json(repo, repo.labels[n.lower()]) for n in issue.labels],
            "assignee": None,
            "assignees": [],
            "milestone": None,
            "locked": issue.locked,
            "active_lock_reason": None,
            "comments": comments,
            "created_at": _iso(issue.created_at),
            "updated_at": _iso(issue.updated_at),
            "closed_at": _iso(issue.closed_at) if issue.closed_at else None,
            "author_association": "NONE",
            # GitHub always sends it, null when the issue was never closed or reopened
            "state_reason": issue.state_reason,
        }
        if issue.pull_request:
            data["pull_request"] = {
                "url": self._url(f"/repos/{repo.full_name}/pulls/{issue.number}"),
                "html_url": f"https://github.example/{repo.full_name}/pull/{issue.number}",
                "merged_at": _iso(issue.merged_at) if issue.merged_at else None,
            }
        return data

    def _timeline_json(self, repo: Repo, issue: Issue) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for kind, what, at in issue.timeline:
            event: dict[str, Any] = {"event": kind, "actor": self._user_json(issue.user)}
            event["created_at"] = _iso(at)
            if kind == "cross-referenced":
                source = self._issue_json(repo, repo.issues[what])
                source["repository"] = self._repo_json(repo)
                event["updated_at"] = _iso(at)
                event["source"] = {"type": "issue", "issue": source}
            else:
                event_id = next(self._ids)
                event.update(
                    id=event_id,
                    node_id=f"CE_{event_id}",
                    url=self._url(f"/repos/{repo.full_name}/issues/events/{event_id}"),
                    commit_id=what,
                    commit_url=self._url(f"/repos/{repo.full_name}/commits/{what}")
                    if what
                    else None,
                    state_reason=issue.state_reason if kind == "closed" else None,
                )
            out.append(event)
        return out

    def _comment_json(self, repo: Repo, comment: Comment) -> dict[str, Any]:
        return {
            "id": comment.id,
            "node_id": f"IC_{comment.id}",
            "url": self._url(f"/repos/{repo.full_name}/issues/comments/{comment.id}"),
            "html_url": f"https://github.example/{repo.full_name}/issues/"
            f"{comment.issue_number}#issuecomment-{comment.id}",
            "issue_url": self._url(f"/repos/{repo.full_name}/issues/{comment.issue_number}"),
            "body": comment.body,
            "user": self._user_json(comment.user),
            "created_at": _iso(comment.created_at),
            "updated_at": _iso(comment.updated_at),
            "author_association": "NONE",
        }

    def _repo_json(self, repo: Repo) -> dict[str, Any]:
        return {
            "id": repo.id,
            "node_id": f"R_{repo.id}",
            "name": repo.name,
            "full_name": repo.full_name,
            "private": False,
            "owner": self._user_json(User(repo.owner, repo.id + 1, "Organization")),
            "url": self._url(f"/repos/{repo.full_name}"),
            "html_url": f"https://github.example/{repo.full_name}",
            "has_issues": True,
            "default_branch": "main",
        }

    # -- HTTP -----------------------------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        with self.lock:
            self.rate_limit_remaining = max(0, self.rate_limit_remaining - 1)
            remaining = self.rate_limit_remaining
        return {
            "X-RateLimit-Limit": "5000",
            "X-RateLimit-Remaining": str(remaining),
            "X-RateLimit-Used": str(5000 - remaining),
            "X-RateLimit-Reset": str(int(time.time()) + 3600),
            "X-RateLimit-Resource": "core",
            "X-GitHub-Request-Id": secrets.token_hex(8).upper(),
            "X-GitHub-Media-Type": "github.v3; format=json",
        }

    def _json(
        self, data: Any, status: int = 200, headers: dict[str, str] | None = None
    ) -> web.Response:
        all_headers = self._headers()
        all_headers.update(headers or {})
        if status == 204:
            return web.Response(status=204, headers=all_headers)
        return web.Response(
            status=status,
            body=json.dumps(data).encode(),
            content_type="application/json",
            charset="utf-8",
            headers=all_headers,
        )

    def _error(self, status: int, message: str, errors: list[Any] | None = None) -> web.Response:
        data: dict[str, Any] = {"message": message, "documentation_url": DOCS}
        if errors is not None:
            data["errors"] = errors
        return self._json(data, status)

    def _page(self, request: web.Request, items: list[Any]) -> web.Response:
        try:
            per_page = min(100, int(request.query.get("per_page", self.per_page_default)))
            page = max(1, int(request.query.get("page", "1")))
        except ValueError:
            return self._error(422, "Validation Failed")
        pages = max(1, -(-len(items) // per_page))
        chunk = items[(page - 1) * per_page : page * per_page]
        links = []

        def link(n: int, rel: str) -> str:
            query = dict(request.query)
            query["page"] = str(n)
            query["per_page"] = str(per_page)
            url = self._url(request.path[len(self.prefix) :])
            return f'<{url}?{urllib.parse.urlencode(query)}>; rel="{rel}"'

        if page < pages:
            links += [link(page + 1, "next"), link(pages, "last")]
        if page > 1:
            links += [link(1, "first"), link(page - 1, "prev")]
        return self._json(chunk, headers={"Link": ", ".join(links)} if links else None)

    async def _dispatch(self, request: web.Request) -> web.Response:
        raw = await request.read()
        path = request.path
        if self.prefix and path.startswith(self.prefix):
            path = path[len(self.prefix) :]
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            return self._error(400, "Problems parsing JSON")
        auth = self._authenticate(request)
        record = Recorded(
            request.method, path, dict(request.query), dict(request.headers), body, auth
        )
        with self.lock:
            self.requests.append(record)
            slowdown = self._slowdown(request.method, path)
        if slowdown is not None and not slowdown.after:
            await asyncio.sleep(slowdown.seconds)
        with self.lock:
            fault = self._fault(request.method, path)
            if fault is None or fault.after:
                response = self._route(request, path, body, auth)
            if fault is not None:
                response = self._json(fault.body, fault.status, fault.headers)
            record.status = response.status
        if slowdown is not None and slowdown.after:
            await asyncio.sleep(slowdown.seconds)
            if slowdown.reset and request.transport is not None:
                request.transport.abort()  # the write landed; the client sees a reset
        record.finished = time.monotonic()
        return response

    def _slowdown(self, method: str, path: str) -> Slowdown | None:
        for slowdown in self.slowdowns:
            if slowdown.times > 0 and slowdown.method == method and slowdown.pattern.search(path):
                slowdown.times -= 1
                return slowdown
        return None

    def _fault(self, method: str, path: str) -> Fault | None:
        for fault in self.faults:
            if fault.times > 0 and fault.method == method and fault.pattern.search(path):
                fault.times -= 1
                return fault
        return None

    def _authenticate(self, request: web.Request) -> str | None:
        header = request.headers.get("Authorization", "")
        scheme, _, value = header.partition(" ")
        if not value:
            return None
        if scheme.lower() == "bearer" and value.count(".") == 2 and self.app_public_key:
            try:
                claims = jwt.decode(
                    value,
                    self.app_public_key,
                    algorithms=["RS256"],
                    options={"require": ["iat", "exp", "iss"]},
                )
            except jwt.PyJWTError:
                return "invalid"
            if str(claims["iss"]) != str(self.app_id):
                return "invalid"
            return f"jwt:{self.app_id}"
        if value in self.tokens:
            return f"token:{value}"
        if value in self.installation_tokens:
            _, expiry = self.installation_tokens[value]
            if expiry > datetime.now(UTC):
                return f"token:{value}"
        return "invalid"

    def _user_for(self, auth: str | None) -> User | None:
        if auth and auth.startswith("token:"):
            token = auth[len("token:") :]
            if token in self.tokens:
                return self.tokens[token]
            if token in self.actions_tokens:
                return User("github-actions[bot]", 41898282, "Bot")
            if token in self.installation_tokens:
                return User(f"{self.app_slug}[bot]", 9000, "Bot")
        return None

    def _route(self, request: web.Request, path: str, body: Any, auth: str | None) -> web.Response:
        method = request.method
        if auth is None:
            return self._error(401, "Requires authentication")
        if auth == "invalid":
            return self._error(401, "Bad credentials")

        if path.startswith("/app"):
            return self._route_app(method, path, auth)
        if auth.startswith("jwt:"):
            m = re.fullmatch(r"/repos/([^/]+)/([^/]+)/installation", path)
            if m and method == "GET":
                return self._repo_installation(f"{m[1]}/{m[2]}")
            return self._error(401, "A JSON web token could not be decoded")

        user = self._user_for(auth)
        if path == "/user" and method == "GET":
            if user is None or user.type == "Bot":
                return self._error(403, "Resource not accessible by integration")
            return self._json(self._user_json(user))
        if path == "/rate_limit" and method == "GET":
            core = {"limit": 5000, "remaining": self.rate_limit_remaining, "reset": 0, "used": 0}
            return self._json({"resources": {"core": core}, "rate": core})

        m = re.fullmatch(r"/repos/([^/]+)/([^/]+)(/.*)?", path)
        if not m:
            return self._error(404, "Not Found")
        repo = self.repos.get(f"{m[1]}/{m[2]}".lower())
        if repo is None or not self._token_may_see(auth, repo):
            return self._error(404, "Not Found")
        rest = m[3] or ""
        assert user is not None
        return self._route_repo(request, method, repo, rest, body, user)

    def _token_may_see(self, auth: str, repo: Repo) -> bool:
        token = auth[len("token:") :]
        if token in self.installation_tokens:
            inst, _ = self.installation_tokens[token]
            return repo.full_name.lower() in self.installations[inst]["repos"]
        return True

    def _route_app(self, method: str, path: str, auth: str) -> web.Response:
        if not auth.startswith("jwt:"):
            return self._error(401, "A JSON web token could not be decoded")
        if path == "/app" and method == "GET":
            return self._json(
                {
                    "id": self.app_id,
                    "slug": self.app_slug,
                    "name": "Triage Bot",
                    "owner": self._user_json(User("tracel-ai", 77, "Organization")),
                    "permissions": {"issues": "write", "metadata": "read"},
                    "events": ["issues", "issue_comment"],
                    "html_url": f"https://github.example/apps/{self.app_slug}",
                }
            )
        if path == "/app/installations" and method == "GET":
            return self._json([self._installation_json(i) for i in sorted(self.installations)])
        m = re.fullmatch(r"/app/installations/(\d+)/access_tokens", path)
        if m and method == "POST":
            inst = int(m[1])
            if inst not in self.installations:
                return self._error(404, "Not Found")
            token = "ghs_" + secrets.token_hex(16)
            expiry = datetime.now(UTC) + self.token_lifetime
            self.installation_tokens[token] = (inst, expiry)
            return self._json(
                {
                    "token": token,
                    "expires_at": _iso(expiry),
                    "permissions": {"issues": "write", "metadata": "read"},
                    "repository_selection": "selected",
                },
                201,
            )
        return self._error(404, "Not Found")

    def _installation_json(self, inst: int) -> dict[str, Any]:
        info = self.installations[inst]
        return {
            "id": inst,
            "app_id": self.app_id,
            "app_slug": self.app_slug,
            "target_type": "Organization",
            "account": self._user_json(User(info["account"], 77, "Organization")),
            "access_tokens_url": self._url(f"/app/installations/{inst}/access_tokens"),
            "repositories_url": self._url("/installation/repositories"),
            "permissions": {"issues": "write", "metadata": "read"},
            "events": ["issues", "issue_comment"],
            "repository_selection": "selected",
        }

    def _repo_installation(self, full_name: str) -> web.Response:
        for inst, info in sorted(self.installations.items()):
            if full_name.lower() in info["repos"]:
                return self._json(self._installation_json(inst))
        return self._error(404, "Not Found")

    def _route_repo(
        self, request: web.Request, method: str, repo: Repo, rest: str, body: Any, user: User
    ) -> web.Response:
        if rest == "" and method == "GET":
            return self._json(self._repo_json(repo))

        if rest == "/issues":
            if method == "GET":
                issues = list(repo.issues.values())
                state = request.query.get("state", "open")
                if state != "all":
                    issues = [i for i in issues if i.state == state]
                since = _parse_since(request.query.get("since"))
                if since is False:
                    return self._error(422, "Validation Failed", [{"field": "since"}])
                if since:
                    issues = [i for i in issues if i.updated_at >= since]
                key = "updated_at" if request.query.get("sort") == "updated" else "created_at"
                reverse = request.query.get("direction", "desc") == "desc"
                issues.sort(key=lambda i: (getattr(i, key), i.number), reverse=reverse)
                return self._page(request, [self._issue_json(repo, i) for i in issues])
            if method == "POST":
                if not isinstance(body, dict) or not body.get("title"):
                    return self._error(422, "Validation Failed", [_missing("Issue", "title")])
                issue = self.add_issue(repo.full_name, body["title"], body.get("body"), user.login)
                return self._json(self._issue_json(repo, issue), 201)

        if rest == "/issues/comments" and method == "GET":
            comments = list(repo.comments.values())
            since = _parse_since(request.query.get("since"))
            if since is False:
                return self._error(422, "Validation Failed", [{"field": "since"}])
            if since:
                comments = [c for c in comments if c.updated_at >= since]
            key = "updated_at" if request.query.get("sort") == "updated" else "created_at"
            reverse = request.query.get("direction", "asc") == "desc"
            comments.sort(key=lambda c: (getattr(c, key), c.id), reverse=reverse)
            return self._page(request, [self._comment_json(repo, c) for c in comments])

        m = re.fullmatch(r"/issues/comments/(\d+)(/reactions)?", rest)
        if m:
            comment = repo.comments.get(int(m[1]))
            if comment is None:
                return self._error(404, "Not Found")
            if m[2]:
                return self._reactions(request, method, body, user, comment.reactions)
            if method == "GET":
                return self._json(self._comment_json(repo, comment))
            if method == "PATCH":
                problem = _check_body(body)
                if problem:
                    return problem_response(self, problem)
                if comment.user.login != user.login:
                    return self._error(403, "Resource not accessible by integration")
                comment.body = body["body"]
                comment.updated_at = self.now()
                repo.issues[comment.issue_number].updated_at = comment.updated_at
                return self._json(self._comment_json(repo, comment))
            if method == "DELETE":
                del repo.comments[comment.id]
                return self._json(None, 204)

        m = re.fullmatch(r"/issues/(\d+)(/.*)?", rest)
        if m:
            issue = repo.issues.get(int(m[1]))
            if issue is None:
                return self._error(404, "Not Found")
            return self._route_issue(request, method, repo, issue, m[2] or "", body, user)

        if rest == "/labels":
            if method == "GET":
                labels = sorted(repo.labels.values(), key=lambda x: x["id"])
                return self._page(request, [self._label_json(repo, x) for x in labels])
            if method == "POST":
                if not isinstance(body, dict) or not body.get("name"):
                    return self._error(422, "Validation Failed", [_missing("Label", "name")])
                if body["name"].lower() in repo.labels:
                    return self._error(
                        422,
                        "Validation Failed",
                        [{"resource": "Label", "code": "already_exists", "field": "name"}],
                    )
                label = self._create_label(repo, body["name"], body.get("color"))
                label["description"] = body.get("description")
                return self._json(self._label_json(repo, label), 201)
        m = re.fullmatch(r"/labels/([^/]+)", rest)
        if m and method == "GET":
            label = repo.labels.get(urllib.parse.unquote(m[1]).lower())
            if label is None:
                return self._error(404, "Not Found")
            return self._json(self._label_json(repo, label))

        m = re.fullmatch(r"/collaborators/([^/]+)/permission", rest)
        if m and method == "GET":
            login = m[1]
            permission = repo.permissions.get(login, "read")
            role = {
                "admin": "admin",
                "maintain": "maintain",
                "write": "write",
                "triage": "triage",
            }.get(permission, "read")
            legacy = {"maintain": "write", "triage": "read"}.get(permission, permission)
            return self._json(
                {
                    "permission": legacy,
                    "role_name": role,
                    "user": self._user_json(User(login, abs(hash(login)) % 100000)),
                }
            )
        return self._error(404, "Not Found")

    def _create_label(self, repo: Repo, name: str, color: str | None = None) -> dict[str, Any]:
        label = {"id": next(self._ids), "name": name, "color": color or "ededed"}
        repo.labels[name.lower()] = label
        return label

    def _route_issue(
        self,
        request: web.Request,
        method: str,
        repo: Repo,
        issue: Issue,
        rest: str,
        body: Any,
        user: User,
    ) -> web.Response:
        if rest == "" and method == "GET":
            return self._json(self._issue_json(repo, issue))
        if rest == "" and method == "PATCH":
            if not isinstance(body, dict):
                return self._error(400, "Problems parsing JSON")
            for key in ("title", "body", "state"):
                if key in body:
                    setattr(issue, key, body[key])
            issue.updated_at = self.now()
            return self._json(self._issue_json(repo, issue))
        if rest == "/comments":
            if method == "GET":
                comments = [c for c in repo.comments.values() if c.issue_number == issue.number]
                since = _parse_since(request.query.get("since"))
                if since is False:
                    return self._error(422, "Validation Failed", [{"field": "since"}])
                if since:
                    comments = [c for c in comments if c.updated_at >= since]
                comments.sort(key=lambda c: (c.created_at, c.id))
                return self._page(request, [self._comment_json(repo, c) for c in comments])
            if method == "POST":
                problem = _check_body(body)
                if problem:
                    return problem_response(self, problem)
                at = self.now()
                comment = Comment(next(self._ids), issue.number, body["body"], user, at, at)
                repo.comments[comment.id] = comment
                issue.updated_at = at
                return self._json(
                    self._comment_json(repo, comment),
                    201,
                    {"Location": self._comment_json(repo, comment)["url"]},
                )
        if rest == "/labels":
            if method == "GET":
                return self._page(
                    request, [self._label_json(repo, repo.labels[n.lower()]) for n in issue.labels]
                )
            if method in ("POST", "PUT"):
                names = body.get("labels") if isinstance(body, dict) else body
                if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                    return self._error(
                        422, "Invalid request.\n\nFor 'links/0/schema', nil is not an array."
                    )
                if method == "PUT":
                    issue.labels = []
                for name in names:
                    if not name.strip():
                        return self._error(
                            422, "Validation Failed", [_invalid("Label", "name", name)]
                        )
                    label = repo.labels.get(name.lower()) or self._create_label(repo, name)
                    if label["name"].lower() not in (n.lower() for n in issue.labels):
                        issue.labels.append(label["name"])
                issue.updated_at = self.now()
                return self._json(
                    [self._label_json(repo, repo.labels[n.lower()]) for n in issue.labels]
                )
        m = re.fullmatch(r"/labels/(.+)", rest)
        if m and method == "DELETE":
            name = urllib.parse.unquote(m[1])
            current = [n for n in issue.labels if n.lower() == name.lower()]
            if not current:
                return self._error(404, "Label does not exist")
            issue.labels.remove(current[0])
            issue.updated_at = self.now()
            return self._json(
                [self._label_json(repo, repo.labels[n.lower()]) for n in issue.labels]
            )
        if rest == "/reactions":
            return self._reactions(request, method, body, user, [])
        if rest == "/timeline" and method == "GET":
            return self._page(request, self._timeline_json(repo, issue))
        return self._error(404, "Not Found")

    def _reactions(
        self,
        request: web.Request,
        method: str,
        body: Any,
        user: User,
        reactions: list[tuple[str, User, int]],
    ) -> web.Response:
        def shape(item: tuple[str, User, int]) -> dict[str, Any]:
            content, who, rid = item
            return {
                "id": rid,
                "node_id": f"REA_{rid}",
                "user": self._user_json(who),
                "content": content,
                "created_at": _iso(EPOCH),
            }

        if method == "GET":
            content = request.query.get("content")
            items = [r for r in reactions if content is None or r[0] == content]
            return self._page(request, [shape(r) for r in items])
        if method == "POST":
            allowed = {"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"}
            if not isinstance(body, dict) or body.get("content") not in allowed:
                return self._error(422, "Validation Failed", [_invalid("Reaction", "content", "")])
            item = (body["content"], user, next(self._ids))
            reactions.append(item)
            return self._json(shape(item), 201)
        return self._error(404, "Not Found")

    def add_reaction(self, full_name: str, comment_id: int, content: str, login: str) -> None:
        with self.lock:
            comment = self.repo(full_name).comments[comment_id]
            comment.reactions.append((content, User(login, next(self._ids)), next(self._ids)))


def _iso(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse_since(value: str | None) -> datetime | bool | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(UTC)
    except ValueError:
        return False


def _missing(resource: str, field_name: str) -> dict[str, str]:
    return {"resource": resource, "code": "missing_field", "field": field_name}


def _invalid(resource: str, field_name: str, value: str) -> dict[str, str]:
    return {"resource": resource, "code": "invalid", "field": field_name, "value": value}


def _check_body(body: Any) -> tuple[int, str, list[Any]] | None:
    if not isinstance(body, dict) or not isinstance(body.get("body"), str) or not body["body"]:
        return 422, "Validation Failed", [_missing("IssueComment", "body")]
    if len(body["body"]) > 65536:
        return (
            422,
            "Validation Failed",
            [
                {
                    "resource": "IssueComment",
                    "code": "custom",
                    "field": "body",
                    "message": "body is too long (maximum is 65536 characters)",
                }
            ],
        )
    return None


def problem_response(fake: FakeGitHub, problem: tuple[int, str, list[Any]]) -> web.Response:
    status, message, errors = problem
    return fake._error(status, message, errors)
