"""Generate MXNet 1.9.1 goldens for the detection, roi and contrib case tables.

Run with the oracle's Python (never by the test suite):

    ~/.cache/gluonport-oracle/bin/python tests/golden/ops/gen_detection.py [family ...]

(families: detection, roi, contrib; default all three). This is ``gen_ops.py`` with one
addition: MXNet's Python front end exposes ``_contrib_X`` only as ``mx.nd.contrib.X`` and the
``_npx_*`` names only on ``mx.np`` arrays, so ops are looked up there too; an ``_npx_`` alias is
run as the operator it names (MXNet registers both names on one operator:
``NNVM_REGISTER_OP(_contrib_MultiBoxPrior).add_alias("_npx_multibox_prior")``).
Deterministic: re-running gives the same files.
"""
import importlib.util
import os
import sys

import mxnet as mx

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("gen_ops", os.path.join(HERE, "gen_ops.py"))
gen_ops = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen_ops)

NPX_ALIASES = {
    "_npx_multibox_prior": "_contrib_MultiBoxPrior",
    "_npx_multibox_detection": "_contrib_MultiBoxDetection",
    "_npx_multibox_target": "_contrib_MultiBoxTarget",
    "_npx_roi_pooling": "ROIPooling",
}
_plain_find_op = gen_ops.find_op


def find_op(name):
    name = NPX_ALIASES.get(name, name)
    if name.startswith("_contrib_") and hasattr(mx.nd.contrib, name[len("_contrib_"):]):
        return getattr(mx.nd.contrib, name[len("_contrib_"):])
    return _plain_find_op(name)


gen_ops.find_op = find_op

if __name__ == "__main__":
    for family in sys.argv[1:] or ["detection", "roi", "contrib"]:
        gen_ops.run_family(family)
