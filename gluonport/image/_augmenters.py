"""``mx.image`` augmenters (``Augmenter``, ``CreateAugmenter`` ...) of MXNet 1.9.1.

Callables over ``(height, width, channels)`` NDArrays, exported by :mod:`gluonport.image`.
They draw from Python's ``random`` and ``numpy.random`` in the same calls as MXNet 1.9.1, so a
seeded run gives MXNet's crops, flips and jitter factors. Like MXNet's, the colour augmenters
update float images in place (``src *= alpha``): put ``CastAug`` first, as ``CreateAugmenter``
does.
"""

from __future__ import annotations

import json
import random
import warnings
from typing import Any

import numpy as np

from .. import ndarray as nd
from ..errors import ArgumentError
from ..ndarray import NDArray
from .image import (
    center_crop,
    color_normalize,
    imresize,
    interp_method,
    random_crop,
    random_size_crop,
    resize_short,
)

__all__ = ["Augmenter", "SequentialAug", "ResizeAug", "ForceResizeAug", "RandomCropAug",
           "RandomSizedCropAug", "CenterCropAug", "RandomOrderAug", "BrightnessJitterAug",
           "ContrastJitterAug", "SaturationJitterAug", "HueJitterAug", "ColorJitterAug",
           "LightingAug", "ColorNormalizeAug", "RandomGrayAug", "HorizontalFlipAug", "CastAug",
           "CreateAugmenter"]


class Augmenter:
    """Base class: keeps its keyword arguments for ``dumps()`` (arrays as lists)."""

    def __init__(self, **kwargs: Any) -> None:
        self._kwargs = kwargs
        for k, v in self._kwargs.items():
            if isinstance(v, NDArray):
                v = v.asnumpy()
            if isinstance(v, np.ndarray):
                self._kwargs[k] = v.tolist()

    def dumps(self) -> str:
        """``[class name in lower case, keyword arguments]`` as JSON."""
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])

    def __call__(self, src: NDArray) -> NDArray:
        raise NotImplementedError("Must override implementation.")


class SequentialAug(Augmenter):
    """Apply ``ts`` in order."""

    def __init__(self, ts: list) -> None:
        super().__init__()
        self.ts = ts

    def dumps(self) -> list:  # type: ignore[override]
        return [self.__class__.__name__.lower(), [x.dumps() for x in self.ts]]

    def __call__(self, src: NDArray) -> NDArray:
        for aug in self.ts:
            src = aug(src)
        return src


class _SizeAug(Augmenter):
    """An augmenter of a target ``size`` and an ``interp`` method (default 2, bicubic)."""

    def __init__(self, size: Any, interp: int = 2) -> None:
        super().__init__(size=size, interp=interp)
        self.size = size
        self.interp = interp


class ResizeAug(_SizeAug):
    """Resize the shorter edge to ``size`` (``resize_short``)."""

    def __call__(self, src: NDArray) -> NDArray:
        return resize_short(src, self.size, self.interp)


class ForceResizeAug(_SizeAug):
    """Resize to ``size`` (w, h) regardless of the aspect ratio."""

    def __call__(self, src: NDArray) -> NDArray:
        sizes = (src.shape[0], src.shape[1], self.size[1], self.size[0])
        return imresize(src, *self.size, interp=interp_method(self.interp, sizes))


class RandomCropAug(_SizeAug):
    """Random ``size`` (w, h) crop (``random_crop``)."""

    def __call__(self, src: NDArray) -> NDArray:
        return random_crop(src, self.size, self.interp)[0]


class RandomSizedCropAug(Augmenter):
    """Random area/aspect crop resized to ``size`` (``random_size_crop``)."""

    def __init__(self, size: tuple, area: Any, ratio: tuple, interp: int = 2,
                 **kwargs: Any) -> None:
        super().__init__(size=size, area=area, ratio=ratio, interp=interp)
        self.size = size
        if "min_area" in kwargs:
            warnings.warn("`min_area` is deprecated. Please use `area` instead.",
                          DeprecationWarning, stacklevel=2)
            self.area = kwargs.pop("min_area")
        else:
            self.area = area
        self.ratio = ratio
        self.interp = interp
        if kwargs:
            raise ArgumentError(f"RandomSizedCropAug: unexpected keyword arguments "
                                f"{sorted(kwargs)}")

    def __call__(self, src: NDArray) -> NDArray:
        return random_size_crop(src, self.size, self.area, self.ratio, self.interp)[0]


class CenterCropAug(_SizeAug):
    """Centre ``size`` (w, h) crop (``center_crop``)."""

    def __call__(self, src: NDArray) -> NDArray:
        return center_crop(src, self.size, self.interp)[0]


class RandomOrderAug(Augmenter):
    """Apply ``ts`` in a random order (``random.shuffle`` of the list, as MXNet)."""

    def __init__(self, ts: list) -> None:
        super().__init__()
        self.ts = ts

    def dumps(self) -> list:  # type: ignore[override]
        return [self.__class__.__name__.lower(), [x.dumps() for x in self.ts]]

    def __call__(self, src: NDArray) -> NDArray:
        random.shuffle(self.ts)
        for t in self.ts:
            src = t(src)
        return src


class BrightnessJitterAug(Augmenter):
    """``src *= 1 + U(-brightness, brightness)`` (in place)."""

    def __init__(self, brightness: float) -> None:
        super().__init__(brightness=brightness)
        self.brightness = brightness

    def __call__(self, src: NDArray) -> NDArray:
        alpha = 1.0 + random.uniform(-self.brightness, self.brightness)
        src *= alpha
        return src


_GRAY = [[[0.299, 0.587, 0.114]]]


class ContrastJitterAug(Augmenter):
    """Blend with the mean gray level by ``1 + U(-contrast, contrast)`` (in place)."""

    def __init__(self, contrast: float) -> None:
        super().__init__(contrast=contrast)
        self.contrast = contrast
        self.coef = nd.array(_GRAY)

    def __call__(self, src: NDArray) -> NDArray:
        alpha = 1.0 + random.uniform(-self.contrast, self.contrast)
        gray = src * self.coef
        gray = (3.0 * (1.0 - alpha) / gray.size) * nd.sum(gray)
        src *= alpha
        src += gray
        return src


class SaturationJitterAug(Augmenter):
    """Blend with each pixel's gray level by ``1 + U(-saturation, saturation)`` (in place)."""

    def __init__(self, saturation: float) -> None:
        super().__init__(saturation=saturation)
        self.saturation = saturation
        self.coef = nd.array(_GRAY)

    def __call__(self, src: NDArray) -> NDArray:
        alpha = 1.0 + random.uniform(-self.saturation, self.saturation)
        gray = nd.sum(src * self.coef, axis=2, keepdims=True)
        gray *= 1.0 - alpha
        src *= alpha
        src += gray
        return src


class HueJitterAug(Augmenter):
    """Rotate the hue by ``U(-hue, hue) * 180`` degrees in YIQ space (a linear map)."""

    def __init__(self, hue: float) -> None:
        super().__init__(hue=hue)
        self.hue = hue
        self.tyiq = np.array([[0.299, 0.587, 0.114], [0.596, -0.274, -0.321],
                              [0.211, -0.523, 0.311]])
        self.ityiq = np.array([[1.0, 0.956, 0.621], [1.0, -0.272, -0.647],
                               [1.0, -1.107, 1.705]])

    def __call__(self, src: NDArray) -> NDArray:
        alpha = random.uniform(-self.hue, self.hue)
        u, w = np.cos(alpha * np.pi), np.sin(alpha * np.pi)
        bt = np.array([[1.0, 0.0, 0.0], [0.0, u, -w], [0.0, w, u]])
        t = np.dot(np.dot(self.ityiq, bt), self.tyiq).T
        return nd.dot(src, nd.array(t))


class ColorJitterAug(RandomOrderAug):
    """Brightness, contrast and saturation jitter (those > 0) in a random order."""

    def __init__(self, brightness: float, contrast: float, saturation: float) -> None:
        ts: list = []
        if brightness > 0:
            ts.append(BrightnessJitterAug(brightness))
        if contrast > 0:
            ts.append(ContrastJitterAug(contrast))
        if saturation > 0:
            ts.append(SaturationJitterAug(saturation))
        super().__init__(ts)


class LightingAug(Augmenter):
    """Add PCA noise ``eigvec * N(0, alphastd) @ eigval`` (numpy's generator, in place)."""

    def __init__(self, alphastd: float, eigval: Any, eigvec: Any) -> None:
        super().__init__(alphastd=alphastd, eigval=eigval, eigvec=eigvec)
        self.alphastd = alphastd
        self.eigval = eigval
        self.eigvec = eigvec

    def __call__(self, src: NDArray) -> NDArray:
        alpha = np.random.normal(0, self.alphastd, size=(3,))
        rgb = np.dot(self.eigvec * alpha, self.eigval)
        src += nd.array(rgb)
        return src


class ColorNormalizeAug(Augmenter):
    """``(src - mean) / std`` (``color_normalize``)."""

    def __init__(self, mean: Any, std: Any) -> None:
        super().__init__(mean=mean, std=std)
        self.mean = mean if mean is None or isinstance(mean, NDArray) else nd.array(mean)
        self.std = std if std is None or isinstance(std, NDArray) else nd.array(std)

    def __call__(self, src: NDArray) -> NDArray:
        return color_normalize(src, self.mean, self.std)


class RandomGrayAug(Augmenter):
    """With probability ``p``, replace every channel by the gray level (0.21 R + 0.72 G +
    0.07 B)."""

    def __init__(self, p: float) -> None:
        super().__init__(p=p)
        self.p = p
        self.mat = nd.array([[0.21, 0.21, 0.21], [0.72, 0.72, 0.72], [0.07, 0.07, 0.07]])

    def __call__(self, src: NDArray) -> NDArray:
        if random.random() < self.p:
            src = nd.dot(src, self.mat)
        return src


class HorizontalFlipAug(Augmenter):
    """Flip left to right with probability ``p``."""

    def __init__(self, p: float) -> None:
        super().__init__(p=p)
        self.p = p

    def __call__(self, src: NDArray) -> NDArray:
        if random.random() < self.p:
            src = nd.flip(src, axis=1)
        return src


class CastAug(Augmenter):
    """Cast to ``typ`` (float32)."""

    def __init__(self, typ: str = "float32") -> None:
        super().__init__(type=typ)
        self.typ = typ

    def __call__(self, src: NDArray) -> NDArray:
        return src.astype(self.typ)


_MEAN = [123.68, 116.28, 103.53]
_STD = [58.395, 57.12, 57.375]


def CreateAugmenter(data_shape: tuple, resize: int = 0, rand_crop: bool = False,
                    rand_resize: bool = False, rand_mirror: bool = False, mean: Any = None,
                    std: Any = None, brightness: float = 0, contrast: float = 0,
                    saturation: float = 0, hue: float = 0, pca_noise: float = 0,
                    rand_gray: float = 0, inter_method: int = 2) -> list:
    """MXNet's standard augmenter list for ``data_shape`` (C, H, W): optional short-edge
    ``resize``, a centre (or random / random-sized) crop, optional mirror, ``CastAug``, colour
    jitter, PCA noise, random gray, and ``ColorNormalizeAug`` (``mean=True``/``std=True`` use
    ImageNet's statistics on the 0-255 scale).

    >>> import gluonport as mx
    >>> augs = mx.image.CreateAugmenter((3, 224, 224), resize=256, mean=True, std=True)
    >>> [type(a).__name__ for a in augs]
    ['ResizeAug', 'CenterCropAug', 'CastAug', 'ColorNormalizeAug']
    """
    auglist: list = []
    if resize > 0:
        auglist.append(ResizeAug(resize, inter_method))
    crop_size = (data_shape[2], data_shape[1])
    if rand_resize:
        if not rand_crop:
            raise ArgumentError("CreateAugmenter: rand_resize=True needs rand_crop=True")
        auglist.append(RandomSizedCropAug(crop_size, 0.08, (3.0 / 4.0, 4.0 / 3.0), inter_method))
    elif rand_crop:
        auglist.append(RandomCropAug(crop_size, inter_method))
    else:
        auglist.append(CenterCropAug(crop_size, inter_method))
    if rand_mirror:
        auglist.append(HorizontalFlipAug(0.5))
    auglist.append(CastAug())
    if brightness or contrast or saturation:
        auglist.append(ColorJitterAug(brightness, contrast, saturation))
    if hue:
        auglist.append(HueJitterAug(hue))
    if pca_noise > 0:
        eigval = np.array([55.46, 4.794, 1.148])
        eigvec = np.array([[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140],
                           [-0.5836, -0.6948, 0.4203]])
        auglist.append(LightingAug(pca_noise, eigval, eigvec))
    if rand_gray > 0:
        auglist.append(RandomGrayAug(rand_gray))
    mean = nd.array(_MEAN) if mean is True else _stat(mean, "mean")
    std = nd.array(_STD) if std is True else _stat(std, "std")
    if mean is not None or std is not None:
        auglist.append(ColorNormalizeAug(mean, std))
    return auglist


def _stat(value: Any, name: str) -> Any:
    if value is None:
        return None
    if not isinstance(value, (np.ndarray, NDArray)) or value.shape[0] not in (1, 3):
        raise ArgumentError(f"CreateAugmenter: {name} must be True, None or an array of 1 or 3 "
                            f"values (numpy or NDArray), got {value!r}")
    return value
