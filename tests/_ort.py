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
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from gluonport.runtime.ort import inference_session

__all__ = ["MISSING_KERNELS", "missing_kernel", "session", "avgpool_ceil_mode_differs",
           "avgpool_uneven_pads_differ"]

#: Kernels an older onnxruntime (1.19, the floor) lacks: op -> (the ONNX element types of its
#: first input that have no kernel, None for every type; what is missing).
MISSING_KERNELS: dict[str, tuple[frozenset[int] | None, str]] = {
    "DeformConv": (None, "a DeformConv kernel (ONNX opset 19's op; onnxruntime added one in "
                         "2026)"),
    "Cos": (frozenset({TensorProto.DOUBLE}), "a float64 Cos kernel"),
    "ReduceProd": (frozenset({TensorProto.DOUBLE}), "a float64 ReduceProd kernel"),
    "ReduceL2": (frozenset({TensorProto.DOUBLE}), "a float64 ReduceL2 kernel"),
    "BitShift": (frozenset({TensorProto.UINT16}), "a uint16 BitShift kernel"),
}
_NO_KERNEL = re.compile(r"NOT_IMPLEMENTED : Could not find an implementation for (\w+)\((\d+)\) "
                        r"node with name '([^']*)'")


def _first_input_types(model: onnx.ModelProto, op: str, name: str) -> list[int]:
    """The element type of the first input of each top-level ``op`` node called ``name`` (every
    ``op`` node when the name is empty), by onnx's shape inference; 0 where unknown."""
    graph = onnx.shape_inference.infer_shapes(model).graph
    types = {t.name: t.data_type for t in graph.initializer}
    types.update({vi.name: vi.type.tensor_type.elem_type
                  for vi in [*graph.input, *graph.value_info, *graph.output]})
    return [types.get(n.input[0], 0) for n in graph.node
            if n.op_type == op and (n.name == name or not name)]


def missing_kernel(err: BaseException, model: onnx.ModelProto) -> str | None:
    """The skip reason when ``err`` is onnxruntime's NOT_IMPLEMENTED for a kernel listed in
    :data:`MISSING_KERNELS` (the op, and the failing node's input type), else None."""
    found = _NO_KERNEL.search(str(err))
    if type(err).__name__ != "NotImplemented" or not found or found[1] not in MISSING_KERNELS:
        return None
    op, version, name = found.groups()
    lacking, what = MISSING_KERNELS[op]
    if lacking is not None:
        types = _first_input_types(model, op, name)
        if not types or any(t not in lacking for t in types):
            return None
    return (f"onnxruntime {ort.__version__} lacks {what} (node {op}-{version}); newer "
            "onnxruntime has it")


def session(model: Any, **kwargs: Any) -> Any:
    """An ``InferenceSession`` for ``model`` (a ModelProto, bytes or a path); CPU unless
    ``providers`` says otherwise. Skips the test where :func:`missing_kernel` says so."""
    if isinstance(model, onnx.ModelProto):
        why = _uneven_avgpool_reason(model)
        if why:
            pytest.skip(why)
    source = model.SerializeToString() if hasattr(model, "SerializeToString") else model
    kwargs.setdefault("providers", ["CPUExecutionProvider"])
    try:
        return inference_session(source, **kwargs)
    except Exception as err:  # noqa: BLE001 - onnxruntime's errors have no public classes
        if not hasattr(model, "SerializeToString"):
            model = (onnx.load_model_from_string(model) if isinstance(model, bytes)
                     else onnx.load(model))
        reason = missing_kernel(err, model)
        if reason is None:
            raise
        pytest.skip(reason)


def _avg_pool_probe(shape: tuple[int, ...], opset: int, **attrs: Any) -> onnx.ModelProto:
    """A one-node ``AveragePool`` model at ``opset`` over a float input of ``shape``."""
    node = helper.make_node("AveragePool", ["x"], ["y"], **attrs)
    graph = helper.make_graph([node], "probe", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, list(shape))], [helper.make_tensor_value_info(
            "y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def _ort_probe(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    """onnxruntime's CPU output of a probe model for input ``x``."""
    opts = ort.SessionOptions()
    opts.log_severity_level = 3  # a newer onnxruntime's shape warning about the probe's output
    sess = ort.InferenceSession(model.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


def _avg_pool_1d(x: list[float], opset: int, **attrs: Any) -> np.ndarray:
    data = np.asarray(x, np.float32).reshape(1, 1, -1)
    return _ort_probe(_avg_pool_probe(data.shape, opset, **attrs), data).ravel()


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


def _uneven_avgpool_reason(model: onnx.ModelProto) -> str | None:
    """:func:`avgpool_uneven_pads_differ` for ``model`` when its graph holds an AveragePool
    with ``count_include_pad=1`` and larger end pads than start pads (how gluonport exports
    MXNet's ``pooling_convention='full'``); None for any other model."""
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
    for node in model.graph.node:
        if node.op_type != "AveragePool":
            continue
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        pads = list(attrs.get("pads", []))
        half = len(pads) // 2
        if attrs.get("count_include_pad", 0) and pads[:half] != pads[half:]:
            return avgpool_uneven_pads_differ(opset)
    return None


@functools.cache
def avgpool_uneven_pads_differ(opset: int) -> str | None:
    """Why onnxruntime's CPU ``AveragePool`` at ``opset`` with ``count_include_pad=1`` and
    uneven pads differs from onnx's reference evaluator (the spec's implementation), probed on
    a 6x6 input with a 3x3 kernel, stride 2, pads (1, 1) before and (2, 2) after; None where
    it agrees. onnxruntime 1.23 (the newest for Python 3.10) differs from AveragePool-19 on."""
    from onnx.reference import ReferenceEvaluator

    x = np.arange(1, 37, dtype=np.float32).reshape(1, 1, 6, 6)
    model = _avg_pool_probe(x.shape, opset, kernel_shape=[3, 3], strides=[2, 2],
                            pads=[1, 1, 2, 2], count_include_pad=1)
    got = _ort_probe(model, x)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    if got.shape == want.shape and np.allclose(got, want):
        return None
    return (f"onnxruntime {ort.__version__}'s AveragePool-{opset} with count_include_pad=1 and "
            "uneven pads differs from onnx's reference evaluator (the ONNX spec)")
