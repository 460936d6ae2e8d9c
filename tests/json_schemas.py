"""The JSON a command prints, checked against its schema in schemas/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema

SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"


def schema(name: str) -> dict[str, Any]:
    return json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))


def one_object(out: str, name: str) -> dict[str, Any]:
    """The one JSON object `out` holds (one line), valid against schemas/<name>.schema.json."""
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1, out
    document = json.loads(lines[0])
    jsonschema.validate(document, schema(name))
    return document
