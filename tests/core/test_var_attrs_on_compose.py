"""MXNet's FSetInputVarAttrOnCompose: composing BatchNorm-family ops and PReLU gives their
moving-statistics / gamma variables MXNet's ``__init__`` attribute (unless they have one).

The reference is MXNet 1.9.1 itself: ``tests/golden/compose/gen_var_attrs.py`` ran the same
script there; every ``tojson()`` must match byte for byte.
"""

from __future__ import annotations

import json
import os

import pytest

from tests._ported import load_ported

HERE = os.path.join(os.path.dirname(__file__), "..", "golden", "compose")
with open(os.path.join(HERE, "var_attrs_golden.json"), encoding="utf-8") as _f:
    GOLDEN = json.load(_f)


@pytest.fixture(scope="module")
def ours() -> dict[str, str]:
    from gluonport import name

    with name.NameManager():
        return load_ported(os.path.join(HERE, "var_attrs_script.py")).cases()


@pytest.mark.parametrize("case", sorted(GOLDEN))
def test_tojson_matches_mxnet(ours, case):
    assert ours[case] == GOLDEN[case]


def test_symbol_api_conv_bn_matches_mxnet_file():
    """The graph of ``tests/golden/formats/symbol/conv_bn-symbol.json``, built with our sym API,
    saves to the same bytes (the moving statistics carry ``__init__``)."""
    import gluonport as mx

    data = mx.sym.var("data")
    conv = mx.sym.Convolution(data, kernel=(3, 3), num_filter=8, pad=(1, 1), name="conv1")
    bn = mx.sym.BatchNorm(conv, fix_gamma=False, eps=2e-5, name="bn1")
    act = mx.sym.Activation(bn, act_type="relu", name="relu1")
    pool = mx.sym.Pooling(act, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool1")
    flat = mx.sym.Flatten(pool, name="flatten1")
    fc = mx.sym.FullyConnected(flat, num_hidden=10, name="fc1")
    out = mx.sym.SoftmaxOutput(fc, name="softmax")
    path = os.path.join(HERE, "..", "formats", "symbol", "conv_bn-symbol.json")
    with open(path, encoding="utf-8") as f:
        assert out.tojson() == f.read()
