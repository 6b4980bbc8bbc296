"""``gluon.data.vision``: MXNet 1.9.1's image transforms (``vision.transforms``), and its
dataset classes, which here only say why they are unavailable (downloads, image decoding)."""

from . import transforms
from .datasets import (
    CIFAR10,
    CIFAR100,
    MNIST,
    FashionMNIST,
    ImageFolderDataset,
    ImageListDataset,
    ImageRecordDataset,
)

__all__ = ["transforms", "MNIST", "FashionMNIST", "CIFAR10", "CIFAR100", "ImageRecordDataset",
           "ImageFolderDataset", "ImageListDataset"]
