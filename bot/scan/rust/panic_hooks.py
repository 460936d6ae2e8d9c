"""A project's own panic hook, read from its code: the line it prints, as a `[[hook]]` pattern.

A hook installed with `std::panic::set_hook` prints its own report instead of std's
`thread '..' panicked at`, so a paste of it has no header the bot knows. When the hook prints
the panic's place and message with a format string (`eprintln!`, `log::error!`, `write!` and
the like, in the closure or in a function of the same file that the closure calls), the line
that holds the place is drafted as a pattern: the format's literal text as written, and
`path`, `line`, `col` and `message` groups where its arguments print `Location::file()`,
`line()`, `column()` and the payload. A value built with `format!` in a `let` first (`let
location = format!("{}:{}", loc.file(), loc.line())`) is followed into. A message printed on a
later line than the place leaves the pattern's `message` empty: the lines below are read, as
under std's header. A hook that never prints both a place and a message, or whose line has
fewer than four letters of its own text (it would match too much), drafts nothing: such a
project declares its format by hand (`--config`, see bot/scan/builders.py).
"""

from __future__ import annotations

import re
from pathlib import Path

from tree_sitter import Node, Parser

from bot.catalog.model import value_class
from bot.core.extract.hooks import HookFormat, HookFormatError
from bot.scan.rust.grammar import COMMENTS, RUST_LANGUAGE, Reparser, macro_name
from bot.scan.rust.literals import string_value
from bot.scan.rust.messages import placeholders, split_arguments
from bot.scan.rust.walk import rust_files

# Macros whose first string argument is a format string printed somewhere.
_PRINTING = frozenset(
    {
        "eprintln",
        "println",
        "eprint",
        "print",
        "format",
        "write",
        "writeln",
        "error",
        "warn",
        "info",
        "debug",
        "trace",
        "fatal",
        "crit",
        "log_eprintln",
    }
)
_DEPTH = 3  # `let` values followed into, nested
_MIN_LETTERS = 4  # letters of the hook's own text on the pattern's line

_PATH = r"(?P<path>[^\s`'\"]{1,500}?\.rs)"
_LINE = r"(?P<line>\d{1,9})"
_COL = r"(?P<col>\d{1,9})"

# What an argument prints: ("text", literal) or one of these roles.
Token = tuple[str, str]
_PATH_T: Token = ("path", "")
_LINE_T: Token = ("line", "")
_COL_T: Token = ("col", "")
_MESSAGE_T: Token = ("message", "")
_ANY_T: Token = ("any", "")


# What a placeholder prints, by the name of the variable printed, then by the code computing it.
_NAMED_ROLES: tuple[tuple[str, list[Token]], ...] = (
    (r"file(?:name)?", [_PATH_T]),
    (r"line", [_LINE_T]),
    (r"col(?:umn)?", [_COL_T]),
    (r"msg|message|payload|reason|cause", [_MESSAGE_T]),
)
_CODE_ROLES: tuple[tuple[str, list[Token]], ...] = (
    (r"\.file\(\)", [_PATH_T]),
    (r"\.line\(\)", [_LINE_T]),
    (r"\.col(?:umn)?\(\)", [_COL_T]),
    # a `Location` printed whole: `file:line:col`
    (r"\.location\(\)(?!.*unwrap_or)", [_PATH_T, ("text", ":"), _LINE_T, ("text", ":"), _COL_T]),
    (r"payload|downcast_ref|\.message\(\)", [_MESSAGE_T]),
)


@value_class(frozen=True)
class DerivedHook:
    pattern: str
    file_path: str
    line: int  # of the macro that prints it


def hooks_in_tree(root: Path, *, include_tests: bool = False) -> list[DerivedHook]:
    """The hook patterns drafted from every Rust file under `root` (a file: that one)."""
    files = [root] if root.is_file() else list(rust_files(root, include_tests=include_tests))
    found: dict[str, DerivedHook] = {}
    for file in files:
        try:
            source = file.read_bytes()
        except OSError:
            continue
        if b"set_hook" not in source and b"panic_handler" not in source:
            continue
        relative = file.name if root.is_file() else file.relative_to(root).as_posix()
        for hook in derived_hooks(source, relative):
            found.setdefault(hook.pattern, hook)
    return list(found.values())


def derived_hooks(source: bytes, file_path: str) -> list[DerivedHook]:
    """The hook patterns the `set_hook` calls of one file's code print (usually none)."""
    if b"set_hook" not in source and b"panic_handler" not in source:
        return []
    root = Parser(RUST_LANGUAGE).parse(source).root_node
    functions = {
        name.text.decode("utf-8", "replace"): node
        for node in _descendants(root)
        if node.type == "function_item"
        and (name := node.child_by_field_name("name")) is not None
        and name.text is not None
    }
    reparser = Reparser()
    found: dict[str, DerivedHook] = {}
    hooks: list[list[Node]] = [
        _hook_bodies(call, functions)
        for call in _descendants(root)
        if call.type == "call_expression"
        and _text(call.child_by_field_name("function")).endswith("set_hook")
    ]
    # A `#[panic_handler]` function (a `no_std` program's): it prints the panic itself.
    hooks += [[body] for body in _panic_handlers(root)]
    for bodies in hooks:
        for body in bodies:
            bindings = _bindings(body)
            for macro in _descendants(body):
                if macro.type != "macro_invocation":
                    continue
                pattern = _pattern_of(macro, source, reparser, bindings)
                if pattern is not None and pattern not in found:
                    found[pattern] = DerivedHook(pattern, file_path, macro.start_point[0] + 1)
    return list(found.values())


def _panic_handlers(root: Node) -> list[Node]:
    """The bodies of the file's `#[panic_handler]` functions."""
    out = []
    for node in _descendants(root):
        if node.type != "function_item" or (body := node.child_by_field_name("body")) is None:
            continue
        before = node.prev_named_sibling
        while before is not None and before.type in ("attribute_item", *COMMENTS):
            if before.type == "attribute_item" and "panic_handler" in _text(before):
                out.append(body)
                break
            before = before.prev_named_sibling
    return out


def _hook_bodies(call: Node, functions: dict[str, Node]) -> list[Node]:
    """The code the hook runs: the closure passed in (or the function named), and the
    functions of the file that code calls with the closure's parameter."""
    arguments = call.child_by_field_name("arguments")
    if arguments is None:
        return []
    bodies: list[Node] = []
    closures = [n for n in _descendants(arguments) if n.type == "closure_expression"]
    params: set[str] = set()
    for closure in closures[:1]:
        body = closure.child_by_field_name("body")
        if body is not None:
            bodies.append(body)
        for param in _descendants(closure.child_by_field_name("parameters")):
            if param.type == "identifier":
                params.add(_text(param))
    if not closures:
        named = [_text(n) for n in _descendants(arguments) if n.type == "identifier"]
        bodies += [b for name in named if (b := _fn_body(functions.get(name))) is not None]
    for body in list(bodies):
        for inner in _descendants(body):
            if inner.type != "call_expression":
                continue
            callee = _text(inner.child_by_field_name("function"))
            args = {_text(a) for a in _descendants(inner.child_by_field_name("arguments"))}
            if callee in functions and (not params or params & args):
                found = _fn_body(functions[callee])
                if found is not None and found not in bodies:
                    bodies.append(found)
    return bodies


def _fn_body(function: Node | None) -> Node | None:
    return function.child_by_field_name("body") if function is not None else None


def _bindings(body: Node) -> dict[str, Node]:
    """`let NAME = VALUE;` in the body: the value of each name (the last one written)."""
    out: dict[str, Node] = {}
    for node in _descendants(body):
        if node.type != "let_declaration":
            continue
        pattern, value = node.child_by_field_name("pattern"), node.child_by_field_name("value")
        if pattern is None or value is None:
            continue
        if pattern.type == "identifier":
            out[_text(pattern)] = value
        elif pattern.type == "tuple_pattern":  # `let (file, line) = ..`: each name, the value
            for name in pattern.named_children:
                if name.type == "identifier":
                    out[_text(name)] = value
    return out


def _pattern_of(
    macro: Node, source: bytes, reparser: Reparser, bindings: dict[str, Node]
) -> str | None:
    name = macro.child_by_field_name("macro")
    if name is None or macro_name(name) not in _PRINTING or macro_name(name) == "format":
        return None
    tokens = _expanded(macro, source, reparser, bindings, _DEPTH)
    return _to_pattern(tokens) if tokens else None


def _expanded(
    macro: Node, source: bytes, reparser: Reparser, bindings: dict[str, Node], depth: int
) -> list[Token] | None:
    """What a printing macro prints, as literal text and roles; None when not a format."""
    tree = next((c for c in macro.named_children if c.type == "token_tree"), None)
    if tree is None:
        return None
    args = reparser.arguments(source, tree.start_byte, tree.end_byte)
    if not args:
        return None
    at = next(
        (i for i, a in enumerate(args) if a.type in ("string_literal", "raw_string_literal")), None
    )
    if at is None:
        return None
    fmt = string_value(args[at])
    if fmt is None:
        return None
    tokens: list[Token] = []
    for segment, name, _spec, value in placeholders(fmt, *split_arguments(args[at + 1 :])):
        if segment.is_placeholder:
            tokens += _role(value, name, source, reparser, bindings, depth)
        else:
            tokens.append(("text", segment.text))
    return tokens


def _role(
    value: Node | None,
    label: str,
    source: bytes,
    reparser: Reparser,
    bindings: dict[str, Node],
    depth: int,
) -> list[Token]:
    """What one placeholder prints: the place's parts, the message, or anything."""
    if value is None and label in bindings:  # `{location}` naming a variable in scope
        value = bindings[label]
        label = ""
    if value is not None and value.type == "identifier":  # a variable: its name, its value
        label = _text(value)
        value = bindings.get(label, value)
    text = _text(value) if value is not None else ""
    if value is not None and depth > 0:
        inner = [n for n in _descendants(value) if n.type == "macro_invocation"]
        formats = [
            n for n in inner if (m := n.child_by_field_name("macro")) and macro_name(m) == "format"
        ]
        if len(formats) == 1:
            expanded = _expanded(formats[0], source, reparser, bindings, depth - 1)
            if expanded:
                return expanded
    for names, role in _NAMED_ROLES:  # a variable's name says most
        if re.fullmatch(names, label):
            return role
    for code, role in _CODE_ROLES:
        if re.search(code, text):
            return role
    return [_ANY_T]


def _to_pattern(tokens: list[Token]) -> str | None:
    """The pattern of the printed line holding the place; None when it says too little."""
    lines: list[list[Token]] = [[]]
    for kind, text in tokens:
        if kind != "text":
            lines[-1].append((kind, text))
            continue
        for number, piece in enumerate(text.split("\n")):
            if number:
                lines.append([])
            if piece:
                lines[-1].append(("text", piece))
    for index, line in enumerate(lines):
        kinds = [kind for kind, _ in line]
        if "path" not in kinds or "line" not in kinds:
            continue
        later = any(kind == "message" for row in lines[index + 1 :] for kind, _ in row)
        if "message" not in kinds and not later:
            return None
        own = "".join(text for kind, text in line if kind == "text")
        if sum(char.isalpha() for char in own) < _MIN_LETTERS:
            return None
        return _line_pattern(line, message_below=later and "message" not in kinds)
    return None


def _line_pattern(line: list[Token], *, message_below: bool) -> str | None:
    while line and line[0][0] == "text" and not line[0][1].strip():
        line = line[1:]
    while line and line[-1][0] == "text" and not line[-1][1].strip():
        line = line[:-1]
    parts: list[str] = []
    used: set[str] = set()
    for position, (kind, text) in enumerate(line):
        last = position == len(line) - 1
        if kind == "text":
            parts.append(
                r"\s+".join(re.escape(word) for word in text.split(" ")) if text.strip() else r"\s*"
            )
        elif kind in used or kind == "any":
            parts.append(r".*?" if not last else r".*")
        elif kind == "path":
            parts.append(_PATH)
        elif kind == "line":
            parts.append(_LINE)
        elif kind == "col":
            parts.append(_COL)
        elif kind == "message":
            parts.append(r"(?P<message>.+)$" if last else r"(?P<message>.+?)")
        used.add(kind)
    if message_below:
        parts.append(r"(?P<message>)$")
    pattern = "".join(parts)
    if line and line[0][0] == "text" and line[0][1][:1].isalnum():
        pattern = r"\b" + pattern
    try:
        HookFormat.of(pattern)
    except HookFormatError:
        return None
    return pattern


def _descendants(node: Node | None) -> list[Node]:
    if node is None:
        return []
    out, stack = [], [node]
    while stack:
        current = stack.pop()
        if current.type in COMMENTS:
            continue
        out.append(current)
        stack.extend(reversed(current.children))
    return out


def _text(node: Node | None) -> str:
    return (
        node.text.decode("utf-8", "replace") if node is not None and node.text is not None else ""
    )
