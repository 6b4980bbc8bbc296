"""MXNet file formats: ``.params`` NDArray lists (and ``-symbol.json`` graphs)."""

from .params import ArrayInfo, ParamsFile, SparseArray
from .params import load as load_params
from .params import load_with_info as load_params_with_info
from .params import save as save_params
from .symbol_json import Graph as SymbolGraph
from .symbol_json import Node as SymbolNode
from .symbol_json import dumps as dumps_symbol_json
from .symbol_json import load as load_symbol_json
from .symbol_json import loads as loads_symbol_json
from .symbol_json import save as save_symbol_json
from .validate import validate_symbol_json

__all__ = ["load_params", "load_params_with_info", "save_params", "ArrayInfo", "ParamsFile",
           "SparseArray"]
__all__ += ["load_symbol_json", "loads_symbol_json", "dumps_symbol_json", "save_symbol_json",
            "validate_symbol_json", "SymbolGraph", "SymbolNode"]
