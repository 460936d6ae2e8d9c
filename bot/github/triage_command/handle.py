"""What maintainers' `/triage` commands change, and what the answer looks like after them. Pure.

Each command's effect on the issue's controls (kept in the store, `bot.github.triage_command.run`
carries it out):

- `wrong`: the answered records are rejected (a negative vote each); the answer becomes a
  one-line note and the bot's labels go;
- `match ID`: the answer is that record's, whatever the matcher thinks;
- `why`: the bot's comment gets a collapsed section with the evidence;
- `ignore`: the bot never acts on the issue again (until `refresh`);
- `refresh`: forget `wrong`, `match` and `ignore`, and answer afresh.

The pipeline then runs as usual and asks the helpers below how to honour the controls. The
override is also written into the comment's hidden marker (`override=match:ID`), so it survives
a lost database.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.catalog.model import replace  # the answer's classes are value_class ones
from bot.core.analysis import Analysis, Candidate, PanicMatch
from bot.core.match.projects import Projects
from bot.core.match.releases import ReleaseHistory
from bot.core.panic import Panic
from bot.render import texts
from bot.render.answer.build import build_answer
from bot.render.answer.parts import Answer, CatalogLike
from bot.render.github import parse_marker
from bot.render.markup import md_code_block, words
from bot.render.why import why_lines
from bot.store.interface import IssueState

ALLOWED_ROLES = frozenset({"admin", "maintain", "write", "triage"})
NOTICE_MARKER = "<!-- triage-bot:notice -->"
_LOGIN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$")
_VALUE = re.compile(r"[^A-Za-z0-9._:,-]")


@dataclass
class CommandsOutcome:
    ran: list[str] = field(default_factory=list)  # "why", "match ID", ...
    refused: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # done before (a retry), or not applicable


@dataclass(frozen=True)
class Controls:
    """What maintainers asked of one issue."""

    ignored: bool = False
    match: str | None = None  # the record a maintainer chose
    wrong: tuple[str, ...] = ()  # records a maintainer rejected
    show_why: bool = False
    refused: bool = False

    @property
    def override(self) -> str | None:
        if self.match:
            return f"match:{self.match}"
        if self.wrong:
            return "wrong:" + ",".join(self.wrong)
        return None


def parse_override(value: str | None) -> tuple[str | None, tuple[str, ...]]:
    """`match:ID` -> (ID, ()); `wrong:A,B` -> (None, (A, B)); anything else -> (None, ())."""
    if not value:
        return None, ()
    kind, _, rest = value.partition(":")
    if kind == "match" and rest:
        return rest, ()
    if kind == "wrong" and rest:
        return None, tuple(v for v in rest.split(",") if v)
    return None, ()


def controls_from(row: Mapping[str, Any] | None, bot_comment_body: str | None = None) -> Controls:
    """The issue's controls from the store row; without one, the override kept in the marker."""
    if row is None:
        marker = parse_marker(bot_comment_body or "") or {}
        match, wrong = parse_override(marker.get("override") if marker else None)
        return Controls(match=match, wrong=wrong)
    match, wrong = parse_override(row.get("override"))
    return Controls(
        ignored=bool(row.get("ignored")),
        match=match,
        wrong=wrong,
        show_why=bool(row.get("show_why")),
        refused=bool(row.get("refused")),
    )


# --- the answer under the controls (pure) --------------------------------------------------------


def without_records(analysis: Analysis, rejected: Iterable[str]) -> Analysis:
    """The analysis with the rejected records out: a panic whose best record was rejected is
    no longer matched (the next candidate is not promoted: the matcher already passed it over)."""
    gone = set(rejected)
    if not gone:
        return analysis
    panics = []
    for item in analysis.panics:
        best = item.best
        candidates = tuple(c for c in item.candidates if c.record_id not in gone)
        matched = item.matched and best is not None and best.record_id not in gone
        panics.append(PanicMatch(item.panic, candidates, matched))
    verdict = "match" if any(p.matched for p in panics) else "uncatalogued-panic"
    if not panics:
        verdict = "no-panic"
    return Analysis(verdict, tuple(panics), analysis.fingerprint)  # type: ignore[arg-type]


def answer_for_record(
    analysis: Analysis,
    record_id: str,
    catalog: CatalogLike,
    history: ReleaseHistory | None = None,
) -> Answer | None:
    """The answer with the record a maintainer chose, for the issue's first panic."""
    record = catalog.get(record_id)
    if record is None:
        return None
    panic = analysis.panics[0].panic if analysis.panics else Panic.mentioned(record.error_message)
    chosen = Candidate(record.id, 1.0, (), 1.0, None)
    forced = Analysis("match", (PanicMatch(panic, (chosen,), True),), analysis.fingerprint)
    answer = build_answer(forced, catalog, history=history)
    sections = tuple(replace(s, confidence=words(texts.MATCH_CHOSEN)) for s in answer.sections)
    panics = tuple(p.panic for p in analysis.panics) or answer.panics
    return replace(answer, sections=sections, panics=panics)


def answer_under(
    raw: Analysis,
    controls: Controls,
    catalog: CatalogLike,
    history: ReleaseHistory | None = None,
    projects: Projects | None = None,
) -> tuple[Analysis, Answer]:
    """The analysis without the records maintainers rejected, and the answer: the record a
    maintainer chose (when the catalog has it), else the matcher's."""
    analysis = without_records(raw, controls.wrong)
    answer = None
    if controls.match:
        answer = answer_for_record(analysis, controls.match, catalog, history)
    if answer is None:
        answer = build_answer(analysis, catalog, history=history, projects=projects)
    return analysis, answer


def with_override(body: str, override: str | None) -> str:
    """The body with `override=...` added to its hidden marker (the first line)."""
    if not override or not body.startswith("<!-- triage-bot:"):
        return body
    head, sep, rest = body.partition("\n")
    if not head.endswith(" -->") or " override=" in head:
        return body
    value = _VALUE.sub("", override)
    return f"{head[: -len(' -->')]} override={value} -->{sep}{rest}"


def wrong_note_body(rejected: Sequence[str], fingerprint: str = "") -> str:
    ids = ",".join(_VALUE.sub("", r) for r in rejected)
    value = _VALUE.sub("", "wrong:" + ",".join(rejected))
    fp = _VALUE.sub("", fingerprint)
    return f"<!-- triage-bot:wrong ids={ids} fp={fp} override={value} -->\n{texts.WRONG_NOTE}"


def why_section(analysis: Analysis, answered: Sequence[str], controls: Controls) -> str:
    """The collapsed evidence: the panics, their top candidates with scores, what decided."""
    preface = []
    if controls.match:
        preface.append(texts.WHY_OVERRIDE_MATCH.format(record=controls.match))
    if controls.wrong:
        preface.append(texts.WHY_OVERRIDE_WRONG.format(records=", ".join(controls.wrong)))
    block = md_code_block("\n".join(why_lines(analysis, preface)), lang="text")
    return f"<details>\n<summary>{texts.WHY_SUMMARY}</summary>\n\n{block}\n\n</details>"


def add_why(body: str, section: str, limit: int = 65_536) -> str:
    out = f"{body}\n\n{section}"
    return out if len(out) <= limit else body


def refusal_body(login: str) -> str:
    shown = login if _LOGIN.match(login or "") else "there"
    return f"{NOTICE_MARKER}\n{texts.COMMAND_REFUSED.format(login=shown)}"


def is_notice(body: str | None) -> bool:
    marker = parse_marker(body or "")
    return bool(marker and marker.get("kind") == "notice")


# --- one command's effect -----------------------------------------------------------------------


@dataclass(frozen=True)
class Effect:
    """What one permitted command does: its outcome, the control changes to store, the records
    that get a negative vote from the asker, and a reaction on the command's comment."""

    result: str  # "done", or why nothing was done ("nothing-to-reject", "unknown-record", ...)
    changes: Mapping[str, Any] = field(default_factory=dict)  # for `Store.set_controls`
    rejected: tuple[str, ...] = ()
    reaction: str | None = None


def command_effect(
    name: str,
    arg: str | None,
    state: IssueState | None,
    controls: Controls,
    record_known: bool,
) -> Effect:
    """The effect of `/triage NAME ARG` on an issue the bot answered as `state` says, under the
    current controls; `record_known` says whether the catalog has the record `ARG` names."""
    if name == "wrong":
        current = tuple(state.record_ids) if state and state.verdict == "match" else ()
        if controls.match:
            current = (controls.match,)
        if not current:
            return Effect("nothing-to-reject")
        rejected = tuple(dict.fromkeys((*controls.wrong, *current)))
        return Effect("done", {"override": "wrong:" + ",".join(rejected)}, rejected=current)
    if name == "match":
        if not record_known:
            return Effect("unknown-record", reaction="confused")
        return Effect("done", {"override": f"match:{arg or ''}"})
    if name == "why":
        return Effect("done", {"show_why": True})
    if name == "ignore":
        return Effect("done", {"ignored": True})
    if name == "refresh":
        return Effect("done", {"ignored": False, "override": None})
    return Effect("unknown-command")


def reaction_votes(reactions: Iterable[tuple[str | None, str | None, str]]) -> dict[str, int]:
    """Each person's vote from the (login, user type, content) of a comment's reactions: 👍 +1,
    👎 -1, summed per person (so both cancel out); bots' reactions do not count."""
    votes: dict[str, int] = {}
    for login, user_type, content in reactions:
        if not login or user_type == "Bot" or login.endswith("[bot]"):
            continue
        if content == "+1":
            votes[login] = votes.get(login, 0) + 1
        elif content == "-1":
            votes[login] = votes.get(login, 0) - 1
    return votes
