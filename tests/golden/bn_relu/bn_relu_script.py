"""gluon.nn.BatchNormReLU as MXNet 1.9.1 code uses it: a conv + BatchNormReLU net, imperative,
in training mode, hybridized and exported, and BatchNorm weights loaded into BatchNormReLU
(same parameter names). gen_bn_relu.py runs this in MXNet; tests/gluon/test_batchnorm_relu.py
runs it with only the import changed to ``import gluonport as mx``."""
import os

import mxnet as mx
import numpy as np
from mxnet.gluon import nn

VARIANTS = (("default", {}), ("no_scale", {"scale": False, "epsilon": 1e-3}),
            ("global_stats_no_center", {"use_global_stats": True, "center": False}))


def _net(norm):
    with mx.name.NameManager():
        net = nn.HybridSequential()
        with net.name_scope():
            net.add(nn.Conv2D(4, 3, padding=1, in_channels=3), norm)
    net.initialize()
    return net


def _fill(net, seed):
    """Deterministic weights (positive variances and scales)."""
    rng = np.random.RandomState(seed)
    for name, param in sorted(net.collect_params().items()):
        low = 0.5 if name.endswith(("var", "gamma")) else -1.0
        param.set_data(mx.nd.array(rng.uniform(low, 1.5, param.shape)))


def run(workdir):
    out = {}
    x = mx.nd.array(np.random.RandomState(0).uniform(-2, 2, (2, 3, 5, 5)))
    for seed, (tag, kwargs) in enumerate(VARIANTS):
        net = _net(nn.BatchNormReLU(in_channels=4, **kwargs))
        _fill(net, seed)
        out[tag + "_params"] = sorted([k, list(v.shape)] for k, v in
                                      net.collect_params().items())
        out[tag + "_repr"] = repr(net)
        out[tag + "_imperative"] = net(x).asnumpy()
        with mx.autograd.train_mode():
            out[tag + "_train"] = net(x).asnumpy()
        _fill(net, seed)  # training mode may move the running statistics
        net.hybridize()
        out[tag + "_hybrid"] = net(x).asnumpy()
        net.export(os.path.join(workdir, tag))
        with open(os.path.join(workdir, tag + "-symbol.json")) as f:
            out[tag + "_symbol"] = f.read()
    plain = _net(nn.BatchNorm(in_channels=4))
    _fill(plain, 7)
    out["batchnorm_then_relu"] = mx.nd.relu(plain(x)).asnumpy()
    plain.save_parameters(os.path.join(workdir, "bn.params"))
    fused = _net(nn.BatchNormReLU())  # deferred: shapes come from the file
    fused.load_parameters(os.path.join(workdir, "bn.params"))
    out["batchnorm_params_loaded"] = fused(x).asnumpy()
    return out
