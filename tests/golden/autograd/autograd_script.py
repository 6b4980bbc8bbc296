"""Model code that reads MXNet 1.x's autograd state, as GluonCV's detectors and evaluation
scripts do. gen_autograd.py runs it in MXNet 1.9.1; tests/gluon/test_autograd.py runs it with
only the import changed to ``import gluonport as mx``."""
import mxnet as mx
import numpy as np
from mxnet import autograd


class Head(mx.gluon.HybridBlock):
    """Returns raw scores while training and probabilities otherwise (GluonCV's pattern)."""

    def __init__(self, **kwargs):
        super(Head, self).__init__(**kwargs)
        with self.name_scope():
            self.dense = mx.gluon.nn.Dense(4)
            self.bn = mx.gluon.nn.BatchNorm()

    def hybrid_forward(self, F, x):
        y = self.bn(self.dense(x))
        if autograd.is_training():
            return y
        return F.softmax(y)


def run():
    out = {"states": []}

    def state(tag):
        out["states"].append([tag, autograd.is_recording(), autograd.is_training()])

    state("default")
    with autograd.record():
        state("record")
        with autograd.predict_mode():
            state("record+predict_mode")
        with autograd.pause():
            state("record+pause")
        state("record again")
    with autograd.train_mode():
        state("train_mode")
    with autograd.record(train_mode=False):
        state("record(train_mode=False)")
    prev = autograd.set_training(True)
    state("set_training(True)")
    autograd.set_training(prev)
    out["prev"] = prev

    net = Head()
    net.initialize()
    rng = np.random.RandomState(0)
    x = mx.nd.array(rng.uniform(-1, 1, (6, 5)))
    net(x)  # deferred init, then fixed weights (the two RNGs differ)
    for name, param in sorted(net.collect_params().items()):
        low = 0.5 if name.endswith(("var", "gamma")) else -0.5
        param.set_data(mx.nd.array(rng.uniform(low, low + 1, param.shape)))
    out["predict"] = net(x).asnumpy()
    net.hybridize()
    out["predict_hybrid"] = net(x).asnumpy()
    # training-mode calls last: MXNet updates BatchNorm's moving statistics in them (gluonport
    # does not), which would change later predictions; training outputs use batch statistics
    net.hybridize(False)
    with autograd.record():
        out["train"] = net(x).asnumpy()     # batch statistics, raw scores
    with autograd.train_mode():
        out["train_bn_only"] = net.bn(x[:, :4]).asnumpy()
    net.hybridize()
    with autograd.record():
        out["train_hybrid"] = net(x).asnumpy()
    return out
