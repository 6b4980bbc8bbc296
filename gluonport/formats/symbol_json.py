"""Read and write MXNet ``prefix-symbol.json`` files (nnvm graph JSON), FORMATS.md Part 2.

The file is read into a :class:`Graph` of :class:`Node` s (module ``_symgraph``): plain
dataclasses holding exactly what the file says, with no operator knowledge. Every layout MXNet
ever wrote is accepted:

* 0.8 (no ``mxnet_version``): node keys ``param``/``attr``/``backward_source_id``, 2-element
  entries, no ``node_row_ptr``, hidden keys without underscores, aux inputs missing;
* 0.9 - 0.11: ``attr`` (singular) instead of ``attrs``;
* 1.x: ``attrs``, optional ``control_deps`` and ``subgraphs``;
* 2.0: ``is_np_shape``, ``mxnet_version`` 20000.

Legacy keys fold into ``Node.attrs`` as MXNet's reader does (``attr``/``attrs`` fill the same
map, the later one in the file replacing the earlier; ``param`` adds only missing keys), then
MXNet 1.9.1's upgraders run (module ``_symlegacy``). Writing reproduces MXNet 1.9.1's bytes
(module ``_dmlcjson``), so ``dumps(loads(text)) == text`` for every file MXNet 1.9.1 saved.

Like MXNet, unknown keys, non-string attribute values and a bare-int ``mxnet_version`` are
errors. Stricter than MXNet: an input or control dependency must name an earlier node (MXNet
writes nodes in topological order; it would reorder a file that is not) and a variable may not
have inputs.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

from ..errors import FormatError
from ._dmlcjson import write_graph
from ._regular import open_regular
from ._symgraph import MXNET_VERSION, Entry, Graph, Node, make_version, node_row_ptr
from ._symlegacy import HIDDEN_KEYS, InputNames, InputVarAttrs, upgrade_graph

__all__ = [
    "Entry",
    "Node",
    "Graph",
    "InputNames",
    "MXNET_VERSION",
    "HIDDEN_KEYS",
    "loads",
    "load",
    "dumps",
    "save",
    "to_dict",
    "from_dict",
    "parse_json",
    "graph_from_object",
    "upgrade_graph",
    "node_row_ptr",
    "make_version",
]

GRAPH_KEYS = ("nodes", "arg_nodes", "node_row_ptr", "heads", "attrs")
REQUIRED_GRAPH_KEYS = ("nodes", "arg_nodes", "heads")
NODE_KEYS = ("op", "name", "attrs", "inputs", "control_deps", "subgraphs",
             "attr", "param", "backward_source_id")
REQUIRED_NODE_KEYS = ("op", "name", "inputs")
_INT32 = (-(2**31), 2**31 - 1)
_ARRAY = (list, tuple)  # JSON arrays; tuples come from graphs built in code (from_dict)
_MAX_DEPTH = 32  # subgraph nesting; MXNet's control-flow ops nest a few levels at most


class _Object(dict):
    """A JSON object that remembers its keys in file order, duplicates included."""

    order: list[str]


def _object_hook(pairs: list[tuple[str, Any]]) -> _Object:
    obj = _Object(pairs)
    obj.order = [k for k, _ in pairs]
    return obj


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _show(value: Any, limit: int = 80) -> str:
    """A value as JSON, cut short so a message stays one readable line."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _type_name(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
             int: "an integer", float: "a number", type(None): "null"}
    for kind, name in names.items():
        if isinstance(value, kind):
            return name
    return type(value).__name__


def parse_json(text: str | bytes, path: str | None = None) -> Any:
    """Parse JSON text the way MXNet's reader accepts it (raw control characters allowed).

    Raises :class:`FormatError` with the line and column of a syntax error.
    """
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as err:
            raise FormatError(f"not UTF-8 text (byte {err.start}); a symbol file is JSON "
                              "text written as UTF-8", path) from None
    try:
        return json.loads(text, strict=False, object_pairs_hook=_object_hook,
                          parse_constant=_reject_constant)
    except json.JSONDecodeError as err:
        raise FormatError(f"malformed JSON at line {err.lineno} column {err.colno}: {err.msg}; "
                          "the file is damaged or is not a symbol JSON", path) from None
    except (ValueError, RecursionError) as err:
        raise FormatError(f"malformed JSON: {err}", path) from None


class _Reader:
    """Structural checks with messages naming the node, for one file."""

    def __init__(self, path: str | None):
        self.path = path

    def fail(self, where: str, message: str) -> FormatError:
        return FormatError(f"{where}: {message}" if where else message, self.path)

    def check_keys(self, obj: Any, where: str, allowed: tuple[str, ...],
                   required: tuple[str, ...], what: str) -> None:
        if not isinstance(obj, dict):
            raise self.fail(where, f"{what} is {_type_name(obj)}, expected a JSON object")
        unknown = [k for k in obj if k not in allowed]
        if unknown:
            raise self.fail(where, f"unknown key {_show(unknown[0])} in {what} (MXNet refuses "
                            f"unknown keys); allowed keys: {', '.join(allowed)}")
        missing = [k for k in required if k not in obj]
        if missing:
            raise self.fail(where, f"{what} has no {missing[0]!r}; required keys: "
                            f"{', '.join(required)}")

    def uint(self, value: Any, where: str, what: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.fail(where, f"{what} is {_show(value)}, expected a non-negative integer")
        return value

    def int_list(self, value: Any, where: str, what: str) -> list[int]:
        if not isinstance(value, _ARRAY):
            raise self.fail(where, f"{what} is {_type_name(value)}, expected an array of "
                            "non-negative integers")
        return [self.uint(v, where, f"{what}[{i}]") for i, v in enumerate(value)]

    def entry(self, value: Any, where: str, what: str, limit: int, limit_text: str,
              count: int) -> Entry:
        if not isinstance(value, _ARRAY) or len(value) not in (2, 3):
            raise self.fail(where, f"{what} is {_show(value)}, expected [node_id, output_index, "
                            "version] (or [node_id, output_index] in 0.8 files)")
        parts = [self.uint(v, where, f"{what} part {i}") for i, v in enumerate(value)]
        if parts[0] >= count:
            raise self.fail(where, f"{what} {_show(value)} refers to node {parts[0]}, but the "
                            f"graph has {count} nodes")
        if parts[0] >= limit:
            raise self.fail(where, f"{what} {_show(value)} refers to node {parts[0]}, "
                            f"{limit_text}")
        return (parts[0], parts[1], parts[2] if len(parts) == 3 else 0)

    def entries(self, value: Any, where: str, key: str, count: int, limit: int | None = None,
                limit_text: str = "") -> list[Entry]:
        if not isinstance(value, _ARRAY):
            raise self.fail(where, f"{key!r} is {_type_name(value)}, expected an array of "
                            "entries [node_id, output_index, version]")
        what = key.rstrip("s")
        limit = count if limit is None else limit
        return [self.entry(v, where, f"{what} {i}", limit, limit_text, count)
                for i, v in enumerate(value)]

    def str_map(self, value: Any, where: str, what: str) -> dict[str, str]:
        if not isinstance(value, dict):
            raise self.fail(where, f"{what!r} is {_type_name(value)}, expected an object of "
                            "strings")
        for key, item in value.items():
            if not isinstance(item, str):
                raise self.fail(where, f"{what}[{_show(key)}] is {_show(item)}, but every "
                                f"attribute value must be a string: write \"{key}\": "
                                f"{_show(str(item))}")
        return dict(value)

    def node_attrs(self, obj: dict[str, Any], where: str) -> dict[str, str]:
        attrs: dict[str, str] = {}
        order = getattr(obj, "order", list(obj))
        # dmlc reads "attrs" and "attr" into one map, each read replacing it: the later wins.
        for key in [k for k in order if k in ("attrs", "attr")][-1:]:
            attrs = self.str_map(obj[key], where, key)
        for key in ("attrs", "attr"):
            if key in obj:
                self.str_map(obj[key], where, key)
        if "param" in obj:
            for key, item in self.str_map(obj["param"], where, "param").items():
                attrs.setdefault(key, item)
        return attrs

    def node(self, obj: Any, index: int, loc: str, depth: int, count: int) -> Node:
        where = f"{loc}node {index}"
        if isinstance(obj, dict) and isinstance(obj.get("name"), str):
            where += f" {obj['name']!r}"
            if isinstance(obj.get("op"), str) and obj["op"]:
                where += f" ({obj['op']})"
        self.check_keys(obj, where, NODE_KEYS, REQUIRED_NODE_KEYS, "the node")
        op, name = obj["op"], obj["name"]
        if not isinstance(name, str):
            raise self.fail(where, f"'name' is {_type_name(name)}, expected a string")
        if not isinstance(op, str) or not op:
            raise self.fail(where, f"'op' is {_show(op)}, expected an operator name "
                            "('null' for a variable)")
        if "backward_source_id" in obj and (isinstance(obj["backward_source_id"], bool)
                                            or not isinstance(obj["backward_source_id"], int)):
            raise self.fail(where, "'backward_source_id' must be an integer (0.8 files write -1)")
        node = Node(op, name, self.node_attrs(obj, where))
        before = f"which is not before node {index} (nodes must be in topological order, " \
                 "inputs first, as MXNet writes them)"
        node.inputs = self.entries(obj["inputs"], where, "inputs", count, index, before)
        if node.is_variable and node.inputs:
            raise self.fail(where, "a variable (op 'null') has inputs; only operators have "
                            "inputs")
        deps = self.int_list(obj.get("control_deps", []), where, "control_deps")
        for dep in deps:
            if dep >= index:
                raise self.fail(where, f"control dependency {dep} is not before node {index}")
        node.control_deps = deps
        node.subgraphs = self.subgraphs(obj.get("subgraphs", []), where, depth)
        return node

    def subgraphs(self, value: Any, where: str, depth: int) -> list[Graph]:
        if not isinstance(value, _ARRAY):
            raise self.fail(where, f"'subgraphs' is {_type_name(value)}, expected an array of "
                            "graphs")
        if value and depth >= _MAX_DEPTH:
            raise self.fail(where, f"subgraphs nested more than {_MAX_DEPTH} levels deep")
        return [sub if isinstance(sub, Graph) else self.graph(sub, f"{where} subgraph {i}: ",
                                                               depth + 1)
                for i, sub in enumerate(value)]

    def any_pair(self, key: str, value: Any, where: str) -> list[Any]:
        if key == "mxnet_version" and isinstance(value, int) and not isinstance(value, bool):
            raise self.fail(where, f"'mxnet_version' is the bare integer {value}; MXNet "
                            f"requires the pair [\"int\", {value}]")
        if (not isinstance(value, _ARRAY) or len(value) != 2 or not isinstance(value[0], str)):
            raise self.fail(where, f"graph attribute {_show(key)} is {_show(value)}, expected a "
                            "pair [\"<type>\", value] such as [\"int\", 10901]")
        type_name, item = value
        if key in ("mxnet_version", "is_np_shape") and type_name != "int":
            raise self.fail(where, f"graph attribute {_show(key)} must be [\"int\", N], got "
                            f"{_show(value)}")
        check = _ANY_TYPES.get(type_name)
        if check is None:
            raise self.fail(where, f"graph attribute {_show(key)} has type {_show(type_name)}, "
                            f"which MXNet does not know; known types: {', '.join(_ANY_TYPES)}")
        if not check(item):
            raise self.fail(where, f"graph attribute {_show(key)}: {_show(item)} is not a "
                            f"valid {_show(type_name)} value")
        return [type_name, list(item) if isinstance(item, tuple) else item]

    def graph_attrs(self, value: Any, where: str) -> dict[str, list[Any]]:
        if not isinstance(value, dict):
            raise self.fail(where, f"graph 'attrs' is {_type_name(value)}, expected an object")
        return {k: self.any_pair(k, v, where) for k, v in value.items()}

    def graph(self, obj: Any, loc: str, depth: int) -> Graph:
        where = loc.rstrip(": ")
        self.check_keys(obj, where, GRAPH_KEYS, REQUIRED_GRAPH_KEYS,
                        "the graph" if loc else "the top level")
        if not isinstance(obj["nodes"], _ARRAY):
            raise self.fail(where, f"'nodes' is {_type_name(obj['nodes'])}, expected an array")
        count = len(obj["nodes"])
        nodes = [self.node(n, i, loc, depth, count) for i, n in enumerate(obj["nodes"])]
        graph = Graph(nodes=nodes, attrs=self.graph_attrs(obj.get("attrs", {}), where))
        graph.heads = self.entries(obj["heads"], where, "heads", count)
        graph.arg_nodes = self.int_list(obj["arg_nodes"], where, "arg_nodes")
        for nid in graph.arg_nodes:
            if nid >= count or not nodes[nid].is_variable:
                what = "out of range" if nid >= count else \
                    f"node {nid} {nodes[nid].name!r} is a {nodes[nid].op}, not a variable"
                raise self.fail(where, f"arg_nodes lists {nid}: {what}; arg_nodes holds the "
                                "indices of the 'null' nodes")
        if "node_row_ptr" in obj:
            graph.node_row_ptr = self.int_list(obj["node_row_ptr"], where, "node_row_ptr")
        version = graph.attrs.get("mxnet_version")
        graph.mxnet_version = version[1] if version else make_version(0, 8, 0)
        return graph


def _is_int(value: Any, low: int = _INT32[0], high: int = _INT32[1]) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _is_int_list(value: Any) -> bool:
    return isinstance(value, _ARRAY) and all(_is_int(v) for v in value)


# The "any" types MXNet 1.9.1 registers (DMLC_JSON_ENABLE_ANY) and a check of each value.
_ANY_TYPES = {
    "int": _is_int,
    "size_t": lambda v: _is_int(v, 0, 2**64 - 1),
    "str": lambda v: isinstance(v, str),
    "list_int": _is_int_list,
    "list_str": lambda v: isinstance(v, _ARRAY) and all(isinstance(s, str) for s in v),
    "list_shape": lambda v: isinstance(v, _ARRAY) and all(_is_int_list(s) for s in v),
}


def _inherit_version(graph: Graph) -> None:
    for node in graph.nodes:
        for sub in node.subgraphs:
            sub.mxnet_version = graph.mxnet_version
            _inherit_version(sub)


def graph_from_object(obj: Any, path: str | None = None) -> Graph:
    """Check a parsed JSON value and build the :class:`Graph` it describes (no upgrade).

    Subgraphs, which carry no ``attrs``, get the top level's ``mxnet_version``.
    """
    graph = _Reader(path).graph(obj, "", 0)
    _inherit_version(graph)
    return graph


def from_dict(obj: Any, path: str | None = None) -> Graph:
    """Build a :class:`Graph` from the plain-dict form (what ``json.loads`` gives for a file).

    The dict is checked like a file (:class:`FormatError` on a bad one); arrays may be tuples and
    subgraphs may already be :class:`Graph` s. No upgrade runs: a dict without
    ``attrs.mxnet_version`` is taken as current (10901).
    """
    graph = graph_from_object(obj, path)
    if "mxnet_version" not in graph.attrs:
        graph.mxnet_version = MXNET_VERSION
        _inherit_version(graph)
    return graph


def _node_dict(node: Node) -> dict[str, Any]:
    out: dict[str, Any] = {"op": node.op, "name": node.name}
    if node.attrs:
        out["attrs"] = dict(node.attrs)
    out["inputs"] = [list(e) for e in node.inputs]
    if node.control_deps:
        out["control_deps"] = list(node.control_deps)
    if node.subgraphs:
        out["subgraphs"] = [to_dict(sub, top_level=False) for sub in node.subgraphs]
    return out


def to_dict(graph: Graph, *, top_level: bool = True) -> dict[str, Any]:
    """The plain-dict form of ``graph``: exactly ``json.loads(dumps(graph))``.

    Keys in file order; entries as 3-item lists; ``arg_nodes`` computed when ``None``;
    ``attrs.mxnet_version`` added at the top level when absent, as :func:`dumps` writes it.
    """
    out: dict[str, Any] = {"nodes": [_node_dict(n) for n in graph.nodes]}
    out["arg_nodes"] = list(graph.arg_nodes if graph.arg_nodes is not None
                            else graph.variable_ids())
    if graph.node_row_ptr is not None:
        out["node_row_ptr"] = list(graph.node_row_ptr)
    out["heads"] = [list(e) for e in graph.heads]
    attrs = {k: list(v) for k, v in graph.attrs.items()}
    if top_level:
        attrs.setdefault("mxnet_version", ["int", MXNET_VERSION])
    if attrs:
        out["attrs"] = attrs
    return out


def loads(text: str | bytes, *, path: str | None = None,
          input_names: InputNames | None = None, upgrade: bool = True,
          input_var_attrs: InputVarAttrs | None = None) -> Graph:
    """Read symbol JSON text, as ``mx.sym.load_json`` does, into a :class:`Graph`.

    Parameters
    ----------
    text:
        The JSON text (``str``, or UTF-8 ``bytes``).
    path:
        The file name, put in front of error messages.
    input_names:
        ``input_names(op, attrs) -> list[str] | None``: an operator's argument names, aux states
        included (MXNet's ``FListInputNames``), ``None`` for an op it does not know. Only the
        legacy upgrade uses it: to move ``weight_lr_mult``-style keys to the input variable, and
        to add the aux-state variables 0.8 files omitted. Without it those steps are skipped.
    input_var_attrs:
        ``input_var_attrs(op, attrs, n_inputs) -> [attrs per input position] | None``: the
        attributes an operator gives its input variables (MXNet's
        ``FSetInputVarAttrOnCompose``: BatchNorm's moving statistics get ``__init__``). Only
        the upgrade of files older than 0.9.4 uses it; without it that step is skipped.
    upgrade:
        Run MXNet 1.9.1's legacy upgraders (``src/nnvm/legacy_json_util.cc``), as MXNet does on
        every load. ``False`` gives the file's content with legacy keys folded in only.

    Returns
    -------
    Graph
        ``graph.mxnet_version`` is the version the file gave (800 when absent). After the
        upgrade of an older file ``graph.attrs["mxnet_version"]`` is ``["int", 10901]``.

    Raises
    ------
    FormatError
        Malformed JSON, unknown keys, non-string attribute values, dangling references, and the
        other errors MXNet's reader raises, naming the node.

    Examples
    --------
    >>> g = loads('{"nodes": [{"op": "null", "name": "x", "inputs": []}], '
    ...           '"arg_nodes": [0], "heads": [[0, 0, 0]], '
    ...           '"attrs": {"mxnet_version": ["int", 10901]}}')
    >>> g.nodes[0].name, g.heads, g.mxnet_version
    ('x', [(0, 0, 0)], 10901)
    """
    graph = graph_from_object(parse_json(text, path), path)
    if upgrade:
        upgrade_graph(graph, input_names, input_var_attrs)
    return graph


def load(path: str | os.PathLike[str], *, input_names: InputNames | None = None,
         upgrade: bool = True, input_var_attrs: InputVarAttrs | None = None) -> Graph:
    """Read a ``-symbol.json`` file, as ``mx.sym.load`` does. See :func:`loads`."""
    with open_regular(path, "symbol JSON file") as f:
        data = f.read()
    return loads(data, path=os.fspath(path), input_names=input_names, upgrade=upgrade,
                 input_var_attrs=input_var_attrs)


def dumps(graph: Graph) -> str:
    """The JSON text MXNet 1.9.1 writes for ``graph`` (``Symbol.tojson()``), byte for byte.

    ``mxnet_version`` ``["int", 10901]`` is written unless ``graph.attrs`` gives one;
    ``node_row_ptr`` only when the graph carries one (see :func:`node_row_ptr`); ``arg_nodes``
    as carried, or the variable ids when it is ``None``. No trailing newline, like MXNet.
    """
    return write_graph(graph)


def save(path: str | os.PathLike[str], graph: Graph) -> None:
    """Write ``graph`` to ``path`` as MXNet's ``Symbol.save`` does (UTF-8, :func:`dumps`).

    The text goes to a temporary file in the same directory, then replaces ``path``, so a
    failure never leaves a half-written file.
    """
    try:
        data = dumps(graph).encode("utf-8")
    except UnicodeEncodeError as err:
        raise FormatError(f"a name or attribute holds {err.object[err.start:err.end]!r}, which "
                          "UTF-8 cannot encode; remove the lone surrogate",
                          os.fspath(path)) from None
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".symbol-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
