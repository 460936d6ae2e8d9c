"""Records whose printed location is not their own line, as `catalog scan` tags them.

`#[track_caller]` functions (and `Option::expect`/`Result::expect` inside them) make Rust print
the caller's file and line, usually the user's own code; a `panic!` in a `macro_rules!` body or
a `quote!` is printed at the macro's invocation; a builder's reason is raised elsewhere. A
foreign location is what such a record should be pasted with, so it costs nothing; and for a
macro body the pasted line is not evidence (it is the invocation's). The tags are the record
model's (bot.catalog.model), shared with the scanner that writes them.
"""

from __future__ import annotations

from bot.catalog.model import MACRO_BODY_TAG, TRACK_CALLER_TAG, Record


def reports_caller(record: Record) -> bool:
    """Rust prints another place than the record's line for this panic."""
    return TRACK_CALLER_TAG in record.tags or MACRO_BODY_TAG in record.tags


def line_is_evidence(record: Record) -> bool:
    """Whether a pasted line near the record's says it is this record. Not for a macro body:
    the line is the invocation's. The file still counts: a `macro_rules!` is mostly invoked in
    the file that defines it (burn-dispatch's `macros.rs`)."""
    return MACRO_BODY_TAG not in record.tags
