"""What an op hook (``HybridBlock.register_op_hook``) reports, as MXNet 1.9.1 reports it.

MXNet's cached graph calls the hook once per tensor, node by node in graph order: with
``monitor_all=True`` first each input of the node, named ``<node>_<input name>``, then (always)
each output, named ``<node>_<output name>``. The names come from the operator's
``FListInputNames`` / ``FListOutputNames``; an operator without them gets positional names,
``input0, input1, ...`` for inputs and ``0, 1, ...`` for outputs (``relu0_fwd_input0``,
``sigmoid0_0``). Inference reports the visible outputs only; training (``autograd.record``)
also the hidden ones (BatchNorm's ``mean``/``var``). Variables are never reported by
themselves, only as some node's input.

Which convention an operator follows is a fact of its ``OpDef``: ``lists_input_names`` and
``lists_output_names`` (MXNet's ``FListInputNames`` / ``FListOutputNames``), read off MXNet
1.9.1 (``tests/golden/gluon/gen_op_hook_names.py`` records the names for every operator of the
per-op case tables, and ``tests/gluon/test_op_hook.py`` checks these facts against it). An
operator registered by user code gets its declared input names and positional output names,
the fields' defaults.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

__all__ = ["input_names", "output_names", "make_monitor"]


def input_names(node: Any) -> list[str]:
    """The names MXNet's hook gives ``node``'s inputs (without the ``<node>_`` prefix)."""
    count = len(node.inputs)
    if not node.op.lists_input_names:
        return [f"input{i}" for i in range(count)]
    names = list(node.op.input_names(node.params, count))[:count]
    return names + [f"input{i}" for i in range(len(names), count)]


def output_names(node: Any) -> list[str]:
    """The names MXNet's hook gives ``node``'s outputs (hidden ones included)."""
    if node.op.lists_output_names:
        return list(node.op.list_output_names(node.params))
    return [str(i) for i in range(node.num_outputs())]


def make_monitor(callback: Callable[[str, str, Any], Any], monitor_all: bool, is_train: bool,
                 feed: Mapping[str, np.ndarray], wrap: Callable[[np.ndarray], Any]
                 ) -> Callable[[Any, list], None]:
    """A ``GraphPlan.run`` monitor that calls ``callback(name, op_name, wrap(array))`` in
    MXNet's order. The executor reports a node after it ran; its inputs (variables from
    ``feed``, earlier outputs kept for this run) are reported first, as MXNet reports them
    before the node runs (ops here never write their inputs)."""
    values: dict[tuple[int, int], np.ndarray] = {}

    def monitor(node: Any, outs: list) -> None:
        op_name = node.op.name
        if monitor_all:
            for (src, index), name in zip(node.inputs, input_names(node)):
                arr = feed.get(src.name) if src.op is None else values.get((id(src), index))
                if arr is not None:
                    callback(f"{node.name}_{name}", op_name, wrap(arr))
            values.update(((id(node), i), o) for i, o in enumerate(outs))
        count = node.num_outputs() if is_train else node.num_visible_outputs()
        for name, arr in zip(output_names(node)[:count], outs[:count]):
            if arr is not None:
                callback(f"{node.name}_{name}", op_name, wrap(arr))

    return monitor
