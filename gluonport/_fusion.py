"""Inference-time rewrite of a :class:`~gluonport.symbol.executor.GraphPlan`: epilogues in place.

A CNN spends most executor time in Convolution; the rest goes to the passes after it
(BatchNorm, ``relu``/``clip``, ``elemwise_add``), each of which used to allocate a new output.
When such an op's input is an intermediate that

* a known op made as a new array (Convolution, FullyConnected, BatchNorm, Activation,
  elemwise_add, clip: never a caller's array, a view of one, or a cached value),
* nothing reads afterwards, not a graph output, read once by this op,
* and whose other readers all make new arrays too (so no view or alias of it outlives the op),

the op writes its result into that input's buffer. The arithmetic is the op's own numpy
arithmetic with ``out=``, so results are bit-identical to running the op: a Convolution ->
BatchNorm -> relu chain becomes the convolution plus two in-place passes (``x *= scale;
x += shift``, BatchNorm's own per-channel fold) and one in-place ``maximum``.

Folding BatchNorm into the convolution weights was measured and left out: on ResNet-50 v1 the
multiply pass it saves is ~2 ms of ~150 ms (1.5%), while it changes rounding (hybridized and
imperative results would no longer agree bit for bit) and needs a cache of folded weights that
goes stale when a parameter is changed in place.

Each rewritten step checks the actual arrays (writeable, contiguous, dtype, shape, no memory
shared with its other inputs) and otherwise runs the op normally. The executor uses the rewritten
steps only for inference without a monitor, where intermediate outputs are never observed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["fuse_steps"]

# Which ops qualify, and their in-place kernels, are facts of each op's definition:
# ``OpDef.fresh_outputs`` (its outputs are always new arrays, safe to overwrite once nothing else
# reads them) and ``OpDef.inplace`` (an :class:`~gluonport.ops.registry.InPlace`: the kernel,
# the input positions it may overwrite, the params it serves).


class _InPlaceOp:
    """Stands in for an OpDef in a rewritten step: the in-place kernel when the donated input
    qualifies at run time, else the op itself."""

    def __init__(self, op: Any, donor: int):
        self.op, self.donor, self.name = op, donor, op.name
        self.kernel, self.fresh_outputs = op.inplace.kernel, op.fresh_outputs

    def run(self, p: Any, args: list, is_train: bool = False) -> list:
        x = args[self.donor]
        if (isinstance(x, np.ndarray) and x.flags.writeable and x.flags.c_contiguous
                and not any(j != self.donor and np.may_share_memory(x, a)
                            for j, a in enumerate(args))):
            outs = self.kernel(p, args, self.donor)
            if outs is not None:
                return outs
        return self.op.run(p, args, is_train)


class _Rewritten:
    """A step of the inference plan: the original step's slots with an in-place ``op``."""

    __slots__ = ("node", "op", "params", "in_slots", "out_base", "n_out", "free")

    def __init__(self, base: Any, op: Any):
        self.node, self.params, self.in_slots = base.node, base.params, base.in_slots
        self.out_base, self.n_out, self.free = base.out_base, base.n_out, base.free
        self.op = op


def _fresh(op: Any) -> bool:
    """Whether ``op`` always makes new arrays (``OpDef.fresh_outputs``)."""
    return bool(getattr(op, "fresh_outputs", False))


def _readers(steps: Sequence[Any]) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for k, step in enumerate(steps):
        for s in step.in_slots:
            out.setdefault(s, []).append(k)
    return out


def _donor(steps: Sequence[Any], k: int, readers: dict[int, list[int]], fresh: set[int],
           keep: set[int]) -> int | None:
    """The input position step ``k`` may overwrite, or None (see the module docstring)."""
    step = steps[k]
    spec = getattr(step.op, "inplace", None)
    if spec is None or not spec.applies(step.params):
        return None
    for i in spec.donors:
        if i >= len(step.in_slots):
            continue
        s = step.in_slots[i]
        if (s in fresh and s not in keep and s in step.free and step.in_slots.count(s) == 1
                and all(_fresh(steps[r].op) for r in readers[s] if r != k)):
            return i
    return None


def fuse_steps(steps: Sequence[Any], keep: set[int]) -> list[Any]:
    """The inference plan for the executor's ``steps``, epilogue ops rewritten in place.

    ``keep`` holds the slots never to overwrite (graph inputs and outputs). Steps are the
    executor's ``_Step`` objects (``op``, ``params``, ``in_slots``, ``out_base``, ``free``);
    unchanged ones are returned as they are.
    """
    readers = _readers(steps)
    fresh: set[int] = set()
    out: list[Any] = []
    for k, step in enumerate(steps):
        donor = _donor(steps, k, readers, fresh, keep)
        if donor is not None:
            step = _Rewritten(step, _InPlaceOp(step.op, donor))
        if _fresh(step.op):
            fresh.add(step.out_base)
        out.append(step)
    return out
