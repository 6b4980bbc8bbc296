"""What a serving engine must know about a model: one ONNX file, its tensors, its batch axis.

:func:`prepare_model` turns any model :func:`gluonport.load` accepts into a :class:`ServeModel`:
the serialized ONNX model every engine runs (Ray Serve replicas, Triton, Ray Data), the name,
dtype and dims of each input and output (``-1`` where a dim is dynamic), and whether the batch
axis is dynamic, which decides whether requests may be batched together.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import ConversionError, ExecutionError, FormatError, GluonportError, ShapeError

__all__ = ["TensorSpec", "ServeModel", "prepare_model", "check_device"]

_PROBE_BATCHES = (1, 2)


@dataclass(frozen=True)
class TensorSpec:
    """One input or output: its name, numpy dtype and dims (axis 0 included; ``-1``: dynamic)."""

    name: str
    dtype: np.dtype
    dims: tuple[int, ...]


@dataclass
class ServeModel:
    """A model prepared for serving.

    Attributes
    ----------
    name:
        A name for the model (the file's base name), usable as a Triton model name.
    onnx:
        The serialized ONNX model (self-contained: weights inside).
    inputs, outputs:
        :class:`TensorSpec` of each data input and output, in graph order.
    batch_dynamic:
        Whether axis 0 is a batch axis that every input and output keeps (see
        :func:`prepare_model` for the rule); requests are batched together only then.
    why_fixed:
        When ``batch_dynamic`` is false: why, in words.
    """

    name: str
    onnx: bytes
    inputs: list[TensorSpec]
    outputs: list[TensorSpec]
    batch_dynamic: bool
    why_fixed: str = ""
    source: str = ""
    probe: dict[str, tuple[int, ...]] = field(default_factory=dict)

    @property
    def input_names(self) -> list[str]:
        return [s.name for s in self.inputs]

    @property
    def output_names(self) -> list[str]:
        return [s.name for s in self.outputs]


def model_name(path: str) -> str:
    """A model's name from its path: ``dir/lenet_bn-symbol.json`` -> ``lenet_bn``; characters
    other than letters, digits, ``_``, ``-`` and ``.`` become ``_`` (a folder name for Triton)."""
    base = os.path.basename(os.fspath(path).rstrip("/\\"))
    for suffix in (".onnx", ".json"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    base = re.sub(r"-symbol$", "", base)
    base = re.sub(r"[^A-Za-z0-9_.-]", "_", base).strip(".") or "model"
    return base


def check_device(device: Any) -> Any:
    """A device given as text (``cpu``, ``cuda:0``, ``gpu:1``) or Context -> Context; a GPU
    onnxruntime cannot use is a :class:`~gluonport.errors.DeviceError` now, not at the first
    request."""
    from ..context import Context, cpu, gpu
    from ..runtime._providers import providers_for

    if device is None:
        return cpu()
    if isinstance(device, Context):
        ctx = device
    else:
        m = re.fullmatch(r"\s*(cpu|cuda|gpu)\s*(?:[:(]\s*(\d+)\s*\)?)?\s*", str(device).lower())
        if not m:
            raise GluonportError(f"device {device!r} is not cpu, cuda:N or gpu:N")
        index = int(m.group(2) or 0)
        ctx = cpu(index) if m.group(1) == "cpu" else gpu(index)
    providers_for(ctx)
    return ctx


def prepare_model(model: str | os.PathLike, *, input_shapes: Mapping[str, Any] | None = None,
                  input_dtypes: Mapping[str, Any] | None = None, params: str | None = None,
                  epoch: int | None = None, name: str | None = None, ctx: Any = None,
                  opset: int | None = None) -> ServeModel:
    """Export ``model`` to one ONNX model and find out whether its batch axis is dynamic.

    Parameters
    ----------
    model:
        A ``.onnx`` file, a ``*-symbol.json`` file or a ``PREFIX`` (as :func:`gluonport.load`).
    input_shapes:
        ``{input: shape}``, a sample shape of each input (MXNet files that record none need it;
        for an ONNX file with dynamic dims other than the batch, it lets the batch be probed).
    input_dtypes:
        ``{input: dtype}`` of MXNet inputs (default float32).
    ctx:
        Where the probe runs (default cpu).

    Notes
    -----
    The batch axis is dynamic when all of these hold:

    1. every data input has a dynamic axis 0 (MXNet files: the graph exports to ONNX with axis 0
       of every input symbolic; a graph whose export needs a fixed batch, or whose ops reshape
       the batch away, does not);
    2. run on onnxruntime at batch 1 and batch 2 (the other dims as given or declared), every
       output's axis 0 equals the batch, and its other dims do not change with the batch.

    A model that fails either rule is served with the batch it declares, unbatched. Outputs'
    other dims are taken from the probe: equal in both runs -> that size, else ``-1``.
    """
    from ..context import cpu

    path = os.fspath(model)
    ctx = ctx or cpu()
    given = {k: tuple(int(d) for d in v) for k, v in (input_shapes or {}).items()}
    name = name or model_name(path)
    if path.endswith(".onnx"):
        proto, fixed_reason = _from_onnx(path)
    else:
        proto, fixed_reason = _from_mxnet(path, given, input_dtypes, params, epoch, opset)
    inputs = _input_specs(proto, path)
    unknown = sorted(set(given) - {s.name for s in inputs})
    if unknown:
        raise ShapeError(f"{path}: input shapes given for {unknown}, which the model does not "
                         f"have; its inputs are {[s.name for s in inputs]}")
    data = proto.SerializeToString()
    sm = ServeModel(name, data, inputs, [], False, fixed_reason, path)
    _probe(sm, proto, given, ctx)
    return sm


def _from_mxnet(path: str, given: dict, dtypes: Any, params_file: str | None,
                epoch: int | None, opset: int | None) -> tuple[Any, str]:
    from .._modelpath import resolve_model
    from .._paramcheck import check_params
    from ..errors import InputShapeError
    from ..model import no_params_if_empty, split_params
    from ..ndarray import load as nd_load
    from ..onnx.export import export_symbol
    from ..symbol import load as sym_load

    files = resolve_model(path, params_file, epoch)
    sym = sym_load(files.symbol_file)
    loaded = no_params_if_empty(nd_load(files.params_file)) if files.params_file else {}
    if not isinstance(loaded, dict):
        raise FormatError("holds an unnamed list of arrays, not named parameters",
                          files.params_file)
    if any(k.startswith(("arg:", "aux:")) for k in loaded):
        arg, aux = split_params(loaded, files.params_file)
        loaded = {**arg, **aux}
    names = check_params(sym, {k: v.shape for k, v in loaded.items()},
                         symbol_file=files.symbol_file, params_file=files.params_file)
    values = {k: v.asnumpy() for k, v in loaded.items()}
    unknown = sorted(set(given) - set(names))
    if unknown:
        raise ShapeError(f"{path}: input shapes given for {unknown}, which the model does not "
                         f"have; its inputs are {list(names)}")
    types = {n: np.dtype((dtypes or {}).get(n, np.float32)) for n in names}
    shapes = given or None
    try:
        return export_symbol(sym, values, shapes, types, opset,
                             dynamic_axes={n: {0: "batch"} for n in names}), ""
    except InputShapeError as exc:
        raise InputShapeError(f"{path}: the shape of input(s) {exc.inputs} is not recorded in "
                              "the model; give a sample shape (input_shapes={'data': (1, 3, "
                              "224, 224)} or --input-shape data=1,3,224,224)", exc.inputs) from None
    except ConversionError as exc:
        why = f"the graph does not export with a dynamic axis 0 ({exc})"
    return export_symbol(sym, values, shapes, types, opset), why


def _from_onnx(path: str) -> tuple[Any, str]:
    import onnx

    from .._core.onnxfile import external_tensors, load_external_data, read_model

    proto, base_dir, label = read_model(path)
    # Our reader, not onnx's: it reads only the ranges read_model checked (no symlinks out of
    # the folder, no FIFOs), and finds external data in Constant attributes and subgraphs too.
    if external_tensors(proto):
        proto = onnx.ModelProto.FromString(proto.SerializeToString())
        load_external_data(proto, base_dir or "", label)
    return proto, ""


def _input_specs(proto: Any, path: str) -> list[TensorSpec]:
    from onnx import helper

    inits = {t.name for t in proto.graph.initializer}
    out = []
    for vi in proto.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        if not vi.type.HasField("tensor_type") or not tt.HasField("shape"):
            raise FormatError(f"input {vi.name!r} is not a tensor of known rank; a serving "
                              "engine needs the rank of every input", path)
        dims = tuple(d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else -1
                     for d in tt.shape.dim)
        try:
            dtype = np.dtype(helper.tensor_dtype_to_np_dtype(tt.elem_type))
        except Exception:  # noqa: BLE001 - any unmapped ONNX type
            raise FormatError(f"input {vi.name!r} has ONNX element type {tt.elem_type}, "
                              "which has no numpy dtype", path) from None
        out.append(TensorSpec(vi.name, dtype, dims))
    return out


def _probe_shapes(sm: ServeModel, given: dict, batch: int) -> dict[str, tuple] | None:
    shapes = {}
    for s in sm.inputs:
        dims = list(given.get(s.name, s.dims))
        if not dims:
            return None
        if any(d < 1 for d in dims[1:]):
            return None
        shapes[s.name] = (batch, *dims[1:])
    return shapes


def _probe(sm: ServeModel, proto: Any, given: dict, ctx: Any) -> None:
    """Run the model at batch 1 and 2 (:func:`prepare_model`'s rule) and fill in the outputs."""
    from ..runtime.ort import OrtRunner

    runner = OrtRunner(proto, ctx)
    batch_ok = not sm.why_fixed and all(s.dims and s.dims[0] == -1 for s in sm.inputs)
    if not sm.why_fixed and not batch_ok:
        sm.why_fixed = "axis 0 of an input is fixed: " + ", ".join(
            f"{s.name} {list(s.dims)}" for s in sm.inputs if not s.dims or s.dims[0] != -1)
    batches = _PROBE_BATCHES if batch_ok else (None,)
    results = []
    for b in batches:
        if b is None:
            shapes = {s.name: tuple(given.get(s.name, s.dims)) for s in sm.inputs}
            if any(d < 1 for v in shapes.values() for d in v):
                shapes = None
        else:
            shapes = _probe_shapes(sm, given, b)
        if shapes is None:
            raise ShapeError(f"{sm.source}: inputs "
                             f"{[(s.name, list(s.dims)) for s in sm.inputs]} have dynamic dims "
                             "besides the batch; give a sample shape of each (input_shapes= or "
                             "--input-shape)")
        feed = {n: np.zeros(v, dtype=s.dtype) for (n, v), s in zip(shapes.items(), sm.inputs)}
        try:
            results.append([o.shape for o in runner.run(feed)])
        except GluonportError as exc:
            raise ExecutionError(f"{sm.source}: the model does not run on onnxruntime ({ctx}) "
                                 f"with inputs {shapes}: {exc}") from None
        sm.probe = shapes
    if batch_ok:
        bad = [n for n, a, b in zip(runner.output_names, *results)
               if not a or a[0] != 1 or not b or b[0] != 2 or a[1:] != b[1:]]
        if bad:
            at = [[r[runner.output_names.index(n)] for n in bad] for r in results]
            sm.why_fixed = (f"output(s) {bad} do not keep the batch on axis 0 (at batch 1 and 2 "
                            f"they have shapes {at[0]} and {at[1]})")
            sm.inputs = [TensorSpec(s.name, s.dtype, (1, *s.dims[1:])) for s in sm.inputs]
            sm.onnx = _pin_batch(proto, 1)
    sm.batch_dynamic = not sm.why_fixed
    otypes = _output_dtypes(proto)
    shapes0 = results[0]
    outs = []
    for i, n in enumerate(runner.output_names):
        dims = list(shapes0[i])
        if sm.batch_dynamic:
            dims[0] = -1
        outs.append(TensorSpec(n, otypes[n], tuple(dims)))
    sm.outputs = outs


def _output_dtypes(proto: Any) -> dict[str, np.dtype]:
    from onnx import helper

    out = {}
    for vi in proto.graph.output:
        try:
            out[vi.name] = np.dtype(helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type))
        except Exception:  # noqa: BLE001 - unknown: float32, corrected by the first run
            out[vi.name] = np.dtype(np.float32)
    return out


def _pin_batch(proto: Any, batch: int) -> bytes:
    """The model with axis 0 of every input fixed to ``batch`` (a model whose outputs lose the
    batch is served at the batch it was probed with)."""
    import onnx

    pinned = onnx.ModelProto.FromString(proto.SerializeToString())
    inits = {t.name for t in pinned.graph.initializer}
    for vi in pinned.graph.input:
        if vi.name not in inits and vi.type.tensor_type.shape.dim:
            d = vi.type.tensor_type.shape.dim[0]
            d.Clear()
            d.dim_value = batch
    return pinned.SerializeToString()
