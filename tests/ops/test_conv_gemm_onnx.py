"""The batched-GEMM ONNX lowering of convolutions on small images (``ops/lowering/conv_gemm.py``,
used by ``_backward_Convolution``'s lowering and by Convolution's when the weight is an input)
against the numpy kernels run in float64 (themselves checked against MXNet 1.9.1's outputs and
gradients in tests/ops/test_ops.py and tests/ops/test_grads.py).

Geometries cover strides, dilation, padding that some taps read only (dropped taps: 1x1 and
2x2 images), uneven sizes, 1-D and 3-D; onnxruntime computes in float32, so the tolerance is
float32 rounding of sums of up to a few hundred products (rtol 1e-5, atol 1e-5 of the largest
value). Each case also runs with the GEMM lowering off (the data gradient a ``ConvTranspose``,
or for stride 1 a ``Conv`` of the flipped weight; the weight gradient a grouped ``Conv``),
checks which path was taken, and that an output nobody reads is not computed.
"""

from __future__ import annotations

import numpy as np
import pytest

import gluonport as mx
from gluonport.ops import registry
from gluonport.ops.nn import conv_grad_onnx

GEOMETRIES = [  # data shape, num_filter, kernel, stride, dilate, pad
    ((4, 6, 1, 1), 5, (3, 3), (1, 1), (1, 1), (1, 1)),  # centre tap only
    ((3, 6, 2, 2), 5, (3, 3), (2, 2), (1, 1), (1, 1)),  # 2x2 -> 1x1 (four taps read data)
    ((8, 3, 1, 1), 2, (3, 3), (1, 1), (1, 1), (1, 1)),  # centre tap, tap-major columns
    ((6, 3, 2, 2), 2, (5, 5), (2, 2), (1, 1), (2, 2)),  # 4 of 25 taps kept, tap-major
    ((3, 4, 2, 2), 5, (3, 3), (1, 1), (1, 1), (1, 1)),
    ((2, 3, 4, 4), 4, (3, 3), (2, 2), (1, 1), (1, 1)),
    ((2, 3, 4, 3), 4, (1, 1), (2, 2), (1, 1), (0, 0)),  # 1x1 strided (resnet's downsample)
    ((2, 3, 5, 4), 2, (3, 2), (2, 1), (1, 2), (1, 0)),  # uneven, dilated
    ((2, 3, 3, 3), 2, (2, 2), (1, 1), (2, 2), (2, 2)),  # dilation, padding beyond the data
    ((3, 2, 7), 3, (3,), (3,), (1,), (2,)),  # 1-D
    ((2, 2, 2, 3, 2), 3, (3, 3, 3), (1, 2, 1), (1, 1, 1), (1, 1, 1)),  # 3-D
    ((2, 2, 9, 9), 3, (3, 3), (2, 2), (1, 1), (1, 1)),  # 5x5 outputs: above the threshold
    ((2, 1, 3, 3), 10, (2, 2), (1, 1), (1, 1), (0, 0)),  # F > T*C: col2im pads the columns
    ((2, 16, 2, 2), 40, (3, 3), (2, 2), (1, 1), (1, 1)),  # F >= 32*O: so does this one
    ((2, 2, 9, 9), 3, (5, 5), (1, 1), (1, 1), (0, 0)),  # 81 -> 25 positions (LeNet-like)
]


def _case(shape, f, kernel, stride, dilate, pad, bias):
    rng = np.random.RandomState(sum(shape) + f)
    x = rng.uniform(-1, 1, shape)
    w = rng.uniform(-1, 1, (f, shape[1], *kernel))
    attrs = dict(kernel=kernel, stride=stride, dilate=dilate, pad=pad, num_filter=f,
                 no_bias=not bias)
    out_shape = mx.nd.Convolution(mx.nd.array(x), mx.nd.array(w), **{**attrs, "no_bias": True}
                                  ).shape
    og = rng.uniform(-1, 1, out_shape)
    ins = [og, x, w] + ([rng.uniform(-1, 1, (f,))] if bias else [])
    return ins, attrs


def _ort(ins, attrs, outputs):
    import onnxruntime as ort

    from gluonport.onnx import export_symbol

    names = ["og", "x", "w", "b"][:len(ins)]
    node = mx.sym._internal._backward_Convolution(*(mx.sym.var(n) for n in names), **attrs)
    sym = mx.sym.Group([node[k] for k in outputs])
    feed = {n: v.astype(np.float32) for n, v in zip(names, ins)}
    model = export_symbol(sym, {}, in_shapes={k: v.shape for k, v in feed.items()})
    ops = list(model.graph.node)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    used = {i.name for i in sess.get_inputs()}
    return sess.run(None, {k: v for k, v in feed.items() if k in used}), ops


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("geom", GEOMETRIES, ids=lambda g: "x".join(map(str, g[0])))
def test_gemm_lowering_matches_kernel(geom, bias, monkeypatch):
    shape, f, kernel, stride, dilate, pad = geom
    ins, attrs = _case(shape, f, kernel, stride, dilate, pad, bias)
    want = registry.get("_backward_Convolution").compute(
        registry.get("_backward_Convolution").parse(
            {k: str(v) for k, v in attrs.items()}), *ins)
    positions = int(np.prod(ins[0].shape[2:]))
    # a stride-1 data gradient whose padding fits the dilated kernel is a Conv of the flipped
    # weight when it is not a GEMM; other data gradients a ConvTranspose
    as_conv = all(s == 1 for s in stride) and all(
        (k - 1) * d >= p for k, d, p in zip(kernel, dilate, pad))
    for limit in (0, conv_grad_onnx._GEMM_POSITIONS, 1 << 20):  # 0: no GEMM lowering
        monkeypatch.setattr(conv_grad_onnx, "_GEMM_POSITIONS", limit)
        monkeypatch.setattr(conv_grad_onnx, "_GEMM_POSITIONS_WEIGHT", limit)
        outputs = list(range(len(ins) - 1))
        got, nodes = _ort(ins, attrs, outputs)
        ops = [n.op_type for n in nodes]
        assert ("ConvTranspose" in ops) == (positions > limit and not as_conv), ops
        assert ops.count("Conv") == (positions > limit) * (1 + as_conv), ops
        for k, (g, w) in enumerate(zip(got, want)):
            tol = 1e-5 * max(1.0, float(np.abs(w).max()))
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=tol, err_msg=f"output {k}")
        # the weight gradient alone: no data gradient is built (only it reads the weight)
        (dw,), nodes = _ort(ins, attrs, [1])
        np.testing.assert_allclose(dw, want[1], rtol=1e-5, atol=1e-5 * np.abs(want[1]).max())
        assert not any("w" in n.input for n in nodes), [n.op_type for n in nodes]


def _ort_forward(ins, attrs, params):
    import onnxruntime as ort

    from gluonport.onnx import export_symbol

    names = ["x", "w", "b"][:len(ins)]
    sym = mx.sym.Convolution(*(mx.sym.var(n) for n in names), **attrs)
    feed = {n: v.astype(np.float32) for n, v in zip(names, ins)}
    model = export_symbol(sym, {k: feed[k] for k in params},
                          in_shapes={k: v.shape for k, v in feed.items() if k not in params})
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (y,) = sess.run(None, {k: v for k, v in feed.items() if k not in params})
    return y, [n.op_type for n in model.graph.node]


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("geom", GEOMETRIES, ids=lambda g: "x".join(map(str, g[0])))
def test_forward_gemm_lowering(geom, bias, monkeypatch):
    """Convolution's lowering with a weight that is an input (training graphs) takes the GEMM
    path on small images; with the weight a parameter it stays one Conv node."""
    from gluonport.ops.lowering import conv_gemm

    shape, f, kernel, stride, dilate, pad = geom
    (og, *ins), attrs = _case(shape, f, kernel, stride, dilate, pad, bias)
    want = mx.nd.Convolution(*(mx.nd.array(v, dtype=np.float64) for v in ins), **attrs).asnumpy()
    positions = int(np.prod(og.shape[2:]))
    for limit in (conv_gemm.POSITIONS, 1 << 20):
        monkeypatch.setattr(conv_gemm, "POSITIONS", limit)
        y, ops = _ort_forward(ins, attrs, [])
        np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
        assert ("Conv" not in ops) == (positions <= limit), ops
        y, ops = _ort_forward(ins, attrs, ["w"] + (["b"] if bias else []))
        np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
        assert ops == ["Conv"], ops


@pytest.mark.parametrize("geom,gemm", [
    (((2, 2, 9, 9), 3, (5, 5), (1, 1), (1, 1), (0, 0)), True),  # 81 -> 25: the data shrinks
    (((2, 2, 5, 5), 3, (3, 3), (1, 1), (1, 1), (1, 1)), False),  # 25 -> 25: Conv
    (((2, 2, 10, 10), 3, (3, 3), (1, 1), (1, 1), (0, 0)), True),  # 100 -> 64
    (((2, 2, 11, 11), 3, (3, 3), (1, 1), (1, 1), (0, 0)), False),  # 81 positions: Conv
    (((2, 2, 12, 12), 3, (3, 3), (2, 2), (1, 1), (1, 1)), False),  # strided: ConvTranspose
])
def test_data_grad_route(geom, gemm):
    """With the shipped limits, a stride-1 data gradient of at most ``_GEMM_POSITIONS_WEIGHT``
    output positions is a GEMM when the data has ``_SHRINK`` times as many positions, else
    (above ``_GEMM_POSITIONS``) the Conv of the flipped weight; a strided one (36 positions
    here) stays a ConvTranspose; all match the kernel."""
    ins, attrs = _case(*geom, False)
    want = registry.get("_backward_Convolution").compute(
        registry.get("_backward_Convolution").parse(
            {k: str(v) for k, v in attrs.items()}), *ins)
    (dx,), nodes = _ort(ins, attrs, [0])
    ops = [n.op_type for n in nodes]
    assert ("Conv" in ops or "ConvTranspose" in ops) != gemm, ops
    assert ("MatMul" in ops) == gemm, ops
    np.testing.assert_allclose(dx, want[0], rtol=1e-5, atol=1e-5 * np.abs(want[0]).max())
