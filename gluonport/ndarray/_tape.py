"""The imperative autograd tape: what ``autograd.record()`` keeps, and the backward pass over it.

MXNet 1.9.1 records every operator called on an array that takes part in a graph (a marked
variable, or the output of a recorded operator) while recording is on; ``backward`` then walks
the recorded nodes from the heads in reverse topological order, calls each operator's gradient
(``FGradient``) with the gradients of its outputs, sums what reaches each array, and writes the
variables' gradients into their gradient buffers by their ``grad_req``. gluonport does the same:

* :func:`record_op` is called by ``ndarray.invoke`` (the single imperative dispatch point) after
  an operator ran while recording: it adds a :class:`Node` holding the op, its parsed
  attributes, its input and output arrays, and where each input came from.
* Gradients are the ops' own rules (:attr:`gluonport.ops.registry.OpDef.gradient`) run through
  the ``nd`` namespace, so with ``create_graph=True`` the backward pass is itself recorded and
  can be differentiated again (higher-order gradients), as MXNet's is.
* A node built by code instead of an operator (``autograd.Function``, a hybridized block's
  cached graph, a Python custom op) carries its own ``backward`` callable.

An array's place in the graph is its ``_ag`` slot: ``None`` (a constant), or ``(node, i)`` --
output ``i`` of a :class:`Node`, or a :class:`Variable` (``attach_grad`` / ``mark_variables``).
Without ``retain_graph`` the nodes a backward pass used are freed, and a second pass through them
raises MXNet's error.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Collection, Sequence
from typing import Any

import numpy as np

from .._core import recording
from ..errors import GluonportError

__all__ = ["Node", "Variable", "record_op", "record_function", "backward", "mark_variable",
           "NOT_IN_GRAPH"]

NOT_IN_GRAPH = ("Cannot differentiate node because it is not in a computational graph. You need "
                "to set is_recording to true or use autograd.record() to save computational "
                "graphs for backward. If you want to differentiate the same graph twice, you "
                "need to pass retain_graph=True to backward.")
"""MXNet 1.9.1's message for a head that is not (or no longer) in a recorded graph."""


# MXNet's Imperative counters: recorded nodes are named node_<n>, marked variables var<n> and
# constant inputs null<n> (one counter for both), process-wide; ``autograd.get_symbol`` shows them.
_NODE_IDS = itertools.count()
_VAR_IDS = itertools.count()


class Variable:
    """An array whose gradient is wanted: ``attach_grad`` or ``autograd.mark_variables``.

    ``grad`` is the buffer the backward pass writes (``'write'``) or adds (``'add'``) into;
    ``'null'`` keeps it unchanged. ``sym_name`` is MXNet's name for it (``var<n>``).
    """

    __slots__ = ("array", "grad", "req", "sym_name", "own_grad")

    def __init__(self, array: Any, grad: Any, req: str, own_grad: bool = False):
        self.array = array
        self.grad = grad
        self.req = req
        self.sym_name = f"var{next(_VAR_IDS)}"
        #: ``grad`` was made by ``attach_grad`` (not a caller's array from mark_variables)
        self.own_grad = own_grad


class Node:
    """One recorded call: an operator (``op`` + ``params``), or a function with its own
    ``backward(ograds) -> input grads``.

    ``inputs`` are the input arrays as the op saw them (their ``_ag`` links the graph),
    ``outputs`` all output arrays (hidden ones included), ``parents[i]`` the ``_ag`` entry of
    input ``i`` at recording time. ``sym_name`` (``node_<n>``) and ``const_names`` (input index
    -> ``null<n>`` for inputs outside the graph) are MXNet's names for ``autograd.get_symbol``.
    """

    __slots__ = ("op", "params", "inputs", "outputs", "parents", "train", "backward_fn",
                 "freed", "name", "sym_name", "const_names", "attrs", "takes_into")

    def __init__(self, op: Any, params: Any, inputs: list, outputs: list, train: bool,
                 backward_fn: Callable[..., list] | None = None, name: str = "",
                 takes_into: bool = False):
        self.op = op
        self.params = params
        self.inputs = inputs
        self.outputs = outputs
        self.parents = [getattr(x, "_ag", None) for x in inputs]
        self.train = train
        self.backward_fn = backward_fn
        self.freed = False
        self.name = name or (op.name if op is not None else "function")
        self.sym_name = f"node_{next(_NODE_IDS)}"
        self.const_names = {i: f"null{next(_VAR_IDS)}" for i, p in enumerate(self.parents)
                            if p is None}
        self.attrs: dict[str, str] | None = None  # the call's attribute strings (record_op)
        self.takes_into = takes_into  # backward_fn(ograds, into): may write into grad buffers

    def free(self) -> None:
        """Drop the saved arrays (MXNet frees a graph after a backward pass without
        ``retain_graph``)."""
        self.freed = True
        self.inputs = self.outputs = self.parents = None  # type: ignore[assignment]
        self.backward_fn = None


def _wrap_const(x: Any, ctx: Any) -> Any:
    from .ndarray import NDArray

    return x if isinstance(x, NDArray) else NDArray(np.asarray(x), ctx)


def record_op(op: Any, params: Any, inputs: Sequence[Any], outputs: list, train: bool,
              attrs: dict[str, str] | None = None) -> None:
    """Record one operator call when any input takes part in a graph; its outputs then do.

    ``outputs`` are NDArrays for every output (hidden ones included); the visible ones are what
    the caller returns. ``attrs``: the call's attribute strings (``autograd.get_symbol``).
    """
    if not any(getattr(x, "_ag", None) is not None for x in inputs):
        return
    ctx = outputs[0].context if outputs else None
    node = Node(op, params, [_wrap_const(x, ctx) for x in inputs], outputs, train)
    node.attrs = attrs
    for i, y in enumerate(outputs):
        y._ag = (node, i)


def record_function(inputs: Sequence[Any], outputs: Sequence[Any],
                    backward_fn: Callable[..., list], name: str, takes_into: bool = False
                    ) -> bool:
    """Record a node with its own backward (``autograd.Function``, a cached graph); returns
    whether it was recorded (recording on and some input in a graph).

    ``takes_into``: ``backward_fn(ograds, into)`` accepts, per input, ``None`` or the numpy
    gradient buffer that input's gradient is going to be written to (a variable with
    ``grad_req='write'`` that no other node or head gives a gradient to); it may write the
    gradient there and return it as an NDArray whose ``_data`` is that buffer, which then
    needs no copy.
    """
    if not recording.is_recording():
        return False
    if not any(getattr(x, "_ag", None) is not None for x in inputs):
        return False
    node = Node(None, None, list(inputs), list(outputs), recording.is_training(), backward_fn,
                name, takes_into)
    for i, y in enumerate(outputs):
        y._ag = (node, i)
    return True


def mark_variable(array: Any, grad: Any, req: str, own_grad: bool = False) -> None:
    """Make ``array`` a variable whose gradient goes to ``grad`` (by ``req``); ``own_grad``:
    ``grad`` is a buffer ``attach_grad`` made, which only its NDArray holds."""
    if req not in ("write", "add", "null"):
        raise GluonportError(f"grad_req must be one of 'write', 'add', or 'null', but got "
                             f"'{req}'")
    array._ag = (Variable(array, grad, req, own_grad), 0)


def _takes_over(buf: Any, got: Any, heads: Collection[int]) -> bool:
    """Whether a ``'write'`` gradient ``got`` (an NDArray) may become the gradient buffer
    ``buf`` (its array) instead of being copied into it: nothing but the two NDArrays holds
    either array (reference counts: no view, no other NDArray, no scratch pool, no caller's
    reference), both own their memory with the same dtype, shape and C layout, and ``got`` is
    no caller's head gradient. Nobody can then tell it from a copy, which for resnet18_v1's
    11M gradient values took ~9 ms of an imperative step."""
    if not (_SOLE and _refs(got) <= _SOLE and _refs(buf) <= _SOLE):  # before any local
        return False
    a, b = got._data, buf._data
    return (a.dtype == b.dtype and a.shape == b.shape and _owns_memory(a) and _owns_memory(b)
            and a.flags.c_contiguous and a.flags.writeable and id(a) not in heads)


def _owns_memory(arr: np.ndarray) -> bool:
    """``arr`` owns its memory, or is a view of all of an array only it holds (a kernel's
    result reshaped: a convolution's weight gradient)."""
    if arr.base is None:
        return True
    return (type(arr.base) is np.ndarray and arr.base.base is None
            and arr.base.nbytes == arr.nbytes and _base_refs(arr) <= _BASE_SOLE)


def _base_refs(arr: np.ndarray) -> int:
    return sys.getrefcount(arr.base)


def _refs(holder: Any) -> int:
    """References to ``holder._data`` as counted from here (compared with :data:`_SOLE`)."""
    data = holder._data
    return sys.getrefcount(data)


class _Holder:
    __slots__ = ("_data",)

    def __init__(self, data: Any):
        self._data = data


#: what :func:`_refs` counts for an array only its holder holds (the count depends on the
#: interpreter version, so it is measured; 0 where there are no reference counts)
_SOLE = _refs(_Holder(np.empty(0))) if hasattr(sys, "getrefcount") else 0
#: what :func:`_base_refs` counts for the base of a view that only the view holds
_BASE_SOLE = _base_refs(np.empty(4).reshape(2, 2)) if _SOLE else 0


def _entry_key(entry: tuple) -> tuple[int, int]:
    return id(entry[0]), entry[1]


def _topo(heads: list) -> list[Node]:
    """Recorded nodes reachable from the heads, inputs before users."""
    order: list[Node] = []
    seen: set[int] = set()
    stack: list[tuple[Any, bool]] = [(h[0], False) for h in heads if isinstance(h[0], Node)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        if node.freed:
            raise GluonportError(NOT_IN_GRAPH)
        seen.add(id(node))
        stack.append((node, True))
        for parent in node.parents:
            if parent is not None and isinstance(parent[0], Node) and id(parent[0]) not in seen:
                stack.append((parent[0], False))
    return order


def _add(a: Any, b: Any) -> Any:
    from .ndarray import invoke

    return invoke("elemwise_add", (a, b))


def _sole_gradients(order: list[Node], entries: list) -> set[int]:
    """ids of the variables that exactly one input of one node gives a gradient to."""
    seen: dict[int, int] = {}
    for entry in entries:
        if isinstance(entry[0], Variable):
            seen[id(entry[0])] = 2  # a head: its head gradient is summed in
    for node in order:
        for p in node.parents:
            if p is not None and isinstance(p[0], Variable):
                seen[id(p[0])] = seen.get(id(p[0]), 0) + 1
    return {k for k, n in seen.items() if n == 1}


def _buffer_for(parent: tuple | None, x: Any, sole: set[int]) -> np.ndarray | None:
    """The gradient buffer a node's backward may write input ``x``'s gradient into."""
    if parent is None or not isinstance(parent[0], Variable) or id(parent[0]) not in sole:
        return None
    var = parent[0]
    if var.req != "write" or var.grad is None:
        return None
    buf = var.grad._data
    return buf if buf.dtype == x._data.dtype and buf.shape == x._data.shape else None


def _gradients_of(node: Node, ograds: list, F: Any, into: list | None = None) -> list:
    if node.backward_fn is not None:
        grads = list(node.backward_fn(ograds) if into is None
                     else node.backward_fn(ograds, into))
    else:
        op = node.op
        if op.gradient is None:
            reason = op.no_gradient or "gluonport defines no gradient for it yet"
            raise GluonportError(f"Operator {op.name} is non-differentiable because it didn't "
                                 f"register FGradient attribute ({reason})")
        # inputs outside the graph take no gradient: their kernels may skip it (kNullOp)
        unused = frozenset(i for i, p in enumerate(node.parents) if p is None)
        prev = recording.set_discarded_grads(op.name, unused)
        try:
            grads = list(op.gradient(F, node.params, node.inputs, node.outputs, ograds))
        finally:
            recording.restore_discarded_grads(prev)
    if len(grads) != len(node.inputs):
        raise GluonportError(f"{node.name}: its gradient gave {len(grads)} values for "
                             f"{len(node.inputs)} inputs")
    for x, g in zip(node.inputs, grads):
        if g is not None and g.shape != x.shape:
            raise GluonportError(f"{node.name}: a gradient of shape {g.shape} for an input of "
                                 f"shape {x.shape}")
    return grads


def backward(heads: Sequence[Any], head_grads: Sequence[Any | None],
             variables: Sequence[Any] | None = None, retain_graph: bool = False,
             create_graph: bool = False, train_mode: bool = True) -> list | None:
    """The backward pass from ``heads`` (NDArrays) seeded with ``head_grads`` (``None``: ones).

    With ``variables`` the gradients of those arrays are returned (``autograd.grad``) and no
    gradient buffer is written; otherwise every variable reached gets its gradient by its
    ``grad_req``. ``create_graph`` records the backward pass itself.
    """
    from .. import ndarray as F
    from .ndarray import NDArray

    entries = []
    for h in heads:
        if not isinstance(h, NDArray):
            raise GluonportError(f"autograd.backward: heads must be NDArrays, got "
                                 f"{type(h).__name__}")
        if h._ag is None:
            raise GluonportError(NOT_IN_GRAPH)
        if h._data.dtype.kind != "f":
            raise GluonportError(f"autograd.backward: a head of dtype {h._data.dtype} has no "
                                 "gradient; only floating-point outputs can be differentiated")
        entries.append(h._ag)
    order = _topo(entries)
    pending: dict[tuple[int, int], Any] = {}
    var_grads: dict[int, tuple[Variable, Any]] = {}

    def give(entry: tuple, g: Any) -> None:
        target = entry[0]
        if isinstance(target, Variable):
            prev = var_grads.get(id(target))
            var_grads[id(target)] = (target, g if prev is None else _add(prev[1], g))
            return
        key = _entry_key(entry)
        prev = pending.get(key)
        pending[key] = g if prev is None else _add(prev, g)

    with recording.RecordingStateScope(create_graph, train_mode):
        for h, entry, hg in zip(heads, entries, head_grads):
            if hg is None:
                hg = NDArray(np.ones_like(h._data), h.context)
            elif hg.shape != h.shape:
                raise GluonportError(f"autograd.backward: head gradient of shape {hg.shape} for "
                                     f"a head of shape {h.shape}")
            give(entry, hg)
        sole = None
        if variables is None and not create_graph and any(n.takes_into for n in order):
            sole = _sole_gradients(order, entries)
        for node in reversed(order):
            ograds = [pending.pop((id(node), i), None) for i in range(len(node.outputs))]
            if all(g is None for g in ograds):
                continue
            ograds = [NDArray(np.zeros_like(y._data), y.context) if g is None else g
                      for g, y in zip(ograds, node.outputs)]
            into = None
            if sole is not None and node.takes_into:
                into = [_buffer_for(p, x, sole) for p, x in zip(node.parents, node.inputs)]
            with recording.RecordingStateScope(None, node.train if train_mode else False):
                grads = _gradients_of(node, ograds, F, into)
            for parent, g in zip(node.parents, grads):
                if parent is not None and g is not None:
                    give(parent, g)
    if not retain_graph:
        for node in order:
            node.free()
    if variables is not None:
        out = []
        for v in variables:
            ag = getattr(v, "_ag", None)
            if ag is None or not isinstance(ag[0], Variable):
                raise GluonportError("autograd.grad: every variable must be marked with "
                                     "attach_grad() or autograd.mark_variables() before recording")
            got = var_grads.get(id(ag[0]))
            out.append(got[1] if got is not None else NDArray(np.zeros_like(v._data), v.context))
        return out
    given = {id(hg._data) for hg in head_grads if hg is not None}  # callers' head gradients
    for var, g in var_grads.values():
        _write_grad(var, g, given)
    return None


def _write_grad(var: Variable, g: Any, heads: Collection[int] = ()) -> None:
    buf = var.grad
    if var.req == "null" or buf is None:
        return
    if var.req == "write" and g._data is buf._data:  # written there by the node's backward
        var.array._fresh_grad = True
        return
    if var.req == "write" and var.own_grad and _takes_over(buf, g, heads):
        buf._data = g._data  # as if the backward kernel had written into the buffer
        var.array._fresh_grad = True
        return
    data = g._data if g._data.dtype == buf._data.dtype else g._data.astype(buf._data.dtype)
    if var.req == "add":
        buf._data += data
    else:
        buf._data[...] = data
    var.array._fresh_grad = True
