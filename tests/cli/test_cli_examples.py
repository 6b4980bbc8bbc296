"""The command lines users copy run as written: README's ``bash`` block and the ``Examples:`` of
every command's ``--help``, in a scratch directory holding ``sample_models/`` (README's lines
first, in order, since later ones read what ``convert`` wrote). Lines that need files only a
user has (their own model code, ``model.onnx``) or a GPU are skipped by name.

Also: what a user sees when the shape of an input is needed and neither given nor recorded."""

from __future__ import annotations

import os
import re
import shlex

import pytest
from gluonport_cli.main import cli

import gluonport as mx
from gluonport.summary import input_shape_hints
from tests._cli import CliRunner

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NEEDS_USER_FILES = ("mynets:", "model.onnx", "cuda")


def _readme_lines() -> list[str]:
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        blocks = re.findall(r"```bash\n(.*?)```", f.read(), flags=re.S)
    return [ln for b in blocks for ln in b.splitlines() if ln.startswith("gluonport ")]


def _help_lines() -> list[str]:
    lines = []
    for name in [None, *sorted(cli.commands)]:
        text = CliRunner().invoke(cli, [name, "--help"] if name else ["--help"]).output
        example = text.split("Examples:", 1)[1] if "Examples:" in text else ""
        lines += [ln.strip() for ln in example.split("\n\n")[0].splitlines()
                  if ln.strip().startswith("gluonport ")]
    return lines


def _argv(line: str) -> list[str]:
    argv = shlex.split(line, comments=True)
    assert argv[0] == "gluonport"
    return argv[1:]


def test_every_example_line_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.symlink(os.path.join(ROOT, "sample_models"), "sample_models")
    readme, helps = _readme_lines(), _help_lines()
    assert len(readme) >= 6 and len(helps) >= 10
    ran = []
    for line in readme + helps:
        if any(s in line for s in NEEDS_USER_FILES) or line.startswith("gluonport quickstart"):
            continue  # quickstart has its own test (it installs nothing, but takes ~10 s)
        res = CliRunner().invoke(cli, _argv(line))
        assert res.exit_code == 0, f"{line}\n{res.output}"
        ran.append(line)
    assert len(ran) >= 12


def _error(*argv: str) -> str:
    res = CliRunner().invoke(cli, list(argv))
    assert res.exit_code == 2, res.output  # a usage error: an option the model needs
    return res.output


@pytest.mark.parametrize("command", [["convert", "-o", "x.onnx"], ["validate"], ["run"],
                                     ["bench", "--batch", "1"]])
def test_missing_input_shape_names_the_option_and_the_first_layer(command, tmp_path,
                                                                  monkeypatch):
    monkeypatch.chdir(tmp_path)
    lenet = os.path.join(ROOT, "sample_models", "lenet_bn")
    out = _error(command[0], lenet, *command[1:])
    assert "the shape of input 'data' is not fixed by the model" in out
    assert "--input-shape data=D1,D2,..." in out
    assert ("data looks like N,1,H,W (hybridsequential1_conv0_fwd is a 2-D Convolution over 1 "
            "channel)") in out
    assert not os.path.exists("x.onnx")


def test_onnx_declared_dims_are_used_and_reported(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    lenet = os.path.join(ROOT, "sample_models", "lenet_bn")
    runner = CliRunner()
    assert runner.invoke(cli, ["convert", lenet, "-o", "l.onnx", "--dynamic-batch",
                               "--input-shape", "data=2,1,28,28", "--no-verify"]).exit_code == 0
    res = runner.invoke(cli, ["run", "l.onnx"])  # symbolic batch -> 1
    assert res.exit_code == 0, res.output
    assert "input data: random uniform(-1, 1), shape (1, 1, 28, 28)" in res.output
    assert "shape (1, 10)" in res.output
    # the MXNet graph records nothing, its ONNX conversion does: validate uses the latter
    res = runner.invoke(cli, ["validate", lenet, "l.onnx"])
    assert res.exit_code == 0, res.output
    # an ONNX input open beyond the batch axis is reported with its declared dims
    import onnx

    model = onnx.load("l.onnx")
    model.graph.input[0].type.tensor_type.shape.dim[2].dim_param = "height"
    onnx.save(model, "open.onnx")
    out = _error("run", "open.onnx")
    assert "data is (batch,1,height,28) in the model" in out


@pytest.mark.parametrize("build, params, want", [
    # normalisation before the first conv is looked through; grouped conv counts all channels
    (lambda d: mx.sym.Convolution((d - 127.5) * 0.0078, kernel=(3, 3), num_filter=8,
                                  num_group=2, name="c"),
     {"c_weight": (8, 2, 3, 3), "c_bias": (8,)},
     "N,4,H,W (c is a 2-D Convolution over 4 channels)"),
    (lambda d: mx.sym.Convolution(d, kernel=(3, 3), num_filter=8, layout="NHWC", name="c"),
     {"c_weight": (8, 3, 3, 5), "c_bias": (8,)},
     "N,H,W,5 (c is a 2-D Convolution over 5 channels)"),
    (lambda d: mx.sym.FullyConnected(mx.sym.Activation(d, act_type="relu"), num_hidden=4,
                                     flatten=False, name="fc"),
     {"fc_weight": (4, 7), "fc_bias": (4,)},
     "...,7 (fc is a FullyConnected over 7 features)"),
    (lambda d: mx.sym.Embedding(d, input_dim=100, output_dim=8, name="emb"),
     {"emb_weight": (100, 8)},
     "N,... of integer ids below 100 (emb is an Embedding)"),
])
def test_input_shape_hints(build, params, want):
    sym = build(mx.sym.var("data"))
    assert input_shape_hints(sym, params) == {"data": want}


def test_no_hint_for_recorded_shapes_or_unknown_first_layers():
    fc = mx.sym.FullyConnected(mx.sym.var("data", shape=(2, 7)), num_hidden=4, name="fc")
    assert input_shape_hints(fc, {"fc_weight": (4, 7), "fc_bias": (4,)}) == {}
    tr = mx.sym.FullyConnected(mx.sym.transpose(mx.sym.var("data")), num_hidden=4, name="fc")
    assert input_shape_hints(tr, {"fc_weight": (4, 7), "fc_bias": (4,)}) == {}
