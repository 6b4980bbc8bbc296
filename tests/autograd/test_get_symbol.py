"""``mx.autograd.get_symbol`` against MXNet 1.9.1 (issue 14).

tests/golden/autograd/get_symbol_script.py records three computations (FullyConnected, relu,
a scalar op, split with its second output as the head; a constant input and ops given
attributes; a variable shared by two ops); gen_get_symbol.py saved the symbol JSON MXNet 1.9.1
returns for each. MXNet names nodes when it records them, with process-wide counters
(``node_<n>``, ``var<n>`` for marked arrays, ``null<n>`` for constants), so the script runs in
a fresh interpreter here, as it did there, and the JSON must be equal: nodes, names, attribute
strings, inputs, heads.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import GluonportError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDEN = os.path.join(ROOT, "tests", "golden", "autograd")


def test_symbol_json_equals_mxnet():
    code = ("import json, os; from tests._ported import load_ported; "
            "print(json.dumps(load_ported(os.path.join('tests', 'golden', 'autograd', "
            "'get_symbol_script.py')).run()))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    ours = {k: json.loads(v) for k, v in json.loads(done.stdout.splitlines()[-1]).items()}
    with open(os.path.join(GOLDEN, "get_symbol_golden.json"), encoding="utf-8") as f:
        want = json.load(f)
    assert sorted(ours) == sorted(want)
    for case in want:
        assert ours[case] == want[case], case


def test_symbol_runs_to_the_recorded_value():
    x = mx.nd.array(np.arange(6, dtype="float32").reshape(2, 3) / 6)
    w = mx.nd.array(np.ones((4, 3), dtype="float32") * 0.5)
    x.attach_grad()
    w.attach_grad()
    with mx.autograd.record():
        y = mx.nd.tanh(mx.nd.FullyConnected(x, w, no_bias=True, num_hidden=4)) * 3.0
    sym = mx.autograd.get_symbol(y)
    names = sym.list_arguments()
    assert len(names) == 2 and all(n.startswith("var") for n in names)
    got = sym.eval(**dict(zip(names, (x, w))))[0]
    np.testing.assert_array_equal(got.asnumpy(), y.asnumpy())


def test_variable_and_errors():
    x = mx.nd.ones((2,))
    x.attach_grad()
    sym = mx.autograd.get_symbol(x)
    assert sym.list_arguments()[0].startswith("var")
    with pytest.raises(GluonportError, match="not part of a computation graph"):
        mx.autograd.get_symbol(mx.nd.ones((2,)))
    with pytest.raises(GluonportError, match="expects an NDArray"):
        mx.autograd.get_symbol([1, 2])

    class Twice(mx.autograd.Function):
        def forward(self, a):
            return a * 2

        def backward(self, g):
            return g * 2

    with mx.autograd.record():
        z = Twice()(x) + 1
    with pytest.raises(GluonportError, match="without an operator"):
        mx.autograd.get_symbol(z)
