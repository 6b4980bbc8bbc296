"""``gluon.contrib.nn``: MXNet 1.9.1's contributed layers."""

from .basic_layers import (
    Concurrent,
    HybridConcurrent,
    Identity,
    PixelShuffle1D,
    PixelShuffle2D,
    PixelShuffle3D,
    SyncBatchNorm,
)

__all__ = ["Concurrent", "HybridConcurrent", "Identity", "SyncBatchNorm", "PixelShuffle1D",
           "PixelShuffle2D", "PixelShuffle3D"]
