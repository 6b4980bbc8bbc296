"""``gluon.data.vision.transforms``: MXNet 1.9.1's image transforms.

The same classes, arguments and results as MXNet's, so a pre-processing pipeline such as::

    transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224),
                        transforms.ToTensor(),
                        transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])

gives MXNet's tensor for the same HWC uint8 image (resizing is bit-exact, see
``gluonport/_core/cv_resize.py``; the float steps repeat MXNet's float32 arithmetic).

As in MXNet, the operator-backed transforms are HybridBlocks calling ``F.image.*`` (the
``_image_*`` operators of :mod:`gluonport.ops.vision.image`): they hybridize, and a network
that starts with ``ToTensor`` and ``Normalize`` exports them into its symbol file (MXNet 1.9.1
loads it) and into ONNX. ``Compose`` groups consecutive HybridBlocks into a hybridized
``HybridSequential``, as MXNet does; a group whose ops all have an ONNX export (``ToTensor``,
``Normalize``, ``Cast``) runs on onnxruntime, others on the numpy executor.

Differences from MXNet, all in how things run rather than in the numbers:

* Random transforms draw their factors from gluonport's generator (``mx.random.seed`` reseeds it)
  instead of MXNet's C++ generator, so the factors differ from MXNet's for the same seed.
  ``RandomResizedCrop``/``RandomApply`` use Python's ``random`` and ``RandomRotation``
  ``numpy.random``, as MXNet does, and so do match MXNet under the same seeds.
* ``CropResize(..., size=s)`` without ``interpolation`` resizes bilinearly (the op's default);
  MXNet passes ``interp=None`` to the op there and fails.
* ``Compose`` does not append ``None`` to the list it is given (MXNet's does).
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from .... import image
from ....ndarray import NDArray
from ...block import Block
from ...hybrid import HybridBlock
from ...nn import HybridSequential, Sequential

__all__ = ["Compose", "Cast", "ToTensor", "Normalize", "Rotate", "RandomRotation",
           "RandomResizedCrop", "CropResize", "CenterCrop", "Resize", "RandomFlipLeftRight",
           "RandomFlipTopBottom", "RandomBrightness", "RandomContrast", "RandomSaturation",
           "RandomHue", "RandomColorJitter", "RandomLighting", "RandomApply"]


class Compose(Sequential):
    """Sequentially composes multiple transforms.

    As in MXNet, runs of consecutive HybridBlocks are grouped into a hybridized
    ``HybridSequential``. MXNet appends ``None`` to the list it is given; this one leaves it
    alone.

    Parameters
    ----------
    transforms : list of Blocks
        The transforms, applied in order.

    >>> import numpy as np, gluonport as mx
    >>> from gluonport.gluon.data.vision import transforms
    >>> t = transforms.Compose([transforms.Resize(300), transforms.CenterCrop(256),
    ...                         transforms.ToTensor()])
    >>> t(mx.nd.array(np.zeros((224, 224, 3)), dtype='uint8')).shape
    (3, 256, 256)
    """

    def __init__(self, transforms: list) -> None:
        super().__init__()
        hybrid: list = []
        for t in [*transforms, None]:
            if isinstance(t, HybridBlock):
                hybrid.append(t)
                continue
            if len(hybrid) == 1:
                self.add(hybrid[0])
            elif len(hybrid) > 1:
                group = HybridSequential()
                for h in hybrid:
                    group.add(h)
                group.hybridize()
                self.add(group)
            hybrid = []
            if t is not None:
                self.add(t)


class Cast(HybridBlock):
    """Cast the input to ``dtype`` (default ``'float32'``); traceable (the ``Cast`` op)."""

    def __init__(self, dtype: Any = "float32") -> None:
        super().__init__()
        self._dtype = dtype

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.cast(x, self._dtype)


class ToTensor(HybridBlock):
    """HWC (or NHWC) image in [0, 255] to a float32 CHW (NCHW) tensor in [0, 1]: ``x / 255``.

    >>> import numpy as np, gluonport as mx
    >>> from gluonport.gluon.data.vision import transforms
    >>> x = mx.nd.array(np.full((4, 2, 3), 51), dtype='uint8')
    >>> y = transforms.ToTensor()(x)
    >>> y.shape, float(y[0, 0, 0].asscalar())
    ((3, 4, 2), 0.20000000298023224)
    """

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.image.to_tensor(x)


class Normalize(HybridBlock):
    """``(x[c] - mean[c]) / std[c]`` over a CHW (NCHW) tensor; scalars apply to every channel.

    Parameters
    ----------
    mean : float or tuple of floats
    std : float or tuple of floats
    """

    def __init__(self, mean: Any = 0.0, std: Any = 1.0) -> None:
        super().__init__()
        self._mean = mean
        self._std = std

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.image.normalize(x, self._mean, self._std)


class Rotate(Block):
    """Rotate a float32 CHW image (or NCHW batch) by ``rotation_degrees``, keeping its shape
    (``mx.image.imrotate``: bilinear sampling, zero padding).

    Parameters
    ----------
    rotation_degrees : float
    zoom_in : bool
        Zoom in so that no padding shows.
    zoom_out : bool
        Zoom out so that the whole image shows.
    """

    def __init__(self, rotation_degrees: float, zoom_in: bool = False,
                 zoom_out: bool = False) -> None:
        super().__init__()
        self._args = (rotation_degrees, zoom_in, zoom_out)

    def forward(self, x: NDArray) -> NDArray:
        if x.dtype is not np.float32:
            raise TypeError("This transformation only supports float32. "
                            "Consider calling it after ToTensor")
        return image.imrotate(x, *self._args)


class RandomRotation(Block):
    """Rotate by an angle drawn from ``angle_limits`` (degrees) with probability
    ``rotate_with_proba`` (``numpy.random``, as MXNet).

    Parameters
    ----------
    angle_limits : tuple of 2 floats
        Lower and upper limit of the angle.
    zoom_in, zoom_out : bool
        As :class:`Rotate`.
    rotate_with_proba : float
        Probability of rotating.
    """

    def __init__(self, angle_limits: tuple, zoom_in: bool = False, zoom_out: bool = False,
                 rotate_with_proba: float = 1.0) -> None:
        super().__init__()
        lower, upper = angle_limits
        if lower >= upper:
            raise ValueError("`angle_limits` must be an ordered tuple")
        if rotate_with_proba < 0 or rotate_with_proba > 1:
            raise ValueError("Probability of rotating the image should be between 0 and 1")
        self._args = (angle_limits, zoom_in, zoom_out)
        self._rotate_with_proba = rotate_with_proba

    def forward(self, x: NDArray) -> NDArray:
        if np.random.random() > self._rotate_with_proba:
            return x
        if x.dtype is not np.float32:
            raise TypeError("This transformation only supports float32. "
                            "Consider calling it after ToTensor")
        return image.random_rotate(x, *self._args)


def _pair(size: Any) -> Any:
    return (size, size) if isinstance(size, (int, np.integer)) else size


class RandomResizedCrop(Block):
    """Crop a window of random area (``scale`` of the image) and aspect ratio (``ratio``),
    resized to ``size`` (``mx.image.random_size_crop``; Python's ``random``, as MXNet).

    Parameters
    ----------
    size : int or tuple of (W, H)
    scale : tuple of 2 floats, default (0.08, 1.0)
    ratio : tuple of 2 floats, default (3/4, 4/3)
    interpolation : int, default 1 (bilinear)
    """

    def __init__(self, size: Any, scale: tuple = (0.08, 1.0),
                 ratio: tuple = (3.0 / 4.0, 4.0 / 3.0), interpolation: int = 1) -> None:
        super().__init__()
        self._args = (_pair(size), scale, ratio, interpolation)

    def forward(self, x: NDArray) -> NDArray:
        return image.random_size_crop(x, *self._args)[0]


class CropResize(HybridBlock):
    """Crop the ``width`` x ``height`` window at (``x``, ``y``) of an HWC (NHWC) image, then
    resize it to ``size`` when given.

    Parameters
    ----------
    x, y : int
        Left and top of the window.
    width, height : int
    size : int or tuple of (W, H), optional
    interpolation : int, optional
        OpenCV code (default 1, bilinear; MXNet fails without one when ``size`` is given).
    """

    def __init__(self, x: int, y: int, width: int, height: int, size: Any = None,
                 interpolation: Any = None) -> None:
        super().__init__()
        self._x, self._y = x, y
        self._width, self._height = width, height
        self._size = size
        self._interpolation = interpolation

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        out = F.image.crop(x, self._x, self._y, self._width, self._height)
        if self._size:
            interp = () if self._interpolation is None else (self._interpolation,)
            out = F.image.resize(out, self._size, False, *interp)
        return out


class CenterCrop(Block):
    """Crop the centre ``size`` window of an HWC image; a window larger than the image is
    filled by resizing up (``mx.image.center_crop``).

    Parameters
    ----------
    size : int or tuple of (W, H)
    interpolation : int, default 1 (bilinear)
    """

    def __init__(self, size: Any, interpolation: int = 1) -> None:
        super().__init__()
        self._args = (_pair(size), interpolation)

    def forward(self, x: NDArray) -> NDArray:
        return image.center_crop(x, *self._args)[0]


class Resize(HybridBlock):
    """Resize an HWC image (or each image of NHWC) to ``size``; apply before ``ToTensor``.

    Parameters
    ----------
    size : int or tuple of (W, H)
        An int resizes both edges, or with ``keep_ratio`` the shorter edge, to ``size``.
    keep_ratio : bool, default False
    interpolation : int, default 1
        OpenCV code: 0 nearest, 1 bilinear, 2 bicubic, 3 area, 4 Lanczos.
    """

    def __init__(self, size: Any, keep_ratio: bool = False, interpolation: int = 1) -> None:
        super().__init__()
        self._keep = keep_ratio
        self._size = size
        self._interpolation = interpolation

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.image.resize(x, self._size, self._keep, self._interpolation)


class RandomFlipLeftRight(HybridBlock):
    """Flip an HWC image left to right with probability 0.5."""

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.image.random_flip_left_right(x)


class RandomFlipTopBottom(HybridBlock):
    """Flip an HWC image top to bottom with probability 0.5."""

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.image.random_flip_top_bottom(x)


class _RandomFactor(HybridBlock):
    """A jitter whose factor the op ``F.image.<_op>`` draws from
    ``[max(0, 1 - amount), 1 + amount]``."""

    _op = ""

    def __init__(self, amount: float) -> None:
        super().__init__()
        self._args = (max(0, 1 - amount), 1 + amount)

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return getattr(F.image, self._op)(x, *self._args)


class RandomBrightness(_RandomFactor):
    """Multiply an HWC image by a factor from ``[max(0, 1 - brightness), 1 + brightness]``."""

    _op = "random_brightness"


class RandomContrast(_RandomFactor):
    """Blend an HWC image with its mean gray level by a factor from
    ``[max(0, 1 - contrast), 1 + contrast]``."""

    _op = "random_contrast"


class RandomSaturation(_RandomFactor):
    """Blend an HWC image with its gray level by a factor from
    ``[max(0, 1 - saturation), 1 + saturation]`` (MXNet 1.9.1's blend, see
    ``gluonport.ops.vision.image.adjust_saturation``)."""

    _op = "random_saturation"


class RandomHue(_RandomFactor):
    """Shift the hue of an HWC RGB image by ``alpha * 360`` degrees, ``alpha`` drawn from
    ``[max(0, 1 - hue), 1 + hue]`` (MXNet's range, kept as it is)."""

    _op = "random_hue"


class RandomColorJitter(HybridBlock):
    """Jitter brightness, contrast, saturation (factors ``1 +- amount``) and hue (``+- hue``)
    in a random order."""

    def __init__(self, brightness: float = 0, contrast: float = 0, saturation: float = 0,
                 hue: float = 0) -> None:
        super().__init__()
        self._args = (brightness, contrast, saturation, hue)

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.image.random_color_jitter(x, *self._args)


class RandomLighting(HybridBlock):
    """AlexNet-style PCA lighting noise with strength ``alpha`` (normal standard deviation)."""

    def __init__(self, alpha: float) -> None:
        super().__init__()
        self._alpha = alpha

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.image.random_lighting(x, self._alpha)


class RandomApply(Sequential):
    """Apply ``transforms`` with probability ``p`` (Python's ``random.random``, as MXNet).

    Parameters
    ----------
    transforms : Block
        Usually a ``Compose``.
    p : float, default 0.5
    """

    def __init__(self, transforms: Any, p: float = 0.5) -> None:
        super().__init__()
        self.transforms = transforms
        self.p = p

    def forward(self, x: Any) -> Any:
        if self.p < random.random():
            return x
        return self.transforms(x)
