"""The per-op checks (STYLE.md) that ``tests/ops/_driver.py``'s ``check_op`` runs on each case.

A case table lives in ``tests/ops/cases_<family>.py`` as plain data (no mxnet, no gluonport
imports), so the oracle generator ``tests/golden/ops/gen_ops.py`` (run with MXNet 1.9.1) and the
tests read the same table. Each case is a dict:

    name     unique id, e.g. "conv2d_stride2_pad1"
    op       MXNet op name as called, e.g. "Convolution" or "_contrib_box_nms"
    inputs   list of input specs: {"shape": (2, 3), "dtype": "float32", "low": -1, "high": 1}
             (uniform random, fixed seed) or {"value": [[...]]} (literal)
    attrs    keyword attributes, Python values as a user would pass them to mx.nd.<op>
    rtol, atol  tolerances against MXNet's outputs (default 1e-5, 1e-6)
    compare  optional: "shape" to compare only shapes/dtypes (ties, random ops), or a list of
             output indices to compare
    skip_sym optional reason to skip the symbolic checks (sym and JSON round trip)
    no_import optional reason the case's ONNX export cannot be imported back

The golden npz ``tests/golden/ops/<family>.npz`` holds ``<name>/in<i>`` and ``<name>/out<i>``.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

import gluonport as mx
from gluonport.ndarray import invoke

GOLDEN_DIR = os.path.join(os.path.dirname(__file__), "..", "golden", "ops")


def load_golden(family: str) -> dict[str, dict[str, list[np.ndarray]]]:
    """``{case name: {"inputs": [...], "outputs": [...]}}`` from the family's npz."""
    path = os.path.join(GOLDEN_DIR, f"{family}.npz")
    data = np.load(path)
    cases: dict[str, dict[str, list[np.ndarray]]] = {}
    for key in data.files:
        name, _, slot = key.rpartition("/")
        entry = cases.setdefault(name, {"inputs": [], "outputs": []})
        kind = "inputs" if slot.startswith("in") else "outputs"
        idx = int(slot[2:] if kind == "inputs" else slot[3:])
        lst = entry[kind]
        while len(lst) <= idx:
            lst.append(None)
        lst[idx] = data[key]
    return cases


def _as_list(x: Any) -> list:
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _compare(case: dict, got: list[np.ndarray], want: list[np.ndarray], how: str) -> None:
    rtol, atol = case.get("rtol", 1e-5), case.get("atol", 1e-6)
    sel = case.get("compare")
    idx = sel if isinstance(sel, list) else range(len(want))
    assert len(got) >= len(want), f"{case['name']} ({how}): {len(got)} outputs, want {len(want)}"
    for i in idx:
        g, w = np.asarray(got[i]), want[i]
        assert g.shape == w.shape, f"{case['name']} ({how}) out{i}: shape {g.shape} != {w.shape}"
        assert g.dtype == w.dtype, f"{case['name']} ({how}) out{i}: dtype {g.dtype} != {w.dtype}"
        if sel == "shape":
            continue
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol,
                                   atol=atol, err_msg=f"{case['name']} ({how}) out{i}")


def check_nd(case: dict, golden: dict) -> list[np.ndarray]:
    """Imperative: ``nd.<op>(*inputs, **attrs)`` equals MXNet's outputs."""
    inputs = [mx.nd.array(x, dtype=x.dtype) for x in golden["inputs"]]
    out = invoke(case["op"], inputs, dict(case.get("attrs", {})))
    got = [o.asnumpy() for o in _as_list(out)]
    _compare(case, got, golden["outputs"], "nd")
    return got


def _build_sym(case: dict, golden: dict):
    names = [f"in{i}" for i in range(len(golden["inputs"]))]
    vars_ = [mx.sym.var(n) for n in names]
    out = mx.sym.invoke(case["op"], vars_, dict(case.get("attrs", {})))
    return out, dict(zip(names, golden["inputs"]))


def forward(sym, feed: dict, is_train: bool = False) -> list[np.ndarray]:
    """Bind ``feed`` (arguments and auxiliary states, e.g. BatchNorm's moving statistics,
    told apart by ``list_auxiliary_states``) and run the executor once."""
    aux_names = set(sym.list_auxiliary_states())
    arrays = {k: mx.nd.array(v, dtype=v.dtype) for k, v in feed.items()}
    args = {k: v for k, v in arrays.items() if k not in aux_names}
    aux = {k: v for k, v in arrays.items() if k in aux_names}
    return [o.asnumpy() for o in sym.bind(mx.cpu(), args, aux_states=aux).forward(is_train)]


def check_sym(case: dict, golden: dict) -> None:
    """Symbolic: shape/type inference agree with the real outputs; the executor gives MXNet's
    outputs."""
    out, feed = _build_sym(case, golden)
    want = golden["outputs"]
    _, out_shapes, _ = out.infer_shape(**{k: v.shape for k, v in feed.items()})
    assert out_shapes is not None, f"{case['name']}: infer_shape incomplete"
    _, out_types, _ = out.infer_type(**{k: v.dtype for k, v in feed.items()})
    assert out_types is not None, f"{case['name']}: infer_type incomplete"
    n_vis = len(out.list_outputs())
    for i in range(min(n_vis, len(want))):
        assert tuple(out_shapes[i]) == want[i].shape, (
            f"{case['name']}: infer_shape out{i} {out_shapes[i]} != {want[i].shape}")
        assert np.dtype(out_types[i]) == want[i].dtype, (
            f"{case['name']}: infer_type out{i} {out_types[i]} != {want[i].dtype}")
    got = forward(out, feed)
    _compare(case, got, want, "executor")


def check_json(case: dict, golden: dict) -> None:
    """JSON round trip: the symbol's JSON reloads to the same JSON, and the reloaded graph gives
    MXNet's outputs."""
    out, feed = _build_sym(case, golden)
    again = mx.sym.load_json(out.tojson())
    assert again.tojson() == out.tojson(), f"{case['name']}: JSON round trip changed the graph"
    got = forward(again, feed)
    _compare(case, got, golden["outputs"], "json round trip")
