"""``gluon.nn``: MXNet 1.9.1's neural-network layers."""

from ..block import Block
from ..hybrid import HybridBlock
from ..symbol_block import SymbolBlock
from .activations import ELU, GELU, SELU, Activation, LeakyReLU, PReLU, SiLU, Swish
from .basic_layers import (
    BatchNorm,
    BatchNormReLU,
    Dense,
    Dropout,
    Embedding,
    Flatten,
    GroupNorm,
    HybridLambda,
    HybridSequential,
    Identity,
    InstanceNorm,
    Lambda,
    LayerNorm,
    Sequential,
)
from .conv_layers import (
    AvgPool1D,
    AvgPool2D,
    AvgPool3D,
    Conv1D,
    Conv1DTranspose,
    Conv2D,
    Conv2DTranspose,
    Conv3D,
    Conv3DTranspose,
    GlobalAvgPool1D,
    GlobalAvgPool2D,
    GlobalAvgPool3D,
    GlobalMaxPool1D,
    GlobalMaxPool2D,
    GlobalMaxPool3D,
    MaxPool1D,
    MaxPool2D,
    MaxPool3D,
    ReflectionPad2D,
)

__all__ = ["Activation", "LeakyReLU", "PReLU", "ELU", "SELU", "GELU", "Swish", "SiLU",
           "Sequential", "HybridSequential", "Dense", "Dropout", "BatchNorm", "BatchNormReLU",
           "Embedding", "Flatten", "InstanceNorm", "LayerNorm", "GroupNorm", "Lambda",
           "HybridLambda",
           "Identity", "Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose",
           "Conv3DTranspose", "MaxPool1D", "MaxPool2D", "MaxPool3D", "AvgPool1D", "AvgPool2D",
           "AvgPool3D", "GlobalMaxPool1D", "GlobalMaxPool2D", "GlobalMaxPool3D",
           "GlobalAvgPool1D", "GlobalAvgPool2D", "GlobalAvgPool3D", "ReflectionPad2D", "Block",
           "HybridBlock", "SymbolBlock"]
