"""What users hit, from the store: answers by record over time, precision per record from the
feedback, and the uncatalogued panics grouped, most frequent first. Pure: the caller reads the
store's rows and hands them in; this module aggregates and renders (text, or one HTML page with
inline SVG charts, no scripts, nothing fetched from the network).
"""

from __future__ import annotations

import hashlib
import html
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from bot.catalog.model import CRATE_TAG_PREFIX
from bot.core.analysis import Analysis
from bot.render.answer.words import pasted_location

TOP_SERIES = 6  # records drawn with their own colour; the rest are "other"
MAX_WEEKS = 26
MAX_GAPS = 50
MAX_ISSUES_PER_GAP = 10
# The first colour is the most answered record's; the browser test looks for it.
PALETTE = ("#2b6cb0", "#dd6b20", "#38a169", "#805ad5", "#d53f8c", "#319795")
OTHER_COLOUR = "#a0aec0"
PRECISION_COLOUR = "#2f855a"
WRONG_COLOUR = "#c53030"
OTHER = "other"

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')
_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[\w.~-]*[/\\])+[\w.-]+")
_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b")
_LONG_HEX = re.compile(r"\b[0-9a-f]{12,}\b")
_NUMBER = re.compile(r"(?<![A-Za-z_])-?\d+(?:\.\d+)?(?:e-?\d+)?(?![A-Za-z_])")
_NUMBER_RUN = re.compile(r"N(?:, N)+")
_SPACE = re.compile(r"\s+")


def group_message(message: str) -> str:
    """One line that groups reports of the same panic: numbers, quoted values, paths and
    addresses replaced by placeholders (`index out of bounds: the len is N but the index is N`)."""
    text = _ANSI.sub("", message or "")
    text = _SPACE.sub(" ", text).strip()
    text = _QUOTED.sub('"…"', text)
    text = _PATH.sub("PATH", text)
    text = _HEX.sub("0xX", text)
    text = _LONG_HEX.sub("X", text)
    text = _NUMBER.sub("N", text)
    text = _NUMBER_RUN.sub("N, …", text)
    return text[:300]


def group_id(norm_message: str, crate: str | None) -> str:
    """A short, stable name for a group of uncatalogued panics (for `catalog draft GROUP`)."""
    key = f"{crate or ''}\n{norm_message}"
    return hashlib.sha256(key.encode()).hexdigest()[:10]


def parse_since(value: str | None) -> float | None:
    """`2026-01-31` or an ISO timestamp -> epoch seconds (UTC); None when not given."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"not a date: {value!r} (expected YYYY-MM-DD)") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


def uncatalogued_items(
    analysis: Analysis, answered_ids: Iterable[str], skip_first: bool = False
) -> list[dict[str, Any]]:
    """The panics of a text that the answer does not cover, as rows for
    `Store.replace_uncatalogued` (GitHub and Discord alike). `skip_first` when a maintainer
    chose the record of the first panic."""
    answered = set(answered_ids)
    out = []
    for index, item in enumerate(analysis.panics):
        if skip_first and index == 0:
            continue
        if item.matched and item.best and item.best.record_id in answered:
            continue
        panic = item.panic
        loc = panic.location
        crate = (loc.crate if loc else None) or next(iter(panic.stack_crates), None) or ""
        where = None
        if loc is not None:
            if loc.crate and loc.crate_path and loc.kind != "std":
                where = f"crates/{loc.crate}/{loc.crate_path}:{loc.line or 0}"
            else:
                where = pasted_location(loc)
        out.append(
            {
                "norm_message": group_message(panic.message),
                "crate": crate,
                "message": _SPACE.sub(" ", panic.message).strip()[:500],
                "location": where,
            }
        )
    return out


# --- aggregation ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Series:
    record_id: str  # or OTHER
    counts: tuple[int, ...]  # per week
    total: int
    colour: str


@dataclass(frozen=True)
class Precision:
    record_id: str
    helpful: int
    wrong: int

    @property
    def votes(self) -> int:
        return self.helpful + self.wrong

    @property
    def precision(self) -> float:
        return self.helpful / self.votes if self.votes else 0.0


@dataclass(frozen=True)
class IssueRef:
    repo: str
    number: int


@dataclass(frozen=True)
class Gap:
    """A group of uncatalogued panics: one normalised message in one crate."""

    id: str
    norm_message: str
    crate: str
    count: int  # distinct issues and messages that hit it
    example: str  # a message as pasted
    location: str | None
    issues: tuple[IssueRef, ...]
    last_at: float
    repo: str | None  # the repository most of its reports came from


@dataclass(frozen=True)
class Stats:
    repo: str | None
    since: float | None
    weeks: tuple[str, ...]  # Monday of each week, ISO date
    series: tuple[Series, ...]
    answered_subjects: int
    precision: tuple[Precision, ...]
    gaps: tuple[Gap, ...]
    gap_total: int = 0
    names: Mapping[str, str] = field(default_factory=dict)  # record id -> short message


def _subject_repo(platform: str, subject: str) -> str | None:
    if platform != "github" or "#" not in subject:
        return None
    return subject.split("#", 1)[0].lower()


def _keep(platform: str, subject: str, at: float, repo: str | None, since: float | None) -> bool:
    if since is not None and at < since:
        return False
    return repo is None or _subject_repo(platform, subject) == repo.lower()


def _week(at: float) -> date:
    day = datetime.fromtimestamp(at, UTC).date()
    return day - timedelta(days=day.weekday())


def compute_stats(
    answers: Iterable[Mapping[str, Any]],
    feedback: Iterable[Mapping[str, Any]],
    uncatalogued: Iterable[Mapping[str, Any]],
    *,
    repo: str | None = None,
    since: float | None = None,
    names: Mapping[str, str] | None = None,
) -> Stats:
    """Aggregate the store's rows (`list_answers`, `feedback_rows`, `list_uncatalogued`)."""
    # each (subject, record) counts once, in the week it was first answered
    first: dict[tuple[str, str, str], float] = {}
    for row in answers:
        platform, subject, at = row["platform"], row["subject"], float(row["at"])
        if row.get("verdict") != "match" or not _keep(platform, subject, at, repo, since):
            continue
        for record_id in row.get("record_ids") or ():
            key = (platform, subject, record_id)
            first[key] = min(at, first.get(key, at))
    weeks: list[date] = []
    if first:
        start, end = _week(min(first.values())), _week(max(first.values()))
        start = max(start, end - timedelta(weeks=MAX_WEEKS - 1))
        while start <= end:
            weeks.append(start)
            start += timedelta(weeks=1)
    index = {w: i for i, w in enumerate(weeks)}
    per_record: dict[str, list[int]] = defaultdict(lambda: [0] * len(weeks))
    for (_, _, record_id), at in first.items():
        week = _week(at)
        if week in index:
            per_record[record_id][index[week]] += 1
    ranked = sorted(per_record.items(), key=lambda kv: (-sum(kv[1]), kv[0]))
    series = [
        Series(record_id, tuple(counts), sum(counts), PALETTE[i])
        for i, (record_id, counts) in enumerate(ranked[:TOP_SERIES])
    ]
    if len(ranked) > TOP_SERIES:
        rest = [sum(col) for col in zip(*(c for _, c in ranked[TOP_SERIES:]), strict=True)]
        series.append(Series(OTHER, tuple(rest), sum(rest), OTHER_COLOUR))

    votes: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for row in feedback:
        if not _keep(row["platform"], row["subject"], float(row["at"]), repo, since):
            continue
        vote = int(row["vote"])
        if vote > 0:
            votes[row["record_id"]][0] += 1
        elif vote < 0:
            votes[row["record_id"]][1] += 1
    precision = sorted(
        (Precision(r, up, down) for r, (up, down) in votes.items() if up or down),
        key=lambda p: (-p.votes, p.precision, p.record_id),
    )

    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for row in uncatalogued:
        at = float(row.get("last_at") or row.get("first_at") or 0)
        if not _keep(row["platform"], row["subject"], at, repo, since):
            continue
        groups[(row["norm_message"], row.get("crate") or "")].append(row)
    gaps = []
    for (norm, crate), rows in groups.items():
        rows = sorted(rows, key=lambda r: float(r.get("last_at") or 0), reverse=True)
        issues: dict[tuple[str, int], None] = {}
        repos: dict[str, int] = defaultdict(int)
        for r in rows:
            if r.get("repo") and r.get("number") is not None:
                issues[(r["repo"], int(r["number"]))] = None
                repos[r["repo"]] += 1
        gaps.append(
            Gap(
                id=group_id(norm, crate),
                norm_message=norm,
                crate=crate,
                count=len({(r["platform"], r["subject"]) for r in rows}),
                example=rows[0].get("message") or norm,
                location=rows[0].get("location"),
                issues=tuple(IssueRef(rp, n) for rp, n in issues),
                last_at=float(rows[0].get("last_at") or 0),
                repo=max(repos, key=lambda k: repos[k]) if repos else None,
            )
        )
    gaps.sort(key=lambda g: (-g.count, -g.last_at, g.id))
    return Stats(
        repo=repo,
        since=since,
        weeks=tuple(w.isoformat() for w in weeks),
        series=tuple(series),
        answered_subjects=len({(p, s) for p, s, _ in first}),
        precision=tuple(precision),
        gaps=tuple(gaps[:MAX_GAPS]),
        gap_total=len(gaps),
        names=dict(names or {}),
    )


def find_gap(uncatalogued: Iterable[Mapping[str, Any]], gid: str) -> list[Mapping[str, Any]]:
    """The uncatalogued rows of one group (by its id or a unique prefix of it)."""
    rows = [r for r in uncatalogued if group_id(r["norm_message"], r.get("crate")).startswith(gid)]
    ids = {group_id(r["norm_message"], r.get("crate")) for r in rows}
    return rows if len(ids) == 1 else []


def draft_record(rows: Sequence[Mapping[str, Any]], repo: str | None = None) -> dict[str, Any]:
    """A skeleton catalog record (camelCase) from one group's rows, for a person to fill in."""
    latest = max(rows, key=lambda r: float(r.get("last_at") or 0))
    crate = latest.get("crate") or ""
    norm = latest["norm_message"]
    repos = [r["repo"] for r in rows if r.get("repo")]
    record: dict[str, Any] = {
        "id": hashlib.sha256(f"draft\n{crate}\n{norm}".encode()).hexdigest()[:16],
        "repo": repo or (max(set(repos), key=repos.count) if repos else "OWNER/REPO"),
        "errorType": "panic",
    }
    record.update(_draft_message(latest.get("message") or norm))
    location = latest.get("location") or ""
    path, _, line = location.rpartition(":")
    if path and line.isdigit() and path.startswith("crates/"):
        record["filePath"] = path
        record["lineNumber"] = int(line)
    tags = ["rust", "draft"]
    if crate:
        tags.append(f"{CRATE_TAG_PREFIX}{crate}")
    record.update(
        {
            # Placeholders that `catalog validate` and `catalog lint` fail on and answers omit.
            "documentation": "TODO: what this panic means and why it happens.",
            "triggerScenarios": "TODO: when it happens.",
            "solutions": ["TODO: how to fix it."],
            "tags": tags,
        }
    )
    return record


def _draft_message(message: str) -> dict[str, str]:
    """The pasted message with its numbers generalised: `{}` in `errorMessage`, a number in
    `messagePattern`, so the record fits the next report's values, not only this one's."""
    text = " ".join(message.split())
    pieces = _NUMBER.split(text)
    if len(pieces) == 1:
        return {"errorMessage": text}
    return {
        "errorMessage": "{}".join(pieces),
        "messagePattern": r"-?\d+(?:\.\d+)?(?:e-?\d+)?".join(map(re.escape, pieces)),
    }


# --- text ----------------------------------------------------------------------------------------


def _day(at: float | None) -> str:
    return datetime.fromtimestamp(at, UTC).date().isoformat() if at else "-"


def render_text(stats: Stats, html_base: str = "https://github.com") -> str:
    lines = [
        "triage-bot stats"
        + (f" for {stats.repo}" if stats.repo else "")
        + (f" since {_day(stats.since)}" if stats.since else ""),
        "",
        f"Answers by record ({stats.answered_subjects} answered issue(s) or message(s)):",
    ]
    if not stats.series:
        lines.append("  none yet")
    for s in stats.series:
        name = stats.names.get(s.record_id, "")
        lines.append(f"  {s.total:>5}  {s.record_id:<16}  {name}".rstrip())
    if stats.weeks:
        lines.append("")
        lines.append("Answers per week:")
        for i, week in enumerate(stats.weeks):
            total = sum(s.counts[i] for s in stats.series)
            lines.append(f"  {week}  {total:>4}  {'#' * min(total, 60)}")
    lines += ["", "Precision per record (from 👍/👎, Discord buttons and /triage wrong):"]
    if not stats.precision:
        lines.append("  no feedback yet")
    for p in stats.precision:
        lines.append(
            f"  {p.precision * 100:>5.0f}%  {p.record_id:<16}  {p.helpful} helpful, {p.wrong} wrong"
        )
    lines += ["", f"Uncatalogued panics ({stats.gap_total} group(s)), most frequent first:"]
    if not stats.gaps:
        lines.append("  none")
    for g in stats.gaps:
        crate = f" [{g.crate}]" if g.crate else ""
        lines.append(f"  {g.count:>5}  {g.id}{crate}  {g.norm_message}")
        links = [issue_url(html_base, i) for i in g.issues[:MAX_ISSUES_PER_GAP]]
        if links:
            lines.append("         " + " ".join(links))
    if stats.gaps:
        lines += ["", "Draft a record for a group: triage-bot catalog draft GROUP"]
    return "\n".join(lines) + "\n"


def issue_url(html_base: str, issue: IssueRef) -> str:
    return f"{html_base.rstrip('/')}/{issue.repo}/issues/{issue.number}"


# --- HTML ----------------------------------------------------------------------------------------

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#1a202c;
background:#fff;max-width:1100px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
.muted{color:#718096;font-size:13px}
table{border-collapse:collapse;font-size:13px;width:100%}
td,th{border-bottom:1px solid #e2e8f0;padding:4px 6px;text-align:left;vertical-align:top}
th{background:#f7fafc}code{font-size:12px;background:#f7fafc;padding:1px 3px;border-radius:3px}
.legend span{display:inline-block;margin-right:14px;font-size:12px}
.legend i{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:middle}
svg text{font-size:11px;fill:#4a5568;font-family:system-ui,sans-serif}
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def answers_chart(stats: Stats, width: int = 1000, height: int = 260) -> str:
    """Stacked bars: answers per week, one colour per record (the most answered first)."""
    if not stats.weeks or not stats.series:
        return '<p class="muted">No answers yet.</p>'
    left, right, top, bottom = 40, 10, 10, 40
    plot_w, plot_h = width - left - right, height - top - bottom
    totals = [sum(s.counts[i] for s in stats.series) for i in range(len(stats.weeks))]
    peak = max(max(totals), 1)
    slot = plot_w / len(stats.weeks)
    bar = max(4.0, min(60.0, slot * 0.7))
    parts = [
        f'<svg id="answers-chart" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="Answers per week by record">',
        f'<line x1="{left}" y1="{top + plot_h}" x2="{width - right}" y2="{top + plot_h}" '
        'stroke="#cbd5e0"/>',
        f'<text x="{left - 6}" y="{top + 10}" text-anchor="end">{peak}</text>',
        f'<text x="{left - 6}" y="{top + plot_h}" text-anchor="end">0</text>',
    ]
    every = max(1, len(stats.weeks) // 12)
    for i, week in enumerate(stats.weeks):
        x = left + i * slot + (slot - bar) / 2
        y: float = top + plot_h
        for s in stats.series:
            count = s.counts[i]
            if not count:
                continue
            h = plot_h * count / peak
            y -= h
            parts.append(
                f'<rect class="bar" x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{h:.1f}" '
                f'fill="{s.colour}"><title>{_e(week)}: {_e(s.record_id)} {count}</title></rect>'
            )
        if i % every == 0:
            parts.append(
                f'<text x="{x + bar / 2:.1f}" y="{top + plot_h + 16}" '
                f'text-anchor="middle">{_e(week[5:])}</text>'
            )
    parts.append("</svg>")
    legend = "".join(
        f'<span><i style="background:{s.colour}"></i><code>{_e(s.record_id)}</code> '
        f"{_e(_short(stats.names.get(s.record_id, ''), 50))} ({s.total})</span>"
        for s in stats.series
    )
    return "".join(parts) + f'<div class="legend">{legend}</div>'


def precision_chart(stats: Stats, width: int = 1000) -> str:
    """Horizontal bars: the share of helpful votes per record, with the counts."""
    if not stats.precision:
        return '<p class="muted">No feedback yet.</p>'
    rows = stats.precision[:20]
    label_w, row_h, bar_w = 300, 22, width - 300 - 160
    height = row_h * len(rows) + 10
    parts = [
        f'<svg id="precision-chart" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        'aria-label="Precision per record">'
    ]
    for i, p in enumerate(rows):
        y = 5 + i * row_h
        good = bar_w * p.precision
        name = _short(stats.names.get(p.record_id, ""), 30)
        parts.append(
            f'<text x="0" y="{y + 14}">{_e(p.record_id)} {_e(name)}</text>'
            f'<rect x="{label_w}" y="{y + 3}" width="{bar_w}" height="14" fill="{WRONG_COLOUR}" '
            'fill-opacity="0.25"/>'
            f'<rect class="bar" x="{label_w}" y="{y + 3}" width="{good:.1f}" height="14" '
            f'fill="{PRECISION_COLOUR}"/>'
            f'<text x="{label_w + bar_w + 8}" y="{y + 14}">{p.precision * 100:.0f}% '
            f"({p.helpful} helpful, {p.wrong} wrong)</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _groups(count: int) -> str:
    return "1 group" if count == 1 else f"{count} groups"


def _short(text: str, limit: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def gaps_table(stats: Stats, html_base: str) -> str:
    if not stats.gaps:
        return '<p class="muted">No uncatalogued panics.</p>'
    rows = []
    for rank, g in enumerate(stats.gaps, 1):
        links = " ".join(
            f'<a href="{_e(issue_url(html_base, i))}">{_e(i.repo)}#{i.number}</a>'
            for i in g.issues[:MAX_ISSUES_PER_GAP]
        )
        more = len(g.issues) - MAX_ISSUES_PER_GAP
        if more > 0:
            links += f" and {more} more"
        rows.append(
            f"<tr><td>{rank}</td><td>{g.count}</td><td><code>{_e(g.norm_message)}</code>"
            f'<div class="muted">e.g. {_e(_short(g.example, 200))}</div></td>'
            f"<td>{_e(g.crate or '-')}</td><td>{links or '-'}</td>"
            f"<td><code>{_e(g.id)}</code></td></tr>"
        )
    return (
        "<table><tr><th>#</th><th>Reports</th><th>Panic (normalised)</th><th>Crate</th>"
        "<th>Issues</th><th>Group</th></tr>" + "".join(rows) + "</table>"
        '<p class="muted">Draft a record for a group with '
        "<code>triage-bot catalog draft GROUP</code>.</p>"
    )


def render_html(
    stats: Stats, html_base: str = "https://github.com", generated_at: float | None = None
) -> str:
    scope = []
    if stats.repo:
        scope.append(f"repository {_e(stats.repo)}")
    if stats.since:
        scope.append(f"since {_day(stats.since)}")
    when = f"generated {_day(generated_at)}" if generated_at else ""
    subtitle = ", ".join(scope + ([when] if when else [])) or "all data"
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        "<title>triage-bot stats</title>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<style>{_CSS}</style></head><body>"
        f'<h1>triage-bot stats</h1><div class="muted">{subtitle}</div>'
        f"<h2>Answers by record over time ({stats.answered_subjects} answered)</h2>"
        f"{answers_chart(stats)}"
        "<h2>Precision per record</h2>"
        '<div class="muted">From thumbs-up and thumbs-down reactions on the bot\'s comments, '
        "Discord buttons and <code>/triage wrong</code>.</div>"
        f"{precision_chart(stats)}"
        f"<h2>Uncatalogued panics ({_groups(stats.gap_total)}), most frequent first</h2>"
        f"{gaps_table(stats, html_base)}"
        "</body></html>\n"
    )
