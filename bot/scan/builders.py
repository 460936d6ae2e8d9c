r"""Builder functions a catalog author declares for `catalog scan --config FILE`.

Some projects do not write their messages at the panic: a helper builds the text and one
generic site raises it (burn's `TensorError::new("reason").details(..)`, raised by
`panic!("{}", check.format())` inside its `check!` macro). The scanner cannot know which
functions those are, so the author names them in a TOML file:

    [[builder]]
    function = "TensorError::new"   # the call whose argument is a message (path suffix)
    argument = 0                    # which argument (0 = the first)
    append = ["details"]            # chained methods whose argument follows, after a space
    raised_at = "crates/x/src/check.rs:1485"   # the site that panics with the text
    reported_at = "caller"          # Rust prints another place than the builder call
    prefix = '=== Error ===\\s*'    # regex: what the raising site prints before the message
    suffix = '\\s+\\d+\\..*'        # regex: what may follow it (further reasons)

Each builder call with a literal message becomes a site of its own, at the call's line. The
prefix may name what was checked with a group `(?P<operation>...)` (`Operation: '(?P<operation>
[^']*)'`): an answer then says which call the check refused, and the reasons the paste lists
after the prefix (`1. ... 2. ...`) are read apart. The record keeps the prefix in its `check`.

A project's own assertion macros that pass their arguments on to a std one are declared too
(the message comes through a repetition, `$($t)*`, which the scanner does not follow):

    [[macro]]
    name = "ndassert"   # ndarray's `ndassert!(cond, "msg {}", x)`
    like = "assert"     # read its arguments as this std macro's

A project whose panic hook prints its own line instead of std's `thread '..' panicked at`
declares that line's format, a regex with named groups `message` (required), `path`, `line`
and `col`; `catalog scan --out DIR` writes the hooks to `DIR/hooks.toml`, which the bot reads
with the catalog:

    [[hook]]
    pattern = '''^CRASH (?P<path>\S+\.rs):(?P<line>\d+): (?P<message>.+)$'''
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from bot.catalog.model import MACRO_BODY_TAG, RAISED_AT_TAG_PREFIX
from bot.catalog.patterns import PatternError, check_pattern, format_to_regex
from bot.core.extract.hooks import HookFormat, HookFormatError
from bot.scan.rust.messages import MESSAGE_ARGUMENT

REPORTED_AT = ("caller", "site")
PREFIX_GROUPS = frozenset({"operation"})  # the named groups a builder's prefix may hold
_NAMED_GROUP = re.compile(r"\(\?P<[A-Za-z_]\w*>")
_KEYS = {"function", "argument", "append", "raised_at", "reported_at", "prefix", "suffix"}


class BuilderConfigError(ValueError):
    """A scan setting that cannot be used; the message names the file, builder and key."""


@dataclass(frozen=True, slots=True)
class Builder:
    function: str
    argument: int = 0
    append: tuple[str, ...] = ()
    raised_at: str = ""
    reported_at: str = "caller"
    prefix: str = ""
    suffix: str = ""

    def calls(self, function_text: str) -> bool:
        """Whether a call's function (`TensorError::new`, `crate::check::TensorError::new`)
        is this builder."""
        return function_text == self.function or function_text.endswith("::" + self.function)

    def tags(self) -> tuple[str, ...]:
        tags: list[str] = []
        if self.reported_at == "caller":
            tags.append(MACRO_BODY_TAG)
        if self.raised_at:
            tags.append(RAISED_AT_TAG_PREFIX + self.raised_at)
        return tuple(tags)

    def pattern(self, message_format: str) -> str:
        """The record's `messagePattern`: the message, with what the raising site prints
        around it allowed (not required: users often paste the reason alone)."""
        if not self.prefix and not self.suffix:
            return ""
        head = f"(?:{self.prefix})?" if self.prefix else ""
        tail = f"(?:{self.suffix})?" if self.suffix else ""
        pattern = _unnamed(head) + format_to_regex(message_format) + tail
        try:
            check_pattern(pattern)
        except PatternError:
            return ""  # too long for a pattern: the message alone is matched
        return pattern


def _unnamed(pattern: str) -> str:
    """`pattern` with its named groups made plain ones: a record's pattern has no names."""
    return _NAMED_GROUP.sub("(?:", pattern)


def load_builders(path: str | Path) -> list[Builder]:
    """The `[[builder]]` tables of a scan setting file, checked."""
    return load_scan_settings(path)[0]


def load_scan_settings(path: str | Path) -> tuple[list[Builder], dict[str, str]]:
    """The builders and the declared macros (name -> the std macro it acts as) of a scan
    setting file, checked."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise BuilderConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise BuilderConfigError(f"{path}: not valid TOML: {exc}") from None
    unknown_top = set(data) - {"builder", "macro", "hook"}
    if unknown_top:
        raise BuilderConfigError(
            f"{path}: unknown setting(s) {', '.join(sorted(unknown_top))}; "
            "only [[builder]], [[macro]] and [[hook]]"
        )
    load_hooks(path, data)
    macros = _macros(path, data.get("macro", []))
    tables = data.get("builder", [])
    if not isinstance(tables, list):
        raise BuilderConfigError(f"{path}: `builder` must be a list of tables ([[builder]])")
    builders = []
    for number, table in enumerate(tables, start=1):
        where = f"{path}: builder {number}"
        unknown = set(table) - _KEYS
        if unknown:
            raise BuilderConfigError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
        function = table.get("function")
        if not isinstance(function, str) or not function.strip():
            raise BuilderConfigError(f'{where}: `function` (e.g. "TensorError::new") is missing')
        argument = table.get("argument", 0)
        if type(argument) is not int or argument < 0:
            raise BuilderConfigError(f"{where}: `argument` must be a whole number from 0")
        append = table.get("append", [])
        if not isinstance(append, list) or not all(isinstance(a, str) for a in append):
            raise BuilderConfigError(f"{where}: `append` must be a list of method names")
        reported_at = table.get("reported_at", "caller")
        if reported_at not in REPORTED_AT:
            raise BuilderConfigError(f'{where}: `reported_at` must be "caller" or "site"')
        texts = {}
        for key in ("raised_at", "prefix", "suffix"):
            value = table.get(key, "")
            if not isinstance(value, str):
                raise BuilderConfigError(f"{where}: `{key}` must be text")
            texts[key] = value
        for key in ("prefix", "suffix"):
            if texts[key]:
                try:
                    check_pattern(texts[key])
                    groups = set(re.compile(texts[key]).groupindex)
                except (PatternError, re.error) as exc:
                    raise BuilderConfigError(f"{where}: `{key}`: {exc}") from None
                allowed = PREFIX_GROUPS if key == "prefix" else frozenset()
                if groups - allowed:
                    raise BuilderConfigError(
                        f"{where}: `{key}`: unknown group(s) {', '.join(sorted(groups - allowed))}"
                        f"; known: {', '.join(sorted(allowed)) or 'none'}"
                    )
        builders.append(
            Builder(
                function=function.strip().replace(" ", ""),
                argument=argument,
                append=tuple(append),
                reported_at=reported_at,
                **texts,
            )
        )
    return builders, macros


def load_hooks(path: str | Path, data: dict[str, object] | None = None) -> list[str]:
    """The `[[hook]]` patterns of a scan setting (or hooks) file, checked."""
    path = Path(path)
    if data is None:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise BuilderConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
        except tomllib.TOMLDecodeError as exc:
            raise BuilderConfigError(f"{path}: not valid TOML: {exc}") from None
    tables = data.get("hook", [])
    if not isinstance(tables, list):
        raise BuilderConfigError(f"{path}: `hook` must be a list of tables ([[hook]])")
    patterns = []
    for number, table in enumerate(tables, start=1):
        where = f"{path}: hook {number}"
        if not isinstance(table, dict) or set(table) != {"pattern"}:
            raise BuilderConfigError(f"{where}: needs exactly `pattern`")
        pattern = table["pattern"]
        if not isinstance(pattern, str):
            raise BuilderConfigError(f"{where}: `pattern` must be text")
        try:
            HookFormat.of(pattern)
        except HookFormatError as exc:
            raise BuilderConfigError(f"{where}: {exc}") from None
        patterns.append(pattern)
    return patterns


def hooks_toml(patterns: list[str], notes: dict[str, str] | None = None) -> str:
    """`hooks.toml` for a catalog folder: the patterns as TOML strings, each with its note (where
    it came from) as a comment above it."""
    out = [
        "# Panic-hook formats, written by `catalog scan` or `catalog history`: the --config",
        "# file's, and those drafted from the project's own `set_hook` code (check them; edit or",
        "# delete a wrong one).",
    ]
    for pattern in patterns:
        note = (notes or {}).get(pattern)
        out += ["", *([f"# {note}"] if note else []), "[[hook]]"]
        out.append(f"pattern = {json.dumps(pattern, ensure_ascii=False)}")
    return "\n".join(out) + "\n"


def _macros(path: Path, tables: object) -> dict[str, str]:
    if not isinstance(tables, list):
        raise BuilderConfigError(f"{path}: `macro` must be a list of tables ([[macro]])")
    macros: dict[str, str] = {}
    for number, table in enumerate(tables, start=1):
        where = f"{path}: macro {number}"
        if not isinstance(table, dict) or set(table) != {"name", "like"}:
            raise BuilderConfigError(f"{where}: needs exactly `name` and `like`")
        name, like = table["name"], table["like"]
        if not isinstance(name, str) or not name.isidentifier():
            raise BuilderConfigError(f"{where}: `name` must be a macro name (no `!`)")
        if like not in MESSAGE_ARGUMENT:
            known = ", ".join(sorted(MESSAGE_ARGUMENT))
            raise BuilderConfigError(f"{where}: `like` must be one of {known}")
        macros[name] = like
    return macros
