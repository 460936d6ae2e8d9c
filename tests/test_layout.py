"""The layout of `bot/`, read from its imports (ast, not grep): no import cycles, a pure core,
function-level imports only where start-up time needs them, and one name for one thing.

Every module's imports are read, at module level and inside functions (imports under
`if TYPE_CHECKING:` are for the type checker only and are not edges). A function-level import of
a `bot` module must say why on its line or the line above (start-up time: the CLI imports only the
module of the command being run).
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

BOT = Path(__file__).resolve().parent.parent / "bot"

# What the pure stages (text -> analysis -> rendered reply) may import: the standard library,
# these packages, themselves, and the catalog's record model and pattern helpers.
PURE_PACKAGES = ("bot.core", "bot.render")
PURE_THIRD_PARTY = {"rapidfuzz", "numpy", "re2", "orjson"}
PURE_BOT = ("bot.core", "bot.render", "bot.catalog.model", "bot.catalog.patterns",
            "bot.catalog.families")
# Packages that do I/O against a platform: nothing pure may import them, nor may the catalog.
PLATFORM_LIBRARIES = {"discord", "github", "aiohttp", "psycopg", "psycopg_pool", "requests"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(BOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(BOT.rglob("*.py"))}


def is_type_checking_block(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


class Import:
    def __init__(self, source: str, target: str, line: int, top_level: bool, why: bool):
        self.source, self.target, self.line = source, target, line
        self.top_level, self.why = top_level, why


def resolve(importer: str, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = importer.split(".")
    if MODULES[importer].name != "__init__.py":
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def read_imports() -> list[Import]:
    found: list[Import] = []
    for name, path in MODULES.items():
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        tree = ast.parse(source)
        top = {id(n) for n in tree.body}
        checking = {id(m) for n in tree.body if is_type_checking_block(n) for m in ast.walk(n)}
        for node in ast.walk(tree):
            if id(node) in checking:
                continue
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                module = resolve(name, node)
                # `from bot.x import y` names the module bot.x.y when y is one
                targets = [
                    f"{module}.{a.name}" if f"{module}.{a.name}" in MODULES else module
                    for a in node.names
                ]
            else:
                continue
            # the reason may stand on the import's lines or just above (a `try:` that holds it)
            around = " ".join(lines[max(0, node.lineno - 4): node.end_lineno or node.lineno])
            why = "#" in around
            for target in dict.fromkeys(targets):
                found.append(Import(name, target, node.lineno, id(node) in top, why))
    return found


IMPORTS = read_imports()


def internal_edges() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = defaultdict(set)
    for imp in IMPORTS:
        if imp.target in MODULES and imp.target != imp.source:
            edges[imp.source].add(imp.target)
    return edges


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    nodes = sorted(set(graph) | {t for ts in graph.values() for t in ts})
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def package_of(module: str) -> str:
    return ".".join(module.split(".")[:2])


def test_the_walk_sees_the_pipeline():
    # the walk itself works: the matcher imports the extractor, the server the webhook parser
    edges = internal_edges()
    assert "bot.core.extract.scanner" in edges["bot.core.match.matcher"] or any(
        t.startswith("bot.core.extract") for t in edges["bot.core.match.matcher"]
    )
    assert "bot.github.webhook" in edges["bot.server.http"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_imports_itself_back():
    assert cycles(internal_edges()) == []


def test_no_package_imports_itself_back():
    graph: dict[str, set[str]] = defaultdict(set)
    for source, targets in internal_edges().items():
        for target in targets:
            if package_of(source) != package_of(target) and package_of(target) != "bot":
                graph[package_of(source)].add(package_of(target))
    assert cycles(graph) == []


def test_core_and_render_are_pure():
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    impure = []
    for imp in IMPORTS:
        if not imp.source.startswith(PURE_PACKAGES):
            continue
        root = imp.target.split(".")[0]
        if root == "bot":
            if not imp.target.startswith(PURE_BOT):
                impure.append(f"{imp.source}:{imp.line} imports {imp.target}")
        elif root not in stdlib and root not in PURE_THIRD_PARTY:
            impure.append(f"{imp.source}:{imp.line} imports {imp.target}")
    assert impure == []


def test_the_catalog_needs_no_matcher_and_no_platform():
    wrong = [
        f"{imp.source}:{imp.line} imports {imp.target}"
        for imp in IMPORTS
        if imp.source.startswith("bot.catalog")
        and (
            imp.target.startswith(("bot.core", "bot.app", "bot.cli", "bot.scan", "bot.github",
                                   "bot.discord", "bot.server", "bot.store"))
            or imp.target.split(".")[0] in PLATFORM_LIBRARIES
        )
    ]
    assert wrong == []


def test_function_level_imports_of_bot_modules_say_why():
    silent = [
        f"{imp.source}:{imp.line} imports {imp.target}"
        for imp in IMPORTS
        if not imp.top_level and imp.target.startswith("bot") and not imp.why
    ]
    assert silent == []
    lazy = {(imp.source, imp.line) for imp in IMPORTS if not imp.top_level
            and imp.target.startswith("bot")}
    assert len(lazy) <= 25, sorted(lazy)


# PyGithub, discord.py and aiohttp: only the adapters that talk to those platforms import them
# (and the CLI, which reports PyGithub's errors, and doctor, which tries the credentials); the
# pure modules of bot/github never do.
PLATFORM_OWNERS = {
    "github": ("bot.github.adapter", "bot.github.auth", "bot.github.gate", "bot.github.worker",
               "bot.github.poll", "bot.github.backfill", "bot.cli"),
    "discord": ("bot.discord", "bot.cli.doctor"),
    "aiohttp": ("bot.server", "bot.discord", "bot.cli.doctor"),
}


def test_only_the_platform_adapters_import_their_libraries():
    wrong = [
        f"{imp.source}:{imp.line} imports {imp.target}"
        for imp in IMPORTS
        for library, owners in PLATFORM_OWNERS.items()
        if imp.target.split(".")[0] == library and not imp.source.startswith(owners)
    ]
    assert wrong == []


# Modules of bot/cli are named after their command (bot/cli/match.py is `triage-bot match`) and
# modules of bot/render after their platform (bot/render/github.py): those names may stand for
# the same thing elsewhere. Everywhere else a module's name is its own.
NAMED_AFTER_A_COMMAND_OR_PLATFORM = ("bot.cli.", "bot.render.")


def test_no_module_name_is_used_for_two_things():
    by_name: dict[str, list[str]] = defaultdict(list)
    for module, path in MODULES.items():
        if path.name != "__init__.py" and not module.startswith(NAMED_AFTER_A_COMMAND_OR_PLATFORM):
            by_name[module.split(".")[-1]].append(module)
        elif path.name == "__init__.py" and module.count(".") >= 2:
            by_name[module.split(".")[-1]].append(module)  # a sub-package names one thing too
    for prefix in NAMED_AFTER_A_COMMAND_OR_PLATFORM:
        within: dict[str, list[str]] = defaultdict(list)
        for module in MODULES:
            if module.startswith(prefix):
                within[module.split(".")[-1]].append(module)
        assert {name: found for name, found in within.items() if len(found) > 1} == {}
    assert {name: found for name, found in by_name.items() if len(found) > 1} == {}


# The names of the projects the bundled catalog and the labelled corpora hold (distinctive ones:
# `image` or `cargo` are words any project uses) and the domain words of the first user's.
_PROJECT_WORDS = (
    r"\bburn\b|\bburn-|\bburn_|\bcubecl|(?<!np\.)\bndarray\b|\bwgpu|\btensors?\b|\bcandle\b|"
    r"\btokio|\bbevy|\bhelix|\bnushell|\bzellij|\bdeno\b|\bpolars|\bdioxus|\bactix|\bzed\b"
)


def test_no_project_name_or_project_string_in_the_code() -> None:
    """A project's formats and rules are declarations in its catalog: no string the code uses
    (docstrings and comments aside, which explain with examples) names a project."""
    import re

    words = re.compile(_PROJECT_WORDS, re.I)
    found = []
    for path in MODULES.values():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docstrings
                and words.search(node.value)
            ):
                found.append(f"{path.relative_to(BOT.parent)}:{node.lineno}: {node.value[:60]!r}")
    assert found == []
