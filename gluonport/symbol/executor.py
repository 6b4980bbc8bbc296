"""The numpy reference executor and MXNet 1.x's ``Executor`` API over it.

:class:`GraphPlan` compiles a Symbol once (topological order, parsed params, slot numbers, when
each intermediate can be freed); :meth:`GraphPlan.run` then evaluates it on numpy arrays. The
``Executor`` class wraps a plan with MXNet's ``bind``/``forward``/``outputs`` interface
(``Symbol.bind`` creates one; ``gluonport.executor`` is the public ``mx.executor`` module).

Inference runs without a monitor use a rewritten step list (:mod:`gluonport._fusion`): BatchNorm,
relu, clip and elemwise_add write into an intermediate input nothing reads afterwards, with
bit-identical results; ``GraphPlan(sym, fuse=False)`` turns that off.

Speed: convolutions and dense layers are numpy matmuls, so numpy's BLAS (OpenBLAS) does most of
the work with as many threads as there are cores. On a machine shared with other busy
processes, multithreaded BLAS can slow down several-fold (its threads wait on each other while
descheduled); set ``OPENBLAS_NUM_THREADS=1`` (or a small count) in the environment before
Python starts. gluonport never changes the thread settings itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..context import Context, current_context
from ..errors import GluonportError, GraphError, ShapeError
from ..ndarray.ndarray import NDArray
from ._graph import Node, check_supported, topo_order

__all__ = ["GraphPlan", "Executor"]


class _Step:
    __slots__ = ("node", "op", "params", "in_slots", "out_base", "n_out", "free")

    def __init__(self, node: Node, in_slots: list[int], out_base: int):
        self.node = node
        self.op = node.op
        self.params = node.params
        self.in_slots = in_slots
        self.out_base = out_base
        self.n_out = node.num_outputs()
        self.free: list[int] = []


class GraphPlan:
    """A Symbol compiled for repeated numpy evaluation.

    Raises :class:`~gluonport.errors.UnsupportedOpError` listing every op without a numpy
    compute before anything runs. ``fuse`` (also the attribute ``self.fuse``): inference runs
    compute BatchNorm/relu/clip/elemwise_add in place where that is safe; results are the same
    bit for bit, only allocations and passes are saved.
    """

    def __init__(self, symbol: Any, fuse: bool = True):
        outputs = list(symbol._outputs)
        order = topo_order(n for n, _ in outputs)
        check_supported(order, "run")
        slot_of: dict[tuple[int, int], int] = {}
        self.var_slots: dict[str, int] = {}
        n_slots = 0
        for node in order:
            for i in range(node.num_outputs()):
                slot_of[(id(node), i)] = n_slots
                n_slots += 1
            if node.op is None:
                if node.name in self.var_slots:
                    raise GraphError(f"two different variables are named {node.name!r}")
                self.var_slots[node.name] = slot_of[(id(node), 0)]
        self.steps = [
            _Step(n, [slot_of[(id(s), i)] for s, i in n.inputs], slot_of[(id(n), 0)])
            for n in order if n.op is not None]
        self.out_slots = [slot_of[(id(n), i)] for n, i in outputs]
        self.n_slots = n_slots
        self._plan_frees()
        self._order = order
        # Creation ops (``_zeros`` of an RNN's begin state: shape=(L, 0, H)) whose shape has
        # dims left for graph inference to fill, as MXNet's bind-time infer_shape does.
        self._unsized = [k for k, st in enumerate(self.steps)
                         if not st.in_slots and _shape_unknown(st.params)]
        self._sized: tuple[Any, dict[int, Any]] = (None, {})
        self._checked: Any = None
        #: Inference runs (no monitor) let BatchNorm/relu/clip/elemwise_add overwrite a dead
        #: intermediate input (:mod:`gluonport._fusion`; bit-identical results). False runs
        #: every op on fresh buffers.
        self.fuse = fuse
        self._fused: list[Any] | None = None

    def _plan_frees(self) -> None:
        last_use: dict[int, int] = {}
        for k, step in enumerate(self.steps):
            for s in step.in_slots:
                last_use[s] = k
        keep = set(self.out_slots) | set(self.var_slots.values())
        for slot, k in last_use.items():
            if slot not in keep:
                self.steps[k].free.append(slot)

    def run(self, feed: Mapping[str, np.ndarray], is_train: bool = False,
            monitor: Callable[[Node, list[np.ndarray]], None] | None = None) -> list[np.ndarray]:
        """Evaluate the graph; ``feed`` maps every variable name to a numpy array.

        ``monitor(node, outputs)`` is called after each op (used by op hooks and bisection).
        """
        values: list[Any] = [None] * self.n_slots
        for name, slot in self.var_slots.items():
            try:
                values[slot] = feed[name]
            except KeyError:
                raise GraphError(f"no value for input {name!r}; bind or pass every one of "
                                 f"{sorted(self.var_slots)}") from None
        self._check_budget(feed)
        fast = self.fuse and not is_train and monitor is None and not self._unsized
        steps = self._fused_steps() if fast else self.steps
        sized = self._sized_params(feed) if self._unsized else {}
        for k, step in enumerate(steps):
            args = [values[s] for s in step.in_slots]
            outs = _run_step(step, sized.get(k, step.params) if sized else step.params, args,
                             is_train)
            if len(outs) < step.n_out:
                outs = list(outs) + [None] * (step.n_out - len(outs))
            values[step.out_base:step.out_base + step.n_out] = outs[:step.n_out]
            if monitor is not None:
                monitor(step.node, outs)
            for s in step.free:
                values[s] = None
        return [values[s] for s in self.out_slots]


    def _check_budget(self, feed: Mapping[str, np.ndarray]) -> None:
        """Shape inference for this feed's input shapes (once per signature), so a tensor or
        a graph larger than the size budget (:mod:`gluonport._core.budget`) is refused before
        anything runs. Inference failing for another reason is left to the run to report."""
        sig = tuple((n, np.shape(feed[n])) for n in self.var_slots)
        if sig == self._checked:
            return
        from ._infer import check_budget

        check_budget(self._order, dict(sig))
        self._checked = sig

    def _fused_steps(self) -> list[Any]:
        if self._fused is None:
            from .._fusion import fuse_steps

            keep = set(self.out_slots) | set(self.var_slots.values())
            self._fused = fuse_steps(self.steps, keep)
        return self._fused

    def _sized_params(self, feed: Mapping[str, np.ndarray]) -> dict[int, Any]:
        """Params of the unsized creation steps with the shapes graph inference gives for
        this feed's input shapes (cached per input signature)."""
        sig = tuple((n, np.shape(feed[n])) for n in self.var_slots)
        cached_sig, cached = self._sized
        if sig == cached_sig:
            return cached
        from .._core.attr_fields import Params
        from ._infer import infer_shapes

        shapes = infer_shapes(self._order, dict(sig))
        out: dict[int, Any] = {}
        for k in self._unsized:
            step = self.steps[k]
            shape = shapes.get((id(step.node), 0))
            if shape is not None and all(shape):
                out[k] = Params({**step.params.as_dict(), "shape": tuple(shape)})
        self._sized = (sig, out)
        return out


def _run_step(step: Any, params: Any, args: list[Any], is_train: bool) -> list[Any]:
    """One step's outputs; op failures are re-raised naming the node."""
    try:
        return step.op.run(params, args, is_train)
    except GluonportError as exc:
        raise type(exc)(f"node {step.node.name!r} ({step.op.name}): {exc}") from None
    except (ValueError, IndexError, TypeError) as exc:
        shapes = ", ".join(str(a.shape) for a in args)
        raise ShapeError(f"node {step.node.name!r} ({step.op.name}) failed on inputs "
                         f"of shapes [{shapes}]: {exc}") from exc


def _shape_unknown(params: Any) -> bool:
    shape = params.get("shape") if hasattr(params, "get") else None
    return shape is not None and (len(shape) == 0 or 0 in tuple(shape))


def _as_dict(names: Sequence[str], arrays: Any, what: str) -> dict[str, NDArray]:
    if arrays is None:
        return {}
    if isinstance(arrays, Mapping):
        return dict(arrays)
    arrays = list(arrays)
    if len(arrays) != len(names):
        raise GraphError(f"{what}: {len(arrays)} arrays given for {len(names)} names {names}")
    return dict(zip(names, arrays))


def _nd(x: Any, ctx: Context) -> NDArray:
    if isinstance(x, NDArray):
        return x
    return NDArray(np.asarray(x), ctx)


class Executor:
    """MXNet 1.x's executor: bound argument/aux arrays, ``forward``, ``backward``, ``outputs``.

    ``forward(is_train=False, **kwargs)`` copies the keyword arrays into ``arg_dict`` and
    evaluates the graph with numpy. With gradient arrays bound (``args_grad``, or
    ``simple_bind`` with a ``grad_req`` other than ``'null'``), ``forward(is_train=True)`` keeps
    what the backward graph needs (``symbol/_backward.py``) and ``backward(out_grads)`` writes
    each argument's gradient into ``grad_dict`` by its ``grad_req`` (``'write'``, ``'add'``,
    ``'null'``), as MXNet's executor does. Loss outputs (``SoftmaxOutput`` ...) ignore
    ``out_grads``; other outputs default to a gradient of ones.
    """

    def __init__(self, symbol: Any, ctx: Context | None, args: Any, aux_states: Any = None,
                 grad_req: Any = "write", args_grad: Any = None):
        self._symbol = symbol
        self._ctx = ctx or current_context()
        arg_names = symbol.list_arguments()
        aux_names = symbol.list_auxiliary_states()
        self.arg_dict = {k: _nd(v, self._ctx) for k, v in
                         _as_dict(arg_names, args, "bind args").items()}
        self.aux_dict = {k: _nd(v, self._ctx) for k, v in
                         _as_dict(aux_names, aux_states, "bind aux_states").items()}
        missing = [n for n in arg_names if n not in self.arg_dict]
        missing += [n for n in aux_names if n not in self.aux_dict]
        if missing:
            raise GraphError(f"bind: no array for {missing}; give every argument and "
                             "auxiliary state (list_arguments / list_auxiliary_states)")
        self._plan = GraphPlan(symbol)
        self.outputs: list[NDArray] = []
        self.grad_req = grad_req
        self.grad_dict = {k: _nd(v, self._ctx) for k, v in
                          _as_dict(arg_names, args_grad, "bind args_grad").items()
                          if v is not None}
        reqs = (dict.fromkeys(arg_names, grad_req) if isinstance(grad_req, str)
                else _as_dict(arg_names, grad_req, "bind grad_req"))
        self._reqs = {n: reqs.get(n, "null") if n in self.grad_dict else "null"
                      for n in arg_names}
        for n, r in self._reqs.items():
            if r not in ("write", "add", "null"):
                raise GraphError(f"bind: grad_req for {n!r} must be 'write', 'add' or 'null', "
                                 f"got {r!r}")
        self._train: Any = None
        self._saved: dict[str, np.ndarray] | None = None

    @classmethod
    def simple(cls, symbol: Any, ctx: Context | None, type_dict: Mapping[str, Any],
               shapes: Mapping[str, Any], grad_req: Any = "write") -> Executor:
        arg_s, _, aux_s = symbol.infer_shape(**shapes)
        if arg_s is None:
            raise ShapeError(f"simple_bind: cannot infer all shapes from {dict(shapes)}")
        arg_t, _, aux_t = symbol.infer_type(**{k: v for k, v in type_dict.items()})
        if arg_t is None:
            arg_t = [np.float32] * len(arg_s)
            aux_t = [np.float32] * len(aux_s)
        ctx = ctx or current_context()
        args = [NDArray(np.zeros(s, t), ctx) for s, t in zip(arg_s, arg_t)]
        aux = [NDArray(np.zeros(s, t), ctx) for s, t in zip(aux_s, aux_t)]
        names = symbol.list_arguments()
        reqs = (dict.fromkeys(names, grad_req) if isinstance(grad_req, str)
                else _as_dict(names, grad_req, "simple_bind grad_req"))
        grads = {n: NDArray(np.zeros_like(a._data), ctx) for n, a in zip(names, args)
                 if reqs.get(n, "null") != "null" and a._data.dtype.kind == "f"}
        return cls(symbol, ctx, args, aux, reqs, grads)

    @property
    def arg_arrays(self) -> list[NDArray]:
        return [self.arg_dict[n] for n in self._symbol.list_arguments()]

    @property
    def aux_arrays(self) -> list[NDArray]:
        return [self.aux_dict[n] for n in self._symbol.list_auxiliary_states()]

    @property
    def output_dict(self) -> dict[str, NDArray]:
        return dict(zip(self._symbol.list_outputs(), self.outputs))

    def forward(self, is_train: bool = False, **kwargs: Any) -> list[NDArray]:
        """Run the graph; keyword arrays are copied into the bound arguments first."""
        for k, v in kwargs.items():
            if k not in self.arg_dict:
                raise GraphError(f"forward: unknown argument {k!r}")
            target = self.arg_dict[k]
            src = v._data if isinstance(v, NDArray) else np.asarray(v)
            if src.shape != target.shape:
                self.arg_dict[k] = NDArray(np.array(src, dtype=target._data.dtype), self._ctx)
            else:
                target._data[...] = src
        feed = {k: v._data for k, v in self.arg_dict.items()}
        feed.update({k: v._data for k, v in self.aux_dict.items()})
        wrt = [n for n, r in self._reqs.items() if r != "null"]
        if is_train and wrt:
            bg, fwd, _ = self._train_graphs(wrt)
            values = fwd.run(feed, is_train=True)
            outs = values[:bg.n_outputs]
            self._saved = {**feed, **dict(zip(bg.saved, values[bg.n_outputs:]))}
        else:
            outs = self._plan.run(feed, is_train)
            self._saved = None
        self.outputs = [NDArray(np.asarray(o), self._ctx) for o in outs]
        return self.outputs

    def _train_graphs(self, wrt: list[str]) -> Any:
        if self._train is None:
            from ._backward import build_backward

            bg = build_backward(self._symbol, wrt)
            self._train = (bg, GraphPlan(bg.forward, fuse=False),
                           None if bg.backward is None else GraphPlan(bg.backward, fuse=False))
        return self._train

    @property
    def grad_arrays(self) -> list[NDArray | None]:
        """The gradient arrays in ``list_arguments`` order (``None`` where none is bound)."""
        return [self.grad_dict.get(n) for n in self._symbol.list_arguments()]

    def backward(self, out_grads: Any = None, is_train: bool = True) -> None:
        """Write the arguments' gradients into ``grad_dict`` (after ``forward(is_train=True)``).

        ``out_grads``: one array per output (or a single array), default ones.
        """
        if self._saved is None:
            raise GraphError("backward: call forward(is_train=True) first (MXNet needs the "
                             "training-mode forward pass and bound gradient arrays)")
        bg, _, bwd = self._train
        if out_grads is None:
            heads = [np.ones_like(o._data) for o in self.outputs]
        else:
            given = [out_grads] if isinstance(out_grads, (NDArray, np.ndarray)) else out_grads
            heads = [g._data if isinstance(g, NDArray) else np.asarray(g) for g in given]
            if len(heads) != len(self.outputs):
                raise GraphError(f"backward: {len(heads)} out_grads for "
                                 f"{len(self.outputs)} outputs")
        if bwd is None:
            got: list = []
        else:
            feed = {k: v for k, v in self._saved.items() if k in bwd.var_slots}
            for name in bg.ograds:
                feed[name] = heads[int(name.rpartition(":")[2])]
            got = bwd.run(feed, is_train=is_train)
        it = iter(got)
        for name, has in zip(bg.wrt, bg.grad_of):
            g = next(it) if has else None
            buf = self.grad_dict[name]._data
            if self._reqs[name] == "add":
                if g is not None:
                    buf += g
            elif g is None:
                buf[...] = 0
            else:
                buf[...] = g

    def copy_params_from(self, arg_params: Mapping[str, Any],
                         aux_params: Mapping[str, Any] | None = None,
                         allow_extra_params: bool = False) -> None:
        """Copy parameter values into the bound arrays (``Executor.copy_params_from``)."""
        for src, dst, what in ((arg_params, self.arg_dict, "arg"),
                               (aux_params or {}, self.aux_dict, "aux")):
            for k, v in src.items():
                if k in dst:
                    dst[k]._data[...] = v._data if isinstance(v, NDArray) else np.asarray(v)
                elif not allow_extra_params:
                    raise GraphError(f"copy_params_from: {what} {k!r} is not in the graph")
