"""Write ``mxnet_op_names.json``: every operator name MXNet 1.9.1 registers (aliases included),
as ``mx.operator.get_all_registered_operators()`` lists them.

    ~/.cache/gluonport-oracle/bin/python tests/golden/ops/gen_mxnet_op_names.py

``tests/ops/test_coverage.py`` holds gluonport's registry to it: every op and alias gluonport
registers (``_backward_*`` kernels aside, which only live in backward graphs) is one MXNet 1.9.1
has, so a graph gluonport writes -- an ONNX import included -- names only ops MXNet 1.9.1 can
load.
"""
import json
import os

import mxnet as mx

names = sorted(mx.operator.get_all_registered_operators())
assert mx.__version__ == "1.9.1", mx.__version__
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mxnet_op_names.json")
with open(path, "w") as f:
    f.write("[\n" + ",\n".join(json.dumps(n) for n in names) + "\n]\n")
print(len(names), "names ->", path)
