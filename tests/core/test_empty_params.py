"""A graph without parameters has an empty ``.params`` file (MXNet writes the same bytes for
``nd.save(f, {})``, ``nd.save(f, [])`` and ``HybridBlock.export`` of a parameter-free block, and
``nd.load`` reads them as ``[]``). Everywhere a params file is read for a graph it means "no
parameters": ``export_model``, ``SymbolBlock.imports``, ``gluonport.load``, checkpoints,
``Module``, ``load_parameters`` and the CLI; a non-empty unnamed list is still refused."""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest
from gluonport_cli.main import cli

import gluonport as mx
from gluonport.errors import GluonportError
from tests._cli import CliRunner

# What MXNet 1.9.1 writes for nd.save(f, {}), nd.save(f, []) and export() of a block without
# parameters (the oracle: all three are these 32 bytes).
MXNET_EMPTY = bytes.fromhex("12010000000000000000000000000000"
                            "00000000000000000000000000000000")
X = np.array([[-1.5, 2.0, 0.25], [3.0, -4.0, 0.0]], np.float32)


class Scale(mx.gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        return F.relu(x) * 2 - 1


def _want(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0) * 2 - 1


@pytest.fixture
def prefix(tmp_path) -> str:
    """A parameter-free graph exported by HybridBlock.export (prefix of its file pair)."""
    net = Scale()
    net.hybridize()
    net(mx.nd.array(X))
    path = str(tmp_path / "scale")
    net.export(path)
    return path


def test_empty_params_bytes_are_mxnets(prefix, tmp_path):
    with open(prefix + "-0000.params", "rb") as f:
        assert f.read() == MXNET_EMPTY
    for i, empty in enumerate(({}, [])):
        mx.nd.save(str(tmp_path / f"e{i}.params"), empty)
        with open(tmp_path / f"e{i}.params", "rb") as f:
            assert f.read() == MXNET_EMPTY
    assert mx.nd.load(prefix + "-0000.params") == []  # as MXNet's nd.load


def test_export_model_accepts_an_empty_params_file(prefix, tmp_path):
    import onnxruntime as ort

    for params in (prefix + "-0000.params", {}, [], [{}, {}], None):
        out = str(tmp_path / "scale.onnx")
        mx.onnx.export_model(prefix + "-symbol.json", params, [X.shape], [np.float32], out)
        sess = ort.InferenceSession(out, providers=["CPUExecutionProvider"])
        got = sess.run(None, {sess.get_inputs()[0].name: X})[0]
        np.testing.assert_allclose(got, _want(X), rtol=1e-6)
        os.remove(out)


def test_symbolblock_imports_and_gluonport_load(prefix):
    net = mx.gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
    assert len(net.collect_params()) == 0
    np.testing.assert_allclose(net(mx.nd.array(X)).asnumpy(), _want(X), rtol=1e-6)
    for backend in ("numpy", "onnxruntime"):
        model = mx.load(prefix, epoch=0, backend=backend)
        np.testing.assert_allclose(model(X), _want(X), rtol=1e-6, err_msg=backend)


def test_checkpoint_module_and_load_parameters(prefix):
    sym, arg, aux = mx.model.load_checkpoint(prefix, 0)
    assert arg == {} and aux == {}
    mod = mx.mod.Module.load(prefix, 0, data_names=["data"], label_names=None)
    mod.bind(data_shapes=[("data", X.shape)], for_training=False)
    mod.load_params(prefix + "-0000.params")
    mod.forward(mx.io.DataBatch([mx.nd.array(X)]), is_train=False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), _want(X), rtol=1e-6)
    fresh = Scale()
    fresh.load_parameters(prefix + "-0000.params")  # nothing to load, nothing missing
    fresh.collect_params().load(prefix + "-0000.params")


def test_non_empty_unnamed_list_is_still_refused(tmp_path):
    path = str(tmp_path / "list.params")
    mx.nd.save(path, [mx.nd.ones((2,))])
    with pytest.raises(GluonportError, match="unnamed list"):
        mx.onnx.export_model(mx.sym.relu(mx.sym.var("data")), path, [(2,)])
    mx.sym.relu(mx.sym.var("data")).save(str(tmp_path / "list-symbol.json"))
    shutil.copyfile(path, str(tmp_path / "list-0000.params"))
    with pytest.raises(GluonportError, match="unnamed list"):
        mx.model.load_checkpoint(str(tmp_path / "list"), 0)
    with pytest.raises(GluonportError, match="unnamed list"):
        mx.gluon.SymbolBlock.imports(str(tmp_path / "list-symbol.json"), ["data"],
                                     str(tmp_path / "list-0000.params"))


def test_cli_convert_run_and_export(prefix, tmp_path, monkeypatch):
    runner = CliRunner()
    onnx_file = str(tmp_path / "cli.onnx")
    res = runner.invoke(cli, ["convert", prefix, "--epoch", "0", "-o", onnx_file,
                              "--input-shape", "data=2,3"])
    assert res.exit_code == 0, res.output
    np.save(tmp_path / "x.npy", X)
    out_npz = str(tmp_path / "y.npz")
    res = runner.invoke(cli, ["run", prefix, "--epoch", "0", "--input",
                              f"data={tmp_path / 'x.npy'}", "-o", out_npz])
    assert res.exit_code == 0, res.output
    with np.load(out_npz) as z:
        np.testing.assert_allclose(z[z.files[0]], _want(X), rtol=1e-6)
    module = tmp_path / "pfree_net.py"
    module.write_text("import gluonport as mx\n\n\nclass Scale(mx.gluon.HybridBlock):\n"
                      "    def hybrid_forward(self, F, x):\n"
                      "        return F.relu(x) * 2 - 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    res = runner.invoke(cli, ["export", "pfree_net:Scale", "--params", prefix + "-0000.params",
                              "--input-shape", "data=2,3", "-o", str(tmp_path / "again"),
                              "--onnx", str(tmp_path / "again.onnx")])
    assert res.exit_code == 0, res.output
    with open(tmp_path / "again-0000.params", "rb") as f:
        assert f.read() == MXNET_EMPTY
