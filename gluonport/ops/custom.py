"""``Custom``: an operator written in Python (:mod:`gluonport.operator`), as MXNet 1.x's.

The node's attributes are ``op_type`` (the name given to ``@operator.register``) plus the
keyword arguments of the call, kept as strings and handed to the registered ``CustomOpProp``
as MXNet does. Inputs, auxiliary states, outputs and shape/type inference come from that prop;
the compute creates its ``CustomOp`` and calls ``forward(is_train, ...)`` with NDArrays
(``is_train`` True for a training-mode call: ``autograd.record()``, ``forward(is_train=True)``).

Gradients, as MXNet's: the op's rule calls ``_backward_Custom``, whose inputs are the output
gradients, the forward inputs, the forward outputs and the auxiliary states; its compute runs
the user's ``CustomOp.backward(req, out_grad, in_data, out_data, in_grad, aux)`` with
``req='write'`` and zeroed ``in_grad`` arrays. Only what the prop's
``declare_backward_dependency`` names is handed over (the rest are ``None``, where MXNet hands
empty arrays); by default that is the output gradients (unless ``need_top_grad=False``), the
inputs and the outputs. The backward uses the same ``CustomOp`` object the forward created when
it can be found (its outputs are still alive), so state kept on ``self`` in ``forward`` reaches
``backward`` as in MXNet.

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

#: ``run(prop, args, aux, out_shapes, out_dtypes, is_train) -> outputs``: create the prop's
#: CustomOp and run its ``forward`` on numpy arrays (wrapped as the NDArrays user code expects).
Runner = Callable[[Any, list[np.ndarray], list[np.ndarray], list[tuple], list[np.dtype], bool],
                  list[np.ndarray]]
#: ``run_backward(prop, out_grad, in_data, out_data, aux, in_shapes, in_dtypes, first_output)
#: -> in_grads``: run the ``CustomOp``'s ``backward`` (entries the prop did not declare a
#: dependency on are ``None``; the input shapes and dtypes size the gradients;
#: ``first_output`` is the forward's first output array, which finds the CustomOp that made it).
BackwardRunner = Callable[[Any, list, list, list, list, list, list, np.ndarray],
                          list[np.ndarray]]


def attach_runtime(props: Mapping[str, type], run: Runner,
                   run_backward: BackwardRunner | None = None) -> None:
    """Give ``Custom`` its Python side: the live table of registered props (``op_type`` -> a
    ``CustomOpProp`` subclass) and the functions running a ``CustomOp``'s forward and backward.
    Called once, by :mod:`gluonport.operator` when it is imported."""
    _RUNTIME["props"] = props
    _RUNTIME["run"] = run
    _RUNTIME["run_backward"] = run_backward


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


def _compute(p: Params, *arrays: np.ndarray, is_train: bool = False) -> list[np.ndarray]:
    n_in = _arity(p)[0]
    args = [np.ascontiguousarray(a) for a in arrays[:n_in]]
    out_shapes = _infer_shape(p, [a.shape for a in arrays])[1]
    out_types = _infer_type(p, [a.dtype for a in arrays])[1]
    return _RUNTIME["run"](_prop(p), args, list(arrays[n_in:]), out_shapes, out_types,
                           is_train)


def _train_compute(p: Params, *arrays: np.ndarray) -> list[np.ndarray]:
    return _compute(p, *arrays, is_train=True)


def _gradient(F: Any, p: Params, inputs: list, outputs: list, ograds: list) -> list:
    """The rule: one ``_backward_Custom`` node (the user's backward); aux states get none."""
    n_in, n_aux, n_out = _arity(p)
    res = F._internal._backward_Custom(*ograds[:n_out], *inputs[:n_in], *outputs[:n_out],
                             *inputs[n_in:], **p.as_dict())
    grads = [res] if n_in == 1 else [res[i] for i in range(n_in)]
    return grads + [None] * n_aux


def backward_dependencies(prop: Any) -> set[int]:
    """Which of (output gradients, inputs, outputs), numbered in that order from 0, the prop's
    ``declare_backward_dependency`` asks for (MXNet numbers them the same way)."""
    n_in, n_out = len(prop.list_arguments()), len(prop.list_outputs())
    deps = prop.declare_backward_dependency(list(range(n_out)),
                                            list(range(n_out, n_out + n_in)),
                                            list(range(n_out + n_in, 2 * n_out + n_in)))
    return {int(d) for d in deps}


def _backward_compute(p: Params, *arrays: np.ndarray) -> list[np.ndarray]:
    n_in, n_aux, n_out = _arity(p)
    run = _RUNTIME.get("run_backward")
    if run is None:  # pragma: no cover - gluonport.operator attaches it with the props
        raise UnsupportedOpError("Custom: no Python runtime attached", {"_backward_Custom": []})
    prop = _prop(p)
    deps = backward_dependencies(prop)
    given = [a if k in deps else None for k, a in enumerate(arrays[:2 * n_out + n_in])]
    return run(prop, given[:n_out], given[n_out:n_out + n_in], given[n_out + n_in:],
               list(arrays[2 * n_out + n_in:]), [a.shape for a in arrays[n_out:n_out + n_in]],
               [a.dtype for a in arrays[n_out:n_out + n_in]], arrays[n_out + n_in])


def _backward_inputs(p: Params) -> list[str]:
    prop = _prop(p)
    outs, args = list(prop.list_outputs()), list(prop.list_arguments())
    return ([f"{o}_grad" for o in outs] + args + [f"{o}_data" for o in outs]
            + list(prop.list_auxiliary_states()))


def _backward_shape(p: Params, in_shapes: list) -> tuple[list, list]:
    n_in, _, n_out = _arity(p)
    return in_shapes, list(in_shapes[n_out:n_out + n_in])


def _backward_type(p: Params, in_types: list) -> tuple[list, list]:
    n_in, _, n_out = _arity(p)
    return in_types, list(in_types[n_out:n_out + n_in])


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
    train_compute=_train_compute,
    unavailable=_unavailable,
    no_onnx="runs the user's Python CustomOp; give it an ONNX form with "
            "gluonport.onnx.register_converter('Custom') (ctx.params.op_type names the op type)",
    doc="An operator written in Python: gluonport.operator.CustomOp/CustomOpProp/register.",
    lists_output_names=True,
    gradient=_gradient,
))

register(OpDef(
    "_backward_Custom",
    params=_CustomSpec(),
    compute=_backward_compute,
    inputs=_backward_inputs,
    num_outputs=lambda p: _arity(p)[0],
    infer_shape=_backward_shape,
    infer_type=_backward_type,
    unavailable=_unavailable,
    no_onnx="runs the user's Python CustomOp.backward",
    no_gradient="MXNet registers no gradient for a custom op's backward",
    doc="A Python custom op's gradients (CustomOp.backward). Inputs: the output gradients, the "
        "forward inputs, the forward outputs, the auxiliary states; outputs: the inputs' "
        "gradients.",
))
