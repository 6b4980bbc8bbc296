"""The backward model of an onnxruntime training step reads values its forward model computes
anyway (``gluonport/gluon/_reuse.py``): value numbering on hand-made models, then whole
training steps that take the path, against the same steps without it (bit for bit: the same
kernels compute the same values, only in the other model) and against the numpy executor
(float32 sums in another order: rtol 1e-4)."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import gluonport as mx
from gluonport import autograd, gluon
from gluonport.gluon import _reuse, _train_graph
from gluonport.onnx.opset import ir_version_for

F = TensorProto.FLOAT


def _models():
    """A forward model (x, w -> y, and a saved value s) and a backward model that recomputes
    x's channels-last rows (as an Einsum) and relu(x) (the saved value, under its own name)."""
    shape = [2, 3, 4, 4]
    perm = helper.make_node("Transpose", ["x"], ["xt"], perm=[0, 2, 3, 1])
    fwd = helper.make_graph([
        perm,
        helper.make_node("Reshape", ["xt", "rows_shape"], ["rows"]),
        helper.make_node("MatMul", ["rows", "w"], ["y"]),
        helper.make_node("Relu", ["x"], ["s"]),
        helper.make_node("RandomUniformLike", ["x"], ["u"], seed=1.0),
        helper.make_node("Mul", ["x", "u"], ["noise"]),
    ], "fwd", [helper.make_tensor_value_info("x", F, shape),
               helper.make_tensor_value_info("w", F, [3, 5])],
        [helper.make_tensor_value_info(n, F, None) for n in ("y", "s", "noise")],
        [numpy_helper.from_array(np.array([-1, 3], np.int64), "rows_shape")])
    bwd = helper.make_graph([
        helper.make_node("Einsum", ["x"], ["xt2"], equation="abcd->acdb"),  # = Transpose xt
        helper.make_node("Reshape", ["xt2", "shape2"], ["rows2"]),  # reshapes stay here
        helper.make_node("MatMul", ["og_t", "rows2"], ["dw_t"]),
        helper.make_node("Transpose", ["dw_t"], ["dw"], perm=[1, 0]),
        helper.make_node("Relu", ["x"], ["r2"]),  # the saved value again
        helper.make_node("Mul", ["r2", "saved_s"], ["rr"]),
        helper.make_node("RandomUniformLike", ["x"], ["u2"], seed=1.0),  # never matched
        helper.make_node("Mul", ["rr", "u2"], ["ru"]),
        helper.make_node("Transpose", ["x"], ["xt3"], perm=[0, 1, 3, 2]),  # another perm
        helper.make_node("Add", ["ru", "xt3"], ["dx"]),
        helper.make_node("Mul", ["c", "c"], ["cc"]),  # constants only: never matched
        helper.make_node("Add", ["dw", "cc"], ["dw_c"]),
    ], "bwd", [helper.make_tensor_value_info("x", F, shape),
               helper.make_tensor_value_info("saved_s", F, shape),
               helper.make_tensor_value_info("og_t", F, [5, 32])],
        [helper.make_tensor_value_info(n, F, None) for n in ("dw_c", "dx")],
        [numpy_helper.from_array(np.array([-1, 3], np.int64), "shape2"),
         numpy_helper.from_array(np.ones((3, 5), np.float32), "c")])
    opset, ir = [helper.make_opsetid("", 17)], ir_version_for(17)
    return (helper.make_model(fwd, opset_imports=opset, ir_version=ir),
            helper.make_model(bwd, opset_imports=opset, ir_version=ir))


def _run(model, feed):
    import onnxruntime as ort

    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(None, {i.name: feed[i.name] for i in sess.get_inputs()})))


def test_value_numbering_reads_what_the_forward_model_computed(monkeypatch):
    monkeypatch.setattr(_reuse, "MIN_VALUES", 0)
    fwd, bwd = _models()
    plain = type(bwd)()
    plain.CopyFrom(bwd)
    pairs = _reuse.reuse_forward_values(fwd, bwd, {"x": "x", "saved_s": "s"})
    # the transposed data (an Einsum there, a Transpose here) and relu(x); not the reshape
    # after the transpose, the random draw, or what depends on constants only
    assert pairs == [("s", "_reuse:s"), ("xt", "_reuse:xt")]
    ops = [n.op_type for n in bwd.graph.node]
    assert ops.count("Relu") == 0 and "Einsum" not in ops and "Reshape" in ops, ops
    assert "RandomUniformLike" in ops and ops.count("Mul") == 3 and "Transpose" in ops, ops
    assert {i.name for i in bwd.graph.input} == {"x", "saved_s", "og_t", "_reuse:s",
                                                 "_reuse:xt"}
    rs = np.random.RandomState(0)
    feed = {"x": rs.randn(2, 3, 4, 4).astype(np.float32),
            "w": rs.randn(3, 5).astype(np.float32),
            "og_t": rs.randn(5, 32).astype(np.float32)}
    fwd.graph.output.extend(helper.make_empty_tensor_value_info(s) for s, _ in pairs)
    got_f = _run(fwd, feed)
    feed.update(saved_s=got_f["s"], **{b: got_f[s] for s, b in pairs})
    want, got = _run(plain, feed), _run(bwd, feed)
    for name in ("dw_c", "dx"):  # the random draw: the same seed in both models
        np.testing.assert_array_equal(got[name], want[name])
    ref = (feed["og_t"] @ feed["x"].transpose(0, 2, 3, 1).reshape(-1, 3)).T + 1
    np.testing.assert_allclose(got["dw_c"], ref, rtol=1e-5)  # and numpy's product


def test_nothing_changes_below_the_size_threshold_or_without_links(monkeypatch):
    fwd, bwd = _models()
    before = bwd.SerializeToString()
    monkeypatch.setattr(_reuse, "MIN_VALUES", 1 << 20)
    assert _reuse.reuse_forward_values(fwd, bwd, {"x": "x", "saved_s": "s"}) == []
    monkeypatch.setattr(_reuse, "MIN_VALUES", 0)
    assert _reuse.reuse_forward_values(fwd, bwd, {}) == []  # x not known to be the same
    assert bwd.SerializeToString() == before


# --- whole training steps ------------------------------------------------------------------------
def _net(backend):
    """Convolutions on small images (the GEMM lowering: im2col columns and weight rows both
    models make) and BatchNorm (the centred data)."""
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(8, 3, padding=1, in_channels=3, use_bias=False),
            gluon.nn.BatchNorm(in_channels=8), gluon.nn.Activation("relu"),
            gluon.nn.Conv2D(6, 3, padding=1, in_channels=8),
            gluon.nn.Activation("relu"), gluon.nn.Dense(4, in_units=6 * 4 * 4))
    net.initialize(mx.init.Xavier())
    for i, p in enumerate(net.collect_params().values()):
        if p.grad_req != "null":
            p.set_data(mx.nd.array(np.random.RandomState(i).randn(*p.shape) * 0.3))
    net.hybridize(backend=backend, static_alloc=True, static_shape=True)
    return net


def _train(backend, batches=(4, 4, 4, 2, 2)):
    """SGD steps (momentum 0.9) over inputs of the given batch sizes: losses, gradients and
    parameters after each step, and the net."""
    net = _net(backend)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.05,
                                                          "momentum": 0.9})
    rs = np.random.RandomState(5)
    record = []
    for n in batches:
        x = mx.nd.array(rs.randn(n, 3, 4, 4))
        with autograd.record():
            loss = (net(x) ** 2).mean()
        loss.backward()
        grads = [p.grad().asnumpy().copy() for p in net.collect_params().values()
                 if p.grad_req != "null"]
        trainer.step(n)
        record.append((loss.asscalar(), grads,
                       [p.data().asnumpy().copy() for p in net.collect_params().values()]))
    return record, net


def test_training_steps_read_forward_values(monkeypatch):
    """Two input signatures, each paired on its first step (whose backward computes everything
    itself: its forward ran before the pairing); later steps read the forward values. The
    numbers are the unpaired steps' bit for bit, and the numpy executor's to rtol 1e-4."""
    monkeypatch.setattr(_reuse, "MIN_VALUES", 0)
    fallbacks = []
    real = _train_graph._Ort._runner_of

    def spy(self, model):
        fallbacks.append(any(i.name.startswith("_reuse:") for i in model.graph.input))
        return real(self, model)

    monkeypatch.setattr(_train_graph._Ort, "_runner_of", spy)
    got, net = _train("onnxruntime")
    (graphs,) = [g for g in net._cached_op._train_graphs.values()]
    fwd, bwd = graphs._fwd, graphs._bwd
    assert len(bwd._runners) == 2
    for built in bwd._runners.values():
        assert built.extra_in and built.plain is not None
        # the values read: im2col columns, weight rows, BatchNorm's centred data
        assert len(built.extra_in) >= 3, built.extra_in
    assert sorted(tuple(b.extra_out) for b in fwd._runners.values()) == sorted(
        tuple(b.extra_in) for b in bwd._runners.values())
    # per signature: the forward model, remade with the extra outputs, the paired backward
    # model and, for the first step, the backward model that computes everything
    assert sorted(fallbacks) == [False] * 6 + [True] * 2, fallbacks
    monkeypatch.setattr(_reuse, "reuse_forward_values", lambda *a: [])
    want, _ = _train("onnxruntime")
    ref, _ = _train("numpy")
    for (lg, gg, pg), (lw, gw, pw), (lr, gr, pr) in zip(got, want, ref):
        assert lg == lw
        np.testing.assert_allclose(lg, lr, rtol=1e-4)
        for a, b, c in zip(gg + pg, gw + pw, gr + pr):
            np.testing.assert_array_equal(a, b)
            np.testing.assert_allclose(a, c, rtol=1e-4, atol=1e-6 * np.abs(c).max())


def test_small_models_are_not_paired():
    """The shipped threshold leaves a model this small unpaired (a remade forward session for
    the first step would cost more than it saves)."""
    _, net = _train("onnxruntime", batches=(4, 4))
    (graphs,) = [g for g in net._cached_op._train_graphs.values()]
    assert not any(b.extra_in for b in graphs._bwd._runners.values())
    assert not any(b.extra_out for b in graphs._fwd._runners.values())


def test_a_forward_output_already_there_is_not_added_twice():
    """A value the backward model reads that the forward model already outputs (a saved
    value) comes from that output; the others are appended after the graph's own."""
    fwd, _ = _models()
    ort_graph = _train_graph._Ort(mx.sym.var("x"), mx.cpu())
    built = _train_graph._Built(None, [None, None, None], fwd)
    ort_graph.add_outputs(("k",), built, [("xt", "_reuse:xt"), ("s", "_reuse:s")])
    new = ort_graph._runners[("k",)]
    assert [o.name for o in new.model.graph.output] == ["y", "s", "noise", "xt"]
    assert new.extra_out == ["_reuse:xt", "_reuse:s"] and new.extra_at == [3, 1]
    assert new.reshapes == [None, None, None]


def test_two_recorded_calls_before_one_backward(monkeypatch):
    """Two calls of the block under one record() (the first step's both made before the
    pairing, later ones after it), grad_req='add' over three steps: the unpaired run's
    gradients bit for bit."""
    monkeypatch.setattr(_reuse, "MIN_VALUES", 0)

    def run():
        net = _net("onnxruntime")
        params = [p for p in net.collect_params().values() if p.grad_req != "null"]
        for p in params:
            p.grad_req = "add"
        rs = np.random.RandomState(11)
        out = []
        for _ in range(3):
            a, b = (mx.nd.array(rs.randn(4, 3, 4, 4)) for _ in range(2))
            with autograd.record():
                loss = (net(a) ** 2).mean() + (net(b) * 0.5).sum()
            loss.backward()
            out.append([p.grad().asnumpy().copy() for p in params])
        (graphs,) = net._cached_op._train_graphs.values()
        return out, graphs

    got, graphs = run()
    assert all(b.extra_in for b in graphs._bwd._runners.values())
    monkeypatch.setattr(_reuse, "reuse_forward_values", lambda *a: [])
    want, _ = run()
    for g, w in zip(got, want):
        for a, b in zip(g, w):
            np.testing.assert_array_equal(a, b)
