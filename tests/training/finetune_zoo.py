"""MXNet 1.x user code: fine-tune a model-zoo net with a new output layer, then export it.

The net is the zoo's own ResNet V1 (``gluon.model_zoo.vision.ResNetV1`` with ``BasicBlockV1``,
as ``get_model('resnet18_v1')`` builds it) in a small configuration: one block per stage,
channels 16-128, thumbnail stem for 32x32 inputs (about 300k parameters). resnet18_v1 itself
(11.2M parameters, 45 MB) would make the goldens too large, and mobilenet0.25 (the zoo's
smallest) is too ill-conditioned to compare: a 1-ulp change of its initial weights (batch 4,
64x64 to 224x224 inputs) moved its step-2 weights by up to 3e-2 relative here,
so no float32 reimplementation could match it at 1e-4. Not pretrained (no network): the
"pretrained" weights come from a file (MXNet-initialized with a fixed seed, BatchNorm running
statistics from recorded passes). The output Dense(10) is replaced by a Dense(4) whose weights
are loaded from a second file (a user would initialize it with Xavier, whose draws only MXNet's
generator reproduces). Hybridized, 2 SGD steps of batch 8 at 3x32x32, then export and
SymbolBlock.imports. Returns the loss, every parameter after each step, the exported file's
parameter names, and the exported and the trained net's inference outputs."""
import os

import mxnet as mx
import numpy as np
from mxnet import autograd, gluon
from mxnet.gluon import nn
from mxnet.gluon.model_zoo import vision

STEPS, BATCH, CLASSES, SIZE = 2, 8, 4, 32
PRETRAINED = "finetune_zoo_pretrained.params"
HEAD = "finetune_zoo_head.params"


def data():
    rs = np.random.RandomState(18)
    # blocky (8x8 upsampled) images: structure that survives to the last (4x4) layers
    coarse = rs.uniform(-1, 1, (STEPS * BATCH + 2, 3, 8, 8))
    x = np.repeat(np.repeat(coarse, SIZE // 8, axis=2), SIZE // 8, axis=3).astype("float32")
    y = rs.randint(0, CLASSES, STEPS * BATCH + 2).astype("float32")
    return x, y


def zoo_net():
    return vision.ResNetV1(vision.BasicBlockV1, [1, 1, 1, 1], [16, 16, 32, 64, 128], classes=10,
                           thumbnail=True, prefix="resnet_")


def new_head():
    return nn.Dense(CLASSES, prefix="head_")


def init(folder):
    mx.random.seed(8)
    net = zoo_net()
    # He (fan-in) initialization, as for ReLU nets
    net.initialize(mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2))
    # "pretrained" BatchNorm statistics, as pretraining leaves them: recorded passes move
    # running_mean/running_var towards the data's (MXNet 1.9.1 updates them in the backward
    # pass, with momentum 0.9); no optimizer step, so the weights stay as initialized
    warm = np.random.RandomState(28).uniform(-1, 1, (30, 8, 3, 8, 8))
    warm = np.repeat(np.repeat(warm, SIZE // 8, axis=3), SIZE // 8, axis=4).astype("float32")
    for batch in warm:
        with autograd.record():
            y = net(mx.nd.array(batch))
        y.backward()
    net.save_parameters(os.path.join(folder, PRETRAINED))
    head = new_head()
    head.initialize(mx.init.Xavier())
    head(mx.nd.zeros((1, 128)))
    head.save_parameters(os.path.join(folder, HEAD))


def run(folder, export_folder):
    net = zoo_net()
    net.load_parameters(os.path.join(folder, PRETRAINED))
    with net.name_scope():
        net.output = new_head()
    net.output.load_parameters(os.path.join(folder, HEAD))
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd",
                            {"learning_rate": 0.01, "momentum": 0.9, "wd": 1e-4})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    x, y = data()
    out = {}
    for step in range(STEPS):
        xb = mx.nd.array(x[step * BATCH:(step + 1) * BATCH])
        yb = mx.nd.array(y[step * BATCH:(step + 1) * BATCH])
        with autograd.record():
            loss = loss_fn(net(xb), yb)
        loss.backward()
        trainer.step(BATCH)
        out[f"step{step}:loss"] = loss.asnumpy()
        for name, p in net.collect_params().items():
            out[f"step{step}:{name}"] = p.data().asnumpy()
    test = mx.nd.array(x[STEPS * BATCH:])
    out["predict"] = net(test).asnumpy()
    prefix = os.path.join(export_folder, "finetuned")
    net.export(prefix, epoch=0)
    names = sorted(mx.nd.load(prefix + "-0000.params"))
    out["exported_names"] = np.array(names)
    imported = gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"],
                                         prefix + "-0000.params")
    out["imported_predict"] = imported(test).asnumpy()
    return out
