"""The ONNX Backend API over the importer and the numpy executor.

``prepare`` imports the model into an MXNet graph (:func:`~gluonport.onnx.importer.import_graph`)
and compiles it for the numpy reference executor; ``run`` feeds the inputs and returns the
outputs by their ONNX names. This is what lets onnx's own backend test suite
(``onnx.backend.test.BackendTest``) check the importer op by op.

MXNet 1.x has no 0-d arrays: a scalar output comes back from the MXNet graph as shape
``(1,)``; the backend reshapes outputs to the model's declared static output shape when only
unit dims differ.

>>> import gluonport.onnx.backend as backend          # doctest: +SKIP
>>> rep = backend.prepare(onnx.load("model.onnx"))     # doctest: +SKIP
>>> outputs = rep.run([x])                             # doctest: +SKIP
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper
from onnx.backend.base import Backend, BackendRep, Device, DeviceType, namedtupledict

from .._core.onnxfile import tensor_to_array
from ..errors import GraphError, UnsupportedOpError
from ..symbol.executor import GraphPlan
from ._import_narrow import NARROW, from_carrier, to_carrier
from .importer import ImportedGraph, import_graph

__all__ = ["GluonportBackend", "GluonportRep", "prepare", "run_model", "run_node",
           "supports_device"]


def _declared_shapes(model: onnx.ModelProto) -> list[tuple[int, ...] | None]:
    shapes = []
    for o in model.graph.output:
        dims = o.type.tensor_type.shape.dim if o.type.HasField("tensor_type") else []
        has_shape = o.type.HasField("tensor_type") and o.type.tensor_type.HasField("shape")
        if has_shape and all(d.HasField("dim_value") for d in dims):
            shapes.append(tuple(int(d.dim_value) for d in dims))
        else:
            shapes.append(None)
    return shapes


def _declared_types(model: onnx.ModelProto) -> list[int]:
    return [o.type.tensor_type.elem_type if o.type.HasField("tensor_type") else 0
            for o in model.graph.output]


def _array(x: Any) -> np.ndarray:
    """A numpy input; 0-d becomes (1,) as MXNet 1.x holds scalars; a narrow type (bfloat16,
    float8, int4...) in its carrier (gluonport/onnx/_import_narrow.py)."""
    if isinstance(x, onnx.TensorProto):
        x = numpy_helper.to_array(x) if x.data_type in NARROW else tensor_to_array(x, None)
    return to_carrier(np.atleast_1d(np.asarray(x)))


def _feed(inputs: Any, names: list[str]) -> dict[str, np.ndarray]:
    """Inputs as ``{name: array}`` from a dict, a list in graph-input order or one array."""
    if isinstance(inputs, Mapping):
        return {k: _array(v) for k, v in inputs.items()}
    if isinstance(inputs, (np.ndarray, onnx.TensorProto)):
        inputs = [inputs]
    if len(inputs) > len(names):
        raise GraphError(f"{len(inputs)} inputs given for {len(names)} graph inputs {names}")
    return {n: _array(v) for n, v in zip(names, inputs)}


class GluonportRep(BackendRep):
    """A prepared model: the imported MXNet graph compiled for the numpy executor."""

    def __init__(self, graph: ImportedGraph, declared: list[tuple[int, ...] | None],
                 types: list[int] | None = None):
        self.graph = graph
        self.plan = GraphPlan(graph.sym)
        self.params = {**graph.arg_params, **graph.aux_params}
        self.declared = declared
        self.types = types or [0] * len(declared)
        self.input_names = graph.input_names

    def run(self, inputs: Any, **kwargs: Any) -> tuple:
        """Run on ``inputs`` (a list in graph-input order, a dict by name, or one array)."""
        return self.run_feed(_feed(inputs, self.input_names))

    def run_feed(self, feed: dict[str, np.ndarray]) -> tuple:
        feed = {**feed, **self.params}
        outs = self.plan.run(feed)
        outs = [from_carrier(self._shape(np.asarray(o), s), t)
                for o, s, t in zip(outs, self.declared, self.types)]
        return namedtupledict("Outputs", self.graph.output_names)(*outs)

    @staticmethod
    def _shape(out: np.ndarray, want: tuple[int, ...] | None) -> np.ndarray:
        if want is None or out.shape == want or out.size != int(np.prod(want)):
            return out
        if [d for d in out.shape if d != 1] == [d for d in want if d != 1]:
            return out.reshape(want)
        return out


class SpecializingRep(BackendRep):
    """A model whose shape-like inputs (Reshape's shape, Slice's starts, Resize's scales...)
    are graph inputs. MXNet needs them as attributes, so the graph is imported once per set
    of their values, at run time, with those inputs turned into constants."""

    def __init__(self, model: onnx.ModelProto, names: list[str], strict: bool):
        self.model = model
        self.names = names
        self.strict = strict
        inits = {t.name for t in model.graph.initializer}
        self.input_names = [i.name for i in model.graph.input if i.name not in inits]
        self._cache: dict[bytes, GluonportRep] = {}

    def run(self, inputs: Any, **kwargs: Any) -> tuple:
        feed = _feed(inputs, self.input_names)
        fixed = {n: feed[n] for n in self.names}
        key = b"".join(n.encode() + v.tobytes() + str(v.shape).encode()
                       for n, v in sorted(fixed.items()))
        rep = self._cache.get(key)
        if rep is None:
            rep = self._cache[key] = self._import(feed, fixed)
        return rep.run_feed({k: v for k, v in feed.items() if k not in rep.params
                             and k not in fixed})

    def _import(self, feed: dict, fixed: dict) -> GluonportRep:
        """Import with ``fixed`` as constants, adding inputs the import asks for (a few
        rounds: one constant can make the next handler need another)."""
        for _ in range(4):
            try:
                return _prepare(_specialize(self.model, fixed), self.strict)
            except UnsupportedOpError as err:
                more = [n for n in getattr(err, "needs_const", ()) if n in feed
                        and n not in fixed]
                if not more:
                    raise
                fixed.update({n: feed[n] for n in more})
        return _prepare(_specialize(self.model, fixed), self.strict)


def _specialize(model: onnx.ModelProto, values: dict[str, np.ndarray]) -> onnx.ModelProto:
    out = onnx.ModelProto()
    out.CopyFrom(model)
    keep = [i for i in out.graph.input if i.name not in values]
    del out.graph.input[:]
    out.graph.input.extend(keep)
    out.graph.initializer.extend(numpy_helper.from_array(v, n) for n, v in values.items())
    return out


def _shape_inputs(model: onnx.ModelProto, err: UnsupportedOpError) -> list[str]:
    """Graph inputs to specialize on: those the importer needed as constants, or else every
    integer input (shape values computed from them)."""
    inits = {t.name for t in model.graph.initializer}
    inputs = {i.name: i for i in model.graph.input if i.name not in inits}
    needed = getattr(err, "needs_const", set())
    names = [n for n in needed if n in inputs]
    if len(names) < len(needed):  # computed values: the graph inputs they are computed from
        names += [n for n in _upstream(model, set(needed) - set(names)) if n in inputs
                  and n not in names]
    if len(names) < len(needed):
        ints = (onnx.TensorProto.INT64, onnx.TensorProto.INT32)
        names += [n for n, i in inputs.items() if n not in names
                  and i.type.tensor_type.elem_type in ints]
    return names


def _upstream(model: onnx.ModelProto, names: set[str]) -> list[str]:
    """Every tensor the ``names`` are computed from (in the top-level graph)."""
    producer = {o: n for n in model.graph.node for o in n.output if o}
    seen, todo = set(), list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in producer:
            todo.extend(i for i in producer[name].input if i)
    return sorted(seen - names)


def _prepare(model: onnx.ModelProto, strict: bool) -> GluonportRep:
    with warnings.catch_warnings():  # the rep converts narrow inputs/outputs itself
        warnings.filterwarnings("ignore", message=r"graph inputs/outputs .* are carried")
        graph = import_graph(model, strict=strict)
    return GluonportRep(graph, _declared_shapes(model), _declared_types(model))


class GluonportBackend(Backend):
    """``onnx.backend.base.Backend`` running imported models on gluonport's numpy executor."""

    @classmethod
    def is_compatible(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> bool:
        return cls.supports_device(device)

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any
                ) -> GluonportRep:
        """Import ``model`` (checked with onnx.checker) and compile it.

        When the import needs graph inputs as constants (shape-like inputs), the result
        imports once per set of their values, at run time.
        """
        strict = bool(kwargs.get("strict", False))
        try:
            return _prepare(model, strict)
        except UnsupportedOpError as err:
            if not getattr(err, "needs_const", None):
                raise
            names = _shape_inputs(model, err)
            if not names:
                raise
            return SpecializingRep(model, names, strict)

    @classmethod
    def run_model(cls, model: onnx.ModelProto, inputs: Any, device: str = "CPU",
                  **kwargs: Any) -> tuple:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node: onnx.NodeProto, inputs: Sequence[np.ndarray], device: str = "CPU",
                 outputs_info: Sequence[tuple] | None = None, **kwargs: Any) -> tuple:
        """Run one node: a one-node model with the inputs' types, at ``opset_version``
        (keyword) or onnx's newest opset."""
        ins = [helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(
            np.asarray(x).dtype), np.asarray(x).shape) for name, x in zip(node.input, inputs)
            if name]
        graph = helper.make_graph([node], "run_node", ins, [])
        opset = int(kwargs.get("opset_version", onnx.defs.onnx_opset_version()))
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid(node.domain, opset)])
        inferred = onnx.shape_inference.infer_shapes(model)
        typed = {v.name: v for v in inferred.graph.value_info}
        model.graph.output.extend(typed.get(o) or helper.make_tensor_value_info(
            o, onnx.TensorProto.FLOAT, None) for o in node.output if o)
        feed = {n: np.asarray(x) for n, x in zip(node.input, inputs) if n}
        return cls.run_model(model, feed, device)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        """The numpy executor runs on the host: ``CPU`` only."""
        return Device(device).type == DeviceType.CPU


prepare = GluonportBackend.prepare
run_model = GluonportBackend.run_model
run_node = GluonportBackend.run_node
supports_device = GluonportBackend.supports_device
