"""``gluonport serve``: --check without Ray, and the command itself started as a process that
serves the sample LeNet over HTTP on localhost until interrupted (skipped without Ray Serve)."""

from __future__ import annotations

import io
import json
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import numpy as np
import pytest
from gluonport_cli.main import cli

import gluonport
from tests._cli import CliRunner
from tests.serve._samples import prefix

LENET = prefix("lenet_bn")


def test_serve_check_prints_the_plan_without_ray():
    res = CliRunner().invoke(cli, ["serve", LENET, "--check", "--input-shape", "data=1,1,28,28",
                                   "--max-batch-size", "4"])
    assert res.exit_code == 0, res.output
    assert "data float32 [-1, 1, 28, 28]" in res.output
    assert "batched up to 4" in res.output


@pytest.mark.parametrize("args, code, words", [
    ([], 2, "--input-shape data="),
    (["--route", "lenet"], 2, "not a route"),
    (["--replicas", "0"], 2, "--replicas"),
    (["--port", "70000"], 2, "--port"),
    (["--device", "tpu"], 2, "--device"),
])
def test_serve_bad_options(args, code, words):
    res = CliRunner().invoke(cli, ["serve", LENET, "--check", *args])
    assert res.exit_code == code, res.output
    assert words in res.output


def test_serve_fixed_batch_says_so(tmp_path):
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h

    g = h.make_graph([h.make_node("Relu", ["x"], ["y"])], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, [2, 3])],
                     [h.make_tensor_value_info("y", T.FLOAT, [2, 3])])
    path = str(tmp_path / "fixed.onnx")
    onnx.save(h.make_model(g, ir_version=8, opset_imports=[h.make_opsetid("", 17)]), path)
    res = CliRunner().invoke(cli, ["serve", path, "--check"])
    assert res.exit_code == 0, res.output
    assert "fixed batch, served unbatched" in res.output


def _post(url, body, ctype, timeout=10):
    req = urllib.request.Request(url, data=body, headers={"Content-Type": ctype}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def test_serve_command_end_to_end():
    pytest.importorskip("ray.serve")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "gluonport_cli.main", "serve", LENET, "--input-shape",
         "data=1,1,28,28", "--port", str(port), "--route", "/m", "--max-batch-size", "4"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        # a terminal's Ctrl-C: the child starts with SIGINT's default action even if something
        # in this test process set it to "ignore" -- inherited, that keeps Python from raising
        # KeyboardInterrupt, and the serve command never stopped (seen in the full suite)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
    reader.start()
    url = f"http://127.0.0.1:{port}/m"
    x = np.random.default_rng(3).standard_normal((2, 1, 28, 28)).astype(np.float32)
    buf = io.BytesIO()
    np.save(buf, x)
    try:
        deadline = time.monotonic() + 120
        while not any("serving lenet_bn" in ln for ln in lines):
            assert proc.poll() is None, "".join(lines)
            assert time.monotonic() < deadline, "gluonport serve did not start in 120 s"
            time.sleep(0.5)
        assert f"at http://127.0.0.1:{port}/m" in "".join(lines)
        status, body = _post(url, buf.getvalue(), "application/x-npy")
        assert status == 200, body
        np.testing.assert_allclose(np.load(io.BytesIO(body)), gluonport.load(LENET)(x),
                                   rtol=1e-4, atol=1e-5)
        status, body = _post(url, b'{"inputs": {"data": [1]}}', "application/json")
        assert status == 400 and "shape" in json.loads(body)["error"]
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        reader.join(10)
    assert proc.returncode == 0, "".join(lines)
    assert "stopping lenet_bn" in "".join(lines)


def test_serve_without_ray_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now fails as when absent
    monkeypatch.setitem(sys.modules, "ray.serve", None)
    res = CliRunner().invoke(cli, ["serve", LENET, "--input-shape", "data=1,1,28,28"])
    assert res.exit_code == 5, res.output
    assert 'pip install "gluonport[serve]"' in res.output


def test_serve_on_a_gpu_that_is_not_there_fails_before_deploying():
    import onnxruntime

    if "CUDAExecutionProvider" in onnxruntime.get_available_providers():
        pytest.skip("this onnxruntime has the CUDA provider")
    res = CliRunner().invoke(cli, ["serve", LENET, "--check", "--device", "cuda:0",
                                   "--input-shape", "data=1,1,28,28"])
    assert res.exit_code == 5, res.output
    assert "CUDAExecutionProvider" in res.output and res.output.count("\n") == 1
