"""Backward kernels of the convolution ops in :mod:`.conv`: ``_backward_Convolution``,
``_backward_Deconvolution`` (MXNet 1.9.1's names) and ``_backward_UpSampling`` (nearest).

One kernel op per layer, BLAS-backed like the forward ones:

* Convolution: the data gradient is the transposed convolution of the output gradient
  (:func:`~.conv.deconv_nd`: one matmul and a strided add per kernel tap); the weight gradient
  correlates the output gradient with the strided window view of the padded data (im2col copy
  per batch chunk, then one GEMM, or an einsum over groups); the bias gradient sums it.
* Deconvolution: the same two products with the roles swapped (data gradient: the forward
  convolution of the output gradient with the same weight, pad from ``target_shape`` or
  ``pad``; weight gradient: the data against windows of the padded output gradient).
* UpSampling nearest: each input's gradient sums the output gradient over its scale x scale
  blocks (channels split by input in ``concat`` mode). Bilinear UpSampling's gradient is
  ``_backward_Deconvolution`` of its depthwise kernel.

Inputs differ from MXNet's (whose backward nodes read shapes from the forward node): the output
gradient, then the forward inputs (bias only for its dtype and presence). float16 is computed in
float32 and rounded once; channels-last layouts are computed channels-first.

ONNX export: :mod:`.conv_grad_onnx`.
"""

from __future__ import annotations

import numpy as np

from ..._core import recording
from ..._core.attr_fields import Enum, Int
from ..registry import OpDef, register
from .conv import (
    Geometry,
    conv_nd,
    conv_params,
    deconv_nd,
    deconv_pad_adj,
    geometry,
)
from .conv_kernels import (
    deconv_lanes,
    from_lanes,
    lane_windows,
    live_taps,
    scratch,
    side_by_side,
    to_lanes,
    worth_pruning,
)

__all__: list[str] = []

_NO_GRAD = "a backward kernel (MXNet 1.9.1 registers no gradient for it either)"
_COL_BUDGET = 1 << 26  # bytes of column copies per batch chunk (weight gradients)
_SMALL_RESULT = 1 << 18  # bytes of a weight gradient up to which it is transposed at the end


def _cf(a: np.ndarray, last: bool) -> np.ndarray:
    return np.moveaxis(a, -1, 1) if last else a


def _back(a: np.ndarray, last: bool, dtype) -> np.ndarray:
    out = np.ascontiguousarray(np.moveaxis(a, 1, -1)) if last else a
    return out.astype(dtype, copy=False)


def _work(*arrays: np.ndarray) -> list[np.ndarray]:
    return [a.astype(np.float32) if a.dtype == np.float16 else a for a in arrays]


def _chunk(per_item: int, n: int) -> int:
    """Samples per chunk so that a chunk's column copy stays within ``_COL_BUDGET`` bytes."""
    return max(1, min(n, _COL_BUDGET // max(per_item, 1)))


def _sample_gemm(a: np.ndarray, cols, groups: int, n: int, per_item: int) -> np.ndarray:
    """``sum_n a[n] @ cols(n0, n1)[n].T`` per group with one GEMM per chunk of samples: ``a``
    (N, F, size); ``cols(i, j)`` the (G, K, m*size) columns of samples ``i:j`` (sample-major
    along the last axis, as ``a``'s chunk is made). The result is (G, F/G, K)."""
    fa, size = a.shape[1], a.shape[2]
    step = _chunk(per_item, n)
    acc = None if n else np.zeros((groups, fa // groups, cols(0, 0).shape[1]), a.dtype)
    for i in range(0, n, step):
        m = min(step, n - i)
        # (F, m*size): the samples side by side along the contraction axis
        ag = np.ascontiguousarray(a[i:i + m].transpose(1, 0, 2)).reshape(groups, fa // groups,
                                                                         m * size)
        part = np.matmul(ag, cols(i, i + m).transpose(0, 2, 1))
        if acc is None:
            acc = part
        else:
            acc += part
    return acc


def _correlate(a: np.ndarray, b: np.ndarray, g: Geometry, groups: int, out_sp,
               a_lanes: np.ndarray | None = None) -> np.ndarray:
    """``sum_n,o a[n, f, o] * b_pad[n, c, o*stride + k*dilate]``: (F, C/G, *kernel), the
    weight gradient of a convolution whose output is ``a`` and input ``b`` (``b_pad``: ``b``
    padded by ``g.pad``), F/G filters per group.

    One GEMM per batch chunk, on lanes (:func:`~.conv_kernels.to_lanes`: samples innermost):
    the chunk's windows of ``b`` are copied channel-and-tap-major (C*taps, size*m) into a
    scratch buffer, each copied row m contiguous values, and multiplied into ``a``'s lanes
    (F, size*m), so the contraction runs over every sample's positions at once and the result
    is already in the weight's layout. Taps that only meet padding are zeros, not columns,
    where that saves more than scattering the rest costs (:func:`~.conv_kernels.worth_pruning`).
    ``a_lanes``: ``a``'s lanes when the caller has them (used when the batch is one chunk)."""
    n, fa = a.shape[:2]
    cb, size = b.shape[1], int(np.prod(out_sp))
    dt = np.result_type(a, b)
    live = live_taps(g, b.shape[2:], out_sp)
    if live is None or n == 0:
        return np.zeros((fa, cb // groups, *g.kernel), dt)
    kept = tuple(v.stop - v.start for v in live)
    if not worth_pruning(int(np.prod(g.kernel)), int(np.prod(kept)), size * n):
        live, kept = tuple(slice(0, k) for k in g.kernel), tuple(g.kernel)
    taps = int(np.prod(kept))
    step = _chunk(cb * taps * size * dt.itemsize, n)
    small = fa * cb // groups * taps * dt.itemsize <= _SMALL_RESULT
    acc = None
    for i in range(0, n, step):
        m = min(step, n - i)
        at = a_lanes if a_lanes is not None and m == n else to_lanes(a[i:i + m], (0,) * g.nd,
                                                                     "og")
        view = lane_windows(to_lanes(b[i:i + m], g.pad, "lanes"), g, out_sp)
        view = view[(slice(None),) + live]
        col = scratch("col", view.shape, dt)
        np.copyto(col, view)
        ag = at.reshape(groups, fa // groups, size * m)
        cg = col.reshape(groups, cb // groups * taps, size * m)
        # (C*taps, F) and one transposing copy at the end when small (the faster GEMM
        # there), else (F, C*taps) at once: a large transposed copy is slow
        part = (np.matmul(cg, ag.transpose(0, 2, 1)) if small else
                np.matmul(ag, cg.transpose(0, 2, 1)))
        if acc is None:
            acc = part
        else:
            acc += part
    if small:
        acc = np.ascontiguousarray(acc.transpose(0, 2, 1))
    acc = acc.reshape(fa, cb // groups, *kept)
    if kept == tuple(g.kernel):
        return acc
    out = np.zeros((fa, cb // groups, *g.kernel), dt)
    out[(slice(None), slice(None)) + live] = acc
    return out


def _pointwise(og: np.ndarray, x: np.ndarray, w: np.ndarray, g: Geometry,
               groups: int) -> tuple[np.ndarray, np.ndarray]:
    """A 1x1 unpadded convolution's data gradient (one GEMM batched over samples; it lands on
    the strided positions the forward read) and weight gradient (one GEMM per batch chunk)."""
    n, c = x.shape[:2]
    f, size = og.shape[1], int(np.prod(og.shape[2:]))
    strided = any(s > 1 for s in g.stride)
    read = (slice(None), slice(None)) + tuple(slice(0, o * s, s) for o, s in
                                              zip(og.shape[2:], g.stride))
    xs = x[read] if strided else x
    wg = w.reshape(groups, f // groups, c // groups)
    ogg = og.reshape(n, groups, f // groups, size)
    d_read = np.matmul(wg.transpose(0, 2, 1), ogg).reshape(n, c, *og.shape[2:])
    if strided:
        dx = np.zeros(x.shape, d_read.dtype)
        dx[read] = d_read
    else:
        dx = d_read

    def cols(i: int, j: int) -> np.ndarray:
        part = xs[i:j].reshape(j - i, c, size) if not strided else xs[i:j]
        part = np.ascontiguousarray(part.transpose(1, 0, *range(2, part.ndim)))
        return part.reshape(groups, c // groups, -1)

    dw = _sample_gemm(og.reshape(n, f, size), cols, groups, n, c * size * x.itemsize)
    return dx, dw


def _data_grad_discarded() -> bool:
    """Whether the tape throws the data gradient away (the data is outside the graph: the
    first layer's input); MXNet's kernels skip a ``kNullOp`` data gradient too."""
    return any(0 in recording.discarded_grads(op) for op in ("Convolution", "Convolution_v1"))


def _conv_backward(p, og, x, w, b=None):
    """Convolution's gradients: data (transposed convolution of ``og``), weight, bias. A data
    gradient the imperative tape discards is zeros, not computed."""
    g = geometry(p, "Convolution")
    last, groups = g.channels_last, p.num_group
    gw, xw, ww = _work(_cf(og, last), _cf(x, last), _cf(w, last))
    if _data_grad_discarded():
        dx = np.zeros(xw.shape, gw.dtype)
        dw = _correlate(gw, xw, g, groups, gw.shape[2:])
    elif all(k == 1 for k in g.kernel) and not any(g.pad):
        dx, dw = _pointwise(gw, xw, ww, g, groups)
        dw = dw.reshape(ww.shape)
    elif side_by_side(int(np.prod(gw.shape[2:]))):
        # the output gradient's lanes serve both products
        og_lanes = to_lanes(gw, (0,) * g.nd, "og")
        dx = from_lanes(deconv_lanes(og_lanes, ww, g, g.pad, xw.shape[2:], groups))
        dw = _correlate(gw, xw, g, groups, gw.shape[2:], og_lanes)
    else:
        dx = deconv_nd(gw, ww, None, g, g.pad, xw.shape[2:], groups)
        dw = _correlate(gw, xw, g, groups, gw.shape[2:])
    outs = [_back(dx, last, x.dtype), _back(dw, last, w.dtype)]
    if b is not None:
        outs.append(gw.sum(axis=(0, *range(2, gw.ndim))).astype(b.dtype, copy=False))
    return tuple(outs)


def _deconv_backward(p, og, x, w, b=None):
    """Deconvolution's gradients: data (convolution of ``og`` with the same weight and the
    deconvolution's pad), weight (data against windows of the padded ``og``), bias."""
    g0 = geometry(p, "Deconvolution")
    last, groups = g0.channels_last, p.num_group
    gw, xw, ww = _work(_cf(og, last), _cf(x, last), _cf(w, last))
    pad, _ = deconv_pad_adj(p, g0, xw.shape[2:])
    g = Geometry(g0.kernel, g0.stride, g0.dilate, tuple(pad), False)
    dx = conv_nd(gw, ww, None, g, groups)
    dw = _correlate(xw, gw, g, groups, xw.shape[2:])
    outs = [_back(dx, last, x.dtype), _back(dw, last, w.dtype)]
    if b is not None:
        outs.append(gw.sum(axis=(0, *range(2, gw.ndim))).astype(b.dtype, copy=False))
    return tuple(outs)


def _n_in(p) -> int:
    return 2 if p.no_bias else 3


def _register(name: str, compute, deconv: bool) -> None:
    register(OpDef(
        name, params=conv_params(deconv=deconv),
        inputs=lambda p: ("ograd", "data", "weight") + (() if p.no_bias else ("bias",)),
        num_outputs=_n_in,
        infer_shape=lambda p, s: (list(s), [None if v is None else tuple(v)
                                            for v in s[1:1 + _n_in(p)]]),
        infer_type=lambda p, t: (list(t), list(t[1:1 + _n_in(p)])),
        compute=compute, no_gradient=_NO_GRAD,
        doc=f"{name[10:]}'s gradients. Inputs: the output gradient, data, weight (and bias, "
            "read for its dtype); outputs: the gradients of data, weight (and bias)."))


_register("_backward_Convolution", _conv_backward, False)
_register("_backward_Deconvolution", _deconv_backward, True)


# --- UpSampling (nearest) ------------------------------------------------------------------------
def _block_sum(a: np.ndarray, s: int) -> np.ndarray:
    n, c, h, w = a.shape
    return a.reshape(n, c, h // s, s, w // s, s).sum(axis=(3, 5))


def _up_backward(p, og, *inputs):
    """Each input's gradient: ``og`` summed over the scale x scale block each of its pixels
    was copied to (its own channel range of ``og`` in concat mode)."""
    (gw,) = _work(og)
    grads, start = [], 0
    for x in inputs:
        s = og.shape[2] // x.shape[2]
        part = gw if p.multi_input_mode == "sum" else gw[:, start:start + x.shape[1]]
        start += x.shape[1]
        grads.append(_block_sum(part, s).astype(x.dtype, copy=False))
    return tuple(grads)


register(OpDef(
    "_backward_UpSampling",
    params={"scale": Int(), "num_filter": Int(0), "sample_type": Enum(("nearest", "bilinear")),
            "multi_input_mode": Enum(("concat", "sum"), "concat"), "num_args": Int(),
            "workspace": Int(512)},
    inputs=lambda p: ["ograd"] + [f"arg{i}" for i in range(p.num_args)],
    num_outputs=lambda p: p.num_args,
    infer_shape=lambda p, s: (list(s), [None if v is None else tuple(v) for v in s[1:]]),
    infer_type=lambda p, t: (list(t), list(t[1:])),
    compute=_up_backward, no_gradient=_NO_GRAD,
    doc="Nearest UpSampling's gradients. Inputs: the output gradient, then the forward inputs "
        "(read for their shapes); outputs: one gradient per forward input."))
