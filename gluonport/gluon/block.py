"""Gluon ``Block``: children, naming scopes, parameters, hooks, save/load (MXNet 1.x).

Names are what users depend on: they are the keys of trained ``.params`` files. A Block gets
its prefix from the enclosing block's scope counter (``dense0_``, ``dense1_``) or, at top level,
from the global name manager (``hybridsequential0_``); parameters are ``prefix + name``
(``dense0_weight``). ``save_parameters`` uses structural names (``0.weight``,
``features.1.running_mean``) instead.
"""

from __future__ import annotations

import re
import threading
import warnings
from collections import OrderedDict, defaultdict
from typing import Any

from .. import name as _name
from ..context import Context
from ..errors import GluonportError, ParameterError
from ..model import no_params_if_empty
from ..ndarray import NDArray
from ..ndarray import load as nd_load
from ..ndarray import save as nd_save
from ._text import brief_names, indent
from .parameter import Parameter, ParameterDict
from .utils import HookHandle

__all__ = ["Block"]


class _BlockScope:
    """The naming scope a Block opens with ``name_scope()``."""

    _current = threading.local()

    def __init__(self, block: Block):
        self._block = block
        self._counter: dict[str, int] = {}
        self._old_scope: _BlockScope | None = None
        self._name_scope: _name.Prefix | None = None

    @staticmethod
    def create(prefix: str | None, params: ParameterDict | None, hint: str
               ) -> tuple[str, ParameterDict]:
        """The prefix and ParameterDict of a new block, as MXNet 1.x computes them."""
        current = getattr(_BlockScope._current, "value", None)
        if current is None:
            if prefix is None:
                prefix = _name.current().get(None, hint) + "_"
            params = ParameterDict(prefix) if params is None else \
                ParameterDict(params.prefix, params)
            return prefix, params
        if prefix is None:
            count = current._counter.get(hint, 0)
            prefix = f"{hint}{count}_"
            current._counter[hint] = count + 1
        if params is None:
            parent = current._block.params
            params = ParameterDict(parent.prefix + prefix, parent._shared)
        else:
            params = ParameterDict(params.prefix, params)
        return current._block.prefix + prefix, params

    def __enter__(self) -> _BlockScope:
        if self._block._empty_prefix:
            return self
        self._old_scope = getattr(_BlockScope._current, "value", None)
        _BlockScope._current.value = self
        self._name_scope = _name.Prefix(self._block.prefix)
        self._name_scope.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._block._empty_prefix:
            return
        self._name_scope.__exit__(*exc)
        self._name_scope = None
        _BlockScope._current.value = self._old_scope


def _shape_str(args: Any) -> str:
    """MXNet's summary shape text: ``(1, 3)`` for one array, ``(1, 3), (1, 4)`` for several."""
    def shapes(x: Any) -> Any:
        if isinstance(x, (list, tuple)):
            return [shapes(i) for i in x]
        return x.shape if isinstance(x, NDArray) else x

    out = shapes(args)
    return str(out)[1:-1] if isinstance(out, list) else str(out)


def _summary_lines(rows: list[tuple[str, str, int, int, int]]) -> list[str]:
    line = "{:>20}  {:>42} {:>15}"
    total = sum(r[2] for r in rows)
    trainable = sum(r[3] for r in rows)
    shared = sum(r[4] for r in rows)
    return (["-" * 80, line.format("Layer (type)", "Output Shape", "Param #"), "=" * 80]
            + [line.format(n, s, c) for n, s, c, _, _ in rows]
            + ["=" * 80, "Parameters in forward computation graph, duplicate included",
               f"   Total params: {total}", f"   Trainable params: {trainable}",
               f"   Non-trainable params: {total - trainable}",
               f"Shared params in forward computation graph: {shared}",
               f"Unique parameters in model: {total - shared}", "-" * 80])


class Block:
    """Base class of all layers and models (``mxnet.gluon.Block``).

    Sub-blocks and Parameters assigned as attributes are registered automatically; create
    children inside ``with self.name_scope():`` so they get this block's prefix.
    """

    def __init__(self, prefix: str | None = None, params: ParameterDict | None = None):
        self._empty_prefix = prefix == ""
        self._prefix, self._params = _BlockScope.create(prefix, params, self._alias())
        self._name = self._prefix[:-1] if self._prefix.endswith("_") else self._prefix
        self._scope = _BlockScope(self)
        self._children: OrderedDict[str, Block] = OrderedDict()
        self._reg_params: dict[str, Parameter] = {}
        self._forward_hooks: OrderedDict = OrderedDict()
        self._forward_pre_hooks: OrderedDict = OrderedDict()

    def __repr__(self) -> str:
        mods = "\n".join(f"  ({key}): {indent(repr(block), 2)}"
                         for key, block in self.__dict__.items() if isinstance(block, Block))
        return f"{self.__class__.__name__}(\n{mods}\n)"

    def __setattr__(self, name: str, value: Any) -> None:
        if hasattr(self, name):
            existing = getattr(self, name)
            if isinstance(existing, (Parameter, Block)) and not isinstance(value, type(existing)):
                raise TypeError(f"Changing attribute type for {name} from {type(existing)} to "
                                f"{type(value)} is not allowed.")
        if isinstance(value, Block):
            self.register_child(value, name)
        elif isinstance(value, Parameter):
            if name in self._reg_params:
                raise ParameterError(f"Overriding Parameter attribute {name} is not allowed. "
                                     "If you want to share parameters between blocks, please set "
                                     "'params' at Block construction instead.")
            self._reg_params[name] = value
        super().__setattr__(name, value)

    def _alias(self) -> str:
        return self.__class__.__name__.lower()

    @property
    def prefix(self) -> str:
        """Prefix of this block's parameter and child names (``dense0_``)."""
        return self._prefix

    @property
    def name(self) -> str:
        """The prefix without its trailing ``_``."""
        return self._name

    def name_scope(self) -> _BlockScope:
        """``with block.name_scope():`` gives children this block's prefix."""
        return self._scope

    @property
    def params(self) -> ParameterDict:
        """This block's own parameters (not its children's: see ``collect_params``)."""
        return self._params

    def collect_params(self, select: str | None = None) -> ParameterDict:
        """This block's and its descendants' parameters; ``select`` is a regex (``re.match``)
        such as ``'.*weight|.*bias'``."""
        ret = ParameterDict(self._params.prefix)
        if not select:
            ret.update(self.params)
        else:
            pattern = re.compile(select)
            ret.update({k: v for k, v in self.params.items() if pattern.match(k)})
        for child in self._children.values():
            ret.update(child.collect_params(select=select))
        return ret

    def _collect_params_with_prefix(self, prefix: str = "") -> dict[str, Parameter]:
        if prefix:
            prefix += "."
        ret = {prefix + key: val for key, val in self._reg_params.items()}
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def register_child(self, block: Block, name: str | None = None) -> None:
        """Register a child block (done automatically for attributes)."""
        if name is None:
            name = str(len(self._children))
        self._children[name] = block

    def register_forward_pre_hook(self, hook: Any) -> HookHandle:
        """``hook(block, inputs)`` before each forward; returns a detachable handle."""
        handle = HookHandle()
        handle.attach(self._forward_pre_hooks, hook)
        return handle

    def register_forward_hook(self, hook: Any) -> HookHandle:
        """``hook(block, inputs, outputs)`` after each forward; returns a detachable handle."""
        handle = HookHandle()
        handle.attach(self._forward_hooks, hook)
        return handle

    def register_op_hook(self, callback: Any, monitor_all: bool = False) -> None:
        """Install an op hook on every child (``HybridBlock.register_op_hook``); a plain Block
        runs eagerly, so only its hybridized descendants report, as in MXNet."""
        for child in self._children.values():
            child.register_op_hook(callback, monitor_all)

    def apply(self, fn: Any) -> Block:
        """Call ``fn(block)`` on every descendant, then on this block."""
        for child in self._children.values():
            child.apply(fn)
        fn(self)
        return self

    def initialize(self, init: Any = None, ctx: Any = None, verbose: bool = False,
                   force_reinit: bool = False) -> None:
        """Initialize every parameter of this block and its children."""
        self.collect_params().initialize(init, ctx, verbose, force_reinit)

    def hybridize(self, active: bool = True, **kwargs: Any) -> None:
        """Recursively hybridize the HybridBlocks below (a plain Block itself stays eager)."""
        for child in self._children.values():
            child.hybridize(active, **kwargs)

    def cast(self, dtype: Any) -> None:
        """Cast every parameter to ``dtype``."""
        for child in self._children.values():
            child.cast(dtype)
        for p in self._reg_params.values():
            p.cast(dtype)

    def reset_ctx(self, ctx: Any) -> None:
        self.collect_params().reset_ctx(ctx)

    def zero_grad(self) -> None:
        """No-op: gluonport runs inference only."""

    # --- save / load ------------------------------------------------------------------------
    def save_parameters(self, filename: str, deduplicate: bool = False) -> None:
        """Save with structural names (``0.weight``); ``deduplicate`` keeps a shared parameter
        once, under the last name that reaches it (as MXNet)."""
        params = self._collect_params_with_prefix()
        if deduplicate:
            reverse = {v: k for k, v in params.items()}
            params = {v: k for k, v in reverse.items()}
        nd_save(filename, {k: v._reduce() for k, v in params.items()})

    def load_parameters(self, filename: str, ctx: Context | list | None = None,
                        allow_missing: bool = False, ignore_extra: bool = False,
                        cast_dtype: bool = False, dtype_source: str = "current") -> None:
        """Load a ``save_parameters`` file (or, when no key has a ``.``, a legacy prefix-
        stripped ``save_params`` file), checking names, shapes and dtypes."""
        loaded = no_params_if_empty(nd_load(filename))
        if not isinstance(loaded, dict):
            raise ParameterError(f"{filename}: holds an unnamed list of arrays, not parameters")
        params = self._collect_params_with_prefix()
        if not loaded and not params:
            return
        if not any("." in k for k in loaded):
            del loaded
            self.collect_params().load(filename, ctx, allow_missing, ignore_extra, self.prefix,
                                       cast_dtype=cast_dtype, dtype_source=dtype_source)
            return
        if not allow_missing:
            aliases = defaultdict(list)
            for k, v in params.items():
                aliases[v].append(k)
            for name, param in params.items():
                if not any(a in loaded for a in aliases[param]):
                    raise ParameterError(
                        f"Parameter '{name}' is missing in file '{filename}', which contains "
                        f"parameters: {brief_names(loaded)}. Set allow_missing=True to ignore "
                        "missing parameters.")
        for name, value in loaded.items():
            if name not in params:
                if not ignore_extra:
                    raise ParameterError(
                        f"Parameter '{name}' loaded from file '{filename}' is not present in "
                        f"ParameterDict, which contains parameters {brief_names(params)}. Set "
                        "ignore_extra=True to ignore. ")
                continue
            params[name]._load_init(value, ctx, cast_dtype=cast_dtype, dtype_source=dtype_source)

    def save_params(self, filename: str) -> None:
        """Deprecated (MXNet too): prefix-stripped names; use ``save_parameters``."""
        warnings.warn("save_params is deprecated. Please use save_parameters. Note that if you "
                      "want load from SymbolBlock later, please use export instead.",
                      stacklevel=2)
        self.collect_params().save(filename, strip_prefix=self.prefix)

    def load_params(self, filename: str, ctx: Any = None, allow_missing: bool = False,
                    ignore_extra: bool = False) -> None:
        """Deprecated (MXNet too): use ``load_parameters``."""
        warnings.warn("load_params is deprecated. Please use load_parameters.", stacklevel=2)
        self.load_parameters(filename, ctx, allow_missing, ignore_extra)

    # --- calling ----------------------------------------------------------------------------
    def __call__(self, *args: Any) -> Any:
        for hook in list(self._forward_pre_hooks.values()):
            hook(self, args)
        out = self.forward(*args)
        for hook in list(self._forward_hooks.values()):
            hook(self, args, out)
        return out

    def forward(self, *args: Any) -> Any:
        """Override with the computation (on NDArrays)."""
        raise NotImplementedError

    def summary(self, *inputs: Any) -> None:
        """Print each layer's output shape and parameter count for ``inputs``, in MXNet's
        ``Block.summary`` layout (containers are not listed; the block must not be
        hybridized)."""
        from .nn.basic_layers import HybridSequential, Sequential

        rows: list[tuple[str, str, int, int, int]] = [("Input", _shape_str(inputs), 0, 0, 0)]
        seen: set[int] = set()
        handles = []

        def hook(block: Block, _: Any, outputs: Any) -> None:
            total = trainable = shared = 0
            for p in block.params.values():
                size = int(p.data().size)
                total += size
                trainable += 0 if p.grad_req == "null" else size
                if id(p) in seen:
                    shared += size
                seen.add(id(p))
            name = f"{block.__class__.__name__}-{len(rows)}"
            rows.append((name, _shape_str(outputs), total, trainable, shared))

        def add(block: Block) -> None:
            if getattr(block, "_active", False):
                raise GluonportError(f'"{block.name}" must not be hybridized to print summary.')
            if not isinstance(block, (Sequential, HybridSequential)):
                handles.append(block.register_forward_hook(hook))

        try:
            self.apply(add)
            self(*inputs)
        finally:
            for h in handles:
                h.detach()
        print("\n".join(_summary_lines(rows)))


def __getattr__(name: str) -> Any:
    """``from mxnet.gluon.block import HybridBlock, SymbolBlock`` works as in MXNet, where all
    three classes live in ``block.py`` (here they have modules of their own)."""
    if name == "HybridBlock":
        from .hybrid import HybridBlock

        return HybridBlock
    if name == "SymbolBlock":
        from .symbol_block import SymbolBlock

        return SymbolBlock
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
