"""The blockwise, in-place update kernels (SGD, NAG, Adam, multi-tensor SGD) against whole-array
references written in MXNet's kernel order: bit-identical (``np.array_equal``), whether called
out of place or with ``out=weight`` (written straight into the weight), over sizes spanning
several blocks and non-contiguous weights."""

from __future__ import annotations

import numpy as np
import pytest

import gluonport as mx
from gluonport.ops.optimizer import update

F32 = np.float32
SIZES = [(7,), (3, 5), (2 * update._BLOCK + 5,)]


def _arr(rng, shape, dt, positive=False):
    a = rng.standard_normal(shape) * 3
    return (np.abs(a) if positive else a).astype(dt)


def _clip(x, b):
    return np.clip(x, -b, b)


def _ref_sgd_mom(w, g, mom, t, lr, wd, m, rs, cg):
    lr, wd, m, rs = t(lr), t(wd), t(m), t(rs)
    step = lr * _clip(rs * g, t(cg)) if cg >= 0 else (lr * rs) * g
    mom = m * mom - (lr * wd) * w - step
    return w + mom, mom


def _ref_sgd(w, g, t, lr, wd, rs, cg):
    lr, wd, rs = t(lr), t(wd), t(rs)
    step = lr * _clip(rs * g, t(cg)) if cg >= 0 else (lr * rs) * g
    return (F32(1.0) - lr * wd).astype(t) * w - step


def _ref_nag(w, g, mom, t, lr, wd, m, rs, cg, use_new):
    lr, wd, m, rs = t(lr), t(wd), t(m), t(rs)
    g = _clip(rs * g, t(cg)) if cg >= 0 else rs * g
    mom = m * mom
    new = w - mom + (m + t(1)) * (mom - lr * (g + wd * w))
    return new, mom - lr * (g + wd * (new if use_new else w))


def _ref_adam(w, g, mean, var, t, lr, wd, rs, cg, b1=0.9, b2=0.999, eps=1e-8):
    gr = g * t(rs) + w * t(wd)
    if cg >= 0:
        gr = _clip(gr, t(cg))
    mean = t(b1) * mean + (F32(1.0) - t(b1)).astype(t) * gr
    var = t(b2) * var + (F32(1.0) - t(b2)).astype(t) * gr * gr
    return w - t(lr) * mean / (np.sqrt(var) + t(eps)), mean, var


def _same(a, b):
    return np.array_equal(a, b) and np.array_equal(np.signbit(a), np.signbit(b))


@pytest.mark.parametrize("shape", SIZES)
@pytest.mark.parametrize("dt", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("cg, wd, rs", [(-1.0, 0.0, 1.0), (0.5, 1e-4, 1 / 32)])
@pytest.mark.parametrize("in_place", [False, True])
def test_single_tensor_updates_are_bit_identical(shape, dt, cg, wd, rs, in_place):
    rng = np.random.default_rng(0)
    w, g, mom, mean = (_arr(rng, shape, dt) for _ in range(4))
    var = _arr(rng, shape, dt, positive=True)
    t = np.dtype(dt).type
    kw = dict(lr=0.1, wd=wd, rescale_grad=rs, clip_gradient=cg)

    def call(op, *states, **extra):
        wn = mx.nd.array(w, dtype=dt)
        sn = [mx.nd.array(s, dtype=dt) for s in states]
        target = wn if in_place else mx.nd.zeros(shape, dtype=dt)
        getattr(mx.nd, op)(wn, mx.nd.array(g, dtype=dt), *sn, out=target, **kw, **extra)
        if not in_place:
            assert np.array_equal(wn.asnumpy(), w)  # the weight is left alone
        return target.asnumpy(), [s.asnumpy() for s in sn]

    got, _ = call("sgd_update")
    assert _same(got, _ref_sgd(w, g, t, 0.1, wd, rs, cg))
    got, (m_got,) = call("sgd_mom_update", mom, momentum=0.9)
    want, m_want = _ref_sgd_mom(w, g, mom, t, 0.1, wd, 0.9, rs, cg)
    assert _same(got, want) and _same(m_got, m_want)
    got, (m_got,) = call("nag_mom_update", mom, momentum=0.9)
    want, m_want = _ref_nag(w, g, mom, t, 0.1, wd, 0.9, rs, cg, use_new=in_place)
    assert _same(got, want) and _same(m_got, m_want)
    with np.errstate(all="ignore"):
        got, (mean_got, var_got) = call("adam_update", mean, var)
        want, mean_want, var_want = _ref_adam(w, g, mean, var, t, 0.1, wd, rs, cg)
    assert _same(got, want) and _same(mean_got, mean_want) and _same(var_got, var_want)


@pytest.mark.parametrize("in_place", [False, True])
def test_mp_sgd_mom_update_is_bit_identical(in_place):
    rng = np.random.default_rng(1)
    shape = SIZES[-1]
    w16, g16 = _arr(rng, shape, np.float16), _arr(rng, shape, np.float16)
    w32, mom = w16.astype(F32), _arr(rng, shape, F32)
    wn, mn, w32n = mx.nd.array(w16, dtype="float16"), mx.nd.array(mom), mx.nd.array(w32)
    target = wn if in_place else mx.nd.zeros(shape, dtype="float16")
    mx.nd.mp_sgd_mom_update(wn, mx.nd.array(g16, dtype="float16"), mn, w32n, out=target,
                            lr=0.1, wd=1e-4, momentum=0.9, clip_gradient=0.5)
    new, m_want = _ref_sgd_mom(w32, g16.astype(F32), mom, F32, 0.1, 1e-4, 0.9, 1.0, 0.5)
    assert _same(w32n.asnumpy(), new) and _same(mn.asnumpy(), m_want)
    assert _same(target.asnumpy(), new.astype(np.float16))


def test_multi_sgd_writes_into_the_weights_only_when_out_is_them():
    rng = np.random.default_rng(2)
    shapes = [(4, 3), SIZES[-1], (5,)]
    ws = [_arr(rng, s, F32) for s in shapes]
    gs = [_arr(rng, s, F32) for s in shapes]
    moms = [_arr(rng, s, F32) for s in shapes]
    kw = dict(lrs=(0.1, 0.05, 0.2), wds=(1e-4, 0.0, 1e-3), momentum=0.9, num_weights=3,
              rescale_grad=0.5, clip_gradient=1.0)
    want = [_ref_sgd_mom(w, g, m, F32, lr, wd, 0.9, 0.5, 1.0)
            for w, g, m, lr, wd in zip(ws, gs, moms, kw["lrs"], kw["wds"])]

    def run(out_of):
        wn = [mx.nd.array(w) for w in ws]
        mn = [mx.nd.array(m) for m in moms]
        args = [x for trip in zip(wn, [mx.nd.array(g) for g in gs], mn) for x in trip]
        out = out_of(wn)
        mx.nd.multi_sgd_mom_update(*args, out=out, **kw)
        return wn, mn, out

    wn, mn, _ = run(lambda wn: wn)  # MXNet's SGD optimizer's call: in place
    for (new, m_new), w_got, m_got in zip(want, wn, mn):
        assert _same(w_got.asnumpy(), new) and _same(m_got.asnumpy(), m_new)
    other = mx.nd.zeros(shapes[1])
    wn, _, out = run(lambda wn: [wn[0], other, wn[2]])
    assert np.array_equal(wn[1].asnumpy(), ws[1])  # not a target: untouched
    assert _same(other.asnumpy(), want[1][0]) and _same(wn[2].asnumpy(), want[2][0])


def test_non_contiguous_weight_updates_in_place():
    rng = np.random.default_rng(3)
    base = _arr(rng, (6, 8), F32)
    w, g = base[:, ::2], _arr(rng, (6, 4), F32)
    mom = _arr(rng, (6, 4), F32)
    want, m_want = _ref_sgd_mom(w.copy(), g, mom.copy(), F32, 0.1, 1e-4, 0.9, 1.0, -1.0)
    untouched = base[:, 1::2].copy()
    update.sgd_into(w, w, g, mom, F32, 0.1, 1e-4, 0.9, 1.0, -1.0)
    assert _same(w, want) and _same(mom, m_want)
    assert np.array_equal(base[:, 1::2], untouched)
