"""Drafting write-ups from the code (`catalog explain`, issue 49): the grounding a model gets for
one site, the prompt, reading its answer, and the checks a draft must pass before it is kept.
Pure: the command (bot/cli/explain.py) reads git and talks to the model server.

A draft is a record overlay in the seed record's own field names. It is kept in the catalog's
`drafts/` folder as `<id>.draft` (a suffix the loader does not read), with its status and
provenance, until `catalog review --accept` lays it over the record in `writeups/<id>.json`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from bot.catalog.model import Record, value_class
from bot.catalog.patterns import parse_format

# The seed record's write-up fields a draft may hold, as the catalog spells them.
DRAFT_FIELDS = (
    "documentation",
    "solutions",
    "exampleFix",
    "triggerScenarios",
    "commonSituations",
    "preventionTips",
    "relatedErrors",
)
STATUSES = ("draft", "refused", "accepted", "rejected", "stale")
FUNCTION_CONTEXT = 60  # lines of the enclosing function shown at most
MAX_CALLERS = 8

# Words a fix may use without the project defining them: Rust's own and std's.
RUST_WORDS = frozenset(
    """
    as async await bool break const continue crate else enum false fn for if impl in let loop
    match mod move mut pub ref return self Self static struct super trait true type unsafe use
    where while dyn Vec Option Some None Ok Err Result String Default Box Arc Rc HashMap HashSet
    BTreeMap OnceLock OnceCell Mutex RwLock Path PathBuf std env var temp_dir join format
    println eprintln include concat expect unwrap unwrap_or collect map iter into_iter max min
    into clone len is_none is_some get set then_some default new to_string to_vec as_ref
    as_str push insert remove contains f32 f64 u8 u16 u32 u64 usize i8 i16 i32 i64 isize
    """.split()
)
_IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
_CODE_SPAN = re.compile(r"`([^`]+)`")
_TYPE_NAME = re.compile(r"[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+|[A-Z][a-z]{2,}")
_NOT_SUPPORTED = re.compile(
    r"`?(?P<what>[A-Za-z_][\w:]*)`?\s+(?:is|are)\s+not\s+(?:yet\s+)?(?:supported|implemented)"
    r"|unsupported\s+`?(?P<what2>[A-Za-z_][\w:]*)`?",
    re.I,
)
_FENCE = re.compile(r"^```[a-z]*\s*$|^```\s*$", re.M)


@value_class(frozen=True)
class Grounding:
    """What the model is told about one site, and what a draft may name."""

    record_id: str
    text: str  # the prompt's facts: site, function, callers, placeholders, history
    words: frozenset[str]  # identifiers of the grounding and the crate's public items
    function: str | None
    message: str
    unsupported: tuple[str, ...]  # what the message says is not supported or implemented
    code_digest: str = ""  # of the enclosing function's code alone: a change makes it stale

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()[:16]


def enclosing_function(lines: Sequence[str], line: int, name: str | None) -> tuple[int, int]:
    """(first, last) 1-based lines of the function around `line` named `name` (its `fn` line
    up to the brace that closes it), else a window around the line."""
    at = max(1, min(line, len(lines)))
    first = at
    pattern = re.compile(rf"\bfn\s+{re.escape(name)}\b") if name else re.compile(r"\bfn\s+\w+")
    for number in range(at, 0, -1):
        if pattern.search(lines[number - 1]):
            first = number
            break
    else:
        first = max(1, at - 15)
    depth, opened = 0, False
    last = min(len(lines), first + FUNCTION_CONTEXT - 1)
    for number in range(first, min(len(lines), first + 400) + 1):
        for char in lines[number - 1]:
            if char == "{":
                depth, opened = depth + 1, True
            elif char == "}":
                depth -= 1
        if opened and depth <= 0:
            last = number
            break
    if last - first + 1 > FUNCTION_CONTEXT:  # a long function: the part around the site
        first = max(first, at - FUNCTION_CONTEXT // 2)
        last = min(last, first + FUNCTION_CONTEXT - 1)
    return first, max(last, at)


def build_grounding(
    record: Record,
    file_text: str | None,
    callers: Sequence[str] = (),
    public_items: Iterable[str] = (),
    history: Sequence[str] = (),
) -> Grounding:
    """The facts of one site: its file and line at the analysed commit, the enclosing
    function's code, the callers in its crate, the message's placeholders, the history."""
    function_code = ""
    parts = [
        f"Repository: {record.repo}",
        f"Commit: {record.analyzed_sha or 'unknown'}",
        f"File: {record.file_path}:{record.line_number}",
        f"Function: {record.enclosing_fn or 'unknown'}",
        f"Macro: {record.error_type or 'panic'}",
        f"Message format: {record.error_message}",
    ]
    holes = [s.text for s in parse_format(record.error_message or "") if s.is_placeholder]
    if holes:
        parts.append("Placeholders (filled at run time): " + ", ".join(holes))
    if file_text is not None and record.line_number:
        lines = file_text.splitlines()
        first, last = enclosing_function(lines, record.line_number, record.enclosing_fn)
        shown = [
            f"{n:>5}{'>' if n == record.line_number else ' '} {lines[n - 1]}"
            for n in range(first, last + 1)
            if n <= len(lines)
        ]
        parts.append("Code (> marks the panic line):\n" + "\n".join(shown))
        function_code = "\n".join(line.strip() for line in lines[first - 1 : last])
    elif record.source_code:
        parts.append("Code:\n" + record.source_code)
    if callers:
        parts.append("Callers in the crate:\n" + "\n".join(callers[:MAX_CALLERS]))
    if history:
        parts.append("History:\n" + "\n".join(history))
    text = "\n".join(parts)
    words = frozenset(_IDENT.findall(text)) | frozenset(public_items)
    return Grounding(
        record_id=record.id,
        text=text,
        words=words,
        function=record.enclosing_fn,
        message=record.error_message,
        unsupported=tuple(_unsupported(record.error_message)),
        code_digest=hashlib.sha256(function_code.encode("utf-8")).hexdigest()[:16]
        if function_code
        else "",
    )


def _unsupported(message: str) -> list[str]:
    out = []
    for found in _NOT_SUPPORTED.finditer(message or ""):
        what = found["what"] or found["what2"]
        if what and what.lower() not in ("this", "it", "that", "operation", "op", "dtype", "{}"):
            out.append(what)
    return out


def family_grounding(
    family_id: str, rules: Sequence[str], members: Sequence[Grounding]
) -> Grounding:
    """The facts of an error family: its membership rules and a few of its sites' facts. A
    family draft may name what any of them shows."""
    parts = [f"Family: {family_id}", "Messages it covers: " + "; ".join(rules)]
    for number, member in enumerate(members, 1):
        parts.append(f"--- Site {number} of the family\n{member.text}")
    text = "\n".join(parts)
    words = frozenset(_IDENT.findall(text)).union(*(m.words for m in members))
    return Grounding(
        record_id=f"family:{family_id}",
        text=text,
        words=words,
        function=None,
        message="",
        unsupported=(),
    )


FAMILY_PROMPT = (
    "The facts below are several sites of one error family: one write-up answers for all of "
    "them. Say what they share, not one site's details."
)


SYSTEM_PROMPT = (
    "You write the catalog entry of one Rust panic site for the people who hit it: what it "
    "means, what to do, an example fix. Use only what the facts show: name only functions, "
    "types and methods that appear in the facts (or Rust's standard library). Write in plain "
    "words for a user of the library, not its maintainers. Answer with one JSON object and "
    "nothing else, with these keys: documentation (what the panic means, 2-4 sentences), "
    "solutions (a list of at least two steps, the most likely first), exampleFix (Rust code: a "
    "'// before' part and a '// after' part), triggerScenarios, commonSituations, "
    "preventionTips (a list), relatedErrors (a list of other messages, may be empty)."
)


def prompt_messages(grounding: Grounding) -> list[dict[str, str]]:
    family = grounding.record_id.startswith("family:")
    system = SYSTEM_PROMPT + (" " + FAMILY_PROMPT if family else "")
    head = "Facts of the family:\n" if family else "Facts of the site:\n"
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": head + grounding.text},
    ]


def token_estimate(messages: Sequence[Mapping[str, str]]) -> int:
    """About how many tokens the messages are (4 characters a token, the usual rule)."""
    return sum(len(m["content"]) for m in messages) // 4 + 4 * len(messages)


class DraftError(ValueError):
    """The model's answer is not a usable draft; the message says why."""


def parse_draft(content: str | None) -> dict[str, Any]:
    """The draft object in the model's answer (a fenced ```json block is unwrapped); only the
    write-up fields are kept. DraftError when it is not a JSON object of them."""
    if not content or not content.strip():
        raise DraftError("the answer is empty")
    text = _FENCE.sub("", content.strip()).strip()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DraftError(f"the answer is not JSON ({exc.msg} at character {exc.pos})") from None
    if not isinstance(data, dict):
        raise DraftError("the answer is not a JSON object")
    draft: dict[str, Any] = {}
    for key in DRAFT_FIELDS:
        value = data.get(key)
        if value is None:
            continue
        if key in ("solutions", "preventionTips", "relatedErrors"):
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise DraftError(f"`{key}` is not a list of texts")
            value = [v.strip() for v in value if v.strip()]
        elif not isinstance(value, str):
            raise DraftError(f"`{key}` is not a text")
        draft[key] = value
    if not draft:
        raise DraftError("the answer has none of the write-up's fields")
    return draft


def code_names(text: str, *, snake: bool = True) -> set[str]:
    """Identifiers in code that must exist: CamelCase types, methods called after `.` or
    `::`, and (with `snake`) snake_case names with an underscore; the example's own
    bindings, strings and comments left out. A person's write-up may call the reader's own
    helpers by made-up snake_case names (`snake=False`); a model's draft may not."""
    code = re.sub(r'"[^"\n]*"', " ", text)
    code = re.sub(r"//[^\n]*", " ", code)
    own = set(re.findall(r"\b(?:let(?: mut)?|fn|struct|enum|type|mod)\s+([A-Za-z_]\w*)", code))
    own |= set(re.findall(r"\|([A-Za-z_]\w*)", code))
    found = set()
    for match in _IDENT.finditer(code):
        name = match.group(0)
        before = code[max(0, match.start() - 2) : match.start()]
        after = code[match.end() : match.end() + 1]
        called = (before.endswith(".") or before == "::") and after in ("(", "<", ":")
        typed = bool(_TYPE_NAME.fullmatch(name))
        is_snake = "_" in name.strip("_") and name.islower()
        if name in RUST_WORDS or name in own or name.isupper() or len(name) < 3:
            continue
        if called or typed or (snake and is_snake):
            found.add(name)
    return found


def draft_names(draft: Mapping[str, Any]) -> set[str]:
    """Every identifier a draft names: in backticks in its prose and lists, and in its code."""
    names: set[str] = set()
    for key in DRAFT_FIELDS:
        value = draft.get(key)
        texts = value if isinstance(value, list) else [value] if isinstance(value, str) else []
        for text in texts:
            if key == "exampleFix":
                names |= code_names(text)
                continue
            for span in _CODE_SPAN.findall(text):
                names |= code_names(span)
    return names


def check_draft(draft: Mapping[str, Any], grounding: Grounding) -> list[str]:
    """Why a draft must not be kept (empty: it may be): names that are not in the grounding or
    the crate's public items, a meaning about another site, an example fix whose `after` still
    calls what the site says is unsupported, no solutions."""
    reasons = []
    missing = sorted(
        n
        for n in draft_names(draft)
        if n not in grounding.words and not (n.startswith("with_") and n[5:] in grounding.words)
    )
    if missing:
        reasons.append(
            "names code that is not in the site's function, its crate's public items or the "
            "message: " + ", ".join(f"`{n}`" for n in missing[:8])
        )
    documentation = str(draft.get("documentation") or "")
    if not documentation.strip():
        reasons.append("says nothing of what the panic means (no documentation)")
    elif grounding.record_id.startswith("family:"):
        pass  # a family's meaning is what its sites share: no one site's function to name
    elif not _about_this_site(documentation, grounding):
        reasons.append(
            "its meaning speaks of neither the site's function "
            f"(`{grounding.function}`) nor its message: it may be about another site"
        )
    solutions = draft.get("solutions") or []
    if not solutions:
        reasons.append("has no solutions")
    after = _after_part(str(draft.get("exampleFix") or ""))
    for what in grounding.unsupported:
        if after and re.search(rf"\b{re.escape(what.split('::')[-1])}\b", after):
            reasons.append(
                f"its example fix still calls `{what}`, which the message says is not supported"
            )
    return reasons


def _about_this_site(documentation: str, grounding: Grounding) -> bool:
    text = documentation.lower()
    if grounding.function and grounding.function.lower() in text:
        return True
    literal = " ".join(
        s.text for s in parse_format(grounding.message or "") if not s.is_placeholder
    )
    words = [w for w in re.findall(r"[a-z][a-z0-9_]{3,}", literal.lower())]
    if not words:
        return True  # a message of placeholders only: nothing to hold it to
    seen = sum(1 for w in set(words) if w in text)
    return seen >= min(2, len(set(words)))


def _after_part(example: str) -> str:
    found = re.search(r"//\s*after\b", example, re.I)
    return example[found.end() :] if found else ""


def draft_file(
    record_id: str,
    status: str,
    *,
    model: str,
    commit: str | None,
    grounding: str,
    reasons: Sequence[str] = (),
    draft: Mapping[str, Any] | None = None,
    raw: str | None = None,
) -> dict[str, Any]:
    """What `drafts/<id>.draft` holds."""
    out: dict[str, Any] = {
        "id": record_id,
        "status": status,
        "model": model,
        "commit": commit,
        "grounding": grounding,
        "reasons": list(reasons),
    }
    if draft is not None:
        out["writeup"] = dict(draft)
    if raw is not None and draft is None:
        out["answer"] = raw[:4000]
    return out
