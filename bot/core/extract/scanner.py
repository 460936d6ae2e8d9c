"""Find Rust panics in pasted text: headers, messages, std wrappers, backtraces.

Input is whatever people paste into an issue or a chat: ANSI colours, CRLF, markdown quotes
and code fences, `<details>` blocks, log prefixes, lines wrapped by a terminal. The scanner
reads the text `clean` leaves, works line by line with anchored, bounded regexes and plain
string searches only, and looks at no more than `MAX_LINE` characters of any line, so a huge or
binary paste costs linear time.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from itertools import accumulate

from bot.catalog.model import replace
from bot.core.extract import reports
from bot.core.extract.clean import Cleaned, clean, clean_uncached
from bot.core.extract.frames import (
    OMITTED,
    is_inlined_frame,
    looks_like_backtrace,
    parse_at,
    parse_frame,
)
from bot.core.extract.hard_wrap import MIN_WIDTH, original_offset, rejoined, unwrap
from bot.core.extract.hexdump import dumps
from bot.core.extract.hooks import KNOWN_HOOKS, HookFormat, HookLine, read_hook_line
from bot.core.extract.log_prefixes import (
    CI_TIMESTAMP,
    LOG_START,
    prefix_shape,
    strip_log_prefix,
)
from bot.core.extract.paths import crate_from_function, parse_location, strip_symbol_hash
from bot.core.extract.reading import (
    FENCE_PREFIXES,
    MAX_MESSAGE_CHARS,
    MAX_MESSAGE_LINES,
    MESSAGE_STOPS,
    PANICKED,
    Draft,
    View,
    collapse,
    cut_words,
)
from bot.core.extract.reports import BANNER, EYRE_HEADER, HUMAN_PANIC, MIETTE_HEADER
from bot.core.extract.wrappers import (
    ASSERT,
    ASSERT_EQ,
    ASSERT_NE,
    MAIN_ERROR,
    TODO,
    UNIMPLEMENTED,
    UNREACHABLE,
    UNWRAP_ERR,
    UNWRAP_NONE,
    split_wrapper,
    wrapper_ends,
)
from bot.core.panic import Frame, Location, Panic, Wrapper

MAX_LINE = 4000  # characters of a line the scanner looks at
MAX_FRAMES = 300  # frames kept per panic
_ELISIONS = 2  # `...` lines passed over to find the line after a header
OLD_FORMAT_LOOKAHEAD = 40  # lines searched for the `', PATH:LINE:COL` end of an old header
_WRAPPED_PATH_LINES = 4  # lines a terminal may have cut one path over
TRAILER_LOOKAHEAD = 40  # lines searched past a blank line for std's `note:` after a message

# --- markdown around a line -------------------------------------------------------------------


def _unquote(line: str) -> tuple[str, int, bool]:
    """The line without markdown blockquote markers, the column it starts at, quoted or not.

    `> text`, `>> text`, `> > text` and up to three spaces before the first `>`; one space
    after the last marker belongs to it, further indentation to the text.
    """
    if ">" not in line[:4]:
        return line, 0, False
    position = len(line) - len(line.lstrip(" "))
    if position > 3 or not line.startswith(">", position):
        return line, 0, False
    for _ in range(16):
        position += 1  # the `>`
        after = position + 1 if line.startswith((" ", "\t"), position) else position
        if line.startswith(">", after):
            position = after
            continue
        return line[after:], after, True
    return line[position:], position, True


# --- the scanner ----------------------------------------------------------------------------

_BARE_LOCATION = re.compile(r"[^\s'\"`]{1,1000}\.rs:\d{1,9}:\d{1,9}:")
# A source location alone on a line, its column optional (`re_viewer/src/app.rs:1308`).
_LONE_LOCATION = re.compile(r"[^\s'\"`]{1,1000}\.rs:\d{1,9}(?::\d{1,9})?")
# `:LINE:COL` then `:`, whitespace or the end: where a 1.73+ header's location ends.
_LOC_END = re.compile(r":(\d{1,9}):(\d{1,9})(?::|(?=\s)|$)")
# A JSON string value (`"message":"..."`, `["..."`) of a log line's object: a logger that writes
# JSON escapes a report's line breaks and quotes inside it (a value ends at its first unescaped
# quote, so a line costs linear time).
_JSON_VALUE = re.compile(r'[:\[,][ \t]{0,8}"((?:[^"\\\n]|\\.){1,100000})"')
_JSON_LINE = 200_000  # characters of a log line read for JSON strings
# `PATH.rs:LINE[:COL]` and a space: an old header's location with more text after it
_LOCATION_THEN_TEXT = re.compile(r"(\S{1,1000}\.rs:\d{1,9}(?::\d{1,9})?)\s")
# The first `PATH.rs:LINE[:COL]` from here (the path may hold spaces), then the line's end, a
# space or punctuation: an old header's location, when the line goes on after it.
_FIRST_LOCATION = re.compile(r"(.{1,1000}?\.rs:\d{1,9}(?::\d{1,9})?)(?=[\s,;)]|$)")
# `panicked at burn-ir/src/handle.rs:97:` with the column left out (hand-edited pastes).
_LOC_END_NO_COLUMN = re.compile(r"\.rs:(\d{1,9}):?$")
_WINDOWS_DRIVE = re.compile(r"[A-Za-z]:[\\/]")
_THREAD_ID = re.compile(r" \(\d{1,20}\)$")
_COMMENTED_HEADER = re.compile(r"[ \t>]{0,8}(#|//) (?:thread '[^'\n]{0,200}' )?panicked at ")
_PANICKED_AT = "panicked at "
# A 1.73+ header whose location the reporter cut (`thread 'main' panicked at ...`, the message
# on the next line): a header without a location.
_ELIDED_LOCATIONS = frozenset({"...", "\u2026", "[...]", "<redacted>"})
# A literal each output format's header line holds, and the text its report starts with there
# (looked for up to the literal): what a line holds before it is a logger's prefix.
_REPORT_STARTS = (
    (_PANICKED_AT, "thread '"),  # std: `thread 'main' panicked at`, or `panicked at` alone
    (MIETTE_HEADER, "×"),  # miette: `× Main thread panicked.`
    (EYRE_HEADER, "The "),  # color-eyre, better-panic: `The application panicked (crashed).`
    (BANNER, BANNER),
)
# The headers looked at for a comment marker: a text is searched this far.
_MARKER_HEADERS = 64


def _comment_marker(decoded: str) -> str | None:
    """The marker of the first header pasted as a comment (`# `, `// `), if any: only the lines
    holding `panicked at ` are matched (a search of the whole text from every line start
    cost a 1 MB paste 7 ms)."""
    position = decoded.find(_PANICKED_AT)
    for _ in range(_MARKER_HEADERS):
        if position < 0:
            return None
        end = position + len(_PANICKED_AT)
        start = decoded.rfind("\n", 0, position) + 1
        found = _COMMENTED_HEADER.fullmatch(decoded, start, end)
        if found:
            return found.group(1) + " "
        position = decoded.find(_PANICKED_AT, end)
    return None


def _repeated_prefixes(decoded: str) -> tuple[re.Pattern[str], ...]:
    """The shapes of the prefixes a report's header line shares with the line after it (`[app] `,
    journald's `Dec 05 10:00:00 host app[812]: `): a logger put them before every line. The
    prefix is what the header's line holds before the report starts (`_REPORT_STARTS`)."""
    shapes: dict[str, re.Pattern[str]] = {}
    for needle, opener in _REPORT_STARTS:
        position = decoded.find(needle)
        for _ in range(_MARKER_HEADERS):
            if position < 0:
                break
            start = decoded.rfind("\n", 0, position) + 1
            end = decoded.find("\n", position)
            end = len(decoded) if end < 0 else end
            line = _without_stamp(_unquote(decoded[start:end])[0])
            at = line.find(needle)
            opened = line.rfind(opener, 0, at + len(opener))
            prefix = line[: opened if opened >= 0 else at]
            # (emphasis glued to the text, `**thread ..`, is no logger's prefix)
            if prefix.strip() and prefix.lstrip() not in _EMPHASIS and prefix not in shapes:
                following = _following_line(decoded, end)
                shape = prefix_shape(prefix, _without_stamp(_unquote(following)[0]))
                if shape is not None:
                    shapes[prefix] = shape
            position = decoded.find(needle, end)
    return tuple(shapes.values())


def _following_line(decoded: str, end: int) -> str:
    """The line after the one ending at `end`, past a line a reporter cut the paste with
    (`...`: it was typed, not logged, so it has no prefix)."""
    for _ in range(_ELISIONS + 1):
        following_end = decoded.find("\n", end + 1)
        following = decoded[end + 1 : following_end if following_end >= 0 else None]
        if following_end < 0 or not OMITTED.match(following.strip()):
            break
        end = following_end
    return following


def _without_stamp(text: str) -> str:
    stamp = CI_TIMESTAMP.match(text)
    return text[stamp.end() :] if stamp else text


# docker compose (and similar multiplexers) put `SERVICE  | ` before every line of a service,
# padded to one width: the header's prefix is cut off each line that starts with it.
_SERVICE_HEADER = re.compile(
    r"^([ \t]{0,8}[^\s|>#`][^|\n]{0,80}?[ \t]*\| )(?:thread '[^'\n]{0,200}' |panicked at )", re.M
)
# `MESSAGE Backtrace:    0: ...` printed on one line, or a paste whose line breaks were lost
# (`MESSAGE stack backtrace:`, `MESSAGE note: run with RUST_BACKTRACE..`): std's backtrace and
# notes are no part of the message.
_GLUED_BACKTRACE = re.compile(
    r"\s+(?:(?:[Ss]tack )?[Bb]acktrace:\s+0: |stack backtrace:\s*$"
    r"|note: run with `RUST_BACKTRACE|note: Some details are omitted)"
)
_STD_NOTES = ("note: run with `RUST_BACKTRACE", "note: Some details are omitted")
# A line that is a single code span: one to three backticks, text without any, the same again.
_WHOLE_LINE_SPAN = re.compile(r"^\s*(`{1,3})(?!\s*$)([^`]+)\1\s*$")
_EMPHASIS = ("*", "**", "_", "__")
# A line set in bold or italics whole (`**thread 'main' panicked at ..**`, `_.._`): its text.
# (A run of more markers, `*** Shape Check Failed ***`, is a banner's text, kept.)
_WHOLE_LINE_EMPHASIS = re.compile(r"^\s*(\*\*|__|\*|_)(?![\s*_])((?:(?!\1).){0,2000}[^\s*_])\1\s*$")
_BACKTRACE_HEADERS = ("stack backtrace:", "Stack backtrace:", "Backtrace:", "backtrace:")
_FRAMES_LABEL = re.compile(r"[A-Za-z][A-Za-z ]{0,30}:")  # a label line over frame 0
_BACKTRACE_AND_NOTE = (*_BACKTRACE_HEADERS, "note:")


class _Scanner:
    def __init__(
        self, cleaned: Cleaned, hooks: tuple[HookFormat, ...] = KNOWN_HOOKS, nested: bool = False
    ) -> None:
        self.cleaned = cleaned
        self.hooks = hooks
        self.nested = nested  # reading a JSON string of another text's line
        self.lines = cleaned.raw_lines  # for counts and line ends (clamped later)
        self.views: dict[int, View] = {}
        self.drafts: list[Draft] = []
        self.fences: list[int] | None = None  # lines that open or close a code block
        # Output pasted as comments (`# thread 'main' panicked at ..`, each line `# `): the
        # marker a header carries is read off every line that starts with it.
        decoded = cleaned.decoded
        self.comment_marker = _comment_marker(decoded)
        self.service_prefixes: tuple[str, ...] = (
            tuple({m.group(1) for m in _SERVICE_HEADER.finditer(decoded)})
            if "| thread '" in decoded or "| panicked at" in decoded  # (a cheap look first)
            else ()
        )
        self._bare_services = frozenset(p.rstrip() for p in self.service_prefixes)
        self.line_prefixes = _repeated_prefixes(decoded)

    def view(self, index: int) -> View:
        cached = self.views.get(index)
        if cached is not None:
            return cached
        text, column, quoted = _unquote(self.cleaned.line(index, MAX_LINE))
        ci_stamp = CI_TIMESTAMP.match(text)
        if ci_stamp:  # CI logs stamp every line; the stamp is never part of a message
            text, column = text[ci_stamp.end() :], column + ci_stamp.end()
        if self.service_prefixes and text.startswith(self.service_prefixes):
            cut = next(len(p) for p in self.service_prefixes if text.startswith(p))
            text, column = text[cut:], column + cut
        elif self.service_prefixes and text.rstrip() in self._bare_services:
            text, column = "", column + len(text)  # a blank line of a service's log
        for shape in self.line_prefixes:
            found = shape.match(text)
            if found:
                text, column = text[found.end() :], column + found.end()
                break
        marker = self.comment_marker
        if marker is not None and text.lstrip(" ").startswith(marker):
            cut = len(text) - len(text.lstrip(" ")) + len(marker)
            text, column = text[cut:], column + cut
        span = _WHOLE_LINE_SPAN.match(text)
        if span is not None:
            # A line that is one code span (`..`, ```..``` on one line): its text, verbatim;
            # its backticks are no fence, and no line below continues it.
            text, column = span.group(2), column + span.start(2)
        elif text.lstrip()[:1] in ("*", "_"):
            emphasis = _WHOLE_LINE_EMPHASIS.match(text)
            if emphasis is not None:
                # Markdown emphasis around a whole line (a header set in bold in prose, the
                # message below it): the text inside.
                text, column = emphasis.group(2), column + emphasis.start(2)
        result = View(text, text.strip(), column, quoted, span is not None)
        if len(self.views) > 256:
            self.views.clear()
        self.views[index] = result
        return result

    # -- main loop --

    def run(self, triggers: list[int], max_panics: int) -> list[Draft]:
        """Look at the trigger lines in order; messages and backtraces are read from there."""
        index = 0
        keys: set[tuple[object, ...]] = set()
        for trigger in triggers:
            if trigger < index:
                continue  # inside a message or backtrace already read
            index = trigger + 1
            view = self.view(trigger)
            if not self.nested and '{"' in self.lines[trigger][:MAX_LINE]:
                inside = self.json_strings(trigger, max_panics)
                if inside:
                    self.drafts.extend(inside)
                    keys.update(_key(draft) for draft in inside)
                    if len(keys) >= 2 * max_panics:
                        break
                    continue
            if view.stripped.startswith(_BACKTRACE_HEADERS):
                target = self.drafts[-1] if self.drafts else None
                if target is not None and not target.frames:
                    index = self.walk_backtrace(target, index)
                continue
            draft, next_index = self.detect(trigger, view)
            if draft is None:
                continue
            self.drafts.append(draft)
            index = self.walk_backtrace(draft, next_index)
            keys.add(_key(draft))
            if len(keys) >= 2 * max_panics:
                break  # enough distinct panics even if some turn out to repeat the title
        return self.drafts

    def json_strings(self, index: int, max_panics: int) -> list[Draft]:
        """The panics inside the JSON string values of line `index`, a logger's JSON object
        (`{"message":"thread 'main' panicked at ..\\n..\\nstack backtrace:.."}`): each
        string decoded (line breaks and quotes were escaped) and read as a paste of its own,
        its panics placed at the string."""
        line = self.cleaned.line(index, _JSON_LINE)
        if not any(trigger in line for trigger in _JSON_TRIGGERS):
            return []
        declared = tuple(hook for hook in self.hooks if hook.source != "known")
        found: list[Draft] = []
        opening = line.find('{"')
        for value in _JSON_VALUE.finditer(line, opening + 1):
            body = value.group(1)
            if not any(trigger in body for trigger in _JSON_TRIGGERS):
                continue  # (`"level":"ERROR"`: most values hold no report)
            try:
                decoded = json.loads(f'"{body}"')
            except ValueError:
                continue
            cleaned = clean_uncached(decoded)
            inner = _Scanner(cleaned, self.hooks, nested=True)
            for draft in inner.run(_trigger_lines(cleaned.decoded, declared), max_panics):
                draft.start, draft.end = (index, value.start(1)), (index, value.end(1))
                found.append(draft)
        return found

    def walk_backtrace(self, target: Draft, index: int) -> int:
        """Read the backtrace lines after `index` into `target`; the first line after them."""
        count = len(self.lines)
        while index < count and self.backtrace_line(target, index, self.view(index)):
            index += 1
        return index

    def backtrace_line(self, target: Draft, index: int, view: View) -> bool:
        """Consume one line of the backtrace that follows `target`; False at its end."""
        stripped = view.stripped
        if not stripped or stripped.startswith(_BACKTRACE_AND_NOTE):
            return True
        if stripped.startswith(FENCE_PREFIXES) or OMITTED.match(stripped):
            return True
        if not target.frames and _FRAMES_LABEL.fullmatch(stripped) and index + 1 < len(self.lines):
            # A hook's own label over the frames (`trace:`), frame 0 on the next line.
            following = parse_frame(self.view(index + 1).stripped)
            return following is not None and following.index == 0
        frame = parse_frame(stripped)
        if frame is not None:
            if len(target.frames) < MAX_FRAMES:
                function = frame.function
                target.frames.append(
                    Frame(frame.index, function, crate_from_function(function), None)
                )
            target.end = (index, len(self.lines[index]))
            return True
        if target.frames and is_inlined_frame(stripped):
            # Full backtraces list inlined functions under one index, without a number.
            if len(target.frames) < MAX_FRAMES:
                function = strip_symbol_hash(stripped)
                target.frames.append(Frame(None, function, crate_from_function(function), None))
            target.end = (index, len(self.lines[index]))
            return True
        location = parse_at(stripped)
        if location is None and target.frames and stripped.startswith("at "):
            return True  # an `at` line we cannot read (`at <anonymous>`)
        if location is not None:
            if target.frames and target.frames[-1].location is None:
                last = target.frames[-1]
                target.frames[-1] = Frame(last.index, last.function, last.crate, location)
                target.end = (index, len(self.lines[index]))
            return True
        return False

    def detect(self, index: int, view: View) -> tuple[Draft | None, int]:
        stripped = view.stripped
        hooked = read_hook_line(view.text, self.hooks)
        if hooked is not None:
            result = self.hook_header(index, view, hooked)
            if result[0] is not None:
                return result
        if HUMAN_PANIC in stripped:
            result = reports.human_panic(self, index, view)
            if result[0] is not None:
                return result
        if stripped.startswith(BANNER):
            result = reports.banner(self, index, view)
            if result[0] is not None:
                return result
        if stripped.startswith(reports.MESSAGE_FIELD) or reports.LOCATION_FIELD.match(stripped):
            result = reports.fields(self, index, view)
            if result[0] is not None:
                return result
        if MIETTE_HEADER in stripped:
            result = reports.miette(self, index, view)
            if result[0] is not None:
                return result
        if PANICKED in stripped:
            result = self.header(index, view)
            if result[0] is not None:
                return result
        if EYRE_HEADER in stripped:
            result = reports.eyre(self, index, view)
            if result[0] is None:
                result = reports.better_panic(self, index, view)
            if result[0] is not None:
                return result
        if stripped.endswith(":") and _BARE_LOCATION.fullmatch(stripped):
            result = self.bare_location(index, view)
            if result[0] is not None:
                return result
        if stripped.startswith("'"):
            result = self.old_fragment(index, view)
            if result[0] is not None:
                return result
        return self.headerless(index, view)

    def old_fragment(self, index: int, view: View) -> tuple[Draft | None, int]:
        """`'MESSAGE', PATH:LINE:COL` alone on a line: an old (before 1.73) header quoted
        without its `thread '..' panicked at`."""
        stripped = view.stripped
        if stripped.startswith(("', ", "': ")):
            return self.old_fragment_end(index, view), index + 1
        found = _old_terminator(stripped[1:])
        if found is None:
            return None, index + 1
        cut, location = found
        message = stripped[1 : 1 + cut]
        if not message.strip() or not _is_source_path(location):
            return None, index + 1
        offset = view.column + (len(view.text) - len(view.text.lstrip()))
        end = (index, len(self.lines[index]))
        draft = Draft(collapse(message), None, location, False, False, (index, offset), end)
        return draft, index + 1

    def hook_header(self, index: int, view: View, hooked: HookLine) -> tuple[Draft | None, int]:
        """A panic hook's own header line (bot.core.extract.hooks): the message on it, or on
        the lines below when it has none."""
        location = parse_location(hooked.location) if hooked.location else None
        message, last = hooked.message, index
        if hooked.silent:
            # A hook that never prints the message: a header whose message was left out (the
            # matcher looks for it quoted in the prose).
            start = (index, view.column + hooked.start)
            draft = Draft("", None, location, True, False, start, (index, len(self.lines[index])))
            return draft, index + 1
        if not message:
            more, last = self.message_below(view, index, False)
            if not more:
                return None, index + 1
            message = " ".join(more)
        start = (index, view.column + hooked.start)
        end = (last, len(self.lines[last]))
        draft = Draft(
            collapse(message)[:MAX_MESSAGE_CHARS], None, location, True, False, start, end
        )
        return draft, last + 1

    def bare_location(self, index: int, view: View) -> tuple[Draft | None, int]:
        """`PATH:LINE:COL:` alone on a line, the message below: a 1.73+ header whose
        `thread '..' panicked at` was left out of the paste."""
        location = parse_location(view.stripped)
        if location is None:
            return None, index + 1
        more, end_index = self.continuation(index + 1, view.quoted, False)
        if not more:
            return None, index + 1
        message = collapse(" ".join(more))[:MAX_MESSAGE_CHARS]
        start = (index, view.column + len(view.text) - len(view.text.lstrip()))
        end = (end_index, len(self.lines[end_index]))
        return Draft(message, None, location, False, False, start, end), end_index + 1

    def old_fragment_end(self, index: int, view: View) -> Draft | None:
        """`', PATH:LINE:COL` alone on a line, ending an old-format message that started with
        `'` on an earlier line (a multi-line `check!` report pasted without its header)."""
        location = parse_location(view.stripped[3:])
        if location is None or not _is_source_path(location):
            return None
        floor = self.drafts[-1].end[0] if self.drafts else -1
        probe = index - 1
        while probe > floor and index - probe <= OLD_FORMAT_LOOKAHEAD:
            stripped = self.view(probe).stripped
            if stripped.startswith(FENCE_PREFIXES) or PANICKED in stripped:
                return None
            if stripped.startswith("'") and not stripped.startswith("', "):
                rest = [self.view(i).text.strip() for i in range(probe + 1, index)]
                lines = [stripped[1:], *rest]
                message = collapse(" ".join(lines))[:MAX_MESSAGE_CHARS]
                if not message:
                    return None
                text = self.view(probe).text
                start = (probe, self.view(probe).column + len(text) - len(text.lstrip()))
                end = (index, len(self.lines[index]))
                return Draft(message, None, location, False, False, start, end)
            probe -= 1
        return None

    # -- `panicked at` headers --

    def header(self, index: int, view: View) -> tuple[Draft | None, int]:
        text = view.text
        position = text.find(PANICKED)
        prefix = text[:position]
        rest = text[position + len(PANICKED) :].strip()
        thread, start_column = _thread_of(prefix)
        if start_column is None:
            start_column = position
        start = (index, view.column + start_column)
        if rest.startswith("'"):
            # Threads' old headers interleaved on one line (`panicked at '' panicked at 'msg`):
            # the message is the last one's.
            again = rest.rfind(PANICKED)
            if again > 0 and rest[again + len(PANICKED) :].lstrip().startswith("'"):
                rest = rest[again + len(PANICKED) :].strip()
            return self.old_header(index, view, rest, thread, start)
        location, first_line, last_index = self.new_location(index, rest)
        if location is None and rest.rstrip(":").strip() not in _ELIDED_LOCATIONS:
            return None, index + 1
        message_lines: list[str] = [first_line] if first_line else []
        end = (last_index, len(self.lines[last_index]))
        more, end_index = self.message_below(view, last_index, bool(message_lines))
        gap = bool(more) and not message_lines and not self.view(last_index + 1).stripped
        message_lines.extend(more)
        if more:
            end = (end_index, len(self.lines[end_index]))
        message = collapse(" ".join(message_lines))[:MAX_MESSAGE_CHARS]
        if text[: start[1] - view.column].endswith("`") and message.endswith("`") and not more:
            message = message[:-1].rstrip()  # `thread 'main' panicked at P:1:2: msg` in prose
        draft = Draft(message, thread, location, True, False, start, end, gap=gap)
        return draft, max(last_index, end_index) + 1

    def new_location(self, index: int, rest: str) -> tuple[Location | None, str, int]:
        """The location of a 1.73+ header (maybe broken onto the next line), the message text
        on the same line after it, and the index of the last line used."""
        match = _LOC_END.search(rest)
        if match and match.start() > 0:
            location = parse_location(rest[: match.end()])
            if location is not None:
                return location, rest[match.end() :].strip(), index
        bare = _LOC_END_NO_COLUMN.search(rest.rstrip())
        if bare and " " not in rest.strip():
            location = parse_location(rest.strip())
            if location is not None:
                return location, "", index
        if index + 1 >= len(self.lines) or " " in rest:
            return None, "", index
        # A header split by a terminal: the path (or its end) below, over several lines when
        # the terminal cut a long path more than once (each cut line one word).
        joined, last = rest, index
        for probe in range(index + 1, min(len(self.lines), index + 1 + _WRAPPED_PATH_LINES)):
            following = self.view(probe).stripped
            joined, last = joined + following, probe
            match = _LOC_END.search(joined)
            if match is not None or not rest or not following or " " in following:
                break
        if match is None or match.start() <= len(rest):
            return None, "", index
        path = joined[: match.start()]
        if " " in path[len(rest) :] and not (not rest and _WINDOWS_DRIVE.match(path)):
            return None, "", index
        if not rest and not (path.endswith(".rs") or "/" in path or "\\" in path):
            return None, "", index
        location = parse_location(joined[: match.end()])
        if location is None:
            return None, "", index
        return location, joined[match.end() :].strip(), last

    def old_header(
        self, index: int, view: View, rest: str, thread: str | None, start: tuple[int, int]
    ) -> tuple[Draft | None, int]:
        """`panicked at 'MESSAGE', PATH:LINE:COL`, the message maybe over several lines."""
        parts = [rest[1:]]
        last = index
        found = _old_terminator(parts[0])
        if found is None and "', " in parts[0] and index + 1 < len(self.lines):
            # A terminal wrapped the path (`../.car` / `go/registry/../meta.rs:518:9`): the
            # next lines are the rest of it, one word each, the last ending in `:LINE:COL`.
            head = parts[0].rstrip()
            joined, through = self.wrapped_path(head, index + 1)
            if joined is not None and joined[0] < len(head):
                message = collapse(head[: joined[0]])[:MAX_MESSAGE_CHARS]
                end = (through, len(self.lines[through]))
                return Draft(message, thread, joined[1], True, False, start, end), through + 1
        limit = min(len(self.lines), index + 1 + OLD_FORMAT_LOOKAHEAD)
        probe = index + 1
        while found is None and probe < limit:
            line = self.view(probe).text
            stripped = line.strip()
            if stripped.startswith(FENCE_PREFIXES) or PANICKED in line:
                break
            if stripped.startswith(MESSAGE_STOPS) and not line[:1].isspace():
                break
            parts.append(line)
            found = _old_terminator(line)
            if found is None and "', " in line and probe + 1 < limit:
                # The message's last line, its path wrapped by the terminal onto the next.
                head = line.rstrip()
                joined, through = self.wrapped_path(head, probe + 1)
                if joined is not None and joined[0] < len(head):
                    rest_lines = range(probe + 1, through + 1)
                    parts[-1] = head + "".join(self.view(i).stripped for i in rest_lines)
                    found = joined
                    probe = through
            last = probe
            probe += 1
        if found is None:
            below = self.location_below(index, rest[1:], thread, start)
            if below is not None:
                return below, below.end[0] + 1
            # No `', PATH:LINE` anywhere near (the paste was cut before it): the message runs
            # to its closing quote, on the header's line or one of the lines right below it
            # (`assertion failed: `(left == right)`, then `left:`/`right: .. MSG'`); without a
            # closing quote, the first line is the message, or, when the header's quote opens a
            # message that starts below it (`panicked at '`, then the text), the lines below.
            closing = _closing_quote(parts)
            if closing == 0 and not parts[0].strip():
                closing = max((i for i, part in enumerate(parts) if part.strip()), default=0)
            message = " ".join(parts[: closing + 1]).rstrip()
            if message.endswith("',"):
                message = message[:-2]  # `'MESSAGE', ` and the location cut off after it
            elif message.endswith("'"):
                message = message[:-1]
            draft = Draft(
                collapse(message)[:MAX_MESSAGE_CHARS],
                thread,
                None,
                True,
                False,
                start,
                (index + closing, len(self.lines[index + closing])),
            )
            return draft, index + closing + 1
        cut, location = found
        parts[-1] = parts[-1][:cut]
        message = collapse(self.joined(index, parts))[:MAX_MESSAGE_CHARS]
        draft = Draft(message, thread, location, True, False, start, (last, len(self.lines[last])))
        return draft, last + 1

    def joined(self, index: int, parts: list[str]) -> str:
        """An old header's message lines (`parts`, from the header's line `index` on) as one
        text: a line as long as the header's, a terminal's width, was cut there and goes on in
        the next with nothing between (`out of range f` + `or changeset`); the others were
        broken by the writer, a space between."""
        lengths = [len(self.lines[index + i].rstrip("\r")) for i in range(len(parts))]
        width = lengths[0]
        cut = width >= MIN_WIDTH and width in lengths[1:]
        return rejoined(parts, [cut and n == width for n in lengths])

    def wrapped_path(self, head: str, index: int) -> tuple[tuple[int, Location] | None, int]:
        """`head` (a line ending in `', ` and the start of a path) joined with the lines from
        `index` on, one word each (a terminal cut the path at its width, maybe more than once),
        until the old header's terminator reads: (its cut and location, the last line used)."""
        joined = head
        for probe, wrapped in cut_words(self, index, _WRAPPED_PATH_LINES):
            joined += wrapped
            found = _old_terminator(joined)
            if found is not None:
                return found, probe
        return None, index

    def location_below(
        self, index: int, first: str, thread: str | None, start: tuple[int, int]
    ) -> Draft | None:
        """`panicked at 'MESSAGE'` with the location alone on the next line (`PATH:LINE`, as
        some hooks print it): the message closed by its quote on the header's line or a line
        below it, the location's line right after."""
        parts = [first]
        limit = min(len(self.lines), index + 1 + OLD_FORMAT_LOOKAHEAD)
        for probe in range(index + 1, limit):
            stripped = self.view(probe).stripped
            if parts[-1].rstrip().endswith("'") and _LONE_LOCATION.fullmatch(stripped):
                location = parse_location(stripped)
                if location is None or not _is_source_path(location):
                    return None
                message = collapse(" ".join(parts).rstrip()[:-1])[:MAX_MESSAGE_CHARS]
                if not message:
                    return None
                end = (probe, len(self.lines[probe]))
                return Draft(message, thread, location, True, False, start, end)
            if stripped.startswith(FENCE_PREFIXES) or PANICKED in stripped:
                return None
            if stripped:
                parts.append(stripped)
        return None

    def message_below(self, view: View, index: int, have_first: bool) -> tuple[list[str], int]:
        """The message lines below header line `index` (`continuation`); none when the header
        was a code span of its own (nothing below continues a span)."""
        if view.span:
            return [], index
        return self.continuation(index + 1, view.quoted, have_first)

    def continuation(self, index: int, quoted: bool, have_first: bool) -> tuple[list[str], int]:
        """Message lines after a header, up to `note:`, a backtrace, a fence, another panic,
        a blank line not followed by more of the message, or the end."""
        lines: list[str] = []
        last = index - 1
        count = len(self.lines)
        chars = 0
        above = self.view(last).text if last >= 0 else ""
        indent = len(above) - len(above.lstrip())  # the header's (the line above the message)
        while index < count and len(lines) < MAX_MESSAGE_LINES and chars < MAX_MESSAGE_CHARS:
            view = self.view(index)
            if quoted and not view.quoted and view.stripped:
                break  # the quote the header was in has ended
            if not view.stripped:
                following = self.next_nonblank(index + 1, quoted)
                if following is None:
                    break
                if not (lines or have_first):
                    # Nothing of the message yet: a logger or a copy put a blank line between
                    # the header and the message (`PANIC => panicked at P:1:2:`, blank, msg).
                    if self.ends_message(self.view(following), False):
                        break
                    index = following
                    continue
                if not (
                    self.continues_after_blank(self.view(following), indent)
                    or (self.in_code_block(index) and self.trailer_follows(following, quoted))
                ):
                    break
                index = following
                continue
            if self.ends_message(view, bool(lines) or have_first):
                break
            lines.append(view.text.strip())
            chars += len(lines[-1])
            last = index
            index += 1
        return lines, last

    def next_nonblank(self, index: int, quoted: bool) -> int | None:
        limit = min(len(self.lines), index + 3)
        while index < limit:
            view = self.view(index)
            if view.stripped:
                if quoted and not view.quoted:
                    return None
                return index
            index += 1
        return None

    def in_code_block(self, index: int) -> bool:
        """Whether line `index` is inside a fenced code block (an odd number of fences above)."""
        if self.fences is None:
            self.fences = [
                line
                for line in _lines_with(self.cleaned.decoded, FENCE_PREFIXES)
                if self.view(line).stripped.startswith(FENCE_PREFIXES)
            ]
        return bisect_left(self.fences, index) % 2 == 1

    def trailer_follows(self, index: int, quoted: bool) -> bool:
        """Whether std's `note: run with RUST_BACKTRACE` or `stack backtrace:` comes after the
        text from `index` on, before a fence, another panic or the end: Rust prints it right
        after the message, so everything before it (naga's shader errors after `Caused by:`)
        is still the message."""
        limit = min(len(self.lines), index + TRAILER_LOOKAHEAD)
        while index < limit:
            view = self.view(index)
            stripped = view.stripped
            if quoted and stripped and not view.quoted:
                return False
            if stripped.startswith(_STD_NOTES) or stripped.startswith(_BACKTRACE_HEADERS[:2]):
                return True
            if stripped.startswith(FENCE_PREFIXES) or PANICKED in stripped:
                return False
            if stripped.startswith(MESSAGE_STOPS):
                return False
            index += 1
        return False

    def continues_after_blank(self, view: View, indent: int) -> bool:
        """Whether a line after a blank one goes on with the message: `Caused by:`, or a line
        indented deeper than the header's (`indent`; a list item indents a whole paste)."""
        text = view.text
        if view.stripped.startswith("Caused by:"):
            return True
        if len(text) - len(text.lstrip()) <= indent:
            return False
        return not self.ends_message(view, True)

    def ends_message(self, view: View, started: bool) -> bool:
        stripped = view.stripped
        if stripped.startswith(FENCE_PREFIXES) or PANICKED in stripped:
            return True
        if stripped.startswith(MESSAGE_STOPS):
            # An indented `note:` belongs to the message (wgpu's `note: label = ...`), except
            # std's own notes (a build script's output is indented as a whole).
            return not (
                stripped.startswith("note:")
                and view.text[:1].isspace()
                and not stripped.startswith(_STD_NOTES)
            )
        if stripped[:1].isdigit():
            frame = parse_frame(stripped)
            if frame is not None and looks_like_backtrace(frame):
                return True
        if started and stripped.startswith("at ") and parse_at(stripped) is not None:
            return True
        if started and read_hook_line(stripped, self.hooks) is not None:
            return True  # another report (pyo3's `PanicException: ..` after the panic)
        return bool(started and LOG_START.match(stripped))

    # -- messages without a header --

    def headerless(self, index: int, view: View) -> tuple[Draft | None, int]:
        stripped = view.stripped
        text = view.text
        offset = view.column + (len(text) - len(text.lstrip()))
        for marker in (UNWRAP_ERR, UNWRAP_NONE):
            position = stripped.find(marker)
            if position >= 0:
                message = _trim_quoted(stripped, position, marker == UNWRAP_NONE)
                start = (index, offset + position)
                return self.single(index, message, start), index + 1
        if text.startswith(MAIN_ERROR) or (
            stripped.startswith(MAIN_ERROR) and len(text) - len(text.lstrip(" ")) <= 4
        ):
            more, end_index = self.continuation(index + 1, view.quoted, True)
            message = collapse(" ".join([stripped, *more]))[:MAX_MESSAGE_CHARS]
            last = end_index if more else index
            start = (index, offset)
            end = (last, len(self.lines[last]))
            return Draft(message, None, None, False, True, start, end), last + 1
        body = strip_log_prefix(stripped)
        if not body.startswith(("assertion", "not ", "internal error")):
            return None, index + 1
        start = (index, offset + len(stripped) - len(body))
        if body.startswith((ASSERT_EQ, ASSERT_NE)):
            parts = [body]
            last = index
            probe = index + 1
            while probe < len(self.lines) and probe <= index + 2:
                following = self.view(probe).stripped
                if not following.startswith(("left:", "right:")):
                    break
                parts.append(following)
                last = probe
                probe += 1
            draft = self.single(last, collapse(" ".join(parts)), start)
            return draft, last + 1
        if body.startswith(ASSERT) or any(
            body.startswith(marker) and wrapper_ends(body, marker)
            for marker in (UNIMPLEMENTED, TODO, UNREACHABLE)
        ):
            return self.single(index, body, start), index + 1
        return None, index + 1

    def single(self, index: int, message: str, start: tuple[int, int]) -> Draft:
        end = (index, len(self.lines[index]))
        return Draft(collapse(message), None, None, False, False, start, end)


def _is_source_path(location: Location) -> bool:
    path = location.path
    return path.endswith(".rs") and ("/" in path or "\\" in path)


def _thread_of(prefix: str) -> tuple[str | None, int | None]:
    """`... thread 'NAME' (ID) ` before `panicked at` -> (NAME, column of `thread`)."""
    position = prefix.rfind("thread '")
    if position < 0:
        return None, None
    tail = prefix[position + 8 :].rstrip()
    tail = _THREAD_ID.sub("", tail)
    if not tail.endswith("'") or len(tail) > 257:
        return None, None
    return tail[:-1], position


def _old_terminator(line: str) -> tuple[int, Location] | None:
    """Where `', PATH:LINE[:COL]` ends an old-format message on this line, and the location."""
    end = len(line)
    for _ in range(8):
        # `', ` as std prints it; `': ` as the log-panics crate does; `',PATH` when the space
        # went with a path the reporter shortened (`',[PATH]\crate-0.1.3\src\lib.rs:347:26`).
        position = max(line.rfind("', ", 0, end), line.rfind("': ", 0, end))
        glued = line.rfind("',", 0, end)
        if glued > position and line[glued + 2 : glued + 3].strip():
            location = parse_location(line[glued + 2 :])
            if location is not None and location.path.endswith(".rs"):
                return glued, location
        if position < 0:
            return None
        location = parse_location(line[position + 3 :])
        if location is None and (ends := _LOCATION_THEN_TEXT.match(line, position + 3)):
            # the location, then more on the line (a `note:` or prose joined onto it)
            location = parse_location(ends.group(1))
        elif (
            location is not None
            and any(char.isspace() for char in location.path)
            and (first := _FIRST_LOCATION.match(line, position + 3))
        ):
            # a location whose "path" runs on to a later `.rs:LINE`: the first one is the
            # header's (a paste whose line breaks were lost joined its backtrace onto it)
            location = parse_location(first.group(1)) or location
        if location is not None and " " not in location.path.strip():
            return position, location
        if location is not None and (
            "/" in location.path or location.path.endswith(".rs") or location.kind == "std"
        ):
            return position, location
        end = position
    return None


def _closing_quote(parts: list[str]) -> int:
    """Which of an old header's message lines (`parts`: its first, then the lines below it)
    closes the message with its quote: the first line ending in `'` (or `',`, the location
    cut after it) before a blank line, or the first line (0) when none does."""
    for position, line in enumerate(parts):
        text = line.rstrip()
        if not text:
            break
        if text.endswith(("'", "',")):
            return position
    return 0


def _trim_quoted(stripped: str, position: int, fixed: bool) -> str:
    """The wrapper message from `position`, without the quotes or code span around it."""
    if fixed:
        return UNWRAP_NONE
    message = stripped[position:]
    before = stripped[position - 1 : position] if position else ""
    if before in ("`", '"', "'") and message.endswith(before) and len(message) > 1:
        message = message[:-1]
    found = _old_terminator(message)
    if found is not None:
        message = message[: found[0]]
    return message


# Literal strings one of which is on every line where a report can start.
_TRIGGERS = (
    PANICKED,
    "called `",
    MAIN_ERROR,
    "assertion",
    "implemented",
    UNREACHABLE[:14],  # "internal error"
    "acktrace:",
    EYRE_HEADER,
    MIETTE_HEADER,
    ".rs:",  # a location left alone on its line (and hook headers: `Panicked at P.rs:1:2`)
    "Message:",  # a hook's labelled lines (bot.core.extract.reports.fields)
    "Location:",
    BANNER,
    "PanicException: ",  # pyo3's (bot.core.extract.hooks)
    "PanicException(",  # pyo3's as Python's repr prints it (bot.core.extract.hooks)
    HUMAN_PANIC,
    "equest handler panicked: ",  # a language server's (bot.core.extract.hooks)
    "anicked when checking `",  # a checker's hook without a location (bot.core.extract.hooks)
    "PanicInfo { ",  # a hook logging its PanicInfo (bot.core.extract.hooks)
    "panic.payload",  # tracing-panic's event (bot.core.extract.hooks)
)


# What a JSON value holding a report holds (a location alone is a log record's own field).
_JSON_TRIGGERS = tuple(trigger for trigger in _TRIGGERS if trigger != ".rs:")


def _trigger_lines(decoded: str, hooks: tuple[HookFormat, ...] = ()) -> list[int]:
    """Indices of the lines holding a trigger, in order, by plain string search; with declared
    hook formats, the lines one of them matches too."""
    lines = _lines_with(decoded, _TRIGGERS)
    if not hooks:
        return lines
    hooked = [
        index
        for index, line in enumerate(decoded.split("\n"))
        if any(hook.regex.search(line[:MAX_LINE]) for hook in hooks)
    ]
    return sorted(set(lines).union(hooked))


def _lines_with(decoded: str, literals: tuple[str, ...]) -> list[int]:
    """Indices of the lines holding any of `literals`, in order, by plain string search."""
    positions: list[int] = []
    for literal in literals:
        position = decoded.find(literal)
        while position >= 0:
            positions.append(position)
            newline = decoded.find("\n", position)
            if newline < 0:
                break
            position = decoded.find(literal, newline)
    positions.sort()
    lines: list[int] = []
    line = 0
    last = 0
    for position in positions:
        line += decoded.count("\n", last, position)
        last = position
        if not lines or lines[-1] != line:
            lines.append(line)
    return lines


def _key(draft: Draft) -> tuple[object, ...]:
    location = draft.location
    return (
        draft.message,
        location.path if location else None,
        location.line if location else None,
        location.column if location else None,
    )


# --- public API -----------------------------------------------------------------------------

_NEWLINE_SPLIT = re.compile(r"(\r\n|\r|\n)")


class _Spans:
    """Where each line of the original text starts and ends (before any cleaning)."""

    def __init__(self, text: str) -> None:
        if "\r" in text:
            pieces = _NEWLINE_SPLIT.split(text)  # line, separator, line, ...
            self.step = 2
        else:
            pieces = text.split("\n")
            self.step = 1
        self.pieces = pieces
        self.before = list(accumulate(map(len, pieces), initial=0))

    def start(self, index: int) -> int:
        if self.step == 2:
            return self.before[2 * index]
        return self.before[index] + index  # one `\n` per line before

    def end(self, index: int) -> int:
        return self.start(index) + len(self.pieces[self.step * index])


def extract_panics(
    text: str, *, max_panics: int = 20, hooks: tuple[HookFormat, ...] = ()
) -> list[Panic]:
    """The panics in `text`, in order of appearance, repeats removed, at most `max_panics`.

    `hooks`: a catalog's declared panic-hook formats, read before the known ones.

    `start`/`end` are offsets into `text` as given. Where cleaning changed a line (ANSI
    escapes, control characters), they widen to that line's start or end. Lines a terminal
    cut at its width are read joined (bot.core.extract.hard_wrap).
    """
    if not text or max_panics <= 0:
        return []
    joined = unwrap(text)
    if joined is None:
        panics = _extract_panics(text, max_panics, hooks)
    else:
        panics = [
            replace(
                panic,
                start=original_offset(joined, panic.start),
                end=original_offset(joined, panic.end),
            )
            for panic in _extract_panics(joined.text, max_panics, hooks)
        ]
    # A hex dump of a terminal's output: its decoded text's panics, placed at the dump. A
    # header copied above it (a title: `panicked at src/paint.rs:898:17`) read the prose
    # below as its message; the dump's panic at that place replaces it.
    decoded = [
        replace(panic, start=dump.start, end=dump.end)
        for dump in dumps(text)
        for panic in _extract_panics(dump.text, max_panics, hooks)
    ]
    if not decoded:
        return panics
    places = {_place(panic) for panic in decoded if panic.has_header}
    kept = [p for p in panics if not (p.has_header and _place(p) in places)]
    seen = {(p.message, _place(p)) for p in kept}
    for panic in decoded:
        if len(kept) < max_panics and (panic.message, _place(panic)) not in seen:
            seen.add((panic.message, _place(panic)))
            kept.append(panic)
    return sorted(kept, key=lambda panic: panic.start)


def _place(panic: Panic) -> tuple[str, int | None] | None:
    location = panic.location
    return (location.path, location.line) if location is not None else None


def _extract_panics(text: str, max_panics: int, hooks: tuple[HookFormat, ...]) -> list[Panic]:
    cleaned = clean(text)
    scanner = _Scanner(cleaned, (*hooks, *KNOWN_HOOKS))
    drafts = scanner.run(_trigger_lines(cleaned.decoded, hooks), max_panics)
    if not drafts:
        return []
    spans = _Spans(text)
    drafts = _without_title_headers(drafts)
    header_messages = {draft.message for draft in drafts if draft.has_header}
    seen: dict[tuple[object, ...], int] = {}
    result: list[Panic] = []
    for draft in drafts:
        glued = _GLUED_BACKTRACE.search(draft.message)
        if glued is not None and glued.start() > 0:
            draft.message = draft.message[: glued.start()]
        if not draft.has_header and not draft.main_error and draft.message in header_messages:
            continue  # the same message quoted again (an issue title) next to the full panic
        location = draft.location
        key = _key(draft)
        if key in seen:
            first = seen[key]
            if not result[first].frames and draft.frames:
                result[first] = replace(result[first], frames=tuple(draft.frames))
            continue
        if len(result) >= max_panics:
            break
        if draft.main_error:
            wrapper: Wrapper | None = "main-error"
            core = draft.message[len(MAIN_ERROR) :].strip()
        else:
            wrapper, core = split_wrapper(draft.message)
        seen[key] = len(result)
        panic = Panic(
            message=draft.message,
            core_message=core,
            wrapper=wrapper,
            thread=draft.thread,
            location=location,
            has_header=draft.has_header,
            frames=tuple(draft.frames),
            start=_offset(text, cleaned, spans, draft.start, False),
            end=_offset(text, cleaned, spans, draft.end, True),
        )
        payload = _join_error_payload(core)
        if payload and payload not in header_messages and len(result) + 1 < max_panics:
            # A task's panic carried into the `JoinError` its handle returned: the task's own
            # message, raised somewhere else (no location, no header of its own here) and
            # before the unwrap that printed it, so it comes first.
            result.append(replace(Panic.mentioned(payload), start=panic.start, end=panic.end))
            seen[key] = len(result)
        result.append(panic)
    return result


# tokio's `JoinError` as `{:?}` prints it, a task's panic message inside:
# `JoinError::Panic(Id(18), "MESSAGE", ...)` (the message as a Rust string literal).
_JOIN_ERROR_PANIC = re.compile(r'JoinError::Panic\(Id\(\d{1,20}\), "((?:[^"\\]|\\.){1,2000})"')


def _join_error_payload(message: str) -> str | None:
    """The task's panic message a `JoinError::Panic(..)` in `message` carries, unescaped."""
    if "JoinError::Panic(" not in message:
        return None
    found = _JOIN_ERROR_PANIC.search(message)
    if found is None:
        return None
    literal = found.group(1)
    unescaped = re.sub(r"\\(.)", lambda m: {"n": " ", "t": " "}.get(m[1], m[1]), literal)
    return collapse(unescaped) or None


def _without_title_headers(drafts: list[Draft]) -> list[Draft]:
    """An issue title that copies a header (`thread 'main' panicked at P:1:2:`) reads the
    prose below it, after a blank line, as the message; the same header again further down,
    with the panic's own message, is the panic."""

    def place(draft: Draft) -> tuple[object, ...] | None:
        loc = draft.location
        return (loc.path, loc.line, loc.column) if loc is not None and draft.has_header else None

    kept = []
    for position, draft in enumerate(drafts):
        here = place(draft)
        if (
            draft.gap
            and here is not None
            and any(
                place(later) == here and later.message != draft.message
                for later in drafts[position + 1 :]
            )
        ):
            continue
        kept.append(draft)
    return kept


def _offset(
    text: str, cleaned_text: Cleaned, spans: _Spans, point: tuple[int, int], is_end: bool
) -> int:
    index, column = point
    begin = spans.start(index)
    end = spans.end(index)
    cleaned = cleaned_text.line(index)
    # Exact where the cleaned line is a prefix of the original (only padding was dropped).
    if begin + len(cleaned) <= end and text.startswith(cleaned, begin):
        return begin + min(column, len(cleaned))
    return end if is_end else begin
