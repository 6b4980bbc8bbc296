"""Shared driver for the ONNX export tests of the op families (no mxnet here).

A case from ``tests/ops/cases_<family>.py`` is built as a symbol over variables ``in0, in1, ...``
(``tests/ops/_check._build_sym``), exported with :func:`gluonport.onnx.export_symbol`, checked
by ``onnx.checker`` (``full_check``) and run on onnxruntime; the outputs must equal MXNet
1.9.1's (the family's golden npz) within the case's tolerance. Inputs named in ``params`` are
given as parameters (ONNX initializers) instead of graph inputs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from gluonport.onnx import export_symbol, max_opset
from gluonport.symbol._graph import label_inputs, topo_order
from tests._ort import session
from tests.ops._check import _build_sym, _compare, forward

OPSETS = sorted({13, max_opset()})


def export_case(case: dict, golden: dict, opset: int, params: Iterable[str] = (),
                dynamic_axes: Mapping | None = None):
    """(ModelProto, symbol, data feed, params feed) for one case."""
    import onnx

    sym, feed = _build_sym(case, golden)
    pvals = {k: feed[k] for k in params}
    data = {k: v for k, v in feed.items() if k not in pvals}
    # label-only variables (SoftmaxOutput's label...) are not ONNX inputs; data keeps them for
    # the numpy executor
    labels = label_inputs(topo_order(n for n, _ in sym._outputs))
    given = {k: v for k, v in data.items() if k not in labels}
    dynamic_axes = {k: v for k, v in (dynamic_axes or {}).items() if k not in labels} or None
    model = export_symbol(sym, pvals, in_shapes={k: v.shape for k, v in given.items()},
                          in_types={k: v.dtype for k, v in given.items()},
                          opset_version=opset, dynamic_axes=dynamic_axes)
    onnx.checker.check_model(model, full_check=True)
    return model, sym, data, pvals


def run_ort(model, feed: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    import onnxruntime as ort

    opts = ort.SessionOptions()  # one thread: cheaper sessions for many small models
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    sess = session(model, sess_options=opts)
    names = {i.name for i in sess.get_inputs()}
    return sess.run(None, {k: v for k, v in feed.items() if k in names})


def check_export(case: dict, golden: dict, opset: int, params: Iterable[str] = ()) -> None:
    """Export -> onnxruntime equals MXNet's golden outputs."""
    model, _, data, _ = export_case(case, golden, opset, params)
    _compare(case, run_ort(model, data), golden["outputs"], f"onnx opset {opset}")


def _resized(x: np.ndarray, axis: int, size: int, rng: np.random.RandomState) -> np.ndarray:
    shape = list(x.shape)
    shape[axis] = size
    if x.dtype.kind in "iu":
        return rng.randint(-9, 10, shape).astype(x.dtype)
    return rng.uniform(-1, 1, shape).astype(x.dtype)


def check_dynamic(case: dict, golden: dict, opset: int, axes: Mapping[str, int],
                  params: Iterable[str] = (), sizes: Iterable[int] = (1, 4)) -> None:
    """Export with ``axes`` ({input: axis}) dynamic; at each size onnxruntime equals the numpy
    executor on fresh random inputs."""
    dyn = {k: {a: "batch"} for k, a in axes.items()}
    model, sym, data, pvals = export_case(case, golden, opset, params, dyn)
    rng = np.random.RandomState(7)
    for size in sizes:
        feed = {k: _resized(v, axes[k], size, rng) if k in axes else v for k, v in data.items()}
        want = forward(sym, {**feed, **pvals})
        got = run_ort(model, feed)
        _compare(case, got, want, f"onnx opset {opset} dynamic size {size}")
