"""Make InsightFace-style checkpoints with the real MXNet 1.9.1 (the oracle).

InsightFace's face recognition (ArcFace) and detection (RetinaFace) models are among the most
used MXNet checkpoints still in circulation. They were written with MXNet's symbol API and saved
with ``mx.model.save_checkpoint`` (``arg:``/``aux:`` keys in the params file), and they use ops
the Gluon model zoo does not: scalar pre-processing on the input, PReLU through
``LeakyReLU(act_type='prelu')``, depthwise convolutions, nearest ``UpSampling`` with ``Crop`` to
line up odd feature-map sizes, ``SoftmaxActivation(mode='channel')`` between two ``Reshape``s
with 0/-1 codes, a ``fix_gamma=True`` BatchNorm on the embedding, and many-output groups.
These are small stand-ins with the same op patterns (random weights, fixed seed).

Run with the oracle's Python from the repository root:

    ~/.cache/gluonport-oracle/bin/python tests/golden/insightface/gen_insightface.py

Writes, for each model NAME: ``NAME-symbol.json``, ``NAME-0000.params`` (save_checkpoint),
``NAME-input.npy`` (batch 2) and ``NAME-outputs.npz`` (MXNet's outputs, keyed by output name).
"""
import os

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def conv_bn_act(x, name, num_filter, kernel=(3, 3), stride=(1, 1), pad=(1, 1), num_group=1,
                act=True):
    x = mx.sym.Convolution(x, num_filter=num_filter, kernel=kernel, stride=stride, pad=pad,
                           num_group=num_group, no_bias=True, name=name + "_conv2d")
    x = mx.sym.BatchNorm(x, fix_gamma=False, eps=2e-5, momentum=0.9, name=name + "_batchnorm")
    if act:
        x = mx.sym.LeakyReLU(x, act_type="prelu", name=name + "_relu")
    return x


def arcface_mbf():
    """MobileFaceNet-like embedding net (the shape of InsightFace's 'fmobilefacenet')."""
    data = mx.sym.Variable("data")
    x = mx.sym.identity(data, name="id")
    x = x - 127.5
    x = x * 0.0078125
    x = conv_bn_act(x, "conv_1", 16, stride=(2, 2))
    x = conv_bn_act(x, "conv_2_dw", 16, num_group=16)
    for i, (c, s) in enumerate(((24, 2), (24, 1), (32, 2), (32, 1), (48, 2))):
        shortcut = x
        y = conv_bn_act(x, "res_%d_conv_sep" % i, c * 2, kernel=(1, 1), pad=(0, 0))
        y = conv_bn_act(y, "res_%d_conv_dw" % i, c * 2, stride=(s, s), num_group=c * 2)
        y = conv_bn_act(y, "res_%d_conv_proj" % i, c, kernel=(1, 1), pad=(0, 0), act=False)
        x = y + shortcut if s == 1 else y
    x = conv_bn_act(x, "conv_6sep", 64, kernel=(1, 1), pad=(0, 0))
    # global depthwise conv over the 7x7 map, then the embedding
    x = conv_bn_act(x, "conv_6dw7_7", 64, kernel=(7, 7), pad=(0, 0), num_group=64, act=False)
    x = mx.sym.Dropout(x, p=0.4, name="dropout")
    x = mx.sym.FullyConnected(x, num_hidden=32, name="pre_fc1")
    x = mx.sym.BatchNorm(x, fix_gamma=True, eps=2e-5, momentum=0.9, name="fc1")
    return x, (2, 3, 112, 112)


def retinaface_mnet():
    """RetinaFace-mnet-like detector: 3 strides, FPN with UpSampling + Crop, 9 outputs."""
    data = mx.sym.Variable("data")
    x = conv_bn_act(data, "mobilenet0_conv0", 8, stride=(2, 2))
    feats, cin = [], 8
    for i, c in enumerate((16, 24, 32, 48)):
        x = conv_bn_act(x, "mobilenet0_conv%d_dw" % (i + 1), cin, num_group=cin, stride=(2, 2))
        x = conv_bn_act(x, "mobilenet0_conv%d_pw" % (i + 1), c, kernel=(1, 1), pad=(0, 0))
        cin = c
        if i >= 1:
            feats.append(x)
    c8, c16, c32 = feats
    outputs = []
    lateral32 = conv_bn_act(c32, "rf_c3_lateral", 16, kernel=(1, 1), pad=(0, 0))
    up = mx.sym.UpSampling(lateral32, scale=2, sample_type="nearest", num_args=1, name="rf_c3_up")
    lateral16 = conv_bn_act(c16, "rf_c2_lateral", 16, kernel=(1, 1), pad=(0, 0))
    up = mx.sym.Crop(*[up, lateral16], num_args=2, name="crop0")
    p16 = conv_bn_act(up + lateral16, "rf_c2_aggr", 16)
    up = mx.sym.UpSampling(p16, scale=2, sample_type="nearest", num_args=1, name="rf_c2_up")
    lateral8 = conv_bn_act(c8, "rf_c1_red_conv", 16, kernel=(1, 1), pad=(0, 0))
    up = mx.sym.Crop(*[up, lateral8], num_args=2, name="crop1")
    p8 = conv_bn_act(up + lateral8, "rf_c1_aggr", 16)
    num_anchors = 2
    for stride, feat in ((32, lateral32), (16, p16), (8, p8)):
        ctx = mx.sym.Activation(conv_bn_act(feat, "ssh_m%d" % stride, 16, act=False),
                                act_type="relu", name="ssh_m%d_relu" % stride)
        score = mx.sym.Convolution(ctx, num_filter=2 * num_anchors, kernel=(1, 1),
                                   name="face_rpn_cls_score_stride%d" % stride)
        score = mx.sym.Reshape(score, shape=(0, 2, -1, 0),
                               name="face_rpn_cls_score_reshape_stride%d" % stride)
        prob = mx.sym.SoftmaxActivation(score, mode="channel",
                                        name="face_rpn_cls_prob_stride%d" % stride)
        prob = mx.sym.Reshape(prob, shape=(0, 2 * num_anchors, -1, 0),
                              name="face_rpn_cls_prob_reshape_stride%d" % stride)
        bbox = mx.sym.Convolution(ctx, num_filter=4 * num_anchors, kernel=(1, 1),
                                  name="face_rpn_bbox_pred_stride%d" % stride)
        landmark = mx.sym.Convolution(ctx, num_filter=10 * num_anchors, kernel=(1, 1),
                                      name="face_rpn_landmark_pred_stride%d" % stride)
        outputs += [prob, bbox, landmark]
    # an odd input size, so that the upsampled maps are one larger than the laterals
    return mx.sym.Group(outputs), (2, 3, 100, 76)



def make(name, factory, seed):
    np.random.seed(seed)
    mx.random.seed(seed)
    sym, shape = factory()
    arg_shapes, _, aux_shapes = sym.infer_shape(data=shape)
    rng = np.random.RandomState(seed)
    args, auxs = {}, {}
    for n, s in zip(sym.list_arguments(), arg_shapes):
        if n == "data":
            continue
        if n.endswith("_gamma") and "relu" in n:  # PReLU slopes
            v = rng.uniform(0.05, 0.3, s)
        elif n.endswith(("_gamma", "_beta")):
            v = rng.uniform(0.5, 1.5, s)
        elif n.endswith("_bias"):
            v = rng.uniform(-0.1, 0.1, s)
        else:
            fan_in = int(np.prod(s[1:]))
            v = rng.normal(0, np.sqrt(2.0 / fan_in), s)
        args[n] = mx.nd.array(v.astype("float32"))
    for n, s in zip(sym.list_auxiliary_states(), aux_shapes):
        v = rng.uniform(-0.2, 0.2, s) if n.endswith("mean") else rng.uniform(0.5, 1.5, s)
        auxs[n] = mx.nd.array(v.astype("float32"))
    prefix = os.path.join(HERE, name)
    mx.model.save_checkpoint(prefix, 0, sym, args, auxs)
    low, high = (0, 255) if name.startswith("arcface") else (-1, 1)
    x = rng.uniform(low, high, shape).astype("float32")
    mod = mx.mod.Module(sym, data_names=["data"], label_names=None, context=mx.cpu())
    mod.bind(data_shapes=[("data", shape)], for_training=False)
    mod.set_params(args, auxs)
    mod.forward(mx.io.DataBatch([mx.nd.array(x)]), is_train=False)
    outs = {n: o.asnumpy() for n, o in zip(sym.list_outputs(), mod.get_outputs())}
    np.save(prefix + "-input.npy", x)
    np.savez(prefix + "-outputs.npz", **outs)
    print(name, shape, {k: v.shape for k, v in outs.items()})


if __name__ == "__main__":
    make("arcface_mbf", arcface_mbf, 11)
    make("retinaface_mnet", retinaface_mnet, 12)
