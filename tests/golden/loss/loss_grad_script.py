"""Every ``gluon.loss`` trains: written for MXNet 1.9.1 (``import mxnet as mx``), it computes
each loss under ``autograd.record()`` -- imperatively and hybridized -- and returns the loss
values and the gradients of the prediction (and, where MXNet gives one, of the label/other
inputs). gen_loss_grad.py runs ``run()`` in MXNet; tests/gluon/test_loss_grad.py runs this file
with only its import line changed to ``import gluonport as mx``."""

import numpy as np
import mxnet as mx

gloss = mx.gluon.loss


def _cases(rs):
    pred = rs.randn(6, 5).astype("float32")
    cls = rs.randint(0, 5, 6).astype("float32")
    target = rs.randn(6, 5).astype("float32")
    prob = rs.uniform(0.05, 0.95, (6, 5)).astype("float32")
    sign = np.where(rs.rand(6, 5) > 0.5, 1.0, -1.0).astype("float32")
    sign1 = np.where(rs.rand(6) > 0.5, 1.0, -1.0).astype("float32")
    counts = rs.poisson(2.0, (6, 5)).astype("float32")
    pos = rs.uniform(0.1, 3.0, (6, 5)).astype("float32")
    weight = rs.uniform(0.5, 1.5, (6, 1)).astype("float32")
    return [
        ("l2", gloss.L2Loss(), [pred, target]),
        ("l2_weighted", gloss.L2Loss(weight=0.5), [pred, target, weight]),
        ("l1", gloss.L1Loss(), [pred, target]),
        ("sigmoid_bce", gloss.SigmoidBinaryCrossEntropyLoss(), [pred, prob]),
        ("sigmoid_bce_probs", gloss.SigmoidBCELoss(from_sigmoid=True), [prob, prob[::-1]]),
        ("sigmoid_bce_pos_weight", gloss.SigmoidBCELoss(), [pred, prob, None, pos]),
        ("softmax_ce", gloss.SoftmaxCrossEntropyLoss(), [pred, cls]),
        ("softmax_ce_dense", gloss.SoftmaxCELoss(sparse_label=False), [pred, prob]),
        ("softmax_ce_weighted", gloss.SoftmaxCELoss(), [pred, cls, weight]),
        ("kl_div", gloss.KLDivLoss(), [pred, prob]),
        ("kl_div_logits", gloss.KLDivLoss(from_logits=False), [pred, prob]),
        ("huber", gloss.HuberLoss(rho=0.7), [pred, target]),
        ("hinge", gloss.HingeLoss(), [pred, sign]),
        ("squared_hinge", gloss.SquaredHingeLoss(), [pred, sign]),
        ("logistic_signed", gloss.LogisticLoss(), [pred, sign]),
        ("logistic_binary", gloss.LogisticLoss(label_format="binary"),
         [pred, (sign > 0).astype("float32")]),
        ("triplet", gloss.TripletLoss(), [pred, target, prob]),
        ("poisson_nll", gloss.PoissonNLLLoss(), [pred, counts]),
        ("poisson_nll_probs", gloss.PoissonNLLLoss(from_logits=False), [pos, counts]),
        ("cosine_embedding", gloss.CosineEmbeddingLoss(), [pred, target, sign1]),
    ]


# (PoissonNLLLoss with compute_full=True fails its own backward in MXNet 1.9.1: it assigns into
# an array already in the graph, so it is left out.)


def run():
    out = {}
    for hybridize in (False, True):
        rs = np.random.RandomState(11)
        for name, loss, inputs in _cases(rs):
            if hybridize:
                loss.hybridize()
            arrays = [None if a is None else mx.nd.array(a) for a in inputs]
            for a in arrays[:2]:
                a.attach_grad()
            with mx.autograd.record():
                value = loss(*arrays)
            value.backward(mx.nd.array(rs.uniform(0.5, 1.5, value.shape)))
            tag = "%s_%s" % (name, "hybrid" if hybridize else "nd")
            out[tag + "/loss"] = value.asnumpy()
            out[tag + "/grad_pred"] = arrays[0].grad.asnumpy()
            out[tag + "/grad_label"] = arrays[1].grad.asnumpy()
    return out
