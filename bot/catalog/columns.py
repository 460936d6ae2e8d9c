"""Packed columns: a million strings or numbers as a few buffers instead of a million objects.

A large catalog read back from the cache (bot.app.index_cache) holds its ids, messages, JSON
lines, file paths and words in these: each column is one blob and an array of offsets, read in
place from the memory-mapped cache file, and a string is decoded only when asked for. Lookups
by value (an id, a word, a file) go through an open-addressing table of positions keyed by the
CRC-32 of the value's UTF-8: no dict of a million keys to rebuild at start-up.

Pickled with protocol 5, every buffer is a `PickleBuffer`, so the cache writes it apart from
the pickle (out of band) and hands back a slice of the mapped file; with older protocols the
buffers are pickled as bytes.
"""

from __future__ import annotations

import pickle
import zlib
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import accumulate, pairwise
from typing import Any

# Strings from JSON may hold lone surrogates (`"\ud800"`): kept as they are, both ways.
_ERRORS = "surrogatepass"


def _view(buffer: Any, fmt: Any) -> memoryview:
    return memoryview(buffer).cast("B").cast(fmt)


def _out(view: memoryview, protocol: int) -> Any:
    return pickle.PickleBuffer(view) if protocol >= 5 else view.tobytes()


class NumberColumn(Sequence[Any]):
    """Numbers of one C type (`q`, `i`, `d`) in one buffer; items come back as int or float."""

    __slots__ = ("_fmt", "_items")

    def __init__(self, buffer: Any, fmt: str) -> None:
        self._fmt = fmt
        self._items = _view(buffer, fmt)

    @classmethod
    def of(cls, values: Iterable[Any], fmt: str) -> NumberColumn:
        return cls(array(fmt, values), fmt)

    def __getitem__(self, i: Any) -> Any:
        return self._items[i]

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._items.tolist())

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        return (NumberColumn, (_out(self._items, protocol), self._fmt))


class StringColumn(Sequence[str]):
    """Strings in one UTF-8 blob, the i-th at `blob[ends[i]:ends[i + 1]]`; with a table, also
    the position of a value (`find`): the strings are then distinct."""

    __slots__ = ("_blob", "_ends", "_mask", "_table")

    def __init__(self, blob: Any, ends: Any, table: Any = None) -> None:
        self._blob = _view(blob, "B")
        self._ends = _view(ends, "q")
        self._table = None if table is None else _view(table, "i")
        self._mask = 0 if self._table is None else len(self._table) - 1

    @classmethod
    def of(cls, values: Iterable[str], lookup: bool = False) -> StringColumn:
        encoded = [value.encode("utf-8", _ERRORS) for value in values]
        ends = array("q", [0])
        ends.extend(accumulate(map(len, encoded)))
        table = _table(encoded) if lookup else None
        return cls(b"".join(encoded), ends, table)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[n] for n in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        ends = self._ends
        return str(self._blob[ends[i] : ends[i + 1]], "utf-8", _ERRORS)

    def __len__(self) -> int:
        return len(self._ends) - 1

    def __iter__(self) -> Iterator[str]:
        blob, ends = self._blob, self._ends.tolist()
        for start, end in pairwise(ends):
            yield str(blob[start:end], "utf-8", _ERRORS)

    def find(self, value: str) -> int:
        """The position of `value`, or -1 (only for a column made with `lookup`)."""
        table = self._table
        if table is None:
            raise TypeError("this column has no lookup table")
        key = value.encode("utf-8", _ERRORS)
        blob, ends, mask = self._blob, self._ends, self._mask
        slot = zlib.crc32(key) & mask
        while True:
            at = table[slot]
            if at < 0:
                return -1
            if blob[ends[at] : ends[at + 1]] == key:
                return at
            slot = (slot + 1) & mask

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        table = None if self._table is None else _out(self._table, protocol)
        return (StringColumn, (_out(self._blob, protocol), _out(self._ends, protocol), table))


def _table(encoded: list[bytes]) -> array:
    """Open addressing, linear probing, at most half full: a miss stops at the first -1."""
    size = 8
    while size < 2 * len(encoded):
        size *= 2
    mask = size - 1
    table = array("i", [-1]) * size
    for at, key in enumerate(encoded):
        slot = zlib.crc32(key) & mask
        while table[slot] >= 0:
            if encoded[table[slot]] == key:
                raise ValueError(f"a repeated value in a lookup column: {key!r}")
            slot = (slot + 1) & mask
        table[slot] = at
    return table


class Positions(Mapping[str, int]):
    """Value -> position in a StringColumn with a lookup table: a dict's reading side."""

    __slots__ = ("strings",)

    def __init__(self, strings: StringColumn) -> None:
        self.strings = strings

    def __getitem__(self, value: str) -> int:
        at = self.strings.find(value) if type(value) is str else -1
        if at < 0:
            raise KeyError(value)
        return at

    def get(self, value: str, default: Any = None) -> Any:
        at = self.strings.find(value) if type(value) is str else -1
        return default if at < 0 else at

    def __contains__(self, value: object) -> bool:
        return type(value) is str and self.strings.find(value) >= 0

    def __iter__(self) -> Iterator[str]:
        return iter(self.strings)

    def __len__(self) -> int:
        return len(self.strings)

    def __reduce__(self) -> tuple[Any, ...]:
        return (Positions, (self.strings,))


class CodedColumn(Sequence[Any]):
    """Values that repeat (a file, a repository): each row a number into a list of distinct
    values, -1 for None."""

    __slots__ = ("_codes", "_values")

    def __init__(self, values: list[Any], codes: Any) -> None:
        self._values = values
        self._codes = _view(codes, "i")

    @classmethod
    def of(cls, rows: Iterable[Any]) -> CodedColumn:
        numbers: dict[Any, int] = {None: -1}
        codes = array("i", [numbers.setdefault(v, len(numbers) - 1) for v in rows])
        return cls([v for v in numbers if v is not None], codes)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[n] for n in range(*i.indices(len(self)))]
        code = self._codes[i]
        return None if code < 0 else self._values[code]

    def __len__(self) -> int:
        return len(self._codes)

    def __iter__(self) -> Iterator[Any]:
        values = [*self._values, None]  # code -1 reads the last
        return map(values.__getitem__, self._codes.tolist())

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        return (CodedColumn, (self._values, _out(self._codes, protocol)))


class SourceColumn(Sequence[Any]):
    """A record table's sources: JSON lines as bytes in one blob, and the few documents
    parsed from `.json` files (or added whole) by position."""

    __slots__ = ("_documents", "_ends", "_lines")

    def __init__(self, lines: Any, ends: Any, documents: dict[int, Any]) -> None:
        self._lines = _view(lines, "B")
        self._ends = _view(ends, "q")
        self._documents = documents

    @classmethod
    def of(cls, sources: Iterable[Any]) -> SourceColumn:
        documents: dict[int, Any] = {}
        lines: list[bytes] = []
        for at, source in enumerate(sources):
            if isinstance(source, bytes):
                lines.append(source)
            else:
                documents[at] = source
                lines.append(b"")
        ends = array("q", [0])
        ends.extend(accumulate(map(len, lines)))
        return cls(b"".join(lines), ends, documents)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[n] for n in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        document = self._documents.get(i)
        if document is not None:
            return document
        ends = self._ends
        return self._lines[ends[i] : ends[i + 1]].tobytes()

    def __len__(self) -> int:
        return len(self._ends) - 1

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        lines, ends = _out(self._lines, protocol), _out(self._ends, protocol)
        return (SourceColumn, (lines, ends, self._documents))


class GroupedStrings(Mapping[str, list[str]]):
    """Key -> the strings of some rows of a column, in row order (the index's ids by file):
    the keys a lookup column, each key's row numbers a slice of one array."""

    __slots__ = ("_keys", "_rows", "_starts", "_strings")

    def __init__(
        self, keys: StringColumn, starts: NumberColumn, rows: NumberColumn, strings: Sequence[str]
    ) -> None:
        self._keys = keys
        self._starts = starts
        self._rows = rows
        self._strings = strings

    @classmethod
    def of(cls, groups: Mapping[str, list[str]], strings: Sequence[str]) -> GroupedStrings:
        """`groups`' values are strings of `strings` (distinct): stored as their row numbers."""
        row_of = dict(zip(strings, range(len(strings)), strict=True))
        starts = array("q", [0])
        rows = array("i")
        for members in groups.values():
            rows.extend(map(row_of.__getitem__, members))
            starts.append(len(rows))
        keys = StringColumn.of(groups, lookup=True)
        return cls(keys, NumberColumn(starts, "q"), NumberColumn(rows, "i"), strings)

    def __getitem__(self, key: str) -> list[str]:
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return found

    def get(self, key: str, default: Any = None) -> Any:
        at = self._keys.find(key) if type(key) is str else -1
        if at < 0:
            return default
        strings, starts = self._strings, self._starts
        return [strings[n] for n in self._rows[starts[at] : starts[at + 1]]]

    def __contains__(self, key: object) -> bool:
        return type(key) is str and self._keys.find(key) >= 0

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def __reduce__(self) -> tuple[Any, ...]:
        return (GroupedStrings, (self._keys, self._starts, self._rows, self._strings))
