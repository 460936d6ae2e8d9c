"""An `impl` header as the scan records it (a record's `check.impl`), read into its parts."""

from __future__ import annotations

import re

_GENERICS = re.compile(r"<.*>$")


def impl_parts(header: str) -> tuple[str, str | None]:
    """(`Candle`, `FloatTensorOps<Self>`) from `impl FloatTensorOps<Self> for Candle<F, I>`:
    the type without its parameters, the trait with them (`From<i32>` is not `From<i64>`)."""
    body = header[len("impl") :].lstrip() if header.startswith("impl") else header
    if body.startswith("<"):  # the impl's own parameters: `impl<B: Backend<X>> ...`
        depth = 0
        for at, char in enumerate(body):
            depth += {"<": 1, ">": -1}.get(char, 0)
            if depth == 0:
                body = body[at + 1 :].lstrip()
                break
    trait, _, kind = body.partition(" for ")
    if not kind:
        trait, kind = "", body
    return _GENERICS.sub("", kind.strip()), (trait.strip() or None)
