"""ONNX export of the convolution backward kernels of :mod:`.conv_grad`
(``_backward_Convolution``, ``_backward_Deconvolution``, ``_backward_UpSampling``).

ONNX has no convolution-gradient operator. Only the outputs some node reads are built (the
first layer's data gradient, whose data is outside the graph, is not). Convolution:

* small images (at most ``_GEMM_POSITIONS`` output positions per sample; for the weight
  gradient, and the data gradient of a convolution that shrinks the image, up to
  ``_GEMM_POSITIONS_WEIGHT``): the weight and data gradients are one GEMM each over the whole
  batch (:mod:`..lowering.conv_gemm`: im2col and col2im as one ``Gather`` each), where
  onnxruntime's ``ConvTranspose`` and ``Conv`` would run one matrix-vector-like GEMM per
  sample;
* otherwise a stride-1 data gradient is a ``Conv`` of the flipped weight, other data gradients
  a ``ConvTranspose`` (``output_padding`` restores the data size);
  a weight gradient is a grouped ``Conv`` over transposed tensors -- the batch becomes the
  channel axis, one operand's channels the batch, stride and dilation swap -- sliced to the
  kernel size and transposed back.

Deconvolution: the data gradient is a ``Conv``, the weight gradient the transposed ``Conv`` as
above. A bias gradient is a ``ReduceSum``. float16 and float64 (onnxruntime has no double Conv)
are computed in float32. Channels-last layouts are refused with the reason.
"""

from __future__ import annotations

import numpy as np

from ..lowering import LoweringContext, conv_gemm, deliver, lowering, onnx_reduce, window
from .conv import Geometry, deconv_pad_adj, geometry

__all__: list[str] = []


def _inputs_in(ctx: LoweringContext, work, n: int) -> list[str]:
    """The first ``n`` inputs in ``work`` (the bias is read for its dtype only)."""
    return [ctx.inputs[i] if ctx.in_dtypes[i] == work else ctx.cast_to(ctx.inputs[i], work)
            for i in range(n)]


def _out(ctx: LoweringContext, k: int, y: str) -> None:
    """``y`` (float32) as output ``k``, cast to the dtype of input ``k + 1`` if it differs."""
    deliver(ctx, y, k, np.float32)


def _geometry(ctx: LoweringContext, op: str) -> Geometry:
    g = geometry(ctx.params, op)
    if g.channels_last:
        raise ctx.fail(f"the gradient of a channels-last {op} has no ONNX export here; use a "
                       "channels-first layout (MXNet 1.9.1 runs channels-last only on GPU)")
    for i in (1, 2):
        if any(ctx.is_dynamic(i, a) for a in range(2, len(ctx.in_shapes[i]))):
            raise ctx.fail(f"the gradient of {op} needs the spatial dims fixed at export time")
    return g


def _weight_grad(ctx: LoweringContext, a: str, b: str, a_ch: int, b_ch: int, groups: int,
                 g: Geometry, pads, a_sp, b_sp) -> str:
    """``dW[f, c, k] = sum_n,o a[n, f, o] * b_pad[n, c, o*stride + k*dilate]`` as one grouped
    ``Conv``: input ``b`` as (C/G, G*N, *S), weight ``a`` as (G*F/G, N, *O), stride and dilation
    swapped; the result (C/G, F, *K') is sliced to the kernel and made (F, C/G, *kernel)."""
    nd = g.nd
    sp_b = list(range(3, 3 + nd))
    xb = ctx.make("Reshape", [b, ctx.ints([0, groups, b_ch // groups] + list(b_sp), "b5")])
    xb = ctx.make("Transpose", [xb], perm=[2, 1, 0] + sp_b)
    xb = ctx.make("Reshape", [xb, ctx.ints([b_ch // groups, -1] + list(b_sp), "b_t")])
    wa = ctx.make("Reshape", [a, ctx.ints([0, groups, a_ch // groups] + list(a_sp), "a5")])
    wa = ctx.make("Transpose", [wa], perm=[1, 2, 0] + sp_b)
    wa = ctx.make("Reshape", [wa, ctx.ints([a_ch, -1] + list(a_sp), "a_t")])
    y = ctx.make("Conv", [xb, wa], strides=list(g.dilate), dilations=list(g.stride),
                 pads=list(pads) * 2, group=groups)
    axes = list(range(2, 2 + nd))
    y = ctx.make("Slice", [y, ctx.ints([0] * nd, "k0"), ctx.ints(list(g.kernel), "k"),
                           ctx.ints(axes, "kaxes")])
    return ctx.make("Transpose", [y], perm=[1, 0] + axes)


def _data_grad_as_conv(ctx: LoweringContext, og: str, w: str, g: Geometry, groups: int,
                       w_shape) -> str:
    """A stride-1 convolution's data gradient as a ``Conv`` of ``og`` with the flipped weight,
    its two channel axes swapped: ``dx[i] = sum_k w[k] og[i + p - k*d]``, a convolution padded
    by ``d*(k-1) - p``. onnxruntime's ``ConvTranspose`` computes the same sums per sample as a
    GEMM and a col2im pass, which took about twice as long as this ``Conv`` (resnet18_v1's
    64-channel 3x3 layers on 8x8 images, batch 32, two threads: 2.2-2.4 ms against 1.2 ms)."""
    wt = window.deconv_as_conv_weight(ctx, w, groups, w_shape, np.float32)
    pads = [g.dilated(i) - 1 - q for i, q in enumerate(g.pad)]
    return ctx.make("Conv", [og, wt], kernel_shape=list(g.kernel), dilations=list(g.dilate),
                    pads=pads * 2, group=groups)


def _bias_grad(ctx: LoweringContext, og: str, nd: int) -> str:
    return onnx_reduce(ctx, "ReduceSum", og, [0] + list(range(2, 2 + nd)), keepdims=False)


#: at most this many output positions per sample: a data gradient (resp. a weight gradient) is
#: a GEMM over the batch (:mod:`..lowering.conv_gemm`) instead of onnxruntime's per-sample
#: ConvTranspose or Conv (Conv). One thread, batch 32, ConvTranspose/Conv vs GEMM ms: 512x1x1
#: 3x3 13.8/2.2 (data), 8.1/2.4 (weight); 256x2x2 10.3/1.6, 3.7/1.9; 128x4x4 2.9/1.9, 3.5/1.8;
#: 64x8x8 2.8/3.3, 6.3/3.3; 3->64 7x7 s2 on 32x32 (256 positions) 2.7/26, 3.9/9.0. The
#: transposed Conv of a weight gradient makes one skinny GEMM per input channel, as wide as the
#: kernel has taps, so weight gradients gain up to more positions: whole backward graphs,
#: resnet18_v1 b32 (3x3) 99.3 ms with GEMMs up to 16 positions, 92.6 ms up to 64. Kernels of
#: more taps were held at 16 while im2col was a Slice per tap (LeNet's 5x5 on 8x8 outputs:
#: 11.8 ms against 9.9); with im2col one Gather, 64 made whole LeNet steps 12% faster at batch
#: 32 and LeNet-BN's 7% (in-process A/B, two threads, 12 turns). resnet18's 7x7 first layer
#: (3 channels, 256 positions) stays a transposed Conv (2.5 ms; as a GEMM, a 1.3 ms Gather of
#: 3-value blocks and a 1.6 ms MatMul); limits of 64 for the data gradient and the forward
#: gained nothing on resnet18.
_GEMM_POSITIONS = 16
_GEMM_POSITIONS_WEIGHT = 64
#: a stride-1 data gradient whose data has at least this many times the output's positions
#: (a convolution without enough padding to keep the size: LeNet's 5x5 on 12x12 -> 8x8) is a
#: GEMM up to ``_GEMM_POSITIONS_WEIGHT`` positions (strided ones stay a ConvTranspose there:
#: 64->128 3x3 s2 on 16x16 3.3 ms against 4.2 as a GEMM, 1x1 s2 0.8 against 1.5): the Conv
#: of the flipped weight computes every data position over all taps (here 2.25x the GEMM's
#: multiply-adds, mostly on padding zeros) with as many GEMM rows as the data has channels
#: (20). Batch 32, two threads, Conv /
#: GEMM ms: 20<-50 5x5 12x12 7.1-7.7/2.9; 32<-64 3x3 10x10 1.7-2.0/1.5; 64<-64 3x3 8x8
#: padded 1.8-1.9/1.9 (stays a Conv). Whole steps at batch 32: LeNet and LeNet-BN 16-17%
#: faster (in-process A/B, two threads, 12 of 12 turns); at batch 1 3-5%.
_SHRINK = 1.5


def _gemm_shape(g: Geometry, groups: int, n: int, c: int, f: int, x_sp, og_sp, limit: int
                ) -> conv_gemm.ConvShape | None:
    if groups != 1 or int(np.prod(og_sp)) > limit:
        return None
    return conv_gemm.conv_shape(n, c, f, x_sp, og_sp, g.kernel, g.stride, g.dilate, g.pad)


def _conv_onnx(ctx: LoweringContext) -> None:
    """The outputs read later only: the first layer's data gradient is not computed."""
    p = ctx.params
    g = _geometry(ctx, "Convolution")
    og, x, w = _inputs_in(ctx, np.float32, 3)
    x_sp = [int(v) for v in ctx.in_shapes[1][2:]]
    og_sp = [int(v) for v in ctx.in_shapes[0][2:]]
    n, c, f = int(ctx.in_shapes[1][0]), int(ctx.in_shapes[1][1]), p.num_filter
    if ctx.wants(1):
        cs = _gemm_shape(g, p.num_group, n, c, f, x_sp, og_sp, _GEMM_POSITIONS_WEIGHT)
        if cs is not None:
            dw = conv_gemm.weight_grad(ctx, og, conv_gemm.im2col_rows(ctx, x, cs), cs)
        else:
            dw = _weight_grad(ctx, og, x, f, c, p.num_group, g, g.pad, og_sp, x_sp)
        _out(ctx, 1, dw)
    if ctx.wants(0):
        shrinks = all(v == 1 for v in g.stride) and np.prod(x_sp) >= _SHRINK * np.prod(og_sp)
        cs = _gemm_shape(g, p.num_group, n, c, f, x_sp, og_sp,
                         _GEMM_POSITIONS_WEIGHT if shrinks else _GEMM_POSITIONS)
        if cs is not None:
            rows = conv_gemm.grad_rows(ctx, og, cs)
            dx = conv_gemm.data_grad(ctx, rows, conv_gemm.weight_rows(ctx, w, cs), cs)
        elif all(s == 1 for s in g.stride) and all(
                g.dilated(i) - 1 >= q for i, q in enumerate(g.pad)):
            dx = _data_grad_as_conv(ctx, og, w, g, p.num_group, ctx.in_shapes[2])
        else:
            out_pad = [(v + 2 * q - d) % s for v, q, d, s in
                       zip(x_sp, g.pad, (g.dilated(i) for i in range(g.nd)), g.stride)]
            dx = ctx.make("ConvTranspose", [og, w], kernel_shape=list(g.kernel),
                          strides=list(g.stride), dilations=list(g.dilate),
                          pads=list(g.pad) * 2, group=p.num_group,
                          output_padding=out_pad if any(out_pad) else None)
        _out(ctx, 0, dx)
    if len(ctx.inputs) > 3 and ctx.wants(2):
        _out(ctx, 2, _bias_grad(ctx, og, g.nd))


def _deconv_onnx(ctx: LoweringContext) -> None:
    p = ctx.params
    g = _geometry(ctx, "Deconvolution")
    og, x, w = _inputs_in(ctx, np.float32, 3)
    pad, _ = deconv_pad_adj(p, g, [int(v) for v in ctx.in_shapes[1][2:]])
    dx = ctx.make("Conv", [og, w], kernel_shape=list(g.kernel), strides=list(g.stride),
                  dilations=list(g.dilate), pads=list(pad) * 2, group=p.num_group)
    _out(ctx, 0, dx)
    c, f = int(ctx.in_shapes[1][1]), p.num_filter
    x_sp = [int(v) for v in ctx.in_shapes[1][2:]]
    og_sp = [int(v) for v in ctx.in_shapes[0][2:]]
    _out(ctx, 1, _weight_grad(ctx, x, og, c, f, p.num_group, g, pad, x_sp, og_sp))
    if len(ctx.inputs) > 3:
        _out(ctx, 2, _bias_grad(ctx, og, g.nd))


def _up_onnx(ctx: LoweringContext) -> None:
    """Block sums: ``og`` (or its channel slice) reshaped to (N, C, H, s, W, s), ReduceSum."""
    p = ctx.params
    (og,) = _inputs_in(ctx, np.float32, 1)
    oh, start = int(ctx.in_shapes[0][2]), 0
    for k, shape in enumerate(ctx.in_shapes[1:]):
        c, h, w = (int(v) for v in shape[1:])
        s = oh // h
        part = og
        if p.multi_input_mode == "concat":
            part = ctx.make("Slice", [og, ctx.ints([start], "c0"), ctx.ints([start + c], "c1"),
                                      ctx.ints([1], "caxis")])
            start += c
        blocks = ctx.make("Reshape", [part, ctx.ints([0, c, h, s, w, s], "blocks")])
        _out(ctx, k, onnx_reduce(ctx, "ReduceSum", blocks, [3, 5], keepdims=False))


lowering("_backward_Convolution")(_conv_onnx)
lowering("_backward_Deconvolution")(_deconv_onnx)
lowering("_backward_UpSampling")(_up_onnx)
