"""`bot.github.decide`: what an issue should show, from plain values (no store, GitHub or clock)."""

from __future__ import annotations

from bot.catalog.model import Record
from bot.core.analysis import Analysis, Candidate, PanicMatch
from bot.core.panic import Panic
from bot.github.decide import Facts, decide
from bot.github.duplicates import DuplicateConfig
from bot.github.labels import LabelConfig
from bot.github.planner import BotComment, IssueView, plan
from bot.github.triage_command.handle import Controls, answer_under
from bot.render import texts
from bot.render.github import parse_marker, render_no_longer

ROOT = Record(
    id="root-1",
    repo="tracel-ai/burn",
    error_message="Tensor shapes do not match",
    file_path="crates/burn-tensor/src/shape.rs",
    line_number=10,
    tags=("wgpu",),
)
OTHER = Record(
    id="other-2",
    repo="tracel-ai/burn",
    error_message="Device not found",
    file_path="crates/burn-wgpu/src/device.rs",
    line_number=20,
    background_tag="device",
)


class Catalog:
    """The little the answer asks of a catalog."""

    def __init__(self, *records: Record) -> None:
        self.records = {r.id: r for r in records}

    def get(self, record_id: str) -> Record | None:
        return self.records.get(record_id)

    def by_message(self, text: str) -> list[Record]:
        return [r for r in self.records.values() if r.error_message == text]

    def flags(self, record_id: str) -> frozenset[str]:
        return frozenset()

    def family(self, record_id: str) -> None:
        return None


CATALOG = Catalog(ROOT, OTHER)
LABELS = LabelConfig(tags={"wgpu": "backend: wgpu"}, crates={"burn-core": "A-core"})


def analysis(*matches: tuple[str, bool], verdict: str | None = None) -> Analysis:
    """One panic whose candidates are the given (record id, matched) pairs, best first."""
    if not matches:
        return Analysis(verdict or "no-panic", (), "fp-none")  # type: ignore[arg-type]
    panic = Panic.mentioned("Tensor shapes do not match")
    candidates = tuple(Candidate(rid, 0.9, (), 0.9, None) for rid, _ in matches)
    item = PanicMatch(panic, candidates, matches[0][1])
    shown = verdict or ("match" if matches[0][1] else "uncatalogued-panic")
    return Analysis(shown, (item,), "fp-1")  # type: ignore[arg-type]


def facts(raw: Analysis, controls: Controls | None = None, **more) -> Facts:
    controls = controls or Controls()
    found, answer = answer_under(raw, controls, CATALOG)
    records = [r for r in (CATALOG.get(i) for i in answer.record_ids) if r]
    return Facts(
        number=7, analysis=found, answer=answer, controls=controls, records=records, **more
    )


def row(number: int, record_id: str, state: str = "open", **extra) -> dict:
    return {"number": number, "record_id": record_id, "state": state, "last_at": 1.0, **extra}


def test_a_match_earns_its_records_labels_and_a_comment_naming_other_reports():
    desired = decide(
        facts(
            analysis(("root-1", True)),
            families={"root-1": "tensor-shape"},
            history=[row(7, "root-1"), row(12, "root-1", "closed"), row(3, "other-2")],
        ),
        LABELS,
        DuplicateConfig(),
    )
    assert desired.verdict == "match"
    assert desired.record_ids == ("root-1",)
    # the family comes from the catalog's families (not the record's backgroundTag)
    assert desired.labels == (
        "panic: known",
        "family: tensor-shape",
        "backend: wgpu",
        "crate: burn-tensor",
    )
    assert desired.body is not None
    assert parse_marker(desired.body)["kind"] == "answer"
    # this issue (#7) and an issue of another record (#3) are not "also reported"
    assert "#12" in desired.body and "#7 " not in desired.body and "#3" not in desired.body
    assert desired.no_longer_body == render_no_longer(None)


def test_the_duplicate_label_needs_an_open_issue_with_the_same_root_record():
    config = DuplicateConfig(label="duplicate-candidate")
    closed_only = facts(analysis(("root-1", True)), history=[row(12, "root-1", "closed")])
    assert "duplicate-candidate" not in decide(closed_only, LABELS, config).labels
    open_one = facts(analysis(("root-1", True)), history=[row(40, "root-1", "open")])
    assert decide(open_one, LABELS, config).labels[-1] == "duplicate-candidate"
    # not configured: never
    assert "duplicate-candidate" not in decide(open_one, LABELS, DuplicateConfig()).labels
    # how many other issues the comment names is the configuration's
    many = facts(analysis(("root-1", True)), history=[row(n, "root-1") for n in (40, 41, 42)])
    body = decide(many, LABELS, DuplicateConfig(max_listed=1)).body or ""
    assert body.count("#4") == 1


def test_an_uncatalogued_panic_is_labelled_and_commented_only_when_configured():
    found = facts(analysis(("root-1", False)), project_crates=["burn-core"])
    desired = decide(found, LABELS, DuplicateConfig())
    assert desired.verdict == "uncatalogued-panic"
    assert desired.record_ids == ()
    assert desired.labels == ("panic: uncatalogued", "A-core")
    assert desired.body is None
    commenting = LabelConfig(comment_uncatalogued=True)
    body = decide(found, commenting, DuplicateConfig()).body
    assert body is not None and parse_marker(body) is not None


def test_a_match_whose_records_the_catalog_lacks_is_uncatalogued():
    found = facts(analysis(("gone-9", True)))
    assert found.analysis.verdict == "match" and found.answer.record_ids == ()
    desired = decide(found, LABELS, DuplicateConfig())
    assert desired.verdict == "uncatalogued-panic"
    assert desired.labels == ("panic: uncatalogued",)


def test_no_panic_earns_nothing():
    desired = decide(facts(analysis()), LABELS, DuplicateConfig())
    assert (desired.verdict, desired.labels, desired.body) == ("no-panic", (), None)


def test_wrong_leaves_one_line_and_no_labels():
    controls = Controls(wrong=("root-1",))
    desired = decide(facts(analysis(("root-1", True)), controls), LABELS, DuplicateConfig())
    assert desired.verdict == "uncatalogued-panic"  # the rejected record is out of the analysis
    assert desired.labels == () and desired.body is None
    assert texts.WRONG_NOTE in desired.no_longer_body
    assert parse_marker(desired.no_longer_body)["override"] == "wrong:root-1"
    # the existing answer comment becomes that line
    view = IssueView("o/r", 7, "t", "b", frozenset({"panic: known"}), (), BotComment(1, "old"))
    the_plan = plan(view, desired, ["panic: known"])
    assert the_plan.comment == "update" and the_plan.body == desired.no_longer_body
    assert the_plan.remove_labels == ("panic: known",)


def test_wrong_with_another_match_left_answers_with_it():
    controls = Controls(wrong=("root-1",))
    raw = analysis(("root-1", True), ("other-2", True))
    desired = decide(facts(raw, controls), LABELS, DuplicateConfig())
    # the next candidate is not promoted: the matcher had passed it over
    assert desired.verdict == "uncatalogued-panic" and desired.body is None


def test_a_chosen_record_is_answered_and_kept_in_the_marker():
    controls = Controls(match="other-2")
    desired = decide(facts(analysis(("root-1", True)), controls), LABELS, DuplicateConfig())
    assert desired.verdict == "match" and desired.record_ids == ("other-2",)
    assert "family: device" in desired.labels  # the record's backgroundTag without a family
    assert desired.body is not None
    assert parse_marker(desired.body)["override"] == "match:other-2"


def test_why_adds_the_evidence_to_whatever_is_shown():
    why = Controls(show_why=True)
    matched = decide(facts(analysis(("root-1", True)), why), LABELS, DuplicateConfig())
    assert matched.body is not None and texts.WHY_SUMMARY in matched.body
    # nothing to show otherwise: the evidence goes on the answer that would have been shown
    nothing = decide(facts(analysis(("root-1", False)), why), LABELS, DuplicateConfig())
    assert nothing.body is not None and texts.WHY_SUMMARY in nothing.body
    assert nothing.labels == ("panic: uncatalogued",)
    # after `wrong`: on the one-line note
    both = Controls(show_why=True, wrong=("root-1",))
    noted = decide(facts(analysis(("root-1", True)), both), LABELS, DuplicateConfig())
    assert noted.body is not None and noted.body.startswith(noted.no_longer_body)
    assert texts.WHY_SUMMARY in noted.body and noted.labels == ()


def test_an_earlier_wrong_does_not_silence_a_new_match():
    # `wrong` rejected other-2 once; the issue now matches root-1: a normal answer
    controls = Controls(wrong=("other-2",))
    desired = decide(facts(analysis(("root-1", True)), controls), LABELS, DuplicateConfig())
    assert desired.verdict == "match" and "panic: known" in desired.labels
    assert desired.body is not None
    assert parse_marker(desired.body)["override"] == "wrong:other-2"


def test_a_duplicate_label_that_is_already_wanted_is_not_repeated():
    config = DuplicateConfig(label="panic: known")
    found = facts(analysis(("root-1", True)), history=[row(40, "root-1", "open")])
    labels = decide(found, LABELS, config).labels
    assert labels.count("panic: known") == 1
