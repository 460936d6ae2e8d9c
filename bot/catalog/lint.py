"""Catalog lint: records that load fine but that a catalog author should look at.

Validation (`validate.py`) refuses what cannot be used; lint points at what is probably wrong:
a message that would match almost any panic, a write-up that seems to describe another error,
links that drift, excerpts whose line numbers do not add up, messages shared by several records.

Findings are "warning" (a person should look) or "info" (worth knowing, often legitimate).
"""

from __future__ import annotations

import re

# The stdlib parser, used only to read a pattern's literal text (typeshed has no stub for it).
import re._parser as sre_parse  # type: ignore[import-not-found]
from collections.abc import Iterable

from bot.catalog.families import Family, family_contradiction
from bot.catalog.model import KEY_BY_ATTR, Record, value_class
from bot.catalog.patterns import literal_fragments, normalise_message

WARNING = "warning"
INFO = "info"

POSSIBLE_MISMATCH = "possible-mismatch"
DRAFT_TEXT = "draft-text"
NAMES_ABSENT_CODE = "names-absent-code"
CONTRADICTS_FAMILY = "contradicts-family"
# `catalog refresh` tags a written-up record whose site changed since the write-up was edited.
WRITEUP_SITE_CHANGED = "writeup-site-changed"
WRITEUP_REVIEW_TAG = "writeup-review:"
_REVIEW_WHY = {
    "message-changed": "the site's message changed since the write-up was last edited; check "
    "that the write-up still fits, then edit its file (which clears this)",
    "site-gone": "the site vanished from the code since the write-up was last edited; the "
    "record is kept for older releases: check the write-up, then edit its file",
}


@value_class(frozen=True)
class LintFinding:
    record_id: str | None
    file: str
    code: str
    message: str
    level: str = WARNING

    def __str__(self) -> str:
        parts = [self.file or "<catalog>"]
        if self.record_id:
            parts.append(f"record {self.record_id}")
        parts.append(f"{self.level} {self.code}")
        return ": ".join(parts) + ": " + self.message


# ---------------------------------------------------------------------------------------------
# Write-ups that talk about something else
# ---------------------------------------------------------------------------------------------

# snake_case (at least one inner underscore), CamelCase (a capital, a small letter, and another
# capital later), and `code` spans. Leading-underscore names (`_x`) are parameter noise.
_SNAKE = re.compile(r"(?<![\w])[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+(?![\w])")
_CAMEL = re.compile(r"(?<![\w])[A-Z][A-Za-z0-9]*(?![\w])")
_CODE_SPAN = re.compile(r"`([^`\n]{1,120})`")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")
# Shorter names ("f32", "dim") occur everywhere; they say nothing about which error this is.
_MIN_IDENTIFIER = 4
# Flag when fewer than this share of the write-up's identifiers appear in message or source.
_MISMATCH_RATIO = 0.25
_MISMATCH_MIN_IDENTIFIERS = 2


def _is_camel(word: str) -> bool:
    return any(c.islower() for c in word) and any(c.isupper() for c in word[1:])


def _squash(text: str) -> str:
    """Lower case, letters and digits only, so `BackendRouter` and `backend_router` meet."""
    return _NOT_ALNUM.sub("", text.lower())


def identifiers(text: str) -> list[str]:
    """Code-like names in prose: snake_case, CamelCase and words inside `code` spans, in order."""
    found: list[tuple[int, str]] = []
    found.extend((m.start(), m.group(0)) for m in _SNAKE.finditer(text))
    found.extend((m.start(), m.group(0)) for m in _CAMEL.finditer(text) if _is_camel(m.group(0)))
    for span in _CODE_SPAN.finditer(text):
        found.extend(
            (span.start() + w.start(), w.group(0))
            for w in _WORD.finditer(span.group(1))
            if len(w.group(0)) >= _MIN_IDENTIFIER
        )
    seen: dict[str, str] = {}
    for _position, name in sorted(found):
        key = _squash(name)
        if len(key) >= _MIN_IDENTIFIER and key not in seen:
            seen[key] = name
    return list(seen.values())


def _mismatch(record: Record) -> tuple[list[str], list[str]] | None:
    """(identifiers found, identifiers missing) when the write-up looks misfiled, else None.

    Only records with a write-up and a source excerpt are checked: without the excerpt, a
    write-up naming functions that the message does not is normal and proves nothing.
    """
    if not record.source_code or not (record.documentation or record.solutions):
        return None
    prose = "\n".join([record.documentation or "", *record.solutions])
    names = identifiers(prose)
    if len(names) < _MISMATCH_MIN_IDENTIFIERS:
        return None
    haystack = _squash(
        "\n".join([record.error_message, record.source_code, record.file_path or ""])
    )
    found = [n for n in names if _squash(n) in haystack]
    missing = [n for n in names if _squash(n) not in haystack]
    if len(found) / len(names) < _MISMATCH_RATIO:
        return found, missing
    return None


def mismatch_flags(record: Record) -> frozenset[str]:
    """Review flags for one record: `possible-mismatch` when its write-up looks misfiled.

    Cheap for the common case: skeleton records (no write-up) return at once.
    """
    if not record.has_write_up:
        return frozenset()
    return frozenset({POSSIBLE_MISMATCH}) if _mismatch(record) else frozenset()


# ---------------------------------------------------------------------------------------------
# Write-ups that contradict their family's code-checked explanation
# ---------------------------------------------------------------------------------------------


def review_flags(record: Record, families: Iterable[Family] = ()) -> frozenset[str]:
    """Every review flag of one record: `possible-mismatch`, `contradicts-family`."""
    if not record.has_write_up:
        return frozenset()
    flags = set(mismatch_flags(record))
    if family_contradiction(record, families):
        flags.add(CONTRADICTS_FAMILY)
    return frozenset(flags)


def _check_contradiction(record: Record, families: list[Family]) -> list[LintFinding]:
    found = family_contradiction(record, families)
    if not found:
        return []
    family, claim = found
    return [
        LintFinding(
            record.id,
            record.origin,
            CONTRADICTS_FAMILY,
            f"the write-up says “{claim}”, which the explanation of its error family "
            f"`{family.id}` (checked against the code) says is wrong; answers lead with the "
            "family's explanation and fold this write-up away until it is corrected",
        )
    ]


def _quote_list(names: list[str], limit: int = 6) -> str:
    shown = ", ".join(f"`{n}`" for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _check_mismatch(record: Record) -> list[LintFinding]:
    result = _mismatch(record)
    if not result:
        return []
    found, missing = result
    also = f" (only {_quote_list(found)} does)" if found else ""
    return [
        LintFinding(
            record.id,
            record.origin,
            POSSIBLE_MISMATCH,
            f"the explanation and solutions talk about {_quote_list(missing)}, but none of "
            f"these appear in the error message or the source excerpt{also}; the write-up may "
            "describe a different error than the one this record is for",
        )
    ]


# ---------------------------------------------------------------------------------------------
# Patterns that match almost anything
# ---------------------------------------------------------------------------------------------

# A pattern is broad when its fixed text is at most this many words with fewer letters than this.
_FEW_WORDS = 2
_FEW_LETTERS = 12
_LETTERS_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")


def _regex_literal(parsed: sre_parse.SubPattern) -> str:
    """The text every match of a parsed regex must contain, with gaps as spaces."""
    out: list[str] = []
    for op, av in parsed:
        if op is sre_parse.LITERAL:
            out.append(chr(av))
        elif op is sre_parse.SUBPATTERN:
            out.append(_regex_literal(av[-1]))
        elif op in (sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT):
            low, _high, sub = av
            out.append(" " + (_regex_literal(sub) if low >= 1 else "") + " ")
        elif op is sre_parse.BRANCH:
            branches = [_regex_literal(b) for b in av[1]]
            out.append(" " + min(branches, key=_letter_count) + " ")
        else:
            out.append(" ")
    return "".join(out)


def _letter_count(text: str) -> int:
    return sum(c.isalpha() for c in text)


def _fixed_text(record: Record) -> tuple[str, str]:
    """(what the pattern is, its fixed text): the explicit pattern, else the message."""
    if record.message_pattern:
        try:
            parsed = sre_parse.parse(record.message_pattern)
        except re.error:
            return "messagePattern", record.message_pattern  # validation reports bad regexes
        return "messagePattern", _regex_literal(parsed)
    return "errorMessage", " ".join(literal_fragments(record.error_message))


def _check_broad(record: Record) -> list[LintFinding]:
    source, fixed = _fixed_text(record)
    value = record.message_pattern if source == "messagePattern" else record.error_message
    words = _LETTERS_WORD.findall(fixed)
    if not words:
        why = "is nothing but placeholders" if source == "errorMessage" else "has no fixed words"
        text = (
            f"the {source} `{value}` {why}, so it would match almost any panic; give the record "
            "a pattern with the words that tell this error apart, or leave it out of matching"
        )
        return [LintFinding(record.id, record.origin, "broad-pattern", text)]
    if len(words) <= _FEW_WORDS and _letter_count(fixed) < _FEW_LETTERS:
        text = (
            f"the {source} `{value}` has only a few short fixed words (`{' '.join(words)}`), so "
            "it would also match unrelated panics that mention them; add more of the message's "
            "text, or confirm by hand that matches on it are right"
        )
        return [LintFinding(record.id, record.origin, "broad-pattern", text)]
    return []


# ---------------------------------------------------------------------------------------------
# Links and excerpts
# ---------------------------------------------------------------------------------------------

_GITHUB_FILE = re.compile(
    r"^https?://github\.com/(?P<repo>[^/\s]+/[^/\s]+)/(?:blob|tree|raw)/(?P<ref>[^/\s#?]+)"
    r"/(?P<path>[^#?\s]*)(?:#L(?P<first>\d+)(?:-L(?P<last>\d+))?)?$"
)
_COMMIT = re.compile(r"^[0-9a-fA-F]{7,40}$")


def _check_url(record: Record) -> list[LintFinding]:
    url = record.github_url
    if not url:
        return []
    found = _GITHUB_FILE.match(url)
    if not found:
        return [
            LintFinding(
                record.id,
                record.origin,
                "unpinned-url",
                f"githubUrl `{url}` is not a link to a file at a commit "
                "(https://github.com/OWNER/REPO/blob/SHA/PATH#LLINE); readers cannot tell which "
                "version of the code it means",
            )
        ]
    findings: list[LintFinding] = []

    def warn(code: str, message: str) -> None:
        findings.append(LintFinding(record.id, record.origin, code, message))

    ref = found["ref"]
    if not _COMMIT.match(ref):
        warn(
            "unpinned-url",
            f"githubUrl points at `{ref}`, a branch or tag that moves, so its line numbers "
            "will drift; link to a commit SHA instead"
            + (f" (for example {record.analyzed_sha})" if record.analyzed_sha else ""),
        )
    elif record.analyzed_sha and not (
        ref.lower().startswith(record.analyzed_sha.lower())
        or record.analyzed_sha.lower().startswith(ref.lower())
    ):
        warn(
            "url-mismatch",
            f"githubUrl is pinned to {ref} but the record was analysed at "
            f"{record.analyzed_sha}; the link may show different code",
        )
    if found["repo"].lower() != record.repo.lower():
        warn(
            "url-mismatch",
            f"githubUrl points into {found['repo']} but the record is for {record.repo}",
        )
    if record.file_path and found["path"] != record.file_path:
        warn(
            "url-mismatch",
            f"githubUrl shows {found['path']} but filePath is {record.file_path}",
        )
    if record.line_number and found["first"]:
        first = int(found["first"])
        last = int(found["last"] or first)
        if not first <= record.line_number <= last:
            span = f"line {first}" if first == last else f"lines {first}-{last}"
            warn(
                "url-mismatch",
                f"githubUrl highlights {span} but lineNumber is {record.line_number}",
            )
    return findings


def _check_excerpt(record: Record) -> list[LintFinding]:
    start, end, line = record.source_code_start, record.source_code_end, record.line_number
    if start is None or end is None:
        return []
    findings: list[LintFinding] = []
    if start > end:
        findings.append(
            LintFinding(
                record.id,
                record.origin,
                "line-outside-excerpt",
                f"sourceCodeStart ({start}) comes after sourceCodeEnd ({end})",
            )
        )
        return findings
    if line is not None and not start <= line <= end:
        findings.append(
            LintFinding(
                record.id,
                record.origin,
                "line-outside-excerpt",
                f"lineNumber {line} is outside the source excerpt, which covers lines "
                f"{start}-{end}; either the line or the excerpt is from another place",
            )
        )
    if record.source_code:
        count = record.source_code.count("\n") + 1
        if count != end - start + 1:
            findings.append(
                LintFinding(
                    record.id,
                    record.origin,
                    "excerpt-length",
                    f"the source excerpt has {count} lines but sourceCodeStart..sourceCodeEnd "
                    f"({start}-{end}) spans {end - start + 1}; its line numbers are off",
                )
            )
    return findings


# ---------------------------------------------------------------------------------------------
# Messages shared by several records
# ---------------------------------------------------------------------------------------------


def _disagreeing_in_one_file(written: list[Record]) -> list[Record]:
    """The written-up records that share a file with another whose write-up differs: in
    different files, the pasted file tells them apart (each write-up covers its own site)."""
    by_file: dict[str | None, list[Record]] = {}
    for record in written:
        by_file.setdefault(record.file_path, []).append(record)
    out: list[Record] = []
    for same_file in by_file.values():
        texts = {tuple(_write_up_fields(r)) for r in same_file}
        if len(same_file) >= 2 and len(texts) > 1:
            out.extend(same_file)
    return out


def _write_up_fields(record: Record) -> list[object]:
    return [
        record.documentation,
        record.trigger_scenarios,
        tuple(record.solutions),
        record.example_fix,
    ]


def _check_duplicates(records: list[Record]) -> list[LintFinding]:
    groups: dict[str, list[Record]] = {}
    for record in records:
        groups.setdefault(normalise_message(record.error_message), []).append(record)
    findings: list[LintFinding] = []
    for message, group in groups.items():
        if len(group) < 2:
            continue
        written = _disagreeing_in_one_file([r for r in group if r.has_write_up])
        ids = ", ".join(r.id for r in group[:5]) + (
            f" and {len(group) - 5} more" if len(group) > 5 else ""
        )
        first = group[0]
        if len(written) >= 2:
            findings.append(
                LintFinding(
                    written[0].id,
                    written[0].origin,
                    "conflicting-write-ups",
                    f"{len(written)} written-up records share the message `{message}` "
                    f"in one file ({', '.join(r.id for r in written)}) with different write-ups; "
                    "a pasted location cannot always tell two lines of one file apart, so make "
                    "them agree",
                )
            )
        else:
            places = len({(r.file_path, r.line_number) for r in group})
            findings.append(
                LintFinding(
                    first.id,
                    first.origin,
                    "duplicate-message",
                    f"{len(group)} records share the message `{message}` ({ids}), at {places} "
                    "places; the panic's file and line decide between them",
                    INFO,
                )
            )
    return findings


# ---------------------------------------------------------------------------------------------
# Related errors that lead nowhere
# ---------------------------------------------------------------------------------------------

DANGLING_RELATED = "dangling-related-error"


def _check_related(records: list[Record]) -> list[LintFinding]:
    """`relatedErrors` entries are messages (a record's `errorMessage`; a record id works too),
    matched exactly. The answer can still link a cut-off entry that starts one record's message,
    and leaves out one it cannot link; either way the entry should be written in full."""
    ids = {record.id for record in records}
    messages = {normalise_message(record.error_message) for record in records}
    findings: list[LintFinding] = []
    for record in records:
        for entry in record.related_errors:
            if not entry.strip() or entry in ids or normalise_message(entry) in messages:
                continue
            findings.append(
                LintFinding(
                    record.id,
                    record.origin,
                    DANGLING_RELATED,
                    f"related error `{' '.join(entry.split())[:120]}` is neither a record's "
                    "errorMessage nor a record id in this catalog (the answer links it only when "
                    "it is the start of one record's message, and otherwise leaves it out); write "
                    "the message as the code does, or add its record",
                )
            )
    return findings


# ---------------------------------------------------------------------------------------------


def _check_draft(record: Record) -> list[LintFinding]:
    return [
        LintFinding(
            record.id,
            record.origin,
            DRAFT_TEXT,
            f"`{KEY_BY_ATTR[attr]}` is a placeholder (`TODO`/`DRAFT`); answers leave it out",
        )
        for attr in record.draft_fields()
    ]


# A backticked span that names code: a path (`Tensor::cat`), a call (`reshape(..)`), or one
# snake_case / CamelCase word; plain words and values (`dim`, `42`) say nothing checkable.
_CODE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*")
# The texts that say what the site does; solutions and fixes name the user's code and other API.
_MEANING_ATTRS = ("documentation", "trigger_scenarios")


def _site_words(record: Record) -> set[str]:
    """The names the record itself shows of its site: message, function, file, excerpt."""
    held = " ".join(
        filter(
            None, (record.error_message, record.enclosing_fn, record.file_path, record.source_code)
        )
    )
    return set(_WORD.findall(held))


def _check_named_code(record: Record) -> list[LintFinding]:
    """Backticked names in the meaning texts that the site's function (as the record holds it:
    message, enclosing function, file path, source excerpt) does not contain."""
    if not record.has_write_up:
        return []
    words: set[str] | None = None
    absent: list[str] = []
    for attr in _MEANING_ATTRS:
        for span in _CODE_SPAN.findall(getattr(record, attr) or ""):
            for name in _CODE_NAME.findall(span):
                if not ("_" in name.strip("_") or "::" in name or _is_camel(name)):
                    continue
                if words is None:
                    words = _site_words(record)
                if not set(name.split("::")) <= words and name not in absent:
                    absent.append(name)
    if not absent:
        return []
    return [
        LintFinding(
            record.id,
            record.origin,
            NAMES_ABSENT_CODE,
            f"the write-up names {_quote_list(absent)}, which the site's function does not show",
        )
    ]


def _check_writeup_review(record: Record) -> list[LintFinding]:
    return [
        LintFinding(
            record.id,
            record.origin,
            WRITEUP_SITE_CHANGED,
            _REVIEW_WHY.get(why, f"the site changed ({why}) since the write-up was edited"),
        )
        for tag in record.tags or ()
        if tag.startswith(WRITEUP_REVIEW_TAG)
        for why in [tag[len(WRITEUP_REVIEW_TAG) :]]
    ]


def lint_records(records: Iterable[Record], families: Iterable[Family] = ()) -> list[LintFinding]:
    records = list(records)
    families = list(families)
    findings: list[LintFinding] = []
    for record in records:
        findings.extend(_check_draft(record))
        findings.extend(_check_writeup_review(record))
        findings.extend(_check_named_code(record))
        findings.extend(_check_broad(record))
        findings.extend(_check_mismatch(record))
        if families:
            findings.extend(_check_contradiction(record, families))
        findings.extend(_check_url(record))
        findings.extend(_check_excerpt(record))
    findings.extend(_check_duplicates(records))
    findings.extend(_check_related(records))
    return findings


def lint_catalog(catalog: Iterable[Record]) -> list[LintFinding]:
    """All findings for a loaded catalog (or any iterable of records), warnings first.

    The loader's own warnings (unknown fields, kept as they are) are passed on as findings too.
    """
    findings = lint_records(catalog, getattr(catalog, "families", ()))
    for problem in getattr(catalog, "warnings", ()):
        findings.append(
            LintFinding(
                getattr(problem, "record_id", None),
                getattr(problem, "file", ""),
                "catalog-warning",
                (f"field `{problem.field}` " if getattr(problem, "field", None) else "")
                + getattr(problem, "message", str(problem)),
                INFO,
            )
        )
    findings.sort(key=_order)
    return findings


def _order(finding: LintFinding) -> tuple[bool, str, int, str, str]:
    """Warnings first, then by file and line (`x.jsonl:53` before `x.jsonl:1178`)."""
    path, _, line = finding.file.rpartition(":")
    if not (path and line.isdigit()):
        path, line = finding.file, "0"
    return (finding.level != WARNING, path, int(line), finding.record_id or "", finding.code)
