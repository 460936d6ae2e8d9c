"""The answer as `triage-bot match` prints it: plain text, links in full, colours on request.

Catalog and user text is stripped of control codes, so a record or a paste cannot move the
cursor, recolour the terminal or reorder text with bidi overrides; the only escape sequences
are the colours added here when `color=True`.
"""

from __future__ import annotations

import textwrap

from bot.core.analysis import Analysis
from bot.render import texts
from bot.render.answer.parts import Answer, CatalogLike, Extra, Section
from bot.render.answer.words import analysis_verdict, answer_verdict, panic_words, says_more
from bot.render.markup import Words, one_line, plain, safe_url, term_clean, words

WIDTH = 88
INDENT = "  "
CODE_INDENT = "    "
SEPARATOR = "-" * 40

_BOLD, _DIM, _CYAN, _YELLOW, _RESET = "\x1b[1m", "\x1b[2m", "\x1b[36m", "\x1b[33m", "\x1b[0m"


def render_verdict_line(analysis: Analysis, catalog: CatalogLike | None = None) -> str:
    """One line for any verdict: what matched, or the panics found, or that there were none."""
    return term_clean(plain(analysis_verdict(analysis, catalog)))


def render_text(answer: Answer, *, color: bool) -> str:
    style = _Style(color)
    if not answer.sections:
        return _uncatalogued(answer) + "\n"
    parts: list[str] = []
    if answer.intro:
        parts.append(_words(answer.intro))
    for number, section in enumerate(answer.sections):
        if number:
            parts.append(style.dim(SEPARATOR))
        parts.append(_section(section, style))
    for note in answer.notes:
        parts.append(_words(note))
    # No footer: in a terminal there is nobody to react or reply to.
    return "\n\n".join(parts) + "\n"


def _uncatalogued(answer: Answer) -> str:
    """The verdict line, the nearest records of each panic not found, how to add one."""
    parts = [_words(answer_verdict(answer))]
    if not answer.uncatalogued:
        return parts[0]
    for item in answer.uncatalogued:
        if not item.nearest:
            continue
        lines = [_words(panic_words(item.panic)), texts.NEAREST]
        for near in item.nearest:
            found = words(
                texts.NEAREST_ITEM, id=near.record_id, message=near.message, percent=near.percent
            )
            lines.append(_item("-", _words(found)))
        parts.append("\n".join(lines))
    parts.append(_words(words(texts.DRAFT_HINT)))
    return "\n\n".join(parts)


class _Style:
    def __init__(self, color: bool):
        self.color = color

    def _wrap(self, code: str, text: str) -> str:
        return f"{code}{text}{_RESET}" if self.color and text else text

    def bold(self, text: str) -> str:
        return self._wrap(_BOLD, text)

    def dim(self, text: str) -> str:
        return self._wrap(_DIM, text)

    def link(self, text: str) -> str:
        return self._wrap(_CYAN, text)

    def caution(self, text: str) -> str:
        return self._wrap(_YELLOW, text)


def _words(text: Words) -> str:
    return term_clean(plain(text))


def _para(text: str, indent: str = INDENT) -> str:
    """Prose wrapped at WIDTH, paragraphs kept; long words and URLs are never broken."""
    out = []
    for paragraph in term_clean(text).split("\n\n"):
        paragraph = one_line(paragraph)
        if paragraph:
            out.append(
                textwrap.fill(
                    paragraph,
                    WIDTH,
                    initial_indent=indent,
                    subsequent_indent=indent,
                    break_long_words=False,
                    break_on_hyphens=False,
                )
            )
    return "\n\n".join(out)


def _item(marker: str, text: str) -> str:
    lead = f"{INDENT}{marker} "
    return textwrap.fill(
        one_line(term_clean(text)),
        WIDTH,
        initial_indent=lead,
        subsequent_indent=" " * len(lead),
        break_long_words=False,
        break_on_hyphens=False,
    )


def _code(code: str) -> str:
    lines = term_clean(code.replace("\r\n", "\n").replace("\r", "\n")).rstrip("\n").split("\n")
    return "\n".join((CODE_INDENT + line).rstrip() for line in lines)


def _section(section: Section, style: _Style) -> str:
    head = [style.bold(term_clean(section.panic_message))]
    if section.caution:
        head.append(style.caution(_words(section.caution)))
    if section.meaning_text:
        head.append(f"{texts.FIRST_MEANING} {term_clean(one_line(section.meaning_text))}")
    elif section.meaning_words:
        head.append(f"{texts.FIRST_MEANING} {_words(section.meaning_words)}")
    if section.first_step:
        head.append(f"{texts.FIRST_SOLUTION} {term_clean(one_line(section.first_step))}")
    if section.call_site:
        head.append(f"{texts.CALLED_AT}: {term_clean(section.call_site.label)}")
        url = safe_url(section.call_site.url)
        if url:
            head.append(INDENT + style.link(url))
    head.append(_words(section.confidence))
    if section.source:
        url = safe_url(section.source.url)
        head.append(f"{texts.SOURCE}: {term_clean(section.source.label)}")
        if url:
            head.append(INDENT + style.link(url))
    if section.version_note:
        head.append(_words(section.version_note))
    parts = ["\n".join(head)]
    if says_more(section):
        facts = [_words(words_) for words_ in section.facts]
        intro = _words(section.bare_intro) if section.bare_intro else texts.BARE_SITE
        parts.append(intro + "\n" + "\n".join(_item("-", f) for f in facts))
    if section.same_as:
        parts.append(_words(section.same_as))
    if section.caution and not section.bare:
        parts.append(style.caution(texts.UNVERIFIED_WRITE_UP))
    folded = section.folded
    if section.documentation:
        parts.append(style.bold(texts.WHAT_IT_MEANS) + "\n" + _para(section.documentation))
    if section.solutions:
        items = [_item(f"{n}.", s) for n, s in enumerate(section.solutions, 1)]
        parts.append(style.bold(texts.SOLUTIONS) + "\n" + "\n".join(items))
    if section.example_fix:
        parts.append(style.bold(texts.EXAMPLE_FIX) + "\n" + _code(section.example_fix))
    if section.related:
        items = []
        for item in section.related:
            line = _item("-", f"`{one_line(item.message)}`")
            url = safe_url(item.source.url) if item.source else None
            items.append(line + ("\n" + INDENT * 2 + style.link(url) if url else ""))
        parts.append(style.bold(texts.RELATED_ERRORS) + "\n" + "\n".join(items))
    for extra in section.extras:
        parts.append(_extra(extra, style))
    if folded:
        left_out = words(texts.CONTRADICTS_FAMILY_LEFT_OUT, claim=folded.claim)
        parts.append(style.caution(_words(left_out)))
    return "\n\n".join(parts)


def _extra(extra: Extra, style: _Style) -> str:
    title = style.bold(extra.title)
    if extra.code:
        return title + "\n" + _code(extra.code)
    if extra.items:
        return title + "\n" + "\n".join(_item("-", i) for i in extra.items)
    return title + "\n" + _para(extra.text or "")
