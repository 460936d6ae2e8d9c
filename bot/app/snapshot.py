"""The cache file of a large catalog: a pickle whose buffers follow it, memory-mapped on reading.

A packed catalog and index (bot.catalog.columns, numpy arrays) pickle to a few kilobytes of
objects and a few dozen large buffers. Pickled with protocol 5, the buffers are handed out of
band (`buffer_callback`) and written after the pickle, each aligned; reading maps the file and
gives the unpickler slices of the mapping, so a million records' columns are neither copied
nor rebuilt: the load costs the checks below and the few objects.

    header (64 bytes): magic, file size, buffer count, pickle size, checksum of the rest
    (offset, size) of each buffer, 16 bytes each
    the pickle
    the buffers, each at a multiple of 64, then zeros to a multiple of 8

A file of another size (truncated, or grown), another magic, or another checksum (a changed
byte anywhere) is refused with SnapshotError before anything is unpickled. The checksum: the
CRC-32 of each MiB's sum of 64-bit words (numpy adds 400 MB in 0.03 s, where zlib's CRC-32 of
it all took 0.2 s); any one changed word changes its MiB's sum, and the CRC of the sums
depends on their order.
"""

from __future__ import annotations

import mmap
import os
import pickle
import struct
import zlib
from pathlib import Path
from typing import IO, Any

from bot.catalog.columns import GroupedStrings, NumberColumn, Positions, StringColumn
from bot.catalog.loader import Catalog
from bot.catalog.model import RecordTable
from bot.core.match.index import CatalogIndex
from bot.core.match.postings import PackedWeights

MAGIC = b"triage-bot snap1"
_HEADER = struct.Struct("<16sQQQI")
_HEADER_SIZE = 64
_ENTRY = struct.Struct("<QQ")
_ALIGN = 64


class SnapshotError(ValueError):
    """The file is not a whole snapshot written by this module."""


def is_snapshot(head: bytes) -> bool:
    return head.startswith(MAGIC)


def pack(catalog: Catalog, index: CatalogIndex) -> None:
    """A large catalog's record table and index, packed in place (bot.catalog.columns)."""
    records = catalog.records
    if not isinstance(records, RecordTable) or not isinstance(index.idf, PackedWeights):
        raise TypeError("only a large catalog's record table and index are packed")
    records.pack()
    ids = records.packed_ids()
    if ids is None or len(ids) != len(index.record_ids) or list(ids) != list(index.record_ids):
        ids = StringColumn.of(index.record_ids, lookup=True)  # else the table's own, shared
    by_file = GroupedStrings.of(index.by_file, ids)
    words = Positions(StringColumn.of(index.postings, lookup=True))  # in the postings' order
    index.use_packed(ids, by_file, words, NumberColumn.of(index.idf.weights, "d"))


def write(stream: IO[bytes], value: object) -> None:
    buffers: list[memoryview] = []

    def out_of_band(buffer: pickle.PickleBuffer) -> bool:
        buffers.append(buffer.raw())
        return False  # false: written apart, not in the pickle

    pickled = pickle.dumps(value, protocol=5, buffer_callback=out_of_band)
    place = _HEADER_SIZE + _ENTRY.size * len(buffers) + len(pickled)
    table = bytearray()
    pieces: list[Any] = [pickled]
    for buffer in buffers:
        pad = -place % _ALIGN
        pieces += [bytes(pad), buffer]
        place += pad
        table += _ENTRY.pack(place, buffer.nbytes)
        place += buffer.nbytes
    pieces.append(bytes(-place % 8))
    place += len(pieces[-1])
    # Written, then read back through a mapping for the checksum: the same code as reading.
    start = stream.tell()
    stream.write(bytes(_HEADER_SIZE))
    stream.write(table)
    for piece in pieces:
        stream.write(piece)
    stream.flush()
    with (
        mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ) as mapped,
        memoryview(mapped) as view,
    ):
        body = view[start + _HEADER_SIZE : start + place]
        checksum = _checksum(body, place, len(buffers), len(pickled))
        body.release()
    stream.seek(start)
    stream.write(_HEADER.pack(MAGIC, place, len(buffers), len(pickled), checksum))
    stream.seek(start + place)


_CHUNK_WORDS = 1 << 17  # a MiB of 64-bit words


def _checksum(view: memoryview, *sizes: int) -> int:
    """Of the header's sizes and of everything after the header."""
    import numpy as np  # only large catalogs are snapshots, and they use numpy anyway

    words = np.frombuffer(view, dtype=np.uint64)
    whole = len(words) - len(words) % _CHUNK_WORDS
    sums = words[:whole].reshape(-1, _CHUNK_WORDS).sum(axis=1, dtype=np.uint64)
    tail = words[whole:].sum(dtype=np.uint64)
    checksum = zlib.crc32(struct.pack("<3Q", *sizes))
    checksum = zlib.crc32(sums.tobytes(), checksum)
    return zlib.crc32(tail.tobytes(), checksum)


def read(path: Path) -> Any:
    """The value `write` wrote to `path`, its buffers read in place from the mapped file."""
    with path.open("rb") as stream:
        size = os.fstat(stream.fileno()).st_size
        if size < _HEADER_SIZE:
            raise SnapshotError("shorter than a header")
        mapped = mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ)
    view = memoryview(mapped)
    magic, total, count, pickled, crc = _HEADER.unpack_from(view)
    if magic != MAGIC or total != size:
        raise SnapshotError("not a whole snapshot")
    start = _HEADER_SIZE + _ENTRY.size * count
    if (
        start + pickled > size
        or size % 8
        or _checksum(view[_HEADER_SIZE:], total, count, pickled) != crc
    ):
        raise SnapshotError("the checksum differs")
    buffers = []
    for n in range(count):
        offset, length = _ENTRY.unpack_from(view, _HEADER_SIZE + _ENTRY.size * n)
        if offset + length > size:
            raise SnapshotError("a buffer past the end")
        buffers.append(view[offset : offset + length])
    return pickle.loads(view[start : start + pickled], buffers=buffers)
