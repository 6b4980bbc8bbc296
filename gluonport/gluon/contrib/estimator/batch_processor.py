"""``BatchProcessor``: what the Estimator does with one batch (MXNet 1.9.1)."""

from __future__ import annotations

from typing import Any

from .... import autograd
from ...utils import split_and_load

__all__ = ["BatchProcessor"]


class BatchProcessor:
    """Runs one batch: ``fit_batch`` records the forward pass and the loss and calls
    ``backward`` on each context's loss; ``evaluate_batch`` runs ``val_net`` and ``val_loss``.
    Both split ``batch[0]`` (data) and ``batch[1]`` (label) over ``estimator.context`` along
    ``batch_axis`` and return ``(data, label, pred, loss)``, one list entry per context.
    Subclass it to customise training (the Estimator calls these two methods only)."""

    def _get_data_and_label(self, batch: Any, ctx: list, batch_axis: int = 0) -> tuple:
        data = split_and_load(batch[0], ctx_list=ctx, batch_axis=batch_axis)
        label = split_and_load(batch[1], ctx_list=ctx, batch_axis=batch_axis)
        return data, label

    def evaluate_batch(self, estimator: Any, val_batch: Any, batch_axis: int = 0) -> tuple:
        """``(data, label, pred, loss)`` of ``val_batch`` through ``estimator.val_net``."""
        data, label = self._get_data_and_label(val_batch, estimator.context, batch_axis)
        pred = [estimator.val_net(x) for x in data]
        loss = [estimator.val_loss(y_hat, y) for y_hat, y in zip(pred, label)]
        return data, label, pred, loss

    def fit_batch(self, estimator: Any, train_batch: Any, batch_axis: int = 0) -> tuple:
        """Forward and backward of ``train_batch`` (the trainer steps in
        ``GradientUpdateHandler``); returns ``(data, label, pred, loss)``."""
        data, label = self._get_data_and_label(train_batch, estimator.context, batch_axis)
        with autograd.record():
            pred = [estimator.net(x) for x in data]
            loss = [estimator.loss(y_hat, y) for y_hat, y in zip(pred, label)]
        for each in loss:
            each.backward()
        return data, label, pred, loss
