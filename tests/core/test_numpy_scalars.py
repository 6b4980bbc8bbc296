"""numpy scalars on either side of NDArray and Symbol (issue: ``np.float64(2) - sym`` raised
"setting an array element with a sequence"). tests/golden/npscalar/npscalar_script.py, written
for MXNet, runs with only the import changed and must give MXNet 1.9.1's result types, NDArray
values/dtypes and byte-identical symbol JSON (op, node name, scalar attribute) for every operator
and numpy scalar type, on both sides; ``//`` (which MXNet lacks) is a TypeError everywhere."""

import os

import numpy as np
import pytest

import gluonport as mx
from tests._ported import load_golden, load_ported

HERE = os.path.join(os.path.dirname(__file__), "..", "golden", "npscalar")


@pytest.fixture(scope="module")
def results() -> dict:
    return load_ported(os.path.join(HERE, "npscalar_script.py")).run()


@pytest.fixture(scope="module")
def golden() -> tuple[dict, dict]:
    return load_golden(os.path.join(HERE, "npscalar_golden"))


def test_every_operator_scalar_type_and_side_is_covered(results, golden):
    _, texts = golden
    assert sorted(results) == sorted(texts)
    assert len(texts) == 13 * 3 * 2 * 2  # operators x scalar types x sides x classes


def test_ndarray_results_match_mxnet(results, golden):
    arrays, texts = golden
    for key, want in texts.items():
        if not key.startswith("nd_"):
            continue
        got = results[key]
        if want == "TypeError":
            assert got == "TypeError", key
            continue
        kind, value = got
        assert kind == want == "NDArray", key
        ref = arrays[key]
        assert value.dtype == ref.dtype and value.shape == ref.shape, key
        np.testing.assert_allclose(value, ref, rtol=1e-6, atol=0, err_msg=key)


def test_symbol_json_matches_mxnet(results, golden):
    _, texts = golden
    for key, want in texts.items():
        if key.startswith("sym_"):
            got = results[key]
            assert (got if isinstance(got, str) else list(got)) == want, key


@pytest.mark.parametrize("scalar", [np.float64(2), np.float32(2), np.int64(2)])
def test_left_scalar_symbol_evaluates(scalar):
    """``scalar - x`` bound and run: the reflected op, not the forward one."""
    x = mx.sym.var("x")
    feed = np.array([[1.0, 4.0], [0.5, 8.0]], dtype=np.float32)
    cases = {"sub": (scalar - x, 2 - feed), "div": (scalar / x, 2 / feed),
             "pow": (scalar ** x, 2 ** feed), "lt": (scalar < x, (2 < feed) * 1.0)}
    for name, (sym, want) in cases.items():
        assert isinstance(sym, mx.sym.Symbol), name
        got = sym.eval(x=mx.nd.array(feed))[0].asnumpy()
        np.testing.assert_allclose(got, want.astype(np.float32), rtol=1e-6, err_msg=name)


def test_numpy_ufuncs_refuse_symbols():
    with pytest.raises(TypeError):
        np.exp(mx.sym.var("x"))
