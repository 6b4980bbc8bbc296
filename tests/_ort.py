"""onnxruntime sessions for tests that run a model on onnxruntime (as the reference, or to run an
exported graph), skipping precisely where the installed onnxruntime lacks a kernel.

pyproject.toml allows onnxruntime 1.19, which has no kernel for a few (op, type) pairs that the
tests build on purpose or that gluonport's exports write; newer onnxruntime releases have them.
:func:`session` skips the test (naming onnxruntime's version and the missing kernel) when, and
only when, onnxruntime refuses the model with NOT_IMPLEMENTED for one of the ops in
:data:`MISSING_KERNELS`; every other load error fails the test. Sessions are built through
:func:`gluonport.runtime.ort.inference_session`, so onnxruntime 1.19's float64 ``FusedMatMul``
(its own fusion) is handled the way gluonport handles it, not skipped.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from gluonport.runtime.ort import inference_session

__all__ = ["MISSING_KERNELS", "missing_kernel", "session", "avgpool_ceil_mode_differs"]

#: Ops an older onnxruntime (1.19, the floor) has no kernel for, with what it lacks.
MISSING_KERNELS = {
    "DeformConv": "a DeformConv kernel (ONNX opset 19's op; onnxruntime added one in 2026)",
    "Cos": "a float64 Cos kernel",
    "ReduceProd": "a float64 ReduceProd kernel",
    "ReduceL2": "a float64 ReduceL2 kernel",
    "BitShift": "a uint16 BitShift kernel",
}
_NO_KERNEL = re.compile(r"NOT_IMPLEMENTED : Could not find an implementation for (\w+)\((\d+)\)")


def missing_kernel(err: BaseException) -> str | None:
    """The skip reason when ``err`` is onnxruntime's NOT_IMPLEMENTED for a kernel in
    :data:`MISSING_KERNELS`, else None."""
    found = _NO_KERNEL.search(str(err))
    if type(err).__name__ != "NotImplemented" or not found or found[1] not in MISSING_KERNELS:
        return None
    return (f"onnxruntime {ort.__version__} lacks {MISSING_KERNELS[found[1]]} "
            f"(node {found[1]}-{found[2]}); newer onnxruntime has it")


def session(model: Any, **kwargs: Any) -> Any:
    """An ``InferenceSession`` for ``model`` (a ModelProto, bytes or a path); CPU unless
    ``providers`` says otherwise. Skips the test where :func:`missing_kernel` says so."""
    if hasattr(model, "SerializeToString"):
        model = model.SerializeToString()
    kwargs.setdefault("providers", ["CPUExecutionProvider"])
    try:
        return inference_session(model, **kwargs)
    except Exception as err:  # noqa: BLE001 - onnxruntime's errors have no public classes
        reason = missing_kernel(err)
        if reason is None:
            raise
        pytest.skip(reason)


def _avg_pool_1d(x: list[float], opset: int, **attrs: Any) -> np.ndarray:
    node = helper.make_node("AveragePool", ["x"], ["y"], **attrs)
    graph = helper.make_graph([node], "probe", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, [1, 1, len(x)])], [helper.make_tensor_value_info(
            "y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    opts = ort.SessionOptions()
    opts.log_severity_level = 3  # a newer onnxruntime's shape warning about the probe's output
    sess = ort.InferenceSession(model.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": np.asarray(x, np.float32).reshape(1, 1, -1)})[0].ravel()


@functools.cache
def avgpool_ceil_mode_differs(opset: int, count_include_pad: int) -> str | None:
    """Why onnxruntime's CPU ``AveragePool`` with ``ceil_mode=1`` and ``count_include_pad``
    differs from the ONNX spec at ``opset`` (probed on tiny inputs), or None where it follows
    it. onnxruntime 1.19 divides a trailing window that runs past the end padding by the whole
    kernel under ``count_include_pad=1``, and keeps a last window that starts in the end
    padding (the spec drops it)."""
    if count_include_pad:
        # windows [-1, 2), [1, 4), [3, 6) over [1, 2, 3, 4] padded to [-1, 5): the last one
        # holds 4 and one pad, so it averages to 2
        got = _avg_pool_1d([1, 2, 3, 4], opset, kernel_shape=[3], strides=[2], pads=[1, 1],
                           ceil_mode=1, count_include_pad=1)
        if not np.allclose(got, [1, 3, 2]):
            return (f"onnxruntime {ort.__version__}'s AveragePool-{opset} with ceil_mode=1 and "
                    f"count_include_pad=1 gives {got.tolist()} where the spec gives [1, 3, 2] "
                    "(it divides a trailing window by the whole kernel)")
    got = _avg_pool_1d([1, 2, 3, 4], opset, kernel_shape=[2], strides=[2], pads=[0, 1],
                       ceil_mode=1, count_include_pad=count_include_pad)
    if got.size != 2:
        return (f"onnxruntime {ort.__version__}'s AveragePool-{opset} with ceil_mode=1 keeps a "
                "last window that starts in the end padding (the ONNX spec drops it)")
    return None
