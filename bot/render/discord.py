"""The answer for Discord: embeds as the API's JSON dicts, and a plain-text fallback.

No discord.py here: the adapter turns these dicts into its objects. Every limit Discord sets is
kept, counted in UTF-16 code units (never fewer than Discord counts), and nothing can mention a
user, a role, `@everyone` or `@here` (the text is neutralised and `allowed_mentions` is empty).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from typing import Any

from bot.core.analysis import Analysis, Candidate, PanicMatch
from bot.core.match.releases import ReleaseHistory
from bot.core.panic import Panic
from bot.render import texts
from bot.render.answer.build import build_answer
from bot.render.answer.links import page_url
from bot.render.answer.parts import Answer, CatalogLike, Extra, RelatedError, Section, SourceLink
from bot.render.answer.words import answer_verdict, not_found_words, says_more
from bot.render.markup import (
    Block,
    Words,
    dc_code_block,
    dc_plain,
    dc_prose,
    dc_words,
    fit,
    md_inline_code,
    one_line,
    plain,
    safe_url,
    shorten,
    shorten_rendered,
    trim_blocks,
    ulen,
    words,
)

TITLE_MAX = 256
DESCRIPTION_MAX = 4096
FIELD_NAME_MAX = 256
FIELD_VALUE_MAX = 1024
FIELDS_MAX = 25
FOOTER_MAX = 2048
EMBED_TOTAL_MAX = 6000
EMBEDS_MAX = 10
CONTENT_MAX = 2000
URL_MAX = 1000
PLAIN_URL_MAX = 400

# Priorities: the highest is dropped first when the message is over 6,000 characters; the
# documentation is shortened before it is dropped.
_P_DOC, _P_SOLUTIONS, _P_FIX, _P_RELATED, _P_WHEN, _P_PREVENTION, _P_CODE = 1, 2, 3, 4, 5, 6, 7


FIRST_VIEW_MAX = 1000  # the first view's visible text, all embeds and the content together
FIRST_TITLE_MAX = 150
MEANING_MAX = 220
SOLUTION_MAX = 300
COLOUR_ANSWER = 0x2F81F7  # a write-up, or its family's
COLOUR_BARE = 0x8B949E  # no write-up: only what the catalog knows
COLOUR_CAUTION = 0xD29922  # a caution leads the answer
COLOUR_UNCATALOGUED = 0x6E7681
MORE_PREFIX = "triage:more"  # a Show more button's custom id: the prefix, then the record ids


def render_message(answer: Answer, *, public_url: str | None = None) -> dict[str, Any]:
    """{"content", "embeds", "allowed_mentions"} in the shape of Discord's message JSON, plus
    `record_ids` (the records the message shows, the only ones its buttons may vote on) and
    `show_more` (the custom id of the Show more button, or None). With `public_url`
    (TRIAGE_PUBLIC_URL) each answer links "Full write-up" to its record's page."""
    content_words: list[Words] = []
    if answer.intro:
        content_words.append(answer.intro)
    content_words.extend(answer.notes)
    content = "\n".join(dc_words(w) for w in content_words)
    if not answer.sections:
        content = _uncatalogued(answer)
    embeds = _first_view(answer)
    if public_url:
        for embed, section in zip(embeds, answer.sections, strict=False):
            url = safe_url(page_url(public_url, section.record.id), limit=URL_MAX)
            if url:
                link = f"[{texts.FULL_WRITE_UP}]({url})"
                embed["description"] = "\n".join(filter(None, (embed.get("description"), link)))
    ids = list(answer.record_ids)
    return {
        "content": shorten_rendered(content, CONTENT_MAX),
        "embeds": embeds,
        "allowed_mentions": {"parse": []},
        "record_ids": ids,
        "show_more": more_custom_id(ids) if ids else None,
    }


def more_custom_id(record_ids: list[str] | tuple[str, ...]) -> str:
    """`triage:more:ID,ID`: stateless, so the button still works after a restart."""
    return f"{MORE_PREFIX}:{','.join(record_ids)}"[:100]


def first_view_size(message: dict[str, Any]) -> int:
    """The visible characters of a message's first view: content and every embed's text."""
    return ulen(message.get("content") or "") + sum(
        _embed_size(e) for e in message.get("embeds") or ()
    )


def _uncatalogued(answer: Answer) -> str:
    if not answer.uncatalogued:
        return dc_words(answer_verdict(answer))
    lines = []
    for item in answer.uncatalogued:
        lines.append(dc_words(not_found_words(item.panic)))
        if item.nearest:
            lines.append(dc_words(words(texts.NEAREST)))
            for n in item.nearest:
                near = words(
                    texts.NEAREST_ITEM, id=n.record_id, message=n.message, percent=n.percent
                )
                lines.append("- " + dc_words(near))
    lines.append(dc_words(words(texts.UNCATALOGUED_HINT)))
    return "\n".join(lines)


# Successively tighter caps (title, meaning, solution) until the first view fits.
_FIRST_VIEW_CAPS = (
    (FIRST_TITLE_MAX, MEANING_MAX, SOLUTION_MAX),
    (120, 200, 260),
    (100, 160, 200),
    (70, 120, 140),
)


def _prose_after(head: str) -> Callable[[str], str]:
    """Renders a (shortened) raw text as prose after `head`."""
    return lambda raw: head + dc_prose(raw)


def _first_view(answer: Answer) -> list[dict[str, Any]]:
    embeds: list[dict[str, Any]] = []
    content = sum(ulen(dc_words(w)) + 1 for w in (answer.intro, *answer.notes) if w)
    for caps in _FIRST_VIEW_CAPS:
        embeds = _first_view_with(answer, *caps)
        if content + sum(_embed_size(e) for e in embeds) <= FIRST_VIEW_MAX:
            break
    return embeds


def _first_view_with(
    answer: Answer, title_max: int, meaning_max: int, solution_max: int
) -> list[dict[str, Any]]:
    embeds = []
    for number, section in enumerate(answer.sections[:EMBEDS_MAX]):
        root = number == 0
        embed: dict[str, Any] = {
            "title": fit(
                section.panic_message, title_max if root else title_max // 2 + 20, dc_plain
            )
            or dc_plain(texts.NO_MESSAGE),
            "color": _colour(section),
        }
        url = safe_url(section.source.url, limit=URL_MAX) if section.source else None
        if url:
            embed["url"] = url
        lines = []
        if root:
            if section.caution:
                lines.append(dc_words(section.caution))
            label = f"**{texts.FIRST_MEANING}** "
            if section.meaning_text:
                meaning = fit_clause(section.meaning_text, meaning_max, _prose_after(label))
                lines.append(meaning or "")
            elif section.meaning_words:
                lines.append(label + dc_words(section.meaning_words))
            if section.first_step:
                label = f"**{texts.FIRST_SOLUTION}** "
                best = one_line(section.first_step)
                lines.append(fit_clause(best, solution_max, _prose_after(label)) or "")
            if section.call_site:
                lines.append(f"{texts.CALLED_AT}: {_link(section.call_site)}")
            if section.folded:
                lines.append("⚠️ " + dc_words(_short_caution(section)))
            if section.note_up_front and section.version_note:
                lines.append(dc_words(section.version_note))  # older code, or one of several
        if section.source:
            # The title links to the source too; below the root, the label alone is enough.
            link = safe_url(section.source.url, limit=URL_MAX) if root else None
            label = md_inline_code(section.source.label)
            lines.append(
                f"{texts.SOURCE}: [{label}]({link})" if link else f"{texts.SOURCE}: {label}"
            )
        embed["description"] = "\n".join(line for line in lines if line)
        embeds.append(embed)
    if embeds:
        footer = plain(_footer(answer), backticks=False)
        embeds[-1]["footer"] = {"text": fit(footer, FOOTER_MAX, dc_plain) or ""}
    return embeds


_CLAUSE_END = re.compile(r"[.;:](?=\s)")


def fit_clause(raw: str, limit: int, render: Callable[[str], str]) -> str | None:
    """`render(raw)` when it fits, else its longest leading clause or sentence that does (ended
    with a full stop), else the longest prefix with an ellipsis: not a cut mid-word if avoidable."""
    full = render(raw)
    if ulen(full) <= limit:
        return full
    for end in reversed([m.start() for m in _CLAUSE_END.finditer(raw)]):
        clause = raw[:end].rstrip(" ,") + "."
        if len(clause) > 40 and ulen(render(clause)) <= limit:
            return render(clause)
    return fit(raw, limit, render)


def _link(source: SourceLink) -> str:
    url = safe_url(source.url, limit=URL_MAX)
    label = md_inline_code(source.label)
    return f"[{label}]({url})" if url else label


def _short_caution(section: Section) -> Words:
    return words(texts.CONTRADICTS_SHORT)


def _colour(section: Section) -> int:
    if section.caution or section.folded:
        return COLOUR_CAUTION
    return COLOUR_BARE if section.bare and not section.solutions else COLOUR_ANSWER


def render_more_for_records(
    catalog: CatalogLike, record_ids: list[str], history: ReleaseHistory | None = None
) -> dict[str, Any]:
    """Show more for a button that carries only record ids (stateless across restarts): each
    record's full answer, built as if the user had quoted its message."""
    items = []
    for record_id in record_ids[:EMBEDS_MAX]:
        record = catalog.get(record_id)
        if record is None:
            continue
        candidate = Candidate(record.id, 1.0, (), 1.0, None)
        items.append(PanicMatch(Panic.mentioned(record.error_message), (candidate,), True))
    analysis = Analysis("match", tuple(items), "more")
    return render_more(build_answer(analysis, catalog, history=history, max_sections=len(items)))


def render_more(answer: Answer) -> dict[str, Any]:
    """What Show more shows (ephemeral, to whoever pressed it): every part of each section."""
    return {
        "content": "",
        "embeds": _embeds(answer),
        "allowed_mentions": {"parse": []},
    }


def render_plain(answer: Answer) -> str:
    """The fallback when embeds cannot be sent: the essentials in at most 2,000 characters."""
    if not answer.sections:
        return shorten_rendered(dc_words(answer_verdict(answer)), CONTENT_MAX)
    sections = []
    for section in answer.sections:
        head = [f"**{dc_plain(_md_escape(section.title))}**"]
        if section.caution:
            head.append(dc_words(section.caution))
        head.append(dc_words(section.confidence))
        if section.source:
            url = safe_url(section.source.url, limit=PLAIN_URL_MAX)
            label = md_inline_code(section.source.label)
            head.append(f"{texts.SOURCE}: {label} <{url}>" if url else f"{texts.SOURCE}: {label}")
        blocks = [Block(0, "\n".join(head))]
        if section.solutions and not section.caution:
            items = "\n".join(
                f"{n}. {dc_prose(one_line(s))}" for n, s in enumerate(section.solutions, 1)
            )
            blocks.append(Block(1, f"{texts.SOLUTIONS}:\n{items}"))
        sections.append(blocks)
    intro = dc_words(answer.intro) if answer.intro else ""
    footer = dc_words(_footer(answer))

    def assemble(kept: list[list[Block]], trimmed: bool) -> str:
        parts = [intro] if intro else []
        parts += ["\n".join(b.text for b in blocks) for blocks in kept]
        parts += [dc_words(n) for n in answer.notes]
        if trimmed:
            parts.append(dc_words(words(texts.TRIMMED)))
        parts.append(footer)
        return "\n\n".join(parts)

    kept, trimmed = trim_blocks(sections, lambda k, t: ulen(assemble(k, t)), CONTENT_MAX)
    return shorten_rendered(assemble(kept, trimmed), CONTENT_MAX)


def _footer(answer: Answer) -> Words:
    # On Discord the buttons (and 👍/👎) under the answer vote, not a `/triage` reply.
    return (*words(texts.VOTE_HINT_DISCORD), *words(" "), *(answer.footer or ()))


def _md_escape(text: str) -> str:
    """Markdown characters in a title shown in bold: shown as themselves."""
    for ch in "\\*_~|`>#[]":
        text = text.replace(ch, "\\" + ch)
    return text


# --- embeds --------------------------------------------------------------------------------------


def _embeds(answer: Answer) -> list[dict[str, Any]]:
    sections = answer.sections[:EMBEDS_MAX]
    parts = [_section_parts(s) for s in sections]
    footer = plain(_footer(answer), backticks=False)

    def build(kept: list[list[Block]], trimmed: bool) -> list[dict[str, Any]]:
        embeds = []
        for section, blocks in zip(sections, kept, strict=False):
            embed: dict[str, Any] = {"title": _title(section), "color": _colour(section)}
            url = safe_url(section.source.url, limit=URL_MAX) if section.source else None
            if url:
                embed["url"] = url
            description = [b.text for b in blocks if b.tag in ("head", "doc")]
            embed["description"] = "\n\n".join(description)
            fields = [
                {"name": b.tag, "value": b.text, "inline": False}
                for b in blocks
                if b.tag not in ("head", "doc")
            ]
            if fields:
                embed["fields"] = fields[:FIELDS_MAX]
            embeds.append(embed)
        if embeds:
            text = footer
            if trimmed:
                text = plain(words(texts.TRIMMED), backticks=False) + " " + footer
            embeds[-1]["footer"] = {"text": fit(text, FOOTER_MAX, dc_plain) or ""}
        return embeds

    def measure(kept: list[list[Block]], trimmed: bool) -> int:
        return sum(_embed_size(e) for e in build(kept, trimmed))

    kept, trimmed = trim_blocks(parts, measure, EMBED_TOTAL_MAX)
    return build(kept, trimmed)


def _embed_size(embed: dict[str, Any]) -> int:
    size = ulen(embed.get("title", "")) + ulen(embed.get("description", ""))
    size += ulen(embed.get("footer", {}).get("text", ""))
    for field in embed.get("fields", ()):
        size += ulen(field["name"]) + ulen(field["value"])
    return size


def _title(section: Section) -> str:
    return fit(section.title, TITLE_MAX, dc_plain) or dc_plain(texts.NO_MESSAGE)


def _section_parts(section: Section) -> list[Block]:
    """The description's head, the documentation and the fields, each with a priority."""
    head = []
    if section.caution:
        head.append(dc_words(section.caution))
    lines = []
    if section.source:
        url = safe_url(section.source.url, limit=URL_MAX)
        label = md_inline_code(section.source.label)
        lines.append(f"{texts.SOURCE}: [{label}]({url})" if url else f"{texts.SOURCE}: {label}")
    if lines:
        head.append("\n".join(lines))
    if section.version_note:
        head.append(dc_words(section.version_note))
    if section.bare:
        if section.meaning_words:  # the kind of check, when it is all there is to say
            head.append(f"**{texts.FIRST_MEANING}** " + dc_words(section.meaning_words))
        facts = "\n".join("- " + dc_words(f) for f in section.facts)
    if section.bare and says_more(section):
        head.append(
            dc_words(section.bare_intro or words(texts.BARE_SITE)) + ("\n" + facts if facts else "")
        )
    if section.same_as:
        head.append(dc_words(section.same_as))
    blocks = [Block(0, _cap("\n\n".join(head), DESCRIPTION_MAX // 2), tag="head")]
    if section.documentation:
        title = f"**{texts.UNVERIFIED_WRITE_UP if section.caution else texts.WHAT_IT_MEANS}**\n"
        budget = DESCRIPTION_MAX - ulen(blocks[0].text) - 2
        doc = fit(section.documentation, budget, _prose_after(title))
        if doc:
            blocks.append(
                Block(
                    _P_DOC,
                    doc,
                    raw=section.documentation,
                    render=_prose_after(title),
                    tag="doc",
                )
            )
    if section.solutions:
        value = _list_value(list(section.solutions), _numbered)
        _field(blocks, _P_SOLUTIONS, texts.SOLUTIONS, value)
    if section.example_fix:
        _field(blocks, _P_FIX, texts.EXAMPLE_FIX, _code_value(section.example_fix))
    if section.related:
        value = _list_value(_related(section.related), lambda _n, item: item)
        _field(blocks, _P_RELATED, texts.RELATED_ERRORS, value)
    for extra in section.extras:
        _field(blocks, *_extra_field(extra))
    if section.folded:
        folded = section.folded
        name = shorten(plain(folded.caution, backticks=False), FIELD_NAME_MAX)
        parts = [dc_prose(folded.documentation)] if folded.documentation else []
        if folded.solutions:
            parts.append(_list_value(list(folded.solutions), _numbered) or "")
        text = "\n".join(p for p in parts if p)
        _field(blocks, _P_CODE, name, fit(text, FIELD_VALUE_MAX, lambda r: r) if text else None)
    if section.caution:
        # A flagged record's write-up may be about another error: every part says so.
        blocks[1:] = [
            Block(
                b.priority,
                b.text,
                raw=b.raw,
                render=b.render,
                tag=b.tag if b.tag == "doc" else b.tag + texts.UNVERIFIED_SUFFIX,
            )
            for b in blocks[1:]
        ]
    return blocks


def _cap(text: str, limit: int) -> str:
    return text if ulen(text) <= limit else shorten_rendered(text, limit)


def _field(blocks: list[Block], priority: int, name: str, value: str | None) -> None:
    if value:
        blocks.append(Block(priority, value, tag=shorten(name, FIELD_NAME_MAX)))


def _list_value(items: list[str], render: Callable[[int, str], str]) -> str | None:
    """As many whole items as fit in a field, the last one shortened if need be."""
    out: list[str] = []
    for number, raw in enumerate(items, 1):
        item = render(number, raw)
        candidate = "\n".join([*out, item])
        if ulen(candidate) <= FIELD_VALUE_MAX:
            out.append(item)
            continue
        room = FIELD_VALUE_MAX - ulen("\n".join(out)) - (1 if out else 0)
        shortened = fit(raw, room, partial(render, number)) if room > 40 else None
        if shortened:
            out.append(shortened)
        break
    return "\n".join(out) or None


def _numbered(number: int, raw: str) -> str:
    return f"{number}. {dc_prose(one_line(raw))}"


def _bullet(_number: int, raw: str) -> str:
    return "- " + dc_prose(one_line(raw))


def _code_value(code: str) -> str | None:
    return fit(code, FIELD_VALUE_MAX, dc_code_block)


def _related(items: tuple[RelatedError, ...]) -> list[str]:
    out = []
    for item in items:
        code = md_inline_code(shorten(one_line(item.message), 200))
        url = safe_url(item.source.url, limit=300) if item.source else None
        out.append(f"- [{code}]({url})" if url else f"- {code}")
    return out


def _extra_field(extra: Extra) -> tuple[int, str, str | None]:
    if extra.code:
        return _P_CODE, extra.title, _code_value(extra.code)
    if extra.items:
        return _P_PREVENTION, extra.title, _list_value(list(extra.items), _bullet)
    text = extra.text or ""
    return _P_WHEN, extra.title, fit(text, FIELD_VALUE_MAX, dc_prose)
