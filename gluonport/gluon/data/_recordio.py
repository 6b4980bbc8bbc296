"""Reading MXNet's indexed RecordIO files (``.rec`` + ``.idx``), as ``MXIndexedRecordIO`` in
read mode does.

The ``.rec`` layout is dmlc-core's (``include/dmlc/recordio.h``): each part of a record is
``magic`` (uint32 ``0xced7230a``), ``lrecord`` (uint32: bits 29-31 a continuation flag, bits
0-28 the length), the bytes, then zero padding to a multiple of 4. The writer splits a record
wherever the magic number sits at a 4-byte-aligned offset of its data (flag 1 starts, 2
continues, 3 ends a split record; 0 is a whole record) and drops those 4 bytes, which the reader
puts back between the parts. The ``.idx`` file is text, one ``key<TAB>byte offset`` per line.
"""

from __future__ import annotations

import os
import struct
import threading

from ...errors import FormatError

__all__ = ["IndexedRecordReader", "MAGIC"]

MAGIC = 0xCED7230A
_HEADER = struct.Struct("<II")
_MAGIC_BYTES = struct.pack("<I", MAGIC)


def read_index(idx_path: str) -> tuple[list[int], dict[int, int]]:
    """The keys (in file order) and their byte offsets from a ``.idx`` file."""
    if not os.path.isfile(idx_path):
        raise FormatError("no such index file; an indexed RecordIO dataset needs the .idx "
                          "written next to the .rec (MXNet's im2rec.py and "
                          "MXIndexedRecordIO write both)", path=idx_path)
    keys: list[int] = []
    offsets: dict[int, int] = {}
    with open(idx_path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            fields = line.strip().split("\t")
            try:
                key, offset = int(fields[0]), int(fields[1])
            except (ValueError, IndexError):
                raise FormatError(f"line {lineno}: {line.strip()!r} is not "
                                  "'<int key>\\t<byte offset>'", path=idx_path) from None
            offsets[key] = offset
            keys.append(key)
    return keys, offsets


class IndexedRecordReader:
    """Random access to the records of ``rec_path`` through the offsets of ``idx_path``.

    The file is opened on first use and again in a new process (as MXNet reopens after a
    fork); reads are serialised by a lock so threads may share one reader.
    """

    def __init__(self, idx_path: str, rec_path: str):
        if not os.path.isfile(rec_path):
            raise FormatError("no such record file", path=rec_path)
        self.rec_path = rec_path
        self.keys, self.offsets = read_index(idx_path)
        self._size = os.path.getsize(rec_path)
        self._file = None
        self._pid = -1
        self._lock = threading.Lock()

    def read_idx(self, key: int) -> bytes:
        """The record stored under ``key``."""
        if key not in self.offsets:
            raise FormatError(f"no record with key {key!r} in the index", path=self.rec_path)
        with self._lock:
            return self._read_at(self.offsets[key])

    def _handle(self):
        if self._file is None or self._pid != os.getpid():
            self._file = open(self.rec_path, "rb")  # noqa: SIM115 - kept open between reads
            self._pid = os.getpid()
        return self._file

    def _read_at(self, offset: int) -> bytes:
        f = self._handle()
        f.seek(offset)
        parts = []
        pos = offset
        while True:
            head = f.read(_HEADER.size)
            if len(head) != _HEADER.size:
                raise FormatError("the file ends inside a record header (truncated file, or "
                                  "an .idx offset that does not point at a record)",
                                  path=self.rec_path, offset=pos)
            magic, lrec = _HEADER.unpack(head)
            if magic != MAGIC:
                raise FormatError(f"expected the RecordIO magic 0x{MAGIC:08x}, found "
                                  f"0x{magic:08x} (not a RecordIO file, or a wrong .idx)",
                                  path=self.rec_path, offset=pos)
            flag, length = lrec >> 29, lrec & ((1 << 29) - 1)
            padded = (length + 3) // 4 * 4
            if pos + _HEADER.size + padded > self._size:
                raise FormatError(f"a record part of {length} bytes runs past the end of the "
                                  f"file ({self._size} bytes); the file is truncated",
                                  path=self.rec_path, offset=pos)
            parts.append(f.read(padded)[:length])
            pos += _HEADER.size + padded
            if flag in (0, 3):
                return _MAGIC_BYTES.join(parts)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.update(_file=None, _pid=-1, _lock=None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
