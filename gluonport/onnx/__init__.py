"""MXNet <-> ONNX conversion. See README.md in this folder."""

from ._context import ExportContext
from .export import export_model, export_symbol, register_converter, save_model
from .importer import export_mxnet, get_model_metadata, import_graph, import_model, import_to_gluon
from .opset import DEFAULT_OPSET, MIN_OPSET, max_opset
from .verify import BisectResult, VerifyReport, bisect, verify

__all__ = ["export_model", "export_symbol", "register_converter", "save_model",
           "ExportContext", "verify", "VerifyReport", "bisect", "BisectResult", "DEFAULT_OPSET",
           "MIN_OPSET", "max_opset", "import_model", "get_model_metadata", "import_to_gluon",
           "export_mxnet", "import_graph"]
