"""InsightFace-style checkpoints (symbol API + ``save_checkpoint``), made by MXNet 1.9.1 with
tests/golden/insightface/gen_insightface.py, through every path a user of them takes:
SymbolBlock.imports on both backends, ``gluonport.load``, ONNX export with a dynamic batch run on
onnxruntime, and that ONNX imported back. Every output equals MXNet's recorded outputs within
rtol 1e-4 / atol 1e-5 (float32 arithmetic in a different order; the recorded outputs are O(1),
the embedding O(10))."""

import os

import numpy as np
import onnx
import pytest

import gluonport as mx
from gluonport import gluon
from gluonport.onnx import export_model, import_model
from tests.onnx._export_check import run_ort

HERE = os.path.join(os.path.dirname(__file__), "golden", "insightface")
MODELS = {"arcface_mbf": (3, 112, 112), "retinaface_mnet": (3, 100, 76)}
RTOL, ATOL = 1e-4, 1e-5


def _golden(name: str) -> tuple[str, np.ndarray, dict[str, np.ndarray]]:
    prefix = os.path.join(HERE, name)
    with np.load(prefix + "-outputs.npz") as z:
        outs = {k: z[k] for k in z.files}
    return prefix, np.load(prefix + "-input.npy"), outs


def _check(got: list, want: dict[str, np.ndarray]) -> None:
    assert len(got) == len(want)
    for g, (name, w) in zip(got, want.items()):
        g = g.asnumpy() if hasattr(g, "asnumpy") else np.asarray(g)
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL, err_msg=name)


def _as_list(out) -> list:
    return list(out) if isinstance(out, (list, tuple)) else [out]


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("backend", ["numpy", "onnxruntime"])
def test_symbolblock_imports(name, backend):
    prefix, x, want = _golden(name)
    net = gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
    # save_checkpoint's 'arg:'/'aux:' keys land on the graph's own parameter names
    assert set(net.collect_params()) == set(net._cached_graph[1].list_inputs()) - {"data"}
    net.hybridize(backend=backend)
    _check(_as_list(net(mx.nd.array(x))), want)
    # one sample at a time gives the batch's rows
    _check(_as_list(net(mx.nd.array(x[1:]))), {k: v[1:] for k, v in want.items()})


@pytest.mark.parametrize("name", sorted(MODELS))
def test_load_predictor(name):
    prefix, x, want = _golden(name)
    pred = mx.load(prefix, epoch=0)
    assert pred.input_names == ["data"]
    assert pred.output_names == list(want)
    _check(_as_list(pred(x)), want)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_onnx_export_dynamic_batch_and_back(name, tmp_path):
    prefix, x, want = _golden(name)
    path = export_model(prefix + "-symbol.json", prefix + "-0000.params",
                        in_shapes=[(1, *MODELS[name])], onnx_file_path=str(tmp_path / "m.onnx"),
                        dynamic=True, dynamic_input_shapes=[(None, *MODELS[name])])
    model = onnx.load(path)
    assert [i.name for i in model.graph.input] == ["data"]
    batch = model.graph.input[0].type.tensor_type.shape.dim[0]
    assert not batch.HasField("dim_value"), "batch axis should be symbolic"
    _check(run_ort(model, {"data": x}), want)
    _check(run_ort(model, {"data": x[:1]}), {k: v[:1] for k, v in want.items()})

    sym, args, auxs = import_model(path)
    exe = sym.bind(mx.cpu(), args={**args, "data": mx.nd.array(x)}, aux_states=auxs)
    _check(exe.forward(is_train=False), want)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_cli_convert_verifies(name, tmp_path):
    """`gluonport convert` checks numpy executor vs onnxruntime on random inputs; RetinaFace's
    box/landmark outputs reach ~50, where float32 rounding differs by a few 1e-5 near zero and
    the default tolerance (atol scaled by the output's magnitude) must still pass."""
    from gluonport_cli.main import cli

    from tests._cli import CliRunner

    prefix, _, _ = _golden(name)
    res = CliRunner().invoke(cli, ["convert", prefix, "-o", str(tmp_path / "m.onnx"),
                                   "--input-shape", "data=1," + ",".join(map(str, MODELS[name])),
                                   "--dynamic-batch"])
    assert res.exit_code == 0, res.output
    assert "verified: max abs error" in res.output
