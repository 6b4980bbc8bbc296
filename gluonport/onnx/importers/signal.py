"""Import handlers for ONNX signal ops: DFT as products with constant cosine/sine matrices
(MXNet 1.x has no FFT on the CPU), STFT as framing (``take``) then the same products,
MelWeightMatrix as a constant.

DFT: with ``x = xr + i xi`` along the (static) signal axis of length ``N`` and
``L = dft_length`` (default ``N``; a shorter one truncates, a longer one zero-pads), the
forward transform is ``Yr = xr C + xi S``, ``Yi = xi C - xr S`` with ``C[n, k] = cos(2 pi k n /
L)``, ``S[n, k] = sin(2 pi k n / L)``; the inverse flips the sines' sign and divides by ``L``;
``onesided`` keeps ``k <= L // 2``.
"""

from __future__ import annotations

import numpy as np

from .._import_build import norm_axis, reshape
from .._import_context import ImportContext, Value, importer

__all__: list[str] = []

_MAX_LENGTH = 8192  # the constant matrices are (N, K): at most this many samples


def _matrices(n: int, length: int, onesided: int, dtype) -> tuple[np.ndarray, np.ndarray]:
    k = np.arange(length // 2 + 1 if onesided else length)
    rows = np.arange(n)[:, None]
    angle = 2.0 * np.pi * ((rows * k[None, :]) % length) / length
    keep = (rows < length).astype(np.float64)  # samples past dft_length are dropped
    return (np.cos(angle) * keep).astype(dtype), (np.sin(angle) * keep).astype(dtype)


def _dft(ctx: ImportContext, x: Value, length: Value | None, axis: int, inverse: int,
         onesided: int) -> object:
    shape = x.static_shape
    if shape is None or shape[-1] not in (1, 2):
        raise ctx.fail(f"DFT needs a static input shape ending in 1 (real) or 2 (complex), got "
                       f"{x.shape}")
    rank = len(shape) - 1  # of the signal without its complex axis
    a = norm_axis(axis, len(shape), ctx)
    if a >= rank:
        raise ctx.fail(f"axis {axis} is the complex axis")
    n = shape[a]
    irfft = bool(inverse and onesided)
    default = 2 * (n - 1) if irfft else n
    size = length.ints()[0] if length is not None else default
    if not 0 < max(n, size) <= _MAX_LENGTH:
        raise ctx.fail(f"a DFT of {size} points over {n} samples: at most {_MAX_LENGTH} here")
    dtype = np.dtype(x.dtype or np.float32)
    if irfft:
        cos, sin = _irfft_matrices(n, size)
    else:
        cos, sin = _matrices(n, size, onesided, np.float64)
        if inverse:
            cos, sin = cos / size, -sin / size
    last = rank - 1

    def part(i: int):  # float64 products: onnx's reference transforms in double precision
        p = reshape(ctx, ctx.op("slice_axis", x.sym, axis=-1, begin=i, end=i + 1), shape[:-1])
        p = p if dtype == np.float64 else ctx.op("Cast", p, dtype="float64")
        return p if a == last else ctx.op("swapaxes", p, dim1=a, dim2=last)

    c, s = ctx.new_param(f"{ctx.node_name}_cos", cos), ctx.new_param(f"{ctx.node_name}_sin", sin)
    xr = part(0)
    yr, yi = ctx.op("dot", xr, c), ctx.op("negative", ctx.op("dot", xr, s))
    if shape[-1] == 2:
        xi = part(1)
        yr = ctx.op("elemwise_add", yr, ctx.op("dot", xi, s))
        yi = ctx.op("elemwise_add", yi, ctx.op("dot", xi, c))
    outs = [yr] if irfft else [yr, yi]
    if a != last:
        outs = [ctx.op("swapaxes", o, dim1=a, dim2=last) for o in outs]
    y = ctx.op("stack", *outs, axis=rank)
    return y if dtype == np.float64 else ctx.op("Cast", y, dtype=dtype.name)


def _irfft_matrices(n: int, length: int) -> tuple[np.ndarray, np.ndarray]:
    """``(n, length)`` matrices of the inverse of a one-sided spectrum (numpy's irfft): bins
    ``0 < k < length / 2`` count twice (their mirror images), the rest once; bins past
    ``length // 2`` are dropped. With them ``x = Xr C + Xi S`` (``S`` is minus the sines)."""
    k = np.arange(n)[:, None]
    t = np.arange(length)[None, :]
    weight = np.where((k == 0) | (2 * k == length), 1.0, 2.0) * (k <= length // 2)
    angle = 2.0 * np.pi * ((k * t) % length) / length
    return weight * np.cos(angle) / length, -weight * np.sin(angle) / length


@importer("DFT", since=17)
def dft17(ctx: ImportContext, x: Value, dft_length: Value | None = None, *, axis: int = 1,
          inverse: int = 0, onesided: int = 0) -> object:
    return _dft(ctx, x, dft_length, axis, inverse, onesided)


@importer("DFT", since=20)
def dft20(ctx: ImportContext, x: Value, dft_length: Value | None = None,
          axis_in: Value | None = None, *, inverse: int = 0, onesided: int = 0) -> object:
    axis = axis_in.ints()[0] if axis_in is not None else -2
    return _dft(ctx, x, dft_length, axis, inverse, onesided)


@importer("MelWeightMatrix", since=17)
def mel_weight_matrix(ctx: ImportContext, *inputs: Value, output_datatype: int = 1
                      ) -> object:
    """A constant of its (constant) inputs, computed by onnx's reference implementation."""
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    for v in inputs:
        if v.const is None:
            v.ints()  # records the input as needed constant, and fails
    node = helper.make_node("MelWeightMatrix", [v.name for v in inputs], ["out"],
                            output_datatype=output_datatype)
    feeds = {v.name: np.asarray(v.const).reshape(()) for v in inputs}  # all are scalars
    if any(np.asarray(v.const).size != 1 for v in inputs):
        raise ctx.fail("MelWeightMatrix's inputs must be scalars")
    return ReferenceEvaluator(node).run(None, feeds)[0]


@importer("STFT", since=17)
def stft(ctx: ImportContext, signal: Value, frame_step: Value, window: Value | None = None,
         frame_length: Value | None = None, *, onesided: int = 1) -> object:
    """Frames gathered with ``take`` (a constant ``(frames, frame_length)`` index table),
    times the window, then the DFT of each frame as products with the constant cosine/sine
    matrices (float64, as DFT here)."""
    shape = signal.static_shape
    if shape is None or len(shape) != 3 or shape[-1] not in (1, 2):
        raise ctx.fail(f"STFT needs a static (batch, length, 1 or 2) signal, got {signal.shape}")
    step = frame_step.ints()[0]
    if frame_length is not None:
        size = frame_length.ints()[0]
    elif window is not None and window.static_shape is not None:
        size = window.static_shape[0]
    else:
        size = shape[1]
    if step < 1 or not 0 < size <= min(shape[1], _MAX_LENGTH):
        raise ctx.fail(f"frame_step {step}, frame_length {size} on a signal of {shape[1]}")
    frames = (shape[1] - size) // step + 1
    index = np.arange(frames)[:, None] * step + np.arange(size)[None, :]
    table = ctx.new_param(f"{ctx.node_name}_frames", index.astype(np.int64))
    cos, sin = _matrices(size, size, onesided, np.float64)
    c, s = ctx.new_param(f"{ctx.node_name}_cos", cos), ctx.new_param(f"{ctx.node_name}_sin", sin)
    dtype = np.dtype(signal.dtype or np.float32)
    win = None
    if window is not None:
        win = reshape(ctx, ctx.op("Cast", window.sym, dtype="float64"), (1, 1, size))

    def part(i: int):  # (batch, frames, size) windowed frames of the real/imaginary part
        p = reshape(ctx, ctx.op("slice_axis", signal.sym, axis=2, begin=i, end=i + 1),
                    shape[:2])
        p = ctx.op("take", ctx.op("Cast", p, dtype="float64"), table, axis=1)
        return p if win is None else ctx.op("broadcast_mul", p, win)

    xr = part(0)
    yr, yi = ctx.op("dot", xr, c), ctx.op("negative", ctx.op("dot", xr, s))
    if shape[-1] == 2:
        xi = part(1)
        yr = ctx.op("elemwise_add", yr, ctx.op("dot", xi, s))
        yi = ctx.op("elemwise_add", yi, ctx.op("dot", xi, c))
    y = ctx.op("stack", yr, yi, axis=3)
    return y if dtype == np.float64 else ctx.op("Cast", y, dtype=dtype.name)
