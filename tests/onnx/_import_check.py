"""Small ONNX models built in a test, imported by gluonport and compared with onnxruntime on the
same model (the independent reference). Shared by the test_import_<family>.py files."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper

from gluonport.onnx.backend import prepare
from gluonport.onnx.opset import ir_version_for
from tests._ort import session

__all__ = ["vi", "make_model", "check_import"]


def vi(name, elem, shape):
    """A typed graph input or output."""
    return helper.make_tensor_value_info(name, elem, shape)


def make_model(nodes, inputs, outputs, inits=(), opset=18, name="test") -> onnx.ModelProto:
    """A one-graph model at ``opset``; ``outputs`` is one value info or a list. Passes onnx's full
    check, so a test cannot compare two engines on an invalid model. Its IR version is the
    oldest that carries ``opset`` (as gluonport's exporter stamps), not the installed onnx's
    newest, which an older onnxruntime refuses whatever the opset (onnx 1.23 writes IR 14,
    onnxruntime 1.23 reads up to 11); IR 4 at least, where initializers need not be inputs."""
    outputs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    graph = helper.make_graph(nodes, name, inputs, list(outputs), list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              ir_version=max(ir_version_for(opset), 4))
    onnx.checker.check_model(model, full_check=True)
    return model


def check_import(model, feeds, rtol=1e-6, atol=1e-6, check_dtype=True, every_output=False,
                 skip_without_kernel=True) -> None:
    """gluonport's import of ``model`` against onnxruntime on ``model`` (the first output, or
    ``every_output``). With ``skip_without_kernel`` an onnxruntime that cannot load the model
    (older than its opset) skips the test rather than failing it."""
    if not skip_without_kernel:  # skips only for a kernel tests._ort knows older ones lack
        sess = session(model)
    else:
        try:
            sess = ort.InferenceSession(model.SerializeToString(),
                                        providers=["CPUExecutionProvider"])
        except Exception as exc:  # noqa: BLE001 - an onnxruntime older than the opset
            pytest.skip(f"onnxruntime {ort.__version__} cannot run the reference: {exc}")
    want = sess.run(None, feeds)
    got = prepare(model).run(feeds)
    if every_output:
        assert len(got) == len(want)
    else:
        got, want = got[:1], want[:1]
    for g, w in zip(got, want):
        if check_dtype:
            assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
