"""``nd.contrib.foreach``, ``nd.contrib.while_loop`` and ``nd.contrib.cond``: MXNet 1.9.1's
imperative control flow (``python/mxnet/ndarray/contrib.py``), plain Python loops over NDArray
calls, so autograd records every step as ordinary ops. Their symbolic counterparts build the
``_foreach``/``_while_loop``/``_cond`` ops (``symbol/_control.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

from .._core import nested
from ..errors import ArgumentError, ShapeError
from .ndarray import NDArray

__all__ = ["foreach", "while_loop", "cond"]


def _flatten(args: Any, what: str) -> tuple[list[NDArray], Any]:
    def refuse(x: Any) -> NoReturn:
        raise ArgumentError(f"{what} must be a (nested) list of NDArray, but got {x!r} of "
                            f"type {type(x).__name__}")

    return nested.flatten(args, lambda x: ([x], 0) if isinstance(x, NDArray) else None,
                          refuse)


_regroup = nested.regroup


def foreach(body: Callable, data: Any, init_states: Any) -> tuple:
    """Run ``body`` on each slice of ``data`` along axis 0 (MXNet's ``nd.contrib.foreach``).

    ``out, states = body(data[i], states)`` (``data`` an NDArray or a list of them, sliced
    together); returns the outputs of every step stacked along a new axis 0, in the format
    ``body`` returned them, and the last states.
    """
    from . import stack

    _flatten(data, "foreach input")
    _flatten(init_states, "foreach states")
    single = isinstance(data, NDArray)
    n_iters = data.shape[0] if single else data[0].shape[0]
    states = init_states
    steps: list[list[NDArray]] = []
    out_fmt: Any = None
    for i in range(n_iters):
        eles = data[i] if single else [d[i] for d in data]
        outs, states = body(eles, states)
        outs, out_fmt = _flatten(outs, "foreach output")
        steps.append(outs)
    stacked = [stack(*items) for items in zip(*steps)]
    if out_fmt is None:  # no step ran: MXNet's regroup of nothing
        return [], states
    outputs, _ = _regroup(stacked, out_fmt)
    return outputs, states


def while_loop(cond: Callable, func: Callable, loop_vars: Any,
               max_iterations: Any = None) -> tuple:
    """MXNet's ``nd.contrib.while_loop``: while ``cond(*loop_vars)`` is true and fewer than
    ``max_iterations`` steps ran, ``step_output, loop_vars = func(*loop_vars)``.

    Returns ``(outputs, loop_vars)``: each step output stacked along axis 0 and padded to
    ``max_iterations`` rows (MXNet pads with ``nd.empty``, uninitialized memory; gluonport
    pads with zeros), and the final loop variables (an NDArray if one was given).
    """
    from . import concat, zeros

    if max_iterations is None:
        raise ArgumentError("max_iterations should be specified")
    max_iterations = nested.python_scalar(max_iterations, int, "max_iteration")
    if isinstance(loop_vars, NDArray):
        single, loop_vars = True, [loop_vars]
    else:
        single, loop_vars = False, list(loop_vars)
    if len(loop_vars) == 0:
        raise ArgumentError("loop_vars should contain at least one element")
    steps = 0
    outputs: list[list[NDArray]] = []
    out_fmt: Any = None
    while steps < max_iterations and nested.python_scalar(cond(*loop_vars), bool,
                                                    "Return value of cond"):
        step_output, new_vars = func(*loop_vars)
        step_output = [] if step_output is None else step_output
        new_vars = [] if new_vars is None else new_vars
        step_output = list(step_output) if isinstance(step_output, tuple) else step_output
        new_vars = [new_vars] if isinstance(new_vars, NDArray) else list(new_vars)
        if len(loop_vars) != len(new_vars):
            raise ArgumentError("The length of loop_vars should be consistent during the loop")
        loop_vars = new_vars
        step_output, out_fmt = _flatten(step_output, "while output")
        outputs.append(step_output)
        steps += 1
        if len(step_output) != len(outputs[0]):
            raise ArgumentError("Number of elements in step_output should be the same in each "
                                "step")
    stacked = []
    for k, items in enumerate(zip(*outputs), 1):
        items = [x.expand_dims(0) for x in items]
        if steps != max_iterations and items:
            shape = (max_iterations - steps,) + tuple(items[0].shape[1:])
            items.append(zeros(shape, ctx=items[0].context, dtype=items[0].dtype))
        try:
            stacked.append(concat(*items, dim=0))
        except ShapeError:
            shapes = "; ".join(f"step {i}: {x.shape}" for i, x in enumerate(items))
            raise ShapeError(f"shapes of the {k}-th elements of step_output are inconsistent: "
                             f"{shapes}") from None
    if out_fmt is not None:
        stacked, _ = _regroup(stacked, out_fmt)
    return stacked, (loop_vars[0] if single else loop_vars)


def cond(pred: Any, then_func: Callable, else_func: Callable) -> Any:
    """MXNet's ``nd.contrib.cond``: ``then_func()`` if the scalar ``pred`` is true, else
    ``else_func()``."""
    if nested.python_scalar(pred, bool, "pred"):
        return then_func()
    return else_func()
