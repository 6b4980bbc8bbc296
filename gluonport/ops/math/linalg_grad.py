"""Gradients of the linear-algebra ops (:mod:`gluonport.ops.math.linalg`): MXNet 1.9.1's
``FGradient`` of each, from ``la_op-inl.h`` and ``dot-inl.h``.

Rules built from registered ops (they run on the tape, in a backward graph and in ONNX as the
forward ops do):

* ``batch_dot``, ``_linalg_gemm``, ``_linalg_gemm2``: the products ``gemm2_backward`` forms
  (``dA = alpha op(dC, B)``, ``dB = alpha op(A, dC)`` with the transposes it picks), and
  ``dC = beta * dD`` for gemm;
* ``_linalg_trmm``: ``dA = tri(alpha op(dC) op(B))`` (the triangle of A that is read),
  ``dB = trmm(A, dC)`` with the transpose flipped; ``_linalg_syrk``: ``alpha (dB + dB^T) A``
  (``A (dB + dB^T)`` when transposed), as two gemm2 products like MXNet's two gemm calls;
* ``_linalg_extractdiag``/``makediag`` and ``extracttrian``/``maketrian`` are each other's
  gradient (same ``offset``/``lower``).

Backward kernels under MXNet's names (inputs documented on each op; MXNet's read the shapes
from the forward node, ours take the forward inputs/outputs they need):

* ``_backward_dot(ograd, lhs, rhs)``: the 2-d views MXNet's DotBackward multiplies;
* ``_backward_linalg_sumlogdiag(ograd, A)``: ``ograd / A_ii`` on the diagonal;
* ``_backward_linalg_potrf/potri/trsm/gelqf/syevd/inverse/det/slogdet``: MXNet's formulas
  in numpy (float64 for float64 data, float32 otherwise); ONNX has no solve or inverse, so
  these (like their forward ops, except det/slogdet) have no ONNX lowering. ``det``/``slogdet``
  give zero for singular matrices, as MXNet does.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..._core.attr_fields import Bool, Enum, Float, Optional
from ..lowering import LoweringContext, deliver, lowering
from ..registry import OpDef, register

__all__ = ["LINALG_GRADS"]

_NOT_DIFFERENTIATED = ("a backward kernel: MXNet 1.9.1 registers no gradient for it, so "
                       "gradients of gradients through it are not available")


# --- rules composed from ops -----------------------------------------------------------------
def _products(mult: Callable, og, a, b, ta: bool, tb: bool, **kw) -> tuple:
    """(dA, dB) of ``C = op(A) op(B)`` (``mult(x, y, transpose_a, transpose_b)``), as
    ``gemm2_backward`` forms them."""
    da = mult(b, og, tb, True, **kw) if ta else mult(og, b, False, not tb, **kw)
    db = mult(og, a, True, ta, **kw) if tb else mult(a, og, not ta, False, **kw)
    return da, db


def _gemm2_of(F):
    def mult(x, y, ta, tb, alpha=1.0, axis=-2):
        return F.linalg.gemm2(x, y, transpose_a=ta, transpose_b=tb, alpha=alpha, axis=axis)

    return mult


def _batch_dot_grad(F, p, inputs, outputs, ograds):
    def mult(x, y, ta, tb):
        return F.batch_dot(x, y, transpose_a=ta, transpose_b=tb)

    return list(_products(mult, ograds[0], inputs[0], inputs[1], p.transpose_a, p.transpose_b))


def _gemm2_grad(F, p, inputs, outputs, ograds):
    return list(_products(_gemm2_of(F), ograds[0], inputs[0], inputs[1], p.transpose_a,
                          p.transpose_b, alpha=p.alpha, axis=p.axis))


def _gemm_grad(F, p, inputs, outputs, ograds):
    da, db = _products(_gemm2_of(F), ograds[0], inputs[0], inputs[1], p.transpose_a,
                       p.transpose_b, alpha=p.alpha, axis=p.axis)
    return [da, db, F._internal._mul_scalar(ograds[0], scalar=p.beta)]


def _triangle(F, x, lower: bool):
    """``x`` with the other triangle zeroed (ZeroTriangular), through the packed form."""
    return F.linalg.maketrian(F.linalg.extracttrian(x, offset=0, lower=lower), offset=0,
                              lower=lower)


def _trmm_grad(F, p, inputs, outputs, ograds):
    a, b, og = inputs[0], inputs[1], ograds[0]
    t = p.transpose
    mult = _gemm2_of(F)
    if p.rightside == t:
        da = mult(og, b, t, not t, alpha=p.alpha)
    else:
        da = mult(b, og, not t, t, alpha=p.alpha)
    db = F.linalg.trmm(a, og, transpose=not t, rightside=p.rightside, lower=p.lower,
                       alpha=p.alpha)
    return [_triangle(F, da, p.lower), db]


def _syrk_grad(F, p, inputs, outputs, ograds):
    a, og = inputs[0], ograds[0]
    mult = _gemm2_of(F)
    if p.transpose:
        terms = mult(a, og, False, False, alpha=p.alpha), mult(a, og, False, True, alpha=p.alpha)
    else:
        terms = mult(og, a, False, False, alpha=p.alpha), mult(og, a, True, False, alpha=p.alpha)
    return [F.elemwise_add(*terms)]


def _inverse_pair(forward: str, backward: str, keys: tuple[str, ...]):
    def rule(F, p, inputs, outputs, ograds):
        return [getattr(F.linalg, backward)(ograds[0], **{k: getattr(p, k) for k in keys})]

    rule.__name__ = f"{forward}_grad"
    return rule


def _kernel_rule(name: str, use_inputs: tuple[int, ...], use_outputs: tuple[int, ...],
                 ograd_slots: tuple[int, ...] = (0,), keys: tuple[str, ...] = (),
                 n_grads: int = 1):
    """A rule calling the kernel ``name`` with the ograds, inputs and outputs it reads."""

    def rule(F, p, inputs, outputs, ograds):
        args = [ograds[i] for i in ograd_slots] + [inputs[i] for i in use_inputs] \
            + [outputs[i] for i in use_outputs]
        res = getattr(F._internal, name)(*args, **{k: getattr(p, k) for k in keys})
        return [res[i] for i in range(n_grads)] if n_grads > 1 else [res]

    rule.__name__ = f"grad_via{name}"
    return rule


_TRIANG_KEYS = ("transpose", "rightside", "lower", "alpha")

LINALG_GRADS: dict[str, Callable] = {
    "dot": _kernel_rule("_backward_dot", (0, 1), (), keys=("transpose_a", "transpose_b"),
                        n_grads=2),
    "batch_dot": _batch_dot_grad,
    "gemm": _gemm_grad,
    "gemm2": _gemm2_grad,
    "trmm": _trmm_grad,
    "syrk": _syrk_grad,
    "extractdiag": _inverse_pair("extractdiag", "makediag", ("offset",)),
    "makediag": _inverse_pair("makediag", "extractdiag", ("offset",)),
    "extracttrian": _inverse_pair("extracttrian", "maketrian", ("offset", "lower")),
    "maketrian": _inverse_pair("maketrian", "extracttrian", ("offset", "lower")),
    "sumlogdiag": _kernel_rule("_backward_linalg_sumlogdiag", (0,), ()),
    "potrf": _kernel_rule("_backward_linalg_potrf", (), (0,), keys=("lower",)),
    "potri": _kernel_rule("_backward_linalg_potri", (0,), (0,), keys=("lower",)),
    "trsm": _kernel_rule("_backward_linalg_trsm", (0, 1), (0,), keys=_TRIANG_KEYS, n_grads=2),
    "gelqf": _kernel_rule("_backward_linalg_gelqf", (), (0, 1), ograd_slots=(0, 1)),
    "syevd": _kernel_rule("_backward_linalg_syevd", (), (0, 1), ograd_slots=(0, 1)),
    "inverse": _kernel_rule("_backward_linalg_inverse", (), (0,)),
    "det": _kernel_rule("_backward_linalg_det", (0,), (0,)),
    "slogdet": _kernel_rule("_backward_linalg_slogdet", (0,), (1,), ograd_slots=(1,)),
}
"""FGradient by op stem (``_linalg_<stem>``; ``dot``, ``batch_dot``)."""


# --- numpy kernels -----------------------------------------------------------------------------
def _t(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2)


def _work(*arrays: np.ndarray) -> list[np.ndarray]:
    dt = np.float64 if arrays[-1].dtype == np.float64 else np.float32
    return [a.astype(dt, copy=False) for a in arrays]


def _tri(x: np.ndarray, lower: bool, k: int = 0) -> np.ndarray:
    return np.tril(x, k) if lower else np.triu(x, -k)


def _copy_to_other_side(m: np.ndarray, from_lower: bool) -> np.ndarray:
    """CopyTriangularToOppositeSide: the ``from_lower`` triangle mirrored onto the other."""
    t = _tri(m, from_lower)
    return t + _t(_tri(m, from_lower, -1))


def _solve_left(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.linalg.solve(a, b)


def _solve_right(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``X`` with ``X a = b``."""
    return _t(np.linalg.solve(_t(a), _t(b)))


def _potrf_back(p, dl: np.ndarray, low: np.ndarray) -> np.ndarray:
    """``0.5 B^-T copyLTU(B^T dB) B^-1`` (lower; the upper factor by transposition)."""
    dl_, b = _work(dl, low)
    b = _tri(b, p.lower)
    m = _t(b) @ dl_ if p.lower else dl_ @ _t(b)
    m = _copy_to_other_side(m, p.lower)
    if p.lower:
        out = 0.5 * _solve_right(b, _solve_left(_t(b), m))
    else:
        out = 0.5 * _solve_right(_t(b), _solve_left(b, m))
    return out.astype(low.dtype)


def _potri_back(p, da: np.ndarray, b: np.ndarray, a: np.ndarray) -> np.ndarray:
    """``-tril(A (dA + dA^T) B^-T)`` (lower; the upper case transposed)."""
    da_, b_, a_ = _work(da, b, a)
    bt = _tri(b_, p.lower)
    if p.lower:
        db = -_solve_right(_t(bt), a_ @ da_ + a_ @ _t(da_))
    else:
        db = -_solve_left(_t(bt), da_ @ a_ + _t(da_) @ a_)
    return _tri(db, p.lower).astype(b.dtype)


def _op(x: np.ndarray, t: bool) -> np.ndarray:
    return _t(x) if t else x


def _trsm_back(p, dc: np.ndarray, a: np.ndarray, b: np.ndarray,
               c: np.ndarray) -> list[np.ndarray]:
    """``dB = trsm(A, dC)`` with the transpose flipped; ``dA = tri(-1/alpha op(dB) op(C))``."""
    dc_, a_, c_ = _work(dc, a, c)
    t = _op(_tri(a_, p.lower), not p.transpose)
    db = p.alpha * (_solve_right(t, dc_) if p.rightside else _solve_left(t, dc_))
    scale = -1.0 / p.alpha
    if p.rightside == p.transpose:
        da = scale * (_op(db, p.transpose) @ _op(c_, not p.transpose))
    else:
        da = scale * (_op(c_, not p.transpose) @ _op(db, p.transpose))
    return [_tri(da, p.lower).astype(a.dtype), db.astype(b.dtype)]


def _sumlogdiag_back(p, og: np.ndarray, a: np.ndarray) -> np.ndarray:
    n = a.shape[-1]
    scale = og.reshape(a.shape[:-2] + (1,))
    with np.errstate(divide="ignore", invalid="ignore"):
        diag = scale / np.diagonal(a, axis1=-2, axis2=-1)
    out = np.zeros(a.shape, dtype=a.dtype)
    out[..., np.arange(n), np.arange(n)] = diag
    return out


def _gelqf_back(p, dq: np.ndarray, dl: np.ndarray, q: np.ndarray,
                low: np.ndarray) -> np.ndarray:
    """``L^-T (dQ + copyLTU(L^T dL - dQ Q^T) Q)``."""
    dq_, dl_, q_, l_ = _work(dq, dl, q, low)
    m = _copy_to_other_side(_t(l_) @ dl_ - dq_ @ _t(q_), True)
    return _solve_left(_t(l_), dq_ + m @ q_).astype(q.dtype)


def _syevd_back(p, du: np.ndarray, dlam: np.ndarray, u: np.ndarray,
                lam: np.ndarray) -> np.ndarray:
    """``U^T Y U`` with ``Y_ij = (X_ij - X_ji) / (2 max(l_i - l_j, eps))`` off the diagonal
    (``X = dU U^T``, i > j mirrored) and ``dL`` on it."""
    du_, dl_, u_, l_ = _work(du, dlam, u, lam)
    eps = 1e-100 if u_.dtype == np.float64 else 1e-30
    x = du_ @ _t(u_)
    gap = np.maximum(l_[..., :, None] - l_[..., None, :], eps) * 2.0
    with np.errstate(all="ignore"):
        lower = (x - _t(x)) / gap
    n = u.shape[-1]
    below = np.tril(np.ones((n, n), dtype=bool), -1)
    y = np.where(below, lower, 0)
    y = y + _t(y)
    y[..., np.arange(n), np.arange(n)] = dl_
    return (_t(u_) @ y @ u_).astype(u.dtype)


def _inverse_back(p, da: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Of ``A = inverse(B)``: ``-A^T dA A^T``."""
    da_, a_ = _work(da, a)
    return (-(_t(a_) @ (da_ @ _t(a_)))).astype(a.dtype)


def _inv_or_zero(a: np.ndarray, singular: np.ndarray) -> np.ndarray:
    """``inverse(a)`` per matrix; identity stand-ins where ``singular`` (zeroed later)."""
    eye = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape)
    mask = singular.reshape(a.shape[:-2] + (1, 1))
    return np.linalg.inv(np.where(mask, eye, a))


def _det_back(p, og: np.ndarray, a: np.ndarray, det: np.ndarray) -> np.ndarray:
    """Jacobi's formula ``ddet det A^-T``; zero where ``det == 0``."""
    og_, a_, det_ = _work(og, a, det)
    batch = a.shape[:-2]
    zero = (det_ == 0).reshape(batch)
    g = (det_ * og_).reshape(batch + (1, 1)) * _t(_inv_or_zero(a_, zero))
    return np.where(zero.reshape(batch + (1, 1)), 0, g).astype(a.dtype)


def _slogdet_back(p, og: np.ndarray, a: np.ndarray, logabs: np.ndarray) -> np.ndarray:
    """``dlogabsdet A^-T``; zero where ``logabsdet == -inf`` (the sign gets no gradient)."""
    og_, a_, la = _work(og, a, logabs)
    batch = a.shape[:-2]
    zero = np.isneginf(la).reshape(batch)
    g = og_.reshape(batch + (1, 1)) * _t(_inv_or_zero(a_, zero))
    return np.where(zero.reshape(batch + (1, 1)), 0, g).astype(a.dtype)


def _dot_views(p, lhs: np.ndarray, rhs: np.ndarray) -> tuple:
    """(2-d lhs as multiplied, 2-d rhs as multiplied, effective transposes) of MXNet's dot."""
    ta, tb = p.transpose_a and lhs.ndim > 1, p.transpose_b and rhs.ndim > 1
    l2 = lhs.reshape(lhs.shape[0], -1) if ta else lhs.reshape(-1, lhs.shape[-1])
    r2 = rhs.reshape(-1, rhs.shape[-1]) if tb else rhs.reshape(rhs.shape[0], -1)
    return (l2.T if ta else l2), (r2.T if tb else r2), ta, tb


def _dot_back(p, og: np.ndarray, lhs: np.ndarray, rhs: np.ndarray) -> list[np.ndarray]:
    work = np.float32 if lhs.dtype == np.float16 else lhs.dtype
    l2, r2, ta, tb = _dot_views(p, lhs.astype(work, copy=False), rhs.astype(work, copy=False))
    g2 = og.astype(work, copy=False).reshape(l2.shape[0], r2.shape[1])
    dl, dr = g2 @ r2.T, l2.T @ g2
    return [(dl.T if ta else dl).reshape(lhs.shape).astype(lhs.dtype),
            (dr.T if tb else dr).reshape(rhs.shape).astype(rhs.dtype)]


# --- registration ------------------------------------------------------------------------------
def _like(*positions: int):
    """Shape and type rules: output k is shaped and typed like input ``positions[k]``."""

    def shape(p, s):
        return s, [s[i] for i in positions]

    def dtype(p, t):
        return t, [t[i] for i in positions]

    return shape, dtype


_LOWER = {"lower": Bool(True)}
_TRIANG = {"transpose": Bool(False), "rightside": Bool(False), "lower": Bool(True),
           "alpha": Float(1.0)}
_NO_SOLVE = "ONNX has no triangular solve or matrix inverse operator"

_KERNELS: list[tuple[str, dict, tuple[str, ...], Callable, tuple[int, ...], str]] = [
    # (name, params, inputs, compute, output k shaped like input, what it computes)
    ("_backward_dot", {"transpose_a": Bool(False), "transpose_b": Bool(False),
                       "forward_stype": Optional(Enum(("default", "row_sparse", "csr")))},
     ("ograd", "lhs", "rhs"), _dot_back, (1, 2),
     "dot's gradients: ograd times the other operand, on MXNet's 2-d views"),
    ("_backward_linalg_sumlogdiag", {}, ("ograd", "A"), _sumlogdiag_back, (1,),
     "sumlogdiag's gradient: ograd / A_ii on each diagonal, 0 elsewhere"),
    ("_backward_linalg_potrf", _LOWER, ("ograd", "L"), _potrf_back, (1,),
     "potrf's gradient from the factor L (the forward output)"),
    ("_backward_linalg_potri", _LOWER, ("ograd", "L", "out"), _potri_back, (1,),
     "potri's gradient from the factor L (input) and the inverse (output)"),
    ("_backward_linalg_trsm", _TRIANG, ("ograd", "A", "B", "out"), _trsm_back, (1, 2),
     "trsm's gradients of A and B, from the solution (output)"),
    ("_backward_linalg_gelqf", {}, ("ograd_Q", "ograd_L", "Q", "L"), _gelqf_back, (2,),
     "gelqf's gradient from both outputs and their gradients"),
    ("_backward_linalg_syevd", {}, ("ograd_U", "ograd_L", "U", "L"), _syevd_back, (2,),
     "syevd's gradient from both outputs and their gradients"),
    ("_backward_linalg_inverse", {}, ("ograd", "out"), _inverse_back, (1,),
     "inverse's gradient -out^T ograd out^T"),
    ("_backward_linalg_det", {}, ("ograd", "A", "det"), _det_back, (1,),
     "det's gradient ograd det A^-T (0 for singular A)"),
    ("_backward_linalg_slogdet", {}, ("ograd_logabsdet", "A", "logabsdet"), _slogdet_back,
     (1,), "slogdet's gradient ograd A^-T (0 for singular A)"),
]
_HAS_ONNX = {"_backward_dot", "_backward_linalg_sumlogdiag"}

for _name, _params, _inputs, _fn, _like_pos, _what in _KERNELS:
    _shape, _type = _like(*_like_pos)
    register(OpDef(
        _name, params=_params, inputs=_inputs, compute=_fn, num_outputs=len(_like_pos),
        infer_shape=_shape, infer_type=_type, no_gradient=_NOT_DIFFERENTIATED,
        no_onnx=None if _name in _HAS_ONNX else _NO_SOLVE,
        doc=f"{_what}. Inputs: {', '.join(_inputs)}."))


# --- ONNX lowerings ----------------------------------------------------------------------------
def _dot_back_onnx(ctx: LoweringContext) -> None:
    """The 2-d views (Flatten), two MatMuls, Reshape back to each operand's shape."""
    p = ctx.params
    lnd, rnd = len(ctx.in_shapes[1]), len(ctx.in_shapes[2])
    ta, tb = p.transpose_a and lnd > 1, p.transpose_b and rnd > 1
    dt = np.dtype(ctx.in_dtypes[1])
    work = np.dtype(np.float32) if dt == np.float16 else dt

    def cast(x: str, src) -> str:
        return x if np.dtype(src) == work else ctx.cast_to(x, work)

    og, lhs, rhs = (cast(ctx.inputs[i], ctx.in_dtypes[i]) for i in range(3))
    l2 = ctx.make("Flatten", [lhs], axis=(1 if ta else lnd - 1) if lnd > 1 else 0)
    r2 = ctx.make("Flatten", [rhs], axis=(rnd - 1 if tb else 1) if rnd > 1 else 1)
    if ta:
        l2 = ctx.make("Transpose", [l2], perm=[1, 0])
    if tb:
        r2 = ctx.make("Transpose", [r2], perm=[1, 0])
    rows = ctx.make("Slice", [ctx.make("Shape", [l2]), ctx.ints([0], "s"), ctx.ints([1], "e")])
    g2 = ctx.make("Reshape", [og, ctx.make("Concat", [rows, ctx.ints([-1], "rest")], axis=0)])
    dl = ctx.make("MatMul", [g2, ctx.make("Transpose", [r2], perm=[1, 0])])
    dr = ctx.make("MatMul", [ctx.make("Transpose", [l2], perm=[1, 0]), g2])
    if ta:
        dl = ctx.make("Transpose", [dl], perm=[1, 0])
    if tb:
        dr = ctx.make("Transpose", [dr], perm=[1, 0])
    for k, (y, src) in enumerate(((dl, ctx.inputs[1]), (dr, ctx.inputs[2]))):
        if k == 0 or ctx.wants(k):
            deliver(ctx, ctx.make("Reshape", [y, ctx.make("Shape", [src])]), k, work)


def _sumlogdiag_back_onnx(ctx: LoweringContext) -> None:
    """``Where(eye, ograd / A, 0)`` with ograd reshaped to (..., 1, 1)."""
    n = ctx.in_shapes[1][-1]
    if not n or ctx.in_dynamic[1][-1]:
        raise ctx.fail("the matrix size of sumlogdiag's gradient must be static for export")
    dt = np.dtype(ctx.in_dtypes[1])
    batch = ctx.make("Slice", [ctx.make("Shape", [ctx.inputs[1]]), ctx.ints([0], "s"),
                               ctx.ints([-2], "e")])
    og = ctx.make("Reshape", [ctx.inputs[0],
                              ctx.make("Concat", [batch, ctx.ints([1, 1], "ones")], axis=0)])
    eye = ctx.const(np.eye(n, dtype=bool), "eye")
    zero = ctx.const(np.zeros((), dtype=dt), "zero")
    deliver(ctx, ctx.make("Where", [eye, ctx.make("Div", [og, ctx.inputs[1]]), zero]))


lowering("_backward_dot")(_dot_back_onnx)
lowering("_backward_linalg_sumlogdiag")(_sumlogdiag_back_onnx)
