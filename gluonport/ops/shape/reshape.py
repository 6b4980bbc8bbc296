"""Reshape, reshape_like and Flatten: MXNet's Reshape shape algorithm
(``InferReshapeShape`` in src/operator/tensor/matrix_op-inl.h) as pure functions, the ops, and
their ONNX lowerings (each special code lowered; a dim varying with the dynamic axes is never
baked from the example shape).

Shapes are MXNet 1.x legacy shapes: 0 is an unknown dim. MXNet's quirks are kept where its result
is well defined (the inferred ``-1`` value is written at the spec position of ``-1``, which after
``-2`` can differ from its output position); where MXNet would read or write out of bounds, or
produce an array whose size differs from the input's, :class:`ShapeError` is raised instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..._core.attr_fields import Bool, Int, Optional, Shape
from ...errors import ShapeError
from ..infer import fmt, known, merge
from ..lowering import LoweringContext, lowering
from ..lowering.dims import Dims, Entry, reshape_to
from ..registry import define
from .rules import LIKE_TYPES, check, one_output, out_list

__all__ = ["infer_reshape", "reshape_target", "reshape_error", "check_size", "prod",
           "reshape_plan", "legacy_plan", "eval_plan"]


# --- the Reshape shape algorithm ------------------------------------------------------------
def prod(dims: Iterable[int]) -> int:
    """The product of dims (1 for none)."""
    out = 1
    for d in dims:
        out *= int(d)
    return out


def infer_reshape(src_shape: Sequence[int | None], spec: Sequence[int],
                  reverse: bool = False) -> tuple[int, ...]:
    """MXNet's ``Reshape`` target shape for an input shape and a ``shape=`` spec.

    Special codes (read left to right, or right to left when ``reverse``): ``0`` copies the
    input dim, ``-1`` infers one dim from the size, ``-2`` copies all remaining dims, ``-3``
    merges two input dims, ``-4 a b`` splits one input dim into ``a, b`` (one of them may be
    -1). Unknown input dims (0, -1 or None) give unknown (0) output dims exactly where MXNet's
    legacy inference does.

    Raises :class:`ShapeError` (``cannot reshape (2, 3) to (4, -1): ...``) on an invalid spec
    or, for a fully known input, a size mismatch.

    >>> infer_reshape((2, 3, 4), (0, -1)), infer_reshape((2, 3, 4), (-4, 1, 2, -2))
    ((2, 12), (1, 2, 3, 4))
    >>> infer_reshape((0, 3, 4), (0, -3)), infer_reshape((10, 5, 4), (-1, 0), reverse=True)
    ((0, 12), (50, 4))
    """
    src = tuple(0 if d is None or d < 0 else int(d) for d in src_shape)
    spec = tuple(int(c) for c in spec)
    out = _reshape_codes(src, spec, reverse, exact=False)
    check_size(src, out, spec)
    return out


def reshape_error(src: tuple, spec: tuple, why: str) -> ShapeError:
    return ShapeError(f"cannot reshape {fmt(src)} to {fmt(spec)}: {why}")


def _reshape_codes(src: tuple, spec: tuple, reverse: bool, exact: bool) -> tuple[int, ...]:
    """MXNet's InferReshapeShape. ``exact``: every input dim is real (0 is an empty dim);
    otherwise 0 means unknown. Unknown output dims are 0."""
    dims = src[::-1] if reverse else src
    codes = spec[::-1] if reverse else spec
    unknown = (lambda d: False) if exact else (lambda d: d == 0)
    out: list[int] = []
    used, inf_idx, i = 0, -1, 0
    while i < len(codes):
        c = codes[i]
        if c in (0, -3) and used + (c == -3) >= len(dims):
            raise reshape_error(src, spec, f"code {c} at position {i} needs more input dims")
        if c == 0:
            out.append(dims[used])
            used += 1
        elif c == -1:
            if inf_idx >= 0:
                raise reshape_error(src, spec, "only one dim can be -1")
            inf_idx = i  # MXNet records the *spec* position (matters after -2/-4)
            out.append(1)
            used += 1
        elif c == -2:
            out.extend(dims[used:])
            used = max(used, len(dims))
        elif c == -3:
            d1, d2 = dims[used], dims[used + 1]
            out.append(0 if unknown(d1) or unknown(d2) else d1 * d2)
            used += 2
        elif c == -4:
            out.extend(_split_dim(src, spec, codes, i, dims, used, unknown))
            used += 1
            i += 2
        elif c > 0:
            out.append(c)
            used += 1
        else:
            raise reshape_error(src, spec, f"{c} is not a dim or a special code "
                                           "(0, -1, -2, -3, -4)")
        i += 1
    if inf_idx >= 0:
        _infer_minus_one(src, spec, out, inf_idx, exact)
    return tuple(out[::-1] if reverse else out)


def _split_dim(src, spec, codes, i, dims, used, unknown) -> tuple[int, int]:
    if i + 2 >= len(codes):
        raise reshape_error(src, spec, "-4 must be followed by the two dims to split into")
    if used >= len(dims):
        raise reshape_error(src, spec, f"-4 at position {i} has no input dim left to split")
    d0, d1, d2 = dims[used], codes[i + 1], codes[i + 2]
    if d1 == -1 and d2 == -1:
        raise reshape_error(src, spec, "split dims cannot both be -1")
    if min(d1, d2) < -1 or (-1 in (d1, d2) and 0 in (d1, d2)):
        raise reshape_error(src, spec, f"invalid split dims {d1}, {d2}")
    if unknown(d0):
        return (0 if d1 == -1 else d1), (0 if d2 == -1 else d2)
    d1 = d0 // d2 if d1 == -1 else d1
    d2 = d0 // d1 if d2 == -1 else d2
    if d1 * d2 != d0:
        raise reshape_error(src, spec, f"split dims {d1}, {d2} do not divide input dim {d0}")
    return d1, d2


def _infer_minus_one(src, spec, out: list, inf_idx: int, exact: bool) -> None:
    # MXNet writes the inferred value at the spec position of -1, which differs from the
    # output position after -2/-4; past the end the write is lost (the -1 stays 1) and the
    # size check decides.
    if inf_idx >= len(out):
        return
    if not exact and not known(src):
        out[inf_idx] = 0
        return
    rest = prod(out)
    if rest == 0:
        raise reshape_error(src, spec, "cannot infer -1 next to a zero-size dim")
    out[inf_idx] = prod(src) // rest


def check_size(src: tuple, out: tuple, spec: tuple) -> None:
    if known(src) and known(out) and prod(src) != prod(out):
        raise reshape_error(src, spec, f"{prod(src)} elements cannot fill {fmt(out)}")


def _legacy_target(target: tuple, keep_highest: bool, src: tuple,
                   exact: bool) -> tuple[int, ...]:
    """The deprecated ``target_shape``/``keep_highest`` form: one 0 is inferred."""
    out = list(target)
    start = 1 if keep_highest else 0
    if keep_highest:
        if not src:
            raise reshape_error(src, target, "keep_highest needs a non-empty input shape")
        out[0] = src[0]
    zeros = [i for i in range(start, len(out)) if out[i] == 0]
    if len(zeros) == 1 and (exact or known(src)):
        out[zeros[0]] = 1
        rest = prod(out)
        out[zeros[0]] = prod(src) // rest if rest else 0
    return tuple(out)


def reshape_target(p: Any, src: tuple, exact: bool) -> tuple[int, ...] | None:
    """The output shape for Reshape params ``p`` (``shape``/``reverse``, else the legacy
    ``target_shape``/``keep_highest``); None when neither is given. ``exact``: the input shape
    is real (0 is an empty dim), otherwise 0 is unknown."""
    if p.shape:
        return _reshape_codes(src, tuple(p.shape), p.reverse, exact)
    if p.target_shape:
        return _legacy_target(tuple(p.target_shape), p.keep_highest, src, exact)
    return None


# --- the same algorithm over symbolic dims, for the ONNX exporter ----------------------------
# An exported graph must compute at run time every output dim that varies with a dynamic input
# dim (MXNet's own exporter baked the example's shape here, which broke dynamic batch). The
# plan says where each output dim comes from:
#   ("const", v)    a fixed size v
#   ("dim", k)      input dim k                      (code 0, and each dim -2 copies)
#   ("prod", k)     input dims k * (k + 1)           (code -3)
#   ("div", k, c)   input dim k // c                 (the -1 half of a -4 split)
#   ("infer",)      the size left for it             (code -1)
Piece = tuple


def reshape_plan(src_shape: Sequence[int], spec: Sequence[int],
                 reverse: bool = False) -> list[Piece]:
    """Where each output dim of MXNet's ``Reshape`` comes from, as a function of the input
    dims (only ``len(src_shape)`` matters; the shape names the input in errors).

    >>> reshape_plan((2, 3, 4), (0, -3))
    [('dim', 0), ('prod', 1)]
    >>> reshape_plan((2, 3, 4), (-1, 0), reverse=True)
    [('infer',), ('dim', 2)]
    >>> reshape_plan((6, 4), (-4, 2, -1, 0))
    [('const', 2), ('div', 0, 2), ('dim', 1)]
    """
    src, spec = tuple(src_shape), tuple(int(c) for c in spec)
    n = len(src)
    order = list(range(n))[::-1] if reverse else list(range(n))
    codes = spec[::-1] if reverse else spec
    out: list[Piece] = []
    used, inf_idx, i = 0, -1, 0
    while i < len(codes):
        c = codes[i]
        if c in (0, -3) and used + (c == -3) >= n:
            raise reshape_error(src, spec, f"code {c} at position {i} needs more input dims")
        if c == 0:
            out.append(("dim", order[used]))
        elif c == -1:
            inf_idx = i  # MXNet's spec position, as in _infer_minus_one
            out.append(("const", 1))
        elif c == -2:
            out.extend(("dim", k) for k in order[used:])
            used = max(used, n) - 1
        elif c == -3:
            out.append(("prod", min(order[used], order[used + 1])))
            used += 1
        elif c == -4:
            out.extend(_split_plan(src, spec, codes[i + 1:i + 3], order, used))
            i += 2
        elif c > 0:
            out.append(("const", c))
        else:
            raise reshape_error(src, spec, f"{c} is not a dim or a special code")
        used += 1
        i += 1
    if 0 <= inf_idx < len(out):
        out[inf_idx] = ("infer",)
    return out[::-1] if reverse else out


def _split_plan(src, spec, pair, order, used) -> list[Piece]:
    # the two sizes follow -4 in reading order (right to left under reverse, as MXNet reads)
    if len(pair) < 2 or used >= len(order):
        raise reshape_error(src, spec, "-4 needs an input dim and the two dims to split into")
    k, (d1, d2) = order[used], pair
    if d1 == -1:
        first, second = ("div", k, d2), ("const", d2)
    elif d2 == -1:
        first, second = ("const", d1), ("div", k, d1)
    else:
        first, second = ("const", d1), ("const", d2)
    return [first, second]


def legacy_plan(target: Sequence[int], keep_highest: bool) -> list[Piece]:
    """The plan of the deprecated ``target_shape``/``keep_highest`` form (one 0 inferred)."""
    out: list[Piece] = [("const", int(d)) for d in target]
    start = 1 if keep_highest else 0
    if keep_highest:
        out[0] = ("dim", 0)
    zeros = [i for i in range(start, len(out)) if out[i] == ("const", 0)]
    if len(zeros) == 1:
        out[zeros[0]] = ("infer",)
    return out


def eval_plan(plan: Sequence[Piece], src_shape: Sequence[int]) -> tuple[int, ...]:
    """The output shape a plan gives for a concrete input shape (what the exported graph
    computes).

    >>> eval_plan(reshape_plan((2, 3, 4), (0, -1)), (5, 3, 4))
    (5, 12)
    """
    src = tuple(int(d) for d in src_shape)
    dims = [_piece_value(pc, src) for pc in plan]
    if ("infer",) in plan:
        k = plan.index(("infer",))
        rest = prod(d for i, d in enumerate(dims) if i != k)
        dims[k] = prod(src) // rest if rest else 0
    return tuple(dims)


def _piece_value(pc: Piece, src: tuple) -> int:
    kind = pc[0]
    if kind == "const":
        return pc[1]
    if kind == "dim":
        return src[pc[1]]
    if kind == "prod":
        return src[pc[1]] * src[pc[1] + 1]
    if kind == "div":
        return src[pc[1]] // pc[2]
    return 1


# --- Reshape ---------------------------------------------------------------------------------
def _reshape_rule(p, ins, outs=(None,)):
    src = ins[0]
    if src is None:
        return ins, [None]
    src = tuple(src)
    out = reshape_target(p, src, exact=False)
    if out is None:
        return ins, [None]
    spec = tuple(p.shape or p.target_shape)
    check_size(src, out, spec)
    # MXNet assigns the target to the output view its consumers inferred, then completes one
    # unknown input dim from that (how Gluon's RNN layers get their deferred i2h weights)
    out = merge(out, outs[0], "Reshape: output: ")
    holes = [i for i, d in enumerate(src) if d == 0]
    if known(out) and len(holes) == 1:  # MXNet's ReverseReshapeInferShape
        rest = prod(d for d in src if d)
        if prod(out) % rest:
            raise reshape_error(src, spec, f"{prod(out)} elements are not a multiple of {rest}")
        src = src[:holes[0]] + (prod(out) // rest,) + src[holes[0] + 1:]
    return [src], [out]



def _reshape(p, x):
    out = reshape_target(p, x.shape, exact=True)
    spec = tuple(p.shape or p.target_shape)
    if out is None:
        raise ShapeError("no target shape: give shape=(...)")
    if prod(out) != x.size:
        raise reshape_error(x.shape, spec, f"{x.size} elements cannot fill {fmt(out)}")
    return x.reshape(out).copy()


# --- gradients (MXNet's FGradient): the output gradient reshaped back --------------------------
def _grad_reshape(F, p, inputs, outputs, ograds):
    return [F.reshape_like(ograds[0], inputs[0])] + [None] * (len(inputs) - 1)


define("Reshape", _reshape, _reshape_rule, aliases=("reshape",), shape_needs_outputs=True,
    params={"shape": Shape(()), "reverse": Bool(False), "target_shape": Shape(()),
            "keep_highest": Bool(False)},
    doc="Reshape ``data`` to ``shape`` with MXNet's special codes 0, -1, -2, -3, -4 "
        "(see :func:`gluonport.ops.shape.infer_reshape`); ``reverse`` reads them right to "
        "left. ``target_shape``/``keep_highest`` are MXNet's deprecated form.", name_errors=True,
        lists_input_names=False, gradient=_grad_reshape)


def _like_range(ndim: int, begin, end, side: str) -> tuple[int, int]:
    b = 0 if begin is None else begin + (ndim if begin < 0 else 0)
    e = ndim if end is None else end + (ndim if end < 0 else 0)
    check(0 <= b < e <= ndim, f"invalid {side}_begin={begin}, {side}_end={end} for "
                              f"{ndim}-d {side}")
    return b, e


def _reshape_like_shape(p, lhs: tuple, rhs: tuple) -> tuple:
    lb, le = _like_range(len(lhs), p.lhs_begin, p.lhs_end, "lhs")
    rb, re = _like_range(len(rhs), p.rhs_begin, p.rhs_end, "rhs")
    out = lhs[:lb] + rhs[rb:re] + lhs[le:]
    if known(lhs) and known(out):
        check(prod(lhs) == prod(out), f"cannot reshape lhs {fmt(lhs)} to {fmt(out)}: "
                                        "sizes differ")
    return out


def _reshape_like_rule(p, ins):
    if ins[0] is None or ins[1] is None:
        return ins, [None]
    return ins, [_reshape_like_shape(p, tuple(ins[0]), tuple(ins[1]))]


define("reshape_like", lambda p, a, b: a.reshape(_reshape_like_shape(p, a.shape, b.shape)).copy(),
    _reshape_like_rule, inputs=("lhs", "rhs"), infer_type=LIKE_TYPES,
    params={k: Optional(Int()) for k in ("lhs_begin", "lhs_end", "rhs_begin", "rhs_end")},
    doc="Reshape ``lhs`` so that dims ``[lhs_begin, lhs_end)`` become ``rhs``'s dims "
        "``[rhs_begin, rhs_end)`` (None: from the start / to the end).", name_errors=True,
    gradient=_grad_reshape)


def _flatten_shape(p, s):
    check(len(s) >= 1, "Flatten needs at least a 1-d input")
    rest = s[1:]
    return (s[0], prod(rest) if known(rest) else 0)


define("Flatten", lambda p, x: x.reshape(_flatten_shape(p, x.shape)).copy(),
       one_output(_flatten_shape),
    aliases=("flatten",), doc="Collapse all dims but the first: ``(d0, d1*...*dk)``.",
    name_errors=True, lists_input_names=False, gradient=_grad_reshape)




# --- Reshape ---------------------------------------------------------------------------------
def _plan_entry(ctx: LoweringContext, dims: Dims, piece: tuple, value: int,
                infer_varies: bool) -> Entry:
    kind, dyn = piece[0], dims.dyn
    if kind == "const":
        return value
    if kind == "infer":
        return (lambda: ctx.ints([-1], "infer")) if infer_varies else value
    k = piece[1]
    if kind == "dim":
        return dims.entry(k)
    if kind == "prod":
        if not (dyn[k] or dyn[k + 1]):
            return value
        return lambda: ctx.make("Mul", [dims.get([k]), dims.get([k + 1])])
    if not dyn[k]:  # "div"
        return value
    return lambda: ctx.make("Div", [dims.get([k]), ctx.ints([piece[2]], "split")])


def _infer_varies(plan: list, dyn: tuple) -> bool:
    """The -1 dim is fixed when every varying input dim reappears once among the other dims."""
    seen = {k: 0 for k, d in enumerate(dyn) if d}
    for piece in plan:
        if piece[0] in ("dim", "div") and piece[1] in seen:
            seen[piece[1]] += 1
        elif piece[0] == "prod":
            for k in (piece[1], piece[1] + 1):
                if k in seen:
                    seen[k] += 1
    return any(n != 1 for n in seen.values())


def _reshape_onnx(ctx: LoweringContext) -> None:
    """MXNet's Reshape codes lowered to a shape built at run time from ``Shape(x)`` pieces
    where dims vary (0 and -2 copy dims, -3 multiplies two, -4 divides one), constants where
    they do not, and ONNX's ``-1`` for MXNet's ``-1``."""
    p, dims = ctx.params, Dims(ctx)
    if p.shape:
        plan = reshape_plan(dims.static, p.shape, p.reverse)
    else:
        plan = legacy_plan(p.target_shape, p.keep_highest)
    values = eval_plan(plan, dims.static)
    varies = _infer_varies(plan, dims.dyn)
    entries = [_plan_entry(ctx, dims, pc, v, varies) for pc, v in zip(plan, values)]
    reshape_to(ctx, ctx.inputs[0], entries, ctx.outputs[0])


def _reshape_like_onnx(ctx: LoweringContext) -> None:
    p, lhs, rhs = ctx.params, Dims(ctx, 0), Dims(ctx, 1)
    lb, le = _like_range(len(lhs.static), p.lhs_begin, p.lhs_end, "lhs")
    rb, re = _like_range(len(rhs.static), p.rhs_begin, p.rhs_end, "rhs")
    entries = ([lhs.entry(k) for k in range(lb)] + [rhs.entry(k) for k in range(rb, re)]
               + [lhs.entry(k) for k in range(le, len(lhs.static))])
    reshape_to(ctx, ctx.inputs[0], entries, ctx.outputs[0])




def _flatten_onnx(ctx: LoweringContext) -> None:
    ctx.make("Flatten", ctx.inputs[:1], outputs=out_list(ctx), axis=1)




# --- ONNX lowerings attached ---------------------------------------------------------------
lowering("Reshape")(_reshape_onnx)
lowering("reshape_like")(_reshape_like_onnx)
lowering("Flatten")(_flatten_onnx)
