"""The backward graph of a Symbol, built from the ops' own gradient rules.

MXNet's executor and CachedOp build a backward graph with nnvm's ``Gradient`` pass: each
forward node's ``FGradient`` adds nodes that take the node's inputs, outputs and output
gradients. gluonport does the same with :attr:`gluonport.ops.registry.OpDef.gradient`, called
with ``F = sym`` (the imperative tape calls the same rules with ``F = nd``), and then cuts the
result in two ordinary graphs:

* ``forward``: the forward outputs, followed by every forward value the backward needs
  (``saved``): run it once, in training mode;
* ``backward``: variables for those saved values (named ``_fwd:<node>:<i>``), for the output
  gradients (``_ograd:<i>``) and for the forward variables it reads directly; its outputs are
  the gradients of ``wrt``, in order.

So the forward pass is never run twice (a second run would draw new Dropout masks and update
BatchNorm's moving statistics again), and both graphs run on the numpy executor or export to
ONNX like any other graph.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import GluonportError
from ._graph import Node, composing_beside, topo_order
from .symbol import Symbol, var

__all__ = ["BackwardGraph", "build_backward", "SAVED_PREFIX", "OGRAD_PREFIX"]

SAVED_PREFIX = "_fwd:"
OGRAD_PREFIX = "_ograd:"


@dataclass
class BackwardGraph:
    """The two halves of a training step's graph (see the module docstring).

    ``grad_of[i]`` is True when ``wrt[i]`` gets a gradient (False: nothing flows to it; its
    gradient is zero and ``backward`` has no output for it).
    """

    forward: Symbol
    backward: Symbol | None
    n_outputs: int
    saved: list[str]
    ograds: list[str]
    wrt: list[str]
    grad_of: list[bool]


def _entry_sym(entry: tuple[Node, int]) -> Symbol:
    return Symbol([entry])


def _add(a: Symbol, b: Symbol) -> Symbol:
    from . import elemwise_add  # the generated sym namespace

    return elemwise_add(a, b)


def build_backward(sym: Symbol, wrt: Sequence[str]) -> BackwardGraph:
    """The forward and backward graphs of ``sym`` for the gradients of variables ``wrt``.

    Raises :class:`GluonportError` naming the op when a node on a path from ``wrt`` to an
    output has no gradient rule.
    """
    from .. import symbol as F

    outputs = list(sym._outputs)
    order = topo_order(n for n, _ in outputs)
    variables = {n.name: n for n in order if n.op is None}
    wanted = set(wrt)
    # nodes on a path from a wanted variable: only they need gradients
    live: set[int] = set()
    for node in order:
        if node.op is None:
            if node.name in wanted:
                live.add(id(node))
        elif any(id(src) in live for src, _ in node.inputs):
            live.add(id(node))
    pending: dict[tuple[int, int], Symbol] = {}
    ograd_names: list[str] = []
    grads: dict[int, Symbol] = {}
    forward_ids = {id(n) for n in order}
    with composing_beside(order):  # the rules compose with the sym API
        for i, entry in enumerate(outputs):
            if id(entry[0]) not in live:
                continue
            name = f"{OGRAD_PREFIX}{i}"
            ograd_names.append(name)
            key = (id(entry[0]), entry[1])
            g = var(name)
            pending[key] = g if key not in pending else _add(pending[key], g)
        for node in reversed(order):
            if id(node) not in live:
                continue
            if node.op is None:
                got = pending.pop((id(node), 0), None)
                if got is not None:
                    grads[id(node)] = got
                continue
            n_out = node.num_outputs()
            og = [pending.pop((id(node), i), None) for i in range(n_out)]
            if all(g is None for g in og):
                continue
            outs = [_entry_sym((node, i)) for i in range(n_out)]
            og = [F.zeros_like(o) if g is None else g for g, o in zip(og, outs)]
            op = node.op
            if op.gradient is None:
                reason = op.no_gradient or "gluonport defines no gradient for it yet"
                raise GluonportError(f"node {node.name!r}: Operator {op.name} is "
                                     "non-differentiable because it didn't register FGradient "
                                     f"attribute ({reason})")
            ins = [_entry_sym(e) for e in node.inputs]
            in_grads = list(op.gradient(F, node.params, ins, outs, og))
            if len(in_grads) != len(ins):
                raise GluonportError(f"node {node.name!r} ({op.name}): its gradient gave "
                                     f"{len(in_grads)} values for {len(ins)} inputs")
            for (src, idx), g in zip(node.inputs, in_grads):
                if g is None or id(src) not in live:
                    continue
                key = (id(src), idx)
                pending[key] = g if key not in pending else _add(pending[key], g)
    grad_of = [id(variables[w]) in grads if w in variables else False for w in wrt]
    heads = [grads[id(variables[w])] for w, has in zip(wrt, grad_of) if has]
    if not heads:
        return BackwardGraph(sym, None, len(outputs), [], ograd_names, list(wrt), grad_of)
    backward = Symbol([h._outputs[0] for h in heads])
    saved = _cut(backward, forward_ids)
    forward = Symbol(outputs + [e for e, _ in saved])
    return BackwardGraph(forward, backward, len(outputs), [n for _, n in saved], ograd_names,
                         list(wrt), grad_of)


def _cut(backward: Symbol, forward_ids: set[int]) -> list[tuple[tuple[Node, int], str]]:
    """Replace, in the backward graph, every input that is a forward op node's output by a
    variable ``_fwd:<node>:<i>``; returns the forward entries and their variable names."""
    saved: dict[tuple[int, int], tuple[tuple[Node, int], Node]] = {}
    seen: set[int] = set()
    stack = [n for n, _ in backward._outputs]
    while stack:
        node = stack.pop()
        if id(node) in seen or id(node) in forward_ids:
            continue
        seen.add(id(node))
        for j, (src, idx) in enumerate(node.inputs):
            if id(src) in forward_ids and src.op is not None:
                key = (id(src), idx)
                if key not in saved:
                    saved[key] = ((src, idx), Node(None, f"{SAVED_PREFIX}{src.name}:{idx}"))
                node.inputs[j] = (saved[key][1], 0)
            else:
                stack.append(src)
    return [(entry, v.name) for entry, v in saved.values()]
