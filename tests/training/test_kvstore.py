"""``mx.kv`` against MXNet 1.9.1: init/push/pull/pushpull/broadcast with int and str keys and
lists of keys over several contexts, an optimizer on the store with its states saved and loaded,
``row_sparse_pull`` (gluonport's dense fallback against MXNet's row_sparse result), and errors.

The values come from ``tests/golden/training/trainer_script.py`` (``kvstore_cases``), run in MXNet
1.9.1 by ``gen_trainer.py`` and here through tests/_ported.py (the ``ours`` fixture of
test_trainer.py's module is rebuilt here). Tolerance: sums of two values are exact; sums of
three may differ from MXNet's in the last bit (4 ulp allowed, as in test_trainer.py).
"""

from __future__ import annotations

import json
import os
import warnings

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import GluonportError
from gluonport.kvstore import KVStore, KVStoreError
from tests._ported import load_ported
from tests.training.test_trainer import assert_close

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "golden",
                    "training")


@pytest.fixture(scope="module")
def results():
    script = load_ported(os.path.join(HERE, "trainer_script.py"))
    out, msgs = {}, {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        script.kvstore_cases(out, msgs, sparse=False)
    return out, msgs


@pytest.fixture(scope="module")
def golden():
    with np.load(os.path.join(HERE, "trainer_golden.npz")) as z:
        arrays = {k: z[k] for k in z.files if k.startswith("kv/")}
    with open(os.path.join(HERE, "trainer_golden.json"), encoding="utf-8") as f:
        return arrays, {k: v for k, v in json.load(f).items() if k.startswith("kv")}


@pytest.mark.parametrize("kind", ["local", "device"])
def test_store_matches_mxnet(kind, results, golden):
    ours, _ = results
    ref, _ = golden
    keys = [k for k in ref if k.startswith(f"kv/{kind}/")]
    assert len(keys) == 10
    for k in keys:
        assert_close(ours[k], ref[k], k)


def test_row_sparse_pull_dense_fallback(golden):
    """The rows named by row_ids (repeats, any order) and zeros elsewhere: what MXNet's
    row_sparse output holds."""
    ref, _ = golden
    kv = mx.kv.create("local")
    kv.init("emb", mx.nd.array(ref["kv/row_sparse_value"]))
    out = mx.nd.ones((4, 3))
    kv.row_sparse_pull("emb", out=out, row_ids=mx.nd.array([3, 0, 3], dtype="int64"))
    np.testing.assert_array_equal(out.asnumpy(), ref["kv/row_sparse_pull"])
    outs = [mx.nd.ones((4, 3), ctx=mx.cpu(i)) for i in range(2)]
    kv.row_sparse_pull("emb", out=outs, row_ids=mx.nd.array([0, 3]))
    for o in outs:
        np.testing.assert_array_equal(o.asnumpy(), ref["kv/row_sparse_pull"])
    with pytest.raises(KVStoreError, match="row_ids must be integers"):
        kv.row_sparse_pull("emb", out=out, row_ids=mx.nd.array([4]))


def test_messages(results, golden):
    _, msgs = results
    _, ref = golden
    assert set(msgs) == set(ref)
    for key, (kind, text) in ref.items():
        assert msgs[key][0] != "ok", key
        if kind == "MXNetError":
            assert "Mixed key types are not allowed" in msgs[key][1]
        else:
            assert msgs[key][1] == text, key


def test_properties_and_names():
    assert mx.kv is mx.kvstore
    kv = mx.kv.create("Device")
    assert (kv.type, kv.rank, kv.num_workers) == ("device", 0, 1)
    assert kv.is_capable("optimizer")
    with pytest.raises(KVStoreError, match="Unknown capability"):
        kv.is_capable("gpu")
    kv._barrier()
    assert isinstance(mx.kv.create(), KVStore) and mx.kv.create().type == "local"
    assert mx.kv.create("teststore").type == "teststore"


@pytest.mark.parametrize("name", ["dist_sync", "dist_device_sync", "dist_async", "horovod",
                                  "nccl"])
def test_distributed_and_nccl_refused(name):
    with pytest.raises(KVStoreError, match="gluonport") as e:
        mx.kv.create(name)
    assert "'device'" in str(e.value)


def test_bad_use():
    kv = mx.kv.create("local")
    with pytest.raises(KVStoreError, match="has not been initialized"):
        kv.push(1, mx.nd.ones((2,)))
    with pytest.raises(KVStoreError, match="has not been initialized"):
        kv.pull(1, out=mx.nd.ones((2,)))
    kv.init(1, mx.nd.ones((2,)))
    with pytest.raises(KVStoreError, match="duplicate init"):
        kv.init(1, mx.nd.ones((2,)))
    with pytest.raises(KVStoreError, match="shape"):
        kv.push(1, mx.nd.ones((3,)))
    with pytest.raises(KVStoreError, match="shape"):
        kv.pull(1, out=mx.nd.ones((3,)))
    with pytest.raises(KVStoreError, match="out is required"):
        kv.pull(1)
    with pytest.raises(GluonportError, match="keys"):
        kv.push(1.5, mx.nd.ones((2,)))
    with pytest.raises(GluonportError, match="NDArray"):
        kv.push(1, np.ones(2))
    with pytest.raises(KVStoreError, match="2 keys"):
        kv.push([1, 2], [mx.nd.ones((2,))])
    with pytest.raises(KVStoreError, match="no optimizer"):
        kv.save_optimizer_states("/nonexistent/x.states")
    with pytest.raises(GluonportError, match="Optimizer"):
        kv.set_optimizer("sgd")
    dev = mx.kv.create("device")
    dev.set_gradient_compression({"type": "none"})
    with pytest.raises(KVStoreError, match="not provided"):
        dev.set_gradient_compression({"type": "2bit", "threshold": 0.5})


def test_push_without_optimizer_replaces_and_with_updater_calls_it():
    kv = mx.kv.create("local")
    kv.init("w", mx.nd.ones((2,)))
    kv.push("w", [mx.nd.array([1.0, 2.0]), mx.nd.array([3.0, 4.0], ctx=mx.cpu(1))])
    out = mx.nd.zeros((2,))
    kv.pull("w", out=out)
    np.testing.assert_array_equal(out.asnumpy(), [4.0, 6.0])
    seen = []

    def updater(key, grad, stored):
        seen.append(key)
        stored[:] = stored + grad * 2

    kv._set_updater(updater)
    kv.push("w", mx.nd.array([1.0, 1.0]))
    kv.pull("w", out=out)
    np.testing.assert_array_equal(out.asnumpy(), [6.0, 8.0])
    assert seen == ["w"]


def test_crafted_optimizer_states_refused(tmp_path):
    import pickle

    kv = mx.kv.create("local")
    kv.set_optimizer(mx.optimizer.SGD())
    marker = tmp_path / "ran"

    class _Touch:
        def __reduce__(self):
            return (open, (str(marker), "w"))
    f = tmp_path / "evil.states"
    f.write_bytes(pickle.dumps({0: _Touch()}))
    with pytest.raises(GluonportError, match="refusing global"):
        kv.load_optimizer_states(str(f))
    assert not marker.exists()
