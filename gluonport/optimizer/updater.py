"""``Updater``/``get_updater`` and MXNet-compatible ``.states`` pickles.

MXNet's ``Updater.get_states`` pickles ``states`` (index -> state) or ``(states, optimizer)``:
arrays as ``mxnet.ndarray.ndarray.NDArray`` objects whose state is ``{'handle': bytearray}``
(one NDArray in MXNet's binary format), optimizers as ``mxnet.optimizer.optimizer.<Name>`` with
their ``__dict__``, schedulers as ``mxnet.lr_scheduler.<Name>``. :func:`loads_states` reads such
pickles with an unpickler that resolves exactly those globals (plus ``builtins.bytearray``) to
gluonport classes and refuses every other global, so a crafted file cannot run code.
:func:`dumps_states` writes the same layout, which MXNet 1.9.1 loads.
"""

from __future__ import annotations

import io
import pickle
from typing import Any

import numpy as np

from ..context import cpu
from ..errors import FormatError, GluonportError
from ..ndarray import NDArray
from .optimizer import Optimizer

__all__ = ["Updater", "get_updater", "loads_states", "dumps_states", "load_states"]

_MX_ND = ("mxnet.ndarray.ndarray", "NDArray")
_OPT_MODULE = "mxnet.optimizer.optimizer"
_CONTRIB_MODULE = "mxnet.optimizer.contrib"
_LR_MODULE = "mxnet.lr_scheduler"
#: the optimizer classes MXNet 1.9.1 defines (mxnet.optimizer.optimizer / .contrib)
MX_OPTIMIZERS = ("SGD", "ccSGD", "NAG", "Signum", "FTML", "LARS", "LBSGD", "LAMB", "DCASGD",
                 "SGLD", "Adam", "AdaGrad", "RMSProp", "AdaDelta", "Ftrl", "Adamax", "Nadam",
                 "Test")
MX_SCHEDULERS = ("LRScheduler", "FactorScheduler", "MultiFactorScheduler", "PolyScheduler",
                 "CosineScheduler")
MAX_STATES_BYTES = 1 << 34


class _PickledNDArray:
    """What an ``mxnet.ndarray.ndarray.NDArray`` global becomes while unpickling."""

    def __new__(cls, *args: Any) -> _PickledNDArray:  # MXNet pickles NDArray.__new__'s args
        return super().__new__(cls)

    def __setstate__(self, state: Any) -> None:
        if not isinstance(state, dict) or not isinstance(state.get("handle"),
                                                         (bytes, bytearray)):
            raise FormatError("an NDArray in the states pickle has no 'handle' bytes")
        self.array = _decode_handle(bytes(state["handle"]))


def _decode_handle(handle: bytes) -> NDArray:
    from ..formats.params import decode_record

    arr = decode_record(handle, "<NDArray handle in .states>")
    if not isinstance(arr, np.ndarray):
        raise FormatError("an NDArray in the states pickle is not a dense array (row_sparse "
                          "and csr optimizer states are not supported)")
    return NDArray(np.array(arr), cpu())


def _encode_handle(a: NDArray) -> bytearray:
    from ..formats.params import encode_record

    return bytearray(encode_record("state", a.asnumpy(), "<states>"))


def _bytearray(*args: Any) -> bytearray:
    """``builtins.bytearray`` as a states pickle may call it: MXNet's NDArray handle, pickled as
    ``bytearray(bytes)`` or, at protocol 2, ``bytearray(str, 'latin-1')``. Anything else --
    ``bytearray(2**31)`` allocates before any check -- is refused."""
    ok = (len(args) == 1 and isinstance(args[0], (bytes, bytearray))) or (
        len(args) == 2 and isinstance(args[0], str) and args[1] == "latin-1")
    if not ok:
        raise FormatError("a states pickle may call bytearray only on bytes (an NDArray "
                          f"handle), not on {tuple(type(a).__name__ for a in args)}; the file "
                          "may be crafted (nothing was allocated or run)")
    return bytearray(*args)


def _allowed() -> dict[tuple[str, str], Any]:
    from .. import lr_scheduler
    from . import adaptive, sgd

    table: dict[tuple[str, str], Any] = {_MX_ND: _PickledNDArray,
                                         ("builtins", "bytearray"): _bytearray}
    for name in MX_OPTIMIZERS:
        table[(_OPT_MODULE, name)] = getattr(sgd, name, None) or getattr(adaptive, name)
    table[(_CONTRIB_MODULE, "GroupAdaGrad")] = adaptive.GroupAdaGrad
    for name in MX_SCHEDULERS:
        table[(_LR_MODULE, name)] = getattr(lr_scheduler, name)
    return table


class _StatesUnpickler(pickle.Unpickler):
    def __init__(self, data: bytes, label: str):
        super().__init__(io.BytesIO(data))
        self.label = label
        self.table = _allowed()

    def find_class(self, module: str, name: str) -> Any:
        found = self.table.get((module, name))
        if found is None:
            raise FormatError(
                f"{self.label}: refusing global {module}.{name}: an MXNet optimizer states "
                "pickle only references mxnet.ndarray.ndarray.NDArray, "
                "mxnet.optimizer.optimizer.<Optimizer>, mxnet.lr_scheduler.<Scheduler> and "
                "builtins.bytearray (the file may be crafted; nothing was run)")
        return found

    def persistent_load(self, pid: Any) -> Any:
        raise FormatError(f"{self.label}: persistent ids are not allowed in a states pickle")


def _resolve(obj: Any, label: str, memo: dict, depth: int = 0) -> Any:
    """Replace unpickled NDArray placeholders by NDArrays; check the states' structure.

    ``memo`` (id -> result) visits an object shared by several containers once, so a pickle of
    a deeply shared structure costs its size, not its number of paths.
    """
    if depth > 32:
        raise FormatError(f"{label}: optimizer states are nested too deeply")
    key = id(obj)
    if key in memo:
        return memo[key][1]
    if isinstance(obj, _PickledNDArray):
        if not hasattr(obj, "array"):
            raise FormatError(f"{label}: an NDArray in the states pickle has no state")
        out: Any = obj.array
    elif obj is None or isinstance(obj, (int, float, str, bool)):
        return obj
    elif isinstance(obj, (tuple, list)):
        items = [_resolve(x, label, memo, depth + 1) for x in obj]
        out = tuple(items) if isinstance(obj, tuple) else items
    else:
        raise FormatError(f"{label}: unexpected {type(obj).__name__} among the optimizer "
                          "states")
    memo[key] = (obj, out)  # keeps obj alive, so its id is not reused
    return out


def loads_states(data: bytes, label: str = "<states>") -> tuple[dict, Optimizer | None]:
    """Read an MXNet (or gluonport) ``Updater.get_states`` pickle safely.

    Returns ``(states, optimizer or None)``. Raises :class:`FormatError` for anything that is
    not such a pickle, naming any global it refuses.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise FormatError(f"{label}: states must be bytes, got {type(data).__name__}")
    data = bytes(data)
    if len(data) > MAX_STATES_BYTES:
        raise FormatError(f"{label}: {len(data)} bytes is larger than any states pickle allowed")
    if not data[:1] == b"\x80":
        raise FormatError(f"{label}: not an optimizer states pickle (it does not start with a "
                          "pickle protocol header, byte 0x80)")
    _check_memo_indices(data, label)
    try:
        loaded = _StatesUnpickler(data, label).load()
    except GluonportError:
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, KeyError,
            IndexError, MemoryError, RecursionError, UnicodeDecodeError, OverflowError) as exc:
        raise FormatError(f"{label}: not a valid optimizer states pickle: "
                          f"{type(exc).__name__}: {exc}") from None
    optimizer = None
    if isinstance(loaded, tuple) and len(loaded) == 2:
        loaded, optimizer = loaded
        if not isinstance(optimizer, Optimizer):
            raise FormatError(f"{label}: the second element is {type(optimizer).__name__}, not "
                              "an optimizer")
        _check_optimizer(optimizer, label)
    if not isinstance(loaded, dict):
        raise FormatError(f"{label}: expected a dict of index -> state, got "
                          f"{type(loaded).__name__}")
    memo: dict = {}
    states = {k: _resolve(v, label, memo) for k, v in loaded.items()}
    return states, optimizer


_MEMO_OPS = frozenset(("PUT", "BINPUT", "LONG_BINPUT", "GET", "BINGET", "LONG_BINGET"))


def _check_memo_indices(data: bytes, label: str) -> None:
    """Refuse a memo index no pickle of this size can use, before unpickling: CPython's
    unpickler grows its memo table to the index it is given, so ``LONG_BINPUT 1161709460`` in
    a 472-byte file allocates 9 GB (found by tests/optimizer/test_states_campaign.py). A real
    pickle numbers its memo entries from 0, one per memoizing opcode, so every index is below
    the file's length. A malformed pickle is left to the unpickler to report."""
    import pickletools

    try:
        for op, arg, pos in pickletools.genops(data):
            if op.name in _MEMO_OPS and isinstance(arg, int) and not 0 <= arg < len(data):
                raise FormatError(f"{label}: memo index {arg} at byte {pos} is beyond what a "
                                  f"pickle of {len(data)} bytes can hold; the file may be "
                                  "crafted (nothing was allocated or run)")
    except FormatError:
        raise
    except Exception:  # noqa: BLE001 - malformed: the unpickler's own error names it
        return


def _check_optimizer(opt: Optimizer, label: str) -> None:
    """The attributes every optimizer uses have the types MXNet's have."""
    from ..lr_scheduler import LRScheduler

    d = getattr(opt, "__dict__", None)
    checks = {"idx2name": dict, "lr_mult": dict, "wd_mult": dict, "num_update": int,
              "begin_num_update": int, "_index_update_count": dict, "aggregate_num": int,
              "_all_index_update_counts": dict}
    for name, kind in checks.items():
        if not isinstance(d, dict) or not isinstance(d.get(name), kind):
            raise FormatError(f"{label}: the pickled {type(opt).__name__} has no valid "
                              f"{name!r}; the file is not an optimizer states pickle")
    sched = d.get("lr_scheduler")
    if sched is not None and not isinstance(sched, LRScheduler):
        raise FormatError(f"{label}: the pickled optimizer's lr_scheduler is a "
                          f"{type(sched).__name__}, not a learning-rate scheduler")
    for name in ("lr", "wd", "rescale_grad"):
        value = d.get(name)
        if value is not None and not isinstance(value, (int, float)):
            raise FormatError(f"{label}: the pickled optimizer's {name} is not a number")


def load_states(fname: str) -> tuple[dict, Optimizer | None]:
    """Read a ``.states`` file (``Trainer.save_states``, ``Module.save_optimizer_states``, or
    ``open(f, 'wb').write(updater.get_states())``) safely: ``(states, optimizer or None)``.

    Errors name the file: a missing or non-regular file, a crafted or malformed pickle.
    """
    import os

    from ..formats._regular import open_regular

    with open_regular(fname, "optimizer states file") as f:
        size = os.fstat(f.fileno()).st_size
        if size > MAX_STATES_BYTES:
            raise FormatError(f"{size} bytes is larger than any states file allowed",
                              os.fspath(fname))
        data = f.read()
    return loads_states(data, os.fspath(fname))


class _MXPickler(pickle._Pickler):  # type: ignore[misc,name-defined]
    """Writes NDArrays, optimizers and schedulers under MXNet's global names."""

    def save(self, obj: Any, save_persistent_id: bool = True) -> None:  # noqa: FBT001
        target = self._mx_name(obj)
        if target is None:
            super().save(obj, save_persistent_id)
            return
        module, name, state = target
        self.save(module)
        self.save(name)
        self.write(pickle.STACK_GLOBAL)
        if (module, name) == _MX_ND:  # MXNet's NDArray.__reduce__: NDArray(None), then state
            self.write(pickle.NONE + pickle.TUPLE1 + pickle.REDUCE)
        else:  # optimizers and schedulers: cls.__new__(cls), then their __dict__
            self.write(pickle.EMPTY_TUPLE + pickle.NEWOBJ)
        self.save(state)
        self.write(pickle.BUILD)

    @staticmethod
    def _mx_name(obj: Any) -> tuple[str, str, Any] | None:
        from .. import lr_scheduler

        if isinstance(obj, NDArray):
            return (*_MX_ND, {"handle": _encode_handle(obj)})
        cls = type(obj)
        if isinstance(obj, Optimizer) and cls.__name__ in MX_OPTIMIZERS + ("GroupAdaGrad",):
            module = _CONTRIB_MODULE if cls.__name__ == "GroupAdaGrad" else _OPT_MODULE
            return module, cls.__name__, obj.__getstate__()
        if isinstance(obj, lr_scheduler.LRScheduler) and cls.__name__ in MX_SCHEDULERS:
            return _LR_MODULE, cls.__name__, dict(obj.__dict__)
        return None


def dumps_states(obj: Any) -> bytes:
    """Pickle states (or ``(states, optimizer)``) in MXNet 1.9.1's layout (protocol 4)."""
    buf = io.BytesIO()
    _MXPickler(buf, protocol=4).dump(obj)
    return buf.getvalue()


class Updater:
    """Applies an optimizer to (index, grad, weight) triples, keeping each index's state."""

    def __init__(self, optimizer: Optimizer):
        self.optimizer = optimizer
        self.states: dict = {}
        self.states_synced: dict = {}
        self.aggregate_updates = optimizer.aggregate_num > 0

    def __call__(self, index: Any, grad: Any, weight: Any) -> None:
        if not isinstance(index, (list, tuple)):
            indices, grads, weights = [index], [grad], [weight]
        else:
            indices, grads, weights = list(index), list(grad), list(weight)
        if weights:
            self.optimizer._set_current_context(weights[0].context.device_id)
        for i, idx in enumerate(indices):
            if isinstance(idx, bytes):
                indices[i] = idx = idx.decode()
            if idx not in self.states:
                self.states[idx] = self.optimizer.create_state_multi_precision(idx, weights[i])
                self.states_synced[idx] = True
            elif not self.states_synced[idx]:
                self.states[idx] = self.sync_state_context(self.states[idx], weights[i].context)
                self.states_synced[idx] = True
        if not self.aggregate_updates:
            for i, w, g in zip(indices, weights, grads):
                self.optimizer.update_multi_precision(i, w, g, self.states[i])
            return
        by_type: dict = {}
        for i, w, g in zip(indices, weights, grads):
            by_type.setdefault(w.dtype, []).append((i, w, g))
        n = max(1, self.optimizer.aggregate_num)
        for rows in by_type.values():
            idxs, ws, gs = zip(*rows)
            for s in range(0, len(idxs), n):
                self.optimizer.update_multi_precision(
                    list(idxs[s:s + n]), list(ws[s:s + n]), list(gs[s:s + n]),
                    [self.states[i] for i in idxs[s:s + n]])

    def sync_state_context(self, state: Any, context: Any) -> Any:
        if isinstance(state, NDArray):
            return state.as_in_context(context)
        if isinstance(state, (tuple, list)):
            synced = [self.sync_state_context(s, context) for s in state]
            return tuple(synced) if isinstance(state, tuple) else synced
        return state

    def set_states(self, states: bytes) -> None:
        """Load what :meth:`get_states` (gluonport's or MXNet 1.9.1's) wrote."""
        self.states, optimizer = loads_states(states)
        if optimizer is not None:
            # as a fresh Updater of that optimizer would (MXNet keeps the old flag and then
            # loops forever when it loads a non-aggregating optimizer into an SGD updater)
            self.optimizer = optimizer
            self.aggregate_updates = optimizer.aggregate_num > 0
        self.states_synced = dict.fromkeys(self.states.keys(), False)

    def get_states(self, dump_optimizer: bool = False) -> bytes:
        """The states (and the optimizer) as an MXNet-compatible pickle."""
        return dumps_states((self.states, self.optimizer) if dump_optimizer else self.states)


def get_updater(optimizer: Optimizer) -> Updater:
    """An :class:`Updater` for ``optimizer``."""
    return Updater(optimizer)
