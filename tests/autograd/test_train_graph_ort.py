"""The training graphs' onnxruntime runner (gluonport/gluon/_train_graph.py): graph outputs that
a reshaping node makes from a computed tensor are returned as that tensor and reshaped in numpy
(onnxruntime would copy them), with the same values and shapes."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper, shape_inference

from gluonport.gluon._train_graph import (
    _batched_transposes_as_einsum,
    _return_unreshaped,
    _single_values_at_full_rank,
)


def _ints(name, values):
    return numpy_helper.from_array(np.asarray(values, np.int64), name)


def _model():
    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Reshape", ["r", "s1"], ["y1"]),      # elided: r is computed
        helper.make_node("Reshape", ["x", "s1"], ["y2"]),      # kept: x is a graph input
        helper.make_node("Neg", ["x"], ["n"]),
        helper.make_node("Flatten", ["n"], ["y3"], axis=1),    # elided
        helper.make_node("Reshape", ["n", "s2"], ["y4"]),      # kept: n is already output y3's
        helper.make_node("Abs", ["x"], ["a"]),
        helper.make_node("Reshape", ["a", "s1"], ["y5"]),      # kept: y5 is read by a node
        helper.make_node("Exp", ["y5"], ["y6"]),
    ]
    f = TensorProto.FLOAT
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", f, [2, 3, 4])],
        [helper.make_tensor_value_info(n, f, s) for n, s in
         (("y1", [6, 4]), ("y2", [6, 4]), ("y3", [2, 12]), ("y4", [24]), ("y5", [6, 4]),
          ("y6", [6, 4]))],
        [_ints("s1", [6, 4]), _ints("s2", [24])])
    return helper.make_model(graph, ir_version=8, opset_imports=[helper.make_opsetid("", 17)])


def _run(model, x):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})


def test_reshaped_outputs_come_back_unreshaped():
    x = np.random.RandomState(0).randn(2, 3, 4).astype(np.float32)
    want = _run(_model(), x)
    model = _model()
    shapes = _return_unreshaped(model)
    assert shapes == [(6, 4), None, (2, 12), None, None, None]
    assert [o.name for o in model.graph.output] == ["r", "y2", "n", "y4", "y5", "y6"]
    assert [n.op_type for n in model.graph.node].count("Reshape") == 3
    assert "Flatten" not in [n.op_type for n in model.graph.node]
    got = _run(model, x)
    for g, s, w in zip(got, shapes, want):
        g = g if s is None else g.reshape(s)
        assert g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def _transposes_model():
    f, i64 = TensorProto.FLOAT, TensorProto.INT64
    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Transpose", ["r"], ["t1"], perm=[0, 2, 1]),     # -> Einsum
        helper.make_node("Transpose", ["r"], ["t2"], perm=[1, 0, 2]),     # axis 0 moves: kept
        helper.make_node("Transpose", ["r"], ["t3"], perm=[0, 2, 1]),     # read by MatMul
        helper.make_node("MatMul", ["t3", "w"], ["y3"]),
        helper.make_node("Cast", ["r"], ["k"], to=i64),
        helper.make_node("Transpose", ["k"], ["t4"], perm=[0, 2, 1]),     # int64: kept
        helper.make_node("Transpose", ["t1"], ["t5"]),                    # default perm: kept
    ]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", f, [2, 3, 4])],
        [helper.make_tensor_value_info("t1", f, [2, 4, 3]),
         helper.make_tensor_value_info("t2", f, [3, 2, 4]),
         helper.make_tensor_value_info("y3", f, [2, 4, 5]),
         helper.make_tensor_value_info("t4", i64, [2, 4, 3]),
         helper.make_tensor_value_info("t5", f, [3, 4, 2])],
        [numpy_helper.from_array(np.ones((3, 5), np.float32), "w")])
    return helper.make_model(graph, ir_version=8, opset_imports=[helper.make_opsetid("", 17)])


def test_transposes_keeping_axis_0_become_einsum_with_the_same_values():
    x = np.random.RandomState(1).randn(2, 3, 4).astype(np.float32) * 3
    want = _run(_transposes_model(), x)
    model = _transposes_model()
    _batched_transposes_as_einsum(model, shape_inference.infer_shapes(model).graph)
    ops = {n.output[0]: (n.op_type, [a.s for a in n.attribute if a.name == "equation"])
           for n in model.graph.node}
    assert ops["t1"] == ("Einsum", [b"abc->acb"])
    assert [ops[k][0] for k in ("t2", "t3", "t4", "t5")] == ["Transpose"] * 4
    for g, w in zip(_run(model, x), want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


def test_one_intra_op_thread_keeps_transpose(monkeypatch):
    # the rewrite is for pools of several threads (see its docstring); with one thread the
    # exported training graphs keep their Transpose nodes
    seen = []
    real = _train_graph._batched_transposes_as_einsum
    monkeypatch.setattr(_train_graph, "_batched_transposes_as_einsum",
                        lambda m, t: seen.append(m) or real(m, t))
    for threads, calls in (("1", 0), ("2", 2)):
        seen.clear()
        monkeypatch.setenv("OMP_NUM_THREADS", threads)
        _grads("onnxruntime")
        assert len(seen) == calls, threads  # the forward and the backward graph
    assert any(n.op_type == "Einsum" for m in seen for n in m.graph.node)


def _single_values_model():
    f, b = TensorProto.FLOAT, TensorProto.BOOL
    nodes = [
        helper.make_node("Mul", ["x", "half"], ["m"]),                 # scalar initializer
        helper.make_node("Greater", ["m", "zero1"], ["gt"]),           # [1] initializer
        helper.make_node("Where", ["gt", "m", "zero1"], ["w"]),        # and in a Where
        helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),       # a computed scalar
        helper.make_node("Sub", ["s", "w"], ["d"]),                    # read before its rank
        helper.make_node("Add", ["d", "s"], ["a"]),                    # the same Reshape again
        helper.make_node("Div", ["x", "full"], ["k"]),                 # full rank already
        helper.make_node("Reshape", ["x", "flat"], ["xf"]),
        helper.make_node("Mul", ["xf", "half"], ["mf"]),               # last axis of size 6
        helper.make_node("Mul", ["x", "x"], ["xx"]),                   # no single value
    ]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", f, [2, 6, 1, 1])],
        [helper.make_tensor_value_info(n, t, None) for n, t in
         (("gt", b), ("w", f), ("a", f), ("k", f), ("mf", f), ("xx", f))],
        [numpy_helper.from_array(np.asarray(0.5, np.float32), "half"),
         numpy_helper.from_array(np.zeros(1, np.float32), "zero1"),
         numpy_helper.from_array(np.full((1, 1, 1, 1), 3.0, np.float32), "full"),
         _ints("flat", [2, 6])])
    return helper.make_model(graph, ir_version=8, opset_imports=[helper.make_opsetid("", 17)])


def test_single_values_read_at_the_output_rank_give_the_same_values():
    # onnxruntime broadcasts a lower-rank single value against a tensor whose last axis has
    # size 1 element by element (25x slower); the rewrite gives such reads the full rank
    x = np.random.RandomState(2).randn(2, 6, 1, 1).astype(np.float32)
    want = _run(_single_values_model(), x)
    model = _single_values_model()
    assert _single_values_at_full_rank(model, shape_inference.infer_shapes(model).graph) == 5
    typed = shape_inference.infer_shapes(model).graph
    ranks = {v.name: len(v.type.tensor_type.shape.dim)
             for v in [*typed.input, *typed.value_info, *typed.output]}
    ranks.update((t.name, len(t.dims)) for t in model.graph.initializer)
    reads = {n.output[0]: [ranks.get(i) for i in n.input] for n in model.graph.node}
    assert reads["m"] == [4, 4] and reads["gt"] == [4, 4] and reads["w"] == [4, 4, 4]
    assert reads["d"] == [4, 4] and reads["a"] == [4, 4]
    assert reads["mf"] == [2, 0] and reads["k"] == [4, 4]  # left as they were
    assert [n.op_type for n in model.graph.node].count("Reshape") == 2  # flat's and s's
    for g, w in zip(_run(model, x), want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


# --- gradients written straight into the gradient buffers ---------------------------------------
import gluonport as mx  # noqa: E402
from gluonport import autograd, gluon  # noqa: E402
from gluonport.gluon import _train_graph  # noqa: E402


def _convnet(backend):
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(8, 3, padding=1, in_channels=3), gluon.nn.Activation("relu"),
            gluon.nn.Conv2D(4, 3, strides=2, in_channels=8), gluon.nn.Flatten(),
            gluon.nn.Dense(5, in_units=16))
    net.initialize(mx.init.Xavier())
    for i, p in enumerate(net.collect_params().values()):
        p.set_data(mx.nd.array(np.random.RandomState(i).randn(*p.shape) * 0.3))
    net.hybridize(backend=backend, static_alloc=True, static_shape=True)
    return net


def _grads(backend, req="write", passes=1, extra=None):
    net = _convnet(backend)
    params = list(net.collect_params().values())
    for p in params:
        p.grad_req = req
    x = mx.nd.array(np.random.RandomState(2).randn(4, 3, 5, 5))
    buffers = [p.grad()._data for p in params]
    for _ in range(passes):
        with autograd.record():
            loss = (net(x) ** 2).sum()
            if extra is not None:
                loss = loss + extra(params)
        loss.backward()
    assert all(p.grad()._data is b for p, b in zip(params, buffers))  # the same memory
    return [p.grad().asnumpy() for p in params]


def _close(got, want):
    """float32 sums in another order: rtol 1e-4, atol 1e-6 of the largest magnitude."""
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6 * np.abs(want).max())


def _spy_bound(monkeypatch):
    seen = []
    real = _train_graph._bindable

    def spy(*args):
        got = real(*args)
        seen.append(len(got))
        return got

    monkeypatch.setattr(_train_graph, "_bindable", spy)
    return seen


def test_gradients_are_written_into_the_parameters_buffers(monkeypatch):
    """onnxruntime writes each parameter's gradient into its buffer (no fresh array and
    copy), and the values are the numpy executor's (:func:`_close`)."""
    want = _grads("numpy", passes=2)
    seen = _spy_bound(monkeypatch)
    got = _grads("onnxruntime", passes=2)
    assert seen and seen[-1] == 6  # the second backward binds all six gradients
    for g, w in zip(got, want):
        _close(g, w)


def test_gradient_add_and_shared_parameters_still_sum(monkeypatch):
    """grad_req='add' accumulates, and a parameter that an imperative op also reads gets the
    sum of both gradients: neither is written into by onnxruntime."""
    extra = lambda params: (params[0].data() * 3).sum()  # noqa: E731 - the first conv weight
    want = _grads("numpy", req="add", passes=3, extra=extra)
    seen = _spy_bound(monkeypatch)
    got = _grads("onnxruntime", req="add", passes=3, extra=extra)
    assert not any(seen)
    for g, w in zip(got, want):
        _close(g, w)
    want = _grads("numpy", passes=2, extra=extra)
    seen = _spy_bound(monkeypatch)
    got = _grads("onnxruntime", passes=2, extra=extra)
    assert seen[-1] == 5  # all but the shared weight
    for g, w in zip(got, want):
        _close(g, w)


def test_a_strided_gradient_buffer_is_copied_into():
    """mark_variables with a gradient buffer that is a strided view: the gradient lands in the
    view (the array it views sees it), as MXNet writes a variable's gradient array."""
    net = _convnet("onnxruntime")
    x = mx.nd.array(np.random.RandomState(3).randn(4, 3, 5, 5))
    big = np.zeros((8, 3, 5, 5), np.float32)
    grad = mx.nd.NDArray(big[::2])
    autograd.mark_variables([x], [grad])
    for _ in range(2):
        with autograd.record():
            y = net(x)
        y.backward()
    ref = _convnet("numpy")
    x2 = mx.nd.array(x.asnumpy())
    x2.attach_grad()
    with autograd.record():
        y2 = ref(x2)
    y2.backward()
    _close(big[::2], x2.grad.asnumpy())
    assert not big[1::2].any()


# --- a gpu(i) block's way, exercised on the CPU -------------------------------------------------
def _train_bn(backend, steps=2):
    """``steps`` SGD steps (momentum 0.9) of a conv + BatchNorm net hybridized on ``backend``:
    (losses, gradients per step, parameters, the TrainGraphs of its cached graph)."""
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(4, 3, in_channels=3, use_bias=False),
            gluon.nn.BatchNorm(in_channels=4), gluon.nn.Activation("relu"),
            gluon.nn.Dense(3, in_units=4 * 3 * 3))
    net.initialize(mx.init.Xavier())
    for i, p in enumerate(net.collect_params().values()):
        if p.grad_req != "null":
            p.set_data(mx.nd.array(np.random.RandomState(i).randn(*p.shape) * 0.3))
    net.hybridize(backend=backend, static_alloc=True, static_shape=True)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    x = mx.nd.array(np.random.RandomState(9).randn(4, 3, 5, 5))
    losses, grads = [], []
    for _ in range(steps):
        with autograd.record():
            loss = (net(x) ** 2).sum()
        loss.backward()
        grads.append([p.grad().asnumpy().copy() for p in net.collect_params().values()
                      if p.grad_req != "null"])
        trainer.step(4)
        losses.append(loss.asscalar())
    graphs = list(net._cached_op._train_graphs.values())
    return losses, grads, [p.data().asnumpy() for p in net.collect_params().values()], graphs


def test_device_mode_keeps_parameters_and_saved_values_between_the_graphs(monkeypatch):
    """On a device the forward graph gets the inputs both graphs read as DeviceArrays, copied
    once, and keeps its saved values there; the backward graph takes both as they are. Run
    that way on the CPU (``_DEVICE_ON_CPU``), two steps of BatchNorm training give the same
    losses, gradients, parameters and moving statistics, bit for bit, as the host path."""
    from gluonport.runtime.ort import DeviceArray, OrtRunner

    want = _train_bn("onnxruntime")[:3]
    fed = []
    real = OrtRunner.run_device

    def spy(self, inputs, keep=()):
        fed.append(({n: type(v) for n, v in inputs.items()}, list(keep)))
        return real(self, inputs, keep)

    monkeypatch.setattr(OrtRunner, "run_device", spy)
    monkeypatch.setattr(_train_graph, "_DEVICE_ON_CPU", True)
    *got, (graphs,) = _train_bn("onnxruntime")
    assert graphs.on_device and any(n.endswith("_weight") for n in graphs._shared)
    (fwd_in, fwd_keep), (bwd_in, bwd_keep) = fed[0], fed[1]
    weight = next(n for n in fwd_in if n.endswith("weight"))
    assert fwd_in[weight] is DeviceArray and bwd_in[weight] is DeviceArray
    assert fwd_keep and not bwd_keep  # saved values kept; gradients come back
    assert sum(t is DeviceArray for t in bwd_in.values()) > len(graphs._shared)
    (losses, grads, params), (want_losses, want_grads, want_params) = got, want
    assert losses == want_losses
    for g, w in zip(grads[0] + grads[1] + params, want_grads[0] + want_grads[1] + want_params):
        np.testing.assert_array_equal(g, w)


# --- onnxruntime chosen automatically but unable to make a session -------------------------
def _no_kernel_for(monkeypatch, which):
    """onnxruntime 'lacks a kernel' for the backward (or forward) training graph: making its
    session raises the UnsupportedOpError OrtRunner raises for NOT_IMPLEMENTED."""
    from gluonport.errors import UnsupportedOpError

    def is_target(graph):
        backward = any(n.startswith("_ograd:") for n in graph.names)
        return backward == (which == "backward")

    real_build = _train_graph._Ort._build

    def build(self, arrays, feed):
        if is_target(self):
            raise UnsupportedOpError("ONNX model 'gluonport': onnxruntime 0.0 has no kernel "
                                     "for part of this model: (simulated)")
        return real_build(self, arrays, feed)

    monkeypatch.setattr(_train_graph._Ort, "_build", build)


@pytest.mark.parametrize("which", ["forward", "backward"])
def test_automatic_backend_falls_back_to_numpy_when_onnxruntime_lacks_a_kernel(monkeypatch,
                                                                               which):
    # an older onnxruntime has no kernel for some node (float64 Cos in onnxruntime 1.19): a
    # block on the automatic backend warns once and trains on the numpy executor,
    # from the failing step on, with the numpy backend's numbers
    want = _train_bn("numpy")
    _no_kernel_for(monkeypatch, which)
    with pytest.warns(UserWarning, match="trains on the numpy executor") as caught:
        got = _train_bn(None)
    assert len([w for w in caught if "numpy executor" in str(w.message)]) == 1
    assert [g.backend for g in got[3]] == ["numpy"]
    np.testing.assert_array_equal(got[0], want[0])
    for g_step, w_step in zip(got[1], want[1]):
        for g, w in zip(g_step, w_step):
            np.testing.assert_array_equal(g, w)
    for g, w in zip(got[2], want[2]):
        np.testing.assert_array_equal(g, w)


def test_requested_onnxruntime_does_not_fall_back(monkeypatch):
    from gluonport.errors import UnsupportedOpError

    _no_kernel_for(monkeypatch, "backward")
    with pytest.raises(UnsupportedOpError, match="has no kernel"):
        _train_bn("onnxruntime", steps=1)


def test_automatic_backend_checks_each_signature_once(monkeypatch):
    # the backward session is made with the first forward of a signature, not again
    made = []
    real = _train_graph._Ort.prepare
    monkeypatch.setattr(_train_graph._Ort, "prepare",
                        lambda self, feed: made.append(1) or real(self, feed))
    losses, _, _, graphs = _train_bn(None, steps=3)
    assert [g.backend for g in graphs] == ["onnxruntime"] and len(made) == 1
    assert np.all(np.isfinite(losses))
