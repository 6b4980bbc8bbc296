"""Export provenance and the importer's restoring of MXNet ops (gluonport/onnx/_import_provenance).

gluonport's ONNX lowerings of box_nms, ROIAlign, Proposal and MultiBoxDetection use ONNX ops
MXNet 1.x has no equivalent for (Unique, ScatterND, RoiAlign, NonMaxSuppression...). A model
gluonport exported records, per MXNet node, its op, attribute strings and tensor names; the
importer puts the original op back where the ONNX nodes cannot be imported. Checked here:

* round trips of detection graphs (export -> import_model -> numpy executor) equal the
  executor's outputs of the original graph (single restored op: bit-exact; graphs whose other
  ops went through the ONNX importers: rtol 1e-5, atol 1e-6), with the original op and node
  name in the imported symbol and every other op imported through its ONNX handler;
* the exported provenance (doc_string tags, the record, determinism, onnx.checker full_check,
  onnxruntime still equal to the executor);
* models whose provenance does not explain a group (edited by hand), with no or malformed
  provenance, or from another producer import as before: the normal UnsupportedOpError;
* ``restore_mxnet_ops='always'`` / ``'never'``; the export_mxnet checkpoint of a restored graph
  (MXNet 1.9.1 loads it: tests/golden/mxnet_check/check_in_mxnet.py).
"""

from __future__ import annotations

import json

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper

import gluonport as mx
from gluonport.errors import GluonportError, OpAttributeError, UnsupportedOpError
from gluonport.onnx import export_mxnet, export_symbol, import_model
from gluonport.onnx.export import PROVENANCE_KEY
from tests.ops import cases_roi
from tests.ops._check import forward

EXACT = (0.0, 0.0)
CLOSE = (1e-5, 1e-6)  # ops imported through ONNX handlers: float summation order may differ


def _conv(x, name: str, filters: int, channels: int, rng, params: dict):
    params[f"{name}_weight"] = rng.normal(0, 0.3, (filters, channels, 3, 3)).astype(np.float32)
    params[f"{name}_bias"] = rng.normal(0, 0.1, filters).astype(np.float32)
    return mx.sym.Convolution(x, mx.sym.var(f"{name}_weight"), mx.sym.var(f"{name}_bias"),
                              kernel=(3, 3), pad=(1, 1), num_filter=filters, name=name)


def _rows(batch: int, n: int, seed: int, classes: int = 3) -> np.ndarray:
    """``[id, score, x1, y1, x2, y2]`` rows: clustered boxes (suppression happens), distinct
    scores, some ids -1 (invalid)."""
    rng = np.random.RandomState(seed)
    centre = rng.uniform(0.3, 0.7, (batch, n, 2))
    half = rng.uniform(0.1, 0.2, (batch, n, 2))
    ids = rng.randint(-1, classes, (batch, n, 1))
    score = np.stack([rng.permutation(n) for _ in range(batch)])[..., None] / n + 0.5 / n
    return np.concatenate([ids, score, centre - half, centre + half], -1).astype(np.float32)


def box_nms_case(rng):
    """Class-aware NMS (id_index: its lowering uses Unique), then an op the ONNX importer
    handles."""
    nms = mx.sym.contrib.box_nms(mx.sym.var("rows"), overlap_thresh=0.45, valid_thresh=0.1,
                                 topk=12, id_index=0, score_index=1, coord_start=2, name="nms")
    return mx.sym.relu(nms, name="act"), {}, {"rows": _rows(2, 30, 0)}, EXACT


def box_nms_hidden_case(rng):
    """Both outputs of box_nms, the hidden record output too (a multi-output restore)."""
    nms = mx.sym.contrib.box_nms(mx.sym.var("rows"), overlap_thresh=0.3, id_index=0, topk=8,
                                 force_suppress=False, name="nms")
    graph = json.loads(nms.tojson())
    graph["heads"] = [[1, 0, 0], [1, 1, 0]]
    return mx.sym.load_json(json.dumps(graph)), {}, {"rows": _rows(3, 20, 1)}, EXACT


def roialign_case(rng):
    params: dict = {}
    feat = mx.sym.relu(_conv(mx.sym.var("data"), "body", 8, 3, rng, params), name="act")
    out = mx.sym.contrib.ROIAlign(feat, mx.sym.var("rois"), pooled_size=(3, 3),
                                  spatial_scale=0.5, sample_ratio=2, name="roialign")
    rois = np.asarray(cases_roi._random_rois(10, 2, 16, 16, 5), np.float32)
    feed = {"data": rng.uniform(0, 1, (2, 3, 8, 8)).astype(np.float32), "rois": rois}
    return out, params, feed, CLOSE


def _rpn_feed(batch: int, rng) -> dict:
    return {"cls": rng.uniform(0, 1, (batch, 12, 5, 6)).astype(np.float32),
            "bbox": rng.uniform(-0.4, 0.4, (batch, 24, 5, 6)).astype(np.float32),
            "info": np.array([[40, 48, 1.0], [36, 44, 0.8]][:batch], np.float32)}


def _proposal(op, rng, batch: int, name: str):
    out = op(mx.sym.var("cls"), mx.sym.var("bbox"), mx.sym.var("info"), scales=(2, 4),
             ratios=(0.5, 1, 2), feature_stride=8, rpn_pre_nms_top_n=60,
             rpn_post_nms_top_n=20, rpn_min_size=6, threshold=0.6, output_score=True,
             name=name)
    return out, {}, _rpn_feed(batch, rng), EXACT


def proposal_case(rng):
    return _proposal(mx.sym.contrib.Proposal, rng, 1, "proposal")


def multiproposal_case(rng):
    return _proposal(mx.sym.contrib.MultiProposal, rng, 2, "proposal")


def ssd_case(rng):
    """conv -> class / box heads; MultiBoxPrior of the feature map; MultiBoxDetection (a
    miniature GluonCV SSD export)."""
    params: dict = {}
    feat = mx.sym.relu(_conv(mx.sym.var("data"), "body", 8, 3, rng, params), name="act")
    cls = _conv(feat, "cls", 3 * 4, 8, rng, params)
    cls = mx.sym.reshape(mx.sym.transpose(cls, axes=(0, 2, 3, 1)), shape=(0, -1, 4))
    cls = mx.sym.transpose(mx.sym.softmax(cls, axis=-1), axes=(0, 2, 1))
    loc = mx.sym.flatten(mx.sym.transpose(_conv(feat, "loc", 3 * 4, 8, rng, params),
                                          axes=(0, 2, 3, 1)))
    prior = mx.sym.contrib.MultiBoxPrior(feat, sizes=(0.3, 0.15), ratios=(1, 2), name="prior")
    det = mx.sym.contrib.MultiBoxDetection(cls, loc, prior, nms_threshold=0.45, nms_topk=40,
                                           threshold=0.05, name="detection")
    return det, params, {"data": rng.uniform(0, 1, (2, 3, 8, 8)).astype(np.float32)}, CLOSE


# name: (builder, MXNet node -> op restored in 'auto' mode, an ONNX op MXNet lacks)
CASES = {
    "box_nms": (box_nms_case, {"nms": "_contrib_box_nms"}, "Unique"),
    "box_nms_hidden_output": (box_nms_hidden_case, {"nms": "_contrib_box_nms"}, "ScatterND"),
    # ONNX RoiAlign imports onto _contrib_ROIAlign itself: nothing to restore, same numbers
    "roialign": (roialign_case, {}, "RoiAlign"),
    "proposal": (proposal_case, {"proposal": "_contrib_Proposal"}, "NonMaxSuppression"),
    "multiproposal": (multiproposal_case, {"proposal": "_contrib_MultiProposal"},
                      "NonMaxSuppression"),
    "ssd_mini": (ssd_case, {"detection": "_contrib_MultiBoxDetection"}, "NonMaxSuppression"),
}


def _build(name: str, opset: int | None = None):
    sym, params, feed, tol = CASES[name][0](np.random.RandomState(0))
    model = export_symbol(sym, params, in_shapes={k: v.shape for k, v in feed.items()},
                          opset_version=opset)
    return sym, params, feed, tol, model


def _ops(sym) -> dict[str, str]:
    """MXNet node name -> op name, for the op nodes of ``sym``."""
    return {n["name"]: n["op"] for n in json.loads(sym.tojson())["nodes"] if n["op"] != "null"}


def _run(sym, arg: dict, aux: dict, feed: dict) -> list[np.ndarray]:
    values = {**{k: v.asnumpy() for k, v in {**arg, **aux}.items()}, **feed}
    return forward(sym, values)


def _assert_same(got: list, want: list, tol: tuple[float, float]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        if tol == EXACT:
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=tol[0], atol=tol[1])


@pytest.mark.parametrize("opset", [13, None], ids=["opset13", "default"])
@pytest.mark.parametrize("name", list(CASES))
def test_round_trip_restores_the_mxnet_op(name, opset):
    sym, params, feed, tol, model = _build(name, opset)
    assert CASES[name][2] in {n.op_type for n in model.graph.node}
    back, arg, aux = import_model(model)
    ops = _ops(back)
    original = _ops(sym)
    # the restored ops keep their MXNet names; every other op went through an ONNX handler
    # (named '<MXNet node>__<ONNX op>')
    assert {k: v for k, v in ops.items() if k in original} == CASES[name][1]
    assert all("__" in k for k in ops if k not in original)
    _assert_same(_run(back, arg, aux, feed), forward(sym, {**feed, **params}), tol)


@pytest.mark.parametrize("name", ["box_nms", "ssd_mini"])
def test_never_keeps_the_normal_error(name):
    model = _build(name)[-1]
    with pytest.raises(UnsupportedOpError, match="cannot be imported into MXNet") as info:
        import_model(model, restore_mxnet_ops="never")
    assert "restoring" not in str(info.value)


def test_exported_provenance_record_and_tags():
    sym, params, feed, _, model = _build("box_nms")
    meta = {p.key: p.value for p in model.metadata_props}
    records = json.loads(meta[PROVENANCE_KEY])
    assert records == {
        "nms": {"op": "_contrib_box_nms",
                "attrs": {"overlap_thresh": "0.45", "valid_thresh": "0.1", "topk": "12",
                          "id_index": "0", "score_index": "1", "coord_start": "2"},
                "inputs": ["rows"], "outputs": ["nms_output0", "nms_output1"]},
        "act": {"op": "relu", "attrs": {}, "inputs": ["nms_output0"], "outputs": ["act"]}}
    tags = [n.doc_string for n in model.graph.node]
    assert set(tags) == {"nms", "act"} and tags[-1] == "act"
    assert ":" not in meta[PROVENANCE_KEY].replace('":', "")  # compact: no ': ' separators
    again = _build("box_nms")[-1]
    assert again.SerializeToString() == model.SerializeToString()  # deterministic
    onnx.checker.check_model(model, full_check=True)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    got = sess.run(None, feed)
    _assert_same(got, forward(sym, feed), EXACT)


def test_repeated_node_names_get_distinct_keys():
    """MXNet graphs may repeat a node name: keys 'a', 'a#1'; 'always' restores both."""
    x = mx.sym.var("x")
    sym = mx.sym.relu(mx.sym.sqrt(mx.sym.abs(x, name="a"), name="a"), name="b")
    feed = {"x": np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)}
    model = export_symbol(sym, {}, in_shapes=[(3, 4)])
    records = json.loads({p.key: p.value for p in model.metadata_props}[PROVENANCE_KEY])
    assert [(k, r["op"]) for k, r in records.items()] == [("a", "abs"), ("a#1", "sqrt"),
                                                          ("b", "relu")]
    back, arg, aux = import_model(model, restore_mxnet_ops="always")
    assert sorted(_ops(back).values()) == ["abs", "relu", "sqrt"]
    _assert_same(_run(back, arg, aux, feed), forward(sym, feed), EXACT)


def _mlp():
    rng = np.random.RandomState(1)
    params = {"fc_weight": rng.normal(0, 0.5, (5, 6)).astype(np.float32),
              "fc_bias": rng.normal(0, 0.5, 5).astype(np.float32),
              "bn_gamma": rng.uniform(0.5, 1.5, 5).astype(np.float32),
              "bn_beta": rng.normal(0, 0.5, 5).astype(np.float32),
              "bn_moving_mean": rng.normal(0, 0.5, 5).astype(np.float32),
              "bn_moving_var": rng.uniform(0.5, 1.5, 5).astype(np.float32)}
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=5, name="fc")
    bn = mx.sym.BatchNorm(fc, fix_gamma=False, name="bn")
    out = mx.sym.softmax(mx.sym.Activation(bn, act_type="tanh", name="act"), name="prob")
    feed = {"data": rng.normal(0, 1, (4, 6)).astype(np.float32)}
    return out, params, feed


def test_always_restores_every_op_auto_none():
    sym, params, feed = _mlp()
    model = export_symbol(sym, params, in_shapes=[(4, 6)])
    want = forward(sym, {**feed, **params})
    back, arg, aux = import_model(model, restore_mxnet_ops="always")
    assert _ops(back) == {"fc": "FullyConnected", "bn": "BatchNorm", "act": "Activation",
                          "prob": "softmax"}
    _assert_same(_run(back, arg, aux, feed), want, EXACT)
    back, arg, aux = import_model(model)  # auto: everything imports through ONNX handlers
    assert all("__" in k for k in _ops(back))
    _assert_same(_run(back, arg, aux, feed), want, CLOSE)


# --- models whose provenance cannot be trusted ---------------------------------------------
def _inner(model, key: str, op_type: str) -> str:
    """An output of the first ``op_type`` node tagged ``key`` (a tensor inside the group)."""
    return next(n.output[0] for n in model.graph.node
                if n.doc_string == key and n.op_type == op_type)


def _typed(model, tensor: str, name: str) -> onnx.ValueInfoProto:
    """``tensor``'s inferred type, as a value info called ``name``."""
    infos = onnx.shape_inference.infer_shapes(model).graph.value_info
    tt = next(v for v in infos if v.name == tensor).type.tensor_type
    dims = [d.dim_value or d.dim_param or None for d in tt.shape.dim]
    return helper.make_tensor_value_info(name, tt.elem_type, dims)


def _read_outside(model) -> None:
    t = _inner(model, "nms", "Where")
    model.graph.output.append(_typed(model, t, "spy"))
    model.graph.node.append(helper.make_node("Identity", [t], ["spy"], name="spy"))


def _graph_output(model) -> None:
    t = _inner(model, "nms", "Where")
    model.graph.output.append(_typed(model, t, t))


def _edit_record(**changes):
    def edit(model) -> None:
        prop = next(p for p in model.metadata_props if p.key == PROVENANCE_KEY)
        records = json.loads(prop.value)
        records["nms"].update(changes)
        prop.value = json.dumps(records)
    return edit


def _set_meta(value: str):
    def edit(model) -> None:
        next(p for p in model.metadata_props if p.key == PROVENANCE_KEY).value = value
    return edit


def _foreign(model) -> None:
    model.producer_name = "pytorch"


def _untag(model) -> None:
    for n in model.graph.node:
        n.doc_string = ""


# name: (edit, text the error must contain: why the restore was refused, or None: no note)
TAMPERED = {
    "group_tensor_read_outside": (_read_outside, "read outside it, by node 'spy'"),
    "group_tensor_is_graph_output": (_graph_output, "is a graph output"),
    "input_not_in_graph": (_edit_record(inputs=["ghost"]), "'ghost' is not a tensor"),
    "input_made_inside": (_edit_record(inputs=["nms__reshape"]), "made inside the group"),
    "output_renamed": (_edit_record(outputs=["renamed", "x"]), "by node 'act__Relu'"),
    "unknown_op": (_edit_record(op="_contrib_no_such_op"), "does not build"),
    "bad_attribute": (_edit_record(attrs={"overlap_thresh": "half"}), "does not build"),
    "output_count": (_edit_record(outputs=["nms_output0"]), "1 are recorded"),
    "malformed_json": (_set_meta("{not json"), None),
    "record_not_an_object": (_set_meta('{"nms": [1, 2]}'), None),
    "foreign_producer": (_foreign, None),
    "untagged_nodes": (_untag, None),
}


@pytest.mark.parametrize("mode", ["auto", "always"])
@pytest.mark.parametrize("name", list(TAMPERED))
def test_untrusted_provenance_falls_back_to_the_error(name, mode):
    model = _build("box_nms")[-1]
    edit, note = TAMPERED[name]
    edit(model)
    onnx.checker.check_model(model)  # still a valid model: only the provenance is wrong
    with pytest.raises(UnsupportedOpError, match=r"node 'nms__Unique' \(Unique\): no import "
                                                 "handler") as info:
        import_model(model, restore_mxnet_ops=mode)
    text = str(info.value)
    if note is None:
        assert "restoring" not in text
    else:
        assert "restoring MXNet node 'nms' (" in text and note in text


def _spy(model, key: str) -> None:
    """Make the first tensor of group ``key`` a graph output too, through an Identity."""
    first = next(n for n in model.graph.node if n.doc_string == key)
    model.graph.output.append(_typed(model, first.output[0], "spy"))
    model.graph.node.append(helper.make_node("Identity", [first.output[0]], ["spy"], name="spy"))


@pytest.mark.parametrize("name, key", [("ssd_mini", "detection")])
def test_group_read_outside_is_refused(name, key):
    model = _build(name)[-1]
    _spy(model, key)
    with pytest.raises(UnsupportedOpError, match="read outside it, by node 'spy'") as info:
        import_model(model)
    assert f"restoring MXNet node {key!r}" in str(info.value)


def _einsum_relu(ctx):
    """relu as an Einsum '...->...' (the identity) then Max with 0: valid ONNX whose Einsum
    the importer refuses while building (no ellipsis)."""
    pooled = ctx.make("Einsum", [ctx.inputs[0]], equation="...->...")
    ctx.make("Max", [pooled, ctx.const(np.float32(0), "zero")], outputs=ctx.outputs)


def _raise_value_error(ctx, *args, **kwargs):
    raise ValueError("a handler bug")


@pytest.mark.parametrize("failure", ["unsupported", "handler_bug"])
def test_failure_while_building_restores_the_group(failure, monkeypatch):
    """A node whose import fails only while the graph is built (an UnsupportedOpError, or a
    handler's own error, a ConversionError) makes the importer restore its group and build
    again; the other ops stay ONNX imports. With the group's provenance broken, the error."""
    from gluonport.onnx import _import_context, export

    monkeypatch.setitem(export._CUSTOM, "relu", [(13, _einsum_relu)])
    if failure == "handler_bug":
        row = _import_context._TABLE[("", "Einsum")]
        monkeypatch.setitem(_import_context._TABLE, ("", "Einsum"),
                            [_import_context.Handler("Einsum", "", h.since, _raise_value_error,
                                                     h.attrs) for h in row])
    sym = mx.sym.sqrt(mx.sym.relu(mx.sym.abs(mx.sym.var("x"), name="a"), name="r"), name="s")
    feed = {"x": np.linspace(-2, 2, 24, dtype=np.float32).reshape(1, 2, 3, 4)}
    model = export_symbol(sym, {}, in_shapes=[(1, 2, 3, 4)])
    assert "Einsum" in {n.op_type for n in model.graph.node}
    back, arg, aux = import_model(model)
    assert _ops(back) == {"a__Abs": "abs", "r": "relu", "s__Sqrt": "sqrt"}
    _assert_same(_run(back, arg, aux, feed), forward(sym, feed), EXACT)
    _spy(model, "r")
    error = UnsupportedOpError if failure == "unsupported" else GluonportError
    with pytest.raises(error, match="ellipsis" if failure == "unsupported" else "handler bug"
                       ) as info:
        import_model(model)
    if failure == "unsupported":
        assert "restoring MXNet node 'r' (relu)" in str(info.value)


def test_dynamic_batch_round_trip():
    """A dynamic-batch export restores box_nms and runs at another batch size."""
    sym = box_nms_case(None)[0]
    model = export_symbol(sym, {}, in_shapes=[(2, 30, 6)],
                          dynamic_axes={"rows": {0: "batch"}})
    back, arg, aux = import_model(model)
    assert _ops(back)["nms"] == "_contrib_box_nms"
    feed = {"rows": _rows(5, 30, 3)}
    _assert_same(_run(back, arg, aux, feed), forward(sym, feed), EXACT)


def test_output_made_elsewhere_is_refused():
    """A recorded output that another node makes: the group would define it twice."""
    model = _build("box_nms")[-1]
    _edit_record(outputs=["act", "nms_output1"])(model)
    with pytest.raises(UnsupportedOpError, match="its output 'act' is made by node 'act__Relu'"):
        import_model(model)


def test_foreign_model_with_provenance_never_collapses():
    """Another producer's model is not trusted even when it carries gluonport's metadata."""
    sym, params, feed = _mlp()
    model = export_symbol(sym, params, in_shapes=[(4, 6)])
    model.producer_name = "someone-else"
    back = import_model(model, restore_mxnet_ops="always")[0]
    assert all("__" in k for k in _ops(back))


def test_bad_mode_is_refused():
    with pytest.raises(OpAttributeError, match="restore_mxnet_ops='sometimes'"):
        import_model(_build("box_nms")[-1], restore_mxnet_ops="sometimes")


def test_export_mxnet_checkpoint_of_a_restored_detector(tmp_path):
    """The checkpoint written from a restored SSD graph loads (MXNet 1.9.1 loads it too:
    tests/golden/mxnet_check/check_in_mxnet.py) and equals the original graph."""
    sym, params, feed, tol, model = _build("ssd_mini")
    path = str(tmp_path / "ssd.onnx")
    onnx.save(model, path)
    sym_file, params_file = export_mxnet(path, str(tmp_path / "ssd"))
    graph = json.loads(open(sym_file).read())
    assert "_contrib_MultiBoxDetection" in {n["op"] for n in graph["nodes"]}
    loaded, arg, aux = mx.model.load_checkpoint(str(tmp_path / "ssd"), 0)
    _assert_same(_run(loaded, arg, aux, feed), forward(sym, {**feed, **params}), tol)
