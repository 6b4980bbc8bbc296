"""numpy kernels of the convolution ops (:mod:`.conv`): channels-first N-D convolution
(:func:`conv_nd`) and transposed convolution (:func:`deconv_nd`), with the window helpers the
gradient and im2col kernels share (:func:`pad_input`, :func:`window_view`,
:func:`tap_offsets`). Geometry and MXNet's semantics (output sizes, dtypes, layouts) are
:mod:`.conv`'s; these take channels-first float arrays and a :class:`~.conv.Geometry`.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ...errors import ShapeError

if TYPE_CHECKING:
    from .conv import Geometry

__all__ = ["conv_nd", "deconv_nd", "conv_out_size", "pad_input", "tap_offsets", "window_view",
           "to_lanes", "from_lanes", "lane_windows", "deconv_lanes", "side_by_side", "scratch",
           "live_taps", "worth_pruning"]

_COL_BUDGET = 1 << 27  # bytes of im2col buffer per batch chunk (MXNet's `workspace` role)
_SMALL_IMAGE = 64  # output positions per sample up to which samples share one GEMM
_TAP_BLOCK = 1 << 23  # bytes of one block of GEMM results in deconv_lanes
_PRUNE = 100  # GEMM multiply-adds saved per strided element moved, for dropping dead taps
_SCRATCH_MAX = 1 << 25  # bytes a scratch slot keeps between calls (larger ones are fresh)
_SCRATCH = threading.local()


def scratch(slot: str, shape: Sequence[int], dtype) -> np.ndarray:
    """An uninitialised ``shape`` array in this thread's reusable buffer ``slot`` -- MXNet's
    temp-space resource: the kernels' large temporaries (im2col columns, GEMM results, lanes)
    reuse memory already mapped instead of fresh pages from the allocator, each of which
    faults (the 4 MB im2col of lenet's second convolution cost 1,000 page faults per call).
    The caller must not return it, nor keep it past another use of the same slot."""
    nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    if nbytes > _SCRATCH_MAX:
        return np.empty(shape, dtype)
    bufs = _SCRATCH.__dict__.setdefault("bufs", {})
    buf = bufs.get(slot)
    if buf is None or buf.nbytes < nbytes:
        buf = bufs[slot] = np.empty(max(nbytes, 1 << 16), np.uint8)
    return buf[:nbytes].view(dtype).reshape(shape)


def _fresh_copy(a: np.ndarray) -> np.ndarray:
    """A new C-contiguous array with ``a``'s values (``a`` may live in a scratch slot)."""
    out = np.empty(a.shape, a.dtype)
    np.copyto(out, a)
    return out


def conv_out_size(x: int, k: int, s: int, d: int, p: int) -> int:
    """MXNet's ``floor((x + 2p - d(k-1) - 1) / s) + 1`` (0 when ``x`` is unknown).

    >>> conv_out_size(224, k=7, s=2, d=1, p=3), conv_out_size(0, 3, 1, 1, 1)
    (112, 0)
    """
    return 0 if x == 0 else (x + 2 * p - (d * (k - 1) + 1)) // s + 1


def tap_offsets(kernel: Sequence[int]) -> list[tuple[int, ...]]:
    return list(itertools.product(*(range(k) for k in kernel)))


def _conv_1x1(x, w, g: Geometry, groups: int, out_sp: Sequence[int]) -> np.ndarray:
    """A 1x1 convolution is one matmul (stride subsamples the input first)."""
    n, c = x.shape[:2]
    if any(s > 1 for s in g.stride):
        x = np.ascontiguousarray(x[(slice(None), slice(None)) + tuple(
            slice(0, (o - 1) * s + 1, s) for o, s in zip(out_sp, g.stride))])
    f = w.shape[0]
    cols = x.reshape(n, groups, c // groups, -1)
    out = np.matmul(w.reshape(groups, f // groups, c // groups), cols)
    return out.reshape(n, f, *out_sp)


def pad_input(x: np.ndarray, g: Geometry) -> np.ndarray:
    """``x`` with ``g.pad`` zeros on both sides of every spatial axis (``x`` itself if none)."""
    if not any(g.pad):
        return x
    n, c, *sp = x.shape
    out = np.zeros((n, c, *(s + 2 * p for s, p in zip(sp, g.pad))), x.dtype)
    out[(slice(None), slice(None)) + tuple(slice(p, p + s) for p, s in zip(g.pad, sp))] = x
    return out


def window_view(xp: np.ndarray, g: Geometry, out_sp: Sequence[int]) -> np.ndarray:
    """The read-only (N, C, *kernel, *out_sp) view of the padded input whose element
    ``[n, c, k..., o...]`` is ``xp[n, c, o*stride + k*dilate ...]``: every tap of every output
    position, without copying."""
    sp_strides = xp.strides[2:]
    return np.lib.stride_tricks.as_strided(
        xp, (*xp.shape[:2], *g.kernel, *out_sp),
        (*xp.strides[:2], *(d * s for d, s in zip(g.dilate, sp_strides)),
         *(t * s for t, s in zip(g.stride, sp_strides))), writeable=False)


def side_by_side(positions: int) -> bool:
    """Whether images of ``positions`` pixels are computed with all samples side by side
    (samples innermost, :func:`to_lanes`) rather than one GEMM per sample."""
    return positions <= _SMALL_IMAGE


def to_lanes(x: np.ndarray, pad: Sequence[int], slot: str | None = None) -> np.ndarray:
    """A (C, *padded spatial, N) copy of channels-first ``x`` (N, C, *S) with ``pad`` zeros on
    both sides of each spatial axis: the samples innermost ("lanes"), so each row of a window
    view is N contiguous values instead of a few pixels (one transposing copy does the
    padding too). With ``slot`` the copy is that :func:`scratch` buffer."""
    n, c, *sp = x.shape
    shape = (c, *(s + 2 * p for s, p in zip(sp, pad)), n)
    out = np.empty(shape, x.dtype) if slot is None else scratch(slot, shape, x.dtype)
    if any(pad):
        out.fill(0)
    out[(slice(None),) + tuple(slice(p, p + s) for p, s in zip(pad, sp))] = np.moveaxis(x, 0, -1)
    return out


def from_lanes(xt: np.ndarray) -> np.ndarray:
    """A new channels-first (N, C, *S) array with the values of lanes ``xt`` (C, *S, N)."""
    return _fresh_copy(np.moveaxis(xt, -1, 0))


def lane_windows(xt: np.ndarray, g: Geometry, out_sp: Sequence[int]) -> np.ndarray:
    """The read-only (C, *kernel, *out_sp, N) view of padded lanes ``xt`` (C, *Sp, N) whose
    element ``[c, k..., o..., n]`` is ``xt[c, o*stride + k*dilate ..., n]``; copied, it is the
    im2col matrix (C*taps, positions*N) of all samples at once."""
    st = xt.strides
    sp = st[1:-1]
    return np.lib.stride_tricks.as_strided(
        xt, (xt.shape[0], *g.kernel, *out_sp, xt.shape[-1]),
        (st[0], *(d * s for d, s in zip(g.dilate, sp)), *(t * s for t, s in zip(g.stride, sp)),
         st[-1]), writeable=False)


def _phase_split(x, g: Geometry, out_sp: Sequence[int]):
    """Pad ``x`` and split it into stride phases: returns ``P`` of shape (N, C, R, prod(Q)),
    the phase-image dims Q, and per tap its phase index and flat offset.

    Output position ``o`` of tap ``k`` reads padded input ``o*s + k*d``; with ``k*d = q*s + r``
    that is phase ``r`` at ``o + q``, so every tap is one contiguous slice of a flat phase
    image (rows are computed full width and cropped afterwards).
    """
    n, c, *sp = x.shape
    qmax = [((k - 1) * d) // s for k, d, s in zip(g.kernel, g.dilate, g.stride)]
    q_dims = [max(-(-(x_ + 2 * p) // s), o + qm) for x_, p, s, o, qm in
              zip(sp, g.pad, g.stride, out_sp, qmax)]
    q_dims[0] += 1  # one spare row: full-width slices of the last output row stay in bounds
    padded = np.zeros((n, c, *(q * s for q, s in zip(q_dims, g.stride))), x.dtype)
    padded[(slice(None), slice(None)) + tuple(slice(p, p + x_) for p, x_ in
                                              zip(g.pad, sp))] = x
    if any(s > 1 for s in g.stride):
        split = padded.reshape(n, c, *itertools.chain(*zip(q_dims, g.stride)))
        nd = g.nd
        order = (0, 1, *(3 + 2 * i for i in range(nd)), *(2 + 2 * i for i in range(nd)))
        padded = np.ascontiguousarray(split.transpose(order))
    flat = padded.reshape(n, c, int(np.prod(g.stride)), -1)
    fs = [int(np.prod(q_dims[i + 1:])) for i in range(g.nd)]
    taps = []
    for k in tap_offsets(g.kernel):
        kd = [ki * d for ki, d in zip(k, g.dilate)]
        r = int(np.ravel_multi_index([v % s for v, s in zip(kd, g.stride)], g.stride))
        taps.append((r, sum((v // s) * f for v, s, f in zip(kd, g.stride, fs))))
    return flat, q_dims, taps


def _depthwise(x, w, g: Geometry, out_sp: Sequence[int]) -> np.ndarray:
    """One filter per channel (MobileNet's 3x3s): a multiply-accumulate per kernel tap, each tap
    one contiguous slice of the flat phase image (full-width rows, cropped at the end), into
    one scratch buffer: no im2col and no loop over channels."""
    flat, q_dims, taps = _phase_split(x, g, out_sp)
    n, c = x.shape[:2]
    length = out_sp[0] * int(np.prod(q_dims[1:]))
    wt = w.reshape(c, len(taps), 1).astype(np.result_type(x, w), copy=False)
    out = np.empty((n, c, length), wt.dtype)
    tmp = np.empty_like(out)
    for i, (r, off) in enumerate(taps):
        if i == 0:
            np.multiply(wt[:, i], flat[:, :, r, off:off + length], out=out)
        else:
            np.multiply(wt[:, i], flat[:, :, r, off:off + length], out=tmp)
            out += tmp
    full = out.reshape(n, c, out_sp[0], *q_dims[1:])
    return np.ascontiguousarray(full[(slice(None),) * 3 + tuple(slice(0, o)
                                                                 for o in out_sp[1:])])


def _tap_spans(kernel: int, stride: int, dilate: int, pad: int, count: int,
               size: int) -> list[tuple[int, int]]:
    """Per tap ``k`` of one axis, the range ``[lo, hi)`` of ``j < count`` whose position
    ``j*stride + k*dilate - pad`` lies in ``[0, size)``: the output positions whose window tap
    reads real (unpadded) input in a convolution (``count`` outputs, ``size`` inputs), or the
    input positions a transposed convolution's tap writes inside its cropped output."""
    spans = []
    for k in range(kernel):
        off = k * dilate - pad
        spans.append((max(0, -(off // stride)), max(0, min(count, (size - 1 - off) // stride + 1))))
    return spans


def _live(spans: list[list[tuple[int, int]]]) -> tuple[slice, ...] | None:
    """Per axis the smallest tap range holding every tap with a non-empty span (a tap that
    only meets padding contributes zeros: resnet's 3x3 kernels on 1x1 images keep one tap);
    None when some axis has none."""
    out = []
    for axis in spans:
        live = [k for k, (lo, hi) in enumerate(axis) if hi > lo]
        if not live:
            return None
        out.append(slice(live[0], live[-1] + 1))
    return tuple(out)


def live_taps(g: Geometry, in_sp: Sequence[int], out_sp: Sequence[int]
              ) -> tuple[slice, ...] | None:
    """Per spatial axis, the kernel taps that read real (unpadded) input at some output
    position of a convolution from ``in_sp`` to ``out_sp`` (a slice), or None when no tap
    does; the other taps only meet padding (resnet's 3x3 kernels on 1x1 images keep the
    centre tap)."""
    return _live([_tap_spans(k, s, d, p, o, v) for k, s, d, p, o, v in
                  zip(g.kernel, g.stride, g.dilate, g.pad, out_sp, in_sp)])


def worth_pruning(taps: int, live: int, columns: int) -> bool:
    """Whether a GEMM with ``columns`` columns per kernel tap should leave out the taps that
    only meet padding (``live`` of ``taps`` remain): the work saved, ``(taps - live) *
    columns`` multiply-adds per weight row, must beat gathering or scattering the live taps'
    strided weights (``live`` elements per row, ~``_PRUNE`` times dearer each). With few
    columns (resnet's 1x1 and 2x2 images at batch 32) the whole kernel is cheaper."""
    return live < taps and (taps - live) * columns > _PRUNE * live


def _conv_general(x, w, g: Geometry, groups: int, out_sp: Sequence[int]) -> np.ndarray:
    """im2col + one matmul per group: the column buffer is a single copy of the strided window
    view of the taps that meet real input (all taps where leaving some out would not pay:
    :func:`worth_pruning`), already in the exact output size. Images of up to
    ``_SMALL_IMAGE`` output positions put all samples side by side in one GEMM (columns
    channel-and-tap-major, (C*taps, positions*N), copied from :func:`to_lanes` so each copied
    row is N contiguous values); larger ones multiply per sample."""
    n, c = x.shape[:2]
    f = w.shape[0]
    if groups == c and f == c:
        return _depthwise(x, w, g, out_sp)
    live = live_taps(g, x.shape[2:], out_sp)
    if live is None:
        return np.zeros((n, f, *out_sp), np.result_type(x, w))
    positions = int(np.prod(out_sp))
    if not worth_pruning(int(np.prod(g.kernel)), int(np.prod([v.stop - v.start for v in live])),
                         positions * n):
        live = tuple(slice(0, k) for k in g.kernel)  # dead taps read zero padding
    taps = (slice(None), slice(None)) + live
    wk = w[taps]
    cg, t = c // groups, int(np.prod(wk.shape[2:]))
    wg = wk.reshape(groups, f // groups, cg * t)
    if not side_by_side(positions):
        view = window_view(pad_input(x, g), g, out_sp)[taps]
        col = np.ascontiguousarray(view).reshape(n, groups, cg * t, -1)
        return np.matmul(wg, col).reshape(n, f, *out_sp)
    view = lane_windows(to_lanes(x, g.pad, "lanes"), g, out_sp)[taps[1:]]
    dt = np.result_type(x, w)
    col = scratch("col", view.shape, dt)
    np.copyto(col, view)
    out = np.matmul(wg, col.reshape(groups, cg * t, positions * n),
                    out=scratch("gemm", (groups, f // groups, positions * n), dt))
    return _fresh_copy(np.moveaxis(out.reshape(f, *out_sp, n), -1, 0))


def _conv_chunks(x, w, g: Geometry, groups: int, out_sp: Sequence[int]) -> np.ndarray:
    """Run the im2col path over batch chunks so the column buffer stays bounded."""
    n, c = x.shape[:2]
    per_item = c * int(np.prod(g.kernel)) * int(np.prod(out_sp)) * x.itemsize
    step = max(1, _COL_BUDGET // max(per_item, 1))
    if step >= n:
        return _conv_general(x, w, g, groups, out_sp)
    parts = [_conv_general(x[i:i + step], w, g, groups, out_sp) for i in range(0, n, step)]
    return np.concatenate(parts, axis=0)


def conv_nd(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, g: Geometry,
            groups: int = 1) -> np.ndarray:
    """Channels-first N-D cross-correlation, MXNet's Convolution, in ``x``'s float dtype.

    ``x`` (N, C, *S), ``w`` (F, C/groups, *kernel), ``b`` (F,) or None.
    """
    out_sp = [conv_out_size(s, k, st, d, p) for s, k, st, d, p in
              zip(x.shape[2:], g.kernel, g.stride, g.dilate, g.pad)]
    if min(out_sp) < 1:
        raise ShapeError(f"Convolution: kernel {g.kernel} (dilate {g.dilate}) exceeds data "
                         f"{x.shape} padded by {g.pad}")
    if all(k == 1 for k in g.kernel) and not any(g.pad):
        out = _conv_1x1(x, w, g, groups, out_sp)
    else:
        out = _conv_chunks(x, w, g, groups, out_sp)
    if b is not None:
        out += b.reshape((-1,) + (1,) * g.nd)
    return out


def deconv_nd(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, g: Geometry,
              pad: Sequence[int], out_sp: Sequence[int], groups: int = 1) -> np.ndarray:
    """Channels-first N-D transposed convolution, MXNet's Deconvolution.

    ``x`` (N, C, *S), ``w`` (C, F/groups, *kernel). One matmul gives every tap's
    contribution; each tap's part that lands inside the (cropped) output is then added into a
    strided window of it (col2im). Taps landing only in the crop are skipped; images of up to
    ``_SMALL_IMAGE`` positions run on lanes (:func:`deconv_lanes`); larger ones multiply per
    sample, in batch chunks that bound the tap buffer to ``_COL_BUDGET`` bytes.
    """
    n, c, *sp = x.shape
    if side_by_side(int(np.prod(sp))):
        out = deconv_lanes(to_lanes(x, (0,) * g.nd, "lanes"), w, g, pad, out_sp, groups)
        out = from_lanes(out)
    else:
        fg, cg = w.shape[1], c // groups
        f = groups * fg
        spans = [_tap_spans(k, s, d, p, x_, o) for k, s, d, p, x_, o in
                 zip(g.kernel, g.stride, g.dilate, pad, sp, out_sp)]
        live = _live(spans)
        dt = np.result_type(x, w)
        out = np.zeros((n, f, *out_sp), dt)
        if live is not None:
            wk = w[(slice(None), slice(None)) + live]
            t = int(np.prod(wk.shape[2:]))
            wg = wk.reshape(groups, cg, fg * t).transpose(0, 2, 1)
            kept = list(itertools.product(*(range(v.start, v.stop) for v in live)))
            step = max(1, _COL_BUDGET // max(f * t * int(np.prod(sp)) * dt.itemsize, 1))
            for i in range(0, n, step):
                _deconv_taps(x[i:i + step], wg, g, pad, spans, kept, out, i)
    if b is not None:
        out += b.reshape((-1,) + (1,) * g.nd)
    return out


def _tap_window(k: Sequence[int], g: Geometry, pad: Sequence[int],
                spans: list[list[tuple[int, int]]]) -> tuple[tuple, tuple] | None:
    """For tap ``k`` of a transposed convolution: the (source, destination) spatial slices of
    its part that lands inside the cropped output, or None when nothing does."""
    src, dst = [], []
    for axis, ki in enumerate(k):
        lo, hi = spans[axis][ki]
        if hi <= lo:
            return None
        s = g.stride[axis]
        first = ki * g.dilate[axis] + lo * s - pad[axis]
        src.append(slice(lo, hi))
        dst.append(slice(first, first + (hi - lo - 1) * s + 1, s))
    return tuple(src), tuple(dst)


def deconv_lanes(xt: np.ndarray, w: np.ndarray, g: Geometry, pad: Sequence[int],
                 out_sp: Sequence[int], groups: int = 1) -> np.ndarray:
    """:func:`deconv_nd` on lanes: ``xt`` (C, *S, N) (:func:`to_lanes`, unpadded) gives the
    transposed convolution as lanes (F, *out_sp, N), in the :func:`scratch` slot ``"deconv"``.
    The output channels run in blocks: one GEMM gives a block's every tap for all samples (at
    most ``_TAP_BLOCK`` bytes), then each tap's part is added into its strided window of the
    output -- rows of N samples, not a few pixels."""
    c, *sp, n = xt.shape
    fg, cg = w.shape[1], c // groups
    spans = [_tap_spans(k, s, d, p, x_, o) for k, s, d, p, x_, o in
             zip(g.kernel, g.stride, g.dilate, pad, sp, out_sp)]
    live = _live(spans)
    dt = np.result_type(xt, w)
    out = scratch("deconv", (groups * fg, *out_sp, n), dt)
    out.fill(0)
    if live is None:
        return out
    if not worth_pruning(int(np.prod(g.kernel)), int(np.prod([v.stop - v.start for v in live])),
                         int(np.prod(sp)) * n):
        live = tuple(slice(0, k) for k in g.kernel)  # dead taps: no window, skipped below
    wk = w[(slice(None), slice(None)) + live]
    t = int(np.prod(wk.shape[2:]))
    wg = wk.reshape(groups, cg, fg * t)  # (G, C/G, F/G * taps): filter-major, then tap
    kept = list(itertools.product(*(range(v.start, v.stop) for v in live)))
    xg = xt.reshape(groups, cg, -1)
    outg = out.reshape(groups, fg, *out_sp, n)
    block = max(1, min(fg, _TAP_BLOCK // max(t * xg.shape[2] * dt.itemsize, 1)))
    every = (slice(None),)
    for f0 in range(0, fg, block):
        f1 = min(fg, f0 + block)
        cols = np.matmul(wg[:, :, f0 * t:f1 * t].transpose(0, 2, 1), xg,
                         out=scratch("gemm", (groups, (f1 - f0) * t, xg.shape[2]), dt))
        cols = cols.reshape(groups, f1 - f0, t, *sp, n)
        for j, k in enumerate(kept):
            win = _tap_window(k, g, pad, spans)
            if win is not None:
                outg[every + (slice(f0, f1),) + win[1]] += cols[every * 2 + (j,) + win[0]]
    return out


def _deconv_taps(x, wg, g: Geometry, pad, spans, kept, out, start: int) -> None:
    """Add the transposed convolution of the batch chunk ``x`` (samples ``start`` on) into
    ``out`` (N, F, *out_sp): one GEMM per sample for every tap, then a strided add per tap."""
    n, _, *sp = x.shape
    groups, cg = wg.shape[0], wg.shape[2]
    f, t = groups * wg.shape[1] // len(kept), len(kept)
    cols = np.matmul(wg, x.reshape(n, groups, cg, -1)).reshape(n, f, t, *sp)
    lead = (slice(start, start + n), slice(None))
    for j, k in enumerate(kept):
        win = _tap_window(k, g, pad, spans)
        if win is not None:
            out[lead + win[1]] += cols[(slice(None), slice(None), j) + win[0]]
