"""Panic messages quoted without a `panicked at` header: in a title, a line, a code span, quotes.

Such a mention is weaker evidence than a pasted panic, and it is often not a report at all (a
pull request that removes a panic, a docs question, a review comment quoting source). Each
snippet therefore carries the sentence around it, so the matcher can tell "I get `X`" from
"this removes the `X` stub".
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Literal

from bot.catalog.model import value_class
from bot.core.extract.clean import clean_text
from bot.core.extract.hard_wrap import MIN_WIDTH as MIN_CUT_WIDTH
from bot.core.extract.hard_wrap import rejoined
from bot.core.extract.log_prefixes import strip_log_prefix
from bot.core.extract.wrappers import split_wrapper
from bot.core.panic import PANIC_WRAPPERS, Wrapper

MAX_SNIPPETS = 400
MAX_SNIPPET_CHARS = 500
MIN_SNIPPET_CHARS = 8

Source = Literal["title", "line", "code", "span", "tail"]


@value_class(frozen=True)
class Snippet:
    text: str  # the candidate message, std wrapper removed
    raw: str  # as it stands in the text, wrapper included
    wrapper: Wrapper | None
    source: Source
    context: str  # the line it stands in, for telling a report from a discussion


_TITLE = re.compile(r"^\s{0,3}(?:title|subject)\s*:\s*", re.IGNORECASE)
_MARKERS = re.compile(r"^\s{0,8}(?:>\s?){0,8}(?:[-*+]\s+|\d{1,3}[.)]\s+|#{1,6}\s+)?")
_SPAN = re.compile(r"(`{1,3})([^`\n]{1,500})\1")
# A span opened by two or three backticks may hold single ones (```Failed to make `Name` ..```).
_LONG_SPAN = re.compile(r"(?<!`)(`{2,3})(?!`)([^\n]{1,500}?)(?<!`)\1(?!`)")
# Single quotes as well (`panic 'MESSAGE' in ..`, as std's old header quoted it), when they
# stand apart from words: an apostrophe (`don't`, `users'`) never opens nor closes one.
_QUOTED = re.compile(
    r"\"([^\"\n]{12,500})\"|“([^”\n]{12,500})”|(?<![\w'])'([^'\n]{12,500})'(?![\w'])"
)
# `getting this when training: MESSAGE` -> MESSAGE; the lead-in is short and ends with a colon.
_LEAD_IN = re.compile(r"^[^:`\"]{3,80}?(?::|->|—|=>)\s+")
# Source code quoted in a review: a message inside a macro call is not a report.
_CODE_CALL = re.compile(r"\b(?:panic|unimplemented|todo|unreachable|assert\w*)!\s*\(|\.expect\(")
_COLOR_EYRE = re.compile(r"^(?:Message|message)\s*:\s+")
# A sentence, not code nor output: words and spaces up to a code span, ending in a full stop.
# (three words, then anything up to the span: no run the engine could split two ways)
_PROSE_LINE = re.compile(r"^[A-Z][a-z']*(?: [a-z',]+){3}[^`]*`[^`]+`.*[.!?]$")
# A panic's location and message on one line (the header's two lines flattened, in a title).
_FLAT_LOCATION = re.compile(r"[\w./\\-]{1,200}\.rs:\d{1,7}:\d{1,5}:\s+(?=\S)")
# A capitalised word after the title's first: where a message may start after a few words.
_TITLE_WORD = re.compile(r"(?<=\s)[A-Z][a-z]")
MAX_TITLE_LEAD = 40
_FORMAT_PLACEHOLDER = re.compile(r"\{[A-Za-z0-9_]*(?::[^{}\s]*)?\}")


def _quoted(found: re.Match[str]) -> str:
    return found.group(1) or found.group(2) or found.group(3)


def _strip_line(line: str) -> str:
    line = _MARKERS.sub("", line, count=1)
    line = strip_log_prefix(line)
    return _COLOR_EYRE.sub("", line).strip().strip("`'\"“”").strip()


def _strip_code_line(line: str) -> str:
    """A code block's line as `_strip_line` reads it, but quotes go only in a pair around the
    whole line: a backtick inside a block is the message's own (`` `spawn_local` called ..``)."""
    line = _MARKERS.sub("", line, count=1)
    line = _COLOR_EYRE.sub("", strip_log_prefix(line)).strip()
    if len(line) > 1 and line[0] == line[-1] and line[0] in "`'\"" and line[0] not in line[1:-1]:
        line = line[1:-1].strip()
    return line


def _spans(line: str) -> Iterator[re.Match[str]]:
    """The code spans of a line: single-backtick ones, and longer ones holding backticks."""
    yield from _SPAN.finditer(line)
    if "``" in line:
        yield from _LONG_SPAN.finditer(line)


def _looks_like_code(line: str) -> bool:
    # Not a trailing `}`: Debug output such as `TensorId { value: 3 }` ends with one.
    stripped = line.rstrip()
    if stripped in ("}", "})", "});", ")", "];"):
        return True
    return stripped.endswith((";", "{", "=>")) or bool(_CODE_CALL.search(line))


# Output of the tools around a panic, never a quoted panic message: log records below error
# level, cargo's right-aligned progress lines and rustc's warnings. A long paste is mostly
# these; dropping them in one pass over the text keeps the snippet budget (and the time) for
# lines that can be a message.
_QUIET_LEVELS = r"(?:TRACE|DEBUG|INFO|WARN|WARNING)"
# Anchored on the line break before the line: the engine then jumps from `\n` to `\n` (a
# literal prefix) rather than trying `^` at every character of a 4 MB window.
_TOOL_OUTPUT = re.compile(
    r"\n(?:"
    r"warning[:\[][^\n]*"
    r"|[ \t]{1,12}(?:Compiling|Checking|Finished|Running|Fresh|Downloading|Downloaded|"
    r"Updating|Locking|Adding|Blocking|Documenting|Building|Installing|Installed|Unpacking|"
    r"Packaging)[ \t][^\n]*"
    rf"|\[(?:[0-9T:.,Z+-]{{8,40}}[ \t]{{1,4}})?{_QUIET_LEVELS}\b[^\]\n]{{0,200}}\][^\n]*"
    r"|(?:\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}[0-9.,]{0,10}[Z+:0-9-]{0,6}[ \t]{1,8})?"
    rf"{_QUIET_LEVELS}[ \t]{{1,8}}[A-Za-z_][A-Za-z0-9_:]{{0,200}}:?[ \t][^\n]*"
    r")(?=\n|$)"
)


def without_tool_output(text: str) -> str:
    """The text with tool-output lines emptied (see `_TOOL_OUTPUT`); other lines as they are."""
    return _TOOL_OUTPUT.sub("\n", "\n" + text)[1:]


# A double-quoted string holding escaped line breaks on a log line (an editor's log printing a
# process's stderr as one quoted value: `"stderr"  "error: ..\n\nPanic: ..\n\tMESSAGE\n"`).
_ESCAPED_STRING = re.compile(r'"((?:[^"\\\n]|\\.){0,20000}?\\n(?:[^"\\\n]|\\.){0,20000})"')


def _is_fence(line: str) -> bool:
    """A code fence's line (`` ``` ``, `~~~`), blockquoted or not."""
    return line.strip().lstrip("> ").startswith(("```", "~~~"))


def _with_escaped_strings_opened(text: str) -> list[str]:
    """The text's lines, each quoted string with escaped line breaks (`\\n`, `\\t`, `\\"`)
    on them read as the lines it stands for, after the line, as a code block of its own (a
    fence around it: inside a block, the block's lines so far end there and go on after)."""
    out: list[str] = []
    in_fence = False
    for line in text.split("\n"):
        out.append(line)
        if _is_fence(line):
            in_fence = not in_fence
        if "\\n" not in line:
            continue
        for found in _ESCAPED_STRING.finditer(line):
            try:
                decoded = json.loads(f'"{found.group(1)}"')
            except ValueError:
                continue
            # (inside a block: the block closed, the string's own opened and closed, the block
            # opened again)
            around = ["```", "```"] if in_fence else ["```"]
            out.extend([*around, *decoded.split("\n"), *around])
    return out


def quoted_snippets(text: str) -> list[Snippet]:
    """Candidate messages in a text that has no `panicked at` header, in order, deduplicated."""
    out: list[Snippet] = []
    seen: set[tuple[str, Source]] = set()

    def add(raw: str, source: Source, context: str, whole: bool = False) -> None:
        if source == "code":
            raw = raw.strip()  # in a code block a backtick is the message's own character
        else:
            raw = raw.strip().strip("`'\"“”").strip()
            if raw.count("`") % 2 and not whole:
                # A line led by a code span (`MESSAGE` when I pass ...): the span is the message;
                # or the message's own backticks, its value cut short (a title's `from text
                # `mod $;`): read whole as well.
                add(raw[: raw.index("`")], source, context)
                add(raw, source, context, whole=True)
                return
        # (the same words may stand as a span in prose and as a line's tail: each is read)
        if not MIN_SNIPPET_CHARS <= len(raw) <= MAX_SNIPPET_CHARS or (raw, source) in seen:
            return
        if _FORMAT_PLACEHOLDER.search(raw):
            return  # `{id:?}` unfilled: a format string quoted from source, not output
        seen.add((raw, source))
        wrapper, core = split_wrapper(raw)
        out.append(Snippet(core.strip(), raw, wrapper, source, context))
        flat = _FLAT_LOCATION.match(raw)
        if flat:
            add(raw[flat.end() :], source, context)  # `src/x.rs:94:17: MESSAGE`: a header, flat

    in_fence = False
    first = True
    # A code block's lines, while each may be a message's: a message the terminal (or the
    # writer) wrapped over lines is read joined as well.
    block: list[str] | None = None
    raws: list[str] = []  # the block's lines as pasted
    for raw_line in _with_escaped_strings_opened(without_tool_output(clean_text(text))):
        if len(out) >= MAX_SNIPPETS:
            break
        stripped = raw_line.strip()
        if _is_fence(stripped):
            if in_fence and block is not None and len(block) > 1:
                joined = " ".join(block)
                add(joined, "code", joined)
                cut = _cut_by_a_terminal(block, raws)
                if cut != joined:
                    add(cut, "code", cut)
            in_fence = not in_fence
            block = [] if in_fence else None
            raws = []
            continue
        if not stripped:
            continue
        if first:
            first = False
            title = _TITLE.match(stripped)
            if title:
                title_text = stripped[title.end() :]
                add(title_text, "title", title_text)
                for span in _spans(title_text):
                    add(span.group(2), "title", title_text)
                for quote in _QUOTED.finditer(title_text):  # `panics with "MESSAGE"`
                    add(_quoted(quote), "title", title_text)
                lead = _LEAD_IN.match(title_text)
                if lead:
                    add(title_text[lead.end() :], "title", title_text)
                # `[Bug] NameServer Cannot drop a runtime ..`: the message after a few words
                for word in _TITLE_WORD.finditer(title_text[:MAX_TITLE_LEAD]):
                    add(title_text[word.start() :], "tail", title_text)
                continue
        if _looks_like_code(stripped):
            block = None
            continue
        line = _strip_code_line(stripped) if in_fence else _strip_line(stripped)
        if in_fence:
            if not stripped.startswith(('"', 'r#"', "'")):  # a string literal in source
                add(line, "code", line)
                if block is not None:
                    block.append(line)
                    raws.append(raw_line.rstrip("\r"))
                if _PROSE_LINE.match(line):
                    # prose quoted in a block (`it panics with `MESSAGE` when ..`): its spans
                    for span in _spans(line):
                        add(span.group(2), "span", line)
            else:
                block = None
            continue
        add(line, "line", line)
        for span in _spans(stripped):
            add(span.group(2), "span", line)
        for quote in _QUOTED.finditer(stripped):
            add(_quoted(quote), "span", line)
        # a lead-in opening the line or one of its first sentences (`It panics. The error
        # message : MESSAGE`)
        for start in _sentence_starts(line):
            lead = _LEAD_IN.match(line[start:])
            if lead:
                tail = line[start + lead.end() :]
                add(tail, "tail", line)
                # `Reason: 1. MESSAGE`: a numbered item after the lead-in (a reason without its
                # banner)
                add(_MARKERS.sub("", tail, count=1), "tail", line)
                break
    return out


def _cut_by_a_terminal(block: list[str], raws: list[str]) -> str:
    """A block's lines joined as a terminal cut them: a line as long as the block's longest,
    a width of MIN_CUT_WIDTH or more, ending in a word that the next line, not indented, goes
    on with, is joined to it with nothing between (`was already a` + `dded`); the block's other
    reading keeps a space at every break."""
    width = max(map(len, raws), default=0)
    cut = [
        width >= MIN_CUT_WIDTH
        and len(before) == width
        and before[-1:].isalnum()
        and after[:1].isalnum()
        for before, after in zip(raws, [*raws[1:], ""], strict=True)
    ]
    return rejoined(block, cut)


_SENTENCE_START = re.compile(r"(?<=[a-z)][.!?]) +(?=[A-Z])")
MAX_LEAD_SENTENCES = 3  # sentences of a line a lead-in may open


def _sentence_starts(line: str) -> list[int]:
    """Where the line and its first sentences after it start (a capital after `. `)."""
    found = [0]
    for sentence in _SENTENCE_START.finditer(line, 0, MAX_SNIPPET_CHARS):
        found.append(sentence.end())
        if len(found) > MAX_LEAD_SENTENCES:
            break
    return found


# Words that show a message is being discussed, not reported.
_DISCUSSION = re.compile(
    r"\b(?:removes?|removing|stub|implement(?:s|ing|ed|ation)?|refactor\w*|renam\w+|"
    r"docs?|documentation|book|page|outdated|nit|pr|pull request|replace[sd]?|"
    r"could this be|should this be|wording|typo in)\b",
    re.IGNORECASE,
)
# In a pull request: a sentence that says the message was hit, and one about changing it.
_PANICKED_WORDS = re.compile(r"\bpanic(?:s|ked|king)?\b", re.IGNORECASE)
_CHANGE_WORDS = re.compile(
    r"→|->|=>|\bnow\b|\bwording\b|\brenam\w*|\breplac\w*|\binstead of\b|\bremoves?\b|\bstub\b",
    re.IGNORECASE,
)
_ARROW = re.compile(r"->|→|=>")
# Words that show the writer hit it.
_REPORT = re.compile(
    r"\b(?:panic\w*|crash\w*|error|errors|get|gets|getting|got|gives?|giving|fails?|failing|"
    r"failed|stops?|throws?|hit|hitting|see|seeing|seen|saw|occurs?|happens?|received|when i|"
    r"produces?|returns?)\b",
    re.IGNORECASE,
)


def reads_like_report(snippet: Snippet, *, strict: bool = False) -> bool:
    """False when the sentence around a mention talks about the message rather than hitting it.

    `strict`, for pull requests and changelogs: only a message shown alone in a code block, or
    a sentence that says it panicked (and is not about changing the message), counts.
    """
    if strict:
        if snippet.source == "code":
            return True
        context = snippet.context.replace(snippet.raw, " ")
        return bool(_PANICKED_WORDS.search(context)) and not _CHANGE_WORDS.search(context)
    if snippet.source in ("title", "code"):
        return True
    context = snippet.context.replace(snippet.raw, " ")
    if _DISCUSSION.search(context) and not _REPORT.search(context):
        return False
    if _in_a_sentence(snippet, context):
        # Code spans in a sentence name many things; only a sentence about hitting it counts:
        # report words, a std wrapper in the span itself (`not implemented: ...` is output), or
        # chat shorthand for "this gives" (`save_image on RGBA -> `...``).
        return (
            bool(_REPORT.search(context))
            or snippet.wrapper in PANIC_WRAPPERS
            or (bool(_ARROW.search(context)) and not _DISCUSSION.search(context))
        )
    return True


def _in_a_sentence(snippet: Snippet, context: str) -> bool:
    return snippet.source == "span" and len(context.strip(" `'\"“”:.,-")) > 12


def bare_span(snippet: Snippet) -> bool:
    """A code span in a sentence that neither says it was hit nor discusses it (a chat line:
    `upgraded the client only :) `MESSAGE``): a report only when the span is a message whole."""
    context = snippet.context.replace(snippet.raw, " ")
    return _in_a_sentence(snippet, context) and not _DISCUSSION.search(context)


# A pull request, a changelog or a release note: conventional-commit titles, PR templates.
_CHANGE_TITLE = re.compile(
    r"^\s{0,3}(?:title\s*:\s*)?(?:feat|fix|chore|refactor|docs|perf|test|ci|build|style)"
    r"(?:\([^)\n]{0,40}\))?!?:",
    re.IGNORECASE,
)
_CHANGE_SECTIONS = re.compile(
    r"^\s{0,3}(?:#{1,4}\s*)?(?:changes|changelog|release notes|test plan|testing|"
    r"checklist|related issues?|pull request)\b",
    re.IGNORECASE | re.MULTILINE,
)
# Every alternative of _CHANGE_SECTIONS holds one of these.
_CHANGE_SECTION_WORDS = (
    "change",
    "release notes",
    "test plan",
    "testing",
    "checklist",
    "related issue",
    "pull request",
)


def looks_like_change_description(text: str) -> bool:
    """True for pull requests and changelogs: they name messages without having hit them."""
    head = text[:20_000]
    first_line = head.lstrip().split("\n", 1)[0]
    if _CHANGE_TITLE.match(first_line):
        return True
    if "- [x]" in head or "- [ ]" in head:
        return True
    if head.isascii():
        # `^` tried at every character costs more than the rest of the text's extraction; in
        # ASCII text the pattern's case-blind words are found lowered, or it cannot match.
        lowered = head.lower()
        if not any(word in lowered for word in _CHANGE_SECTION_WORDS):
            return False
    return len(_CHANGE_SECTIONS.findall(head)) >= 2


# A fix named by a changelog item (`Fix fusion panic ("MESSAGE")`, `... (#12)`), not a report
# that mentions fixing (`when the window closes it panics`), and a release's heading.
_FIX_WORDS = re.compile(
    r"^\W{0,4}(?:fix(?:es|ed)?|resolves?|closes?)\b|\(#\d+\)\W{0,3}$", re.IGNORECASE
)
_RELEASE_HEADING = re.compile(r"^\s{0,3}#{1,4}\s*(?:v|version\s*)?\d+\.\d+", re.MULTILINE)


def names_a_change(context: str, text: str) -> bool:
    """Whether a sentence quoting a message describes a fix, or the text is release notes."""
    return bool(_FIX_WORDS.search(context)) or bool(_RELEASE_HEADING.search(text[:20_000]))
