"""Contributed layers (``mxnet.gluon.contrib.nn.basic_layers``, 1.9.1).

``HybridConcurrent`` is what the model zoo's DenseNet, SqueezeNet and Inception use to run
branches side by side; the names and op calls follow MXNet's so exported graphs match.
``SparseEmbedding`` (a training-time, row-sparse gradient layer) is not provided: use
``gluon.nn.Embedding``, which computes the same forward pass.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

from ....ndarray import concat as _nd_concat
from ... import nn
from ...hybrid import HybridBlock

__all__ = ["Concurrent", "HybridConcurrent", "Identity", "SyncBatchNorm", "PixelShuffle1D",
           "PixelShuffle2D", "PixelShuffle3D"]


class Concurrent(nn.Sequential):
    """Feeds the input to every child and concatenates their outputs along ``axis``.

    Parameters
    ----------
    axis : int, default -1
        The axis on which the children's outputs are concatenated.
    """

    def __init__(self, axis: int = -1, prefix: str | None = None, params: Any = None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def forward(self, x: Any) -> Any:
        outs = [block(x) for block in self._children.values()]
        return _nd_concat(*outs, dim=self.axis)


class HybridConcurrent(nn.HybridSequential):
    """Hybridizable :class:`Concurrent`: ``F.concat(*[child(x) ...], dim=axis)``.

    Parameters
    ----------
    axis : int, default -1
        The axis on which the children's outputs are concatenated.
    """

    def __init__(self, axis: int = -1, prefix: str | None = None, params: Any = None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        outs = [block(x) for block in self._children.values()]
        return F.concat(*outs, dim=self.axis)


class Identity(HybridBlock):
    """Passes its input through unchanged (a residual branch inside ``HybridConcurrent``)."""

    def __init__(self, prefix: str | None = None, params: Any = None):
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return x


class SyncBatchNorm(nn.BatchNorm):
    """Cross-device batch normalization (``_contrib_SyncBatchNorm``).

    At inference it computes what ``BatchNorm`` computes with the running statistics; the
    graph keeps MXNet's op and attributes (``ndev``, ``key``) so exports match MXNet's.
    ``num_devices`` defaults to 1 here (MXNet counts visible GPUs, with a warning).
    """

    def __init__(self, in_channels: int = 0, num_devices: int | None = None,
                 momentum: float = 0.9, epsilon: float = 1e-5, center: bool = True,
                 scale: bool = True, use_global_stats: bool = False,
                 beta_initializer: Any = "zeros", gamma_initializer: Any = "ones",
                 running_mean_initializer: Any = "zeros",
                 running_variance_initializer: Any = "ones", **kwargs: Any):
        super().__init__(axis=1, momentum=momentum, epsilon=epsilon, center=center,
                         scale=scale, use_global_stats=use_global_stats,
                         beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
                         running_mean_initializer=running_mean_initializer,
                         running_variance_initializer=running_variance_initializer,
                         in_channels=in_channels, **kwargs)
        if num_devices is None:
            warnings.warn("Caution using SyncBatchNorm: if not using all the GPUs, please "
                          "mannually set num_devices", UserWarning, stacklevel=2)
            num_devices = 1
        self._kwargs = {"eps": epsilon, "momentum": momentum, "fix_gamma": not scale,
                        "use_global_stats": use_global_stats, "ndev": num_devices,
                        "key": self.prefix}

    def hybrid_forward(self, F: Any, x: Any, gamma: Any, beta: Any, running_mean: Any,
                       running_var: Any) -> Any:
        return F.contrib.SyncBatchNorm(x, gamma, beta, running_mean, running_var, name="fwd",
                                       **self._kwargs)


def _factors(factor: Any, n: int) -> tuple[int, ...]:
    if isinstance(factor, numbers.Integral):
        return (int(factor),) * n
    out = tuple(int(f) for f in factor)
    if len(out) != n:
        raise ValueError(f"wrong length {len(out)}")
    return out


class PixelShuffle1D(HybridBlock):
    """``(N, f*C, W) -> (N, C, W*f)``: channel groups become neighbouring pixels."""

    def __init__(self, factor: int):
        super().__init__()
        self._factor = int(factor)

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        f = self._factor
        x = F.reshape(x, (0, -4, -1, f, 0))
        x = F.transpose(x, (0, 1, 3, 2))
        return F.reshape(x, (0, 0, -3))

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._factor})"


class PixelShuffle2D(HybridBlock):
    """``(N, f1*f2*C, H, W) -> (N, C, H*f1, W*f2)`` (sub-pixel convolution upsampling)."""

    def __init__(self, factor: Any):
        super().__init__()
        self._factors = _factors(factor, 2)

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        f1, f2 = self._factors
        x = F.reshape(x, (0, -4, -1, f1 * f2, 0, 0))
        x = F.reshape(x, (0, 0, -4, f1, f2, 0, 0))
        x = F.transpose(x, (0, 1, 4, 2, 5, 3))
        return F.reshape(x, (0, 0, -3, -3))

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._factors})"


class PixelShuffle3D(HybridBlock):
    """``(N, f1*f2*f3*C, D, H, W) -> (N, C, D*f1, H*f2, W*f3)``.

    Like MXNet, it stays within 7-D intermediates (reshapes and ``swapaxes``), so the graph is
    the one MXNet exports.
    """

    def __init__(self, factor: Any):
        super().__init__()
        self._factors = _factors(factor, 3)

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        f1, f2, f3 = self._factors
        x = F.reshape(x, (0, -4, -1, f1 * f2 * f3, 0, 0, 0))
        x = F.swapaxes(x, 2, 3)
        x = F.reshape(x, (0, 0, 0, -4, f1, f2 * f3, 0, 0))
        x = F.reshape(x, (0, 0, -3, 0, 0, 0))
        x = F.swapaxes(x, 3, 4)
        x = F.reshape(x, (0, 0, 0, 0, -4, f2, f3, 0))
        x = F.reshape(x, (0, 0, 0, -3, 0, 0))
        x = F.swapaxes(x, 4, 5)
        return F.reshape(x, (0, 0, 0, 0, -3))

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._factors})"
