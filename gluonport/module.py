"""``mx.mod.Module``: MXNet 1.x's legacy Module API, for inference and for training.

A great deal of serving code (InsightFace's face_model.py, RetinaFace, SageMaker handlers,
MXNet's own "predict with a pretrained model" tutorial) reads a checkpoint like this::

    sym, arg_params, aux_params = mx.model.load_checkpoint(prefix, epoch)
    mod = mx.mod.Module(symbol=sym, context=mx.cpu(), label_names=None)
    mod.bind(for_training=False, data_shapes=[("data", (1, 3, 224, 224))])
    mod.set_params(arg_params, aux_params, allow_missing=True)
    mod.forward(mx.io.DataBatch([mx.nd.array(img)]), is_train=False)
    prob = mod.get_outputs()[0].asnumpy()

and training scripts call ``mod.fit(train_iter, eval_data=val_iter, optimizer='sgd', ...)`` or
the steps ``forward_backward``/``update``/``update_metric``. Both run unchanged with ``import
gluonport as mx``.

Until the module trains, forward passes run a :class:`~gluonport.gluon.SymbolBlock` (on
onnxruntime when every op exports, the numpy executor otherwise; ``context=mx.gpu(i)`` through
the CUDA execution provider). The first training-mode forward (``forward(is_train=True)``,
``forward_backward``, ``fit``) binds the numpy :class:`~gluonport.symbol.executor.Executor`
with gradient arrays (``grad_req`` per argument as MXNet's ``DataParallelExecutorGroup``:
parameters ``grad_req`` unless fixed, data only with ``inputs_need_grad``, labels ``'null'``);
from then on the parameters live in that executor, and ``get_params`` copies them out after
``update`` as MXNet's ``_sync_params_from_devices``. BatchNorm's moving statistics are updated
by its backward pass, as in MXNet 1.9.1.

One device: several contexts are accepted and each batch runs whole on the first, so the
optimizer sees MXNet's single-device indices and ``rescale_grad = 1/batch_size``. A ``'local'``
/``'device'`` kvstore string with one device means no kvstore and an updater in the module
(MXNet's ``_create_kvstore``); a KVStore object updates on the store.

Label inputs of ``SoftmaxOutput``-style heads that are not among ``label_names`` are not
parameters (MXNet would make them parameters and initialize them); they are fed zeros.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import Any

import numpy as np

from ._base_module import MXNET_DEFAULT_INIT, BaseModule, BatchEndParam
from .context import Context, cpu
from .errors import GluonportError, ParameterError
from .io import DataBatch, DataDesc
from .ndarray import NDArray
from .ndarray import array as nd_array

__all__ = ["Module", "BaseModule", "BatchEndParam"]

log = logging.getLogger("gluonport")


def _descs(shapes: Any, what: str) -> list[DataDesc]:
    if shapes is None:
        return []
    out = []
    for item in shapes:
        if isinstance(item, DataDesc):
            out.append(item)
        elif isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], str):
            out.append(DataDesc(item[0], item[1]))
        else:
            raise GluonportError(f"Module.bind: {what} must be a list of (name, shape) pairs or "
                                 f"DataDescs, e.g. [('data', (1, 3, 224, 224))]; got {item!r}")
    return out


def _copy_into(dst: NDArray, src: Any) -> None:
    data = src._data if isinstance(src, NDArray) else np.asarray(src)
    if tuple(data.shape) != tuple(dst.shape):
        raise ParameterError(f"Module: a parameter of shape {tuple(data.shape)} cannot be "
                             f"copied into one of shape {tuple(dst.shape)}")
    dst._data[...] = data


class Module(BaseModule):
    """MXNet 1.9.1's ``mx.mod.Module`` over one Symbol (its constructor's signature)."""

    def __init__(self, symbol: Any, data_names: Any = ("data",),
                 label_names: Any = ("softmax_label",), logger: Any = logging,
                 context: Context | list[Context] | None = None, work_load_list: Any = None,
                 fixed_param_names: Any = None, state_names: Any = None,
                 group2ctxs: Any = None, compression_params: Any = None):
        contexts = context if isinstance(context, (list, tuple)) else [context or cpu()]
        if len(contexts) > 1:
            log.info("Module: %d contexts given; gluonport runs each batch whole on the first, "
                     "%s", len(contexts), contexts[0])
        self.logger = logger
        self._context: Context = contexts[0]
        self._symbol = symbol
        self._data_names = list(data_names or [])
        self._label_names = list(label_names or [])
        self._state_names = list(state_names or [])
        self._fixed_param_names = list(fixed_param_names or [])
        args = symbol.list_arguments()
        for what, names in (("data_names", self._data_names),
                            ("state_names", self._state_names)):
            missing = [n for n in names if n not in args]
            if missing:
                raise GluonportError(f"Module: {what} {missing} are not arguments of the "
                                     f"symbol; its arguments are {args}")
        from .symbol._graph import label_inputs

        inputs = set(self._data_names + self._label_names + self._state_names)
        heads = label_inputs(symbol._topo())  # SoftmaxOutput's label: fed zeros
        self._param_names = [n for n in args if n not in inputs and n not in heads]
        self._aux_names = symbol.list_auxiliary_states()
        self._output_names = symbol.list_outputs()
        self._compression_params = compression_params
        self._arg_params: dict[str, NDArray] | None = None
        self._aux_params: dict[str, NDArray] | None = None
        self._params_dirty = False
        self._data_shapes: list[DataDesc] = []
        self._label_shapes: list[DataDesc] = []
        self._grad_req: Any = "write"
        self._block: Any = None  # inference: a SymbolBlock over the module's parameters
        self._exec: Any = None  # training: the numpy executor holding the parameters
        self._shared: Module | None = None
        self._outputs: list[NDArray] | None = None
        self._optimizer: Any = None
        self._kvstore: Any = None
        self._update_on_kvstore = False
        self._updater: Any = None
        self._preload_opt_states: str | None = None
        self.binded = False
        self.for_training = False
        self.inputs_need_grad = False
        self.params_initialized = False
        self.optimizer_initialized = False

    # --- properties MXNet code reads ----------------------------------------------------------
    @property
    def symbol(self) -> Any:
        return self._symbol

    @property
    def data_names(self) -> list[str]:
        return self._data_names

    @property
    def label_names(self) -> list[str]:
        return self._label_names

    @property
    def output_names(self) -> list[str]:
        return self._output_names

    @property
    def data_shapes(self) -> list[DataDesc]:
        self._need_bind("data_shapes")
        return self._data_shapes

    @property
    def label_shapes(self) -> list[DataDesc]:
        self._need_bind("label_shapes")
        return self._label_shapes

    @property
    def output_shapes(self) -> list[tuple[str, tuple]]:
        self._need_bind("output_shapes")
        _, outs, _ = self._symbol.infer_shape_partial(**self._shape_dict())
        return list(zip(self._output_names, [tuple(s or ()) for s in outs]))

    def _need_bind(self, what: str) -> None:
        if not self.binded:
            raise GluonportError(f"Module.{what}: call bind(data_shapes=[('data', shape)]) first")

    def _need_params(self, what: str) -> None:
        if not (self.binded and self.params_initialized):
            raise GluonportError(f"Module.{what}: call bind() and set_params()/init_params() "
                                 "first")

    def _shape_dict(self) -> dict[str, tuple]:
        return {d.name: tuple(d.shape) for d in self._data_shapes + self._label_shapes}

    # --- bind ---------------------------------------------------------------------------------
    def bind(self, data_shapes: Any, label_shapes: Any = None, for_training: bool = True,
             inputs_need_grad: bool = False, force_rebind: bool = False,
             shared_module: Any = None, grad_req: Any = "write") -> None:
        """Fix the input shapes, as MXNet's ``Module.bind`` (a later ``forward`` with other
        shapes re-binds). ``for_training`` binds gradient arrays (``grad_req``: ``'write'``,
        ``'add'``, ``'null'``, or a list/dict per argument); ``inputs_need_grad`` gives the data
        inputs gradients too (:meth:`get_input_grads`). ``shared_module`` (bound, with
        parameters) shares its parameter and gradient arrays and its optimizer (bucketing)."""
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if not for_training and inputs_need_grad:
            raise GluonportError("Module.bind: inputs_need_grad=True needs for_training=True")
        descs = _descs(data_shapes, "data_shapes")
        names = [d.name for d in descs]
        if sorted(names) != sorted(self._data_names):
            raise GluonportError(f"Module.bind: data_shapes name {names} but the module's "
                                 f"data_names are {self._data_names}")
        labels = _descs(label_shapes, "label_shapes")
        if labels and self._label_names and \
                sorted(d.name for d in labels) != sorted(self._label_names):
            raise GluonportError(f"Module.bind: label_shapes name {[d.name for d in labels]} "
                                 f"but the module's label_names are {self._label_names}")
        self._data_shapes = sorted(descs, key=lambda d: self._data_names.index(d.name))
        self._label_shapes = [d for d in labels if d.name in self._symbol.list_arguments()]
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._grad_req = grad_req
        if shared_module is not None:
            if not (isinstance(shared_module, Module) and shared_module.binded
                    and shared_module.params_initialized):
                raise GluonportError("Module.bind: shared_module must be a bound Module with "
                                     "initialized parameters")
            self._shared = shared_module
            self._arg_params = shared_module._arg_params
            self._aux_params = shared_module._aux_params
            self.params_initialized = True
        elif not self.params_initialized:
            self._arg_params, self._aux_params = self._zero_params()
        self.binded = True
        if shared_module is not None:
            if shared_module._exec is not None or for_training:
                self._ensure_exec()
            if shared_module.optimizer_initialized:
                self.borrow_optimizer(shared_module)

    def _reset_bind(self) -> None:
        if self._exec is not None:  # the parameters live in the executor: keep them
            self._sync_params_from_devices()
        self.binded = False
        self._exec = None
        self._block = None
        self._data_shapes, self._label_shapes = [], []

    def _zero_params(self) -> tuple[dict[str, NDArray], dict[str, NDArray]]:
        """The module's own parameter arrays, zeros of the shapes the data shapes imply (MXNet
        makes them from the executor's); a shape that cannot be inferred stays unset."""
        arg_s, _, aux_s = self._symbol.infer_shape_partial(**self._shape_dict())
        shapes = dict(zip(self._symbol.list_arguments(), arg_s))
        shapes.update(zip(self._aux_names, aux_s))
        try:
            types = self._symbol.infer_type(**{d.name: d.dtype for d in self._data_shapes})
            dtypes = dict(zip(self._symbol.list_arguments(), types[0] or []))
            dtypes.update(zip(self._aux_names, types[2] or []))
        except (GluonportError, TypeError, ValueError):
            dtypes = {}

        def zeros(name: str) -> NDArray | None:
            shape = shapes.get(name)
            if not shape or not all(shape):
                return None
            return nd_array(np.zeros(shape, dtypes.get(name) or np.float32),
                            ctx=self._context)

        arg = {n: zeros(n) for n in self._param_names}
        aux = {n: zeros(n) for n in self._aux_names}
        return arg, aux  # type: ignore[return-value]

    def _reqs(self) -> dict[str, str]:
        """grad_req per argument, as MXNet's DataParallelExecutorGroup sets it."""
        names = self._symbol.list_arguments()
        if not self.for_training:
            return dict.fromkeys(names, "null")
        req = self._grad_req
        if isinstance(req, (list, tuple)):
            if len(req) != len(names):
                raise GluonportError(f"Module.bind: grad_req has {len(req)} entries for the "
                                     f"{len(names)} arguments {names}")
            return dict(zip(names, req))
        default = req if isinstance(req, str) else "write"
        out = {}
        for n in names:
            if n in self._param_names:
                out[n] = "null" if n in self._fixed_param_names else default
            elif n in self._data_names:
                out[n] = default if self.inputs_need_grad else "null"
            else:
                out[n] = "null"
        if isinstance(req, dict):
            out.update(req)
        elif not isinstance(req, str):
            raise GluonportError("Module.bind: grad_req must be one of str, list, tuple, or "
                                 f"dict, got {type(req).__name__}")
        return out

    def _ensure_exec(self) -> Any:
        """Bind the training executor (once per bind) and move the parameters into it."""
        if self._exec is not None:
            return self._exec
        from .symbol.executor import Executor

        shapes = self._shape_dict()
        types = {d.name: d.dtype for d in self._data_shapes + self._label_shapes
                 if getattr(d, "dtype", None) is not None}
        try:
            exe = Executor.simple(self._symbol, self._context, types, shapes, self._reqs())
        except GluonportError as exc:
            raise type(exc)(f"Module: binding for training with shapes {shapes}: {exc}") \
                from None
        shared = self._shared._ensure_exec() if self._shared is not None else None
        if shared is not None:  # bucketing: the same parameter and gradient arrays
            for n in self._param_names:
                if n in shared.arg_dict and shared.arg_dict[n].shape == exe.arg_dict[n].shape:
                    exe.arg_dict[n] = shared.arg_dict[n]
                    if n in shared.grad_dict and n in exe.grad_dict:
                        exe.grad_dict[n] = shared.grad_dict[n]
            for n in self._aux_names:
                if n in shared.aux_dict:
                    exe.aux_dict[n] = shared.aux_dict[n]
        elif self.params_initialized:
            self._copy_to_exec(exe, self._arg_params or {}, self._aux_params or {})
        self._exec = exe
        self._block = None
        return exe

    @staticmethod
    def _copy_to_exec(exe: Any, arg: dict, aux: dict) -> None:
        for n, v in arg.items():
            if v is not None and n in exe.arg_dict:
                _copy_into(exe.arg_dict[n], v)
        for n, v in aux.items():
            if v is not None and n in exe.aux_dict:
                _copy_into(exe.aux_dict[n], v)

    def _build_block(self) -> None:
        from . import symbol as _sym
        from .gluon import SymbolBlock

        block = SymbolBlock(self._symbol, [_sym.var(n) for n in self._data_names])
        params = block.collect_params()
        arg_s, _, aux_s = self._symbol.infer_shape_partial(**self._shape_dict())
        shapes = dict(zip(self._symbol.list_arguments(), arg_s))
        shapes.update(zip(self._aux_names, aux_s))
        for name, p in params.items():
            src = (self._arg_params or {}).get(name)
            if src is None:
                src = (self._aux_params or {}).get(name)
            if src is None:
                raise ParameterError(f"Module: {name} is not presented in the parameters "
                                     "(set_params(..., allow_missing=True) initializes it)")
            if shapes.get(name) and all(shapes[name]):
                p.shape = shapes[name]
            p._load_init(src, self._context, cast_dtype=True)
        self._block = block

    # --- parameters ---------------------------------------------------------------------------
    def init_params(self, initializer: Any = MXNET_DEFAULT_INIT, arg_params: dict | None = None,
                    aux_params: dict | None = None, allow_missing: bool = False,
                    force_init: bool = False, allow_extra: bool = False) -> None:
        """Set the parameters, as MXNet's: in sorted name order, each from ``arg_params``/
        ``aux_params`` when given there, else from ``initializer`` (default
        ``Uniform(0.01)``; ``None`` leaves it as it is). When ``arg_params`` or ``aux_params``
        is given, a parameter missing from it raises unless ``allow_missing``; a name the
        symbol lacks raises unless ``allow_extra``."""
        from . import initializer as init_mod
        from .initializer import InitDesc

        if self.params_initialized and not force_init:
            self.logger.warning("Parameters already initialized and force_init=False. "
                                "init_params call ignored.")
            return
        self._need_bind("init_params")
        if self._exec is not None and self._params_dirty:
            self._sync_params_from_devices()
        given = {**(arg_params or {}), **(aux_params or {})}
        extra = sorted(set(given) - set(self._symbol.list_arguments()) - set(self._aux_names))
        if extra and not allow_extra:
            raise ParameterError(f"Module.init_params: find name {extra[0]!r} that is not in the "
                                 f"arguments (extra: {extra}); pass allow_extra=True to ignore")
        if initializer is MXNET_DEFAULT_INIT:
            initializer = init_mod.Uniform(0.01)
        attrs = self._symbol.attr_dict()
        for own, cache in ((self._arg_params, arg_params), (self._aux_params, aux_params)):
            for name in sorted(own):
                arr = own[name]
                if arr is None:
                    src = (cache or {}).get(name)
                    if src is None:
                        raise ParameterError(f"Module.init_params: cannot infer the shape of "
                                             f"{name} from data shapes {self._shape_dict()}")
                    arr = own[name] = nd_array(np.zeros(src.shape, np.float32),
                                               ctx=self._context)
                desc = InitDesc(name, attrs.get(name, {}))
                if cache is not None:
                    if name in cache:
                        if cache[name] is not arr:
                            if not arr._data.flags.writeable:  # loaded: read-only
                                arr = own[name] = arr.copy()
                            _copy_into(arr, cache[name])
                        continue
                    if not allow_missing:
                        raise ParameterError(f"Module.init_params: {name} is not presented in "
                                             "arg_params/aux_params; pass allow_missing=True "
                                             "to give it the initializer's values")
                if initializer is not None:
                    initializer(desc, arr)
        self.params_initialized = True
        self._params_dirty = False
        self._push_params()

    def _push_params(self) -> None:
        if self._exec is not None:
            self._copy_to_exec(self._exec, self._arg_params or {}, self._aux_params or {})
        self._block = None

    def set_params(self, arg_params: dict, aux_params: dict, allow_missing: bool = False,
                   force_init: bool = True, allow_extra: bool = False) -> None:
        """Set the parameters (``init_params`` without an initializer, forcing by default);
        with ``allow_missing`` the missing ones keep their values (zeros after bind)."""
        self.init_params(None, arg_params, aux_params, allow_missing, force_init, allow_extra)

    def get_params(self) -> tuple[dict[str, NDArray], dict[str, NDArray]]:
        """``(arg_params, aux_params)``: the module's own parameter arrays, brought up to date
        from the executor after an ``update`` (MXNet returns them, not copies)."""
        if not self.params_initialized:
            raise GluonportError("Module.get_params: call bind() and init_params()/set_params() "
                                 "first")
        if self._params_dirty:
            self._sync_params_from_devices()
        return self._arg_params, self._aux_params

    def _sync_params_from_devices(self) -> None:
        exe = self._exec
        if exe is not None:
            for own, src in ((self._arg_params, exe.arg_dict), (self._aux_params, exe.aux_dict)):
                for n in list(own or {}):
                    if n in src:
                        if own[n] is None or not own[n]._data.flags.writeable:
                            own[n] = src[n].copy()  # (arrays nd.load read are read-only)
                        else:
                            own[n]._data[...] = src[n]._data.astype(own[n]._data.dtype)
        self._params_dirty = False

    # --- optimizer ----------------------------------------------------------------------------
    def init_optimizer(self, kvstore: Any = "local", optimizer: Any = "sgd",
                       optimizer_params: Any = (("learning_rate", 0.01),),
                       force_init: bool = False) -> None:
        """Create the optimizer as MXNet's: by name with ``optimizer_params`` plus
        ``rescale_grad = 1/batch_size``, ``sym`` (``__lr_mult__``/``__wd_mult__`` attributes)
        and ``param_idx2name`` (so biases get no weight decay), or an ``Optimizer`` instance
        as it is. A kvstore string with one device means an updater in the module; a KVStore
        object gets the optimizer (``update_on_kvstore``)."""
        from . import optimizer as opt

        self._need_params("init_optimizer")
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring...")
            return
        if self._params_dirty:
            self._sync_params_from_devices()
        kv, update_on_kvstore = self._create_kvstore(kvstore)
        batch_size = int(self._data_shapes[0].shape[0]) if self._data_shapes else 1
        if kv is not None and "dist" in kv.type and "_sync" in kv.type:
            batch_size *= kv.num_workers
        rescale_grad = 1.0 / batch_size
        idx2name = dict(enumerate(self._param_names))
        if isinstance(optimizer, str):
            params = dict(optimizer_params)
            params.setdefault("rescale_grad", rescale_grad)
            optimizer = opt.create(optimizer, sym=self._symbol, param_idx2name=idx2name,
                                   **params)
        elif isinstance(optimizer, opt.Optimizer):
            if optimizer.rescale_grad != rescale_grad:
                import warnings

                warnings.warn("Optimizer created manually outside Module but rescale_grad is "
                              "not normalized to 1.0/batch_size/num_workers "
                              f"({optimizer.rescale_grad} vs. {rescale_grad}). Is this "
                              "intended?", stacklevel=2)
            if not optimizer.idx2name:
                optimizer.idx2name = idx2name.copy()
        else:
            raise GluonportError(f"Module.init_optimizer: optimizer must be a name or an "
                                 f"mx.optimizer.Optimizer, got {type(optimizer).__name__}")
        self._optimizer, self._kvstore = optimizer, kv
        self._update_on_kvstore = update_on_kvstore
        self._updater = None
        if kv is not None:
            if self._compression_params:
                kv.set_gradient_compression(self._compression_params)
            if update_on_kvstore:
                kv.set_optimizer(optimizer)
            arg, _ = self.get_params()  # MXNet's _initialize_kvstore
            exe = self._ensure_exec() if update_on_kvstore else None
            for name in self._param_names:
                if exe is None:
                    kv.init(name, arg[name])
                else:
                    kv.broadcast(name, arg[name], out=exe.arg_dict[name])
        if not update_on_kvstore:
            self._updater = opt.get_updater(optimizer)
        self.optimizer_initialized = True
        if self._preload_opt_states is not None:
            self.load_optimizer_states(self._preload_opt_states)
            self._preload_opt_states = None

    def _create_kvstore(self, kvstore: Any) -> tuple[Any, bool]:
        """MXNet's ``model._create_kvstore`` for one device."""
        import os

        from . import kvstore as kvs

        update_on_kvstore = bool(int(os.getenv("MXNET_UPDATE_ON_KVSTORE", "1")))
        if kvstore is None:
            kv = None
        elif isinstance(kvstore, kvs.KVStoreBase):
            kv = kvstore
        elif isinstance(kvstore, str):
            kv = kvs.create(kvstore) if "dist" in kvstore else None
        else:
            raise GluonportError(f"Module.init_optimizer: kvstore must be KVStore, str or None, "
                                 f"got {type(kvstore).__name__}")
        if kv is None:
            return None, False
        return kv, update_on_kvstore and kv.is_capable(kvs.KVStoreBase.OPTIMIZER)

    def borrow_optimizer(self, shared_module: Module) -> None:
        """Use ``shared_module``'s optimizer, kvstore and updater (bucketing)."""
        if not shared_module.optimizer_initialized:
            raise GluonportError("Module.borrow_optimizer: the shared module has no optimizer "
                                 "(call init_optimizer on it first)")
        self._optimizer = shared_module._optimizer
        self._kvstore = shared_module._kvstore
        self._update_on_kvstore = shared_module._update_on_kvstore
        self._updater = shared_module._updater
        self.optimizer_initialized = True

    def save_optimizer_states(self, fname: str) -> None:
        """The updater's states (MXNet's ``.states`` pickle, loadable by MXNet 1.9.1)."""
        if not self.optimizer_initialized:
            raise GluonportError("Module.save_optimizer_states: call init_optimizer() first")
        if self._update_on_kvstore:
            self._kvstore.save_optimizer_states(fname)
        else:
            with open(fname, "wb") as f:
                f.write(self._updater.get_states())

    def load_optimizer_states(self, fname: str) -> None:
        """Load what :meth:`save_optimizer_states` (or MXNet) wrote."""
        if not self.optimizer_initialized:
            raise GluonportError("Module.load_optimizer_states: call init_optimizer() first")
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
        else:
            with open(fname, "rb") as f:
                self._updater.set_states(f.read())

    # --- running ------------------------------------------------------------------------------
    def reshape(self, data_shapes: Any, label_shapes: Any = None) -> None:
        """New input shapes for the bound module (parameters and optimizer kept)."""
        self._need_bind("reshape")
        shared = self._shared
        self.bind(data_shapes, label_shapes, self.for_training, self.inputs_need_grad,
                  force_rebind=True, grad_req=self._grad_req)
        self._shared = shared

    def forward(self, data_batch: DataBatch, is_train: bool | None = None) -> None:
        """Run the model on ``data_batch.data`` (NDArrays or numpy arrays, in ``data_names``
        order) and its labels; ``is_train`` defaults to ``for_training``, as MXNet. The results
        are read with :meth:`get_outputs`."""
        self._need_params("forward")
        if is_train is None:
            is_train = self.for_training
        data = list(data_batch.data or [])
        if len(data) != len(self._data_names):
            raise GluonportError(f"Module.forward: the batch has {len(data)} data arrays for "
                                 f"data_names {self._data_names}")
        arrays = [(d if isinstance(d, NDArray) else nd_array(d)).as_in_context(self._context)
                  for d in data]
        labels = list(getattr(data_batch, "label", None) or [])
        shapes = [tuple(a.shape) for a in arrays]
        if shapes != [tuple(d.shape) for d in self._data_shapes]:
            new_l = None
            if self._label_shapes and labels:
                new_l = [DataDesc(d.name, tuple(np.shape(lab)))
                         for d, lab in zip(self._label_shapes, labels)]
            self.reshape([DataDesc(n, s) for n, s in zip(self._data_names, shapes)], new_l)
        if is_train or self._exec is not None:
            exe = self._ensure_exec()
            feed = dict(zip(self._data_names, arrays))
            for desc, lab in zip(self._label_shapes, labels):
                feed[desc.name] = lab
            self._outputs = list(exe.forward(is_train=bool(is_train), **feed))
            return
        if self._block is None:
            self._build_block()
        out = self._block(*arrays)
        self._outputs = list(out) if isinstance(out, (list, tuple)) else [out]

    def backward(self, out_grads: Any = None) -> None:
        """Gradients of the last training-mode forward into the bound gradient arrays, by
        ``grad_req``. Loss heads (``SoftmaxOutput`` ...) ignore ``out_grads``; other outputs
        need them (default ones)."""
        self._need_params("backward")
        if not self.for_training:
            raise GluonportError("Module.backward: bind with for_training=True to compute "
                                 "gradients")
        if self._exec is None or self._exec._saved is None:
            raise GluonportError("Module.backward: call forward(data_batch, is_train=True) "
                                 "first")
        self._exec.backward(out_grads)

    def update(self) -> None:
        """One optimizer step on every parameter with a gradient, as MXNet's
        ``_update_params`` (updater indices in parameter order) or ``_update_params_on_kvstore``
        (a pushpull per parameter)."""
        self._need_params("update")
        if not self.optimizer_initialized:
            raise GluonportError("Module.update: call init_optimizer() first")
        exe = self._ensure_exec()
        self._params_dirty = True
        indices, grads, weights = [], [], []
        for index, name in enumerate(self._param_names):
            grad = exe.grad_dict.get(name)
            if grad is None:
                continue
            weight = exe.arg_dict[name]
            if self._update_on_kvstore:
                self._kvstore.pushpull(name, grad, out=weight, priority=-index)
                continue
            if self._kvstore is not None:
                self._kvstore.pushpull(name, grad, priority=-index)
            indices.append(index)
            grads.append(grad)
            weights.append(weight)
        if indices:
            self._updater(indices, grads, weights)

    def get_outputs(self, merge_multi_context: bool = True) -> list[NDArray]:
        """The outputs of the last :meth:`forward`, one NDArray per output (with
        ``merge_multi_context=False``, each wrapped in a one-context list, as MXNet)."""
        if self._outputs is None:
            raise GluonportError("Module.get_outputs: call forward() first")
        return self._outputs if merge_multi_context else [[o] for o in self._outputs]

    def get_input_grads(self, merge_multi_context: bool = True) -> list[NDArray]:
        """The gradients of the data inputs from the last :meth:`backward` (bind with
        ``inputs_need_grad=True``)."""
        self._need_params("get_input_grads")
        if not self.inputs_need_grad:
            raise GluonportError("Module.get_input_grads: bind with inputs_need_grad=True")
        if self._exec is None:
            raise GluonportError("Module.get_input_grads: call forward and backward first")
        grads = [self._exec.grad_dict[n] for n in self._data_names]
        return grads if merge_multi_context else [[g] for g in grads]

    def get_states(self, merge_multi_context: bool = True) -> list[NDArray]:
        """The values of the ``state_names`` inputs."""
        self._need_params("get_states")
        exe = self._ensure_exec()
        states = [exe.arg_dict[n] for n in self._state_names]
        return states if merge_multi_context else [[s] for s in states]

    def set_states(self, states: Any = None, value: Any = None) -> None:
        """Set the ``state_names`` inputs from ``states`` (a list of arrays) or to ``value``."""
        self._need_params("set_states")
        exe = self._ensure_exec()
        if (states is None) == (value is None):
            raise GluonportError("Module.set_states: give exactly one of states and value")
        for k, n in enumerate(self._state_names):
            if value is not None:
                exe.arg_dict[n]._data[...] = value
            else:
                src = states[k][0] if isinstance(states[k], list) else states[k]
                _copy_into(exe.arg_dict[n], src)

    def update_metric(self, eval_metric: Any, labels: Any, pre_sliced: bool = False) -> None:
        """Update ``eval_metric`` with ``labels`` and the outputs of the last :meth:`forward`
        through its ``update_dict``, as MXNet's: labels keyed by the bound label names (or
        ``label_names``), outputs by ``output_names``. ``pre_sliced`` labels are one list per
        device; gluonport has one."""
        if self._outputs is None:
            raise GluonportError("Module.update_metric: call forward() first")
        labels = list((labels[0] if pre_sliced else labels) or [])
        names = [d.name for d in self._label_shapes] or self._label_names
        if not names:  # MXNet needs bound label shapes here; name the labels by position
            names = [f"label{i}" for i in range(len(labels))]
        eval_metric.update_dict(OrderedDict(zip(names, labels)),
                                OrderedDict(zip(self._output_names, self._outputs)))

    # --- files --------------------------------------------------------------------------------
    def save_checkpoint(self, prefix: str, epoch: int, save_optimizer_states: bool = False,
                        remove_amp_cast: bool = True) -> None:
        """``PREFIX-symbol.json`` and ``PREFIX-%04d.params`` as MXNet writes them, and with
        ``save_optimizer_states`` the updater's ``PREFIX-%04d.states``."""
        from .model import save_checkpoint

        arg, aux = self.get_params()
        save_checkpoint(prefix, epoch, self._symbol, arg, aux, remove_amp_cast)  # logs
        if save_optimizer_states:
            state_name = f"{prefix}-{epoch:04d}.states"
            self.save_optimizer_states(state_name)
            logging.info('Saved optimizer state to "%s"', state_name)

    def save_params(self, fname: str) -> None:
        """The parameters as one ``arg:``/``aux:`` params file."""
        from .ndarray import save

        arg, aux = self.get_params()
        save(fname, {**{f"arg:{k}": v for k, v in arg.items()},
                     **{f"aux:{k}": v for k, v in aux.items()}})

    def load_params(self, fname: str) -> None:
        """Set the parameters from an ``arg:``/``aux:`` params file."""
        from .errors import FormatError
        from .model import no_params_if_empty, split_params
        from .ndarray import load

        loaded = no_params_if_empty(load(fname))
        if not isinstance(loaded, dict):
            raise FormatError("holds an unnamed list of arrays, not arg:/aux: parameters", fname)
        arg, aux = split_params(loaded, fname)
        self.set_params(arg, aux)

    @staticmethod
    def load(prefix: str, epoch: int, load_optimizer_states: bool = False,
             **kwargs: Any) -> Module:
        """A Module over ``PREFIX-symbol.json`` whose parameters come from
        ``PREFIX-%04d.params`` at :meth:`bind` (``kwargs`` go to the constructor); with
        ``load_optimizer_states``, ``init_optimizer`` then loads ``PREFIX-%04d.states``.

        The pair is checked here (MXNet finds a mismatch only at bind): a params file that lacks
        a parameter of the graph, holds names it does not have, or a shape it does not imply
        (a symbol file beside the params of another model) raises a ParameterError."""
        from ._paramcheck import check_params
        from .model import load_checkpoint

        sym, args, auxs = load_checkpoint(prefix, epoch)
        check_params(sym, {k: v.shape for k, v in {**args, **auxs}.items()},
                     symbol_file=f"{prefix}-symbol.json",
                     params_file=f"{prefix}-{epoch:04d}.params")
        mod = Module(symbol=sym, **kwargs)
        mod._arg_params, mod._aux_params = args, auxs
        mod.params_initialized = True
        if load_optimizer_states:
            mod._preload_opt_states = f"{prefix}-{epoch:04d}.states"
        return mod
