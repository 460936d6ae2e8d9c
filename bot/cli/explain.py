"""`triage-bot catalog explain` and `catalog review` (issue 49): write-ups drafted from the code
by a model the maintainer chooses, checked, and kept as drafts until a person accepts them.

explain: for each record without a write-up (or the ones named), the grounding is read from
the git repository at the record's analysed commit (bot.catalog.explain builds it), sent to
`POST {TRIAGE_LLM_BASE_URL}/chat/completions` through the `openai` client (retries with backoff
on 429 and 5xx), and the answer checked. Every draft, kept or refused, is written to
`DIR/drafts/<id>.draft` as soon as it is back, so an interrupted run resumes where it stopped and
a rerun asks nothing twice. review: lists the drafts and accepts (into `DIR/writeups/<id>.json`,
where answers read them), rejects or edits them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bot.app import Triage
from bot.catalog.explain import (
    DraftError,
    Grounding,
    build_grounding,
    check_draft,
    draft_file,
    family_grounding,
    parse_draft,
    prompt_messages,
    token_estimate,
)
from bot.catalog.loader import (
    DRAFT_SUFFIX,
    DRAFTS_ANSWER_FILE,
    DRAFTS_DIR,
    Catalog,
    CatalogError,
    load_catalog,
)
from bot.catalog.model import Record
from bot.cli.catalog import write_atomic
from bot.cli.output import add_json_option, eta, number_in, print_json
from bot.config.settings import Settings
from bot.core.match.releases import history_events

WRITEUPS_DIR = "writeups"
FAMILY_SITES = 3  # a family's draft is grounded on this many of its sites


def register_catalog(catalog_subparsers: argparse._SubParsersAction) -> None:
    explain = catalog_subparsers.add_parser(
        "explain",
        help="draft write-ups from the code with a chat-completions model",
        description="For each record of DIR without a write-up (or the ones named), read the "
        "site's code at the record's analysed commit from the git repository, ask the model "
        "of TRIAGE_LLM_BASE_URL / TRIAGE_LLM_MODEL for a write-up, check it against the code "
        "and keep it in DIR/drafts/ as a draft (or refused, with the reasons). Drafts never "
        "answer anyone: `catalog review --accept ID` does that.",
    )
    explain.add_argument("--catalog", required=True, metavar="DIR", help="the catalog folder")
    explain.add_argument(
        "--source", metavar="GIT_DIR", help="the project's git repository (bare or not)"
    )
    explain.add_argument("--only", action="append", default=[], metavar="ID", help="this record")
    explain.add_argument(
        "--missing", action="store_true", help="records without a write-up (the default)"
    )
    explain.add_argument(
        "--family",
        metavar="NAME",
        help="draft one write-up for this error family (its sites answer with it), not its sites",
    )
    explain.add_argument(
        "--limit", type=number_in(1, 10**9, "a count", int), metavar="N", help="at most N"
    )
    explain.add_argument(
        "--concurrency",
        type=number_in(1, 64, "a count", int),
        default=2,
        metavar="N",
        help="requests in flight at once",
    )
    explain.add_argument(
        "--rpm",
        type=number_in(1, 100000, "a rate", int),
        default=60,
        metavar="N",
        help="requests per minute at most",
    )
    explain.add_argument(
        "--timeout",
        type=number_in(1, 3600, "seconds", float),
        default=120.0,
        metavar="S",
        help="seconds one answer may take",
    )
    explain.add_argument(
        "--dry-run", action="store_true", help="print the prompts and their sizes, ask nothing"
    )
    add_json_option(explain, "the summary as one JSON object")
    explain.set_defaults(handler=cmd_explain)

    review = catalog_subparsers.add_parser(
        "review",
        help="list drafted write-ups and accept, reject or edit them",
        description="Lists DIR/drafts/ with each draft's status (draft, refused, accepted, "
        "rejected, stale: its site's commit changed since); --accept lays a draft over its "
        "record (DIR/writeups/ID.json), after which answers use it.",
    )
    review.add_argument("--catalog", required=True, metavar="DIR", help="the catalog folder")
    review.add_argument("--accept", action="append", default=[], metavar="ID", help="accept")
    review.add_argument("--reject", action="append", default=[], metavar="ID", help="reject")
    review.add_argument("--edit", metavar="ID", help="edit a draft in $VISUAL or $EDITOR")
    review.add_argument(
        "--source",
        metavar="GIT_DIR",
        help="the git repository: a write-up whose site's function changed since is stale",
    )
    review.add_argument(
        "--drafts-answer",
        choices=("on", "off"),
        help="let unreviewed drafts answer (said in each answer) until they are reviewed",
    )
    add_json_option(review, "one object per draft and line")
    review.set_defaults(handler=cmd_review)


def _err(message: str) -> None:
    print(f"triage-bot: {message}", file=sys.stderr)


def _catalog(folder: Path) -> Catalog | None:
    try:
        return load_catalog([folder])
    except CatalogError as exc:
        _err(f"cannot load the catalog {folder}: {exc.problems[0]}")
        return None


def _triage(folder: Path) -> Triage | None:
    """The folder's catalog with its release history, loaded once for the whole run."""
    try:
        return Triage.from_paths([folder])
    except CatalogError as exc:
        _err(f"cannot load the catalog {folder}: {exc.problems[0]}")
        return None


# --- explain -------------------------------------------------------------------------------


def cmd_explain(args: argparse.Namespace) -> int:
    settings = Settings.load()
    folder = Path(args.catalog)
    if not folder.is_dir():
        _err(f"--catalog {folder}: not a folder")
        return 2
    triage = _triage(folder)
    if triage is None:
        return 2
    catalog = triage.catalog
    source = Path(args.source) if args.source else None
    if source is not None and not _is_git(source):
        _err(f"--source {source}: not a git repository")
        return 2
    if not args.dry_run and not (settings.triage_llm_base_url and settings.triage_llm_model):
        _err(
            "TRIAGE_LLM_BASE_URL and TRIAGE_LLM_MODEL must be set (an OpenAI-compatible "
            "chat-completions server and its model), or use --dry-run"
        )
        return 2
    records = _chosen(catalog, args)
    if records is None:
        return 2
    drafts = folder / DRAFTS_DIR
    summary: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    items: list[tuple[Record, Grounding | None]]
    if args.family:
        # Families first: one write-up for the family, from a few of its sites' facts.
        members = [g for r in records[:FAMILY_SITES] if (g := _grounding(r, source, triage))]
        if not members:
            _err(f"--family {args.family}: none of its sites can be grounded (give --source)")
            return 2
        family = next(f for f in catalog.families if f.id == args.family)
        rules = [*family.message_formats, *family.message_patterns, *family.files]
        grounded = family_grounding(family.id, rules, members)
        items = [(records[0].with_changes(id=grounded.record_id), grounded)]
    else:
        items = [(r, _grounding(r, source, triage)) for r in records]
    work: list[tuple[Record, Grounding]] = []
    for record, grounding in items:
        if grounding is None:
            summary["skipped (no code to ground it: give --source)"] += 1
            continue
        existing = _read(drafts / f"{_file_name(record.id)}{DRAFT_SUFFIX}")
        if existing is not None and existing.get("grounding") == grounding.digest:
            summary["skipped (already drafted)"] += 1
            continue
        work.append((record, grounding))
    if args.limit is not None:
        work = work[: args.limit]
    if args.dry_run:
        for record, grounding in work:
            messages = prompt_messages(grounding)
            print(f"--- {record.id} (about {token_estimate(messages)} tokens)")
            for message in messages:
                print(f"[{message['role']}]\n{message['content']}")
        summary["would ask"] = len(work)
        return _summary(summary, reasons, args.json)
    client = _client(settings, args.timeout)
    if client is None:
        return 2
    model = settings.triage_llm_model or ""
    limiter = _Limiter(args.rpm)
    started = time.monotonic()
    lock = threading.Lock()

    def one(item: tuple[Record, Grounding]) -> None:
        record, grounding = item
        limiter.wait()
        status, why, kept = _ask(client, model, grounding)
        entry = draft_file(
            record.id,
            status,
            model=model,
            commit=record.analyzed_sha,
            grounding=grounding.digest,
            reasons=why,
            draft=kept[0] if kept else None,
            raw=kept[1] if kept and kept[0] is None else None,
        )
        entry["code"] = grounding.code_digest
        entry["groundingText"] = grounding.text
        entry["groundingWords"] = sorted(grounding.words)
        if status != "failed":
            _write(drafts / f"{_file_name(record.id)}{DRAFT_SUFFIX}", entry)
        with lock:
            summary["drafted" if status == "draft" else status] += 1
            for reason in why:
                reasons[reason.split(":", 1)[0]] += 1
            done = sum(summary[k] for k in ("drafted", "refused", "failed"))
            left = eta(started, done, len(work), time.monotonic())
            print(
                f"explain: {done}/{len(work)} ({summary['drafted']} drafted, "
                f"{summary['refused']} refused, {summary['failed']} failed){left}",
                file=sys.stderr,
            )

    with ThreadPoolExecutor(max_workers=args.concurrency) as pool:
        list(pool.map(one, work))
    return _summary(summary, reasons, args.json)


def _file_name(draft_id: str) -> str:
    """`family:NAME` is kept as `family.NAME` (no colon in a file name)."""
    return draft_id.replace("family:", "family.", 1)


def _ask(client: Any, model: str, grounding: Grounding) -> tuple[str, list[str], Any]:
    """("draft" | "refused" | "failed", reasons, (draft or None, raw answer))."""
    import openai  # why: only a run that asks a model needs the client

    try:
        answer = client.chat.completions.create(
            model=model, messages=prompt_messages(grounding), temperature=0.2
        )
        content = answer.choices[0].message.content if answer.choices else None
    except openai.APIError as exc:
        return "failed", [f"the server failed: {_api_error(exc)}"], None
    try:
        draft = parse_draft(content)
    except DraftError as exc:
        return "refused", [f"malformed answer: {exc}"], (None, content or "")
    why = check_draft(draft, grounding)
    return ("refused" if why else "draft"), why, (draft, content)


def _api_error(exc: Exception) -> str:
    status = getattr(exc, "status_code", None)
    text = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
    return f"HTTP {status}: {text}" if status else text


def _client(settings: Any, timeout: float) -> Any:
    try:
        import openai  # why: an optional dependency (pip install 'triage-bot[explain]')
    except ImportError:
        _err("catalog explain needs the openai package: pip install 'triage-bot[explain]'")
        return None
    return openai.OpenAI(
        base_url=settings.triage_llm_base_url,
        api_key=settings.triage_llm_api_key or "none",
        timeout=timeout,
        max_retries=4,  # 429 and 5xx, with the client's backoff (Retry-After honoured)
    )


class _Limiter:
    """At most `per_minute` request starts a minute, spread evenly."""

    def __init__(self, per_minute: int) -> None:
        self.gap = 60.0 / per_minute
        self.next = 0.0
        self.lock = threading.Lock()

    def wait(self) -> None:
        with self.lock:
            now = time.monotonic()
            at = max(now, self.next)
            self.next = at + self.gap
        if at > now:
            time.sleep(at - now)


def _summary(summary: Counter[str], reasons: Counter[str], as_json: bool) -> int:
    if as_json:
        print_json({"counts": dict(summary), "refused_because": dict(reasons)})
    else:
        shown = ", ".join(f"{n} {what}" for what, n in summary.items()) or "nothing to do"
        print(f"explain: {shown}")
        for reason, n in reasons.most_common():
            print(f"  refused {n}: {reason}")
    return 1 if summary.get("failed") else 0


def _chosen(catalog: Catalog, args: argparse.Namespace) -> list[Record] | None:
    if args.only:
        found = []
        for rid in args.only:
            record = catalog.get(rid)
            if record is None:
                _err(f"--only {rid}: no record with that id in the catalog")
                return None
            found.append(record)
        return found
    records: Iterable[Record] = (r for r in catalog if not r.has_write_up)
    if args.family:
        names = {f.id for f in catalog.families}
        if args.family not in names:
            _err(f"--family {args.family}: no family of that id in the catalog")
            return None
        records = (r for r in records if (f := catalog.family(r.id)) and f.id == args.family)
    return sorted(records, key=lambda r: r.id)


def _history_lines(triage: Triage | None, record: Record) -> list[str]:
    if triage is None:
        return []
    events = history_events(triage.history_for(record.repo), record.id)
    return [f"{e.event} in {e.version or 'unreleased'}: {e.title}" for e in events]


def _grounding(record: Record, source: Path | None, triage: Triage | None) -> Grounding | None:
    history = _history_lines(triage, record)
    if source is None or not record.analyzed_sha or not record.file_path:
        if record.source_code:
            return build_grounding(record, None, history=history)
        return None
    text = _git(source, "show", f"{record.analyzed_sha}:{record.file_path}")
    if text is None:
        return None
    crate = _crate_folder(record.file_path)
    callers: list[str] = []
    public: list[str] = []
    if record.enclosing_fn:
        found = _git(
            source, "grep", "-n", "-w", record.enclosing_fn, record.analyzed_sha, "--", crate or "."
        )
        callers = [
            line.split(":", 1)[1][:200]
            for line in (found or "").splitlines()
            if f"fn {record.enclosing_fn}" not in line
        ]
    items = _git(
        source,
        "grep",
        "-h",
        "-o",
        "-E",
        r"pub (fn|struct|enum|trait|type|const|mod) [A-Za-z_][A-Za-z0-9_]*",
        record.analyzed_sha,
        "--",
        crate or ".",
    )
    public = [line.split()[-1] for line in (items or "").splitlines()]
    return build_grounding(record, text, callers, public, history)


def _crate_folder(file_path: str) -> str | None:
    parts = file_path.split("/")
    if "src" in parts:
        at = parts.index("src")
        return "/".join(parts[:at]) or None
    return None


def _is_git(folder: Path) -> bool:
    return _git(folder, "rev-parse", "--git-dir") is not None


def _git(folder: Path, *argv: str) -> str | None:
    done = subprocess.run(
        ["git", "-C", str(folder), *argv], capture_output=True, text=True, check=False
    )
    return done.stdout if done.returncode == 0 else None


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write(path: Path, data: dict[str, Any]) -> None:
    """Atomically: a reader (or a crash) sees the old file or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


# --- review --------------------------------------------------------------------------------


def cmd_review(args: argparse.Namespace) -> int:
    folder = Path(args.catalog)
    drafts = folder / DRAFTS_DIR
    catalog = _catalog(folder)
    if catalog is None:
        return 2
    entries = {
        str(data.get("id")): data
        for path in sorted(drafts.glob(f"*{DRAFT_SUFFIX}"))
        if (data := _read(path)) is not None
    }
    for rid in [*args.accept, *args.reject, *([args.edit] if args.edit else [])]:
        if rid not in entries:
            _err(f"{rid}: no draft of that id in {drafts}")
            return 2
    for rid in args.accept:
        entry = entries[rid]
        if _status(entry, catalog) != "draft":
            _err(f"{rid}: a {_status(entry, catalog)} draft cannot be accepted")
            return 2
        if rid.startswith("family:"):
            problem = _accept_family(folder, rid[len("family:") :], entry["writeup"])
            if problem:
                _err(f"{rid}: {problem}")
                return 2
        else:
            target = folder / WRITEUPS_DIR / f"{rid}.json"
            if target.exists():
                _err(f"{rid}: {target} exists already; remove it to accept this draft")
                return 2
            _write(target, {"id": rid, **entry["writeup"]})
        entry["status"] = "accepted"
        _write(drafts / f"{_file_name(rid)}{DRAFT_SUFFIX}", entry)
    for rid in args.reject:
        entries[rid]["status"] = "rejected"
        _write(drafts / f"{_file_name(rid)}{DRAFT_SUFFIX}", entries[rid])
    if args.edit:
        code = _edit(drafts / f"{_file_name(args.edit)}{DRAFT_SUFFIX}", entries[args.edit])
        if code:
            return code
    if args.drafts_answer == "on":
        drafts.mkdir(parents=True, exist_ok=True)
        (drafts / DRAFTS_ANSWER_FILE).write_text("unreviewed drafts answer, said as such\n")
    elif args.drafts_answer == "off":
        (drafts / DRAFTS_ANSWER_FILE).unlink(missing_ok=True)
    if _catalog(folder) is None:  # an accepted write-up must load: undo is the maintainer's
        return 2
    source = Path(args.source) if args.source else None
    for rid, entry in entries.items():
        status = _status(entry, catalog)
        if (
            source is not None
            and status in ("draft", "accepted")
            and _changed(entry, catalog, source)
        ):
            status = "stale"
        row = {
            "id": rid,
            "status": status,
            "model": entry.get("model") or "",
            "reasons": list(entry.get("reasons") or []),
        }
        if args.json:
            print(json.dumps(row, ensure_ascii=False))
            continue
        record = catalog.get(rid)
        where = (
            f"{record.file_path}:{record.line_number}"
            if record
            else "(an error family)"
            if rid.startswith("family:")
            else "(no such record)"
        )
        print(f"{rid}  {status:<8}  {where}  ({row['model']})")
        writeup = entry.get("writeup") or {}
        if writeup.get("documentation"):
            print(f"    means: {_flat(writeup['documentation'])}")
        if writeup.get("solutions"):
            print(f"    first: {_flat(writeup['solutions'][0])}")
        for reason in row["reasons"]:
            print(f"    refused: {reason}")
    return 0


_FAMILY_FIELDS = {
    "documentation": "documentation",
    "solutions": "solutions",
    "exampleFix": "exampleFix",
    "triggerScenarios": "triggerScenarios",
    "commonSituations": "commonSituations",
    "preventionTips": "preventionTips",
}


def _accept_family(folder: Path, family_id: str, writeup: dict[str, Any]) -> str | None:
    """Lay a family draft over the family's entry in the folder's families file (its
    membership rules kept); why it cannot be, else None."""
    for path in sorted(folder.rglob("*.json")):
        data = _read(path)
        if not data or not isinstance(data.get("families"), list):
            continue
        for family in data["families"]:
            if isinstance(family, dict) and family.get("id") == family_id:
                family.update({k: writeup[k] for k in _FAMILY_FIELDS if k in writeup})
                _write(path, data)
                return None
    return f"no families file of {folder} holds the family `{family_id}`"


def _changed(entry: dict[str, Any], catalog: Catalog, source: Path) -> bool:
    """Whether the site's function, at the record's commit now, differs from the code the
    write-up was drafted from."""
    record = catalog.get(str(entry.get("id")))
    if record is None or not entry.get("code"):
        return False
    now = _grounding(record, source, None)
    return now is not None and bool(now.code_digest) and now.code_digest != entry["code"]


def _status(entry: dict[str, Any], catalog: Catalog) -> str:
    status = str(entry.get("status") or "draft")
    if str(entry.get("id")).startswith("family:"):
        return status
    record = catalog.get(str(entry.get("id")))
    if status == "draft" and record is not None and entry.get("commit") != record.analyzed_sha:
        return "stale"  # the site's commit moved on (a refresh): the grounding is old
    return status


def _flat(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= 160 else line[:159] + "…"


def _edit(path: Path, entry: dict[str, Any]) -> int:
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if not editor:
        _err("--edit needs $VISUAL or $EDITOR")
        return 2
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as out:
        json.dump(entry.get("writeup") or {}, out, indent=2, ensure_ascii=False)
        name = out.name
    try:
        if subprocess.run([*editor.split(), name], check=False).returncode != 0:
            _err(f"{editor} exited with an error; the draft is unchanged")
            return 2
        try:
            edited = parse_draft(Path(name).read_text(encoding="utf-8"))
        except DraftError as exc:
            _err(f"the edited write-up is not usable: {exc}; the draft is unchanged")
            return 2
    finally:
        Path(name).unlink(missing_ok=True)
    grounding = Grounding(
        record_id=str(entry.get("id")),
        text=str(entry.get("groundingText") or ""),
        words=frozenset(entry.get("groundingWords") or ()),
        function=None,
        message="",
        unsupported=(),
    )
    why = [r for r in check_draft(edited, grounding) if not r.startswith("its meaning")]
    entry.update(writeup=edited, status="refused" if why else "draft", reasons=why)
    _write(path, entry)
    return 0
