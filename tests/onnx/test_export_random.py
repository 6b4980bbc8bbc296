"""ONNX export of the random family (gluonport/ops/random.py). Random numbers cannot match, so
every case of tests/ops/cases_random.py is checked for the shapes and dtypes of MXNet 1.9.1's
outputs, and the distributions statistically, at opset 13 and the newest.

onnxruntime has kernels for ONNX's random operators only up to opset 21 (see
gluonport/ops/random.py): models of a newer opset run here in onnx's reference evaluator.

Every row of the case table is exported (lowest and newest opset, weights as inputs and as
initializers) and imported back by the op test driver, tests/ops/test_ops.py; this file
keeps the export checks a row cannot express.
"""

import numpy as np
import pytest

import gluonport as mx
from gluonport.onnx import export_symbol
from tests.onnx._export_check import OPSETS, run_ort

ORT_MAX_RANDOM_OPSET = 21


def run(model, feed=None) -> list[np.ndarray]:
    feed = feed or {}
    if model.opset_import[0].version <= ORT_MAX_RANDOM_OPSET:
        return run_ort(model, feed)
    from onnx.reference import ReferenceEvaluator

    ref = ReferenceEvaluator(model)
    return ref.run(None, {k: v for k, v in feed.items() if k in ref.input_names})


# --- distributions ------------------------------------------------------------------------------
N = 20000


def _draw(sym, opset, feed=None, **kw):
    feed = feed or {}
    model = export_symbol(sym, {}, in_shapes={k: v.shape for k, v in feed.items()},
                          in_types={k: v.dtype for k, v in feed.items()}, opset_version=opset,
                          **kw)
    return run(model, feed)


def _moments(x, mean, std):
    """6 standard errors for the mean, 5% for the spread (N = 20000: ~1% noise)."""
    x = np.asarray(x, np.float64)
    assert abs(x.mean() - mean) < 6 * std / np.sqrt(x.size), (x.mean(), mean)
    assert abs(x.std() - std) < 0.05 * std, (x.std(), std)


def _without_clamped_tail(x, mean):
    """Exponential draws below 20 x mean (all but the clamped ones).

    A float32 uniform draw that rounds up to 1 gives -log(float tiny) * mean (87 x mean, the
    exported clamp, instead of inf): about 3e-8 per draw, yet one such value moves the spread of
    20,000 samples by 18%. A true exponential passes 20 x mean with probability e^-20, so the
    moments are taken below that, and the values above must be rare."""
    x = np.asarray(x, np.float64).ravel()
    tail = x > 20 * mean
    assert tail.sum() <= 2, np.sort(x)[-5:]
    return x[~tail]


R = mx.sym.random
MOMENTS = [
    ("uniform", lambda: R.uniform(-1, 3, shape=(N,)), 1.0, 4 / np.sqrt(12), (-1, 3)),
    ("uniform_f16", lambda: R.uniform(0, 2, shape=(N,), dtype="float16"), 1.0, 2 / np.sqrt(12),
     (0, 2)),
    ("normal", lambda: R.normal(2, 0.5, shape=(N,), dtype="float64"), 2.0, 0.5, None),
    ("exponential", lambda: R.exponential(scale=1 / 3, shape=(N,)), 1 / 3, 1 / 3, (0, None)),
    ("randint", lambda: R.randint(-3, 7, shape=(N,)), 1.5, np.sqrt(99 / 12), (-3, 6)),
]


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("make,mean,std,bounds", [m[1:] for m in MOMENTS],
                         ids=[m[0] for m in MOMENTS])
def test_moments(make, mean, std, bounds, opset):
    (x,) = _draw(make(), opset)
    assert x.shape == (N,)
    exponential = bounds == (0, None)
    _moments(_without_clamped_tail(x, mean) if exponential else x, mean, std)
    if bounds:
        lo, hi = bounds
        assert x.min() >= lo and (hi is None or x.max() <= hi)


def test_randint_support():
    (x,) = _draw(R.randint(2, 5, shape=(1000,), dtype="int64"), 17)
    assert x.dtype == np.int64 and set(np.unique(x)) == {2, 3, 4}


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("op,attrs,mean,std", [
    ("_random_uniform_like", {"low": 1, "high": 2}, 1.5, 1 / np.sqrt(12)),
    ("_random_normal_like", {"loc": -1, "scale": 3}, -1.0, 3.0),
    ("_random_exponential_like", {"lam": 0.5}, 2.0, 2.0)])
@pytest.mark.parametrize("dtype", ["float16", "float64"])
def test_like_dynamic_batch(op, attrs, mean, std, dtype, opset):
    """Draws of the input's run-time shape and dtype."""
    x = mx.sym.var("x")
    sym = mx.sym.invoke(op, [x], attrs)
    model = export_symbol(sym, {}, in_shapes=[(2, 5)], in_types=[dtype], opset_version=opset,
                          dynamic_axes={"x": {0: "n"}})
    (y,) = run(model, {"x": np.zeros((N // 5, 5), dtype)})
    assert y.shape == (N // 5, 5) and y.dtype == dtype
    _moments(_without_clamped_tail(y, mean) if "exponential" in op else y, mean, std)


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("dynamic", [False, True])
def test_sample_ops_one_distribution_per_element(dynamic, opset):
    lo, hi = np.array([[0.0], [5.0]], np.float32), np.array([[1.0], [6.0]], np.float32)
    mu, sigma = np.array([0.0, 10.0]), np.array([1.0, 2.0])
    scale = np.array([1.0, 4.0], np.float32)  # exponential(scale): _sample_exponential(1/scale)
    cases = [(R.uniform(mx.sym.var("a"), mx.sym.var("b"), shape=(N,)), {"a": lo, "b": hi}),
             (R.normal(mx.sym.var("a"), mx.sym.var("b"), shape=(N,)), {"a": mu, "b": sigma}),
             (R.exponential(mx.sym.var("a"), shape=(N,), dtype="float16"), {"a": scale})]
    outs = []
    for sym, feed in cases:
        axes = {k: {0: "n"} for k in feed} if dynamic else None
        outs.append(_draw(sym, opset, feed, dynamic_axes=axes)[0])
    u, n, e = outs
    assert u.shape == (2, 1, N) and u.dtype == np.float32
    # [low, high) in exact arithmetic; a float32 draw can round up to high (in MXNet too, and
    # in onnx's reference evaluator, which casts float64 draws): about once in 10^7
    assert (u[0] >= 0).all() and (u[0] <= 1).all() and (u[1] >= 5).all() and (u[1] <= 6).all()
    assert (u[0] < 1).mean() > 0.999 and (u[1] < 6).mean() > 0.999
    assert n.shape == (2, N) and n.dtype == np.float32
    for row, m, s in zip(n, mu, sigma):
        _moments(row, m, s)
    assert e.shape == (2, N) and e.dtype == np.float16
    for row, mean in zip(e, scale):
        _moments(_without_clamped_tail(row, mean), mean, mean)


@pytest.mark.filterwarnings("ignore:divide by zero")  # the reference evaluator's log(0)
@pytest.mark.parametrize("opset", OPSETS)
def test_multinomial_frequencies_follow_mxnet_rule(opset):
    """Rows need not sum to 1: the drawn index is the first whose running sum reaches the draw,
    else the last ([0.2, 0.2, 0] gives 0, 1 and 2 with 0.2, 0.2 and 0.6)."""
    probs = np.array([[0.1, 0.2, 0.7], [0.5, 0.5, 0.0], [0.2, 0.2, 0.0]], np.float32)
    sym = mx.sym.sample_multinomial(mx.sym.var("p"), shape=(N,), get_prob=True)
    model = export_symbol(sym, {}, in_shapes=[(2, 3)], opset_version=opset,
                          dynamic_axes={"p": {0: "rows"}})
    idx, logp = run(model, {"p": probs})
    assert idx.shape == (3, N) and idx.dtype == np.int32 and logp.dtype == np.float32
    freq = np.stack([np.bincount(r, minlength=3) / N for r in idx])
    want = np.array([[0.1, 0.2, 0.7], [0.5, 0.5, 0.0], [0.2, 0.2, 0.6]])
    np.testing.assert_allclose(freq, want, atol=0.02)
    with np.errstate(divide="ignore"):
        np.testing.assert_allclose(logp, np.log(np.take_along_axis(probs, idx, 1)), rtol=1e-6)


def _sessions(model):
    """A function running ``model`` again and again in one session."""
    if model.opset_import[0].version <= ORT_MAX_RANDOM_OPSET:
        import onnxruntime as ort

        sess = ort.InferenceSession(model.SerializeToString(),
                                    providers=["CPUExecutionProvider"])
        return lambda feed: sess.run(None, feed)
    from onnx.reference import ReferenceEvaluator

    ref = ReferenceEvaluator(model)
    return lambda feed: ref.run(None, feed)


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("dynamic", [False, True])
def test_shuffle_is_a_permutation_of_rows(dynamic, opset):
    x = np.arange(150, dtype=np.float32).reshape(50, 3)
    sym = mx.sym.shuffle(mx.sym.var("x"))
    axes = {"x": {0: "n"}} if dynamic else None
    model = export_symbol(sym, {}, in_shapes=[(7, 3)] if dynamic else [x.shape],
                          opset_version=opset, dynamic_axes=axes)
    again = _sessions(model)
    seen = set()
    for _ in range(3):
        (y,) = again({"x": x})
        np.testing.assert_array_equal(y[np.argsort(y[:, 0])], x)
        seen.add(tuple(y[:, 0]))
    assert len(seen) == 3  # fresh draws at each run (50! orders)
