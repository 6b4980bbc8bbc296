"""Gradient checks for one case-table row (``tests/ops/cases_<family>.py``), used by
``tests/ops/test_grads.py`` and by family tests.

Two independent references for each op's gradient rule (``OpDef.gradient``):

* ``check_grad_golden``: MXNet 1.9.1's input gradients for the row's inputs and a random head
  gradient (``tests/golden/ops/grad_<family>.npz``, made by ``tests/golden/ops/gen_grads.py``),
  against the imperative tape (``nd`` under ``autograd.record()``, then
  ``autograd.backward``);
* ``check_grad_numeric``: central finite differences in float64 of ``sum(head * op(x))`` --
  computed with the op's forward compute only, never its gradient rule -- against the tape's
  gradient for the same float64 inputs.
"""

from __future__ import annotations

import os
import zlib
from typing import Any

import numpy as np

import gluonport as mx
from gluonport import autograd
from gluonport.ops import registry

GOLDEN_DIR = os.path.join(os.path.dirname(__file__), "..", "golden", "ops")

__all__ = ["load_grad_golden", "tape_grads", "check_grad_golden", "check_grad_numeric",
           "make_inputs"]


def load_grad_golden(family: str) -> dict[str, dict[str, dict[int, np.ndarray]]]:
    """``{case: {"in": {i: x}, "hg": {j: head grad}, "grad": {i: gradient}}}``; ``{}`` when the
    family has no gradient golden."""
    path = os.path.join(GOLDEN_DIR, f"grad_{family}.npz")
    if not os.path.exists(path):
        return {}
    out: dict[str, dict[str, dict[int, np.ndarray]]] = {}
    with np.load(path) as data:
        for key in data.files:
            name, _, slot = key.rpartition("/")
            kind = slot.rstrip("0123456789")
            out.setdefault(name, {"in": {}, "hg": {}, "grad": {}})[kind][int(slot[len(kind):])] = \
                data[key]
    return out


def make_inputs(case: dict) -> list[np.ndarray]:
    """The row's inputs as ``tests/golden/ops/gen_ops.py`` makes them (same seeds)."""
    seed = zlib.crc32(case["name"].encode()) & 0x7FFFFFFF
    arrays = []
    for i, spec in enumerate(case["inputs"]):
        if "value" in spec:
            arrays.append(np.array(spec["value"], dtype=spec.get("dtype", "float32")))
            continue
        rng = np.random.RandomState(seed + i)
        dtype = spec.get("dtype", "float32")
        low, high = spec.get("low", -1.0), spec.get("high", 1.0)
        if np.dtype(dtype).kind in "iub":
            arr = rng.randint(int(low), int(high), size=spec["shape"])
        else:
            arr = rng.uniform(low, high, size=spec["shape"])
        arrays.append(arr.astype(dtype))
    return arrays


def _as_list(x: Any) -> list:
    return list(x) if isinstance(x, (list, tuple)) else [x]


def tape_grads(op: str, inputs: list[np.ndarray], attrs: dict, head_grads: list[np.ndarray],
               train: bool = False) -> list[np.ndarray | None]:
    """Gradients of the float inputs through the imperative tape (``None`` for the others)."""
    arrays = [mx.nd.array(x, dtype=x.dtype) for x in inputs]
    for a in arrays:
        if np.dtype(a.dtype).kind == "f":
            a.attach_grad()
    with autograd.record(train_mode=train):
        outs = _as_list(mx.nd.invoke(op, arrays, dict(attrs)))
    heads = [o for o in outs if np.dtype(o.dtype).kind == "f"][:len(head_grads)]
    autograd.backward(heads, [mx.nd.array(h, dtype=h.dtype) for h in head_grads],
                      train_mode=train)
    return [a.grad.asnumpy() if a.grad is not None else None for a in arrays]


def _tols(case: dict, inputs: list[np.ndarray]) -> tuple[float, float]:
    """The row's ``grad_rtol``/``grad_atol``; default 1e-4 / 1e-5, and 2e-3 / 1e-3 (two
    float16 ulps) when an input is float16, whose rounding of intermediate steps differs."""
    half = any(x.dtype == np.float16 for x in inputs)
    return (case.get("grad_rtol", 2e-3 if half else 1e-4),
            case.get("grad_atol", 1e-3 if half else 1e-5))


def check_grad_golden(case: dict, golden: dict, train: bool = False) -> None:
    """The tape's gradients equal MXNet's for this row (tolerances: :func:`_tols`; float32
    accumulation order differs)."""
    g = golden[case["name"]]
    inputs = [g["in"][i] for i in sorted(g["in"])]
    hgs = [g["hg"][j] for j in sorted(g["hg"])]
    got = tape_grads(case["op"], inputs, case.get("attrs", {}), hgs, train)
    rtol, atol = _tols(case, inputs)
    for i, want in g["grad"].items():
        assert got[i] is not None, f"{case['name']}: no gradient for input {i}"
        np.testing.assert_allclose(got[i], want, rtol=rtol, atol=atol,
                                   err_msg=f"{case['name']}: gradient of input {i}")


def check_grad_numeric(op: str, inputs: list[np.ndarray], attrs: dict | None = None,
                       wrt: list[int] | None = None, eps: float = 1e-6, rtol: float = 1e-5,
                       atol: float = 1e-7, train: bool = False, seed: int = 0) -> None:
    """Central differences in float64 of ``sum(hg * op(x))`` against the tape's gradients.

    ``wrt``: the input positions to check (default every float input). Only the op's forward
    compute is used for the reference.
    """
    attrs = dict(attrs or {})
    x64 = [x.astype(np.float64) if x.dtype.kind == "f" else x for x in inputs]
    opdef = registry.get(op)
    call_outs = _as_list(mx.nd.invoke(op, [mx.nd.array(x, dtype=x.dtype) for x in x64], attrs))
    rng = np.random.RandomState(seed)
    hgs = [rng.normal(size=o.shape) for o in call_outs if np.dtype(o.dtype).kind == "f"]
    got = tape_grads(op, x64, attrs, hgs, train)
    if wrt is None:  # auxiliary states (BatchNorm's moving statistics) get no gradient
        aux = set(opdef.aux if not callable(opdef.aux) else
                  opdef.aux(opdef.parse({k: str(v) for k, v in attrs.items()})))
        wrt = [i for i, x in enumerate(x64) if x.dtype.kind == "f" and i not in aux]

    def objective(arrays: list[np.ndarray]) -> float:
        with autograd.train_mode() if train else autograd.predict_mode():
            outs = _as_list(mx.nd.invoke(op, [mx.nd.array(a, dtype=a.dtype) for a in arrays],
                                         attrs))
        outs = [o for o in outs if np.dtype(o.dtype).kind == "f"]
        return float(sum(np.sum(h * o.asnumpy()) for h, o in zip(hgs, outs)))

    for i in wrt:
        num = np.zeros_like(x64[i])
        flat = num.reshape(-1)
        for k in range(flat.size):
            plus = [a.copy() for a in x64]
            minus = [a.copy() for a in x64]
            plus[i].reshape(-1)[k] += eps
            minus[i].reshape(-1)[k] -= eps
            flat[k] = (objective(plus) - objective(minus)) / (2 * eps)
        assert got[i] is not None, f"{opdef.name}: no gradient for input {i}"
        np.testing.assert_allclose(got[i], num, rtol=rtol, atol=atol,
                                   err_msg=f"{opdef.name}: gradient of input {i} vs finite "
                                           "differences")


def graph_grads(case: dict, inputs: list[np.ndarray], head_grads: list[np.ndarray],
                train: bool = False, backend: str = "numpy",
                opset: int | None = None) -> list[np.ndarray | None]:
    """The float inputs' gradients through the backward graph (``symbol/_backward.py``) of the
    row's op: run by the numpy executor, or exported to ONNX (forward and backward graphs) and
    run by onnxruntime."""
    from gluonport.symbol._backward import build_backward
    from gluonport.symbol.executor import GraphPlan

    names = [f"in{i}" for i in range(len(inputs))]
    sym = mx.sym.invoke(case["op"], [mx.sym.var(n) for n in names], dict(case.get("attrs", {})))
    wrt = [n for n, x in zip(names, inputs) if x.dtype.kind == "f"]
    bg = build_backward(sym, wrt)
    feed = dict(zip(names, inputs))
    if backend == "numpy":
        values = GraphPlan(bg.forward, fuse=False).run(feed, is_train=train)
    else:
        values = _ort_run(bg.forward, feed, opset)
    outs = values[:bg.n_outputs]
    float_outs = [i for i, o in enumerate(outs) if np.asarray(o).dtype.kind == "f"]
    ograd = {i: np.zeros_like(o) for i, o in enumerate(outs)}
    ograd.update(zip(float_outs, head_grads))
    bfeed = dict(feed)
    bfeed.update(zip(bg.saved, values[bg.n_outputs:]))
    for name in bg.ograds:
        bfeed[name] = ograd[int(name.rpartition(":")[2])]
    if bg.backward is None:
        got: list = []
    else:
        used = set(bg.backward.list_inputs())
        bfeed = {k: v for k, v in bfeed.items() if k in used}
        got = (GraphPlan(bg.backward, fuse=False).run(bfeed, is_train=train)
               if backend == "numpy" else _ort_run(bg.backward, bfeed, opset))
    it = iter(got)
    by_name = {w: (next(it) if has else np.zeros_like(feed[w]))
               for w, has in zip(wrt, bg.grad_of)}
    return [by_name.get(n) for n in names]


def _ort_run(sym: Any, feed: dict, opset: int | None) -> list[np.ndarray]:
    from gluonport.onnx import export_symbol
    from tests.onnx._export_check import run_ort

    used = set(sym.list_inputs())
    feed = {k: v for k, v in feed.items() if k in used}
    model = export_symbol(sym, {}, in_shapes={k: v.shape for k, v in feed.items()},
                          in_types={k: v.dtype for k, v in feed.items()}, opset_version=opset)
    return run_ort(model, feed)


def check_grad_graph(case: dict, golden: dict, train: bool = False, backend: str = "numpy",
                     opset: int | None = None) -> None:
    """The backward graph's gradients equal MXNet's for this row (tolerances as
    :func:`check_grad_golden`)."""
    g = golden[case["name"]]
    inputs = [g["in"][i] for i in sorted(g["in"])]
    hgs = [g["hg"][j] for j in sorted(g["hg"])]
    got = graph_grads(case, inputs, hgs, train, backend, opset)
    rtol, atol = _tols(case, inputs)
    for i, want in g["grad"].items():
        assert got[i] is not None, f"{case['name']}: no gradient for input {i}"
        np.testing.assert_allclose(got[i], want, rtol=rtol, atol=atol,
                                   err_msg=f"{case['name']} ({backend}): gradient of input {i}")
