"""Shape manipulation operators: reshape, transpose, concat/split, slicing, tiling, broadcasting.

MXNet 1.9.1 semantics kept here (checked against the real library):

* shape inference uses MXNet 1.x legacy shapes: ``0`` is an unknown dim, ``None`` an unknown
  shape. Rules propagate what is known (an unknown batch dim stays unknown, the rest is kept);
  :func:`infer_reshape` is MXNet's ``InferReshapeShape`` as a pure function, reused by the ONNX
  exporter;
* where MXNet itself would read or write out of bounds (a ``Reshape`` whose target size differs
  from the input's, a ``transpose`` with repeated axes) gluonport raises
  :class:`~gluonport.errors.ShapeError` instead of returning garbage;
* axes that MXNet refuses when negative (``transpose``, ``flip``, ``broadcast_axis``) are refused
  here too, so a graph that runs here runs in MXNet.

ONNX export lives in :mod:`gluonport.ops._shape_onnx`: dims that vary with the exported model's
dynamic axes are read from ``Shape`` at run time (``Reshape`` lowers each special code), never
baked from the example shape.

Every compute returns a fresh array (MXNet's operators never alias their input).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..attrs import REQUIRED, Bool, Float, Int, Optional, Shape, Str
from ..errors import GluonportError, ShapeError
from ._reshape import check_size, infer_reshape, prod, reshape_error, reshape_target
from ._shape import fmt, known, merge, norm_axis
from .registry import OpDef, register

__all__ = ["infer_reshape", "define", "named", "types_from", "check"]

# --- helpers shared with indexing.py ---------------------------------------------------------
def check(cond: bool, message: str) -> None:
    """Raise :class:`ShapeError` with ``message`` unless ``cond``."""
    if not cond:
        raise ShapeError(message)


def named(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a compute so its errors start with the op name (``nd`` calls have no node name)."""

    @functools.wraps(fn)  # keeps the family module for OPERATORS.md
    def run(p, *arrays):
        try:
            return fn(p, *arrays)
        except GluonportError as exc:
            if str(exc).startswith(f"{name}:"):
                raise
            raise type(exc)(f"{name}: {exc}") from None

    return run


def types_from(same: Sequence[int] = (0,), fixed: str | None = None) -> Callable:
    """A type rule: the inputs listed in ``same`` share one dtype, which the output takes
    (unless ``fixed`` names the output dtype); other inputs (indices, shape donors) keep their
    own dtype, as MXNet's type functions for these ops do."""

    def rule(p, in_types):
        ins = list(in_types)
        group = next((ins[i] for i in same if ins[i] is not None), None)
        for i in same:
            ins[i] = group
        return ins, [np.dtype(fixed) if fixed else group]

    return rule


def define(name: str, compute: Callable, shape: Callable, params: dict | None = None,
           inputs: Sequence[str] = ("data",), aliases: tuple[str, ...] = (), doc: str = "",
           **kw: Any) -> OpDef:
    """Register one op of this family (compute errors are prefixed with the op name)."""
    return register(OpDef(name, params=params or {}, compute=named(name, compute),
                          infer_shape=shape, inputs=inputs, aliases=aliases, doc=doc, **kw))


def _one(fn: Callable) -> Callable:
    """A shape rule for one input and one output that only computes the output."""

    def rule(p, ins):
        return ins, [None if ins[0] is None else fn(p, tuple(ins[0]))]

    return rule


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


_reshape_rule.wants_outputs = True  # type: ignore[attr-defined]


def _reshape(p, x):
    out = reshape_target(p, x.shape, exact=True)
    spec = tuple(p.shape or p.target_shape)
    if out is None:
        raise ShapeError("no target shape: give shape=(...)")
    if prod(out) != x.size:
        raise reshape_error(x.shape, spec, f"{x.size} elements cannot fill {fmt(out)}")
    return x.reshape(out).copy()


define("Reshape", _reshape, _reshape_rule, aliases=("reshape",),
    params={"shape": Shape(()), "reverse": Bool(False), "target_shape": Shape(()),
            "keep_highest": Bool(False)},
    doc="Reshape ``data`` to ``shape`` with MXNet's special codes 0, -1, -2, -3, -4 "
        "(see :func:`gluonport.ops.shape.infer_reshape`); ``reverse`` reads them right to "
        "left. ``target_shape``/``keep_highest`` are MXNet's deprecated form.")


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


_LIKE_TYPES = types_from((0,))
define("reshape_like", lambda p, a, b: a.reshape(_reshape_like_shape(p, a.shape, b.shape)).copy(),
    _reshape_like_rule, inputs=("lhs", "rhs"), infer_type=_LIKE_TYPES,
    params={k: Optional(Int()) for k in ("lhs_begin", "lhs_end", "rhs_begin", "rhs_end")},
    doc="Reshape ``lhs`` so that dims ``[lhs_begin, lhs_end)`` become ``rhs``'s dims "
        "``[rhs_begin, rhs_end)`` (None: from the start / to the end).")


def _flatten_shape(p, s):
    check(len(s) >= 1, "Flatten needs at least a 1-d input")
    rest = s[1:]
    return (s[0], prod(rest) if known(rest) else 0)


define("Flatten", lambda p, x: x.reshape(_flatten_shape(p, x.shape)).copy(), _one(_flatten_shape),
    aliases=("flatten",), doc="Collapse all dims but the first: ``(d0, d1*...*dk)``.")


# --- axis permutations -----------------------------------------------------------------------
def _perm(p, ndim: int) -> tuple[int, ...]:
    if not p.axes:
        return tuple(range(ndim - 1, -1, -1))
    axes = tuple(p.axes)
    check(len(axes) == ndim, f"axes={axes} must name each of the {ndim} dims once")
    check(sorted(axes) == list(range(ndim)),
          f"axes={axes} must be a permutation of 0..{ndim - 1} (MXNet takes no negative axes)")
    return axes


define("transpose", lambda p, x: x.transpose(_perm(p, x.ndim)).copy(),
    _one(lambda p, s: tuple(s[a] for a in _perm(p, len(s)))), params={"axes": Shape(())},
    doc="Permute the dims by ``axes`` (empty: reverse them).")


def _swap_perm(p, ndim: int) -> list[int]:
    a = norm_axis(p.dim1, ndim, "dim1")
    b = norm_axis(p.dim2, ndim, "dim2")
    perm = list(range(ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return perm


define("SwapAxis", lambda p, x: x.transpose(_swap_perm(p, x.ndim)).copy(),
    _one(lambda p, s: tuple(s[a] for a in _swap_perm(p, len(s)))),
    params={"dim1": Int(0), "dim2": Int(0)}, aliases=("swapaxes",),
    doc="Swap dims ``dim1`` and ``dim2``.")


def _expand_shape(p, s):
    axis = p.axis + len(s) + 1 if p.axis < 0 else p.axis
    check(0 <= axis <= len(s), f"axis {p.axis} is out of range [{-len(s) - 1}, {len(s)}]")
    return s[:axis] + (1,) + s[axis:]


define("expand_dims", lambda p, x: x.reshape(_expand_shape(p, x.shape)).copy(),
    _one(_expand_shape), params={"axis": Int()}, doc="Insert a dim of size 1 at ``axis``.")


def _squeeze_shape(p, s, exact: bool = False):
    if p.axis is None:
        if not exact and not known(s):
            return None
        keep = [d for d in s if d != 1]
    else:
        drop = set()
        for a in p.axis:
            ax = norm_axis(a, len(s))
            check(ax not in drop, f"axis {a} is given twice")
            check(s[ax] in (0, 1), f"cannot squeeze axis {a} of size {s[ax]} (not 1)")
            drop.add(ax)
        keep = [d for i, d in enumerate(s) if i not in drop]
    return tuple(keep) or (1,)  # MXNet keeps one dim when everything is squeezed


define("squeeze", lambda p, x: x.reshape(_squeeze_shape(p, x.shape, True)).copy(),
    _one(_squeeze_shape),
    params={"axis": Optional(Shape())},
    doc="Remove dims of size 1 (all of them, or those in ``axis``); an all-ones shape "
        "becomes ``(1,)``.")


def _flip(p, x):
    out = x
    for a in p.axis:
        check(0 <= a < x.ndim, f"axis {a} must be in [0, {x.ndim}) (MXNet takes no negative "
                               "axes)")
        out = np.flip(out, a)  # a repeated axis flips twice, as in MXNet
    return out.copy()


def _flip_shape(p, s):
    for a in p.axis:
        check(0 <= a < len(s), f"axis {a} must be in [0, {len(s)})")
    return s


define("reverse", _flip, _one(_flip_shape), params={"axis": Shape()}, aliases=("flip",),
    doc="Reverse the order of elements along each axis in ``axis``.")


# --- joining and splitting -------------------------------------------------------------------
def _concat_rule(p, ins):
    ndims = {len(s) for s in ins if s is not None}
    if not ndims:
        return ins, [None]
    check(len(ndims) == 1, f"inputs have different ranks: {[fmt(s) for s in ins]}")
    ndim = ndims.pop()
    check(ndim > 0, "zero-dimensional arrays cannot be concatenated")
    axis = norm_axis(p.dim, ndim, "dim")
    common: tuple | None = None
    for s in ins:
        if s is not None:
            try:
                common = merge(common, s[:axis] + (0,) + s[axis + 1:])
            except ShapeError:
                raise ShapeError(f"inputs must agree on every dim but dim {axis}: "
                                 + ", ".join(fmt(x) for x in ins)) from None
    new_ins = [merge(s, common) for s in ins]
    sizes = [s[axis] for s in new_ins]
    out = common[:axis] + (sum(sizes) if all(sizes) else 0,) + common[axis + 1:]
    return new_ins, [out]


def _concat(p, *xs):
    _concat_rule(p, [x.shape for x in xs])
    return np.concatenate(xs, axis=norm_axis(p.dim, xs[0].ndim, "dim"))


define("Concat", _concat, _concat_rule, variadic="num_args", aliases=("concat", "_sparse_concat"),
    params={"num_args": Int(), "dim": Int(1)},
    doc="Join the inputs along ``dim``; every other dim must agree.")


def _stack_rule(p, ins):
    common = None
    for i, s in enumerate(ins):
        common = merge(common, s, f"input {i}: ")
    if common is None:
        return ins, [None]
    axis = norm_axis(p.axis, len(common) + 1)
    return [common] * len(ins), [common[:axis] + (len(ins),) + common[axis:]]


def _stack(p, *xs):
    _stack_rule(p, [x.shape for x in xs])
    return np.stack(xs, axis=norm_axis(p.axis, xs[0].ndim + 1))


define("stack", _stack, _stack_rule, variadic="num_args",
    params={"axis": Int(0), "num_args": Int()},
    doc="Join same-shape inputs along a new ``axis``.")


def _sections(p, s: tuple) -> tuple[int, list[tuple[int, int]]]:
    """(axis, [(start, end) per output]) for SliceChannel; end-start is 0 when unknown."""
    n = p.num_outputs
    check(n >= 1, f"num_outputs={n} must be >= 1")
    axis = norm_axis(p.axis, len(s))
    d = s[axis]
    if d:
        check(d % n == 0, f"cannot split axis {axis} of size {d} into {n} equal parts "
                          f"(input {fmt(s)})")
        check(not p.squeeze_axis or d == n,
              f"squeeze_axis=True needs axis {axis} of size num_outputs={n}, got {d}")
    step = d // n
    return axis, [(i * step, (i + 1) * step) for i in range(n)]


def _split_outputs(p, s: tuple, axis: int, bounds) -> list[tuple]:
    outs = []
    for b, e in bounds:
        if p.squeeze_axis:
            outs.append(s[:axis] + s[axis + 1:])
        else:
            outs.append(s[:axis] + (e - b if e >= 0 else 0,) + s[axis + 1:])
    return outs


def _slice_channel_rule(p, ins):
    if ins[0] is None:
        return ins, [None] * p.num_outputs
    s = tuple(ins[0])
    axis, bounds = _sections(p, s)
    return ins, _split_outputs(p, s, axis, bounds)


def _take_parts(x, axis: int, bounds, squeeze: bool) -> list[np.ndarray]:
    lead = (slice(None),) * axis
    outs = []
    for b, e in bounds:
        part = x[lead + (slice(b, e),)]
        outs.append((part.squeeze(axis) if squeeze else part).copy())
    return outs


def _slice_channel(p, x):
    axis, bounds = _sections(p, x.shape)
    return _take_parts(x, axis, bounds, p.squeeze_axis)


define("SliceChannel", _slice_channel, _slice_channel_rule, aliases=("split",),
    params={"num_outputs": Int(), "axis": Int(1), "squeeze_axis": Bool(False)},
    num_outputs=lambda p: p.num_outputs,
    output_names=lambda p: [f"output{i}" for i in range(p.num_outputs)],
    doc="Split ``data`` along ``axis`` into ``num_outputs`` equal parts; ``squeeze_axis`` "
        "drops the split axis (its size must then equal ``num_outputs``).")


def _v2_count(p) -> int:
    return p.sections if p.sections > 0 else len(p.indices)


def _v2_bounds(p, s: tuple) -> tuple[int, list[tuple[int, int]]]:
    """(axis, [(start, end)]) for _split_v2; end is -1 when the axis size is unknown."""
    axis = norm_axis(p.axis, len(s))
    d = s[axis] if s[axis] else -1
    n = _v2_count(p)
    check(n >= 1, "_split_v2 needs indices or sections > 0")
    if p.sections > 0:
        if d < 0:
            return axis, [(0, -1)] * n
        small, extra = divmod(d, n)  # the first `extra` parts get one more, as numpy
        starts = [i * small + min(i, extra) for i in range(n)]
    else:
        starts = list(p.indices)
    ends = starts[1:] + [d]
    for i, (b, e) in enumerate(zip(starts, ends)):
        inside = e < 0 or (b <= e and (d < 0 or e <= d))
        check(inside, f"section {i} [{b}, {e}) is not inside axis {axis} of size {d} "
                      f"(indices={tuple(p.indices)})")
    if d >= 0:
        total = n if p.squeeze_axis else d - starts[0]
        check(total == d, f"the sections {tuple(starts)} do not cover axis {axis} of size {d} "
                          "(the first index must be 0)")
    return axis, list(zip(starts, ends))


def _split_v2_rule(p, ins):
    if ins[0] is None:
        return ins, [None] * _v2_count(p)
    s = tuple(ins[0])
    axis, bounds = _v2_bounds(p, s)
    for b, e in bounds:
        check(not p.squeeze_axis or e < 0 or e - b == 1,
              f"squeeze_axis=True needs sections of size 1, got [{b}, {e})")
    return ins, _split_outputs(p, s, axis, bounds)


def _split_v2(p, x):
    _split_v2_rule(p, [x.shape])
    axis, bounds = _v2_bounds(p, x.shape)
    return _take_parts(x, axis, bounds, p.squeeze_axis)


define("_split_v2", _split_v2, _split_v2_rule,
    params={"indices": Shape(), "axis": Int(1), "squeeze_axis": Bool(False),
            "sections": Int(0)},
    num_outputs=_v2_count,
    doc="Split along ``axis`` at the start ``indices`` (first one 0), or into ``sections`` "
        "parts, the first ``size % sections`` one element longer (``mx.nd.split_v2``).")


# --- slicing ---------------------------------------------------------------------------------
def _slices(p, s: tuple) -> list[slice]:
    begin, end, step = tuple(p.begin), tuple(p.end), tuple(p.step)
    if all(st is None for st in step):  # step=None ("None" in files): every step 1, as MXNet
        step = ()
    check(len(begin) <= len(s), f"begin={begin} has more axes than the {len(s)}-d input")
    check(len(begin) == len(end), f"begin={begin} and end={end} must have the same length")
    check(not step or len(step) == len(begin), f"step={step} and begin={begin} must have the "
                                               "same length")
    out = []
    for i, (b, e) in enumerate(zip(begin, end)):
        st = step[i] if step else None
        check(st != 0, f"step[{i}] cannot be 0")
        out.append(slice(b, e, st))
    return out


def _slice_shape(p, s):
    dims = list(s)
    for i, sl in enumerate(_slices(p, s)):
        dims[i] = len(range(*sl.indices(s[i]))) if s[i] else 0
    return tuple(dims)


_SLICE_PARAMS = {"begin": Shape(allow_none=True), "end": Shape(allow_none=True),
                 "step": Shape((), allow_none=True)}
define("slice", lambda p, x: x[tuple(_slices(p, x.shape))].copy(), _one(_slice_shape),
    params=_SLICE_PARAMS, aliases=("crop", "_sparse_slice"),
    doc="Slice ``data[begin:end:step]`` per axis (None entries take Python's defaults; "
        "negative steps allowed); axes past ``len(begin)`` are kept whole.")


def _axis_range(p, s: tuple) -> tuple[int, int, int]:
    axis = norm_axis(p.axis, len(s))
    size = s[axis]
    if not size:
        return axis, 0, -1
    b = p.begin + size if p.begin < 0 else p.begin
    e = size if p.end is None else (p.end + size if p.end < 0 else p.end)
    check(e <= size, f"end={p.end} is past axis {axis} of size {size}")
    check(b < e, f"begin={p.begin} must be before end={p.end} on axis {axis} of size {size}")
    check(b >= 0 and e >= 0, f"invalid begin={p.begin}, end={p.end} for size {size}")
    return axis, b, e


def _slice_axis_shape(p, s):
    axis, b, e = _axis_range(p, s)
    return s[:axis] + (max(e - b, 0),) + s[axis + 1:]


def _slice_axis(p, x):
    axis, b, e = _axis_range(p, x.shape)
    return x[(slice(None),) * axis + (slice(b, e),)].copy()


define("slice_axis", _slice_axis, _one(_slice_axis_shape),
    params={"axis": Int(), "begin": Int(), "end": Optional(Int(), default=REQUIRED)},
    doc="Slice ``[begin, end)`` along one ``axis`` (negative indices count from the end, "
        "``end=None`` is the end); MXNet refuses an empty result.")


def _slice_like_axes(p, ls: tuple, rs: tuple) -> list[int]:
    if not p.axes:
        check(len(ls) == len(rs), f"slice_like on all axes needs equal ranks: {fmt(ls)} vs "
                                  f"{fmt(rs)}")
        return list(range(len(ls)))
    axes = []
    for a in p.axes:
        ax = a + len(ls) if a < 0 else a
        check(0 <= ax < len(ls) and ax < len(rs),
              f"axis {a} is out of range for shapes {fmt(ls)} and {fmt(rs)}")
        axes.append(ax)
    return axes


def _slice_like_shape(p, ls: tuple, rs: tuple) -> tuple:
    out = list(ls)
    for ax in _slice_like_axes(p, ls, rs):
        check(not (ls[ax] and rs[ax]) or ls[ax] >= rs[ax],
              f"axis {ax}: size {rs[ax]} of shape_like {fmt(rs)} exceeds {fmt(ls)}")
        out[ax] = rs[ax]
    return tuple(out)


def _slice_like(p, x, like):
    shape = _slice_like_shape(p, x.shape, like.shape)
    return x[tuple(slice(0, d) for d in shape)].copy()


define("slice_like", _slice_like,
    lambda p, ins: (ins, [None if None in ins[:2] else
                          _slice_like_shape(p, tuple(ins[0]), tuple(ins[1]))]),
    inputs=("data", "shape_like"), params={"axes": Shape(())}, infer_type=_LIKE_TYPES,
    doc="Slice ``data[0:n]`` on ``axes`` (all axes when empty) to the sizes of "
        "``shape_like``.")


# --- repetition and broadcasting -------------------------------------------------------------
def _tile_shape(p, s):
    reps = tuple(p.reps)
    check(all(r > 0 for r in reps), f"reps={reps} must be positive (MXNet 1.x legacy shapes "
                                     "cannot hold a zero-size result)")
    n = max(len(s), len(reps))
    s2 = (1,) * (n - len(s)) + s
    r2 = (1,) * (n - len(reps)) + reps
    return tuple(a * b for a, b in zip(s2, r2))


def _tile(p, x):
    _tile_shape(p, x.shape)
    return np.tile(x, tuple(p.reps)) if p.reps else x.copy()


define("tile", _tile, _one(_tile_shape), params={"reps": Shape()},
    doc="Repeat the whole array ``reps`` times per dim (numpy.tile).")


def _repeat_axis(p, ndim: int) -> int | None:
    check(p.repeats >= 0, f"repeats={p.repeats} cannot be negative")
    return None if p.axis is None else norm_axis(p.axis, ndim)


def _repeat_shape(p, s):
    axis = _repeat_axis(p, len(s))
    if p.repeats == 0:
        return (0,)
    if axis is None:
        return (prod(s) * p.repeats,) if known(s) else (0,)
    return s[:axis] + (s[axis] * p.repeats,) + s[axis + 1:]


def _repeat(p, x):
    axis = _repeat_axis(p, x.ndim)
    if p.repeats == 0:  # MXNet returns an empty 1-d array whatever the axis
        return np.zeros((0,), x.dtype)
    return np.repeat(x, p.repeats, axis=axis)


define("repeat", _repeat, _one(_repeat_shape), params={"repeats": Int(), "axis": Optional(Int())},
    doc="Repeat each element ``repeats`` times along ``axis`` (None: of the flattened array).")


def _broadcast_to_shape(p, s):
    target = tuple(p.shape)
    check(len(s) == len(target), f"cannot broadcast {fmt(s)} to {fmt(target)}")
    out = []
    for d, t in zip(s, target):
        check(t == 0 or d in (0, 1, t), f"cannot broadcast {fmt(s)} to {fmt(target)}")
        out.append(t or d)
    return tuple(out)


def _broadcast(shape_fn: Callable) -> Callable:
    def run(p, x, *like):
        shape = shape_fn(p, x.shape, *(y.shape for y in like))
        return np.broadcast_to(x, shape).copy()

    return run


define("broadcast_to", _broadcast(_broadcast_to_shape), _one(_broadcast_to_shape),
    params={"shape": Shape(())},
    doc="Broadcast size-1 dims to ``shape`` (a 0 keeps the input's dim).")


def _broadcast_like_shape(p, ls: tuple, rs: tuple) -> tuple:
    if p.lhs_axes is None or p.rhs_axes is None:
        check(len(ls) == len(rs), f"cannot broadcast {fmt(ls)} to {fmt(rs)}")
        for a, b in zip(ls, rs):
            check(not (a and b) or a in (1, b), f"cannot broadcast {fmt(ls)} to {fmt(rs)}")
        return tuple(b or a for a, b in zip(ls, rs))
    la, ra = tuple(p.lhs_axes), tuple(p.rhs_axes)
    check(len(la) == len(ra) and la, f"lhs_axes={la} and rhs_axes={ra} must be non-empty and "
                                     "of equal length")
    out = list(ls)
    for a, b in zip(la, ra):
        src, dst = norm_axis(a, len(ls), "lhs_axes"), norm_axis(b, len(rs), "rhs_axes")
        check(ls[src] in (0, 1), f"lhs axis {a} of {fmt(ls)} has size {ls[src]}, not 1")
        out[src] = rs[dst]
    return tuple(out)


def _broadcast_like_rule(p, ins):
    if ins[0] is None or ins[1] is None:
        return ins, [None]
    return ins, [_broadcast_like_shape(p, tuple(ins[0]), tuple(ins[1]))]


define("broadcast_like", _broadcast(_broadcast_like_shape), _broadcast_like_rule,
    inputs=("lhs", "rhs"), infer_type=_LIKE_TYPES,
    params={"lhs_axes": Optional(Shape()), "rhs_axes": Optional(Shape())},
    doc="Broadcast ``lhs`` to ``rhs``'s shape, or only ``lhs_axes`` to the sizes of "
        "``rhs_axes``.")


def _broadcast_axis_shape(p, s):
    axes, sizes = tuple(p.axis), tuple(p.size)
    check(len(axes) == len(sizes), f"axis={axes} and size={sizes} must have the same length")
    out = list(s)
    for a, n in zip(axes, sizes):
        check(0 <= a < len(s), f"axis {a} must be in [0, {len(s)}) (MXNet takes no negative "
                               "axes)")
        check(s[a] in (0, 1), f"axis {a} of {fmt(s)} has size {s[a]}, not 1")
        out[a] = n
    return tuple(out)


define("broadcast_axis", _broadcast(_broadcast_axis_shape), _one(_broadcast_axis_shape),
    params={"axis": Shape(()), "size": Shape(())}, aliases=("broadcast_axes",),
    doc="Broadcast the size-1 dims ``axis`` to ``size``.")


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


define("depth_to_space", _depth_to_space, _one(lambda p, s: _block(p, s, True)),
    params={"block_size": Int()},
    doc="Move ``block_size x block_size`` blocks of channels into space (DCR order).")
define("space_to_depth", _space_to_depth, _one(lambda p, s: _block(p, s, False)),
    params={"block_size": Int()},
    doc="Move ``block_size x block_size`` spatial blocks into channels (inverse of "
        "depth_to_space).")


# --- shape queries and generators ------------------------------------------------------------
define("shape_array", lambda p, x: np.array(x.shape, np.int64), _one(lambda p, s: (len(s),)),
    infer_type=types_from((), "int64"), doc="The input's shape as an int64 array.")
define("size_array", lambda p, x: np.array([x.size], np.int64), _one(lambda p, s: (1,)),
    infer_type=types_from((), "int64"), doc="The input's size as an int64 array.")


def _arange_like_shape(p, s):
    if p.axis is None:
        return s
    return (s[norm_axis(p.axis, len(s))],)


def _arange_like(p, x):
    shape = _arange_like_shape(p, x.shape)
    check(p.repeat >= 1, f"repeat={p.repeat} must be >= 1")
    k = np.arange(prod(shape), dtype=np.int64) // max(p.repeat, 1)
    dt = x.dtype
    if dt in (np.float32, np.float64):
        out = dt.type(p.start) + k.astype(dt) * dt.type(p.step)
    else:  # MXNet's kernel truncates start and step for integer and float16 outputs
        out = (int(p.start) + k * int(p.step)).astype(dt)
    return out.reshape(shape)


define("_contrib_arange_like", _arange_like, _one(_arange_like_shape),
    params={"start": Float(0.0), "step": Float(1.0), "repeat": Int(1), "ctx": Str(""),
            "axis": Optional(Int())},
    doc="``start + (i // repeat) * step`` shaped like the input (or its ``axis``), in the "
        "input's dtype.")


def _diag_shape(p, s):
    if len(s) == 1:
        return (s[0] + abs(p.k),) * 2 if s[0] else (0, 0)
    a1, a2 = norm_axis(p.axis1, len(s), "axis1"), norm_axis(p.axis2, len(s), "axis2")
    check(a1 != a2, f"axis1 and axis2 both refer to axis {a1}")
    h, w = s[a1], s[a2]
    rest = tuple(d for i, d in enumerate(s) if i not in (a1, a2))
    if not (h and w):
        return rest + (0,)
    n = min(h + min(p.k, 0), w - max(p.k, 0))
    check(n >= 0, f"diagonal k={p.k} does not exist in {fmt(s)}")
    return rest + (n,)


def _diag(p, x):
    _diag_shape(p, x.shape)
    if x.ndim == 1:
        return np.diag(x, p.k)
    return np.diagonal(x, p.k, norm_axis(p.axis1, x.ndim), norm_axis(p.axis2, x.ndim)).copy()


define("diag", _diag, _one(_diag_shape), params={"k": Int(0), "axis1": Int(0), "axis2": Int(1)},
    doc="1-d input: a square matrix with it on diagonal ``k``; otherwise the ``k``-th "
        "diagonal over ``axis1``/``axis2``, appended as the last dim.")


from . import _shape_onnx  # noqa: E402,F401  (attaches the ONNX export handlers)
