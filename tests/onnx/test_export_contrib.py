"""ONNX export of the contrib ops (ops/nn/attention.py, deformable.py, ...) against MXNet 1.9.1
(tests/golden/ops/contrib.npz), at each op's first exportable opset (13; GridSample 16;
DeformConv 19) and the newest; below that opset the export is refused with the reason. Also
dynamic seq/batch for the attention ops, dynamic maps, deformable convolution at the borders
against the executor, and a BERT-style attention block.

Tolerances are the cases' (default rtol 1e-5, atol 1e-6).

Every row of the case table is exported (lowest and newest opset, weights as inputs and as
initializers) and imported back by the op test driver, tests/ops/test_ops.py; this file
keeps the export checks a row cannot express.
"""

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import UnsupportedOpError
from gluonport.onnx import export_symbol, max_opset
from tests.onnx._export_check import check_dynamic, export_case, run_ort
from tests.ops import cases_contrib
from tests.ops._check import forward, load_golden

GOLDEN = load_golden("contrib")
CASES = {c["name"]: c for c in cases_contrib.CASES}
NEWEST = max_opset()

# ops whose ONNX lowering needs a newer opset than 13: (opset, what names the reason)
MIN_OPSET = {"BilinearSampler": (16, "GridSample"), "SpatialTransformer": (16, "GridSample"),
             "_contrib_DeformableConvolution": (19, "DeformConv"),
             "_contrib_ModulatedDeformableConvolution": (19, "DeformConv")}


def _first(case: dict) -> int:
    return MIN_OPSET.get(case["op"], (13, ""))[0]


def _weights(case: dict) -> list[str]:
    """Deformable convolution's weight and bias are parameters in real models."""
    if "Deformable" not in case["op"]:
        return []
    first = 3 if "Modulated" in case["op"] else 2
    return [f"in{i}" for i in range(first, len(case["inputs"]))]


@pytest.mark.parametrize("name", ["bilinear_sampler", "spatial_transformer", "dcn", "mdcn"])
def test_below_first_opset_is_refused(name):
    """Their ONNX operator (GridSample, DeformConv) is newer than the opset: no converter."""
    case = CASES[name]
    opset, _ = MIN_OPSET[case["op"]]
    with pytest.raises(UnsupportedOpError, match=f"opset {opset - 1}.*{case['op']}"):
        export_case(case, GOLDEN[name], opset - 1)


# --- dynamic dims ----------------------------------------------------------------------------
DYNAMIC = {
    "div_sqrt_dim": {"in0": 0}, "div_sqrt_dim_int32": {"in0": 1}, "quadratic": {"in0": 2},
    "selfatt_qk": {"in0": 0},
    "encdec_qk": {"in0": 0, "in1": 0}, "encdec_valatt": {"in0": 0, "in1": 2},
    "grid_affine": {"in0": 0}, "grid_warp": {"in0": 3}, "bilinear_sampler": {"in0": 0, "in1": 0},
    "spatial_transformer": {"in0": 0, "in1": 0}, "correlation_flownet_like": {"in0": 0, "in1": 0},
    "dcn": {"in0": 0, "in1": 0}, "mdcn": {"in0": 0, "in1": 0, "in2": 0},
    "khatri_rao_two": {"in0": 0, "in1": 0}, "khatri_rao_three": {"in1": 0},
}


@pytest.mark.parametrize("name", list(DYNAMIC))
def test_dynamic_axis(name):
    """One model, the axis at other sizes (seq length, batch, map width) vs the executor."""
    case = CASES[name]
    opset = max(_first(case), 17)
    sizes = (2, 5) if name == "grid_warp" else (1, 3)   # a 1-wide warp map divides by 0
    check_dynamic(case, GOLDEN[name], opset, DYNAMIC[name], params=_weights(case), sizes=sizes)


def test_selfatt_batch_and_seq_both_dynamic():
    """Seq and batch vary together: the heads split is (0, -1, 3, dim), nothing baked in."""
    q = mx.sym.var("qkv")
    out = mx.sym.contrib.interleaved_matmul_selfatt_valatt(
        q, mx.sym.softmax(mx.sym.contrib.interleaved_matmul_selfatt_qk(q, heads=2), axis=-1),
        heads=2)
    rng = np.random.RandomState(0)
    shapes = [(4, 2, 18), (7, 3, 18), (1, 1, 18)]
    model = export_symbol(out, {}, in_shapes=[shapes[0]],
                          dynamic_axes={"qkv": {0: "seq", 1: "batch"}})
    for s in shapes:
        x = rng.uniform(-1, 1, s).astype(np.float32)
        np.testing.assert_allclose(run_ort(model, {"qkv": x})[0], forward(out, {"qkv": x})[0],
                                   rtol=1e-5, atol=1e-6)


# --- deformable convolution at the borders -----------------------------------------------------
@pytest.mark.parametrize("modulated", [False, True])
def test_deformable_border_samples(modulated):
    """Offsets that land samples on every border regime: below -1, in (-1, 0), exactly on 0 and
    H - 1, in (H - 1, H), beyond H. DCNv1 (masked, clamped far corner) and DCNv2 differ there;
    both must equal the executor (checked against MXNet by the op tests)."""
    rng = np.random.RandomState(5)
    data = rng.uniform(-1, 1, (1, 2, 5, 6)).astype(np.float32)
    marks = np.array([-1.5, -1.0, -0.5, 0.0, 0.25, 3.5, 4.0, 4.25, 4.5, 5.0, 5.5])
    offset = rng.choice(marks, (1, 18, 5, 6)).astype(np.float32)
    weight = rng.uniform(-1, 1, (3, 2, 3, 3)).astype(np.float32)
    names = ["data", "offset"] + (["mask"] if modulated else []) + ["weight"]
    feed = {"data": data, "offset": offset, "weight": weight}
    if modulated:
        feed["mask"] = rng.uniform(0, 1, (1, 9, 5, 6)).astype(np.float32)
    op = (mx.sym.contrib.ModulatedDeformableConvolution if modulated
          else mx.sym.contrib.DeformableConvolution)
    out = op(*(mx.sym.var(n) for n in names), kernel=(3, 3), pad=(1, 1), num_filter=3,
             no_bias=True)
    model = export_symbol(out, {"weight": weight},
                          in_shapes={k: v.shape for k, v in feed.items() if k != "weight"},
                          opset_version=NEWEST)
    got = run_ort(model, {k: v for k, v in feed.items() if k != "weight"})[0]
    np.testing.assert_allclose(got, forward(out, feed)[0], rtol=1e-5, atol=1e-5)


# --- a BERT-style attention block --------------------------------------------------------------
def test_bert_attention_block():
    """Projection (FullyConnected, flatten=False), interleaved q/k/v attention with
    div-free scaling inside the op, softmax, value attention, output projection."""
    rng = np.random.RandomState(1)
    seq, batch, units, heads = 5, 2, 8, 2
    params = {"qkv_weight": rng.normal(0, 0.3, (3 * units, units)).astype(np.float32),
              "qkv_bias": rng.normal(0, 0.1, 3 * units).astype(np.float32),
              "out_weight": rng.normal(0, 0.3, (units, units)).astype(np.float32),
              "out_bias": rng.normal(0, 0.1, units).astype(np.float32)}
    x = mx.sym.var("data")
    qkv = mx.sym.FullyConnected(x, mx.sym.var("qkv_weight"), mx.sym.var("qkv_bias"),
                                num_hidden=3 * units, flatten=False)
    att = mx.sym.softmax(mx.sym.contrib.interleaved_matmul_selfatt_qk(qkv, heads=heads), axis=-1)
    ctx_vec = mx.sym.contrib.interleaved_matmul_selfatt_valatt(qkv, att, heads=heads)
    out = mx.sym.FullyConnected(ctx_vec, mx.sym.var("out_weight"), mx.sym.var("out_bias"),
                                num_hidden=units, flatten=False)
    data = rng.uniform(-1, 1, (seq, batch, units)).astype(np.float32)
    model = export_symbol(out, params, in_shapes={"data": data.shape},
                          dynamic_axes={"data": {0: "seq", 1: "batch"}})
    for d in (data, rng.uniform(-1, 1, (3, 4, units)).astype(np.float32)):
        np.testing.assert_allclose(run_ort(model, {"data": d})[0],
                                   forward(out, {"data": d, **params})[0], rtol=1e-5,
                                   atol=1e-6)
