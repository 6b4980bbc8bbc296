"""``gluon.data.vision`` datasets: present so that code importing them loads; constructing one
raises. MXNet's MNIST/FashionMNIST/CIFAR10/CIFAR100 download their data, and
ImageFolderDataset/ImageListDataset/ImageRecordDataset decode images, and gluonport neither
downloads nor ships an image codec. Decode with Pillow or OpenCV and wrap the arrays in
``gluon.data.ArrayDataset`` (``RecordFileDataset`` reads the raw records of a ``.rec`` file).
"""

from __future__ import annotations

from typing import Any

from ....errors import GluonportError
from ..dataset import Dataset

__all__ = ["MNIST", "FashionMNIST", "CIFAR10", "CIFAR100", "ImageRecordDataset",
           "ImageFolderDataset", "ImageListDataset"]


def _unavailable(name: str, why: str) -> type:
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        raise GluonportError(f"gluon.data.vision.{name}: {why}; decode the images with Pillow "
                             "or OpenCV and use gluon.data.ArrayDataset (or SimpleDataset)")

    return type(name, (Dataset,), {"__init__": __init__, "__doc__":
                                   f"Not available in gluonport: {why}."})


_DOWNLOADS = "MXNet's class downloads its data and gluonport never downloads"
_DECODES = "it decodes images and gluonport ships no image codec"
MNIST = _unavailable("MNIST", _DOWNLOADS)
FashionMNIST = _unavailable("FashionMNIST", _DOWNLOADS)
CIFAR10 = _unavailable("CIFAR10", _DOWNLOADS)
CIFAR100 = _unavailable("CIFAR100", _DOWNLOADS)
ImageRecordDataset = _unavailable("ImageRecordDataset", _DECODES)
ImageFolderDataset = _unavailable("ImageFolderDataset", _DECODES)
ImageListDataset = _unavailable("ImageListDataset", _DECODES)
