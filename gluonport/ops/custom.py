"""``Custom``: an operator written in Python (:mod:`gluonport.operator`), as MXNet 1.x's.

The node's attributes are ``op_type`` (the name given to ``@operator.register``) plus the
keyword arguments of the call, kept as strings and handed to the registered ``CustomOpProp``
as MXNet does. Inputs, auxiliary states, outputs and shape/type inference come from that prop;
the compute creates its ``CustomOp`` and calls ``forward(is_train=False, ...)`` with NDArrays.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..attrs import Params, ParamSpec, is_hidden_key, to_attr_string
from ..errors import GluonportError, OpAttributeError, ShapeError
from .registry import OpDef, register


class _CustomSpec(ParamSpec):
    """``op_type`` plus any keyword arguments, all kept as strings (the prop parses them)."""

    def parse(self, attrs: Mapping[str, str], *, op: str = "", node: str = "",
              strict: bool = True) -> Params:
        values = {k: v for k, v in attrs.items() if not is_hidden_key(k)}
        if not values.get("op_type"):
            where = f"node {node!r} (Custom): " if node else "Custom: "
            raise OpAttributeError(f"{where}op_type is required: the name a CustomOpProp "
                                   "was registered under with @operator.register(name)")
        return Params(values)

    def to_attrs(self, kwargs: Mapping[str, Any], *, op: str = "") -> dict[str, str]:
        return {k: to_attr_string(v) for k, v in kwargs.items()}


_PROP_CACHE: dict[tuple[type, Params], Any] = {}


def _prop(p: Params) -> Any:
    from .. import operator

    cls = operator._PROPS.get(p.op_type)
    hit = _PROP_CACHE.get((cls, p)) if cls is not None else None
    if hit is None:
        kwargs = {k: v for k, v in p.as_dict().items() if k != "op_type"}
        hit = _PROP_CACHE[(cls, p)] = operator._make_prop(p.op_type, kwargs)
    return hit


def _unavailable(attrs: Mapping[str, str]) -> str | None:
    from .. import operator

    op_type = attrs.get("op_type")
    if operator._is_registered(op_type):
        return None
    return (f"Custom op_type {op_type!r} is not registered: import the module that defines it "
            f"with @gluonport.operator.register({op_type!r}) before loading the graph")


def _arity(p: Params) -> tuple[int, int, int]:
    prop = _prop(p)
    return (len(prop.list_arguments()), len(prop.list_auxiliary_states()),
            len(prop.list_outputs()))


def _split_inference(what: str, p: Params, ret: Any) -> tuple[list, list, list]:
    n_in, n_aux, n_out = _arity(p)
    if not isinstance(ret, (list, tuple)) or len(ret) not in (2, 3):
        raise GluonportError(f"Custom op_type {p.op_type!r}: {what} must return 2 or 3 lists, "
                             f"got {ret!r}")
    ins, outs = list(ret[0]), list(ret[1])
    auxs = list(ret[2]) if len(ret) == 3 else []
    for name, got, want in (("input", ins, n_in), ("output", outs, n_out), ("aux", auxs, n_aux)):
        if len(got) != want:
            raise GluonportError(f"Custom op_type {p.op_type!r}: {what} returned {len(got)} "
                                 f"{name} entries for {want} {name}s")
    return ins, outs, auxs


def _infer_shape(p: Params, in_shapes: list) -> tuple[list, list]:
    n_in, n_aux, n_out = _arity(p)
    args = in_shapes[:n_in]
    if args and args[0] is None:
        return in_shapes, [None] * n_out
    # MXNet passes an unknown shape as an empty one; props complete weights from the data
    given = [list(s) if s is not None else [] for s in args]
    try:
        ret = _prop(p).infer_shape(given)
    except Exception as exc:  # noqa: BLE001 - the user's code; say whose it is
        if any(s is None for s in args):
            return in_shapes, [None] * n_out
        raise ShapeError(f"Custom op_type {p.op_type!r}: infer_shape({given}) failed: "
                         f"{type(exc).__name__}: {exc}") from None
    ins, outs, auxs = _split_inference("infer_shape", p, ret)
    shape = [tuple(int(d) for d in s) if s is not None and len(s) else None
             for s in ins + auxs]
    return shape, [tuple(int(d) for d in s) for s in outs]


def _infer_type(p: Params, in_types: list) -> tuple[list, list]:
    n_in, n_aux, n_out = _arity(p)
    known = next((t for t in in_types if t is not None), None)
    if known is None:
        return in_types, [None] * n_out
    args = [np.dtype(t if t is not None else known).type for t in in_types[:n_in]]
    ins, outs, auxs = _split_inference("infer_type", p, _prop(p).infer_type(args))
    return [np.dtype(t) for t in ins + auxs], [np.dtype(t) for t in outs]


def _compute(p: Params, *arrays: np.ndarray) -> list[np.ndarray]:
    from ..context import cpu
    from ..ndarray import NDArray

    n_in, n_aux, n_out = _arity(p)
    args = [np.ascontiguousarray(a) for a in arrays[:n_in]]
    out_shapes = _infer_shape(p, [a.shape for a in arrays])[1]
    out_types = _infer_type(p, [a.dtype for a in arrays])[1]
    prop = _prop(p)
    op = prop.create_operator(cpu(), [list(a.shape) for a in args],
                              [a.dtype.type for a in args])
    in_data = [NDArray(a) for a in args]
    aux = [NDArray(a) for a in arrays[n_in:]]
    out_data = [NDArray(np.zeros(s, t)) for s, t in zip(out_shapes, out_types)]
    op.forward(is_train=False, req=["write"] * n_out, in_data=in_data, out_data=out_data,
               aux=aux)
    return [o.asnumpy() for o in out_data]


register(OpDef(
    "Custom",
    params=_CustomSpec(),
    compute=_compute,
    inputs=lambda p: [*_prop(p).list_arguments(), *_prop(p).list_auxiliary_states()],
    aux=lambda p: range(_arity(p)[0], sum(_arity(p)[:2])),
    num_outputs=lambda p: _arity(p)[2],
    output_names=lambda p: list(_prop(p).list_outputs()),
    infer_shape=_infer_shape,
    infer_type=_infer_type,
    unavailable=_unavailable,
    no_onnx="runs the user's Python CustomOp; give it an ONNX form with "
            "gluonport.onnx.register_converter('Custom') (ctx.params.op_type names the op type)",
    doc="An operator written in Python: gluonport.operator.CustomOp/CustomOpProp/register.",
))
