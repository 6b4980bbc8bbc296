"""``mx.metric``: MXNet 1.9.1's online evaluation metrics, on numpy.

Evaluation scripts written for MXNet run unchanged::

    metric = mx.metric.Accuracy()
    metric.update(labels, preds)          # lists of NDArrays (numpy arrays work too)
    name, value = metric.get()
    mod.score(val_iter, ["acc", mx.metric.TopKAccuracy(top_k=5)])

Every metric keeps two counters, as MXNet's do: a *local* one (``get``, cleared by
``reset_local``) and a *global* one (``get_global``, cleared only by ``reset``). The numerics are
MXNet's, quirks included: ``Accuracy`` takes the argmax over ``axis`` only when a prediction's
shape differs from its label's; ``F1``/``MCC`` with ``average='macro'`` average one score per
``update`` call while ``'micro'`` pools the counts; ``MAE``/``MSE``/``RMSE`` average one value per
batch; ``Perplexity`` clips labels into range (so ``ignore_label=-1`` works) and ``TopKAccuracy``
needs ``top_k > 1``. Per-batch sums are accumulated as Python floats (float64), as MXNet's are
under numpy 1.x.

>>> import gluonport as mx
>>> acc = mx.metric.Accuracy()
>>> acc.update([mx.nd.array([0, 1, 1])], [mx.nd.array([[0.3, 0.7], [0, 1.], [0.4, 0.6]])])
>>> acc.get()
('accuracy', 0.6666666666666666)
>>> mx.metric.create(["acc", "mse"]).get()
(['accuracy', 'mse'], [nan, nan])

Layout: the base class, the registry and ``create`` are in ``_base.py``, the metrics in
``metric.py``; everything public is exported here.
"""

from .metric import (
    F1,
    MAE,
    MCC,
    MSE,
    PCC,
    RMSE,
    Accuracy,
    Caffe,
    CompositeEvalMetric,
    CrossEntropy,
    CustomMetric,
    EvalMetric,
    Loss,
    MetricError,
    NegativeLogLikelihood,
    PearsonCorrelation,
    Perplexity,
    TopKAccuracy,
    Torch,
    alias,
    check_label_shapes,
    create,
    np,
    register,
)

__all__ = ["MetricError", "EvalMetric", "CompositeEvalMetric", "Accuracy", "TopKAccuracy", "F1",
           "MCC", "Perplexity", "MAE", "MSE", "RMSE", "CrossEntropy", "NegativeLogLikelihood",
           "PearsonCorrelation", "PCC", "Loss", "Torch", "Caffe", "CustomMetric", "np", "create",
           "register", "alias", "check_label_shapes"]
