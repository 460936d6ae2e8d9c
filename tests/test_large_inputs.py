"""Long pastes: noise around a panic must not cost the answer (the snippet budget, the caps).

The corpus's texts padded with log noise (tests/corpus_padding.py) before the panic get the
same verdicts and answers as the raw texts.
"""

from __future__ import annotations

import pytest
from corpus_padding import noise, pad
from corpus_scoring import load_cases

from bot.core.extract.quoted import MAX_SNIPPETS, quoted_snippets, without_tool_output
from bot.core.extract.scanner import extract_panics


def _decisions(triage, size: int, cases=None) -> list[tuple[str, str, tuple[str, ...]]]:
    out = []
    for number, case in enumerate(cases or load_cases()):
        text = pad(case["text"], size, seed=number % 4) if size else case["text"]
        analysis = triage.analyse(text)
        answered = tuple(m.best.record_id for m in analysis.answered)
        out.append((case["case"], analysis.verdict, answered))
    return out


@pytest.fixture(scope="module")
def raw_decisions(triage):
    return _decisions(triage, 0)


def test_texts_padded_to_64_kb_get_the_raw_texts_answers(triage, raw_decisions):
    assert sum(bool(answered) for _, _, answered in raw_decisions) >= 70
    assert _decisions(triage, 64 << 10) == raw_decisions


def test_headerless_texts_padded_to_1_mb_get_the_raw_texts_answers(triage, raw_decisions):
    # Without a `panicked at` header every line may quote a message: where the snippet budget
    # is spent. (A text with a header is read from its header; 64 KB covers those.) Texts the
    # bot finds a panic in, and a few where it finds none, to keep the test to seconds.
    verdicts = {name: verdict for name, verdict, _ in raw_decisions}
    headerless = [
        c for c in load_cases() if not any(p.has_header for p in extract_panics(c["text"]))
    ]
    quiet = [c for c in headerless if verdicts[c["case"]] == "no-panic"]
    names = {c["case"] for c in headerless if verdicts[c["case"]] != "no-panic"}
    names |= {c["case"] for c in quiet[:6]}
    cases = [c for c in headerless if c["case"] in names]
    expected = [d for d in raw_decisions if d[0] in names]
    assert sum(bool(answered) for _, _, answered in expected) >= 10
    assert _decisions(triage, 1 << 20, cases) == expected


def test_noise_would_exceed_the_snippet_budget_without_the_tool_output_filter():
    # The test above means something only if the noise alone is more than the budget.
    text = noise(1 << 20, 0)
    assert len(set(text.splitlines())) > 10 * MAX_SNIPPETS
    assert len(quoted_snippets(text)) < MAX_SNIPPETS


@pytest.mark.parametrize(
    "line",
    [
        "[2025-06-14T09:12:44Z INFO  burn_train::learner::builder] Training started",
        "2025-01-01T10:00:00Z  DEBUG wgpu_core::device: step 3 ok",
        "WARN cubecl_runtime::tune: autotune key missing",
        "   Compiling burn-core v0.18.0",
        "warning: unused variable: `x`",
    ],
)
def test_tool_output_lines_are_dropped(line):
    assert without_tool_output(f"before\n{line}\nafter") == "before\n\nafter"


@pytest.mark.parametrize(
    "line",
    [
        "[ERROR burn_train] Can't differentiate avg pool 2d backward.",
        "Running out of memory on the second epoch",
        "Information about shapes: Tensor rank mismatch",
        "Can't differentiate avg pool 2d backward.",
    ],
)
def test_other_lines_are_kept(line):
    assert without_tool_output(line) == line


@pytest.mark.parametrize("header", [False, True])
def test_the_text_is_read_for_its_version_once_however_many_panics_it_holds(
    triage, monkeypatch, header
):
    """Linear in the text: the project's version is looked up in the whole text once per text
    and project, not once per panic matched (that made 1 MB of catalogued messages quadratic)."""
    from bot.core.match import releases

    calls: list[int] = []
    real = releases.version_in_text

    def counted(text, names):
        calls.append(len(text))
        return real(text, names)

    monkeypatch.setattr(releases, "version_in_text", counted)
    messages = [r.error_message for r in triage.catalog if "{" not in r.error_message]
    assert len(messages) > 400
    prefix = "thread 'main' panicked at src/main.rs:1:1:\n" if header else ""
    counts = []
    for lines in (50, 400):
        calls.clear()
        text = "\n".join(f"{prefix}{m}" for m in messages[:lines])
        analysis = triage.analyse(text)
        assert len(analysis.panics) >= (20 if header else 1)  # (at most 20 reports are read)
        counts.append(len(calls))
    projects = len(triage.projects.histories) if triage.projects is not None else 1
    assert 1 <= counts[0] <= counts[1] <= projects < 10, counts
