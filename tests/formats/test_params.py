"""gluonport.formats.params against files written by the real MXNet 1.9.1.

The golden files and manifest.json come from tests/golden/formats/gen_params.py (run with the
oracle MXNet). Comparisons are exact (bytes and values, NaN == NaN): no tolerance is needed for
a file format.
"""

from __future__ import annotations

import io
import json
import os
import struct
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest

from gluonport._core import dtypes
from gluonport.context import gpu
from gluonport.errors import DTypeError, FormatError, ShapeError
from gluonport.formats import params as P
from gluonport.formats.params import ArrayInfo, ParamsFile, SparseArray

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "formats" / "params"
MANIFEST = json.loads((GOLDEN / "manifest.json").read_text())["files"]
FILES = sorted(MANIFEST)
IDENTICAL = [f for f in FILES if MANIFEST[f]["writer_identical"]]
BF16_STRUCT = np.dtype([("bfloat16", "<u2")])


def items(loaded):
    return list(loaded.items()) if isinstance(loaded, dict) else [(None, a) for a in loaded]


def check_array(got, exp, bfloat16="float32"):
    """One loaded array against its manifest entry."""
    assert tuple(got.shape) == tuple(exp["shape"])
    if exp["stype"] != "default":
        assert isinstance(got, SparseArray) and got.stype == exp["stype"]
        np.testing.assert_array_equal(got.data.reshape(-1), np.ravel(exp["data"]))
        assert got.indices.tolist() == exp["indices"]
        if exp["stype"] == "csr":
            assert got.indptr.tolist() == exp["indptr"]
        dense = got.todense()
    else:
        assert isinstance(got, np.ndarray)
        dense = got
    if exp["dtype"] == "bfloat16":
        if bfloat16 == "raw":
            assert dense.dtype == np.uint16 and dense.ravel().tolist() == exp["bits"]
            return
        assert dense.dtype == np.float32
    else:
        assert dense.dtype == np.dtype(exp["dtype"])
        assert dense.tobytes() == bytes.fromhex(exp["raw_hex"])
    want = np.array(exp["values"], dtype=dense.dtype).reshape(exp["shape"])
    np.testing.assert_array_equal(dense, want)


# --------------------------------------------------------------------------------------------
# reading every golden file


@pytest.mark.parametrize("fname", FILES)
@pytest.mark.parametrize("use_mmap", [True, False])
def test_read_golden(fname, use_mmap):
    exp = MANIFEST[fname]
    loaded = P.load(GOLDEN / fname, mmap=use_mmap)
    assert isinstance(loaded, dict if exp["kind"] == "dict" else list)
    got = items(loaded)
    assert [n for n, _ in got] == [a["name"] for a in exp["arrays"]]
    for (_, arr), want in zip(got, exp["arrays"]):
        check_array(arr, want)


@pytest.mark.parametrize("fname", FILES)
def test_read_golden_info(fname):
    pf = P.load_with_info(GOLDEN / fname, bfloat16="raw")
    exp = MANIFEST[fname]
    assert pf.format == "ndarray-list" and pf.trailing_bytes == 0
    for arr, info, want in zip(pf.arrays, pf.infos, exp["arrays"]):
        assert (info.version, info.stype, info.dev_type, info.dev_id, info.flag) == (
            want["version"], want["stype"], want["dev_type"], want["dev_id"], want["flag"])
        check_array(arr, want, bfloat16="raw")


def test_gpu_context_is_reported_but_loaded_on_host():
    pf = P.load_with_info(GOLDEN / "gpu_context.params")
    assert [i.saved_context for i in pf.infos] == [gpu(1), P.Context("cpu_pinned", 0)]
    assert all(isinstance(a, np.ndarray) for a in pf.arrays)


@pytest.mark.parametrize("source", ["path", "str", "bytes", "bytearray", "memoryview", "file"])
def test_sources(source):
    path = GOLDEN / "dict.params"
    raw = path.read_bytes()
    arg = {"path": path, "str": str(path), "bytes": raw, "bytearray": bytearray(raw),
           "memoryview": memoryview(raw), "file": open(path, "rb")}[source]
    try:
        loaded = P.load(arg)
    finally:
        if source == "file":
            arg.close()
    assert list(loaded) == ["alpha", "beta", "gamma"]
    np.testing.assert_array_equal(loaded["beta"], P.load(raw)["beta"])


def test_text_mode_file_is_refused(tmp_path):
    with open(GOLDEN / "dict.params", encoding="latin1") as f:
        with pytest.raises(FormatError, match="binary mode"):
            P.load(f)


def test_mmap_views_are_read_only_and_zero_copy():
    path = GOLDEN / "shape_3d.params"
    w = P.load(path)["w"]
    assert not w.flags.writeable
    with pytest.raises(ValueError):
        w[0, 0, 0] = 1
    base = w
    while getattr(base, "base", None) is not None and not isinstance(base, memoryview):
        base = base.base
    assert isinstance(base, memoryview) and base.readonly  # a view of the mapping, no copy
    w2 = P.load(path, mmap=False)["w"]
    assert w2.flags.writeable
    w2[0, 0, 0] = 123.0  # the private buffer, not the file
    assert P.load(path)["w"][0, 0, 0] != 123.0


def test_mixed_alignment_records_come_back_aligned():
    """A float64 record after an odd-sized one sits at a misaligned offset in the file: it is
    copied once at load (numpy would compute on the view without BLAS, copying it in every
    matmul, with other rounding), keeps the mapping's read-only-ness, and has the same values
    as the bytes in the file."""
    path = GOLDEN / "mixed_alignment.params"
    raw = path.read_bytes()
    d = P.load(path)
    assert d["d"].dtype == np.float64 and d["d"].flags.aligned and not d["d"].flags.writeable
    want = d["d"].tobytes()
    assert raw.find(want) % 8 != 0  # the record is misaligned in the file itself
    assert P.load(path, mmap=False)["d"].flags.writeable
    np.testing.assert_array_equal(d["d"] * 2, np.array(d["d"].tolist()) * 2)


def test_real_mxnet_legacy_v0_layout_matches_hand_made():
    """The hand-made V0 golden loads in MXNet 1.9.1 (manifest) and parses here as V0."""
    pf = P.load_with_info(GOLDEN / "legacy_v0.params")
    assert [i.version for i in pf.infos] == [0, 0] and pf.names is None


# --------------------------------------------------------------------------------------------
# writing: byte-identical to MXNet


@pytest.mark.parametrize("fname", IDENTICAL)
def test_rewrite_is_byte_identical(fname, tmp_path):
    src = GOLDEN / fname
    out = tmp_path / fname
    P.save(out, P.load_with_info(src))
    assert out.read_bytes() == src.read_bytes()


@pytest.mark.parametrize("fname", IDENTICAL)
def test_rewrite_raw_bfloat16_is_byte_identical(fname):
    src = GOLDEN / fname
    buf = io.BytesIO()
    P.save(buf, P.load_with_info(src, bfloat16="raw"))
    assert buf.getvalue() == src.read_bytes()


PLAIN = [f for f in IDENTICAL if all(
    (a["dev_type"], a["dev_id"], a["version"]) == (1, 0, 2) and a["dtype"] != "bfloat16"
    for a in MANIFEST[f]["arrays"])]


@pytest.mark.parametrize("fname", PLAIN)
def test_save_plain_data_matches_mx_nd_save(fname):
    """save(list or dict of numpy arrays) with defaults == mx.nd.save's bytes."""
    buf = io.BytesIO()
    P.save(buf, P.load(GOLDEN / fname))
    assert buf.getvalue() == (GOLDEN / fname).read_bytes()


def test_hexdump_example_from_spec():
    buf = io.BytesIO()
    P.save(buf, {"a": np.array([[1, 2, 3], [4, 5, 6]], "f4"), "bb": np.array([7, 8], "i4")})
    raw = buf.getvalue()
    assert len(raw) == 155 and raw[0x18:0x1c] == bytes.fromhex("c9fa93f9")
    assert raw[0x80:] == bytes.fromhex("0200000000000000" "0100000000000000") + b"a" + bytes(
        [2, 0, 0, 0, 0, 0, 0, 0]) + b"bb"


@pytest.mark.parametrize("fname", ["legacy_v0.params", "legacy_v1.params",
                                   "row_sparse_stale_storage_shape.params"])
def test_nonidentical_files_rewrite_as_v2_with_same_values(fname, tmp_path):
    out = tmp_path / "x.params"
    P.save(out, P.load_with_info(GOLDEN / fname))
    again = P.load_with_info(out)
    assert {i.version for i in again.infos} == {2}
    for (_, arr), want in zip(items(again.data()), MANIFEST[fname]["arrays"]):
        check_array(arr, want)


# --------------------------------------------------------------------------------------------
# round trips

ROUND_TRIP = [
    ("float32", (2, 3)), ("float64", (4,)), ("float16", (3, 1, 2)), ("uint8", (5,)),
    ("int32", (2, 2)), ("int8", (7,)), ("int64", (1,)), ("bool", (3,)),
    ("float32", (0,)), ("int32", (2, 0)), ("float32", (1, 1, 1, 1, 1, 1, 1)),
]


@pytest.mark.parametrize("dtype,shape", ROUND_TRIP)
@pytest.mark.parametrize("version", [2, 3])
def test_round_trip(dtype, shape, version):
    rng = np.random.default_rng(0)
    arr = (rng.standard_normal(shape) * 10).astype(dtype)
    buf = io.BytesIO()
    P.save(buf, {"x": arr, "y": arr[..., ::-1]}, version=version)
    pf = P.load_with_info(buf.getvalue())
    assert [i.version for i in pf.infos] == [version, version]
    for got, want in zip(pf.arrays, [arr, arr[..., ::-1]]):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_scalar_v2_becomes_shape_1_like_mxnet_1x():
    buf = io.BytesIO()
    P.save(buf, [np.float32(2.5), np.array(7, "i8")])
    got = P.load(buf.getvalue())
    assert [a.shape for a in got] == [(1,), (1,)] and got[0][0] == 2.5 and got[1][0] == 7


def test_scalar_v3_stays_0d_and_matches_npx_save():
    buf = io.BytesIO()
    golden = P.load(GOLDEN / "v3_np_scalar.params")
    P.save(buf, golden, version=3)
    assert buf.getvalue() == (GOLDEN / "v3_np_scalar.params").read_bytes()
    assert P.load(buf.getvalue())["scalar"].shape == ()


def test_fortran_and_big_endian_inputs_are_written_c_order_little_endian():
    a = np.asfortranarray(np.arange(6, dtype=">f8").reshape(2, 3))
    buf = io.BytesIO()
    P.save(buf, [a])
    got = P.load(buf.getvalue())[0]
    assert got.dtype == np.dtype("<f8")
    np.testing.assert_array_equal(got, a)


class FakeNDArray:
    """What gluonport.ndarray.NDArray offers: asnumpy(), context, dtype."""

    def __init__(self, arr, context=None, dtype=None):
        self._arr, self.context = arr, context
        self.dtype = arr.dtype if dtype is None else dtype

    def asnumpy(self):
        return self._arr


def test_objects_with_asnumpy_and_context():
    buf = io.BytesIO()
    P.save(buf, {"g": FakeNDArray(np.ones(2, "f4"), gpu(3)), "c": FakeNDArray(np.zeros(1, "i4"))})
    pf = P.load_with_info(buf.getvalue())
    assert [(i.dev_type, i.dev_id) for i in pf.infos] == [(2, 3), (1, 0)]


def test_info_overrides_context():
    buf = io.BytesIO()
    P.save(buf, [np.ones(2, "f4")], info=[ArrayInfo(dev_type=2, dev_id=1)])
    assert P.load_with_info(buf.getvalue()).infos[0].saved_context == gpu(1)


# --------------------------------------------------------------------------------------------
# bfloat16

def test_bfloat16_inputs_all_give_mxnet_bytes():
    golden = (GOLDEN / "dtype_bfloat16.params").read_bytes()
    bits = P.load(GOLDEN / "dtype_bfloat16.params", bfloat16="raw")["x"]
    as_f32 = dtypes.bfloat16_to_float32(bits)
    inputs = [
        ({"x": bits.view(BF16_STRUCT)}, None),  # what MXNet 1.x Python hands out
        ({"x": as_f32}, {"x": ArrayInfo(flag=12)}),
        ({"x": bits}, {"x": ArrayInfo(flag=12)}),
        ({"x": FakeNDArray(as_f32, dtype="bfloat16")}, None),
    ]
    for data, info in inputs:
        buf = io.BytesIO()
        P.save(buf, data, info=info)
        assert buf.getvalue() == golden


def test_bfloat16_rounds_to_nearest_even_and_keeps_nan_bits():
    x = np.array([1.0 + 2**-8, 1.0 + 3 * 2**-8, -3.3, np.inf], "f4")
    nan = np.array([0xFFC1_0000], "<u4").view("f4")  # a NaN with sign and payload
    buf = io.BytesIO()
    P.save(buf, [np.concatenate([x, nan])], info=[ArrayInfo(flag=12)])
    bits = P.load(buf.getvalue(), bfloat16="raw")[0]
    np.testing.assert_array_equal(bits[:4], dtypes.float32_to_bfloat16(x))
    assert bits[4] == 0xFFC1


# --------------------------------------------------------------------------------------------
# sparse

SPARSE = [
    ("row_sparse", np.array([[0, 0], [1.5, 0], [0, 0], [2, 3]], "f4")),
    ("row_sparse", np.zeros((3, 2, 2), "f8")),
    ("row_sparse", np.arange(6, dtype="i4").reshape(3, 2)),
    ("csr", np.array([[0, 1, 0], [0, 0, 0], [4, 0, 5]], "f4")),
    ("csr", np.zeros((2, 5), "f2")),
]


@pytest.mark.parametrize("stype,dense", SPARSE)
def test_sparse_round_trip(stype, dense):
    sp = SparseArray.from_dense(dense, stype)
    buf = io.BytesIO()
    P.save(buf, {"s": sp, "d": dense})
    pf = P.load_with_info(buf.getvalue())
    got = pf.arrays[0]
    assert pf.infos[0].stype == stype and isinstance(got, SparseArray)
    np.testing.assert_array_equal(got.todense(), dense)
    assert got.dtype == dense.dtype and got.indices.dtype == np.int64


def test_sparse_cannot_be_v3():
    sp = SparseArray.from_dense(np.eye(2, dtype="f4"), "csr")
    with pytest.raises(FormatError, match="V3"):
        P.save(io.BytesIO(), [sp], version=3)


@pytest.mark.parametrize("args", [
    ("row_sparse", (3, 2), np.ones((1, 3)), [0]),
    ("row_sparse", (3, 2), np.ones((4, 2)), [0, 1, 2, 3]),
    ("row_sparse", (3, 2), np.ones((1, 2)), [0.5]),
    ("csr", (2, 2), np.ones(1), [0], [0, 1]),
    ("csr", (2, 2, 2), np.ones(1), [0], [0, 1, 1]),
    ("coo", (2,), np.ones(1), [0]),
])
def test_sparse_array_checks(args):
    with pytest.raises(ShapeError):
        SparseArray(*args)


@pytest.mark.parametrize("sp", [
    SparseArray("row_sparse", (2, 1), np.ones((1, 1)), [5]),
    SparseArray("csr", (2, 2), np.ones(1), [7], [0, 1, 1]),
    SparseArray("csr", (2, 2), np.ones(1), [0], [0, 2, 1]),
])
def test_sparse_todense_range_checks(sp):
    with pytest.raises(ShapeError):
        sp.todense()


# --------------------------------------------------------------------------------------------
# "none" records and legacy layouts built by hand (FORMATS.md 1.4, 1.6)

def container(records, names=(), reserved=0):
    out = struct.pack("<QQQ", 0x112, reserved, len(records)) + b"".join(records)
    out += struct.pack("<Q", len(names))
    for n in names:
        b = n.encode("utf-8")
        out += struct.pack("<Q", len(b)) + b
    return out


def dense_v2(arr, flag=0, magic=P.V2_MAGIC, dev=(1, 0)):
    return (struct.pack("<Iii", magic, 0, arr.ndim) + struct.pack(f"<{arr.ndim}q", *arr.shape)
            + struct.pack("<iii", *dev, flag) + arr.tobytes())


ONE = np.array([1.0, 2.0], "f4")
NONE_CASES = {
    "v2_ndim0": struct.pack("<Iii", P.V2_MAGIC, 0, 0),
    "v2_ndim_minus1": struct.pack("<Iii", P.V2_MAGIC, 0, -1),
    "v3_ndim_minus1": struct.pack("<Iii", P.V3_MAGIC, 0, -1),
    "v3_dim_minus1": struct.pack("<Iiiq", P.V3_MAGIC, 0, 1, -1),
    "v1_ndim0": struct.pack("<Ii", P.V1_MAGIC, 0),
    "v0_ndim0": struct.pack("<I", 0),
}


@pytest.mark.parametrize("case", sorted(NONE_CASES))
def test_none_records_load_as_none(case):
    raw = container([dense_v2(ONE), NONE_CASES[case], dense_v2(ONE)], ["a", "none", "b"])
    got = P.load(raw)
    assert got["none"] is None
    np.testing.assert_array_equal(got["b"], ONE)


def test_none_cannot_be_saved(tmp_path):
    with pytest.raises(FormatError, match="None"):
        P.save(tmp_path / "x.params", {"w": None})
    assert not (tmp_path / "x.params").exists()


def test_v0_with_all_dtypes_and_v1_u32_ndim():
    recs = [struct.pack("<II", 1, 3) + struct.pack("<iii", 1, 0, 6) + np.arange(3, dtype="<i8")
            .tobytes(), struct.pack("<IIq", P.V1_MAGIC, 1, 2) + struct.pack("<iii", 1, 0, 2)
            + np.ones(2, "<f2").tobytes()]
    a, b = P.load(container(recs))
    assert a.tolist() == [0, 1, 2] and b.dtype == np.float16 and b.tolist() == [1.0, 1.0]


# --------------------------------------------------------------------------------------------
# malformed input: FormatError naming the file and the byte offset

GOOD = container([dense_v2(ONE)], ["w"])  # 24 + (24+8+8) + 8 + 8+1 = 81 bytes
REC = 24  # offset of the first record
FLAG_AT = REC + 12 + 8 + 8


def patched(raw, offset, fmt, value):
    b = bytearray(raw)
    struct.pack_into(fmt, b, offset, value)
    return bytes(b)


def sparse_record(stype=1, aux_flag=6, indptr_len=3):
    if stype == 1:
        return (struct.pack("<Ii", P.V2_MAGIC, 1) + struct.pack("<iqq", 2, 1, 2)
                + struct.pack("<iqq", 2, 3, 2) + struct.pack("<iii", 1, 0, 0)
                + struct.pack("<iiq", aux_flag, 1, 1) + np.ones(2, "f4").tobytes()
                + np.array([1], "<i8").tobytes())
    return (struct.pack("<Ii", P.V2_MAGIC, 2) + struct.pack("<iq", 1, 1)
            + struct.pack("<iqq", 2, 2, 2) + struct.pack("<iii", 1, 0, 0)
            + struct.pack("<iiq", 6, 1, indptr_len) + struct.pack("<iiq", 6, 1, 1)
            + np.ones(1, "f4").tobytes() + np.zeros(indptr_len, "<i8").tobytes()
            + np.zeros(1, "<i8").tobytes())


BAD = [
    # (case, bytes, offset, message fragment)
    ("empty", b"", 0, "empty"),
    ("wrong magic", b"\x13" + GOOD[1:], 0, "not an MXNet NDArray file"),
    ("truncated header", GOOD[:12], 8, "reserved header field needs 8 bytes"),
    ("array count beyond file", patched(GOOD, 16, "<Q", 2**40), 16, "claims 1099511627776"),
    ("truncated record", GOOD[:REC + 10], REC + 8, "record 0 shape ndim"),
    ("truncated data", GOOD[:FLAG_AT + 8], FLAG_AT + 4, "record 0 data"),
    ("unknown dtype flag", patched(GOOD, FLAG_AT, "<i", 13), FLAG_AT, "unknown MXNet dtype flag"),
    ("2**40 elements", patched(GOOD, REC + 12, "<q", 2**40), FLAG_AT + 4,
     "needs 4398046511104 bytes"),
    ("negative dim", patched(GOOD, REC + 12, "<q", -5), REC + 12, "negative dimension -5"),
    ("negative ndim", patched(GOOD, REC + 8, "<i", -7), REC + 8, "ndim -7"),
    ("huge ndim", patched(GOOD, REC + 8, "<i", 10**6), REC + 8, "ndim 1000000"),
    ("unknown stype", patched(GOOD, REC + 4, "<i", 7), REC + 4, "storage type 7"),
    ("V3 sparse", container([patched(sparse_record(), 0, "<I", P.V3_MAGIC)]), REC + 4,
     "forbids"),
    ("garbage record magic", patched(GOOD, REC, "<I", 0xDEADBEEF), REC, "no record magic"),
    ("names count mismatch", patched(GOOD, len(GOOD) - 9 - 8, "<Q", 3), len(GOOD) - 17,
     "1 arrays but 3 names"),
    ("name length beyond file", patched(GOOD, len(GOOD) - 9, "<Q", 2**62), len(GOOD) - 1,
     "name 0 of 4611686018427387904 bytes"),
    ("name not utf-8", GOOD[:-1] + b"\xff", len(GOOD) - 9, "not valid UTF-8"),
    ("float sparse indices", container([sparse_record(aux_flag=0)]), REC + 60, "integers"),
    ("csr indptr of wrong length", container([sparse_record(2, indptr_len=2)]), REC,
     "inconsistent sparse record"),
]


@pytest.mark.parametrize("case,raw,offset,fragment", BAD, ids=[b[0] for b in BAD])
def test_malformed_files(case, raw, offset, fragment, tmp_path):
    path = tmp_path / "bad.params"
    path.write_bytes(raw)
    with pytest.raises(FormatError) as ei:
        P.load(path)
    msg = str(ei.value)
    assert msg.startswith(f"{path}: at byte {offset}: "), msg
    assert fragment in msg and ei.value.offset == offset and ei.value.path == str(path)
    with pytest.raises(FormatError, match=f"<bytes>: at byte {offset}: "):
        P.load(raw)


def test_lying_header_raises_without_allocating():
    raw = bytearray(GOOD)
    struct.pack_into("<q", raw, REC + 12, 2**40)  # 2**40 float32 in an 81-byte file
    tracemalloc.start()
    try:
        with pytest.raises(FormatError, match="needs 4398046511104 bytes"):
            P.load(bytes(raw))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


def test_trailing_bytes_policy():
    raw = GOOD + b"junk"
    pf = P.load_with_info(raw)
    assert pf.trailing_bytes == 4 and list(pf.data()) == ["w"]  # MXNet ignores them too
    with pytest.raises(FormatError, match=f"at byte {len(GOOD)}: 4 unexpected bytes"):
        P.load(raw, strict=True)


def test_empty_dict_and_list_are_the_same_32_bytes():
    a, b = io.BytesIO(), io.BytesIO()
    P.save(a, {})
    P.save(b, [])
    assert a.getvalue() == b.getvalue() == (GOLDEN / "empty_dict.params").read_bytes()
    assert len(a.getvalue()) == 32 and P.load(a.getvalue()) == []


# --------------------------------------------------------------------------------------------
# writer refusals and atomicity


@pytest.mark.parametrize("dtype,flag", [("int16", 8), ("uint16", 9), ("uint32", 10),
                                        ("uint64", 11)])
def test_mxnet2_only_dtypes_are_refused(dtype, flag, tmp_path):
    target = tmp_path / "model.params"
    target.write_bytes(b"previous contents")
    with pytest.raises(DTypeError) as ei:
        P.save(target, {"ok": ONE, "bad": np.zeros(2, dtype)})
    msg = str(ei.value)
    assert "array 1 'bad'" in msg and f"flag {flag}" in msg and "MXNet 1.x" in msg
    assert target.read_bytes() == b"previous contents"
    assert os.listdir(tmp_path) == ["model.params"]  # no temp file left behind
    P.save(target, {"bad": np.arange(3, dtype=dtype)}, allow_mxnet2_dtypes=True)
    got = P.load_with_info(target)
    assert got.infos[0].flag == flag and got.arrays[0].tolist() == [0, 1, 2]


@pytest.mark.parametrize("bad,err,fragment", [
    (np.zeros(2, "complex64"), DTypeError, "complex64"),
    (np.array(["a"]), DTypeError, "no MXNet type flag"),
])
def test_unsupported_dtypes(bad, err, fragment, tmp_path):
    with pytest.raises(err, match=fragment):
        P.save(tmp_path / "x.params", [bad])
    assert os.listdir(tmp_path) == []


def test_non_str_names_and_bad_info(tmp_path):
    with pytest.raises(FormatError, match="names must be str"):
        P.save(tmp_path / "x.params", {1: ONE})
    with pytest.raises(FormatError, match="info has 2 entries for 1 arrays"):
        P.save(tmp_path / "x.params", [ONE], info=[None, None])
    with pytest.raises(FormatError, match="versions 2 and 3"):
        P.save(tmp_path / "x.params", [ONE], version=1)
    assert os.listdir(tmp_path) == []


def test_failure_while_writing_leaves_target_intact(tmp_path):
    class Exploding(FakeNDArray):
        def asnumpy(self):
            raise RuntimeError("device lost")

    target = tmp_path / "model.params"
    P.save(target, [ONE])
    before = target.read_bytes()
    with pytest.raises(RuntimeError):
        P.save(target, [ONE, Exploding(ONE)])
    assert target.read_bytes() == before and os.listdir(tmp_path) == ["model.params"]


def test_save_replaces_and_respects_umask(tmp_path):
    target = tmp_path / "m.params"
    P.save(target, [ONE])
    P.save(target, {"w": ONE})
    assert list(P.load(target)) == ["w"]
    umask = os.umask(0o022)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask


# --------------------------------------------------------------------------------------------
# MXNet 2.0 files: .npy and uncompressed .npz (FORMATS.md 1.10)


def npy_bytes(arr, descr=None, header_override=None):
    """An NPY v1.0 file laid out as MXNet 2.0's cnpy writes it (header padded to 64)."""
    descr = descr or np.lib.format.dtype_to_descr(arr.dtype)
    text = header_override or (
        f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {tuple(arr.shape)!r}, }}")
    text += " " * (64 - (10 + len(text) + 1) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode() + arr.tobytes()


def format_npy(fmt):
    """MXNet 2.0's format.npy, including its malformed header."""
    text = ("{'descr': '|s" + str(len(fmt))
            + "{'descr': '<i8', 'fortran_order': False, 'shape': (), }")
    text += " " * (64 - (10 + len(text) + 1) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode() + fmt.encode()


def mx2_npz(members, compression=zipfile.ZIP_STORED):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return buf.getvalue()


def sparse_members(name, sp):
    out = [(f"{name}/data.npy", npy_bytes(sp.data))]
    if sp.stype == "csr":
        out.append((f"{name}/indptr.npy", npy_bytes(sp.indptr)))
    out += [(f"{name}/indices.npy", npy_bytes(sp.indices)),
            (f"{name}/shape.npy", npy_bytes(np.array(sp.shape, "<i8"))),
            (f"{name}/format.npy", format_npy(sp.stype))]
    return out


def test_mxnet2_npz_dense_bf16_and_sparse(tmp_path):
    w = np.arange(6, dtype="f4").reshape(2, 3)
    bits = dtypes.float32_to_bfloat16(np.array([1.5, -2.0], "f4"))
    csr = SparseArray.from_dense(np.array([[0, 2], [3, 0]], "f4"), "csr")
    rsp = SparseArray.from_dense(np.array([[0, 0], [1, 1], [0, 0]], "f8"), "row_sparse")
    raw = mx2_npz([("arg:w.npy", npy_bytes(w)), ("bf.npy", npy_bytes(bits, "<b2")),
                   *sparse_members("c", csr), *sparse_members("r", rsp),
                   ("scalar.npy", npy_bytes(np.array(3, "<i8")))])
    path = tmp_path / "model-0000.params"
    path.write_bytes(raw)
    pf = P.load_with_info(path)
    got = pf.data()
    assert pf.format == "npz" and list(got) == ["arg:w", "bf", "c", "r", "scalar"]
    np.testing.assert_array_equal(got["arg:w"], w)
    assert got["bf"].dtype == np.float32 and got["bf"].tolist() == [1.5, -2.0]
    assert P.load(path, bfloat16="raw")["bf"].tolist() == bits.tolist()
    assert [i.flag for i in pf.infos] == [0, 12, 0, 1, 6]
    np.testing.assert_array_equal(got["c"].todense(), csr.todense())
    np.testing.assert_array_equal(got["r"].todense(), rsp.todense())
    assert got["scalar"].shape == () and got["scalar"] == 3
    assert not got["arg:w"].flags.writeable  # stored members are views of the mapping


def test_mxnet2_npy_single_array_and_unnamed_sparse():
    bits = dtypes.float32_to_bfloat16(np.array([[0.5], [4.0]], "f4"))
    got = P.load(npy_bytes(bits, "<b2"))
    assert isinstance(got, list) and got[0].tolist() == [[0.5], [4.0]]
    sp = SparseArray.from_dense(np.array([[0, 1.0]], "f4"), "csr")
    got = P.load(mx2_npz(sparse_members("", sp)))
    assert list(got) == [""] and got[""].todense().tolist() == [[0, 1.0]]


@pytest.mark.parametrize("compressed", [False, True])
def test_numpy_savez_files(compressed):
    buf = io.BytesIO()
    arrays = {"a": np.arange(4, dtype="i4"), "b": np.asfortranarray(np.ones((2, 3), ">f8"))}
    (np.savez_compressed if compressed else np.savez)(buf, **arrays)
    got = P.load(buf.getvalue())
    assert list(got) == ["a", "b"] and got["b"].dtype == np.float64
    for k, v in arrays.items():
        np.testing.assert_array_equal(got[k], v)


BAD_MX2 = [
    (b"PK\x03\x04" + b"\x00" * 40, "not a readable ZIP"),
    (npy_bytes(np.zeros(1, "f4"), header_override="{'descr': '|O', 'fortran_order': False, "
               "'shape': (1,), }"), "no MXNet type flag"),
    (npy_bytes(np.zeros(1, "f4"), header_override="__import__('os')"), "unreadable NPY header"),
    (npy_bytes(np.zeros(1, "f4"), header_override="{'descr': '<f4', 'fortran_order': False, "
               "'shape': (1000000,), }"), "needs 4000000 bytes"),
    (npy_bytes(np.zeros(1, "f4"), header_override="{'descr': '<f4', 'fortran_order': 0, "
               "'shape': (-1,), }"), "non-negative ints"),
    (b"\x93NUMPY\x07\x00", "NPY format version 7"),
    (mx2_npz(sparse_members("c", SparseArray.from_dense(np.eye(2, dtype="f4"), "csr"))[:4]
             + [("c/format.npy", format_npy("bsr"))]), "format 'bsr'"),
]


@pytest.mark.parametrize("raw,fragment", BAD_MX2, ids=[f for _, f in BAD_MX2])
def test_malformed_mxnet2_files(raw, fragment):
    with pytest.raises(FormatError, match=fragment):
        P.load(raw)


def test_paramsfile_data_keeps_last_duplicate_name():
    raw = container([dense_v2(ONE), dense_v2(ONE * 2)], ["w", "w"])
    assert P.load(raw)["w"].tolist() == [2.0, 4.0]
    pf = P.load_with_info(raw)
    assert isinstance(pf, ParamsFile) and pf.names == ["w", "w"]
