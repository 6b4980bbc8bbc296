"""Write a :class:`Graph` exactly as MXNet 1.9.1's dmlc ``JSONWriter`` does (FORMATS.md 2.5).

dmlc keeps two stacks, one entry per open ``[``/``{``: whether the scope is multi-line, and how
many items it holds. Before every item after the first it writes ``", "``; in a multi-line scope
each item (and the closing bracket of a non-empty scope) starts on a new line indented two spaces
per open scope. That is where the trailing space at the end of each line comes from. Objects are
multi-line except maps of at most one key; arrays are multi-line when they hold more than 10
items or their items are not plain numbers (nodes, strings, subgraphs). Only ``\\" \\\\ \\n \\r
\\t`` are escaped in values; map keys are written raw by dmlc, which we follow unless the key holds
a character that would break the JSON (then it is escaped like a value).
"""

from __future__ import annotations

from typing import Any

from ._symgraph import MXNET_VERSION, Entry, Graph, Node

__all__ = ["write_graph"]

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_UNSAFE_IN_KEY = ('"', "\\", "\n", "\r")
# MXNet writes these graph attributes first, in this order (libstdc++ unordered_map order).
_GRAPH_ATTR_ORDER = ("is_np_shape", "mxnet_version")


def _escape(text: str) -> str:
    if not any(ch in text for ch in _ESCAPES):
        return text
    return "".join(_ESCAPES.get(ch, ch) for ch in text)


def _utf8_order(key: str) -> bytes:
    # std::map<std::string> sorts by bytes; UTF-8 byte order equals code point order.
    return key.encode("utf-8", "surrogatepass")


class _Writer:
    """A faithful model of ``dmlc::JSONWriter``'s layout state."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.multi: list[bool] = []
        self.count: list[int] = []

    def _newline(self) -> None:
        if not self.multi or self.multi[-1]:
            self.out.append("\n" + "  " * len(self.multi))

    def begin(self, bracket: str, multi_line: bool) -> None:
        self.out.append(bracket)
        self.multi.append(multi_line)
        self.count.append(0)

    def end(self, bracket: str) -> None:
        multi_line = self.multi.pop()
        count = self.count.pop()
        if multi_line and count:
            self._newline()
        self.out.append(bracket)

    def key(self, key: str) -> None:
        if self.count[-1]:
            self.out.append(", ")
        self._newline()
        raw = _escape(key) if any(ch in key for ch in _UNSAFE_IN_KEY) else key
        self.out.append(f'"{raw}": ')
        self.count[-1] += 1

    def item(self) -> None:
        if self.count[-1]:
            self.out.append(", ")
        self.count[-1] += 1
        self._newline()

    def string(self, text: str) -> None:
        self.out.append(f'"{_escape(text)}"')

    def number(self, value: int) -> None:
        self.out.append(str(int(value)))

    def numbers(self, values: list[int]) -> None:
        self.begin("[", len(values) > 10)
        for value in values:
            self.item()
            self.number(value)
        self.end("]")

    def strings(self, values: list[str]) -> None:
        self.begin("[", True)
        for value in values:
            self.item()
            self.string(value)
        self.end("]")

    def entries(self, entries: list[Entry]) -> None:
        self.begin("[", len(entries) > 10)
        for entry in entries:
            self.item()
            self.begin("[", False)
            for part in entry:
                self.item()
                self.number(part)
            self.end("]")
        self.end("]")

    def str_map(self, mapping: dict[str, str]) -> None:
        self.begin("{", len(mapping) > 1)
        for key in sorted(mapping, key=_utf8_order):
            self.key(key)
            self.string(mapping[key])
        self.end("}")

    def any_value(self, pair: list[Any]) -> None:
        type_name, value = pair
        self.begin("[", False)
        self.item()
        self.string(type_name)
        self.item()
        if type_name == "str":
            self.string(value)
        elif type_name == "list_str":
            self.strings(value)
        elif type_name == "list_shape":
            self.begin("[", True)
            for shape in value:
                self.item()
                self.numbers(shape)
            self.end("]")
        elif type_name == "list_int":
            self.numbers(value)
        else:
            self.number(value)
        self.end("]")

    def graph_attrs(self, attrs: dict[str, list[Any]]) -> None:
        first = [k for k in _GRAPH_ATTR_ORDER if k in attrs]
        rest = sorted((k for k in attrs if k not in _GRAPH_ATTR_ORDER), key=_utf8_order)
        self.begin("{", len(attrs) > 1)
        for key in first + rest:
            self.key(key)
            self.any_value(attrs[key])
        self.end("}")

    def node(self, node: Node) -> None:
        self.begin("{", True)
        self.key("op")
        self.string(node.op)
        self.key("name")
        self.string(node.name)
        if node.attrs:
            self.key("attrs")
            self.str_map(node.attrs)
        self.key("inputs")
        self.entries(node.inputs)
        if node.control_deps:
            self.key("control_deps")
            self.numbers(node.control_deps)
        if node.subgraphs:
            self.key("subgraphs")
            self.begin("[", True)
            for sub in node.subgraphs:
                self.item()
                self.graph(sub, sub.attrs)
            self.end("]")
        self.end("}")

    def graph(self, graph: Graph, attrs: dict[str, list[Any]]) -> None:
        self.begin("{", True)
        self.key("nodes")
        self.begin("[", True)
        for node in graph.nodes:
            self.item()
            self.node(node)
        self.end("]")
        self.key("arg_nodes")
        arg_nodes = graph.arg_nodes if graph.arg_nodes is not None else graph.variable_ids()
        self.numbers(arg_nodes)
        if graph.node_row_ptr is not None:
            self.key("node_row_ptr")
            self.numbers(graph.node_row_ptr)
        self.key("heads")
        self.entries(graph.heads)
        if attrs:
            self.key("attrs")
            self.graph_attrs(attrs)
        self.end("}")


def write_graph(graph: Graph) -> str:
    """The text MXNet 1.9.1 writes for ``graph`` (top level: ``mxnet_version`` is added)."""
    attrs = dict(graph.attrs)
    attrs.setdefault("mxnet_version", ["int", MXNET_VERSION])
    writer = _Writer()
    writer.graph(graph, attrs)
    return "".join(writer.out)
