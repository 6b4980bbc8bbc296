"""An evaluation script written for MXNet 1.9.1 (``import mxnet as mx``): a model file that keeps
its training losses as child blocks, and a validation loop that computes losses from
``mx.gluon.loss`` on a held-out set, imperatively and hybridized.

gen_loss.py runs ``run()`` in MXNet 1.9.1 and stores what it returns; tests/gluon/test_loss.py
runs this file with only its import line changed to ``import gluonport as mx``.
"""

import numpy as np
import mxnet as mx

nn = mx.gluon.nn
gloss = mx.gluon.loss


class TwoHeads(mx.gluon.HybridBlock):
    """A classifier + regressor whose forward returns its training loss and its logits."""

    def __init__(self, **kwargs):
        super(TwoHeads, self).__init__(**kwargs)
        with self.name_scope():
            self.body = nn.Dense(8, activation="relu", in_units=6)
            self.cls = nn.Dense(4, in_units=8)
            self.reg = nn.Dense(2, in_units=8)
            self.ce = gloss.SoftmaxCrossEntropyLoss()
            self.l2 = gloss.L2Loss(weight=0.5)

    def hybrid_forward(self, F, x, label, target):
        h = self.body(x)
        logits = self.cls(h)
        return self.ce(logits, label) + self.l2(self.reg(h), target), logits


def _data():
    rs = np.random.RandomState(7)
    x = rs.randn(20, 6).astype("float32")
    label = rs.randint(0, 4, 20).astype("float32")
    target = rs.randn(20, 2).astype("float32")
    return rs, x, label, target


def _validate(net, x, label, target, hybridize, batch_size=8):
    """The usual evaluation loop: per-batch losses from several gluon.loss classes."""
    metrics = {"ce": gloss.SoftmaxCELoss(), "bce": gloss.SigmoidBCELoss(),
               "kl": gloss.KLDivLoss(from_logits=False), "hinge": gloss.HingeLoss(),
               "l1": gloss.L1Loss()}
    if hybridize:
        for metric in metrics.values():
            metric.hybridize()
    sums = {k: 0.0 for k in metrics}
    sums["train"] = 0.0
    per_sample = []
    for start in range(0, x.shape[0], batch_size):
        xb = mx.nd.array(x[start:start + batch_size])
        yb = mx.nd.array(label[start:start + batch_size])
        tb = mx.nd.array(target[start:start + batch_size])
        train_loss, logits = net(xb, yb, tb)
        onehot = mx.nd.one_hot(yb, 4)
        sums["train"] += train_loss.sum().asscalar()
        per_sample.append(metrics["ce"](logits, yb).asnumpy())
        sums["ce"] += metrics["ce"](logits, yb).mean().asscalar()
        sums["bce"] += metrics["bce"](logits, onehot).mean().asscalar()
        sums["kl"] += metrics["kl"](logits, mx.nd.softmax(onehot * 3)).mean().asscalar()
        sums["hinge"] += metrics["hinge"](logits, onehot * 2 - 1).mean().asscalar()
        sums["l1"] += metrics["l1"](logits, onehot, mx.nd.ones((xb.shape[0], 1)) * 2).sum() \
            .asscalar()
    return sums, np.concatenate(per_sample)


def run():
    """Returns {name: float or ndarray}: the validation losses, imperative and hybridized."""
    rs, x, label, target = _data()
    net = TwoHeads()
    net.initialize()
    for _, p in sorted(net.collect_params().items()):
        p.set_data(mx.nd.array(rs.randn(*p.shape).astype("float32") * 0.5))
    out = {}
    sums, per_sample = _validate(net, x, label, target, False)
    out.update({"imperative_" + k: v for k, v in sums.items()})
    out["imperative_per_sample"] = per_sample
    net.hybridize()
    sums, per_sample = _validate(net, x, label, target, True)
    out.update({"hybrid_" + k: v for k, v in sums.items()})
    out["hybrid_per_sample"] = per_sample
    out["loss_reprs"] = [repr(net.ce), repr(net.l2)]
    return out
