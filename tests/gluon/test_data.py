"""``gluon.data`` and ``gluon.utils`` against MXNet 1.9.1.

tests/golden/data/data_script.py, written for MXNet, runs here with only its import changed
and must return what it returned in MXNet 1.9.1 (gen_data.py): every DataLoader batch over
ArrayDataset/SimpleDataset/arrays for each last_batch mode (two epochs), transforms, nested
batchify (tuples, lists, scalars, bools), BatchSampler passes, shard/take/filter/sample,
split_data/split_and_load, clip_global_norm, an evaluation loop, pinned batches and the
records of a RecordIO file MXNet wrote. Structures, dtypes, shapes and contexts must be equal;
array values agree within rtol 1e-6 (float32 norms summed in another order; data movement is
exact); errors must be GluonportError subclasses carrying MXNet's message. The rest of the file
checks what the oracle cannot (shuffled orders, no network, corrupt files).
"""

from __future__ import annotations

import doctest
import hashlib
import json
import os
import pickle
import struct

import numpy as np
import pytest

import gluonport as mx
from gluonport import errors
from gluonport.errors import ArgumentError, DTypeError, FormatError, GluonportError, ShapeError
from gluonport.gluon import data as gdata
from gluonport.gluon import utils as gutils
from tests._ported import load_golden, load_ported

GOLDEN = os.path.join(os.path.dirname(os.path.dirname(__file__)), "golden")
HERE = os.path.join(GOLDEN, "data")
RTOL = 1e-6


@pytest.fixture(scope="module")
def results() -> dict:
    return load_ported(os.path.join(HERE, "data_script.py")).run(GOLDEN)


@pytest.fixture(scope="module")
def golden() -> tuple[dict, dict]:
    return load_golden(os.path.join(HERE, "data_golden"))


def _same(got, want, where: str) -> None:
    """JSON values equal, floats within RTOL."""
    if isinstance(want, float) and isinstance(got, (int, float)):
        assert got == pytest.approx(want, rel=RTOL), where
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{where}: {got} != {want}"
        for i, (g, w) in enumerate(zip(got, want)):
            _same(g, w, f"{where}[{i}]")
    elif isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), where
        for k in want:
            _same(got[k], want[k], f"{where}.{k}")
    else:
        assert got == want, f"{where}: {got!r} != {want!r}"


def test_arrays_match_mxnet(results, golden):
    arrays, _ = golden
    assert len(arrays) > 100
    for name, want in arrays.items():
        got = results[name]
        assert (got.dtype, got.shape) == (want.dtype, want.shape), name
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=0, err_msg=name)


def test_structures_match_mxnet(results, golden):
    """Batch nesting, NDArray dtypes/shapes/contexts, sampler outputs, dataset views."""
    _, rest = golden
    assert set(results) == set(golden[0]) | set(rest)
    for name, want in rest.items():
        if name != "errors":
            _same(json.loads(json.dumps(results[name])), want, name)


def test_errors_are_gluonport_errors_with_mxnet_messages(results, golden):
    _, rest = golden
    for case, (mx_type, mx_msg) in rest["errors"].items():
        our_type, our_msg = results["errors"][case]
        cls = getattr(errors, our_type)
        assert issubclass(cls, GluonportError), case
        if mx_type == "ValueError":
            assert issubclass(cls, ValueError), case
        if mx_type in ("ValueError", "TypeError", "AssertionError"):
            assert mx_msg in our_msg, case


@pytest.mark.parametrize("last_batch", ["keep", "discard", "rollover"])
def test_shuffle_is_a_permutation_per_epoch(last_batch):
    np.random.seed(0)
    loader = gdata.DataLoader(np.arange(10), batch_size=4, shuffle=True, last_batch=last_batch)
    seen, orders = [], []
    for _ in range(2):
        order = [int(v) for b in loader for v in b.asnumpy()]
        assert len(order) == len(set(order)) or last_batch == "rollover"
        orders.append(order)
        seen += order
    if last_batch == "keep":
        assert all(sorted(o) == list(range(10)) for o in orders)
    if last_batch == "rollover":  # 10 + 10 samples, 4 per batch: all seen, 20 in 5 batches
        assert sorted(seen) == sorted(list(range(10)) * 2)
    assert orders[0] != list(range(len(orders[0])))  # a shuffle, not the identity
    assert orders[0][:8] != orders[1][:8]


def test_loader_passes_and_reload():
    loader = gdata.DataLoader(gdata.ArrayDataset(np.arange(6.0)), batch_size=4)
    first, second = list(loader), list(loader)
    assert [b.shape for b in first] == [b.shape for b in second] == [(4,), (2,)]
    loader.refresh()
    loader.clean()
    assert len(list(loader)) == 2
    auto = gdata.DataLoader(np.arange(6.0), 4, auto_reload=True, num_workers=3, prefetch=1)
    assert [len(list(auto)) for _ in range(2)] == [2, 2]


def test_batchify_keeps_dtypes_and_recurses():
    batch = gdata.dataloader.default_batchify_fn(
        [(np.float16(1), (True, [1, 2])), (np.float16(2), (False, [3, 4]))])
    assert isinstance(batch, list) and isinstance(batch[1], list)
    assert batch[0].dtype == np.float16 and batch[1][0].dtype == np.bool_
    assert batch[1][1].asnumpy().tolist() == [[1, 2], [3, 4]]
    stacked = gdata.dataloader.default_mp_batchify_fn([mx.nd.ones((2, 3))] * 4)
    assert stacked.shape == (4, 2, 3) and stacked.context == mx.cpu(0)


@pytest.mark.parametrize("samples, error", [
    ([mx.nd.ones((2,)), mx.nd.ones((3,))], ShapeError),
    ([[1, 2], [3]], ShapeError),
    ([np.zeros((2, 2)), np.zeros((2, 3))], ShapeError),
    (["a", "b"], DTypeError),
    ([b"a", b"b"], DTypeError),
    ([object(), object()], DTypeError),
    ([1 + 2j, 3j], DTypeError),
    ([], ArgumentError),
])
def test_batchify_bad_samples(samples, error):
    with pytest.raises(error) as info:
        gdata.dataloader.default_batchify_fn(samples)
    assert "batch" in str(info.value)


@pytest.mark.parametrize("make", [
    lambda: gdata.BatchSampler(gdata.SequentialSampler(4), 0),
    lambda: gdata.BatchSampler(gdata.SequentialSampler(4), 2, last_batch=None),
    lambda: gdata.DataLoader(np.zeros(4), 2, timeout=-1),
    lambda: gdata.SimpleDataset([1]).take(-1),
    lambda: gdata.SimpleDataset([1]).shard(0, -1),
    lambda: gdata.SimpleDataset([1]).shard(2, -1),
    lambda: gutils.split_data(mx.nd.zeros((4,)), 0),
    lambda: gutils.split_and_load(mx.nd.zeros((4,)), []),
    lambda: gutils.download("https://example.com/", retries=0),
    lambda: gutils.download("https://example.com/a.bin", retries=-1),
])
def test_bad_arguments_raise_argument_error(make):
    with pytest.raises(ArgumentError):
        make()


def test_split_data_views_and_copies():
    data = mx.nd.array(np.arange(12).reshape(4, 3))
    head = gutils.split_data(data, 2)[0]
    head[:] = -1  # axis-0 slices write through, as MXNet's
    assert data.asnumpy()[:2].tolist() == [[-1] * 3] * 2
    cols = gutils.split_data(data, 3, batch_axis=1)
    assert [c.shape for c in cols] == [(4, 1)] * 3


# --- RecordIO -------------------------------------------------------------------------------
def _write_rec(tmp_path, body: bytes, idx: str) -> str:
    rec = tmp_path / "bad.rec"
    rec.write_bytes(body)
    (tmp_path / "bad.idx").write_text(idx)
    return str(rec)


def _part(data: bytes, flag: int = 0, magic: int = 0xCED7230A) -> bytes:
    pad = b"\0" * (-len(data) % 4)
    return struct.pack("<II", magic, (flag << 29) | len(data)) + data + pad


@pytest.mark.parametrize("name, body, idx, offset, words", [
    ("bad_magic", _part(b"abcd", magic=0x12345678), "0\t0\n", 0, "magic"),
    ("truncated_data", _part(b"abcdefgh")[:12], "0\t0\n", 0, "truncated"),
    ("truncated_header", _part(b"ab") + b"\x0a\x23", "0\t0\n1\t12\n", 12, "header"),
    ("open_multipart", _part(b"abcd", flag=1), "0\t0\n", 12, "header"),
    ("huge_length", struct.pack("<II", 0xCED7230A, (1 << 29) - 1), "0\t0\n", 0, "truncated"),
    ("bad_idx_line", _part(b"ab"), "0 0\n", None, "line 1"),
])
def test_corrupt_record_files_raise_format_error(tmp_path, name, body, idx, offset, words):
    path = _write_rec(tmp_path, body, idx)
    with pytest.raises(FormatError) as info:
        ds = gdata.RecordFileDataset(path)
        [ds[i] for i in range(len(ds))]
    assert words in str(info.value) and info.value.path is not None, name
    assert info.value.offset == offset, name


def test_record_file_missing_and_pickled(tmp_path):
    with pytest.raises(FormatError, match="no such"):
        gdata.RecordFileDataset(str(tmp_path / "none.rec"))
    (tmp_path / "only.rec").write_bytes(_part(b"x"))
    with pytest.raises(FormatError, match=r"\.idx"):
        gdata.RecordFileDataset(str(tmp_path / "only.rec"))
    ds = gdata.RecordFileDataset(os.path.join(HERE, "records.rec"))
    first = ds[0]
    clone = pickle.loads(pickle.dumps(ds))
    assert clone[0] == first == b"hello" and len(clone) == 7


# --- files ----------------------------------------------------------------------------------
def test_download_uses_existing_files_only(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    url = "https://example.com/models/w.params"
    (tmp_path / "w.params").write_bytes(b"weights")
    sha1 = "0d0d6a5f5a8d4b2a4a76b1a1b5d2bb8e3f3d2f6b"
    good = hashlib.sha1(b"weights").hexdigest()
    assert gutils.download(url) == "w.params"
    assert gutils.download(url, path=str(tmp_path)) == str(tmp_path / "w.params")
    named = gutils.download(url, path=str(tmp_path / "w.params"), sha1_hash=good)
    assert named == str(tmp_path / "w.params")
    for kwargs, words in [({"sha1_hash": sha1}, "SHA-1"), ({"overwrite": True}, "overwrite"),
                          ({"path": str(tmp_path / "sub" / "x.bin")}, "does not exist")]:
        with pytest.raises(GluonportError) as info:
            gutils.download(url, **kwargs)
        assert url in str(info.value) and words in str(info.value), kwargs


def test_check_sha1_and_replace_file(tmp_path):
    src, dst = tmp_path / "a.tmp", tmp_path / "a"
    src.write_bytes(b"abc")
    assert gutils.check_sha1(str(src), "a9993e364706816aba3e25717850c26c9cd0d89d")
    assert not gutils.check_sha1(str(src), "0" * 40)
    gutils.replace_file(str(src), str(dst))
    assert dst.read_bytes() == b"abc" and not src.exists()
    src.write_bytes(b"x")
    with pytest.raises(OSError, match="Please retry"):
        gutils.replace_file(str(src), str(tmp_path / "missing_dir" / "a"))
    assert not src.exists()


@pytest.mark.parametrize("module", [gdata.sampler, gdata.dataset, gdata.dataloader, gutils])
def test_docstring_examples_run(module):
    result = doctest.testmod(module, extraglobs={"nd": mx.nd})
    assert result.failed == 0 and result.attempted > 0
