"""`/triage` commands in an issue comment. Pure.

A command is a line of its own: `/triage wrong`, `/triage match ID`, `/triage why`,
`/triage ignore`, `/triage refresh`. Lines inside fenced code blocks (``` or ~~~), indented code
(4 spaces or a tab), `>` quotes and HTML comments are not commands: people quote and paste them.
For an edited comment only the commands that the previous body did not have count, so an edit
that fixes a typo does not run the comment's commands again.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass

NAMES = ("wrong", "match", "why", "ignore", "refresh")
_LINE = re.compile(
    r"^ {0,3}/triage(?:[ \t]+(?P<name>[A-Za-z]+)(?:[ \t]+(?P<arg>\S+))?)?[ \t]*$", re.IGNORECASE
)
_FENCE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_ID = re.compile(r"^[A-Za-z0-9._:-]{1,100}$")


@dataclass(frozen=True, slots=True)
class Command:
    name: str  # one of NAMES
    arg: str | None  # the record id of `match`
    line: int  # 1-based line in the body

    @property
    def text(self) -> str:
        return f"/triage {self.name}" + (f" {self.arg}" if self.arg else "")


def _visible_lines(body: str) -> list[tuple[int, str]]:
    """The lines that are prose: outside fences, indented code, quotes and HTML comments."""
    out: list[tuple[int, str]] = []
    fence: str | None = None
    in_comment = False
    previous_blank = True
    for number, raw in enumerate(body.replace("\r\n", "\n").replace("\r", "\n").split("\n"), 1):
        line = raw.rstrip()
        if fence is not None:
            stripped = line.strip()
            if stripped.startswith(fence) and set(stripped) == {fence[0]}:
                fence = None
            previous_blank = False
            continue
        if in_comment:
            if "-->" in line:
                in_comment = False
                line = line.split("-->", 1)[1]
            else:
                continue
        opened = _FENCE.match(line)
        if opened and not (opened["fence"][0] == "`" and "`" in opened["info"]):
            fence = opened["fence"]
            previous_blank = False
            continue
        while "<!--" in line:
            head, _, tail = line.partition("<!--")
            if "-->" in tail:
                line = head + tail.split("-->", 1)[1]
            else:
                line = head
                in_comment = True
        if not line.strip():
            previous_blank = True
            continue
        indented = line.startswith("\t") or line.startswith("    ")
        if indented and previous_blank:
            continue  # an indented code block (it cannot interrupt a paragraph)
        previous_blank = False
        if line.lstrip().startswith(">"):
            continue
        out.append((number, line))
    return out


def parse(body: str | None) -> list[Command]:
    """The commands in a comment body, in order. Unknown words and `match` without an id are
    not commands."""
    commands: list[Command] = []
    for number, line in _visible_lines(body or ""):
        found = _LINE.match(line)
        if not found or not found["name"]:
            continue
        name = found["name"].lower()
        arg = found["arg"]
        if name not in NAMES:
            continue
        if name == "match":
            if not arg or not _ID.match(arg):
                continue
        elif arg is not None:
            continue  # `/triage why not?` is a sentence, not a command
        commands.append(Command(name, arg if name == "match" else None, number))
    return commands


def new_commands(body: str | None, previous: str | None = None) -> list[Command]:
    """The commands of `body` that `previous` (the body before an edit) did not already have.

    Counted as a multiset: an edit that adds a second `/triage refresh` runs it once more."""
    current = parse(body)
    if previous is None:
        return current
    left = Counter((c.name, c.arg) for c in parse(previous))
    out: list[Command] = []
    for command in current:
        key = (command.name, command.arg)
        if left[key] > 0:
            left[key] -= 1
            continue
        out.append(command)
    return out


def command_entries(
    body: str | None,
    previous: str | None,
    comment_id: object,
    author: object,
    *,
    versioned: bool = True,
) -> list[dict[str, object]]:
    """The new commands as JSON-able job hints, each keyed for "run once" bookkeeping.

    Webhook deliveries key by the comment's version (a command removed and written again in a
    later edit runs again). Polling, which never sees the previous body, passes
    `versioned=False`: then a command keeps its key across edits, and runs once per comment."""
    version = hashlib.sha256((body or "").encode()).hexdigest()[:12] if versioned else "*"
    seen: Counter[tuple[str, str | None]] = Counter()
    out: list[dict[str, object]] = []
    for command in new_commands(body, previous):
        occurrence = seen[(command.name, command.arg)]
        seen[(command.name, command.arg)] += 1
        out.append(
            {
                "name": command.name,
                "arg": command.arg,
                "comment_id": comment_id if isinstance(comment_id, int) else None,
                "author": author if isinstance(author, str) else None,
                "key": f"{comment_id}:{version}:{command.name}:{command.arg or ''}:{occurrence}",
            }
        )
    return out
