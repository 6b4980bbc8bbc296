"""Layout: depth_to_space and space_to_depth, with their ONNX lowerings.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..._core.attr_fields import Int
from ..infer import fmt
from ..lowering import LoweringContext, lowering
from ..lowering.dims import Dims, reshape_to
from ..registry import define
from .rules import check, one_output, out_list

__all__ = []


# --- layout ----------------------------------------------------------------------------------
def _block(p, s: tuple, to_space: bool) -> tuple:
    b = p.block_size
    check(len(s) == 4, f"needs a 4-d input (N, C, H, W), got {fmt(s)}")
    check(b > 0, f"block_size={b} must be positive")
    n, c, h, w = s
    if to_space:
        check(c % (b * b) == 0, f"channels {c} of {fmt(s)} are not a multiple of block^2={b*b}")
        return n, c // (b * b), h * b, w * b
    check(h % b == 0 and w % b == 0, f"height and width of {fmt(s)} are not multiples of "
                                     f"block_size={b}")
    return n, c * b * b, h // b, w // b


def _depth_to_space(p, x):
    n, c, h, w = x.shape
    b = p.block_size
    out = _block(p, x.shape, True)
    # MXNet's DCR order: the depth splits as (block_row, block_col, channel).
    y = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    return y.copy().reshape(out)


def _space_to_depth(p, x):
    n, c, h, w = x.shape
    b = p.block_size
    out = _block(p, x.shape, False)
    y = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
    return y.copy().reshape(out)


# --- gradients (MXNet's FGradient): each op is the other's gradient ---------------------------
def _grad_d2s(F, p, inputs, outputs, ograds):
    return [F.space_to_depth(ograds[0], block_size=p.block_size)]


def _grad_s2d(F, p, inputs, outputs, ograds):
    return [F.depth_to_space(ograds[0], block_size=p.block_size)]


define("depth_to_space", _depth_to_space, one_output(lambda p, s: _block(p, s, True)),
    params={"block_size": Int()},
    doc="Move ``block_size x block_size`` blocks of channels into space (DCR order).",
    name_errors=True, gradient=_grad_d2s)
define("space_to_depth", _space_to_depth, one_output(lambda p, s: _block(p, s, False)),
    params={"block_size": Int()},
    doc="Move ``block_size x block_size`` spatial blocks into channels (inverse of "
        "depth_to_space).", name_errors=True, gradient=_grad_s2d)




# --- layout ----------------------------------------------------------------------------------
# onnxruntime implements DepthToSpace/SpaceToDepth for these dtypes; others take the
# Reshape/Transpose form of the same permutation (exact for every dtype)
_SPACE_NATIVE = ("float16", "float32", "float64")


def _space_onnx(to_space: bool) -> Callable:
    """MXNet's depth_to_space is ONNX's DepthToSpace in DCR mode: the depth splits as
    (block_row, block_col, channel); space_to_depth is its inverse."""
    op_type = "DepthToSpace" if to_space else "SpaceToDepth"

    def handler(ctx: LoweringContext) -> None:
        b = ctx.params.block_size
        if np.dtype(ctx.dtype).name in _SPACE_NATIVE:
            mode = "DCR" if to_space else None
            ctx.make(op_type, ctx.inputs[:1], outputs=out_list(ctx), blocksize=b, mode=mode)
            return
        dims = Dims(ctx)
        if any(dims.dyn[1:]):
            raise ctx.fail(f"{op_type} of a {np.dtype(ctx.dtype).name} input with dynamic "
                           "C/H/W has no ONNX lowering here; export with them fixed")
        n, (c, h, w) = dims.entry(0), dims.static[1:]
        if to_space:
            mid, perm, out = [n, b, b, c // (b * b), h, w], [0, 3, 4, 1, 5, 2], \
                [n, c // (b * b), h * b, w * b]
        else:
            mid, perm, out = [n, c, h // b, b, w // b, b], [0, 3, 5, 1, 2, 4], \
                [n, c * b * b, h // b, w // b]
        y = ctx.make("Transpose", [reshape_to(ctx, ctx.inputs[0], mid)], perm=perm)
        reshape_to(ctx, y, out, ctx.outputs[0])

    handler.__name__ = f"to_{op_type}"
    return handler




# --- ONNX lowerings attached ---------------------------------------------------------------
lowering("depth_to_space")(_space_onnx(True))
lowering("space_to_depth")(_space_onnx(False))
