"""Every catalogued site is answered from a paste of its own panic: the message as the site
prints it (each placeholder filled), under std's header at the site's own file and line, as a
registry crate (`NAME-VERSION/src/..`, the new header) and as a clone of the repository (the
old header, `panicked at 'MSG', PATH`). Run over the bundled catalog and each project's full
catalog (with its release history), every site that says enough alone: a regression in
extraction, path mapping or ranking shows as a site its own paste no longer reaches.

Left out, each for a stated reason: sites whose line Rust does not print (a macro body prints
the invocation's line; a builder's reason is raised at the `check!` call), test code, and
messages that say little alone.
"""

from __future__ import annotations

import re

import pytest
from test_project_corpora import NAMES, project_triage

from bot.app import Triage
from bot.catalog.model import MACRO_BODY_TAG, RAISED_AT_TAG_PREFIX, Record
from bot.core.extract.wrappers import split_wrapper
from bot.core.match.index import specificity

REGISTRY = "/home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f"
_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{[^{}]*\}")
SAYS_ENOUGH = 0.5  # specificity (bot.core.match.index) from which a message is tried


def _filled(message: str) -> str:
    return _PLACEHOLDER.sub(lambda m: {"{{": "{", "}}": "}"}.get(m.group(0), "7"), message)


def _registry_path(record: Record) -> str | None:
    """The record's file as a registry crate's: `crates/NAME/src/x.rs` -> `NAME-999.0.0/src/x.rs`
    (NAME the package's when a `crate:` tag names it)."""
    parts = record.file_path.split("/")
    package = next((t.split(":", 1)[1] for t in record.tags if t.startswith("crate:")), None)
    if package and package in parts[:-1]:
        # below the package's folder, when named as the package (a template a package ships:
        # `crates/tauri-cli/templates/app/src-tauri/src/lib.rs`)
        at = len(parts) - 1 - parts[::-1].index(package)
        crate, inner = package, parts[at + 1 :]
    elif package and "src" in parts[1:]:
        # a package's own folder, however deep (`crates/store/re_chunk/src/..`)
        crate, inner = package, parts[parts.index("src") :]
    elif package and parts[-1] == "build.rs":
        crate, inner = package, parts[-1:]
    elif len(parts) > 2 and parts[0] == "crates":
        crate, inner = parts[1], parts[2:]
    elif len(parts) > 1 and parts[1] == "src":
        crate, inner = parts[0], parts[1:]
    elif parts[0] == "src":
        crate, inner = record.repo.rsplit("/", 1)[-1], parts
    else:
        return None
    return f"{REGISTRY}/{package or crate}-999.0.0/{'/'.join(inner)}"


def _tried(record: Record) -> bool:
    message = record.error_message
    return bool(
        record.line_number
        and not record.removed_at
        and MACRO_BODY_TAG not in record.tags
        and not any(t.startswith(RAISED_AT_TAG_PREFIX) for t in record.tags)
        and "test" not in record.file_path
        # (as the matcher reads it: without std's wrapper, which a message of the project's
        # own may copy, `assertion failed: {dyn_size} <= {concrete_size}`)
        and specificity(split_wrapper(message)[1]) >= SAYS_ENOUGH
        # (and as today's header is read: down to the first blank line, so a message that
        # opens with a value and a blank line, `\n{}\n\nbuild script failed`, says nothing)
        and specificity(message.strip().split("\n\n")[0]) >= SAYS_ENOUGH
    )


def _pastes(record: Record) -> dict[str, str]:
    message, line = _filled(record.error_message), record.line_number
    clone = f"/home/u/src/{record.repo.rsplit('/', 1)[-1]}/{record.file_path}"
    out = {"clone, old header": f"thread 'main' panicked at '{message}', {clone}:{line}:9\n"}
    registry = _registry_path(record)
    if registry is not None:
        out["registry"] = f"thread 'main' panicked at {registry}:{line}:9:\n{message}\n"
    return out


@pytest.mark.parametrize("project", ["burn", *NAMES])
def test_every_site_is_answered_from_a_paste_of_its_own_panic(project: str) -> None:
    triage = Triage.from_paths() if project == "burn" else project_triage(project)
    catalog = triage.catalog
    records = sorted((catalog.get(rid) for rid in list(catalog.records)), key=lambda r: r.id)
    tried = [r for r in records if r is not None and _tried(r)]
    live = [r for r in records if r is not None and not r.removed_at]  # (removed: never tried)
    assert len(tried) >= min(50, len(live) // 4), (project, len(tried))
    failures = []
    for record in tried:
        for form, text in _pastes(record).items():
            answered = triage.analyse(text).answered
            top = catalog.get(answered[0].best.record_id) if answered else None
            if top is None or (top.file_path, top.error_message) != (
                record.file_path,
                record.error_message,
            ):
                got = top and f"{top.file_path}:{top.line_number} {top.error_message[:60]!r}"
                failures.append(
                    f"{form}: {record.file_path}:{record.line_number} "
                    f"{record.error_message[:60]!r} -> {got or 'silent'}"
                )
    assert not failures, f"{project}: {len(failures)} of {len(tried)} sites\n" + "\n".join(
        failures[:20]
    )
