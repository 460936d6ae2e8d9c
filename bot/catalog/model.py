"""The catalog record: one known error, with its field names as the data spells them.

Files keep the source's camelCase names; Python code uses the snake_case attributes below.
The mapping is one table, `FIELDS`, so the two never drift apart.
"""

from __future__ import annotations

import gc
import re
import sys
import threading
from collections.abc import Callable, Iterator, MutableMapping, Sequence
from contextlib import contextmanager
from itertools import repeat
from operator import attrgetter, itemgetter
from typing import Any, TypeVar, cast, dataclass_transform, overload

from bot.catalog.columns import CodedColumn, NumberColumn, Positions, SourceColumn, StringColumn

# --- Value classes built without `dataclasses` (issue 25) -------------------------------------
# `@dataclass` costs about 0.6 ms a class at import (its field checks, `inspect`, one exec per
# method, a second class for slots): with the ~45 classes a cold `match` imports, a fifth of
# its time. `value_class` builds the same methods (`__init__`, `__repr__`, `__eq__`, `__hash__` when
# frozen, frozen `__setattr__`, `__match_args__`, slots, pickling) from one generated source.
# Here because bot.core may import the record model (the layout's purity rule).

_T = TypeVar("_T")
_MISSING: Any = object()
_FACTORY: Any = object()


class FrozenError(AttributeError):
    """Assigning to a field of a frozen `value_class` class."""


class _Field:
    __slots__ = ("compare", "default", "factory", "repr")

    def __init__(self, default: Any, factory: Any, compare: bool, repr: bool) -> None:
        self.default, self.factory, self.compare, self.repr = default, factory, compare, repr


def field(
    *,
    default: Any = _MISSING,
    default_factory: Callable[[], Any] = _MISSING,
    compare: bool = True,
    repr: bool = True,
) -> Any:
    """A `value_class` field's options, as `dataclasses.field`'s of the same names."""
    return _Field(default, default_factory, compare, repr)


@overload
def value_class(cls: type[_T], /) -> type[_T]: ...
@overload
def value_class(
    *, frozen: bool = False, eq: bool = True, repr: bool = True, slots: bool = True
) -> Callable[[type[_T]], type[_T]]: ...
@dataclass_transform(field_specifiers=(field,))
def value_class(
    cls: type[_T] | None = None,
    /,
    *,
    frozen: bool = False,
    eq: bool = True,
    repr: bool = True,
    slots: bool = True,
) -> Any:
    """`@dataclass` for plain value classes: fields from the class's annotations (a
    `field(...)`, a default, or none), methods the class defines itself kept."""

    def wrap(cls: type[_T]) -> type[_T]:
        return _build(cls, frozen, eq, repr, slots)

    return wrap if cls is None else wrap(cls)


def fields_of(obj: Any) -> tuple[str, ...]:
    """The field names of a `value_class` class or instance, in order."""
    return obj.__record_fields__


def replace(obj: _T, /, **changes: Any) -> _T:
    """A copy of a `value_class` instance with some fields changed (`dataclasses.replace`)."""
    for name in obj.__record_fields__:  # type: ignore[attr-defined]
        if name not in changes:
            changes[name] = getattr(obj, name)
    return obj.__class__(**changes)


def _build(cls: Any, frozen: bool, eq: bool, want_repr: bool, slots: bool) -> Any:
    own = cls.__dict__
    names: list[str] = list(getattr(cls, "__record_fields__", ()))  # a record base's first
    options: dict[str, _Field] = dict(getattr(cls, "__record_options__", {}))
    for name, kind in own.get("__annotations__", {}).items():
        if "ClassVar" in str(kind):
            continue
        value = own.get(name, _MISSING)
        option = value if isinstance(value, _Field) else _Field(value, _MISSING, True, True)
        if name not in options:
            names.append(name)
        options[name] = option
    scope: dict[str, Any] = {"_FACTORY": _FACTORY, "_set": object.__setattr__}
    parameters, body = [], []
    for name in names:
        option = options[name]
        if option.factory is not _MISSING:
            scope[f"_f_{name}"] = option.factory
            parameters.append(f"{name}=_FACTORY")
            value = f"_f_{name}() if {name} is _FACTORY else {name}"
        elif option.default is not _MISSING:
            scope[f"_d_{name}"] = option.default
            parameters.append(f"{name}=_d_{name}")
            value = name
        else:
            parameters.append(name)
            value = name
        body.append(
            f"    _set(self, {name!r}, {value})" if frozen else f"    self.{name} = {value}"
        )
    if "__post_init__" in dir(cls):
        body.append("    self.__post_init__()")
    # Only `__init__` is compiled (a compile is most of the cost); the other methods are
    # closures over the class's field names.
    source = f"def __init__(self, {', '.join(parameters)}):\n" + "\n".join(body or ["    pass"])
    exec(source, scope)
    methods: dict[str, Any] = {"__init__": scope["__init__"]}
    if want_repr:
        methods["__repr__"] = _repr_method([n for n in names if options[n].repr])
    compared = [n for n in names if options[n].compare]
    key = _tuple_getter(compared)
    has_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
    if eq:

        def __eq__(self: Any, other: Any) -> Any:
            if other.__class__ is self.__class__:
                return key(self) == key(other)
            return NotImplemented

        methods["__eq__"] = __eq__
        if not has_hash:
            methods["__hash__"] = (lambda self: hash(key(self))) if frozen else None
    if frozen:
        field_names = frozenset(names)

        def __setattr__(self: Any, name: str, value: Any) -> None:
            if type(self) is built or name in field_names:
                raise FrozenError(f"cannot assign to field {name!r}")
            object.__setattr__(self, name, value)

        def __delattr__(self: Any, name: str) -> None:
            if type(self) is built or name in field_names:
                raise FrozenError(f"cannot delete field {name!r}")
            object.__delattr__(self, name)

        methods["__setattr__"], methods["__delattr__"] = __setattr__, __delattr__
    if slots and frozen:  # pickle's default state is set through the frozen __setattr__
        state = _tuple_getter(names)
        ordered = tuple(names)

        def __setstate__(self: Any, values: tuple[Any, ...]) -> None:
            for name, value in zip(ordered, values, strict=True):
                object.__setattr__(self, name, value)

        methods["__getstate__"] = lambda self: state(self)  # a function: attrgetter binds no self
        methods["__setstate__"] = __setstate__
    added = {k: v for k, v in methods.items() if k not in own or (k == "__hash__" and not has_hash)}
    added.update(
        __record_fields__=tuple(names), __record_options__=options, __match_args__=tuple(names)
    )
    if not slots:  # the class itself, its defaults left on it as dataclasses leaves them
        for name in names:
            option = options[name]
            if option.factory is _MISSING and option.default is not _MISSING:
                setattr(cls, name, option.default)
            elif name in own:
                delattr(cls, name)
        for name, value in added.items():
            setattr(cls, name, value)
        built = cls
    else:  # slots need a new class
        namespace = {k: v for k, v in own.items() if k not in ("__dict__", "__weakref__")}
        for name in names:
            namespace.pop(name, None)
        namespace.update(added)
        inherited = {s for base in cls.__mro__[1:] for s in getattr(base, "__slots__", ())}
        namespace["__slots__"] = tuple(n for n in names if n not in inherited)
        built = type(cls)(cls.__name__, cls.__bases__, namespace)
        built.__qualname__ = cls.__qualname__
    return built


def _tuple_getter(names: list[str]) -> Callable[[Any], tuple[Any, ...]]:
    """A function of an instance: the tuple of these attributes (of one or none too)."""
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


def _repr_method(names: list[str]) -> Callable[[Any], str]:
    def __repr__(self: Any) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{self.__class__.__qualname__}({shown})"

    return __repr__


# (name in files, attribute, expected JSON type). Order is the canonical order for writing.
# "str", "int", "list" (of strings), "any" (kept as given).
FIELDS: tuple[tuple[str, str, str], ...] = (
    ("id", "id", "str"),
    ("repo", "repo", "str"),
    ("slug", "slug", "str"),
    ("errorCode", "error_code", "any"),
    ("errorMessage", "error_message", "str"),
    ("messagePattern", "message_pattern", "str"),
    ("errorType", "error_type", "str"),
    ("errorClass", "error_class", "str"),
    ("httpStatus", "http_status", "int"),
    ("severity", "severity", "str"),
    ("filePath", "file_path", "str"),
    ("lineNumber", "line_number", "int"),
    # The enclosing fn's name (`float_mul`): `catalog update` pairs repeated messages of one
    # file by it before their order.
    ("enclosingFn", "enclosing_fn", "str"),
    ("sourceCode", "source_code", "str"),
    ("sourceCodeStart", "source_code_start", "int"),
    ("sourceCodeEnd", "source_code_end", "int"),
    ("githubUrl", "github_url", "str"),
    ("documentation", "documentation", "str"),
    ("triggerScenarios", "trigger_scenarios", "str"),
    ("commonSituations", "common_situations", "str"),
    ("solutions", "solutions", "list"),
    ("exampleFix", "example_fix", "str"),
    ("handlingStrategy", "handling_strategy", "str"),
    ("validationCode", "validation_code", "str"),
    ("typeGuard", "type_guard", "str"),
    ("tryCatchPattern", "try_catch_pattern", "str"),
    ("preventionTips", "prevention_tips", "list"),
    ("tags", "tags", "list"),
    ("backgroundTag", "background_tag", "str"),
    ("relatedErrors", "related_errors", "list"),
    ("analyzedSha", "analyzed_sha", "str"),
    ("analyzedAt", "analyzed_at", "str"),
    ("contentChangedAt", "content_changed_at", "str"),
    ("schemaVersion", "schema_version", "int"),
    # What the code checks at a scanned site (bot.scan.rust.checks): {"kind", "code",
    # "pattern", "impl", "error"}, all optional texts; derived by the scan, never by hand.
    ("check", "check", "any"),
)
REQUIRED = ("id", "repo", "errorMessage")
ATTR_BY_KEY = {key: attr for key, attr, _ in FIELDS}
KEY_BY_ATTR = {attr: key for key, attr, _ in FIELDS}
TYPE_BY_KEY = {key: kind for key, _, kind in FIELDS}
LIST_ATTRS = frozenset(attr for _, attr, kind in FIELDS if kind == "list")

# `catalog update` keeps a site that left the code, tagged with the commit it left at:
# older versions still panic with it.
REMOVED_TAG_PREFIX = "removed-at:"
# Tags `catalog scan` gives a site whose printed location is not its own line; the matcher reads
# them (bot.core.match.caller).
# A draft laid over its record because the maintainer lets drafts answer (bot.catalog.loader).
UNREVIEWED_TAG = "unreviewed-draft"
TRACK_CALLER_TAG = "track-caller"  # in a #[track_caller] function: Rust prints the caller's line
MACRO_BODY_TAG = "macro-body"  # in a macro_rules!/quote! body: Rust prints the invocation's line
# ... and in a `quote!` body: a proc macro's output, compiled into whichever crate uses the macro
PROC_MACRO_OUTPUT_TAG = "proc-macro-output"
RAISED_AT_TAG_PREFIX = "raised-at:"  # a builder's reason: the site that panics with it
CRATE_TAG_PREFIX = "crate:"  # the crate a scanned site is in: `crate:burn-tensor`

# The fields a person writes; a record with none of them is a bare panic site (a skeleton).
WRITE_UP_ATTRS = (
    "documentation",
    "solutions",
    "example_fix",
    "trigger_scenarios",
    "common_situations",
    "prevention_tips",
    "validation_code",
    "type_guard",
    "try_catch_pattern",
)

# A write-up text that is a placeholder (what `catalog draft` writes) rather than an answer.
_DRAFT_TEXT = re.compile(r"\s*(?:TODO|DRAFT)\b", re.IGNORECASE)


def is_draft_text(text: object) -> bool:
    """True for a placeholder text (`TODO: …`, `DRAFT: …`): validate and lint fail on it and
    answers treat it as absent."""
    return type(text) is str and _DRAFT_TEXT.match(text) is not None


def _written(value: object) -> bool:
    """A write-up field with something in it that is not a placeholder."""
    if not value:
        return False
    items = value if isinstance(value, tuple | list) else (value,)
    return not all(map(is_draft_text, items))


@value_class(slots=False)
class Record:
    """One catalog record. Treat as immutable: use `with_changes` for a modified copy.

    Not a slots/frozen dataclass on purpose: catalogs hold up to 100k records, and building
    each through a 36-keyword `__init__` dominated load time. Unset fields fall back to the
    class-level defaults, so `record_from_dict` fills only the instance dict.
    """

    id: str
    repo: str
    error_message: str
    slug: str | None = None
    error_code: Any = None
    message_pattern: str | None = None
    error_type: str | None = None
    error_class: str | None = None
    http_status: int | None = None
    severity: str | None = None
    file_path: str | None = None
    line_number: int | None = None
    enclosing_fn: str | None = None
    source_code: str | None = None
    source_code_start: int | None = None
    source_code_end: int | None = None
    github_url: str | None = None
    documentation: str | None = None
    trigger_scenarios: str | None = None
    common_situations: str | None = None
    solutions: tuple[str, ...] = ()
    example_fix: str | None = None
    handling_strategy: str | None = None
    validation_code: str | None = None
    type_guard: str | None = None
    try_catch_pattern: str | None = None
    prevention_tips: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    background_tag: str | None = None
    related_errors: tuple[str, ...] = ()  # messages (errorMessage as written); an id works too
    analyzed_sha: str | None = None
    analyzed_at: str | None = None
    content_changed_at: str | None = None
    schema_version: int | None = None
    check: Any = None  # read it through `site_check`: a file may hold anything here
    # Fields the file had that this version does not know; kept so a rewrite loses nothing.
    extra: dict[str, Any] = field(default_factory=dict, compare=False)
    # Keys present in the source document (nulls included), so writing back is faithful.
    present: frozenset[str] = field(default_factory=frozenset, compare=False)
    # Where the record was read from, e.g. "catalog/seeds/x.json" or "sites.jsonl:12".
    origin: str = field(default="", compare=False)

    @property
    def has_write_up(self) -> bool:
        fields = self.__dict__  # unset fields are class defaults: empty, so not a write-up
        return any(_written(fields.get(attr)) for attr in WRITE_UP_ATTRS)

    is_draft_text = staticmethod(is_draft_text)

    def draft_fields(self) -> tuple[str, ...]:
        """The write-up attributes whose text (or any item of whose list) is a placeholder."""
        fields = self.__dict__
        found = []
        for attr in WRITE_UP_ATTRS:
            value = fields.get(attr)
            items = value if isinstance(value, tuple) else (value,)
            if any(map(is_draft_text, items)):
                found.append(attr)
        return tuple(found)

    @property
    def removed_at(self) -> str | None:
        """The commit at which this site left the code (`catalog update` tags it), or None."""
        for tag in self.tags:
            if tag.startswith(REMOVED_TAG_PREFIX):
                return tag[len(REMOVED_TAG_PREFIX) :]
        return None

    @property
    def crate(self) -> str | None:
        """The crate folder of `file_path` (`crates/burn-autodiff/src/..` -> `burn-autodiff`)."""
        if not self.file_path:
            return None
        parts = self.file_path.split("/")
        if len(parts) > 2 and parts[0] == "crates":
            return parts[1]
        return None

    @property
    def site_check(self) -> dict[str, str]:
        """`check`'s text values (kind, code, pattern, impl, error); {} when absent or malformed."""
        value = self.check
        if not isinstance(value, dict):
            return {}
        return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}

    def with_changes(self, **changes: Any) -> Record:
        return replace(self, **changes)


# Values that repeat across thousands of records (repo, kind, commit, tags, file): one string
# object each instead of one per record, which a 100k-record catalog notices.
_SHARED_VALUES = frozenset(
    {"repo", "errorType", "severity", "filePath", "analyzedSha", "backgroundTag"}
)


# Per set of keys: how each value becomes an attribute (records of one file share their keys).
_PLANS: dict[tuple[str, ...], tuple[frozenset[str], tuple[tuple[str, str, int], ...]]] = {}
_PLAIN, _SHARED, _TUPLE, _INTERNED_TUPLE, _EXTRA = range(5)


def _plan(keys: tuple[str, ...]) -> tuple[frozenset[str], tuple[tuple[str, str, int], ...]]:
    plan = _PLANS.get(keys)
    if plan is None:
        steps = []
        for key in keys:
            attr = ATTR_BY_KEY.get(key)
            if attr is None:
                steps.append((key, key, _EXTRA))
            elif attr in LIST_ATTRS:
                steps.append((key, attr, _INTERNED_TUPLE if key == "tags" else _TUPLE))
            elif key in _SHARED_VALUES:
                steps.append((key, attr, _SHARED))
            else:
                steps.append((key, attr, _PLAIN))
        plan = (frozenset(keys), tuple(steps))
        if len(_PLANS) < 1024:  # hostile files could invent any number of key sets
            _PLANS[keys] = plan
    return plan


def record_from_dict(data: dict[str, Any], origin: str = "") -> Record:
    """Build a Record from an already validated camelCase dict (see `validate.check_record`)."""
    present, steps = _plan(tuple(data))
    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    intern = sys.intern
    for key, attr, how in steps:
        value = data[key]
        if how == _PLAIN:
            values[attr] = value
        elif how == _SHARED:
            values[attr] = intern(value) if type(value) is str else value
        elif how == _TUPLE:
            values[attr] = tuple(value or ())
        elif how == _INTERNED_TUPLE:
            values[attr] = tuple(intern(v) for v in value or ())
        else:
            extra[key] = value
    record = object.__new__(Record)
    record.__dict__.update(values, extra=extra, present=present, origin=origin)
    return record


@value_class
class DocumentBatch:
    """JSON documents read together from a catalog file, with their lines and texts (None
    for a `.json` file's document)."""

    lines: Sequence[int | None]
    documents: list[Any]
    texts: Sequence[bytes | None]  # a `.jsonl` line's UTF-8 text


class RecordTable(MutableMapping[str, Record]):
    """Records by id, each built from its checked document the first time it is asked for.

    A catalog of a million bare sites is read to be matched against, and a match looks at a
    few dozen records: building every Record up front was a third of the load time, and
    keeping every parsed document twice the memory of its line of text. A record read from a
    `.jsonl` line keeps that line and is parsed again when first asked for; the index reads
    the fields it needs a column at a time (`site_columns`).

    What is kept per record sits in lists, one per field, at the record's position: a list of
    strings is one object to the cyclic garbage collector, where a tuple per record was a
    million (walking them once after loading cost a third of a second). A large catalog's
    cache holds them packed (`pack`, bot.catalog.columns): one buffer per field, read in place
    from the mapped file; an edit unpacks them first.
    """

    __slots__ = (
        "_built",
        "_commits",
        "_files",
        "_ids",
        "_lines",
        "_messages",
        "_paths",
        "_position",
        "_repos",
        "_sources",
        "_written_up",
    )

    def __init__(self) -> None:
        self._position: dict[str, int] = {}  # id -> its place in the lists below
        self._ids: list[str | None] = []  # None where a record was deleted
        self._sources: list[dict[str, Any] | bytes | None] = []  # the checked document, or its
        # line of JSON (None where deleted)
        self._files: list[str] = []
        self._lines: list[int | None] = []
        self._messages: list[str] = []
        self._paths: list[str | None] = []
        self._repos: list[str] = []
        self._built: dict[str, Record] = {}
        # Full commit ids the records name, to complete short ones in links.
        self._commits: set[str] = set()
        self._written_up: set[str] = set()

    def pack(self) -> None:
        """Hold every field as a packed column (deleted records left out), ids with a lookup
        table: what the cache's snapshot maps in place instead of a million objects."""
        if type(self._position) is not dict:
            return  # packed already
        live = [at for at, rid in enumerate(self._ids) if rid is not None]

        def rows(values: list[Any]) -> list[Any]:
            return values if len(live) == len(values) else [values[at] for at in live]

        # Everything built before anything is replaced: a failure leaves the table as it was.
        ids = StringColumn.of(rows(self._ids), lookup=True)
        sources = SourceColumn.of(rows(self._sources))
        files = CodedColumn.of(rows(self._files))
        lines = NumberColumn.of((-1 if n is None else n for n in rows(self._lines)), "q")
        messages = StringColumn.of(rows(self._messages))
        paths = CodedColumn.of(rows(self._paths))
        repos = CodedColumn.of(rows(self._repos))
        self._position = Positions(ids)  # type: ignore[assignment]
        self._ids, self._sources, self._files = ids, sources, files  # type: ignore[assignment]
        self._lines, self._messages = lines, messages  # type: ignore[assignment]
        self._paths, self._repos = paths, repos  # type: ignore[assignment]

    def packed_ids(self) -> Sequence[str] | None:
        """The packed id column (`pack`), or None."""
        return None if type(self._position) is dict else cast("Sequence[str]", self._ids)

    def _thaw(self) -> None:
        """Back to lists and a dict before an edit (tests and tools edit catalogs)."""
        if type(self._position) is dict:
            return
        ids: list[str | None] = list(self._ids)
        self._position = dict(zip(cast("list[str]", ids), range(len(ids)), strict=True))
        self._ids = ids
        self._sources = [self._sources[at] for at in range(len(ids))]
        self._files, self._messages = list(self._files), list(self._messages)
        self._lines = [None if n < 0 else n for n in self._lines]  # type: ignore[operator]
        self._paths, self._repos = list(self._paths), list(self._repos)

    def _put(
        self,
        rid: str,
        source: dict[str, Any] | bytes | None,
        file: str,
        line: int | None,
        message: str,
        path: str | None,
        repo: str,
        write_up: bool,
    ) -> None:
        self._thaw()
        at = self._position.get(rid)
        if at is None:
            self._position[rid] = len(self._ids)
            self._ids.append(rid)
            self._sources.append(source)
            self._files.append(file)
            self._lines.append(line)
            self._messages.append(message)
            self._paths.append(path)
            self._repos.append(repo)
        else:
            self._sources[at], self._files[at], self._lines[at] = source, file, line
            self._messages[at], self._paths[at], self._repos[at] = message, path, repo
        if write_up:
            self._written_up.add(rid)
        else:
            self._written_up.discard(rid)

    def add(
        self, document: dict[str, Any], file: str, line: int | None, source: bytes | None = None
    ) -> None:
        """Add a checked document; `source`, when given, is the JSON line it was parsed from."""
        self._built.pop(document["id"], None)  # a write-up overlay replaces a record built before
        file_path = document.get("filePath")
        self._commits.update(commits_named(document.get("analyzedSha"), document.get("githubUrl")))
        self._put(
            document["id"],
            document if source is None else source,
            file,
            line,
            document["errorMessage"],
            sys.intern(file_path) if type(file_path) is str else None,
            sys.intern(document["repo"]),
            document_has_write_up(document),
        )

    def add_batch(self, batch: DocumentBatch, file: str) -> bool:
        """Add a batch whose documents `validate.batch_is_clean` passed, a field at a time;
        False (nothing added) when an id is repeated, in the batch or in the table."""
        self._thaw()
        documents = batch.documents
        ids = list(map(itemgetter("id"), documents))
        if len(set(ids)) != len(ids) or not self._position.keys().isdisjoint(ids):
            return False  # the record-by-record path says which
        keys = documents[0].keys()

        def column(key: str) -> list[Any]:
            return list(map(itemgetter(key), documents)) if key in keys else [None] * len(ids)

        file_paths = column("filePath")
        if None in file_paths:
            file_paths = [sys.intern(path) if path else None for path in file_paths]
        else:
            file_paths = list(map(sys.intern, file_paths))
        if not _WRITE_UP_KEY_SET.isdisjoint(keys):
            write_ups = map(document_has_write_up, documents)
            self._written_up.update(rid for rid, w in zip(ids, write_ups, strict=True) if w)
        start = len(self._ids)
        self._position.update(zip(ids, range(start, start + len(ids)), strict=True))
        self._ids.extend(ids)
        self._sources.extend(documents if None in batch.texts else batch.texts)
        self._files.extend(repeat(file, len(ids)))
        self._lines.extend(batch.lines)
        self._messages.extend(column("errorMessage"))
        self._paths.extend(file_paths)
        self._repos.extend(map(sys.intern, column("repo")))
        for sha in set(column("analyzedSha")):
            self._commits.update(commits_named(sha, None))
        urls = "\n".join(filter(None, column("githubUrl")))
        for kind, pattern in _URL_SHAS:
            if kind in urls:  # a pattern opening with its literal runs fast through the text
                self._commits.update(map(str.lower, pattern.findall(urls)))
        return True

    def written_up(self) -> list[str]:
        """The ids of records with a write-up (explanation, solutions, ...)."""
        return [rid for rid in self._written_up if rid in self._position]

    def at_files(self, file_paths: set[str]) -> list[str]:
        """The ids of records in one of `file_paths`."""
        return [
            rid
            for rid, path in zip(self._ids, self._paths, strict=True)
            if rid is not None and path in file_paths
        ]

    def origin(self, record_id: str) -> str:
        at = self._position[record_id]
        file, line = self._files[at], self._lines[at]
        return file if line is None or line < 0 else f"{file}:{line}"  # packed: -1 for None

    def drop(self, record_ids: set[str]) -> None:
        for rid in record_ids:
            if rid in self._position:
                del self[rid]

    def site_columns(self) -> tuple[list[str], list[str], list[str | None], list[str]]:
        """`sites()` as four lists (ids, messages, file paths, repos): read a column at a time."""
        if len(self._position) == len(self._ids):
            ids = cast("list[str]", self._ids)  # no None: nothing was deleted
            return list(ids), list(self._messages), list(self._paths), list(self._repos)
        live = [at for at, rid in enumerate(self._ids) if rid is not None]
        return (
            [rid for rid in self._ids if rid is not None],
            [self._messages[at] for at in live],
            [self._paths[at] for at in live],
            [self._repos[at] for at in live],
        )

    def sites(self) -> Iterator[tuple[str, str, str | None, str]]:
        """(id, errorMessage, filePath, repo) of every record, without building it."""
        for rid, message, path, repo in zip(
            self._ids, self._messages, self._paths, self._repos, strict=True
        ):
            if rid is not None:
                yield rid, message, path, repo

    def message(self, record_id: str) -> str:
        """A record's errorMessage, without building the record (a large catalog's near-copies
        share openings, and building each to read its message was most of a lookup)."""
        return self._messages[self._position[record_id]]

    def __getitem__(self, record_id: str) -> Record:
        record = self._built.get(record_id)
        if record is None:
            at = self._position[record_id]
            source = self._sources[at]
            # (None only for a record put in built, by `__setitem__`: it is in `_built`)
            assert source is not None
            document = _parse_document(source) if isinstance(source, bytes) else source
            record = self._built[record_id] = record_from_dict(document, self.origin(record_id))
        return record

    def commits(self) -> set[str]:
        """Every full commit id the records name (their analysedSha and githubUrl)."""
        return self._commits

    def __setitem__(self, record_id: str, record: Record) -> None:
        """Put a built record in (tests and tools edit catalogs in memory)."""
        self._commits.update(commits_named(record.analyzed_sha, record.github_url))
        self._put(
            record_id,
            None,
            record.origin,
            None,
            record.error_message,
            record.file_path,
            record.repo,
            record.has_write_up,
        )
        self._built[record_id] = record

    def __delitem__(self, record_id: str) -> None:
        self._thaw()
        at = self._position.pop(record_id)
        self._ids[at] = None
        self._sources[at] = None
        self._built.pop(record_id, None)
        self._written_up.discard(record_id)

    def __contains__(self, record_id: object) -> bool:
        return record_id in self._position

    def __iter__(self) -> Iterator[str]:
        if len(self._position) == len(self._ids):
            return iter(cast("list[str]", self._ids))  # no None: nothing was deleted
        return (rid for rid in self._ids if rid is not None)

    def __len__(self) -> int:
        return len(self._position)

    def __getstate__(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __setstate__(self, state: tuple[object, ...]) -> None:
        for name, value in zip(self.__slots__, state, strict=True):
            setattr(self, name, value)


def _parse_document(text: str | bytes) -> dict[str, Any]:
    """A line kept by `RecordTable.add`, parsed as the loader parsed it (it was checked then)."""
    import json

    # orjson when the loader imported it; from the cache a cold `match` builds a few records,
    # which json parses faster than orjson is imported (the same documents: see the loader).
    orjson = sys.modules.get("orjson")
    if orjson is None:
        return json.loads(text)
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        # what orjson refuses and the standard library reads
        return json.loads(text.decode("utf-8") if isinstance(text, bytes) else text)


_FULL_SHA = re.compile(r"[0-9a-f]{40}")
_URL_SHA = re.compile(r"/(?:blob|tree|raw)/([0-9a-fA-F]{40})/")
_URL_SHAS = [
    (f"/{kind}/", re.compile(rf"/{kind}/([0-9a-fA-F]{{40}})/")) for kind in ("blob", "tree", "raw")
]


def commits_named(analyzed_sha: object, github_url: object) -> tuple[str, ...]:
    """The full commit ids a record names: its analysedSha and the one in its githubUrl."""
    found: tuple[str, ...] = ()
    sha = analyzed_sha.lower() if type(analyzed_sha) is str else ""
    if _FULL_SHA.fullmatch(sha):
        found = (sha,)
    if type(github_url) is str:
        found = (*found, *map(str.lower, _URL_SHA.findall(github_url)))
    return found


WRITE_UP_KEYS = tuple(KEY_BY_ATTR[attr] for attr in WRITE_UP_ATTRS)
_WRITE_UP_KEY_SET = frozenset(WRITE_UP_KEYS)


def document_has_write_up(document: dict[str, Any]) -> bool:
    """`Record.has_write_up` of a checked document."""
    if _WRITE_UP_KEY_SET.isdisjoint(document):
        return False  # a bare site: none of the keys at all
    return any(_written(document.get(key)) for key in WRITE_UP_KEYS)


def record_to_dict(record: Record) -> dict[str, Any]:
    """The camelCase form for files: known fields in canonical order, then unknown ones.

    A field is written when it has a value or was present (even as null) in the source, so that
    importing a record and writing it back gives the same document field for field.
    """
    out: dict[str, Any] = {}
    for key, attr, kind in FIELDS:
        value = getattr(record, attr)
        if kind == "list":
            if value or key in record.present:
                out[key] = list(value)
        elif value is not None or key in record.present:
            out[key] = value
    out.update(record.extra)
    return out


# --- building many records at once ---------------------------------------------------------
#
# Loading a catalog (and indexing it) allocates a few containers per record and frees almost
# nothing. CPython's collector runs every 700 net allocations, and each older-generation pass
# walks every object alive so far, so loading a million records spent a third of its time
# collecting nothing. Records hold no reference cycles; the collector is paused while they are
# built and runs again afterwards as usual.

_collector_lock = threading.Lock()
_collector_depth = 0
_collector_was_enabled = False


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic collector for the block (nested and concurrent blocks: until the last
    one ends), and restore its previous state."""
    global _collector_depth, _collector_was_enabled
    with _collector_lock:
        if _collector_depth == 0:
            _collector_was_enabled = gc.isenabled()
            gc.disable()
        _collector_depth += 1
    try:
        yield
    finally:
        with _collector_lock:
            _collector_depth -= 1
            if _collector_depth == 0 and _collector_was_enabled:
                gc.enable()
