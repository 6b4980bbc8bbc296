"""Symbol JSON reader/writer against files written and re-saved by the real MXNet 1.9.1.

Goldens: tests/golden/formats/symbol/ (made by tests/golden/formats/gen_symbol_json.py). The
manifest holds, for each file, MXNet's view after ``mx.sym.load``: its argument and aux-state
lists and its re-saved text. All comparisons here are exact (text byte for byte, names, attrs).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from gluonport.errors import FormatError
from gluonport.formats import symbol_json as sj
from gluonport.formats.symbol_json import Graph, Node
from gluonport.formats.validate import schema_violations, validate_symbol_json

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "formats" / "symbol"
MANIFEST = json.loads((GOLDEN / "manifest.json").read_text(encoding="utf-8"))["files"]
MXNET_FILES = sorted(k for k, v in MANIFEST.items() if v["kind"] == "mxnet")
LEGACY_FILES = sorted(k for k, v in MANIFEST.items() if v["kind"] == "legacy")


def read(name: str) -> str:
    return (GOLDEN / name).read_text(encoding="utf-8")


# --- a tiny op table, standing in for the operator registry (tests only) ----------------------

def _no_bias(attrs: dict[str, str]) -> bool:
    return attrs.get("no_bias", "False") in ("True", "true", "1")


def input_names(op: str, attrs: dict[str, str]) -> list[str] | None:
    """MXNet's FListInputNames for the ops in the legacy goldens; None for any other op."""
    if op in ("FullyConnected", "Convolution"):
        return ["data", "weight"] + ([] if _no_bias(attrs) else ["bias"])
    table = {
        "BatchNorm": ["data", "gamma", "beta", "moving_mean", "moving_var"],
        "SoftmaxOutput": ["data", "label"],
        "Activation": ["data"],
        "Pooling": ["data"],
        "Flatten": ["data"],
        "argmax": ["data"],
        "argmin": ["data"],
        "LeakyReLU": ["data", "gamma"] if attrs.get("act_type") == "prelu" else ["data"],
    }
    return table.get(op)


def input_var_attrs(op: str, attrs: dict[str, str], n: int) -> list[dict[str, str]] | None:
    """MXNet's FSetInputVarAttrOnCompose (by input position) for the ops in the legacy goldens."""
    table = {"BatchNorm": {3: '["zero", {}]', 4: '["one", {}]'},
             "LeakyReLU": {1: '["Constant", {"value": 0.25}]'}}.get(op)
    return None if table is None else [
        {"__init__": table[i]} if i in table else {} for i in range(n)]


# what the Symbol layer passes the upgrader, from the operator registry
STAND_IN = {"input_names": input_names, "input_var_attrs": input_var_attrs}

AUX_INPUTS = {"BatchNorm": (3, 4)}  # FMutateInputs
ALIASES = {"_npx_fully_connected": "FullyConnected", "_npx_activation": "Activation"}


def num_outputs(op: str, attrs: dict[str, str]) -> int:
    """Output counts of MXNet 1.9.1's MKLDNN CPU build (the oracle's), for node_row_ptr."""
    if op in ("SliceChannel", "_foreach"):
        return int(attrs["num_outputs"])
    if op == "BatchNorm":
        return 3
    if op == "Pooling" and attrs.get("pool_type") == "max":
        return 2  # MKLDNN workspace output
    return 1


def arguments_and_aux(graph: Graph) -> tuple[list[str], list[str]]:
    """list_arguments / list_auxiliary_states: variables in nnvm DFS post-order from the heads."""
    seen: set[int] = set()
    order: list[int] = []
    aux: set[int] = set()

    def visit(nid: int) -> None:
        if nid in seen:
            return
        seen.add(nid)
        node = graph.nodes[nid]
        for k, (src, _, _) in enumerate(node.inputs):
            visit(src)
            if k in AUX_INPUTS.get(node.op, ()):
                aux.add(src)
        for dep in node.control_deps:
            visit(dep)
        order.append(nid)

    for head in graph.heads:
        visit(head[0])
    variables = [i for i in order if graph.nodes[i].is_variable]
    return ([graph.nodes[i].name for i in variables if i not in aux],
            [graph.nodes[i].name for i in variables if i in aux])


# --- files MXNet 1.9.1 saved ------------------------------------------------------------------

@pytest.mark.parametrize("name", MXNET_FILES)
def test_mxnet_file_round_trips_byte_for_byte(name):
    text = read(name)
    assert sj.dumps(sj.loads(text, path=name)) == text


@pytest.mark.parametrize("name", MXNET_FILES)
def test_mxnet_file_loads_like_mxnet(name):
    graph = sj.loads(read(name), path=name, **STAND_IN)
    view = MANIFEST[name]
    assert arguments_and_aux(graph) == (view["list_arguments"], view["list_auxiliary_states"])
    assert sj.loads(view["resaved"]) == graph  # MXNet's own re-save is the same graph
    assert graph.mxnet_version == 10901
    assert graph.is_np_shape == view["np_shape"]


@pytest.mark.parametrize("name", MXNET_FILES)
def test_node_row_ptr_helper_matches_mxnet(name):
    graph = sj.loads(read(name))
    assert sj.node_row_ptr(graph, num_outputs) == graph.node_row_ptr


@pytest.mark.parametrize("name", MXNET_FILES)
def test_plain_dict_form_is_the_parsed_file(name):
    text = read(name)
    graph = sj.loads(text)
    assert sj.to_dict(graph) == json.loads(text)
    assert sj.from_dict(json.loads(text)) == graph


def test_manifest_covers_every_golden_file():
    on_disk = {str(p.relative_to(GOLDEN)) for p in GOLDEN.rglob("*.json")} - {"manifest.json"}
    assert on_disk == set(MANIFEST)


# --- legacy files: our upgrade against MXNet's ---------------------------------------------

def _canonical(graph: Graph) -> Graph:
    """What MXNet changes on save beyond the upgrade: canonical op names, its own version."""
    for node in graph.nodes:
        node.op = ALIASES.get(node.op, node.op)
    graph.attrs["mxnet_version"] = ["int", 10901]
    return graph


@pytest.mark.parametrize("name", LEGACY_FILES)
def test_legacy_upgrade_equals_mxnet_upgrade(name):
    view = MANIFEST[name]
    ours = _canonical(sj.loads(read(name), path=name, **STAND_IN))
    theirs = sj.loads(view["resaved"], upgrade=False)
    assert [n.name for n in ours.nodes] == [n.name for n in theirs.nodes]
    assert ours.nodes == theirs.nodes
    assert ours.heads == theirs.heads
    assert ours.arg_nodes == theirs.arg_nodes
    assert arguments_and_aux(ours) == (view["list_arguments"], view["list_auxiliary_states"])


@pytest.mark.parametrize("name", LEGACY_FILES)
def test_legacy_resave_is_byte_identical_to_mxnet(name):
    ours = _canonical(sj.loads(read(name), path=name, **STAND_IN))
    # node_row_ptr is build-dependent and ignored on load; take MXNet's, check the rest.
    ours.node_row_ptr = sj.loads(MANIFEST[name]["resaved"]).node_row_ptr
    assert sj.dumps(ours) == MANIFEST[name]["resaved"]


@pytest.mark.parametrize("name, version", [
    ("legacy/save_000800.json", 800),
    ("legacy/handwritten_v0_8-symbol.json", 800),
    ("legacy/handwritten_v0_9_3-symbol.json", 903),
    ("legacy/test_mkldnn_model1-symbol.json", 10200),
    ("legacy/clojure_test-symbol.json", 10400),
    ("legacy/handwritten_v2_0-symbol.json", 20000),
])
def test_version_read_is_reported(name, version):
    graph = sj.loads(read(name), **STAND_IN)
    assert graph.mxnet_version == version
    expected = 20000 if version > 10901 else 10901
    assert graph.attrs["mxnet_version"] == ["int", expected]


def test_save_000800_facts_from_formats_md():
    graph = sj.loads(read("legacy/save_000800.json"), **STAND_IN)
    by_name = {n.name: n for n in graph.nodes}
    assert by_name["fc1_weight"].attrs["__lr_mult__"] == "1.2"  # moved from fc1.weight_lr_mult
    assert by_name["fc1_weight"].attrs["weight_lr_mult"] == "1.2"  # on a variable: kept
    assert by_name["batchnorm0_moving_mean"].attrs["__init__"] == '["zero", {}]'
    assert by_name["batchnorm0_moving_var"].attrs["fix_gamma"] == "True"  # copied from the op
    bn = by_name["batchnorm0"]
    assert [graph.nodes[i].name for i, _, _ in bn.inputs[3:]] == [
        "batchnorm0_moving_mean", "batchnorm0_moving_var"]
    assert [v for _, _, v in bn.inputs] == [0, 0, 0, 0, 0]  # MXNet adds them with version 0


def test_upgrade_false_keeps_the_file_content():
    graph = sj.loads(read("legacy/handwritten_v0_8-symbol.json"), upgrade=False)
    assert graph.attrs == {}
    assert graph.mxnet_version == 800
    conv = graph.nodes[3]
    assert conv.attrs["weight_lr_mult"] == "0.1" and conv.attrs["ctx_group"] == "dev1"
    assert conv.attrs["kernel"] == "(3, 3)"  # param merged
    assert conv.inputs == [(0, 0, 0), (1, 0, 0), (2, 0, 0)]  # 2-element entries -> version 0


def test_legacy_without_input_names_skips_only_the_steps_needing_them():
    graph = sj.loads(read("legacy/handwritten_v0_8-symbol.json"))
    names = [n.name for n in graph.nodes]
    assert "bn_moving_mean" not in names  # cannot add inputs without knowing them
    assert graph.nodes[0].attrs == {"__ctx_group__": "dev0"}  # FixParsing still ran
    assert graph.nodes[3].attrs["weight_lr_mult"] == "0.1"  # not moved: stays on the op
    assert "axis" not in graph.nodes[names.index("am")].attrs


# --- upgrader rules, one case each ---------------------------------------------------------

def _fc_graph(version: int | None, op_attrs: dict[str, str], var_attrs: dict[str, str]) -> str:
    nodes = [
        {"op": "null", "name": "data", "inputs": []},
        {"op": "null", "name": "fc_weight", "attrs": var_attrs, "inputs": []},
        {"op": "null", "name": "fc_bias", "inputs": []},
        {"op": "FullyConnected", "name": "fc", "attrs": {"num_hidden": "2", **op_attrs},
         "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]},
    ]
    obj = {"nodes": nodes, "arg_nodes": [0, 1, 2], "heads": [[3, 0, 0]]}
    if version is not None:
        obj["attrs"] = {"mxnet_version": ["int", version]}
    return json.dumps(obj)


FIX_PARSING_CASES = [
    # id, version, op attrs, weight var attrs, expected op attrs (less num_hidden), expected var
    ("hidden-on-var", 10800, {}, {"lr_mult": "2"}, {}, {"__lr_mult__": "2"}),
    ("arg-key-on-var-kept", 10800, {}, {"weight_lr_mult": "2"}, {}, {"weight_lr_mult": "2"}),
    ("arg-key-moves", 10800, {"weight_wd_mult": "0"}, {}, {}, {"__wd_mult__": "0"}),
    ("arg-key-overrides-var", 10800, {"weight_lr_mult": "3"}, {"lr_mult": "2"}, {},
     {"__lr_mult__": "3"}),
    ("unknown-arg-kept", 10800, {"gamma_lr_mult": "3"}, {}, {"gamma_lr_mult": "3"}, {}),
    ("prefix-longer-kept", 10800, {"lr_mult_x": "1"}, {}, {"lr_mult_x": "1"}, {}),
    ("one-char-prefix-kept", 10800, {"xlr_mult": "1"}, {}, {"xlr_mult": "1"}, {}),
    ("op-hidden", 10800, {"ctx_group": "g"}, {}, {"__ctx_group__": "g"}, {}),
    ("underscored-untouched", 10800, {"__mirror_stage__": "1"}, {},
     {"__mirror_stage__": "1"}, {}),
    ("bare-wins-over-underscored", 10800, {"lr_mult": "5", "__lr_mult__": "1"}, {},
     {"__lr_mult__": "5"}, {}),
    ("current-version-untouched", 10901, {"weight_lr_mult": "3"}, {"lr_mult": "2"},
     {"weight_lr_mult": "3"}, {"lr_mult": "2"}),
    ("newer-version-untouched", 20000, {}, {"lr_mult": "2"}, {}, {"lr_mult": "2"}),
]


@pytest.mark.parametrize("case", FIX_PARSING_CASES, ids=[c[0] for c in FIX_PARSING_CASES])
def test_fix_parsing(case):
    _, version, op_attrs, var_attrs, want_op, want_var = case
    graph = sj.loads(_fc_graph(version, op_attrs, var_attrs), **STAND_IN)
    assert {k: v for k, v in graph.nodes[3].attrs.items() if k != "num_hidden"} == want_op
    assert graph.nodes[1].attrs == want_var


def _bn_text(version: int, n_inputs: int, extra: dict | None = None) -> str:
    names = ["data", "bn_gamma", "bn_beta", "bn_moving_mean", "bn_moving_var"][:n_inputs]
    nodes = [{"op": "null", "name": n, "inputs": []} for n in names]
    nodes.append({"op": "BatchNorm", "name": "bn", "attrs": {"eps": "0.001", **(extra or {})},
                  "inputs": [[i, 0, 0] for i in range(n_inputs)]})
    nodes.append({"op": "argmax", "name": "am", "attrs": {"axis": "-1"},
                  "inputs": [[len(nodes) - 1, 0, 0]]})
    return json.dumps({"nodes": nodes, "arg_nodes": list(range(n_inputs)),
                       "heads": [[len(nodes) - 1, 0, 0]],
                       "attrs": {"mxnet_version": ["int", version]}})


@pytest.mark.parametrize("version, init_added, axis_dropped", [
    (800, True, True), (899, True, True), (903, True, True), (904, False, True),
    (905, False, False), (10901, False, False),
])
def test_upgrader_version_thresholds(version, init_added, axis_dropped):
    graph = sj.loads(_bn_text(version, 5), **STAND_IN)
    assert ("__init__" in graph.nodes[3].attrs) == init_added
    assert ("axis" not in graph.nodes[-1].attrs) == axis_dropped


def test_missing_aux_inputs_added_before_their_op_and_references_shift():
    graph = sj.loads(_bn_text(800, 3, {"moving_mean_lr_mult": "7"}), **STAND_IN)
    assert [n.name for n in graph.nodes] == [
        "data", "bn_gamma", "bn_beta", "bn_moving_mean", "bn_moving_var", "bn", "am"]
    assert graph.nodes[5].inputs == [(0, 0, 0), (1, 0, 0), (2, 0, 0), (3, 0, 0), (4, 0, 0)]
    assert graph.nodes[6].inputs == [(5, 0, 0)]
    assert graph.heads == [(6, 0, 0)]
    assert graph.arg_nodes == [0, 1, 2, 3, 4]
    # the key naming a then-missing input stays on the op and so is copied to the new vars
    assert graph.nodes[5].attrs["moving_mean_lr_mult"] == "7"
    assert graph.nodes[3].attrs == {"eps": "0.001", "moving_mean_lr_mult": "7",
                                    "__init__": '["zero", {}]'}


def test_version_0_9_files_do_not_get_missing_inputs():
    graph = sj.loads(_bn_text(900, 3), **STAND_IN)
    assert len(graph.nodes) == 5


# --- writer layout -------------------------------------------------------------------------

def _one_var(name: str, attrs: dict[str, str] | None = None, **graph_kw) -> Graph:
    return Graph(nodes=[Node("null", name, attrs or {})], heads=[(0, 0, 0)], **graph_kw)


@pytest.mark.parametrize("value, written", [
    ('a"b', '"a\\"b"'), ("a\\b", '"a\\\\b"'), ("a\nb", '"a\\nb"'), ("a\rb", '"a\\rb"'),
    ("a\tb", '"a\\tb"'), ("a\x01b\x7f", '"a\x01b\x7f"'), ("a/b", '"a/b"'),
    ("caf\u00e9 \U0001f600", '"caf\u00e9 \U0001f600"'),
])
def test_string_escaping_is_dmlcs(value, written):
    text = sj.dumps(_one_var(value))
    assert f'"name": {written}, ' in text
    assert sj.loads(text).nodes[0].name == value


def test_attr_keys_raw_like_dmlc_but_escaped_when_raw_would_break_json():
    text = sj.dumps(_one_var("x", {"k\tt": "1", 'k"q': "2"}))
    assert '"k\tt": "1"' in text  # raw, as MXNet writes (it reads raw tabs back)
    assert '"k\\"q": "2"' in text  # MXNet writes this raw and cannot read it back
    assert sj.loads(text).nodes[0].attrs == {"k\tt": "1", 'k"q': "2"}


def test_layout_rules():
    graph = _one_var("x", {"b": "2", "a": "1"})
    graph.nodes.append(Node("relu", "r", {"z": "1"}, [(0, 0, 0)]))
    graph.heads = [(1, 0, 0)]
    text = sj.dumps(graph)
    assert text.startswith('{\n  "nodes": [\n    {\n      "op": "null", \n')
    assert '"attrs": {\n        "a": "1", \n        "b": "2"\n      }, ' in text  # sorted
    assert '"attrs": {"z": "1"}, ' in text  # one key: inline
    assert '"arg_nodes": [0], ' in text  # computed: arg_nodes is None
    assert '"node_row_ptr"' not in text  # not carried
    assert text.endswith('"attrs": {"mxnet_version": ["int", 10901]}\n}')  # no newline
    assert ",\n" not in text and text.count(", \n") == 11  # trailing space after each comma


def test_graph_attrs_order_and_types():
    attrs = {"zz": ["list_str", ["a"]], "mxnet_version": ["int", 10901],
             "is_np_shape": ["int", 1], "aa": ["list_int", list(range(11))]}
    graph = _one_var("x")
    graph.attrs = attrs
    text = sj.dumps(graph)
    positions = [text.index(f'"{k}"') for k in ("is_np_shape", "mxnet_version", "aa", "zz")]
    assert positions == sorted(positions)
    # vector<string> is multi-line; dmlc ends a scope on a new line only inside a multi-line parent
    assert '"zz": ["list_str", [\n        "a"]]' in text
    assert '"aa": ["list_int", [\n        0, \n        1, ' in text
    assert sj.loads(text).attrs == attrs


def test_subgraph_attrs_and_versions():
    graph = sj.loads(read("foreach-symbol.json"))
    sub = graph.nodes[2].subgraphs[0]
    assert sub.attrs == {} and sub.mxnet_version == 10901
    assert sub.node_row_ptr == [0, 1, 2, 3, 4]


def test_node_row_ptr_helper_counts_variables_as_one():
    graph = sj.loads(read("multi_output-symbol.json"))
    assert sj.node_row_ptr(graph, lambda op, attrs: 5) == [0, 1, 6, 11]


# --- save ------------------------------------------------------------------------------------

def test_save_writes_dumps_atomically(tmp_path):
    graph = sj.loads(read("conv_bn-symbol.json"))
    target = tmp_path / "net-symbol.json"
    target.write_text("old")
    sj.save(target, graph)
    assert target.read_text(encoding="utf-8") == read("conv_bn-symbol.json")
    assert os.listdir(tmp_path) == ["net-symbol.json"]
    assert sj.load(target) == graph


def test_save_failure_leaves_old_file(tmp_path):
    target = tmp_path / "net-symbol.json"
    target.write_text("old")
    with pytest.raises(FormatError, match="lone surrogate"):
        sj.save(target, _one_var("bad\ud800"))
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["net-symbol.json"]


def test_load_reads_bytes_and_names_the_file(tmp_path):
    path = tmp_path / "bad-symbol.json"
    path.write_bytes(b'{"nodes": \xff}')
    with pytest.raises(FormatError, match="bad-symbol.json: not UTF-8"):
        sj.load(path)


# --- errors: each names the file, the node and what to do -------------------------------------

def _base() -> dict:
    """A valid 1.x graph: data -> fc1 (FullyConnected) -> relu1."""
    return json.loads(read("legacy/handwritten_v1_no_row_ptr-symbol.json"))


def _set(path: list, value):
    def mutate(obj):
        target = obj
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        return obj
    return mutate


def _delete(path: list):
    def mutate(obj):
        target = obj
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
        return obj
    return mutate


FC = "node 3 'fc1' (FullyConnected)"
ERROR_CASES = [
    # id, text or mutation of _base(), substrings the message must hold
    ("truncated", '{"nodes": [', ["malformed JSON at line 1 column 12"]),
    ("bad-line", '{\n  "nodes": [,]\n}', ["malformed JSON at line 2 column 13"]),
    ("nan", '{"nodes": [], "arg_nodes": [], "heads": [[NaN, 0, 0]]}', ["malformed JSON"]),
    ("not-object", "[1, 2]", ["top level is an array, expected a JSON object"]),
    ("unknown-top-key", _set(["foo"], 1),
     ['unknown key "foo" in the top level', "allowed keys: nodes, arg_nodes, node_row_ptr"]),
    ("unknown-node-key", _set(["nodes", 3, "weight"], 1),
     [FC, 'unknown key "weight"', "allowed keys: op, name, attrs, inputs"]),
    ("attr-not-string", _set(["nodes", 3, "attrs", "num_hidden"], 8),
     [FC, 'attrs["num_hidden"] is 8', "must be a string", 'write "num_hidden": "8"']),
    ("legacy-attr-not-string", _set(["nodes", 3, "attr"], {"eps": 1e-5}),
     [FC, "attr[\"eps\"] is 1e-05"]),
    ("attrs-not-object", _set(["nodes", 3, "attrs"], ["a"]), [FC, "'attrs' is an array"]),
    ("no-nodes", _delete(["nodes"]), ["top level has no 'nodes'", "nodes, arg_nodes, heads"]),
    ("no-arg-nodes", _delete(["arg_nodes"]), ["has no 'arg_nodes'"]),
    ("no-heads", _delete(["heads"]), ["has no 'heads'"]),
    ("nodes-not-array", _set(["nodes"], {}), ["'nodes' is an object, expected an array"]),
    ("node-not-object", _set(["nodes", 2], "fc1_bias"), ["node 2: the node is a string"]),
    ("node-no-op", _delete(["nodes", 3, "op"]), ["node 3 'fc1'", "has no 'op'"]),
    ("node-no-inputs", _delete(["nodes", 0, "inputs"]), ["node 0 'data' (null)", "'inputs'"]),
    ("name-not-string", _set(["nodes", 1, "name"], 5), ["node 1", "'name' is an integer"]),
    ("empty-op", _set(["nodes", 1, "op"], ""), ["node 1 'fc1_weight': 'op' is \"\""]),
    ("forward-input", _set(["nodes", 3, "inputs", 0], [4, 0, 0]),
     [FC, "input 0 [4, 0, 0] refers to node 4", "not before node 3", "topological order"]),
    ("self-input", _set(["nodes", 3, "inputs", 1], [3, 0, 0]), [FC, "refers to node 3"]),
    ("input-out-of-range", _set(["nodes", 4, "inputs", 0], [99, 0, 0]),
     ["node 4 'relu1' (Activation)", "refers to node 99, but the graph has 5 nodes"]),
    ("entry-4-ints", _set(["nodes", 3, "inputs", 2], [2, 0, 0, 0]),
     [FC, "input 2 is [2, 0, 0, 0], expected [node_id, output_index, version]"]),
    ("entry-1-int", _set(["nodes", 3, "inputs", 2], [2]), [FC, "input 2 is [2]"]),
    ("entry-not-array", _set(["nodes", 3, "inputs", 2], 2), [FC, "input 2 is 2"]),
    ("entry-float", _set(["nodes", 3, "inputs", 2], [2, 0.0, 0]),
     [FC, "input 2 part 1 is 0.0, expected a non-negative integer"]),
    ("entry-negative", _set(["nodes", 3, "inputs", 2], [2, 0, -1]), [FC, "part 2 is -1"]),
    ("entry-bool", _set(["nodes", 3, "inputs", 2], [True, 0, 0]), [FC, "part 0 is true"]),
    ("inputs-not-array", _set(["nodes", 3, "inputs"], {}), [FC, "'inputs' is an object"]),
    ("variable-with-inputs", _set(["nodes", 1, "inputs"], [[0, 0, 0]]),
     ["node 1 'fc1_weight' (null)", "variable (op 'null') has inputs"]),
    ("control-dep-forward", _set(["nodes", 3, "control_deps"], [4]),
     [FC, "control dependency 4 is not before node 3"]),
    ("control-dep-negative", _set(["nodes", 3, "control_deps"], [-1]), [FC, "control_deps[0]"]),
    ("backward-source-id", _set(["nodes", 3, "backward_source_id"], "x"),
     [FC, "'backward_source_id' must be an integer"]),
    ("head-out-of-range", _set(["heads"], [[5, 0, 0]]),
     ["head 0 [5, 0, 0] refers to node 5, but the graph has 5 nodes"]),
    ("head-bad-entry", _set(["heads"], [[4, 0, "0"]]), ["head 0 part 2 is \"0\""]),
    ("arg-node-not-variable", _set(["arg_nodes"], [0, 3]),
     ["arg_nodes lists 3: node 3 'fc1' is a FullyConnected, not a variable"]),
    ("arg-node-out-of-range", _set(["arg_nodes"], [7]), ["arg_nodes lists 7: out of range"]),
    ("row-ptr-not-ints", _set(["node_row_ptr"], [0, "1"]), ["node_row_ptr[1] is \"1\""]),
    ("bare-int-version", _set(["attrs", "mxnet_version"], 10901),
     ["'mxnet_version' is the bare integer 10901", '["int", 10901]']),
    ("str-version", _set(["attrs", "mxnet_version"], ["str", "10901"]),
     ['"mxnet_version" must be ["int", N]']),
    ("float-version", _set(["attrs", "mxnet_version"], ["int", 10901.5]),
     ['"mxnet_version": 10901.5 is not a valid "int" value']),
    ("version-out-of-int32", _set(["attrs", "mxnet_version"], ["int", 2**31]),
     ["is not a valid \"int\" value"]),
    ("graph-attr-not-pair", _set(["attrs", "foo"], 3),
     ['graph attribute "foo" is 3, expected a pair']),
    ("graph-attr-unknown-type", _set(["attrs", "foo"], ["bool", True]),
     ['has type "bool", which MXNet does not know', "int, size_t, str, list_int"]),
    ("graph-attrs-not-object", _set(["attrs"], []), ["graph 'attrs' is an array"]),
    ("subgraph-error", _set(["nodes", 4, "subgraphs"], [{"nodes": [
        {"op": "null", "name": "s", "inputs": [[0, 0, 0]]}], "arg_nodes": [], "heads": []}]),
     ["node 4 'relu1' (Activation) subgraph 0: node 0 's' (null)", "not before node 0"]),
    ("subgraph-not-graph", _set(["nodes", 4, "subgraphs"], [[]]),
     ["node 4 'relu1' (Activation) subgraph 0: the graph is an array"]),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_bad_file_raises_format_error_naming_file_and_node(case):
    _, source, expected = case
    text = source if isinstance(source, str) else json.dumps(source(_base()))
    with pytest.raises(FormatError) as info:
        sj.loads(text, path="bad-symbol.json", **STAND_IN)
    message = str(info.value)
    assert message.startswith("bad-symbol.json: ")
    assert info.value.path == "bad-symbol.json"
    for part in expected:
        assert part in message


def test_error_cases_are_otherwise_valid():
    # The mutations above break exactly one thing: the base file itself loads.
    graph = sj.loads(json.dumps(_base()), **STAND_IN)
    assert [n.name for n in graph.nodes] == ["data", "fc1_weight", "fc1_bias", "fc1", "relu1"]


def test_deep_nesting_is_a_format_error():
    with pytest.raises(FormatError, match="malformed JSON"):
        sj.loads("[" * 100_000 + "]" * 100_000)


def test_legacy_keys_fold_like_mxnet():
    node = {"op": "Activation", "name": "a", "inputs": [[0, 0]], "param": {"act_type": "relu",
            "x": "p"}, "attr": {"act_type": "tanh"}, "backward_source_id": -1}
    obj = {"nodes": [{"op": "null", "name": "d", "inputs": []}, node], "arg_nodes": [0],
           "heads": [[1, 0]]}
    assert sj.loads(json.dumps(obj)).nodes[1].attrs == {"act_type": "tanh", "x": "p"}
    # "attrs" and "attr" fill one map, the later in the file replacing the earlier (dmlc).
    text = json.dumps(obj).replace('"attr": {"act_type": "tanh"}',
                                   '"attr": {"act_type": "tanh", "y": "1"}, '
                                   '"attrs": {"act_type": "sigmoid"}')
    assert sj.loads(text).nodes[1].attrs == {"act_type": "sigmoid", "x": "p"}


# --- JSON Schema --------------------------------------------------------------------------------

ALL_FILES = MXNET_FILES + LEGACY_FILES


def test_schema_is_a_valid_draft_2020_12_schema():
    jsonschema = pytest.importorskip("jsonschema")
    from gluonport.schemas import load_schema

    schema = load_schema("symbol.schema.json")
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("name", ALL_FILES)
def test_every_golden_and_our_output_validate(name):
    pytest.importorskip("jsonschema")
    text = read(name)
    validate_symbol_json(text, name)
    written = sj.dumps(sj.loads(text, **STAND_IN))
    assert schema_violations(json.loads(written)) == []
    validate_symbol_json(written, name)


SCHEMA_CASES = [
    ("attr-number", _set(["nodes", 3, "attrs", "num_hidden"], 8),
     ["$.nodes[3].attrs.num_hidden: 8 is not of type 'string'"]),
    ("unknown-key", _set(["nodes", 0, "shape"], "x"),
     ["$.nodes[0]: Additional properties are not allowed ('shape' was unexpected)"]),
    ("bare-version", _set(["attrs", "mxnet_version"], 10901),
     ["$.attrs.mxnet_version: 10901 is not of type 'array'"]),
    ("long-entry", _set(["heads", 0], [4, 0, 0, 1]), ["$.heads[0]: [4, 0, 0, 1] is too long"]),
    ("negative-id", _set(["arg_nodes", 0], -1), ["$.arg_nodes[0]: -1 is less than the minimum"]),
    ("no-heads", _delete(["heads"]), ["$: 'heads' is a required property"]),
]


@pytest.mark.parametrize("case", SCHEMA_CASES, ids=[c[0] for c in SCHEMA_CASES])
def test_schema_violations_are_listed_with_json_paths(case):
    pytest.importorskip("jsonschema")
    _, mutate, expected = case
    obj = mutate(_base())
    with pytest.raises(FormatError) as info:
        validate_symbol_json(obj, "bad-symbol.json")
    message = str(info.value)
    assert message.startswith("bad-symbol.json: not a valid MXNet symbol JSON: ")
    for part in expected:
        assert part in message


def test_schema_violations_are_capped():
    pytest.importorskip("jsonschema")
    obj = _base()
    for node in obj["nodes"]:
        node["extra"] = 1
    obj["more"] = 2
    with pytest.raises(FormatError, match=r"6 schema violation\(s\).*\(and 1 more\)"):
        validate_symbol_json(obj)


def test_cross_references_are_checked_after_the_schema():
    obj = _set(["heads"], [[9, 0, 0]])(_base())
    with pytest.raises(FormatError, match="head 0 .* refers to node 9"):
        validate_symbol_json(obj, "bad-symbol.json")


def test_without_jsonschema_the_reader_checks_stand_in(monkeypatch):
    monkeypatch.setitem(sys.modules, "jsonschema", None)  # import jsonschema -> ImportError
    assert schema_violations(_base()) is None
    validate_symbol_json(json.dumps(_base()))
    with pytest.raises(FormatError, match="bad-symbol.json: node 3 'fc1'.* must be a string"):
        validate_symbol_json(_set(["nodes", 3, "attrs", "num_hidden"], 8)(_base()),
                             "bad-symbol.json")
