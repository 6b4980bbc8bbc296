"""Math operators, one file per op group, each op defined whole (parameters, compute, shape
and type rules, ONNX lowering):

* :mod:`.elemwise`: binary, broadcast and scalar arithmetic, comparison and logic ops;
* :mod:`.unary`: unary math, casts, clip and add_n;
* :mod:`.special`: the special functions (erf, erfinv, gamma, lgamma) in numpy and as ONNX
  compositions, used by the unary ops (:mod:`.unary`);
* :mod:`.reduce`: sum, mean, prod, nansum, nanprod, max, min, norm, argmax, argmin,
  argmax_channel;
* :mod:`.stats`: moments, cumsum, _histogram, all_finite, multi_all_finite;
* :mod:`.linalg`: dot, batch_dot and the ``_linalg_*`` ops;
* :mod:`.sort`: topk, sort, argsort;
* :mod:`.contrib`: quadratic, gradientmultiplier, khatri_rao;
* gradients (issue 14): each op's rule is given where it is registered; the backward kernels
  that need files of their own are :mod:`.binary_grad` (``_backward_broadcast_*`` and the
  same-shape ``_backward_mod/power/maximum/minimum/hypot``), :mod:`.unary_grad` (the unary
  rules, ``_backward_gamma/gammaln``, the cast backwards) and :mod:`.linalg_grad` (the
  ``dot``/``_linalg_*`` rules, ``_backward_dot``, ``_backward_linalg_*``); the reductions' and
  stats' backward kernels live in :mod:`.reduce`/:mod:`.stats`, ``_backward_topk`` in
  :mod:`.sort`.

Importing this package registers reduce and stats (their order is the old registration order);
``gluonport/ops/_families.py`` imports the other files.
"""

# isort: off
from . import reduce, stats  # noqa: F401
# isort: on
