"""A bare panic site in an error family is answered with the family's advice, said as such."""

from __future__ import annotations

from bot.app import Triage, load_bundled
from bot.render import texts
from bot.render.answer.build import build_answer
from bot.render.github import render_comment
from bot.render.terminal import render_text

EMBEDDING = (
    "thread 'main' panicked at /home/u/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/"
    "burn-autodiff-0.19.0/src/ops/module.rs:60:9:\nCan't differentiate embedding backward.\n"
)
NEVER_CHECKPOINTED = (
    "thread 'main' panicked at crates/burn-autodiff/src/checkpoint/builder.rs:230:17:\n"
    "Node NodeId { value: 7 } is needed but never checkpointed\n"
)


def answer_for(text: str):
    triage = Triage.from_paths()
    answer = build_answer(triage.analyse(text), triage.catalog, history=triage.history)
    return answer, triage.catalog


def test_family_advice_for_a_bare_site_in_a_family():
    answer, catalog = answer_for(EMBEDDING)
    (section,) = answer.sections
    family = catalog.family(section.record_id)
    assert section.bare and family.id == "unimplemented-op-backward"
    assert section.documentation == family.documentation
    assert section.solutions == tuple(family.solutions)
    intro = texts.FAMILY_SITE.format(family=family.name)
    assert intro in render_text(answer, color=False)
    body = render_comment(answer)
    assert f"#### {texts.WHAT_IT_MEANS}" in body
    assert texts.BARE_SITE not in body


def test_bare_site_outside_any_family_says_only_what_the_catalog_knows():
    answer, catalog = answer_for(NEVER_CHECKPOINTED)
    (section,) = answer.sections
    assert catalog.family(section.record_id) is None
    assert section.bare and not section.documentation and not section.solutions
    assert texts.BARE_SITE in render_comment(answer)


def test_a_removed_site_is_answered_with_that_said():
    catalog = load_bundled().catalog
    answer, _ = answer_for(NEVER_CHECKPOINTED)
    record = answer.sections[0].record
    removed = record.with_changes(tags=(*record.tags, "removed-at:" + "ab12cd34" * 5))
    catalog.records[record.id] = removed
    try:
        triage = Triage.of(load_bundled())
        again = build_answer(triage.analyse(NEVER_CHECKPOINTED), catalog, history=triage.history)
    finally:
        catalog.records[record.id] = record
    assert removed.removed_at == "ab12cd34" * 5
    note = texts.REMOVED_SITE.format(sha="ab12cd3")
    assert note in render_text(again, color=False)


def test_a_family_sites_collapsed_extras_are_labelled_as_such():
    answer, _ = answer_for(EMBEDDING)
    body = render_comment(answer)
    assert f"<summary>{texts.MORE_SUMMARY}</summary>" in body
    assert f"<summary>{texts.SOURCE_CODE}</summary>" not in body
