"""What reporters read first, measured over the real texts of the tuned corpora (tests/corpus/
and each tests/corpus_projects/<project>/; the held-out parts are never looked at here): every
answered text has a title without a raw placeholder, at least four in five get a first step (on
the bundled catalog; a project's scan-only catalog has a floor of texts without one), and
no one meaning sentence is given for more than a tenth of them unless they share a family. Over
the whole bundled catalog, one first step is never given for records of different families.

Run with -s to print the figures.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict

import pytest
from corpus_scoring import BURN, PROJECTS, read_cases

from bot.app import Triage
from bot.catalog.loader import load_catalog
from bot.render.answer.build import build_answer
from bot.render.answer.meaning import first_step
from bot.render.answer.parts import Section
from bot.render.markup import plain

PLACEHOLDER = re.compile(r"\{[A-Za-z_0-9]*(?::[^{}]*)?\}")


PASTED: dict[str, str] = {}  # case -> its text, whitespace collapsed


def _words(text: str) -> str:
    # (a pasted `\n` escape reads as the line break it stands for)
    return " ".join(text.replace("\\n", " ").split())


def _is_raw(title: str, case: str) -> bool:
    """A placeholder the reporter did not paste: `groups: {}` in a Debug dump is the user's text."""
    if not PLACEHOLDER.search(title):
        return False
    return _words(title.rstrip("…")) not in PASTED.get(case, "")


# Steps that only send the reader into the library's code, deleted from the answer: they must
# never come back, on any catalog.
MECHANICAL_STEPS = re.compile(
    r"^Find the call of yours that reaches|that one of its `match` arms handles|"
    r"says what to do: “"
)
SCAN_ONLY: set[str] = set()  # texts answered from a project's scan-only catalog


def _answered() -> list[tuple[str, Section, str | None]]:
    """(text, root section, its family id) for every answered text of the tuned corpora; a text
    is named `corpus/case` (two corpora may number a case alike)."""
    out = []
    bundled = Triage.from_paths()
    corpora = [(bundled, "burn", read_cases(BURN))]
    for project in sorted(PROJECTS.iterdir()):
        if (project / "labels.jsonl").is_file():
            # cubecl's and burn-onnx's texts have no catalog of their own: the bundled one has
            own = project / "catalog.jsonl"
            triage = Triage(load_catalog([own])) if own.is_file() else bundled
            corpora.append((triage, project.name, read_cases(project)))
    for triage, corpus, cases in corpora:
        for case in cases:
            name = f"{corpus}/{case['case']}"
            if triage is not bundled:
                SCAN_ONLY.add(name)
            PASTED[name] = _words(case["text"])
            answer = build_answer(
                triage.analyse(case["text"]), triage.catalog, history=triage.history
            )
            if answer.sections:
                root = answer.sections[0]
                family = triage.catalog.family(root.record.id)
                out.append((name, root, family.id if family else None))
    return out


@pytest.fixture(scope="module")
def answered() -> list[tuple[str, Section, str | None]]:
    return _answered()


def _meaning(section: Section) -> str:
    if section.meaning_text:
        return section.meaning_text
    return plain(section.meaning_words) if section.meaning_words else ""


def test_every_answered_title_is_free_of_placeholders(answered) -> None:
    assert len(answered) >= 100
    raw = [
        (case, s.panic_message)
        for case, s, _ in answered
        if _is_raw(s.panic_message, case) or _is_raw(s.title, case)
    ]
    assert raw == []


def test_four_in_five_answered_texts_have_a_first_step(answered) -> None:
    """Four in five on the bundled catalog's texts (burn's, cubecl's, burn-onnx's); on the other
    projects' scan-only catalogs a step only where the code says it plainly (an unset variable,
    a config's own check, an op a backend lacks), and nowhere a step that sends the reader into
    the library's code or quotes the message back."""
    bundled = [(case, s) for case, s, _ in answered if case not in SCAN_ONLY]
    with_step = [case for case, s in bundled if s.first_step]
    scanned = [(case, s) for case, s, _ in answered if case in SCAN_ONLY]
    without = [case for case, s in scanned if not s.first_step]
    print(f"first step: {len(with_step)} of {len(bundled)} (bundled catalog); ", end="")
    print(f"{len(scanned) - len(without)} of {len(scanned)} (scan-only project catalogs)")
    assert len(with_step) * 5 >= len(bundled) * 4
    mechanical = [c for c, s, _ in answered if MECHANICAL_STEPS.search(s.first_step or "")]
    assert mechanical == []


def test_no_meaning_sentence_covers_a_tenth_unless_one_family(answered) -> None:
    by_sentence: dict[str, set[str | None]] = defaultdict(set)
    counts: Counter[str] = Counter()
    for _case, section, family in answered:
        sentence = _meaning(section)
        counts[sentence] += 1
        by_sentence[sentence].add(family)
    print("most given meaning:", counts.most_common(1))
    too_common = [
        (sentence, n)
        for sentence, n in counts.items()
        if n * 10 > len(answered)
        and (None in by_sentence[sentence] or len(by_sentence[sentence]) > 1)
    ]
    assert too_common == []
    assert all(_meaning(s) for _c, s, _f in answered)


def _site_group(record) -> str:
    """A record outside any family stands for its own code: its function (with the type of
    its `impl`, whichever file it lives in: code moves between crates), as the steps name the
    function and the expression it checks; or its message when the scan found no function."""
    if record.enclosing_fn:
        impl = record.site_check.get("impl", record.file_path)
        owner = re.sub(r"<.*?>(?= for |$)", "", impl)  # `impl Foo<A>` and `impl Foo<B>`: Foo
        return f"{owner} fn {record.enclosing_fn}"
    return f"message {record.error_message}"


def test_one_first_step_is_never_given_for_records_of_different_families() -> None:
    catalog = Triage.from_paths().catalog
    owners: dict[str, set[str]] = defaultdict(set)
    # Families are scoped to burn; the same function moved to burn-onnx keeps its burn family here.
    family_of_site = {
        _site_group(record): family.id
        for record in catalog
        if (family := catalog.family(record.id)) is not None
    }
    for record in catalog:
        if record.has_write_up:
            continue
        step = first_step(record, record.error_message)
        if step:
            family = catalog.family(record.id)
            group = _site_group(record)
            owners[step].add(family.id if family else family_of_site.get(group, group))
    shared = {step: sorted(ids) for step, ids in owners.items() if len(ids) > 1}
    print(f"{len(owners)} first steps; shared across families: {len(shared)}")
    assert shared == {}
