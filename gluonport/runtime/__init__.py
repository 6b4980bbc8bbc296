"""Inference runtime: run ONNX models on onnxruntime with providers chosen from a Context.

``OrtRunner`` is the layer that SymbolBlock, hybridized blocks and ``gluonport.load`` run on;
``OnnxGraph`` runs an MXNet graph there by exporting it on first use; ``load`` is the serving
entry point.
"""

from .graph import OnnxGraph, graph_exports
from .ort import OrtRunner, RuntimeOptions, installed_onnxruntime, providers_for
from .predictor import Predictor, load

__all__ = ["OrtRunner", "RuntimeOptions", "installed_onnxruntime", "providers_for", "OnnxGraph",
           "graph_exports", "Predictor", "load"]
