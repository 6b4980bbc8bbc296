"""onnxruntime sessions: execution providers from a Context, sessions cached per input signature.

MXNet binds a symbol to a context (``sym.bind(ctx=mx.gpu(0))``) and re-binds when input shapes
change. Here the graph is an ONNX model and :class:`OrtRunner` plays the executor: it picks
onnxruntime's execution providers from the :class:`~gluonport.context.Context`, builds an
``onnxruntime.InferenceSession`` the first time an input signature is seen, and reuses it after.
A GPU that onnxruntime cannot use is an error (:class:`~gluonport.errors.DeviceError`), never a
silent CPU run. See ``README.md`` beside this file for the design.
"""

from __future__ import annotations

import os
import threading
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._core.dtypes import BFLOAT16, from_onnx
from ..context import Context, current_context
from ..errors import (
    DeviceError,
    DTypeError,
    ExecutionError,
    FormatError,
    GluonportError,
    ShapeError,
    UnsupportedOpError,
)
from ._providers import (
    check_session_providers,
    inference_session,
    install_fix,
    installed_onnxruntime,
    onnxruntime_module,
    provider_names,
    providers_for,
)

__all__ = ["RuntimeOptions", "OrtRunner", "DeviceArray", "to_device", "providers_for",
           "installed_onnxruntime", "inference_session"]

_OPT_LEVELS = {"disable": "ORT_DISABLE_ALL", "basic": "ORT_ENABLE_BASIC",
               "extended": "ORT_ENABLE_EXTENDED", "all": "ORT_ENABLE_ALL"}
_EXEC_MODES = {"sequential": "ORT_SEQUENTIAL", "parallel": "ORT_PARALLEL"}
# Plans (validated signatures) kept before the table starts over; sessions are kept regardless.
_MAX_PLANS = 1024


# ---------------------------------------------------------------------------------------------
# Options and model inputs


@dataclass(frozen=True)
class RuntimeOptions:
    """Session settings, mirroring ``onnxruntime.SessionOptions`` plus gluonport's own.

    ``graph_optimization_level`` is one of ``'disable' | 'basic' | 'extended' | 'all'`` and
    ``execution_mode`` ``'sequential' | 'parallel'``. ``log_severity`` is onnxruntime's
    (0 verbose ... 4 fatal). ``static_shape`` builds one session per input shape with the model's
    dynamic dimensions pinned, like MXNet's ``hybridize(static_shape=True)``. ``io_binding``
    binds inputs/outputs through ``session.io_binding()``; ``None`` means "on a GPU context".
    """

    intra_op_num_threads: int | None = None
    inter_op_num_threads: int | None = None
    graph_optimization_level: str = "all"
    enable_mem_pattern: bool = True
    execution_mode: str = "sequential"
    log_severity: int = 3
    tensorrt: bool = False
    provider_options: Mapping[str, Mapping[str, Any]] | None = None
    static_shape: bool = False
    io_binding: bool | None = None

    def __post_init__(self) -> None:
        for name, table in (("graph_optimization_level", _OPT_LEVELS),
                            ("execution_mode", _EXEC_MODES)):
            if getattr(self, name) not in table:
                raise GluonportError(f"RuntimeOptions: {name}={getattr(self, name)!r}; "
                                     f"use one of {list(table)}")
        if self.log_severity not in range(5):
            raise GluonportError(f"RuntimeOptions: log_severity={self.log_severity!r}; "
                                 "use 0 (verbose) to 4 (fatal)")

    def session_options(self, dim_overrides: Mapping[str, int] | None = None) -> Any:
        """An ``onnxruntime.SessionOptions`` with these settings and named-dimension overrides."""
        ort = onnxruntime_module()
        so = ort.SessionOptions()
        if self.intra_op_num_threads is not None:
            so.intra_op_num_threads = self.intra_op_num_threads
        if self.inter_op_num_threads is not None:
            so.inter_op_num_threads = self.inter_op_num_threads
        so.graph_optimization_level = getattr(ort.GraphOptimizationLevel,
                                              _OPT_LEVELS[self.graph_optimization_level])
        so.execution_mode = getattr(ort.ExecutionMode, _EXEC_MODES[self.execution_mode])
        so.enable_mem_pattern = self.enable_mem_pattern
        so.log_severity_level = self.log_severity
        for name, value in (dim_overrides or {}).items():
            so.add_free_dimension_override_by_name(name, value)
        return so


Dim = int | str | None


@dataclass(frozen=True)
class _Input:
    """One graph input: dims are ints, dim_param names, or None (unknown); shape None = any rank."""

    name: str
    dtype: np.dtype
    shape: tuple[Dim, ...] | None
    fixed: tuple[tuple[int, int], ...] = ()

    @classmethod
    def from_proto(cls, vi: Any, subject: str) -> _Input:
        if vi.type.WhichOneof("value") != "tensor_type":
            raise DTypeError(f"{subject}: input {vi.name!r} is not a tensor; OrtRunner feeds "
                             "numpy arrays only")
        tt = vi.type.tensor_type
        if tt.elem_type == BFLOAT16.onnx:
            raise DTypeError(f"{subject}: input {vi.name!r} is bfloat16, which numpy cannot "
                             "hold; export the model with a float32 input and a Cast node")
        try:
            dtype = from_onnx(tt.elem_type).numpy
        except DTypeError as err:
            raise DTypeError(f"{subject}: input {vi.name!r}: {err}") from None
        shape = None
        if tt.HasField("shape"):
            shape = tuple(getattr(d, d.WhichOneof("value")) if d.WhichOneof("value") else None
                          for d in tt.shape.dim)
        fixed = tuple((i, d) for i, d in enumerate(shape or ()) if isinstance(d, int))
        return cls(vi.name, dtype, shape, fixed)

    def check_shape(self, shape: tuple[int, ...], subject: str) -> None:
        """Raise ShapeError unless ``shape`` has this input's rank and fixed dims."""
        if self.shape is None:
            return
        if len(shape) != len(self.shape):
            raise ShapeError(f"{subject}: input {self.name!r} must have rank {len(self.shape)} "
                             f"(model shape {self.shape}), got shape {shape}; reshape it, e.g. "
                             "x[None] adds a batch axis of one")
        for axis, size in self.fixed:
            if shape[axis] != size:
                raise ShapeError(f"{subject}: input {self.name!r} axis {axis} must be {size} "
                                 f"(model shape {self.shape}), got shape {shape}")


def _load_model(model: Any) -> tuple[str | bytes, Any, str]:
    """(what InferenceSession takes, the parsed ModelProto, a subject for messages).

    Every model passes :func:`gluonport._core.onnxfile.read_model` first: onnxruntime never sees a
    model whose external data points outside its folder, whatever version is installed.
    """
    import onnx

    from .._core.onnxfile import read_model

    if isinstance(model, onnx.ModelProto):
        subject = f"ONNX model {model.graph.name!r}"
        read_model(model, subject)
        return model.SerializeToString(), model, subject
    if isinstance(model, (bytes, bytearray, memoryview)):
        source: str | bytes = bytes(model)
        subject = "ONNX model (bytes)"
    elif isinstance(model, (str, os.PathLike)):
        source = subject = os.fspath(model)
        if not os.path.isfile(source):
            raise FormatError("no such ONNX file", path=source)
    else:
        raise GluonportError(f"OrtRunner: model must be a path, bytes or onnx.ModelProto, got "
                             f"{type(model).__name__}")
    # weights in external files stay on disk: the session reads them itself, once checked
    proto = read_model(source, subject)[0]
    return source, proto, subject


# ---------------------------------------------------------------------------------------------
# The runner


@dataclass(frozen=True)
class _Plan:
    """What one input signature runs with: its session, and a dtype to cast each input to
    (``casts`` is None when every input already has the model's dtype)."""

    session: Any
    casts: tuple[np.dtype | None, ...] | None


_ORT_TYPE_NAMES = {"float": "float32", "double": "float64", "bfloat16": "uint16"}


def _value_dtype(value: Any) -> np.dtype:
    """The numpy dtype of an ``OrtValue`` tensor (``data_type()`` is ``'tensor(float)'``...)."""
    name = value.data_type()[len("tensor("):-1]
    return np.dtype(_ORT_TYPE_NAMES.get(name, name))


class DeviceArray:
    """A tensor held by onnxruntime on a runner's device (an ``OrtValue``), with the numpy
    ``dtype`` and ``shape`` it has: what :meth:`OrtRunner.run_device` keeps on the device and
    takes back as an input, so that a value one session makes for another (a training step's
    saved activations, its parameters) does not go to the host and back between them."""

    __slots__ = ("value", "dtype", "shape")

    def __init__(self, value: Any, dtype: np.dtype, shape: tuple[int, ...]):
        self.value = value
        self.dtype = np.dtype(dtype)
        self.shape = tuple(shape)

    def numpy(self) -> np.ndarray:
        """A host copy."""
        return self.value.numpy()

    def __repr__(self) -> str:
        return f"DeviceArray({self.dtype}, {self.shape})"


def _ort_device(ctx: Context) -> tuple[str, int]:
    """onnxruntime's (device, id) for a context: ``("cuda", i)`` for ``gpu(i)``, else
    ``("cpu", 0)``."""
    return ("cuda", ctx.device_id) if ctx.device_type == "gpu" else ("cpu", 0)


def to_device(array: np.ndarray, ctx: Context) -> DeviceArray:
    """``array`` copied to ``ctx``'s device for :meth:`OrtRunner.run_device` (``gpu(i)``: CUDA
    memory; ``cpu()``: host memory, a copy too, so the caller may change ``array`` after)."""
    device, device_id = _ort_device(ctx)
    array = np.ascontiguousarray(array) if device == "cuda" else \
        np.array(array, order="C", copy=True)
    value = onnxruntime_module().OrtValue.ortvalue_from_numpy(array, device, device_id)
    return DeviceArray(value, array.dtype, array.shape)


class OrtRunner:
    """Run an ONNX model on onnxruntime, one cached session per input signature.

    Parameters
    ----------
    model:
        A path to a ``.onnx`` file, its bytes, or an ``onnx.ModelProto``.
    ctx:
        Where it runs: ``cpu()`` or ``gpu(i)`` (CUDA, TensorRT with ``options.tensorrt``).
        Default: the current context.
    options:
        :class:`RuntimeOptions`.

    Notes
    -----
    Inputs of another dtype than the model's are cast when numpy calls the cast safe
    (int32 -> int64, float16 -> float32) and float -> narrower float (float64 -> float32) is cast
    too, with a warning once per input: numpy makes float64 by default, and MXNet's
    ``nd.array`` likewise turns float64 data into float32. Every other mismatch is a DTypeError.

    ``run`` may be called from many threads at once: ``InferenceSession.run`` is thread-safe and
    sessions are created under a lock, so each signature gets exactly one session.

    >>> import onnx, numpy as np
    >>> from onnx import helper as h, TensorProto as T
    >>> g = h.make_graph([h.make_node("Relu", ["x"], ["y"])], "g",
    ...                  [h.make_tensor_value_info("x", T.FLOAT, ["N", 2])],
    ...                  [h.make_tensor_value_info("y", T.FLOAT, ["N", 2])])
    >>> model = h.make_model(g, ir_version=8, opset_imports=[h.make_opsetid("", 17)])
    >>> runner = OrtRunner(model)
    >>> runner.run({"x": np.array([[-1.0, 2.0]], np.float32)})[0]
    array([[0., 2.]], dtype=float32)
    """

    def __init__(self, model: Any, ctx: Context | None = None,
                 options: RuntimeOptions | None = None):
        self.ctx = current_context() if ctx is None else ctx
        self.options = options or RuntimeOptions()
        self._providers = providers_for(self.ctx, tensorrt=self.options.tensorrt,
                                        provider_options=self.options.provider_options)
        self._source, proto, self._subject = _load_model(model)
        self._sizes_skeleton = None  # a user's model with dynamic dims: checked per shape
        if isinstance(self._source, str) or not hasattr(model, "graph"):  # a user's file
            from ..onnx._sizes import check_onnx_sizes

            self._sizes_skeleton = check_onnx_sizes(proto, self._subject)
        inits = {t.name for t in proto.graph.initializer}
        self._inputs = tuple(_Input.from_proto(vi, self._subject)
                             for vi in proto.graph.input if vi.name not in inits)
        self._initializer_names = frozenset(inits)
        self._outputs = tuple(o.name for o in proto.graph.output)
        self._names = tuple(i.name for i in self._inputs)
        self._model_dtypes = tuple(i.dtype for i in self._inputs)
        on_gpu = self.ctx.device_type == "gpu"
        binding = self.options.io_binding
        self._io_binding = on_gpu if binding is None else binding
        self._out_device = _ort_device(self.ctx)
        self._sessions: dict[tuple, Any] = {}
        self._plans: dict[tuple, _Plan] = {}
        self._lock = threading.Lock()
        self._warned: set[str] = set()

    # -- introspection ------------------------------------------------------------------------

    @property
    def input_names(self) -> list[str]:
        """Names of the inputs to feed, in graph order (initializers excluded)."""
        return list(self._names)

    @property
    def input_shapes(self) -> dict[str, tuple[Dim, ...] | None]:
        """Model shape per input: ints, dim names (str) or None for dynamic dims."""
        return {i.name: i.shape for i in self._inputs}

    @property
    def input_dtypes(self) -> dict[str, np.dtype]:
        """numpy dtype per input."""
        return {i.name: i.dtype for i in self._inputs}

    @property
    def output_names(self) -> list[str]:
        """Names of the graph outputs, in the order ``run`` returns them."""
        return list(self._outputs)

    @property
    def providers(self) -> list[str]:
        """Providers the sessions really use (builds the dynamic-shape session if none exists)."""
        with self._lock:
            sessions = list(self._sessions.values())
        if not sessions:
            sessions = [self._session((self._model_dtypes, None))]
        return list(sessions[-1].get_providers())

    @property
    def num_sessions(self) -> int:
        """How many sessions the cache holds."""
        return len(self._sessions)

    # -- running ------------------------------------------------------------------------------

    def run(self, inputs: Mapping[str, Any] | Sequence[Any] | np.ndarray) -> list[np.ndarray]:
        """Run the model and return its outputs as numpy arrays, in ``output_names`` order.

        ``inputs`` maps input names to arrays, or lists them in ``input_names`` order; a single
        array is accepted for a one-input model.
        """
        arrays = self._arrays(inputs)
        plan = self._plan(arrays)
        if plan.casts is not None:
            arrays = [a if c is None else a.astype(c) for a, c in zip(arrays, plan.casts)]
        feed = dict(zip(self._names, arrays))
        try:
            if self._io_binding:
                return self._run_bound(plan.session, feed)
            return plan.session.run(None, feed)
        except Exception as err:
            raise self._run_error(err, arrays) from err

    def run_into(self, inputs: Mapping[str, Any] | Sequence[Any] | np.ndarray,
                 into: Mapping[int, np.ndarray]) -> list[np.ndarray]:
        """``run``, with output ``i`` written by onnxruntime straight into ``into[i]`` (a
        C-contiguous, writeable host array of that output's dtype and shape, sharing no memory
        with an input), which is what the returned list holds at ``i``.

        The node that computes such an output writes it there (an output made by a copying
        node, ``Reshape`` and the like, is copied there), so a caller that keeps its results in
        arrays of its own -- gradient buffers -- saves allocating and copying a fresh result
        (11M values, ~7 ms, for resnet18's weight gradients). A device session runs as ``run``
        does and copies into ``into``.
        """
        if not into:
            return self.run(inputs)
        if self._io_binding:
            outs = self.run(inputs)
            for i, dest in into.items():
                np.copyto(dest, outs[i])
                outs[i] = dest
            return outs
        arrays = self._arrays(inputs)
        plan = self._plan(arrays)
        if plan.casts is not None:
            arrays = [a if c is None else a.astype(c) for a, c in zip(arrays, plan.casts)]
        session = plan.session
        try:
            binding = session.io_binding()
            for name, value in zip(self._names, arrays):
                binding.bind_cpu_input(name, np.ascontiguousarray(value))
            ort_value = onnxruntime_module().OrtValue.ortvalue_from_numpy
            for i, name in enumerate(self._outputs):
                dest = into.get(i)
                if dest is None:
                    binding.bind_output(name, "cpu")
                else:
                    binding.bind_ortvalue_output(name, ort_value(dest))
            session.run_with_iobinding(binding)
            got = binding.get_outputs()
            return [into[i] if i in into else got[i].numpy() for i in range(len(self._outputs))]
        except Exception as err:
            raise self._run_error(err, arrays) from err

    def run_device(self, inputs: Mapping[str, Any], keep: Sequence[int] = ()) -> list[Any]:
        """``run`` through I/O binding, where an input may be a :class:`DeviceArray` (bound
        as it is, no copy) and the outputs at the indices in ``keep`` stay on the device as
        DeviceArrays; the others come back as numpy arrays. A DeviceArray input must have the
        model's dtype (no cast is made on the device)."""
        arrays = self._arrays(inputs)
        plan = self._plan(arrays)
        if plan.casts is not None:
            for name, a, c in zip(self._names, arrays, plan.casts):
                if c is not None and isinstance(a, DeviceArray):
                    raise DTypeError(f"{self._subject}: input {name!r} is a {a.dtype} "
                                     f"DeviceArray; the model takes {c}")
            arrays = [a if c is None else a.astype(c) for a, c in zip(arrays, plan.casts)]
        try:
            return self._run_bound(plan.session, dict(zip(self._names, arrays)), keep)
        except Exception as err:
            raise self._run_error(err, arrays) from err

    def session_for(self, inputs: Mapping[str, Any] | Sequence[Any] | np.ndarray) -> Any:
        """The ``onnxruntime.InferenceSession`` that ``run(inputs)`` would use."""
        return self._plan(self._arrays(inputs)).session

    def warmup(self, shapes: Mapping[str, Sequence[int]] | None = None) -> None:
        """Run once on zeros, so the session exists and onnxruntime has planned its memory.

        Dynamic dimensions default to 1; ``shapes`` gives full shapes per input name.
        """
        shapes = dict(shapes or {})
        unknown = sorted(set(shapes) - set(self._names))
        if unknown:
            raise self._name_error(unknown[0])
        zeros = []
        for spec in self._inputs:
            shape = shapes.get(spec.name)
            if shape is None and spec.shape is None:
                raise ShapeError(f"{self._subject}: input {spec.name!r} has no shape in the "
                                 f"model; pass warmup(shapes={{{spec.name!r}: (...)}})")
            if shape is None:
                shape = [d if isinstance(d, int) else 1 for d in spec.shape or ()]
            zeros.append(np.zeros(tuple(shape), spec.dtype))
        self.run(zeros)

    def _arrays(self, inputs: Any) -> list[np.ndarray]:
        names = self._names
        if type(inputs) is dict or isinstance(inputs, Mapping):
            try:
                values = [inputs[n] for n in names]
            except KeyError as err:
                raise GluonportError(f"{self._subject}: input {err.args[0]!r} is missing; the "
                                     f"model's inputs are {list(names)}") from None
            if len(inputs) != len(names):
                raise self._name_error(next(k for k in inputs if k not in names))
        elif isinstance(inputs, np.ndarray) and len(names) == 1:
            values = [inputs]
        elif isinstance(inputs, (list, tuple)):
            if len(inputs) != len(names):
                raise GluonportError(f"{self._subject}: expects {len(names)} inputs "
                                     f"{list(names)}, got {len(inputs)}")
            values = list(inputs)
        else:
            raise GluonportError(f"{self._subject}: inputs must be a dict name -> array or a "
                                 f"list in the order {list(names)}, got {type(inputs).__name__}")
        return [v if type(v) is np.ndarray or type(v) is DeviceArray else np.asarray(v)
                for v in values]

    def _name_error(self, name: Any) -> GluonportError:
        hint = " (it is a weight of the model, not an input)" if name in \
            self._initializer_names else ""
        return GluonportError(f"{self._subject}: unknown input name {name!r}{hint}; the model's "
                              f"inputs are {list(self._names)}")

    def _plan(self, arrays: list[np.ndarray]) -> _Plan:
        """The plan for this (dtype, shape) signature; validates and builds on first sight."""
        key = tuple([(a.dtype, a.shape) for a in arrays])
        plan = self._plans.get(key)
        return plan if plan is not None else self._make_plan(key, arrays)

    def _make_plan(self, key: tuple, arrays: list[np.ndarray]) -> _Plan:
        for spec, a in zip(self._inputs, arrays):
            spec.check_shape(a.shape, self._subject)
        if self._sizes_skeleton is not None:
            from ..onnx._sizes import check_onnx_input_shapes

            check_onnx_input_shapes(self._sizes_skeleton, self._subject,
                                    {n: a.shape for n, a in zip(self._names, arrays)})
        casts = tuple(self._cast_to(spec, a.dtype) for spec, a in zip(self._inputs, arrays))
        shapes = tuple(a.shape for a in arrays) if self.options.static_shape else None
        session = self._session((self._model_dtypes, shapes))
        plan = _Plan(session, casts if any(c is not None for c in casts) else None)
        with self._lock:
            if len(self._plans) >= _MAX_PLANS:  # many distinct dynamic shapes: start over
                self._plans.clear()
            return self._plans.setdefault(key, plan)

    def _cast_to(self, spec: _Input, got: np.dtype) -> np.dtype | None:
        want = spec.dtype
        if got == want:
            return None
        if np.can_cast(got, want, "safe"):
            return want
        if got.kind == "f" and want.kind == "f":
            if spec.name not in self._warned:
                self._warned.add(spec.name)
                warnings.warn(f"{self._subject}: input {spec.name!r} is {got}, the model takes "
                              f"{want}; casting (pass {want} arrays to avoid the copy)",
                              UserWarning, stacklevel=5)
            return want
        raise DTypeError(f"{self._subject}: input {spec.name!r} must be {want}, got {got}, which "
                         f"does not cast safely; convert it with x.astype(np.{want})")

    # -- sessions -----------------------------------------------------------------------------

    def _session(self, key: tuple) -> Any:
        """The session for (dtypes, shapes or None), built once under the lock."""
        session = self._sessions.get(key)
        if session is None:
            with self._lock:
                session = self._sessions.get(key)
                if session is None:
                    session = self._build_session(key[1])
                    self._sessions[key] = session
        return session

    def _build_session(self, shapes: tuple[tuple[int, ...], ...] | None) -> Any:
        from .._core.onnxfile import read_model

        source, overrides = self._source, {}
        if isinstance(source, str):  # checked again: the file may have changed since __init__
            read_model(source, self._subject)
        if shapes is not None:
            overrides, pin_all = self._dim_overrides(shapes)
            if pin_all:
                source = self._pinned_copy(shapes)
        try:
            session = inference_session(
                source, sess_options=self.options.session_options(overrides),
                providers=self._providers, enable_fallback=0)
        except Exception as err:
            raise self._load_error(err) from err
        check_session_providers(self.ctx, self._providers, session)
        session.disable_fallback()  # an EPFail in run must not be retried on the CPU
        return session

    def _dim_overrides(self, shapes: tuple[tuple[int, ...], ...]) -> tuple[dict[str, int], bool]:
        """Values for the model's named dims, and whether some dynamic dim has no name."""
        named: dict[str, int] = {}
        unnamed = False
        for spec, shape in zip(self._inputs, shapes):
            unnamed = unnamed or spec.shape is None
            for axis, (dim, size) in enumerate(zip(spec.shape or (), shape)):
                if isinstance(dim, str) and named.setdefault(dim, size) != size:
                    raise ShapeError(f"{self._subject}: dimension {dim!r} is {named[dim]} in an "
                                     f"earlier input but {size} in {spec.name!r} axis {axis}; "
                                     "inputs sharing a dimension name must agree")
                unnamed = unnamed or dim is None
        return named, unnamed

    def _pinned_copy(self, shapes: tuple[tuple[int, ...], ...]) -> bytes:
        """The model's bytes with every input's dims set to ``shapes`` (for unnamed dims)."""
        from .._core.onnxfile import external_tensors, load_external_data, read_model

        proto, base_dir, _ = read_model(self._source, self._subject)
        if external_tensors(proto):  # inline the (checked) weights: the copy goes as bytes
            load_external_data(proto, base_dir or "", self._subject)
        by_name = dict(zip(self._names, shapes))
        for vi in proto.graph.input:
            if vi.name in by_name:
                tshape = vi.type.tensor_type.shape
                tshape.ClearField("dim")
                for size in by_name[vi.name]:
                    tshape.dim.add().dim_value = size
        return proto.SerializeToString()

    def _load_error(self, err: Exception) -> GluonportError:
        kind = type(err).__name__
        where = f"{self._subject}: onnxruntime {onnxruntime_module().__version__}"
        if kind == "NotImplemented":
            return UnsupportedOpError(f"{where} has no kernel for part of this model: {err}")
        if kind == "EPFail" or (self.ctx.device_type == "gpu" and "Provider" in str(err)):
            names = provider_names(self._providers)
            return DeviceError(f"{where} could not start {names}: {err}; " + install_fix(names))
        return FormatError(f"{where} cannot load it: {err}")

    def _run_error(self, err: Exception, arrays: list[np.ndarray]) -> GluonportError:
        got = {n: (str(a.dtype), a.shape) for n, a in zip(self._names, arrays)}
        text = f"{self._subject}: onnxruntime failed on inputs {got}: {err}"
        if type(err).__name__ == "EPFail":
            return DeviceError(text)
        return ExecutionError(text)

    def _run_bound(self, session: Any, feed: dict[str, Any],
                   keep: Sequence[int] | None = None) -> list[Any]:
        """Run through I/O binding: inputs read from host memory (a DeviceArray where it is),
        outputs left on the device until one copy back (no staging through an extra host
        buffer per output), except those at ``keep``, which stay there as DeviceArrays."""
        binding = session.io_binding()
        for name, value in feed.items():
            if type(value) is DeviceArray:
                binding.bind_ortvalue_input(name, value.value)
            else:
                binding.bind_cpu_input(name, np.ascontiguousarray(value))
        device, device_id = self._out_device
        for name in self._outputs:
            binding.bind_output(name, device, device_id)
        session.run_with_iobinding(binding)
        if not keep:
            return binding.copy_outputs_to_cpu()
        kept = set(keep)
        return [DeviceArray(v, _value_dtype(v), tuple(v.shape())) if i in kept else v.numpy()
                for i, v in enumerate(binding.get_outputs())]

    def __repr__(self) -> str:
        return (f"OrtRunner({self._subject}, ctx={self.ctx}, inputs={self.input_shapes}, "
                f"sessions={len(self._sessions)})")
