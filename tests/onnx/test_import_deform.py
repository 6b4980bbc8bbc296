"""DeformConv imported onto MXNet's ``_contrib_ModulatedDeformableConvolution``
(gluonport/onnx/importers/sampling.py), against onnx's reference evaluator on the same model
(an independent bilinear implementation; the onnxruntime build here has no DeformConv kernel).

Offsets are random normals of a few pixels, so samples land between pixels, in the padding and
outside the image (where DCNv2 and ONNX both read zero); masks are random in [0, 1].
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from gluonport.errors import UnsupportedOpError
from gluonport.onnx.backend import prepare
from gluonport.onnx.importer import import_graph
from tests.onnx._import_check import make_model, vi

F = TensorProto.FLOAT

# (input shape, weight shape, attributes, with mask, with bias)
CASES = [
    ((1, 2, 6, 7), (3, 2, 3, 3), {}, False, False),
    ((2, 4, 7, 6), (6, 2, 3, 2), dict(group=2, offset_group=2, pads=[1, 1, 1, 1]), True, True),
    ((1, 3, 9, 8), (4, 3, 2, 3), dict(strides=[2, 1], dilations=[1, 2], pads=[2, 0, 1, 1]),
     True, False),
    ((2, 2, 5, 5), (2, 1, 3, 3), dict(group=2, pads=[1, 2, 0, 1], strides=[2, 2]), False, True),
]


def _out_hw(shape, wshape, attrs):
    pads = attrs.get("pads", [0, 0, 0, 0])
    strides = attrs.get("strides", [1, 1])
    dil = attrs.get("dilations", [1, 1])
    return [(shape[2 + a] + pads[a] + pads[2 + a] - (dil[a] * (wshape[2 + a] - 1) + 1))
            // strides[a] + 1 for a in (0, 1)]


@pytest.mark.parametrize("shape, wshape, attrs, with_mask, with_bias", CASES,
                         ids=[f"case{i}" for i in range(len(CASES))])
def test_deform_conv_matches_the_reference(shape, wshape, attrs, with_mask, with_bias):
    rng = np.random.default_rng(len(shape) + wshape[0])
    oh, ow = _out_hw(shape, wshape, attrs)
    taps = attrs.get("offset_group", 1) * wshape[2] * wshape[3]
    feeds = {"x": rng.normal(size=shape).astype(np.float32),
             "w": rng.normal(size=wshape).astype(np.float32),
             "offset": rng.normal(0, 2, (shape[0], 2 * taps, oh, ow)).astype(np.float32)}
    names = ["x", "w", "offset"]
    if with_bias:
        feeds["b"] = rng.normal(size=wshape[0]).astype(np.float32)
    names.append("b" if with_bias else "")
    if with_mask:
        feeds["mask"] = rng.uniform(size=(shape[0], taps, oh, ow)).astype(np.float32)
        names.append("mask")
    node = helper.make_node("DeformConv", names, ["y"], kernel_shape=list(wshape[2:]), **attrs)
    model = make_model([node], [vi(k, F, list(v.shape)) for k, v in feeds.items()],
                       vi("y", F, [shape[0], wshape[0], oh, ow]), opset=19)
    want = ReferenceEvaluator(model).run(None, feeds)[0]
    got = prepare(model).run(feeds)[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_deform_conv_3d_is_refused():
    node = helper.make_node("DeformConv", ["x", "w", "o"], ["y"], kernel_shape=[1, 1, 1])
    model = make_model([node], [vi("x", F, [1, 1, 2, 2, 2]), vi("w", F, [1, 1, 1, 1, 1]),
                                vi("o", F, [1, 3, 2, 2, 2])], vi("y", F, [1, 1, 2, 2, 2]),
                       opset=19)
    with pytest.raises(UnsupportedOpError, match="2-D"):
        import_graph(model)
