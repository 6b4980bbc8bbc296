"""The optimizer API around the update arithmetic: names, multipliers, SGLD's noise, aliases."""

from __future__ import annotations

import numpy as np
import pytest

import gluonport as mx
from gluonport.ops import registry


def test_namespaces():
    assert mx.opt is mx.optimizer
    assert mx.optimizer.contrib.GroupAdaGrad is mx.optimizer.create("groupadagrad").__class__
    expected = {"sgd", "ccsgd", "nag", "signum", "ftml", "lars", "lbsgd", "lamb", "dcasgd",
                "sgld", "adam", "adagrad", "rmsprop", "adadelta", "ftrl", "adamax", "nadam",
                "test", "groupadagrad"}
    assert expected <= set(mx.optimizer.Optimizer.opt_registry)


@pytest.mark.parametrize("alias, name", [("_sparse_sgd_update", "sgd_update"),
                                         ("_sparse_sgd_mom_update", "sgd_mom_update"),
                                         ("_sparse_adam_update", "adam_update"),
                                         ("_sparse_ftrl_update", "ftrl_update")])
def test_sparse_aliases(alias, name):
    assert registry.canonical_name(alias) == name


def test_symbol_and_parameter_multipliers():
    s = mx.sym.var("w", lr_mult=2.0, wd_mult=0.5) + mx.sym.var("b")
    opt = mx.optimizer.create("sgd", sym=s, wd=0.1, learning_rate=0.2,
                              param_idx2name={0: "w", 1: "b"})
    assert opt.lr_mult == {"w": 2.0} and opt.wd_mult == {"w": 0.5, "b": 0.0}
    assert opt._get_lrs([0, 1]) == pytest.approx([0.4, 0.2])
    assert opt._get_wds([0, 1]) == pytest.approx([0.05, 0.0])
    p = mx.gluon.Parameter("x", shape=(2,), lr_mult=3.0, wd_mult=0.0)
    opt = mx.optimizer.create("adam", param_dict={0: p}, wd=0.1)
    assert opt._get_lrs([0]) == pytest.approx([0.003]) and opt._get_wds([0]) == [0.0]


def test_update_counts_and_begin_num_update():
    opt = mx.optimizer.create("adam", begin_num_update=10)
    u = mx.optimizer.get_updater(opt)
    w = mx.nd.ones((3,))
    for _ in range(2):
        u(0, mx.nd.ones((3,)), w)
    u(1, mx.nd.ones((2,)), mx.nd.ones((2,)))
    assert opt._index_update_count == {0: 12, 1: 11} and opt.num_update == 12


def test_multi_precision_keeps_a_float32_master():
    opt = mx.optimizer.create("sgd", momentum=0.9, multi_precision=True, learning_rate=1e-4)
    u = mx.optimizer.get_updater(opt)
    w = mx.nd.ones((4,), dtype="float16")
    for _ in range(10):
        u(0, mx.nd.ones((4,), dtype="float16"), w)
    mom, master = u.states[0]
    assert master.dtype == np.float32 and mom.dtype == np.float32 and w.dtype == np.float16
    assert master.asnumpy()[0] < 1.0 - 4e-4  # float16 alone could not move off 1.0 this finely
    np.testing.assert_array_equal(w.asnumpy(), master.asnumpy().astype(np.float16))


def test_sgld_noise_has_the_right_scale():
    mx.random.seed(3)
    lr = 0.01
    opt = mx.optimizer.create("sgld", learning_rate=lr)
    w = mx.nd.zeros((20000,))
    mx.optimizer.get_updater(opt)(0, mx.nd.ones((20000,)), w)
    x = w.asnumpy()
    assert abs(x.mean() - (-lr / 2)) < 4 * np.sqrt(lr) / np.sqrt(x.size)
    assert abs(x.std() - np.sqrt(lr)) < 0.05 * np.sqrt(lr)


def test_updater_with_lists_groups_by_dtype():
    opt = mx.optimizer.create("sgd", learning_rate=0.5)
    u = mx.optimizer.get_updater(opt)
    ws = [mx.nd.ones((2,)), mx.nd.ones((3,), dtype="float64"), mx.nd.ones((1,))]
    u([0, 1, 2], [mx.nd.ones(w.shape, dtype=w.dtype) for w in ws], ws)
    for w in ws:
        np.testing.assert_array_equal(w.asnumpy(), 0.5)
    assert ws[1].dtype == np.float64
