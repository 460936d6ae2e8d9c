"""The answer as a GitHub comment: markdown, a hidden marker, within GitHub's size limit."""

from __future__ import annotations

import re

from bot.render import texts
from bot.render.answer import Answer, Extra, RelatedError, Section, answer_verdict
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


def render_comment(answer: Answer) -> str:
    """The comment body; its first line is the marker."""
    head = marker(KIND_ANSWER, answer.record_ids, answer.fingerprint)
    if not answer.sections:
        verdict = md_words(answer_verdict(answer))
        if answer.panics:
            verdict += "\n\n" + md_words(words(texts.UNCATALOGUED_HINT))
        return _bounded(f"{head}\n{verdict}")

    sections = [_section_blocks(s) for s in answer.sections]

    def assemble(kept: list[list[Block]], trimmed: bool) -> str:
        parts = [head]
        if answer.intro:
            parts.append(md_words(answer.intro))
        for section, blocks in zip(answer.sections, kept, strict=False):
            parts.append(_assemble_section(section, blocks))
        notes = [md_words(n) for n in answer.notes]
        if trimmed:
            notes.append(md_words(words(texts.TRIMMED)))
        parts.extend(notes)
        parts.append("---\n<sub>" + md_words(_footer(answer)) + "</sub>")
        return "\n\n".join(parts)

    kept, trimmed = trim_blocks(sections, lambda k, t: ulen(assemble(k, t)), MAX_CHARS)
    return _bounded(assemble(kept, trimmed))


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
    return (*(answer.footer or ()), *words(" "), *answer.wrong_hint)


def _source_line(section: Section) -> str:
    if not section.source:
        return ""
    label = md_inline_code(section.source.label)
    url = safe_url(section.source.url)
    link = f"[{label}]({url})" if url else label
    return f"{texts.SOURCE}: {link}"


def _section_blocks(section: Section) -> list[Block]:
    head = [f"### {md_inline_code(section.title)}"]
    if section.caution:
        head.append("> " + md_words(section.caution))
    lines = [md_words(section.confidence), _source_line(section)]
    head.append("  \n".join(line for line in lines if line))
    if section.version_note:
        head.append(md_words(section.version_note))
    if section.bare:
        facts = "\n".join("- " + md_words(f) for f in section.facts)
        head.append(
            md_words(section.bare_intro or words(texts.BARE_SITE))
            + ("\n\n" + facts if facts else "")
        )
    blocks = [Block(_P_HEAD, "\n\n".join(head), tag="head")]
    if section.documentation:
        title = f"#### {texts.WHAT_IT_MEANS}\n\n"
        blocks.append(
            Block(
                _P_DOC,
                title + md_prose(section.documentation),
                raw=section.documentation,
                render=lambda raw, title=title: title + md_prose(raw),
                tag="write-up",
            )
        )
    if section.solutions:
        numbered = enumerate(section.solutions, 1)
        items = "\n".join(f"{n}. {md_prose(one_line(s))}" for n, s in numbered)
        blocks.append(Block(_P_SOLUTIONS, f"#### {texts.SOLUTIONS}\n\n{items}", tag="write-up"))
    if section.example_fix:
        fix = md_code_block(section.example_fix)
        blocks.append(Block(_P_FIX, f"#### {texts.EXAMPLE_FIX}\n\n{fix}", tag="write-up"))
    if section.related:
        items = "\n".join("- " + _related(r) for r in section.related)
        blocks.append(Block(_P_RELATED, f"#### {texts.RELATED_ERRORS}\n\n{items}", tag="write-up"))
    if section.extras:
        body = "\n\n".join(_extra(e) for e in section.extras)
        only_source = all(extra.title == texts.SOURCE_CODE for extra in section.extras)
        summary = texts.SOURCE_CODE if only_source else texts.MORE_SUMMARY
        blocks.append(
            Block(
                _P_EXTRAS,
                f"<details>\n<summary>{summary}</summary>\n\n{body}\n\n</details>",
                tag="write-up",
            )
        )
    return blocks


def _assemble_section(section: Section, blocks: list[Block]) -> str:
    head = [b.text for b in blocks if b.tag != "write-up"]
    write_up = [b.text for b in blocks if b.tag == "write-up"]
    if section.caution and write_up:
        # A flagged record's write-up stays folded: it may be about another error.
        summary = texts.UNVERIFIED_WRITE_UP
        inner = "\n\n".join(write_up)
        write_up = [f"<details>\n<summary>{summary}</summary>\n\n{inner}\n\n</details>"]
    return "\n\n".join(head + write_up)


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
