"""Imports every family of ONNX import handlers (each registers itself in the table)."""

from . import (  # noqa: F401
    _import_ops_control,
    _import_ops_extra,
    _import_ops_image,
    _import_ops_math,
    _import_ops_more,
    _import_ops_nn,
    _import_ops_reduce,
    _import_ops_rnn,
    _import_ops_sampling,
    _import_ops_scatter,
    _import_ops_shape,
    _import_ops_signal,
)
