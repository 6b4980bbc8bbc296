"""The two graphs of a hybridized block's training step, and where they run.

A recorded call of a cached graph (``autograd.record()``) runs the forward graph of
:func:`gluonport.symbol._backward.build_backward` -- the outputs plus every value the backward
graph needs -- and puts one node on the autograd tape whose backward runs the backward graph.
Both are ordinary graphs, so they run where inference runs:

* on onnxruntime when the block's backend is onnxruntime (or automatic and every op of both
  graphs exports): plain ONNX, so the CUDA execution provider trains on a GPU without
  ``onnxruntime-training``. A training-mode forward first writes its BatchNorm and Dropout
  nodes out with ops that export (``symbol/_expand.py``: batch moments, a uniform draw); the
  new moving statistics are extra outputs of the forward graph, written into the auxiliary
  arrays when the backward pass runs, as MXNet's backward kernel writes them. Models are
  exported per input shape (``static_shape``); parameters are inputs, so an update by the
  optimizer needs no new export. On the CPU each exported model is rewritten where
  onnxruntime would spend time on layout: graph outputs made by a reshaping node come back
  unreshaped (:func:`_return_unreshaped`), and with more than one intra-op thread the
  transposes that keep axis 0 run as ``Einsum`` (:func:`_batched_transposes_as_einsum`).
  There the backward model also reads, as extra outputs of the forward model, the values it
  would compute again (:mod:`._reuse`: a convolution's im2col columns and weight rows,
  BatchNorm's centred data): resnet18_v1's steps 4% faster at batch 32 and at batch 1;
* on the numpy executor otherwise, and where onnxruntime, chosen automatically, cannot make a
  session for either graph (an older onnxruntime without a kernel for some node): the first
  call of an input signature makes both sessions, and a failure warns and moves the block to
  the numpy executor.

On a GPU (``gpu(i)``) the two graphs run through :meth:`OrtRunner.run_device`: the inputs both
graphs read (mostly the parameters) are copied to the device once, for the forward graph, and
the backward graph reads those copies; the saved values stay on the device between the two.
What comes back to the host is what the host needs: the outputs, the gradients and the new
moving statistics.
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import os
import threading
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._core import heap
from ..context import Context
from ..errors import GluonportError, UnsupportedOpError
from ..symbol import Symbol
from ..symbol._backward import BackwardGraph, build_backward
from ..symbol._expand import expand_for_training
from ..symbol._graph import topo_order
from ..symbol.executor import GraphPlan
from ._reuse import RESHAPING

__all__ = ["TrainGraphs"]

#: tests: run the onnxruntime training graphs of a cpu() block as a gpu(i) block's run (inputs
#: copied once and kept, saved values held by onnxruntime), so that path is exercised in CI
_DEVICE_ON_CPU = False


class _Numpy:
    def __init__(self, symbol: Any):
        self.plan = GraphPlan(symbol, fuse=False)
        self.names = set(self.plan.var_slots)
        heap.keep_step_memory()  # a training step's memory is freed and taken again each step

    def __call__(self, feed: Mapping[str, np.ndarray], training: bool,
                 monitor: Any = None, into: Mapping[int, np.ndarray] | None = None,
                 extras: dict[str, np.ndarray] | None = None) -> list[np.ndarray]:
        """The graph's outputs (``into`` and ``extras`` are ignored: the caller copies, and
        the numpy executor's backward graph reads no forward value but the saved ones)."""
        return self.plan.run({k: v for k, v in feed.items() if k in self.names},
                             is_train=training, monitor=monitor)


def _train_options() -> Any:
    """Session options of the training graphs: static shapes, and intra-op threads that sleep
    instead of spinning once a run ends. A training step alternates onnxruntime runs with
    Python and numpy work (the tape, the loss, the optimizer); spinning pool threads took the
    cores that work needed (an MLP step on a loaded 2-core machine: 44-58 ms spinning, 11-18 ms
    not; bench_train.py). The pool has ``OMP_NUM_THREADS`` threads when that is set -- MXNet's
    knob for its CPU operators, which numpy's OpenBLAS also reads -- else onnxruntime's
    default (one per physical core)."""
    from ..runtime.ort import RuntimeOptions

    threads = os.environ.get("OMP_NUM_THREADS", "").strip()

    class _TrainOptions(RuntimeOptions):
        def session_options(self, dim_overrides: Mapping[str, int] | None = None) -> Any:
            so = super().session_options(dim_overrides)
            so.add_session_config_entry("session.intra_op.allow_spinning", "0")
            so.add_session_config_entry("session.inter_op.allow_spinning", "0")
            return so

    return _TrainOptions(static_shape=True,
                         intra_op_num_threads=int(threads) if threads.isdigit() else None)


@dataclasses.dataclass
class _Built:
    """One input signature's model on onnxruntime (:class:`_Ort`)."""

    runner: Any
    #: per output, the shape it is given back with (None: as onnxruntime makes it)
    reshapes: list[tuple[int, ...] | None]
    #: the model the runner runs (after the rewrites of :meth:`_Ort._build`)
    model: Any
    #: a forward model: values a backward model reads (:mod:`._reuse`), by the backward
    #: input names they feed, and the outputs that give them (after the graph's own, or one
    #: of those)
    extra_out: list[str] = dataclasses.field(default_factory=list)
    extra_at: list[int] = dataclasses.field(default_factory=list)
    #: a backward model: the forward values it reads, and the model that computes them
    #: itself (for a forward run made before the two models were paired)
    extra_in: list[str] = dataclasses.field(default_factory=list)
    plain: tuple[Any, list[tuple[int, ...] | None]] | None = None


class _Ort:
    """A training graph on onnxruntime, one model per input signature (static shapes).

    A graph output that a reshaping node (``Reshape``, ``Flatten``, ``Squeeze``,
    ``Unsqueeze``) makes from an intermediate tensor is returned as that tensor and reshaped
    here (a numpy view): onnxruntime copies such an output into a fresh buffer (the weight
    gradients of GEMM-lowered convolutions, 2.4M values for a 512x512x3x3 layer, ~2 ms).

    A backward graph's model given a forward graph to read from (``pair``: that graph's
    :class:`_Ort` and a function naming the forward tensor behind each backward input) takes
    the values both would compute from it instead (:func:`._reuse.reuse_forward_values`): the
    forward model of the same signature is remade with them as extra outputs."""

    def __init__(self, symbol: Any, ctx: Context, on_device: bool = False):
        self.symbol = symbol
        self.ctx = ctx
        #: run through :meth:`OrtRunner.run_device` (inputs may be DeviceArrays, ``keep``
        #: outputs stay on the device); a gpu context's graphs do
        self.on_device = on_device
        self.names = symbol.list_inputs()
        self._runners: dict[tuple, _Built] = {}
        self._raw: dict[tuple, list[tuple[np.dtype, tuple[int, ...]]]] = {}
        self._lock = threading.Lock()  # one build per signature when threads share the block
        self.pair: tuple[_Ort, Any] | None = None

    def __call__(self, feed: Mapping[str, Any], training: bool,
                 monitor: Any = None, into: Mapping[int, np.ndarray] | None = None,
                 keep: Sequence[int] = (), extras: dict[str, Any] | None = None) -> list[Any]:
        """The graph's outputs; output ``i`` is written straight into ``into[i]`` where that
        array suits (the output's shape and dtype, C-contiguous, writeable, no memory shared
        with an input), which the list then holds; else it is a fresh array. On the device
        (``on_device``) ``into`` is not used, ``feed`` may hold DeviceArrays and the outputs in
        ``keep`` are DeviceArrays. A forward model's values for a paired backward model go
        into ``extras`` (by the backward input names), not into the list."""
        built, arrays, key = self._runner(feed)
        runner, shapes = built.runner, built.reshapes
        inputs = {n: a for n, a in zip(self.names, arrays) if n in runner.input_names}
        if built.extra_in:
            if all(n in feed for n in built.extra_in):
                inputs.update((n, feed[n]) for n in built.extra_in)
            else:  # a forward run made before the pairing: a model that computes them all
                assert built.plain is not None
                runner, shapes = self._runner_of(built.plain[0]), built.plain[1]
                inputs = {n: a for n, a in zip(self.names, arrays) if n in runner.input_names}
                if shapes != built.reshapes:  # its outputs come back otherwise
                    key = key + ("plain",)
        if self.on_device:
            return runner.run_device(inputs, keep)
        raw = self._raw.get(key)
        bound = _bindable(into, raw, shapes, arrays) if into and raw is not None else {}
        outs = runner.run_into(inputs, bound)
        if raw is None:  # what each output is as onnxruntime makes it, for binding later
            self._raw[key] = [(o.dtype, o.shape) for o in outs]
        if built.extra_out:
            if extras is not None:
                extras.update((n, outs[i]) for n, i in zip(built.extra_out, built.extra_at))
            outs = outs[:len(shapes)]
        return [into[i] if i in bound else o if s is None else o.reshape(s)  # type: ignore
                for i, (o, s) in enumerate(zip(outs, shapes))]

    def prepare(self, feed: Mapping[str, Any]) -> None:
        """Make the onnxruntime session ``feed``'s signature runs on, without running it
        (raises what making it raises: :class:`UnsupportedOpError` where onnxruntime has no
        kernel for a node)."""
        built, arrays, _ = self._runner(feed)
        inputs = {n: a for n, a in zip(self.names, arrays) if n in built.runner.input_names}
        for vi in built.model.graph.input:  # values from the forward model: typed stand-ins
            if vi.name in built.extra_in:
                t = vi.type.tensor_type
                inputs[vi.name] = np.zeros([d.dim_value for d in t.shape.dim],
                                           _np_dtype(t.elem_type))
        built.runner.session_for(inputs)

    def built_for(self, feed: Mapping[str, Any]) -> tuple[tuple, _Built | None]:
        """``(signature, its model or None)`` of ``feed`` (which may hold more names)."""
        from ..runtime.ort import DeviceArray

        key = tuple((a.dtype.str, a.shape) for a in (
            feed[n] if type(feed[n]) is DeviceArray else np.asarray(feed[n])
            for n in self.names))
        return key, self._runners.get(key)

    def _runner(self, feed: Mapping[str, Any]) -> tuple[_Built, list, tuple]:
        """``(model, input arrays, signature)`` for ``feed``."""
        from ..runtime.ort import DeviceArray

        arrays = [feed[n] if type(feed[n]) is DeviceArray else np.ascontiguousarray(feed[n])
                  for n in self.names]
        key = tuple((a.dtype.str, a.shape) for a in arrays)
        got = self._runners.get(key)
        if got is None:
            with self._lock:
                got = self._runners.get(key)
                if got is None:
                    got = self._runners[key] = self._build(arrays, feed)
        return got, arrays, key

    def _runner_of(self, model: Any) -> Any:
        from ..runtime.ort import OrtRunner

        return OrtRunner(model, self.ctx, _train_options())

    def _build(self, arrays: Sequence[np.ndarray], feed: Mapping[str, Any]) -> _Built:
        from ..onnx import export_symbol
        from ..symbol._infer import check_budget

        shapes = {n: a.shape for n, a in zip(self.names, arrays)}
        check_budget(topo_order(n for n, _ in self.symbol._outputs), shapes)
        model = export_symbol(self.symbol, {}, shapes,
                              {n: a.dtype for n, a in zip(self.names, arrays)})
        extra_in: list[str] = []
        plain = None
        if self.pair is not None and not self.on_device:
            before = _copy_model(model)
            extra_in = self._read_forward_values(model, feed)
            if extra_in:
                plain = (before, _rewrite_for_cpu(before, self.on_device))
        reshapes = _rewrite_for_cpu(model, self.on_device)
        return _Built(self._runner_of(model), reshapes, model, extra_in=extra_in, plain=plain)

    def _read_forward_values(self, model: Any, feed: Mapping[str, Any]) -> list[str]:
        """Pair ``model`` (a backward model, rewritten in place) with the forward model of
        the same signature: the backward input names it now reads from the forward model."""
        from ._reuse import reuse_forward_values

        assert self.pair is not None
        forward, links_of = self.pair
        fkey, fbuilt = forward.built_for(feed)
        if fbuilt is None:
            return []
        trial = _copy_model(model)
        pairs = reuse_forward_values(fbuilt.model, trial, links_of(fbuilt, model))
        if not pairs:
            return []
        names = [b for _, b in pairs]
        if fbuilt.extra_out and fbuilt.extra_out != names:
            return []  # paired already, with another backward signature's values
        if not fbuilt.extra_out:
            forward.add_outputs(fkey, fbuilt, pairs)
        model.CopyFrom(trial)
        return names

    def add_outputs(self, key: tuple, built: _Built, pairs: Sequence[tuple[str, str]]) -> None:
        """Remake signature ``key``'s model with the forward tensors of ``pairs`` as extra
        outputs (a paired backward model reads them)."""
        from onnx import helper

        model = _copy_model(built.model)
        at = {o.name: i for i, o in enumerate(model.graph.output)}
        for src, _ in pairs:
            if src not in at:
                at[src] = len(model.graph.output)
                model.graph.output.append(helper.make_empty_tensor_value_info(src))
        with self._lock:
            self._runners[key] = _Built(self._runner_of(model), built.reshapes, model,
                                        extra_out=[b for _, b in pairs],
                                        extra_at=[at[src] for src, _ in pairs])


def _copy_model(model: Any) -> Any:
    copy = type(model)()
    copy.CopyFrom(model)
    return copy


def _np_dtype(elem_type: int) -> np.dtype:
    from onnx import helper

    return np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))


def _rewrite_for_cpu(model: Any, on_device: bool) -> list[tuple[int, ...] | None]:
    """The rewrites of an exported training model (in place); returns per output the shape to
    give it back with. On the device a kept output must have the shape the next graph takes
    (a copy there is cheap); on the host the reshape is a numpy view instead of
    onnxruntime's copy."""
    if on_device:
        return [None] * len(model.graph.output)
    from onnx import shape_inference

    reshapes = _return_unreshaped(model)
    typed = shape_inference.infer_shapes(model).graph
    if _train_options().intra_op_num_threads != 1:
        _batched_transposes_as_einsum(model, typed)
    _single_values_at_full_rank(model, typed)
    return reshapes


def _bindable(into: Mapping[int, np.ndarray], raw: Sequence[tuple[np.dtype, tuple[int, ...]]],
              shapes: Sequence[tuple[int, ...] | None], inputs: Sequence[np.ndarray]
              ) -> dict[int, np.ndarray]:
    """The ``into`` arrays onnxruntime can write outputs into, as views of the output's own
    shape (``raw``: dtype and shape of each output as onnxruntime makes it; ``shapes``: the
    shape it is given back with)."""
    spans = sorted((a.ctypes.data, a.ctypes.data + a.nbytes) for a in inputs if a.nbytes)
    starts = [s for s, _ in spans]
    ends = list(itertools.accumulate((e for _, e in spans), max))
    bound = {}
    for i, dest in into.items():
        dtype, shape = raw[i]
        want = shapes[i] if shapes[i] is not None else shape
        if (dest.dtype != dtype or dest.shape != tuple(want) or not dest.flags.c_contiguous
                or not dest.flags.writeable or not dest.nbytes):
            continue
        lo = dest.ctypes.data
        k = bisect.bisect_left(starts, lo + dest.nbytes)  # inputs starting before dest's end
        if k and ends[k - 1] > lo:  # one of them ends after dest's start: they overlap
            continue
        bound[i] = dest.reshape(shape)
    return bound


def _return_unreshaped(model: Any) -> list[tuple[int, ...] | None]:
    """Rewrite ``model`` so that each graph output made by a reshaping node from a tensor some
    node computes is that tensor (the reshaping node goes when nothing else reads it); returns,
    per output, the shape to give it back (None: unchanged)."""
    from onnx import helper

    graph = model.graph
    producer = {o: n for n in graph.node for o in n.output}
    readers: dict[str, int] = {}
    for n in graph.node:
        for i in n.input:
            readers[i] = readers.get(i, 0) + 1
    outputs = {o.name for o in graph.output}
    computed = set(producer)
    shapes: list[tuple[int, ...] | None] = []
    dropped = []
    for out in graph.output:
        node = producer.get(out.name)
        dims = out.type.tensor_type.shape.dim
        static = len(dims) > 0 and all(d.HasField("dim_value") for d in dims)
        src = node.input[0] if node is not None and node.op_type in RESHAPING else None
        if (src is None or not static or src not in computed or src in outputs
                or readers.get(out.name, 0)):
            shapes.append(None)
            continue
        shapes.append(tuple(int(d.dim_value) for d in dims))
        outputs.add(src)
        elem = out.type.tensor_type.elem_type
        out.CopyFrom(helper.make_tensor_value_info(src, elem, None))
        readers[src] -= 1
        dropped.append(node)
    inits = {t.name: t for t in graph.initializer}
    for node in dropped:
        graph.node.remove(node)
        for name in node.input[1:]:  # a shape operand nothing else reads
            readers[name] -= 1
            if not readers[name] and name in inits:
                graph.initializer.remove(inits.pop(name))
    return shapes


def _batched_transposes_as_einsum(model: Any, typed: Any) -> None:
    """Rewrite, in ``model``, each ``Transpose`` that keeps axis 0 in place as the same
    permutation written as an ``Einsum`` (an exact copy either way), unless a ``MatMul`` or
    ``Gemm`` reads it (onnxruntime folds such a transpose into the product); float32 and
    float64 tensors only (onnxruntime's ``Einsum`` types), as ONNX shape inference types them
    in ``typed`` (the model's shape-inferred graph).

    onnxruntime's CPU ``Transpose`` runs such a permutation as one small matrix transpose per
    index of the leading axes, each split over the intra-op pool, and with more than one
    thread that costs more than it saves: on a 2-vCPU VM (onnxruntime 1.32) resnet18's
    transposes of this kind took twice as long at two threads as at one
    (``benchmarks/profile_train.py``), where its ``Einsum`` kernel copies each in one pass.
    Whole training steps, two threads, the two graphs in one process taking turns: resnet18_v1
    b32 2.3% faster (24 of 30 turns), the LSTM language model 2.3% (16 of 24), LeNet-BN
    unchanged. Sessions with one intra-op thread keep ``Transpose``."""
    from onnx import TensorProto, helper

    graph = model.graph
    floats = {TensorProto.FLOAT, TensorProto.DOUBLE}  # onnxruntime's Einsum types we use
    float_names = {v.name for v in [*typed.value_info, *typed.input]
                   if v.type.tensor_type.elem_type in floats}
    readers: dict[str, set[str]] = {}
    for node in graph.node:
        for name in node.input:
            readers.setdefault(name, set()).add(node.op_type)
    for node in graph.node:
        if node.op_type != "Transpose":
            continue
        perm = next((list(a.ints) for a in node.attribute if a.name == "perm"), None)
        if (not perm or perm[0] != 0 or node.input[0] not in float_names
                or readers.get(node.output[0], set()) & {"MatMul", "Gemm"}):
            continue
        axes = "abcdefghijklmnopqrstuvwxyz"[:len(perm)]
        node.CopyFrom(helper.make_node(
            "Einsum", list(node.input), list(node.output), name=node.name,
            equation=f"{axes}->{''.join(axes[i] for i in perm)}"))


#: ONNX's element-wise operators that broadcast their inputs against each other
_BROADCASTING = frozenset({
    "Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean", "Equal", "Greater",
    "GreaterOrEqual", "Less", "LessOrEqual", "And", "Or", "Xor", "Where"})


def _typed_shapes(typed: Any) -> dict[str, list[int | None]]:
    """{value name: its dims (None where not static)} of a shape-inferred graph."""
    out = {}
    for v in [*typed.value_info, *typed.input, *typed.output]:
        t = v.type.tensor_type
        if t.HasField("shape"):
            out[v.name] = [int(d.dim_value) if d.HasField("dim_value") else None
                           for d in t.shape.dim]
    return out


def _single_values_at_full_rank(model: Any, typed: Any) -> int:
    """Rewrite, in ``model``, each broadcasting element-wise node whose output ends in an axis
    of size 1 and that reads a single value of a lower rank (a scalar, ``[1]``, ``[1, 1]``) so
    that it reads that value with the output's rank (``[1, 1, 1, 1]``): the initializer is
    reshaped, a computed value goes through a ``Reshape``. Returns how many inputs changed.

    onnxruntime's CPU kernels (1.19 to 1.32) broadcast a lower-rank single value against a
    tensor whose last axis has size 1 one element at a time: ``Mul`` of a (32, 512, 1, 1)
    tensor by a scalar took 300-380 us at one or two threads, and 10 us with the scalar as
    (1, 1, 1, 1). resnet18_v1's last stage (1x1 images) has such nodes in its training graphs
    (the ReLU gradient's ``Greater``, BatchNorm's scalings)."""
    from onnx import NodeProto, helper, numpy_helper

    graph = model.graph
    shapes = _typed_shapes(typed)
    inits = {t.name: t for t in graph.initializer}
    shapes.update((name, list(t.dims)) for name, t in inits.items())
    used = {*shapes, *(o for n in graph.node for o in n.output), *(i.name for i in graph.input)}

    def fresh(base: str) -> str:
        name = base
        while name in used:
            name += "_"
        used.add(name)
        return name

    made: dict[tuple[str, int], str] = {}
    ones: dict[int, str] = {}
    nodes = []
    changed = 0
    for node in graph.node:
        out = shapes.get(node.output[0]) if node.op_type in _BROADCASTING else None
        if out and out[-1] == 1 and len(node.input) > 1:
            rank = len(out)
            for k, name in enumerate(node.input):
                dims = shapes.get(name)
                if dims is None or len(dims) >= rank or any(d != 1 for d in dims):
                    continue
                key = (name, rank)
                if key not in made:
                    made[key] = fresh(f"{name}__rank{rank}")
                    if name in inits:
                        value = numpy_helper.to_array(inits[name]).reshape((1,) * rank)
                        graph.initializer.append(numpy_helper.from_array(value, made[key]))
                    else:
                        if rank not in ones:
                            ones[rank] = fresh(f"ones_rank{rank}")
                            graph.initializer.append(numpy_helper.from_array(
                                np.ones(rank, np.int64), ones[rank]))
                        nodes.append(helper.make_node("Reshape", [name, ones[rank]],
                                                      [made[key]], name=made[key]))
                node.input[k] = made[key]
                changed += 1
        nodes.append(node)
    if changed:
        kept = [NodeProto() for _ in nodes]
        for copy, node in zip(kept, nodes):
            copy.CopyFrom(node)
        del graph.node[:]
        graph.node.extend(kept)
    return changed


def _has_training_behaviour(symbol: Any) -> bool:
    return any(n.op is not None and n.op.train_compute is not None
               for n in topo_order(m for m, _ in symbol._outputs))


class TrainGraphs:
    """Forward and backward graphs of ``symbol`` for the gradients of inputs ``wrt``.

    ``backend``: ``"numpy"``, ``"onnxruntime"`` or ``None`` (onnxruntime when both graphs
    export). Raises :class:`GluonportError` when an op on the way has no gradient rule.
    """

    def __init__(self, symbol: Any, wrt: Sequence[str], backend: str | None, ctx: Context,
                 training: bool):
        self.bg: BackwardGraph = build_backward(symbol, wrt)
        self._numpy_bg = self.bg  # the graphs of the numpy executor, for a fallback
        self.updates: list[str] = []
        self.backend = "numpy"
        if backend != "numpy":
            self._try_onnxruntime(symbol, wrt, training)
        #: onnxruntime chosen automatically on the CPU: a signature whose sessions onnxruntime
        #: cannot make (a kernel it lacks) moves the block to the numpy executor
        self._automatic = backend is None and ctx.device_type != "gpu"
        if self.backend == "numpy" and ctx.device_type == "gpu":
            raise GluonportError(
                f"this block cannot train on {ctx}: its training graphs run on the numpy "
                "executor (CPU-only) because an op has no ONNX converter or a training-mode "
                "form built from exportable ops; use cpu()")
        self.ctx = ctx
        on_device = self.backend == "onnxruntime" and (ctx.device_type == "gpu"
                                                        or _DEVICE_ON_CPU)
        make = (lambda s: _Ort(s, ctx, on_device)) if self.backend == "onnxruntime" \
            else _Numpy
        self._fwd = make(self.bg.forward)
        self._bwd = None if self.bg.backward is None else make(self.bg.backward)
        if isinstance(self._bwd, _Ort) and not on_device:
            self._bwd.pair = (self._fwd, self._links)
        # On a device the inputs both graphs read (the parameters, mostly) are copied there
        # once for the forward graph and kept for the backward graph, and the saved values
        # stay there between them: only the outputs, the gradients and the new moving
        # statistics come back to the host.
        self._shared: list[str] = []
        if on_device and self._bwd is not None:
            later = set(self._bwd.names) - set(self.updates) - set(self.bg.ograds)
            self._shared = [n for n in self._fwd.names if n in later]
        self.on_device = on_device

    def _links(self, forward: _Built, backward: Any) -> dict[str, str]:
        """Backward input name -> the tensor of the ``forward`` model with the same value: a
        saved value's forward output (unless it comes back reshaped), and the inputs both
        graphs are fed, by name (not the auxiliary states the backward pass writes first)."""
        n = self.bg.n_outputs
        outputs = forward.model.graph.output
        at = {name: n + i for i, name in enumerate(self.bg.saved)}
        fed = set(self._fwd.names) - set(self.updates)
        links = {}
        for vi in backward.graph.input:
            i = at.get(vi.name)
            if i is not None and i < len(forward.reshapes) and forward.reshapes[i] is None:
                links[vi.name] = outputs[i].name
            elif i is None and vi.name in fed:
                links[vi.name] = vi.name
        return links

    def _try_onnxruntime(self, symbol: Any, wrt: Sequence[str], training: bool) -> None:
        from ..runtime.graph import graph_exports

        bg, updates = self.bg, []
        if training and _has_training_behaviour(symbol):
            try:
                expanded, updates = expand_for_training(symbol)
            except GluonportError:  # a training-mode form these params do not have
                return
            bg = build_backward(expanded, wrt)
            bg.forward = Symbol(bg.forward._outputs + [e for _, e in updates])
        if graph_exports(bg.forward) and (bg.backward is None or graph_exports(bg.backward)):
            self.bg, self.updates, self.backend = bg, [n for n, _ in updates], "onnxruntime"

    def forward(self, feed: Mapping[str, np.ndarray], training: bool, monitor: Any = None
                ) -> tuple[list[np.ndarray], dict[str, np.ndarray]]:
        """(outputs, saved values); new auxiliary values are saved under the aux names.
        ``monitor`` (an op hook; numpy backend) sees the forward graph's nodes.

        With onnxruntime chosen automatically, the first call of each input signature also
        makes the backward graph's session; where onnxruntime cannot make either session (it
        has no kernel for a node: an older onnxruntime, float64 products), the block warns
        and trains on the numpy executor from then on, this step included."""
        if not (self._automatic and self.backend == "onnxruntime"):
            return self._forward(feed, training, monitor)
        signatures = len(self._fwd._runners)
        try:
            outs, saved = self._forward(feed, training, monitor)
            if self._bwd is not None and len(self._fwd._runners) > signatures:  # a new one
                self._bwd.prepare(self._backward_feed(feed, saved,
                                                      [np.zeros_like(o) for o in outs]))
        except UnsupportedOpError as exc:
            self._use_numpy(exc)
            return self._forward(feed, training, monitor)
        return outs, saved

    def _use_numpy(self, why: Exception) -> None:
        warnings.warn(f"{why}; this block trains on the numpy executor instead (slower): "
                      "upgrade onnxruntime, or hybridize(backend='numpy') to choose it",
                      stacklevel=4)
        self.bg, self.updates, self.backend = self._numpy_bg, [], "numpy"
        self.on_device, self._shared = False, []
        self._fwd = _Numpy(self.bg.forward)
        self._bwd = None if self.bg.backward is None else _Numpy(self.bg.backward)

    def _forward(self, feed: Mapping[str, np.ndarray], training: bool, monitor: Any
                 ) -> tuple[list[np.ndarray], dict[str, np.ndarray]]:
        n, k = self.bg.n_outputs, len(self.bg.saved)
        if self.on_device:
            from ..runtime.ort import to_device

            kept = {name: to_device(feed[name], self.ctx) for name in self._shared}
            values = self._fwd({**feed, **kept}, training, keep=range(n, n + k))
            saved = {**kept, **dict(zip(self.bg.saved, values[n:n + k]))}
        else:
            extras: dict[str, np.ndarray] = {}
            values = self._fwd(feed, training, monitor, extras=extras)
            saved = dict(zip(self.bg.saved, values[n:n + k]))
            saved.update(extras)
        saved.update(("_aux:" + a, v) for a, v in zip(self.updates, values[n + k:]))
        return list(values[:n]), saved

    def backward(self, feed: Mapping[str, np.ndarray], saved: Mapping[str, np.ndarray],
                 ograds: Sequence[np.ndarray],
                 into: Sequence[np.ndarray | None] | None = None) -> list[np.ndarray | None]:
        """The gradients of ``wrt`` (``None`` where nothing flows). ``into[i]``, where given,
        is an array the gradient of ``wrt[i]`` may be written into (a gradient buffer): the
        returned list then holds that very array, else a fresh one."""
        for name in self.updates:  # MXNet's backward kernel updates the moving statistics
            np.copyto(feed[name], saved["_aux:" + name], casting="unsafe")
        if self._bwd is None:
            return [None] * len(self.bg.wrt)
        bfeed = self._backward_feed(feed, saved, ograds)
        dests: dict[int, np.ndarray] = {}
        if into is not None:
            slots = itertools.accumulate(self.bg.grad_of, initial=0)
            dests = {k: d for k, d, has in zip(slots, into, self.bg.grad_of)
                     if has and d is not None}
        got = iter(self._bwd(bfeed, True, into=dests))
        return [next(got) if has else None for has in self.bg.grad_of]

    def _backward_feed(self, feed: Mapping[str, Any], saved: Mapping[str, Any],
                       ograds: Sequence[Any]) -> dict[str, Any]:
        bfeed = {**feed, **saved}
        for name in self.bg.ograds:
            bfeed[name] = ograds[int(name.rpartition(":")[2])]
        return bfeed
