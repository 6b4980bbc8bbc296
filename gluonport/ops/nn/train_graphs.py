"""Training-mode forwards written with registered ops (:attr:`OpDef.train_graph`), for
backends whose kernels have inference semantics only (ONNX): a hybridized block's training step
on onnxruntime expands these nodes (``gluonport/symbol/_expand.py``).

* ``BatchNorm`` / ``_contrib_SyncBatchNorm``: the batch mean and biased variance over every
  axis but the channel axis (``mean(..., exclude=True)``), ``(x - mean) * (rsqrt(var + eps) *
  gamma) + beta`` (gamma is 1 with ``fix_gamma``), hidden outputs as the kernels give them
  (BatchNorm: mean and 1/sqrt(var + eps); SyncBatchNorm: mean and var), and the new moving
  statistics ``moving * momentum + batch * (1 - momentum)``, which the runner writes when the
  backward pass runs (MXNet's backward kernel updates them). ``use_global_stats``: as inference.
* ``Dropout`` (``axes`` empty): a uniform draw per element kept below ``1 - p``, scaled by
  ``1 / (1 - p)``; the draws are onnxruntime's, not numpy's.

Gradients then come from the elementary ops' own rules, and equal the fused kernels' to
float32 rounding (``tests/autograd/test_train_expand.py``).
"""

from __future__ import annotations

from typing import Any

from ...errors import GluonportError

__all__ = ["batchnorm_train_graph", "dropout_train_graph"]


def batchnorm_train_graph(axis_of: Any, plain_var: bool):
    """The ``train_graph`` of a BatchNorm-like op whose channel axis is ``axis_of(p)``."""

    def form(F: Any, p: Any, inputs: list) -> tuple[list, dict] | None:
        if p.use_global_stats:
            return None  # trains as it infers
        x, gamma, beta, mm, mv = inputs
        ax = axis_of(p)
        mean_k = F.mean(x, axis=ax, exclude=True, keepdims=True)
        xc = F.broadcast_sub(x, mean_k)
        var_k = F.mean(F.square(xc), axis=ax, exclude=True, keepdims=True)
        inv_k = F.rsqrt(F._internal._plus_scalar(var_k, scalar=p.eps))
        # gamma folds into the per-channel scale: one full-size product (and its gradient's
        # product and reduction) fewer than (xc * inv) * gamma
        scale_k = inv_k if p.fix_gamma else F.broadcast_mul(inv_k, F.reshape_like(gamma, mean_k))
        y = F.broadcast_add(F.broadcast_mul(xc, scale_k), F.reshape_like(beta, mean_k))
        mean, var, inv = (F.reshape_like(t, mm) for t in (mean_k, var_k, inv_k))
        keep = 1.0 - p.momentum

        def moving(old: Any, batch: Any) -> Any:
            return F.elemwise_add(F._internal._mul_scalar(old, scalar=p.momentum),
                                  F._internal._mul_scalar(batch, scalar=keep))

        return [y, mean, var if plain_var else inv], {3: moving(mm, mean), 4: moving(mv, var)}

    return form


def dropout_train_graph(F: Any, p: Any, inputs: list) -> tuple[list, dict] | None:
    """Dropout's training-mode forward: ``(x * mask, mask)``."""
    if p.p <= 0:
        return None
    if p.axes:
        raise GluonportError("Dropout with axes (one mask broadcast over them) has no "
                             "training-mode form from exportable ops")
    (x,) = inputs
    keep = 1.0 - p.p
    u = F.random.uniform_like(x, low=0.0, high=1.0)
    mask = F._internal._mul_scalar(F._internal._lesser_scalar(u, scalar=keep), scalar=1.0 / keep)
    return [F.elemwise_mul(x, mask), mask], {}
