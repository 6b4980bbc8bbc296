"""Inference runtime: run ONNX models on onnxruntime with providers chosen from a Context.

``OrtRunner`` is the layer that SymbolBlock, hybridized blocks and ``gluonport.load`` run on.
"""

from .ort import OrtRunner, RuntimeOptions, installed_onnxruntime, providers_for

__all__ = ["OrtRunner", "RuntimeOptions", "installed_onnxruntime", "providers_for"]
