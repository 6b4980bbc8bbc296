"""The metrics of ``mx.metric`` (``Accuracy``, ``F1``, ``RMSE``...), on ``_base.EvalMetric``.

:mod:`gluonport.metric` (this package's ``__init__``) describes the numerics they keep.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as _np

from ..errors import ShapeError
from ._base import (
    CompositeEvalMetric,
    CustomMetric,
    EvalMetric,
    MetricError,
    alias,
    check_label_shapes,
    check_pair,
    class_argmax,
    create,
    is_array,
    np,
    register,
    to_numpy,
)

__all__ = ["MetricError", "EvalMetric", "CompositeEvalMetric", "Accuracy", "TopKAccuracy", "F1",
           "MCC", "Perplexity", "MAE", "MSE", "RMSE", "CrossEntropy", "NegativeLogLikelihood",
           "PearsonCorrelation", "PCC", "Loss", "Torch", "Caffe", "CustomMetric", "np", "create",
           "register", "alias", "check_label_shapes"]


# --- classification ---------------------------------------------------------------------------
@register
@alias("acc")
class Accuracy(EvalMetric):
    """Fraction of samples whose predicted class equals the label.

    A prediction shaped like its label holds class indices; otherwise its argmax over ``axis``
    (default 1, the class axis) is taken, so ``(N, C)`` predictions go with ``(N,)`` labels and
    ``(N, C, H, W)`` with ``(N, H, W)``. Both are truncated to int32 and flattened, and must
    then have the same size.
    """

    def __init__(self, axis: int = 1, name: str = "accuracy",
                 output_names: list[str] | None = None, label_names: list[str] | None = None):
        super().__init__(name, axis=axis, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.axis = axis

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = check_pair(labels, preds, self.name, wrap=True)
        for label, pred in zip(labels, preds):
            label, pred = to_numpy(label, self.name), to_numpy(pred, self.name)
            if pred.shape != label.shape:
                pred = class_argmax(pred, self.axis, self.name)
            pred = pred.astype(_np.int32).ravel()
            label = label.astype(_np.int32).ravel()
            if label.size != pred.size:
                raise ShapeError(f"{self.name}: {label.size} labels for {pred.size} predicted "
                                 "classes; give one label per prediction")
            self._add((pred == label).sum(), pred.size)


@register
@alias("top_k_accuracy", "top_k_acc")
class TopKAccuracy(EvalMetric):
    """Fraction of samples whose label is among the ``top_k`` highest-scored classes of an
    ``(N, C)`` prediction. The name becomes ``top_k_accuracy_<k>``; ``top_k`` must be > 1
    (use :class:`Accuracy` for 1), as in MXNet."""

    def __init__(self, top_k: int = 1, name: str = "top_k_accuracy",
                 output_names: list[str] | None = None, label_names: list[str] | None = None):
        super().__init__(name, top_k=top_k, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.top_k = top_k
        if not self.top_k > 1:
            raise MetricError(f"TopKAccuracy: top_k={top_k}; please use Accuracy if top_k is no "
                              "more than 1")
        self.name += f"_{self.top_k}"

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = check_pair(labels, preds, self.name, wrap=True)
        for label, pred in zip(labels, preds):
            pred = to_numpy(pred, self.name)
            if pred.ndim > 2 or pred.ndim == 0 or pred.shape[-1] < self.top_k:
                raise ShapeError(f"{self.name}: predictions of shape {pred.shape}; give (N, C) "
                                 f"scores with C >= top_k={self.top_k}")
            top = _np.argpartition(pred.astype(_np.float32), -self.top_k)
            label = to_numpy(label, self.name).astype(_np.int32)
            check_pair(label, top, self.name)
            if top.ndim == 1:  # MXNet counts this odd case in the local sum only
                self.sum_metric += float((top.ravel() == label.ravel()).sum())
            else:
                classes = top.shape[1]
                for j in range(min(classes, self.top_k)):
                    hits = (top[:, classes - 1 - j].ravel() == label.ravel()).sum()
                    self.sum_metric += float(hits)
                    self.global_sum_metric += float(hits)
            self.num_inst += top.shape[0]
            self.global_num_inst += top.shape[0]


class _BinaryStats:
    """True/false positive/negative counts, local and global, for F1 and MCC."""

    _FIELDS = ("true_positives", "false_negatives", "false_positives", "true_negatives")

    def __init__(self) -> None:
        self.reset_stats()

    def update_binary_stats(self, label: Any, pred: Any, subject: str = "metric") -> None:
        pred = to_numpy(pred, subject)
        label = to_numpy(label, subject).astype(_np.int32)
        pred_label = class_argmax(pred, 1, subject)
        check_pair(label, pred, subject)
        if len(_np.unique(label)) > 2:
            raise MetricError(f"{subject}: labels hold {len(_np.unique(label))} classes; it "
                              "currently only supports binary classification (see PCC)")
        pred_true = pred_label == 1
        pred_false = 1 - pred_true
        label_true = label == 1
        label_false = 1 - label_true
        counts = ((pred_true * label_true).sum(), (pred_false * label_true).sum(),
                  (pred_true * label_false).sum(), (pred_false * label_false).sum())
        for field, count in zip(self._FIELDS, counts):
            setattr(self, field, getattr(self, field) + int(count))
            setattr(self, "global_" + field, getattr(self, "global_" + field) + int(count))

    def _counts(self, use_global: bool) -> tuple[int, int, int, int]:
        pre = "global_" if use_global else ""
        return tuple(getattr(self, pre + f) for f in self._FIELDS)  # type: ignore[return-value]

    def _fscore(self, use_global: bool) -> float:
        tp, fn, fp, _ = self._counts(use_global)
        precision = tp / (tp + fp) if tp + fp > 0 else 0.0
        recall = tp / (tp + fn) if tp + fn > 0 else 0.0
        if precision + recall > 0:
            return 2 * precision * recall / (precision + recall)
        return 0.0

    @property
    def fscore(self) -> float:
        return self._fscore(False)

    @property
    def global_fscore(self) -> float:
        return self._fscore(True)

    def matthewscc(self, use_global: bool = False) -> float:
        """MCC with the zero factors of the denominator replaced by 1, as MXNet's."""
        tp, fn, fp, tn = (float(c) for c in self._counts(use_global))
        if not tp + fn + fp + tn:
            return 0.0
        denom = 1.0
        for term in (tp + fp, tp + fn, tn + fp, tn + fn):
            denom *= term if term != 0.0 else 1.0
        return (tp * tn - fp * fn) / math.sqrt(denom)

    @property
    def total_examples(self) -> int:
        return sum(self._counts(False))

    @property
    def global_total_examples(self) -> int:
        return sum(self._counts(True))

    def local_reset_stats(self) -> None:
        for field in self._FIELDS:
            setattr(self, field, 0)

    def reset_stats(self) -> None:
        for field in self._FIELDS:
            setattr(self, field, 0)
            setattr(self, "global_" + field, 0)


class _BinaryMetric(EvalMetric):
    """F1 and MCC: 'macro' averages one score per update call, 'micro' pools the counts."""

    def __init__(self, name: str, output_names: list[str] | None, label_names: list[str] | None,
                 average: str):
        self._average = average
        self._stats = _BinaryStats()
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def _score(self, use_global: bool) -> float:
        raise NotImplementedError

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = check_pair(labels, preds, self.name, wrap=True)
        for label, pred in zip(labels, preds):
            self._stats.update_binary_stats(label, pred, self.name)
        if self._average == "macro":  # MXNet clears even the global counts after each call
            self.sum_metric += self._score(False)
            self.global_sum_metric += self._score(True)
            self.num_inst += 1
            self.global_num_inst += 1
            self._stats.reset_stats()
        else:
            self.sum_metric = self._score(False) * self._stats.total_examples
            self.global_sum_metric = self._score(True) * self._stats.global_total_examples
            self.num_inst = self._stats.total_examples
            self.global_num_inst = self._stats.global_total_examples

    def reset(self) -> None:
        super().reset()
        self._stats.reset_stats()

    def reset_local(self) -> None:
        super().reset_local()
        self._stats.local_reset_stats()


@register
class F1(_BinaryMetric):
    """F1 score (harmonic mean of precision and recall) of a binary problem: class 1 of the
    argmax of ``(N, 2)`` predictions is positive. ``average``: ``'macro'`` (mean of per-update
    scores) or ``'micro'`` (one score over all counts)."""

    def __init__(self, name: str = "f1", output_names: list[str] | None = None,
                 label_names: list[str] | None = None, average: str = "macro"):
        super().__init__(name, output_names, label_names, average)

    @property
    def average(self) -> str:
        return self._average

    @property
    def metrics(self) -> _BinaryStats:
        return self._stats

    def _score(self, use_global: bool) -> float:
        return self._stats._fscore(use_global)


@register
class MCC(_BinaryMetric):
    """Matthews correlation coefficient of a binary problem (zero denominator factors count as
    1); ``average`` as for :class:`F1`. See :class:`PCC` for more than two classes."""

    def __init__(self, name: str = "mcc", output_names: list[str] | None = None,
                 label_names: list[str] | None = None, average: str = "macro"):
        super().__init__(name, output_names, label_names, average)

    def _score(self, use_global: bool) -> float:
        return self._stats.matthewscc(use_global)


@register
class Perplexity(EvalMetric):
    """``exp`` of the mean negative log of the probability given to each label.

    ``pred`` is ``(N, C)`` with classes on ``axis`` (default -1); labels (any shape, ``N``
    values) are clipped into ``[0, C)`` as MXNet's ``pick`` does, and those equal to
    ``ignore_label`` (``None``: none) are left out. Probabilities are floored at 1e-10.
    """

    def __init__(self, ignore_label: int | None, axis: int = -1, name: str = "perplexity",
                 output_names: list[str] | None = None, label_names: list[str] | None = None):
        super().__init__(name, ignore_label=ignore_label, output_names=output_names,
                         label_names=label_names, has_global_stats=True)
        self.ignore_label = ignore_label
        self.axis = axis

    def _picked(self, label: _np.ndarray, pred: _np.ndarray) -> _np.ndarray:
        axis = self.axis % pred.ndim if pred.ndim else 0
        rest = pred.shape[:axis] + pred.shape[axis + 1:]
        if pred.ndim == 0 or rest != (label.size,) or label.size * pred.shape[-1] != pred.size:
            raise ShapeError(f"{self.name}: shape mismatch: labels {label.shape} vs. predictions "
                             f"{pred.shape}; give (N, C) probabilities and N labels")
        index = _np.clip(label.reshape(-1).astype(_np.int32), 0, pred.shape[axis] - 1)
        index = _np.expand_dims(index, axis)
        return _np.take_along_axis(pred, index, axis=axis).reshape(-1)

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = check_pair(labels, preds, self.name, wrap=True)
        loss, num = 0.0, 0
        for label, pred in zip(labels, preds):
            label, pred = to_numpy(label, self.name), to_numpy(pred, self.name)
            picked = self._picked(label, pred)
            if self.ignore_label is not None:
                ignore = (label.reshape(-1) == self.ignore_label).astype(picked.dtype)
                num -= float(ignore.sum())
                picked = picked * (1 - ignore) + ignore
            floor = _np.asarray(1e-10, dtype=picked.dtype)
            loss -= float(_np.log(_np.maximum(floor, picked)).sum())
            num += picked.size
        self._add(loss, num)

    def get(self) -> tuple[str, float]:
        if self.num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, math.exp(self.sum_metric / self.num_inst))

    def get_global(self) -> tuple[str, float]:
        if self.global_num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, math.exp(self.global_sum_metric / self.global_num_inst))


# --- regression -------------------------------------------------------------------------------
def _pairs_2d(label: Any, pred: Any, subject: str) -> tuple[_np.ndarray, _np.ndarray]:
    """MXNet's regression inputs: 1-D arrays become columns, then they broadcast."""
    label, pred = to_numpy(label, subject), to_numpy(pred, subject)
    label = label.reshape(label.shape[0], 1) if label.ndim == 1 else label
    pred = pred.reshape(pred.shape[0], 1) if pred.ndim == 1 else pred
    try:
        _np.broadcast_shapes(label.shape, pred.shape)
    except ValueError:
        raise ShapeError(f"{subject}: labels {label.shape} and predictions {pred.shape} do not "
                         "broadcast; give them the same shape") from None
    return label, pred


class _PerBatchError(EvalMetric):
    """MAE, MSE, RMSE: one value per (label, prediction) pair, averaged over pairs."""

    def __init__(self, name: str, output_names: list[str] | None,
                 label_names: list[str] | None):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    @staticmethod
    def _value(diff: _np.ndarray) -> Any:
        raise NotImplementedError

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = check_pair(labels, preds, self.name, wrap=True)
        for label, pred in zip(labels, preds):
            label, pred = _pairs_2d(label, pred, self.name)
            self._add(self._value(label - pred), 1)


@register
class MAE(_PerBatchError):
    """Mean absolute error, averaged per batch (each update's pairs count once each)."""

    def __init__(self, name: str = "mae", output_names: list[str] | None = None,
                 label_names: list[str] | None = None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _value(diff: _np.ndarray) -> Any:
        return _np.abs(diff).mean()


@register
class MSE(_PerBatchError):
    """Mean squared error, averaged per batch."""

    def __init__(self, name: str = "mse", output_names: list[str] | None = None,
                 label_names: list[str] | None = None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _value(diff: _np.ndarray) -> Any:
        return (diff ** 2.0).mean()


@register
class RMSE(_PerBatchError):
    """Root mean squared error of each batch, averaged over batches."""

    def __init__(self, name: str = "rmse", output_names: list[str] | None = None,
                 label_names: list[str] | None = None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _value(diff: _np.ndarray) -> Any:
        return _np.sqrt((diff ** 2.0).mean())


class _LogLoss(EvalMetric):
    """CrossEntropy and NegativeLogLikelihood: ``-log(p[label] + eps)`` summed over samples."""

    def __init__(self, eps: float, name: str, output_names: list[str] | None,
                 label_names: list[str] | None):
        super().__init__(name, eps=eps, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.eps = eps

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = check_pair(labels, preds, self.name, wrap=True)
        for label, pred in zip(labels, preds):
            label = to_numpy(label, self.name).ravel()
            pred = to_numpy(pred, self.name)
            if pred.ndim < 2 or label.shape[0] != pred.shape[0]:
                raise ShapeError(f"{self.name}: {label.shape[0]} labels for predictions of "
                                 f"shape {pred.shape}; give (N, C) probabilities and N labels")
            classes = label.astype(_np.int64)
            if classes.size and not (-pred.shape[1] <= classes.min() <= classes.max()
                                     < pred.shape[1]):
                raise MetricError(f"{self.name}: labels range over [{classes.min()}, "
                                  f"{classes.max()}] but predictions have {pred.shape[1]} "
                                  "classes; give class indices in [0, C)")
            prob = pred[_np.arange(label.shape[0]), classes]
            self._add((-_np.log(prob + self.eps)).sum(), label.shape[0])


@register
@alias("ce")
class CrossEntropy(_LogLoss):
    """Mean of ``-log(pred[i, label[i]] + eps)`` over samples; ``pred`` is ``(N, C)``
    probabilities."""

    def __init__(self, eps: float = 1e-12, name: str = "cross-entropy",
                 output_names: list[str] | None = None, label_names: list[str] | None = None):
        super().__init__(eps, name, output_names, label_names)


@register
@alias("nll_loss")
class NegativeLogLikelihood(_LogLoss):
    """Negative log-likelihood; the same computation as :class:`CrossEntropy`."""

    def __init__(self, eps: float = 1e-12, name: str = "nll-loss",
                 output_names: list[str] | None = None, label_names: list[str] | None = None):
        super().__init__(eps, name, output_names, label_names)


@register
@alias("pearsonr")
class PearsonCorrelation(EvalMetric):
    """Pearson correlation of predictions with labels (same shapes), in float64.

    ``average='macro'`` averages the coefficient of each pair; ``'micro'`` keeps running
    (Welford) statistics over all values, as MXNet's does (its ``get_global`` then reads the
    untouched global sum and gives 0.0, a quirk kept here).
    """

    def __init__(self, name: str = "pearsonr", output_names: list[str] | None = None,
                 label_names: list[str] | None = None, average: str = "macro"):
        self.average = average
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def reset_micro(self) -> None:
        self._sse_p = self._mean_p = self._sse_l = self._mean_l = 0.0
        self._pred_nums = self._label_nums = 0
        self._conv = 0.0

    def reset(self) -> None:
        super().reset()
        if self.average == "micro":
            self.reset_micro()

    @staticmethod
    def update_variance(new_values: _np.ndarray, *aggregate: Any) -> tuple[Any, Any, Any]:
        """Welford's online update of ``(count, mean, M2)`` with ``new_values``."""
        count, mean, m_2 = aggregate
        count += len(new_values)
        delta = new_values - mean
        mean += _np.sum(delta / count)
        m_2 += _np.sum(delta * (new_values - mean))
        return count, mean, m_2

    def update_cov(self, label: _np.ndarray, pred: _np.ndarray) -> None:
        self._conv = self._conv + _np.sum((label - self._mean_l) * (pred - self._mean_p))

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = check_pair(labels, preds, self.name, wrap=True)
        for label, pred in zip(labels, preds):
            label, pred = to_numpy(label, self.name), to_numpy(pred, self.name)
            check_pair(label, pred, self.name, shape=True)
            label = label.ravel().astype(_np.float64)
            pred = pred.ravel().astype(_np.float64)
            self.num_inst += 1
            self.global_num_inst += 1
            if self.average == "macro":
                corr = float(_np.corrcoef(pred, label)[0, 1])
                self.sum_metric += corr
                self.global_sum_metric += corr
                continue
            self._label_nums, self._mean_l, self._sse_l = self.update_variance(
                label, self._label_nums, self._mean_l, self._sse_l)
            self.update_cov(label, pred)  # with the new label mean, the old prediction mean
            self._pred_nums, self._mean_p, self._sse_p = self.update_variance(
                pred, self._pred_nums, self._mean_p, self._sse_p)

    def get(self) -> tuple[str, float]:
        if self.num_inst == 0:
            return (self.name, float("nan"))
        if self.average == "macro":
            return (self.name, self.sum_metric / self.num_inst)
        n = self._label_nums
        scale = (n - 1) * _np.sqrt(self._sse_p / (n - 1)) * _np.sqrt(self._sse_l / (n - 1))
        return (self.name, float(self._conv / scale))


@register
class PCC(EvalMetric):
    """Multiclass Matthews correlation over a confusion matrix that grows with the classes
    seen; predictions are class indices (shaped like the labels) or ``(N, C)`` scores."""

    def __init__(self, name: str = "pcc", output_names: list[str] | None = None,
                 label_names: list[str] | None = None, has_global_stats: bool = True):
        self.k = 2
        super().__init__(name=name, output_names=output_names, label_names=label_names,
                         has_global_stats=has_global_stats)

    def _grow(self, inc: int) -> None:
        self.lcm = _np.pad(self.lcm, ((0, inc), (0, inc)), "constant")
        self.gcm = _np.pad(self.gcm, ((0, inc), (0, inc)), "constant")
        self.k += inc

    @staticmethod
    def _calc_mcc(cmat: _np.ndarray) -> float:
        n = cmat.sum()
        x, y = cmat.sum(axis=1), cmat.sum(axis=0)
        cov_xx, cov_yy = _np.sum(x * (n - x)), _np.sum(y * (n - y))
        if cov_xx == 0 or cov_yy == 0:
            return float("nan")
        cov_xy = _np.sum(cmat.diagonal() * n - x * y)
        return float(cov_xy / (cov_xx * cov_yy) ** 0.5)

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = check_pair(labels, preds, self.name, wrap=True)
        for label, pred in zip(labels, preds):
            label = to_numpy(label, self.name).astype(_np.int32)
            pred = to_numpy(pred, self.name)
            pred = (class_argmax(pred, 1, self.name) if pred.shape != label.shape
                    else pred.astype(_np.int32))
            pred, label = pred.ravel(), label.ravel()
            if pred.size != label.size:
                raise ShapeError(f"{self.name}: {pred.size} predicted classes for {label.size} "
                                 "labels; give one label per prediction")
            if label.size and min(pred.min(), label.min()) < 0:
                raise MetricError(f"{self.name}: negative class index; labels and predicted "
                                  "classes must be >= 0")
            n = int(max(pred.max(), label.max())) if label.size else 0
            if n >= self.k:
                self._grow(n + 1 - self.k)
            batch = _np.zeros((self.k, self.k))
            _np.add.at(batch, (pred, label), 1)
            self.lcm += batch
            self.gcm += batch
        self.num_inst += 1
        self.global_num_inst += 1

    @property
    def sum_metric(self) -> float:
        return self._calc_mcc(self.lcm) * self.num_inst

    @property
    def global_sum_metric(self) -> float:
        return self._calc_mcc(self.gcm) * self.global_num_inst

    def reset(self) -> None:
        self.global_num_inst = 0.0
        self.gcm = _np.zeros((self.k, self.k))
        self.reset_local()

    def reset_local(self) -> None:
        self.num_inst = 0.0
        self.lcm = _np.zeros((self.k, self.k))


@register
class Loss(EvalMetric):
    """Mean of the predictions themselves (a loss output printed as a metric); labels are
    ignored."""

    def __init__(self, name: str = "loss", output_names: list[str] | None = None,
                 label_names: list[str] | None = None):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def update(self, _: Any, preds: Any) -> None:
        for pred in ([preds] if is_array(preds) else preds):
            pred = to_numpy(pred, self.name)
            self._add(pred.sum(), pred.size)


@register
class Torch(Loss):
    """:class:`Loss` named ``'torch'`` (MXNet's dummy metric for torch criterions)."""

    def __init__(self, name: str = "torch", output_names: list[str] | None = None,
                 label_names: list[str] | None = None):
        super().__init__(name, output_names=output_names, label_names=label_names)


@register
class Caffe(Loss):
    """:class:`Loss` named ``'caffe'`` (MXNet's dummy metric for caffe criterions)."""

    def __init__(self, name: str = "caffe", output_names: list[str] | None = None,
                 label_names: list[str] | None = None):
        super().__init__(name, output_names=output_names, label_names=label_names)
