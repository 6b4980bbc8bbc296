"""Case table for gluonport/ops/vision/detection.py (plain data; see tests/ops/_check.py).

Box inputs are literal values built here with a fixed seed: scores are distinct so NMS and
sorting orders are determined (MXNet's sorts are stable; ties would still agree, but distinct
scores make a wrong tie-break visible).
"""

import numpy as np


def _corners(n, seed, lo=0.0, hi=1.0, min_size=0.05, max_size=0.5):
    """``n`` corner boxes ``[x1, y1, x2, y2]`` inside ``[lo, hi]``."""
    rng = np.random.RandomState(seed)
    size = rng.uniform(min_size, max_size, (n, 2)) * (hi - lo)
    start = lo + rng.uniform(0, 1, (n, 2)) * (hi - lo - size)
    return np.concatenate([start, start + size], axis=1)


def _nms_rows(batch, n, seed, classes=3, clustered=True):
    """``(batch, n, 6)`` rows ``[id, score, x1, y1, x2, y2]`` with distinct scores; boxes are
    jittered copies of a few centres so that suppression actually happens."""
    rng = np.random.RandomState(seed)
    rows = []
    for b in range(batch):
        boxes = _corners(n, seed + 17 * b)
        if clustered:
            base = _corners(3, seed + 31 * b, min_size=0.2, max_size=0.4)
            boxes = base[rng.randint(0, 3, n)] + rng.uniform(-0.04, 0.04, (n, 4))
        scores = (rng.permutation(n) + 1) / (n + 1.0)
        ids = rng.randint(0, classes, n)
        rows.append(np.concatenate([ids[:, None], scores[:, None], boxes], axis=1))
    return np.round(np.array(rows), 4)


def _v(array):
    return {"value": np.asarray(array).tolist()}


def _center(rows):
    out = np.array(rows, dtype=np.float64)
    x1, y1, x2, y2 = (out[..., k].copy() for k in range(2, 6))
    out[..., 2], out[..., 3], out[..., 4], out[..., 5] = (x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, \
        y2 - y1
    return out


# box_nms's gradient rows: where finite differences mean nothing (MXNet's rule is a copy)
IDS = {"no_fd": "class ids are compared for equality: a 1e-6 step in the id column changes "
                "the box's class and so the suppression"}
FORMAT = {"no_fd": "MXNet copies the output's gradient back to the input row without "
                   "converting it between box formats: not the derivative"}
NMS1 = _nms_rows(1, 12, 1)
NMS2 = _nms_rows(2, 10, 2)
NMS4D = _nms_rows(4, 6, 3).reshape(2, 2, 6, 6)
NMS_MANY = _nms_rows(2, 150, 4, classes=4)
# layout [x1, y1, x2, y2, score]: coord_start=0, score_index=4
NMS_XYS = np.concatenate([NMS1[0, :, 2:], NMS1[0, :, 1:2]], axis=1)
NEG = [[[0, 0.9, -0.5, 0.1, 0.3, 0.6], [0, 0.8, 0.5, 0.5, 0.9, 0.9],
        [1, 0.7, -0.5, 0.1, 0.3, 0.6], [2, 0.6, 0.1, 0.1, 0.4, 0.4]]]

IOU_L, IOU_R = _corners(3, 5), _corners(5, 6)
IOU_CL, IOU_CR = _center(np.pad(IOU_L, [(0, 0), (2, 0)]))[:, 2:], \
    _center(np.pad(IOU_R, [(0, 0), (2, 0)]))[:, 2:]

ANCHORS = _corners(6, 8)[None]
REFS = _corners(6, 9).reshape(2, 3, 4)
SSD_ANCHORS = _corners(10, 12, min_size=0.2, max_size=0.5)[None]


def _ssd_cls(batch, classes, anchors, seed):
    rng = np.random.RandomState(seed)
    x = rng.uniform(0, 1, (batch, classes, anchors)) ** 2
    x[:, 0] *= 0.5
    return np.round(x / x.sum(axis=1, keepdims=True), 5)


CLS = _ssd_cls(2, 4, 10, 13)
LOC = np.round(np.random.RandomState(14).uniform(-1, 1, (2, 40)), 4)

MB = {"shape": (1, 2, 4, 5)}
TARGET_ANCHORS = _corners(16, 21, min_size=0.15, max_size=0.5)[None]
_GT = _corners(5, 22, min_size=0.2, max_size=0.5)
LABELS = np.full((3, 4, 5), -1.0)
LABELS[0, :3] = np.concatenate([[[0], [2], [1]], _GT[:3]], axis=1)
LABELS[1, :4] = np.concatenate([[[1], [0], [2], [1]], np.roll(_GT, 2, axis=0)[:4]], axis=1)
LABELS = np.round(LABELS, 4)   # item 2 has no ground truth at all
TARGET_CLS = np.round(np.random.RandomState(23).uniform(-2, 2, (3, 3, 16)), 4)
F64 = "float64"

CASES = [
    # --- box_nms
    {"name": "nms_basic", "op": "_contrib_box_nms", "inputs": [_v(NMS1)]},
    {"name": "nms_alias", "op": "_contrib_box_non_maximum_suppression", "inputs": [_v(NMS1)],
     "attrs": {"overlap_thresh": 0.3}},
    {"name": "nms_thresh_07", "op": "_contrib_box_nms", "inputs": [_v(NMS1)],
     "attrs": {"overlap_thresh": 0.7}},
    {"name": "nms_class_aware", "op": "_contrib_box_nms", "inputs": [_v(NMS1)],
     "attrs": {"id_index": 0, "overlap_thresh": 0.3}, **IDS},
    {"name": "nms_force_suppress", "op": "_contrib_box_nms", "inputs": [_v(NMS1)],
     "attrs": {"id_index": 0, "force_suppress": True, "overlap_thresh": 0.3}},
    {"name": "nms_topk", "op": "_contrib_box_nms", "inputs": [_v(NMS1)],
     "attrs": {"topk": 4, "overlap_thresh": 0.3}},
    {"name": "nms_topk0_identity", "op": "_contrib_box_nms", "inputs": [_v(NMS1)],
     "attrs": {"topk": 0, "out_format": "center"}},
    {"name": "nms_valid_thresh", "op": "_contrib_box_nms", "inputs": [_v(NMS1)],
     "attrs": {"valid_thresh": 0.45, "topk": 3}},
    {"name": "nms_background", "op": "_contrib_box_nms", "inputs": [_v(NMS1)],
     "attrs": {"id_index": 0, "background_id": 0}, **IDS},
    {"name": "nms_all_invalid", "op": "_contrib_box_nms", "inputs": [_v(NMS1)],
     "attrs": {"valid_thresh": 0.99}},
    {"name": "nms_batch", "op": "_contrib_box_nms", "inputs": [_v(NMS2)],
     "attrs": {"id_index": 0, "topk": 6, "overlap_thresh": 0.4}, **IDS},
    {"name": "nms_4d", "op": "_contrib_box_nms", "inputs": [_v(NMS4D)],
     "attrs": {"overlap_thresh": 0.2}},
    {"name": "nms_many_class_aware", "op": "_contrib_box_nms", "inputs": [_v(NMS_MANY)],
     "attrs": {"id_index": 0, "topk": 100, "valid_thresh": 0.1, "overlap_thresh": 0.45}},
    {"name": "nms_many", "op": "_contrib_box_nms", "inputs": [_v(NMS_MANY)],
     "attrs": {"overlap_thresh": 0.6}},
    {"name": "nms_center_in", "op": "_contrib_box_nms", "inputs": [_v(_center(NMS1))],
     "attrs": {"in_format": "center", "out_format": "corner", "overlap_thresh": 0.3},
     "rtol": 1e-5, "atol": 1e-6, **FORMAT},
    {"name": "nms_center_out", "op": "_contrib_box_nms", "inputs": [_v(NMS1)],
     "attrs": {"out_format": "center", "overlap_thresh": 0.3}, **FORMAT},
    {"name": "nms_negative_coord_quirk", "op": "_contrib_box_nms", "inputs": [_v(NEG)],
     "attrs": {"id_index": 0, "out_format": "center"}, **FORMAT},
    {"name": "nms_layout_xys", "op": "_contrib_box_nms", "inputs": [_v(NMS_XYS)],
     "attrs": {"coord_start": 0, "score_index": 4, "overlap_thresh": 0.25}},
    {"name": "nms_float64", "op": "_contrib_box_nms",
     "inputs": [dict(_v(NMS2), dtype=F64)], "attrs": {"id_index": 0, "overlap_thresh": 0.3},
     **IDS},
    {"name": "nms_float16", "op": "_contrib_box_nms",
     "inputs": [dict(_v(NMS1), dtype="float16")], "attrs": {"overlap_thresh": 0.3},
     "rtol": 1e-3, "atol": 1e-3},
    # --- box_iou
    {"name": "iou_corner", "op": "_contrib_box_iou", "inputs": [_v(IOU_L), _v(IOU_R)]},
    {"name": "iou_center", "op": "_contrib_box_iou", "inputs": [_v(IOU_CL), _v(IOU_CR)],
     "attrs": {"format": "center"}},
    {"name": "iou_batched", "op": "_contrib_box_iou",
     "inputs": [_v(_corners(6, 7).reshape(2, 3, 4)), _v(IOU_R[:4])]},
    {"name": "iou_float64", "op": "_contrib_box_iou",
     "inputs": [dict(_v(IOU_L), dtype=F64), dict(_v(IOU_R), dtype=F64)]},
    {"name": "iou_float16", "op": "_contrib_box_iou",
     "inputs": [dict(_v(IOU_L), dtype="float16"), dict(_v(IOU_R), dtype="float16")],
     "rtol": 1e-3, "atol": 1e-3},
    # --- bipartite_matching
    {"name": "matching", "op": "_contrib_bipartite_matching",
     "inputs": [{"shape": (5, 4), "low": 0, "high": 1}], "attrs": {"threshold": 0.2}},
    {"name": "matching_ascend", "op": "_contrib_bipartite_matching",
     "inputs": [{"shape": (4, 5), "low": 0, "high": 1}],
     "attrs": {"threshold": 0.8, "is_ascend": True}},
    {"name": "matching_topk_quirk", "op": "_contrib_bipartite_matching",
     "inputs": [{"shape": (5, 5), "low": 0, "high": 1}], "attrs": {"threshold": 0.0, "topk": 2}},
    {"name": "matching_threshold_stops", "op": "_contrib_bipartite_matching",
     "inputs": [{"shape": (4, 4), "low": 0, "high": 1}], "attrs": {"threshold": 0.8}},
    {"name": "matching_batched", "op": "_contrib_bipartite_matching",
     "inputs": [{"shape": (2, 3, 4, 3), "low": 0, "high": 1}], "attrs": {"threshold": 0.1}},
    # --- box_encode / box_decode
    {"name": "box_encode", "op": "_contrib_box_encode",
     "inputs": [_v([[1, 0, 1], [0, 1, 1]]), _v([[2, 0, 1], [1, 0, 2]]),
                _v(ANCHORS.reshape(2, 3, 4)), _v(REFS), _v([0.0, 0.1, -0.1, 0.2]),
                _v([0.1, 0.1, 0.2, 0.2])], "rtol": 1e-5, "atol": 1e-5},
    {"name": "box_decode_center", "op": "_contrib_box_decode",
     "inputs": [{"shape": (2, 6, 4)}, _v(_center(np.pad(ANCHORS[0], [(0, 0), (2, 0)]))[None, :,
                                                                                       2:])]},
    {"name": "box_decode_corner_std_clip", "op": "_contrib_box_decode",
     "inputs": [{"shape": (2, 6, 4), "low": -3, "high": 3}, _v(ANCHORS)],
     "attrs": {"format": "corner", "std0": 0.1, "std1": 0.1, "std2": 0.2, "std3": 0.3,
               "clip": 0.4}},
    {"name": "box_decode_float64", "op": "_contrib_box_decode",
     "inputs": [{"shape": (1, 6, 4), "dtype": F64}, dict(_v(ANCHORS), dtype=F64)],
     "attrs": {"format": "corner"}},
    {"name": "box_decode_float16", "op": "_contrib_box_decode",
     "inputs": [{"shape": (1, 6, 4), "dtype": "float16"}, dict(_v(ANCHORS), dtype="float16")],
     "attrs": {"format": "corner", "clip": 0.5}, "rtol": 1e-3, "atol": 1e-3},
    # --- MultiBoxPrior
    {"name": "prior_default", "op": "_contrib_MultiBoxPrior", "inputs": [MB]},
    {"name": "prior_sizes_ratios", "op": "_contrib_MultiBoxPrior", "inputs": [MB],
     "attrs": {"sizes": (0.5, 0.25, 0.1), "ratios": (1, 2, 0.5)}},
    {"name": "prior_clip", "op": "_contrib_MultiBoxPrior", "inputs": [MB],
     "attrs": {"sizes": (0.9, 0.6), "ratios": (1, 3), "clip": True}},
    {"name": "prior_steps_offsets", "op": "_contrib_MultiBoxPrior",
     "inputs": [{"shape": (2, 1, 3, 3)}],
     "attrs": {"sizes": (0.3,), "ratios": (1, 2), "steps": (0.2, 0.25), "offsets": (0.2, 0.7)}},
    {"name": "prior_odd_map", "op": "_contrib_MultiBoxPrior",
     "inputs": [{"shape": (1, 1, 3, 2)}], "attrs": {"sizes": (0.4, 0.2)}},
    {"name": "prior_npx_alias", "op": "_npx_multibox_prior", "inputs": [MB],
     "attrs": {"sizes": (0.3,)}},
    # --- MultiBoxTarget
    {"name": "mbtarget_default", "op": "_contrib_MultiBoxTarget",
     "inputs": [_v(TARGET_ANCHORS), _v(LABELS), _v(TARGET_CLS)]},
    {"name": "mbtarget_mining", "op": "_contrib_MultiBoxTarget",
     "inputs": [_v(TARGET_ANCHORS), _v(LABELS), _v(TARGET_CLS)],
     "attrs": {"negative_mining_ratio": 2.0, "negative_mining_thresh": 0.4,
               "overlap_threshold": 0.3, "ignore_label": -2}},
    {"name": "mbtarget_greedy_only", "op": "_contrib_MultiBoxTarget",
     "inputs": [_v(TARGET_ANCHORS), _v(LABELS), _v(TARGET_CLS)],
     "attrs": {"overlap_threshold": 0.0, "negative_mining_ratio": 1.5,
               "variances": (0.2, 0.2, 0.1, 0.1)}},
    {"name": "mbtarget_npx_alias", "op": "_npx_multibox_target",
     "inputs": [_v(TARGET_ANCHORS), _v(LABELS), _v(TARGET_CLS)],
     "attrs": {"overlap_threshold": 0.6}},
    # --- MultiBoxDetection
    {"name": "mbdet_default", "op": "_contrib_MultiBoxDetection",
     "inputs": [_v(CLS), _v(LOC), _v(SSD_ANCHORS)]},
    {"name": "mbdet_force_suppress", "op": "_contrib_MultiBoxDetection",
     "inputs": [_v(CLS), _v(LOC), _v(SSD_ANCHORS)],
     "attrs": {"force_suppress": True, "nms_threshold": 0.3}},
    {"name": "mbdet_topk_quirk", "op": "_contrib_MultiBoxDetection",
     "inputs": [_v(CLS), _v(LOC), _v(SSD_ANCHORS)], "attrs": {"nms_topk": 3}},
    {"name": "mbdet_threshold_noclip", "op": "_contrib_MultiBoxDetection",
     "inputs": [_v(CLS), _v(LOC), _v(SSD_ANCHORS)],
     "attrs": {"threshold": 0.3, "clip": False, "variances": (0.2, 0.2, 0.3, 0.3)}},
    {"name": "mbdet_no_nms", "op": "_contrib_MultiBoxDetection",
     "inputs": [_v(CLS), _v(LOC), _v(SSD_ANCHORS)], "attrs": {"nms_threshold": 0.0}},
    {"name": "mbdet_background_id_ignored", "op": "_contrib_MultiBoxDetection",
     "inputs": [_v(CLS), _v(LOC), _v(SSD_ANCHORS)], "attrs": {"background_id": 2}},
    {"name": "mbdet_npx_alias", "op": "_npx_multibox_detection",
     "inputs": [_v(CLS), _v(LOC), _v(SSD_ANCHORS)], "attrs": {"nms_threshold": 0.2}},
]
