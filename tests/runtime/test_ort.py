"""OrtRunner: onnxruntime sessions from a Context, cached per input signature.

Models are built here with onnx.helper; references are numpy. Float tolerance: rtol 1e-5,
atol 1e-6 (float32 MatMul of 4 terms). Runs without a GPU; the one CUDA test is marked ``gpu``.
"""

from __future__ import annotations

import threading
import warnings

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

from gluonport.context import cpu, gpu
from gluonport.errors import (
    DeviceError,
    DTypeError,
    ExecutionError,
    FormatError,
    GluonportError,
    ShapeError,
)
from gluonport.runtime import OrtRunner, RuntimeOptions, installed_onnxruntime, providers_for

HAS_CUDA = "CUDAExecutionProvider" in onnxruntime.get_available_providers()
RNG = np.random.default_rng(0)
W = RNG.standard_normal((4, 3)).astype(np.float32)
B = RNG.standard_normal(3).astype(np.float32)
TABLE = RNG.standard_normal((5, 2)).astype(np.float32)
TOL = {"rtol": 1e-5, "atol": 1e-6}


def _model(nodes, inputs, outputs, inits=(), name="m"):
    graph = h.make_graph(nodes, name, inputs, outputs,
                         [numpy_helper.from_array(v, k) for k, v in inits])
    # IR 8 / opset 17: what onnxruntime >= 1.16 (the oldest we support) loads.
    return h.make_model(graph, ir_version=8, opset_imports=[h.make_opsetid("", 17)])


def mlp(batch_dim="N"):
    """y = relu(x @ W + b), x: (batch_dim, 4) float32."""
    return _model([h.make_node("MatMul", ["x", "W"], ["xw"]),
                   h.make_node("Add", ["xw", "b"], ["z"]),
                   h.make_node("Relu", ["z"], ["y"])],
                  [h.make_tensor_value_info("x", T.FLOAT, [batch_dim, 4])],
                  [h.make_tensor_value_info("y", T.FLOAT, [batch_dim, 3])],
                  [("W", W), ("b", B)], name="mlp")


def two_out():
    """(a + b, a * b) with a, b: (N, 3) float32."""
    return _model([h.make_node("Add", ["a", "b"], ["sum"]),
                   h.make_node("Mul", ["a", "b"], ["prod"])],
                  [h.make_tensor_value_info(n, T.FLOAT, ["N", 3]) for n in "ab"],
                  [h.make_tensor_value_info(n, T.FLOAT, ["N", 3]) for n in ("sum", "prod")])


def gather():
    """TABLE[idx] with idx: (K,) int64."""
    return _model([h.make_node("Gather", ["table", "idx"], ["out"])],
                  [h.make_tensor_value_info("idx", T.INT64, ["K"])],
                  [h.make_tensor_value_info("out", T.FLOAT, ["K", 2])], [("table", TABLE)])


def unnamed_dims():
    """relu(x), x: (?, 3) with an anonymous dynamic dim, and y of unknown rank."""
    x = h.make_tensor_value_info("x", T.FLOAT, [None, 3])
    y = h.make_tensor_value_info("y", T.FLOAT, None)
    return _model([h.make_node("Relu", ["x"], ["r"]), h.make_node("Add", ["r", "y"], ["out"])],
                  [x, y], [h.make_tensor_value_info("out", T.FLOAT, None)])


def relu(x):
    return np.maximum(x, 0)


# name, model builder, inputs builder (batch) -> feed, reference (feed) -> outputs
CASES = [
    ("mlp", mlp, lambda n: {"x": RNG.standard_normal((n, 4)).astype(np.float32)},
     lambda f: [relu(f["x"] @ W + B)]),
    ("two_out", two_out,
     lambda n: {k: RNG.standard_normal((n, 3)).astype(np.float32) for k in "ab"},
     lambda f: [f["a"] + f["b"], f["a"] * f["b"]]),
    ("gather_int64", gather, lambda n: {"idx": RNG.integers(0, 5, n).astype(np.int64)},
     lambda f: [TABLE[f["idx"]]]),
    ("unnamed_dims", unnamed_dims,
     lambda n: {"x": RNG.standard_normal((n, 3)).astype(np.float32),
                "y": RNG.standard_normal((n, 3)).astype(np.float32)},
     lambda f: [relu(f["x"]) + f["y"]]),
]
CASE_IDS = [c[0] for c in CASES]


def _check(outs, want):
    assert len(outs) == len(want)
    for got, ref in zip(outs, want):
        assert got.dtype == ref.dtype and got.shape == ref.shape
        np.testing.assert_allclose(got, ref, **TOL)


@pytest.mark.parametrize("io_binding", [False, True], ids=["run", "io_binding"])
@pytest.mark.parametrize("static", [False, True], ids=["dynamic", "static"])
@pytest.mark.parametrize("batch", [1, 7])
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_outputs_match_numpy(case, batch, static, io_binding):
    _, build, feed_of, reference = case
    runner = OrtRunner(build(), cpu(), RuntimeOptions(static_shape=static, io_binding=io_binding))
    feed = feed_of(batch)
    _check(runner.run(feed), reference(feed))
    _check(runner.run([feed[n] for n in runner.input_names]), reference(feed))


def test_model_from_path_bytes_and_external_data(tmp_path):
    feed = {"x": RNG.standard_normal((2, 4)).astype(np.float32)}
    want = [relu(feed["x"] @ W + B)]
    path = tmp_path / "mlp.onnx"
    onnx.save_model(mlp(), path)
    ext = tmp_path / "ext.onnx"
    onnx.save_model(mlp(None), ext, save_as_external_data=True, location="ext.bin",
                    size_threshold=0)
    assert (tmp_path / "ext.bin").stat().st_size > 0
    for model in (str(path), path, path.read_bytes(), str(ext)):
        _check(OrtRunner(model).run(feed), want)
    # static shapes with an anonymous dim edit a copy that must keep the external weights
    _check(OrtRunner(ext, options=RuntimeOptions(static_shape=True)).run(feed), want)


def test_single_array_for_one_input_model():
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    _check(OrtRunner(mlp()).run(x), [relu(x @ W + B)])


def test_introspection():
    runner = OrtRunner(two_out())
    assert runner.input_names == ["a", "b"]
    assert runner.output_names == ["sum", "prod"]
    assert runner.input_shapes == {"a": ("N", 3), "b": ("N", 3)}
    assert runner.input_dtypes == {"a": np.dtype(np.float32), "b": np.dtype(np.float32)}
    assert runner.providers == ["CPUExecutionProvider"]
    odd = OrtRunner(unnamed_dims())
    assert odd.input_shapes == {"x": (None, 3), "y": None}
    assert OrtRunner(gather()).input_dtypes == {"idx": np.dtype(np.int64)}
    assert OrtRunner(mlp()).input_names == ["x"]  # initializers W, b are not inputs


def test_dynamic_cache_one_session_for_all_batches():
    runner = OrtRunner(mlp())
    first = runner.session_for({"x": np.zeros((1, 4), np.float32)})
    for batch in (1, 7, 1, 3):
        runner.run({"x": np.zeros((batch, 4), np.float32)})
        assert runner.session_for({"x": np.zeros((batch, 4), np.float32)}) is first
    assert runner.num_sessions == 1
    assert first.get_inputs()[0].shape == ["N", 4]


@pytest.mark.parametrize("build,feed,pinned", [
    (mlp, {"x": np.zeros((7, 4), np.float32)}, {"x": [7, 4]}),
    (unnamed_dims, {"x": np.zeros((2, 3), np.float32), "y": np.zeros((2, 3), np.float32)},
     {"x": [2, 3], "y": [2, 3]}),
], ids=["named_dim_override", "anonymous_dims_copy"])
def test_static_shape_pins_dims_one_session_per_shape(build, feed, pinned):
    runner = OrtRunner(build(), options=RuntimeOptions(static_shape=True))
    session = runner.session_for(feed)
    assert {i.name: i.shape for i in session.get_inputs()} == pinned
    assert runner.session_for(feed) is session  # same signature: cache hit
    other = {k: np.zeros((1,) + v.shape[1:], v.dtype) for k, v in feed.items()}
    assert runner.session_for(other) is not session
    assert runner.num_sessions == 2


def test_float64_is_cast_once_with_a_warning_and_shares_the_session():
    runner = OrtRunner(mlp())
    x = RNG.standard_normal((2, 4))
    with pytest.warns(UserWarning, match=r"input 'x' is float64, the model takes float32"):
        out = runner.run({"x": x})
    _check(out, [relu(x.astype(np.float32) @ W + B)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        runner.run({"x": x})  # warned once per input already
    assert runner.session_for({"x": x}) is runner.session_for({"x": x.astype(np.float32)})
    assert runner.num_sessions == 1


def test_safe_integer_cast_is_silent():
    runner = OrtRunner(gather())
    idx = np.array([4, 0, 2], np.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _check(runner.run({"idx": idx}), [TABLE[idx]])
        _check(runner.run({"idx": [1, 1]}), [TABLE[[1, 1]]])  # lists become int64 arrays


# runner builder, inputs, error class, message fragments
ERRORS = [
    ("missing", two_out, {"a": np.zeros((1, 3), np.float32)}, GluonportError,
     ["input 'b' is missing", "['a', 'b']"]),
    ("unknown_name", mlp, {"x": np.zeros((1, 4), np.float32), "z": 1}, GluonportError,
     ["unknown input name 'z'", "['x']"]),
    ("initializer_name", mlp, {"x": np.zeros((1, 4), np.float32), "W": W}, GluonportError,
     ["unknown input name 'W'", "weight of the model"]),
    ("list_length", two_out, [np.zeros((1, 3), np.float32)], GluonportError,
     ["expects 2 inputs ['a', 'b'], got 1"]),
    ("not_a_container", mlp, 3.0, GluonportError, ["inputs must be a dict"]),
    ("rank", mlp, {"x": np.zeros(4, np.float32)}, ShapeError,
     ["input 'x' must have rank 2", "('N', 4)", "got shape (4,)"]),
    ("fixed_dim", mlp, {"x": np.zeros((2, 5), np.float32)}, ShapeError,
     ["input 'x' axis 1 must be 4", "got shape (2, 5)"]),
    ("dtype", gather, {"idx": np.zeros(2, np.float32)}, DTypeError,
     ["input 'idx' must be int64, got float32", "x.astype(np.int64)"]),
    ("narrowing_int", mlp, {"x": np.zeros((1, 4), np.int64)}, DTypeError,
     ["input 'x' must be float32, got int64"]),
]


@pytest.mark.parametrize("static", [False, True], ids=["dynamic", "static"])
@pytest.mark.parametrize("name,build,inputs,exc,fragments", ERRORS, ids=[e[0] for e in ERRORS])
def test_input_errors(name, build, inputs, exc, fragments, static):
    runner = OrtRunner(build(), options=RuntimeOptions(static_shape=static))
    with pytest.raises(exc) as info:
        runner.run(inputs)
    for fragment in fragments:
        assert fragment in str(info.value)
    assert runner.num_sessions == 0


def test_static_shape_refuses_disagreeing_shared_dim():
    runner = OrtRunner(two_out(), options=RuntimeOptions(static_shape=True))
    with pytest.raises(ShapeError, match=r"dimension 'N' is 2 .* but 3 in 'b'"):
        runner.run({"a": np.zeros((2, 3), np.float32), "b": np.zeros((3, 3), np.float32)})


def test_engine_failure_is_execution_error():
    model = _model([h.make_node("Add", ["a", "b"], ["c"])],
                   [h.make_tensor_value_info("a", T.FLOAT, ["N"]),
                    h.make_tensor_value_info("b", T.FLOAT, ["M"])],
                   [h.make_tensor_value_info("c", T.FLOAT, None)])
    with pytest.raises(ExecutionError, match=r"onnxruntime failed on inputs .*'a': \('float32'"):
        OrtRunner(model).run({"a": np.zeros(2, np.float32), "b": np.zeros(3, np.float32)})


@pytest.mark.parametrize("model,fragment", [
    (b"\x08\x01garbage bytes", "ONNX model (bytes)"),
    ("/nonexistent/model.onnx", "/nonexistent/model.onnx: no such ONNX file"),
    (_model([h.make_node("NoSuchOp", ["x"], ["y"])], [h.make_tensor_value_info("x", T.FLOAT, [1])],
            [h.make_tensor_value_info("y", T.FLOAT, [1])]), "NoSuchOp"),
], ids=["garbage_bytes", "missing_file", "unknown_op"])
def test_bad_models_are_format_errors(model, fragment):
    with pytest.raises(FormatError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        OrtRunner(model).run({"x": np.zeros(1, np.float32)})


def test_model_of_wrong_type():
    with pytest.raises(GluonportError, match="path, bytes or onnx.ModelProto, got int"):
        OrtRunner(42)


@pytest.mark.parametrize("kwargs,fragment", [
    ({"graph_optimization_level": "max"}, "['disable', 'basic', 'extended', 'all']"),
    ({"execution_mode": "async"}, "['sequential', 'parallel']"),
    ({"log_severity": 7}, "0 (verbose) to 4 (fatal)"),
])
def test_runtime_options_refuse_unknown_values(kwargs, fragment):
    with pytest.raises(GluonportError) as info:
        RuntimeOptions(**kwargs)
    assert fragment in str(info.value)


def test_runtime_options_reach_session_options():
    so = RuntimeOptions(intra_op_num_threads=2, inter_op_num_threads=3,
                        graph_optimization_level="basic", execution_mode="parallel",
                        enable_mem_pattern=False, log_severity=2).session_options({"N": 5})
    assert (so.intra_op_num_threads, so.inter_op_num_threads) == (2, 3)
    assert so.graph_optimization_level == onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
    assert so.execution_mode == onnxruntime.ExecutionMode.ORT_PARALLEL
    assert (so.enable_mem_pattern, so.log_severity_level) == (False, 2)


def test_warmup_builds_the_session():
    runner = OrtRunner(mlp())
    runner.warmup()
    assert runner.num_sessions == 1
    static = OrtRunner(mlp(), options=RuntimeOptions(static_shape=True))
    static.warmup({"x": (5, 4)})
    session = static.session_for({"x": np.zeros((5, 4), np.float32)})
    assert static.num_sessions == 1 and session.get_inputs()[0].shape == [5, 4]


@pytest.mark.parametrize("shapes,exc,fragment", [
    (None, ShapeError, "input 'y' has no shape in the model; pass warmup(shapes="),
    ({"q": (1,)}, GluonportError, "unknown input name 'q'"),
])
def test_warmup_errors(shapes, exc, fragment):
    with pytest.raises(exc) as info:
        OrtRunner(unnamed_dims()).warmup(shapes)
    assert fragment in str(info.value)


# -- providers -------------------------------------------------------------------------------

def test_cpu_providers():
    assert providers_for(cpu()) == ["CPUExecutionProvider"]
    assert providers_for(cpu(), provider_options={"CPUExecutionProvider": {"a": 1}}) == [
        ("CPUExecutionProvider", {"a": 1})]


@pytest.mark.parametrize("kwargs,fragment", [
    ({"tensorrt": True}, "tensorrt=True needs a gpu context"),
    ({"provider_options": {"CUDAExecutionProvider": {}}},
     "provider_options for ['CUDAExecutionProvider'], which cpu(0) does not use"),
])
def test_cpu_provider_misuse(kwargs, fragment):
    with pytest.raises(GluonportError) as info:
        providers_for(cpu(), **kwargs)
    assert fragment in str(info.value)


def test_installed_onnxruntime_names_this_distribution():
    dists = installed_onnxruntime()
    assert dists and any(v == onnxruntime.__version__ for _, v in dists)


@pytest.mark.skipif(HAS_CUDA, reason="the CUDA provider is installed here")
@pytest.mark.parametrize("make", [lambda: providers_for(gpu(0)), lambda: OrtRunner(mlp(), gpu(0)),
                                  lambda: providers_for(gpu(1), tensorrt=True)],
                         ids=["providers_for", "OrtRunner", "tensorrt"])
def test_gpu_without_cuda_provider_is_a_device_error(make):
    with pytest.raises(DeviceError) as info:
        make()
    text = str(info.value)
    name, version = installed_onnxruntime()[0]
    for fragment in ("CUDAExecutionProvider", f"{name} {version}", "CPUExecutionProvider",
                     'pip install "gluonport[gpu]"', "pip uninstall -y", "cuDNN"):
        assert fragment in text


@pytest.mark.skipif(HAS_CUDA, reason="the CUDA provider is installed here")
@pytest.mark.filterwarnings("ignore:Specified provider 'CUDAExecutionProvider'")
def test_session_that_dropped_cuda_is_refused(monkeypatch):
    # Pretend the provider is listed (as onnxruntime-gpu lists it even when CUDA libraries are
    # missing); the session onnxruntime then builds runs on CPU only, which must be refused.
    real = onnxruntime.get_available_providers()
    monkeypatch.setattr(onnxruntime, "get_available_providers",
                        lambda: ["CUDAExecutionProvider", *real])
    runner = OrtRunner(mlp(), gpu(0))
    with pytest.raises(DeviceError) as info:
        runner.run({"x": np.zeros((1, 4), np.float32)})
    text = str(info.value)
    assert "could not start CUDAExecutionProvider" in text
    assert "would run on ['CPUExecutionProvider'] instead" in text
    assert "libonnxruntime_providers_cuda" in text and "gluonport[gpu]" in text
    assert runner.num_sessions == 0


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs onnxruntime's CUDAExecutionProvider")
@pytest.mark.parametrize("io_binding", [None, False])
def test_runs_on_cuda(io_binding):
    feed = {"x": RNG.standard_normal((7, 4)).astype(np.float32)}
    runner = OrtRunner(mlp(), gpu(0), RuntimeOptions(io_binding=io_binding))
    _check(runner.run(feed), [relu(feed["x"] @ W + B)])
    assert runner.providers[0] == "CUDAExecutionProvider"
    assert providers_for(gpu(0))[0] == ("CUDAExecutionProvider", {"device_id": 0, "use_tf32": 0})


# -- threads ---------------------------------------------------------------------------------

@pytest.mark.parametrize("io_binding", [False, True], ids=["run", "io_binding"])
def test_concurrent_runs_match_single_thread_and_build_one_session(io_binding, monkeypatch):
    built = []
    real = onnxruntime.InferenceSession

    def counting(*args, **kwargs):
        built.append(threading.get_ident())
        return real(*args, **kwargs)

    monkeypatch.setattr(onnxruntime, "InferenceSession", counting)
    runner = OrtRunner(mlp(), options=RuntimeOptions(io_binding=io_binding))
    threads, calls = 8, 200
    feeds = [{"x": np.random.default_rng(t).standard_normal((t + 1, 4)).astype(np.float32)}
             for t in range(threads)]
    want = [relu(f["x"] @ W + B) for f in feeds]
    got: list[list[np.ndarray]] = [[] for _ in range(threads)]
    start = threading.Barrier(threads)

    def work(t):
        start.wait()
        for _ in range(calls):
            got[t].append(runner.run(feeds[t])[0])

    pool = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    assert len(built) == 1 and runner.num_sessions == 1
    single = [runner.run(f)[0] for f in feeds]
    for t in range(threads):
        np.testing.assert_allclose(single[t], want[t], **TOL)
        assert len(got[t]) == calls
        assert all(np.array_equal(out, single[t]) for out in got[t])


# -- values kept on the device between runs (run_device) ---------------------------------------

def test_run_device_keeps_outputs_and_takes_them_back():
    """Outputs asked for in ``keep`` come back as DeviceArrays (dtype and shape of the output)
    and feed a later run as they are; the results are the host runs' (here the device is the
    CPU: the same binding calls as on a GPU)."""
    from gluonport.runtime.ort import DeviceArray, to_device

    runner = OrtRunner(two_out(), cpu(), RuntimeOptions(io_binding=True))
    a = RNG.standard_normal((5, 3)).astype(np.float32)
    b = RNG.standard_normal((5, 3)).astype(np.float32)
    kept, product = runner.run_device({"a": to_device(a, cpu()), "b": b}, keep=[0])
    assert type(kept) is DeviceArray and (kept.dtype, kept.shape) == (np.float32, (5, 3))
    assert type(product) is np.ndarray
    np.testing.assert_array_equal(kept.numpy(), a + b)
    np.testing.assert_array_equal(product, a * b)
    again = runner.run_device({"a": kept, "b": b})  # the kept sum fed back without a copy
    np.testing.assert_array_equal(again[0], (a + b) + b)
    np.testing.assert_array_equal(again[1], (a + b) * b)


@pytest.mark.filterwarnings("ignore:.*input 'x' is float64")
def test_to_device_copies_and_run_device_refuses_a_cast():
    from gluonport.runtime.ort import to_device

    x = RNG.standard_normal((2, 4)).astype(np.float32)
    held = to_device(x, cpu())
    x[:] = 0  # the device copy does not follow the host array
    assert np.abs(held.numpy()).max() > 0
    runner = OrtRunner(mlp(), cpu(), RuntimeOptions(io_binding=True))
    with pytest.raises(DTypeError, match="float64 DeviceArray"):
        runner.run_device({"x": to_device(x.astype(np.float64), cpu())})
