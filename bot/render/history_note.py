"""The answer's sentence from the catalog's release history: where the panic was raised in the
user's release and where it lives today, or why it left (moved to another repository, fixed,
removed: from the commit that did it) and the release that removed it, with labelled links
(texts in texts.py)."""

from __future__ import annotations

from collections.abc import Callable

from bot.catalog.model import Record
from bot.core.analysis import PanicMatch
from bot.core.match.releases import (
    HistoryEvent,
    ReleaseHistory,
    VersionStory,
    crate_and_inner,
    history_events,
    project_name,
    story_of,
)
from bot.render import texts
from bot.render.markup import Link, Words, join_words, words

SHORT_SHA = 7


def history_note(history: ReleaseHistory | None, item: PanicMatch, record: Record) -> Words | None:
    story = story_of(history, item, record.id)
    if story is None:
        return None
    project = project_name(history)
    crates = {crate_and_inner(f)[0] for f in (story.then_file, story.now_file) if f}
    named = len(crates) > 1  # the site changed crates: say which
    then = _site_link(story.version, story.then_file, story.then_line, story.then_url, named)
    if story.removed_in:
        why = removal_words(history, record.id, story, project)
        if why is not None and _unreleased(history, record.id):
            return why  # no release lacks it: no "removed in" release to name
        if then:
            where = words(
                texts.HISTORY_REMOVED_THEN,
                project=project,
                version=story.version,
                then=then,
                removed_in=story.removed_in,
                last_seen=story.last_seen_in,
                compare=_compare_link(story),
            )
        else:
            where = words(
                texts.HISTORY_REMOVED,
                project=project,
                removed_in=story.removed_in,
                last_seen=story.last_seen_in,
                compare=_compare_link(story),
            )
        return join_words(why, where) if why else where
    now = _site_link(None, story.now_file, story.now_line, story.now_url, named)
    moved = (story.then_file, story.then_line) != (story.now_file, story.now_line)
    if then and now and moved and not _pasted_at(item, story.now_file, story.now_line):
        return words(
            texts.HISTORY_THEN_NOW, project=project, version=story.version, then=then, now=now
        )
    return None


def removal_words(
    history: ReleaseHistory | None, record_id: str, story: VersionStory, project: str
) -> Words | None:
    """Why the site left, in words, when the history knows the commit that removed it."""
    event = _removal(history, record_id)
    if event is None:
        return None
    change = change_link(event)
    released = event.version
    if event.event == "moved":
        return words(
            texts.HISTORY_MOVED,
            destination=event.detail or "another repository",
            change=change,
            released=released or "not released yet",
            project=project,
        )
    if event.event == "fixed" and released:
        return words(texts.HISTORY_FIXED, change=change, released=released, project=project)
    last_seen = story.last_seen_in or "the newest"
    if event.detail:  # the crate left with it
        if released:
            return words(
                texts.HISTORY_CRATE_REMOVED, crate=event.detail, change=change, released=released
            )
        return words(
            texts.HISTORY_CRATE_REMOVED_UNRELEASED,
            crate=event.detail,
            change=change,
            last_seen=last_seen,
        )
    if released:
        return words(texts.HISTORY_GONE, change=change, released=released)
    return words(texts.HISTORY_GONE_UNRELEASED, change=change, last_seen=last_seen)


def _removal(history: ReleaseHistory | None, record_id: str) -> HistoryEvent | None:
    events = history_events(history, record_id)
    last = events[-1] if events else None
    return last if last is not None and last.event in ("removed", "moved", "fixed") else None


def _unreleased(history: ReleaseHistory | None, record_id: str) -> bool:
    event = _removal(history, record_id)
    return event is not None and event.version is None


def change_link(event: HistoryEvent) -> Link:
    """`#4393`, or the commit's short SHA when its subject names no PR."""
    label = f"#{event.pr}" if event.pr is not None else event.commit[:SHORT_SHA]
    return Link(label, event.url)


def _site_link(
    version: str | None, file: str | None, line: int | None, url: str | None, crate: bool
) -> Link | None:
    """`0.19.1 model_gen.rs:405`: the file's name (after its crate's when `crate`), the version
    when it is the user's."""
    if not file or line is None:
        return None
    name = file.rsplit("/", 1)[-1]
    folder = crate_and_inner(file)[0]
    if crate and folder:
        name = f"{folder} {name}"
    return Link(f"{version} {name}:{line}" if version else f"{name}:{line}", url)


def _compare_link(story: VersionStory) -> Link | None:
    """`v0.20.1…v0.21.0`, from the comparison URL's own range."""
    if not story.compare_url:
        return None
    tail = story.compare_url.rsplit("/compare/", 1)[-1]
    return Link(tail.replace("...", "…"), story.compare_url)


def _pasted_at(item: PanicMatch, file: str | None, line: int | None) -> bool:
    """Whether the pasted location already is today's site (then the paste is not from the
    release the history places elsewhere, and the sentence would contradict it)."""
    location = item.panic.location
    if location is None or not file or location.line is None or line is None:
        return False
    inner = file.split("/src/", 1)[-1]
    return location.path.endswith(inner) and abs(location.line - line) <= 3


def upgrade_step(
    history: ReleaseHistory | None,
    item: PanicMatch,
    record: Record,
    via: Callable[[str], str | None] | None = None,
) -> str | None:
    """A fixed, removed or moved site's first step, plain text: the release to upgrade to and
    the change that did it (or where the code went); None for a site still in the code.
    `via(version)` names the own project's release that brings a dependency's `version`
    (`burn 0.20.0` for cubecl 0.9.0): a user upgrades the project they depend on."""
    story = story_of(history, item, record.id)
    if story is None or not story.removed_in:
        return None  # the site is in today's code: there is nothing to upgrade to
    event = _removal(history, record.id)
    project = project_name(history)
    if via is not None:
        released = event.version if event is not None else story.removed_in
        own = via(released) if released else None
        if own is not None and not (event is not None and event.event == "moved"):
            return texts.STEP_UPGRADE_VIA.format(own=own, project=project, released=released)
    if event is not None:
        change = f"#{event.pr}" if event.pr is not None else event.commit[:SHORT_SHA]
        if event.event == "moved" and event.detail:
            return texts.STEP_MOVED.format(destination=event.detail, change=change)
        if event.version is None:
            return texts.STEP_UPGRADE_UNRELEASED.format(project=project, change=change)
        fixed = event.event == "fixed"
        template = texts.STEP_UPGRADE_FIXED if fixed else texts.STEP_UPGRADE_REMOVED
        return template.format(project=project, released=event.version, change=change)
    return texts.STEP_UPGRADE_REMOVED_PLAIN.format(project=project, released=story.removed_in)
