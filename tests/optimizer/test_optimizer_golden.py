"""Optimizers, fused update ops, lr schedulers and ``.states`` pickles against MXNet 1.9.1.

``tests/golden/optimizer/optimizer_script.py`` is MXNet code; ``gen_optimizer.py`` ran it in MXNet
1.9.1 and saved every array it returned (``optimizer_golden.npz``). Here the same text runs with
``import gluonport as mx`` (tests/_ported.py) and each array must match.

Tolerance: float32 values within 4 ulp of MXNet's, float16 within 1 float16 ulp; near zero
(cancellation) the ulp is that of the array's largest magnitude. Nearly all values are bit-exact;
LAMB and FTML differ by 1-2 ulp after a few steps (``powf`` and summation order).
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

from tests._ported import load_ported

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "golden",
                    "optimizer")


@pytest.fixture(scope="module")
def script():
    return load_ported(os.path.join(HERE, "optimizer_script.py"))


@pytest.fixture(scope="module")
def golden():
    with np.load(os.path.join(HERE, "optimizer_golden.npz")) as z:
        return {k: z[k] for k in z.files}


def assert_close(ours: np.ndarray, ref: np.ndarray, what: str, ulps: int = 4) -> None:
    ours = np.asarray(ours)
    assert ours.shape == ref.shape, f"{what}: shape {ours.shape} vs MXNet {ref.shape}"
    assert ours.dtype == ref.dtype, f"{what}: dtype {ours.dtype} vs MXNet {ref.dtype}"
    if ref.dtype.kind != "f":
        np.testing.assert_array_equal(ours, ref, err_msg=what)
        return
    n = 1 if ref.dtype == np.float16 else ulps
    big = np.nanmax(np.abs(ref)) if ref.size and not np.isnan(ref).all() else 0
    tol = n * np.maximum(np.spacing(np.abs(ref)), np.spacing(ref.dtype.type(big)) / 4)
    diff = np.abs(ours.astype(np.float64) - ref.astype(np.float64))
    bad = ~(diff <= tol.astype(np.float64)) & ~(np.isnan(ours) & np.isnan(ref))
    assert not bad.any(), (f"{what}: {int(bad.sum())} values differ from MXNet, worst at "
                           f"{np.unravel_index(np.argmax(np.where(bad, diff, 0)), ref.shape)}: "
                           f"ours {ours[bad][:3]}, MXNet {ref[bad][:3]}")


def _run(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _check_prefix(ours: dict, golden: dict, prefix: str) -> None:
    keys = [k for k in golden if k.startswith(prefix)]
    assert keys, prefix
    assert sorted(k for k in ours if k.startswith(prefix)) == sorted(keys)
    for k in keys:
        assert_close(ours[k], golden[k], k)


def _optimizer_ids():
    import ast

    with open(os.path.join(HERE, "optimizer_script.py"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and node.targets[0].id == "OPTIMIZERS":
            return [f"{k}-{ast.literal_eval(e)[0]}" for k, e in enumerate(node.value.elts)]
    raise AssertionError("OPTIMIZERS not found")


@pytest.mark.parametrize("case", _optimizer_ids())
def test_optimizer_matches_mxnet(script, golden, case):
    k = int(case.split("-")[0])
    name, kw = script.OPTIMIZERS[k]
    ours = {f"opt{k}_{key}": v for key, v in _run(script.run_optimizer, name, kw).items()}
    _check_prefix(ours, golden, f"opt{k}_")


def test_fused_ops_match_mxnet(script, golden):
    ours = _run(script.run_fused)
    assert sorted(ours) == sorted(k for k in golden if not k.startswith(("opt", "sched",
                                                                          "states", "x_")))
    for k, v in ours.items():
        assert_close(v, golden[k], k)


def test_more_fused_ops_match_mxnet(script, golden):
    """nd.contrib AdamW/LAMB wrappers (AdamW skipped for rescale_grad 0 and inf), GroupAdaGrad,
    float16 kernels, NAG without ``out=`` and the multi master-weight SGD."""
    ours = {"x_" + k: v for k, v in _run(script.run_fused_extra).items()}
    assert sorted(ours) == sorted(k for k in golden if k.startswith("x_"))
    for k, v in ours.items():
        assert_close(v, golden[k], k)


def test_schedulers_match_mxnet(script, golden):
    ours = _run(script.run_schedulers)
    for k, v in ours.items():
        np.testing.assert_allclose(v, golden[k], rtol=1e-12, atol=0, err_msg=k)
    assert len(ours) == len([k for k in golden if k.startswith("sched")])


@pytest.mark.parametrize("slot", range(6))
def test_mxnet_states_load_and_continue(script, golden, slot):
    """MXNet's get_states(dump_optimizer=True) bytes: set_states, then two more steps give
    MXNet's steps 3 and 4; without the optimizer the states equal MXNet's after step 2."""
    import gluonport as mx

    k = script.STATE_CASES[slot]
    name, kw = script.OPTIMIZERS[k]
    opt, dtype = _run(script._make, name, kw)
    weights = [mx.nd.array(golden[f"states{slot}_w{i}"], dtype=dtype)
               for i in range(len(script.SHAPES))]
    updater = mx.optimizer.get_updater(mx.optimizer.create("sgd"))
    updater.set_states(golden[f"states{slot}_1"].tobytes())
    assert type(updater.optimizer).__name__.lower() == name
    ours = _run(script.run_optimizer, name, kw, steps=2, updater=updater, weights=weights,
                first=3)
    for key, v in ours.items():
        assert_close(v, golden[f"opt{k}_{key}"], f"{name} after set_states: {key}")
    plain = mx.optimizer.get_updater(opt)
    plain.set_states(golden[f"states{slot}_0"].tobytes())
    for i in range(len(script.SHAPES)):
        flat = script._flat(plain.states[i])
        for j, a in enumerate(flat):
            assert_close(a, golden[f"opt{k}_step2_s{i}_{j}"], f"{name} state {i}.{j}")


@pytest.mark.parametrize("slot", range(6))
def test_our_states_round_trip(script, golden, slot):
    """get_states from gluonport loads back (both forms) and continues identically."""
    import gluonport as mx

    k = script.STATE_CASES[slot]
    name, kw = script.OPTIMIZERS[k]
    updater = mx.optimizer.get_updater(mx.optimizer.create("sgd"))
    updater.set_states(golden[f"states{slot}_1"].tobytes())
    blob = updater.get_states(dump_optimizer=True)
    again = mx.optimizer.get_updater(mx.optimizer.create("adam"))
    again.set_states(blob)
    assert type(again.optimizer) is type(updater.optimizer)
    assert again.optimizer.num_update == updater.optimizer.num_update
    for i in updater.states:
        for a, b in zip(script._flat(updater.states[i]), script._flat(again.states[i])):
            np.testing.assert_array_equal(a, b)
    only = mx.optimizer.get_updater(mx.optimizer.create("sgd"))
    only.set_states(updater.get_states(dump_optimizer=False))
    assert set(only.states) == set(updater.states)


def test_our_pickles_use_mxnets_layout(golden):
    """Up to the first NDArray, our get_states pickle has MXNet's opcodes and values (the rest
    differs only in memoization): NDArray(None) by REDUCE, then {'handle': bytearray(...)} by
    BUILD, which is what MXNet's unpickler needs. (Checked by hand once: MXNet 1.9.1 loads
    gluonport's pickles of all six STATE_CASES and continues to the same weights.)"""
    import pickletools

    import gluonport as mx

    def first_ndarray(blob: bytes) -> list:
        ops = []
        for op, arg, _ in pickletools.genops(blob):
            if op.name in ("FRAME", "MEMOIZE", "PROTO"):
                continue
            ops.append((op.name, arg))
            if op.name == "BUILD":
                return ops
        raise AssertionError("no BUILD")

    mxnet_blob = golden["states0_0"].tobytes()
    updater = mx.optimizer.get_updater(mx.optimizer.create("sgd"))
    updater.set_states(mxnet_blob)
    assert first_ndarray(updater.get_states()) == first_ndarray(mxnet_blob)
