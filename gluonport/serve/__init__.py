"""Serving past one process: Ray Serve deployments, Ray Data batch inference, Triton repositories.

Every engine runs the same thing: the model exported once to ONNX (:func:`prepare_model`), on
onnxruntime. Ray is imported only when a Ray function is called, so ``import gluonport.serve``
works without it (``pip install "gluonport[serve]"`` installs it).
"""

from __future__ import annotations

from typing import Any

from ._codec import DEFAULT_MAX_REQUEST_BYTES, decode_request, encode_response, http_status
from ._model import ServeModel, TensorSpec, prepare_model
from .batch import BatchPredictor
from .triton import triton_config, write_triton_repo

__all__ = ["deployment", "BatchPredictor", "write_triton_repo", "triton_config",
           "prepare_model", "ServeModel", "TensorSpec", "decode_request", "encode_response",
           "http_status", "DEFAULT_MAX_REQUEST_BYTES"]


def deployment(model: Any, **kwargs: Any) -> Any:
    """A Ray Serve application serving ``model`` over HTTP (``ray.serve.run(app,
    route_prefix="/m")``); the keyword arguments and the request format are those of
    :func:`gluonport.serve._ray.deployment` and :mod:`gluonport.serve._codec`. Needs
    ``pip install "gluonport[serve]"``."""
    from ._ray import deployment as _deployment

    return _deployment(model, **kwargs)

