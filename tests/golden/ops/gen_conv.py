"""Generate MXNet 1.9.1 goldens for the conv and pool case tables.

Run with the oracle's Python (never by the test suite):

    ~/.cache/gluonport-oracle/bin/python tests/golden/ops/gen_conv.py [conv] [pool]

Identical to ``gen_ops.py`` (same fixed-seed inputs, same ``<case>/in<i>``, ``<case>/out<i>``
npz layout, deterministic), except that ``_contrib_X`` operators are also found as
``mx.nd.contrib.X`` (``_contrib_BilinearResize2D``, ``_contrib_AdaptiveAvgPooling2D``). It
also writes ``conv_pool_graph.json``: MXNet's symbol JSON of ``cases_conv.build_graph``.
"""
import os
import sys

import mxnet as mx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_ops  # noqa: E402

_find_op = gen_ops.find_op


def find_op(name):
    if name.startswith("_contrib_") and hasattr(mx.nd.contrib, name[len("_contrib_"):]):
        return getattr(mx.nd.contrib, name[len("_contrib_"):])
    return _find_op(name)


gen_ops.find_op = find_op


def write_graph():
    sys.path.insert(0, gen_ops.CASES_DIR)
    import cases_conv

    target = os.path.join(gen_ops.HERE, "conv_pool_graph.json")
    with open(target, "w") as f:
        f.write(cases_conv.build_graph(mx).tojson())
    print("graph ->", target)


if __name__ == "__main__":
    for family in sys.argv[1:] or ["conv", "pool"]:
        gen_ops.run_family(family)
    write_graph()
