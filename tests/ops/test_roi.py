"""ROI ops against MXNet 1.9.1 (tests/golden/ops/roi.npz)."""

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import DTypeError, OpAttributeError, ShapeError
from gluonport.ndarray import invoke


# --- what the tables cannot express ----------------------------------------------------------
def _sym(op, names, attrs):
    return mx.sym.invoke(op, [mx.sym.var(n) for n in names], attrs)


def test_proposal_fills_bbox_pred_and_im_info():
    s = _sym("_contrib_MultiProposal", ("cls", "bbox", "info"),
             {"rpn_post_nms_top_n": 7, "output_score": True, "name": "rpn"})
    args, outs, _ = s.infer_shape_partial(cls=(2, 24, 5, 6))
    assert args == [(2, 24, 5, 6), (2, 48, 5, 6), (2, 3)]
    assert outs == [(14, 5), (14, 1)]
    assert s.list_outputs() == ["rpn_output", "rpn_score"]
    single = _sym("_contrib_Proposal", ("cls", "bbox", "info"), {"rpn_post_nms_top_n": 7})
    assert single.infer_shape(cls=(1, 24, 5, 6))[1] == [(7, 5)]
    assert len(single.list_outputs()) == 1


def test_proposal_refuses_batches():
    cls = mx.nd.array(np.random.RandomState(0).uniform(0, 1, (2, 24, 3, 3)))
    box = mx.nd.zeros((2, 48, 3, 3))
    info = mx.nd.array([[48, 48, 1], [48, 48, 1]])
    with pytest.raises(ShapeError, match="one image per call.*MultiProposal"):
        invoke("_contrib_Proposal", [cls, box, info], {})


def test_proposal_anchor_count_must_match():
    cls = mx.nd.zeros((1, 10, 3, 3))
    with pytest.raises(OpAttributeError, match="5 anchors .* gives 12"):
        invoke("_contrib_Proposal", [cls, mx.nd.zeros((1, 20, 3, 3)),
                                     mx.nd.array([[48, 48, 1]])], {})


def test_proposal_im_info_larger_than_map():
    cls = mx.nd.zeros((1, 24, 3, 3))
    with pytest.raises(ShapeError, match="exceeds the score map"):
        invoke("_contrib_Proposal", [cls, mx.nd.zeros((1, 48, 3, 3)),
                                     mx.nd.array([[100, 48, 1]])], {})


def test_roi_pooling_hidden_maxidx():
    s = _sym("ROIPooling", ("data", "rois"), {"pooled_size": (2, 2), "spatial_scale": 1.0,
                                               "name": "pool"})
    assert s.list_outputs() == ["pool_output"]
    _, outs, _ = s.infer_type(data="float64", rois="float64")
    assert outs == [np.float64]


def test_roi_shapes_name_the_problem():
    s = _sym("_contrib_ROIAlign", ("data", "rois"),
             {"pooled_size": (2, 2), "spatial_scale": 1.0, "name": "align"})
    with pytest.raises(ShapeError, match=r"align.*\(3, 4\)"):
        s.infer_shape(data=(1, 3, 8, 8), rois=(3, 4))
    ps = _sym("_contrib_ROIAlign", ("data", "rois"),
              {"pooled_size": (2, 2), "spatial_scale": 1.0, "position_sensitive": True})
    with pytest.raises(ShapeError, match="multiple of pooled_size"):
        ps.infer_shape(data=(1, 6, 8, 8), rois=(3, 5))


def test_roi_align_aligned_needs_positive_boxes():
    rois = mx.nd.array([[0, 2, 2, 2, 5]])
    with pytest.raises(ShapeError, match="positive width and height"):
        invoke("_contrib_ROIAlign", [mx.nd.zeros((1, 1, 6, 6)), rois],
               {"pooled_size": (2, 2), "spatial_scale": 1.0, "aligned": True})


def test_roi_align_negative_batch_index_gives_zeros():
    data = mx.nd.array(np.ones((1, 2, 6, 6)))
    rois = mx.nd.array([[-1, 0, 0, 4, 4], [0, 0, 0, 4, 4]])
    out = invoke("_contrib_ROIAlign", [data, rois],
                 {"pooled_size": (2, 2), "spatial_scale": 1.0}).asnumpy()
    assert np.all(out[0] == 0) and np.allclose(out[1], 1)


def test_psroi_pooling_needs_enough_channels():
    with pytest.raises(ShapeError, match="output_dim"):
        invoke("_contrib_PSROIPooling", [mx.nd.zeros((1, 8, 6, 6)), mx.nd.array([[0, 0, 0, 4, 4]])],
               {"spatial_scale": 1.0, "output_dim": 2, "pooled_size": 3})


def test_proposal_float32_only():
    with pytest.raises(DTypeError, match="float32 only"):
        _sym("_contrib_MultiProposal", ("c", "b", "i"), {}).infer_type(c="float64")
