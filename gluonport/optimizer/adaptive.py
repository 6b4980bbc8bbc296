"""Adaptive optimizers of MXNet 1.9.1: Adam, AdaGrad, RMSProp, AdaDelta, Ftrl, FTML, Adamax, Nadam,
LAMB, GroupAdaGrad (``mx.optimizer.contrib``) and the ``Test`` optimizer.

Those MXNet implements with a fused op call that op; the others repeat MXNet's NDArray
arithmetic on the float32 buffers in the same order (scalars cast to the array's dtype, as
MXNet's ``_mul_scalar`` & co. do), so results agree to about one ulp.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from ..ndarray import invoke
from .optimizer import Optimizer, OptimizerError, check_nd, fused, register, scalar, state_zeros

__all__ = ["Adam", "AdaGrad", "RMSProp", "AdaDelta", "Ftrl", "FTML", "Adamax", "Nadam", "LAMB",
           "GroupAdaGrad", "Test"]


def _scaled_grad(opt: Optimizer, weight, grad, with_wd: float | None = None) -> np.ndarray:
    """``grad * rescale_grad`` (``+ wd * weight``), clipped: MXNet's Python-side preamble."""
    s = lambda x: scalar(x, weight)  # noqa: E731
    g = grad._data * s(opt.rescale_grad)
    if with_wd is not None:
        g = g + s(with_wd) * weight._data
    if opt.clip_gradient is not None:
        g = np.clip(g, s(-opt.clip_gradient), s(opt.clip_gradient))
    return g


@register
class Adam(Optimizer):
    """Adam (``adam_update``, bias correction folded into the learning rate as MXNet does)."""

    def __init__(self, learning_rate: float = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-8, lazy_update: bool = True, **kwargs: Any):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.lazy_update = lazy_update

    def create_state(self, index, weight):
        return (state_zeros(weight, weight.dtype), state_zeros(weight, weight.dtype))

    def update(self, index, weight, grad, state):
        check_nd(weight, grad)
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        t = self._index_update_count[index]
        lr *= math.sqrt(1.0 - self.beta2 ** t) / (1.0 - self.beta1 ** t)
        kw: dict = {"beta1": self.beta1, "beta2": self.beta2, "epsilon": self.epsilon,
                    "rescale_grad": self.rescale_grad}
        if self.clip_gradient:
            kw["clip_gradient"] = self.clip_gradient
        mean, var = state
        fused("adam_update", weight, grad, mean, var, out=weight, lazy_update=self.lazy_update,
              lr=lr, wd=wd, **kw)


@register
class AdaGrad(Optimizer):
    """AdaGrad (dense: MXNet's NDArray arithmetic; the history is float32)."""

    def __init__(self, eps: float = 1e-7, **kwargs: Any):
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        return state_zeros(weight)

    def update(self, index, weight, grad, state):
        check_nd(weight, grad)
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        s = lambda x: scalar(x, weight)  # noqa: E731
        g = _scaled_grad(self, weight, grad)
        h = state._data
        h[...] = h + g * g
        div = g / np.sqrt(h + s(self.float_stable_eps))
        w = weight._data
        w[...] = w + (div + w * s(wd)) * s(-lr)


@register
class RMSProp(Optimizer):
    """RMSProp, plain (``rmsprop_update``) or centered (``rmspropalex_update``)."""

    def __init__(self, learning_rate: float = 0.001, gamma1: float = 0.9, gamma2: float = 0.9,
                 epsilon: float = 1e-8, centered: bool = False, clip_weights: float | None = None,
                 **kwargs: Any):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.gamma1, self.gamma2 = gamma1, gamma2
        self.centered, self.epsilon, self.clip_weights = centered, epsilon, clip_weights

    def create_state(self, index, weight):
        return tuple(state_zeros(weight) for _ in range(3 if self.centered else 1))

    def update(self, index, weight, grad, state):
        check_nd(weight, grad)
        self._update_count(index)
        kw: dict = {"gamma1": self.gamma1, "epsilon": self.epsilon,
                    "rescale_grad": self.rescale_grad, "lr": self._get_lr(index),
                    "wd": self._get_wd(index)}
        if self.centered:
            kw["gamma2"] = self.gamma2
        if self.clip_gradient:
            kw["clip_gradient"] = self.clip_gradient
        if self.clip_weights:
            kw["clip_weights"] = self.clip_weights
        if not self.centered:
            fused("rmsprop_update", weight, grad, state[0], out=weight, **kw)
        else:
            fused("rmspropalex_update", weight, grad, *state, out=weight, **kw)


@register
class AdaDelta(Optimizer):
    """AdaDelta (MXNet's NDArray arithmetic; like MXNet it scales ``grad`` in place)."""

    def __init__(self, rho: float = 0.90, epsilon: float = 1e-5, **kwargs: Any):
        super().__init__(**kwargs)
        self.rho, self.epsilon = rho, epsilon

    def create_state(self, index, weight):
        return (state_zeros(weight), state_zeros(weight))

    def update(self, index, weight, grad, state):
        check_nd(weight, grad)
        wd = self._get_wd(index)
        self._update_count(index)
        s = lambda x: scalar(x, weight)  # noqa: E731
        grad._data[...] = grad._data * scalar(self.rescale_grad, grad)
        g = grad._data
        if self.clip_gradient is not None:
            g = np.clip(g, s(-self.clip_gradient), s(self.clip_gradient))
        acc_g, acc_delta = state[0]._data, state[1]._data
        acc_g[...] = acc_g * s(self.rho)
        acc_g[...] = acc_g + s(1.0 - self.rho) * g * g
        delta = np.sqrt(acc_delta + s(self.epsilon)) / np.sqrt(acc_g + s(self.epsilon)) * g
        acc_delta[...] = acc_delta * s(self.rho)
        acc_delta[...] = acc_delta + s(1.0 - self.rho) * delta * delta
        w = weight._data
        w[...] = w - (delta + w * s(wd))


@register
class Ftrl(Optimizer):
    """FTRL-Proximal (``ftrl_update``)."""

    def __init__(self, lamda1: float = 0.01, learning_rate: float = 0.1, beta: float = 1,
                 **kwargs: Any):
        super().__init__(**kwargs)
        self.lamda1, self.beta, self.lr = lamda1, beta, learning_rate

    def create_state(self, index, weight):
        return (state_zeros(weight), state_zeros(weight))

    def update(self, index, weight, grad, state):
        check_nd(weight, grad)
        self._update_count(index)
        wd, lr = self._get_wd(index), self._get_lr(index)
        kw: dict = {"lamda1": self.lamda1, "beta": self.beta, "rescale_grad": self.rescale_grad}
        if self.clip_gradient:
            kw["clip_gradient"] = self.clip_gradient
        z, n = state
        fused("ftrl_update", weight, grad, z, n, out=weight, lr=lr, wd=wd, **kw)


@register
class FTML(Optimizer):
    """FTML (``ftml_update``)."""

    def __init__(self, beta1: float = 0.6, beta2: float = 0.999, epsilon: float = 1e-8,
                 **kwargs: Any):
        super().__init__(**kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon

    def create_state(self, index, weight):
        return tuple(state_zeros(weight, weight.dtype) for _ in range(3))

    def update(self, index, weight, grad, state):
        check_nd(weight, grad)
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        kw: dict = {"beta1": self.beta1, "beta2": self.beta2, "epsilon": self.epsilon,
                    "rescale_grad": self.rescale_grad, "t": self._index_update_count[index]}
        if self.clip_gradient:
            kw["clip_grad"] = self.clip_gradient
        fused("ftml_update", weight, grad, *state, out=weight, lr=lr, wd=wd, **kw)


@register
class Adamax(Optimizer):
    """AdaMax (MXNet's NDArray arithmetic)."""

    def __init__(self, learning_rate: float = 0.002, beta1: float = 0.9, beta2: float = 0.999,
                 **kwargs: Any):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1, self.beta2 = beta1, beta2

    def create_state(self, index, weight):
        return (state_zeros(weight, weight.dtype), state_zeros(weight, weight.dtype))

    def update(self, index, weight, grad, state):
        check_nd(weight, grad)
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        t = self._index_update_count[index]
        lr /= 1.0 - self.beta1 ** t
        s = lambda x: scalar(x, weight)  # noqa: E731
        g = _scaled_grad(self, weight, grad, with_wd=wd)
        m, u = state[0]._data, state[1]._data
        m[...] = m * s(self.beta1)
        m[...] = m + s(1.0 - self.beta1) * g
        u[...] = np.maximum(u * s(self.beta2), np.abs(g))
        w = weight._data
        w[...] = w - m * s(lr) / u


@register
class Nadam(Optimizer):
    """Nesterov Adam (MXNet's NDArray arithmetic; one momentum schedule for all weights, as
    in MXNet)."""

    def __init__(self, learning_rate: float = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-8, schedule_decay: float = 0.004, **kwargs: Any):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.schedule_decay = schedule_decay
        self.m_schedule = 1.0

    def create_state(self, index, weight):
        return (state_zeros(weight, weight.dtype), state_zeros(weight, weight.dtype))

    def update(self, index, weight, grad, state):
        check_nd(weight, grad)
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        t = self._index_update_count[index]
        s = lambda x: scalar(x, weight)  # noqa: E731
        g = _scaled_grad(self, weight, grad, with_wd=wd)
        mom_t = self.beta1 * (1.0 - 0.5 * pow(0.96, t * self.schedule_decay))
        mom_t1 = self.beta1 * (1.0 - 0.5 * pow(0.96, (t + 1) * self.schedule_decay))
        self.m_schedule = self.m_schedule * mom_t
        m_next = self.m_schedule * mom_t1
        m, v = state[0]._data, state[1]._data
        m[...] = m * s(self.beta1)
        m[...] = m + s(1.0 - self.beta1) * g
        v[...] = v * s(self.beta2)
        v[...] = v + s(1.0 - self.beta2) * g * g
        g_prime = g / s(1.0 - self.m_schedule)
        m_prime = m / s(1.0 - m_next)
        v_prime = v / s(1.0 - pow(self.beta2, t))
        m_bar = g_prime * s(1.0 - mom_t) + m_prime * s(mom_t1)
        w = weight._data
        w[...] = w - m_bar * s(lr) / (np.sqrt(v_prime) + s(self.epsilon))


@register
class LAMB(Optimizer):
    """LAMB: ``lamb_update_phase1/2`` for one weight, ``_multi_lamb_update`` for a list (what
    the Updater passes, as MXNet's aggregation does)."""

    def __init__(self, learning_rate: float = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-6, lower_bound: float | None = None,
                 upper_bound: float | None = None, bias_correction: bool = True, **kwargs: Any):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.lower_bound, self.upper_bound = lower_bound, upper_bound
        self.bias_correction = bias_correction
        self.aggregate_num = max(1, min(45, int(os.getenv("MXNET_OPTIMIZER_AGGREGATION_SIZE",
                                                          "45"))))

    def create_state(self, index, weight):
        return (state_zeros(weight, weight.dtype), state_zeros(weight, weight.dtype))

    def _bounds(self) -> dict:
        kw = {}
        if self.lower_bound:
            kw["lower_bound"] = self.lower_bound
        if self.upper_bound:
            kw["upper_bound"] = self.upper_bound
        return kw

    def _one(self, index, weight, grad, state, mp):
        check_nd(weight, grad)
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        kw: dict = {"beta1": self.beta1, "beta2": self.beta2, "epsilon": self.epsilon,
                    "bias_correction": self.bias_correction, "rescale_grad": self.rescale_grad,
                    "t": self._index_update_count[index], "wd": wd}
        if self.clip_gradient:
            kw["clip_gradient"] = self.clip_gradient
        if mp:
            (mean, var), w32 = state[1], state[0]
            g = invoke("mp_lamb_update_phase1", (weight, grad, mean, var, w32), kw)
            r1, r2 = invoke("norm", (w32,)), invoke("norm", (g,))
            fused("mp_lamb_update_phase2", weight, g, r1, r2, w32, out=weight, lr=lr,
                  **self._bounds())
        else:
            mean, var = state
            g = invoke("lamb_update_phase1", (weight, grad, mean, var), kw)
            r1, r2 = invoke("norm", (weight,)), invoke("norm", (g,))
            fused("lamb_update_phase2", weight, g, r1, r2, out=weight, lr=lr, **self._bounds())

    def _many(self, index, weight, grad, state, mp):
        steps, lrs, wds = [], [], []
        for i, w, g in zip(index, weight, grad):
            check_nd(w, g)
            self._update_count(i)
            steps.append(self._index_update_count[i])
            lrs.append(self._get_lr(i))
            wds.append(self._get_wd(i))
        kw: dict = {"beta1": self.beta1, "beta2": self.beta2, "epsilon": self.epsilon,
                    "bias_correction": self.bias_correction, "rescale_grad": self.rescale_grad,
                    **self._bounds()}
        if self.clip_gradient:
            kw["clip_gradient"] = self.clip_gradient
        for s in range(0, len(weight), self.aggregate_num):
            e = min(s + self.aggregate_num, len(weight))
            if mp:
                per = [(w, g, st[1][0], st[1][1], st[0])
                       for w, g, st in zip(weight[s:e], grad[s:e], state[s:e])]
                op = "_multi_mp_lamb_update"
            else:
                per = [(w, g, st[0], st[1]) for w, g, st in zip(weight[s:e], grad[s:e],
                                                                state[s:e])]
                op = "_multi_lamb_update"
            fused(op, *[x for p in per for x in p], out=list(weight[s:e]), num_tensors=e - s,
                  step_count=tuple(steps[s:e]), learning_rates=tuple(lrs[s:e]),
                  wds=tuple(wds[s:e]), **kw)

    def _update_impl(self, index, weight, grad, state, multi_precision=False):
        if self.aggregate_num <= 1 or not isinstance(index, (tuple, list)):
            if isinstance(index, (tuple, list)):
                index, weight, grad, state = index[0], weight[0], grad[0], state[0]
            self._one(index, weight, grad, state, multi_precision)
        else:
            self._many(index, weight, grad, state, multi_precision)

    def update(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index, weight, grad, state):
        w = weight[0] if isinstance(weight, (tuple, list)) else weight
        use = bool(self.multi_precision and w.dtype == np.float16)
        self._update_impl(index, weight, grad, state, multi_precision=use)


@register
class GroupAdaGrad(Optimizer):
    """AdaGrad with one learning rate per row (``mx.optimizer.contrib.GroupAdaGrad``)."""

    def __init__(self, eps: float = 1e-5, **kwargs: Any):
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        if len(weight.shape) != 2:
            raise OptimizerError(f"GroupAdaGrad needs 2-D weights, got shape {weight.shape}")
        return state_zeros_shape((weight.shape[0], 1), weight)

    def update(self, index, weight, grad, state):
        check_nd(weight, grad)
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        if wd != 0:
            raise OptimizerError("Weight decay is not supported for GroupAdaGrad")
        s = lambda x: scalar(x, weight)  # noqa: E731
        g = _scaled_grad(self, weight, grad)
        h = state._data
        sq = g * g
        h[...] = h + (np.cumsum(sq, axis=1, dtype=np.float32)[:, -1:] / s(sq.shape[1])
                      if sq.shape[1] else 0)
        w = weight._data
        w[...] = w - s(lr) * g / np.sqrt(h + s(self.float_stable_eps))


def state_zeros_shape(shape: tuple, like) -> Any:
    from ..ndarray import zeros

    return zeros(shape, like.context, dtype="float32")


@register
class Test(Optimizer):
    """MXNet's test optimizer: ``weight += grad * rescale_grad``; the state mirrors the weight."""

    def create_state(self, index, weight):
        return state_zeros(weight)

    def update(self, index, weight, grad, state):
        w = weight._data
        w[...] = w + grad._data * scalar(self.rescale_grad, weight)
        state._data[...] = w
