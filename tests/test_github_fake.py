"""The fake GitHub answers like GitHub: checked through the real PyGithub over HTTP."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import requests
from fakes.github_api import FakeGitHub
from github import Auth, BadCredentialsException, Github, GithubException
from harness import fake_github

from bot.config.settings import Settings
from bot.github.adapter import GitHubAdapter
from bot.github.auth import ClientOptions, GitHubClients
from bot.github.planner import Plan

REPO = "tracel-ai/burn"


@pytest.fixture
def fake():
    with fake_github("ghp_maintainer", "maintainer", REPO) as gh:
        yield gh


def client(fake: FakeGitHub, token: str = "ghp_maintainer", per_page: int = 30) -> Github:
    return Github(
        auth=Auth.Token(token),
        base_url=fake.base_url,
        retry=None,
        per_page=per_page,
        seconds_between_requests=0,
        seconds_between_writes=0,
    )


def test_issues_comments_and_pagination(fake):
    for i in range(5):
        fake.add_issue(REPO, f"issue {i}", f"body {i}")
    gh = client(fake, per_page=2)
    repo = gh.get_repo(REPO)
    issues = list(repo.get_issues(state="all"))
    assert sorted(i.number for i in issues) == [1, 2, 3, 4, 5]
    listing = fake.calls("GET", rf"^/repos/{REPO}/issues$")
    assert [r.query.get("page", "1") for r in listing] == ["1", "2", "3"]
    issue = repo.get_issue(3)
    created = issue.create_comment("hello")
    assert created.body == "hello" and created.user.login == "maintainer"
    created.edit("hello again")
    assert [c.body for c in issue.get_comments()] == ["hello again"]
    since = datetime(2030, 1, 1, tzinfo=UTC)
    assert list(issue.get_comments(since=since)) == []
    created.delete()
    assert list(issue.get_comments()) == []


def test_link_header_and_rate_limit_headers(fake):
    for i in range(3):
        fake.add_issue(REPO, f"i{i}", None)
    response = requests.get(
        f"{fake.base_url}/repos/{REPO}/issues",
        params={"per_page": 1, "page": 2},
        headers={"Authorization": "token ghp_maintainer"},
        timeout=5,
    )
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("application/json")
    assert 'rel="next"' in response.headers["Link"] and 'rel="prev"' in response.headers["Link"]
    assert 'rel="last"' in response.headers["Link"] and "page=3" in response.headers["Link"]
    for name in ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"):
        assert response.headers[name].isdigit()


def test_errors_are_githubs(fake):
    fake.add_issue(REPO, "t", "b")
    with pytest.raises(BadCredentialsException):
        client(fake, "ghp_wrong").get_repo(REPO).get_issue(1).title  # noqa: B018
    repo = client(fake).get_repo(REPO)
    issue = repo.get_issue(1)
    with pytest.raises(GithubException) as info:
        issue.create_comment("")
    assert info.value.status == 422 and info.value.data["errors"][0]["code"] == "missing_field"
    with pytest.raises(GithubException) as info:
        issue.create_comment("x" * 70_000)
    assert info.value.status == 422
    repo.create_label("bug", "d73a4a")
    with pytest.raises(GithubException) as info:
        repo.create_label("bug", "d73a4a")
    assert info.value.data["errors"][0]["code"] == "already_exists"
    with pytest.raises(GithubException) as info:
        repo.get_issue(99).title  # noqa: B018
    assert info.value.status == 404


def test_labels_add_and_remove(fake):
    fake.add_issue(REPO, "t", "b")
    issue = client(fake).get_repo(REPO).get_issue(1)
    issue.add_to_labels("panic: known", "crate: burn")
    assert [label.name for label in issue.get_labels()] == ["panic: known", "crate: burn"]
    issue.remove_from_labels("panic: known")
    assert fake.repo(REPO).issues[1].labels == ["crate: burn"]
    with pytest.raises(GithubException) as info:
        issue.remove_from_labels("panic: known")
    assert info.value.status == 404


def test_scripted_faults_and_records(fake):
    fake.add_issue(REPO, "t", "b")
    fake.fail("GET", r"/issues/1$", 502, times=2)
    repo = client(fake).get_repo(REPO)
    for _ in range(2):
        with pytest.raises(GithubException) as info:
            repo.get_issue(1).title  # noqa: B018
        assert info.value.status == 502
    assert repo.get_issue(1).title == "t"
    fake.secondary_rate_limit("GET", r"/issues/1$", retry_after=5)
    with pytest.raises(GithubException) as info:
        repo.get_issue(1).title  # noqa: B018
    assert info.value.status == 403 and info.value.headers["retry-after"] == "5"
    assert [r.status for r in fake.calls("GET", r"/issues/1$")] == [502, 502, 200, 403]


def test_permissions_and_reactions_for_maintainer_commands(fake):
    fake.repo(REPO).permissions["nathaniel"] = "admin"
    fake.add_issue(REPO, "t", "b")
    repo = client(fake).get_repo(REPO)
    assert repo.get_collaborator_permission("nathaniel") == "admin"
    assert repo.get_collaborator_permission("stranger") == "read"
    comment = repo.get_issue(1).create_comment("answer")
    fake.add_reaction(REPO, comment.id, "+1", "user1")
    comment.create_reaction("-1")
    assert sorted(r.content for r in comment.get_reactions()) == ["+1", "-1"]


def test_user_endpoint(fake):
    assert client(fake).get_user().login == "maintainer"


def test_enterprise_base_url_with_a_path_prefix():
    """GitHub Enterprise Server serves the API under /api/v3; every URL keeps the prefix."""
    with FakeGitHub(prefix="/api/v3") as fake:
        fake.add_token("ghp_ghes", "maintainer")
        fake.add_repo(REPO)
        fake.add_issue(REPO, "t", "b")
        settings = Settings.from_mapping(
            {"GITHUB_TOKEN": "ghp_ghes", "GITHUB_API_URL": fake.base_url + "/"}
        )
        clients = GitHubClients(settings, ClientOptions(seconds_between_writes=0))
        adapter = GitHubAdapter(clients)
        try:
            view = adapter.read_issue(REPO, 1)
            plan = Plan(
                "create", None, "<!-- triage-bot:answer -->\nhi", ("x",), (), ("x",), "match"
            )
            comment_id = adapter.apply(REPO, 1, plan)
        finally:
            clients.close()
        assert view.title == "t" and comment_id is not None
        assert fake.comments_on(REPO, 1)[0].body.endswith("hi")
        assert all(r.status in (200, 201) for r in fake.calls())
