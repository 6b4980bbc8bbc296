"""Request/response encoding of served models: JSON, .npy, .npz; every malformed body, missing
input, wrong dtype or shape and oversized request is a GluonportError mapped to a 4xx."""

from __future__ import annotations

import io
import json
import random
import zipfile

import numpy as np
import pytest

from gluonport.errors import (
    ArgumentError,
    DTypeError,
    FormatError,
    GluonportError,
    ResourceLimitError,
    ShapeError,
)
from gluonport.serve import TensorSpec, decode_request, encode_response, http_status
from gluonport.serve._codec import NPY, NPZ, split_batch

IMG = [TensorSpec("data", np.dtype(np.float32), (-1, 1, 2, 2))]
TWO = [TensorSpec("a", np.dtype(np.float32), (-1, 3)),
       TensorSpec("ids", np.dtype(np.int64), (-1, 2))]


def _npy(a) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


def _npz(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def _json(doc) -> bytes:
    return json.dumps(doc).encode()


def test_json_round_trip_with_and_without_dtype():
    x = np.arange(8, dtype=np.float32).reshape(2, 1, 2, 2)
    for value in (x.tolist(), {"data": x.tolist(), "dtype": "float32"},
                  {"data": x.tolist(), "dtype": "float32", "shape": [2, 1, 2, 2]}):
        arrays, enc = decode_request(_json({"inputs": {"data": value}}), "application/json",
                                     IMG, batched=True)
        assert enc == "application/json"
        assert arrays["data"].dtype == np.float32
        np.testing.assert_array_equal(arrays["data"], x)
    body, ctype = encode_response({"y": x * 2}, enc)
    out = json.loads(body)["outputs"]["y"]
    assert ctype == "application/json" and out["dtype"] == "float32"
    assert out["shape"] == [2, 1, 2, 2]
    np.testing.assert_array_equal(np.asarray(out["data"], np.float32), x * 2)


def test_npy_and_npz_round_trip_and_sniffing():
    x = np.random.default_rng(0).standard_normal((3, 1, 2, 2)).astype(np.float32)
    for ctype in (NPY, None, "application/octet-stream"):
        arrays, enc = decode_request(_npy(x), ctype, IMG)
        assert enc == NPY
        np.testing.assert_array_equal(arrays["data"], x)
    fortran = np.asfortranarray(x)
    np.testing.assert_array_equal(decode_request(_npy(fortran), NPY, IMG)[0]["data"], x)
    big_endian = x.astype(">f4")
    np.testing.assert_array_equal(decode_request(_npy(big_endian), NPY, IMG)[0]["data"], x)
    a = np.ones((2, 3), np.float32)
    ids = np.array([[1, 2], [3, 4]], np.int64)
    for ctype in (NPZ, None):
        arrays, enc = decode_request(_npz(a=a, ids=ids), ctype, TWO, batched=True)
        assert enc == NPZ
        np.testing.assert_array_equal(arrays["ids"], ids)
    body, ctype = encode_response({"y": x}, NPY)
    assert ctype == NPY
    np.testing.assert_array_equal(np.load(io.BytesIO(body)), x)
    body, ctype = encode_response({"y": x, "z": ids}, NPY)  # two outputs: an .npz
    assert ctype == NPZ
    with np.load(io.BytesIO(body)) as z:
        np.testing.assert_array_equal(z["z"], ids)


ONE = [[[[0.0, 1.0], [2.0, 3.0]]]]


@pytest.mark.parametrize("body, ctype, specs, kind, words", [
    (b"{", "application/json", IMG, FormatError, "not valid JSON"),
    (b"[1, 2]", "application/json", IMG, FormatError, '{"inputs"'),
    (b'{"inputs": [1]}', "application/json", IMG, FormatError, '{"inputs"'),
    (b"[" * 100000 + b"]" * 100000, "application/json", IMG, FormatError, "JSON"),
    (_json({"inputs": {}}), "application/json", IMG, ArgumentError, "missing ['data']"),
    (_json({"inputs": {"data": ONE, "x": 1}}), None, IMG, ArgumentError, "'x' is not an input"),
    (_json({"inputs": {"data": {"dtype": "float32"}}}), None, IMG, FormatError, '"data"'),
    (_json({"inputs": {"data": {"data": ONE, "dtyp": "f"}}}), None, IMG, FormatError,
     "unknown keys"),
    (_json({"inputs": {"data": {"data": ONE, "dtype": "float64"}}}), None, IMG, DTypeError,
     "float64; the model takes float32"),
    (_json({"inputs": {"data": {"data": ONE, "dtype": "nonsense"}}}), None, IMG, DTypeError,
     "not a numpy dtype"),
    (_json({"inputs": {"data": {"data": ONE, "dtype": 3}}}), None, IMG, DTypeError,
     "not a numpy dtype"),
    (_json({"inputs": {"data": [[[["a", "b"], ["c", "d"]]]]}}), None, IMG, DTypeError,
     "numbers only"),
    (_json({"inputs": {"data": [[[[True, 1.0], [2.0, None]]]]}}), None, IMG, DTypeError,
     "numbers only"),
    (_json({"inputs": {"data": [[[[1.0, 2.0], [3.0]]]]}}), None, IMG, ShapeError,
     "rectangular"),
    (_json({"inputs": {"data": [[[[True, False], [True, True]]]]}}), None, IMG, DTypeError,
     "bool"),
    (_json({"inputs": {"data": [[[1.0, 2.0], [3.0, 4.0]]]}}), None, IMG, ShapeError,
     "shape (1, 2, 2); the model takes (N, 1, 2, 2)"),
    (_json({"inputs": {"data": [[[[1.0, 2.0, 3.0], [3.0, 4.0, 5.0]]]]}}), None, IMG,
     ShapeError, "(1, 1, 2, 3)"),
    (_json({"inputs": {"data": []}}), None, IMG, ShapeError, "shape (0,)"),
    (_json({"inputs": {"data": {"data": ONE, "shape": [2, 1, 2, 2]}}}), None, IMG, ShapeError,
     "declared"),
    (_json({"inputs": {"a": [[1.0, 2.0, 3.0]], "ids": [[1.5, 2.0]]}}), None, TWO, DTypeError,
     "float64 values; the model takes int64"),
    (_json({"inputs": {"a": [[1.0, 2.0, 3.0]], "ids": [[2 ** 70, 1]]}}), None, TWO,
     DTypeError, "numbers only"),
    (_json({"inputs": {"a": [[1.0, 2.0, 3.0]], "ids": [[1, 2], [3, 4]]}}), None, TWO,
     ShapeError, "different batch sizes"),
    (_npy(np.zeros((1, 1, 2, 2), np.float64)), NPY, IMG, DTypeError, "float64"),
    (_npy(np.zeros((1, 1, 2, 2), np.float32))[:-1], NPY, IMG, FormatError, "bytes of data"),
    (_npy(np.zeros((1, 1, 2, 2), np.float32)) + b"\0", NPY, IMG, FormatError, "bytes of data"),
    (b"\x93NUMPY\x01\x00\x76\x00{'descr': '<f4', 'fortran_order': False, 'shape': "
     b"(100000, 100000, 100000), }" + b" " * 60 + b"\n", NPY, IMG, FormatError, "bytes of data"),
    (_npy(np.array(["ab"])), NPY, IMG, FormatError, "not a numeric dtype"),
    (b"\x93NUMPY\x09\x00", NPY, IMG, FormatError, "not a valid .npy"),
    (b"garbage", NPY, IMG, FormatError, "not a valid .npy"),
    (_npy(np.zeros((1, 3), np.float32)), NPY, TWO, ArgumentError, "one array"),
    (b"PK\x03\x04garbage", NPZ, TWO, FormatError, "not a valid .npz"),
    (_npz(a=np.zeros((1, 3), np.float32)), NPZ, TWO, ArgumentError, "missing ['ids']"),
    (_npz(a=np.zeros((1, 3), np.float32), b=np.zeros(1)), NPZ, TWO, ArgumentError,
     "'b.npy' is not an input"),
    (b"x", "image/png", IMG, FormatError, "not served"),
])
def test_bad_requests(body, ctype, specs, kind, words):
    with pytest.raises(kind) as info:
        decode_request(body, ctype, specs, batched=True)
    assert words in str(info.value)
    assert http_status(info.value) == 400


def test_oversized_requests_are_413_before_parsing():
    x = np.zeros((4, 1, 2, 2), np.float32)
    body = _npy(x)
    with pytest.raises(ResourceLimitError, match="over the limit") as info:
        decode_request(body, NPY, IMG, max_bytes=len(body) - 1)
    assert http_status(info.value) == 413
    decode_request(body, NPY, IMG, max_bytes=len(body))
    # a small .npz whose member unpacks to more than the limit (a zip bomb)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("data.npy", _npy(np.zeros((1000, 1, 2, 2), np.float32)))
    bomb = buf.getvalue()
    with pytest.raises(ResourceLimitError, match="unpack"):
        decode_request(bomb, NPZ, IMG, max_bytes=len(bomb) * 4)


def test_npz_member_size_header_that_lies():
    good = _npz(data=np.zeros((1, 1, 2, 2), np.float32))
    # patch the central directory's uncompressed size of the stored member
    with zipfile.ZipFile(io.BytesIO(good)) as zf:
        size = zf.infolist()[0].file_size
    lied = good.replace(size.to_bytes(4, "little"), (size - 4).to_bytes(4, "little"))
    with pytest.raises(FormatError):
        decode_request(lied, NPZ, IMG)


def test_fixed_dims_and_unbatched():
    fixed = [TensorSpec("data", np.dtype(np.float32), (2, 3))]
    decode_request(_npy(np.zeros((2, 3), np.float32)), NPY, fixed)
    with pytest.raises(ShapeError, match=r"takes \(2, 3\)"):
        decode_request(_npy(np.zeros((1, 3), np.float32)), NPY, fixed)


def test_split_batch():
    outs = [np.arange(6).reshape(6, 1), np.arange(12).reshape(6, 2)]
    parts = split_batch(outs, [1, 3, 2])
    assert [p[0].shape[0] for p in parts] == [1, 3, 2]
    np.testing.assert_array_equal(parts[1][1], outs[1][1:4])


def test_fuzzed_bodies_never_raise_anything_but_request_errors():
    """Random byte flips and truncations of valid JSON, .npy and .npz bodies: a 4xx error or a
    correct decode, never another exception (seeded, 600 bodies)."""
    rng = random.Random(16)
    x = np.arange(8, dtype=np.float32).reshape(2, 1, 2, 2)
    seeds = [(_json({"inputs": {"data": x.tolist()}}), "application/json"),
             (_npy(x), NPY), (_npz(data=x), NPZ)]
    for i in range(600):
        body, ctype = seeds[i % 3]
        data = bytearray(body)
        for _ in range(rng.randint(1, 4)):
            if rng.random() < 0.3 and len(data) > 1:
                del data[rng.randrange(len(data)):]
            elif data:
                data[rng.randrange(len(data))] = rng.randrange(256)
        try:
            arrays, _ = decode_request(bytes(data), ctype, IMG, batched=True, max_bytes=4096)
        except GluonportError as exc:
            assert http_status(exc) in (400, 413), exc
        else:
            assert arrays["data"].dtype == np.float32 and arrays["data"].shape[1:] == (1, 2, 2)
