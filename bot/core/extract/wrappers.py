"""std's wrappers around a panic message: `unwrap()` on `Err`/`None`, assertions, `todo!`,
`unimplemented!`, `unreachable!`, and `Error: ` printed for an `Err` returned from `main`."""

from __future__ import annotations

import re

from bot.core.panic import Wrapper

UNWRAP_ERR = "called `Result::unwrap()` on an `Err` value"
UNWRAP_NONE = "called `Option::unwrap()` on a `None` value"
ASSERT = "assertion failed: "
ASSERT_EQ = "assertion `left == right` failed"
ASSERT_NE = "assertion `left != right` failed"
_OLD_ASSERT_EQ = "assertion failed: `(left == right)`"
_OLD_ASSERT_NE = "assertion failed: `(left != right)`"
UNIMPLEMENTED = "not implemented"
TODO = "not yet implemented"
UNREACHABLE = "internal error: entered unreachable code"
MAIN_ERROR = "Error: "
_OLD_RIGHT = re.compile(r"\bright: `")


def _after(message: str, prefix: str) -> str:
    """The text after `prefix` and an optional `: ` (empty when nothing follows)."""
    rest = message[len(prefix) :]
    if rest.startswith(":"):
        rest = rest[1:]
    return rest.strip()


def split_wrapper(message: str) -> tuple[Wrapper | None, str]:
    """(wrapper, core message) for a collapsed panic message."""
    if message.startswith(UNWRAP_ERR):
        return "unwrap-err", _after(message, UNWRAP_ERR)
    if message.startswith(UNWRAP_NONE):
        return "unwrap-none", _after(message, UNWRAP_NONE)
    if message.startswith((_OLD_ASSERT_EQ, _OLD_ASSERT_NE)):
        wrapper: Wrapper = "assert-eq" if message.startswith(_OLD_ASSERT_EQ) else "assert-ne"
        # `assertion failed: `(left == right)` left: `1`, right: `2`: MSG`
        match = _OLD_RIGHT.search(message)
        if match:
            end = message.find("`: ", match.end())
            if end >= 0:
                return wrapper, message[end + 3 :].strip()
        return wrapper, ""
    if message.startswith(ASSERT_EQ):
        return "assert-eq", _assert_core(message, ASSERT_EQ)
    if message.startswith(ASSERT_NE):
        return "assert-ne", _assert_core(message, ASSERT_NE)
    if message.startswith(ASSERT):
        return "assert", message[len(ASSERT) :].strip()
    if message.startswith(TODO) and wrapper_ends(message, TODO):
        return "todo", _after(message, TODO)
    if message.startswith(UNIMPLEMENTED) and wrapper_ends(message, UNIMPLEMENTED):
        return "unimplemented", _after(message, UNIMPLEMENTED)
    if message.startswith(UNREACHABLE) and wrapper_ends(message, UNREACHABLE):
        return "unreachable", _after(message, UNREACHABLE)
    return None, message


def wrapper_ends(message: str, prefix: str) -> bool:
    return len(message) == len(prefix) or message.startswith(": ", len(prefix))


def _assert_core(message: str, prefix: str) -> str:
    """MSG of `assertion `left == right` failed: MSG left: .. right: ..` (collapsed)."""
    rest = message[len(prefix) :]
    if not rest.startswith(":"):
        return ""
    rest = rest[1:]
    # The left:/right: lines follow the message; a message can itself contain ` left: `,
    # so cut at the last one that still has a ` right: ` after it.
    cut = rest.rfind(" left: ")
    while cut >= 0 and rest.find(" right: ", cut) < 0:
        cut = rest.rfind(" left: ", 0, cut)
    if cut >= 0:
        rest = rest[:cut]
    elif rest.lstrip().startswith("left: "):
        rest = ""
    return rest.strip()
