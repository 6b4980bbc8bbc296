"""The ``gluonport`` command: every command and documented error path (click's CliRunner),
plus one end-to-end run of the installed console script."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnxruntime
import pytest
from gluonport_cli.main import cli

from tests._cli import CliRunner

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MLP = os.path.join(ROOT, "sample_models", "mlp")
LENET = os.path.join(ROOT, "sample_models", "lenet_bn")


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_version_and_help_on_every_command():
    assert run("--version").output.startswith("gluonport, version ")
    for command in ("export", "convert", "inspect", "run", "validate", "bench", "quickstart"):
        res = run(command, "--help")
        assert res.exit_code == 0, res.output
        assert "Example" in res.output, f"{command} --help has no examples"


def test_inspect_mxnet_text_and_json():
    res = run("inspect", MLP + "-symbol.json")
    assert res.exit_code == 0
    assert "written by: MXNet 1.9.1" in res.output and "FullyConnected" in res.output
    info = json.loads(run("inspect", MLP, "--epoch", "0", "--json").output)
    assert info["inputs"] == ["data"] and info["parameters"] == 339
    assert info["ops"] == {"FullyConnected": 3, "Activation": 2}
    assert info["params_record_versions"] == ["V2"]


def test_convert_to_onnx_verifies_and_inspect_reads_it(tmp_path):
    out = str(tmp_path / "mlp.onnx")
    res = run("convert", MLP, "-o", out, "--input-shape", "data=4,10", "--dynamic-batch")
    assert res.exit_code == 0, res.output
    assert "verified: max abs error" in res.output and os.path.exists(out)
    info = json.loads(run("inspect", out, "--json").output)
    assert info["format"] == "onnx" and info["inputs"][0]["shape"] == ["batch", 10]
    assert info["producer"].startswith("gluonport")
    assert "gluonport.source_symbol_sha256" in info["metadata"]


def test_run_prints_and_saves(tmp_path):
    out = str(tmp_path / "out.npz")
    res = run("run", MLP, "--input", f"data={MLP}-input.npy", "-o", out)
    assert res.exit_code == 0, res.output
    got = np.load(out)["hybridsequential0_dense2_fwd_output"]
    np.testing.assert_allclose(got, np.load(MLP + "-output.npy"), rtol=1e-4, atol=1e-5)
    res = run("run", MLP, "--input-shape", "data=2,10", "--backend", "numpy", "--json")
    assert np.asarray(json.loads(res.output)["hybridsequential0_dense2_fwd_output"]).shape \
        == (2, 3)


def test_validate_self_and_pair(tmp_path):
    res = run("validate", MLP, "--input", f"data={MLP}-input.npy")
    assert res.exit_code == 0, res.output
    assert "max abs" in res.output
    out = str(tmp_path / "mlp.onnx")
    run("convert", MLP, "-o", out, "--input-shape", "data=4,10", "--no-verify", "--dynamic-batch")
    res = run("validate", MLP, out, "--input-shape", "data=3,10")
    assert res.exit_code == 0, res.output
    res = run("validate", MLP, "--input-shape", "data=3,10", "--bisect")
    assert "all" in res.output and "agree" in res.output


def test_validate_mismatch_exits_1(tmp_path):
    # A model whose params were changed after conversion: the pair differs.
    out = str(tmp_path / "mlp.onnx")
    run("convert", MLP, "-o", out, "--input-shape", "data=4,10", "--no-verify")
    prefix = str(tmp_path / "mlp2")
    shutil.copy(MLP + "-symbol.json", prefix + "-symbol.json")
    import gluonport as mx

    params = mx.nd.load(MLP + "-0000.params")
    key = next(k for k in params if k.endswith("dense0_weight"))
    params[key] = params[key] * 2
    mx.nd.save(prefix + "-0000.params", params)
    res = run("validate", prefix, out, "--input-shape", "data=4,10")
    assert res.exit_code == 1
    assert "differ" in res.output


def test_bench_table():
    res = run("bench", MLP, "--input-shape", "data=1,10", "--batch", "1,4", "--iters", "2",
              "--warmup", "1")
    assert res.exit_code == 0, res.output
    assert "onnxruntime" in res.output and "numpy" in res.output and "items/s" in res.output


HAS_CUDA = "CUDAExecutionProvider" in onnxruntime.get_available_providers()

ERRORS = [
    # (args, exit code, text in output)
    (["inspect", "no/such/model-symbol.json"], 3, "no such file"),
    (["run", MLP, "--input-shape", "data=4;10"], 2, "NAME=D1,D2"),
    (["run", MLP, "--input", "data"], 2, "NAME=FILE.npy"),
    (["run", MLP, "--input", "data=/no/such.npy"], 3, "no such input file"),
    (["run", MLP], 2, "--input-shape data=D1,D2,..."),
    (["run", MLP, "--input-shape", "data=4,10", "--device", "tpu:0"], 2, "cuda:N"),
    pytest.param(["run", MLP, "--input-shape", "data=4,10", "--device", "cuda:0"], 5,
                 "CUDAExecutionProvider", marks=pytest.mark.skipif(
                     HAS_CUDA, reason="the CUDA provider is installed here: test_run_on_cuda"),
                 id="run cuda:0 without CUDA"),
    (["convert", MLP, "-o", "x.onnx", "--opset", "7", "--input-shape", "data=4,10"], 2,
     "opset 7 is not supported"),
    (["bench", MLP, "--batch", "a,b"], 2, "list of ints"),
]


@pytest.mark.parametrize("args,code,text", ERRORS, ids=[  # a pytest.param row has its own id
    getattr(e, "id", None) or " ".join(e[0][:2]) + str(i) for i, e in enumerate(ERRORS)])
def test_error_paths_are_one_line(args, code, text, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == code, res.output
    assert text in res.output
    assert "Traceback" not in res.output


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs onnxruntime's CUDAExecutionProvider")
def test_run_on_cuda(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(cli, ["run", MLP, "--input-shape", "data=4,10", "--device",
                                   "cuda:0"])
    assert res.exit_code == 0, res.output
    assert "onnxruntime on gpu(0)" in res.output


def test_truncated_params_is_a_format_error(tmp_path):
    prefix = str(tmp_path / "m")
    shutil.copy(MLP + "-symbol.json", prefix + "-symbol.json")
    with open(MLP + "-0000.params", "rb") as f:
        data = f.read()
    with open(prefix + "-0000.params", "wb") as f:
        f.write(data[: len(data) // 2])
    res = CliRunner().invoke(cli, ["run", prefix, "--input-shape", "data=4,10"])
    assert res.exit_code == 3 and "byte" in res.output and "Traceback" not in res.output


def test_unsupported_op_exit_4(tmp_path):
    text = open(MLP + "-symbol.json").read().replace('"op": "Activation"', '"op": "MyOp"')
    prefix = str(tmp_path / "m")
    with open(prefix + "-symbol.json", "w") as f:
        f.write(text)
    shutil.copy(MLP + "-0000.params", prefix + "-0000.params")
    res = CliRunner().invoke(cli, ["convert", prefix, "-o", str(tmp_path / "m.onnx"),
                                   "--input-shape", "data=4,10"])
    assert res.exit_code == 4 and "MyOp" in res.output
    assert not os.path.exists(tmp_path / "m.onnx")


def test_debug_shows_traceback():
    res = CliRunner().invoke(cli, ["--debug", "inspect", "no/such-symbol.json"])
    assert res.exit_code != 0 and res.exception is not None


def test_console_script_end_to_end():
    exe = shutil.which("gluonport")
    if exe is None:
        pytest.skip("the gluonport console script is not installed (pip install -e .)")
    out = subprocess.run([exe, "quickstart", MLP], capture_output=True, text=True, cwd=ROOT,
                         timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "OK: converted, validated and ran" in out.stdout


def test_python_m_entry():
    out = subprocess.run([sys.executable, "-m", "gluonport_cli.main", "--version"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "gluonport" in out.stdout
