"""Linear algebra: ``dot``, ``batch_dot`` and the ``_linalg_*`` family (``linalg_gemm2`` ...).

MXNet 1.9.1 semantics kept here:

* ``dot`` on N-d arrays flattens ``lhs`` to 2-d over all but its last axis (all but its first
  when ``transpose_a``) and ``rhs`` over all but its first axis (all but its last when
  ``transpose_b``); the output shape is the kept axes of both. Two vectors give shape ``(1,)``
  and refuse transposes; a single vector operand ignores its transpose flag.
* ``batch_dot`` multiplies matching N-d stacks (N >= 3, equal leading dims).
* ``_linalg_gemm``/``_linalg_gemm2`` take the matrix rows on ``axis`` (default -2) and the
  columns on the last axis.
* The other ``_linalg_*`` ops work on the last two axes (stacks of square matrices) and, like
  LAPACK, read only the triangle they are told to (``lower``).
* ``_linalg_gelqf`` (``A = L @ Q``) takes the signs of LAPACK's Householder reflections;
  ``_linalg_syevd`` (no ``linalg_syevd`` alias in MXNet) gives ascending eigenvalues and
  eigenvector rows signed so their largest-magnitude entry is positive, as MXNet does; neither
  has an ONNX export (ONNX has no factorisations).
* ``_linalg_extracttrian``/``_linalg_maketrian`` pack a triangle: the lower one row by row,
  an upper one (``offset > 0``, or 0 with ``lower=False``) column by column, as MXNet's
  ``CopyTrian`` kernel orders them.
* Integer data is refused as MXNet refuses it. MXNet's CPU kernels also refuse float16 (its GPU
  ``dot``/``batch_dot`` accept it): gluonport accepts float16 for ``dot``/``batch_dot``,
  computing in float32, and refuses it for the LAPACK-backed ``_linalg_*`` ops.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..._core.attr_fields import Bool, Enum, Float, Int, Optional
from ...errors import DTypeError, ShapeError
from ..infer import fmt, known, merge
from ..lowering import LoweringContext, const_like, deliver, lowering, onnx_reduce
from ..lowering.dims import onnx_dims, onnx_shape
from ..registry import OpDef, register
from .linalg_grad import LINALG_GRADS

__all__ = ["dot_shape", "batch_dot_shape"]

_DOT_PARAMS = {"transpose_a": Bool(False), "transpose_b": Bool(False),
               "forward_stype": Optional(Enum(("default", "row_sparse", "csr")))}


def _compute_dtype(op: str, arrays: tuple, allow_half: bool) -> np.dtype:
    """The dtype to compute in; integer (and, for LAPACK ops, float16) inputs are refused."""
    dtype = arrays[0].dtype
    ok = ("float32", "float64", "float16") if allow_half else ("float32", "float64")
    if dtype.name not in ok:
        raise DTypeError(f"{op}: MXNet supports only {'/'.join(ok)} data here, got "
                         f"{dtype.name}; cast the inputs with .astype('float32') first")
    return np.dtype(np.float32) if dtype == np.float16 else dtype


def _size(shape: tuple) -> int:
    """Product of dims, 0 when any is unknown."""
    return 0 if any(d == 0 for d in shape) else int(np.prod(shape, dtype=np.int64))


# --- dot ------------------------------------------------------------------------------------
def dot_shape(lhs: tuple, rhs: tuple, ta: bool, tb: bool) -> tuple:
    """MXNet's DotShape: the output shape of ``dot(lhs, rhs)`` (0 = unknown dim).

    >>> dot_shape((2, 3, 4), (4, 5), False, False), dot_shape((2, 3, 4), (2, 5), True, False)
    ((2, 3, 5), (3, 4, 5))
    """
    if not lhs or not rhs:
        raise ShapeError("dot: scalar (0-d) operands are not supported")
    if len(lhs) == 1 and len(rhs) == 1:
        if ta or tb:
            raise ShapeError("dot: cannot transpose vectors; drop transpose_a/transpose_b")
        merge((lhs[0],), (rhs[0],), "dot: ")
        return (1,)
    lk, lkeep = (lhs[:1], lhs[1:]) if ta else (lhs[-1:], lhs[:-1])
    rk, rkeep = (rhs[-1:], rhs[:-1]) if tb else (rhs[:1], rhs[1:])
    if len(lhs) == 1:
        lk, lkeep = lhs, ()
    if len(rhs) == 1:
        rk, rkeep = rhs, ()
    a, b = _size(lk), _size(rk)
    if a and b and a != b:
        raise ShapeError(f"dot: shape mismatch {fmt(lhs)} x {fmt(rhs)} (transpose_a={ta}, "
                         f"transpose_b={tb}): contracted sizes {a} and {b} differ")
    return tuple(lkeep) + tuple(rkeep)


def _dot_rule(p, in_shapes):
    lhs, rhs = in_shapes
    if lhs is None or rhs is None:
        return in_shapes, [None]
    return in_shapes, [dot_shape(tuple(lhs), tuple(rhs), p.transpose_a, p.transpose_b)]


def _dot(p, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    acc = _compute_dtype("dot", (a, b), allow_half=True)
    out_shape = dot_shape(a.shape, b.shape, p.transpose_a, p.transpose_b)
    ta, tb = p.transpose_a and a.ndim > 1, p.transpose_b and b.ndim > 1
    ma = a.reshape(a.shape[0], -1).T if ta else a.reshape(-1, a.shape[-1])
    mb = b.reshape(-1, b.shape[-1]).T if tb else b.reshape(b.shape[0], -1)
    out = np.matmul(ma.astype(acc, copy=False), mb.astype(acc, copy=False))
    return out.astype(a.dtype, copy=False).reshape(out_shape)


register(OpDef(
    "dot", params=_DOT_PARAMS, inputs=("lhs", "rhs"), compute=_dot, infer_shape=_dot_rule,
    aliases=("_sparse_dot",), gradient=LINALG_GRADS["dot"],
    doc="Matrix product of N-d arrays flattened to 2-d (see the module docstring)."))


# --- batch_dot ------------------------------------------------------------------------------
def batch_dot_shape(lhs: tuple, rhs: tuple, ta: bool, tb: bool) -> tuple:
    """MXNet's BatchDotShape for ``(..., m, k) x (..., k, n)`` stacks (0 = unknown dim)."""
    if len(lhs) < 3 or len(lhs) != len(rhs):
        raise ShapeError(f"batch_dot: needs two N-d arrays with N >= 3 and equal N, got "
                         f"{fmt(lhs)} and {fmt(rhs)}; use dot for 2-d operands")
    lead = merge(lhs[:-2], rhs[:-2], "batch_dot: leading (batch) dims: ")
    m, lk = (lhs[-1], lhs[-2]) if ta else (lhs[-2], lhs[-1])
    n, rk = (rhs[-2], rhs[-1]) if tb else (rhs[-1], rhs[-2])
    if lk and rk and lk != rk:
        raise ShapeError(f"batch_dot: shape mismatch {fmt(lhs)} x {fmt(rhs)} "
                         f"(transpose_a={ta}, transpose_b={tb}): {lk} != {rk}")
    return tuple(lead) + (m, n)


def _batch_dot_rule(p, in_shapes):
    lhs, rhs = in_shapes
    if lhs is None or rhs is None:
        return in_shapes, [None]
    return in_shapes, [batch_dot_shape(tuple(lhs), tuple(rhs), p.transpose_a, p.transpose_b)]


def _batch_dot(p, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    acc = _compute_dtype("batch_dot", (a, b), allow_half=True)
    batch_dot_shape(a.shape, b.shape, p.transpose_a, p.transpose_b)
    ma = a.astype(acc, copy=False)
    mb = b.astype(acc, copy=False)
    ma = np.swapaxes(ma, -1, -2) if p.transpose_a else ma
    mb = np.swapaxes(mb, -1, -2) if p.transpose_b else mb
    return np.matmul(ma, mb).astype(a.dtype, copy=False)


register(OpDef(
    "batch_dot", params=_DOT_PARAMS, inputs=("lhs", "rhs"), compute=_batch_dot,
    infer_shape=_batch_dot_rule, doc="Batched matrix product of N-d stacks (N >= 3).",
    gradient=LINALG_GRADS["batch_dot"]))


# --- gemm / gemm2 ---------------------------------------------------------------------------
def _gemm_shape(p, a: tuple, b: tuple) -> tuple:
    """MXNet's LaMatrixMultMacOpShape: rows on ``axis``, columns on the last axis."""
    nd = len(a)
    if nd < 2 or nd != len(b):
        raise ShapeError(f"linalg_gemm: A {fmt(a)} and B {fmt(b)} must have the same number "
                         "(>= 2) of dims")
    axis = p.axis + nd if p.axis < 0 else p.axis
    if not 0 <= axis < nd - 1:
        raise ShapeError(f"linalg_gemm: invalid row axis {p.axis} for {nd}-d inputs; use an "
                         "axis before the last one")
    out = list(a)
    for i in range(nd - 1):
        if i != axis:
            out[i] = merge((a[i],), (b[i],), "linalg_gemm: A and B must agree except on the "
                           f"row/column axes ({fmt(a)} vs {fmt(b)}): ")[0]
    ka, kb = (a[axis] if p.transpose_a else a[-1]), (b[-1] if p.transpose_b else b[axis])
    if ka and kb and ka != kb:
        raise ShapeError(f"linalg_gemm: incompatible matrix dims for A {fmt(a)} and B {fmt(b)} "
                         f"(transpose_a={p.transpose_a}, transpose_b={p.transpose_b})")
    out[axis] = a[-1] if p.transpose_a else a[axis]
    out[-1] = b[axis] if p.transpose_b else b[-1]
    return tuple(out)


def _gemm_rule(p, in_shapes):
    a, b = in_shapes[0], in_shapes[1]
    if a is None or b is None:
        return in_shapes, [None]
    out = _gemm_shape(p, tuple(a), tuple(b))
    ins = list(in_shapes)
    if len(ins) > 2:
        ins[2] = merge(ins[2], out, "linalg_gemm: C: ")
    return ins, [out]


def _matmul_rows(p, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``op(A) @ op(B)`` with the rows of every matrix on ``p.axis``."""
    _gemm_shape(p, a.shape, b.shape)
    axis = p.axis % a.ndim
    ma, mb = np.moveaxis(a, axis, -2), np.moveaxis(b, axis, -2)
    ma = np.swapaxes(ma, -1, -2) if p.transpose_a else ma
    mb = np.swapaxes(mb, -1, -2) if p.transpose_b else mb
    return np.moveaxis(np.matmul(ma, mb), -2, axis)


def _gemm2(p, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    _compute_dtype("linalg_gemm2", (a, b), allow_half=False)
    return (p.alpha * _matmul_rows(p, a, b)).astype(a.dtype, copy=False)


def _gemm(p, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    _compute_dtype("linalg_gemm", (a, b, c), allow_half=False)
    return (p.alpha * _matmul_rows(p, a, b) + p.beta * c).astype(a.dtype, copy=False)


_MULT = {"transpose_a": Bool(False), "transpose_b": Bool(False), "alpha": Float(1.0)}
register(OpDef(
    "_linalg_gemm", params={**_MULT, "beta": Float(1.0), "axis": Int(-2)},
    inputs=("A", "B", "C"), compute=_gemm, infer_shape=_gemm_rule, aliases=("linalg_gemm",),
    doc="``alpha * op(A) @ op(B) + beta * C`` over stacks of matrices.",
    gradient=LINALG_GRADS["gemm"]))
register(OpDef(
    "_linalg_gemm2", params={**_MULT, "axis": Int(-2)}, inputs=("A", "B"), compute=_gemm2,
    infer_shape=_gemm_rule, aliases=("linalg_gemm2",),
    doc="``alpha * op(A) @ op(B)`` over stacks of matrices.", gradient=LINALG_GRADS["gemm2"]))


# --- square-matrix LAPACK ops ---------------------------------------------------------------
def _square(op: str, shape: tuple | None) -> None:
    if shape is None:
        return
    if len(shape) < 2 or (known(shape[-2:]) and shape[-1] != shape[-2]):
        raise ShapeError(f"{op}: input of shape {fmt(shape)} is not a stack of square "
                         "matrices (..., n, n)")


def _tri(a: np.ndarray, lower: bool) -> np.ndarray:
    return np.tril(a) if lower else np.triu(a)


def _potrf(p, a: np.ndarray) -> np.ndarray:
    _compute_dtype("linalg_potrf", (a,), allow_half=False)
    low = np.linalg.cholesky(_sym_from(a, p.lower))
    return (low if p.lower else np.swapaxes(low, -1, -2)).astype(a.dtype, copy=False)


def _sym_from(a: np.ndarray, lower: bool) -> np.ndarray:
    """The symmetric matrix LAPACK sees when it reads only one triangle of ``a``."""
    t = _tri(a, lower)
    return t + np.swapaxes(t, -1, -2) - _diag_matrix(a)


def _diag_matrix(a: np.ndarray) -> np.ndarray:
    return np.einsum("...ij,ij->...ij", a, np.eye(a.shape[-1], dtype=a.dtype))


def _potri(p, a: np.ndarray) -> np.ndarray:
    _compute_dtype("linalg_potri", (a,), allow_half=False)
    t = _tri(a, p.lower)
    full = t @ np.swapaxes(t, -1, -2) if p.lower else np.swapaxes(t, -1, -2) @ t
    return np.linalg.inv(full).astype(a.dtype, copy=False)


def _trmm(p, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    _compute_dtype("linalg_trmm", (a, b), allow_half=False)
    t = _tri(a, p.lower)
    t = np.swapaxes(t, -1, -2) if p.transpose else t
    out = b @ t if p.rightside else t @ b
    return (p.alpha * out).astype(a.dtype, copy=False)


def _trsm(p, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    _compute_dtype("linalg_trsm", (a, b), allow_half=False)
    t = _tri(a, p.lower)
    t = np.swapaxes(t, -1, -2) if p.transpose else t
    if p.rightside:  # X @ t = alpha * B  <=>  t^T @ X^T = alpha * B^T
        x = np.swapaxes(np.linalg.solve(np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    else:
        x = np.linalg.solve(t, b)
    return (p.alpha * x).astype(a.dtype, copy=False)


def _syrk(p, a: np.ndarray) -> np.ndarray:
    _compute_dtype("linalg_syrk", (a,), allow_half=False)
    at = np.swapaxes(a, -1, -2)
    return (p.alpha * (at @ a if p.transpose else a @ at)).astype(a.dtype, copy=False)


def _syrk_rule(p, in_shapes):
    a = in_shapes[0]
    if a is None or len(a) < 2:
        return in_shapes, [None]
    n = a[-1] if p.transpose else a[-2]
    return in_shapes, [tuple(a[:-2]) + (n, n)]


def _batch_scalar_shape(shape: tuple) -> tuple:
    """det/slogdet/sumlogdiag of a single matrix give ``(1,)``; of a stack, its leading dims."""
    return tuple(shape[:-2]) or (1,)


def _square_reduce_rule(n_out: int) -> Callable:
    def rule(p, in_shapes):
        a = in_shapes[0]
        _square("linalg", a)
        out = None if a is None else _batch_scalar_shape(tuple(a))
        return in_shapes, [out] * n_out

    return rule


def _square_rule(p, in_shapes):
    _square("linalg", in_shapes[0])
    return in_shapes, [in_shapes[0]]


def _det(p, a: np.ndarray) -> np.ndarray:
    _compute_dtype("linalg_det", (a,), allow_half=False)
    return np.linalg.det(a).astype(a.dtype).reshape(_batch_scalar_shape(a.shape))


def _slogdet(p, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    _compute_dtype("linalg_slogdet", (a,), allow_half=False)
    sign, logabs = np.linalg.slogdet(a)
    shape = _batch_scalar_shape(a.shape)
    return sign.astype(a.dtype).reshape(shape), logabs.astype(a.dtype).reshape(shape)


def _inverse(p, a: np.ndarray) -> np.ndarray:
    _compute_dtype("linalg_inverse", (a,), allow_half=False)
    return np.linalg.inv(a).astype(a.dtype, copy=False)


def _sumlogdiag(p, a: np.ndarray) -> np.ndarray:
    _compute_dtype("linalg_sumlogdiag", (a,), allow_half=False)
    diag = np.diagonal(a, axis1=-2, axis2=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.sum(np.log(diag), axis=-1)
    return np.asarray(out).astype(a.dtype).reshape(_batch_scalar_shape(a.shape))


def _extractdiag(p, a: np.ndarray) -> np.ndarray:
    _compute_dtype("linalg_extractdiag", (a,), allow_half=False)
    return np.diagonal(a, offset=p.offset, axis1=-2, axis2=-1).copy()


def _extractdiag_rule(p, in_shapes):
    a = in_shapes[0]
    _square("linalg_extractdiag", a)
    if a is None:
        return in_shapes, [None]
    n = a[-1] - abs(p.offset) if a[-1] else 0
    if a[-1] and n <= 0:
        raise ShapeError(f"linalg_extractdiag: offset {p.offset} is out of range for "
                         f"{a[-1]}x{a[-1]} matrices")
    return in_shapes, [tuple(a[:-2]) + (n,)]


def _makediag(p, a: np.ndarray) -> np.ndarray:
    _compute_dtype("linalg_makediag", (a,), allow_half=False)
    n = a.shape[-1] + abs(p.offset)
    out = np.zeros(a.shape[:-1] + (n, n), dtype=a.dtype)
    rows = np.arange(a.shape[-1]) + max(-p.offset, 0)
    out[..., rows, rows + p.offset] = a
    return out


def _makediag_rule(p, in_shapes):
    a = in_shapes[0]
    if a is None:
        return in_shapes, [None]
    n = a[-1] + abs(p.offset) if a[-1] else 0
    return in_shapes, [tuple(a[:-1]) + (n, n)]


def _trian_rule(p, in_shapes):
    a, b = in_shapes
    _square("linalg", a)
    return in_shapes, [b]


_LOWER = {"lower": Bool(True)}
_TRIANG = {"transpose": Bool(False), "rightside": Bool(False), "lower": Bool(True),
           "alpha": Float(1.0)}
_DIAG = {"offset": Int(0)}
_LAPACK: list[tuple[str, dict, tuple, Callable, Callable, int, str]] = [
    # (name, params, inputs, compute, shape rule, outputs, doc)
    ("potrf", _LOWER, ("A",), _potrf, _square_rule, 1, "Cholesky factor of each matrix."),
    ("potri", _LOWER, ("A",), _potri, _square_rule, 1,
     "Inverse of ``A = L L^T`` from its Cholesky factor ``L``."),
    ("trmm", _TRIANG, ("A", "B"), _trmm, _trian_rule, 1, "``alpha * op(tri(A)) @ B``."),
    ("trsm", _TRIANG, ("A", "B"), _trsm, _trian_rule, 1,
     "Solves ``op(tri(A)) @ X = alpha * B``."),
    ("syrk", {"transpose": Bool(False), "alpha": Float(1.0)}, ("A",), _syrk, _syrk_rule, 1,
     "``alpha * A @ A^T`` (``A^T @ A`` when transpose)."),
    ("sumlogdiag", {}, ("A",), _sumlogdiag, _square_reduce_rule(1), 1,
     "Sum of the logs of each matrix's diagonal."),
    ("extractdiag", _DIAG, ("A",), _extractdiag, _extractdiag_rule, 1,
     "The ``offset`` diagonal of each matrix."),
    ("makediag", _DIAG, ("A",), _makediag, _makediag_rule, 1,
     "Square matrices with the given ``offset`` diagonal."),
    ("inverse", {}, ("A",), _inverse, _square_rule, 1, "Inverse of each square matrix."),
    ("det", {}, ("A",), _det, _square_reduce_rule(1), 1, "Determinant of each matrix."),
    ("slogdet", {}, ("A",), _slogdet, _square_reduce_rule(2), 2,
     "Sign and log of the absolute determinant of each matrix."),
]
_NO_ONNX = {
    "potrf": "ONNX has no Cholesky factorisation operator",
    "potri": "ONNX has no Cholesky-based (or any) matrix inverse operator",
    "trsm": "ONNX has no triangular solve operator",
    "inverse": "ONNX has no matrix inverse operator (onnxruntime's com.microsoft Inverse is "
               "not standard ONNX)",
}
for _stem, _params, _inputs, _fn, _rule, _n, _doc in _LAPACK:
    register(OpDef(f"_linalg_{_stem}", params=_params, inputs=_inputs, compute=_fn,
                   infer_shape=_rule, num_outputs=_n, aliases=(f"linalg_{_stem}",), doc=_doc,
                   no_onnx=_NO_ONNX.get(_stem), gradient=LINALG_GRADS[_stem]))


# --- LQ / symmetric eigendecomposition ------------------------------------------------------
def _gelqf(p, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``A = L @ Q`` by Householder QR of ``A^T`` (the reflections LAPACK's gelqf applies to
    A's rows, so the same signs: ``L = R^T``, ``Q = Q_qr^T``)."""
    _compute_dtype("linalg_gelqf", (a,), allow_half=False)
    _gelqf_rule(p, [a.shape])
    q, r = np.linalg.qr(np.swapaxes(a, -1, -2))
    return (np.swapaxes(q, -1, -2).astype(a.dtype, copy=False),
            np.swapaxes(r, -1, -2).astype(a.dtype, copy=False))


def _gelqf_rule(p, in_shapes):
    a = in_shapes[0]
    if a is None:
        return in_shapes, [None, None]
    if len(a) < 2 or (a[-2] and a[-1] and a[-2] > a[-1]):
        raise ShapeError(f"linalg_gelqf: input {fmt(a)} must be a stack of (m, n) matrices "
                         "with m <= n")
    return in_shapes, [tuple(a), tuple(a[:-1]) + (a[-2],)]


def _syevd(p, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvectors as the rows of ``U`` (each signed so its largest-magnitude entry, the first
    of equal ones, is positive, as MXNet does) and ascending eigenvalues ``L``; only the lower
    triangle of ``A`` is read."""
    _compute_dtype("linalg_syevd", (a,), allow_half=False)
    _square("linalg_syevd", a.shape)
    vals, vecs = np.linalg.eigh(a, UPLO="L")
    u = np.swapaxes(vecs, -1, -2)
    top = np.take_along_axis(u, np.abs(u).argmax(axis=-1)[..., None], axis=-1)
    u = np.where(top < 0, -u, u)
    return u.astype(a.dtype, copy=False), vals.astype(a.dtype, copy=False)


def _syevd_rule(p, in_shapes):
    a = in_shapes[0]
    _square("linalg_syevd", a)
    if a is None:
        return in_shapes, [None, None]
    return in_shapes, [tuple(a), tuple(a[:-1])]


register(OpDef(
    "_linalg_gelqf", inputs=("A",), compute=_gelqf, infer_shape=_gelqf_rule, num_outputs=2,
    aliases=("linalg_gelqf",), no_onnx="ONNX has no QR/LQ factorisation operator",
    doc="LQ factorisation ``A = L @ Q`` of (m, n) matrices, m <= n: outputs Q, L.",
    gradient=LINALG_GRADS["gelqf"]))
register(OpDef(
    "_linalg_syevd", inputs=("A",), compute=_syevd, infer_shape=_syevd_rule, num_outputs=2,
    no_onnx="ONNX has no eigendecomposition operator",
    doc="Symmetric eigendecomposition ``U @ A = diag(L) @ U``: outputs U, L (ascending).",
    gradient=LINALG_GRADS["syevd"]))


# --- packed triangles ------------------------------------------------------------------------
def _trian_positions(n: int, offset: int, lower: bool) -> tuple[np.ndarray, np.ndarray]:
    """Matrix (row, col) of each packed entry, in MXNet's order: the lower triangle row by
    row; an upper triangle (offset > 0, or 0 with ``lower=False``) column by column."""
    r, c = np.tril_indices(n - abs(offset))
    r = r + abs(offset)
    if offset > 0 or (offset == 0 and not lower):
        return c, r
    return r, c


def _trian_size(n: int, offset: int) -> int:
    if n and n - abs(offset) <= 0:
        raise ShapeError(f"linalg_extracttrian: offset {offset} is out of range for {n}x{n} "
                         "matrices")
    m = n - abs(offset)
    return m * (m + 1) // 2 if n else 0


def _extracttrian(p, a: np.ndarray) -> np.ndarray:
    _compute_dtype("linalg_extracttrian", (a,), allow_half=False)
    _square("linalg_extracttrian", a.shape)
    n = a.shape[-1]
    _trian_size(n, p.offset)
    rows, cols = _trian_positions(n, p.offset, p.lower)
    return a[..., rows, cols]


def _extracttrian_rule(p, in_shapes):
    a = in_shapes[0]
    _square("linalg_extracttrian", a)
    if a is None:
        return in_shapes, [None]
    return in_shapes, [tuple(a[:-2]) + (_trian_size(a[-1], p.offset),)]


def _trian_side(packed: int) -> int:
    """m with m(m+1)/2 == packed; ShapeError when there is none."""
    m = int(np.floor(0.5 + (np.sqrt(8 * packed + 1) - 1) * 0.5))
    if m * (m + 1) // 2 != packed:
        raise ShapeError(f"linalg_maketrian: the last axis ({packed}) is not a triangle size "
                         "m*(m+1)/2")
    return m


def _maketrian(p, a: np.ndarray) -> np.ndarray:
    _compute_dtype("linalg_maketrian", (a,), allow_half=False)
    n = _trian_side(a.shape[-1]) + abs(p.offset)
    out = np.zeros(a.shape[:-1] + (n, n), dtype=a.dtype)
    rows, cols = _trian_positions(n, p.offset, p.lower)
    out[..., rows, cols] = a
    return out


def _maketrian_rule(p, in_shapes):
    a = in_shapes[0]
    if a is None or not a or not a[-1]:
        return in_shapes, [None]
    n = _trian_side(a[-1]) + abs(p.offset)
    return in_shapes, [tuple(a[:-1]) + (n, n)]


_TRIAN = {"offset": Int(0), "lower": Bool(True)}
register(OpDef(
    "_linalg_extracttrian", params=_TRIAN, inputs=("A",), compute=_extracttrian,
    infer_shape=_extracttrian_rule, aliases=("linalg_extracttrian",),
    doc="The triangle of each square matrix (by ``offset``/``lower``) packed into a vector.",
    gradient=LINALG_GRADS["extracttrian"]))
register(OpDef(
    "_linalg_maketrian", params=_TRIAN, inputs=("A",), compute=_maketrian,
    infer_shape=_maketrian_rule, aliases=("linalg_maketrian",),
    doc="Square matrices with the packed vectors as their triangle (zeros elsewhere).",
    gradient=LINALG_GRADS["maketrian"]))


# --- ONNX export -----------------------------------------------------------------------------
def _swapped(ndim: int) -> list[int]:
    """The permutation swapping the last two axes."""
    return list(range(ndim - 2)) + [ndim - 1, ndim - 2]


def _transposed(ctx: LoweringContext, x: str, perm: list[int]) -> str:
    return x if perm == sorted(perm) else ctx.make("Transpose", [x], perm=perm)


def _scaled(ctx: LoweringContext, x: str, alpha: float) -> str:
    """``alpha * x`` in the dtype of input 0 (no node for 1)."""

    return x if alpha == 1.0 else ctx.make("Mul", [x, const_like(ctx, alpha)])


def _dot_onnx(ctx: LoweringContext) -> None:
    """MatMul on MXNet's 2-d views (Gemm for two matrices), reshaped to the N-d result."""
    p, (a, b) = ctx.params, ctx.inputs
    na, nb = len(ctx.in_shapes[0]), len(ctx.in_shapes[1])
    ta, tb = p.transpose_a and na > 1, p.transpose_b and nb > 1
    if na == 2 and nb == 2:
        ctx.make("Gemm", [a, b], outputs=ctx.outputs[:1], transA=int(ta), transB=int(tb))
        return
    if ta:
        a = ctx.make("Transpose", [ctx.make("Reshape", [a, ctx.ints([0, -1], "shape")])
                                   if na > 2 else a], perm=[1, 0])
    if tb:
        shape = onnx_shape(ctx, [[-1], onnx_dims(ctx, 1, nb - 1)])
        b = ctx.make("Transpose", [ctx.make("Reshape", [b, shape]) if nb > 2 else b],
                     perm=[1, 0])
    elif nb > 2:
        b = ctx.make("Reshape", [b, ctx.ints([0, -1], "shape")])
    y = ctx.make("MatMul", [a, b])
    if na == 1 and nb == 1:  # MXNet gives (1,), not a scalar
        y = ctx.make("Reshape", [y, ctx.ints([1], "one")])
    elif (ta and na > 2) or nb > 2:
        left = onnx_dims(ctx, 0, 1) if ta else onnx_dims(ctx, 0, 0, na - 1)
        right = onnx_dims(ctx, 1, 0, nb - 1) if tb else onnx_dims(ctx, 1, 1 if nb > 1 else 0)
        y = ctx.make("Reshape", [y, onnx_shape(ctx, [left, right])])
    deliver(ctx, y)


def _batch_dot_onnx(ctx: LoweringContext) -> None:
    p, (a, b) = ctx.params, ctx.inputs
    nd = len(ctx.shape)
    a = _transposed(ctx, a, _swapped(nd)) if p.transpose_a else a
    b = _transposed(ctx, b, _swapped(nd)) if p.transpose_b else b
    ctx.make("MatMul", [a, b], outputs=ctx.outputs[:1])


def _gemm_onnx(ctx: LoweringContext) -> None:
    """Gemm for 2-d operands; else MatMul with the row axis moved next to the last."""
    p, nd = ctx.params, len(ctx.shape)
    beta = getattr(p, "beta", None)
    if nd == 2:
        ctx.make("Gemm", ctx.inputs, outputs=ctx.outputs[:1], alpha=float(p.alpha),
                 beta=None if beta is None else float(beta), transA=int(p.transpose_a),
                 transB=int(p.transpose_b))
        return
    axis = p.axis % nd
    move = [i for i in range(nd - 1) if i != axis] + [axis, nd - 1]
    swap = [move[i] for i in _swapped(nd)]
    a = _transposed(ctx, ctx.inputs[0], swap if p.transpose_a else move)
    b = _transposed(ctx, ctx.inputs[1], swap if p.transpose_b else move)
    y = _scaled(ctx, ctx.make("MatMul", [a, b]), p.alpha)
    y = _transposed(ctx, y, [int(i) for i in np.argsort(move)])
    if beta is not None:
        y = ctx.make("Add", [y, _scaled(ctx, ctx.inputs[2], beta)])
    deliver(ctx, y)


def _static_n(ctx: LoweringContext, what: str) -> int:
    """The (static) matrix size of input 0; dynamic matrix dims cannot be exported here."""
    if any(ctx.in_dynamic[0][-2:]):
        raise ctx.fail(f"{what} needs static matrix dims to export to ONNX; keep the last "
                       "two axes out of dynamic_axes")
    return int(ctx.shape[-1])


def _det(ctx: LoweringContext) -> str:
    """Det, shaped ``(1,)`` for a single matrix as MXNet does."""
    y = ctx.make("Det", [ctx.inputs[0]])
    return ctx.make("Reshape", [y, ctx.ints([1], "one")]) if len(ctx.shape) == 2 else y


def _det_onnx(ctx: LoweringContext) -> None:
    deliver(ctx, _det(ctx))


def _slogdet_onnx(ctx: LoweringContext) -> None:
    """sign = Sign(det), logabs = Log(|det|) (can overflow where LU-based slogdet does not)."""
    det = _det(ctx)
    ctx.make("Sign", [det], outputs=ctx.outputs[:1])
    ctx.make("Log", [ctx.make("Abs", [det])], outputs=ctx.outputs[1:2])


def _syrk_onnx(ctx: LoweringContext) -> None:
    a = ctx.inputs[0]
    at = ctx.make("Transpose", [a], perm=_swapped(len(ctx.shape)))
    y = ctx.make("MatMul", [at, a] if ctx.params.transpose else [a, at])
    deliver(ctx, _scaled(ctx, y, ctx.params.alpha))


def _trmm_onnx(ctx: LoweringContext) -> None:
    """The triangle of A by a constant mask (exact, also for junk in the other triangle)."""
    p, n = ctx.params, _static_n(ctx, "linalg_trmm")
    ones = np.ones((n, n), dtype=bool)
    mask = ctx.const(np.tril(ones) if p.lower else np.triu(ones), "mask")
    t = ctx.make("Where", [mask, ctx.inputs[0], const_like(ctx, 0)])
    t = _transposed(ctx, t, _swapped(len(ctx.shape))) if p.transpose else t
    y = ctx.make("MatMul", [ctx.inputs[1], t] if p.rightside else [t, ctx.inputs[1]])
    deliver(ctx, _scaled(ctx, y, p.alpha))


def _diagonal(ctx: LoweringContext, offset: int, what: str) -> str:
    """The ``offset`` diagonal of each matrix: Gather from the flattened matrices."""
    n, nd = _static_n(ctx, what), len(ctx.shape)
    rows = np.arange(max(-offset, 0), n - max(offset, 0))
    flat = ctx.make("Reshape", [ctx.inputs[0], ctx.ints([0] * (nd - 2) + [-1], "shape")])
    return ctx.make("Gather", [flat, ctx.ints(rows * n + rows + offset, "diag")], axis=nd - 2)


def _sumlogdiag_onnx(ctx: LoweringContext) -> None:
    nd = len(ctx.shape)
    logs = ctx.make("Log", [_diagonal(ctx, 0, "linalg_sumlogdiag")])
    onnx_reduce(ctx, "ReduceSum", logs, (nd - 2,), nd == 2, outputs=ctx.outputs[:1])


def _extractdiag_onnx(ctx: LoweringContext) -> None:
    deliver(ctx, _diagonal(ctx, ctx.params.offset, "linalg_extractdiag"))


def _makediag_onnx(ctx: LoweringContext) -> None:
    """Gather from the vectors padded with one zero: index ``m`` (the zero) off the diagonal."""
    k, nd = ctx.params.offset, len(ctx.shape)
    if ctx.in_dynamic[0][-1]:
        raise ctx.fail("linalg_makediag needs a static last axis to export to ONNX")
    m = int(ctx.shape[-1])
    n = m + abs(k)
    index = np.full(n * n, m, dtype=np.int64)
    rows = np.arange(m) + max(-k, 0)
    index[rows * n + rows + k] = np.arange(m)
    padded = ctx.make("Pad", [ctx.inputs[0], ctx.ints([0] * (2 * nd - 1) + [1], "pads")])
    flat = ctx.make("Gather", [padded, ctx.ints(index, "diag")], axis=nd - 1)
    deliver(ctx, ctx.make("Reshape", [flat, ctx.ints([0] * (nd - 1) + [n, n], "shape")]))


def _extracttrian_onnx(ctx: LoweringContext) -> None:
    """Gather the packed entries from the flattened matrices."""
    p, nd = ctx.params, len(ctx.shape)
    n = _static_n(ctx, "linalg_extracttrian")
    rows, cols = _trian_positions(n, p.offset, p.lower)
    flat = ctx.make("Reshape", [ctx.inputs[0], ctx.ints([0] * (nd - 2) + [-1], "shape")])
    deliver(ctx, ctx.make("Gather", [flat, ctx.ints(rows * n + cols, "trian")], axis=nd - 2))


def _maketrian_onnx(ctx: LoweringContext) -> None:
    """Gather from the vectors padded with one zero (index ``m`` off the triangle)."""
    p, nd = ctx.params, len(ctx.shape)
    if ctx.in_dynamic[0][-1]:
        raise ctx.fail("linalg_maketrian needs a static last axis to export to ONNX")
    m = int(ctx.shape[-1])
    n = _trian_side(m) + abs(p.offset)
    index = np.full(n * n, m, dtype=np.int64)
    rows, cols = _trian_positions(n, p.offset, p.lower)
    index[rows * n + cols] = np.arange(m)
    padded = ctx.make("Pad", [ctx.inputs[0], ctx.ints([0] * (2 * nd - 1) + [1], "pads")])
    flat = ctx.make("Gather", [padded, ctx.ints(index, "trian")], axis=nd - 1)
    deliver(ctx, ctx.make("Reshape", [flat, ctx.ints([0] * (nd - 1) + [n, n], "shape")]))


lowering("_linalg_extracttrian")(_extracttrian_onnx)
lowering("_linalg_maketrian")(_maketrian_onnx)

for _name, _fn in (("dot", _dot_onnx), ("batch_dot", _batch_dot_onnx),
                 ("_linalg_gemm", _gemm_onnx), ("_linalg_gemm2", _gemm_onnx),
                 ("_linalg_det", _det_onnx), ("_linalg_slogdet", _slogdet_onnx),
                 ("_linalg_syrk", _syrk_onnx), ("_linalg_trmm", _trmm_onnx),
                 ("_linalg_sumlogdiag", _sumlogdiag_onnx),
                 ("_linalg_extractdiag", _extractdiag_onnx),
                 ("_linalg_makediag", _makediag_onnx)):
    lowering(_name)(_fn)
