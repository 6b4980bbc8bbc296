"""Bad input to the optimizers: unknown names and arguments, crafted ``.states`` pickles (which
must never run code), bad fused-op calls and scheduler arguments."""

from __future__ import annotations

import os
import pickle
import subprocess

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import DTypeError, FormatError, GluonportError, OpAttributeError, ShapeError


def test_unknown_optimizer_name():
    with pytest.raises(GluonportError, match="Cannot find optimizer nosuch.*sgd") as err:
        mx.optimizer.create("nosuch")
    assert isinstance(err.value, ValueError)  # what MXNet raises


def test_unknown_optimizer_argument():
    with pytest.raises(GluonportError, match="momentun"):
        mx.optimizer.create("sgd", momentun=0.9)
    with pytest.raises(GluonportError, match="param_idx2name"):
        mx.optimizer.SGD(param_idx2name=[1, 2])


def test_create_is_case_insensitive_and_register_works():
    assert type(mx.optimizer.create("AdaM")).__name__ == "Adam"

    @mx.optimizer.register
    class MyOpt(mx.optimizer.Optimizer):
        def update(self, index, weight, grad, state):
            weight[:] = weight - grad

    opt = mx.optimizer.Optimizer.create_optimizer("myopt", learning_rate=0.5)
    assert isinstance(opt, MyOpt) and opt.lr == 0.5
    w = mx.nd.ones((2,))
    mx.optimizer.get_updater(opt)(0, mx.nd.ones((2,)), w)
    np.testing.assert_array_equal(w.asnumpy(), [0, 0])


class _Reduce:
    def __init__(self, fn, args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args


def _crafted(tmp_path):
    marker = str(tmp_path / "pwned")
    nested = (b"\x80\x02cbuiltins\ngetattr\n(cbuiltins\n__import__\n(X\x02\x00\x00\x00os"
              b"tRX\x06\x00\x00\x00systemtR(X" + len(f"touch {marker}").to_bytes(4, "little")
              + f"touch {marker}".encode() + b"tR.")
    return marker, {
        "os.system": pickle.dumps(_Reduce(os.system, (f"touch {marker}",)), protocol=2),
        "builtins.eval": pickle.dumps(
            _Reduce(eval, (f"open({marker!r}, 'w').write('x')",)), protocol=4),
        "subprocess.Popen": pickle.dumps(_Reduce(subprocess.Popen, (["touch", marker],))),
        "nested reduce": nested,
        "states then a payload": pickle.dumps(({0: None}, _Reduce(os.system, ("true",)))),
    }


def test_crafted_pickles_are_refused_and_run_nothing(tmp_path):
    marker, cases = _crafted(tmp_path)
    updater = mx.optimizer.get_updater(mx.optimizer.create("sgd"))
    for what, blob in cases.items():
        with pytest.raises(FormatError, match="refusing global") as err:
            updater.set_states(blob)
        assert "nothing was run" in str(err.value), what
        assert not os.path.exists(marker), f"{what}: the payload ran"
    assert updater.states == {}


@pytest.mark.parametrize("blob, match", [
    (b"", "not an optimizer states pickle"),
    (b"PK\x03\x04 a zip file, not a pickle", "not an optimizer states pickle"),
    (b"\x80\x04\x95\x10\x00\x00", "not a valid optimizer states pickle"),
    (pickle.dumps([1, 2, 3]), "expected a dict"),
    (pickle.dumps({0: {1, 2}}), "unexpected set"),
    (pickle.dumps(({}, 3)), "not an optimizer"),
])
def test_malformed_states(blob, match):
    updater = mx.optimizer.get_updater(mx.optimizer.create("sgd"))
    with pytest.raises(FormatError, match=match):
        updater.set_states(blob)


def _states_with_handle(handle: bytes) -> bytes:
    """``{0: NDArray}`` pickled as MXNet does, with the given handle bytes."""
    assert len(handle) < 256
    return (b"\x80\x04}K\x00\x8c\x15mxnet.ndarray.ndarray\x8c\x07NDArray\x93)\x81}"
            b"\x8c\x06handleC" + bytes([len(handle)]) + handle + b"sbs.")


def _handle(shape, values: bytes, flag=0) -> bytes:
    import struct

    return (struct.pack("<Ii", 0xF993FAC9, 0) + struct.pack(f"<i{len(shape)}q", len(shape),
                                                            *shape)
            + struct.pack("<iii", 1, 0, flag) + values)


def test_ndarray_handles():
    updater = mx.optimizer.get_updater(mx.optimizer.create("sgd"))
    updater.set_states(_states_with_handle(_handle((2,), np.float32([1, 2]).tobytes())))
    np.testing.assert_array_equal(updater.states[0].asnumpy(), [1, 2])
    for bad in (_handle((10**6, 10**6), b""),  # 10^12 elements claimed: refused, no allocation
                _handle((3,), b"\x00" * 5),      # truncated data
                b"\x01\x02\x03",                 # not an NDArray record
                _handle((2,), np.float32([1, 2]).tobytes(), flag=99)):  # unknown dtype flag
        with pytest.raises(FormatError):
            updater.set_states(_states_with_handle(bad))


def test_non_bytes_states():
    updater = mx.optimizer.get_updater(mx.optimizer.create("sgd"))
    with pytest.raises(FormatError, match="must be bytes"):
        updater.set_states({0: None})


def test_fused_op_bad_inputs():
    w, g = mx.nd.ones((2, 3)), mx.nd.ones((3, 2))
    with pytest.raises(ShapeError, match="grad"):
        mx.nd.sgd_update(w, g, lr=0.1)
    with pytest.raises(OpAttributeError, match="lr"):
        mx.nd.sgd_update(w, w)
    with pytest.raises(OpAttributeError, match="momentun"):
        mx.nd.sgd_mom_update(w, w, w, lr=0.1, momentun=0.9)
    with pytest.raises(DTypeError, match="weight32"):
        mx.nd.mp_sgd_update(w.astype("float16"), w.astype("float16"), w.astype("float16"),
                            lr=0.1)
    with pytest.raises(GluonportError, match="grad_1"):
        mx.nd.multi_sgd_update(w, w, w, lrs=(0.1, 0.1), wds=(0, 0), num_weights=2)
    with pytest.raises(OpAttributeError, match="lrs has 1 values for 2 tensors"):
        mx.nd.multi_sgd_update(w, w, w, w, lrs=(0.1,), wds=(0, 0), num_weights=2)
    with pytest.raises(ShapeError, match="rescale_grad"):
        mx.nd.contrib.adamw_update(w, w, w, w, mx.nd.ones((2,)), lr=0.1, eta=1.0)


def test_states_are_aux_inputs_like_mxnet():
    """MXNet lists an update op's mutated inputs (FMutateInputs) as auxiliary states."""
    s = mx.sym.sgd_mom_update(weight=mx.sym.var("w"), grad=mx.sym.var("g"),
                              mom=mx.sym.var("m"), lr=0.1)
    assert s.list_arguments() == ["w", "g"] and s.list_auxiliary_states() == ["m"]
    s = mx.sym.multi_mp_sgd_update(*[mx.sym.var(n) for n in ("w0", "g0", "c0", "w1", "g1",
                                                             "c1")],
                                   lrs=(0.1, 0.1), wds=(0, 0), num_weights=2)
    assert s.list_auxiliary_states() == ["c0", "c1"]


def test_update_writes_states_in_place():
    w, g, m = mx.nd.ones((4,)), mx.nd.ones((4,)), mx.nd.zeros((4,))
    out = mx.nd.sgd_mom_update(w, g, m, lr=0.5, momentum=0.9)
    np.testing.assert_array_equal(m.asnumpy(), -0.5)  # the state changed
    np.testing.assert_array_equal(w.asnumpy(), 1.0)  # no out=: the weight did not
    np.testing.assert_array_equal(out.asnumpy(), 0.5)


@pytest.mark.parametrize("make, match", [
    (lambda: mx.lr_scheduler.FactorScheduler(step=0), "greater or equal than 1"),
    (lambda: mx.lr_scheduler.FactorScheduler(step=2, factor=2), "no more than 1"),
    (lambda: mx.lr_scheduler.MultiFactorScheduler(step=[5, 3]), "increasing"),
    (lambda: mx.lr_scheduler.MultiFactorScheduler(step=4), "non-empty list"),
    (lambda: mx.lr_scheduler.PolyScheduler(max_update=0), "strictly positive"),
    (lambda: mx.lr_scheduler.CosineScheduler(max_update=10, warmup_mode="cubic"),
     "linear and constant"),
    (lambda: mx.lr_scheduler.CosineScheduler(max_update=10, warmup_begin_lr=1.0),
     "higher than warmup_begin_lr"),
])
def test_scheduler_bad_arguments(make, match):
    with pytest.raises(GluonportError, match=match) as err:
        make()
    assert isinstance(err.value, ValueError)


def test_optimizer_with_scheduler_and_mults():
    sched = mx.lr_scheduler.FactorScheduler(step=1, factor=0.5, base_lr=1.0)
    opt = mx.optimizer.create("sgd", lr_scheduler=sched, param_idx2name={0: "a_weight",
                                                                         1: "a_bias"}, wd=0.1)
    opt.set_lr_mult({"a_weight": 0.5})
    assert opt._get_wds([0, 1]) == [0.1, 0.0]  # names not ending in _weight/_gamma: no decay
    opt.num_update = 3
    assert opt._get_lrs([0, 1]) == [0.125, 0.25]
    with pytest.raises(UserWarning):
        opt.set_learning_rate(0.1)


def test_load_states_file(tmp_path):
    u = mx.optimizer.get_updater(mx.optimizer.create("adam"))
    u(0, mx.nd.ones((3,)), mx.nd.ones((3,)))
    path = tmp_path / "model.states"
    path.write_bytes(u.get_states(dump_optimizer=True))
    states, opt = mx.optimizer.load_states(str(path))
    assert type(opt).__name__ == "Adam" and set(states) == {0}
    with pytest.raises(FormatError, match="no such optimizer states file"):
        mx.optimizer.load_states(str(tmp_path / "missing.states"))
    with pytest.raises(FormatError, match="is a folder"):
        mx.optimizer.load_states(str(tmp_path))
    marker, cases = _crafted(tmp_path)
    bad = tmp_path / "bad.states"
    bad.write_bytes(cases["os.system"])
    with pytest.raises(FormatError, match="bad.states.*refusing global"):
        mx.optimizer.load_states(str(bad))
    assert not os.path.exists(marker)


def test_shared_and_deep_structures_are_cheap():
    import time

    a: list = [None]
    for _ in range(30):  # 2**30 paths through 30 shared lists
        a = [a, a]
    updater = mx.optimizer.get_updater(mx.optimizer.create("sgd"))
    start = time.perf_counter()
    updater.set_states(pickle.dumps({0: a}))
    assert time.perf_counter() - start < 5
    for _ in range(10):
        a = [a]
    with pytest.raises(FormatError, match="nested too deeply"):
        updater.set_states(pickle.dumps({0: a}))
