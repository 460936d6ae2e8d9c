"""The answer of one match as plain data, for `match --json` (issue 24): the words the comment
shows, without markdown, and the release history's facts about the site. Pure."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from bot.core.match.releases import HistoryEvent
from bot.render.answer.parts import Section
from bot.render.markup import plain

_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_MARKS = re.compile(r"`+|\*\*|__")


def plain_answer(
    section: Section,
    events: Iterable[HistoryEvent],
    issues: Iterable[Mapping[str, Any]] = (),
    repo: str | None = None,
) -> dict[str, Any]:
    """`{"title", "meaning", "first_step", "source", "history", "known_issues"}`
    (schemas/match.schema.json).
    `issues`: the store's rows for the section's record (number, state), `repo` theirs."""
    meaning = unmarked(section.meaning_text) if section.meaning_text else None
    if meaning is None and section.meaning_words:
        meaning = plain(section.meaning_words, backticks=False)
    return {
        "title": section.title,
        "meaning": meaning or "",
        "first_step": unmarked(section.first_step) if section.first_step else None,
        "source": section.answer_source,
        "history": [event_json(e) for e in events],
        "known_issues": known_issues(issues, repo),
    }


def unmarked(text: str) -> str:
    """Catalog prose without its markdown: links become their label, code marks go."""
    return _MARKS.sub("", _LINK.sub(r"\1", text))


def event_json(event: HistoryEvent) -> dict[str, Any]:
    return {
        "event": event.event,
        "version": event.version,
        "commit": event.commit,
        "pr": event.pr,
        "title": event.title,
        "url": event.url,
    }


def known_issues(rows: Iterable[Mapping[str, Any]], repo: str | None) -> list[dict[str, Any]]:
    """Other issues that hit the record, by number, once each (closed wins over open)."""
    if not repo:
        return []
    states: dict[int, str] = {}
    for row in rows:
        number = int(row["number"])
        state = "closed" if row.get("state") == "closed" else "open"
        if states.get(number) != "closed":
            states[number] = state
    return [
        {"number": n, "state": s, "url": f"https://github.com/{repo}/issues/{n}"}
        for n, s in sorted(states.items())
    ]
