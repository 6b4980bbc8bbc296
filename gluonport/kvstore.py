"""``mx.kv`` / ``mx.kvstore``: MXNet 1.9.1's single-machine key-value store, in numpy.

A KVStore keeps one array per key. ``push`` sums the list of values given for a key (one per
device, as MXNet's ``local``/``device`` stores reduce them) and either stores the sum or, after
``set_optimizer``, hands it to the optimizer's updater as the gradient of the stored weight.
``pull`` copies the stored value into every output (a broadcast to the devices). This is what
``gluon.Trainer`` uses to sum gradients over several contexts.

What is not provided: distributed stores (``dist_sync``, ``dist_device_sync``, ``dist_async``,
``horovod``, ``byteps``) and ``nccl`` raise :class:`KVStoreError` saying what to use instead;
sparse storage does not exist in gluonport, so ``row_sparse_pull`` works on dense arrays: the
rows named by ``row_ids`` are copied and every other row of the output is set to 0 (what
MXNet's row_sparse output holds); 2-bit gradient compression is refused (``{'type': 'none'}`` is
accepted), as it only shrinks traffic between machines.
"""

from __future__ import annotations

import os
import warnings
from collections import OrderedDict
from typing import Any

import numpy as np

from .context import cpu
from .errors import FormatError, GluonportError
from .ndarray import NDArray
from .optimizer import Optimizer, get_updater

__all__ = ["KVStore", "KVStoreBase", "KVStoreError", "TestStore", "create",
           "create_for_training"]


class KVStoreError(GluonportError, ValueError):
    """A kvstore used wrongly (unknown or distributed type, uninitialized key, shape mismatch,
    mixed key types), or a feature gluonport does not provide."""


class KVStoreTypeError(KVStoreError, TypeError):
    """A key, value or store name of the wrong Python type (MXNet raises ``TypeError`` or
    fails an assertion)."""


_DISTRIBUTED = ("dist", "horovod", "byteps")


def _check_key(key: Any) -> None:
    if isinstance(key, bool) or not isinstance(key, (int, str)):
        raise KVStoreTypeError(f"unexpected type for keys: {type(key)} (keys are int or str)")


def _pairs(keys: Any, vals: Any, what: str) -> list[tuple[Any, list[NDArray]]]:
    """MXNet's ``_ctype_key_value``: (key, [arrays]) for a key or a list of keys, each with an
    NDArray or a list of NDArrays (one per device)."""
    if isinstance(keys, (list, tuple)):
        if not isinstance(vals, (list, tuple)) or len(keys) != len(vals):
            raise KVStoreError(f"{what}: {len(keys)} keys need a list of as many values, got "
                               f"{type(vals).__name__}"
                               + (f" of {len(vals)}" if isinstance(vals, (list, tuple)) else ""))
        out: list = []
        for k, v in zip(keys, vals):
            out += _pairs(k, v, what)
        if len({type(k) for k, _ in out}) > 1:
            raise KVStoreError(f"{what}: inconsistent types of keys detected (all int or all "
                               "str)")
        return out
    _check_key(keys)
    if isinstance(vals, NDArray):
        return [(keys, [vals])]
    if not isinstance(vals, (list, tuple)) or not all(isinstance(v, NDArray) for v in vals):
        raise KVStoreTypeError(f"{what}: the value of key {keys!r} must be an NDArray or a list "
                               f"of NDArrays, got {type(vals).__name__}")
    return [(keys, list(vals))]


def _grouped(pairs: list[tuple[Any, list[NDArray]]]) -> OrderedDict:
    grouped: OrderedDict = OrderedDict()
    for k, vals in pairs:
        grouped.setdefault(k, []).extend(vals)
    return grouped


class KVStoreBase:
    """The interface of a key-value store (``mx.kvstore.KVStoreBase``); ``register`` adds a
    class that ``create`` finds by its lower-cased name."""

    OPTIMIZER = "optimizer"
    kv_registry: dict[str, type] = {}

    def broadcast(self, key: Any, value: Any, out: Any, priority: int = 0) -> None:
        raise NotImplementedError()

    def pushpull(self, key: Any, value: Any, out: Any = None, priority: int = 0) -> None:
        raise NotImplementedError()

    def set_optimizer(self, optimizer: Optimizer) -> None:
        raise NotImplementedError()

    def is_capable(self, capability: str) -> bool:
        raise NotImplementedError()

    def save_optimizer_states(self, fname: str, dump_optimizer: bool = False) -> None:
        raise NotImplementedError()

    def load_optimizer_states(self, fname: str) -> None:
        raise NotImplementedError()

    @property
    def type(self) -> str:
        raise NotImplementedError()

    @property
    def rank(self) -> int:
        raise NotImplementedError()

    @property
    def num_workers(self) -> int:
        raise NotImplementedError()

    @staticmethod
    def register(klass: type) -> type:
        """Register a KVStore class under its lower-cased name (MXNet's decorator)."""
        if not isinstance(klass, type):
            raise KVStoreTypeError(f"register expects a class, got {klass!r}")
        name = klass.__name__.lower()
        if name in KVStoreBase.kv_registry:
            old = KVStoreBase.kv_registry[name]
            warnings.warn(f"WARNING: New kvstore {klass.__module__}.{klass.__name__} is "
                          f"overriding existing kvstore {old.__module__}.{old.__name__}",
                          stacklevel=2)
        KVStoreBase.kv_registry[name] = klass
        return klass


class KVStore(KVStoreBase):
    """MXNet's native single-machine store (``local``, ``device``, and any other name without
    ``dist``/``nccl``, as MXNet's ``KVStore::Create``): rank 0 of 1 worker.

    ``local`` sums a key's values as MXNet's CPU reduce does (the first value plus groups of up
    to four), ``device`` left to right; sums of more than two arrays may differ from MXNet's in
    the last bit.
    """

    def __init__(self, name: str = "local"):
        self._type = name
        self._store: dict[Any, NDArray] = {}
        self._key_type: type | None = None
        self._updater: Any = None
        self._compression: dict | None = None

    # --- properties -----------------------------------------------------------------------------
    @property
    def type(self) -> str:
        """The name it was created with (``'local'``, ``'device'``)."""
        return self._type

    @property
    def rank(self) -> int:
        """Always 0: one worker."""
        return 0

    @property
    def num_workers(self) -> int:
        """Always 1: gluonport has no distributed kvstore."""
        return 1

    def is_capable(self, capability: str) -> bool:
        """``'optimizer'``: True (updates can run on the store)."""
        if str(capability).lower() == KVStoreBase.OPTIMIZER:
            return True
        raise KVStoreError(f"Unknown capability: {capability}")

    # --- data ------------------------------------------------------------------------------------
    def _key(self, key: Any) -> None:
        kind = str if isinstance(key, str) else int
        if self._key_type is None:
            self._key_type = kind
        elif self._key_type is not kind:
            raise KVStoreError(f"key {key!r}: Mixed key types are not allowed (this store "
                               f"uses {self._key_type.__name__} keys)")

    def _stored(self, key: Any, what: str) -> NDArray:
        self._key(key)
        if key not in self._store:
            raise KVStoreError(f"{what}: key {key!r} has not been initialized; call "
                               "kv.init(key, value) first")
        return self._store[key]

    def init(self, key: Any, value: Any) -> None:
        """Store the initial value of a key or of each of a list of keys (a key once only)."""
        for k, vals in _pairs(key, value, "init"):
            self._key(k)
            for v in vals:
                if k in self._store:
                    raise KVStoreError(f"init: duplicate init of key {k!r}")
                self._store[k] = NDArray(np.array(v._data, copy=True), cpu())

    def _reduce(self, vals: list[NDArray]) -> np.ndarray:
        if len(vals) == 1:
            return vals[0]._data
        if self._type == "device":
            total = vals[0]._data.copy()
            for v in vals[1:]:
                total += v._data
            return total
        total = vals[0]._data.copy()
        for s in range(1, len(vals), 4):
            group = vals[s]._data.copy()
            for v in vals[s + 1:s + 4]:
                group += v._data
            total += group
        return total

    def push(self, key: Any, value: Any, priority: int = 0) -> None:
        """Sum the values given for each key (one per device) into the store; with an
        optimizer set, the sum is the gradient the updater applies to the stored weight."""
        for k, vals in _grouped(_pairs(key, value, "push")).items():
            stored = self._stored(k, "push")
            for v in vals:
                if v.shape != stored.shape:
                    raise KVStoreError(f"push: key {k!r} holds shape {stored.shape}, got a "
                                       f"value of shape {v.shape}")
            merged = NDArray(np.asarray(self._reduce(vals), dtype=stored._data.dtype), cpu())
            if self._updater is not None:
                self._updater(k, merged, stored)
            else:
                stored._data = np.array(merged._data, copy=True)

    def pull(self, key: Any, out: Any = None, priority: int = 0,
             ignore_sparse: bool = True) -> None:
        """Copy each key's stored value into every output array."""
        if out is None:
            raise KVStoreError("pull: out is required (the arrays to copy the values into)")
        for k, outs in _pairs(key, out, "pull"):
            stored = self._stored(k, "pull")
            for o in outs:
                if o.shape != stored.shape:
                    raise KVStoreError(f"pull: key {k!r} holds shape {stored.shape}, the output "
                                       f"has shape {o.shape}")
                np.copyto(o._data, stored._data, casting="unsafe")

    def pushpull(self, key: Any, value: Any, out: Any = None, priority: int = 0) -> None:
        """``push`` then ``pull`` (into ``value`` when ``out`` is None)."""
        self.push(key, value, priority)
        self.pull(key, value if out is None else out, priority)

    def broadcast(self, key: Any, value: Any, out: Any, priority: int = 0) -> None:
        """``init(key, value)`` then ``pull(key, out)``: every output gets ``value``."""
        self.init(key, value)
        self.pull(key, out, priority)

    def row_sparse_pull(self, key: Any, out: Any = None, priority: int = 0,
                        row_ids: Any = None) -> None:
        """Pull only the rows named by ``row_ids`` (an NDArray, or one per output).

        Dense fallback (gluonport has no row_sparse storage): each output gets the stored rows
        whose ids appear in its ``row_ids`` (any order, repeats allowed) and zeros elsewhere, as
        MXNet's row_sparse output reads when densified. One ``row_ids`` for a list of outputs is
        pulled into the first and copied to the rest, as MXNet does.
        """
        if out is None or row_ids is None:
            raise KVStoreError("row_sparse_pull: out and row_ids are required")
        if isinstance(row_ids, NDArray):
            row_ids = [row_ids]
        if not isinstance(row_ids, list):
            raise KVStoreTypeError("row_ids should be NDArray or list of NDArray")
        first_out = out
        single = len(row_ids) == 1 and isinstance(out, list)
        if single:
            first_out = [out[0]]
        pairs = _pairs(key, first_out, "row_sparse_pull")
        if len(pairs) != len(row_ids) and not (len(row_ids) == 1 and len(pairs) == 1):
            raise KVStoreError("the number of row_ids doesn't match the number of values")
        flat = [(k, o) for k, outs in pairs for o in outs]
        if len(flat) != len(row_ids):
            raise KVStoreError("the number of row_ids doesn't match the number of values")
        for (k, o), rid in zip(flat, row_ids):
            stored = self._stored(k, "row_sparse_pull")
            if o.shape != stored.shape:
                raise KVStoreError(f"row_sparse_pull: key {k!r} holds shape {stored.shape}, the "
                                   f"output has shape {o.shape}")
            ids = np.asarray(rid._data if isinstance(rid, NDArray) else rid).reshape(-1)
            if ids.size and (np.any(ids != np.floor(ids)) or ids.min() < 0
                             or ids.max() >= stored.shape[0]):
                raise KVStoreError(f"row_sparse_pull: row_ids must be integers in [0, "
                                   f"{stored.shape[0]}), got {ids.tolist()[:8]}")
            rows = np.unique(ids.astype(np.int64))
            dense = np.zeros_like(o._data)
            dense[rows] = stored._data[rows]
            o._data[...] = dense
        if single:
            for o in out[1:]:
                out[0].copyto(o)

    # --- optimizer -------------------------------------------------------------------------------
    def set_optimizer(self, optimizer: Optimizer) -> None:
        """Run ``optimizer`` on the store: each ``push`` updates the stored weight with the
        summed gradient (MXNet's single-machine behaviour)."""
        if not isinstance(optimizer, Optimizer):
            raise KVStoreTypeError(f"set_optimizer expects an Optimizer, got "
                                   f"{type(optimizer).__name__}")
        self._set_updater(get_updater(optimizer))

    def _set_updater(self, updater: Any) -> None:
        """Set the function ``updater(key, grad, stored_weight)`` that ``push`` calls."""
        if not callable(updater):
            raise KVStoreTypeError("the updater must be callable as updater(key, grad, weight)")
        self._updater = updater

    def set_gradient_compression(self, compression_params: dict) -> None:
        """Accepts ``{'type': 'none'}`` on a ``device`` store; MXNet refuses every type on
        ``local`` (as here). 2-bit compression is not provided: it only reduces traffic
        between machines, which gluonport does not have; leave compression_params out."""
        if not isinstance(compression_params, dict):
            raise KVStoreTypeError(f"unexpected type for param_dict: {type(compression_params)}")
        if "device" not in self._type:
            raise KVStoreError("Gradient compression is not supported for this type of kvstore")
        kind = compression_params.get("type")
        if kind != "none":
            raise KVStoreError(f"gradient compression type {kind!r} is not provided by "
                               "gluonport (it only reduces traffic between machines); use "
                               "{'type': 'none'} or leave compression_params out")
        self._compression = dict(compression_params)

    def save_optimizer_states(self, fname: str, dump_optimizer: bool = False) -> None:
        """Write the updater's states (and the optimizer) in MXNet 1.9.1's ``.states``
        format."""
        if self._updater is None or not hasattr(self._updater, "get_states"):
            raise KVStoreError("save_optimizer_states: no optimizer is set on this kvstore "
                               "(call set_optimizer first)")
        with open(fname, "wb") as fout:
            fout.write(self._updater.get_states(dump_optimizer))

    def load_optimizer_states(self, fname: str) -> None:
        """Read a ``.states`` file (MXNet's or ours) into the updater, with the restricted
        unpickler of ``mx.optimizer`` (a crafted file cannot run code)."""
        from .formats._regular import open_regular
        from .optimizer.updater import MAX_STATES_BYTES

        if self._updater is None or not hasattr(self._updater, "set_states"):
            raise KVStoreError("load_optimizer_states: no optimizer is set on this kvstore "
                               "(call set_optimizer first)")
        with open_regular(fname, "optimizer states file") as f:
            if os.fstat(f.fileno()).st_size > MAX_STATES_BYTES:
                raise FormatError("larger than any states file allowed", os.fspath(fname))
            self._updater.set_states(f.read())

    def _barrier(self) -> None:
        """A global barrier among workers: nothing to wait for with one worker."""

    def _send_command_to_servers(self, head: int, body: str) -> None:
        raise KVStoreError("there are no kvstore servers: gluonport has no distributed "
                           "kvstore")


@KVStoreBase.register
class TestStore(KVStoreBase):
    """MXNet's ``teststore``: pushpull sums in Python, no optimizer support."""

    def broadcast(self, key: Any, value: Any, out: Any, priority: int = 0) -> None:
        for o in out if isinstance(out, list) else [out]:
            o[:] = value

    def pushpull(self, key: Any, value: Any, out: Any = None, priority: int = 0) -> None:
        if isinstance(value, NDArray):
            if out is not None:
                for o in out if isinstance(out, list) else [out]:
                    o[:] = value
            return
        total = value[0].copy()
        for v in value[1:]:
            total = total + v.as_in_context(total.context)
        for o in value if out is None else (out if isinstance(out, list) else [out]):
            o[:] = total

    @staticmethod
    def is_capable(capability: str) -> bool:
        if str(capability).lower() == KVStoreBase.OPTIMIZER:
            return False
        raise KVStoreError(f"Unknown capability: {capability}")

    @property
    def type(self) -> str:
        return "teststore"

    @property
    def rank(self) -> int:
        return 0

    @property
    def num_workers(self) -> int:
        return 1

    def set_optimizer(self, optimizer: Optimizer) -> None:
        raise KVStoreError("teststore does not run optimizers")


def create(name: str = "local") -> KVStoreBase:
    """A new KVStore (``mx.kv.create``): ``'local'`` or ``'device'`` (the same numpy store
    here), a registered ``KVStoreBase`` subclass by name, or any other non-distributed name
    (a local store, as MXNet). Distributed types and ``nccl`` raise :class:`KVStoreError`."""
    if not isinstance(name, str):
        raise KVStoreTypeError("name must be a string")
    name = name.lower()
    if name in KVStoreBase.kv_registry:
        return KVStoreBase.kv_registry[name]()
    if any(d in name for d in _DISTRIBUTED):
        raise KVStoreError(
            f"kvstore {name!r}: distributed kvstores are not provided by gluonport (it runs on "
            "one machine). Train on one machine with kvstore='device' or 'local' (several "
            "contexts are summed there), or run distributed training with MXNet and load the "
            "parameters here")
    if "nccl" in name:
        raise KVStoreError(f"kvstore {name!r}: NCCL is not available in gluonport (no GPU "
                           "collectives); use kvstore='device' or 'local'")
    return KVStore(name)


def create_for_training(kvstore: Any, num_device: int,
                        arg_params: dict[str, NDArray]) -> tuple[Any, bool]:
    """MXNet's ``model._create_kvstore``: ``(kvstore or None, update_on_kvstore)``.

    A string gives no store for one device (nothing to sum), else ``create(kvstore)``; with
    ``'local'`` and a parameter over 16M elements updates run off the store. Updates run on the
    store unless the environment sets ``MXNET_UPDATE_ON_KVSTORE=0``.
    """
    update_on_kvstore = bool(int(os.getenv("MXNET_UPDATE_ON_KVSTORE", "1")))
    if kvstore is None:
        kv = None
    elif isinstance(kvstore, KVStoreBase):
        kv = kvstore
    elif isinstance(kvstore, str):
        if num_device == 1 and "dist" not in kvstore:
            kv = None
        else:
            kv = create(kvstore)
            if kvstore == "local" and arg_params:
                max_size = max(int(np.prod(p.shape)) for p in arg_params.values())
                if max_size > 1024 * 1024 * 16:
                    update_on_kvstore = False
    else:
        raise KVStoreTypeError("kvstore must be KVStore, str or None")
    if kv is None:
        update_on_kvstore = False
    else:
        update_on_kvstore &= kv.is_capable(KVStoreBase.OPTIMIZER)
    return kv, update_on_kvstore
