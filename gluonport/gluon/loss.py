"""Losses for training and evaluating networks (``mxnet.gluon.loss``, MXNet 1.9.1).

Every loss is a :class:`HybridBlock` whose ``hybrid_forward(F, ...)`` calls the same operators, in
the same order, as MXNet 1.9.1's, so imperative calls (``F = nd``) and hybridized ones (``F = sym``,
traced once into a cached graph) give MXNet's numbers. Constructor arguments, their defaults, the
aliases (``SigmoidBCELoss``, ``SoftmaxCELoss``) and ``repr`` are MXNet's.

Where gluonport differs, on purpose:

- bad arguments and inputs raise :class:`~gluonport.errors.GluonportError` subclasses that name
  the loss and the input shapes (MXNet raised ``AssertionError``/``MXNetError``);
- :class:`SDMLLoss` also hybridizes (MXNet's reads ``x1.shape`` and fails on a Symbol);
- :class:`CTCLoss` needs the ``CTCLoss`` operator; while gluonport's registry has none it raises
  :class:`~gluonport.errors.UnsupportedOpError` when constructed.

>>> import gluonport as mx
>>> loss = mx.gluon.loss.L2Loss()
>>> loss(mx.nd.array([[1., 2.]]), mx.nd.array([[1., 4.]])).asnumpy()
array([1.], dtype=float32)
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from .. import ndarray as _nd
from ..errors import ArgumentError, ShapeError
from ..ndarray import NDArray
from .hybrid import HybridBlock

__all__ = ["Loss", "L2Loss", "L1Loss", "SigmoidBinaryCrossEntropyLoss", "SigmoidBCELoss",
           "SoftmaxCrossEntropyLoss", "SoftmaxCELoss", "KLDivLoss", "CTCLoss", "HuberLoss",
           "HingeLoss", "SquaredHingeLoss", "LogisticLoss", "TripletLoss", "PoissonNLLLoss",
           "CosineEmbeddingLoss", "SDMLLoss"]


def _apply_weighting(F: Any, loss: Any, weight: float | None = None,
                     sample_weight: Any = None) -> Any:
    """``loss * sample_weight * weight`` as MXNet applies it.

    ``sample_weight`` (optional) is broadcast against ``loss`` (``broadcast_mul``): shape
    ``(64, 1)`` weights each of 64 samples of a ``(64, 10)`` loss. ``weight`` is a global scalar.
    """
    if sample_weight is not None:
        loss = F.broadcast_mul(loss, sample_weight)
    if weight is not None:
        loss = loss * weight
    return loss


def _reshape_like(F: Any, x: Any, y: Any) -> Any:
    """``x`` reshaped to ``y``'s shape (MXNet: ``x.reshape(y.shape)`` on NDArrays,
    ``reshape_like`` on Symbols); both must have the same number of elements."""
    if F is _nd:
        if x.size != y.size:
            raise ShapeError(f"cannot reshape an input of shape {x.shape} ({x.size} elements) "
                             f"like one of shape {y.shape} ({y.size} elements)")
        return x.reshape(y.shape)
    return F.reshape_like(x, y)


def _batch_mean(F: Any, loss: Any, batch_axis: int) -> Any:
    """The mean over every axis except ``batch_axis``: one loss per sample."""
    return F.mean(loss, axis=batch_axis, exclude=True)


def _check_weight(cls: str, weight: Any, required: bool = False) -> None:
    ok = isinstance(weight, (numbers.Number, np.generic)) and not isinstance(weight, complex)
    if ok or (weight is None and not required):
        return
    wanted = "a number" if required else "a number or None"
    raise ArgumentError(f"{cls}: weight={weight!r} is not {wanted}; the global loss weight "
                           "is a Python scalar (give per-sample weights as sample_weight)")


def _shapes(args: tuple) -> str:
    return ", ".join("None" if a is None else str(getattr(a, "shape", type(a).__name__))
                     for a in args)


class Loss(HybridBlock):
    """Base class of the losses (``mxnet.gluon.loss.Loss``).

    Parameters
    ----------
    weight : float or None
        Global scalar weight for the loss.
    batch_axis : int
        The axis that represents the mini-batch; the losses average (or sum) every other axis.
    """

    _inputs_rule = "see this loss's documentation for the input shapes it takes"

    def __init__(self, weight: float | None, batch_axis: int, **kwargs: Any):
        super().__init__(**kwargs)
        _check_weight(type(self).__name__, weight)
        self._weight = weight
        self._batch_axis = batch_axis

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(batch_axis={self._batch_axis}, w={self._weight})"

    def forward(self, x: Any, *args: Any) -> Any:
        """Compute the loss; a shape mismatch between the inputs raises a
        :class:`~gluonport.errors.ShapeError` naming this loss and the shapes given."""
        try:
            return super().forward(x, *args)
        except ShapeError as exc:
            if not isinstance(x, NDArray) or getattr(exc, "loss_context", False):
                raise  # tracing (no shapes to report), or a nested loss already said it
            error = ShapeError(f"{type(self).__name__} '{self.name}': inputs of shapes "
                               f"({_shapes((x, *args))}) do not fit: {exc}. "
                               f"{self._inputs_rule}")
            error.loss_context = True
            raise error from None

    def hybrid_forward(self, F: Any, x: Any, *args: Any, **kwargs: Any) -> Any:
        """Override with the loss computation (``F`` is ``nd`` or ``sym``)."""
        raise NotImplementedError


_SAME_SIZE = ("label must have as many elements as pred, and sample_weight (optional) must "
              "broadcast to pred's shape")


class L2Loss(Loss):
    r"""Half the squared error: :math:`L = \frac{1}{2} \sum_i \vert label_i - pred_i \vert^2`,
    averaged over the non-batch axes and times ``weight`` (MXNet's default 1.0).

    Inputs: ``pred`` (any shape), ``label`` (as many elements as ``pred``), optional
    ``sample_weight`` (broadcastable to ``pred``). Output: shape ``(batch_size,)``.
    """

    _inputs_rule = _SAME_SIZE

    def __init__(self, weight: float = 1., batch_axis: int = 0, **kwargs: Any):
        _check_weight("L2Loss", weight, required=True)  # MXNet computes weight / 2
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        label = _reshape_like(F, label, pred)
        loss = F.square(label - pred)
        loss = _apply_weighting(F, loss, self._weight / 2, sample_weight)
        return _batch_mean(F, loss, self._batch_axis)


class L1Loss(Loss):
    r"""Absolute error :math:`L = \sum_i \vert label_i - pred_i \vert`, averaged over the
    non-batch axes. Inputs as :class:`L2Loss`."""

    _inputs_rule = _SAME_SIZE

    def __init__(self, weight: float | None = None, batch_axis: int = 0, **kwargs: Any):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        label = _reshape_like(F, label, pred)
        loss = F.abs(label - pred)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return _batch_mean(F, loss, self._batch_axis)


class SigmoidBinaryCrossEntropyLoss(Loss):
    r"""Binary cross-entropy (alias ``SigmoidBCELoss``).

    With ``from_sigmoid=False`` (default) ``pred`` are logits and the loss uses MXNet's stable
    form ``max(x, 0) - x * z + log(1 + exp(-|x|))``; with ``from_sigmoid=True`` ``pred`` are
    probabilities and :math:`L = -(z \log(p + 10^{-12}) \cdot pos\_weight +
    (1 - z) \log(1 - p + 10^{-12}))`.

    Inputs: ``pred``, ``label`` (values in [0, 1], as many elements as ``pred``), optional
    ``sample_weight`` and ``pos_weight`` (broadcastable to ``pred``, e.g. ``(1, classes)``;
    ``> 1`` favours recall). Output: shape ``(batch_size,)``.
    """

    _inputs_rule = _SAME_SIZE + "; pos_weight (optional) must broadcast to pred's shape"

    def __init__(self, from_sigmoid: bool = False, weight: float | None = None,
                 batch_axis: int = 0, **kwargs: Any):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_sigmoid = from_sigmoid

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None,
                       pos_weight: Any = None) -> Any:
        label = _reshape_like(F, label, pred)
        if not self._from_sigmoid:
            softrelu = F.Activation(-F.abs(pred), act_type="softrelu")
            if pos_weight is None:
                loss = F.relu(pred) - pred * label + softrelu
            else:
                log_weight = 1 + F.broadcast_mul(pos_weight - 1, label)
                loss = pred - pred * label + log_weight * (softrelu + F.relu(-pred))
        else:
            eps = 1e-12
            log_pos = F.log(pred + eps) * label
            if pos_weight is not None:
                log_pos = F.broadcast_mul(log_pos, pos_weight)
            loss = -(log_pos + F.log(1. - pred + eps) * (1. - label))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return _batch_mean(F, loss, self._batch_axis)


SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss


class SoftmaxCrossEntropyLoss(Loss):
    r"""Softmax cross-entropy (alias ``SoftmaxCELoss``).

    ``sparse_label=True`` (default): ``label`` holds class indices and has ``pred``'s shape
    without ``axis`` (``pred`` (1, 2, 3, 4) with ``axis=2``: ``label`` (1, 2, 4)),
    :math:`L = -\log softmax(pred)_{label}`. ``sparse_label=False``: ``label`` is a distribution
    of ``pred``'s size, :math:`L = -\sum_j label_j \log softmax(pred)_j`. ``from_logits=True``
    takes ``pred`` as log-probabilities already (no ``log_softmax``).

    Optional ``sample_weight`` broadcasts to the loss with ``axis`` kept as size 1.
    Output: shape ``(batch_size,)``.
    """

    _inputs_rule = ("with sparse_label=True label has pred's shape without the class axis; "
                    "with sparse_label=False label has pred's size; sample_weight (optional) "
                    "must broadcast to the label's shape")

    def __init__(self, axis: int = -1, sparse_label: bool = True, from_logits: bool = False,
                 weight: float | None = None, batch_axis: int = 0, **kwargs: Any):
        super().__init__(weight, batch_axis, **kwargs)
        self._axis = axis
        self._sparse_label = sparse_label
        self._from_logits = from_logits

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        if not self._from_logits:
            pred = F.log_softmax(pred, self._axis)
        if self._sparse_label:
            loss = -F.pick(pred, label, axis=self._axis, keepdims=True)
        else:
            label = _reshape_like(F, label, pred)
            loss = -(pred * label).sum(axis=self._axis, keepdims=True)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return loss.mean(axis=self._batch_axis, exclude=True)


SoftmaxCELoss = SoftmaxCrossEntropyLoss


class KLDivLoss(Loss):
    r"""Kullback-Leibler divergence :math:`L = \sum_i label_i (\log(label_i + 10^{-12}) -
    pred_i)`, summed over the non-batch axes.

    ``from_logits=True`` (default): ``pred`` are log-probabilities; ``False``: MXNet applies
    ``log_softmax`` over ``axis`` first. ``label`` has ``pred``'s shape; optional
    ``sample_weight`` broadcasts to it. Output: shape ``(batch_size,)``.
    """

    _inputs_rule = "label must have pred's shape; sample_weight (optional) must broadcast to it"

    def __init__(self, from_logits: bool = True, axis: int = -1, weight: float | None = None,
                 batch_axis: int = 0, **kwargs: Any):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._axis = axis

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        if not self._from_logits:
            pred = F.log_softmax(pred, self._axis)
        loss = label * (F.log(label + 1e-12) - pred)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.sum(loss, axis=self._batch_axis, exclude=True)


class CTCLoss(Loss):
    """Connectionist Temporal Classification loss, through MXNet's ``CTCLoss`` operator with
    ``blank_label='last'`` (the last class of ``pred`` is the blank).

    Parameters
    ----------
    layout : {'NTC', 'TNC'}
        Layout of ``pred`` (batch, sequence, alphabet).
    label_layout : {'NT', 'TN'}
        Layout of ``label``; its ``N`` position is the batch axis.
    weight : float or None
        Global scalar weight.

    Inputs: ``pred``, ``label`` (zero-based, padded with -1), optional ``pred_lengths``,
    ``label_lengths`` (shape ``(batch_size,)``) and ``sample_weight``.
    Output: shape ``(batch_size,)``.
    """

    _inputs_rule = "see CTCLoss's documentation for pred, label and length shapes"

    def __init__(self, layout: str = "NTC", label_layout: str = "NT",
                 weight: float | None = None, **kwargs: Any):
        if layout not in ("NTC", "TNC"):
            raise ArgumentError(f"CTCLoss: layout={layout!r} is not supported; use 'NTC' "
                                   "or 'TNC'")
        if label_layout not in ("NT", "TN"):
            raise ArgumentError(f"CTCLoss: label_layout={label_layout!r} is not supported; "
                                   "use 'NT' or 'TN'")
        super().__init__(weight, label_layout.find("N"), **kwargs)
        self._layout = layout
        self._label_layout = label_layout

    def hybrid_forward(self, F: Any, pred: Any, label: Any, pred_lengths: Any = None,
                       label_lengths: Any = None, sample_weight: Any = None) -> Any:
        if self._layout == "NTC":
            pred = F.swapaxes(pred, 0, 1)
        if self._batch_axis == 1:
            label = F.swapaxes(label, 0, 1)
        loss = F.CTCLoss(pred, label, pred_lengths, label_lengths,
                         use_data_lengths=pred_lengths is not None,
                         use_label_lengths=label_lengths is not None, blank_label="last")
        return _apply_weighting(F, loss, self._weight, sample_weight)


class HuberLoss(Loss):
    r"""Smoothed L1: :math:`\frac{1}{2 \rho} (label - pred)^2` where
    :math:`|label - pred| \le \rho`, else :math:`|label - pred| - \frac{\rho}{2}`; averaged
    over the non-batch axes (``rho`` default 1). Inputs as :class:`L2Loss`."""

    _inputs_rule = _SAME_SIZE

    def __init__(self, rho: float = 1, weight: float | None = None, batch_axis: int = 0,
                 **kwargs: Any):
        super().__init__(weight, batch_axis, **kwargs)
        self._rho = rho

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        label = _reshape_like(F, label, pred)
        loss = F.abs(label - pred)
        loss = F.where(loss > self._rho, loss - 0.5 * self._rho,
                       (0.5 / self._rho) * F.square(loss))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return _batch_mean(F, loss, self._batch_axis)


class HingeLoss(Loss):
    r"""SVM hinge loss :math:`\max(0, margin - pred \cdot label)` with labels -1/1, averaged over
    the non-batch axes (``margin`` default 1). Inputs as :class:`L2Loss`."""

    _inputs_rule = _SAME_SIZE

    def __init__(self, margin: float = 1, weight: float | None = None, batch_axis: int = 0,
                 **kwargs: Any):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        label = _reshape_like(F, label, pred)
        loss = F.relu(self._margin - pred * label)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return _batch_mean(F, loss, self._batch_axis)


class SquaredHingeLoss(Loss):
    r"""Soft-margin SVM loss :math:`\max(0, margin - pred \cdot label)^2` with labels -1/1,
    averaged over the non-batch axes. Inputs as :class:`L2Loss`."""

    _inputs_rule = _SAME_SIZE

    def __init__(self, margin: float = 1, weight: float | None = None, batch_axis: int = 0,
                 **kwargs: Any):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        label = _reshape_like(F, label, pred)
        loss = F.square(F.relu(self._margin - pred * label))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return _batch_mean(F, loss, self._batch_axis)


class LogisticLoss(Loss):
    r"""Logistic loss :math:`\log(1 + \exp(-pred \cdot label))`, computed in MXNet's stable
    form, averaged over the non-batch axes.

    ``label_format='signed'`` (default) takes labels -1/1, ``'binary'`` takes 0/1; anything
    else raises :class:`~gluonport.errors.ArgumentError` (a ``ValueError``, as MXNet's).
    Inputs as :class:`L2Loss`.
    """

    _inputs_rule = _SAME_SIZE

    def __init__(self, weight: float | None = None, batch_axis: int = 0,
                 label_format: str = "signed", **kwargs: Any):
        super().__init__(weight, batch_axis, **kwargs)
        self._label_format = label_format
        if label_format not in ("signed", "binary"):
            raise ArgumentError(f"LogisticLoss: label_format can only be signed or binary, "
                                   f"received {label_format!r}")

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        label = _reshape_like(F, label, pred)
        if self._label_format == "signed":
            label = (label + 1.0) / 2.0  # -1/1 -> 0/1
        loss = F.relu(pred) - pred * label + F.Activation(-F.abs(pred), act_type="softrelu")
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return _batch_mean(F, loss, self._batch_axis)


class TripletLoss(Loss):
    r"""Triplet loss :math:`\max(\Vert pos - pred \Vert^2 - \Vert neg - pred \Vert^2 + margin,
    0)`, the squared distances summed over the non-batch axes (``margin`` default 1).

    Inputs: ``pred``, ``positive``, ``negative`` (as many elements as ``pred``; no
    ``sample_weight``). Output: shape ``(batch_size,)``.
    """

    _inputs_rule = "positive and negative must have as many elements as pred"

    def __init__(self, margin: float = 1, weight: float | None = None, batch_axis: int = 0,
                 **kwargs: Any):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F: Any, pred: Any, positive: Any, negative: Any) -> Any:
        positive = _reshape_like(F, positive, pred)
        negative = _reshape_like(F, negative, pred)
        loss = F.sum(F.square(positive - pred) - F.square(negative - pred),
                     axis=self._batch_axis, exclude=True)
        loss = F.relu(loss + self._margin)
        return _apply_weighting(F, loss, self._weight, None)


class PoissonNLLLoss(Loss):
    r"""Negative log-likelihood of a Poisson target, averaged over *all* elements (output shape
    ``(1,)``, as MXNet's).

    ``from_logits=True`` (default): :math:`\exp(pred) - target \cdot pred`; ``False``:
    :math:`pred - target \log(pred + \epsilon)`. ``compute_full=True`` adds the Stirling term
    :math:`t \log t - t + \frac{1}{2} \log(2 \pi t)` where ``target > 1`` (a target of 0 makes
    it NaN, in MXNet too). Inputs: ``pred``, ``target`` (as many elements), optional
    ``sample_weight`` and ``epsilon`` (default 1e-08).
    """

    _inputs_rule = ("target must have as many elements as pred, and sample_weight (optional) "
                    "must broadcast to pred's shape")

    def __init__(self, weight: float | None = None, from_logits: bool = True,
                 batch_axis: int = 0, compute_full: bool = False, **kwargs: Any):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._compute_full = compute_full

    def hybrid_forward(self, F: Any, pred: Any, target: Any, sample_weight: Any = None,
                       epsilon: float = 1e-08) -> Any:
        target = _reshape_like(F, target, pred)
        if self._from_logits:
            loss = F.exp(pred) - target * pred
        else:
            loss = pred - target * F.log(pred + epsilon)
        if self._compute_full:
            stirling = target * F.log(target) - target + 0.5 * F.log(2 * target * np.pi)
            loss = loss + stirling * (target > 1)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss)


class CosineEmbeddingLoss(Loss):
    r"""Cosine embedding loss: :math:`1 - \cos(input1, input2)` where ``label`` is 1,
    :math:`\max(0, \cos(input1, input2) - margin)` where it is -1, cosines over the last axis.

    Inputs: ``input1`` (as many elements as ``input2``), ``input2`` ``(batch_size, dim)``,
    ``label`` ``(batch_size,)``, optional ``sample_weight``. Output: shape
    ``(batch_size, 1)``, as MXNet's.
    """

    _inputs_rule = ("input1 must have as many elements as input2 (batch_size, dim), and label "
                    "one value per row")

    def __init__(self, weight: float | None = None, batch_axis: int = 0, margin: float = 0,
                 **kwargs: Any):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F: Any, input1: Any, input2: Any, label: Any,
                       sample_weight: Any = None) -> Any:
        input1 = _reshape_like(F, input1, input2)
        label = label.reshape((-1, 1))
        cos_sim = self._cosine_similarity(F, input1, input2)
        cos_sim_a = (1 - cos_sim) * (label == 1)
        # MXNet also passes axis=1 here, which broadcast_maximum ignores.
        cos_sim_b = F.broadcast_maximum(F.zeros((1, 1)), (label == -1) * (cos_sim - self._margin))
        loss = cos_sim_a + cos_sim_b
        return _apply_weighting(F, loss, self._weight, sample_weight)

    def _cosine_similarity(self, F: Any, x: Any, y: Any, axis: int = -1) -> Any:
        x_norm = F.norm(x, axis=axis).reshape((-1, 1))
        y_norm = F.norm(y, axis=axis).reshape((-1, 1))
        x_dot_y = F.sum(x * y, axis=axis).reshape((-1, 1))
        return x_dot_y / F.broadcast_maximum(x_norm * y_norm, F.full((1, 1), 1e-12))


class SDMLLoss(Loss):
    r"""Batch-wise Smoothed Deep Metric Learning loss (Bonadiman et al., arXiv:1905.12786).

    ``x1[i]`` and ``x2[i]`` are a positive pair, every other row of the batch a negative: the loss
    is the :class:`KLDivLoss` between ``log_softmax(-squared distances)`` and the identity
    matrix smoothed by ``smoothing_parameter`` (default 0.3, spread over the other
    ``batch_size - 1`` columns). As in MXNet, ``weight`` is stored but not applied.

    Inputs: ``x1``, ``x2`` of shape ``(batch_size, dim)``. Output: shape ``(batch_size,)``.
    Unlike MXNet 1.9.1's (which reads ``x1.shape``), this one also hybridizes: it builds the
    labels with shape-free operators that give the same values.
    """

    _inputs_rule = "x1 and x2 must both have shape (batch_size, dim)"

    def __init__(self, smoothing_parameter: float = 0.3, weight: float = 1., batch_axis: int = 0,
                 **kwargs: Any):
        super().__init__(weight, batch_axis, **kwargs)
        self.kl_loss = KLDivLoss(from_logits=True)
        self.smoothing_parameter = smoothing_parameter

    def _compute_distances(self, F: Any, x1: Any, x2: Any) -> Any:
        """Squared euclidean distance between every row of ``x1`` and every row of ``x2``."""
        squared_diffs = F.broadcast_sub(x1.expand_dims(1), x2.expand_dims(0)) ** 2
        return squared_diffs.sum(axis=2)

    def _compute_labels(self, F: Any, x1: Any) -> Any:
        """The identity matrix of the batch size, smoothed: ``1 - s`` on the diagonal and
        ``s / (batch_size - 1)`` elsewhere (MXNet builds it with ``eye(x1.shape[0])``)."""
        ones = F.ones_like(x1.sum(axis=1))
        gold = F.diag(ones)
        batch_size = ones.sum()
        spread = (1 - gold) * self.smoothing_parameter
        return gold * (1 - self.smoothing_parameter) + F.broadcast_div(spread, batch_size - 1)

    def hybrid_forward(self, F: Any, x1: Any, x2: Any) -> Any:
        if F is _nd and (x1.ndim != 2 or x1.shape != x2.shape):
            raise ShapeError(f"x1 {x1.shape} and x2 {x2.shape} must both be (batch_size, dim)")
        labels = self._compute_labels(F, x1)
        distances = self._compute_distances(F, x1, x2)
        log_probabilities = F.log_softmax(-distances, axis=1)
        return self.kl_loss(log_probabilities, labels)

