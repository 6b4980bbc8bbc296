"""Imports every op file once, which registers their operators.

The order of these imports is the registration order (the order of ``registry.all_ops()``,
which the ``nd``/``sym`` namespaces are generated in); keep it when moving a file.
"""

# isort: off
from . import contrib, conv, custom, detection, elemwise  # noqa: F401
from .vision import image  # noqa: F401
from . import indexing, init, linalg, multibox, nn, norm, optimizer, optimizer_multi  # noqa: F401
from . import output, pool, random  # noqa: F401
from .math import reduce, stats  # noqa: F401
from . import resize, rnn, roi, sequence, shape, sort  # noqa: F401
from . import unary  # noqa: F401
# isort: on
