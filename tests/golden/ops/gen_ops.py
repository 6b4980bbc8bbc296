"""Generate MXNet 1.9.1 golden outputs for the per-op case tables.

Run with the oracle's Python (never by the test suite):

    ~/.cache/gluonport-oracle/bin/python tests/golden/ops/gen_ops.py [family ...]

For each ``tests/ops/cases_<family>.py`` it builds the inputs from each case's specs with a
fixed seed, runs ``mx.nd.<op>`` in MXNet, and writes ``tests/golden/ops/<family>.npz`` with
``<case>/in<i>`` and ``<case>/out<i>`` arrays. Deterministic: re-running gives the same files.

A table may also define ``TRAIN_CASES`` (same format, unique names): those run under
``mx.autograd.train_mode()`` (BatchNorm batch statistics) and go into the same npz.
"""
import glob
import importlib.util
import os
import sys
import zlib

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CASES_DIR = os.path.join(HERE, "..", "..", "ops")


def make_input(spec, seed):
    if "value" in spec:
        return np.array(spec["value"], dtype=spec.get("dtype", "float32"))
    rng = np.random.RandomState(seed)
    dtype = spec.get("dtype", "float32")
    low, high = spec.get("low", -1.0), spec.get("high", 1.0)
    if np.dtype(dtype).kind in "iub":
        arr = rng.randint(int(low), int(high), size=spec["shape"])
    else:
        arr = rng.uniform(low, high, size=spec["shape"])
    return arr.astype(dtype)


def find_op(name):
    if name.startswith("_contrib_"):  # MXNet places _contrib_X at mx.nd.contrib.X
        return getattr(mx.nd.contrib, name[len("_contrib_"):])
    if name.startswith("_linalg_"):  # and _linalg_X at mx.nd.linalg.X (_linalg_syevd has no alias)
        return getattr(mx.nd.linalg, name[len("_linalg_"):])
    if name.startswith("_image_"):  # and _image_X at mx.nd.image.X only
        return getattr(mx.nd.image, name[len("_image_"):])
    if name.startswith("_npi_"):  # numpy-interface ops: mx.nd.numpy._internal, on mx.np arrays
        fn = getattr(mx.nd.numpy._internal, name[len("_npi_"):])
        return lambda *xs, **kw: fn(*[x.as_np_ndarray() for x in xs], **kw).as_nd_ndarray()
    for ns in (mx.nd, mx.nd._internal, mx.nd.contrib, mx.nd.op):
        if hasattr(ns, name):
            return getattr(ns, name)
    if name.startswith("_random_"):  # e.g. _random_uniform_like lives at mx.nd.random.uniform_like
        return getattr(mx.nd.random, name[len("_random_"):])
    raise AttributeError(name)


def run_case(case, arrays):
    seed = zlib.crc32(case["name"].encode()) & 0x7FFFFFFF
    ins = [make_input(s, seed + i) for i, s in enumerate(case["inputs"])]
    mx.random.seed(seed)
    out = find_op(case["op"])(*[mx.nd.array(x, dtype=x.dtype) for x in ins],
                              **case.get("attrs", {}))
    outs = out if isinstance(out, (list, tuple)) else [out]
    for i, x in enumerate(ins):
        arrays["%s/in%d" % (case["name"], i)] = x
    sel = case.get("compare")
    for i, o in enumerate(outs):
        out = o.asnumpy()
        if isinstance(sel, list) and i not in sel:
            # not compared (MXNet may leave it unwritten): zeros keep the file deterministic
            out = np.zeros_like(out)
        arrays["%s/out%d" % (case["name"], i)] = out


def run_family(family):
    path = os.path.join(CASES_DIR, "cases_%s.py" % family)
    spec = importlib.util.spec_from_file_location("cases_" + family, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    arrays = {}
    for case in mod.CASES:
        run_case(case, arrays)
    for case in getattr(mod, "TRAIN_CASES", []):
        with mx.autograd.train_mode():
            run_case(case, arrays)
    target = os.path.join(HERE, "%s.npz" % family)
    np.savez_compressed(target, **arrays)
    print("%s: %d cases -> %s" % (family, len(mod.CASES), target))


if __name__ == "__main__":
    families = sys.argv[1:] or sorted(
        os.path.basename(p)[6:-3] for p in glob.glob(os.path.join(CASES_DIR, "cases_*.py")))
    for fam in families:
        run_family(fam)
