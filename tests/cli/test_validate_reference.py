"""``gluonport validate`` and ``convert``'s check use a reference independent of the exporter:
an MXNet model runs on the numpy executor over its own graph, never through an ONNX export. So
an exporter bug (here: Activation(relu) lowered to Sigmoid, installed for one test) is caught,
where comparing the converter with itself would report 0. NaN/Inf disagreements are
mismatches; the report names the engine of each side."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from gluonport_cli.main import cli

import gluonport as mx
from gluonport.onnx import export as onnx_export
from gluonport.onnx.verify import compare
from tests._cli import CliRunner

SHAPE = "data=4,3"


def run(*args: str):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no raw RuntimeWarning may leak from a check
        return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def save_model(prefix: str, tail) -> None:
    """FullyConnected(3) then ``tail`` (a function of a Symbol), with fixed weights."""
    rng = np.random.default_rng(0)
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3, name="fc")
    tail(fc).save(prefix + "-symbol.json")
    mx.nd.save(prefix + "-0000.params", {
        "arg:fc_weight": mx.nd.array(rng.uniform(-1, 1, (3, 3))),
        "arg:fc_bias": mx.nd.array(rng.uniform(-1, 1, (3,)))})


@pytest.fixture
def relu_model(tmp_path) -> str:
    prefix = str(tmp_path / "relu")
    save_model(prefix, lambda x: mx.sym.Activation(x, act_type="relu", name="act"))
    return prefix


@pytest.fixture
def exporter_bug(monkeypatch):
    """An exporter that lowers Activation(relu) to Sigmoid (wrong, yet a valid ONNX model)."""
    def sigmoid(ctx):
        ctx.make("Sigmoid", [ctx.inputs[0]], outputs=ctx.outputs)

    monkeypatch.setitem(onnx_export._CUSTOM, "Activation", [(1, sigmoid)])


def export(prefix: str, dst: str) -> str:
    mx.onnx.export_model(prefix + "-symbol.json", prefix + "-0000.params", [(4, 3)],
                         onnx_file_path=dst)
    return dst


def test_pair_catches_an_exporter_bug(relu_model, exporter_bug, tmp_path):
    onnx_file = export(relu_model, str(tmp_path / "relu.onnx"))
    # the same buggy exporter is still installed: converting the MXNet side in memory would
    # reproduce the bug on both sides and report 0
    res = run("validate", relu_model, onnx_file, "--input-shape", SHAPE)
    assert res.exit_code == 1, res.output
    assert "differ beyond tolerance" in res.output
    assert f"reference: numpy executor on {relu_model}-symbol.json" in res.output
    assert f"candidate: onnxruntime (CPUExecutionProvider) on {onnx_file}" in res.output


def test_self_check_and_convert_catch_an_exporter_bug(relu_model, exporter_bug, tmp_path):
    res = run("validate", relu_model, "--input-shape", SHAPE)
    assert res.exit_code == 1, res.output
    assert "in-memory ONNX export" in res.output
    res = run("convert", relu_model, "-o", str(tmp_path / "x.onnx"), "--input-shape", SHAPE,
              "--json")
    assert res.exit_code == 1
    report = json.loads(res.output.split("\nError")[0])
    assert report["verified"] is False
    assert report["reference"] == f"numpy executor on {relu_model}-symbol.json"
    assert report["candidate"].startswith("onnxruntime (CPUExecutionProvider) on ")


def test_correct_export_passes_and_names_engines(relu_model, tmp_path):
    onnx_file = export(relu_model, str(tmp_path / "relu.onnx"))
    res = run("validate", relu_model, onnx_file, "--input-shape", SHAPE, "--json")
    assert res.exit_code == 0, res.output
    report = json.loads(res.output)
    assert report["ok"] and report["outputs"][0]["mismatches"] == 0
    assert report["reference"] == f"numpy executor on {relu_model}-symbol.json"
    assert report["candidate"] == f"onnxruntime (CPUExecutionProvider) on {onnx_file}"
    # two MXNet files: the numpy executor on each one's own graph
    res = run("validate", relu_model, relu_model, "--input-shape", SHAPE)
    assert res.exit_code == 0, res.output
    assert f"candidate: numpy executor on {relu_model}-symbol.json" in res.output
    # one ONNX file: the numpy executor on its imported graph vs onnxruntime on the file
    res = run("validate", onnx_file)
    assert res.exit_code == 0, res.output
    assert f"reference: numpy executor on the graph imported from {onnx_file}" in res.output
    # two ONNX files: onnxruntime on both
    res = run("validate", onnx_file, onnx_file)
    assert res.output.count(f"onnxruntime (CPUExecutionProvider) on {onnx_file}") == 2


def test_all_nan_model_matches_and_says_so(tmp_path):
    prefix = str(tmp_path / "nan")
    save_model(prefix, lambda x: mx.sym.sqrt(-mx.sym.abs(x) - 1, name="s"))
    onnx_file = export(prefix, str(tmp_path / "nan.onnx"))
    for args in ([prefix], [prefix, onnx_file]):
        res = run("validate", *args, "--input-shape", SHAPE)
        assert res.exit_code == 0, res.output
        assert "all NaN on both sides" in res.output


def test_nan_where_the_reference_is_finite_is_a_mismatch(relu_model, monkeypatch, tmp_path):
    def log(ctx):  # NaN for negative inputs, -Inf at 0, where relu is finite
        ctx.make("Log", [ctx.inputs[0]], outputs=ctx.outputs)

    monkeypatch.setitem(onnx_export._CUSTOM, "Activation", [(1, log)])
    onnx_file = export(relu_model, str(tmp_path / "log.onnx"))
    res = run("validate", relu_model, onnx_file, "--input-shape", SHAPE, "--json")
    assert res.exit_code == 1
    out = json.loads(res.output.split("\nError")[0])["outputs"][0]
    assert out["nonfinite"] > 0 and out["mismatches"] >= out["nonfinite"]


NAN, INF = np.nan, np.inf


@pytest.mark.parametrize("got, want, ok, nonfinite, matching_nan", [
    ([1.0, NAN], [1.0, NAN], True, 0, 1),          # NaN at the same place: a match
    ([1.0, NAN], [1.0, 2.0], False, 1, 0),         # NaN where the reference is finite
    ([1.0, 2.0], [1.0, NAN], False, 1, 0),         # and the reverse
    ([INF, -INF], [INF, -INF], True, 0, 0),        # equal infinities agree
    ([INF, 1.0], [1e30, 1.0], False, 1, 0),        # Inf where the reference is finite
    ([1e30, 1.0], [INF, 1.0], False, 1, 0),        # finite where the reference is Inf
    ([-INF, 1.0], [INF, 1.0], False, 1, 0),        # infinities of opposite sign
    ([NAN, 1.0], [INF, 1.0], False, 1, 0),         # NaN vs Inf
    ([NAN, NAN], [NAN, NAN], True, 0, 2),          # all NaN: a match, stated
    ([1.0, 2.0], [1.0, 2.5], False, 0, 0),         # a finite error
])
def test_compare_nonfinite(got, want, ok, nonfinite, matching_nan):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        err = compare("y", np.float32(got), np.float32(want), 1e-4, 1e-5)
    assert (err.ok, err.nonfinite, err.matching_nan) == (ok, nonfinite, matching_nan)
    assert np.isfinite(err.max_abs) and np.isfinite(err.max_rel)
    json.dumps(err.to_dict(), allow_nan=False)
