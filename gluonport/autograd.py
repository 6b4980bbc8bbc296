"""``mx.autograd``: recording, training mode and gradients, as MXNet 1.9.1's (per thread).

Inside ``with autograd.record():`` every operator called on an array that takes part in a graph
(a variable made by ``attach_grad`` / ``mark_variables``, or the output of a recorded operator)
is recorded; ``backward`` (or ``NDArray.backward``) then computes the variables' gradients with
each operator's gradient rule and writes them into their ``.grad`` buffers by their
``grad_req``; ``grad`` returns them instead, and with ``create_graph=True`` records the backward
pass itself, so gradients of gradients can be taken. The tape is ``gluonport/ndarray/_tape.py``.

Training mode (``record()`` defaults to ``train_mode=True``; ``train_mode()``) makes operators
with a training behaviour run it, imperatively and in hybridized blocks: Dropout draws masks,
BatchNorm normalises with the batch's statistics. Model code that only reads the state
(GluonCV's detectors branch on ``autograd.is_training()``) runs unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._core.recording import (
    RecordingStateScope,
    is_recording,
    is_training,
    pause,
    predict_mode,
    record,
    set_recording,
    set_training,
    train_mode,
)
from .errors import GluonportError
from .ndarray import NDArray, _tape

__all__ = ["set_recording", "set_training", "is_recording", "is_training", "record", "pause",
           "train_mode", "predict_mode", "mark_variables", "backward", "grad", "get_symbol",
           "Function"]

_RecordingStateScope = RecordingStateScope  # MXNet's private name, used by some user code


def _as_list(x: Any, what: str) -> list:
    if isinstance(x, NDArray):
        return [x]
    if isinstance(x, (list, tuple)):
        return list(x)
    raise GluonportError(f"autograd: {what} must be an NDArray or a list of NDArrays, got "
                         f"{type(x).__name__}")


def _head_grads(heads: list, head_grads: Any) -> list:
    if head_grads is None:
        return [None] * len(heads)
    grads = [head_grads] if isinstance(head_grads, NDArray) else list(head_grads)
    if len(grads) != len(heads):
        raise GluonportError(f"autograd: {len(heads)} heads but {len(grads)} head gradients")
    return grads


def mark_variables(variables: Any, gradients: Any, grad_reqs: Any = "write") -> None:
    """Mark arrays as variables whose gradients backward writes into ``gradients``.

    ``grad_reqs`` is one of ``'write'``, ``'add'``, ``'null'`` or a list of them, as MXNet's.
    """
    variables = _as_list(variables, "variables")
    gradients = _as_list(gradients, "gradients")
    if len(variables) != len(gradients):
        raise GluonportError("autograd.mark_variables: variables and gradients must have the "
                             f"same length, got {len(variables)} and {len(gradients)}")
    reqs = [grad_reqs] * len(variables) if isinstance(grad_reqs, str) else list(grad_reqs)
    for var, g, req in zip(variables, gradients, reqs):
        var._grad = g
        _tape.mark_variable(var, g, req)


def backward(heads: Any, head_grads: Any = None, retain_graph: bool = False,  # noqa: FBT001, FBT002
             train_mode: bool = True) -> None:  # noqa: FBT001, FBT002
    """Compute the gradients of ``heads`` with respect to the marked variables.

    ``head_grads`` (default ones) seeds each head. Without ``retain_graph`` the recorded graph is
    freed, and a second backward through it raises MXNet's error. ``train_mode`` is the mode
    the gradient rules run in.
    """
    heads = _as_list(heads, "heads")
    _tape.backward(heads, _head_grads(heads, head_grads), retain_graph=retain_graph,
                   train_mode=train_mode)


def grad(heads: Any, variables: Any, head_grads: Any = None, retain_graph: bool | None = None,
         create_graph: bool = False, train_mode: bool = True) -> list:  # noqa: FBT001, FBT002
    """The gradients of ``heads`` with respect to ``variables``, returned (``.grad`` buffers are
    left alone).

    ``create_graph=True`` records the computation of the gradients, so they can be
    differentiated again; ``retain_graph`` defaults to ``create_graph``, as in MXNet.
    """
    heads = _as_list(heads, "heads")
    single = isinstance(variables, NDArray)
    variables = _as_list(variables, "variables")
    if retain_graph is None:
        retain_graph = create_graph
    out = _tape.backward(heads, _head_grads(heads, head_grads), variables=variables,
                         retain_graph=retain_graph, create_graph=create_graph,
                         train_mode=train_mode)
    return out[:1] if single else out


def get_symbol(x: Any) -> Any:
    """The recorded computation of ``x`` as a Symbol, as MXNet's ``autograd.get_symbol``.

    Nodes keep MXNet's names, given when they were recorded by process-wide counters:
    ``node_<n>`` for operators, ``var<n>`` for arrays marked with ``attach_grad`` /
    ``mark_variables`` and ``null<n>`` for inputs outside the graph (constants; MXNet names
    such an array once and reuses the name, here each use is named). Attributes are the strings
    the call passed (for nodes recorded another way: those that differ from the op's
    defaults). Raises when ``x`` was not recorded, or the graph
    holds a node without an operator (``autograd.Function``, a hybridized block's call).
    """
    from .symbol._graph import Node as SymNode
    from .symbol.symbol import Symbol

    if not isinstance(x, NDArray):
        raise GluonportError(f"autograd.get_symbol: expects an NDArray, got {type(x).__name__}")
    if x._ag is None:
        raise GluonportError("autograd.get_symbol: NDArray is not part of a computation graph. "
                             "Did you forget to turn on recording?")
    made: dict[int, Any] = {}

    def var(key: Any, name: str) -> Any:
        if id(key) not in made:
            made[id(key)] = SymNode(None, name)
        return made[id(key)]

    head, index = x._ag
    if isinstance(head, _tape.Variable):
        return Symbol([(var(head, head.sym_name), 0)])
    stack: list[tuple[Any, int]] = [(head, 0)]
    while stack:  # post-order over the recorded nodes, inputs in order (nnvm's DFSVisit)
        node, i = stack[-1]
        if node.freed:
            raise GluonportError(_tape.NOT_IN_GRAPH)
        if node.op is None:
            raise GluonportError(f"autograd.get_symbol: the graph holds a {node.name!r} node "
                                 "recorded without an operator (autograd.Function or a "
                                 "hybridized block's call), which has no Symbol form")
        if i < len(node.parents):
            stack[-1] = (node, i + 1)
            parent = node.parents[i]
            if parent is None:
                var(node.inputs[i], node.const_names[i])
            elif isinstance(parent[0], _tape.Variable):
                var(parent[0], parent[0].sym_name)
            elif id(parent[0]) not in made:
                stack.append((parent[0], 0))
            continue
        stack.pop()
        inputs = []
        for k, parent in enumerate(node.parents):
            if parent is None:
                inputs.append((made[id(node.inputs[k])], 0))
            else:
                inputs.append((made[id(parent[0])], parent[1]))
        attrs = node.attrs if node.attrs is not None else _attr_strings(node.op, node.params)
        made[id(node)] = SymNode(node.op, node.sym_name, attrs, inputs)
    return Symbol([(made[id(head)], index)])


def _attr_strings(op: Any, params: Any) -> dict[str, str]:
    """The attribute strings of ``params`` that differ from ``op``'s defaults."""
    from ._core.attr_fields import REQUIRED, to_attr_string

    fields = op.params.fields
    out: dict[str, str] = {}
    for name, value in params.as_dict().items():
        field = fields.get(name)
        if field is None:
            out[name] = to_attr_string(value)
        elif field.default is REQUIRED or value != field.default:
            out[name] = field.to_string(value)
    return out


class Function:
    """A user-defined differentiable function (MXNet's ``autograd.Function``).

    Subclass it with ``forward(*inputs)`` and ``backward(*output_grads)`` on NDArrays; calling
    an instance runs ``forward`` with recording paused (as MXNet does) and, while recording,
    puts one node on the tape whose gradient is your ``backward`` (it returns one gradient per
    input). ``save_for_backward`` keeps arrays for it.
    """

    def __init__(self) -> None:
        self._saved_tensors: tuple = ()

    def save_for_backward(self, *args: Any) -> None:
        self._saved_tensors = args

    @property
    def saved_tensors(self) -> tuple:
        return self._saved_tensors

    def __call__(self, *inputs: Any) -> Any:
        with pause(train_mode=is_training()):
            outputs = self.forward(*inputs)
        single = isinstance(outputs, NDArray)
        outs = [outputs] if single else list(outputs)
        # fresh arrays, so an output that is an input does not lose its own graph entry
        outs = [NDArray(o._data, o.context) for o in outs]
        arrays = [x for x in inputs if isinstance(x, NDArray)]
        positions = [i for i, x in enumerate(inputs) if isinstance(x, NDArray)]

        def backward_fn(ograds: Sequence[NDArray]) -> list:
            with pause(train_mode=is_training()):
                got = self.backward(*ograds)
            got = [got] if isinstance(got, NDArray) else list(got)
            if len(got) != len(inputs):
                raise GluonportError(f"autograd.Function {type(self).__name__}.backward returned "
                                     f"{len(got)} gradients for {len(inputs)} inputs")
            return [got[i] for i in positions]

        _tape.record_function(arrays, outs, backward_fn, type(self).__name__)
        return outs[0] if single else outs

    def forward(self, *inputs: Any) -> Any:
        raise NotImplementedError

    def backward(self, *output_grads: Any) -> Any:
        raise NotImplementedError
