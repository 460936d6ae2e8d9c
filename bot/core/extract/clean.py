"""Text cleaning: what a paste holds besides its text, removed before the scanner reads it.

ANSI escapes (also with the ESC lost or shown as a glyph), C0 and C1 controls, zero-width
characters, odd spaces, typographic quotes, CRLF and CR line ends, `<details>`/`<summary>` and
similar tags, the entities of a text that went through HTML escaping (`&lt;`, `&gt;`, `&quot;`,
`&amp;`). The result keeps one line per line of the input, so positions found in it map back to
the paste.
"""

from __future__ import annotations

import re

from bot.catalog.model import value_class
from bot.catalog.patterns import TYPOGRAPHIC_QUOTES

# Cleaning works on UTF-8 bytes: `bytes.translate` drops C0 controls at C speed, and decoding
# with errors="ignore" drops lone surrogates (encoded with "surrogatepass"), so a huge binary
# paste costs a few passes over memory rather than millions of regex matches.

# CSI (ESC [ ... final), OSC (ESC ] ... BEL or ST), DCS/SOS/PM/APC strings, two-char escapes.
_ANSI_ESC = re.compile(
    rb"\x1b\[[0-?]{0,64}[ -/]{0,16}[@-~]?"
    rb"|\x1b\][^\x07\x1b\n]{0,4096}(?:\x07|\x1b\\)?"
    rb"|\x1b[PX^_][^\x1b\n]{0,4096}(?:\x1b\\)?"
    rb"|\x1b[ -/]{0,4}[0-~]?"
)
_ANSI_C1 = re.compile(rb"\xc2\x9b[0-?]{0,64}[ -/]{0,16}[@-~]?")  # U+009B, the 8-bit CSI
# Escapes whose ESC got lost or was shown as a glyph: `^[[31m`, `\u241b[1m`, and a bare `[0m`.
_ANSI_CARET = re.compile(rb"\^\[\[[0-?]{0,32}[ -/]{0,8}[@-~]?")
_ANSI_GLYPH = re.compile(rb"\xe2\x90\x9b\[[0-?]{0,32}[ -/]{0,8}[@-~]?")
_ANSI_ORPHAN_SGR = re.compile(rb"\[[0-9][0-9;]{0,31}m")
# C0 controls except TAB and LF (CR is turned into LF first), and DEL.
_ASCII = bytes(range(0x80))
_C0 = bytes([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])
# C1 controls (U+0080..U+009F). A binary paste holds millions, so they are removed from each
# line when it is read (`Cleaned.line`), not from the whole text up front.
_C1 = re.compile(r"[\x80-\x9f]")
_C1_BYTES = re.compile(rb"\xc2[\x80-\x9f]")
# Zero-width space/non-joiner/joiner, word joiner, BOM: dropped.
_INVISIBLE = tuple(
    (char, char.encode()) for char in ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")
)
# NBSP, line/paragraph separators, narrow NBSP, ideographic space: become spaces.
_SPACE_LIKE = tuple(
    (char, char.encode()) for char in ("\xa0", "\u2028", "\u2029", "\u202f", "\u3000")
)
# Typographic quotes (a text that went through a word processor or a chat client): the ASCII
# quotes Rust printed, so `panicked at \u2018..\u2019` and `can\u2019t` read as printed.
_QUOTES = tuple((char, char.encode(), ascii) for char, ascii in TYPOGRAPHIC_QUOTES.items())
_ESCAPED = (
    (b"&lt;", b"<"),
    (b"&gt;", b">"),
    (b"&quot;", b'"'),
    (b"&#39;", b"'"),
    (b"&#x27;", b"'"),
    (b"&amp;", b"&"),
)
_HTML_TAG = re.compile(rb"</?(?:details|summary|pre|code|kbd)\b[^<>\n]{0,200}>", re.IGNORECASE)
# A line break written as HTML inside a line (`<br>`, `<br/>`): a space, so the two lines it
# stood between stay two words apart (the text keeps one line per line of the input).
_HTML_BREAK = re.compile(rb"<br\s{0,4}/?>", re.IGNORECASE)


@value_class(frozen=True)
class Cleaned:
    """A text cleaned: what the scanner reads, line by line."""

    decoded: str  # the cleaned text, C1 controls and trailing padding still in
    raw_lines: list[str]  # its lines: one per line of the input (CRLF, CR and LF)
    c1: bool  # whether C1 controls are left to remove line by line

    def line(self, index: int, limit: int | None = None) -> str:
        """Line `index`, cleaned, its first `limit` characters when given."""
        line = self.raw_lines[index]
        if limit is not None and len(line) > limit:
            line = line[:limit]
        if self.c1:
            line = _C1.sub("", line)
        return line.rstrip(" \t")


# The last text cleaned: the matcher reads one text twice (panics, then quoted messages).
_last_cleaned: tuple[str, Cleaned] | None = None


def clean(text: str) -> Cleaned:
    """`text` cleaned; the same object again when the same string is cleaned twice in a row."""
    global _last_cleaned
    last = _last_cleaned
    if last is not None and last[0] is text:
        return last[1]
    cleaned = clean_uncached(text)
    _last_cleaned = (text, cleaned)
    return cleaned


def clean_uncached(text: str) -> Cleaned:
    """`text` cleaned, leaving `clean`'s last text as it was."""
    data = text.encode("utf-8", "surrogatepass")
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if b"\x1b" in data:
        data = _ANSI_ESC.sub(b"", data)
    if b"^[[" in data:
        data = _ANSI_CARET.sub(b"", data)
    if b"\xe2\x90\x9b[" in data:
        data = _ANSI_GLYPH.sub(b"", data)
    if b"[" in data:
        data = _ANSI_ORPHAN_SGR.sub(b"", data)
    data = data.translate(None, _C0)
    c1 = False
    invisible: list[str] = []
    space_like: list[str] = []
    quotes: list[tuple[str, str]] = []
    if not data.isascii():
        # The non-ASCII bytes alone (whole characters, still aligned) are usually a short
        # string: test it first, and rewrite the text only when something is there.
        high = data.translate(None, _ASCII)
        if b"\xc2\x9b" in high:
            data = _ANSI_C1.sub(b"", data)
        c1 = b"\xc2" in high and _C1_BYTES.search(high) is not None
        invisible = [char for char, seq in _INVISIBLE if seq in high]
        space_like = [char for char, seq in _SPACE_LIKE if seq in high]
        quotes = [(char, ascii) for char, seq, ascii in _QUOTES if seq in high]
    if b"<" in data:
        data = _HTML_TAG.sub(b"", data)
        data = _HTML_BREAK.sub(b" ", data)
    if b"&lt;" in data or b"&gt;" in data or b"&quot;" in data:
        # A text escaped for HTML (a mail, a web page's source): `&` stands for itself
        # elsewhere (`&{}`, a URL's `&param`), so only these entities are decoded, `&amp;` last.
        for entity, unescaped in _ESCAPED:
            data = data.replace(entity, unescaped)
    # "ignore" drops the surrogates and anything an escape sequence cut in half.
    decoded = data.decode("utf-8", "ignore")
    for char in invisible:
        decoded = decoded.replace(char, "")
    for char in space_like:
        decoded = decoded.replace(char, " ")
    for char, ascii in quotes:
        decoded = decoded.replace(char, ascii)
    return Cleaned(decoded, decoded.split("\n"), c1)


def _clean_lines(text: str) -> list[str]:
    """The cleaned text as lines; one line per line of the input (CRLF, CR and LF)."""
    cleaned = clean(text)
    if cleaned.c1:
        return [cleaned.line(index) for index in range(len(cleaned.raw_lines))]
    return [line.rstrip(" \t") for line in cleaned.raw_lines]


def clean_text(text: str) -> str:
    """ANSI escapes and control characters removed, LF line ends, `<details>`/`<summary>`
    tags dropped, trailing padding stripped. Markdown quote markers are kept (the scanner
    reads through them)."""
    return "\n".join(_clean_lines(text))
