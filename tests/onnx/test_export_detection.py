"""ONNX export of the detection ops (gluonport/ops/vision/) against
MXNet 1.9.1's goldens (tests/golden/ops/detection.npz, roi.npz), at opset 13 and the newest
opset; plus, against the numpy executor (itself checked against MXNet by tests/ops): larger NMS
/ MultiBoxDetection / MultiProposal inputs (distinct scores), score ties, the hidden NMS record,
dynamic batch, box counts, feature-map sizes and ROI counts, and SSD / YOLO / R-CNN style mini
graphs. bipartite_matching and MultiBoxTarget have no export (their OpDefs say why).

Tolerances are the cases' (default rtol 1e-5, atol 1e-6). onnxruntime has no CPU kernel for
RoiAlign-22 / MaxRoiPool-22, so the ROI ops are also run at opset 21 and their newest-opset
models are only checked (the run skips, naming the missing kernel, until onnxruntime has one).

Every row of the case table is exported (lowest and newest opset, weights as inputs and as
initializers) and imported back by the op test driver, tests/ops/test_ops.py; this file
keeps the export checks a row cannot express.
"""

import json

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import ConversionError
from gluonport.onnx import export_symbol
from tests.onnx._export_check import OPSETS, export_case, run_ort
from tests.ops import cases_detection, cases_roi
from tests.ops._check import forward, load_golden

GOLDEN = {**load_golden("detection"), **load_golden("roi")}
ALL = cases_detection.CASES + cases_roi.CASES
CASES = {c["name"]: c for c in ALL}


def test_aligned_roialign_below_opset16_is_refused():
    case = CASES["roialign_aligned"]
    with pytest.raises(ConversionError, match="aligned=True.*opset 16"):
        export_case(case, GOLDEN[case["name"]], 15)


# --- NMS beyond the case table -------------------------------------------------------------
def _rows(batch: int, n: int, seed: int, classes: int = 4, width: int = 6) -> np.ndarray:
    """``(batch, n, width)`` rows ``[id, score, x1, y1, x2, y2, extra...]``: valid corner boxes
    around a few centres (so that suppression happens), distinct scores."""
    rng = np.random.RandomState(seed)
    centres = rng.uniform(0.2, 0.8, (batch, 5, 2))
    pick = rng.randint(0, 5, (batch, n))
    c = np.take_along_axis(centres, pick[..., None], axis=1) + rng.normal(0, 0.03, (batch, n, 2))
    half = rng.uniform(0.05, 0.2, (batch, n, 2))
    out = np.empty((batch, n, width), np.float32)
    out[..., 0] = rng.randint(-1, classes, (batch, n))
    out[..., 1] = np.stack([rng.permutation(n) for _ in range(batch)]) / n + 0.5 / n
    out[..., 2:4], out[..., 4:6] = c - half, c + half
    out[..., 6:] = rng.uniform(-1, 1, (batch, n, width - 6))
    return out


def _vs_executor(sym, feeds: list[dict], opset: int, dynamic_axes=None, params=None,
                 rtol=1e-5, atol=1e-6):
    """Export for the first feed's shapes; every feed on onnxruntime equals the executor."""
    params = params or {}
    first = feeds[0]
    model = export_symbol(sym, params, in_shapes={k: v.shape for k, v in first.items()},
                          in_types={k: v.dtype for k, v in first.items()},
                          opset_version=opset, dynamic_axes=dynamic_axes)
    import onnx

    onnx.checker.check_model(model, full_check=True)
    for feed in feeds:
        want = forward(sym, {**feed, **params})
        got = run_ort(model, feed)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype)
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    return model


NMS_ATTRS = [
    {"overlap_thresh": 0.5},
    {"overlap_thresh": 0.45, "id_index": 0, "topk": 40, "valid_thresh": 0.05},
    {"overlap_thresh": 0.3, "id_index": 0, "force_suppress": True, "background_id": 2},
    {"overlap_thresh": 0.6, "id_index": 0, "topk": 5, "out_format": "center"},
    {"overlap_thresh": 0.5, "coord_start": 2, "score_index": 1, "id_index": 0, "topk": 300},
]


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("attrs", NMS_ATTRS, ids=[str(i) for i in range(len(NMS_ATTRS))])
def test_nms_many_boxes_dynamic_batch(attrs, opset):
    """200 clustered boxes per item, batch 1 and 3 through one model (dynamic axis 0)."""
    sym = mx.sym.contrib.box_nms(mx.sym.var("in0"), **attrs)
    feeds = [{"in0": _rows(2, 200, 1)}, {"in0": _rows(1, 200, 2)}, {"in0": _rows(3, 200, 3)}]
    _vs_executor(sym, feeds, opset, {"in0": {0: "batch"}})


@pytest.mark.parametrize("opset", OPSETS)
def test_nms_dynamic_box_count_and_extra_columns(opset):
    """N varies too; rows wider than 6 keep their extra columns; a 4-d batch."""
    sym = mx.sym.contrib.box_nms(mx.sym.var("in0"), overlap_thresh=0.4, id_index=0, topk=30)
    feeds = [{"in0": _rows(4, 50, s, width=8).reshape(2, 2, 50, 8)} for s in (4,)]
    feeds += [{"in0": _rows(2, 70, 5, width=8).reshape(1, 2, 70, 8)}]
    _vs_executor(sym, feeds, opset, {"in0": {0: "a", 2: "n"}})


@pytest.mark.parametrize("opset", OPSETS)
def test_nms_center_input(opset):
    rows = _rows(2, 60, 6)
    x1, y1, x2, y2 = (rows[..., k].copy() for k in range(2, 6))
    rows[..., 2], rows[..., 3], rows[..., 4], rows[..., 5] = (x1 + x2) / 2, (y1 + y2) / 2, \
        x2 - x1, y2 - y1
    sym = mx.sym.contrib.box_nms(mx.sym.var("in0"), overlap_thresh=0.4, id_index=0,
                                 in_format="center", out_format="corner")
    _vs_executor(sym, [{"in0": rows}], opset, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("opset", OPSETS)
def test_nms_score_ties_keep_index_order(opset):
    """Equal scores: MXNet's stable sort keeps input order; onnxruntime's NonMaxSuppression and
    TopK pick the lower index first too (the ONNX spec leaves ties open)."""
    rows = _rows(1, 40, 7)
    rows[..., 1] = np.round(rows[..., 1] * 4) / 4          # 4 distinct scores only
    for attrs in ({"overlap_thresh": 0.5}, {"overlap_thresh": 0.5, "id_index": 0, "topk": 9}):
        sym = mx.sym.contrib.box_nms(mx.sym.var("in0"), **attrs)
        _vs_executor(sym, [{"in0": rows}], opset)


@pytest.mark.parametrize("opset", OPSETS)
def test_nms_hidden_record_output(opset):
    """The second (hidden) output: the kept rows' flat input indices, -1 after them."""
    sym = mx.sym.contrib.box_nms(mx.sym.var("in0"), overlap_thresh=0.4, id_index=0, name="nms")
    graph = json.loads(sym.tojson())
    graph["heads"] = [[1, 0, 0], [1, 1, 0]]
    both = mx.sym.load_json(json.dumps(graph))
    _vs_executor(both, [{"in0": _rows(3, 30, 8)}], opset)


def test_nms_topk0_record_is_arange():
    sym = mx.sym.contrib.box_nms(mx.sym.var("in0"), topk=0, name="nms")
    graph = json.loads(sym.tojson())
    graph["heads"] = [[1, 0, 0], [1, 1, 0]]
    both = mx.sym.load_json(json.dumps(graph))
    _vs_executor(both, [{"in0": _rows(2, 5, 9)}], OPSETS[-1])


def test_nms_float64_and_float16_rows():
    for dtype in (np.float64, np.float16):
        rows = _rows(2, 40, 10).astype(dtype)
        sym = mx.sym.contrib.box_nms(mx.sym.var("in0"), overlap_thresh=0.5, id_index=0,
                                     out_format="center")
        _vs_executor(sym, [{"in0": rows}], OPSETS[-1], rtol=1e-3, atol=1e-3)


# --- MultiBoxDetection / MultiBoxPrior beyond the table ------------------------------------
def _ssd_inputs(batch: int, classes: int, anchors: int, seed: int):
    rng = np.random.RandomState(seed)
    logits = rng.normal(0, 2, (batch, classes, anchors))
    prob = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    loc = rng.normal(0, 0.5, (batch, anchors * 4))
    centre = rng.uniform(0.1, 0.9, (anchors, 2))
    size = rng.uniform(0.05, 0.3, (anchors, 2))
    anchor = np.concatenate([centre - size / 2, centre + size / 2], axis=1)[None]
    return prob.astype(np.float32), loc.astype(np.float32), anchor.astype(np.float32)


MBDET_ATTRS = [{}, {"nms_topk": 20, "threshold": 0.05}, {"force_suppress": True,
                                                         "nms_threshold": 0.3, "clip": False},
               {"nms_threshold": 0.0}]


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("attrs", MBDET_ATTRS, ids=[str(i) for i in range(len(MBDET_ATTRS))])
def test_multibox_detection_many_anchors_dynamic_batch(attrs, opset):
    names = ("cls", "loc", "anchor")
    sym = mx.sym.contrib.MultiBoxDetection(*(mx.sym.var(n) for n in names), **attrs)
    feeds = []
    for batch, seed in ((2, 1), (1, 2), (3, 3)):
        cls, loc, anchor = _ssd_inputs(batch, 5, 150, seed)
        feeds.append({"cls": cls, "loc": loc, "anchor": _ssd_inputs(1, 5, 150, 0)[2]})
    dyn = {"cls": {0: "batch"}, "loc": {0: "batch"}}
    _vs_executor(sym, feeds, opset, dyn, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("opset", OPSETS)
def test_multibox_prior_dynamic_feature_map(opset):
    """Priors from run-time H, W equal the executor's at other map sizes."""
    sym = mx.sym.contrib.MultiBoxPrior(mx.sym.var("in0"), sizes=(0.4, 0.2), ratios=(1, 2, 0.5),
                                       clip=True)
    feeds = [{"in0": np.zeros(s, np.float32)} for s in ((1, 3, 5, 6), (2, 3, 7, 4), (1, 3, 1, 1))]
    _vs_executor(sym, feeds, opset, {"in0": {0: "b", 2: "h", 3: "w"}}, rtol=1e-6, atol=1e-7)


def test_multibox_prior_static_map_is_a_constant():
    sym = mx.sym.contrib.MultiBoxPrior(mx.sym.var("in0"), sizes=(0.3,))
    model = export_symbol(sym, {}, in_shapes=[(1, 2, 4, 4)])
    assert [n.op_type for n in model.graph.node] == ["Identity"]


# --- ROIs: dynamic ROI count ---------------------------------------------------------------
ROI_SYMS = {
    "pool": lambda d, r: mx.sym.ROIPooling(d, r, pooled_size=(3, 2), spatial_scale=0.5),
    "align": lambda d, r: mx.sym.contrib.ROIAlign(d, r, pooled_size=(2, 3), spatial_scale=0.5),
    "align_ps": lambda d, r: mx.sym.contrib.ROIAlign(d, r, pooled_size=(2, 2), spatial_scale=0.5,
                                                    position_sensitive=True, sample_ratio=2),
}


@pytest.mark.parametrize("opset", [13, 21])
@pytest.mark.parametrize("kind", list(ROI_SYMS))
def test_roi_dynamic_roi_count_and_batch(kind, opset):
    rng = np.random.RandomState(3)
    sym = ROI_SYMS[kind](mx.sym.var("data"), mx.sym.var("rois"))
    feeds = []
    for batch, count in ((2, 7), (1, 3), (3, 12)):
        rois = np.asarray(cases_roi._random_rois(count, batch, 18, 16, count), np.float32)
        rois[0, 0] = batch      # one ROI naming no image: zeros, as in MXNet
        feeds.append({"data": rng.uniform(-1, 1, (batch, 8, 8, 9)).astype(np.float32),
                      "rois": rois})
    dyn = {"data": {0: "batch"}, "rois": {0: "rois"}}
    _vs_executor(sym, feeds, opset, dyn, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("opset", OPSETS)
def test_psroi_pooling_dynamic_roi_count(opset):
    rng = np.random.RandomState(4)
    sym = mx.sym.contrib.PSROIPooling(mx.sym.var("data"), mx.sym.var("rois"), spatial_scale=0.5,
                                      output_dim=2, pooled_size=3, group_size=3)
    feeds = []
    for batch, count in ((2, 6), (1, 2), (3, 9)):
        rois = np.asarray(cases_roi._random_rois(count, batch, 14, 12, count), np.float32)
        rois[-1, 0] = -1        # no image: zeros
        feeds.append({"data": rng.uniform(-1, 1, (batch, 18, 6, 7)).astype(np.float32),
                      "rois": rois})
    _vs_executor(sym, feeds, opset, {"data": {0: "batch"}, "rois": {0: "rois"}})


def _rpn_feed(batch: int, anchors: int, height: int, width: int, seed: int) -> dict:
    rng = np.random.RandomState(seed)
    info = np.array([[height * 8 - rng.randint(0, 12), width * 8 - rng.randint(0, 12),
                      rng.uniform(0.7, 1.3)] for _ in range(batch)], np.float32)
    return {"cls": rng.uniform(0, 1, (batch, 2 * anchors, height, width)).astype(np.float32),
            "bbox": rng.uniform(-0.4, 0.4, (batch, 4 * anchors, height, width)).astype(
                np.float32), "info": info}


RPN = [{"rpn_post_nms_top_n": 20, "threshold": 0.6},
       {"rpn_post_nms_top_n": 60, "threshold": 0.3},               # fewer kept: rows repeat
       {"rpn_post_nms_top_n": 20, "threshold": 0.6, "iou_loss": True}]


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("attrs", RPN, ids=[str(i) for i in range(len(RPN))])
def test_multiproposal_dynamic_batch_and_map(attrs, opset):
    """Faster R-CNN's RPN with images of several sizes through one model."""
    out = mx.sym.contrib.MultiProposal(
        mx.sym.var("cls"), mx.sym.var("bbox"), mx.sym.var("info"), scales=(2, 4),
        ratios=(0.5, 1, 2), feature_stride=8, rpn_pre_nms_top_n=80, rpn_min_size=6,
        output_score=True, **attrs)
    feeds = [_rpn_feed(2, 6, 6, 7, 1), _rpn_feed(1, 6, 4, 9, 2), _rpn_feed(3, 6, 5, 5, 3)]
    dyn = {"cls": {0: "b", 2: "h", 3: "w"}, "bbox": {0: "b", 2: "h", 3: "w"},
           "info": {0: "b"}}
    _vs_executor(out, feeds, opset, dyn, rtol=1e-5, atol=1e-4)


# --- mini detectors ------------------------------------------------------------------------
def _conv(x, name: str, filters: int, rng, params: dict):
    w = rng.normal(0, 0.3, (filters, 3 if name == "body" else 8, 3, 3)).astype(np.float32)
    params[f"{name}_weight"] = w
    params[f"{name}_bias"] = rng.normal(0, 0.1, filters).astype(np.float32)
    return mx.sym.Convolution(x, mx.sym.var(f"{name}_weight"), mx.sym.var(f"{name}_bias"),
                              kernel=(3, 3), pad=(1, 1), num_filter=filters, name=name)


def _ssd_graph(rng):
    """conv body -> class / box heads -> softmax; MultiBoxPrior on the feature map;
    MultiBoxDetection on top (GluonCV's SSD export, in miniature)."""
    params: dict = {}
    feat = mx.sym.Activation(_conv(mx.sym.var("data"), "body", 8, rng, params), act_type="relu")
    anchors_per_cell, classes = 3, 4
    cls = _conv(feat, "cls", anchors_per_cell * classes, rng, params)
    cls = mx.sym.reshape(mx.sym.transpose(cls, axes=(0, 2, 3, 1)), shape=(0, -1, classes))
    cls = mx.sym.transpose(mx.sym.softmax(cls, axis=-1), axes=(0, 2, 1))
    loc = mx.sym.flatten(mx.sym.transpose(_conv(feat, "loc", anchors_per_cell * 4, rng, params),
                                          axes=(0, 2, 3, 1)))
    prior = mx.sym.contrib.MultiBoxPrior(feat, sizes=(0.3, 0.15), ratios=(1, 2))
    det = mx.sym.contrib.MultiBoxDetection(cls, loc, prior, nms_threshold=0.45, nms_topk=40,
                                           threshold=0.05)
    return det, params


def _yolo_graph(rng):
    """conv body -> per-anchor regressions decoded against constant anchors, class ids and
    scores concatenated, class-aware box_nms (GluonCV's YOLOv3 / CenterNet post-processing)."""
    params: dict = {}
    feat = mx.sym.Activation(_conv(mx.sym.var("data"), "body", 8, rng, params), act_type="relu")
    raw = mx.sym.reshape(mx.sym.transpose(_conv(feat, "head", 2 * 7, rng, params),
                                          axes=(0, 2, 3, 1)), shape=(0, -1, 7))
    box = mx.sym.slice_axis(raw, axis=-1, begin=0, end=4)
    params["anchors"] = np.concatenate(
        [rng.uniform(0.1, 0.9, (1, 128, 2)), rng.uniform(0.05, 0.3, (1, 128, 2))],
        axis=-1).astype(np.float32)
    boxes = mx.sym.contrib.box_decode(box, mx.sym.var("anchors"), std0=0.1, std1=0.1,
                                      std2=0.2, std3=0.2)
    logits = mx.sym.slice_axis(raw, axis=-1, begin=4, end=7)
    prob = mx.sym.Activation(logits, act_type="sigmoid")
    score = mx.sym.max(prob, axis=-1, keepdims=True)
    ids = mx.sym.argmax(logits, axis=-1, keepdims=True)       # float32 ids, as in MXNet
    rows = mx.sym.concat(ids, score, boxes, dim=-1)
    return mx.sym.contrib.box_nms(rows, overlap_thresh=0.45, valid_thresh=0.3, topk=50,
                                  id_index=0, score_index=1, coord_start=2), params


def _rcnn_graph(rng):
    """conv body, then ROIAlign / ROIPooling of given proposals (Faster R-CNN's second stage)."""
    params: dict = {}
    feat = mx.sym.Activation(_conv(mx.sym.var("data"), "body", 8, rng, params), act_type="relu")
    rois = mx.sym.var("rois")
    aligned = mx.sym.contrib.ROIAlign(feat, rois, pooled_size=(3, 3), spatial_scale=0.5,
                                      sample_ratio=2)
    pooled = mx.sym.ROIPooling(feat, rois, pooled_size=(2, 2), spatial_scale=0.5)
    return mx.sym.Group([aligned, pooled]), params


@pytest.mark.parametrize("opset", OPSETS)
def test_ssd_mini_graph(opset):
    rng = np.random.RandomState(0)
    det, params = _ssd_graph(rng)
    feeds = [{"data": rng.uniform(0, 1, (b, 3, 8, 8)).astype(np.float32)} for b in (2, 1)]
    model = _vs_executor(det, feeds, opset, {"data": {0: "batch"}}, params, rtol=1e-4,
                         atol=1e-5)
    assert "NonMaxSuppression" in {n.op_type for n in model.graph.node}


@pytest.mark.parametrize("opset", OPSETS)
def test_yolo_mini_graph(opset):
    rng = np.random.RandomState(1)
    det, params = _yolo_graph(rng)
    feeds = [{"data": rng.uniform(0, 1, (b, 3, 8, 8)).astype(np.float32)} for b in (2, 3)]
    _vs_executor(det, feeds, opset, {"data": {0: "batch"}}, params, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("opset", [13, 21])
def test_rcnn_mini_graph(opset):
    rng = np.random.RandomState(2)
    out, params = _rcnn_graph(rng)
    rois = np.asarray(cases_roi._random_rois(10, 2, 16, 16, 5), np.float32)
    feed = {"data": rng.uniform(0, 1, (2, 3, 8, 8)).astype(np.float32), "rois": rois}
    _vs_executor(out, [feed], opset, None, params, rtol=1e-4, atol=1e-5)
