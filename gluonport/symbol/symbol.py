"""``Symbol``: MXNet 1.x's symbolic graph handle.

A Symbol is a list of outputs ``(node, index)`` over a DAG of :class:`~._graph.Node` s. Nodes are
immutable once built (composition copies what it changes), so Symbols can share subgraphs freely
as MXNet's do.
"""

from __future__ import annotations

import copy as _copy
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .. import attribute
from .. import name as _name
from .._core import dtypes
from .._core.attr_fields import to_attr_string
from .._opsurface import OpSurface
from ..errors import GluonportError, GraphError, NotImplementedForSymbol
from ..ops import registry
from ..ops._call import bind_call
from ._graph import Node, topo_order
from ._infer import infer_shapes, infer_types

__all__ = ["Symbol", "var", "Variable", "Group", "create", "invoke"]

# MXNet's Symbol operators call these names; the called name is the node-name hint.
_SYMBOL_BINARY = {
    "add": ("_Plus", "_PlusScalar", "_PlusScalar"),
    "sub": ("_Minus", "_MinusScalar", "_RMinusScalar"),
    "mul": ("_Mul", "_MulScalar", "_MulScalar"),
    "truediv": ("_Div", "_DivScalar", "_RDivScalar"),
    "mod": ("_Mod", "_ModScalar", "_RModScalar"),
    "pow": ("_Power", "_PowerScalar", "_rpower_scalar"),  # MXNet's __rpow__ calls this name
    "eq": ("_equal", "_equal_scalar", "_equal_scalar"),
    "ne": ("_not_equal", "_not_equal_scalar", "_not_equal_scalar"),
    "gt": ("_greater", "_greater_scalar", "_lesser_scalar"),
    "ge": ("_greater_equal", "_greater_equal_scalar", "_lesser_equal_scalar"),
    "lt": ("_lesser", "_lesser_scalar", "_greater_scalar"),
    "le": ("_lesser_equal", "_lesser_equal_scalar", "_greater_equal_scalar"),
}


class Symbol(OpSurface):
    """A symbolic graph with one or more outputs (``mxnet.sym.Symbol``).

    >>> import gluonport as mx
    >>> x = mx.sym.var('data')
    >>> y = mx.sym.FullyConnected(x, num_hidden=3, name='fc1')
    >>> y.list_arguments()
    ['data', 'fc1_weight', 'fc1_bias']
    >>> y
    <Symbol fc1>
    """

    __slots__ = ("_outputs",)
    _BINARY_OPS = _SYMBOL_BINARY
    # Symbols are no arrays: numpy ufuncs refuse them and numpy scalars' operators defer to
    # ours (``np.float64(2) - sym`` is a Symbol, as in MXNet, not an attempt to iterate sym).
    __array_ufunc__ = None

    def __init__(self, outputs: Sequence[tuple[Node, int]]):
        self._outputs = list(outputs)

    # --- identity ---------------------------------------------------------------------------
    @property
    def name(self) -> str | None:
        """The node name of a single-output symbol; ``None`` for a group."""
        if len(self._outputs) != 1:
            return None
        return self._outputs[0][0].name

    def __repr__(self) -> str:
        if len(self._outputs) == 1:
            return f"<Symbol {self.name}>"
        return f"<Symbol group [{', '.join(n.name for n, _ in self._outputs)}]>"

    def __len__(self) -> int:
        return len(self._outputs)

    def __iter__(self):
        return (Symbol([o]) for o in self._outputs)

    def __getitem__(self, index: int | str) -> Symbol:
        """One output, by position or by its ``list_outputs`` name."""
        if isinstance(index, str):
            names = self.list_outputs()
            matches = [i for i, n in enumerate(names) if n == index]
            if not matches:
                raise GraphError(f"no output named {index!r}; outputs are {names}")
            if len(matches) > 1:
                raise GraphError(f"several outputs are named {index!r}")
            index = matches[0]
        if not isinstance(index, int):
            raise TypeError("Symbol index must be an int or an output name")
        if not -len(self._outputs) <= index < len(self._outputs):
            raise IndexError(f"output index {index} out of range ({len(self._outputs)} outputs)")
        return Symbol([self._outputs[index]])

    def __copy__(self) -> Symbol:
        return Symbol(self._outputs)

    def __deepcopy__(self, memo: dict) -> Symbol:
        return Symbol.from_json_graph(self.to_json_graph())

    def copy(self) -> Symbol:
        return _copy.deepcopy(self)

    def __bool__(self) -> bool:
        raise _not_for_symbol(self, "bool(x) / `if x:`",
                              "use F.where(cond, a, b) or F.contrib.cond instead of Python "
                              "control flow on values")

    def _no_values(what: str, fix: str):  # noqa: N805 - builds properties below
        def prop(self):
            raise _not_for_symbol(self, what, fix)

        return property(prop)

    shape = _no_values("x.shape", "use F.shape_array(x), or ops that take 0/-1 shape codes "
                       "(x.reshape((0, -1)))")
    dtype = _no_values("x.dtype", "pass dtypes as arguments, or use F.cast")
    context = _no_values("x.context", "contexts exist for NDArrays only")
    size = _no_values("x.size", "use F.size_array(x)")
    ndim = _no_values("x.ndim", "keep the rank fixed in the code")

    def asnumpy(self):
        raise _not_for_symbol(self, "x.asnumpy()", "compute with F.* ops; values exist only "
                              "when the block runs")

    def asscalar(self):
        raise _not_for_symbol(self, "x.asscalar()", "compute with F.* ops")

    def __reduce__(self):
        return (load_json, (self.tojson(),))

    # --- graph queries ----------------------------------------------------------------------
    def _topo(self) -> list[Node]:
        return topo_order(n for n, _ in self._outputs)

    def _aux_ids(self, order: list[Node]) -> set[int]:
        aux: set[int] = set()
        for node in order:
            for i in node.aux_input_indices():
                if i < len(node.inputs):
                    aux.add(id(node.inputs[i][0]))
        return aux

    def _variables(self) -> tuple[list[Node], list[Node]]:
        order = self._topo()
        aux = self._aux_ids(order)
        vars_ = [n for n in order if n.op is None]
        return [n for n in vars_ if id(n) not in aux], [n for n in vars_ if id(n) in aux]

    def list_arguments(self) -> list[str]:
        """Names of the non-auxiliary variables, in graph (DFS) order."""
        return [n.name for n in self._variables()[0]]

    def list_auxiliary_states(self) -> list[str]:
        """Names of auxiliary-state variables (BatchNorm moving mean/var)."""
        return [n.name for n in self._variables()[1]]

    def list_inputs(self) -> list[str]:
        """Names of all variables, arguments and auxiliary states, in DFS order."""
        return [n.name for n in self._topo() if n.op is None]

    def list_outputs(self) -> list[str]:
        """Output names: ``<node>_output`` (or the op's output names), a variable's own name."""
        return [n.output_names()[i] for n, i in self._outputs]

    def get_internals(self) -> Symbol:
        """A group of every node's every visible output, in topological order (nnvm's
        ``GetInternals`` honours ``FNumVisibleOutputs``: no BatchNorm mean/var, no Pooling
        workspace)."""
        outs = []
        for node in self._topo():
            outs.extend((node, i) for i in range(node.num_visible_outputs()))
        return Symbol(outs)

    def get_children(self) -> Symbol | None:
        """The inputs of this symbol's head node as a group; ``None`` for a variable."""
        node = self._outputs[0][0]
        if not node.inputs:
            return None
        return Symbol(list(node.inputs))

    # --- attributes -------------------------------------------------------------------------
    def attr(self, key: str) -> str | None:
        """Attribute ``key`` of the head node (single-output symbols)."""
        if len(self._outputs) != 1:
            return None
        return self._outputs[0][0].attrs.get(key)

    def list_attr(self, recursive: bool = False) -> dict[str, str]:
        """The head node's attributes (``recursive`` is deprecated in MXNet too)."""
        if recursive:
            warnings.warn("Symbol.list_attr with recursive=True is deprecated; use attr_dict",
                          DeprecationWarning, stacklevel=2)
            return {f"{k_node}${k}": v for k_node, d in self.attr_dict().items()
                    for k, v in d.items()}
        if len(self._outputs) != 1:
            return {}
        return dict(self._outputs[0][0].attrs)

    def attr_dict(self) -> dict[str, dict[str, str]]:
        """``{node name: attributes}`` for every node that has attributes."""
        return {n.name: dict(n.attrs) for n in self._topo() if n.attrs}

    def _set_attr(self, **kwargs: Any) -> None:
        """Set attributes on the head node (values are stringified like MXNet)."""
        node = self._outputs[0][0]
        for k, v in kwargs.items():
            node.attrs[k] = to_attr_string(v)
        node.invalidate()

    # --- inference --------------------------------------------------------------------------
    def _given(self, args: tuple, kwargs: dict, what: str) -> dict[str, Any]:
        given = dict(kwargs)
        if args:
            names = self.list_arguments()
            if len(args) > len(names):
                raise GraphError(f"{what}: {len(args)} positional values for {len(names)} "
                                 "arguments")
            for n, v in zip(names, args):
                if v is not None:
                    given[n] = v
        unknown = set(given) - set(self.list_inputs())
        if unknown:
            raise GraphError(f"{what}: unknown input(s) {sorted(unknown)}; inputs are "
                             f"{self.list_inputs()}")
        return given

    def _infer_shape_impl(self, partial: bool, args: tuple, kwargs: dict):
        given = self._given(args, kwargs, "infer_shape")
        order = self._topo()
        shapes = infer_shapes(order, given)
        args_n, aux_n = self._variables()

        def get(node: Node, i: int = 0):
            s = shapes.get((id(node), i))
            return s

        arg_s = [get(n) for n in args_n]
        out_s = [get(n, i) for n, i in self._outputs]
        aux_s = [get(n) for n in aux_n]
        if partial:
            def fill(shapes: list) -> list:
                return [() if s is None else s for s in shapes]

            return fill(arg_s), fill(out_s), fill(aux_s)
        from ..ops.infer import known

        if not all(known(s) for s in arg_s + out_s + aux_s):
            missing = [n.name for n, s in zip(args_n + aux_n, arg_s + aux_s) if not known(s)]
            warnings.warn(f"infer_shape: cannot infer the shapes of {missing}; give more input "
                          "shapes", stacklevel=3)
            return None, None, None
        return arg_s, out_s, aux_s

    def infer_shape(self, *args: Any, **kwargs: Any):
        """``(arg_shapes, out_shapes, aux_shapes)`` from input shapes given by name or position.

        As in MXNet, returns ``(None, None, None)`` (with a warning) when the shapes cannot all
        be inferred, and raises :class:`ShapeError` naming the node on a contradiction.
        """
        return self._infer_shape_impl(False, args, kwargs)

    def infer_shape_partial(self, *args: Any, **kwargs: Any):
        """Like :meth:`infer_shape`, with ``()`` for what stays unknown and unknown dims 0."""
        return self._infer_shape_impl(True, args, kwargs)

    def infer_type(self, *args: Any, **kwargs: Any):
        """``(arg_types, out_types, aux_types)`` as numpy types from input dtypes."""
        given = self._given(args, kwargs, "infer_type")
        order = self._topo()
        types = infer_types(order, given)
        args_n, aux_n = self._variables()

        def get(node: Node, i: int = 0):
            t = types.get((id(node), i))
            return None if t is None else np.dtype(t).type

        arg_t = [get(n) for n in args_n]
        out_t = [get(n, i) for n, i in self._outputs]
        aux_t = [get(n) for n in aux_n]
        if any(t is None for t in arg_t + out_t + aux_t):
            return None, None, None
        return arg_t, out_t, aux_t

    # --- composition ------------------------------------------------------------------------
    def __call__(self, *args: Symbol, **kwargs: Any) -> Symbol:
        """A copy with free variables replaced: positionally (in ``list_arguments`` order) or
        by name, as MXNet's ``Symbol.__call__`` / ``_compose``."""
        name = kwargs.pop("name", None)
        res = self.copy()
        res._compose(*args, name=name, **kwargs)
        return res

    def _compose(self, *args: Symbol, name: str | None = None, **kwargs: Symbol) -> None:
        if args and kwargs:
            raise GraphError("compose takes positional or keyword symbols, not both")
        args_n = self._variables()[0]
        repl: dict[str, Symbol] = dict(kwargs)
        if args:
            repl.update({n.name: s for n, s in zip(args_n, args)})
        for key, s in repl.items():
            if not isinstance(s, Symbol) or len(s._outputs) != 1:
                raise GraphError(f"compose: {key} must be a single-output Symbol")
        for node in self._topo():
            hit = [src.op is None and src.name in repl for src, _ in node.inputs]
            node.inputs = [repl[src.name]._outputs[0] if h else (src, idx)
                           for h, (src, idx) in zip(hit, node.inputs)]
            if node.in_versions is not None:  # nnvm copies the replacing entry: version 0
                node.in_versions = [0 if h else v for h, v in zip(hit, node.in_versions)]
        if name is not None and len(self._outputs) == 1:
            self._outputs[0][0].name = name
        self._outputs = [repl[n.name]._outputs[0] if n.op is None and n.name in repl else (n, i)
                         for n, i in self._outputs]

    # --- serialisation ----------------------------------------------------------------------
    def to_json_graph(self) -> dict[str, Any]:
        from ._graphio import symbol_to_graph

        return symbol_to_graph(self)

    @classmethod
    def from_json_graph(cls, graph: Mapping[str, Any], path: str | None = None) -> Symbol:
        from ._graphio import graph_to_symbol

        return graph_to_symbol(graph, path)

    def tojson(self, remove_amp_cast: bool = True) -> str:
        """The symbol JSON text, byte-identical to MXNet 1.9.1's ``tojson()``."""
        from ._graphio import dumps_symbol

        return dumps_symbol(self, remove_amp_cast)

    def save(self, fname: str, remove_amp_cast: bool = True) -> None:
        """Write ``tojson()`` to ``fname`` (atomically: temp file, then rename)."""
        from ..formats._atomic import atomic_write_text

        atomic_write_text(fname, self.tojson(remove_amp_cast))

    # --- execution --------------------------------------------------------------------------
    def bind(self, ctx: Any, args: Any, args_grad: Any = None, grad_req: str = "write",
             aux_states: Any = None, group2ctx: Any = None, shared_exec: Any = None):
        """An :class:`~gluonport.symbol.executor.Executor` over the given argument arrays."""
        from .executor import Executor

        return Executor(self, ctx, args, aux_states, grad_req=grad_req, args_grad=args_grad)

    def simple_bind(self, ctx: Any, grad_req: str = "write", type_dict: Any = None,
                    stype_dict: Any = None, group2ctx: Any = None, shared_arg_names: Any = None,
                    shared_exec: Any = None, shared_buffer: Any = None, **kwargs: Any):
        """Bind with zero-filled arrays whose shapes are inferred from ``kwargs``."""
        from .executor import Executor

        return Executor.simple(self, ctx, type_dict or {}, kwargs, grad_req=grad_req)

    def eval(self, ctx: Any = None, **kwargs: Any) -> list:
        """Bind ``kwargs`` and run forward once; returns the outputs (a list of NDArrays)."""
        from ..context import current_context

        ex = self.bind(ctx or current_context(), kwargs)
        return ex.forward()

    def reshape(self, *args: Any, **kwargs: Any) -> Symbol:
        """Fluent ``sym.reshape(self, ...)`` (MXNet's ``Symbol.reshape``: node ``reshape0``)."""
        return invoke("reshape", (self, *args), kwargs)

    def astype(self, *args: Any, **kwargs: Any) -> Symbol:
        """Fluent ``sym.cast(self, ...)`` (MXNet's ``Symbol.astype``)."""
        return invoke("cast", (self, *args), kwargs)

    # --- op dispatch ------------------------------------------------------------------------
    def _invoke(self, op_name: str, args: tuple, kwargs: dict) -> Symbol:
        return invoke(op_name, args, kwargs)

    def __eq__(self, other: Any) -> Any:  # MXNet: symbolic comparison
        return self._binary("eq", other)

    __hash__ = object.__hash__


def _not_for_symbol(sym: Symbol, what: str, fix: str) -> NotImplementedForSymbol:
    return NotImplementedForSymbol(
        f"{what} is not available on Symbol {sym!r}: inside hybrid_forward, F is the symbol "
        f"API while a hybridized block is traced, and symbols have no values. Fix: {fix}; or "
        "do not hybridize this block.")


def _is_input(x: Any) -> bool:
    return isinstance(x, Symbol)


def invoke(op_name: str, args: Sequence[Any] = (), kwargs: Mapping[str, Any] | None = None,
           hint: str | None = None) -> Symbol:
    """Create an op node: the single dispatch point of the ``sym`` API.

    Missing inputs become new variables ``<node>_<input>`` (``fc1_weight``) that copy the
    node's attributes, as MXNet's composition does. ``hint`` is the automatic-name stem
    (default: the called name, lower-cased; ``sym.contrib.box_nms`` passes ``box_nms``).
    """
    kwargs = dict(kwargs or {})
    name = kwargs.pop("name", None)
    attr = kwargs.pop("attr", None)
    kwargs.pop("out", None)
    op = registry.get(op_name)
    call = bind_call(op, tuple(args), kwargs, _is_input)
    node_name = _name.current().get(name, hint or op_name.lower())
    attrs = attribute.current().get(attr)
    attrs.update(call.attrs)
    inputs: list[tuple[Node, int]] = []
    for in_name, x in zip(call.input_names, call.inputs):
        on_compose = op.input_var_attrs(call.params, in_name)
        if x is None:
            var_attrs = dict(attrs)
            var_attrs.update(on_compose)
            inputs.append((Node(None, f"{node_name}_{in_name}", var_attrs), 0))
            continue
        if len(x._outputs) != 1:
            raise GraphError(f"{op.name} {node_name!r}: input {in_name!r} is a group of "
                             f"{len(x._outputs)} outputs; pass one output (sym[i])")
        _set_var_attrs_on_compose(x._outputs[0][0], on_compose)
        inputs.append(x._outputs[0])
    node = Node(op, node_name, attrs, inputs)
    node.in_versions = _entry_versions(op.aux_indices(call.params), inputs)
    n_vis = op.n_visible_outputs(call.params)
    return Symbol([(node, i) for i in range(n_vis)])


def _set_var_attrs_on_compose(src: Node, on_compose: Mapping[str, str]) -> None:
    """MXNet's FSetInputVarAttrOnCompose on a given input: a variable (one the user made, too)
    without an ``__init__`` takes the op's; the variable node itself changes, as in nnvm."""
    if src.op is None and on_compose and "__init__" not in src.attrs:
        src.attrs.update(on_compose)


def _entry_versions(aux: Any, inputs: list[tuple[Node, int]]) -> list[int]:
    """nnvm's UpdateNodeVersion: a mutated variable input (aux state, indices ``aux``) gets its
    version bumped; every variable input records the variable's current version."""
    mutated = set(aux)
    versions = []
    for j, (src, _) in enumerate(inputs):
        if src.op is None:
            if j in mutated:
                src.var_version += 1
            versions.append(src.var_version)
        else:
            versions.append(0)
    return versions


def create(op_name: str, *args: Any, **kwargs: Any) -> Symbol:
    """``create('FullyConnected', x, num_hidden=3)``: same as ``sym.FullyConnected(...)``."""
    return invoke(op_name, args, kwargs)


def var(name: str, attr: Mapping[str, str] | None = None, shape: Any = None,
        lr_mult: float | None = None, wd_mult: float | None = None, dtype: Any = None,
        init: Any = None, stype: str | None = None, **kwargs: Any) -> Symbol:
    """A variable (``mx.sym.var``): an input or parameter of the graph.

    Hints are stored as MXNet does: ``__shape__`` ``"(8, 4)"``, ``__dtype__`` the type flag,
    ``__lr_mult__``/``__wd_mult__`` as ``str()`` of the value given (Gluon passes floats),
    ``__init__`` the initializer's ``dumps()``, ``__storage_type__`` the storage flag. Extra
    keyword attributes must be ``__dunder__``.
    """
    if not isinstance(name, str):
        raise TypeError("Expect a string for variable `name`")
    attrs = attribute.current().get(dict(attr) if attr else None)
    if shape is not None:
        attrs["__shape__"] = to_attr_string(tuple(shape))
    if lr_mult is not None:
        attrs["__lr_mult__"] = to_attr_string(lr_mult)
    if wd_mult is not None:
        attrs["__wd_mult__"] = to_attr_string(wd_mult)
    if dtype is not None:
        attrs["__dtype__"] = str(dtypes.flag_of(dtype))
    if init is not None:
        attrs["__init__"] = init if isinstance(init, str) else init.dumps()
    if stype is not None:
        attrs["__storage_type__"] = str({"default": 0, "row_sparse": 1, "csr": 2}[stype])
    for k, v in kwargs.items():
        if not (k.startswith("__") and k.endswith("__")):
            raise GluonportError(f"Attribute name={k} is not supported. Additional attributes "
                                 "must start and end with double underscores, e.g, __yourattr__")
        attrs[k] = to_attr_string(v)
    return Symbol([(Node(None, name, attrs), 0)])


Variable = var


def Group(symbols: Sequence[Symbol], create_fn: Any = None) -> Symbol:
    """One symbol whose outputs are the outputs of ``symbols``, in order (``mx.sym.Group``)."""
    if not symbols or any(not isinstance(s, Symbol) for s in symbols):
        raise TypeError("Expected a list of symbols as input")
    outs: list[tuple[Node, int]] = []
    for s in symbols:
        outs.extend(s._outputs)
    return Symbol(outs)


def load_json(json_str: str) -> Symbol:
    """A Symbol from symbol JSON text of any MXNet version (``mx.sym.load_json``)."""
    from ._graphio import loads_symbol

    return loads_symbol(json_str)


def load(fname: str) -> Symbol:
    """A Symbol from a ``-symbol.json`` file of any MXNet version (``mx.sym.load``)."""
    from ._graphio import load_symbol

    return load_symbol(fname)
