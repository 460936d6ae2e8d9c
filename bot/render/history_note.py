"""The answer's sentence from the catalog's release history: where the panic was raised in the
user's release and where it lives today, or the release that removed it (texts in texts.py)."""

from __future__ import annotations

from bot.catalog.model import Record
from bot.core.analysis import PanicMatch
from bot.core.match.releases import ReleaseHistory, project_name, story_of
from bot.render import texts
from bot.render.markup import Words, words


def history_note(history: ReleaseHistory | None, item: PanicMatch, record: Record) -> Words | None:
    story = story_of(history, item, record.id)
    if story is None:
        return None
    project = project_name(history)
    then = f"{story.then_file}:{story.then_line}" if story.then_file else None
    if story.removed_in:
        if then:
            return words(
                texts.HISTORY_REMOVED_THEN,
                project=project,
                version=story.version,
                then=then,
                then_url=story.then_url,
                removed_in=story.removed_in,
                last_seen=story.last_seen_in,
                compare_url=story.compare_url,
            )
        return words(
            texts.HISTORY_REMOVED,
            project=project,
            removed_in=story.removed_in,
            last_seen=story.last_seen_in,
            compare_url=story.compare_url,
        )
    now = f"{story.now_file}:{story.now_line}" if story.now_file else None
    if then and now and then != now and not _pasted_at(item, story.now_file, story.now_line):
        return words(
            texts.HISTORY_THEN_NOW,
            project=project,
            version=story.version,
            then=then,
            now=now,
            then_url=story.then_url,
            now_url=story.now_url,
        )
    return None


def _pasted_at(item: PanicMatch, file: str | None, line: int | None) -> bool:
    """Whether the pasted location already is today's site (then the paste is not from the
    release the history places elsewhere, and the sentence would contradict it)."""
    location = item.panic.location
    if location is None or not file or location.line is None or line is None:
        return False
    inner = file.split("/src/", 1)[-1]
    return location.path.endswith(inner) and abs(location.line - line) <= 3
