"""Restoring MXNet ops from gluonport's export provenance.

gluonport's exporter tags every ONNX node with the MXNet node it lowers (``doc_string`` = the
node's key) and writes one record per MXNet node to the model's ``gluonport.provenance``
metadata: ``{key: {"op", "attrs", "inputs", "outputs"}}`` (op name, attribute strings verbatim,
ONNX names of its input and output tensors). Some lowerings use ONNX ops that MXNet 1.x has no
equivalent for (``box_nms`` through ``Unique``/``ScatterND``/``NonMaxSuppression``,
``Proposal`` through ``NonMaxSuppression``): such a model could not be imported back. For a
model gluonport wrote, the importer replaces the ONNX nodes of such an MXNet node (its
*group*) with the original op.

A group is collapsed only when the record explains it completely, checked before anything is
built: the op exists and takes the recorded attributes, inputs and output count; every
recorded input is a graph input, a constant or an output of a node outside the group; the
group's nodes read only their own tensors, constants and the recorded inputs; no tensor made
inside is read outside except the recorded outputs, which nothing else makes; and the one node
that replaces the group (at the place of its last node) sees its inputs defined and defines
its outputs before any reader. Otherwise the importer reports its usual
:class:`~gluonport.errors.UnsupportedOpError`, saying why the op could not be restored.

Modes (``import_model(..., restore_mxnet_ops=...)``): ``'auto'`` collapses only the groups
with a node that has no import handler or whose import fails, so everything else still goes
through the ONNX importers; ``'always'`` every group that passes the checks; ``'never'`` none.
Models from other producers are never collapsed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import onnx

from ..errors import ConversionError, GluonportError, OpAttributeError
from ..symbol import Symbol
from ..symbol.symbol import invoke, var
from .export import PROVENANCE_KEY

__all__ = ["RESTORE_MODES", "Record", "OpGroup", "Restorer", "check_mode", "build_group",
           "restored_note"]

RESTORE_MODES = ("auto", "always", "never")
_PRODUCER = "gluonport"


def check_mode(mode: str) -> str:
    """``mode`` if it is one of :data:`RESTORE_MODES`, else an OpAttributeError."""
    if mode not in RESTORE_MODES:
        raise OpAttributeError(f"restore_mxnet_ops={mode!r} is not one of {RESTORE_MODES}: "
                               "'auto' restores MXNet ops whose ONNX lowering cannot be "
                               "imported, 'always' every op it can, 'never' none")
    return mode


@dataclass(frozen=True)
class Record:
    """One MXNet node as the exporter recorded it."""

    key: str
    op: str
    attrs: dict[str, str]
    inputs: list[str]
    outputs: list[str]


@dataclass
class OpGroup:
    """A record and the remaining (not folded) ONNX nodes tagged with its key."""

    record: Record
    nodes: list[int]  # indices into the folded node list, ascending

    @property
    def position(self) -> int:
        """Where the restored op goes: the place of the group's last node."""
        return self.nodes[-1]


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _parse_record(key: str, raw: Any) -> Record | None:
    if not isinstance(raw, dict):
        return None
    op, attrs = raw.get("op"), raw.get("attrs", {})
    ins, outs = raw.get("inputs"), raw.get("outputs")
    if not (isinstance(op, str) and isinstance(attrs, dict) and _strings(ins)
            and _strings(outs) and all(isinstance(v, str) for v in attrs.values())):
        return None
    return Record(key, op, dict(attrs), list(ins), list(outs))


def read_records(model: onnx.ModelProto) -> dict[str, Record]:
    """The provenance records of a model gluonport exported; ``{}`` for any other model, or
    when the metadata is missing or malformed (then nothing is restored)."""
    if model.producer_name != _PRODUCER:
        return {}
    meta = {p.key: p.value for p in model.metadata_props}
    try:
        raw = json.loads(meta.get(PROVENANCE_KEY, "{}"))
    except ValueError:
        return {}
    if not isinstance(raw, dict):
        return {}
    records = {k: _parse_record(k, v) for k, v in raw.items()}
    return {k: r for k, r in records.items() if r is not None}


class Restorer:
    """Decides which groups of a folded graph can be replaced by their MXNet op, and where
    (:func:`build_group` builds them).

    Parameters
    ----------
    nodes : list of onnx.NodeProto
        The folded graph's remaining nodes, in order.
    records : dict
        :func:`read_records`' result.
    consts : dict
        Tensors known without running the model (initializers, folded values).
    graph_inputs, graph_outputs : iterable of str
        The graph's (non-initializer) inputs and its outputs.
    """

    def __init__(self, nodes: list, records: dict[str, Record], consts: dict,
                 graph_inputs: Iterable[str], graph_outputs: Iterable[str]):
        self.nodes = nodes
        self.consts = consts
        self.graph_inputs = set(graph_inputs)
        self.graph_outputs = set(graph_outputs)
        self.groups: dict[str, OpGroup] = {}
        for i, node in enumerate(nodes):
            if node.doc_string in records:
                key = node.doc_string
                self.groups.setdefault(key, OpGroup(records[key], [])).nodes.append(i)
        self.producer = {o: i for i, n in enumerate(nodes) for o in n.output if o}
        self.readers: dict[str, list[int]] = {}
        for i, n in enumerate(nodes):
            for t in dict.fromkeys(x for x in n.input if x):
                self.readers.setdefault(t, []).append(i)

    @classmethod
    def create(cls, model: onnx.ModelProto, nodes: list, consts: dict, graph_inputs: list[str],
               mode: str) -> Restorer | None:
        """A Restorer for a gluonport-made model with provenance (None otherwise or when
        ``mode`` is ``'never'``)."""
        if check_mode(mode) == "never":
            return None
        records = read_records(model)
        if not records:
            return None
        return cls(nodes, records, consts, graph_inputs, [o.name for o in model.graph.output])

    def key_of(self, index: int) -> str | None:
        """The key of the group holding node ``index`` (None: an untagged node)."""
        key = self.nodes[index].doc_string
        return key if key in self.groups else None

    def all_keys(self) -> set[str]:
        return set(self.groups)

    # --- checks -----------------------------------------------------------------------------
    def check(self, key: str) -> str:
        """'' when group ``key`` can be replaced by its MXNet op, else why not."""
        group = self.groups[key]
        return (self._check_op(group.record) or self._check_inputs(group)
                or self._check_reads(group) or self._check_outputs(group))

    def _check_op(self, rec: Record) -> str:
        try:
            sym = invoke(rec.op, [var(f"in{k}") for k in range(len(rec.inputs))],
                         {**rec.attrs, "name": "probe"})
        except (GluonportError, ValueError, TypeError, AttributeError, KeyError) as exc:
            return f"the recorded op does not build: {exc}"  # a record edited by hand
        node = sym._outputs[0][0]
        if len(node.inputs) != len(rec.inputs):
            return f"the op takes {len(node.inputs)} inputs, {len(rec.inputs)} are recorded"
        if node.num_outputs() != len(rec.outputs):
            return f"the op has {node.num_outputs()} outputs, {len(rec.outputs)} are recorded"
        return ""

    def _check_inputs(self, group: OpGroup) -> str:
        inside = set(group.nodes)
        for t in group.record.inputs:
            if t in self.consts or t in self.graph_inputs:
                continue
            if t not in self.producer:
                return f"its input {t!r} is not a tensor of the ONNX graph"
            if self.producer[t] in inside:
                return f"its input {t!r} is made inside the group"
        return ""

    def _check_reads(self, group: OpGroup) -> str:
        made = {o for i in group.nodes for o in self.nodes[i].output if o}
        allowed = made | set(group.record.inputs)
        for i in group.nodes:
            for t in self.nodes[i].input:
                if t and t not in allowed and t not in self.consts:
                    return (f"node {self.nodes[i].name!r} reads {t!r}, which is neither made "
                            "in the group nor one of the MXNet node's inputs")
        return ""

    def _check_outputs(self, group: OpGroup) -> str:
        inside = set(group.nodes)
        outputs = set(group.record.outputs)
        for t in outputs:
            if t in self.producer and self.producer[t] not in inside:
                return f"its output {t!r} is made by node {self.nodes[self.producer[t]].name!r}"
        for i in group.nodes:
            for t in self.nodes[i].output:
                if not t or t in outputs:
                    continue
                if t in self.graph_outputs:
                    return f"tensor {t!r} made inside it is a graph output"
                outside = [j for j in self.readers.get(t, ()) if j not in inside]
                if outside:
                    return (f"tensor {t!r} made inside it is read outside it, by node "
                            f"{self.nodes[outside[0]].name!r}")
        return ""

    # --- planning ---------------------------------------------------------------------------
    def plan(self, keys: Iterable[str]) -> tuple[dict[str, OpGroup], dict[str, str]]:
        """The groups of ``keys`` that can be collapsed together, and why the others cannot."""
        refused = {}
        for key in sorted(set(keys)):
            why = self.check(key)
            if why:
                refused[key] = why
        chosen = {k: self.groups[k] for k in set(keys) if k not in refused}
        while True:
            culprit, why = self._order_problem(chosen)
            if culprit is None:
                return chosen, refused
            refused[culprit] = why
            del chosen[culprit]

    def _order_problem(self, chosen: dict[str, OpGroup]) -> tuple[str | None, str]:
        """The first collapsed group whose placement breaks the graph's order, and why."""
        defined = self.graph_inputs | set(self.consts)
        made_by = {t: k for k, g in chosen.items() for t in g.record.outputs}
        for i, node in enumerate(self.nodes):
            key = self.key_of(i)
            if key in chosen:
                if i != chosen[key].position:
                    continue
                need, made = chosen[key].record.inputs, chosen[key].record.outputs
            else:
                need, made = list(node.input), list(node.output)
            for t in need:
                if not t or t in defined:
                    continue
                if t in made_by and made_by[t] != key:
                    return made_by[t], (f"its output {t!r} is read by node {node.name!r} before "
                                        "the group's last node")
                if key in chosen:
                    return key, f"its input {t!r} is not defined before the group's last node"
            defined.update(t for t in made if t)
        return None, ""

    def steps(self, chosen: list, groups: dict[str, OpGroup]) -> list:
        """Per node: its handler choice, an OpGroup (at a collapsed group's place) or None (a
        collapsed node elsewhere)."""
        out: list = []
        for i, choice in enumerate(chosen):
            key = self.key_of(i)
            if key in groups:
                out.append(groups[key] if i == groups[key].position else None)
            else:
                out.append(choice)
        return out


def build_group(builder: Any, group: OpGroup, label: str) -> None:
    """Add the restored MXNet op of ``group`` to ``builder`` (importer._Builder): its inputs
    are the builder's values of the recorded inputs, its outputs become the recorded tensors.
    """
    rec = group.record
    ins = [builder.value(t) for t in rec.inputs]
    if any(v is None for v in ins):
        return  # an input failed to convert: that node is already reported
    ctx = builder.ctx
    name = ctx.begin(rec.key, rec.op, 0, 0, [])
    try:
        out = invoke(rec.op, [v.sym for v in ins], {**rec.attrs, "name": name})
    except GluonportError as exc:
        raise ConversionError(f"{label}: restoring MXNet node {rec.key!r} ({rec.op}) from the "
                              f"export's provenance failed: {exc}") from exc
    node = out._outputs[0][0]
    for k, tensor in enumerate(rec.outputs):
        if tensor:
            s = Symbol([(node, k)])
            builder.env[tensor] = s
            builder._note_dims(tensor, s)


def restored_note(rec: Record, why: str) -> str:
    """The line added to the import error for a group that could not be restored."""
    return (f"restoring MXNet node {rec.key!r} ({rec.op}) from the export's provenance was "
            f"refused: {why}")
