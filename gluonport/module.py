"""``mx.mod.Module`` for inference: the Module API that MXNet 1.x inference scripts use.

A great deal of serving code (InsightFace's face_model.py, RetinaFace, SageMaker handlers,
MXNet's own "predict with a pretrained model" tutorial) reads a checkpoint like this::

    sym, arg_params, aux_params = mx.model.load_checkpoint(prefix, epoch)
    mod = mx.mod.Module(symbol=sym, context=mx.cpu(), label_names=None)
    mod.bind(for_training=False, data_shapes=[("data", (1, 3, 224, 224))])
    mod.set_params(arg_params, aux_params, allow_missing=True)
    mod.forward(mx.io.DataBatch([mx.nd.array(img)]), is_train=False)
    prob = mod.get_outputs()[0].asnumpy()

That code runs unchanged with ``import gluonport as mx``. The Module wraps a
:class:`~gluonport.gluon.SymbolBlock`, so it runs on onnxruntime when every op exports (the
numpy executor otherwise) and on ``context=mx.gpu(i)`` through the CUDA execution provider.
Label inputs of ``SoftmaxOutput``-style heads are fed zeros (they do not change the forward
output); labels in a DataBatch are read only by ``score``/``update_metric``, which evaluate an
``mx.metric`` over them. Training (``fit``, ``backward``, ``update``, optimizers) is not
provided: gluonport runs models, it does not train them.
"""

from __future__ import annotations

import logging
from collections import OrderedDict, namedtuple
from typing import Any

import numpy as np

from .context import Context, cpu
from .errors import GluonportError, ParameterError
from .io import DataBatch, DataDesc, DataIter
from .ndarray import NDArray
from .ndarray import array as nd_array

__all__ = ["Module", "BaseModule"]

log = logging.getLogger("gluonport")

_MXNET_DEFAULT_INIT: Any = object()  # init_params' default: Uniform(0.01), as MXNet's

# What score's callbacks receive: mxnet.model.BatchEndParam (epoch, nbatch, eval_metric, locals).
BatchEndParam = namedtuple("BatchEndParams", ["epoch", "nbatch", "eval_metric", "locals"])


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


def _call_back(callbacks: Any, param: BatchEndParam) -> None:
    if callbacks is None:
        return
    for callback in callbacks if isinstance(callbacks, list) else [callbacks]:
        callback(param)


class BaseModule:
    """The training half of MXNet's module API, refused with one clear message."""

    def _inference_only(self, what: str) -> None:
        raise GluonportError(f"Module.{what}: gluonport runs trained models and does not train "
                             "them; train with MXNet (or port the model to a framework that "
                             "trains) and load the checkpoint here")

    def fit(self, *args: Any, **kwargs: Any) -> None:
        self._inference_only("fit")

    def backward(self, *args: Any, **kwargs: Any) -> None:
        self._inference_only("backward")

    def update(self, *args: Any, **kwargs: Any) -> None:
        self._inference_only("update")

    def init_optimizer(self, *args: Any, **kwargs: Any) -> None:
        self._inference_only("init_optimizer")


class Module(BaseModule):
    """An inference Module over one Symbol (MXNet 1.9.1's ``mx.mod.Module`` signature)."""

    def __init__(self, symbol: Any, data_names: Any = ("data",),
                 label_names: Any = ("softmax_label",), logger: Any = logging,
                 context: Context | list[Context] | None = None, work_load_list: Any = None,
                 fixed_param_names: Any = None, state_names: Any = None,
                 group2ctxs: Any = None, compression_params: Any = None):
        contexts = context if isinstance(context, (list, tuple)) else [context or cpu()]
        if len(contexts) > 1:
            log.info("Module: %d contexts given; gluonport runs each batch whole on the first, "
                     "%s", len(contexts), contexts[0])
        self._context: Context = contexts[0]
        self._symbol = symbol
        self._data_names = list(data_names or [])
        self._label_names = list(label_names or [])
        args = symbol.list_arguments()
        missing = [n for n in self._data_names if n not in args]
        if missing:
            raise GluonportError(f"Module: data_names {missing} are not arguments of the symbol; "
                                 f"its arguments are {args}")
        self._output_names = symbol.list_outputs()
        self._arg_params: dict[str, NDArray] | None = None
        self._aux_params: dict[str, NDArray] | None = None
        self._data_shapes: list[DataDesc] = []
        self._label_shapes: list[DataDesc] = []
        self._block: Any = None
        self._outputs: list[NDArray] | None = None
        self.binded = False
        self.for_training = False
        self.params_initialized = False

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

    def _shape_dict(self) -> dict[str, tuple]:
        return {d.name: tuple(d.shape) for d in self._data_shapes + self._label_shapes}

    # --- bind and parameters ------------------------------------------------------------------
    def bind(self, data_shapes: Any, label_shapes: Any = None, for_training: bool = True,
             inputs_need_grad: bool = False, force_rebind: bool = False,
             shared_module: Any = None, grad_req: str = "write") -> None:
        """Fix the input shapes (a later ``forward`` with other shapes re-binds, as MXNet's).
        ``for_training`` is accepted and ignored: the forward pass is always inference."""
        if self.binded and not force_rebind:
            log.warning("Module: already bound, ignoring bind()")
            return
        descs = _descs(data_shapes, "data_shapes")
        names = [d.name for d in descs]
        if sorted(names) != sorted(self._data_names):
            raise GluonportError(f"Module.bind: data_shapes name {names} but the module's "
                                 f"data_names are {self._data_names}")
        self._data_shapes = sorted(descs, key=lambda d: self._data_names.index(d.name))
        self._label_shapes = [d for d in _descs(label_shapes, "label_shapes")
                              if d.name in self._symbol.list_arguments()]
        self.for_training = for_training
        self.binded = True
        self._block = None
        if self.params_initialized:  # Module.load or set_params before a re-bind
            self._build()

    def _build(self) -> None:
        from . import symbol as _sym
        from .gluon import SymbolBlock

        block = SymbolBlock(self._symbol, [_sym.var(n) for n in self._data_names])
        params = block.collect_params()
        arg_s, _, aux_s = self._symbol.infer_shape_partial(**self._shape_dict())
        shapes = dict(zip(self._symbol.list_arguments(), arg_s))
        shapes.update(zip(self._symbol.list_auxiliary_states(), aux_s))
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

    def init_params(self, initializer: Any = _MXNET_DEFAULT_INIT, arg_params: dict | None = None,
                    aux_params: dict | None = None, allow_missing: bool = False,
                    force_init: bool = False, allow_extra: bool = False) -> None:
        """Set parameters from ``arg_params``/``aux_params``, the others from ``initializer``
        (default ``Uniform(0.01)``; ``None`` leaves them zero, as MXNet's ``set_params`` with
        ``allow_missing=True`` does); a parameter in neither raises unless ``allow_missing``, a
        name the symbol lacks raises unless ``allow_extra``."""
        from . import initializer as init_mod
        from .initializer import InitDesc

        if self.params_initialized and not force_init:
            log.warning("Module: parameters already initialized and force_init=False; "
                        "init_params call ignored")
            return
        self._need_bind("init_params")
        args = [n for n in self._symbol.list_arguments()
                if n not in self._data_names and n not in self._label_names]
        auxs = self._symbol.list_auxiliary_states()
        given = {**(arg_params or {}), **(aux_params or {})}
        extra = sorted(set(given) - set(args) - set(auxs))
        if extra and not allow_extra:
            raise ParameterError(f"Module.init_params: find name {extra[0]!r} that is not in the "
                                 f"arguments (extra: {extra}); pass allow_extra=True to ignore")
        from .symbol._graph import label_inputs

        labels = label_inputs(self._symbol._topo())  # SoftmaxOutput's label: fed zeros
        arg_s, _, aux_s = self._symbol.infer_shape_partial(**self._shape_dict())
        shapes = dict(zip(self._symbol.list_arguments(), arg_s))
        shapes.update(zip(auxs, aux_s))
        attrs = self._symbol.attr_dict()
        if initializer is _MXNET_DEFAULT_INIT:
            initializer = init_mod.Uniform(0.01)
        new_args: dict[str, NDArray] = {}
        new_auxs: dict[str, NDArray] = {}
        for name in args + auxs:
            if name in labels:
                continue
            out = new_auxs if name in auxs else new_args
            if name in given:
                out[name] = given[name] if isinstance(given[name], NDArray) else \
                    nd_array(given[name])
                continue
            if (arg_params is not None or aux_params is not None) and not allow_missing:
                raise ParameterError(f"Module.init_params: {name} is not presented in "
                                     "arg_params/aux_params; pass allow_missing=True to give "
                                     "it the initializer's values")
            shape = shapes.get(name)
            if not shape or not all(shape):
                raise ParameterError(f"Module.init_params: cannot infer the shape of {name} "
                                     f"from data shapes {self._shape_dict()}")
            arr = nd_array(np.zeros(shape, np.float32))
            if initializer is not None:
                initializer(InitDesc(name, attrs.get(name, {})), arr)
            out[name] = arr
        self._arg_params, self._aux_params = new_args, new_auxs
        self.params_initialized = True
        self._build()

    def set_params(self, arg_params: dict, aux_params: dict, allow_missing: bool = False,
                   force_init: bool = True, allow_extra: bool = False) -> None:
        """Set the parameters (``init_params`` without an initializer, forcing by default)."""
        self.init_params(None, arg_params, aux_params, allow_missing, force_init, allow_extra)

    def get_params(self) -> tuple[dict[str, NDArray], dict[str, NDArray]]:
        """``(arg_params, aux_params)``: copies of the current values."""
        if not self.params_initialized:
            raise GluonportError("Module.get_params: call bind() and init_params()/set_params() "
                                 "first")
        params = self._block.collect_params() if self._block is not None else {}
        arg = {n: params[n].data().copy() if n in params else v.copy()
               for n, v in self._arg_params.items()}
        aux = {n: params[n].data().copy() if n in params else v.copy()
               for n, v in self._aux_params.items()}
        return arg, aux

    # --- running ------------------------------------------------------------------------------
    def reshape(self, data_shapes: Any, label_shapes: Any = None) -> None:
        """New input shapes for the bound module."""
        self._need_bind("reshape")
        self.bind(data_shapes, label_shapes, self.for_training, force_rebind=True)

    def forward(self, data_batch: DataBatch, is_train: bool | None = None) -> None:
        """Run the model on ``data_batch.data`` (NDArrays or numpy arrays, in ``data_names``
        order); the results are read with :meth:`get_outputs`."""
        if not (self.binded and self.params_initialized):
            raise GluonportError("Module.forward: call bind() and set_params()/init_params() "
                                 "first")
        if is_train:
            log.debug("Module.forward(is_train=True): gluonport runs inference semantics")
        data = list(data_batch.data or [])
        if len(data) != len(self._data_names):
            raise GluonportError(f"Module.forward: the batch has {len(data)} data arrays for "
                                 f"data_names {self._data_names}")
        arrays = [(d if isinstance(d, NDArray) else nd_array(d)).as_in_context(self._context)
                  for d in data]
        shapes = [tuple(a.shape) for a in arrays]
        if shapes != [tuple(d.shape) for d in self._data_shapes]:
            self.reshape([DataDesc(n, s) for n, s in zip(self._data_names, shapes)],
                         self._label_shapes or None)
        if self._block is None:
            self._build()
        out = self._block(*arrays)
        self._outputs = list(out) if isinstance(out, (list, tuple)) else [out]

    def get_outputs(self, merge_multi_context: bool = True) -> list[NDArray]:
        """The outputs of the last :meth:`forward`, one NDArray per output (with
        ``merge_multi_context=False``, each wrapped in a one-context list, as MXNet)."""
        if self._outputs is None:
            raise GluonportError("Module.get_outputs: call forward() first")
        return self._outputs if merge_multi_context else [[o] for o in self._outputs]

    def predict(self, eval_data: Any, num_batch: int | None = None,
                merge_batches: bool = True, reset: bool = True,
                always_output_list: bool = False, sparse_row_id_fn: Any = None) -> Any:
        """Outputs over a DataIter (padding removed, batches concatenated), or for one
        NDArray / numpy array taken as a single batch."""
        from . import ndarray as nd

        if isinstance(eval_data, (NDArray, np.ndarray)):
            self.forward(DataBatch([eval_data]))
            return self.get_outputs()[0]
        if not isinstance(eval_data, DataIter):
            raise GluonportError("Module.predict: eval_data must be a DataIter, an NDArray or "
                                 "a numpy array")
        if reset:
            eval_data.reset()
        batches: list[list[NDArray]] = []
        for k, batch in enumerate(eval_data):
            if num_batch is not None and k == num_batch:
                break
            self.forward(batch)
            pad = batch.pad or 0
            batches.append([o[0:o.shape[0] - pad].copy() for o in self.get_outputs()])
        if not batches:
            return []
        if not merge_batches:
            return batches
        merged = [nd.concat(*parts, dim=0) for parts in zip(*batches)]
        if len(merged) == 1 and not always_output_list:
            return merged[0]
        return merged

    def iter_predict(self, eval_data: DataIter, num_batch: int | None = None,
                     reset: bool = True, sparse_row_id_fn: Any = None):
        """Yield ``(outputs, batch index, batch)`` per batch, padding removed."""
        if reset:
            eval_data.reset()
        for k, batch in enumerate(eval_data):
            if num_batch is not None and k == num_batch:
                break
            self.forward(batch)
            pad = batch.pad or 0
            yield [o[0:o.shape[0] - pad] for o in self.get_outputs()], k, batch

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

    def score(self, eval_data: Any, eval_metric: Any, num_batch: int | None = None,
              batch_end_callback: Any = None, score_end_callback: Any = None,
              reset: bool = True, epoch: int = 0, sparse_row_id_fn: Any = None) -> list:
        """Run ``eval_data`` through the model and evaluate ``eval_metric`` (an EvalMetric or
        anything ``mx.metric.create`` takes: ``'acc'``, a list, a function), as MXNet's: the
        metric is reset, updated per batch with ``batch.label`` and the outputs (padded samples
        included, as MXNet counts them), and ``get_name_value()`` is returned. Callbacks get a
        ``BatchEndParam(epoch, nbatch, eval_metric, locals)``."""
        from . import metric

        if not (self.binded and self.params_initialized):
            raise GluonportError("Module.score: call bind() and set_params()/init_params() first")
        if reset:
            eval_data.reset()
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)
        eval_metric.reset()
        actual_num_batch = 0
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.forward(eval_batch, is_train=False)
            self.update_metric(eval_metric, eval_batch.label)
            _call_back(batch_end_callback, BatchEndParam(epoch, nbatch, eval_metric, locals()))
            actual_num_batch += 1
        if score_end_callback:
            _call_back(score_end_callback,
                       BatchEndParam(epoch, actual_num_batch, eval_metric, locals()))
        return eval_metric.get_name_value()

    # --- files --------------------------------------------------------------------------------
    def save_checkpoint(self, prefix: str, epoch: int, save_optimizer_states: bool = False,
                        remove_amp_cast: bool = True) -> None:
        """``PREFIX-symbol.json`` and ``PREFIX-%04d.params``, as MXNet writes them."""
        from .model import save_checkpoint

        arg, aux = self.get_params()
        save_checkpoint(prefix, epoch, self._symbol, arg, aux, remove_amp_cast)

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
        ``PREFIX-%04d.params`` at :meth:`bind` (``kwargs`` go to the constructor).

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
        return mod
