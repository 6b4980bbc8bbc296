"""NPY/NPZ parameter files from every kind of source, and NPY dtype descriptors numpy would
parse as code.

Regressions from the fuzz campaign of issue 12: ``numpy.savez_compressed`` files (MXNet 2.0
writes npz) failed with ``AttributeError`` on any load from a path, because an ``mmap`` has no
``seekable()``; a garbage NPY ``descr`` reached ``np.dtype`` and raised ``SyntaxError``.
"""

from __future__ import annotations

import io

import numpy as np
import pytest

from gluonport.errors import FormatError
from gluonport.formats import params as P


def _npz_file(tmp_path, compressed: bool):
    path = tmp_path / ("c.npz" if compressed else "s.npz")
    arrays = {"w": np.arange(6, dtype="f4").reshape(2, 3), "b": np.array([1.5, -2.0])}
    (np.savez_compressed if compressed else np.savez)(path, **arrays)
    return path, arrays


@pytest.mark.parametrize("compressed", [False, True])
@pytest.mark.parametrize("how", ["mmap", "read", "file", "bytes"])
def test_npz_loads_from_every_source(tmp_path, compressed, how):
    path, want = _npz_file(tmp_path, compressed)
    if how in ("mmap", "read"):
        got = P.load(path, mmap=how == "mmap")
    elif how == "file":
        with open(path, "rb") as f:
            got = P.load(f)
    else:
        got = P.load(path.read_bytes())
    assert sorted(got) == sorted(want)
    for name, arr in want.items():
        np.testing.assert_array_equal(got[name], arr)
        assert got[name].dtype == arr.dtype


def _npy_with_descr(descr: str) -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.arange(3, dtype="<i8"))
    raw = buf.getvalue()
    header = raw[10:raw.index(b"\n") + 1].decode("latin1").replace("'<i8'", repr(descr))
    header = header.rstrip("\n").rstrip() + " " * 4
    header += " " * (-(10 + len(header) + 1) % 64) + "\n"
    return raw[:8] + len(header).to_bytes(2, "little") + header.encode("latin1") \
        + raw[raw.index(b"\n") + 1:]


@pytest.mark.parametrize("descr", ["i8,(", ",", "(1,2", "(2,)i8", "i8,", "f8,f4)", "<i8 ",
                                   "[('a', '<i8')]", "O", "U3", "V8", "xb2", "<f16"])
def test_garbage_npy_descr_is_a_format_error(descr):
    with pytest.raises(FormatError, match="dtype"):
        P.load(_npy_with_descr(descr))


@pytest.mark.parametrize("descr", ["<i8", "i8", "=i8"])
def test_plain_npy_descr_still_loads(descr):
    (arr,) = P.load(_npy_with_descr(descr))
    np.testing.assert_array_equal(arr, np.arange(3))


@pytest.mark.parametrize("compressed", [False, True])
def test_huge_declared_member_size_allocates_nothing_large(tmp_path, compressed):
    """A damaged zip whose member claims ~4 GiB of compressed data: the reader never asks for
    the claimed size (found by the params fuzz campaign: 1 GiB for 393 bytes)."""
    import struct
    import tracemalloc

    path, _ = _npz_file(tmp_path, compressed)
    raw = bytearray(path.read_bytes())
    for sig, field in ((b"PK\x03\x04", 18), (b"PK\x01\x02", 20)):
        at = raw.find(sig)
        struct.pack_into("<I", raw, at + field, 0xFFFF0000)
    path.write_bytes(bytes(raw))
    for source in (bytes(raw), path):
        tracemalloc.start()
        try:
            P.load(source)  # the sizes that matter are the local ones: it may still load
        except FormatError:
            pass
        finally:
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        assert peak < 4 << 20
