"""``nd.contrib.adamw_update`` & co.: MXNet 1.9.1's Python wrappers around the AdamW and LAMB
ops, which take ``rescale_grad`` as a number (or NDArray) and lists of tensors."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["optimizer_wrappers"]


def optimizer_wrappers(invoke: Callable, NDArray: type, full: Callable) -> dict[str, Callable]:  # noqa: N803
    """The wrappers, bound to the ``nd`` dispatcher ``invoke``."""

    def _rescale(value: Any, ctx: Any) -> Any:
        if isinstance(value, NDArray):
            return value.as_in_context(ctx)
        return full((1,), value, ctx=ctx)

    def _flat(*lists: Sequence) -> list:
        return [x for group in zip(*lists) for x in group]

    def adamw_update(weight, grad, mean, var, rescale_grad, lr, eta, beta1=0.9, beta2=0.999,
                     epsilon=1e-8, wd=0, clip_gradient=-1, out=None, name=None, **kwargs):
        """AdamW of one weight (``_adamw_update``); skipped when rescale_grad is 0/not finite."""
        r = _rescale(rescale_grad, weight.context)
        return invoke("_adamw_update", (weight, grad, mean, var, r),
                      dict(lr=lr, eta=eta, beta1=beta1, beta2=beta2, epsilon=epsilon, wd=wd,
                           clip_gradient=clip_gradient, **kwargs), out=out)

    def mp_adamw_update(weight, grad, mean, var, weight32, rescale_grad, lr, eta, beta1=0.9,
                        beta2=0.999, epsilon=1e-8, wd=0, clip_gradient=-1, out=None, name=None,
                        **kwargs):
        """AdamW on a float32 master copy (``_mp_adamw_update``)."""
        r = _rescale(rescale_grad, weight.context)
        return invoke("_mp_adamw_update", (weight, grad, mean, var, weight32, r),
                      dict(lr=lr, eta=eta, beta1=beta1, beta2=beta2, epsilon=epsilon, wd=wd,
                           clip_gradient=clip_gradient, **kwargs), out=out)

    def multi_adamw_update(weights, grads, mean, var, rescale_grad, lrs, wds, etas, out=None,
                           name=None, size=0, **kwargs):
        """AdamW of several weights (``_multi_adamw_update``)."""
        r = _rescale(rescale_grad, weights[0].context)
        return invoke("_multi_adamw_update", (*_flat(weights, grads, mean, var), r),
                      dict(num_weights=size or len(weights), lrs=lrs, wds=wds, etas=etas,
                           **kwargs), out=out)

    def multi_mp_adamw_update(weights, grads, mean, var, weights32, rescale_grad, lrs, wds,
                              etas, out=None, name=None, size=0, **kwargs):
        """AdamW of several weights with float32 master copies."""
        r = _rescale(rescale_grad, weights[0].context)
        return invoke("_multi_mp_adamw_update", (*_flat(weights, grads, mean, var, weights32), r),
                      dict(num_weights=size or len(weights), lrs=lrs, wds=wds, etas=etas,
                           **kwargs), out=out)

    def multi_lamb_update(weights, grads, mean, var, step_count, lrs, wds, out=None,
                          num_tensors=0, **kwargs):
        """LAMB of several weights (``_multi_lamb_update``)."""
        return invoke("_multi_lamb_update", tuple(_flat(weights, grads, mean, var)),
                      dict(num_tensors=num_tensors or len(weights), step_count=step_count,
                           learning_rates=lrs, wds=wds, **kwargs), out=out)

    def multi_mp_lamb_update(weights, grads, mean, var, weights32, step_count, lrs, wds,
                             out=None, num_tensors=0, **kwargs):
        """LAMB of several weights with float32 master copies."""
        return invoke("_multi_mp_lamb_update",
                      tuple(_flat(weights, grads, mean, var, weights32)),
                      dict(num_tensors=num_tensors or len(weights), step_count=step_count,
                           learning_rates=lrs, wds=wds, **kwargs), out=out)

    return {f.__name__: f for f in (adamw_update, mp_adamw_update, multi_adamw_update,
                                    multi_mp_adamw_update, multi_lamb_update,
                                    multi_mp_lamb_update)}
