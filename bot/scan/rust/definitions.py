"""What a crate defines that its sites refer to: `const`/`static` `&str` texts, panicking
`macro_rules!` and panic helpers (`ScanContext`, gathered from every file before the sites are
looked for).

A panic helper is a free function returning `!` whose body is one `panic!` printing one of its
parameters inside fixed text (cmake's `fn fail(s: &str) -> ! { panic!("\n{}\n\nbuild script
failed, must exit now", s) }`): each call passing it a message the scanner reads is a site of
its own, at the call, its printed location the helper's `panic!` (as a declared builder's)."""

from __future__ import annotations

from dataclasses import dataclass, field

from tree_sitter import Node, Parser, Query, QueryCursor

from bot.catalog.patterns import format_to_regex, parse_format
from bot.scan.builders import Builder
from bot.scan.rust.grammar import COMMENTS, RUST_LANGUAGE, Reparser, macro_name
from bot.scan.rust.macros import MacroRule, macro_rules
from bot.scan.rust.messages import literal_message


@dataclass(slots=True)
class ScanContext:
    """What a file's sites may refer to elsewhere in the crate."""

    constants: dict[str, str] = field(default_factory=dict)  # NAME -> text of a const &str
    macros: dict[str, list[MacroRule]] = field(default_factory=dict)
    builders: tuple[Builder, ...] = ()
    # Declared assertion macros (`ndassert` -> `assert`), read as the std macro they act as.
    like: dict[str, str] = field(default_factory=dict)
    # Names defined twice with different texts, in any file: they cannot be told apart.
    ambiguous: set[str] = field(default_factory=set)
    # Panic helpers found in the crate (name -> its builder), read like declared builders; a
    # name two files define is no one's (None).
    helpers: dict[str, Builder | None] = field(default_factory=dict)

    def all_builders(self) -> tuple[Builder, ...]:
        found = tuple(helper for helper in self.helpers.values() if helper is not None)
        return self.builders + found if found else self.builders


_DEFINITIONS_QUERY = Query(
    RUST_LANGUAGE,
    """
    (const_item name: (identifier) @name type: (reference_type) @type value: (_) @value)
    (static_item name: (identifier) @name type: (reference_type) @type value: (_) @value)
    (macro_definition name: (identifier) @macro) @definition
    (function_item name: (identifier) @helper parameters: (parameters) @parameters
        return_type: (never_type) body: (block) @body)
    """,
)


def collect_definitions(
    source: bytes | str, context: ScanContext | None = None, file_path: str = ""
) -> ScanContext:
    """The `const`/`static` `&str` texts, panicking `macro_rules!` and (given the file's
    `file_path`) panic helpers of one file, added to `context` (a name seen twice with
    different texts is dropped: it cannot be told apart)."""
    if isinstance(source, str):
        source = source.encode("utf-8")
    source = source.replace(b"\r\n", b"\n")
    context = context if context is not None else ScanContext()
    root = Parser(RUST_LANGUAGE).parse(source).root_node
    reparser = Reparser()
    for _index, captures in QueryCursor(_DEFINITIONS_QUERY).matches(root):
        if "helper" in captures:
            if file_path:
                name = _text(captures["helper"][0])
                found = _panic_helper(captures, source, reparser, file_path)
                if found is not None and name not in context.helpers:
                    context.helpers[name] = found
                elif found is not None or name in context.helpers:
                    context.helpers[name] = None  # two helpers of one name: neither
            continue
        if "macro" in captures:
            name = _text(captures["macro"][0])
            rules = macro_rules(captures["definition"][0], reparser)
            if rules:
                context.macros.setdefault(name, []).extend(rules)
            continue
        type_text = (captures["type"][0].text or b"").replace(b" ", b"")
        if type_text not in (b"&str", b"&'staticstr"):
            continue
        value = literal_message(captures["value"][0], source, reparser)
        if value is None:
            continue
        name = _text(captures["name"][0])
        if name in context.ambiguous:
            continue
        known = context.constants.get(name)
        if known is None:
            context.constants[name] = value
        elif known != value:
            del context.constants[name]
            context.ambiguous.add(name)
    return context


def _text(node: Node) -> str:
    return (node.text or b"").decode()


def _panic_helper(
    captures: dict[str, list[Node]], source: bytes, reparser: Reparser, file_path: str
) -> Builder | None:
    """The builder a `fn NAME(.., text: &str, ..) -> ! { panic!("..{}..", text) }` stands for:
    its calls' argument at `text`'s position is the message, printed between the format's
    fixed text before and after it, at the `panic!`'s line."""
    parameters = [
        c for c in captures["parameters"][0].named_children if c.type not in COMMENTS
    ]
    if any(p.type != "parameter" for p in parameters):
        return None  # a method (`self`) or a variadic: not a plain helper
    names = [_text(p.child_by_field_name("pattern") or p) for p in parameters]
    body = [c for c in captures["body"][0].named_children if c.type not in COMMENTS]
    if len(body) != 1:
        return None
    statement = body[0]
    panic = statement.named_child(0) if statement.type == "expression_statement" else statement
    if panic is None or panic.type != "macro_invocation":
        return None
    name_node = panic.child_by_field_name("macro")
    tree = next((c for c in panic.named_children if c.type == "token_tree"), None)
    if name_node is None or tree is None or macro_name(name_node) != "panic":
        return None
    args = reparser.arguments(source, tree.start_byte, tree.end_byte)
    fmt = literal_message(args[0], source, reparser) if args else None
    if fmt is None or args is None:
        return None
    segments = parse_format(fmt)
    holes = [i for i, s in enumerate(segments) if s.is_placeholder]
    if len(holes) != 1:
        return None
    hole = segments[holes[0]].text[1:-1]
    if ":" in hole:
        return None  # a formatted value (`{:?}`, `{s:>8}`): not the text as passed
    passed = hole or (_text(args[1]) if len(args) == 2 and args[1].type == "identifier" else "")
    if passed not in names or (not hole and len(args) != 2) or (hole and len(args) != 1):
        return None
    before = "".join(s.text for s in segments[: holes[0]])
    after = "".join(s.text for s in segments[holes[0] + 1 :])
    if not (before + after).strip():
        return None  # `panic!("{}", s)`: nothing of its own around the message
    line = panic.start_point.row + 1
    return Builder(
        function=_text(captures["helper"][0]),
        argument=names.index(passed),
        raised_at=f"{file_path}:{line}",
        reported_at="caller",
        prefix=format_to_regex(before) + r"\s*" if before.strip() else "",
        suffix=r"\s*" + format_to_regex(after) if after.strip() else "",
    )
