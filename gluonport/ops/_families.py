"""Imports every op family module once, which registers their operators."""

from . import (  # noqa: F401
    contrib,
    conv,
    detection,
    elemwise,
    indexing,
    init,
    linalg,
    multibox,
    nn,
    norm,
    output,
    pool,
    random,
    reduce,
    rnn,
    roi,
    sequence,
    shape,
    sort,
    unary,
)
