"""``gluon.Trainer``: applies an optimizer to a set of Parameters, as MXNet 1.9.1's.

``step(batch_size)`` sums each parameter's gradients over its contexts through a kvstore
(``mx.kv``) and updates every copy: with several contexts and a ``'device'``/``'local'`` store
the update runs once on the store and the new weight is pulled to every context (MXNet's default,
``update_on_kvstore``), otherwise the summed gradient is written back to each context and each
copy is updated by that context's updater. One context needs no store. Gradients come from
``backward``, which marks them fresh; a parameter whose gradient was not refreshed since the last
update is an error unless ``ignore_stale_grad=True`` (MXNet's check and message).

``save_states``/``load_states`` write and read MXNet 1.9.1's ``.states`` pickles through the
optimizer's ``Updater`` (``mx.optimizer``), whose restricted unpickler refuses any global other
than the optimizer, scheduler and array classes, so a crafted file cannot run code.
"""

from __future__ import annotations

from typing import Any

from .. import optimizer as opt
from ..errors import GluonportError
from ..kvstore import create_for_training
from .parameter import Parameter, ParameterDict

__all__ = ["Trainer", "TrainerError", "StaleGradientError"]


class TrainerError(GluonportError, ValueError):
    """A Trainer used wrongly: params that are not Parameters, parameters on different
    contexts, an optimizer instance with optimizer_params, ``allreduce_grads``/``update`` while
    updates run on the kvstore (MXNet raises ``ValueError`` or fails an assertion)."""


class StaleGradientError(GluonportError, UserWarning):
    """A parameter's gradient was not updated by ``backward`` since the last ``step`` (MXNet
    raises ``UserWarning`` as an exception; this is one too)."""


class Trainer:
    """Applies an ``Optimizer`` on a set of Parameters (``mxnet.gluon.Trainer``).

    Parameters
    ----------
    params : ParameterDict, dict of Parameter, or list of Parameter
        The parameters to optimize (a dict is taken in sorted key order, as MXNet).
    optimizer : str or Optimizer
        An optimizer name (``'sgd'``, ``'adam'``...) or instance.
    optimizer_params : dict, optional
        Keyword arguments of the optimizer (``{'learning_rate': 0.1}``); only with a name.
    kvstore : str, KVStore or None, default 'device'
        How gradients of several contexts are summed (``mx.kv.create``); distributed types
        raise. One context needs none.
    compression_params : dict, optional
        Gradient compression; only ``{'type': 'none'}`` is accepted (2-bit is not provided).
    update_on_kvstore : bool, optional
        Whether updates run on the kvstore; None chooses as MXNet (on the store when there is
        one, unless ``MXNET_UPDATE_ON_KVSTORE=0``).
    """

    def __init__(self, params: Any, optimizer: Any, optimizer_params: dict | None = None,
                 kvstore: Any = "device", compression_params: dict | None = None,
                 update_on_kvstore: bool | None = None):
        if isinstance(params, (dict, ParameterDict)):
            params = [params[key] for key in sorted(params.keys())]
        if not isinstance(params, (list, tuple)):
            raise TrainerError(f"First argument must be a list or dict of Parameters, got "
                               f"{type(params)}.")
        self._params: list[Parameter] = []
        self._contains_sparse_weight = False
        self._contains_sparse_grad = False
        self._param2idx: dict[str, int] = {}
        for i, param in enumerate(params):
            if not isinstance(param, Parameter):
                raise TrainerError(f"First argument must be a list or dict of Parameters, got "
                                   f"list of {type(param)}.")
            self._param2idx[param.name] = i
            self._params.append(param)
            param._set_trainer(self)
            if param._stype != "default" or param._grad_stype != "default":
                raise TrainerError(f"Parameter '{param.name}': sparse weights or gradients "
                                   "(stype/grad_stype other than 'default') are not provided by "
                                   "gluonport; use dense parameters")
        self._compression_params = compression_params
        self._contexts = self._check_contexts()
        self._init_optimizer(optimizer, optimizer_params if optimizer_params else {})
        self._scale = self._optimizer.rescale_grad
        self._kvstore_params = {"kvstore": kvstore, "update_on_kvstore": update_on_kvstore}
        self._kv_initialized = False
        self._kvstore: Any = None
        self._update_on_kvstore: bool | None = None
        self._distributed: bool | None = None
        self._params_to_init: list[Parameter] = []
        self._reset_kvstore()

    def _check_contexts(self) -> list:
        contexts = None
        for param in self._params:
            ctx = param.list_ctx()
            if contexts is not None and contexts != ctx:
                raise TrainerError(
                    f"All Parameters must be initialized on the same set of contexts, but "
                    f"Parameter {param.name} is initialized on {ctx} while previous Parameters "
                    f"are initialized on {contexts}.")
            contexts = ctx
        return contexts or []

    def _init_optimizer(self, optimizer: Any, optimizer_params: dict) -> None:
        param_dict = dict(enumerate(self._params))
        if isinstance(optimizer, opt.Optimizer):
            if optimizer_params:
                raise TrainerError("optimizer_params must be None if optimizer is an instance of "
                                   "Optimizer instead of str")
            self._optimizer = optimizer
            # not copied: lr_mult/wd_mult changed on a Parameter later take effect
            self._optimizer.param_dict = param_dict
        else:
            self._optimizer = opt.create(optimizer, param_dict=param_dict, **optimizer_params)
        self._updaters = [opt.get_updater(self._optimizer) for _ in self._contexts]

    def _init_params(self) -> None:
        """Put the parameters that are ready into the kvstore (deferred ones wait)."""
        waiting = []
        if self._kvstore:
            for param in self._params_to_init:
                if param._deferred_init:
                    waiting.append(param)
                else:
                    arrays = param._check_and_get(param._data, list)
                    self._kvstore.broadcast(self._param2idx[param.name], arrays[0], arrays)
        self._params_to_init = waiting

    def _reset_kvstore(self) -> None:
        self._kv_initialized = False
        self._kvstore = None
        self._distributed = None
        self._update_on_kvstore = None
        self._params_to_init = list(self._params)

    def _init_kvstore(self) -> None:
        config = self._kvstore_params
        arg_arrays = {p.name: p.data(self._contexts[0]) for p in self._params}
        kvstore, update_on_kvstore = create_for_training(config["kvstore"],
                                                         len(self._contexts), arg_arrays)
        self._distributed = False
        if config["update_on_kvstore"] is not None:
            update_on_kvstore = config["update_on_kvstore"]
        if update_on_kvstore and kvstore is not None and not kvstore.is_capable("optimizer"):
            if config["update_on_kvstore"]:
                raise TrainerError(f"Please set update_on_kvstore=False when training with "
                                   f"{type(kvstore)}")
            update_on_kvstore = False
        if kvstore:
            if self._compression_params:
                kvstore.set_gradient_compression(self._compression_params)
            if update_on_kvstore:
                kvstore.set_optimizer(self._optimizer)
            self._kvstore = kvstore
            self._update_on_kvstore = update_on_kvstore
        else:
            self._kvstore = None
            self._update_on_kvstore = None
        self._kv_initialized = True

    def _ready(self) -> None:
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()

    # --- learning rate -------------------------------------------------------------------------
    @property
    def learning_rate(self) -> float:
        """The optimizer's current learning rate (from its scheduler when it has one)."""
        return self._optimizer.learning_rate

    @property
    def optimizer(self) -> opt.Optimizer:
        """The optimizer (after ``load_states``, the one the file held)."""
        return self._optimizer

    def set_learning_rate(self, lr: float) -> None:
        """Set the optimizer's learning rate (an error when it has an ``lr_scheduler``)."""
        self._optimizer.set_learning_rate(lr)

    # --- steps -----------------------------------------------------------------------------------
    def _check_and_rescale_grad(self, scale: float) -> None:
        self._optimizer.rescale_grad = scale

    def step(self, batch_size: int, ignore_stale_grad: bool = False) -> None:
        """One update: gradients are scaled by ``1/batch_size``, summed over contexts, and
        applied. Call after ``backward`` and outside ``record()``."""
        self._check_and_rescale_grad(self._scale / batch_size)
        self._ready()
        self._allreduce_grads()
        self._update(ignore_stale_grad)

    def allreduce_grads(self) -> None:
        """Sum each parameter's gradients over its contexts, in place on every context (for
        work on the summed gradients, e.g. clipping, before ``update``). Not available while
        updates run on the kvstore."""
        self._ready()
        if self._kvstore and self._update_on_kvstore:
            raise TrainerError("allreduce_grads() when parameters are updated on kvstore is not "
                               "supported. Try setting `update_on_kvstore` to False when "
                               "creating trainer.")
        self._allreduce_grads()

    def _allreduce_grads(self) -> None:
        if not self._kvstore:
            return
        for i, param in enumerate(self._params):
            if param.grad_req == "null":
                continue
            grads = param.list_grad()
            if self._update_on_kvstore:
                self._kvstore.pushpull(i, grads, out=param.list_data(), priority=-i)
                param._mark_updated()
            else:
                self._kvstore.pushpull(i, grads, priority=-i)

    def update(self, batch_size: int, ignore_stale_grad: bool = False) -> None:
        """Apply the (already summed) gradients: the second half of ``step``, after
        ``allreduce_grads``. Not available while updates run on the kvstore."""
        self._ready()
        if self._kvstore and self._update_on_kvstore:
            raise TrainerError("update() when parameters are updated on kvstore is not "
                               "supported. Try setting `update_on_kvstore` to False when "
                               "creating trainer.")
        self._check_and_rescale_grad(self._scale / batch_size)
        self._update(ignore_stale_grad)

    def _update(self, ignore_stale_grad: bool = False) -> None:
        updates: list[list] = [[] for _ in self._updaters]
        on_kvstore = bool(self._kvstore and self._update_on_kvstore)
        touched = []
        for i, param in enumerate(self._params):
            if param.grad_req == "null":
                continue
            if not ignore_stale_grad:
                for data in param._check_and_get(param._data, list):
                    if not data._fresh_grad:
                        raise StaleGradientError(
                            f"Gradient of Parameter `{param.name}` on context {data.context} "
                            "has not been updated by backward since last `step`. This could "
                            "mean a bug in your model that made it only use a subset of the "
                            "Parameters (Blocks) for this iteration. If you are intentionally "
                            "only using a subset, call step with ignore_stale_grad=True to "
                            "suppress this warning and skip updating of Parameters with stale "
                            "gradient")
            if on_kvstore:  # updated by pushpull; MXNet leaves the fresh flags as they are
                continue
            for upd, arr, grad in zip(updates, param.list_data(), param.list_grad()):
                if not ignore_stale_grad or arr._fresh_grad:
                    upd.append((i, grad, arr))
                    arr._fresh_grad = False
                    if param not in touched:
                        touched.append(param)
        if on_kvstore:
            return
        for updater, upd in zip(self._updaters, updates):
            if upd:
                indices, grads, arrays = zip(*upd)
                updater(list(indices), list(grads), list(arrays))
        for param in touched:
            param._mark_updated()

    # --- states ----------------------------------------------------------------------------------
    def save_states(self, fname: str) -> None:
        """Write the optimizer and its states (momentum...) to ``fname`` in MXNet 1.9.1's
        ``.states`` format (``optimizer.param_dict`` is not saved)."""
        self._ready()
        if self._update_on_kvstore:
            if self._params_to_init:
                raise TrainerError("Cannot save trainer states when some parameters are not "
                                   "yet initialized in kvstore.")
            self._kvstore.save_optimizer_states(fname, dump_optimizer=True)
        else:
            with open(fname, "wb") as fout:
                fout.write(self._updaters[0].get_states(dump_optimizer=True))

    def load_states(self, fname: str) -> None:
        """Read a ``.states`` file (MXNet 1.9.1's or ours): the optimizer it holds replaces this
        one (``param_dict`` is rebuilt from this Trainer's parameters). A file that is not such
        a pickle, or references any other global, raises ``FormatError``; nothing in it runs."""
        from ..formats._regular import open_regular
        from ..optimizer.updater import MAX_STATES_BYTES, loads_states

        self._ready()
        with open_regular(fname, "optimizer states file") as f:
            data = f.read(MAX_STATES_BYTES + 1)
        loads_states(data, str(fname))  # checked with the file named before anything changes
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
            self._optimizer = self._kvstore._updater.optimizer
        else:
            for updater in self._updaters:
                updater.set_states(data)
                updater.optimizer = self._updaters[0].optimizer
            self._optimizer = self._updaters[0].optimizer
        self._optimizer.param_dict = dict(enumerate(self._params))
