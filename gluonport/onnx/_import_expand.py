"""Function ops by expansion: an ONNX op without an import handler whose schema defines it as
a function (``Attention``, ``RotaryEmbedding``, ``Gelu``, ``Mish``, ``GroupNormalization``...)
is replaced by its function body, before folding, so that the importer sees primitive ops.

The body comes from onnx's schema for the model's opset: a plain function body
(``OpSchema.get_function_with_opset_version``) or a context-dependent one, built by onnx from
the node and the types of its inputs (``get_context_dependent_function_with_opset_version``;
the types come from shape inference, so such a node waits for the round in which its inputs'
types are known). Expansion is recursive (a body may use other function ops), attribute
references (``ref_attr_name``) take the node's attribute or the schema's default, and every
tensor and node the body adds gets a unique name derived from the node's name. Both onnx calls
exist in every onnx the package allows (>= 1.17).

A body is written against an opset (its ``opset_import``); where that differs from the
model's, it is used only if every op in it has the same version at both opsets (the same
meaning), else the node stays as it is and is reported with the reason.

Ops with a direct handler keep it (``LayerNormalization`` -> ``LayerNorm`` is one MXNet op,
its body a dozen); a node whose handler does not take one of its attributes is expanded too.
"""

from __future__ import annotations

import onnx

from ._import_context import op_version, select_handler
from ._import_load import infer_value_info

__all__ = ["expand_functions", "expansion_problems", "rename_graph"]

_MAX_ROUNDS = 8  # shape-inference rounds (one per level of context-dependent nesting)
_MAX_DEPTH = 16  # nesting of plain function bodies within one round
_MAX_NODES = 1_000_000  # a body that grows the graph past this stops expanding


def _domain(node: onnx.NodeProto) -> str:
    return "" if node.domain in ("", "ai.onnx") else node.domain


def _schema(node: onnx.NodeProto, opset: int):
    try:
        s = onnx.defs.get_schema(node.op_type, opset, _domain(node))
    except Exception:  # noqa: BLE001 - SchemaError: unknown op
        return None
    return s if (s.has_function or s.has_context_dependent_function) else None


def _needs_expansion(node: onnx.NodeProto, opsets: dict[str, int]) -> bool:
    """No handler serves this node as it is, and its schema has a function body."""
    domain = _domain(node)
    opset = opsets.get(domain, opsets.get("", 1))
    handler, _, _ = select_handler(node.op_type, domain, opset)
    if handler is not None:
        if handler.attrs is None or all(a.name in handler.attrs for a in node.attribute):
            return False
    return _schema(node, opset) is not None


class _Expander:
    """One pass over the graph's nodes, expanding what it can."""

    def __init__(self, graph: onnx.GraphProto, opsets: dict[str, int],
                 types: dict[str, onnx.TypeProto], problems: dict[str, str]):
        self.opsets = opsets
        self.types = types
        self.problems = problems
        self.tensors = _all_names(graph)
        self.node_names = {n.name for n in graph.node if n.name}
        self.count = len(graph.node)

    def run(self, nodes: list[onnx.NodeProto]) -> tuple[list[onnx.NodeProto], bool]:
        out: list[onnx.NodeProto] = []
        changed = False
        for node in nodes:
            body = self.expand(node, 0)
            changed |= body is not None
            out.extend([node] if body is None else body)
        return out, changed

    def expand(self, node: onnx.NodeProto, depth: int) -> list[onnx.NodeProto] | None:
        """The node's expansion (its body nodes expanded in turn), or None to keep it."""
        if depth > _MAX_DEPTH or not _needs_expansion(node, self.opsets):
            return None
        opset = self.opsets.get(_domain(node), self.opsets.get("", 1))
        fn = self.body(node, opset)
        if fn is None:
            return None
        why = _opset_mismatch(fn, self.opsets)
        if why:
            self.problems[node.name or node.output[0]] = why
            return None
        if self.count + len(fn.node) > _MAX_NODES:
            return None
        self.count += len(fn.node)
        out = []
        for n in self.inline(node, fn, _attr_defaults(node, opset, fn)):
            sub = self.expand(n, depth + 1)
            out.extend([n] if sub is None else sub)
        return out

    def body(self, node: onnx.NodeProto, opset: int) -> onnx.FunctionProto | None:
        schema = _schema(node, opset)
        raw = b""
        try:
            if schema.has_function:
                raw = schema.get_function_with_opset_version(opset)
            if not raw and schema.has_context_dependent_function:
                if any(n and n not in self.types for n in node.input):
                    return None  # input types unknown yet: the next round may know them
                tps = [self.types[n] if n else onnx.TypeProto() for n in node.input]
                raw = schema.get_context_dependent_function_with_opset_version(
                    opset, node.SerializeToString(), [t.SerializeToString() for t in tps])
        except Exception as exc:  # noqa: BLE001 - onnx's body builder refused the node
            self.problems[node.name or node.output[0]] = f"onnx could not build its function " \
                                                         f"body: {str(exc).splitlines()[0]}"
            return None
        if not raw:
            return None
        fn = onnx.FunctionProto()
        fn.ParseFromString(raw)
        return fn

    def inline(self, node: onnx.NodeProto, fn: onnx.FunctionProto,
               attrs: dict[str, onnx.AttributeProto]) -> list[onnx.NodeProto]:
        base = (node.name or node.output[0] or node.op_type).replace("/", "_")
        mapping = {formal: (node.input[i] if i < len(node.input) else "")
                   for i, formal in enumerate(fn.input)}
        for i, formal in enumerate(fn.output):
            actual = node.output[i] if i < len(node.output) else ""
            mapping[formal] = actual or self.fresh(f"{base}__{formal}")
        for n in fn.node:
            for o in n.output:
                if o and o not in mapping:
                    mapping[o] = self.fresh(f"{base}__{o}")
        out = []
        for n in fn.node:
            new = onnx.NodeProto()
            new.CopyFrom(n)
            new.input[:] = [mapping.get(x, x) if x else "" for x in n.input]
            new.output[:] = [mapping[x] if x else "" for x in n.output]
            new.name = self.fresh_node(f"{base}/{n.name or n.op_type}")
            _set_attrs(new, attrs, mapping)
            out.append(new)
        return out

    def fresh(self, name: str) -> str:
        out, k = name, 0
        while out in self.tensors:
            k += 1
            out = f"{name}_{k}"
        self.tensors.add(out)
        return out

    def fresh_node(self, name: str) -> str:
        out, k = name, 0
        while out in self.node_names:
            k += 1
            out = f"{name}_{k}"
        self.node_names.add(out)
        return out


def _all_names(graph: onnx.GraphProto) -> set[str]:
    names = {i.name for i in graph.input} | {o.name for o in graph.output}
    names |= {t.name for t in graph.initializer}
    for n in graph.node:
        names.update(n.input)
        names.update(n.output)
    return names


def _attr_defaults(node: onnx.NodeProto, opset: int, fn: onnx.FunctionProto
                   ) -> dict[str, onnx.AttributeProto]:
    """The attributes a body's references resolve to: the node's, else the defaults of the
    function (``attribute_proto``) or of the schema."""
    out: dict[str, onnx.AttributeProto] = {}
    schema = _schema(node, opset)
    for name, a in (schema.attributes.items() if schema is not None else ()):
        if a.default_value.type != onnx.AttributeProto.UNDEFINED:
            out[name] = a.default_value
    for a in fn.attribute_proto:
        out[a.name] = a
    for a in node.attribute:
        out[a.name] = a
    return out


def _set_attrs(node: onnx.NodeProto, attrs: dict[str, onnx.AttributeProto],
               outer: dict[str, str]) -> None:
    """Resolve ``ref_attr_name`` references; rename outer-scope names inside subgraphs."""
    kept = []
    for a in node.attribute:
        if a.ref_attr_name:
            ref = attrs.get(a.ref_attr_name)
            if ref is None:
                continue  # an optional attribute the node does not set: omitted
            new = onnx.AttributeProto()
            new.CopyFrom(ref)
            new.name = a.name
            a = new
        if a.type == onnx.AttributeProto.GRAPH:
            new = onnx.AttributeProto()
            new.CopyFrom(a)
            rename_graph(new.g, attrs, outer)
            a = new
        elif a.type == onnx.AttributeProto.GRAPHS:
            new = onnx.AttributeProto()
            new.CopyFrom(a)
            for g in new.graphs:
                rename_graph(g, attrs, outer)
            a = new
        kept.append(a)
    del node.attribute[:]
    node.attribute.extend(kept)


def rename_graph(g: onnx.GraphProto, attrs: dict[str, onnx.AttributeProto],
                  outer: dict[str, str]) -> None:
    """In place: names a subgraph takes from the enclosing body renamed as the body's are
    (names the subgraph defines itself shadow them); attribute references resolved."""
    local = {i.name for i in g.input} | {t.name for t in g.initializer}
    local |= {o for n in g.node for o in n.output}
    scope = {k: v for k, v in outer.items() if k not in local}
    for n in g.node:
        n.input[:] = [scope.get(x, x) if x else "" for x in n.input]
        _set_attrs(n, attrs, scope)
    for o in g.output:
        o.name = scope.get(o.name, o.name)


def _opset_mismatch(fn: onnx.FunctionProto, opsets: dict[str, int]) -> str:
    """'' when every op of the body means the same at the model's opset as at the body's."""
    body = {("" if o.domain == "ai.onnx" else o.domain): o.version for o in fn.opset_import}
    model = opsets.get("", 1)
    v = body.get("", model)
    if v == model:
        return ""
    for n in fn.node:
        if _domain(n) == "" and op_version(n.op_type, "", v) != op_version(n.op_type, "", model):
            return (f"its function body is written for opset {v}, where {n.op_type} differs "
                    f"from the model's opset {model}")
    return ""


def expand_functions(model: onnx.ModelProto, opsets: dict[str, int]
                     ) -> tuple[onnx.ModelProto, dict[str, str]]:
    """``model`` with function ops that have no handler replaced by their bodies (a copy;
    ``model`` itself unchanged when nothing needs expanding) and ``{node: why}`` for the nodes
    that needed it but could not be expanded."""
    problems: dict[str, str] = {}
    if not any(_needs_expansion(n, opsets) for n in model.graph.node):
        return model, problems
    out = onnx.ModelProto()
    out.CopyFrom(model)
    nodes = list(out.graph.node)
    for _ in range(_MAX_ROUNDS):
        pending = any(_needs_expansion(n, opsets) for n in nodes)
        if not pending:
            break
        types = infer_value_info(out)
        problems.clear()
        nodes, changed = _Expander(out.graph, opsets, types, problems).run(nodes)
        del out.graph.node[:]
        out.graph.node.extend(nodes)
        if not changed:
            break
    return out, problems


def expansion_problems(problems: dict[str, str], node: onnx.NodeProto) -> str:
    """Why ``node`` (one the importer cannot handle) was not expanded, or ''."""
    return problems.get(node.name or (node.output[0] if node.output else ""), "")
