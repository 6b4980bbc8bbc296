"""Detection ops against MXNet 1.9.1 (tests/golden/ops/detection.npz)."""

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import DTypeError, GluonportError, OpAttributeError, ShapeError
from gluonport.ndarray import invoke


# --- what the tables cannot express ----------------------------------------------------------
def _rows(n=5):
    rng = np.random.RandomState(0)
    box = rng.uniform(0, 0.5, (1, n, 4))
    box[..., 2:] += 0.3
    return np.concatenate([np.zeros((1, n, 1)), rng.permutation(n)[None, :, None] / n, box],
                          axis=2).astype(np.float32)


@pytest.mark.parametrize("op, n_visible, names", [
    ("_contrib_box_nms", 1, ["n_output0"]),
    ("_contrib_bipartite_matching", 2, ["n_output0", "n_output1"]),
    ("_contrib_MultiBoxPrior", 1, ["n_output"]),
])
def test_output_names_match_mxnet(op, n_visible, names):
    attrs = {"threshold": 0.1} if op == "_contrib_bipartite_matching" else {}
    out = mx.sym.invoke(op, [mx.sym.var("x")], dict(attrs, name="n"))
    assert out.list_outputs() == names
    assert len(out) == n_visible


def test_box_encode_fills_means_and_stds():
    s = mx.sym.invoke("_contrib_box_encode", [mx.sym.var(v) for v in
                      ("samples", "matches", "anchors", "refs", "means", "stds")], {})
    args, outs, _ = s.infer_shape_partial(samples=(2, 5), matches=(2, 5), anchors=(2, 5, 4),
                                          refs=(2, 3, 4))
    assert args[4] == (4,) and args[5] == (4,)
    assert outs == [(2, 5, 4), (2, 5, 4)]


def test_multibox_detection_fills_loc_pred():
    s = mx.sym.invoke("_contrib_MultiBoxDetection",
                      [mx.sym.var("cls"), mx.sym.var("loc"), mx.sym.var("anchor")], {})
    args, outs, _ = s.infer_shape_partial(cls=(2, 4, 10), anchor=(1, 10, 4))
    assert args[1] == (2, 40) and outs == [(2, 10, 6)]


def test_multibox_detection_anchor_mismatch_names_node_and_shapes():
    s = mx.sym.invoke("_contrib_MultiBoxDetection",
                      [mx.sym.var("cls"), mx.sym.var("loc"), mx.sym.var("anchor")],
                      {"name": "det"})
    with pytest.raises(ShapeError, match=r"det.*\(2, 4, 10\).*\(1, 9, 4\)"):
        s.infer_shape(cls=(2, 4, 10), loc=(2, 40), anchor=(1, 9, 4))


@pytest.mark.parametrize("attrs, match", [
    ({"score_index": 3}, "score_index=3 overlaps coordinates"),
    ({"coord_start": 3}, r"coordinates \[3, 6\] are out of range"),
    ({"id_index": 1}, "id_index=1 overlaps"),
])
def test_box_nms_bad_indices(attrs, match):
    with pytest.raises(OpAttributeError, match=match):
        invoke("_contrib_box_nms", [mx.nd.array(_rows())], attrs)
    s = mx.sym.invoke("_contrib_box_nms", [mx.sym.var("x")], dict(attrs, name="nms0"))
    with pytest.raises(GluonportError, match="nms0"):
        s.infer_shape(x=(1, 5, 6))


def test_box_nms_needs_class_column():
    s = mx.sym.invoke("_contrib_box_nms", [mx.sym.var("x")],
                      {"id_index": 5, "coord_start": 0, "score_index": 4, "name": "nms1"})
    with pytest.raises(ShapeError, match=r"nms1.*\(1, 4, 5\).*at least 6"):
        s.infer_shape(x=(1, 4, 5))


def test_box_nms_hidden_record_is_kept_index():
    from gluonport.ops import registry

    op = registry.get("_contrib_box_nms")
    data = _rows(6)
    out, record = op.run(op.parse({"overlap_thresh": "0.99"}), [data])
    kept = record[0, :, 0]
    np.testing.assert_array_equal(out[0][kept >= 0], data[0][kept[kept >= 0].astype(int)])


@pytest.mark.parametrize("op, inputs", [
    ("_contrib_MultiBoxPrior", [np.zeros((1, 1, 2, 2))]),
    ("_contrib_MultiBoxDetection",
     [np.zeros((1, 2, 3)), np.zeros((1, 12)), np.zeros((1, 3, 4))]),
])
def test_float32_only_ops_refuse_float64(op, inputs):
    arrays = [mx.nd.array(x, dtype="float64") for x in inputs]
    with pytest.raises(DTypeError, match="float32 only"):
        invoke(op, arrays, {})
    s = mx.sym.invoke(op, [mx.sym.var(f"x{i}") for i in range(len(inputs))], {"name": "o"})
    with pytest.raises(DTypeError, match="float32 only"):
        s.infer_type(**{f"x{i}": "float64" for i in range(len(inputs))})


@pytest.mark.parametrize("attrs, match", [
    ({"offsets": (0.5, 1.5)}, r"offsets .* must lie in \[0, 1\]"),
    ({"steps": (0.1,)}, "steps and offsets must have 2 elements"),
    ({"steps": (-0.1, 0.2)}, "give both step_y and step_x"),
])
def test_multibox_prior_bad_attributes(attrs, match):
    with pytest.raises(OpAttributeError, match=match):
        invoke("_contrib_MultiBoxPrior", [mx.nd.zeros((1, 1, 2, 2))], attrs)


def _naive_nms(boxes, scores, thresh):
    """Textbook greedy NMS (no +1), for a cross-check of the vectorized loop."""
    order, keep = list(np.argsort(-scores, kind="stable")), []
    while order:
        i = order.pop(0)
        keep.append(i)
        rest = []
        for j in order:
            w = min(boxes[i, 2], boxes[j, 2]) - max(boxes[i, 0], boxes[j, 0])
            h = min(boxes[i, 3], boxes[j, 3]) - max(boxes[i, 1], boxes[j, 1])
            inter = max(w, 0) * max(h, 0)
            area = [(b[2] - b[0]) * (b[3] - b[1]) for b in (boxes[i], boxes[j])]
            if inter / (area[0] + area[1] - inter) <= thresh:
                rest.append(j)
        order = rest
    return keep


def test_box_nms_large_input_matches_textbook_nms():
    rng = np.random.RandomState(3)
    n = 400
    xy = rng.uniform(0, 1, (n, 2))
    boxes = np.concatenate([xy, xy + rng.uniform(0.05, 0.3, (n, 2))], axis=1)
    scores = rng.permutation(n) / n
    data = np.concatenate([np.zeros((n, 1)), scores[:, None], boxes], 1)[None]
    out = invoke("_contrib_box_nms", [mx.nd.array(data, dtype="float64")],
                       {"overlap_thresh": 0.4}).asnumpy()[0]
    keep = _naive_nms(boxes, scores, 0.4)
    np.testing.assert_array_equal(out[:len(keep)], data[0, keep])
    assert np.all(out[len(keep):] == -1)


def test_multibox_target_outputs_and_padding_check():
    s = mx.sym.invoke("_contrib_MultiBoxTarget",
                      [mx.sym.var("anchor"), mx.sym.var("label"), mx.sym.var("cls")],
                      {"name": "tgt"})
    assert s.list_outputs() == ["tgt_loc_target", "tgt_loc_mask", "tgt_cls_target"]
    _, outs, _ = s.infer_shape(anchor=(1, 6, 4), label=(2, 3, 5), cls=(2, 4, 6))
    assert outs == [(2, 24), (2, 24), (2, 6)]
    label = np.array([[[0, 0.1, 0.1, 0.5, 0.5], [-1, 0.2, -1, -1, -1]]], np.float32)
    anchors = np.array([[[0.1, 0.1, 0.4, 0.4], [0.5, 0.5, 0.9, 0.9]]], np.float32)
    with pytest.raises(OpAttributeError, match="padding label row 1 must be all -1"):
        invoke("_contrib_MultiBoxTarget", [mx.nd.array(anchors), mx.nd.array(label),
                                           mx.nd.zeros((1, 2, 2))], {})
