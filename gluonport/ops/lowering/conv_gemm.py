"""Convolution products on small images as one GEMM over the whole batch (ONNX).

onnxruntime's ``Conv`` and ``ConvTranspose`` (MLAS, 1.16 to 1.32) run one GEMM per sample: on
a small image that GEMM is a matrix-vector product that reads the whole weight again for every
sample (resnet18's 512-channel 3x3 layer on 1x1 images, batch 32: 16 ms for 75 M multiply-adds,
one thread). Here the three products of a convolution -- the forward, the weight gradient and
the data gradient -- are each one ``Gemm``/``MatMul`` whose rows are all samples' output
positions, the computation MXNet's CPU kernels do per sample (im2col + GEMM):

* im2col: the data is transposed to channels-last (N, *S, C) and zero-padded, and one
  ``Gather`` of blocks of C contiguous values makes the rows (N, O*T, C), tap by tap for each
  output position; as (N*O, T*C) those are the columns in (tap, channel) order, or, moved
  innermost, in (channel, tap) order, the order of the weight's own (F, C, *kernel) memory;
* the data gradient spreads the columns' gradient back (col2im): each data position gathers
  the column rows that read it (one ``Gather``, a zero row standing in where it has fewer
  readers than the most-read position) and one ``ReduceSum`` adds them; with a single tap, its
  (N, *O, C) slab, zeros interleaved for strides, is padded or cropped into place. Whole
  training steps, two threads, old and new graphs in one process taking turns: resnet18_v1
  b32 9.4% faster (16 of 16 turns) than with a ``Slice`` per tap for im2col and a padded slab
  per tap, summed, for col2im (onnxruntime 1.32);
* when at most a quarter of the kernel's taps read data at all (a 3x3 kernel on a 1x1 image:
  the centre), the columns hold only those, the weight's columns are picked by a product with
  a 0/1 selection matrix and the weight gradient is spread back to the full kernel by its
  transpose (a pass over the weight, cheaper than GEMMs over 9x the columns).

Every product is the sum of the same products as MXNet's im2col + GEMM, padding zeros included
(an infinite value meets a padding zero, or a selection zero, and gives NaN as it does there),
in another summation order: float32 rounding differs, nothing else. Groups, channels-last
layouts and dtypes other than float32 are not handled here (callers keep their ``Conv``
lowering for them).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from . import LoweringContext, onnx_reduce
from .window import pad as window_pad

__all__ = ["ConvShape", "conv_shape", "im2col_rows", "weight_rows", "grad_rows", "forward",
           "weight_grad", "data_grad"]


@dataclass(frozen=True)
class ConvShape:
    """A convolution's sizes: channels ``c`` -> filters ``f``, spatial ``in_sp`` -> ``out_sp``."""

    c: int
    f: int
    in_sp: tuple[int, ...]
    out_sp: tuple[int, ...]
    kernel: tuple[int, ...]
    stride: tuple[int, ...]
    dilate: tuple[int, ...]
    pad: tuple[int, ...]
    #: columns in (tap, channel) order, the weight reordered to match (when the weight is
    #: smaller than the columns); else (channel, tap), the weight's own order
    tap_major: bool
    #: per spatial axis, the taps ``[lo, hi)`` the columns hold: every tap, or (``sparse``)
    #: only those that read data for some output position (a 3x3 kernel on a 1x1 image: the
    #: centre)
    lo: tuple[int, ...]
    hi: tuple[int, ...]

    @property
    def nd(self) -> int:
        return len(self.kernel)

    @property
    def taps(self) -> int:
        """The number of taps the columns hold."""
        return int(np.prod([h - lo for lo, h in zip(self.lo, self.hi)]))

    @property
    def sparse(self) -> bool:
        return self.taps < int(np.prod(self.kernel))

    def tap_list(self) -> list[tuple[int, ...]]:
        return list(itertools.product(*(range(lo, h) for lo, h in zip(self.lo, self.hi))))


def conv_shape(n: int, c: int, f: int, in_sp: Sequence[int], out_sp: Sequence[int], kernel,
               stride, dilate, pad) -> ConvShape:
    """The :class:`ConvShape` of a convolution (symmetric ``pad``, MXNet's) of ``n`` samples.

    The columns (N*O, C*T) or the weight (F, C*T) is reordered between the (channel, tap)
    order of the weight's memory and the (tap, channel) order im2col makes in channels-last
    layout (onnxruntime moves the innermost axis at ~2 ns a value): the smaller one."""
    def ints(v: Sequence[int]) -> tuple[int, ...]:
        return tuple(int(e) for e in v)

    positions = int(np.prod([int(v) for v in out_sp]))
    lo, hi = [], []
    for size, o_n, k, s, d, p in zip(in_sp, out_sp, kernel, stride, dilate, pad):
        # tap a reads u = a*d + o*s - p, o in [0, o_n): kept when some u is in [0, size)
        kept = [a for a in range(k) if any(0 <= a * d + o * s - p < size for o in range(o_n))]
        lo.append(kept[0] if kept else 0)
        hi.append(kept[-1] + 1 if kept else k)
    if 4 * int(np.prod([h - a for a, h in zip(lo, hi)])) > int(np.prod(kernel)):
        # picking the taps (a pass over the weight) costs more than the GEMMs save: 512x512
        # 3x3, batch 32, one thread, all taps vs kept taps ms: 1 of 9 kept (1x1 image)
        # forward 3.9/2.2, weight gradient 4.5/3.9, data gradient 4.0/2.3; 4 of 9 kept
        # (2x2 -> 1x1) 1.7/2.1, 2.0/2.2, 1.9/1.9
        lo, hi = [0] * len(lo), list(kernel)
    return ConvShape(int(c), int(f), ints(in_sp), ints(out_sp), ints(kernel), ints(stride),
                     ints(dilate), ints(pad), int(f) < int(n) * positions, ints(lo), ints(hi))


def _spatial_pad(ctx: LoweringContext, x: str, before: Sequence[int], after: Sequence[int]
                 ) -> str:
    """Zero-pad (positive) or crop (negative) the spatial axes 1..nd of a (N, *S, C) tensor."""
    return window_pad(ctx, x, before, after, first=1)


def _rows(ctx: LoweringContext, y: str, nd: int, width: int) -> str:
    y = ctx.make("Transpose", [y], perm=[0, *range(2, 2 + nd), 1])
    return ctx.make("Reshape", [y, ctx.ints([-1, width], "rows")])


def _from_rows(ctx: LoweringContext, rows: str, sp: Sequence[int], width: int) -> str:
    """(N*S, width) -> (N, width, *S)."""
    nd = len(sp)
    y = ctx.make("Reshape", [rows, ctx.ints([-1, *sp, width], "nsc")])
    return ctx.make("Transpose", [y], perm=[0, nd + 1, *range(1, nd + 1)])


def im2col_rows(ctx: LoweringContext, x: str, cs: ConvShape) -> str:
    """The columns (N*O, C*T) of channels-first ``x`` (N, C, *S): row (n, o), column (c, t)
    (or (t, c) when ``cs.tap_major``) holds ``x[n, c, o*s + t*d - p]`` (taps in C order; zero
    where that is padding)."""
    nd = cs.nd
    xl = ctx.make("Transpose", [x], perm=[0, *range(2, 2 + nd), 1])  # (N, *S, C)
    before = [p - lo * d for p, lo, d in zip(cs.pad, cs.lo, cs.dilate)]
    reach = [(h - 1 - lo) * d + (o - 1) * s + 1
             for lo, h, d, o, s in zip(cs.lo, cs.hi, cs.dilate, cs.out_sp, cs.stride)]
    after = [r - b - n for r, b, n in zip(reach, before, cs.in_sp)]
    xp = _spatial_pad(ctx, xl, before, after)  # exactly the reads of the columns' taps
    if cs.taps == 1:
        (tap,) = cs.tap_list()
        starts = [(a - lo) * d for a, lo, d in zip(tap, cs.lo, cs.dilate)]
        ends = [b + (o - 1) * s + 1 for b, o, s in zip(starts, cs.out_sp, cs.stride)]
        if not all(b == 0 and e == r and (s == 1 or o == 1)
                   for b, e, r, s, o in zip(starts, ends, reach, cs.stride, cs.out_sp)):
            xp = ctx.make("Slice", [xp, ctx.ints(starts, "starts"), ctx.ints(ends, "ends"),
                                    ctx.ints(range(1, 1 + nd), "axes"),
                                    ctx.ints(cs.stride, "steps")])
        return ctx.make("Reshape", [xp, ctx.ints([-1, cs.c], "cols")])
    # row (o, t) of each sample: the padded position o*s + (t - lo)*d
    at = _tap_reads(cs) + np.asarray(before)
    reads = np.ravel_multi_index(tuple(np.moveaxis(at, -1, 0)), tuple(reach)).reshape(-1)
    xp = ctx.make("Reshape", [xp, ctx.ints([0, int(np.prod(reach)), cs.c], "n_r_c")])
    cols = ctx.make("Gather", [xp, ctx.ints(reads, "reads")], axis=1)
    if cs.tap_major:  # (N, O*T, C): taps as blocks of C
        return ctx.make("Reshape", [cols, ctx.ints([-1, cs.taps * cs.c], "cols")])
    cols = ctx.make("Reshape", [cols, ctx.ints([-1, cs.taps, cs.c], "otc")])
    cols = ctx.make("Transpose", [cols], perm=[0, 2, 1])  # (N*O, C, T)
    return ctx.make("Reshape", [cols, ctx.ints([-1, cs.c * cs.taps], "cols")])


def _tap_reads(cs: ConvShape) -> np.ndarray:
    """(O, T, nd): the data position ``o*s + a*d - p`` that output position o (C order) reads
    through kept tap a (C order); outside ``[0, in_sp)`` where that is padding."""
    outs = np.stack(np.meshgrid(*(np.arange(o) for o in cs.out_sp), indexing="ij"), -1)
    taps = np.asarray(cs.tap_list()).reshape(-1, cs.nd)
    return (outs.reshape(-1, 1, cs.nd) * np.asarray(cs.stride)
            + taps * np.asarray(cs.dilate) - np.asarray(cs.pad))


def weight_rows(ctx: LoweringContext, w: np.ndarray | str, cs: ConvShape) -> str:
    """The (F, C, *kernel) weight as (F, C*T) in the columns' order (a parameter's value is
    laid out at export time)."""
    if not isinstance(w, str):
        keep = (slice(None), slice(None)) + tuple(slice(lo, h) for lo, h in zip(cs.lo, cs.hi))
        arr = np.asarray(w, np.float32)[keep].reshape(cs.f, cs.c, cs.taps)
        if cs.tap_major:
            arr = arr.transpose(0, 2, 1)
        return ctx.const(np.ascontiguousarray(arr).reshape(cs.f, -1), "w_rows")
    if cs.sparse:  # the kept taps' columns: a product with a 0/1 selection matrix
        w = ctx.make("Reshape", [w, ctx.ints([cs.f * cs.c, -1], "fc_t")])
        w = ctx.make("MatMul", [w, ctx.const(_selection(cs), "taps_kept")])
    if cs.tap_major and cs.taps > 1:
        w = ctx.make("Reshape", [w, ctx.ints([cs.f, cs.c, cs.taps], "fct")])
        w = ctx.make("Transpose", [w], perm=[0, 2, 1])
    return ctx.make("Reshape", [w, ctx.ints([cs.f, cs.c * cs.taps], "w_rows")])


def forward(ctx: LoweringContext, cols: str, w_rows: str, bias: str | None,
            cs: ConvShape) -> str:
    """The convolution (N, F, *O) from :func:`im2col_rows` and :func:`weight_rows` (one
    ``Gemm``, which adds the bias)."""
    y = ctx.make("Gemm", [cols, w_rows] + ([bias] if bias else []), transB=1)
    return _from_rows(ctx, y, cs.out_sp, cs.f)


def grad_rows(ctx: LoweringContext, og: str, cs: ConvShape) -> str:
    """The output gradient (N, F, *O) as rows (N*O, F)."""
    return _rows(ctx, og, cs.nd, cs.f)


def weight_grad(ctx: LoweringContext, og: str, cols: str, cs: ConvShape) -> str:
    """``dW = og^T @ cols`` as (F, C, *kernel), ``og`` (N, F, *O) made (F, N*O) (a transpose
    of O-long blocks; MLAS multiplies it ~15% faster than a transposed ``Gemm`` operand)."""
    og_t = ctx.make("Transpose", [og], perm=[1, 0, *range(2, 2 + cs.nd)])
    og_t = ctx.make("Reshape", [og_t, ctx.ints([cs.f, -1], "f_rows")])
    dw = ctx.make("MatMul", [og_t, cols])  # (F, C*T) or (F, T*C)
    if cs.sparse:  # zeros for the dropped taps: a product with the selection's transpose
        if cs.tap_major and cs.taps > 1:
            dw = ctx.make("Reshape", [dw, ctx.ints([cs.f, cs.taps, cs.c], "ftc")])
            dw = ctx.make("Transpose", [dw], perm=[0, 2, 1])
        dw = ctx.make("Reshape", [dw, ctx.ints([cs.f * cs.c, cs.taps], "fc_t")])
        dw = ctx.make("MatMul", [dw, ctx.const(np.ascontiguousarray(_selection(cs).T),
                                               "taps_back")])
        return ctx.make("Reshape", [dw, ctx.ints([cs.f, cs.c, *cs.kernel], "w_shape")])
    if cs.tap_major and cs.taps > 1:
        dw = ctx.make("Reshape", [dw, ctx.ints([cs.f, *cs.kernel, cs.c], "fkc")])
        return ctx.make("Transpose", [dw], perm=[0, cs.nd + 1, *range(1, cs.nd + 1)])
    return ctx.make("Reshape", [dw, ctx.ints([cs.f, cs.c, *cs.kernel], "w_shape")])


def data_grad(ctx: LoweringContext, og_rows: str, w_rows: str, cs: ConvShape) -> str:
    """The data gradient (N, C, *S): the columns' gradient ``og_rows @ w_rows`` (N*O, C*T)
    spread back to the positions each tap read (col2im) and summed."""
    if cs.taps > 1:
        pad_og = _pad_grad_rows(cs)
        if pad_og:
            og_rows = ctx.make("Reshape", [og_rows, ctx.ints(
                [-1, int(np.prod(cs.out_sp)), cs.f], "n_o_f")])
            og_rows = ctx.make("Pad", [og_rows, ctx.ints([0, 0, 0, 0, 1, 0], "pads")],
                               mode="constant")
            og_rows = ctx.make("Reshape", [og_rows, ctx.ints([-1, cs.f], "rows")])
        return _col2im_gather(ctx, ctx.make("MatMul", [og_rows, w_rows]), cs, pad_og)
    dcols = ctx.make("MatMul", [og_rows, w_rows])
    # one tap (a 1x1 kernel, or a 3x3 one's centre on 1x1 images): its (N, *O, C) slab, zeros
    # interleaved for strides, padded or cropped into place
    (tap,) = cs.tap_list()
    before = [a * d - p for a, d, p in zip(tap, cs.dilate, cs.pad)]
    last = [b + (o - 1) * s for b, o, s in zip(before, cs.out_sp, cs.stride)]
    slab = ctx.make("Reshape", [dcols, ctx.ints([-1, *cs.out_sp, cs.c], "nsc")])
    slab = _interleave_last(ctx, slab, cs.stride, cs.out_sp, cs.c)
    y = _spatial_pad(ctx, slab, before, [n - 1 - e for n, e in zip(cs.in_sp, last)])
    return ctx.make("Transpose", [y], perm=[0, cs.nd + 1, *range(1, cs.nd + 1)])


def _pad_grad_rows(cs: ConvShape) -> bool:
    """Whether col2im's zero row comes from a zero row of the output gradient per sample (F
    values; the GEMM then makes one more row of T*C values per sample) rather than from
    padding the columns' gradient (O*T*C values per sample copied): when F < T*C and the extra
    GEMM row costs less than the copy, F < 32*O. Batch 32, two threads, ms with the output
    gradient padded / the columns: LeNet's 50->20 5x5 (O=64) 3.4/4.0; 128->128 3x3 on 4x4
    (O=16) 2.0/2.1; 128->64 3x3 s2 on 8x8 1.3/1.5; 256->256 3x3 on 2x2 (O=4) 2.7/2.2; 256->128
    3x3 s2 on 4x4 1.4/1.2."""
    positions = int(np.prod(cs.out_sp))
    return cs.f < cs.taps * cs.c and cs.f < 32 * positions


def _col2im_gather(ctx: LoweringContext, dcols: str, cs: ConvShape, padded: bool) -> str:
    """col2im of the columns' gradient (N*O, T*C) or (N*O, C*T) as one ``Gather`` and a
    ``ReduceSum``: each data position gathers the (o, t) rows that read it, padded to the
    largest count with a zero row after each sample's rows, and sums them. ``padded``: each
    sample's rows already end with a zero position (N*(O+1) rows: T zero rows)."""
    nd, t, c = cs.nd, cs.taps, cs.c
    zero = int(np.prod(cs.out_sp)) * t  # a sample's (o, t) rows; the zero row comes after them
    if not cs.tap_major:
        dcols = ctx.make("Reshape", [dcols, ctx.ints([-1, c, t], "oct")])
        dcols = ctx.make("Transpose", [dcols], perm=[0, 2, 1])  # (N*O, T, C)
    rows = ctx.make("Reshape", [dcols, ctx.ints([-1, zero + t if padded else zero, c],
                                                "n_ot_c")])
    if not padded:
        rows = ctx.make("Pad", [rows, ctx.ints([0, 0, 0, 0, 1, 0], "pads")], mode="constant")
    at = _tap_reads(cs).reshape(-1, nd)  # row (o, t) of a sample read data position at
    inside = np.all((at >= 0) & (at < np.asarray(cs.in_sp)), axis=-1)
    positions = int(np.prod(cs.in_sp))
    flat = np.ravel_multi_index(tuple(at[inside].T), cs.in_sp)
    slots: list[list[int]] = [[] for _ in range(positions)]
    for row, pos in zip(np.flatnonzero(inside), flat):
        slots[pos].append(int(row))
    k = max(1, max(len(v) for v in slots))
    index = np.full((positions, k), zero, np.int64)
    for pos, v in enumerate(slots):
        index[pos, :len(v)] = v
    y = ctx.make("Gather", [rows, ctx.ints(index.reshape(-1), "reads")], axis=1)
    if k > 1:
        y = ctx.make("Reshape", [y, ctx.ints([0, positions, k, c], "n_p_k_c")])
        y = onnx_reduce(ctx, "ReduceSum", y, [2], keepdims=False)
    y = ctx.make("Reshape", [y, ctx.ints([-1, *cs.in_sp, c], "nsc")])
    return ctx.make("Transpose", [y], perm=[0, nd + 1, *range(1, nd + 1)])


def _selection(cs: ConvShape) -> np.ndarray:
    """(all taps, kept taps) 0/1 float32: column j picks the j-th kept tap (C order)."""
    full = list(itertools.product(*(range(k) for k in cs.kernel)))
    sel = np.zeros((len(full), cs.taps), np.float32)
    for j, tap in enumerate(cs.tap_list()):
        sel[full.index(tap), j] = 1.0
    return sel


def _interleave_last(ctx: LoweringContext, x: str, stride: Sequence[int], sp: Sequence[int],
                     c: int) -> str:
    """``s - 1`` zero rows between neighbours along each spatial axis of (N, *S, C)."""
    if all(s == 1 for s in stride) or all(v == 1 for v in sp):
        return x
    nd = len(stride)
    # (N, S1, 1, S2, 1, ..., C) padded to (N, S1, s1, S2, s2, ..., C)
    x = ctx.make("Unsqueeze", [x, ctx.ints([2 + 2 * i for i in range(nd)], "axes")])
    after = [0] + list(itertools.chain(*((0, s - 1) for s in stride))) + [0]
    x = ctx.make("Pad", [x, ctx.ints([0] * (2 + 2 * nd) + after, "pads")], mode="constant")
    x = ctx.make("Reshape", [x, ctx.ints([-1, *(v * s for v, s in zip(sp, stride)), c],
                                         "shape")])
    ends = [(v - 1) * s + 1 for v, s in zip(sp, stride)]
    return ctx.make("Slice", [x, ctx.ints([0] * nd, "starts"), ctx.ints(ends, "ends"),
                              ctx.ints(range(1, 1 + nd), "axes")])


#: at most this many output positions per sample: a convolution's products run as batched
#: GEMMs here rather than as onnxruntime's per-sample Conv/ConvTranspose
POSITIONS = 16


def convolution(ctx: LoweringContext, x: str, w: np.ndarray | str, bias: str | None,
                cs: ConvShape) -> str:
    """The forward convolution (N, F, *O) of channels-first float32 ``x`` with the weight
    (a tensor, or a parameter's value: laid out at export time) and an optional bias."""
    return forward(ctx, im2col_rows(ctx, x, cs), weight_rows(ctx, w, cs), bias, cs)
