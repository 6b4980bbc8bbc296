"""Initializers (``mx.init``), mirroring ``mxnet.initializer``.

An initializer fills a parameter's array. Gluon calls it with an :class:`InitDesc` (the
parameter's name plus an ``__init__`` attribute naming the initializer to use); like MXNet's, it
then runs that initializer's ``_init_weight`` whatever the name. Random numbers come from
gluonport's generator (``gluonport.random.seed``); they are not MXNet's random stream.

``dumps()`` gives MXNet's JSON form (``["xavier", {"rnd_type": "uniform", ...}]``), which is what
symbol JSON stores in a variable's ``__init__`` attribute, and :func:`create` reads it back.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

from .errors import GluonportError

__all__ = ["InitDesc", "Initializer", "register", "create", "Zero", "One", "Constant", "Uniform",
           "Normal", "Orthogonal", "Xavier", "MSRAPrelu", "Bilinear", "LSTMBias", "Mixed",
           "Load"]

_REGISTRY: dict[str, type] = {}


def register(klass: type) -> type:
    """Register an initializer class under its lower-cased name (``mx.init.register``)."""
    _REGISTRY[klass.__name__.lower()] = klass
    return klass


def _alias(*names: str):
    def deco(klass: type) -> type:
        for n in names:
            _REGISTRY[n] = klass
        return klass

    return deco


def _rng() -> np.random.Generator:
    from . import random as _random

    return _random.generator()


class InitDesc(str):
    """A parameter name with attributes (``__init__``) and the global initializer."""

    def __new__(cls, name: str, attrs: dict[str, str] | None = None,
                global_init: Initializer | None = None):
        ret = super().__new__(cls, name)
        ret.attrs = attrs or {}
        ret.global_init = global_init
        return ret


class Initializer:
    """Base class: ``init(desc, arr)`` fills the NDArray ``arr`` in place."""

    def __init__(self, **kwargs: Any):
        self._kwargs = kwargs
        self._verbose = False

    def set_verbosity(self, verbose: bool = False, print_func: Any = None) -> Initializer:
        self._verbose = verbose
        return self

    def dumps(self) -> str:
        """MXNet's JSON form: ``'["xavier", {"rnd_type": "uniform", ...}]'``."""
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])

    def __call__(self, desc: Any, arr: Any) -> None:
        if not isinstance(desc, InitDesc):
            desc = InitDesc(str(desc))
        if desc.global_init is None:
            desc.global_init = self
        init = desc.attrs.get("__init__", "")
        if init:
            create(init)._init_weight(desc, arr)
            return
        for suffix, method in (("weight", self._init_weight), ("bias", self._init_bias),
                               ("gamma", self._init_gamma), ("beta", self._init_beta),
                               ("running_mean", self._init_zero), ("moving_mean", self._init_zero),
                               ("running_var", self._init_one), ("moving_var", self._init_one),
                               ("min", self._init_zero), ("max", self._init_one)):
            if desc.endswith(suffix):
                method(desc, arr)
                return
        self._init_default(desc, arr)

    @staticmethod
    def _fill(arr: Any, values: Any) -> None:
        arr[:] = np.asarray(values).astype(arr.dtype) if hasattr(arr, "dtype") else values

    def _init_zero(self, _: str, arr: Any) -> None:
        arr[:] = 0.0

    def _init_one(self, _: str, arr: Any) -> None:
        arr[:] = 1.0

    def _init_bias(self, _: str, arr: Any) -> None:
        arr[:] = 0.0

    def _init_gamma(self, _: str, arr: Any) -> None:
        arr[:] = 1.0

    def _init_beta(self, _: str, arr: Any) -> None:
        arr[:] = 0.0

    def _init_weight(self, name: str, arr: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement _init_weight")

    def _init_default(self, name: str, arr: Any) -> None:
        raise GluonportError(
            f"Unknown initialization pattern for {name}. Default initialization is now limited "
            'to "weight", "bias", "gamma" (1.0), and "beta" (0.0). Use mx.sym.Variable(init=...) '
            "or the parameter's init= to set an initializer for it")

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return f"{type(self).__name__}({args})"


def create(init: Any, **kwargs: Any) -> Initializer:
    """An initializer from an instance, a registered name, or ``dumps()`` JSON text."""
    if isinstance(init, Initializer):
        return init
    if isinstance(init, type) and issubclass(init, Initializer):
        return init(**kwargs)
    if isinstance(init, str):
        text = init.strip()
        if text.startswith("["):
            try:
                name, kw = json.loads(text)
            except (ValueError, TypeError):
                raise GluonportError(f"initializer {init!r} is not valid JSON") from None
            return create(name, **kw)
        klass = _REGISTRY.get(text.lower())
        if klass is None:
            raise GluonportError(f"unknown initializer {init!r}; known: "
                                 f"{', '.join(sorted(_REGISTRY))}")
        return klass(**kwargs)
    raise GluonportError(f"cannot make an initializer from {init!r}")


@register
@_alias("zeros")
class Zero(Initializer):
    """Fill with 0."""

    def _init_weight(self, _: str, arr: Any) -> None:
        arr[:] = 0.0


@register
@_alias("ones")
class One(Initializer):
    """Fill with 1."""

    def _init_weight(self, _: str, arr: Any) -> None:
        arr[:] = 1.0


@register
class Constant(Initializer):
    """Fill with ``value`` (a scalar or an array broadcastable to the parameter)."""

    def __init__(self, value: Any = 0.0):
        val = value.tolist() if hasattr(value, "tolist") else value
        super().__init__(value=val)
        self.value = value

    def _init_weight(self, _: str, arr: Any) -> None:
        value = self.value.asnumpy() if hasattr(self.value, "asnumpy") else self.value
        arr[:] = np.broadcast_to(np.asarray(value), arr.shape)


@register
class Uniform(Initializer):
    """Uniform on ``[-scale, scale]`` (Gluon's default initializer, scale 0.07)."""

    def __init__(self, scale: float = 0.07):
        super().__init__(scale=scale)
        self.scale = scale

    def _init_weight(self, _: str, arr: Any) -> None:
        arr[:] = _rng().uniform(-self.scale, self.scale, arr.shape)


@register
class Normal(Initializer):
    """Normal with mean 0 and standard deviation ``sigma``."""

    def __init__(self, sigma: float = 0.01):
        super().__init__(sigma=sigma)
        self.sigma = sigma

    def _init_weight(self, _: str, arr: Any) -> None:
        arr[:] = _rng().normal(0.0, self.sigma, arr.shape)


@register
class Orthogonal(Initializer):
    """An orthogonal matrix (Saxe et al. 2013) times ``scale``."""

    def __init__(self, scale: float = 1.414, rand_type: str = "uniform"):
        super().__init__(scale=scale, rand_type=rand_type)
        self.scale = scale
        self.rand_type = rand_type

    def _init_weight(self, _: str, arr: Any) -> None:
        nout, nin = arr.shape[0], int(np.prod(arr.shape[1:]))
        rng = _rng()
        tmp = (rng.uniform(-1.0, 1.0, (nout, nin)) if self.rand_type == "uniform"
               else rng.normal(0.0, 1.0, (nout, nin)))
        u, _, v = np.linalg.svd(tmp, full_matrices=False)
        res = u if u.shape == tmp.shape else v
        arr[:] = (self.scale * res).reshape(arr.shape)


def _fans(name: str, shape: tuple[int, ...]) -> tuple[float, float]:
    if len(shape) < 2:
        raise GluonportError(f"Xavier initializer cannot be applied to vector {name}. It "
                             "requires at least 2D.")
    hw = float(np.prod(shape[2:])) if len(shape) > 2 else 1.0
    return shape[1] * hw, shape[0] * hw


@register
class Xavier(Initializer):
    """Xavier/Glorot: scale ``sqrt(magnitude / factor)``, factor from fan in/out/avg."""

    def __init__(self, rnd_type: str = "uniform", factor_type: str = "avg",
                 magnitude: float = 3):
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        self.rnd_type = rnd_type
        self.factor_type = factor_type
        self.magnitude = float(magnitude)

    def _init_weight(self, name: str, arr: Any) -> None:
        fan_in, fan_out = _fans(name, arr.shape)
        factors = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}
        if self.factor_type not in factors:
            raise GluonportError("Incorrect factor type")
        scale = np.sqrt(self.magnitude / factors[self.factor_type])
        if self.rnd_type == "uniform":
            arr[:] = _rng().uniform(-scale, scale, arr.shape)
        elif self.rnd_type == "gaussian":
            arr[:] = _rng().normal(0.0, scale, arr.shape)
        else:
            raise GluonportError("Unknown random type")


@register
class MSRAPrelu(Xavier):
    """He/MSRA initialization for PReLU nets: gaussian, magnitude ``2 / (1 + slope**2)``."""

    def __init__(self, factor_type: str = "avg", slope: float = 0.25):
        super().__init__("gaussian", factor_type, 2.0 / (1 + slope ** 2))
        self._kwargs = {"factor_type": factor_type, "slope": slope}


@register
class Bilinear(Initializer):
    """Bilinear-interpolation weights for upsampling (Deconvolution) layers."""

    def _init_weight(self, _: str, arr: Any) -> None:
        shape = arr.shape
        f = np.ceil(shape[3] / 2.0)
        c = (2 * f - 1 - f % 2) / (2.0 * f)
        x = np.arange(shape[3])
        y = np.arange(shape[2])
        kernel = np.outer(1 - np.abs(y / f - c), 1 - np.abs(x / f - c))
        arr[:] = np.broadcast_to(kernel, shape)


@register
class LSTMBias(Initializer):
    """Zero biases except the forget gate's (the second quarter), set to ``forget_bias``."""

    def __init__(self, forget_bias: float = 1.0):
        super().__init__(forget_bias=forget_bias)
        self.forget_bias = forget_bias

    def _init_weight(self, _: str, arr: Any) -> None:
        n = arr.shape[0] // 4
        values = np.zeros(arr.shape)
        values[n:2 * n] = self.forget_bias
        arr[:] = values


class Mixed:
    """Pick an initializer by the first regex pattern matching the parameter name."""

    def __init__(self, patterns: list[str], initializers: list[Initializer]):
        if len(patterns) != len(initializers):
            raise GluonportError("Mixed: patterns and initializers differ in length")
        self.map = [(re.compile(p), i) for p, i in zip(patterns, initializers)]

    def __call__(self, name: Any, arr: Any) -> None:
        for prog, init in self.map:
            if prog.match(name):
                init(name, arr)
                return
        raise GluonportError(f"Parameter name {name} did not match any pattern. Consider "
                             'adding a ".*" pattern at the end with a default Initializer.')


class Load:
    """Initialize from a dict of arrays (or a params file), falling back to ``default_init``."""

    def __init__(self, param: Any, default_init: Initializer | None = None, verbose: bool = False):
        if isinstance(param, str):
            from .ndarray import load

            param = load(param)
        self.param = {(k[4:] if k.startswith(("arg:", "aux:")) else k): v
                      for k, v in param.items()}
        self.default_init = default_init

    def __call__(self, name: Any, arr: Any) -> None:
        if name in self.param:
            src = self.param[name]
            if tuple(src.shape) != tuple(arr.shape):
                raise GluonportError(f"Parameter {name} cannot be initialized from loading: "
                                     f"shape mismatch, target {arr.shape} vs loaded {src.shape}")
            arr[:] = src
        elif self.default_init is not None:
            self.default_init(name, arr)
        else:
            raise GluonportError(f"Cannot Initialize {name}: not found in loaded param and no "
                                 "default Initializer is provided.")
