"""`triage-bot catalog`: the group, and its actions validate, lint, show and import.

`register(subparsers)` creates the group; `register_catalog(actions)` adds this module's
actions to it, as bot.cli.scan's and bot.cli.stats' do theirs (bot.cli.CATALOG_MODULES says
which module adds which action). Messages (problems, findings, summaries) go to stderr or
stdout as each command's help says; records (the data) go to stdout or to files. Every handler
returns the process exit code.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bot import cli
from bot.app import load_bundled
from bot.catalog.importers import (
    ImportFormatError,
    import_document,
    import_panic_sites,
    looks_like_panic_sites,
)
from bot.catalog.lint import WARNING, lint_catalog
from bot.catalog.loader import Catalog, CatalogError, bundled_catalog_path, load_catalog
from bot.catalog.model import fields_of, record_from_dict, record_to_dict
from bot.catalog.validate import DRAFT_TEXT, check_record
from bot.cli.output import add_json_option, print_json

FORMATS = ("auto", "json", "page", "panic-sites")
PANIC_SITES_FILE = "panic_sites.jsonl"
SHOWN_CANDIDATES = 10  # ids listed when a `catalog show` prefix fits several
# An id becomes a file name (`DIR/<id>.json`), so it must be a plain name.
_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def _err(message: str) -> None:
    print(message, file=sys.stderr)


def _load(
    paths: Sequence[str] | None, verdict: Callable[[int], str] | None = None
) -> Catalog | None:
    """The catalog at `paths`, or the bundled one when none are given; None once its problems
    (then `verdict(how many)`) are on stderr."""
    try:
        return load_catalog(list(paths)) if paths else load_bundled().catalog
    except CatalogError as exc:
        for problem in exc.problems:
            _err(str(problem))
        if verdict is not None:
            _err(verdict(len(exc.problems)))
        return None


def register(subparsers: argparse._SubParsersAction) -> None:
    catalog = subparsers.add_parser(
        "catalog",
        help="the error catalog",
        description="Work with the error catalog: check it, review it, look records up, "
        "import records from JSON documents, rendered pages or panic-site lists, scan a Rust "
        "checkout for panic sites, follow the code as it changes, and draft records for "
        "uncatalogued panics.",
    )
    catalog.add_subparsers(dest="catalog_command", metavar="ACTION")


def register_catalog(sub: argparse._SubParsersAction) -> None:
    validate = sub.add_parser(
        "validate",
        help="check catalog files; exit 1 on any error",
        description="Load catalog files or folders and report every problem, one line each, "
        "on stderr. Exit 1 if there is any, or the catalog is empty or holds draft "
        "placeholders (other commands exit 2 when given a catalog that does not load). "
        "Without PATH, checks the bundled catalog.",
    )
    validate.add_argument("paths", nargs="*", metavar="PATH", help="catalog file or folder")
    add_json_option(validate, "the verdict (ok, records, problems, warnings, drafts)")
    validate.set_defaults(handler=cmd_validate)

    lint = sub.add_parser(
        "lint",
        help="point at records a person should review",
        description="Load the catalog and print, on stdout, the findings that need a person "
        "(warnings), one line each. Informational findings (such as messages shared by several "
        "records) are summarised on stderr unless --all is given. Without PATH, lints the "
        "bundled catalog.",
    )
    lint.add_argument("paths", nargs="*", metavar="PATH", help="catalog file or folder")
    lint.add_argument("--all", action="store_true", help="also print informational findings")
    lint.add_argument("--strict", action="store_true", help="exit 1 when there is any warning")
    add_json_option(lint, "the findings (record, file, code, level, message) and counts")
    lint.set_defaults(handler=cmd_lint)

    show = sub.add_parser(
        "show",
        help="print a record as JSON",
        description="Print the record with this id (or the one id that starts with it) as JSON "
        "on stdout; its file and review flags go to stderr. Exit 1 if there is no such record "
        "or the prefix fits several.",
    )
    show.add_argument("id", metavar="ID", help="the record's id, or a prefix of one id")
    show.add_argument(
        "--catalog",
        action="append",
        metavar="PATH",
        help="catalog file or folder (repeatable; default: the bundled catalog)",
    )
    show.set_defaults(handler=cmd_show)

    imp = sub.add_parser(
        "import",
        help="turn JSON documents, rendered pages or panic-site lists into catalog files",
        description="Import records. JSON documents and pages give one DIR/<id>.json per "
        f"record; panic-site lists give one DIR/{PANIC_SITES_FILE}. Nothing is written if "
        "any input has a problem.",
    )
    imp.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="JSON documents, rendered pages or panic-site lists (.jsonl) to import",
    )
    imp.add_argument("--out", required=True, metavar="DIR", help="folder to write into")
    imp.add_argument(
        "--format",
        choices=FORMATS,
        default="auto",
        help="input format (default: auto, decided per file from its content)",
    )
    imp.add_argument(
        "--repo",
        metavar="OWNER/NAME",
        help="repository of panic-site lists (default: the bundled catalog's own project, the "
        "repository of its first release history); for JSON and pages, which name their "
        "repository, a check that they name this one",
    )
    imp.set_defaults(handler=cmd_import)

    site = sub.add_parser(
        "site",
        help="write the catalog's pages as static files (for GitHub Pages)",
        description="Write a page per record (DIR/errors/ID/), the list (DIR/index.html, "
        "DIR/errors/), each record's JSON (DIR/api/errors/ID.json) and the stylesheet, with "
        "relative links. No paste form: that needs `serve`. Without PATH, the bundled catalog.",
    )
    site.add_argument("paths", nargs="*", metavar="PATH", help="catalog file or folder")
    site.add_argument("--out", required=True, metavar="DIR", help="folder to write into")
    site.set_defaults(handler=cmd_site)


# ---------------------------------------------------------------------------------------------


def cmd_site(args: argparse.Namespace) -> int:
    """The static export (bot.site.export); a summary line on stderr."""
    from bot.app import Triage  # why: only this action builds pages
    from bot.site.export import export_site
    from bot.site.pages import Site

    catalog = _load(args.paths)
    if catalog is None:
        return 2
    triage = Triage(catalog) if args.paths else Triage.of(load_bundled())
    try:
        counts = export_site(Site(triage, static=True), Path(args.out))
    except OSError as exc:
        _err(f"triage-bot: cannot write {args.out}: {exc.strerror or exc}")
        return 1
    _err(
        f"{counts['records']} record pages, {counts['list_pages']} list pages, "
        f"{counts['files']} files in {args.out}"
    )
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    """Exit 1 when the catalog has problems (that is what this command finds; every other
    command exits 2 when given a catalog that does not load), is empty or holds drafts."""
    if args.json:
        return _validate_json(args.paths)
    catalog = _load(
        args.paths, lambda n: f"{n} problem{'s' if n != 1 else ''}; the catalog cannot be used"
    )
    if catalog is None:
        return 1
    for warning in catalog.warnings:
        _err(f"warning: {warning}")
    if not len(catalog):
        _err(_no_records(args.paths))
        return 1
    drafts = _drafts(catalog)
    if drafts:
        _err(f"{drafts} draft placeholder{'s' if drafts != 1 else ''}; not ready to publish")
        return 1
    _err(f"ok: {len(catalog)} records")
    return 0


def _drafts(catalog: Catalog) -> int:
    return sum(1 for warning in catalog.warnings if warning.message == DRAFT_TEXT)


def _problem_json(problem: Any) -> dict[str, Any]:
    return {
        "file": problem.file,
        "line": problem.line,
        "record": problem.record_id,
        "field": problem.field,
        "message": problem.message,
    }


def _validate_json(paths: Sequence[str]) -> int:
    """`validate --json`: one object (schemas/validate.schema.json), the same exit status."""
    try:
        catalog = load_catalog(list(paths)) if paths else load_bundled().catalog
    except CatalogError as exc:
        problems = [_problem_json(p) for p in exc.problems]
        print_json(
            {"ok": False, "records": None, "problems": problems, "warnings": [], "drafts": 0}
        )
        return 1
    drafts = _drafts(catalog)
    warnings = [_problem_json(p) for p in catalog.warnings]
    problems = (
        []
        if len(catalog)
        else [
            {
                "file": None,
                "line": None,
                "record": None,
                "field": None,
                "message": _no_records(paths),
            }
        ]
    )
    ok = not problems and not drafts
    print_json(
        {
            "ok": ok,
            "records": len(catalog),
            "problems": problems,
            "warnings": warnings,
            "drafts": drafts,
        }
    )
    return 0 if ok else 1


def _no_records(paths: Sequence[str]) -> str:
    return (
        f"no records in {', '.join(paths) or 'the bundled catalog'}: a catalog is .json and "
        ".jsonl record files (folders are read recursively); an empty catalog answers nothing"
    )


def cmd_lint(args: argparse.Namespace) -> int:
    catalog = _load(
        args.paths, lambda _: "the catalog does not load; fix these first (see `catalog validate`)"
    )
    if catalog is None:
        return 2
    if not len(catalog):
        _err(_no_records(args.paths))
        return 1
    findings = lint_catalog(catalog)
    warnings = [f for f in findings if f.level == WARNING]
    infos = [f for f in findings if f.level != WARNING]
    if args.json:
        shown = findings if args.all else warnings
        print_json(
            {
                "records": len(catalog),
                "warnings": len(warnings),
                "infos": len(infos),
                "findings": [{n: getattr(f, n) for n in fields_of(f)} for f in shown],
            }
        )
        return 1 if args.strict and warnings else 0
    for finding in warnings:
        print(finding)
    if args.all:
        for finding in infos:
            print(finding)
    elif infos:
        by_code: dict[str, int] = {}
        for finding in infos:
            by_code[finding.code] = by_code.get(finding.code, 0) + 1
        summary = ", ".join(f"{n} {code}" for code, n in sorted(by_code.items()))
        _err(f"info: {summary} (use --all to list them)")
    _err(f"{len(warnings)} warning{'s' if len(warnings) != 1 else ''} in {len(catalog)} records")
    return 1 if args.strict and warnings else 0


def cmd_show(args: argparse.Namespace) -> int:
    catalog = _load(args.catalog)
    if catalog is None:
        return 2
    record = catalog.get(args.id)
    if record is None:
        candidates = sorted(r.id for r in catalog if r.id.startswith(args.id)) if args.id else []
        if len(candidates) == 1:
            record = catalog.get(candidates[0])
        elif candidates:
            shown = ", ".join(candidates[:SHOWN_CANDIDATES])
            more = len(candidates) - SHOWN_CANDIDATES
            _err(
                f"{len(candidates)} records have ids starting with {args.id}: {shown}"
                + (f" and {more} more" if more > 0 else "")
                + "; give more of the id"
            )
            return 1
    if record is None:
        _err(f"no record has the id {args.id}")
        same = catalog.by_message(args.id)
        if same:
            _err("records with that message: " + ", ".join(r.id for r in same))
        return 1
    print(json.dumps(record_to_dict(record), indent=2, ensure_ascii=False))
    if record.origin:
        _err(f"from {record.origin}")
    flags = catalog.flags(record.id)
    if flags:
        _err("flags: " + ", ".join(sorted(flags)))
    return 0


# ---------------------------------------------------------------------------------------------


def _detect(path: str, wanted: str) -> str:
    if wanted != "auto":
        return wanted
    return "panic-sites" if looks_like_panic_sites(path) else "auto"


def _normalised(data: dict[str, Any]) -> dict[str, Any]:
    """The record as the catalog writes it (canonical field order, unknown fields kept)."""
    return record_to_dict(record_from_dict(data))


def write_atomic(path: Path, text: str) -> None:
    """Write via a temporary file beside `path`, so a reader never sees half a file.

    (The temporary file is opened normally, not with mkstemp, so it gets the usual permissions.)
    """
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temp, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def _bundled_own_repo() -> str | None:
    """The bundled catalog's own project (the repository of its first release history, as
    bot.app.load_projects reads it), or None when it has no history."""
    for path in sorted(bundled_catalog_path().rglob("*.ndjson")):
        try:
            with path.open(encoding="utf-8") as lines:
                repo = json.loads(lines.readline() or "{}").get("repo")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(repo, str) and repo:
            return repo
    return None


def cmd_import(args: argparse.Namespace) -> int:
    problems: list[str] = []
    documents: list[tuple[str, dict[str, Any]]] = []  # (source file, record)
    sites: list[tuple[str, dict[str, Any]]] = []
    for file in args.files:
        kind = _detect(file, args.format)
        try:
            if kind == "panic-sites":
                repo = args.repo or _bundled_own_repo()
                if repo is None:
                    problems.append(f"{file}: a panic-site list names no repository: pass --repo")
                    continue
                found = import_panic_sites(file, repo=repo)
                sites.extend((file, record) for record in found)
            else:
                found = import_document(file, kind)
                documents.extend((file, record) for record in found)
        except ImportFormatError as exc:
            problems.append(str(exc))
        except OSError as exc:
            problems.append(f"{file}: cannot be read: {exc.strerror or exc}")

    seen: dict[str, str] = {}
    tagged = [(f, r, True) for f, r in documents] + [(f, r, False) for f, r in sites]
    for file, record, is_document in tagged:
        errors, _notes = check_record(record, file)
        problems.extend(str(p) for p in errors)
        record_id = record.get("id")
        if not isinstance(record_id, str):
            continue
        if record_id in seen:
            problems.append(f"{file}: record {record_id}: the id is also used in {seen[record_id]}")
        seen.setdefault(record_id, file)
        if is_document:
            if not _SAFE_ID.match(record_id):
                problems.append(
                    f"{file}: record {record_id}: the id cannot be a file name; ids are "
                    "letters, digits, `.`, `_` and `-`"
                )
            if args.repo and record.get("repo") != args.repo:
                problems.append(
                    f"{file}: record {record_id}: the record is for {record.get('repo')}, "
                    f"not {args.repo}"
                )
    if problems:
        for problem in problems:
            _err(problem)
        _err(f"nothing written: {len(problems)} problem{'s' if len(problems) != 1 else ''}")
        return 1

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for _file, record in documents:
        text = json.dumps(_normalised(record), indent=2, ensure_ascii=False) + "\n"
        write_atomic(out / f"{record['id']}.json", text)
    if sites:
        lines = [json.dumps(_normalised(r), ensure_ascii=False) for _f, r in sites]
        write_atomic(out / PANIC_SITES_FILE, "\n".join(lines) + "\n")
    if documents:
        _err(f"wrote {len(documents)} record file{'s' if len(documents) != 1 else ''} to {out}")
    if sites:
        _err(f"wrote {len(sites)} panic sites to {out / PANIC_SITES_FILE}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the catalog commands on their own: `python -m bot.cli.catalog import ...`."""
    return cli.main(["catalog", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    raise SystemExit(main())
