"""One message at two sites of one file, one of them since removed and the file since moved: a
paste with no version, at the old file and the line one release had the live site at, is
answered with that site where it is today, not with the removed one (whose file the paste
names); a line that both sites had in some release names neither."""

from __future__ import annotations

from pathlib import Path

from fixture_scan import NOTE
from git_project import tagged_history

from bot.app import Triage
from bot.catalog.loader import load_catalog

MESSAGE = "not currently active!?"
CARGO = '[package]\nname = "solver"\nversion = "0.1.0"\n'
LIB = "pub mod resolver;\n"


def _fn(name: str) -> str:
    return f'pub fn {name}(x: Option<u8>) -> u8 {{\n    x.expect("{MESSAGE}")\n}}\n'


def _file(*parts: str | int) -> str:
    """Functions and blank-line paddings (an int: that many lines), in order."""
    return "".join("\n" * p if isinstance(p, int) else _fn(p) for p in parts)


def _catalog(tmp_path: Path, releases: list[dict[str, str | None]]) -> Triage:
    return Triage(
        load_catalog([tagged_history(tmp_path, "acme/solver", releases, {"Cargo.toml": CARGO})])
    )


def _answered(triage: Triage, line: int) -> tuple[str, int] | None:
    text = f"thread 'main' panicked at src/core/resolver.rs:{line}:7:\n{MESSAGE}\n{NOTE}\n"
    answered = triage.analyse(text).answered
    if not answered:
        return None
    record = triage.catalog.get(answered[0].best.record_id)
    return record.file_path, record.line_number


def _releases(first_pad: int) -> list[dict[str, str | None]]:
    # release 1: `activate` then `backtrack`, far apart; release 2: `activate` moved down and
    # `backtrack` gone; release 3: the file moved to src/resolver.rs.
    return [
        {"src/lib.rs": "pub mod core;\n", "src/core/mod.rs": LIB,
         "src/core/resolver.rs": _file(first_pad, "activate", 60, "backtrack")},
        {"src/lib.rs": "pub mod core;\n", "src/core/mod.rs": LIB,
         "src/core/resolver.rs": _file(first_pad + 20, "activate")},
        {"src/lib.rs": LIB, "src/resolver.rs": _file(first_pad + 30, "activate"),
         "src/core/mod.rs": None, "src/core/resolver.rs": None},
    ]  # fmt: skip


def test_the_line_a_release_had_the_live_site_at_answers_with_it_today(tmp_path) -> None:
    triage = _catalog(tmp_path, _releases(first_pad=0))
    removed = [r for r in triage.catalog if r.removed_at]
    assert [(r.file_path, r.line_number) for r in removed] == [("src/core/resolver.rs", 65)]
    # release 2 had `activate` at line 22: the removed `backtrack` (line 65) was never there
    assert _answered(triage, 22) == ("src/resolver.rs", 32)
    # release 1's `activate` line, the same
    assert _answered(triage, 2) == ("src/resolver.rs", 32)
    # `match --explain` says no version was pasted: some release, not the pasted one
    text = f"thread 'main' panicked at src/core/resolver.rs:22:7:\n{MESSAGE}\n"
    steps = [what for what, _ in triage.analyse(text).answered[0].best.steps]
    assert "a release had this site at the pasted line" in steps, steps


def test_a_line_both_sites_had_names_neither(tmp_path) -> None:
    # release 2 has `activate` at line 65, the line release 1 had `backtrack` at
    releases = _releases(first_pad=0)
    releases[1]["src/core/resolver.rs"] = _file(63, "activate")
    triage = _catalog(tmp_path, releases)
    answered = _answered(triage, 65)
    # the line names neither: it does not send the answer to `activate`'s site today
    assert answered is None or answered[0] == "src/core/resolver.rs"
