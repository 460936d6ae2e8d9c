"""What a crate defines that its sites refer to: `const`/`static` `&str` texts and panicking
`macro_rules!` (`ScanContext`, gathered from every file before the sites are looked for)."""

from __future__ import annotations

from dataclasses import dataclass, field

from tree_sitter import Node, Parser, Query, QueryCursor

from bot.scan.builders import Builder
from bot.scan.rust.grammar import RUST_LANGUAGE, Reparser
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


_DEFINITIONS_QUERY = Query(
    RUST_LANGUAGE,
    """
    (const_item name: (identifier) @name type: (reference_type) @type value: (_) @value)
    (static_item name: (identifier) @name type: (reference_type) @type value: (_) @value)
    (macro_definition name: (identifier) @macro) @definition
    """,
)


def collect_definitions(source: bytes | str, context: ScanContext | None = None) -> ScanContext:
    """The `const`/`static` `&str` texts and panicking `macro_rules!` of one file, added to
    `context` (a name seen twice with different texts is dropped: it cannot be told apart)."""
    if isinstance(source, str):
        source = source.encode("utf-8")
    source = source.replace(b"\r\n", b"\n")
    context = context if context is not None else ScanContext()
    root = Parser(RUST_LANGUAGE).parse(source).root_node
    reparser = Reparser()
    for _index, captures in QueryCursor(_DEFINITIONS_QUERY).matches(root):
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
