"""numpy scalars (float64, float32, int64) on either side of an NDArray or a Symbol, for every
Python operator MXNet 1.x defines (and ``//``, which it does not). gen_npscalar.py runs this in
MXNet 1.9.1; tests/core/test_numpy_scalars.py runs it with only the import changed."""
import operator

import mxnet as mx
import numpy as np

OPS = ["add", "sub", "mul", "truediv", "mod", "pow", "eq", "ne", "lt", "le", "gt", "ge",
       "floordiv"]
SCALARS = {"f64": np.float64(2.5), "f32": np.float32(0.5), "i64": np.int64(3)}


def _apply(name, lhs, rhs):
    try:
        return getattr(operator, name)(lhs, rhs)
    except TypeError:
        return "TypeError"


def run():
    # a fresh name counter, so node names do not depend on what ran before in the process
    with mx.name.NameManager():
        return _run()


def _run():
    out = {}
    x = mx.nd.array([[0.5, 1.0, 2.0], [3.0, 2.5, 4.0]])
    s = mx.sym.var("x")
    for name in OPS:
        for tag, scalar in SCALARS.items():
            for side in ("left", "right"):
                key = "%s_%s_%s" % (name, tag, side)
                args = (scalar, x) if side == "left" else (x, scalar)
                got = _apply(name, *args)
                out["nd_" + key] = got if isinstance(got, str) else (
                    type(got).__name__, got.asnumpy())
                args = (scalar, s) if side == "left" else (s, scalar)
                got = _apply(name, *args)
                out["sym_" + key] = got if isinstance(got, str) else (
                    type(got).__name__, got.tojson())
    return out
