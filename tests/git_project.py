"""A small git project of our own for the refresh tests: a working clone pushing to a bare
`upstream.git` (it stands in for GitHub) and a bare mirror of it that the bot keeps and fetches.
Squash-merge subjects (`... (#N)`) as GitHub writes them."""

from __future__ import annotations

import subprocess
from pathlib import Path

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
