"""The optimizer base class and registry (``mx.optimizer.Optimizer``, MXNet 1.9.1).

An optimizer owns the hyper-parameters (learning rate or scheduler, weight decay, per-parameter
``lr_mult``/``wd_mult``, gradient rescaling and clipping) and the update count; subclasses turn
``update(index, weight, grad, state)`` into calls of the fused update operators
(:mod:`gluonport.ops.optimizer`) or into the same NDArray arithmetic MXNet's Python classes do.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..errors import GluonportError
from ..ndarray import NDArray, invoke, zeros

__all__ = ["Optimizer", "register", "create", "OptimizerError"]


class OptimizerError(GluonportError, ValueError):
    """An unknown optimizer name or argument, or a state that does not fit (MXNet raises
    ``ValueError``/``TypeError``; this is both a GluonportError and a ValueError)."""


class Optimizer:
    """The base class of all optimizers (see MXNet's ``mx.optimizer.Optimizer``).

    Parameters
    ----------
    rescale_grad : float
        Multiply gradients by this before updating (often ``1 / batch_size``).
    param_idx2name : dict of int to str, optional
        Index -> parameter name; names not ending in ``_weight``/``_gamma`` get ``wd_mult = 0``.
    wd : float
        Weight decay.
    clip_gradient : float, optional
        Clip gradients to ``[-clip_gradient, clip_gradient]``.
    learning_rate : float, optional
        The learning rate (0.01 when neither it nor ``lr_scheduler`` is given; overrides the
        scheduler's ``base_lr`` when both are).
    lr_scheduler : LRScheduler, optional
        Learning rate as a function of the update count.
    sym : Symbol, optional
        Its variables' ``__lr_mult__``/``__wd_mult__`` attributes set multipliers by name.
    begin_num_update : int
        The initial update count.
    multi_precision : bool
        Keep float32 master copies of float16 weights.
    param_dict : dict of int to Parameter, optional
        Parameters whose ``lr_mult``/``wd_mult`` take precedence.
    """

    opt_registry: dict[str, type] = {}

    def __init__(self, rescale_grad: float = 1.0, param_idx2name: dict | None = None,
                 wd: float = 0.0, clip_gradient: float | None = None,
                 learning_rate: float | None = None, lr_scheduler: Any = None, sym: Any = None,
                 begin_num_update: int = 0, multi_precision: bool = False,
                 param_dict: dict | None = None):
        self.rescale_grad = rescale_grad
        self.lr_scheduler = lr_scheduler
        if lr_scheduler is None and learning_rate is None:
            learning_rate = 0.01
        self.lr = learning_rate
        if lr_scheduler is not None and learning_rate is not None:
            if lr_scheduler.base_lr != learning_rate:
                print(UserWarning("learning rate from ``lr_scheduler`` has been overwritten by "
                                  "``learning_rate`` in optimizer."))
                lr_scheduler.base_lr = learning_rate
        self.wd = wd
        self.lr_mult: dict = {}
        self.wd_mult: dict = {}
        self.begin_num_update = begin_num_update
        self.num_update = begin_num_update
        self._all_index_update_counts: dict = {0: {}}
        self._index_update_count = self._all_index_update_counts[0]
        self.clip_gradient = clip_gradient
        self.multi_precision = multi_precision
        self.aggregate_num = 0
        if param_idx2name is None:
            param_idx2name = {}
        if not isinstance(param_idx2name, dict):
            raise OptimizerError("param_idx2name should be a dict of param indexes to names.")
        self.idx2name = param_idx2name.copy()
        self.sym_info = (sym.attr_dict(), sym.list_arguments()) if sym is not None else ()
        self.param_dict = param_dict if param_dict else {}
        self.allow_np_array = False
        self.set_lr_mult({})
        self.set_wd_mult({})

    # --- registry -------------------------------------------------------------------------------
    @staticmethod
    def register(klass: type) -> type:
        """Register an optimizer class under its lower-cased class name."""
        if not isinstance(klass, type):
            raise OptimizerError(f"register expects an Optimizer class, got {klass!r}")
        name = klass.__name__.lower()
        if name in Optimizer.opt_registry:
            old = Optimizer.opt_registry[name]
            warnings.warn(f"WARNING: New optimizer {klass.__module__}.{klass.__name__} is "
                          f"overriding existing optimizer {old.__module__}.{old.__name__}",
                          stacklevel=2)
        Optimizer.opt_registry[name] = klass
        return klass

    @staticmethod
    def create_optimizer(name: str, **kwargs: Any) -> Optimizer:
        """An optimizer by (case-insensitive) name: ``create_optimizer('sgd', momentum=0.9)``."""
        if not isinstance(name, str) or name.lower() not in Optimizer.opt_registry:
            known = ", ".join(sorted(Optimizer.opt_registry))
            raise OptimizerError(f"Cannot find optimizer {name}; registered optimizers: {known}")
        klass = Optimizer.opt_registry[name.lower()]
        try:
            return klass(**kwargs)
        except TypeError as exc:  # an unknown keyword argument
            raise OptimizerError(f"optimizer {name!r}: {exc}; see the arguments of "
                                 f"{klass.__name__} and of Optimizer") from None

    # --- learning rate and weight decay ------------------------------------------------------
    @property
    def learning_rate(self) -> float:
        if self.lr_scheduler is not None:
            return self.lr_scheduler(self.num_update)
        return self.lr

    def set_learning_rate(self, lr: float) -> None:
        if self.lr_scheduler is not None:
            raise UserWarning("LRScheduler of the optimizer has already been defined. Note that "
                              "set_learning_rate can mutate the value of the learning rate of "
                              "the optimizer only when the LRScheduler of the optimizer is "
                              "undefined.")
        self.lr = lr

    def set_lr_scale(self, args_lrscale: Any) -> None:
        """[DEPRECATED] use :meth:`set_lr_mult`."""
        raise DeprecationWarning

    def set_lr_mult(self, args_lr_mult: dict) -> None:
        """Per-parameter learning-rate multipliers by name or index (plus ``__lr_mult__``)."""
        self.lr_mult = {}
        if self.sym_info:
            attr, arg_names = self.sym_info
            for name in arg_names:
                if name in attr and "__lr_mult__" in attr[name]:
                    self.lr_mult[name] = float(attr[name]["__lr_mult__"])
        self.lr_mult.update(args_lr_mult)

    def set_wd_mult(self, args_wd_mult: dict) -> None:
        """Per-parameter weight-decay multipliers; names not ending in ``_weight``/``_gamma``
        get 0 (plus ``__wd_mult__`` attributes of ``sym``)."""
        self.wd_mult = {}
        for n in self.idx2name.values():
            if not (n.endswith("_weight") or n.endswith("_gamma")):
                self.wd_mult[n] = 0.0
        self._sym_wd_mult()
        self.wd_mult.update(args_wd_mult)

    def _sym_wd_mult(self) -> None:
        if self.sym_info:
            attr, arg_names = self.sym_info
            for name in arg_names:
                if name in attr and "__wd_mult__" in attr[name]:
                    self.wd_mult[name] = float(attr[name]["__wd_mult__"])

    def _set_current_context(self, device_id: int) -> None:
        if device_id not in self._all_index_update_counts:
            self._all_index_update_counts[device_id] = {}
        self._index_update_count = self._all_index_update_counts[device_id]

    def _update_count(self, index: Any) -> None:
        for idx in index if isinstance(index, (list, tuple)) else [index]:
            if idx not in self._index_update_count:
                self._index_update_count[idx] = self.begin_num_update
            self._index_update_count[idx] += 1
            self.num_update = max(self._index_update_count[idx], self.num_update)

    def _base_lr(self) -> float:
        return self.lr_scheduler(self.num_update) if self.lr_scheduler is not None else self.lr

    def _scaled(self, values: list, indices: list, attr: str, table: dict) -> list:
        for i, index in enumerate(indices):
            if index in self.param_dict:
                values[i] *= getattr(self.param_dict[index], attr)
            elif index in table:
                values[i] *= table[index]
            elif index in self.idx2name:
                values[i] *= table.get(self.idx2name[index], 1.0)
        return values

    def _get_lrs(self, indices: list) -> list:
        lr = self._base_lr()
        return self._scaled([lr for _ in indices], indices, "lr_mult", self.lr_mult)

    def _get_lr(self, index: Any) -> float:
        return self._get_lrs([index])[0]

    def _get_wds(self, indices: list) -> list:
        return self._scaled([self.wd for _ in indices], indices, "wd_mult", self.wd_mult)

    def _get_wd(self, index: Any) -> float:
        return self._get_wds([index])[0]

    # --- states and updates ------------------------------------------------------------------
    def create_state(self, index: Any, weight: NDArray) -> Any:
        """The state for one weight (None by default)."""

    def create_state_multi_precision(self, index: Any, weight: NDArray) -> Any:
        """The state, with a float32 master copy first for a float16 weight."""
        if self.multi_precision and weight.dtype == np.float16:
            master = weight.astype(np.float32)
            return (master,) + (self.create_state(index, master),)
        if weight.dtype == np.float16 and not self.multi_precision:
            warnings.warn("Accumulating with float16 in optimizer can lead to poor accuracy or "
                          "slow convergence. Consider using multi_precision=True option of the "
                          "optimizer", stacklevel=2)
        return self.create_state(index, weight)

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        """Update ``weight`` in place from ``grad`` and ``state``."""
        raise NotImplementedError()

    def update_multi_precision(self, index: Any, weight: NDArray, grad: NDArray,
                               state: Any) -> None:
        """:meth:`update`, through the float32 master copy for float16 weights."""
        if self.multi_precision and weight.dtype == np.float16:
            master, inner = state[0], state[1]
            self.update(index, master, grad.astype(np.float32), inner)
            weight[:] = master.asnumpy().astype(weight.dtype)
        else:
            self.update(index, weight, grad, state)

    def __getstate__(self) -> dict:
        ret = self.__dict__.copy()
        ret.pop("param_dict", None)
        return ret

    def __setstate__(self, state: dict) -> None:
        self.__dict__ = state
        self.param_dict = {}


register = Optimizer.register
create = Optimizer.create_optimizer


# --- helpers for the optimizers ---------------------------------------------------------------
def state_zeros(weight: NDArray, dtype: Any = None) -> NDArray:
    """A zero state like ``weight`` (``dtype``: MXNet's default float32 when not given as the
    weight's)."""
    return zeros(weight.shape, weight.context, dtype=dtype if dtype is not None else "float32")


def fused(op: str, *inputs: Any, out: Any, **kwargs: Any) -> None:
    """Call a fused update op as MXNet's optimizers do: ``op(*inputs, out=out, **kwargs)``."""
    invoke(op, inputs, kwargs, out=out)


def check_nd(weight: Any, grad: Any) -> None:
    if not isinstance(weight, NDArray) or not isinstance(grad, NDArray):
        raise OptimizerError("update expects NDArray weight and grad, got "
                             f"{type(weight).__name__} and {type(grad).__name__}")


def f32(x: float) -> np.float32:
    """A Python scalar as MXNet's scalar ops see it against a float32 array."""
    return np.float32(x)


def scalar(x: float, like: NDArray) -> Any:
    """A Python scalar cast to ``like``'s dtype (MXNet's ``_mul_scalar`` etc.)."""
    return like._data.dtype.type(x)
