"""Small text tools the renderers share: inline words, escaping, length limits.

Catalog and user text is never trusted: it may hold `@everyone`, `@name`, backtick runs that
would close a code block, HTML that would close a `<details>`, or terminal control codes. Each
platform gets its own escaping here, and `fit` trims raw text *before* escaping so a cut never
lands inside an escape.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import cache
from urllib.parse import quote, urlsplit

from bot.catalog.model import value_class

ZW = "\u200b"  # zero-width space: invisible, and it stops mentions and fences from forming
ELLIPSIS = "…"


@value_class(frozen=True)
class Span:
    """A run of text in a reply: prose, or code (shown as inline code)."""

    text: str
    code: bool = False
    url: str | None = None  # a labelled link: `text` is its label (issue 24)


Words = tuple[Span, ...]


@value_class(frozen=True)
class Link:
    """A template value shown as a labelled link: `[0.19.1 model_gen.rs:405](url)`."""

    label: str
    url: str | None


def words(template: str, **values: object) -> Words:
    """Fill a template from texts.py; backtick pairs in the template mark code spans, and a
    `{name}` whose value is a `Link` becomes a link span."""
    links = {k: v for k, v in values.items() if isinstance(v, Link)}
    field = re.compile("\\{(" + "|".join(map(re.escape, links)) + ")\\}") if links else None
    out: list[Span] = []
    for index, part in enumerate(template.split("`")):
        pieces = field.split(part) if field is not None else [part]
        for piece_index, piece in enumerate(pieces):
            if piece_index % 2 == 1:
                out.append(Span(links[piece].label, url=links[piece].url))
                continue
            text = piece.format(**values) if "{" in piece else piece
            if text:
                out.append(Span(text, code=index % 2 == 1))
    return tuple(out)


def join_words(*groups: Words, sep: str = " ") -> Words:
    out: list[Span] = []
    for group in groups:
        if not group:
            continue
        if out and sep:
            out.append(Span(sep))
        out.extend(group)
    return tuple(out)


def plain(text: Words, *, backticks: bool = True, urls: bool = True) -> str:
    """Words as plain text: code spans between backticks (or bare, for Discord footers), links
    as `label (url)` (or their label alone)."""
    return "".join(
        f"`{s.text}`"
        if s.code and backticks
        else f"{s.text} ({s.url})"
        if s.url and urls
        else s.text
        for s in text
    )


def ulen(text: str) -> int:
    """Length in UTF-16 code units: never less than the code-point count platforms use."""
    return len(text.encode("utf-16-le")) // 2


def one_line(text: str) -> str:
    return " ".join(text.split())


def shorten(text: str, limit: int) -> str:
    """Cut raw text to at most `limit` code units, ending with an ellipsis when cut."""
    if ulen(text) <= limit:
        return text
    cut = text[: max(0, limit - 1)]
    while cut and ulen(cut) > limit - 1:
        cut = cut[:-1]
    return cut.rstrip() + ELLIPSIS


_VALUES = re.compile(r"[\d\[\]{}()]")


def shorten_middle(text: str, limit: int) -> str:
    """Cut raw text to at most `limit` code units: when its end holds values (numbers,
    shapes, a Debug print) by leaving out its middle (` … `), at word boundaries where there
    are some, since the words at its start say what it is and the values at its end are the
    user's; else at its end."""
    if ulen(text) <= limit:
        return text
    if not _VALUES.search(text[-(limit // 3) :]):
        return shorten(text, limit)
    room = limit - 3  # the ` … ` in between
    head_room = (room + 1) // 2
    head = text[:head_room]
    tail = text[len(text) - (room - head_room) :]
    if " " in head[head_room // 2 :]:
        head = head[: head.rindex(" ")]
    if " " in tail[: len(tail) // 2]:
        tail = tail[tail.index(" ") + 1 :]
    out = f"{head.rstrip()} {ELLIPSIS} {tail.lstrip()}"
    return out if ulen(out) <= limit else shorten(text, limit)


_ESCAPED_BREAK = re.compile(r"\\n")
_WINDOWS_PATH = re.compile(r"\b[A-Za-z]:\\")
_PASTED_MARKS = re.compile(r"\*\*|__")
_PASTED_QUOTES = re.compile(r"(?:^|\s)>\s|^#+\s")


def unmarked_paste(text: str) -> str:
    """A pasted message for a heading: one line, without the markdown the paste wrapped it in
    (`**`, a quote's `>`) or escapes a log printed literally (`\\n`)."""
    flat = text if _WINDOWS_PATH.search(text) else _ESCAPED_BREAK.sub(" ", text)
    flat = one_line(_PASTED_QUOTES.sub(" ", _PASTED_MARKS.sub("", one_line(flat))))
    if flat.count("`") % 2:  # a code span the paste opened or closed around the message
        flat = flat.strip("`").strip() if flat[:1] == "`" or flat[-1:] == "`" else flat
    return flat


def shorten_rendered(text: str, limit: int) -> str:
    """Cut already escaped text (no code blocks in it): a cut must not leave a bare `@`."""
    out = no_mentions(shorten(text, limit))
    while ulen(out) > limit:
        out = no_mentions(shorten(out[:-2], limit))
    return out


def fit(raw: str, limit: int, render: Callable[[str], str]) -> str | None:
    """`render` of the longest prefix of `raw` (ellipsis added when cut) within `limit`."""
    full = render(raw)
    if ulen(full) <= limit:
        return full
    # Escaping only lengthens text, so a prefix longer than `limit` never fits.
    lo, hi, best = 0, min(len(raw) - 1, limit), None
    while lo <= hi:
        mid = (lo + hi) // 2
        candidate = render(raw[:mid].rstrip() + ELLIPSIS)
        if ulen(candidate) <= limit:
            best, lo = candidate, mid + 1
        else:
            hi = mid - 1
    return best


# --- mentions ------------------------------------------------------------------------------------

_MENTION = re.compile(r"@(?=[^\s" + ZW + r"]|$)")  # at the end too: a delimiter may follow
# bidi embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069): a code span does not
# stop them reordering the text around it, so they are dropped on every platform
_BIDI_RE = re.compile("[\u202a-\u202e\u2066-\u2069]")


def no_mentions(text: str) -> str:
    """`@name`, `@everyone`, `<@123>` -> an invisible break after the `@`: nobody is pinged.
    Bidi controls are dropped too: every platform's escaping passes through here."""
    return _MENTION.sub("@" + ZW, _BIDI_RE.sub("", text))


# --- URLs --------------------------------------------------------------------------------------

_URL_SAFE = "/:?#!$&*+,;=%-._~"  # not ()[]<>'"` nor @: they could end a link or ping


def safe_url(url: str | None, *, limit: int = 1000) -> str | None:
    """An http(s) URL that cannot break out of a markdown link, or None."""
    if not url:
        return None
    url = url.strip()
    if any(ch.isspace() or unicodedata.category(ch)[0] == "C" for ch in url):
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme not in ("https", "http") or not parts.netloc:
        return None
    quoted = quote(url, safe=_URL_SAFE)
    if ulen(quoted) > limit:
        return None
    return quoted


# --- GitHub markdown -----------------------------------------------------------------------------


def _backtick_runs(text: str) -> int:
    return max((len(m) for m in re.findall(r"`+", text)), default=0)


_SPECIAL = re.compile(r"\\.|`+", re.S)


@cache
def _closer(length: int) -> re.Pattern[str]:
    return re.compile(r"(?<!`)`{" + str(length) + r"}(?!`)")


def _split_code_spans(text: str) -> list[tuple[str, bool]]:
    """Prose and single-line code spans, as CommonMark reads a paragraph's backticks."""
    out: list[tuple[str, bool]] = []
    i = prose_start = 0
    while True:
        found = _SPECIAL.search(text, i)
        if not found:
            break
        if found.group().startswith("\\"):
            i = found.end()  # a backslash escape: the next character is literal
            continue
        line_end = text.find("\n", found.end())
        line_end = len(text) if line_end < 0 else line_end
        close = _closer(found.end() - found.start()).search(text, found.end(), line_end)
        if close is None:
            i = found.end()
            continue
        out.append((text[prose_start : found.start()], False))
        out.append((text[found.start() : close.end()], True))
        i = prose_start = close.end()
    out.append((text[prose_start:], False))
    return [(part, code) for part, code in out if part]


_PAIRS = re.compile(r"(?<=`)(?=`)|(?<=~)(?=~)")


def md_prose(text: str) -> str:
    """Catalog markdown for GitHub: formatting kept, no HTML, no fences, no mentions."""
    parts = []
    for part, code in _split_code_spans(text):
        if code and part.startswith("```"):
            # A span opened by three or more backticks could open a fence at a line start.
            run = len(part) - len(part.lstrip("`"))
            inner = part[run:-run]
            if inner.startswith(" ") and inner.endswith(" ") and inner.strip():
                inner = inner[1:-1]
            parts.append(md_inline_code(inner))
        elif code:
            parts.append(no_mentions(part))
        else:
            # A backtick left in prose is escaped (`\``): a bare one could pair with a later
            # span's (on this line or the next) and turn the text around it into code.
            part = _PROSE_TICK.sub(lambda m: m.group(1) or "\\`", part)
            part = _PAIRS.sub(ZW, part).replace("<", "&lt;")
            parts.append(no_mentions(part))
    return "".join(parts)


_PROSE_TICK = re.compile(r"(\\.)|`", re.S)  # an escape kept as it is, or a bare backtick


def md_inline_code(text: str) -> str:
    """Text as one inline code span, for GitHub and Discord alike."""
    text = no_mentions(one_line(text))
    text = re.sub(r"(?<=`)(?=`)", ZW, text)  # no run longer than one backtick
    if not text:
        return ""
    if "`" in text:
        return f"`` {text} ``"
    return f"`{text}`"


def md_code_block(code: str, lang: str = "rust") -> str:
    """A fenced block that nothing inside can close (GitHub: a fence longer than any run)."""
    code = no_mentions(code.rstrip("\n").replace("\r\n", "\n").replace("\r", "\n"))
    fence = "`" * max(3, _backtick_runs(code) + 1)
    return f"{fence}{lang}\n{code}\n{fence}"


def md_words(text: Words) -> str:
    return "".join(
        md_inline_code(s.text) if s.code else _md_link(s) if s.url else md_prose(s.text)
        for s in text
    )


def _md_link(span: Span) -> str:
    """`[label](url)`, the label escaped; the label alone when the URL is not safe."""
    url = safe_url(span.url)
    label = md_prose(span.text).replace("[", "\\[").replace("]", "\\]")
    return f"[{label}]({url})" if url else label


# --- Discord markdown --------------------------------------------------------------------------

_TICK_PAIRS = re.compile(r"(?<=`)(?=`)")


def dc_prose(text: str) -> str:
    """Catalog markdown for Discord: no ``` anywhere (Discord opens a block at any ```)."""
    return no_mentions(_TICK_PAIRS.sub(ZW, text))


def dc_code_block(code: str, lang: str = "rust") -> str:
    code = code.rstrip("\n").replace("\r\n", "\n").replace("\r", "\n")
    code = no_mentions(_TICK_PAIRS.sub(ZW, code))
    if code.endswith("`"):
        code += ZW
    return f"```{lang}\n{code}\n```"


def dc_words(text: Words) -> str:
    return "".join(
        md_inline_code(s.text) if s.code else _dc_link(s) if s.url else dc_prose(s.text)
        for s in text
    )


def _dc_link(span: Span) -> str:
    url = safe_url(span.url)
    label = dc_prose(span.text).replace("[", "\\[").replace("]", "\\]")
    return f"[{label}]({url})" if url else label


def dc_plain(text: str) -> str:
    """Text for places Discord shows without markdown (titles, footers): mentions only."""
    return no_mentions(text)


# --- terminal ----------------------------------------------------------------------------------

_BIDI = {chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))}


def term_clean(text: str) -> str:
    """No control codes from catalog or user text: no escapes, no bidi overrides."""
    return "".join(
        ch
        for ch in text
        if ch in "\n\t" or (unicodedata.category(ch) not in ("Cc", "Cs") and ch not in _BIDI)
    )


# --- trimming to a size limit --------------------------------------------------------------------


@value_class(frozen=True)
class Block:
    """A part of a rendering; priority 0 is never dropped, the highest is dropped first.

    A block with `raw` and `render` is shortened (raw text cut, then rendered) before it is
    dropped.
    """

    priority: int
    text: str
    raw: str | None = None
    render: Callable[[str], str] | None = None
    tag: str = ""


MIN_SHRUNK = 300  # shorter than this, a shortened block is not worth keeping


def trim_blocks(
    sections: list[list[Block]],
    measure: Callable[[list[list[Block]], bool], int],
    limit: int,
) -> tuple[list[list[Block]], bool]:
    """Drop or shorten blocks, least important and last section first, until `measure` fits.

    `measure(sections, trimmed)` is the rendered size; `trimmed` says a note about trimming
    will be shown. Whole sections after the first go last. Returns the kept blocks and whether
    anything was left out.
    """
    sections = [list(s) for s in sections]
    trimmed = False
    while measure(sections, trimmed) > limit:
        choice: tuple[int, int, int] | None = None
        for si in range(len(sections) - 1, -1, -1):
            for bi, block in enumerate(sections[si]):
                if block.priority > 0 and (choice is None or block.priority > choice[0]):
                    choice = (block.priority, si, bi)
        if choice is None:
            if len(sections) > 1:
                sections.pop()
                trimmed = True
                continue
            break
        _, si, bi = choice
        block = sections[si][bi]
        trimmed = True
        excess = measure(sections, True) - limit
        if block.raw is not None and block.render is not None:
            target = ulen(block.text) - excess
            shrunk = fit(block.raw, target, block.render) if target >= MIN_SHRUNK else None
            if shrunk is not None and ulen(shrunk) < ulen(block.text):
                sections[si][bi] = Block(block.priority, shrunk, tag=block.tag)
                continue
        del sections[si][bi]
    return sections, trimmed
