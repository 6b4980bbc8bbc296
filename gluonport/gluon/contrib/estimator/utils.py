"""Metric checks shared by the Estimator and its event handlers (MXNet 1.9.1's
``gluon/contrib/estimator/utils.py``)."""

from __future__ import annotations

from typing import Any

from ....errors import ArgumentError
from ....metric import Accuracy, CompositeEvalMetric, EvalMetric

__all__ = ["check_metrics", "check_handler_metric_ref", "suggest_metric_for_loss"]


def check_metrics(metrics: Any) -> list:
    """A list of EvalMetrics from one metric, a list, or a CompositeEvalMetric (flattened)."""
    if isinstance(metrics, CompositeEvalMetric):
        return [m for inner in metrics.metrics for m in check_metrics(inner)]
    if isinstance(metrics, EvalMetric):
        return [metrics]
    metrics = list(metrics or [])
    if not all(isinstance(m, EvalMetric) for m in metrics):
        raise ArgumentError("metrics must be a Metric or a list of Metric, refer to "
                            f"mxnet.metric.EvalMetric: {metrics}")
    return metrics


def check_handler_metric_ref(handler: Any, known_metrics: set) -> None:
    """Every metric a handler holds (attributes whose name contains ``metric``, as MXNet
    looks) must be one of the estimator's own metric objects."""
    for attribute in dir(handler):
        if "metric" not in attribute:
            continue
        reference = getattr(handler, attribute)
        if not reference:
            continue
        for metric in reference if isinstance(reference, list) else [reference]:
            if metric not in known_metrics:
                raise ArgumentError(
                    f"Event handler {type(handler).__name__} refers to a metric instance "
                    f"{metric} outside of the known training and validation metrics. Please "
                    "use the metrics from estimator.train_metrics and estimator.val_metrics "
                    "instead.")


def suggest_metric_for_loss(loss: Any) -> EvalMetric | None:
    """Accuracy for a SoftmaxCrossEntropyLoss, else none (MXNet's suggestion)."""
    from ...loss import SoftmaxCrossEntropyLoss

    if isinstance(loss, SoftmaxCrossEntropyLoss):
        return Accuracy()
    return None
