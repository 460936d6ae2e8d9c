"""From an issue's state and the analysis of its text to a plan of writes. Pure.

The bot keeps at most one comment per issue (found by its hidden marker), creates it for the first
answer, edits it when the answer changes, and replaces it by a one-line note when the panic is
gone. It removes only the labels it added itself; it never closes or locks anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

CommentAction = Literal["create", "update", "none"]


@dataclass(frozen=True, slots=True)
class BotComment:
    id: int
    body: str


@dataclass(frozen=True, slots=True)
class IssueView:
    """What the adapter read from GitHub about one issue."""

    repo: str
    number: int
    title: str
    body: str
    labels: frozenset[str]
    texts: tuple[str, ...]  # title, body and the non-bot comments, in order
    bot_comment: BotComment | None
    locked: bool = False
    pull: bool = False  # a pull request (GitHub lists them with the issues)


@dataclass(frozen=True, slots=True)
class Desired:
    """What the answer should look like, from the analysis and the renderer."""

    verdict: str  # "match" | "uncatalogued-panic" | "no-panic"
    record_ids: tuple[str, ...]
    labels: tuple[str, ...]  # labels this verdict earns
    body: str | None  # the comment to show (match, or uncatalogued when configured)
    no_longer_body: str  # the one-line note for when an earlier answer no longer applies


@dataclass(frozen=True, slots=True)
class Plan:
    comment: CommentAction
    comment_id: int | None
    body: str | None
    add_labels: tuple[str, ...]
    remove_labels: tuple[str, ...]
    labels_owned: tuple[str, ...]  # labels the bot will have added, after the plan
    verdict: str
    record_ids: tuple[str, ...] = field(default=())

    @property
    def writes(self) -> bool:
        return self.comment != "none" or bool(self.add_labels or self.remove_labels)

    def describe(self) -> str:
        parts = [f"comment={self.comment}"]
        if self.comment_id is not None:
            parts.append(f"comment_id={self.comment_id}")
        if self.add_labels:
            parts.append("add_labels=" + ",".join(self.add_labels))
        if self.remove_labels:
            parts.append("remove_labels=" + ",".join(self.remove_labels))
        return " ".join(parts)


def no_writes(verdict: str, labels_owned: Sequence[str] = ()) -> Plan:
    """The plan of an issue the bot leaves as it is (ignored, or a comment that cannot matter)."""
    return Plan("none", None, None, (), (), tuple(labels_owned), verdict)


def _same(a: str, b: str) -> bool:
    return a.strip() == b.strip()


def plan(view: IssueView, desired: Desired, owned_labels: Sequence[str] = ()) -> Plan:
    """The writes that bring the issue from `view` to `desired`."""
    owned = set(owned_labels)
    want = list(dict.fromkeys(desired.labels))
    add = tuple(name for name in want if name not in view.labels)
    remove = tuple(sorted(name for name in owned if name not in want and name in view.labels))
    labels_owned = tuple(sorted((owned | set(add)) & set(want)))

    existing = view.bot_comment
    action: CommentAction = "none"
    body: str | None = None
    if desired.body is not None:
        body = desired.body
        if existing is None:
            action = "create"
        elif not _same(existing.body, body):
            action = "update"
    elif existing is not None and not _same(existing.body, desired.no_longer_body):
        action, body = "update", desired.no_longer_body

    if view.locked and action == "create":
        action, body = "none", None  # a locked issue takes no new comment from the bot
    return Plan(
        comment=action,
        comment_id=existing.id if existing is not None and action == "update" else None,
        body=body if action != "none" else None,
        add_labels=add,
        remove_labels=remove,
        labels_owned=labels_owned,
        verdict=desired.verdict,
        record_ids=desired.record_ids,
    )
