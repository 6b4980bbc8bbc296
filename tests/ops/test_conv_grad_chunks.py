"""Convolution's weight gradient (one GEMM per batch chunk in ``conv_grad``) against a direct
float64 sum over samples, output positions and taps, whole and split into one-sample chunks
(``_COL_BUDGET`` forced to 1 byte), with and without dead taps pruned; float64, so both agree
to 1e-12 relative."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import gluonport as mx
from gluonport.ops.nn import conv_grad

GEOMETRIES = [  # data shape, num_filter, kernel, stride, dilate, pad, groups
    ((5, 4, 9, 7), 6, (3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((3, 4, 11, 10), 6, (3, 2), (2, 3), (2, 1), (1, 0), 2),
    ((4, 6, 12), 6, (3,), (2,), (1,), (1,), 6),
    ((2, 2, 5, 5, 5), 4, (3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1), 2),
    ((6, 8, 7, 7), 4, (1, 1), (2, 2), (1, 1), (0, 0), 1),  # the 1x1 (pointwise) path
    ((7, 8, 1, 1), 16, (3, 3), (1, 1), (1, 1), (1, 1), 1),  # resnet's 1x1 spatial stage
]


def _reference(og, x, w_shape, kernel, stride, dilate, pad, groups):
    n, c = x.shape[:2]
    f = og.shape[1]
    xp = np.pad(x, [(0, 0), (0, 0)] + [(q, q) for q in pad])
    dw = np.zeros(w_shape)
    cg, fg = c // groups, f // groups
    for k in itertools.product(*(range(v) for v in kernel)):
        sl = tuple(slice(t * d, t * d + (o - 1) * s + 1, s)
                   for t, d, s, o in zip(k, dilate, stride, og.shape[2:]))
        win = xp[(slice(None), slice(None)) + sl]  # (N, C, *out)
        for gi in range(groups):
            a = og[:, gi * fg:(gi + 1) * fg].reshape(n, fg, -1)
            b = win[:, gi * cg:(gi + 1) * cg].reshape(n, cg, -1)
            dw[(slice(gi * fg, (gi + 1) * fg), slice(None)) + k] = np.einsum("nfo,nco->fc", a, b)
    return dw


@pytest.mark.parametrize("prune", [False, True])
@pytest.mark.parametrize("chunked", [False, True])
@pytest.mark.parametrize("geo", GEOMETRIES, ids=lambda g: "x".join(map(str, g[0])))
def test_weight_gradient(geo, chunked, prune, monkeypatch):
    # prune: taps that only meet padding always left out of the GEMM (else never)
    from gluonport.ops.nn import conv_kernels

    monkeypatch.setattr(conv_kernels, "_PRUNE", 0 if prune else 1 << 30)
    shape, f, kernel, stride, dilate, pad, groups = geo
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    w = rng.standard_normal((f, shape[1] // groups, *kernel))
    attrs = dict(kernel=kernel, stride=stride, dilate=dilate, pad=pad, num_filter=f,
                 num_group=groups, no_bias=True)
    y = mx.nd.Convolution(mx.nd.array(x, dtype="float64"), mx.nd.array(w, dtype="float64"),
                          **attrs)
    og = rng.standard_normal(y.shape)
    if chunked:
        monkeypatch.setattr(conv_grad, "_COL_BUDGET", 1)
    _, dw = mx.nd._internal._backward_Convolution(
        mx.nd.array(og, dtype="float64"), mx.nd.array(x, dtype="float64"),
        mx.nd.array(w, dtype="float64"), **attrs)
    want = _reference(og, x, w.shape, kernel, stride, dilate, pad, groups)
    np.testing.assert_allclose(dw.asnumpy(), want, rtol=1e-12, atol=1e-12)
