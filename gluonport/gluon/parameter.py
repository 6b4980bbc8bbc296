"""Gluon ``Parameter``, ``Constant`` and ``ParameterDict`` with MXNet 1.x semantics.

A Parameter holds one array per context (numpy is one device, but contexts are kept as labels),
its shape may have unknown dims (0) until deferred initialization fills them from the first
batch, and ``var()`` gives the Symbol variable used when a HybridBlock is traced, carrying the
``__shape__``/``__dtype__``/``__init__``/``__lr_mult__``/``__wd_mult__`` attributes MXNet writes.
Error messages follow MXNet's: what is wrong, why, and how to fix it.

Gradients: as in MXNet, each context's data array is an autograd variable (``attach_grad`` with
the parameter's ``grad_req``) unless ``grad_req='null'``; ``grad(ctx)``/``list_grad()`` return
those arrays' ``.grad`` buffers, which ``backward`` fills in place and ``gluon.Trainer`` reads.
"""

from __future__ import annotations

import re
import warnings
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import numpy as np

from .. import initializer as _init
from .._core import dtypes
from ..context import Context, cpu, current_context
from ..errors import DeferredInitializationError, ParameterError, ParameterNotInitializedError
from ..ndarray import NDArray
from ._text import brief_names

__all__ = ["Parameter", "Constant", "ParameterDict", "DeferredInitializationError",
           "GradientUnavailableError", "tensor_types"]

tensor_types = (NDArray,)

_VERSION = [0]


def _bump() -> int:
    """A new value for ``Parameter._version``: compiled graphs (onnxruntime models with the
    weights inside) notice a changed parameter by it."""
    _VERSION[0] += 1
    return _VERSION[0]


class GradientUnavailableError(ParameterError, RuntimeError):
    """``grad()``/``list_grad()`` of a parameter with ``grad_req='null'`` (MXNet raises
    ``RuntimeError`` with the same message)."""


def _shape_known(shape: tuple | None) -> bool:
    return shape is not None and all(d > 0 for d in shape)


class Parameter:
    """A Block's parameter (``mxnet.gluon.Parameter``).

    Parameters
    ----------
    name : str
        Full name, e.g. ``dense0_weight``; it is the key in exported ``.params`` files.
    grad_req : {'write', 'add', 'null'}
    shape : int or tuple of int, optional
        0 marks an unknown dim, filled in at the first forward pass (deferred init).
    dtype : numpy dtype or str, default float32
    lr_mult, wd_mult : float
    init : Initializer or str, optional
        This parameter's own initializer (overrides the one given to ``initialize``).
    allow_deferred_init : bool
        Whether ``initialize`` may wait for the shape to be known.
    """

    def __init__(self, name: str, grad_req: str = "write", shape: Any = None,
                 dtype: Any = np.float32, lr_mult: float = 1.0, wd_mult: float = 1.0,
                 init: Any = None, allow_deferred_init: bool = False,
                 differentiable: bool = True, stype: str = "default",
                 grad_stype: str = "default"):
        self._var: Any = None
        self._version = _bump()
        self._data: list[NDArray] | None = None
        self._grad: list[NDArray] | None = None
        self._trainer: Any = None
        self._ctx_list: list[Context] | None = None
        self._deferred_init: tuple = ()
        self._differentiable = differentiable
        self._allow_deferred_init = allow_deferred_init
        self._grad_req = grad_req if differentiable else "null"
        if isinstance(shape, int):
            shape = (shape,)
        self._shape = tuple(shape) if shape is not None else None
        self.name = name
        self._dtype = dtypes.to_numpy(dtype).type
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult
        self.init = init
        self._stype = stype
        self._grad_stype = grad_stype
        if grad_req not in ("write", "add", "null"):
            raise ParameterError(f"grad_req must be one of 'write', 'add', or 'null', but got "
                                 f"'{grad_req}'")

    def __repr__(self) -> str:
        return f"Parameter {self.name} (shape={self.shape}, dtype={np.dtype(self.dtype).type})"

    # --- attributes -------------------------------------------------------------------------
    @property
    def grad_req(self) -> str:
        return self._grad_req

    @grad_req.setter
    def grad_req(self, req: str) -> None:
        """As MXNet: switching to ``'null'`` drops the gradients (the data arrays are replaced
        by detached ones); switching from ``'null'`` (or between ``'write'`` and ``'add'``)
        attaches fresh zero gradients to initialized data."""
        if req not in ("write", "add", "null"):
            raise ParameterError(f"grad_req must be one of 'write', 'add', or 'null', but got "
                                 f"'{req}'")
        if not self._differentiable:
            req = "null"
        if self._grad_req == req:
            return
        self._grad_req = req
        if req == "null" and self._grad is not None:
            self._grad = None
            self._data = [d.detach() for d in self._data or []]
        elif self._data is not None:
            self._init_grad()

    @property
    def dtype(self) -> type:
        """The numpy scalar type (``numpy.float32``)."""
        return self._dtype

    @dtype.setter
    def dtype(self, dtype: Any) -> None:
        self._dtype = dtypes.to_numpy(dtype).type

    @property
    def shape(self) -> tuple | None:
        """The shape; 0 for dims not known yet."""
        return self._shape

    @shape.setter
    def shape(self, new_shape: Any) -> None:
        new_shape = tuple(new_shape) if new_shape is not None else None
        if self._shape is None or new_shape is None:
            self._shape = new_shape
            return
        if len(self._shape) != len(new_shape) or not all(
                old in (-1, 0, new) for new, old in zip(new_shape, self._shape)):
            raise ParameterError(f"Expected shape {new_shape} is incompatible with given shape "
                                 f"{self._shape} of Parameter '{self.name}'.")
        self._shape = new_shape

    @property
    def stype(self) -> str:
        return self._stype

    # --- initialization ---------------------------------------------------------------------
    def initialize(self, init: Any = None, ctx: Any = None, default_init: Any = None,
                   force_reinit: bool = False) -> None:
        """Allocate and fill the data on ``ctx`` (a Context or a list of them).

        With unknown dims and ``allow_deferred_init``, initialization waits for the first
        forward pass; otherwise unknown dims are an error.
        """
        if default_init is None:
            default_init = _init.Uniform()
        if self._data is not None and not force_reinit:
            warnings.warn(f"Parameter '{self.name}' is already initialized, ignoring. Set "
                          "force_reinit=True to re-initialize.", stacklevel=2)
            return
        self._data = self._grad = None
        if ctx is None:
            ctx = [current_context()]
        if isinstance(ctx, Context):
            ctx = [ctx]
        if init is None:
            init = default_init if self.init is None else self.init
        if not _shape_known(self._shape):
            if self._allow_deferred_init:
                self._deferred_init = (init, list(ctx), default_init, None)
                return
            raise ParameterError(
                f"Cannot initialize Parameter '{self.name}' because it has invalid shape: "
                f"{self._shape}. Please specify in_units, in_channels, etc for `Block`s.")
        self._deferred_init = (init, list(ctx), default_init, None)
        self._finish_deferred_init()

    def _finish_deferred_init(self) -> None:
        if not self._deferred_init:
            return
        init, ctx, default_init, data = self._deferred_init
        self._deferred_init = ()
        if not _shape_known(self._shape):
            raise ParameterError(
                f"Cannot initialize Parameter '{self.name}' because it has invalid shape: "
                f"{self._shape}. Please specify in_units, in_channels, etc for `Block`s.")
        if data is None:
            data = NDArray(np.zeros(self._shape, dtype=self._dtype), cpu())
            # the init object itself, as MXNet passes it: a user's Initializer subclass need not
            # be registered (GluonCV's BilinearUpSample is not)
            desc = _init.InitDesc(self.name, {"__init__": init})
            _init.create(default_init)(desc, data)
        self._init_impl(data, ctx)

    def _init_impl(self, data: NDArray, ctx_list: list[Context]) -> None:
        self._version = _bump()
        self._ctx_list = list(ctx_list)
        self._data = [NDArray(np.array(data._data, copy=True), c) for c in self._ctx_list]
        self._init_grad()

    def _init_grad(self) -> None:
        """Attach a zero gradient to each context's data (none when ``grad_req='null'``)."""
        if self._grad_req == "null" or self._data is None:
            self._grad = None
            return
        if np.dtype(self._data[0].dtype).kind != "f":
            # autograd has no integer variables; MXNet still hands out zero buffers
            self._grad = [NDArray(np.zeros_like(d._data), d.context) for d in self._data]
            return
        for d in self._data:
            d.attach_grad(self._grad_req)
        self._grad = [d.grad for d in self._data]

    def _set_trainer(self, trainer: Any) -> None:
        """Remember the Trainer that updates this parameter (``set_data`` keeps its kvstore
        copy in sync, as MXNet's does)."""
        self._trainer = trainer

    def _sync_trainer(self) -> None:
        """Before a new value is set: with updates on the kvstore, the Trainer's store holds a
        copy of the weight, so the store is rebuilt at the next step (MXNet's set_data)."""
        trainer = self._trainer
        if trainer is not None and trainer._kv_initialized and trainer._update_on_kvstore:
            if self not in trainer._params_to_init:
                trainer._reset_kvstore()

    def _mark_updated(self) -> None:
        """Tell compiled graphs (which may hold the weights) that the value changed in place;
        ``gluon.Trainer`` calls it after each update."""
        self._version = _bump()

    def _check_and_get(self, arr_list: list[NDArray] | None, ctx: Any) -> Any:
        if arr_list is not None:
            if ctx is list:
                return arr_list
            if ctx is None:
                if len(arr_list) == 1:
                    return arr_list[0]
                ctx = current_context()
            # MXNet's _ctx_map[device_typeid & 1]: cpu_pinned and cpu_shared input finds the
            # copy on the cpu with the same device id
            key = (ctx.device_typeid & 1, ctx.device_id)
            for c, arr in zip(self._ctx_list or [], arr_list):
                if (c.device_typeid & 1, c.device_id) == key:
                    return arr
            raise ParameterNotInitializedError(
                f"Parameter '{self.name}' was not initialized on context {ctx}. It was only "
                f"initialized on {self._ctx_list}.")
        if self._deferred_init:
            raise DeferredInitializationError(
                f"Parameter '{self.name}' has not been initialized yet because initialization "
                "was deferred. Actual initialization happens during the first forward pass. "
                "Please pass one batch of data through the network before accessing "
                "Parameters. You can also avoid deferred initialization by specifying "
                "in_units, num_features, etc., for network layers.")
        raise ParameterNotInitializedError(
            f"Parameter '{self.name}' has not been initialized. Note that you should "
            "initialize parameters and create Trainer with Block.collect_params() instead of "
            "Block.params because the later does not include Parameters of nested child Blocks")

    # --- data access ------------------------------------------------------------------------
    def data(self, ctx: Context | None = None) -> NDArray:
        """The value on ``ctx`` (the only one when ``ctx`` is None)."""
        return self._check_and_get(self._data, ctx)

    def list_data(self) -> list[NDArray]:
        return self._check_and_get(self._data, list)

    def list_ctx(self) -> list[Context]:
        if self._data is None:
            if self._deferred_init:
                return list(self._deferred_init[1])
            raise ParameterNotInitializedError(f"Parameter '{self.name}' has not been "
                                               "initialized")
        return list(self._ctx_list or [])

    def grad(self, ctx: Context | None = None) -> NDArray:
        """The gradient buffer on ``ctx`` (the only one when ``ctx`` is None), as MXNet's:
        ``backward`` writes it in place; refused when ``grad_req='null'``."""
        if self._data is not None and self._grad is None:
            raise GradientUnavailableError(f"Cannot get gradient array for Parameter "
                                           f"'{self.name}' because grad_req='null'")
        return self._check_and_get(self._grad, ctx)

    def list_grad(self) -> list[NDArray]:
        """The gradient buffers on all contexts, in the order of ``list_ctx()``."""
        if self._data is not None and self._grad is None:
            raise GradientUnavailableError(f"Cannot get gradient array for Parameter "
                                           f"'{self.name}' because grad_req='null'")
        return self._check_and_get(self._grad, list)

    def zero_grad(self) -> None:
        """Set the gradient on every context to 0, in place (the buffers stay the same
        objects); nothing when uninitialized or ``grad_req='null'``, as in MXNet."""
        if self._grad is None:
            return
        for g in self._grad:
            g._data[...] = 0

    def set_data(self, data: Any) -> None:
        """Set the value on every context (the shape must match)."""
        arr = data._data if isinstance(data, NDArray) else np.asarray(data)
        self.shape = arr.shape
        if self._data is None:
            if not self._deferred_init:
                raise ParameterError(f"Parameter '{self.name}' has not been initialized")
            init, ctx, default_init, _ = self._deferred_init
            self._deferred_init = (init, ctx, default_init,
                                   NDArray(arr.astype(self._dtype, copy=True), cpu()))
            return
        self._sync_trainer()
        for d in self._data:  # in place: the arrays (and their gradients) stay the same objects
            d._data[...] = arr
        self._version = _bump()

    def _reduce(self) -> NDArray:
        """The value to save, on cpu(0): the mean of the copies when there are several, as
        MXNet's ``add_n(...) / n``."""
        data = self.list_data()
        if len(data) == 1:
            return NDArray(data[0]._data, cpu())
        total = data[0]._data.copy()
        for d in data[1:]:
            total += d._data
        return NDArray((total / total.dtype.type(len(data))).astype(total.dtype), cpu())

    def _load_init(self, data: Any, ctx: Any, cast_dtype: bool = False,
                   dtype_source: str = "current") -> None:
        """Take ``data`` from a loaded file, checking shape and dtype like MXNet."""
        arr = data._data if isinstance(data, NDArray) else np.asarray(data)
        if self._shape is not None:
            known = all(d > 0 for d in self._shape)
            if len(self._shape) != arr.ndim or not all(
                    i == j or i in (0, -1) for i, j in zip(self._shape, arr.shape)):
                raise ParameterError(
                    f"Failed loading Parameter '{self.name}' from saved params: shape "
                    f"incompatible expected {self._shape} vs saved {arr.shape}"
                    + ("" if known else ""))
            self._shape = tuple(arr.shape)
        else:
            self._shape = tuple(arr.shape)
        if cast_dtype:
            if dtype_source == "current":
                arr = arr.astype(self._dtype, copy=False)
            elif dtype_source == "saved":
                self._dtype = arr.dtype.type
        elif np.dtype(self._dtype) != arr.dtype:
            raise ParameterError(
                f"Failed loading Parameter '{self.name}' from saved params: dtype incompatible "
                f"expected {np.dtype(self._dtype)} vs saved {arr.dtype}. Set cast_dtype=True to "
                "cast the dtype of saved params.")
        if isinstance(ctx, Context):
            ctx = [ctx]
        if self._data is None:
            if self._deferred_init:
                if ctx is None or set(ctx) == set(self._deferred_init[1]):
                    ctx = self._deferred_init[1]
            elif ctx is None:
                ctx = [cpu()]
            self._init_impl(NDArray(arr, cpu()), ctx)
            self._deferred_init = ()
        else:
            if ctx is not None and set(ctx) != set(self.list_ctx()):
                raise ParameterError(
                    f"Failed to load Parameter '{self.name}' on {ctx} because it was previous "
                    f"initialized on {self.list_ctx()}.")
            self._sync_trainer()
            new_dtype = self._dtype if not cast_dtype or dtype_source != "saved" else arr.dtype
            for d in self._data:
                if d._data.dtype == new_dtype and d._data.shape == arr.shape:
                    d._data[...] = arr  # in place: gradients stay attached
                else:
                    d._data = np.array(arr, dtype=new_dtype, copy=True)
            if self._grad is not None and any(
                    g.shape != d.shape or g.dtype != d.dtype
                    for g, d in zip(self._grad, self._data)):
                self._init_grad()
            self._version = _bump()

    def reset_ctx(self, ctx: Any) -> None:
        """Move the data to new contexts (the mean of the current copies, as MXNet's), with
        fresh zero gradients there."""
        if ctx is None:
            ctx = [current_context()]
        if isinstance(ctx, Context):
            ctx = [ctx]
        if self._data is not None:
            self._init_impl(self._reduce(), ctx)
        elif self._deferred_init:
            init, _, default_init, data = self._deferred_init
            self._deferred_init = (init, ctx, default_init, data)
        else:
            raise ParameterError(f"Cannot reset context for Parameter '{self.name}' because it "
                                 "has not been initialized.")

    def cast(self, dtype: Any) -> None:
        """Cast data and gradients (and future initialization) to ``dtype``; the data arrays
        are new variables with the old gradient values cast, as in MXNet."""
        self._dtype = dtypes.to_numpy(dtype).type
        self._var = None
        if self._data is not None:
            old = self._grad
            self._data = [NDArray(d._data.astype(self._dtype), d.context) for d in self._data]
            if old is not None:
                self._init_grad()
                for g, o in zip(self._grad or [], old):
                    g._data[...] = o._data.astype(self._dtype)
        self._version = _bump()

    def var(self) -> Any:
        """The Symbol variable for this parameter (cached, as in MXNet: its ``__shape__`` is the
        shape known when it was first asked for)."""
        if self._var is None:
            from ..symbol import var

            self._var = var(self.name, shape=self._shape, dtype=self._dtype,
                            lr_mult=self.lr_mult, wd_mult=self.wd_mult, init=self.init,
                            stype=self._stype)
        return self._var


class Constant(Parameter):
    """A parameter that is never updated (``grad_req='null'``), initialized to ``value``.

    As in MXNet, ``value`` goes through ``nd.array`` (a Python list becomes float32) and the
    initializer is registered under the name ``Constant_<name>_<id>`` (MXNet's spelling; it is
    the ``__init__`` attribute of the exported variable).
    """

    def __init__(self, name: str, value: Any):
        from ..ndarray import array

        if not isinstance(value, NDArray):
            value = array(value)
        self.value = value
        data = value.asnumpy()

        class _ConstantInit(_init.Initializer):
            def _init_weight(self, _: str, arr: Any) -> None:
                arr[:] = data

        init_name = f"Constant_{name}_{id(self)}"
        _init._REGISTRY[init_name.lower()] = _ConstantInit
        super().__init__(name, grad_req="null", shape=value.shape, dtype=value.dtype,
                         init=init_name)

    def __repr__(self) -> str:
        return f"Constant {self.name} (shape={self.shape}, dtype={np.dtype(self.dtype).type})"

    @property
    def grad_req(self) -> str:
        return "null"

    @grad_req.setter
    def grad_req(self, req: str) -> None:
        if req != "null":
            warnings.warn(f"Constant parameter \"{self.name}\" does not support grad_req other "
                          "than \"null\", and new value \"{req}\" is ignored.", stacklevel=2)
        self._grad_req = "null"


class ParameterDict:
    """An ordered name -> Parameter dict with a prefix (``mxnet.gluon.ParameterDict``).

    ``get(name)`` finds or creates ``prefix + name``; ``shared`` lets blocks reuse another
    block's parameters.
    """

    def __init__(self, prefix: str = "", shared: ParameterDict | None = None):
        self._prefix = prefix
        self._params: OrderedDict[str, Parameter] = OrderedDict()
        self._shared = shared

    def __repr__(self) -> str:
        body = "\n".join(f"  {v!r}" for v in self.values())
        name = f"{self._prefix} " if self._prefix else ""
        return f"{name}(\n{body}\n)"

    def __getitem__(self, key: str) -> Parameter:
        return self._params[key]

    def __iter__(self):
        return iter(self._params)

    def __len__(self) -> int:
        return len(self._params)

    def __contains__(self, key: object) -> bool:
        return key in self._params

    def items(self):
        return self._params.items()

    def keys(self):
        return self._params.keys()

    def values(self):
        return self._params.values()

    @property
    def prefix(self) -> str:
        return self._prefix

    def _get_impl(self, name: str) -> Parameter | None:
        if name in self._params:
            return self._params[name]
        if self._shared is not None and name in self._shared._params:
            self._params[name] = self._shared._params[name]
            return self._shared._params[name]
        return None

    def get(self, name: str, **kwargs: Any) -> Parameter:
        """The parameter ``prefix + name``, created with ``kwargs`` when absent.

        An existing parameter's attributes must agree with ``kwargs`` (unknown shape dims are
        filled in), as in MXNet.
        """
        name = self._prefix + name
        param = self._get_impl(name)
        if param is None:
            param = Parameter(name, **kwargs)
            self._params[name] = param
            return param
        for k, v in kwargs.items():
            if not hasattr(param, k) or getattr(param, k) is None:
                setattr(param, k, v)
                continue
            existing = getattr(param, k)
            if k == "shape" and v is not None:
                v = (v,) if isinstance(v, int) else tuple(v)
                if len(v) == len(existing) and all(
                        d1 == d2 or d1 in (0, -1) or d2 in (0, -1)
                        for d1, d2 in zip(v, existing)):
                    param.shape = tuple(max(d1, d2) for d1, d2 in zip(v, existing))
                    continue
            elif k == "dtype" and np.dtype(v) == np.dtype(existing):
                continue
            if v is not None and v != existing:
                raise ParameterError(
                    f"Cannot retrieve Parameter '{name}' because desired attribute does not "
                    f"match with stored for attribute '{k}': desired '{v}' vs stored "
                    f"'{existing}'.")
        return param

    def get_constant(self, name: str, value: Any = None) -> Constant:
        """The constant ``prefix + name``, created from ``value`` when absent."""
        name = self._prefix + name
        param = self._get_impl(name)
        if param is None:
            if value is None:
                raise ParameterError(f"No constant named '{name}'. Please specify value if you "
                                     "want to create a new constant.")
            param = Constant(name, value)
            self._params[name] = param
        elif value is not None:
            if not isinstance(param, Constant):
                raise ParameterError(f"Parameter '{name}' already exists but it is not a "
                                     "constant.")
            if isinstance(value, NDArray):
                value = value.asnumpy()
            if param.shape != np.shape(value) or not np.array_equal(param.value.asnumpy(),
                                                                   value):
                raise ParameterError(f"Constant '{name}' already exists but its value doesn't "
                                     "match new value")
        return param

    def update(self, other: ParameterDict | Mapping[str, Parameter]) -> None:
        """Add ``other``'s parameters; the same name bound to another object is an error."""
        for k, v in other.items():
            if k in self._params:
                if self._params[k] is not v:
                    raise ParameterError(f"Cannot update self with other because they have "
                                         f"different Parameters with the same name '{k}'")
            else:
                self._params[k] = v

    def initialize(self, init: Any = None, ctx: Any = None, verbose: bool = False,
                   force_reinit: bool = False) -> None:
        """Initialize every parameter (``init`` is the default for those without their own)."""
        if init is None:
            init = _init.Uniform()
        for v in self.values():
            v.initialize(None, ctx, init, force_reinit=force_reinit)

    def zero_grad(self) -> None:
        """Set every parameter's gradient to 0 in place (``Parameter.zero_grad``)."""
        for v in self.values():
            v.zero_grad()

    def reset_ctx(self, ctx: Any) -> None:
        for v in self.values():
            v.reset_ctx(ctx)

    def list_ctx(self) -> list[Context]:
        out: list[Context] = []
        for v in self.values():
            for c in v.list_ctx():
                if c not in out:
                    out.append(c)
        return out

    def setattr(self, name: str, value: Any) -> None:
        """Set attribute ``name`` (e.g. ``grad_req``, ``lr_mult``) on every parameter."""
        for v in self.values():
            setattr(v, name, value)

    def select(self, regex: str) -> ParameterDict:
        """The parameters whose names match ``regex`` (``re.match``, as MXNet)."""
        pattern = re.compile(regex)
        out = ParameterDict(self._prefix)
        out._params.update((k, v) for k, v in self.items() if pattern.match(k))
        return out

    def save(self, filename: str, strip_prefix: str = "") -> None:
        """Save with names minus ``strip_prefix`` (legacy ``save_params`` format)."""
        from ..ndarray import save

        arg_dict = {}
        for param in self.values():
            weight = param._reduce()
            if not param.name.startswith(strip_prefix):
                raise ParameterError(
                    f"Prefix '{strip_prefix}' is to be striped before saving, but Parameter's "
                    f"name '{param.name}' does not start with '{strip_prefix}'. this may be due "
                    "to your Block shares parameters from other Blocks or you forgot to use "
                    "'with name_scope()' when creating child blocks. For more info on naming, "
                    "please see https://mxnet.apache.org/api/python/docs/tutorials/packages/"
                    "gluon/blocks/naming.html")
            arg_dict[param.name[len(strip_prefix):]] = weight
        save(filename, arg_dict)

    def load(self, filename: str, ctx: Any = None, allow_missing: bool = False,
             ignore_extra: bool = False, restore_prefix: str = "", cast_dtype: bool = False,
             dtype_source: str = "current") -> None:
        """Load values from a file saved by ``save``, ``export`` or ``save_checkpoint``."""
        from ..model import no_params_if_empty
        from ..ndarray import load

        if restore_prefix:
            for name in self.keys():
                if not name.startswith(restore_prefix):
                    raise ParameterError(f"restore_prefix is '{restore_prefix}' but Parameters "
                                         f"name '{name}' does not start with '{restore_prefix}'")
        loaded = no_params_if_empty(load(filename))
        if not isinstance(loaded, dict):
            raise ParameterError(f"{filename}: holds an unnamed list of arrays; parameters need "
                                 "a file saved with names")
        self.load_dict(loaded, ctx, allow_missing, ignore_extra, restore_prefix, filename,
                       cast_dtype, dtype_source)

    def load_dict(self, param_dict: Mapping[str, Any], ctx: Any = None,
                  allow_missing: bool = False, ignore_extra: bool = False,
                  restore_prefix: str = "", filename: str | None = None,
                  cast_dtype: bool = False, dtype_source: str = "current") -> None:
        """Load values from a dict; ``arg:``/``aux:`` key prefixes are stripped."""
        lprefix = len(restore_prefix)
        arg_dict = {restore_prefix + (k[4:] if k.startswith(("arg:", "aux:")) else k): v
                    for k, v in param_dict.items()}
        where = f"file: {filename}" if filename else "param_dict"
        if not allow_missing:
            for name in self.keys():
                if name not in arg_dict:
                    raise ParameterError(
                        f"Parameter '{name[lprefix:]}' is missing in {where}, which contains "
                        f"parameters: {brief_names(arg_dict)}. Please make sure source and "
                        "target networks have the same prefix, or set allow_missing=True.")
        for name, value in arg_dict.items():
            if name not in self._params:
                if not ignore_extra:
                    raise ParameterError(
                        f"Parameter '{name[lprefix:]}' loaded from {where} is not present in "
                        f"ParameterDict, choices are: {brief_names(self._params)}. Set "
                        "ignore_extra to True to ignore. Please make sure source and target "
                        "networks have the same prefix.")
                continue
            self._params[name]._load_init(value, ctx, cast_dtype=cast_dtype,
                                          dtype_source=dtype_source)


