"""The user documentation as one text: README.md, docs/*.md, benchmarks/README.md and
CONTRIBUTING.md, for tests that check what the docs state (a command, a setting, a figure), not
where it is said."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def doc_files() -> list[Path]:
    return [
        ROOT / "README.md",
        *sorted((ROOT / "docs").glob("*.md")),
        ROOT / "benchmarks" / "README.md",
        ROOT / "CONTRIBUTING.md",
    ]


def docs_text() -> str:
    return "\n\n".join(path.read_text(encoding="utf-8") for path in doc_files())
