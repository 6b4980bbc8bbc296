"""MXNet file formats: ``.params`` NDArray lists (and ``-symbol.json`` graphs)."""

from .params import ArrayInfo, ParamsFile, SparseArray
from .params import load as load_params
from .params import load_with_info as load_params_with_info
from .params import save as save_params

__all__ = ["load_params", "load_params_with_info", "save_params", "ArrayInfo", "ParamsFile",
           "SparseArray"]
