"""Training-mode forwards written with registered ops (:attr:`OpDef.train_graph`), for
backends whose kernels have inference semantics only (ONNX): a hybridized block's training step
on onnxruntime expands these nodes (``gluonport/symbol/_expand.py``).

* ``BatchNorm`` / ``_contrib_SyncBatchNorm``: one ``_backward_BatchNorm_train_forward`` node
  (:mod:`.norm_train`: the batch mean and biased variance over every axis but the channel
  axis, ``(x - mean) * rsqrt(var + eps) * gamma + beta``, gamma 1 with ``fix_gamma``; its own
  gradient rule calls one backward kernel), hidden outputs as the kernels give them
  (BatchNorm: mean and 1/sqrt(var + eps); SyncBatchNorm: mean and var), and the new moving
  statistics ``moving * momentum + batch * (1 - momentum)``, which the runner writes when the
  backward pass runs (MXNet's backward kernel updates them). ``use_global_stats``: as inference.
* ``Dropout`` (``axes`` empty): a uniform draw per element kept below ``1 - p``, scaled by
  ``1 / (1 - p)``; the draws are onnxruntime's, not numpy's.

Gradients then come from these ops' own rules, and equal the fused kernels' to float32
rounding (``tests/autograd/test_train_expand.py``).
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
        # one node with its own gradient rule (MXNet's backward-kernel form, about eight
        # full-size passes) instead of elementary ops differentiated one by one (about fifteen)
        bn = F._internal._backward_BatchNorm_train_forward(
            x, gamma, beta, eps=p.eps, fix_gamma=p.fix_gamma, axis=axis_of(p))
        y, mean, var = bn[0], bn[1], bn[2]
        inv = None if plain_var else F.rsqrt(F._internal._plus_scalar(var, scalar=p.eps))
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
