"""What a bare site means and what to try first, from what the scan read in its code (the
record's `check`: bot.scan.rust.checks) and from the pasted panic; and the title with the
user's values.

Every sentence is a template from texts.py filled with code, names and values the record or
the paste holds: nothing claims more than the code shows. A first step names the record's own
condition, function or message, so two records of different families never get the same one.
"""

from __future__ import annotations

import functools
import re

from bot.catalog.model import RAISED_AT_TAG_PREFIX, Record, value_class
from bot.catalog.patterns import PatternError, check_pattern, parse_format
from bot.core.impl_header import impl_parts
from bot.core.match.releases import ReleaseHistory
from bot.core.panic import Location, Panic
from bot.render import texts
from bot.render.answer.parts import HEADING_LIMIT, SHORT_LIMIT, SourceLink
from bot.render.markup import Words, one_line, shorten, shorten_middle, unmarked_paste, words

CODE_LIMIT = 160
UNKNOWN = "…"  # a value the paste did not show

_NUMBERED = re.compile(r"(?:^|\s)(\d+)\.\s+")
_FIRST_NUMBER = re.compile(r"\s*1\.\s+")
# A catch-all match arm: a binding or `_`, which takes whatever the earlier arms did not.
_CATCH_ALL = re.compile(r"^(?!(?:true|false)$)(?:_|[a-z_][a-z0-9_]*)$")
_MISSING = re.compile(r"^(?:None|Err\(.*\))$")  # an arm taken when a value is missing
_ENV_VAR = re.compile(r"(?:std::)?env::var(?:_os)?\(\"(?P<name>[A-Za-z_][A-Za-z0-9_]*)\"\)")
_SELF = re.compile(r"\bself\b")


_METHODS = frozenset({"expect", "unwrap", "expect_err", "unwrap_err"})


def _config_type(impl: str | None, code: str) -> str | None:
    """`DropoutConfig` when the check reads `self` in a method of a `...Config` type: the
    config the user built."""
    if not impl or not _SELF.search(code):
        return None
    kind, trait = impl_parts(one_line(impl))
    return kind if not trait and kind.endswith("Config") else None


@value_class(frozen=True)
class CheckReport:
    """A check's report as pasted, read with the prefix its builder declared (the record's
    `check.prefix`, bot.scan.builders): the operation it names and the reasons it lists."""

    operation: str
    reasons: tuple[str, ...]


@functools.lru_cache(maxsize=64)
def _prefix_regex(prefix: str) -> re.Pattern[str] | None:
    """The prefix compiled, or None when it is unsafe to run on a paste (a hand-edited
    catalog's: too long, nested repetition, what the linear-time engine refuses) or names no
    operation: the answer then goes without the report."""
    try:
        check_pattern(prefix)
        regex = re.compile(prefix)
    except (PatternError, re.error):
        return None
    return regex if "operation" in regex.groupindex else None


def check_report(record: Record, panic: Panic) -> CheckReport | None:
    """The pasted report of the check `record` is a reason of, when its builder's prefix
    names the operation and the paste holds that prefix."""
    if not is_check_reason(record):
        return None
    regex = _prefix_regex(record.site_check.get("prefix", ""))
    found = regex.search(panic.message) if regex is not None else None
    if found is None or not found["operation"]:
        return None
    rest = panic.message[found.end() :]
    reasons = tuple(r for r in _numbered_reasons(rest) if r)
    return CheckReport(one_line(found["operation"]), reasons or (one_line(rest),))


def _numbered_reasons(text: str) -> list[str]:
    """`1. A. 2. B.` -> [A., B.], and `A. 2. B.` alike (a prefix that read the first number):
    a reason starts only at the next number in sequence, so a reason's own `... got 768 and
    512. Lhs shape ...` is not taken for a new one."""
    first = _FIRST_NUMBER.match(text)
    if first is not None:
        text = text[first.end() :]
    starts: list[tuple[int, int]] = [(0, 0)]  # (where the number starts, where its text starts)
    expected = 2
    for found in _NUMBERED.finditer(text):
        if int(found[1]) == expected:
            starts.append((found.start(), found.end()))
            expected += 1
    ends = [start for start, _ in starts[1:]] + [len(text)]
    return [one_line(text[body:end]) for (_, body), end in zip(starts, ends, strict=True)]


def is_check_reason(record: Record) -> bool:
    return any(tag.startswith(RAISED_AT_TAG_PREFIX) for tag in record.tags)


def filled_message(record: Record, panic: Panic | None, by_message: bool) -> str:
    """The message as the user saw it: the pasted one when the match rests on the message,
    else the record's with each placeholder shown as `…` (never a raw format string)."""
    if panic is not None:
        check = check_report(record, panic)
        if check is not None:
            reason = _reason_for(record, check)
            return shorten_middle(unmarked_paste(f"{check.operation}: {reason}"), HEADING_LIMIT)
        pasted = shorten_middle(unmarked_paste(panic.message), HEADING_LIMIT) if by_message else ""
        if pasted:
            return pasted
    filled = "".join(
        UNKNOWN if s.is_placeholder else s.text for s in parse_format(record.error_message or "")
    )
    return shorten_middle(one_line(filled), HEADING_LIMIT)


def _reason_for(record: Record, check: CheckReport) -> str:
    """The pasted reason this record is about: the one that shares its first literal words."""
    fragments = [f.strip() for f in _literals(record.error_message) if f.strip()]
    head = fragments[0][:30].lower() if fragments else ""
    for reason in check.reasons:
        if head and head in reason.lower():
            return reason
    return check.reasons[0]


def _literals(message: str) -> list[str]:
    return [s.text for s in parse_format(message or "") if not s.is_placeholder]


def _module_path(file_path: str | None, function: str) -> str:
    """`burn_cubecl_fusion::optim::reduce::tune::create_key` from the file and the fn."""
    parts = (file_path or "").split("/")
    if len(parts) > 2 and parts[0] == "crates":
        parts = parts[1:]
    if "src" in parts:
        at = parts.index("src")
        crate = parts[at - 1] if at else ""
        parts = [crate, *parts[at + 1 :]]
    if parts and parts[-1].endswith(".rs"):
        last = parts[-1][: -len(".rs")]
        parts = parts[:-1] + ([] if last in ("mod", "lib", "main") else [last])
    names = [p.replace("-", "_") for p in parts if p]
    return "::".join([*names, function]) if names else f"fn {function}"


def subject(record: Record) -> str | None:
    """`Tensor::reshape`, `float_erf of FloatTensorOps for Candle`, `fn load`: who raises it."""
    check = record.site_check
    function = one_line(record.enclosing_fn) if record.enclosing_fn else None
    impl = check.get("impl")
    if function and impl:
        kind, trait = impl_parts(one_line(impl))
        if trait:
            return texts.SUBJECT_TRAIT.format(function=function, trait=trait, type=kind)
        return texts.SUBJECT_METHOD.format(function=function, type=kind)
    if function:
        return texts.SUBJECT_FN.format(path=_module_path(record.file_path, function))
    return None


def impl_type(record: Record) -> str | None:
    """The type of the `impl` block around the site (`Candle`), when the scan read it."""
    impl = record.site_check.get("impl")
    return impl_parts(one_line(impl))[0] or None if impl else None


def _code(value: str | None) -> str | None:
    text = one_line(value) if value else ""
    return text if text and len(text) <= CODE_LIMIT else None


def meaning_words(record: Record) -> Words | None:
    """One sentence on what raises the panic, from the check the scan read; None when the
    scan read nothing specific (the kind-of-check sentence then stands in)."""
    who = subject(record)
    if who is None:
        return None
    check = record.site_check
    kind, code, pattern = check.get("kind"), _code(check.get("code")), _code(check.get("pattern"))
    macro = (record.error_type or "panic").strip()
    values = {"subject": who, "code": code or "", "pattern": pattern or ""}
    if is_check_reason(record):
        return None  # said by the check report's sentence, with the user's values
    error = _code(check.get("error"))
    if error and code:  # the message is this variant's text (bot.scan.rust.error_enums)
        return words(texts.MEANS_ERROR, error=error, **values)
    if kind in ("assert", "else") and code:
        return words(texts.MEANS_UNLESS, **values)
    if kind == "if" and code:
        return words(texts.MEANS_WHEN, **values)
    if kind == "mismatch" and code and pattern:
        return words(texts.MEANS_MISMATCH, **values)
    if kind == "arm" and code and pattern:
        if _CATCH_ALL.match(pattern):
            return words(texts.MEANS_ARM_OTHER, **values)
        return words(texts.MEANS_ARM, **values)
    if kind == "expect" and code:
        return words(texts.MEANS_MISSING, **values)
    if macro in ("unimplemented", "todo"):
        return words(texts.MEANS_NOT_IMPLEMENTED, macro=f"{macro}!", **values)
    if macro == "unreachable":
        return words(texts.MEANS_UNREACHABLE, **values)
    crate = shorten(record.crate or record.repo or "", SHORT_LIMIT)
    # `.expect`/`.unwrap` are methods, not macros: say them as the code writes them
    called = f".{macro}" if macro in _METHODS else f"{macro}!"
    return words(texts.MEANS_RAISED_IN, macro=called, crate=crate, **values)


def first_step(record: Record, message: str) -> str | None:
    """What to try first, in plain text, when the code says it plainly (an unset environment
    variable, a config's own check, an op the backend does not implement); None else: no step
    is better than one that sends the reader into the library's internals."""
    del message  # the message is never quoted back as a step
    who = subject(record)
    check = record.site_check
    kind, code = check.get("kind"), _code(check.get("code"))
    values = {"subject": who or "", "code": code or ""}
    if who and code and not check.get("error"):
        config = _config_type(check.get("impl"), code)
        if kind in ("assert", "else") and config:
            return texts.STEP_CONFIG_UNLESS.format(type=config, **values)
        if kind == "if" and config:
            return texts.STEP_CONFIG_WHEN.format(type=config, **values)
        env = _ENV_VAR.fullmatch(code)
        if kind in ("mismatch", "expect") and env:
            return texts.STEP_ENV.format(name=env["name"], **values)
    impl = check.get("impl")
    if who and impl and (record.error_type or "") in ("unimplemented", "todo"):
        kind_name, trait = impl_parts(one_line(impl))
        if trait:
            return texts.STEP_NOT_IMPLEMENTED.format(
                function=record.enclosing_fn, type=kind_name, crate=record.crate or record.repo
            )
    return None


# --- check reports: the operation, the reason with the user's values, where it was called -----


def user_call_site(panic: Panic, history: ReleaseHistory | None, repo: str) -> SourceLink | None:
    """The pasted location in the user's release (`burn-tensor 0.18.0 base.rs:1445`: the
    function of theirs, or of the crate they called, that the check stopped), linked at that
    release's commit when the history knows it."""
    location = panic.location
    if location is None or location.line is None:
        return None
    name = location.path.rsplit("/", 1)[-1]
    label = texts.CALLED_AT_LABEL.format(
        crate=location.crate or "",
        version=location.crate_version or "",
        file=name,
        line=location.line,
    )
    label = shorten(" ".join(label.split()), SHORT_LIMIT)
    url = release_url(location, history, repo)
    return SourceLink(label=label, url=url, path=location.path, line=location.line)


def release_url(location: Location, history: ReleaseHistory | None, repo: str) -> str | None:
    if history is None or not location.crate or not location.crate_version:
        return None
    if not location.crate_path or not location.line:
        return None
    commit = next((r.commit for r in history.releases if r.version == location.crate_version), None)
    if commit is None or not re.fullmatch(r"[0-9a-f]{40}", commit):
        return None
    path = f"crates/{location.crate}/{location.crate_path}"
    return f"https://github.com/{repo}/blob/{commit}/{path}#L{location.line}"


def check_report_words(record: Record, panic: Panic) -> Words | None:
    check = check_report(record, panic)
    if check is None:
        return None
    crate = shorten(record.crate or record.repo.rsplit("/", 1)[-1], SHORT_LIMIT)
    operation = shorten(check.operation, SHORT_LIMIT)
    count = len(check.reasons)
    template = texts.MEANS_CHECK_REPORT if count == 1 else texts.MEANS_CHECK_REPORT_MANY
    return words(template, crate=crate, operation=operation, count=count)


def check_report_step(record: Record, panic: Panic) -> str | None:
    check = check_report(record, panic)
    if check is None:
        return None
    code = _code(record.site_check.get("code"))
    if record.site_check.get("kind") != "if" or not code:
        return None
    return texts.STEP_CHECK_REPORT.format(operation=check.operation, code=code)
