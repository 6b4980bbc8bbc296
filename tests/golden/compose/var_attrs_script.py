"""Composition cases for MXNet's FSetInputVarAttrOnCompose, written against MXNet's API.

``gen_var_attrs.py`` runs this text in MXNet 1.9.1; the test runs the same text with
``import gluonport as mx`` and compares every ``tojson()`` byte for byte.
"""
import mxnet as mx


def cases():
    data = mx.sym.var("data")
    out = {}
    # auto-created moving statistics (and a user gamma that already has an __init__)
    gamma = mx.sym.var("g", init=mx.init.One())
    out["bn_user_vars"] = mx.sym.BatchNorm(data, moving_mean=mx.sym.var("mm"), gamma=gamma,
                                           name="bn1")
    out["bn_auto"] = mx.sym.BatchNorm(data, fix_gamma=False, eps=2e-5, name="bn2")
    # a moving_mean variable that already has an __init__ keeps it
    keep = mx.sym.var("keep_mean", init="zeros")
    out["bn_keeps_init"] = mx.sym.BatchNorm(data, moving_mean=keep, name="bn3")
    out["prelu"] = mx.sym.LeakyReLU(data, act_type="prelu", name="pr")
    out["prelu_user_gamma"] = mx.sym.LeakyReLU(data, gamma=mx.sym.var("alpha"), act_type="prelu",
                                               name="pr2")
    out["leaky"] = mx.sym.LeakyReLU(data, act_type="leaky", name="lk")
    out["sync_bn"] = mx.sym.contrib.SyncBatchNorm(data, key="k", name="sbn")
    out["bn_relu"] = mx.sym.contrib.BatchNormWithReLU(data, name="bnr")
    # one variable feeding two BatchNorms: the first composition sets it
    shared = mx.sym.var("shared")
    a = mx.sym.BatchNorm(data, moving_var=shared, name="bn4")
    out["shared"] = mx.sym.BatchNorm(a, moving_mean=shared, name="bn5")
    # UpSampling sets input 1 whatever the sample_type: the bilinear weight, or the second
    # image of a nearest UpSampling (a caller's variable without an __init__ gets it too)
    out["upsampling_bilinear"] = mx.sym.UpSampling(data, scale=2, sample_type="bilinear",
                                                   num_filter=3, name="up")
    out["upsampling_nearest"] = mx.sym.UpSampling(data, mx.sym.var("second"), scale=2,
                                                  sample_type="nearest", num_args=2, name="upn")
    return {k: v.tojson() for k, v in out.items()}
