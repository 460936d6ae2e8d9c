"""The same real pastes as users' tools print them: every tuned text of the other projects'
corpora whose code block holds a panic header, re-printed with each line of that block behind
a logger's prefix (a plugin host's `[name] `, journald's ticking clock, docker compose's
service, a CI runner's stamp, env_logger's), the block as one JSON log record or double-spaced,
the text in a blockquote, indented as a list item's, escaped for HTML or with its quotes curled
as a word processor types them, must keep its right answer; and no tuned text, negatives
included, may gain a wrong one (test_project_corpora's TUNED_FALSE are wrong as pasted).
Held-out parts are never read here."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache

import pytest
from corpus_scoring import PROJECTS, accepted, read_cases, score
from test_project_corpora import NAMES, TUNED_FALSE, project_triage

from bot.app import Triage

_FENCED_HEADER = re.compile(r"```[^`]*panicked at[^`]*```", re.S)


def _block_lines(change: Callable[[int, str], list[str]]) -> Callable[[str], str]:
    """Each line inside a code fence replaced by the lines `change(line number, line)` makes."""

    def apply(text: str) -> str:
        out, inside = [], False
        for number, line in enumerate(text.split("\n")):
            if line.lstrip().startswith("```"):
                inside = not inside
                out.append(line)
            else:
                out.extend(change(number, line) if inside else [line])
        return "\n".join(out)

    return apply


def _in_blocks(prefix: Callable[[int], str]) -> Callable[[str], str]:
    """Each line inside a code fence behind `prefix(line number)` (a blank one keeps no trailing
    space, as logs are copied)."""
    return _block_lines(lambda number, line: [(prefix(number) + line).rstrip(" ")])


def _json_record(text: str) -> str:
    """Each code block's text as the `message` of one JSON log record (a panic hook logging
    through a JSON formatter: line breaks and quotes escaped)."""

    def record(block: re.Match[str]) -> str:
        message = json.dumps(block.group(2).strip("\n"))
        return f'{block.group(1)}{{"level":"ERROR","target":"panic","message":{message}}}\n```'

    return re.sub(r"(```[^\n`]*\n)(.*?)```", record, text, flags=re.S)


def _double_spaced(text: str) -> str:
    """A blank line after every line inside a code fence (a copy from a page that sets each
    line of a log apart)."""
    return _block_lines(lambda _number, line: [line, ""])(text)


def _curled(text: str) -> str:
    """Quotes as a word processor or a chat client types them: an opening `'` after a space or
    a bracket as \u2018, every other `'` (closing quotes, apostrophes) as \u2019."""
    opened = re.sub(r"(^|[\s(\[])'", "\\1\u2018", text, flags=re.M)
    return opened.replace("'", "\u2019")


def _escaped(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


VARIATIONS: dict[str, Callable[[str], str]] = {
    "plugin host": _in_blocks(lambda n: "[denops] "),
    "journald": _in_blocks(lambda n: f"Dec 05 10:{n // 60:02d}:{n % 60:02d} host app[812]: "),
    "docker compose": _in_blocks(lambda n: "web-1  | "),
    "CI stamp": _in_blocks(lambda n: f"2025-01-02T05:12:{n % 60:02d}.6961234Z "),
    "env_logger": _in_blocks(lambda n: "[2025-01-02T05:12:56Z ERROR app] "),
    "JSON log": _json_record,
    "blockquote": lambda text: "\n".join("> " + line for line in text.split("\n")),
    "list item": lambda text: "\n".join(("   " + line).rstrip(" ") for line in text.split("\n")),
    "HTML escaped": _escaped,
    "double-spaced": _double_spaced,
    "typographic quotes": lambda text: _curled(text),
}


def _top(triage: Triage, text: str) -> object | None:
    answered = triage.analyse(text).answered
    return triage.catalog.get(answered[0].best.record_id) if answered else None


@cache
def _tuned(project: str) -> tuple[Triage, list[dict]]:
    triage = project_triage(project)
    return triage, score(triage, read_cases(PROJECTS / project))


@pytest.mark.parametrize("variation", sorted(VARIATIONS))
@pytest.mark.parametrize("project", NAMES)
def test_a_paste_printed_by_a_logger_keeps_its_answer(project: str, variation: str) -> None:
    triage, results = _tuned(project)
    vary = VARIATIONS[variation]
    right = [
        r
        for r in results
        if r["expect"] == "match" and r["accepted"] and _FENCED_HEADER.search(r["text"])
    ]
    lost = [r["case"] for r in right if not accepted(r, _top(triage, vary(r["text"])))]
    known = TUNED_FALSE.get(project, set())  # wrong as pasted already
    wrong = [
        r["case"]
        for r in results
        if r["case"] not in known
        and (top := _top(triage, vary(r["text"]))) is not None
        and not accepted(r, top)
    ]
    assert (lost, wrong) == ([], [])
