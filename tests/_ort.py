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

import re
from typing import Any

import onnxruntime as ort
import pytest

from gluonport.runtime.ort import inference_session

__all__ = ["MISSING_KERNELS", "missing_kernel", "session"]

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
