"""Random ops: shapes and dtypes against MXNet 1.9.1 (tests/golden/ops/random.npz), and the
distributions, seeding and front-end dispatch checked statistically here."""

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import OpAttributeError, ShapeError
from gluonport.ndarray import invoke

N = 20000
R = mx.nd.random

# (id, sampler, expected mean, expected std): moments of MXNet's parametrisations
MOMENTS = [
    ("uniform", lambda: R.uniform(-1, 3, shape=N), 1.0, 4 / np.sqrt(12)),
    ("normal", lambda: R.normal(2, 0.5, shape=N), 2.0, 0.5),
    ("randn", lambda: R.randn(N, loc=-1, scale=3), -1.0, 3.0),
    ("gamma_scale_beta", lambda: R.gamma(2, 3, shape=N), 6.0, np.sqrt(2) * 3),
    ("exponential_scale", lambda: R.exponential(scale=2, shape=N), 2.0, 2.0),
    ("poisson", lambda: R.poisson(4, shape=N), 4.0, 2.0),
    ("negative_binomial", lambda: R.negative_binomial(3, 0.4, shape=N), 4.5, np.sqrt(11.25)),
    ("gen_negative_binomial", lambda: R.generalized_negative_binomial(2, 0.5, shape=N),
     2.0, 2.0),
    ("gen_negative_binomial_alpha0", lambda: R.generalized_negative_binomial(3, 0, shape=N),
     3.0, np.sqrt(3)),
    ("randint", lambda: R.randint(-3, 7, shape=N), 1.5, np.sqrt(99 / 12)),
    ("uniform_f64", lambda: R.uniform(0, 1, shape=N, dtype="float64"), 0.5, np.sqrt(1 / 12)),
    ("normal_f16", lambda: R.normal(0, 1, shape=N, dtype="float16"), 0.0, 1.0),
]


@pytest.mark.parametrize("sampler,mean,std", [m[1:] for m in MOMENTS],
                         ids=[m[0] for m in MOMENTS])
def test_moments(sampler, mean, std):
    mx.random.seed(11)
    x = sampler().asnumpy().astype(np.float64)
    assert x.shape == (N,)
    # 6 standard errors for the mean; 5% for the spread (N = 20000 gives ~1% noise)
    assert abs(x.mean() - mean) < 6 * std / np.sqrt(N), (x.mean(), mean)
    assert abs(x.std() - std) < 0.05 * std, (x.std(), std)


def test_sample_ops_use_one_distribution_per_element():
    mx.random.seed(3)
    mu, sigma = mx.nd.array([0.0, 10.0]), mx.nd.array([1.0, 2.0])
    x = R.normal(mu, sigma, shape=(N,)).asnumpy()
    assert x.shape == (2, N) and x.dtype == np.float32
    np.testing.assert_allclose(x.mean(axis=1), [0, 10], atol=0.1)
    np.testing.assert_allclose(x.std(axis=1), [1, 2], rtol=0.05)
    lo, hi = mx.nd.array([[0.0], [5.0]]), mx.nd.array([[1.0], [6.0]])
    u = R.uniform(lo, hi, shape=(1000,)).asnumpy()
    assert u.shape == (2, 1, 1000)
    assert (u[0] >= 0).all() and (u[0] < 1).all() and (u[1] >= 5).all() and (u[1] < 6).all()


def test_supports():
    mx.random.seed(5)
    assert set(np.unique(R.randint(2, 5, shape=1000).asnumpy())) == {2, 3, 4}
    u = R.uniform(-2, -1, shape=1000).asnumpy()
    assert (u >= -2).all() and (u < -1).all()
    p = R.poisson(0.5, shape=1000).asnumpy()
    assert p.dtype == np.float32 and (p >= 0).all() and (p == np.round(p)).all()
    assert (R.gamma(0.5, 1, shape=1000).asnumpy() > 0).all()
    assert (R.negative_binomial(2, 1.0, shape=10).asnumpy() == 0).all()  # p = 1: no failures
    assert (R.uniform(1, 1, shape=5).asnumpy() == 1).all()


def test_multinomial_frequencies_and_log_prob():
    mx.random.seed(9)
    probs = mx.nd.array([[0.1, 0.2, 0.7], [0.5, 0.0, 0.5]])
    idx, logp = R.multinomial(probs, shape=(N,), get_prob=True)
    idx, logp = idx.asnumpy(), logp.asnumpy()
    assert idx.shape == (2, N) and idx.dtype == np.int32 and logp.dtype == np.float32
    freq = np.stack([np.bincount(row, minlength=3) / N for row in idx])
    np.testing.assert_allclose(freq, probs.asnumpy(), atol=0.015)
    assert (idx[1] != 1).all()  # zero probability is never drawn
    np.testing.assert_allclose(logp, np.log(np.take_along_axis(probs.asnumpy(), idx, 1)))


def test_shuffle_permutes_first_axis_only():
    mx.random.seed(1)
    x = mx.nd.array(np.arange(40).reshape(20, 2))
    y = R.shuffle(x).asnumpy()
    assert sorted(map(tuple, y.tolist())) == sorted(map(tuple, x.asnumpy().tolist()))
    assert (y[:, 1] - y[:, 0] == 1).all()  # rows stay whole
    assert not np.array_equal(y, x.asnumpy())
    assert np.array_equal(x.asnumpy(), np.arange(40).reshape(20, 2))  # input untouched
    assert mx.nd.shuffle is not None and mx.nd.shuffle(x).shape == (20, 2)


# --- seeding ----------------------------------------------------------------------------------
def test_seed_makes_runs_repeatable_and_calls_independent():
    mx.random.seed(42)
    a, b = R.uniform(shape=50).asnumpy(), R.uniform(shape=50).asnumpy()
    mx.random.seed(42)
    a2, b2 = R.uniform(shape=50).asnumpy(), R.uniform(shape=50).asnumpy()
    assert np.array_equal(a, a2) and np.array_equal(b, b2)
    assert not np.array_equal(a, b)  # successive calls draw new numbers
    assert abs(np.corrcoef(a, b)[0, 1]) < 0.5
    mx.random.seed(43)
    assert not np.array_equal(R.uniform(shape=50).asnumpy(), a)


def test_seed_covers_every_op_and_the_executor():
    sym = mx.sym.random.normal(shape=(4,))
    mx.random.seed(8, ctx=mx.cpu())
    first = [sym.eval()[0].asnumpy(), R.randint(0, 100, shape=4).asnumpy(),
             R.shuffle(mx.nd.arange(6)).asnumpy()]
    again = sym.eval()[0].asnumpy()
    mx.random.seed(8)
    second = [sym.eval()[0].asnumpy(), R.randint(0, 100, shape=4).asnumpy(),
              R.shuffle(mx.nd.arange(6)).asnumpy()]
    for x, y in zip(first, second):
        assert np.array_equal(x, y)
    assert not np.array_equal(first[0], again)  # each forward samples anew


@pytest.mark.parametrize("bad", [1.5, "7", None, True])
def test_seed_rejects_non_integers(bad):
    with pytest.raises(ValueError, match="seed_state must be int"):
        mx.random.seed(bad)


def test_mx_random_forwards_to_nd_random():
    assert mx.random.uniform is mx.nd.random.uniform
    assert mx.random.multinomial is mx.nd.random.multinomial
    assert "normal" in dir(mx.random)
    with pytest.raises(AttributeError):
        mx.random.not_a_sampler  # noqa: B018


# --- front ends and defaults ------------------------------------------------------------------
def test_imperative_defaults():
    x = R.uniform()
    assert x.shape == (1,) and x.dtype == np.float32 and x.context == mx.cpu()
    assert R.randint(0, 5, shape=(2, 2)).dtype == np.int32
    assert R.randint(0, 5, shape=2, dtype="int64").dtype == np.int64
    assert R.normal(shape=(2,), dtype="float64").dtype == np.float64
    assert R.uniform(shape=2, ctx=mx.gpu(1)).context == mx.gpu(1)
    out = mx.nd.zeros((2, 3), dtype="float64")
    assert R.uniform(out=out) is out and out.asnumpy().std() > 0
    assert mx.nd.random_uniform(shape=(3,)).shape == (3,)  # op alias at the top level
    assert mx.nd.sample_normal(mx.nd.zeros(2), mx.nd.ones(2), shape=3).shape == (2, 3)
    assert mx.nd.random.uniform_like(mx.nd.zeros((2, 2), dtype="float16")).dtype == np.float16


@pytest.mark.parametrize("call,match", [
    (lambda: R.normal(0, 0, shape=2), "scale must be positive"),
    (lambda: R.uniform(2, 1, shape=2), "low must be less or equal to high"),
    (lambda: R.exponential(scale=-1, shape=2), "lam must be positive"),
    (lambda: R.poisson(-1, shape=2), "non-negative"),
    (lambda: R.gamma(0, 1, shape=2), "alpha and beta must be positive"),
    (lambda: R.randint(5, 2, shape=2), "low must be less or equal to high"),
    (lambda: R.uniform(mx.nd.zeros(2), 1.0), "all be NDArrays or all numbers"),
    (lambda: R.uniform(0, mx.nd.ones(2)), "all be numbers or all NDArrays"),
    (lambda: R.normal("0", 1), "NDArrays or numbers"),
    (lambda: R.uniform(shape=2, dtype="int32"), "dtype"),
])
def test_bad_parameters_raise(call, match):
    with pytest.raises(OpAttributeError, match=match):
        call()


def test_random_op_without_shape_raises():
    with pytest.raises(ShapeError, match="shape"):
        invoke("_random_uniform", (), {})


def test_sym_random_dispatch_and_json():
    s = mx.sym.random.uniform(shape=(2, 3), name="u")
    node = s.tojson()
    assert '"op": "_random_uniform"' in node
    assert '"shape": "(2, 3)"' in node and '"low": "0"' in node and '"high": "1"' in node
    assert s.infer_shape()[1] == [(2, 3)] and s.infer_type()[1] == [np.float32]
    lo, hi = mx.sym.var("lo"), mx.sym.var("hi")
    t = mx.sym.random.uniform(lo, hi, shape=(2,))
    assert t.list_arguments() == ["lo", "hi"]
    assert t.infer_shape(lo=(3,))[1] == [(3, 2)]
    assert '"op": "_sample_uniform"' in t.tojson()
    m = mx.sym.random.multinomial(mx.sym.var("d"), get_prob=True)
    assert len(m.list_outputs()) == 2
    assert m.infer_shape(d=(4, 5))[1] == [(4,), (4,)]
    assert m.infer_type(d=np.float64)[1] == [np.int32, np.float64]
