"""Triton model repositories: config.pbtxt parsed by Triton's own ModelConfig protobuf, and the
written model.onnx run on plain onnxruntime at batch 1 and at max_batch_size against the output
the real MXNet 1.9.1 produced for the sample input (sample_models/NAME-output.npy)."""

from __future__ import annotations

import os

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import gluonport
from gluonport.errors import ShapeError, UnsupportedOpError
from gluonport.serve import prepare_model, write_triton_repo
from tests._cli import CliRunner
from tests.serve._samples import NAMES, prefix

model_config_pb2 = pytest.importorskip("tritonclient.grpc.model_config_pb2")
from google.protobuf import text_format  # noqa: E402

NP_OF = {"TYPE_FP32": np.float32, "TYPE_INT64": np.int64, "TYPE_FP16": np.float16}


def _parse(folder: str):
    with open(os.path.join(folder, "config.pbtxt")) as f:
        return text_format.Parse(f.read(), model_config_pb2.ModelConfig())


def _type_name(cfg_type: int) -> str:
    return model_config_pb2.DataType.Name(cfg_type)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("max_batch", [1, 5])
def test_sample_repo_parses_and_runs_at_batch_1_and_max(tmp_path, name, max_batch):
    x = np.load(prefix(name) + "-input.npy")
    want = np.load(prefix(name) + "-output.npy")  # made by MXNet 1.9.1
    folder = write_triton_repo(prefix(name), tmp_path, max_batch_size=max_batch,
                               instance_count=3, input_shapes={"data": x.shape})
    assert folder == os.path.join(tmp_path, name)
    assert sorted(os.listdir(tmp_path)) == [name]  # no temp folder left behind
    cfg = _parse(folder)
    assert cfg.name == name and cfg.platform == "onnxruntime_onnx"
    assert cfg.max_batch_size == max_batch
    assert cfg.dynamic_batching.max_queue_delay_microseconds >= 0
    assert cfg.HasField("dynamic_batching")
    assert [(g.count, model_config_pb2.ModelInstanceGroup.Kind.Name(g.kind))
            for g in cfg.instance_group] == [(3, "KIND_CPU")]
    (inp,) = cfg.input
    (out,) = cfg.output
    assert inp.name == "data" and list(inp.dims) == list(x.shape[1:])
    assert _type_name(inp.data_type) == "TYPE_FP32" and _type_name(out.data_type) == "TYPE_FP32"
    assert list(out.dims) == list(want.shape[1:])
    sess = ort.InferenceSession(os.path.join(folder, "1", "model.onnx"),
                                providers=["CPUExecutionProvider"])
    assert [i.name for i in sess.get_inputs()] == [inp.name]
    assert [o.name for o in sess.get_outputs()] == [out.name]
    rows = np.concatenate([x] * (max_batch // len(x) + 1))
    wants = np.concatenate([want] * (max_batch // len(want) + 1))
    for batch in (1, max_batch):
        feed = rows[:batch].reshape([batch, *inp.dims]).astype(NP_OF[_type_name(inp.data_type)])
        (got,) = sess.run([out.name], {inp.name: feed})
        assert list(got.shape) == [batch, *out.dims]
        np.testing.assert_allclose(got, wants[:batch], rtol=1e-4, atol=1e-5)


def _onnx_file(path, nodes, inputs, outputs, inits=()):
    g = h.make_graph(nodes, "g", inputs, outputs, list(inits))
    model = h.make_model(g, ir_version=8, opset_imports=[h.make_opsetid("", 17)])
    onnx.save(model, path)
    return str(path)


def test_fixed_batch_gets_max_batch_size_0_and_full_dims(tmp_path):
    path = _onnx_file(tmp_path / "fixed.onnx", [h.make_node("Relu", ["x"], ["y"])],
                      [h.make_tensor_value_info("x", T.FLOAT, [2, 3])],
                      [h.make_tensor_value_info("y", T.FLOAT, [2, 3])])
    cfg = _parse(write_triton_repo(path, tmp_path / "repo", max_batch_size=8))
    assert cfg.max_batch_size == 0 and not cfg.HasField("dynamic_batching")
    assert list(cfg.input[0].dims) == [2, 3] and list(cfg.output[0].dims) == [2, 3]


def test_output_that_loses_the_batch_is_not_batched(tmp_path):
    shape = h.make_tensor("s", T.INT64, [1], [-1])
    path = _onnx_file(tmp_path / "flat.onnx", [h.make_node("Reshape", ["x", "s"], ["y"])],
                      [h.make_tensor_value_info("x", T.FLOAT, ["N", 3])],
                      [h.make_tensor_value_info("y", T.FLOAT, [None])], [shape])
    sm = prepare_model(path)
    assert not sm.batch_dynamic and "do not keep the batch" in sm.why_fixed
    cfg = _parse(write_triton_repo(sm, tmp_path / "repo"))
    assert cfg.max_batch_size == 0 and list(cfg.input[0].dims) == [1, 3]
    assert list(cfg.output[0].dims) == [3]
    sess = ort.InferenceSession(str(tmp_path / "repo" / "flat" / "1" / "model.onnx"),
                                providers=["CPUExecutionProvider"])
    assert sess.get_inputs()[0].shape == [1, 3]


def test_dynamic_non_batch_dims_are_minus_one(tmp_path):
    path = _onnx_file(tmp_path / "img.onnx", [h.make_node("Relu", ["x"], ["y"])],
                      [h.make_tensor_value_info("x", T.FLOAT, ["N", 3, "H", "W"])],
                      [h.make_tensor_value_info("y", T.FLOAT, ["N", 3, "H", "W"])])
    with pytest.raises(ShapeError, match="sample shape"):
        prepare_model(path)
    cfg = _parse(write_triton_repo(path, tmp_path / "repo", input_shapes={"x": (1, 3, 8, 8)}))
    assert cfg.max_batch_size == 8 and list(cfg.input[0].dims) == [3, -1, -1]


def test_gpu_instance_group_and_rewrite_replaces_the_folder(tmp_path):
    x = np.load(prefix("mlp") + "-input.npy")
    folder = write_triton_repo(prefix("mlp"), tmp_path, device="cuda:1", instance_count=2,
                               input_shapes={"data": x.shape})
    (group,) = _parse(folder).instance_group
    assert model_config_pb2.ModelInstanceGroup.Kind.Name(group.kind) == "KIND_GPU"
    assert list(group.gpus) == [1] and group.count == 2
    with open(os.path.join(folder, "stale.txt"), "w") as f:
        f.write("old")
    write_triton_repo(prefix("mlp"), tmp_path, input_shapes={"data": x.shape})
    assert sorted(os.listdir(folder)) == ["1", "config.pbtxt"]
    assert sorted(os.listdir(tmp_path)) == ["mlp"]


def test_unsupported_op_is_refused_before_anything_is_written(tmp_path):
    sym = gluonport.sym.linalg.inverse(gluonport.sym.var("data"))
    sym.save(str(tmp_path / "inv-symbol.json"))
    with pytest.raises(UnsupportedOpError, match="inverse"):
        write_triton_repo(str(tmp_path / "inv-symbol.json"), tmp_path / "repo",
                          input_shapes={"data": (1, 3, 3)})
    assert not (tmp_path / "repo").exists()


def test_cli_convert_triton_repo(tmp_path):
    from gluonport_cli.main import cli

    repo = tmp_path / "repo"
    runner = CliRunner()
    res = runner.invoke(cli, ["convert", prefix("lenet_bn"), "--triton-repo", str(repo),
                              "--input-shape", "data=1,1,28,28", "--max-batch-size", "4"])
    assert res.exit_code == 0, res.output
    assert "verified" in res.output
    cfg = _parse(str(repo / "lenet_bn"))
    assert cfg.max_batch_size == 4 and list(cfg.input[0].dims) == [1, 28, 28]
    res = runner.invoke(cli, ["convert", prefix("lenet_bn"), "--triton-repo", str(repo),
                              "-o", str(tmp_path / "x.onnx")])
    assert res.exit_code == 2
    res = runner.invoke(cli, ["convert", prefix("lenet_bn")])
    assert res.exit_code == 2


def test_max_batch_size_0_keeps_the_dynamic_batch_in_the_dims(tmp_path):
    cfg = _parse(write_triton_repo(prefix("mlp"), tmp_path, max_batch_size=0,
                                   input_shapes={"data": (1, 10)}))
    assert cfg.max_batch_size == 0 and not cfg.HasField("dynamic_batching")
    assert list(cfg.input[0].dims) == [-1, 10] and list(cfg.output[0].dims) == [-1, 3]
    with pytest.raises(gluonport.errors.ArgumentError, match="max_batch_size"):
        write_triton_repo(prefix("mlp"), tmp_path, max_batch_size=-1)
    with pytest.raises(gluonport.errors.ArgumentError, match="instance_count"):
        write_triton_repo(prefix("mlp"), tmp_path, instance_count=0)


def test_every_model_form_gluonport_load_accepts(tmp_path):
    x_shape = {"data": (1, 10)}
    by_prefix = prepare_model(prefix("mlp"), input_shapes=x_shape)
    by_symbol = prepare_model(prefix("mlp") + "-symbol.json", input_shapes=x_shape)
    assert by_prefix.name == by_symbol.name == "mlp"
    onnx_file = tmp_path / "mlp.onnx"
    onnx_file.write_bytes(by_prefix.onnx)
    by_onnx = prepare_model(str(onnx_file))
    assert by_onnx.name == "mlp" and by_onnx.batch_dynamic
    assert [s.dims for s in by_onnx.outputs] == [s.dims for s in by_prefix.outputs] == [(-1, 3)]
