"""``mx.image``: MXNet 1.9.1's image helpers for pre-processing, on numpy.

Images are ``(height, width, channels)`` NDArrays, as in MXNet. Resizing reproduces the OpenCV
3.4.2 ``cv::resize`` that MXNet 1.9.1 calls (see ``gluonport/_core/cv_resize.py``): ``uint8`` images
come out bit for bit as MXNet's for every ``interp`` code 0-4, float images within float
rounding.

Decoding (``imdecode``, ``imread``) needs an image codec, which gluonport does not ship: decode
with Pillow or OpenCV and wrap the ``uint8`` array with ``mx.nd.array(img, dtype='uint8')``.

Randomness: ``random_crop``, ``random_size_crop`` and ``_get_interp_method(10)`` draw from
Python's ``random`` module and ``random_rotate`` from ``numpy.random``, in the same calls as
MXNet 1.9.1, so seeding those modules gives MXNet's crops and angles.

Layout: the functions are in ``image.py``, the augmenters (``Augmenter``, ``CreateAugmenter``...)
in ``_augmenters.py``, which builds on them; both are exported here. The resize kernel
(``gluonport/_core/cv_resize.py``) sits lower, shared with the ``_image_resize`` operator.

>>> import numpy as np, gluonport as mx
>>> img = mx.nd.array(np.zeros((480, 640, 3)), dtype='uint8')
>>> mx.image.resize_short(img, 256).shape
(256, 341, 3)
>>> mx.image.center_crop(img, (224, 224))[1]
(208, 128, 224, 224)
"""

from ._augmenters import (
    Augmenter,
    BrightnessJitterAug,
    CastAug,
    CenterCropAug,
    ColorJitterAug,
    ColorNormalizeAug,
    ContrastJitterAug,
    CreateAugmenter,
    ForceResizeAug,
    HorizontalFlipAug,
    HueJitterAug,
    LightingAug,
    RandomCropAug,
    RandomGrayAug,
    RandomOrderAug,
    RandomSizedCropAug,
    ResizeAug,
    SaturationJitterAug,
    SequentialAug,
)
from .image import (
    center_crop,
    color_normalize,
    copyMakeBorder,
    fixed_crop,
    imdecode,
    imread,
    imresize,
    imrotate,
    interp_method,
    random_crop,
    random_rotate,
    random_size_crop,
    resize_short,
    scale_down,
)

# MXNet's scripts call mx.image._get_interp_method; it is image.interp_method here.
_get_interp_method = interp_method

__all__ = ["imread", "imdecode", "imresize", "scale_down", "copyMakeBorder", "resize_short",
           "fixed_crop", "random_crop", "center_crop", "color_normalize", "random_size_crop",
           "imrotate", "random_rotate",
           "Augmenter", "SequentialAug", "ResizeAug", "ForceResizeAug", "RandomCropAug",
           "RandomSizedCropAug", "CenterCropAug", "RandomOrderAug", "BrightnessJitterAug",
           "ContrastJitterAug", "SaturationJitterAug", "HueJitterAug", "ColorJitterAug",
           "LightingAug", "ColorNormalizeAug", "RandomGrayAug", "HorizontalFlipAug", "CastAug",
           "CreateAugmenter"]
