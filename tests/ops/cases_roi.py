"""Case table for gluonport/ops/vision/{roi,proposal}.py (plain data; see tests/ops/_check.py)."""

import numpy as np

FEAT = {"shape": (2, 3, 8, 9)}
FEAT64 = {"shape": (2, 3, 8, 9), "dtype": "float64"}
# [batch_index, x1, y1, x2, y2] in image pixels (spatial_scale maps them onto the map)
ROIS = [[0, 0, 0, 15, 13], [1, 2.5, 3, 9, 14.2], [0, 6, 4, 6.4, 4.1], [1, -3, 5, 20, 30],
        [0, 10.7, 1.2, 17, 7.9], [1, 4, 4, 3, 3]]
ROIS_BAD_INDEX = ROIS[:3] + [[-1, 0, 0, 4, 4], [2, 0, 0, 4, 4]]
# ROIAlign: large boxes so the adaptive sampling grid goes above 1
ALIGN_ROIS = [[0, 0.5, 0.5, 15.5, 13], [1, 2.5, 3, 9, 14.2], [0, 6, 4, 7.4, 5.1],
              [1, -3, 5, 20, 30], [0, 10.7, 1.2, 17, 7.9]]


def _random_rois(n, batch, width, height, seed):
    """Random ROIs, some partly outside the image and some tiny."""
    rng = np.random.RandomState(seed)
    x1 = rng.uniform(-0.2 * width, width, n)
    y1 = rng.uniform(-0.2 * height, height, n)
    w = rng.uniform(0.1, 0.8 * width, n) * (rng.uniform(0, 1, n) > 0.1)
    h = rng.uniform(0.1, 0.8 * height, n) * (rng.uniform(0, 1, n) > 0.1)
    idx = rng.randint(0, batch, n)
    return np.round(np.stack([idx, x1, y1, x1 + w, y1 + h], axis=1), 3).tolist()


MANY_ROIS = _random_rois(40, 2, 18, 16, 7)
PS_ROIS = [[0, 0, 0, 10, 10], [0, 2.4, 3.5, 7, 9], [0, 5, 5, 5.2, 5.2], [0, -2, 1, 14, 6]]


def _rpn_inputs(batch, anchors, height, width, seed):
    rng = np.random.RandomState(seed)
    scores = rng.uniform(0, 1, (batch, 2 * anchors, height, width))
    deltas = rng.uniform(-0.3, 0.3, (batch, 4 * anchors, height, width))
    return {"value": np.round(scores, 5).tolist()}, {"value": np.round(deltas, 4).tolist()}


RPN_CLS, RPN_BOX = _rpn_inputs(1, 6, 5, 6, 3)
RPN_CLS12, RPN_BOX12 = _rpn_inputs(1, 12, 4, 4, 4)
MRPN_CLS, MRPN_BOX = _rpn_inputs(2, 6, 5, 6, 5)
INFO = {"value": [[40, 48, 1.0]]}
INFO_SMALL = {"value": [[27, 33, 0.8]]}
SMALL_ANCHORS = {"scales": (1, 2), "ratios": (0.5, 1, 2), "feature_stride": 8,
                 "rpn_pre_nms_top_n": 60, "rpn_post_nms_top_n": 12, "rpn_min_size": 4}

CASES = [
    # --- ROIPooling
    {"name": "roipool", "op": "ROIPooling", "inputs": [FEAT, {"value": ROIS}],
     "attrs": {"pooled_size": (2, 2), "spatial_scale": 0.5}},
    {"name": "roipool_3x2_scale1", "op": "ROIPooling", "inputs": [FEAT, {"value": ROIS}],
     "attrs": {"pooled_size": (3, 2), "spatial_scale": 0.6}},
    {"name": "roipool_bigger_than_roi", "op": "ROIPooling", "inputs": [FEAT, {"value": ROIS}],
     "attrs": {"pooled_size": (4, 5), "spatial_scale": 0.25}},
    {"name": "roipool_bad_batch_index", "op": "ROIPooling",
     "inputs": [FEAT, {"value": ROIS_BAD_INDEX}],
     "attrs": {"pooled_size": (2, 2), "spatial_scale": 0.5}},
    {"name": "roipool_float64", "op": "ROIPooling",
     "inputs": [FEAT64, {"value": ROIS, "dtype": "float64"}],
     "attrs": {"pooled_size": (2, 3), "spatial_scale": 0.5}},
    {"name": "roipool_float16", "op": "ROIPooling",
     "inputs": [dict(FEAT, dtype="float16"), {"value": ROIS, "dtype": "float16"}],
     "attrs": {"pooled_size": (2, 2), "spatial_scale": 0.5}},
    {"name": "roipool_npx_alias", "op": "_npx_roi_pooling", "inputs": [FEAT, {"value": ROIS}],
     "attrs": {"pooled_size": (2, 2), "spatial_scale": 0.5}},
    {"name": "roipool_many", "op": "ROIPooling", "inputs": [FEAT, {"value": MANY_ROIS}],
     "attrs": {"pooled_size": (3, 3), "spatial_scale": 0.5}},
    # --- ROIAlign
    {"name": "roialign_many", "op": "_contrib_ROIAlign", "inputs": [FEAT, {"value": MANY_ROIS}],
     "attrs": {"pooled_size": (3, 2), "spatial_scale": 0.5}},
    {"name": "roialign", "op": "_contrib_ROIAlign", "inputs": [FEAT, {"value": ALIGN_ROIS}],
     "attrs": {"pooled_size": (2, 2), "spatial_scale": 0.5}},
    {"name": "roialign_3x4_sample2", "op": "_contrib_ROIAlign",
     "inputs": [FEAT, {"value": ALIGN_ROIS}],
     "attrs": {"pooled_size": (3, 4), "spatial_scale": 0.5, "sample_ratio": 2}},
    {"name": "roialign_aligned", "op": "_contrib_ROIAlign",
     "inputs": [FEAT, {"value": ALIGN_ROIS}],
     "attrs": {"pooled_size": (2, 3), "spatial_scale": 0.7, "aligned": True}},
    {"name": "roialign_position_sensitive", "op": "_contrib_ROIAlign",
     "inputs": [{"shape": (2, 8, 7, 6)}, {"value": ALIGN_ROIS}],
     "attrs": {"pooled_size": (2, 2), "spatial_scale": 0.4, "position_sensitive": True,
               "sample_ratio": 3}},
    {"name": "roialign_float64", "op": "_contrib_ROIAlign",
     "inputs": [FEAT64, {"value": ALIGN_ROIS, "dtype": "float64"}],
     "attrs": {"pooled_size": (2, 2), "spatial_scale": 0.5, "sample_ratio": 1}},
    {"name": "roialign_float16", "op": "_contrib_ROIAlign",
     "inputs": [dict(FEAT, dtype="float16"), {"value": ALIGN_ROIS, "dtype": "float16"}],
     "attrs": {"pooled_size": (2, 2), "spatial_scale": 0.5}, "rtol": 1e-2, "atol": 1e-2},
    # --- PSROIPooling
    {"name": "psroipool", "op": "_contrib_PSROIPooling",
     "inputs": [{"shape": (1, 18, 6, 7)}, {"value": PS_ROIS}],
     "attrs": {"spatial_scale": 0.5, "output_dim": 2, "pooled_size": 3}},
    {"name": "psroipool_group2", "op": "_contrib_PSROIPooling",
     "inputs": [{"shape": (1, 8, 6, 7)}, {"value": PS_ROIS}],
     "attrs": {"spatial_scale": 0.6, "output_dim": 2, "pooled_size": 3, "group_size": 2},
     "no_fd": "a ROI corner times 0.6 lands on a bin edge (5 * 0.6 = 3), where the bins jump: "
              "differences in the rois mean nothing there (MXNet gives them zero)"},
    # --- Proposal / MultiProposal
    {"name": "proposal", "op": "_contrib_Proposal", "inputs": [RPN_CLS, RPN_BOX, INFO],
     "attrs": dict(SMALL_ANCHORS)},
    {"name": "proposal_score", "op": "_contrib_Proposal", "inputs": [RPN_CLS, RPN_BOX, INFO],
     "attrs": dict(SMALL_ANCHORS, output_score=True, threshold=0.5)},
    {"name": "proposal_iou_loss", "op": "_contrib_Proposal", "inputs": [RPN_CLS, RPN_BOX, INFO],
     "attrs": dict(SMALL_ANCHORS, output_score=True, iou_loss=True)},
    {"name": "proposal_padded_min_size", "op": "_contrib_Proposal",
     "inputs": [RPN_CLS, RPN_BOX, INFO_SMALL],
     "attrs": dict(SMALL_ANCHORS, output_score=True, rpn_min_size=12,
                   rpn_post_nms_top_n=40)},
    {"name": "proposal_defaults", "op": "_contrib_Proposal",
     "inputs": [RPN_CLS12, RPN_BOX12, {"value": [[64, 64, 1.0]]}],
     "attrs": {"rpn_post_nms_top_n": 30, "output_score": True}},
    {"name": "proposal_no_pre_limit", "op": "_contrib_Proposal",
     "inputs": [RPN_CLS, RPN_BOX, INFO],
     "attrs": dict(SMALL_ANCHORS, rpn_pre_nms_top_n=-1, threshold=0.3)},
    {"name": "multiproposal", "op": "_contrib_MultiProposal",
     "inputs": [MRPN_CLS, MRPN_BOX, {"value": [[40, 48, 1.0], [30, 41, 1.5]]}],
     "attrs": dict(SMALL_ANCHORS, output_score=True)},
]
