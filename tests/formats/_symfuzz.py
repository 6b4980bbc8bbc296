"""A seeded mutation fuzzer for symbol JSON, and the consumers each input is fed to.

Used by ``test_symbol_json_campaign.py``. Mutations are structural (ops, input entries with
wrong arity or out-of-range/negative/huge/non-int indexes, heads, arg_nodes, attributes with
absurd values, node_row_ptr, nested types, node order) and textual (bytes). Every input that
loads is then used the way a user would: ``list_outputs``, ``tojson``, ``infer_shape``, a forward
pass on small arrays, ONNX export, ``SymbolBlock.imports``. Only :class:`GluonportError` may
come out of gluonport.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from gluonport import sym
from gluonport.errors import GluonportError
from gluonport.ops import registry

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "formats" / "symbol"
GOLDEN_SEEDS = {  # file -> shapes of its data inputs
    "mlp-symbol.json": None, "conv_bn-symbol.json": None, "gluon_export-symbol.json": None,
    "multi_output-symbol.json": None, "var_attrs-symbol.json": None,
    "legacy/handwritten_v0_8-symbol.json": None,
}
WEIRD = [-1, 0, 1, 2, 3, 5, 7, 2**31, 2**63, 2**64 + 1, 1.5, -0.0, "0", "", None, True, False,
         [], [0], [0, 0], {}, {"a": 1}]
ABSURD = ["-1", "0", "1", "2", "3", "7", "-7", "64", "1e9", "1e400", "nan", "inf", "-inf", "None",
          "True", "False", "abc", "", " ", "()", "(0,)", "(1, -1)", "(2, 2)", "(3, 3, 3)", "(-1,)",
          "(0, 0)", "[1, 2]", "((1,))", "(1,", "int64", "float16", "bool", "int8", "'x'",
          "(100000, 100000)", "4294967297", "-9223372036854775809", "0x10", "1_0", "\u00e9"]
MAX_RUN_ELEMENTS = 20_000  # the harness runs forward passes only on small graphs


def _built_seeds() -> dict[str, tuple[str, dict[str, tuple[int, ...]]]]:
    """Small graphs from the sym API covering variadic ops, several outputs, aux states."""
    d = sym.var("data")
    fc = sym.FullyConnected(d, num_hidden=3, name="fc1")
    mlp = sym.softmax(sym.FullyConnected(sym.relu(fc), num_hidden=2, no_bias=True, name="fc2"))
    conv = sym.Convolution(d, kernel=(3, 3), num_filter=2, pad=(1, 1), name="conv")
    cnn = sym.Flatten(sym.Pooling(sym.Activation(sym.BatchNorm(conv, name="bn"), act_type="relu"),
                                  kernel=(2, 2), stride=(2, 2), pool_type="max"))
    parts = sym.SliceChannel(d, num_outputs=3, axis=1, name="split")
    cat = sym.Concat(parts[0], parts[2], parts[1], dim=1, name="cat")
    group = sym.Group([cat, sym.add_n(parts[0], parts[1], name="sum"),
                       sym.stack(parts[2], parts[0], axis=0, name="st")])
    shapes = sym.broadcast_add(sym.expand_dims(sym.transpose(d), axis=0),
                               sym.Reshape(d, shape=(1, 6, 2)), name="badd")
    emb = sym.Embedding(d, input_dim=5, output_dim=3, name="emb")
    out = sym.SoftmaxOutput(sym.FullyConnected(sym.Dropout(d, p=0.5), num_hidden=2, name="fc3"),
                            name="so")
    return {"mlp": (mlp.tojson(), {"data": (2, 4)}),
            "cnn": (cnn.tojson(), {"data": (1, 2, 4, 4)}),
            "split": (group.tojson(), {"data": (2, 6)}),
            "shapes": (shapes.tojson(), {"data": (2, 6)}),
            "emb": (emb.tojson(), {"data": (2, 3)}),
            "out": (out.tojson(), {"data": (2, 4), "so_label": (2,)})}


@cache
def seeds() -> tuple[tuple[str, str, tuple[tuple[str, tuple[int, ...]], ...]], ...]:
    out = [(name, text, tuple(shapes.items())) for name, (text, shapes) in
           _built_seeds().items()]
    for name in GOLDEN_SEEDS:
        text = (GOLDEN / name).read_text(encoding="utf-8")
        s = sym.load_json(text)
        data = [a for a in s.list_arguments() if a in ("data", "x")]
        out.append((name, text, tuple((a, _guess_shape(s, a)) for a in data)))
    return tuple(out)


def _guess_shape(s: Any, arg: str) -> tuple[int, ...]:
    for shape in [(2, 4), (1, 3, 8, 8), (1, 2, 6, 6), (2, 3, 4), (1, 1, 8, 8)]:
        try:
            _, outs, _ = s.infer_shape(**{arg: shape})
            if outs and all(o is not None for o in outs):
                return shape
        except GluonportError:
            continue
    return (2, 4)


@cache
def op_names() -> tuple[str, ...]:
    return tuple(sorted(registry.all_ops()))


@cache
def ops_by_arity() -> dict[int, tuple[str, ...]]:
    """Ops whose default attributes parse, by their number of inputs."""
    out: dict[int, list[str]] = {}
    for name, op in sorted(registry.all_ops().items()):
        try:
            p = op.parse({}, strict=False)
            n = len(op.input_names(p, 1))
        except GluonportError:
            continue
        out.setdefault(n, []).append(name)
    return {k: tuple(v) for k, v in out.items()}


def _param_keys(op_name: Any) -> list[str]:
    op = registry.find(op_name) if isinstance(op_name, str) else None
    return sorted(op.params.fields) if op is not None else []


# --- mutations -------------------------------------------------------------------------------

def _weird_entry(rng: random.Random, n: int) -> Any:
    entry = [rng.randrange(max(n, 1)), rng.choice([0, 0, 1, 2, 5]), rng.choice([0, 0, 1, 2])]
    roll = rng.random()
    if roll < 0.45:
        entry[rng.randrange(3)] = rng.choice(WEIRD)
    elif roll < 0.55:
        del entry[rng.randrange(1, 3):]
    elif roll < 0.6:
        entry.append(rng.choice(WEIRD))
    elif roll < 0.65:
        return rng.choice(WEIRD)
    return entry


def _mutate_entries(rng: random.Random, entries: list, n: int) -> None:
    action = rng.choice(["drop", "dup", "add", "field", "index", "replace"])
    if action == "drop" and entries:
        del entries[rng.randrange(len(entries))]
    elif action == "dup" and entries:
        entries.insert(rng.randrange(len(entries) + 1), copy.deepcopy(rng.choice(entries)))
    elif action == "add":
        entries.insert(rng.randrange(len(entries) + 1), _weird_entry(rng, n))
    elif action in ("field", "index") and entries:
        e = rng.choice(entries)
        if isinstance(e, list) and e:
            k = 1 if action == "index" and len(e) > 1 else rng.randrange(len(e))
            e[k] = rng.choice([*WEIRD, 1, 2, 3, 4]) if action == "field" else rng.choice(
                [1, 2, 3, 4, 5, 100, -1, 2**31])
    elif entries:
        entries[rng.randrange(len(entries))] = _weird_entry(rng, n)


def _mutate_node(rng: random.Random, nodes: list, k: int) -> None:
    node = nodes[k]
    if not isinstance(node, dict):
        return
    roll = rng.random()
    if roll < 0.1:
        node["op"] = rng.choice([*op_names(), "null", "null", "", "NoSuchOp", 5, None])
    elif roll < 0.2 and isinstance(node.get("inputs"), list):
        same = ops_by_arity().get(len(node["inputs"]))
        if same:  # another op taking as many inputs: reaches its shape rule and compute
            node["op"] = rng.choice(same)
            node.pop("attrs", None)
    elif roll < 0.55 and node.get("op") != "null" or roll < 0.3:
        attrs = node.setdefault("attrs", {}) if isinstance(node.get("attrs", {}), dict) else {}
        keys = _param_keys(node.get("op")) + list(attrs) + ["num_args", "num_outputs",
                                                            "__shape__", "__dtype__"]
        for _ in range(rng.choice([1, 1, 2, 3])):
            attrs[rng.choice(keys)] = rng.choice(ABSURD)
    elif roll < 0.8:
        inputs = node.get("inputs")
        if isinstance(inputs, list):
            _mutate_entries(rng, inputs, len(nodes))
    elif roll < 0.86:
        node["name"] = rng.choice(["", "data", nodes[0].get("name", "x")
                                   if isinstance(nodes[0], dict) else "x", "a" * 50, 7])
    elif roll < 0.9:
        key = rng.choice(["op", "name", "inputs", "attrs", "control_deps", "subgraphs", "x"])
        if key in node:
            del node[key]
        else:
            node[key] = rng.choice(WEIRD)
    elif roll < 0.95:
        node[rng.choice(["control_deps", "subgraphs", "attrs", "inputs"])] = rng.choice(WEIRD)
    else:
        j = rng.randrange(len(nodes))
        nodes[j], nodes[k] = nodes[k], nodes[j]


def _nested(rng: random.Random, obj: Any) -> None:
    """Replace one value anywhere with a value of another type."""
    parent, key = obj, None
    for _ in range(rng.randrange(1, 7)):
        keys = list(parent) if isinstance(parent, dict) else list(range(len(parent)))
        if not keys:
            break
        key = rng.choice(keys)
        child = parent[key]
        if not isinstance(child, (dict, list)) or not child or rng.random() < 0.25:
            break
        parent, key = child, None
    if key is not None:
        parent[key] = rng.choice([*WEIRD, [[0, 0, 0]], {"op": "null"}, [1.5, [2]]])


def mutate_object(rng: random.Random, obj: dict) -> dict:
    for _ in range(rng.choice([1, 1, 1, 2, 2, 3])):
        nodes = obj.get("nodes")
        if not isinstance(nodes, list):
            nodes = []
        roll = rng.random()
        if roll < 0.62 and nodes:
            _mutate_node(rng, nodes, rng.randrange(len(nodes)))
        elif roll < 0.74 and isinstance(obj.get("heads"), list):
            _mutate_entries(rng, obj["heads"], len(nodes))
        elif roll < 0.8:
            obj["arg_nodes"] = rng.choice([[], [0], [0, 1], [-1], [10**9], "0", None,
                                           list(range(len(nodes)))])
        elif roll < 0.85:
            obj["node_row_ptr"] = rng.choice([[], [0], [0, 5, 2], [-1], None, "x",
                                              list(range(len(nodes) + 1))])
        elif roll < 0.9 and isinstance(obj.get("attrs"), dict):
            obj["attrs"][rng.choice(["mxnet_version", "is_np_shape", "x"])] = rng.choice(
                [["int", 10901], ["int", 800], ["int", 1], ["int", -1], ["str", "a"],
                 ["int", 2**40], 10901, None])
        elif nodes:
            _nested(rng, obj)
    return obj


def mutate_text(rng: random.Random, text: str) -> bytes:
    raw = bytearray(text.encode("utf-8"))
    for _ in range(rng.choice([1, 1, 2, 4])):
        at = rng.randrange(len(raw) + 1)
        kind = rng.choice(["flip", "delete", "insert", "cut", "digit"])
        if kind == "flip" and at < len(raw):
            raw[at] ^= rng.randrange(1, 256)
        elif kind == "delete":
            del raw[at:at + rng.randrange(1, 8)]
        elif kind == "insert":
            raw[at:at] = rng.choice([b"[", b"]", b"{", b"}", b",", b'"', b"0", b"-1", b"9" * 30,
                                     b"\xff", b"\\u0000", b"null", b"[0, 5, 0]"])
        elif kind == "cut":
            del raw[at:]
        elif kind == "digit":
            digits = [i for i, b in enumerate(raw) if 48 <= b <= 57]
            if digits:
                raw[rng.choice(digits)] = rng.randrange(48, 58)
    return bytes(raw)


def make_input(rng: random.Random) -> tuple[bytes, dict[str, tuple[int, ...]]]:
    name, text, shapes = seeds()[rng.randrange(len(seeds()))]
    if rng.random() < 0.2:
        return mutate_text(rng, text), dict(shapes)
    obj = mutate_object(rng, json.loads(text))
    return json.dumps(obj).encode("utf-8"), dict(shapes)


# --- consumers -------------------------------------------------------------------------------

def _quietly(fn: Callable[[], Any]) -> Any:
    """Run one consumer; a GluonportError is an accepted refusal (returns None)."""
    try:
        return fn()
    except GluonportError:
        return None


def exercise(raw: bytes, shapes: dict[str, tuple[int, ...]], workdir: Path, deep: bool,
             stats: dict[str, int]) -> None:
    """Load ``raw`` and use the result; raises whatever non-gluonport error escapes."""
    try:
        s = sym.load_json(raw.decode("utf-8", "surrogatepass"))
    except GluonportError:
        stats["refused"] += 1
        return
    except UnicodeDecodeError:
        s = _quietly(lambda: _load_file(raw, workdir))
        if s is None:
            stats["refused"] += 1
            return
    stats["loaded"] += 1
    _quietly(s.list_outputs)
    _quietly(s.list_auxiliary_states)
    args = _quietly(s.list_arguments) or []
    _quietly(lambda: sym.load_json(s.tojson()).list_outputs())
    given = {k: v for k, v in shapes.items() if k in args}
    inferred = _quietly(lambda: s.infer_shape(**given))
    _quietly(lambda: s.infer_type(**{k: np.float32 for k in given}))
    if inferred is None or inferred[0] is None:
        return
    stats["inferred"] += 1
    arg_shapes, _, aux_shapes = inferred
    sizes = [int(np.prod(sh)) for sh in [*arg_shapes, *aux_shapes] if sh is not None]
    if None in arg_shapes or None in aux_shapes or sum(sizes) > MAX_RUN_ELEMENTS:
        return
    rng = np.random.default_rng(len(raw))
    arg_arrays = {n: rng.standard_normal(sh).astype("f4") for n, sh in zip(args, arg_shapes)}
    aux_names = _quietly(s.list_auxiliary_states) or []
    aux_arrays = {n: np.abs(rng.standard_normal(sh)).astype("f4")
                  for n, sh in zip(aux_names, aux_shapes)}
    if _quietly(lambda: s.bind(None, arg_arrays, aux_states=aux_arrays).forward()) is not None:
        stats["ran"] += 1
    if deep:
        _deep(s, given, arg_arrays, aux_arrays, workdir, stats)


def _load_file(raw: bytes, workdir: Path) -> Any:
    path = workdir / "fuzz-symbol.json"
    path.write_bytes(raw)
    return sym.load(str(path))


def _deep(s: Any, given: dict, arg_arrays: dict, aux_arrays: dict, workdir: Path,
          stats: dict[str, int]) -> None:
    """ONNX export and SymbolBlock.imports (slower: a sample of inputs)."""
    from gluonport.gluon import SymbolBlock
    from gluonport.onnx.export import export_symbol

    params = {**{k: v for k, v in arg_arrays.items() if k not in given}, **aux_arrays}
    names = list(given)
    if _quietly(lambda: export_symbol(s, params, [given[n] for n in names],
                                      [np.float32] * len(names))) is not None:
        stats["exported"] += 1
    path = workdir / "fuzz-symbol.json"
    if _quietly(lambda: s.save(str(path)) or True) is None:
        return
    for param_file in (None, workdir / "empty.params"):
        if param_file is not None and not param_file.exists():
            from gluonport.formats import params as P
            P.save(str(param_file), {})
        block = _quietly(lambda pf=param_file: SymbolBlock.imports(
            str(path), names or ["data"], str(pf) if pf else None, allow_missing=True))
        if block is not None:
            stats["imported"] += 1
            _quietly(lambda: _forward(block, given))  # noqa: B023


def _forward(block: Any, given: dict) -> Any:
    from gluonport import nd

    block.initialize()
    return block(*[nd.array(np.ones(sh, "f4")) for sh in given.values()])
