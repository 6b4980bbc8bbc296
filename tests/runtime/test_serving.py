"""The serving layer: gluonport.load, SymbolBlock / hybridized blocks on onnxruntime."""

from __future__ import annotations

import os
import threading

import numpy as np
import onnxruntime
import pytest

import gluonport as mx
from gluonport import gluon
from gluonport.errors import DeviceError, GluonportError
from gluonport.gluon import nn

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLES = [os.path.join(ROOT, "sample_models", n) for n in ("mlp", "lenet_bn")]
RTOL, ATOL = 1e-4, 1e-5


@pytest.mark.parametrize("prefix", SAMPLES, ids=os.path.basename)
@pytest.mark.parametrize("backend", ["numpy", "onnxruntime"])
def test_load_matches_mxnet(prefix, backend):
    model = mx.load(prefix, backend=backend)
    x = np.load(prefix + "-input.npy")
    np.testing.assert_allclose(model(x), np.load(prefix + "-output.npy"), rtol=RTOL, atol=ATOL)
    assert model.input_names == ["data"] and model.backend == backend
    assert (model.providers == ["CPUExecutionProvider"]) == (backend == "onnxruntime") or \
        backend == "numpy"


@pytest.mark.parametrize("prefix", SAMPLES, ids=os.path.basename)
def test_backends_agree_at_batch_1_and_larger(prefix):
    numpy_model = mx.load(prefix, backend="numpy")
    ort_model = mx.load(prefix, backend="onnxruntime")
    x = np.load(prefix + "-input.npy")
    for batch in (1, 7):
        xb = np.resize(x, (batch, *x.shape[1:])).astype(np.float32)
        np.testing.assert_allclose(ort_model(xb), numpy_model(xb), rtol=RTOL, atol=ATOL)


def test_load_onnx_file_and_named_inputs(tmp_path):
    prefix = SAMPLES[1]
    sym, arg, aux = mx.model.load_checkpoint(prefix, 0)
    path = mx.onnx.export_model(sym, {**arg, **aux}, [(2, 1, 28, 28)],
                                onnx_file_path=str(tmp_path / "m.onnx"), dynamic=True)
    model = mx.load(path, as_ndarray=True)
    x = np.load(prefix + "-input.npy")
    y = model(data=x)
    assert isinstance(y, mx.nd.NDArray)
    np.testing.assert_allclose(y.asnumpy(), np.load(prefix + "-output.npy"), rtol=RTOL,
                               atol=ATOL)
    assert model.input_shapes["data"][1:] == (1, 28, 28)
    with pytest.raises(GluonportError, match="missing"):
        model(x2=x)


def test_gpu_without_cuda_is_an_error_not_a_cpu_run():
    if "CUDAExecutionProvider" in onnxruntime.get_available_providers():
        pytest.skip("a CUDA provider is available here")
    with pytest.raises(DeviceError) as err:
        mx.load(SAMPLES[0], ctx=mx.gpu(0), backend="onnxruntime")(np.zeros((1, 10), "f4"))
    msg = str(err.value)
    assert "onnxruntime" in msg and "CPUExecutionProvider" in msg and "gluonport[gpu]" in msg


@pytest.mark.gpu
def test_gpu_runs_on_cuda():
    if "CUDAExecutionProvider" not in onnxruntime.get_available_providers():
        pytest.skip("no CUDA execution provider (pip install 'gluonport[gpu]' on a GPU machine)")
    prefix = SAMPLES[1]
    model = mx.load(prefix, ctx=mx.gpu(0))
    x = np.load(prefix + "-input.npy")
    np.testing.assert_allclose(model(x), np.load(prefix + "-output.npy"), rtol=1e-3, atol=1e-4)
    assert "CUDAExecutionProvider" in model.providers


def _small_net():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(4, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"),
                nn.MaxPool2D(), nn.Flatten(), nn.Dense(5))
    net.initialize(mx.init.Xavier())
    return net


def test_hybridized_block_runs_on_onnxruntime_and_matches_eager():
    net = _small_net()
    x = mx.nd.array(np.random.default_rng(0).uniform(-1, 1, (3, 2, 8, 8)))
    eager = net(x).asnumpy()
    for backend in (None, "numpy", "onnxruntime"):
        net.hybridize(backend=backend)
        out = net(x).asnumpy()
        np.testing.assert_allclose(out, eager, rtol=RTOL, atol=ATOL)
        expected = "numpy" if backend == "numpy" else "onnxruntime"
        assert net._cached_op.backend == expected


def test_parameter_change_reexports():
    net = _small_net()
    x = mx.nd.array(np.random.default_rng(1).uniform(-1, 1, (2, 2, 8, 8)))
    net(x)
    net.hybridize(backend="onnxruntime")
    before = net(x).asnumpy()
    w = net[5].weight
    w.set_data(w.data() * 2)
    after = net(x).asnumpy()
    net.hybridize(active=False)
    np.testing.assert_allclose(after, net(x).asnumpy(), rtol=RTOL, atol=ATOL)
    assert not np.allclose(before, after)


def test_symbolblock_concurrent_calls_are_identical():
    prefix = SAMPLES[1]
    block = gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
    rng = np.random.default_rng(2)
    inputs = [mx.nd.array(rng.uniform(-1, 1, (2, 1, 28, 28))) for _ in range(8)]
    want = [block(x).asnumpy() for x in inputs]
    errors: list[str] = []

    def worker(k: int) -> None:
        for _ in range(200):
            got = block(inputs[k]).asnumpy()
            if not np.array_equal(got, want[k]):
                errors.append(f"thread {k} got a different result")
                return

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    assert block._cached_op.backend == "onnxruntime"


def test_symbolblock_legacy_softmax_label_is_not_needed():
    data = mx.sym.var("data")
    fc = mx.sym.FullyConnected(data, num_hidden=3, name="fc")
    out = mx.sym.SoftmaxOutput(fc, name="softmax")
    assert "softmax_label" in out.list_arguments()
    block = gluon.SymbolBlock(out, mx.sym.var("data"))
    block.initialize()
    x = mx.nd.array(np.random.default_rng(3).uniform(-1, 1, (4, 6)))
    y = block(x).asnumpy()
    np.testing.assert_allclose(y.sum(axis=1), np.ones(4), rtol=1e-5)


def test_symbolblock_on_gpu_context_without_cuda_is_an_error():
    if "CUDAExecutionProvider" in onnxruntime.get_available_providers():
        pytest.skip("a CUDA provider is available here")
    prefix = SAMPLES[1]
    block = gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params",
                                      ctx=mx.gpu(0))
    x = mx.nd.array(np.load(prefix + "-input.npy"), ctx=mx.gpu(0))
    with pytest.raises(DeviceError, match="CUDAExecutionProvider"):
        block(x)


def _cos_model(tmp_path, kind):
    """``2 cos(x)`` as an MXNet symbol file (no parameters) or an ONNX file (float64 input)."""
    if kind == "mxnet":
        x = mx.sym.var("data")
        (mx.sym.cos(x) * 2).save(str(tmp_path / "m-symbol.json"))
        mx.nd.save(str(tmp_path / "m-0000.params"), {})
        return str(tmp_path / "m")
    import onnx
    from onnx import helper

    graph = helper.make_graph(
        [helper.make_node("Cos", ["data"], ["c"]), helper.make_node("Add", ["c", "c"], ["y"])],
        "g", [helper.make_tensor_value_info("data", onnx.TensorProto.DOUBLE, [2, 3])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.DOUBLE, [2, 3])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                                ir_version=8), str(tmp_path / "m.onnx"))
    return str(tmp_path / "m.onnx")


@pytest.mark.parametrize("kind", ["mxnet", "onnx"])
@pytest.mark.parametrize("backend", [None, "onnxruntime"])
def test_load_falls_back_to_numpy_where_onnxruntime_lacks_a_kernel(monkeypatch, tmp_path, kind,
                                                                   backend):
    # onnxruntime 1.19 has no float64 Cos kernel (UnsupportedOpError when the session is made).
    # Chosen automatically, the model warns once and runs on the numpy executor; a requested
    # onnxruntime backend keeps the error.
    from gluonport.errors import UnsupportedOpError
    from gluonport.runtime.graph import OnnxGraph
    from gluonport.runtime.ort import OrtRunner

    def no_kernel(self, *args, **kwargs):
        raise UnsupportedOpError("ONNX model 'm': onnxruntime 0.0 has no kernel for part of "
                                 "this model: Cos(7) (simulated)")

    monkeypatch.setattr(OnnxGraph, "__call__", no_kernel)
    monkeypatch.setattr(OrtRunner, "run", no_kernel)
    model = mx.load(_cos_model(tmp_path, kind), backend=backend)
    assert model.backend == "onnxruntime"
    x = np.linspace(-3, 3, 6).reshape(2, 3)
    if backend == "onnxruntime":
        with pytest.raises(UnsupportedOpError, match="no kernel"):
            model(x)
        return
    with pytest.warns(UserWarning, match="runs on the numpy executor instead"):
        y = model(x)
    assert model.backend == "numpy" and model.providers == []
    np.testing.assert_allclose(y, 2 * np.cos(x), rtol=1e-12)
    np.testing.assert_array_equal(model(x), y)  # later calls: numpy, no warning needed


def test_load_keeps_onnxruntime_error_when_numpy_cannot_take_the_model(monkeypatch, tmp_path):
    # the fallback imports an ONNX file for the numpy executor; an op gluonport does not
    # import leaves onnxruntime's error (no warning, no half switch)
    import warnings

    import onnx
    from onnx import helper

    from gluonport.errors import UnsupportedOpError
    from gluonport.runtime.ort import OrtRunner

    graph = helper.make_graph(
        [helper.make_node("Cos", ["data"], ["c"]),
         helper.make_node("Frobnicate", ["c"], ["y"], domain="example.custom")],
        "g", [helper.make_tensor_value_info("data", onnx.TensorProto.DOUBLE, [2, 3])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.DOUBLE, [2, 3])])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                      helper.make_opsetid("example.custom", 1)],
                                ir_version=8), str(path))

    def no_kernel(self, *args, **kwargs):
        raise UnsupportedOpError("ONNX model 'm': onnxruntime 0.0 has no kernel (simulated)")

    monkeypatch.setattr(OrtRunner, "run", no_kernel)
    model = mx.load(str(path))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UnsupportedOpError, match="no kernel"):
            model(np.zeros((2, 3)))
    assert model.backend == "onnxruntime"
