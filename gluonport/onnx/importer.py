"""ONNX -> MXNet import: ``import_model``, ``get_model_metadata``, ``import_graph``.

(``import_to_gluon``, which wraps the result in a Gluon ``SymbolBlock``, lives a layer above in
:mod:`gluonport.gluon.symbol_block`; ``gluonport.onnx.import_to_gluon`` names it.)

The same functions as MXNet 1.9.1's ``mxnet.contrib.onnx``, rewritten:

1. the model is read safely (``_import_load``: external data confined to the model's folder)
   and checked with ``onnx.checker``;
2. constants are folded (``_import_fold``): shape subgraphs become attribute values;
3. every remaining node is looked up in the import table *before* anything is built, and all
   problems (unknown ops, attributes a handler does not take, versions newer than reviewed)
   are reported together in one :class:`~gluonport.errors.UnsupportedOpError`;
4. each node's handler builds MXNet ops with the ``sym`` namespace; values a handler cannot
   express (``GRU`` with ``linear_before_reset=0``...) are collected and reported together too.

The result is an MXNet graph: ``sym.save`` / ``nd.save`` (``export_mxnet``) write files that
MXNet 1.9.1 loads.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import helper

from .._core import dtypes
from .._core.onnxfile import tensor_to_array
from ..errors import (
    ConversionError,
    DTypeError,
    FormatError,
    GluonportError,
    ResourceLimitError,
    UnsupportedOpError,
)
from ..ndarray import NDArray
from ..symbol import Group, Symbol
from ..symbol.symbol import var
from . import importers  # noqa: F401  (registers every handler)
from ._import_context import REVIEWED_OPSET, ImportContext, Value, op_version, select_handler
from ._import_expand import expand_functions
from ._import_fold import Facts, fold_model
from ._import_load import load_model
from ._import_mxlimits import dtype_limits, fp16_limit, limits_message, zero_size_limit
from ._import_narrow import carry_narrow_types
from ._import_provenance import OpGroup, Restorer, build_group, check_mode, restored_note
from ._import_sequence import expand_sequences

__all__ = ["import_model", "get_model_metadata", "export_mxnet",
           "import_graph", "ImportedGraph"]


@dataclass
class ImportedGraph:
    """An imported model: the MXNet graph, its parameters, and its ONNX interface."""

    sym: Symbol
    arg_params: dict[str, np.ndarray]
    aux_params: dict[str, np.ndarray]
    input_names: list[str]
    output_names: list[str]
    output_types: list[tuple] = field(default_factory=list)
    #: why MXNet 1.9.1 cannot (or may not) run the graph (the import's warning), else None;
    #: :func:`export_mxnet` marks such files ``gluonport_only``
    mxnet_limits: str | None = None


def _opsets(model: onnx.ModelProto) -> dict[str, int]:
    return {("" if o.domain == "ai.onnx" else o.domain): int(o.version)
            for o in model.opset_import}


def _attrs(node: onnx.NodeProto) -> dict[str, Any]:
    """ONNX attributes as Python values: strings decoded, tensors as numpy arrays."""
    out: dict[str, Any] = {}
    for a in node.attribute:
        try:
            v = helper.get_attribute_value(a)
        except Exception as exc:  # noqa: BLE001 - e.g. an attribute of an unknown type
            raise FormatError(f"node {node.name or node.op_type!r}: attribute {a.name!r} "
                              f"cannot be read: {exc}") from None
        if isinstance(v, bytes):
            v = v.decode("utf-8", "replace")
        elif isinstance(v, onnx.TensorProto):
            v = tensor_to_array(v, None)
        elif isinstance(v, list) and v and isinstance(v[0], bytes):
            v = [s.decode("utf-8", "replace") for s in v]
        out[a.name] = v
    return out


def _node_label(node: onnx.NodeProto, index: int) -> str:
    return node.name or (node.output[0] if node.output else f"{node.op_type}_{index}")


def _type_problem(facts: Facts, node: onnx.NodeProto) -> str:
    """Why a tensor the node reads or writes cannot be an MXNet tensor ('' if all can)."""
    for name in list(node.input) + list(node.output):
        if not name:
            continue
        dtype = facts.types.get(name, (None, None))[0]
        if name in facts.nonmx:
            return f"tensor {name!r} is a {facts.nonmx[name]}, not a tensor MXNet can hold"
        if dtype is None:
            continue
        try:
            ok = dtypes.from_numpy(dtype).name != "bfloat16"
        except DTypeError:
            ok = False
        if not ok or np.dtype(dtype) == np.uint16 and "bfloat16" in str(dtype):
            return f"tensor {name!r} has type {dtype}, which MXNet 1.x cannot compute with"
    return ""


def _scan_nodes(facts: Facts, opsets: dict[str, int], label: str, strict: bool
                ) -> tuple[list, list[tuple[int, tuple[str, str, str]]]]:
    """Handlers for every node (None where there is none) and the problems found, each with
    its node's index."""
    problems: list[tuple[int, tuple[str, str, str]]] = []
    chosen: list = []
    installed = onnx.defs.onnx_opset_version()
    for i, node in enumerate(facts.nodes):
        why = _type_problem(facts, node)
        if why:
            problems.append((i, (node.op_type, _node_label(node, i), why)))
            chosen.append(None)
            continue
        domain = "" if node.domain == "ai.onnx" else node.domain
        opset = opsets.get(domain, opsets.get("", 1))
        handler, version, why = select_handler(node.op_type, domain, opset)
        name = _node_label(node, i)
        if handler is None:
            problems.append((i, (node.op_type, name, why)))
            chosen.append(None)
            continue
        extra = sorted(a.name for a in node.attribute
                       if handler.attrs is not None and a.name not in handler.attrs)
        if extra:
            problems.append((i, (node.op_type, name, f"attribute(s) {extra} are not "
                                                     "supported")))
        reviewed = op_version(node.op_type, domain, REVIEWED_OPSET) if domain == "" else None
        if domain == "" and (opset > installed or (reviewed or 0) < version):
            msg = (f"{label}: node {name!r} ({node.op_type}) uses op version {version} "
                   f"(opset {opset}); the importer was reviewed up to opset {REVIEWED_OPSET}")
            if strict:
                problems.append((i, (node.op_type, name, f"version {version} is newer than "
                                     f"the reviewed opset {REVIEWED_OPSET} (strict=True)")))
            else:
                warnings.warn(msg + "; check the result", stacklevel=4)
        chosen.append((handler, version, opset))
    return chosen, problems


def _unsupported_error(problems: list[tuple[str, str, str]], label: str,
                       notes: list[str] | None = None) -> UnsupportedOpError:
    ops: dict[str, list[str]] = {}
    for op_type, name, _ in problems:
        ops.setdefault(op_type, []).append(name)
    lines = "\n".join(f"  node {name!r} ({op}): {why}" for op, name, why in problems)
    lines += "".join(f"\n  {note}" for note in notes or ())
    return UnsupportedOpError(
        f"{label}: {len(problems)} node(s) cannot be imported into MXNet:\n{lines}\n"
        "supported ONNX ops: see gluonport/onnx/README.md", ops)


class _Builder:
    """Walks the folded graph and runs the handlers."""

    def __init__(self, model: onnx.ModelProto, facts: Facts, label: str, strict: bool):
        self.facts = facts
        self.label = label
        inits = set(facts.consts)
        self.inputs = [i.name for i in model.graph.input if i.name not in inits]
        reserved = set(self.inputs) | inits
        self.ctx = ImportContext(reserved, strict)
        self.ctx.symbolic = facts.symbolic
        self.env: dict[str, Symbol] = {n: var(n) for n in self.inputs}
        for n in self.inputs:
            self._note_dims(n, self.env[n])
        self.problems: list[tuple[str, str, str]] = []
        self.failed: list[int] = []  # indices of the nodes behind self.problems
        self.index = -1  # the node being converted
        self.graph_outputs = [o.name for o in model.graph.output]
        # for control-flow bodies (importers/control.py, _import_body.py): outer tensors by
        # name, the model's opsets, and the importer itself
        self.ctx.lookup = self.value
        self.ctx.opsets = _opsets(model)
        self.ctx.graph_importer = import_graph

    def _note_dims(self, name: str, s: Symbol) -> None:
        """Where each named dim ('N', or inference's 'unk__0') can be read at run time."""
        for axis, d in enumerate(self.facts.types.get(name, (None, None))[1] or ()):
            if isinstance(d, str):
                self.ctx.dim_sources.setdefault(d, (s, axis))

    def value(self, name: str) -> Value | None:
        if not name:
            return None
        dtype, shape = self.facts.types.get(name, (None, None))
        if name in self.facts.consts:
            return Value(self.ctx, name, const=self.facts.consts[name])
        if name not in self.env:
            return None
        return Value(self.ctx, name, sym=self.env[name], shape=shape, dtype=dtype)

    def convert(self, index: int, node: onnx.NodeProto, choice: tuple) -> None:
        handler, version, opset = choice
        label = _node_label(node, index)
        self.index = index
        ins = [self.value(n) for n in node.input]
        if any(v is None and n for v, n in zip(ins, node.input)):
            return  # an input failed to convert: that node is already reported
        while ins and ins[-1] is None:
            ins.pop()
        types = [self.facts.types.get(o, (None, None)) for o in node.output]
        self.ctx.begin(label, node.op_type, opset, version, types)
        try:
            result = handler.fn(self.ctx, *ins, **_attrs(node))
        except UnsupportedOpError as exc:
            self.problems.append((node.op_type, label, str(exc).split("): ", 1)[-1]))
            self.failed.append(index)
            return
        except GluonportError as exc:
            raise ConversionError(f"{self.label}: node {label!r} ({node.op_type}): {exc}") \
                from exc
        except (ValueError, TypeError, IndexError, KeyError, AttributeError) as exc:
            raise ConversionError(f"{self.label}: node {label!r} ({node.op_type}) could not be "
                                  f"converted: {type(exc).__name__}: {exc}") from exc
        seen = types + [self.facts.types.get(n, (None, None)) for n in node.input if n]
        why = fp16_limit(node.op_type, [t[0] for t in seen], self.ctx.created_ops())
        if why:
            self.ctx.mxnet_limits.append(why)
        self.store(node, result)

    def store(self, node: onnx.NodeProto, result: Any) -> None:
        outs = list(result) if isinstance(result, (list, tuple)) else [result]
        self.ctx.finish_names(outs)
        for name, out in zip(node.output, outs):
            if not name or out is None:
                continue
            if isinstance(out, Symbol):
                self.env[name] = out
                self._note_dims(name, out)
            else:
                self.facts.consts[name] = np.asarray(out)
        produced = {n for n, o in zip(node.output, outs) if o is not None}
        missing = [n for n in node.output if n and n not in produced]
        if missing and self._consumed(missing):
            self.problems.append((node.op_type, self.ctx.node_name,
                                  f"output(s) {missing} have no MXNet equivalent"))
            self.failed.append(self.index)

    def _consumed(self, names: list[str]) -> bool:
        wanted = set(names)
        used = {n for nd in self.facts.nodes for n in nd.input}
        used |= set(self.graph_outputs)
        return bool(wanted & used)

    def output(self, name: str) -> Symbol:
        if name in self.env:
            return self.env[name]
        if name in self.facts.consts:
            return self.ctx.param(name, self.facts.consts[name])
        if name in self.inputs:
            return var(name)
        raise ConversionError(f"{self.label}: graph output {name!r} is not computed by any node")


def _build_all(model: onnx.ModelProto, facts: Facts, chosen: list, problems: list,
               restorer: Restorer | None, mode: str, label: str, strict: bool) -> _Builder:
    """Run every handler; with a ``restorer``, the groups of MXNet nodes that cannot be
    imported (``mode='auto'``: a node without a handler, or whose handler fails; ``'always'``:
    all) become their recorded MXNet op. A failure during the build adds its group and
    builds again. Raises the UnsupportedOpError of whatever cannot be imported nor restored."""
    consts = dict(facts.consts)
    wanted: set[str] = set()
    if restorer is not None:
        wanted = restorer.all_keys() if mode == "always" else _keys(restorer, problems)
    while True:
        groups, refused = restorer.plan(wanted) if restorer else ({}, {})
        left = [p for i, p in problems if _key(restorer, i) not in groups]
        if left:
            raise _unsupported_error(left, label, _notes(restorer, problems, refused))
        facts.consts = dict(consts)  # a failed attempt's handlers may have added values
        b = _Builder(model, facts, label, strict)
        more = _run_steps(b, restorer.steps(chosen, groups) if restorer else chosen,
                          restorer, wanted, label)
        if more:
            wanted |= more
            continue
        if b.problems:
            if restorer is not None and _keys(restorer, b.failed) - wanted:
                wanted |= _keys(restorer, b.failed)
                continue
            err = _unsupported_error(b.problems, label, _notes(restorer, b.failed, refused))
            err.needs_const = set(b.ctx.needs_const)  # what the ONNX backend may specialize on
            raise err
        return b


def _run_steps(b: _Builder, steps: list, restorer: Restorer | None, wanted: set[str],
               label: str) -> set[str]:
    """Convert every node (or build a restored group); returns the groups to add when a
    handler's ConversionError hits a node of a group not yet restored (else re-raises)."""
    for i, (node, step) in enumerate(zip(b.facts.nodes, steps)):
        if step is None:
            continue
        if isinstance(step, OpGroup):
            build_group(b, step, label)
            continue
        try:
            b.convert(i, node, step)
        except ConversionError:
            key = _key(restorer, i)
            if key is None or key in wanted:
                raise
            return {key}
    return set()


def _key(restorer: Restorer | None, index: int) -> str | None:
    return restorer.key_of(index) if restorer is not None else None


def _keys(restorer: Restorer, items: list) -> set[str]:
    """Group keys of node indices (or of ``(index, problem)`` pairs)."""
    keys = {restorer.key_of(i if isinstance(i, int) else i[0]) for i in items}
    return {k for k in keys if k is not None}


def _notes(restorer: Restorer | None, items: list, refused: dict[str, str]) -> list[str]:
    """Why the groups of the failing nodes (indices or ``(index, problem)`` pairs) could not
    be restored, one line per group."""
    if restorer is None:
        return []
    keys = sorted(k for k in _keys(restorer, items) if k in refused)
    return [restored_note(restorer.groups[k].record, refused[k]) for k in keys]


def _split(sym: Symbol, params: dict[str, np.ndarray]
           ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    aux_names = set(sym.list_auxiliary_states())
    arg = {k: v for k, v in params.items() if k not in aux_names}
    aux = {k: v for k, v in params.items() if k in aux_names}
    used = set(sym.list_inputs())
    return ({k: v for k, v in arg.items() if k in used},
            {k: v for k, v in aux.items() if k in used})


def _prepare(model_file: Any, check: bool) -> tuple[onnx.ModelProto, str]:
    model, label = load_model(model_file, check=check)
    if model.functions:
        try:
            model = onnx.inliner.inline_local_functions(model)
        except Exception as exc:  # noqa: BLE001
            raise ConversionError(f"{label}: inlining model-local functions failed: {exc}") \
                from None
    return model, label


def import_graph(model_file: Any, strict: bool = False, check: bool = True,
                 restore_mxnet_ops: str = "auto") -> ImportedGraph:
    """Import to an :class:`ImportedGraph` (numpy params, ONNX input/output names);
    ``restore_mxnet_ops`` as in :func:`import_model`."""
    check_mode(restore_mxnet_ops)
    model, label = _prepare(model_file, check)
    model = carry_narrow_types(model)  # bfloat16/float8/int4... in float32/int8 carriers
    model = expand_sequences(model)  # sequences of known structure -> their tensors
    opsets = _opsets(model)
    model, not_expanded = expand_functions(model, opsets)  # function ops without a handler
    try:
        facts = fold_model(model, opsets)
    except ResourceLimitError as exc:
        raise ResourceLimitError(f"{label}: {exc}") from None
    chosen, problems = _scan_nodes(facts, opsets, label, strict)
    problems = [(i, (op, name, f"{why}; {not_expanded[name]}" if name in not_expanded else why))
                for i, (op, name, why) in problems]
    inits = set(facts.consts)
    restorer = Restorer.create(model, facts.nodes, facts.consts,
                               [i.name for i in model.graph.input if i.name not in inits],
                               restore_mxnet_ops)
    b = _build_all(model, facts, chosen, problems, restorer, restore_mxnet_ops, label, strict)
    outs = [b.output(o.name) for o in model.graph.output]
    if not outs:
        raise ConversionError(f"{label}: the graph has no outputs")
    sym = outs[0] if len(outs) == 1 else Group(outs)
    arg, aux = _split(sym, b.ctx.params)
    limits = _warn_mxnet_limits(b, sym, model, {**arg, **aux}, label)
    types = [facts.types.get(o.name, (None, None)) for o in model.graph.output]
    return ImportedGraph(sym, arg, aux, b.inputs, [o.name for o in model.graph.output], types,
                         limits)


def _warn_mxnet_limits(b: _Builder, sym: Symbol, model: onnx.ModelProto, params: dict,
                       label: str) -> str | None:
    """Warn when MXNet 1.9.1 itself cannot (or may not) run the graph (_import_mxlimits);
    returns the warning's text, or None."""
    used = set(sym.get_internals().list_outputs())  # values the written graph computes
    names = [n for n, s in b.env.items() if s.list_outputs()[0] in used]
    limits = b.ctx.mxnet_limits + dtype_limits(names, b.facts.types, params)
    message = None
    if limits:
        message = limits_message(label, limits)
    else:
        edges = [n for n in b.inputs if n in names] + [o.name for o in model.graph.output]
        maybe = zero_size_limit(edges, b.facts.types, params)
        if maybe:
            message = limits_message(label, [maybe], certain=False)
    if message:
        warnings.warn(message, stacklevel=3)
    return message


def import_model(model_file: Any, strict: bool = False, restore_mxnet_ops: str = "auto"
                 ) -> tuple[Symbol, dict, dict]:
    """Import an ONNX model into an MXNet symbol and parameters (``mxnet.contrib.onnx``).

    Parameters
    ----------
    model_file : str
        ONNX model file name (bytes or an ``onnx.ModelProto`` are accepted too).
    strict : bool
        Refuse ops whose version is newer than the importer was reviewed for (by default they
        import with a warning).
    restore_mxnet_ops : {'auto', 'always', 'never'}
        For a model gluonport exported (its provenance metadata): ``'auto'`` replaces the ONNX
        nodes of an MXNet op whose lowering cannot be imported (``box_nms``, ``Proposal``,
        ``MultiBoxDetection``... use ops MXNet 1.x lacks) by that original op with its recorded
        attributes; ``'always'`` does so for every op it can; ``'never'`` imports every node
        through the ONNX importers. Other producers' models are never changed.

    Returns
    -------
    sym : Symbol
        The MXNet graph; its free variables are the ONNX graph inputs (by their ONNX names)
        and the parameters.
    arg_params : dict of str to NDArray
        Weights (initializers, and constants the graph needs as tensors).
    aux_params : dict of str to NDArray
        Auxiliary states: BatchNormalization's mean and variance.
    """
    g = import_graph(model_file, strict=strict, restore_mxnet_ops=restore_mxnet_ops)
    return (g.sym, {k: NDArray(v) for k, v in g.arg_params.items()},
            {k: NDArray(v) for k, v in g.aux_params.items()})


def get_model_metadata(model_file: Any) -> dict[str, list]:
    """Names and shapes of the model's inputs and outputs, as MXNet 1.9.1 returns them.

    Returns
    -------
    dict
        ``'input_tensor_data'``: ``[(name, shape tuple, ONNX elem_type int)]`` for the inputs
        that are not initializers; ``'output_tensor_data'``: ``[(name, shape tuple)]``.
        Symbolic dims are 0 (``dim_value`` of an unset dim), as in MXNet.
    """
    model, _ = load_model(model_file, check=True)
    params = {t.name for t in model.graph.initializer}
    inputs = [(i.name, _dims(i), i.type.tensor_type.elem_type)
              for i in model.graph.input if i.name not in params]
    outputs = [(o.name, _dims(o)) for o in model.graph.output]
    return {"input_tensor_data": inputs, "output_tensor_data": outputs}


def _dims(vi: onnx.ValueInfoProto) -> tuple[int, ...]:
    return tuple(d.dim_value for d in vi.type.tensor_type.shape.dim)


def export_mxnet(model_file: Any, prefix: str, epoch: int = 0, strict: bool = False,
                 restore_mxnet_ops: str = "auto") -> tuple[str, str]:
    """Import ``model_file`` and write ``PREFIX-symbol.json`` + ``PREFIX-%04d.params`` (a
    Module-API checkpoint MXNet 1.9.1 loads with ``mx.model.load_checkpoint``);
    ``restore_mxnet_ops`` as in :func:`import_model`.

    Where the import warns that MXNet 1.9.1 cannot (or may not) run the graph, the symbol
    file is marked: its top-level ``attrs`` carry ``"gluonport_only": ["str", <the warning>]``
    (MXNet 1.9.1 and gluonport load such a file and ignore the key; a re-save drops it, as
    MXNet drops unknown graph attributes).

    Returns the two paths written.
    """
    from ..model import save_checkpoint

    g = import_graph(model_file, strict=strict, restore_mxnet_ops=restore_mxnet_ops)
    args = {k: NDArray(v) for k, v in g.arg_params.items()}
    aux = {k: NDArray(v) for k, v in g.aux_params.items()}
    symbol_file, params_file = f"{prefix}-symbol.json", f"{prefix}-{epoch:04d}.params"
    if g.mxnet_limits is None:
        save_checkpoint(os.fspath(prefix), epoch, g.sym, args, aux)
    else:
        from ..formats import symbol_json
        from ..formats._atomic import atomic_group, atomic_write_text
        from ..ndarray import save as nd_save
        from ..symbol._graphio import symbol_to_graph

        graph = symbol_to_graph(g.sym, True)
        graph["attrs"]["gluonport_only"] = ["str", g.mxnet_limits]
        with atomic_group():  # params first, the symbol file last (save_checkpoint's order)
            nd_save(params_file, {**{f"arg:{k}": v for k, v in args.items()},
                                  **{f"aux:{k}": v for k, v in aux.items()}})
            atomic_write_text(symbol_file, symbol_json.dumps(symbol_json.from_dict(graph)))
    return symbol_file, params_file
