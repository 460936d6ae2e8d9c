"""A small git project of our own for the refresh tests: a working clone pushing to a bare
`upstream.git` (it stands in for GitHub) and a bare mirror of it that the bot keeps and fetches.
Squash-merge subjects (`... (#N)`) as GitHub writes them."""

from __future__ import annotations

import subprocess
from pathlib import Path

from bot.cli import main as main_cli

ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    "PATH": "/usr/bin:/bin:/usr/local/bin",
}


def git(root: Path, *args: str) -> str:
    env = {**ENV, "HOME": str(root)}
    done = subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, text=True, env=env
    )
    return done.stdout.strip()


def src(*messages: str) -> str:
    return "".join(f'pub fn f{i}() {{\n    panic!("{m}");\n}}\n' for i, m in enumerate(messages))


class Project:
    """The maintainers' clone; `push()` publishes to upstream.git, which `mirror` follows."""

    def __init__(self, root: Path):
        self.work = root / "work"
        self.upstream = root / "upstream.git"
        self.mirror = root / "mirror.git"
        self.work.mkdir(parents=True)
        git(root, "init", "-q", "--bare", "-b", "main", str(self.upstream))
        git(self.work, "init", "-q", "-b", "main")
        git(self.work, "remote", "add", "origin", str(self.upstream))

    def commit(self, subject: str, files: dict[str, str | None], tag: str | None = None) -> str:
        for path, text in files.items():
            target = self.work / path
            if text is None:
                target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        git(self.work, "add", "-A")
        git(self.work, "commit", "-q", "-m", subject)
        if tag:
            git(self.work, "tag", tag)
        return git(self.work, "rev-parse", "HEAD")

    def push(self, force: bool = False) -> None:
        git(self.work, "push", "-q", *(["--force"] if force else []), "origin", "main", "--tags")
        if not self.mirror.exists():
            git(self.work, "clone", "-q", "--bare", str(self.upstream), str(self.mirror))


def catalog_history(project: Project, repo: str, out: Path) -> Path:
    """`out`, holding what `catalog history` writes for the project's tags."""
    argv = ["catalog", "history", str(project.work), "--repo", repo, "--out", str(out), "-q"]
    assert main_cli(argv) == 0
    return out


def tagged_history(
    root: Path, repo: str, releases: list[dict[str, str | None]], common: dict[str, str]
) -> Path:
    """A project of `releases` (each with the `common` files, committed and tagged v0.N.0) and
    root/catalog, holding what `catalog history` writes for it."""
    project = Project(root / repo.rsplit("/", 1)[-1])
    for number, files in enumerate(releases, 1):
        project.commit(f"release {number}", {**common, **files}, tag=f"v0.{number}.0")
    return catalog_history(project, repo, root / "catalog")
