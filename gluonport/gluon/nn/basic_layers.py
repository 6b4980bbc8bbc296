"""Basic Gluon layers (``mxnet.gluon.nn.basic_layers``, 1.9.1).

Each layer creates the same parameters, with the same names and initializers, and calls the same
ops with the same explicit attributes as MXNet 1.9.1's, so exported graphs and parameter files
are interchangeable with MXNet's.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ... import ndarray as _nd
from ... import symbol as _sym
from ...errors import GluonportError
from .._text import indent
from ..block import Block
from ..hybrid import HybridBlock

__all__ = ["Sequential", "HybridSequential", "Dense", "Dropout", "BatchNorm", "BatchNormReLU",
           "Embedding", "Flatten", "InstanceNorm", "LayerNorm", "GroupNorm", "Lambda",
           "HybridLambda", "Identity"]


def _children_repr(block: Block) -> str:
    mods = "\n".join(f"  ({key}): {indent(repr(child), 2)}"
                     for key, child in block._children.items())
    return f"{block.__class__.__name__}(\n{mods}\n)"


class _SequentialMixin:
    def _run_children(self, x: Any, *args: Any) -> Any:
        """Feed each child the previous one's output; a tuple output fans out as arguments."""
        for block in self._children.values():
            x = block(x, *args)
            args = ()
            if isinstance(x, (tuple, list)):
                args = tuple(x[1:])
                x = x[0]
        return (x, *args) if args else x

    def add(self, *blocks: Block) -> None:
        """Append blocks, run in order."""
        for block in blocks:
            self.register_child(block)

    def __repr__(self) -> str:
        return _children_repr(self)

    def __getitem__(self, key: int | slice) -> Any:
        layers = list(self._children.values())[key]
        if isinstance(layers, list):
            net = type(self)(prefix=self._prefix)
            with net.name_scope():
                net.add(*layers)
            return net
        return layers

    def __len__(self) -> int:
        return len(self._children)


class Sequential(_SequentialMixin, Block):
    """Stacks Blocks sequentially (eager)."""

    def forward(self, x: Any, *args: Any) -> Any:
        return self._run_children(x, *args)

    def hybridize(self, active: bool = True, **kwargs: Any) -> None:
        if self._children and all(isinstance(c, HybridBlock) for c in self._children.values()):
            warnings.warn(f"All children of this Sequential layer '{self.prefix}' are "
                          "HybridBlocks. Consider using HybridSequential for the best "
                          "performance.", stacklevel=2)
        super().hybridize(active, **kwargs)


class HybridSequential(_SequentialMixin, HybridBlock):
    """Stacks HybridBlocks sequentially; hybridizable."""

    def hybrid_forward(self, F: Any, x: Any, *args: Any) -> Any:
        return self._run_children(x, *args)


class Dense(HybridBlock):
    """``activation(dot(x, weight.T) + bias)``: ``FullyConnected`` named ``<prefix>fwd``.

    ``in_units=0`` defers the weight shape to the first forward pass.
    """

    def __init__(self, units: int, activation: str | None = None, use_bias: bool = True,
                 flatten: bool = True, dtype: Any = "float32", weight_initializer: Any = None,
                 bias_initializer: Any = "zeros", in_units: int = 0, **kwargs: Any):
        super().__init__(**kwargs)
        self._flatten = flatten
        with self.name_scope():
            self._units = units
            self._in_units = in_units
            self.weight = self.params.get("weight", shape=(units, in_units),
                                          init=weight_initializer, dtype=dtype,
                                          allow_deferred_init=True)
            if use_bias:
                self.bias = self.params.get("bias", shape=(units,), init=bias_initializer,
                                            dtype=dtype, allow_deferred_init=True)
            else:
                self.bias = None
            if activation is not None:
                from .activations import Activation

                self.act = Activation(activation, prefix=activation + "_")
            else:
                self.act = None

    def hybrid_forward(self, F: Any, x: Any, weight: Any, bias: Any = None) -> Any:
        inputs = (x, weight) if bias is None else (x, weight, bias)
        out = F.FullyConnected(*inputs, no_bias=bias is None, num_hidden=self._units,
                               flatten=self._flatten, name="fwd")
        if self.act is not None:
            out = self.act(out)
        return out

    def __repr__(self) -> str:
        shape = self.weight.shape
        layout = f"{shape[1] if shape[1] else None} -> {shape[0]}"
        return f"{self.__class__.__name__}({layout}, {self.act if self.act else 'linear'})"


class Dropout(HybridBlock):
    """Dropout with rate ``rate`` (identity at inference)."""

    def __init__(self, rate: float, axes: tuple = (), **kwargs: Any):
        super().__init__(**kwargs)
        self._rate = rate
        self._axes = axes

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        if self._rate > 0:
            return F.Dropout(x, p=self._rate, axes=self._axes, name="fwd", cudnn_off=False)
        return F.identity(x)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(p = {self._rate}, axes={self._axes})"


class _BatchNorm(HybridBlock):
    def __init__(self, axis: int = 1, momentum: float = 0.9, epsilon: float = 1e-5,
                 center: bool = True, scale: bool = True, use_global_stats: bool = False,
                 fuse_relu: bool = False, beta_initializer: Any = "zeros",
                 gamma_initializer: Any = "ones", running_mean_initializer: Any = "zeros",
                 running_variance_initializer: Any = "ones", in_channels: int = 0,
                 **kwargs: Any):
        super().__init__(**kwargs)
        self._kwargs = {"axis": axis, "eps": epsilon, "momentum": momentum,
                        "fix_gamma": not scale, "use_global_stats": use_global_stats}
        self.fuse_relu = fuse_relu
        if in_channels != 0:
            self.in_channels = in_channels
        get = self.params.get
        self.gamma = get("gamma", grad_req="write" if scale else "null", shape=(in_channels,),
                         init=gamma_initializer, allow_deferred_init=True, differentiable=scale)
        self.beta = get("beta", grad_req="write" if center else "null", shape=(in_channels,),
                        init=beta_initializer, allow_deferred_init=True, differentiable=center)
        self.running_mean = get("running_mean", grad_req="null", shape=(in_channels,),
                                init=running_mean_initializer, allow_deferred_init=True,
                                differentiable=False)
        self.running_var = get("running_var", grad_req="null", shape=(in_channels,),
                               init=running_variance_initializer, allow_deferred_init=True,
                               differentiable=False)

    def cast(self, dtype: Any) -> None:
        if np.dtype(dtype).name == "float16":  # MXNet keeps BatchNorm in float32
            dtype = "float32"
        super().cast(dtype)

    def hybrid_forward(self, F: Any, x: Any, gamma: Any, beta: Any, running_mean: Any,
                       running_var: Any) -> Any:
        # fuse_relu (BatchNormReLU): MXNet's fused _contrib_BatchNormWithReLU operator
        batch_norm = F.contrib.BatchNormWithReLU if self.fuse_relu else F.BatchNorm
        return batch_norm(x, gamma, beta, running_mean, running_var, name="fwd",
                          **self._kwargs)

    def __repr__(self) -> str:
        in_channels = self.gamma.shape[0]
        content = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return (f"{self.__class__.__name__}({content}, "
                f"in_channels={in_channels if in_channels else None})")


class BatchNorm(_BatchNorm):
    """Batch normalization; at inference uses the running statistics.

    ``scale=False`` means ``fix_gamma=True`` (gamma treated as 1), as MXNet maps it.
    """

    def __init__(self, axis: int = 1, momentum: float = 0.9, epsilon: float = 1e-5,
                 center: bool = True, scale: bool = True, use_global_stats: bool = False,
                 beta_initializer: Any = "zeros", gamma_initializer: Any = "ones",
                 running_mean_initializer: Any = "zeros",
                 running_variance_initializer: Any = "ones", in_channels: int = 0,
                 **kwargs: Any):
        super().__init__(axis=axis, momentum=momentum, epsilon=epsilon, center=center,
                         scale=scale, use_global_stats=use_global_stats, fuse_relu=False,
                         beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
                         running_mean_initializer=running_mean_initializer,
                         running_variance_initializer=running_variance_initializer,
                         in_channels=in_channels, **kwargs)


class BatchNormReLU(_BatchNorm):
    """Batch normalization followed by ReLU, one ``_contrib_BatchNormWithReLU`` node named
    ``<prefix>fwd``; the same arguments and parameters (``gamma``, ``beta``,
    ``running_mean``, ``running_var``) as :class:`BatchNorm`, so BatchNorm weights load.

    MXNet 1.9.1 runs the fused operator only through oneDNN, on 4-d float32 data with
    ``axis=1``; gluonport computes it for any shape, axis and float dtype.
    """

    def __init__(self, axis: int = 1, momentum: float = 0.9, epsilon: float = 1e-5,
                 center: bool = True, scale: bool = True, use_global_stats: bool = False,
                 beta_initializer: Any = "zeros", gamma_initializer: Any = "ones",
                 running_mean_initializer: Any = "zeros",
                 running_variance_initializer: Any = "ones", in_channels: int = 0,
                 **kwargs: Any):
        super().__init__(axis=axis, momentum=momentum, epsilon=epsilon, center=center,
                         scale=scale, use_global_stats=use_global_stats, fuse_relu=True,
                         beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
                         running_mean_initializer=running_mean_initializer,
                         running_variance_initializer=running_variance_initializer,
                         in_channels=in_channels, **kwargs)


class Embedding(HybridBlock):
    """Maps indices to ``output_dim`` vectors (``Embedding`` op)."""

    def __init__(self, input_dim: int, output_dim: int, dtype: Any = "float32",
                 weight_initializer: Any = None, sparse_grad: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        self._kwargs = {"input_dim": input_dim, "output_dim": output_dim, "dtype": dtype,
                        "sparse_grad": sparse_grad}
        self.weight = self.params.get("weight", shape=(input_dim, output_dim),
                                      init=weight_initializer, dtype=dtype,
                                      allow_deferred_init=True,
                                      grad_stype="row_sparse" if sparse_grad else "default")

    def hybrid_forward(self, F: Any, x: Any, weight: Any) -> Any:
        return F.Embedding(x, weight, name="fwd", **self._kwargs)

    def __repr__(self) -> str:
        k = self._kwargs
        return f"{self.__class__.__name__}({k['input_dim']} -> {k['output_dim']}, {k['dtype']})"


class Flatten(HybridBlock):
    """Collapse all but the first axis."""

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.flatten(x)

    def __repr__(self) -> str:
        return self.__class__.__name__


def _norm_repr(block: HybridBlock, with_channels: bool = True) -> str:
    content = ", ".join(f"{k}={v!r}" for k, v in block._kwargs.items())
    if not with_channels:
        return f"{block.__class__.__name__}({content})"
    return f"{block.__class__.__name__}({content}, in_channels={block.gamma.shape[0]})"


class _AffineNorm(HybridBlock):
    """Shared parameters of InstanceNorm / LayerNorm / GroupNorm: ``gamma``, ``beta``."""

    def _affine(self, size: int, center: bool, scale: bool, beta_init: Any,
                gamma_init: Any) -> None:
        self.gamma = self.params.get("gamma", grad_req="write" if scale else "null",
                                     shape=(size,), init=gamma_init, allow_deferred_init=True)
        self.beta = self.params.get("beta", grad_req="write" if center else "null",
                                    shape=(size,), init=beta_init, allow_deferred_init=True)


class InstanceNorm(_AffineNorm):
    """Instance normalization over the spatial axes, per channel (``axis``)."""

    def __init__(self, axis: int = 1, epsilon: float = 1e-5, center: bool = True,
                 scale: bool = False, beta_initializer: Any = "zeros",
                 gamma_initializer: Any = "ones", in_channels: int = 0, **kwargs: Any):
        super().__init__(**kwargs)
        self._kwargs = {"eps": epsilon, "axis": axis, "center": center, "scale": scale}
        self._axis = axis
        self._epsilon = epsilon
        self._affine(in_channels, center, scale, beta_initializer, gamma_initializer)

    def hybrid_forward(self, F: Any, x: Any, gamma: Any, beta: Any) -> Any:
        if self._axis == 1:
            return F.InstanceNorm(x, gamma, beta, name="fwd", eps=self._epsilon)
        x = x.swapaxes(1, self._axis)
        return F.InstanceNorm(x, gamma, beta, name="fwd",
                              eps=self._epsilon).swapaxes(1, self._axis)

    def __repr__(self) -> str:
        return _norm_repr(self)


class LayerNorm(_AffineNorm):
    """Layer normalization over ``axis`` (default the last)."""

    def __init__(self, axis: int = -1, epsilon: float = 1e-5, center: bool = True,
                 scale: bool = True, beta_initializer: Any = "zeros",
                 gamma_initializer: Any = "ones", in_channels: int = 0, prefix: str | None = None,
                 params: Any = None):
        super().__init__(prefix=prefix, params=params)
        self._kwargs = {"eps": epsilon, "axis": axis, "center": center, "scale": scale}
        self._axis = axis
        self._epsilon = epsilon
        self._affine(in_channels, center, scale, beta_initializer, gamma_initializer)

    def hybrid_forward(self, F: Any, data: Any, gamma: Any, beta: Any) -> Any:
        return F.LayerNorm(data, gamma=gamma, beta=beta, axis=self._axis, eps=self._epsilon)

    def __repr__(self) -> str:
        return _norm_repr(self)


class GroupNorm(_AffineNorm):
    """Group normalization (``num_groups`` groups of channels)."""

    def __init__(self, num_groups: int = 1, epsilon: float = 1e-5, center: bool = True,
                 scale: bool = True, beta_initializer: Any = "zeros",
                 gamma_initializer: Any = "ones", prefix: str | None = None, params: Any = None):
        super().__init__(prefix=prefix, params=params)
        self._kwargs = {"eps": epsilon, "num_groups": num_groups, "center": center,
                        "scale": scale}
        self._num_groups = num_groups
        self._epsilon = epsilon
        self._affine(num_groups, center, scale, beta_initializer, gamma_initializer)

    def hybrid_forward(self, F: Any, data: Any, gamma: Any, beta: Any) -> Any:
        return F.GroupNorm(data, gamma=gamma, beta=beta, num_groups=self._num_groups,
                           eps=self._epsilon)

    def __repr__(self) -> str:
        return _norm_repr(self, with_channels=False)


def _resolve(function: Any, namespaces: tuple) -> Any:
    if isinstance(function, str):
        for ns in namespaces:
            if not hasattr(ns, function):
                raise GluonportError(f"Function name {function} is not found in "
                                     f"{ns.__name__.split('.')[-1]}.")
        return function
    if callable(function):
        return function
    raise GluonportError(f"Unrecognized function in lambda: {function} of type "
                         f"{type(function)}")


class Lambda(Block):
    """Wrap a function (or an ``nd`` op name) as a Block."""

    def __init__(self, function: Any, prefix: str | None = None):
        super().__init__(prefix=prefix)
        fn = _resolve(function, (_nd,))
        self._func_impl = getattr(_nd, fn) if isinstance(fn, str) else fn

    def forward(self, *args: Any) -> Any:
        return self._func_impl(*args)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._func_impl.__name__})"


class HybridLambda(HybridBlock):
    """Wrap ``function(F, x, *args)`` (or an op name in both ``nd`` and ``sym``)."""

    def __init__(self, function: Any, prefix: str | None = None):
        super().__init__(prefix=prefix)
        fn = _resolve(function, (_nd, _sym))
        if isinstance(fn, str):
            table = {_sym: getattr(_sym, fn), _nd: getattr(_nd, fn)}
            self._func = lambda F, *args: table[F](*args)
            self._func_name = fn
        else:
            self._func = fn
            self._func_name = fn.__name__

    def hybrid_forward(self, F: Any, x: Any, *args: Any) -> Any:
        return self._func(F, x, *args)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._func_name})"


class Identity(HybridBlock):
    """Returns its input (``gluon.contrib.nn.Identity``; also ``nn.Identity`` in 2.0)."""

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return x
