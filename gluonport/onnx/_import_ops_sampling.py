"""Import handlers for ONNX ops that sample or fold image windows: Col2Im -> ``col2im``,
RoiAlign -> ``_contrib_ROIAlign``.

* ``Col2Im``: MXNet's ``col2im`` pads symmetrically; asymmetric ``pads`` fold into the padded
  image (``pad=0``, ``output_size`` grown by both pads) and slice it back.
* ``RoiAlign``: MXNet's ROIs carry their batch index as a first column; ``half_pixel`` (the
  default from opset 16) is MXNet's ``aligned=True``, ``output_half_pixel`` (opset 10's only
  behaviour) ``aligned=False``; ``sampling_ratio=0`` (adaptive) is MXNet's ``-1``. MXNet's
  ROIAlign averages: ``mode='max'`` is refused.
"""

from __future__ import annotations

import numpy as np

from ._import_context import ImportContext, Value, importer
from ._import_util import int_attr_list, mx_dtype

__all__: list[str] = []


@importer("Col2Im", since=18)
def col2im(ctx: ImportContext, x: Value, image_shape: Value, block_shape: Value, *,
           dilations=None, pads=None, strides=None) -> object:
    size = image_shape.ints()
    kernel = block_shape.ints()
    n = len(size)
    if len(kernel) != n or not 1 <= n <= 3:
        raise ctx.fail(f"image_shape {size} and block_shape {kernel} must have the same "
                       "length, 1 to 3 (MXNet's col2im)")
    dil = int_attr_list(dilations, n, 1)
    stride = int_attr_list(strides, n, 1)
    pad = int_attr_list(pads, 2 * n, 0)
    begin, end = pad[:n], pad[n:]
    if begin == end:
        return ctx.op("col2im", x.sym, output_size=tuple(size), kernel=tuple(kernel),
                      stride=tuple(stride), dilate=tuple(dil), pad=tuple(begin))
    padded = tuple(s + b + e for s, b, e in zip(size, begin, end))
    y = ctx.op("col2im", x.sym, output_size=padded, kernel=tuple(kernel), stride=tuple(stride),
               dilate=tuple(dil), pad=(0,) * n)
    return ctx.op("slice", y, begin=(None, None) + tuple(begin),
                  end=(None, None) + tuple(b + s for b, s in zip(begin, size)))


@importer("RoiAlign", since=10)
def roi_align(ctx: ImportContext, x: Value, rois: Value, batch_indices: Value, *,
              coordinate_transformation_mode: str | None = None, mode: str = "avg",
              output_height: int = 1, output_width: int = 1, sampling_ratio: int = 0,
              spatial_scale: float = 1.0) -> object:
    if mode != "avg":
        raise ctx.fail(f"mode={mode!r}: MXNet's ROIAlign averages the samples of a bin "
                       "(mode='avg' only)")
    ctm = coordinate_transformation_mode or ("half_pixel" if ctx.version >= 16
                                             else "output_half_pixel")
    if ctm not in ("half_pixel", "output_half_pixel"):
        raise ctx.fail(f"coordinate_transformation_mode={ctm!r} is not 'half_pixel' or "
                       "'output_half_pixel'")
    dtype = np.dtype(x.dtype or np.float32)
    index = ctx.op("Cast", ctx.op("expand_dims", batch_indices.sym, axis=1),
                   dtype=mx_dtype(ctx, dtype))
    boxes = ctx.op("Concat", index, rois.sym, dim=1)
    return ctx.op("_contrib_ROIAlign", x.sym, boxes,
                  pooled_size=(int(output_height), int(output_width)),
                  spatial_scale=float(spatial_scale),
                  sample_ratio=int(sampling_ratio) if sampling_ratio > 0 else -1,
                  aligned=ctm == "half_pixel")
