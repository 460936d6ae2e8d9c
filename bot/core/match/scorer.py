"""The scorer's weights, read from `scorer.json` beside this module: what each piece of
evidence adds to a candidate's confidence, the caps and factors, and the one threshold from
which the bot answers. `match --json` names the file's `version`, so an answer can be traced to
the weights that gave it; changing a weight is changing that file (and its version), not code.
"""

from __future__ import annotations

import json
from pathlib import Path

from bot.catalog.model import value_class

WEIGHTS_FILE = Path(__file__).with_name("scorer.json")


@value_class(frozen=True)
class Weights:
    version: str
    threshold: float
    message_base: float
    message_specificity: float
    min_specificity: float
    cap_saying_nothing: float
    cap_refused: float
    add_location: float
    add_line: float
    line_near_lines: int
    add_function: float
    add_frame_line: float
    add_crate_on_stack: float
    add_header: float
    add_caller_heading: float
    add_wrapper: float
    add_same_file_name: float
    factor_possible_mismatch: float
    factor_other_file_of_project: float
    factor_other_project: float
    tie_margin: float
    tie_penalty: float
    # the release history's hits: the pasted release had the site at the pasted line, in the
    # pasted file at another line, or only in the pasted crate
    release_line: float
    release_file: float
    release_crate: float
    cap_against_history: float  # a released crate that never printed the message
    penalty_line_contradicted: float  # the pasted release had the site at another line
    cascade_full: float  # a later panic answered after an uncatalogued first one needs this


def load_weights(path: Path = WEIGHTS_FILE) -> Weights:
    """The weights in `path`: every field of `Weights`, nothing else (the `about` text aside)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    data.pop("about", None)
    return Weights(**data)


WEIGHTS = load_weights()
