"""One end-to-end run per command through the installed ``gluonport`` console script."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import textwrap

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LENET = os.path.join(ROOT, "sample_models", "lenet_bn")
EXE = shutil.which("gluonport")
pytestmark = pytest.mark.skipif(EXE is None, reason="console script not installed "
                                "(pip install -e .)")


def sh(*args: str, cwd: str = ROOT, ok: bool = True) -> subprocess.CompletedProcess:
    out = subprocess.run([EXE, *args], capture_output=True, text=True, cwd=cwd, timeout=600)
    if ok:
        assert out.returncode == 0, out.stdout + out.stderr
    return out


def test_inspect():
    info = json.loads(sh("inspect", LENET + "-symbol.json", "--json").stdout)
    assert info["ops"]["Convolution"] == 2 and info["ops_without_onnx"] == []


def test_convert_both_ways_then_validate_and_run(tmp_path):
    onnx_file = str(tmp_path / "lenet.onnx")
    out = sh("convert", LENET, "-o", onnx_file, "--dynamic-batch", "--input-shape",
             "data=2,1,28,28").stdout
    assert "verified" in out
    sh("validate", LENET, onnx_file, "--input-shape", "data=5,1,28,28")
    res = sh("run", onnx_file, "--input", f"data={LENET}-input.npy", "-o",
             str(tmp_path / "o.npz"))
    assert "wrote" in res.stdout
    got = next(iter(np.load(tmp_path / "o.npz").values()))
    np.testing.assert_allclose(got, np.load(LENET + "-output.npy"), rtol=1e-4, atol=1e-5)
    try:
        import gluonport.onnx.importer  # noqa: F401
    except ImportError:
        pytest.skip("the ONNX importer is not available yet")
    back = str(tmp_path / "back")
    sh("convert", onnx_file, "-o", back, "--input-shape", "data=2,1,28,28")
    assert os.path.exists(back + "-symbol.json") and os.path.exists(back + "-0000.params")


def test_validate_bisect():
    out = sh("validate", LENET, "--input", f"data={LENET}-input.npy", "--bisect").stdout
    assert "intermediate outputs agree" in out


def test_bench():
    out = sh("bench", LENET, "--input-shape", "data=1,1,28,28", "--batch", "1,2",
             "--iters", "2", "--warmup", "1", "--json").stdout
    rows = json.loads(out)
    assert {r["backend"] for r in rows} == {"numpy", "onnxruntime"}


def test_export_from_python_code(tmp_path):
    (tmp_path / "mynets.py").write_text(textwrap.dedent("""
        from gluonport import gluon
        from gluonport.gluon import nn

        def build(units=8):
            net = nn.HybridSequential()
            with net.name_scope():
                net.add(nn.Dense(units, activation="relu"), nn.Dense(3))
            return net
    """))
    sh("export", "mynets:build", "--kwargs", '{"units": 5}', "--input-shape", "data=2,4",
       "-o", "net", "--onnx", "net.onnx", cwd=str(tmp_path))
    for f in ("net-symbol.json", "net-0000.params", "net.onnx"):
        assert (tmp_path / f).exists(), f
    bad = sh("export", "nosuchmodule:build", "--input-shape", "data=2,4", "-o", "x",
             cwd=str(tmp_path), ok=False)
    assert bad.returncode == 2 and "cannot import module" in bad.stderr


def test_quickstart():
    out = sh("quickstart", LENET).stdout
    assert "OK: converted, validated and ran" in out
