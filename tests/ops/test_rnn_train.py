"""``_backward_RNN_lstm_forward`` (gluonport's: one LSTM layer's training forward that returns
its step activations, gluonport/ops/nn/rnn_train.py) and its backward kernel, against the
fused ``RNN`` op and its ``_backward_RNN`` kernel (checked against MXNet 1.9.1 in
tests/ops/test_grads.py): numpy kernels and ONNX lowerings (exported forward and backward
graphs run by onnxruntime). Tolerances: float32 rtol 1e-4 / atol 1e-5; float64 1e-9 / 1e-11
between the numpy kernels (the same math), the float32 tolerances for onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

import gluonport as mx
from gluonport.ops.nn.rnn import rnn_param_size
from tests.ops._gradcheck import graph_grads

T, N, C, H = 4, 3, 5, 2


def _inputs(bidirectional: bool, dtype: str, seed: int = 0, batch: int = N) -> list[np.ndarray]:
    """``RNN``'s inputs: data, the flat parameter vector, state, state_cell."""
    rs = np.random.RandomState(seed)
    dirs = 2 if bidirectional else 1
    size = rnn_param_size("lstm", H, 1, bidirectional, C)
    shapes = [(T, batch, C), (size,), (dirs, batch, H), (dirs, batch, H)]
    return [rs.uniform(-0.8, 0.8, s).astype(dtype) for s in shapes]


def _cut(xs: list[np.ndarray], bidirectional: bool) -> list[np.ndarray]:
    """``_backward_RNN_lstm_forward``'s inputs: the flat vector cut into its pieces (MXNet's
    order: i2h and h2h weights by direction, then the biases), flattened."""
    sizes = [4 * H * C, 4 * H * H] * (2 if bidirectional else 1)
    sizes += [4 * H, 4 * H] * (2 if bidirectional else 1)
    pieces = np.split(xs[1], np.cumsum(sizes)[:-1])
    return [xs[0], *pieces, *xs[2:]]


def _heads(bidirectional: bool, dtype: str) -> list[np.ndarray]:
    rs = np.random.RandomState(7)
    dirs = 2 if bidirectional else 1
    return [rs.normal(size=s).astype(dtype) for s in [(T, N, dirs * H), (dirs, N, H),
                                                      (dirs, N, H)]]


def _attrs(bidirectional: bool) -> dict:
    return {"state_size": H, "bidirectional": bidirectional}


CASES = [(False, "float32"), (True, "float32"), (True, "float64")]


@pytest.mark.parametrize("bidirectional, dtype", CASES)
def test_forward_equals_rnn(bidirectional, dtype):
    xs = _inputs(bidirectional, dtype)
    got = mx.nd.invoke("_backward_RNN_lstm_forward",
                       [mx.nd.array(x, dtype=dtype) for x in _cut(xs, bidirectional)],
                       _attrs(bidirectional))
    want = mx.nd.invoke("RNN", [mx.nd.array(x, dtype=dtype) for x in xs],
                        {"mode": "lstm", "num_layers": 1, "state_outputs": True,
                         **_attrs(bidirectional)})
    tol = {"rtol": 1e-9, "atol": 1e-11} if dtype == "float64" else {"rtol": 1e-5, "atol": 1e-6}
    for g, w in zip(got[:3], want):
        np.testing.assert_allclose(g.asnumpy(), w.asnumpy(), **tol)
    res = got[3].asnumpy()
    dirs = 2 if bidirectional else 1
    assert res.shape == (dirs * T * 6 * H, N)  # direction, step, factors; then the batch
    factors = res.reshape(dirs, T, 6 * H, N)
    # the forward direction's last step: a = o * (1 - tanh(c)^2) with o = h / tanh(c)
    hy, cy = want[1].asnumpy()[0], np.tanh(want[2].asnumpy()[0])
    np.testing.assert_allclose(factors[0, -1, 4 * H:5 * H].T, hy / cy * (1 - cy * cy), **tol)
    if bidirectional:  # the reverse direction ends at step 0
        hy, cy = want[1].asnumpy()[1], np.tanh(want[2].asnumpy()[1])
        np.testing.assert_allclose(factors[1, 0, 4 * H:5 * H].T, hy / cy * (1 - cy * cy),
                                   **tol)


def _export(op: str, xs: list[np.ndarray], dynamic_axes: dict, bidirectional: bool = False):
    from gluonport.onnx import export_symbol

    names = [f"in{i}" for i in range(len(xs))]
    sym = mx.sym.invoke(op, [mx.sym.var(n) for n in names], _attrs(bidirectional))
    return export_symbol(sym, {}, in_shapes={n: x.shape for n, x in zip(names, xs)},
                         in_types={n: x.dtype for n, x in zip(names, xs)},
                         dynamic_axes=dynamic_axes)


@pytest.mark.parametrize("bidirectional", [False, True])
def test_onnx_forward_equals_numpy_kernel(bidirectional):
    """The ONNX lowering writes every output, the reserve included, in the numpy kernel's
    layout (onnxruntime against the numpy kernel, float32 rtol 1e-4 / atol 1e-5)."""
    from tests.onnx._export_check import run_ort

    xs = _cut(_inputs(bidirectional, "float32"), bidirectional)
    model = _export("_backward_RNN_lstm_forward", xs, {}, bidirectional)
    got = run_ort(model, {f"in{i}": x for i, x in enumerate(xs)})
    want = mx.nd.invoke("_backward_RNN_lstm_forward", [mx.nd.array(x) for x in xs],
                        _attrs(bidirectional))
    assert len(got) == 4
    for k, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w.asnumpy(), rtol=1e-4, atol=1e-5, err_msg=f"output {k}")


@pytest.mark.parametrize("backend", ["numpy", "onnx"])
@pytest.mark.parametrize("bidirectional, dtype", CASES)
def test_gradients_equal_backward_rnn(bidirectional, dtype, backend):
    xs = _inputs(bidirectional, dtype)
    heads = _heads(bidirectional, dtype)
    want = graph_grads({"op": "RNN", "attrs": {"mode": "lstm", "num_layers": 1,
                                               "state_outputs": True, **_attrs(bidirectional)}},
                       xs, heads)
    reserve = np.zeros(((2 if bidirectional else 1) * T * 6 * H, N), dtype)
    got = graph_grads({"op": "_backward_RNN_lstm_forward", "attrs": _attrs(bidirectional)},
                      _cut(xs, bidirectional), heads + [reserve], backend=backend)
    assert len(got) == 3 + 4 * (2 if bidirectional else 1)
    got = [got[0], np.concatenate(got[1:-2]), *got[-2:]]  # the pieces' as the flat vector's
    exact = dtype == "float64" and backend == "numpy"
    tol = {"rtol": 1e-9, "atol": 1e-11} if exact else {"rtol": 1e-4, "atol": 1e-5}
    for i, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, **tol, err_msg=f"input {i}")
        assert np.abs(w).max() > 0


def test_onnx_forward_dynamic_sequence_is_refused():
    from gluonport.errors import ConversionError

    with pytest.raises(ConversionError, match="sequence length must be static"):
        _export("_backward_RNN_lstm_forward", _cut(_inputs(False, "float32"), False),
                {"in0": {0: "T"}})


def test_onnx_forward_dynamic_batch():
    """The batch axis may stay dynamic: the exported forward runs another batch size
    (onnxruntime against the numpy kernel, float32 rtol 1e-4 / atol 1e-5)."""
    from tests.onnx._export_check import run_ort

    model = _export("_backward_RNN_lstm_forward", _cut(_inputs(False, "float32"), False),
                    {"in0": {1: "N"}, "in5": {1: "N"}, "in6": {1: "N"}})
    xs = _cut(_inputs(False, "float32", seed=3, batch=5), False)
    got = run_ort(model, {f"in{i}": x for i, x in enumerate(xs)})
    want = mx.nd.invoke("_backward_RNN_lstm_forward", [mx.nd.array(x) for x in xs],
                        _attrs(False))
    for k, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w.asnumpy(), rtol=1e-4, atol=1e-5, err_msg=f"output {k}")


def test_pieces_in_their_parameters_shapes():
    """Gluon's parameters unflattened ((4H, C), (4H, H), (4H,)) give the same outputs, and
    their gradients come back in those shapes; a piece of the wrong size is refused."""
    from gluonport.errors import ShapeError

    xs = _cut(_inputs(False, "float32"), False)
    shaped = [xs[0], xs[1].reshape(4 * H, C), xs[2].reshape(4 * H, H), *xs[3:]]
    flat = mx.nd.invoke("_backward_RNN_lstm_forward", [mx.nd.array(x) for x in xs], _attrs(False))
    got = mx.nd.invoke("_backward_RNN_lstm_forward", [mx.nd.array(x) for x in shaped],
                       _attrs(False))
    for g, w in zip(got, flat):
        np.testing.assert_array_equal(g.asnumpy(), w.asnumpy())
    heads = _heads(False, "float32") + [np.zeros((T * 6 * H, N), np.float32)]
    for backend in ("numpy", "onnx"):
        grads = graph_grads({"op": "_backward_RNN_lstm_forward", "attrs": _attrs(False)}, shaped,
                            heads, backend=backend)
        assert [g.shape for g in grads] == [x.shape for x in shaped], backend
    with pytest.raises(ShapeError, match="h2h_weight"):
        mx.nd.invoke("_backward_RNN_lstm_forward",
                     [mx.nd.array(x) for x in [xs[0], xs[1], xs[2][:-1], *xs[3:]]],
                     _attrs(False))
