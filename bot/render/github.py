"""The answer as a GitHub comment: markdown, a hidden marker, within GitHub's size limit."""

from __future__ import annotations

import re

from bot.render import texts
from bot.render.answer.links import page_url
from bot.render.answer.parts import Answer, Extra, RelatedError, Section, SourceLink
from bot.render.answer.words import answer_verdict, not_found_words, says_more
from bot.render.markup import (
    Block,
    Words,
    md_code_block,
    md_inline_code,
    md_prose,
    md_words,
    one_line,
    safe_url,
    trim_blocks,
    ulen,
    words,
)

MAX_CHARS = 65_536
MARKER_PREFIX = "<!-- triage-bot"
KIND_ANSWER = "answer"
KIND_NO_LONGER = "no-longer"

_MARKER = re.compile(
    r"<!-- triage-bot:(?P<kind>[a-z-]+)(?P<attrs>(?: [a-z]+=[A-Za-z0-9._:,-]*)*) -->"
)
_TOKEN = re.compile(r"[^A-Za-z0-9._:-]")

# Priorities for trimming: the least important part goes first.
_P_HEAD, _P_DOC, _P_SOLUTIONS, _P_FIX, _P_RELATED, _P_EXTRAS = 0, 1, 2, 3, 4, 5


def marker(kind: str, ids: tuple[str, ...], fingerprint: str) -> str:
    clean_ids = ",".join(t for t in (_TOKEN.sub("", i) for i in ids) if t)
    return f"<!-- triage-bot:{kind} ids={clean_ids} fp={_TOKEN.sub('', fingerprint)} -->"


def parse_marker(body: str) -> dict | None:
    """The marker in a comment body: {"kind", "ids": [...], "fp"}, or None if it has none."""
    found = _MARKER.search(body or "")
    if not found:
        return None
    out: dict = {"kind": found["kind"], "ids": [], "fp": ""}
    for pair in found["attrs"].split():
        key, _, value = pair.partition("=")
        out[key] = [v for v in value.split(",") if v] if key == "ids" else value
    return out


def render_comment(
    answer: Answer, *, also_reported: str | None = None, public_url: str | None = None
) -> str:
    """The comment body; its first line is the marker.

    The first view (what shows without a click) is the panic as pasted, one line on what it
    means, the first step, the other issues that hit the same record (`also_reported`, the
    line bot.github.duplicates writes) and the pinned source; everything else is inside
    `<details>`. With `public_url` (TRIAGE_PUBLIC_URL) the write-up stays on the record's page:
    the first view ends with a "Full write-up" link there instead.
    """
    head = marker(KIND_ANSWER, answer.record_ids, answer.fingerprint)
    if not answer.sections:
        return _bounded(f"{head}\n{_uncatalogued(answer)}")

    sections = [
        _section_blocks(s, root=n == 0, also_reported=also_reported if n == 0 else None)
        for n, s in enumerate(answer.sections)
    ]
    if public_url:
        pairs = zip(answer.sections, sections, strict=True)
        sections = [_linked(s, blocks, public_url) for s, blocks in pairs]
    several = len(answer.sections) > 1

    def assemble(kept: list[list[Block]], trimmed: bool) -> str:
        parts = [head]
        intro = [md_words(w) for w in (answer.intro, *answer.notes) if w]
        if trimmed:
            intro.append(md_words(words(texts.TRIMMED)))
        if intro:
            parts.append(" ".join(intro))
        more: list[str] = []
        for section, blocks in zip(answer.sections, kept, strict=False):
            parts.extend(b.text for b in blocks if b.tag in ("head", "fold"))
            inner = [b.text for b in blocks if b.tag not in ("head", "fold")]
            if inner:
                title = f"#### {md_inline_code(section.panic_message)}\n\n" if several else ""
                more.append(title + "\n\n".join(inner))
        if more:
            parts.append(_details(texts.MORE, "\n\n".join(more)))
        parts.append("---\n<sub>" + md_words(_footer(answer)) + "</sub>")
        if answer.maintainers:
            note = "\n\n".join(md_words(w) for w in answer.maintainers)
            parts.append(_details(f"<sub>{texts.MAINTAINERS}</sub>", note))
        return "\n\n".join(parts)

    kept, trimmed = trim_blocks(sections, lambda k, t: ulen(assemble(k, t)), MAX_CHARS)
    return _bounded(assemble(kept, trimmed))


def _linked(section: Section, blocks: list[Block], public_url: str) -> list[Block]:
    """The first view and how sure, then the link to the page that holds the write-up."""
    url = safe_url(page_url(public_url, section.record.id))
    kept = [b for b in blocks if b.tag in ("head", "match")]
    if url and kept:
        head = kept[0]
        link = f"**[{texts.FULL_WRITE_UP}]({url})**"
        kept[0] = Block(head.priority, f"{head.text}\n\n{link}", tag=head.tag)
    return kept


def _details(summary: str, body: str) -> str:
    return f"<details>\n<summary>{summary}</summary>\n\n{body}\n\n</details>"


def _uncatalogued(answer: Answer) -> str:
    """No catalogued panic: which one was not found, the nearest records, how to add one."""
    if not answer.uncatalogued:
        return md_words(answer_verdict(answer))
    parts = []
    for item in answer.uncatalogued:
        parts.append(md_words(not_found_words(item.panic)))
        if item.nearest:
            lines = [md_words(words(texts.NEAREST))]
            lines += [
                "- "
                + md_words(
                    words(texts.NEAREST_ITEM, id=n.record_id, message=n.message, percent=n.percent)
                )
                for n in item.nearest
            ]
            parts.append("\n".join(lines))
        else:
            parts.append(md_words(words(texts.NO_NEAREST)))
    parts.append(md_words(words(texts.UNCATALOGUED_HINT)))
    return "\n\n".join(parts)


def render_no_longer(answer: Answer | None) -> str:
    """The body that replaces an answer when an edit removed the panic it answered."""
    ids = answer.record_ids if answer else ()
    fingerprint = answer.fingerprint if answer else ""
    return f"{marker(KIND_NO_LONGER, ids, fingerprint)}\n{md_words(words(texts.NO_LONGER))}"


def _bounded(body: str) -> str:
    # The blocks are trimmed to fit; this only guards against a pathological head.
    while ulen(body) > MAX_CHARS:
        body = body[: len(body) - (ulen(body) - MAX_CHARS)]
    return body


def _footer(answer: Answer) -> Words:
    return (*answer.wrong_hint, *words(" "), *(answer.footer or ()))


def _source_link(section: Section) -> str:
    return _link(section.source) if section.source else ""


def _link(source: SourceLink) -> str:
    label = md_inline_code(source.label)
    url = safe_url(source.url)
    return f"[{label}]({url})" if url else label


def _source_line(section: Section) -> str:
    link = _source_link(section)
    return f"**{texts.SOURCE}:** {link}" if link else ""


def first_view_lines(
    section: Section, *, root: bool, also_reported: str | None = None
) -> list[str]:
    """The panic as pasted, what it means, the best solution, the pinned source. A later panic
    is one line, the panic and its source, so three of them still fit the first screen."""
    panic = md_inline_code(section.panic_message)
    if not root:
        source = _source_link(section)
        if not source:
            return [f"### {panic}"]
        return [texts.LATER_PANIC.format(panic=panic, source=source)]
    lines = [f"### {panic}"]
    body = []
    if root:
        if section.caution:
            body.append(md_words(section.caution))
        if section.meaning_text:
            body.append(f"**{texts.FIRST_MEANING}** {md_prose(section.meaning_text)}")
        elif section.meaning_words:
            body.append(f"**{texts.FIRST_MEANING}** {md_words(section.meaning_words)}")
        if section.first_step:
            body.append(f"**{texts.FIRST_SOLUTION}** {md_prose(one_line(section.first_step))}")
        if section.note_up_front and section.version_note:
            body.append(md_words(section.version_note))  # older code, or one of several sites
    if also_reported:
        body.append(one_line(also_reported))
    if section.call_site:
        body.append(f"**{texts.CALLED_AT}:** {_link(section.call_site)}")
    source = _source_line(section)
    if source:
        body.append(source)
    if body:
        lines.append("  \n".join(body))
    return lines


def _folded(section: Section) -> str | None:
    folded = section.folded
    if folded is None:
        return None
    inner = []
    if folded.documentation:
        inner.append(f"**{texts.WHAT_IT_MEANS}**\n\n{md_prose(folded.documentation)}")
    if folded.solutions:
        numbered = enumerate(folded.solutions, 1)
        items = "\n".join(f"{n}. {md_prose(one_line(s))}" for n, s in numbered)
        inner.append(f"**{texts.SOLUTIONS}**\n\n{items}")
    if folded.example_fix:
        inner.append(f"**{texts.EXAMPLE_FIX}**\n\n{md_code_block(folded.example_fix)}")
    return _details(md_words(folded.caution), "\n\n".join(inner))


def _section_blocks(
    section: Section, *, root: bool = True, also_reported: str | None = None
) -> list[Block]:
    head_lines = first_view_lines(section, root=root, also_reported=also_reported)
    blocks = [Block(_P_HEAD, "\n\n".join(head_lines), tag="head")]
    folded = _folded(section)
    if folded and root:
        blocks.append(Block(_P_HEAD, folded, tag="fold"))
    head = []
    if section.caution and not root:
        head.append("> " + md_words(section.caution))
    head.append(md_words(section.confidence))
    if section.version_note and not (root and section.note_up_front):
        head.append(md_words(section.version_note))
    if says_more(section):
        facts = "\n".join("- " + md_words(f) for f in section.facts)
        head.append(
            md_words(section.bare_intro or words(texts.BARE_SITE))
            + ("\n\n" + facts if facts else "")
        )
    if section.same_as:
        head.append(md_words(section.same_as))
    blocks.append(Block(_P_HEAD, "\n\n".join(head), tag="match"))
    write_up: list[Block] = []
    if section.documentation:
        title = f"#### {texts.WHAT_IT_MEANS}\n\n"
        write_up.append(
            Block(
                _P_DOC,
                title + md_prose(section.documentation),
                raw=section.documentation,
                render=lambda raw: title + md_prose(raw),
                tag="write-up",
            )
        )
    if section.solutions:
        numbered = enumerate(section.solutions, 1)
        items = "\n".join(f"{n}. {md_prose(one_line(s))}" for n, s in numbered)
        write_up.append(Block(_P_SOLUTIONS, f"#### {texts.SOLUTIONS}\n\n{items}", tag="write-up"))
    if section.example_fix:
        fix = md_code_block(section.example_fix)
        write_up.append(Block(_P_FIX, f"#### {texts.EXAMPLE_FIX}\n\n{fix}", tag="write-up"))
    if section.related:
        items = "\n".join("- " + _related(r) for r in section.related)
        write_up.append(
            Block(_P_RELATED, f"#### {texts.RELATED_ERRORS}\n\n{items}", tag="write-up")
        )
    if section.extras:
        body = "\n\n".join(_extra(e) for e in section.extras)
        only_source = all(extra.title == texts.SOURCE_CODE for extra in section.extras)
        summary = texts.SOURCE_CODE if only_source else texts.MORE_SUMMARY
        write_up.append(Block(_P_EXTRAS, _details(summary, body), tag="write-up"))
    if section.caution and write_up:
        # A flagged record's write-up stays folded: it may be about another error.
        inner = "\n\n".join(b.text for b in write_up)
        write_up = [Block(_P_DOC, _details(texts.UNVERIFIED_WRITE_UP, inner), tag="write-up")]
    blocks.extend(write_up)
    if folded and not root:
        blocks.append(Block(_P_EXTRAS, folded, tag="folded"))
    return blocks


def _related(item: RelatedError) -> str:
    code = md_inline_code(one_line(item.message))
    url = safe_url(item.source.url) if item.source else None
    return f"[{code}]({url})" if url else code


def _extra(extra: Extra) -> str:
    if extra.code:
        if extra.title == texts.SOURCE_CODE:
            return md_code_block(extra.code)
        return f"**{extra.title}**\n\n{md_code_block(extra.code)}"
    if extra.items:
        items = "\n".join("- " + md_prose(one_line(i)) for i in extra.items)
        return f"**{extra.title}**\n\n{items}"
    return f"**{extra.title}:** {md_prose(extra.text or '')}"
