"""How the bot answers pastes built from the catalogs themselves, not from labelled texts.

    python benchmarks/probe_pastes.py [PROJECT ...]      (default: burn and every labelled project)

Three probes, each printed per project as right / silent / wrong:

- **older releases**: for every lineage of a project's release history whose site moved to
  another file or was reworded, the site as its first release printed it (that release's
  wording, file and line, placeholders filled, under std's header with that release's version
  in a registry path). Right: the answer is the record the history keeps for that lineage, or
  a record with the same message at the same file (a site the history follows to today's, in
  another project for burn's ONNX crates, counts as wrong here: read those by hand).
- **drift**: today's sites (those that say enough alone), their message changed the way older
  releases and users change them (the first letter's case, the full stop, one word's last
  letter, the last two words dropped, a word inserted, the last two words printed as a value),
  pasted at the site's file twelve lines
  off (so the line is no evidence) and, apart, alone in a code block. Right: the same message
  at the same file (placeholders' names aside); "right, another site" counts the same message
  elsewhere.
- **cut short**: today's sites of eight words or more without placeholders, their message cut
  at 60% of its characters and quoted alone as a title (a title trimmed to fit).

These are not accuracy figures (no person labelled the pastes, and a drifted paste may well be
another message): they show where the matcher is silent or wrong on shapes the labelled corpora
hold few of, before a change and after it.
"""

from __future__ import annotations

import random
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "tests"))

from test_project_corpora import NAMES, project_triage  # noqa: E402
from test_self_answer import _registry_path, _tried  # noqa: E402

from bot.app import Triage  # noqa: E402
from bot.catalog.model import Record  # noqa: E402
from bot.core.match.index import specificity  # noqa: E402

REGISTRY = "/home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f"
_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{[^{}]*\}")
DRIFT_SITES = 150  # today's sites drifted per project (a seeded sample)


def _filled(message: str) -> str:
    return _PLACEHOLDER.sub(lambda m: {"{{": "{", "}}": "}"}.get(m.group(0), "42"), message)


def _crate_path(file_path: str, repo: str) -> tuple[str, str] | None:
    parts = file_path.split("/")
    if len(parts) > 2 and parts[0] == "crates":
        return parts[1], "/".join(parts[2:])
    if len(parts) > 1 and parts[1] == "src":
        return parts[0], "/".join(parts[1:])
    if parts[0] == "src":
        return repo.rsplit("/", 1)[-1], file_path
    return None


def older_releases(triage: Triage) -> Counter[str]:
    matcher = triage.matcher
    if matcher.history is not None:
        histories = [matcher.history]
    else:
        histories = list(matcher.projects.histories) if matcher.projects else []
    records = triage.catalog.records
    out: Counter[str] = Counter()
    for history in histories:
        for lineage in history.lineages:
            spans = lineage.spans
            if len({s[3] for s in spans}) < 2 and len({s[2] for s in spans}) < 2:
                continue
            first, _last, file_path, message, _kind = spans[0]
            line = lineage.lines[first]
            where = _crate_path(file_path, history.repo)
            want = history.record_id(lineage, records)
            if where is None or not line or want is None or specificity(message) < 0.5:
                continue
            version = history.releases[first].version
            path = f"{REGISTRY}/{where[0]}-{version}/{where[1]}:{line}:9"
            text = f"thread 'main' panicked at {path}:\n{_filled(message)}\n"
            out[_verdict(triage, text, records.get(want))] += 1
    return out


def _drifted(message: str, kind: str, rng: random.Random) -> str | None:
    words = message.split(" ")
    if kind == "case":
        return message[:1].swapcase() + message[1:]
    if kind == "full stop":
        return message[:-1] if message.endswith(".") else message + "."
    if kind == "one letter":
        at = [i for i, w in enumerate(words) if w.isalpha() and len(w) > 3]
        if not at:
            return None
        i = rng.choice(at)
        words[i] = words[i][:-1] + ("s" if words[i][-1] != "s" else "d")
        return " ".join(words)
    if kind == "tail dropped":
        return " ".join(words[:-2]) if len(words) >= 6 else None
    if kind == "tail a value":  # a newer release prints a value where the last words were
        return " ".join([*words[:-2], "app_state::Shortcut<u8>"]) if len(words) >= 6 else None
    words.insert(rng.randrange(1, max(2, len(words))), "now")  # a word inserted
    return " ".join(words)


DRIFTS = ("case", "full stop", "one letter", "tail dropped", "word inserted", "tail a value")


def drift(triage: Triage) -> dict[str, Counter[str]]:
    catalog = triage.catalog
    records = sorted((catalog.get(rid) for rid in list(catalog.records)), key=lambda r: r.id)
    sites = [
        r
        for r in records
        if r is not None and _tried(r) and _registry_path(r) and len(r.error_message.split()) >= 4
    ]
    rng = random.Random(2)
    rng.shuffle(sites)
    out: dict[str, Counter[str]] = {}
    for record in sites[:DRIFT_SITES]:
        for kind in DRIFTS:
            message = _drifted(_filled(record.error_message), kind, rng)
            if message is None:
                continue
            away = f"{_registry_path(record)}:{record.line_number + 12}:9"
            for where, text in (
                ("at its file", f"thread 'main' panicked at {away}:\n{message}\n"),
                ("in a code block", f"Got this panic:\n```\n{message}\n```\n"),
            ):
                out.setdefault(f"{kind}, {where}", Counter())[_verdict(triage, text, record)] += 1
    return out


def cut_short(triage: Triage) -> Counter[str]:
    """Today's sites of eight words or more and no placeholder, their message cut at 60% of
    its characters (inside a word or not) and quoted alone as an issue's title."""
    catalog = triage.catalog
    records = sorted((catalog.get(rid) for rid in list(catalog.records)), key=lambda r: r.id)
    sites = [
        r
        for r in records
        if r is not None
        and _tried(r)
        and _registry_path(r)
        and len(r.error_message.split()) >= 8
        and "{" not in r.error_message
    ]
    random.Random(2).shuffle(sites)
    out: Counter[str] = Counter()
    for record in sites[:DRIFT_SITES]:
        cut = record.error_message[: int(len(record.error_message) * 0.6)].rstrip()
        text = f"Title: {cut}\n\nIt crashes when the window opens.\n"
        out[_verdict(triage, text, record)] += 1
    return out


def _verdict(triage: Triage, text: str, want: Record | None) -> str:
    answered = triage.analyse(text).answered
    if not answered:
        return "silent"
    top = triage.catalog.get(answered[0].best.record_id)
    if want is not None and top is not None and _same(top.error_message, want.error_message):
        return "right" if top.file_path == want.file_path else "right, another site"
    return "wrong"


def _same(a: str, b: str) -> bool:
    """One message, whatever its placeholders are named (`{from}`, `{name}`)."""
    return _PLACEHOLDER.sub("{}", a) == _PLACEHOLDER.sub("{}", b)


def _cells(counts: Counter[str]) -> str:
    total = sum(counts.values())
    return (
        f"{total}: right {counts['right']}, another site {counts['right, another site']}, "
        f"silent {counts['silent']}, wrong {counts['wrong']}"
    )


def main() -> int:
    projects = sys.argv[1:] or ["burn", *NAMES]
    for project in projects:
        triage = Triage.from_paths() if project == "burn" else project_triage(project)
        print(f"{project}")
        print(f"  older releases: {_cells(older_releases(triage))}")
        for name, counts in sorted(drift(triage).items()):
            print(f"  drift, {name}: {_cells(counts)}")
        print(f"  cut short, a title: {_cells(cut_short(triage))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
