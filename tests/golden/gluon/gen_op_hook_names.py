"""Record, in MXNet 1.9.1 (the oracle), the names an op hook with ``monitor_all=True`` reports
for each op of the per-op case tables:

    ~/.cache/gluonport-oracle/bin/python tests/golden/gluon/gen_op_hook_names.py

For every case of ``tests/ops/cases_<family>.py`` it composes ``mx.sym.<op>`` on variables
``in0, in1, ...``, runs it in a ``CachedOp`` (inference) with the hook installed, feeds the
case's recorded inputs (``tests/golden/ops/<family>.npz``) and keeps, for that op's node, the
reported op name and the suffixes after ``<node name>_``: its input names (``data``/``weight``
where the op declares names, ``input0, input1, ...`` where it does not) then its output names
(``output``, ``mean``, ... or ``0, 1, ...``). Writes ``op_hook_names.json``: one entry per
(op, names) pattern, with the first case that showed it. Cases MXNet cannot run this way are
left out.
"""
import glob
import importlib.util
import json
import os

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CASES_DIR = os.path.join(HERE, "..", "..", "ops")
OPS_GOLDEN = os.path.join(HERE, "..", "ops")


def find_sym(name):
    if name.startswith("_contrib_"):
        return getattr(mx.sym.contrib, name[len("_contrib_"):])
    if name.startswith("_linalg_"):
        return getattr(mx.sym.linalg, name[len("_linalg_"):])
    if name.startswith("_image_"):
        return getattr(mx.sym.image, name[len("_image_"):])
    for ns in (mx.sym, mx.sym._internal, mx.sym.contrib, mx.sym.op):
        if hasattr(ns, name):
            return getattr(ns, name)
    if name.startswith("_random_"):
        return getattr(mx.sym.random, name[len("_random_"):])
    raise AttributeError(name)


# Ops the case tables have no runnable case for here (creation ops, which a CachedOp runs
# only beside an input; ops whose case front end differs): ``inputs`` are shapes.
EXTRA_CASES = [
    {"name": "zeros", "op": "_zeros", "attrs": {"shape": (2,)}, "inputs": []},
    {"name": "ones", "op": "_ones", "attrs": {"shape": (2,)}, "inputs": []},
    {"name": "full", "op": "_full", "attrs": {"shape": (2,), "value": 2.0}, "inputs": []},
    {"name": "arange", "op": "_arange", "attrs": {"start": 0.0, "stop": 3.0}, "inputs": []},
    {"name": "eye", "op": "_eye", "attrs": {"N": 2}, "inputs": []},
    {"name": "linspace", "op": "_linspace", "attrs": {"start": 0.0, "stop": 1.0, "num": 3},
     "inputs": []},
    {"name": "random_uniform", "op": "_random_uniform", "attrs": {"shape": (2,)}, "inputs": []},
    {"name": "random_normal", "op": "_random_normal", "attrs": {"shape": (2,)}, "inputs": []},
    {"name": "random_randint", "op": "_random_randint",
     "attrs": {"low": 0, "high": 3, "shape": (2,)}, "inputs": []},
    {"name": "random_exponential", "op": "_random_exponential", "attrs": {"shape": (2,)},
     "inputs": []},
    {"name": "random_gamma", "op": "_random_gamma", "attrs": {"shape": (2,)}, "inputs": []},
    {"name": "random_poisson", "op": "_random_poisson", "attrs": {"shape": (2,)}, "inputs": []},
    {"name": "random_negative_binomial", "op": "_random_negative_binomial",
     "attrs": {"shape": (2,)}, "inputs": []},
    {"name": "random_generalized_negative_binomial",
     "op": "_random_generalized_negative_binomial", "attrs": {"shape": (2,)}, "inputs": []},
    {"name": "all_finite", "op": "all_finite", "attrs": {}, "inputs": [(3,)]},
    {"name": "multi_all_finite", "op": "multi_all_finite", "attrs": {"num_arrays": 2},
     "inputs": [(2,), (2,)]},
    {"name": "argmax_channel", "op": "argmax_channel", "attrs": {}, "inputs": [(2, 3)]},
    {"name": "khatri_rao", "op": "khatri_rao", "attrs": {}, "inputs": [(2, 3), (2, 3)]},
    {"name": "batch_take", "op": "batch_take", "attrs": {}, "inputs": [(2, 3), (2,)]},
    {"name": "histogram", "op": "_histogram", "attrs": {"bin_cnt": 3, "range": (0.0, 1.0)},
     "inputs": [(4,)]},
    {"name": "amp_cast", "op": "amp_cast", "attrs": {"dtype": "float16"}, "inputs": [(2,)]},
    {"name": "amp_multicast", "op": "amp_multicast", "attrs": {"num_outputs": 2},
     "inputs": [(2,), (2,)]},
]


def probe(case, inputs):
    names = [f"in{i}" for i in range(len(inputs))]
    sym = find_sym(case["op"])(*[mx.sym.var(n) for n in names], name="n",
                               **case.get("attrs", {}))
    feed = dict(zip(names, inputs))
    if not inputs:  # a CachedOp needs an input: run the creation op beside one
        sym = mx.sym.Group([sym, mx.sym.var("in0")])
        feed = {"in0": np.zeros((1,), np.float32)}
    op = mx.nd.CachedOp(sym)
    seen = []
    op._register_op_hook(lambda n, o, a: seen.append((n.decode(), o.decode())), True)
    op(*[mx.nd.array(feed[n], dtype=feed[n].dtype) for n in sym.list_inputs()])
    mx.nd.waitall()
    mine = [(n[2:], o) for n, o in seen if n.startswith("n_")]
    return mine[0][1], [n for n, _ in mine]


def main():
    found = {}
    skipped = 0
    for path in sorted(glob.glob(os.path.join(CASES_DIR, "cases_*.py"))):
        family = os.path.basename(path)[6:-3]
        spec = importlib.util.spec_from_file_location("cases_" + family, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        golden = np.load(os.path.join(OPS_GOLDEN, family + ".npz"))
        for case in mod.CASES:
            n_in = len(case["inputs"])
            inputs = [golden[f"{case['name']}/in{i}"] for i in range(n_in)]
            try:
                op, names = probe(case, inputs)
            except Exception:  # noqa: BLE001 - an op MXNet cannot compose/run this way
                skipped += 1
                continue
            key = (case["op"], op, tuple(names))
            if key not in found:
                found[key] = {"family": family, "case": case["name"], "called": case["op"],
                              "op": op, "names": names}
    for case in EXTRA_CASES:
        inputs = [np.zeros(shape, np.float32) for shape in case["inputs"]]
        try:
            op, names = probe(case, inputs)
        except mx.base.MXNetError as err:  # no FGradient: a CachedOp will not build it
            print(f"{case['op']}: {str(err).strip().splitlines()[-1]}")
            continue
        found[(case["op"], op, tuple(names))] = {
            "family": "extra", "case": case["name"], "called": case["op"], "op": op,
            "names": names, "attrs": case["attrs"], "shapes": case["inputs"]}
    entries = sorted(found.values(), key=lambda e: (e["op"], e["family"], e["case"]))
    with open(os.path.join(HERE, "op_hook_names.json"), "w") as f:
        json.dump(entries, f, indent=0, sort_keys=True)
    print(f"{len(entries)} patterns, {skipped} cases skipped")


if __name__ == "__main__":
    main()
