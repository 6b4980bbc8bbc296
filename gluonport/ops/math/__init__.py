"""Math operators, one file per op group, each op defined whole (parameters, compute, shape
and type rules, ONNX lowering):

* :mod:`.reduce`: sum, mean, prod, nansum, nanprod, max, min, norm, argmax, argmin,
  argmax_channel;
* :mod:`.stats`: moments, cumsum, _histogram, all_finite, multi_all_finite.
"""

# Registration order is the order of these imports.
# isort: off
from . import reduce, stats  # noqa: F401
# isort: on
