"""The subgraphs of MXNet's control-flow operators (``_foreach``, ``_while_loop``, ``_cond``),
bound to their node so the op's compute, shape and type rules and ONNX lowering can use them.

In MXNet 1.9.1 these ops keep their bodies in ``NodeAttrs::subgraphs`` (written to symbol JSON
as the node's ``"subgraphs"`` list). A loaded or built node keeps them as Symbols in
``Node.subgraphs``; ``Node.params`` then carries them, each wrapped in a :class:`Subgraph`,
under the key ``subgraphs``. The op layer (``ops/control``) cannot import this layer, so this
object is the documented interface it is handed: ``input_names``, ``n_outputs``, ``run``,
``shapes``, ``types``, ``vjp`` and ``call`` (for gradient rules) and ``symbol``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._core.attr_fields import Params

__all__ = ["Subgraph", "with_subgraphs"]


class Subgraph:
    """One subgraph: its inputs are its variables in DFS order (MXNet's ``ListInputs``), its
    outputs the Symbol's outputs."""

    def __init__(self, symbol: Any):
        self.symbol = symbol
        self._plan: Any = None
        self._order: list | None = None
        self._grad_exec: Any = None
        self._inputs: list[str] | None = None

    @property
    def input_names(self) -> list[str]:
        """The subgraph's inputs (variables, DFS order): what the ops' ``*_locs`` index."""
        if self._inputs is None:
            self._inputs = self.symbol.list_inputs()
        return self._inputs

    @property
    def n_outputs(self) -> int:
        return len(self.symbol._outputs)

    def run(self, inputs: Sequence[np.ndarray], is_train: bool = False) -> list[np.ndarray]:
        """Evaluate on numpy arrays given in :attr:`input_names` order."""
        if self._plan is None:
            from .executor import GraphPlan

            self._plan = GraphPlan(self.symbol)
        return self._plan.run(dict(zip(self.input_names, inputs)), is_train)

    def _topo(self) -> list:
        if self._order is None:
            from ._graph import topo_order

            self._order = topo_order(n for n, _ in self.symbol._outputs)
        return self._order

    def shapes(self, in_shapes: Sequence[Any]) -> tuple[list, list]:
        """Shape inference: (input shapes completed, output shapes); ``None`` is unknown."""
        from ._infer import infer_shapes

        order = self._topo()
        given = {n: s for n, s in zip(self.input_names, in_shapes) if s is not None}
        values = infer_shapes(order, given, budget=False)
        return self._collect(order, values)

    def types(self, in_types: Sequence[Any]) -> tuple[list, list]:
        """Type inference: (input dtypes completed, output dtypes); ``None`` is unknown."""
        from ._infer import infer_types

        order = self._topo()
        given = {n: t for n, t in zip(self.input_names, in_types) if t is not None}
        values = infer_types(order, given)
        return self._collect(order, values)

    def _collect(self, order: list, values: dict) -> tuple[list, list]:
        by_name = {n.name: values.get((id(n), 0)) for n in order if n.op is None}
        ins = [by_name.get(name) for name in self.input_names]
        outs = [values.get((id(n), i)) for n, i in self.symbol._outputs]
        return ins, outs

    def vjp(self, inputs: Sequence[np.ndarray], ograds: Sequence[np.ndarray]) -> list:
        """The gradients of the inputs (``None`` for non-float inputs) given the outputs'
        gradients: the subgraph's forward in training mode, then its backward graph
        (``symbol/_backward.py``), on an executor kept for the input shapes."""
        from ..ndarray.ndarray import NDArray
        from .executor import Executor

        feed = dict(zip(self.input_names, inputs))
        sig = tuple((n, np.shape(v), np.asarray(v).dtype.str) for n, v in feed.items())
        if self._grad_exec is None or self._grad_exec[0] != sig:
            args = self.symbol.list_arguments()
            aux = self.symbol.list_auxiliary_states()
            grads = {n: NDArray(np.zeros_like(np.asarray(feed[n]))) for n in args
                     if np.asarray(feed[n]).dtype.kind == "f"}
            ex = Executor(self.symbol, None, {n: feed[n] for n in args},
                          {n: feed[n] for n in aux}, {n: "write" for n in grads}, grads)
            self._grad_exec = (sig, ex)
        ex = self._grad_exec[1]
        for n in ex.aux_dict:
            ex.aux_dict[n] = NDArray(np.asarray(feed[n]))
        ex.forward(is_train=True, **{n: feed[n] for n in ex.arg_dict})
        ex.backward([NDArray(np.asarray(g)) for g in ograds])
        return [ex.grad_dict[n]._data.copy() if n in ex.grad_dict else None
                for n in self.input_names]

    def call(self, F: Any, op_name: str, params: Params, attrs: dict[str, Any],
             inputs: Sequence[Any]) -> list:
        """Apply ``op_name`` (a ``_backward_*`` op of the control-flow ops) with this node's
        subgraphs: on ``nd`` arrays it computes now; on Symbols it builds the node, the
        subgraphs attached. For gradient rules, which the op layer writes against ``F``."""
        from ..ndarray.ndarray import NDArray
        from ..ops import registry
        from .symbol import Symbol

        subs = [s.symbol for s in params.get("subgraphs")]
        if inputs and isinstance(inputs[0], Symbol):
            from ._control import control_node

            return control_node(op_name, subs, list(inputs), attrs)
        outs = registry.get(op_name).run(params, [x._data for x in inputs])
        ctx = inputs[0].context if inputs else None
        return [NDArray(o, ctx) for o in outs]

    def __repr__(self) -> str:  # Params hash by repr: one subgraph object, one key
        return f"<Subgraph {id(self):#x} of {self.n_outputs} output(s)>"


def with_subgraphs(params: Params, subgraphs: Sequence[Any]) -> Params:
    """``params`` with the node's subgraph Symbols bound as :class:`Subgraph` s (key
    ``subgraphs``)."""
    return Params({**params.as_dict(), "subgraphs": tuple(Subgraph(s) for s in subgraphs)})
