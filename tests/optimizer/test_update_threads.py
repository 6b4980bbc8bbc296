"""The fused updates split a large array over threads (``OMP_NUM_THREADS``): the result must be
the same bit for bit as one pass over the whole array, and a forked child must not reuse the
parent's pool (whose threads do not exist there)."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest

import gluonport as mx
from gluonport.ops.optimizer import update

N = 9 * update._PARALLEL_MIN + 12345  # several runs of blocks and a ragged last block


def _arrays():
    rs = np.random.RandomState(0)
    return [rs.randn(N).astype(np.float32) for _ in range(3)]


def _want(w, g, mom, lr=0.01, wd=1e-4, momentum=0.9, rescale=0.5):
    """MXNet's sgd_mom_update in its operation order, whole arrays at once."""
    f = np.float32
    mom = f(momentum) * mom - (f(lr) * f(wd)) * w
    mom = mom - (f(lr) * f(rescale)) * g
    return w + mom, mom


@pytest.mark.parametrize("threads", ["1", "3", "16"])
def test_threaded_sgd_mom_update_is_bit_identical(threads, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", threads)
    w, g, mom = _arrays()
    want_w, want_mom = _want(w, g, mom)
    weight, state = mx.nd.array(w), mx.nd.array(mom)
    mx.nd.sgd_mom_update(weight, mx.nd.array(g), state, out=weight, lr=0.01, wd=1e-4,
                         momentum=0.9, rescale_grad=0.5)
    np.testing.assert_array_equal(weight.asnumpy(), want_w)
    np.testing.assert_array_equal(state.asnumpy(), want_mom)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_forked_child_updates_with_its_own_pool(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "4")
    w, g, mom = _arrays()
    want_w, _ = _want(w, g, mom)
    update.sgd_into(w.copy(), w.copy(), g, mom.copy(), np.float32, 0.01, 1e-4, 0.9, 0.5, -1.0)
    assert update._pool is not None  # the parent made its pool
    pid = os.fork()
    if pid == 0:  # the child: the same update, with the parent's pool gone
        code = 1
        signal.alarm(60)  # a submit to the parent's dead pool would wait forever
        try:
            ww = w.copy()
            update.sgd_into(ww, ww, g, mom.copy(), np.float32, 0.01, 1e-4, 0.9, 0.5, -1.0)
            code = 0 if np.array_equal(ww, want_w) else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
