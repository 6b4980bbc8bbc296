"""onnxruntime sessions that survive onnxruntime's own fusions (the foundation layer, so that
``gluonport.onnx.verify`` and ``gluonport.runtime`` share it).

``onnxruntime`` is imported on first use only.
"""

from __future__ import annotations

from typing import Any

__all__ = ["inference_session"]

# onnxruntime's own graph optimizers that can write a node onnxruntime has no kernel for, by the
# op they write: MatmulTransposeFusion turns a float64 Transpose + MatMul into FusedMatMul, which
# onnxruntime 1.19 implements for float32 only (the session then fails with NOT_IMPLEMENTED).
_FUSIONS_WITHOUT_KERNEL = {"FusedMatMul": "MatmulTransposeFusion"}


def inference_session(model: Any, **kwargs: Any) -> Any:
    """``onnxruntime.InferenceSession(model, **kwargs)``, built again without the fusion when
    onnxruntime's own optimizer wrote a node it then finds no kernel for (onnxruntime 1.19's
    float64 ``FusedMatMul``): the model's nodes all have kernels, so it runs unfused.

    Parameters
    ----------
    model : str or bytes
        What ``InferenceSession`` takes: a path or the serialized model.
    **kwargs
        ``sess_options``, ``providers`` and the rest, passed on.
    """
    import onnxruntime as ort  # imported on first use: `import gluonport` stays fast

    try:
        return ort.InferenceSession(model, **kwargs)
    except Exception as err:  # noqa: BLE001 - onnxruntime's errors have no public classes
        text = str(err)
        disable = sorted({fusion for op, fusion in _FUSIONS_WITHOUT_KERNEL.items()
                          if f"Failed to find kernel for com.microsoft.{op}(" in text})
        if type(err).__name__ != "NotImplemented" or not disable:
            raise
    disable = sorted(set(kwargs.pop("disabled_optimizers", None) or ()) | set(disable))
    return ort.InferenceSession(model, disabled_optimizers=disable, **kwargs)
