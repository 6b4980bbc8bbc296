"""MXNet's hand-written namespace functions (nd.maximum(x, 0), nd.power, nd.add ..., sym.pow,
sym.maximum, eye, linspace, split_v2, moveaxis, load_frombuffer) and F.* uses of them inside a
HybridBlock: tests/golden/ufunc/ufunc_script.py, written for MXNet, runs with only the import
changed and gives MXNet 1.9.1's values (rtol 1e-6; exact where the op is exact), dtypes, and
byte-identical symbol JSON (node names, ops, attribute strings)."""

import os

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import ArgumentError, GluonportError
from tests._ported import load_golden, load_ported

HERE = os.path.join(os.path.dirname(__file__), "..", "golden", "ufunc")


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict:
    module = load_ported(os.path.join(HERE, "ufunc_script.py"))
    cwd = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("ufunc"))
    try:
        return module.run()
    finally:
        os.chdir(cwd)


@pytest.fixture(scope="module")
def golden() -> tuple[dict, dict]:
    return load_golden(os.path.join(HERE, "ufunc_golden"))


@pytest.mark.filterwarnings("ignore:range is not specified")  # nd.histogram(a, bins=4), as MXNet
def test_values_and_dtypes_match_mxnet(results, golden):
    arrays, _ = golden
    assert sorted(k for k, v in results.items() if isinstance(v, np.ndarray)) == sorted(arrays)
    for name, want in arrays.items():
        got = results[name]
        assert got.shape == want.shape and got.dtype == want.dtype, name
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=0, err_msg=name)


def test_symbol_json_matches_mxnet(results, golden):
    _, texts = golden
    for name, want in texts.items():
        assert results[name] == want, name


def test_errors():
    x = mx.nd.ones((5, 2))
    with pytest.raises(ArgumentError, match="equal division"):
        mx.nd.split_v2(x, 2)
    with pytest.raises(ArgumentError, match="int or tuple"):
        mx.nd.split_v2(x, [1, 2])
    with pytest.raises(ArgumentError, match="same number"):
        mx.nd.moveaxis(x, [0, 1], [0])
    with pytest.raises(TypeError, match="not supported"):
        mx.nd.maximum(x, "a")
    with pytest.raises(TypeError, match="not supported"):
        mx.sym.maximum(mx.sym.var("x"), "a")
    with pytest.raises(GluonportError, match="Pillow or OpenCV"):
        mx.nd.imdecode(b"\xff\xd8")
    # MXNet's histogram front ends: bins an int or an array; symbol mode needs a range
    with pytest.raises(ArgumentError, match="integer or an NDArray"):
        mx.nd.histogram(x, bins=[0.0, 1.0])
    with pytest.raises(ArgumentError, match="null range"):
        mx.sym.histogram(mx.sym.var("a"), bins=3)
