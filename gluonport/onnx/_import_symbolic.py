"""Shape vectors with named dims, for models exported with a dynamic batch.

PyTorch computes every ``view``/``reshape`` target at run time: ``x.view(x.size(0), -1)`` is
``Shape -> Gather -> Unsqueeze -> Concat -> Reshape``, and multi-head attention multiplies
``x.size(1) * num_heads``. With a dynamic batch these vectors are not constants, but their
entries are: ints, or named dims (``'N'``, the graph input's ``dim_param``), or arithmetic on
them (``'(N*4)'``, a new name whose formula is kept in ``exprs``). MXNet's ``Reshape`` takes
``0`` (copy a dim) and one ``-1``, so a vector of this kind is enough to build it.

Two helps to onnx shape inference, which leaves such Reshape outputs partly unknown (and at
opset 13, entirely unknown): the output shape of every Reshape is computed from its vector
(:func:`reshape_hints`), solving a ``-1`` whose value does not depend on the named dims by
evaluating the formulas at two sets of values (:func:`solve_reshape`).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

__all__ = ["try_symbolic", "known_vector", "solve_reshape", "reshape_hints", "merge_dims"]

_ARITH = {"Add": "+", "Sub": "-", "Mul": "*", "Div": "/"}
# values given to named dims when solving a Reshape's -1 (two trials; results must agree)
_TRIALS = ((101, 103, 107, 109, 113, 127, 131, 137, 139, 149, 151, 157),
           (211, 223, 227, 229, 233, 239, 241, 251, 257, 263, 269, 271))


def _attr(node: onnx.NodeProto, name: str, default):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def _sym_inputs(node: onnx.NodeProto, consts: dict, symbolic: dict) -> list | None:
    vals = []
    for n in node.input:
        if n in symbolic:
            vals.append(list(symbolic[n]))
        elif n in consts and consts[n].dtype.kind in "iu" and consts[n].ndim <= 1:
            vals.append([int(v) for v in consts[n].reshape(-1)])
        elif n:
            return None
        else:
            vals.append(None)
    return vals


def try_symbolic(node: onnx.NodeProto, consts: dict, types: dict, symbolic: dict,
                 exprs: dict) -> list | None:
    """A shape vector whose entries are ints or named dims (``'N'``), through the ops
    PyTorch's shape computations use: Shape, Gather, Unsqueeze, Squeeze, Concat, Slice, Cast,
    Identity (on axis 0 with constant indices) and Add/Sub/Mul/Div (new names, in ``exprs``)."""
    if node.op_type == "Shape":
        shape = types.get(node.input[0], (None, None))[1]
        if shape is None or any(d is None for d in shape):
            return None
        return list(shape[slice(_attr(node, "start", 0), _attr(node, "end", None))])
    ins = _sym_inputs(node, consts, symbolic)
    if ins is None or not any(n in symbolic for n in node.input):
        return None
    op = node.op_type
    if op in ("Unsqueeze", "Squeeze", "Cast", "Identity"):
        return ins[0]
    if op == "Concat" and _attr(node, "axis", 0) in (0, -1):
        return [d for part in ins for d in part]
    if op == "Gather" and _attr(node, "axis", 0) == 0 and len(ins) == 2:
        idx = consts.get(node.input[1])
        if idx is None or idx.ndim > 1:
            return None
        return [ins[0][int(i)] for i in idx.reshape(-1)]
    if op == "Slice" and len(ins) >= 3 and (len(ins) < 4 or ins[3] in ([0], [-1])):
        step = ins[4][0] if len(ins) > 4 and ins[4] else 1
        return ins[0][slice(ins[1][0], ins[2][0], step)]
    if op in _ARITH and len(ins) == 2 and all(ins):
        return _arith(op, ins[0], ins[1], exprs)
    return None


def _int_op(op: str, x: int, y: int) -> int | None:
    if op == "Div":  # ONNX's integer Div truncates toward zero
        return None if y == 0 else (abs(x) // abs(y)) * (1 if (x < 0) == (y < 0) else -1)
    return x + y if op == "Add" else x - y if op == "Sub" else x * y


def _arith(op: str, a: list, b: list, exprs: dict) -> list | None:
    """Elementwise shape arithmetic (``x.size(1) * heads``): ints where both sides are known,
    else a new dim name (``'(N*4)'``, its formula in ``exprs``) that matches no tensor's dim,
    so a Reshape takes it as its one ``-1``."""
    if len(a) != len(b) and 1 not in (len(a), len(b)):
        return None
    n = max(len(a), len(b))
    a, b = (a * n if len(a) == 1 else a), (b * n if len(b) == 1 else b)
    out: list = []
    for x, y in zip(a, b):
        if isinstance(x, int) and isinstance(y, int):
            out.append(_int_op(op, x, y))
        elif x is None or y is None:
            out.append(None)
        else:
            name = f"({x}{_ARITH[op]}{y})"
            exprs[name] = (op, x, y)
            out.append(name)
    return out


def known_vector(node: onnx.NodeProto, vec: list, types: dict) -> np.ndarray | None:
    """A shape vector whose entries all turned out to be ints (``x.size(2)`` of a dynamic-batch
    tensor), as the constant it is; None while any entry is a name or unknown."""
    if not all(isinstance(d, int) for d in vec):
        return None
    dtype, shape = types.get(node.output[0], (None, None))
    if shape is None or not all(isinstance(d, int) for d in shape) \
            or int(np.prod(shape, dtype=np.int64)) != len(vec):
        return None  # the rank (0-d scalar or vector) is not known
    return np.array(vec, dtype if dtype is not None else np.int64).reshape(shape)


def _eval(d, exprs: dict, env: dict, primes: tuple) -> int | None:
    if isinstance(d, int):
        return d
    if not isinstance(d, str):
        return None
    if d in exprs:
        op, x, y = exprs[d]
        vx, vy = _eval(x, exprs, env, primes), _eval(y, exprs, env, primes)
        return None if vx is None or vy is None else _int_op(op, vx, vy)
    if d not in env:
        if len(env) >= len(primes):
            return None
        env[d] = primes[len(env)]
    return env[d]


def solve_reshape(in_shape: tuple | None, target: list, allowzero: int, exprs: dict) -> list:
    """A Reshape's output dims from its target vector: ``0`` copies the input's dim, and a
    ``-1`` is solved when its value is the same whatever the named dims are (``(N*4, 1, 6)``
    to ``[N, 4, -1, 6]`` gives 1); unsolved entries are None."""
    out = [in_shape[i] if d == 0 and not allowzero and in_shape is not None
           and i < len(in_shape) else d for i, d in enumerate(target)]
    if out.count(-1) != 1 or in_shape is None or any(d is None for d in in_shape):
        return [None if d == -1 else d for d in out]
    values = set()
    for primes in _TRIALS:
        env: dict = {}
        dims = [_eval(d, exprs, env, primes) for d in in_shape]
        rest = [_eval(d, exprs, env, primes) for d in out if d != -1]
        if None in dims or None in rest:
            return [None if d == -1 else d for d in out]
        total, known = int(np.prod(dims, dtype=np.int64)), int(np.prod(rest, dtype=np.int64))
        values.add(total // known if known and total % known == 0 else None)
    value = values.pop() if len(values) == 1 else None
    return [value if d == -1 else d for d in out]


def merge_dims(inferred: tuple | None, hint: list) -> tuple:
    """Inference's dims, with ours where inference has none or only made up a name
    (``unk__3``)."""
    if inferred is None or len(inferred) != len(hint):
        return tuple(hint)
    out = []
    for i, h in zip(inferred, hint):
        made_up = i is None or (isinstance(i, str) and i.startswith("unk__"))
        out.append(h if made_up and h is not None else i)
    return tuple(out)


def reshape_hints(nodes: list, types: dict, consts: dict, symbolic: dict, exprs: dict
                  ) -> dict[str, tuple]:
    """Output shapes of the Reshape nodes whose target is a constant or a named-dim vector,
    where they tell more than onnx shape inference did."""
    hints = {}
    for node in nodes:
        if node.op_type != "Reshape" or len(node.input) < 2:
            continue
        shape_name = node.input[1]
        if shape_name in consts:
            target = [int(v) for v in consts[shape_name].reshape(-1)]
        elif shape_name in symbolic:
            target = list(symbolic[shape_name])
        else:
            continue
        in_shape = types.get(node.input[0], (None, None))[1]
        dims = solve_reshape(in_shape, target, _attr(node, "allowzero", 0), exprs)
        dtype, inferred = types.get(node.output[0], (None, None))
        merged = merge_dims(inferred, dims)
        if dtype is not None and merged != inferred:
            hints[node.output[0]] = (dtype, merged)
    return hints
