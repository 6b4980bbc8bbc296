"""SGD-family optimizers of MXNet 1.9.1: SGD, ccSGD, NAG, Signum, LARS, LBSGD, DCASGD, SGLD.

Dense gradients only: ``lazy_update`` matters for row_sparse gradients in MXNet, and a dense
gradient gets the standard update either way.
"""

from __future__ import annotations

import logging
import math
import os
import warnings
from typing import Any

import numpy as np

from ..ndarray import NDArray, array, invoke
from .optimizer import Optimizer, check_nd, fused, register, scalar, state_zeros

__all__ = ["SGD", "ccSGD", "NAG", "Signum", "LARS", "LBSGD", "DCASGD", "SGLD"]


def _flat(groups) -> list:
    return [x for group in groups for x in group]


def _as_lists(indices, weights, grads, states):
    if not isinstance(indices, (tuple, list)):
        return [indices], [weights], [grads], [states]
    return list(indices), list(weights), list(grads), list(states)


def _mp_master_state(opt: Optimizer, index: Any, weight: NDArray, what: str) -> Any:
    """SGD/NAG/LARS states: ``(state, float32 master copy)`` for float16 with multi_precision."""
    if opt.multi_precision and weight.dtype == np.float16:
        master = weight.astype(np.float32)
        return (opt.create_state(index, master), master)
    if weight.dtype == np.float16 and not opt.multi_precision:
        warnings.warn("Accumulating with float16 in optimizer can lead to poor accuracy or "
                      "slow convergence. Consider using multi_precision=True option of the "
                      f"{what} optimizer", stacklevel=3)
    return opt.create_state(index, weight)


def _use_mp(opt: Optimizer, weight: Any) -> bool:
    w = weight[0] if isinstance(weight, (tuple, list)) else weight
    return bool(opt.multi_precision and w.dtype == np.float16)


@register
class SGD(Optimizer):
    """SGD with momentum and weight decay (MXNet's ``sgd_update``/``sgd_mom_update``; dense
    updates go through ``multi_sgd_update``/``multi_sgd_mom_update`` as in MXNet)."""

    def __init__(self, momentum: float = 0.0, lazy_update: bool = True, **kwargs: Any):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.lazy_update = lazy_update
        self.aggregate_num = int(os.getenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", "4"))

    def create_state_multi_precision(self, index, weight):
        return _mp_master_state(self, index, weight, "SGD")

    def create_state(self, index, weight):
        return state_zeros(weight, weight.dtype) if self.momentum != 0.0 else None

    def _kwargs(self) -> dict:
        kwargs: dict = {"rescale_grad": self.rescale_grad}
        if self.momentum > 0:
            kwargs["momentum"] = self.momentum
        if self.clip_gradient:
            kwargs["clip_gradient"] = self.clip_gradient
        return kwargs

    def _update_impl(self, indices, weights, grads, states, multi_precision=False):
        indices, weights, grads, states = _as_lists(indices, weights, grads, states)
        for w, g in zip(weights, grads):
            check_nd(w, g)
        self._update_count(indices)
        lrs, wds = self._get_lrs(indices), self._get_wds(indices)
        kw = dict(self._kwargs(), num_weights=len(weights), lrs=lrs, wds=wds)
        if not multi_precision:
            if self.momentum > 0:
                fused("multi_sgd_mom_update", *_flat(zip(weights, grads, states)), out=weights,
                      **kw)
            else:
                fused("multi_sgd_update", *_flat(zip(weights, grads)), out=weights, **kw)
        elif self.momentum > 0:
            fused("multi_mp_sgd_mom_update", *_flat(zip(weights, grads, *zip(*states))),
                  out=weights, **kw)
        else:
            fused("multi_mp_sgd_update",
                  *_flat(zip(weights, grads, [s[1] for s in states])), out=weights, **kw)

    def update(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state, multi_precision=_use_mp(self, weight))


@register
class ccSGD(SGD):  # noqa: N801 - MXNet's name
    """[Deprecated in MXNet] The same as :class:`SGD`."""


@register
class NAG(Optimizer):
    """Nesterov accelerated gradient (``nag_mom_update``; ``sgd_update`` without momentum)."""

    def __init__(self, momentum: float = 0.0, **kwargs: Any):
        super().__init__(**kwargs)
        self.momentum = momentum

    def create_state_multi_precision(self, index, weight):
        return _mp_master_state(self, index, weight, "NAG")

    def create_state(self, index, weight):
        return state_zeros(weight, weight.dtype) if self.momentum != 0.0 else None

    def _update_impl(self, index, weight, grad, state, multi_precision=False):
        check_nd(weight, grad)
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        kw: dict = {"rescale_grad": self.rescale_grad, "lr": lr, "wd": wd}
        if self.momentum > 0:
            kw["momentum"] = self.momentum
        if self.clip_gradient:
            kw["clip_gradient"] = self.clip_gradient
        if not multi_precision:
            if state is not None:
                fused("nag_mom_update", weight, grad, state, out=weight, **kw)
            else:
                fused("sgd_update", weight, grad, out=weight, **kw)
        elif state[0] is not None:
            fused("mp_nag_mom_update", weight, grad, state[0], state[1], out=weight, **kw)
        else:
            fused("mp_sgd_update", weight, grad, state[1], out=weight, **kw)

    def update(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index, weight, grad, state):
        use = _use_mp(self, weight) and isinstance(state, (tuple, list))
        self._update_impl(index, weight, grad, state, multi_precision=use)


@register
class Signum(Optimizer):
    """signSGD / Signum (``signsgd_update``, ``signum_update``)."""

    def __init__(self, learning_rate: float = 0.01, momentum: float = 0.9, wd_lh: float = 0.0,
                 **kwargs: Any):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.momentum = momentum
        self.wd_lh = wd_lh

    def create_state(self, index, weight):
        return state_zeros(weight, weight.dtype) if self.momentum != 0.0 else None

    def update(self, index, weight, grad, state):
        check_nd(weight, grad)
        self._update_count(index)
        kw: dict = {"rescale_grad": self.rescale_grad, "lr": self._get_lr(index),
                    "wd": self._get_wd(index)}
        if self.momentum > 0:
            kw["momentum"] = self.momentum
        if self.clip_gradient:
            kw["clip_gradient"] = self.clip_gradient
        if self.wd_lh:
            kw["wd_lh"] = self.wd_lh
        if state is not None:
            fused("signum_update", weight, grad, state, out=weight, **kw)
        else:
            kw.pop("momentum", None)
            kw.pop("wd_lh", None)
            fused("signsgd_update", weight, grad, out=weight, **kw)


_NO_LARS = ("gamma", "beta", "bias")


@register
class LARS(Optimizer):
    """LARS (layer-wise adaptive rate scaling) over SGD: ``multi_sum_sq``, ``multi_lars`` and
    the ``preloaded_multi_*`` updates, as MXNet does for dense arrays."""

    def __init__(self, momentum: float = 0.0, lazy_update: bool = True, eta: float = 0.001,
                 eps: float = 0, momentum_correction: bool = True, **kwargs: Any):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.momentum_correction = momentum_correction
        self.lazy_update = lazy_update
        self.aggregate_num = int(os.getenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", "4"))
        self.eta = eta
        self.eps = eps
        self.skip = 0
        self.last_lr = None
        self.cur_lr = None

    def _get_lrs(self, indices):
        if self.cur_lr is not None:
            self.last_lr = self.cur_lr
        lr = self._base_lr()
        if self.cur_lr is None:
            self.last_lr = lr
        self.cur_lr = lr
        return self._scaled([lr for _ in indices], indices, "lr_mult", self.lr_mult)

    def set_wd_mult(self, args_wd_mult):
        self.wd_mult = {}
        for n in self.idx2name.values():
            if not n.endswith("_weight"):
                self.wd_mult[n] = 0.0
        self._sym_wd_mult()
        self.wd_mult.update(args_wd_mult)

    def create_state_multi_precision(self, index, weight):
        return _mp_master_state(self, index, weight, "SGD")

    def create_state(self, index, weight):
        return state_zeros(weight, weight.dtype) if self.momentum != 0.0 else None

    def _update_impl(self, indices, weights, grads, states, multi_precision=False):
        indices, weights, grads, states = _as_lists(indices, weights, grads, states)
        for w, g in zip(weights, grads):
            check_nd(w, g)
        self._update_count(indices)
        lrs, wds = self._get_lrs(indices), self._get_wds(indices)
        kw: dict = {"rescale_grad": self.rescale_grad}
        if self.momentum > 0:
            kw["momentum"] = (self.momentum * (self.cur_lr / self.last_lr)
                              if self.momentum_correction and self.last_lr != 0
                              else self.momentum)
        if self.clip_gradient:
            kw["clip_gradient"] = self.clip_gradient
        names = [self.idx2name[i] if i in self.idx2name else str(i) for i in indices]
        skip = [n.endswith(_NO_LARS) for n in names]
        order = ([i for i in range(len(indices)) if not skip[i]]
                 + [i for i in range(len(indices)) if skip[i]])
        n_lars = sum(not s for s in skip)
        ctx = weights[0].context
        new_lrs = array([lrs[i] for i in order], ctx=ctx, dtype="float32")
        new_wds = array([wds[i] for i in order], ctx=ctx, dtype="float32")
        ws, gs, ss = ([seq[i] for i in order] for seq in (weights, grads, states))
        if n_lars > 0:
            w_sq = invoke("multi_sum_sq", ws[:n_lars], {"num_arrays": n_lars})
            g_sq = invoke("multi_sum_sq", gs[:n_lars], {"num_arrays": n_lars})
            lars = invoke("multi_lars", (new_lrs[:n_lars], w_sq, g_sq, new_wds[:n_lars]),
                          {"eta": self.eta, "eps": self.eps, "rescale_grad": self.rescale_grad})
            new_lrs[:n_lars] = lars
        step = max(1, self.aggregate_num)
        for s in range(0, len(indices), step):
            e = min(s + step, len(indices))
            tail = [new_lrs[s:e], new_wds[s:e]]
            kwe = dict(kw, num_weights=e - s)
            if not multi_precision:
                if self.momentum > 0:
                    inputs = _flat(zip(ws[s:e], gs[s:e], ss[s:e]))
                    op = "preloaded_multi_sgd_mom_update"
                else:
                    inputs, op = _flat(zip(ws[s:e], gs[s:e])), "preloaded_multi_sgd_update"
            elif self.momentum > 0:
                inputs = _flat(zip(ws[s:e], gs[s:e], *zip(*ss[s:e])))
                op = "preloaded_multi_mp_sgd_mom_update"
            else:
                inputs = _flat(zip(ws[s:e], gs[s:e], [st[1] for st in ss[s:e]]))
                op = "preloaded_multi_mp_sgd_update"
            fused(op, *inputs, *tail, out=ws[s:e], **kwe)

    def update(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state, multi_precision=_use_mp(self, weight))


@register
class LBSGD(Optimizer):
    """Large-batch SGD with warm-up multipliers (MXNet's ``LBSGD``)."""

    def __init__(self, momentum: float = 0.0, multi_precision: bool = False,
                 warmup_strategy: str = "linear", warmup_epochs: int = 5, batch_scale: int = 1,
                 updates_per_epoch: int = 32, begin_epoch: int = 0, num_epochs: int = 60,
                 **kwargs: Any):
        super().__init__(**kwargs)
        logging.info("Running Large-Batch SGD Algorithm")
        self.momentum = momentum
        self.multi_precision = multi_precision
        self.warmup_strategy = warmup_strategy
        self.warmup_epochs = warmup_epochs
        self.batch_scale = batch_scale
        self.updates_per_epoch = updates_per_epoch
        self.init_updates = begin_epoch * updates_per_epoch
        self.num_epochs = num_epochs
        self.lbmult = 1
        self.cumgrads: dict = {}
        self.adaptive = False
        self.admult = 1

    def create_state(self, index, weight):
        if self.multi_precision and weight.dtype == np.float16:
            master = array(weight, ctx=weight.context, dtype=np.float32)
            mom = state_zeros(weight, np.float32) if self.momentum != 0.0 else None
            return (mom, master)
        return state_zeros(weight, weight.dtype) if self.momentum != 0.0 else None

    def _get_lbmult(self, nup):
        nwup = self.warmup_epochs * self.updates_per_epoch
        maxmult = float(self.batch_scale)
        if nup >= nwup:
            return maxmult
        if nwup <= 1:
            return 1.0
        ramps = {"linear": lambda: 1.0 + (maxmult - 1) * nup / nwup,
                 "power2": lambda: 1.0 + (maxmult - 1) * (nup * nup) / (nwup * nwup),
                 "sqrt": lambda: 1.0 + (maxmult - 1) * math.sqrt(float(nup) / nwup)}
        return ramps.get(self.warmup_strategy, lambda: 1.0)()

    @staticmethod
    def _l2norm(v):
        return float((v._data * v._data).sum())

    def _get_lars(self, weight, g, wd):
        w2, g2 = self._l2norm(weight), self._l2norm(g)
        lars = math.sqrt(w2 / (g2 + wd * w2 + 1e-18))
        return min(max(lars, 0.01), 100)

    def _cumulate_gradient(self, grad, index):
        cgrad = self.cumgrads.get(index, {})
        if cgrad and cgrad["num_cums"] > 0:
            cgrad = {"cum_grad": cgrad["cum_grad"] + grad, "num_cums": cgrad["num_cums"] + 1}
        else:
            cgrad = {"cum_grad": grad, "num_cums": self.init_updates + 1}
        self.cumgrads[index] = cgrad
        return cgrad

    def update(self, index, weight, grad, state):
        check_nd(weight, grad)
        lr, wd = self._get_lr(index), self._get_wd(index)
        self._update_count(index)
        cgrad = self._cumulate_gradient(grad, index)
        if cgrad["num_cums"] % self.batch_scale != 0:
            fused("sgd_update", weight, grad, out=weight, lr=0.0, wd=wd)
            return
        grad = cgrad["cum_grad"] / self.batch_scale
        mult = (self._get_lars(weight, grad, wd) if self.warmup_strategy == "lars"
                else self._get_lbmult(cgrad["num_cums"]))
        kw: dict = {"rescale_grad": self.rescale_grad, "lr": lr * mult, "wd": wd}
        if self.momentum > 0:
            kw["momentum"] = self.momentum
        if self.clip_gradient:
            kw["clip_gradient"] = self.clip_gradient
        if not isinstance(state, (list, tuple)):
            if state is not None:
                fused("sgd_mom_update", weight, grad, state, out=weight, **kw)
            else:
                kw.pop("momentum", None)
                fused("sgd_update", weight, grad, out=weight, **kw)
        elif state[0] is not None:
            fused("mp_sgd_mom_update", weight, grad, state[0], state[1], out=weight, **kw)
        else:
            kw.pop("momentum", None)
            fused("mp_sgd_update", weight, grad, state[1], out=weight, **kw)
        self.cumgrads[index]["cum_grad"] = 0


@register
class DCASGD(Optimizer):
    """Delay-compensated asynchronous SGD (MXNet's NDArray arithmetic, in float32)."""

    def __init__(self, momentum: float = 0.0, lamda: float = 0.04, **kwargs: Any):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.weight_previous: dict = {}
        self.lamda = lamda

    def create_state(self, index, weight):
        mom = None if self.momentum == 0.0 else state_zeros(weight, weight.dtype)
        return (mom, weight.copy())

    def update(self, index, weight, grad, state):
        check_nd(weight, grad)
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        w, s = weight._data, lambda x: scalar(x, weight)
        g = grad._data * s(self.rescale_grad)
        if self.clip_gradient is not None:
            g = np.clip(g, s(-self.clip_gradient), s(self.clip_gradient))
        mom, prev = state
        step = s(-lr) * (g + w * s(wd) + s(self.lamda) * g * g * (w - prev._data))
        if mom is not None:
            mom._data[...] = mom._data * s(self.momentum)
            mom._data[...] = mom._data + step
            step = mom._data
        prev._data[...] = w
        w[...] = w + step


@register
class SGLD(Optimizer):
    """Stochastic gradient Langevin dynamics (its noise comes from gluonport's generator, so
    it cannot match MXNet's draws)."""

    def create_state(self, index, weight):
        return None

    def update(self, index, weight, grad, state):
        check_nd(weight, grad)
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        s = lambda x: scalar(x, weight)  # noqa: E731
        g = grad._data * s(self.rescale_grad)
        if self.clip_gradient is not None:
            g = np.clip(g, s(-self.clip_gradient), s(self.clip_gradient))
        w = weight._data
        w[...] = w + s(-lr / 2) * (g + w * s(wd))
        noise = invoke("_random_normal", (), {"loc": 0.0, "scale": math.sqrt(lr),
                                               "shape": weight.shape,
                                               "dtype": str(weight.dtype.__name__
                                                            if hasattr(weight.dtype, "__name__")
                                                            else weight.dtype)})
        w[...] = w + noise._data
