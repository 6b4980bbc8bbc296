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

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .ops.norm import bn_infer

__all__ = ["fuse_steps"]

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
# Ops whose outputs are always new arrays, safe to overwrite once nothing else reads them.
_FRESH = frozenset({"Convolution", "FullyConnected", "BatchNorm", "Activation", "elemwise_add",
                    "clip"})


# --- in-place kernels: (params, args, donated input index) -> outputs, or None to fall back ----
def _relu(p: Any, args: list, i: int) -> list | None:
    """``Activation(act_type='relu')``: ``np.maximum(x, 0)`` (the op's kernel) into ``x``."""
    x = args[0]
    if p.act_type != "relu" or x.dtype not in _FLOATS:
        return None
    np.maximum(x, 0, out=x)
    return [x]


def _clip(p: Any, args: list, i: int) -> list | None:
    """``np.clip`` gives MXNet's ``x > hi ? hi : (x < lo ? lo : x)`` bit for bit (NaN and -0.0
    kept) when ``lo <= hi``; reversed bounds fall back to the op."""
    x = args[0]
    if x.dtype not in _FLOATS:
        return None
    lo = np.asarray(p.a_min, np.float64).astype(x.dtype)
    hi = np.asarray(p.a_max, np.float64).astype(x.dtype)
    if not lo <= hi:
        return None
    np.clip(x, lo, hi, out=x)
    return [x]


def _add(p: Any, args: list, i: int) -> list | None:
    """``elemwise_add`` of same-shape, same-dtype float operands into operand ``i``."""
    a, b = args[i], args[1 - i]
    if a.shape != b.shape or a.dtype != b.dtype or a.dtype not in _FLOATS:
        return None
    with np.errstate(all="ignore"):  # as the op: inf from overflow, no warning
        np.add(a, b, out=a)
    return [a]


def _batch_norm(p: Any, args: list, i: int) -> list | None:
    """Inference BatchNorm with data and statistics of one float dtype, into the data."""
    x = args[0]
    if x.dtype not in _FLOATS or any(a.dtype != x.dtype for a in args[1:]):
        return None
    return list(bn_infer("BatchNorm", p.axis, p, *args, out=x))


_INPLACE: dict[str, tuple[Callable[[Any, list, int], list | None], tuple[int, ...],
                          Callable[[Any], bool]]] = {
    # op name -> (kernel, input positions that may be overwritten, params it applies to)
    "Activation": (_relu, (0,), lambda p: p.act_type == "relu"),
    "clip": (_clip, (0,), lambda p: p.a_min <= p.a_max),
    "elemwise_add": (_add, (0, 1), lambda p: True),
    "BatchNorm": (_batch_norm, (0,), lambda p: True),
}


class _InPlaceOp:
    """Stands in for an OpDef in a rewritten step: the in-place kernel when the donated input
    qualifies at run time, else the op itself."""

    def __init__(self, op: Any, donor: int):
        self.op, self.donor, self.name = op, donor, op.name
        self.kernel = _INPLACE[op.name][0]

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
    spec = _INPLACE.get(step.op.name)
    if spec is None or not spec[2](step.params):
        return None
    for i in spec[1]:
        if i >= len(step.in_slots):
            continue
        s = step.in_slots[i]
        if (s in fresh and s not in keep and s in step.free and step.in_slots.count(s) == 1
                and all(steps[r].op.name in _FRESH for r in readers[s] if r != k)):
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
        if step.op.name in _FRESH:
            fresh.add(step.out_base)
        out.append(step)
    return out
