"""``gluon.Trainer`` and the Parameter gradient API against MXNet 1.9.1.

``tests/golden/training/trainer_script.py`` is MXNet code that sets known gradients (as
``backward`` would: written into each context's gradient buffer, data marked fresh), calls
``Trainer.step``/``allreduce_grads``/``update``/``save_states``/``load_states`` and records every
parameter and gradient; ``gen_trainer.py`` ran it in MXNet 1.9.1 (``trainer_golden.npz``, and
each error's type and message in ``trainer_golden.json``). Here the same text runs with
``import gluonport as mx`` (tests/_ported.py).

``callback_cases`` compares what ``mx.callback`` logs (Speedometer's speed masked) and the files
``do_checkpoint`` writes.

Tolerance: float32 within 4 ulp of MXNet's (relative to the array's largest magnitude near zero);
the values are in fact equal to rtol 1e-6. Messages must equal MXNet's text (the Trainer argument
message names the class's module, which differs).
"""

from __future__ import annotations

import json
import os
import pickle
import warnings

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import FormatError, GluonportError
from gluonport.gluon import Parameter, ParameterDict, Trainer
from gluonport.gluon.parameter import GradientUnavailableError
from gluonport.gluon.trainer import StaleGradientError, TrainerError
from tests._ported import load_ported

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "golden",
                    "training")


@pytest.fixture(scope="module")
def script():
    return load_ported(os.path.join(HERE, "trainer_script.py"))


@pytest.fixture(scope="module")
def golden():
    with np.load(os.path.join(HERE, "trainer_golden.npz")) as z:
        arrays = {k: z[k] for k in z.files}
    with open(os.path.join(HERE, "trainer_golden.json"), encoding="utf-8") as f:
        return arrays, json.load(f)


@pytest.fixture(scope="module")
def ours(script):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return script.run(sparse=False)


def assert_close(ours: np.ndarray, ref: np.ndarray, what: str, ulps: int = 4) -> None:
    ours = np.asarray(ours)
    assert ours.shape == ref.shape, f"{what}: shape {ours.shape} vs MXNet {ref.shape}"
    if ref.dtype.kind != "f":
        np.testing.assert_array_equal(ours, ref, err_msg=what)
        return
    big = np.max(np.abs(ref)) if ref.size else 0
    tol = ulps * np.maximum(np.spacing(np.abs(ref)), np.spacing(ref.dtype.type(big)) / 4)
    diff = np.abs(ours.astype(np.float64) - ref.astype(np.float64))
    bad = ~(diff <= tol)
    assert not bad.any(), (f"{what}: {int(bad.sum())} values differ from MXNet: ours "
                           f"{ours[bad][:3]}, MXNet {ref[bad][:3]}")


CASES = ["sgd_mom", "sgd_mults", "adam", "sched", "dev2_adam", "dev3_sgd", "local2_noupd",
         "nokv2", "kvobj2", "setlr", "split", "stale", "stale_kv", "nullreq", "zero",
         "st_sgd", "st_adam2", "callback"]


@pytest.mark.parametrize("case", CASES)
def test_matches_mxnet(case, ours, golden):
    arrays, _ = ours
    ref, _ = golden
    keys = [k for k in ref if k.split("/")[0] == case and not k.endswith("states_bytes")]
    assert keys, case
    for k in keys:
        assert k in arrays, f"{k}: not produced"
        assert_close(arrays[k], ref[k], k)


def test_no_extra_or_missing_results(ours, golden):
    arrays, _ = ours
    ref, _ = golden
    assert set(ref) - set(arrays) == {"kv/row_sparse_pull"}  # MXNet's sparse-only case
    assert set(arrays) <= set(ref)
    # every case above is checked by test_matches_mxnet or test_kvstore.py
    assert {k.split("/")[0] for k in ref} <= set(CASES) | {"kv"}


def test_messages_match_mxnet(ours, golden):
    _, msgs = ours
    _, ref = golden
    assert set(msgs) == set(ref)
    for key, (kind, text) in ref.items():
        our_kind, our_text = msgs[key]
        if kind == "ok":  # no error; callback_log/_files: what mx.callback logged and wrote
            assert (our_kind, our_text) == ("ok", text), key
            continue
        assert our_kind != "ok", f"{key}: MXNet raised {kind}, gluonport did not"
        if kind == "MXNetError":  # MXNet's C++ check text; ours says the same in words
            assert "Mixed key types are not allowed" in our_text, key
            continue
        assert our_text == text.replace("mxnet.", "gluonport."), key


def test_errors_are_gluonport_errors_and_builtin_kinds(script):
    """Each error is a GluonportError and the builtin MXNet raises (UserWarning for stale
    gradients, RuntimeError for a 'null' gradient, ValueError for bad arguments)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pd = script.make_params([mx.cpu(0)], grad_req={"fc_bias": "null"})
    tr = Trainer(pd, "sgd")
    with pytest.raises(StaleGradientError) as e:
        tr.step(1)
    assert isinstance(e.value, UserWarning) and isinstance(e.value, GluonportError)
    with pytest.raises(GradientUnavailableError) as e:
        pd["fc_bias"].grad()
    assert isinstance(e.value, RuntimeError)
    with pytest.raises(TrainerError) as e:
        Trainer("not params", "sgd")
    assert isinstance(e.value, ValueError)


def test_unknown_optimizer_and_argument():
    p = Parameter("w_weight", shape=(2,))
    p.initialize()
    with pytest.raises(GluonportError, match="Cannot find optimizer"):
        Trainer([p], "no_such_optimizer")
    with pytest.raises(GluonportError, match="momentumm"):
        Trainer([p], "sgd", {"momentumm": 0.9})


def test_dist_kvstore_is_a_clear_error():
    pd = ParameterDict()
    pd.get("w_weight", shape=(2,)).initialize(ctx=[mx.cpu(0)])
    tr = Trainer(pd, "sgd", kvstore="dist_sync")
    pd["w_weight"].data()._fresh_grad = True
    with pytest.raises(GluonportError, match="distributed kvstores are not provided"):
        tr.step(1)


def test_compression_refused_unless_none():
    pd = ParameterDict()
    pd.get("w_weight", shape=(2,)).initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    tr = Trainer(pd, "sgd", compression_params={"type": "2bit", "threshold": 0.5})
    with pytest.raises(GluonportError, match="2bit"):
        tr.step(1)
    tr = Trainer(pd, "sgd", compression_params={"type": "none"})
    for d in pd["w_weight"].list_data():
        d._fresh_grad = True
    tr.step(1)  # accepted


def test_mxnet_states_file_loads_and_continues(script, golden, tmp_path):
    """MXNet's own .states bytes (written by save_states in 1.9.1) load here; continuing gives
    MXNet's parameters (st_sgd/resumed*, already compared above, used our file; this uses
    MXNet's)."""
    ref, _ = golden
    for prefix, ctxs, opt, params in (("st_sgd", [mx.cpu(0)], "sgd",
                                       {"learning_rate": 0.1, "momentum": 0.9}),
                                      ("st_adam2", [mx.cpu(0), mx.cpu(1)], "adam",
                                       {"learning_rate": 0.01})):
        pd = script.make_params(ctxs)
        for n in pd.keys():
            pd[n].set_data(mx.nd.array(ref[f"{prefix}/step1/{n}/data0"]))
        tr = Trainer(pd, opt, dict(params))
        fname = tmp_path / f"{prefix}_from_mxnet.states"
        fname.write_bytes(ref[f"{prefix}/states_bytes"].tobytes())
        tr.load_states(str(fname))
        rs = np.random.RandomState(11)
        for s in range(2):
            script.fake_backward(pd, rs, ctxs)
            tr.step(4)
            for n in pd.keys():
                for j, c in enumerate(ctxs):
                    key = f"{prefix}/resumed{s}/{n}/data{j}"
                    assert_close(pd[n].data(c).asnumpy(), ref[key], key + " (MXNet's file)")
        assert tr.optimizer.num_update == int(ref[f"{prefix}/resumed_num_update"])


class _Boom:
    def __reduce__(self):
        return (os.system, ("echo pwned > /dev/null",))


def test_crafted_states_file_runs_nothing(tmp_path):
    p = Parameter("w_weight", shape=(2,))
    p.initialize()
    tr = Trainer([p], "sgd", {"learning_rate": 0.1})
    marker = tmp_path / "ran"
    payload = pickle.dumps(({0: None}, _Boom()))

    class _Touch:
        def __reduce__(self):
            return (open, (str(marker), "w"))
    for blob in (payload, pickle.dumps(_Touch()), b"not a pickle"):
        f = tmp_path / "evil.states"
        f.write_bytes(blob)
        before = tr.optimizer
        with pytest.raises(FormatError):
            tr.load_states(str(f))
        assert tr.optimizer is before
    assert not marker.exists()
    with pytest.raises(FormatError):
        tr.load_states(str(tmp_path / "missing.states"))


def test_save_states_round_trip_in_gluonport(tmp_path):
    pd = ParameterDict()
    pd.get("w_weight", shape=(3,)).initialize(ctx=[mx.cpu(0)])
    tr = Trainer(pd, "adam", {"learning_rate": 0.1})
    w = pd["w_weight"]
    w.grad()[:] = mx.nd.array([1.0, -2.0, 3.0])
    w.data()._fresh_grad = True
    tr.step(1)
    tr.save_states(str(tmp_path / "a.states"))
    tr2 = Trainer(pd, "sgd")
    tr2.load_states(str(tmp_path / "a.states"))
    assert type(tr2.optimizer).__name__ == "Adam"
    assert tr2.optimizer.param_dict[0] is w
    assert tr2.optimizer.num_update == 1


def test_parameter_grad_buffers():
    """initialize attaches one gradient per context; grad() is data.grad (the buffer backward
    fills); set_data keeps data and gradient objects; zero_grad works in place; reset_ctx,
    cast and deferred init give gradients too."""
    p = Parameter("w_weight", shape=(2, 3))
    p.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    datas, grads = p.list_data(), p.list_grad()
    assert len(grads) == 2 and all(g is d.grad for g, d in zip(grads, datas))
    assert p.grad(mx.cpu(1)) is grads[1] and grads[1].context == mx.cpu(1)
    grads[0][:] = 5
    p.set_data(mx.nd.ones((2, 3)))
    assert p.list_data()[0] is datas[0] and p.list_grad()[0] is grads[0]
    assert grads[0].asnumpy().sum() == 30
    p.zero_grad()
    assert p.list_grad()[0] is grads[0] and grads[0].asnumpy().sum() == 0
    p.reset_ctx([mx.cpu(2)])
    assert [g.context for g in p.list_grad()] == [mx.cpu(2)]
    np.testing.assert_array_equal(p.data(mx.cpu(2)).asnumpy(), np.ones((2, 3)))
    p.cast("float64")
    assert p.grad(mx.cpu(2)).dtype == np.float64 and p.grad(mx.cpu(2)) is p.data(
        mx.cpu(2)).grad
    p.grad_req = "null"
    with pytest.raises(GradientUnavailableError, match="grad_req='null'"):
        p.list_grad()
    p.zero_grad()  # nothing to do, as in MXNet
    p.grad_req = "add"
    assert p.grad(mx.cpu(2)).asnumpy().sum() == 0
    d = Parameter("d_weight", shape=(0, 3), allow_deferred_init=True)
    d.initialize(ctx=[mx.cpu(0)])
    d.shape = (4, 3)
    d._finish_deferred_init()
    assert d.grad().shape == (4, 3) and d.grad() is d.data().grad


def test_grad_req_add_accumulates_in_buffer():
    """grad_req='add': the buffer keeps what it holds (backward adds, zero_grad clears); the
    Trainer reads it and does not clear it (MXNet)."""
    pd = ParameterDict()
    w = pd.get("w_weight", shape=(2,), grad_req="add")
    w.initialize(ctx=[mx.cpu(0)])
    w.set_data(mx.nd.array([1.0, 1.0]))
    tr = Trainer(pd, "sgd", {"learning_rate": 1.0})
    w.grad()[:] = mx.nd.array([0.5, 0.25])
    w.data()._fresh_grad = True
    tr.step(1)
    np.testing.assert_array_equal(w.data().asnumpy(), [0.5, 0.75])
    np.testing.assert_array_equal(w.grad().asnumpy(), [0.5, 0.25])
    assert w.data()._fresh_grad is False


def test_trainer_params_forms_and_null_skipped():
    pd = ParameterDict()
    a = pd.get("a_weight", shape=(2,))
    b = pd.get("b_weight", shape=(2,), grad_req="null")
    pd.initialize(ctx=mx.cpu(0))
    for params in (pd, {"b": b, "a": a}, [a, b]):
        tr = Trainer(params, "sgd")
        assert [p.name for p in tr._params] == ["a_weight", "b_weight"]
        a.data()._fresh_grad = True
        before = b.data().asnumpy()
        tr.step(1)  # b (grad_req='null') is skipped, not reported stale
        np.testing.assert_array_equal(b.data().asnumpy(), before)


def test_new_values_reach_the_kvstore_copy(tmp_path):
    """With two contexts the update runs on the kvstore's copy of each weight; set_data and
    load_parameters after a step must replace that copy too (MXNet's set_data resets the
    store), else the next step would continue from the old weight. Gradient 1 on each of 2
    contexts, lr 0.1: each step subtracts 0.2."""
    net = mx.gluon.nn.Dense(2, in_units=3)
    net.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    tr = Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})

    def backward():
        for p in net.collect_params().values():
            for c in p.list_ctx():
                p.grad(c)[:] = 1
                p.data(c)._fresh_grad = True
    backward()
    tr.step(1)
    assert tr._update_on_kvstore
    net.save_parameters(str(tmp_path / "a.params"))
    saved = net.weight.data().asnumpy()
    net.weight.set_data(mx.nd.zeros((2, 3)))
    backward()
    tr.step(1)
    for c in (mx.cpu(0), mx.cpu(1)):
        np.testing.assert_allclose(net.weight.data(c).asnumpy(), np.full((2, 3), -0.2),
                                   rtol=1e-6)
    net.load_parameters(str(tmp_path / "a.params"), ctx=[mx.cpu(0), mx.cpu(1)])
    backward()
    tr.step(1)
    for c in (mx.cpu(0), mx.cpu(1)):
        np.testing.assert_allclose(net.weight.data(c).asnumpy(), saved - 0.2, rtol=1e-6)
