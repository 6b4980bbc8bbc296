"""``Custom``: an operator written in Python (:mod:`gluonport.operator`), as MXNet 1.x's.

The node's attributes are ``op_type`` (the name given to ``@operator.register``) plus the
keyword arguments of the call, kept as strings and handed to the registered ``CustomOpProp``
as MXNet does. Inputs, auxiliary states, outputs and shape/type inference come from that prop;
the compute creates its ``CustomOp`` and calls ``forward(is_train=False, ...)`` with NDArrays.

The Python side lives a layer above, in :mod:`gluonport.operator`: when imported, it hands this
module the table of registered props and the function that runs a ``CustomOp`` on NDArrays
(:func:`attach_runtime`), the way user ONNX converters are registered onto an ``OpDef``. Until
then no ``op_type`` is registered, and a graph with a ``Custom`` node loads but does not run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .._core.attr_fields import Params, ParamSpec, is_hidden_key, to_attr_string
from ..errors import GluonportError, OpAttributeError, ShapeError, UnsupportedOpError
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
# set by gluonport.operator: "props" {op_type: CustomOpProp subclass}, "run" (see attach_runtime)
_RUNTIME: dict[str, Any] = {"props": {}}

#: ``run(prop, args, aux, out_shapes, out_dtypes) -> outputs``: create the prop's CustomOp and run
#: its ``forward`` on numpy arrays (wrapped as the NDArrays user code expects).
Runner = Callable[[Any, list[np.ndarray], list[np.ndarray], list[tuple], list[np.dtype]],
                  list[np.ndarray]]


def attach_runtime(props: Mapping[str, type], run: Runner) -> None:
    """Give ``Custom`` its Python side: the live table of registered props (``op_type`` -> a
    ``CustomOpProp`` subclass) and the function running a ``CustomOp``. Called once, by
    :mod:`gluonport.operator` when it is imported."""
    _RUNTIME["props"] = props
    _RUNTIME["run"] = run


def _make_prop(op_type: str, kwargs: dict[str, str], node: str = "") -> Any:
    """Instantiate the registered prop of ``op_type`` with the node's keyword strings."""
    where = f"node {node!r}: " if node else ""
    cls = _RUNTIME["props"].get(op_type)
    if cls is None:
        raise UnsupportedOpError(
            f"{where}Custom op_type {op_type!r} is not registered; import the module that "
            f"defines it with @gluonport.operator.register({op_type!r}) (MXNet needed the "
            "same before loading the graph)", {"Custom": [node] if node else []})
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise GluonportError(f"{where}Custom op_type {op_type!r}: {cls.__name__}(**{kwargs}) "
                             f"failed: {exc}") from None


def _prop(p: Params) -> Any:
    cls = _RUNTIME["props"].get(p.op_type)
    hit = _PROP_CACHE.get((cls, p)) if cls is not None else None
    if hit is None:
        kwargs = {k: v for k, v in p.as_dict().items() if k != "op_type"}
        hit = _PROP_CACHE[(cls, p)] = _make_prop(p.op_type, kwargs)
    return hit


def _unavailable(attrs: Mapping[str, str]) -> str | None:
    op_type = attrs.get("op_type")
    if op_type in _RUNTIME["props"]:
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
    n_in = _arity(p)[0]
    args = [np.ascontiguousarray(a) for a in arrays[:n_in]]
    out_shapes = _infer_shape(p, [a.shape for a in arrays])[1]
    out_types = _infer_type(p, [a.dtype for a in arrays])[1]
    return _RUNTIME["run"](_prop(p), args, list(arrays[n_in:]), out_shapes, out_types)


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
    lists_output_names=True,
))
