"""The answer's sentence for a dependency's panic (issue 25): whose code it is, at which
version, the kind of check, and its source at the pinned tag (texts in texts.py).

A wgpu validation error is wgpu reporting an invalid call made by its caller: the first frame of
the own project's or of its maintainers' other projects (burn, cubecl) in the backtrace names it.
"""

from __future__ import annotations

from bot.catalog.model import Record
from bot.core.analysis import PanicMatch
from bot.core.match.projects import Projects
from bot.core.match.releases import HistoryEvent, history_events, project_name
from bot.render import texts
from bot.render.history_note import change_link
from bot.render.markup import Words, words


def dependency_note(
    projects: Projects | None, item: PanicMatch, record: Record, own_version: str | None = None
) -> Words | None:
    """None unless the record is a dependency's."""
    if projects is None or not projects.is_dependency(record.repo):
        return None
    info = projects.info(record.repo)
    if info is None:  # (never: is_dependency found it)
        return None
    location = item.panic.location
    version = (location.crate_version if location else None) or (
        info.pinned.get(own_version) if own_version else None
    )
    own = (projects.own or "the project").rsplit("/", 1)[-1]
    check = _check(projects, item, record, info.name)
    line = record.line_number
    if (
        location is not None
        and location.line
        and location.crate_path
        and record.file_path
        and record.file_path.endswith(location.crate_path)
    ):
        line = location.line  # the pasted line is the site's line in the pasted version
    anchor = f"#L{line}" if line else ""
    if version:
        tag = info.tag_of(version)
        url = f"https://github.com/{record.repo}/blob/{tag}/{record.file_path}{anchor}"
        return words(
            texts.DEPENDENCY_NOTE,
            name=info.name,
            version=version,
            repo=record.repo,
            own=own,
            check=check,
            tag=tag,
            url=url,
        )
    url = record.github_url or f"https://github.com/{record.repo}/blob/HEAD/{record.file_path}"
    return words(
        texts.DEPENDENCY_NOTE_NO_VERSION,
        name=info.name,
        repo=record.repo,
        own=own,
        check=check,
        url=url,
    )


def _check(projects: Projects, item: PanicMatch, record: Record, name: str) -> str:
    message = record.error_message.lower()
    if "validation" in item.panic.message.lower() or "validation" in message:
        caller = _first_caller(projects, item)
        if caller:
            callers = " or ".join(_maintained_names(projects))
            return texts.DEPENDENCY_CHECK_VALIDATION_CALLER.format(
                name=name, caller=caller, callers=callers
            )
        return texts.DEPENDENCY_CHECK_VALIDATION.format(name=name)
    if "assert" in (record.error_type or ""):  # assert!, assert_eq!, ndarray's ndassert!
        return texts.DEPENDENCY_CHECK_ASSERTION.format(name=name)
    return texts.DEPENDENCY_CHECK.format(name=name)


def _maintained_names(projects: Projects) -> list[str]:
    """The own project's and its maintainers' other projects' names (burn, cubecl, burn-onnx)."""
    return [
        h.repo.rsplit("/", 1)[-1] for h in projects.histories if not projects.is_dependency(h.repo)
    ]


def _first_caller(projects: Projects, item: PanicMatch) -> str | None:
    """The first backtrace frame in a crate of the maintainers' projects (burn-*, cubecl-*)."""
    prefixes = tuple(_maintained_names(projects))
    for frame in item.panic.frames:
        crate = frame.crate or ""
        if crate.startswith(prefixes):
            return frame.function
    return None


def moved_note(projects: Projects | None, item: PanicMatch, record: Record) -> Words | None:
    """ "This site moved to tracel-ai/burn-onnx" when the paste comes from a release of another
    project that had the site (burn-import 0.19.1, in burn) and the record is where it lives now."""
    if projects is None or record.id not in projects.moved.values():
        return None
    location = item.panic.location
    history = projects.of_repo(record.repo)
    version = location.crate_version if location else None
    if history is None or not version or any(r.version == version for r in history.releases):
        return None
    moved = _move_event(projects, record)
    if moved is not None:
        event, project = moved
        if event.version is None:
            return words(
                texts.MOVED_NOTE_CHANGE_UNRELEASED,
                repo=record.repo,
                change=change_link(event),
                project=project,
            )
        return words(
            texts.MOVED_NOTE_CHANGE,
            repo=record.repo,
            change=change_link(event),
            project=project,
            released=event.version,
        )
    return words(texts.MOVED_NOTE, repo=record.repo)


def _move_event(projects: Projects, record: Record) -> tuple[HistoryEvent, str] | None:
    """The old project's `moved` event of a site now answered from `record` (burn's #4393), and
    that project's name."""
    for old, new in projects.moved.items():
        if new != record.id:
            continue
        for history in projects.histories:
            for event in history_events(history, old):
                if event.event == "moved":
                    return event, project_name(history)
    return None
