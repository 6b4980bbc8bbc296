"""Imports every op file once, which registers their operators.

The order of these imports is the registration order (the order of ``registry.all_ops()``,
which the ``nd``/``sym`` namespaces are generated in); keep it when moving a file.
"""

# isort: off
from .vision import detection  # noqa: F401
from .nn import attention  # noqa: F401
from .math import contrib  # noqa: F401
from .vision import sampling  # noqa: F401
from .nn import deformable  # noqa: F401
from .vision import correlation  # noqa: F401
from .nn import conv, im2col  # noqa: F401
from . import custom  # noqa: F401
from .math import elemwise  # noqa: F401
from .vision import image  # noqa: F401
from .tensor import indexing, init  # noqa: F401
from .math import linalg  # noqa: F401
from .vision import multibox  # noqa: F401
from .nn import dense  # noqa: F401
from .nn import norm, norm_grad, norm_train  # noqa: F401
from .optimizer import update, multi  # noqa: F401
from .nn import output, output_grad, pool  # noqa: F401
from . import random  # noqa: F401
from .math import reduce, stats  # noqa: F401
from .nn import resize  # noqa: F401
from .nn import rnn, rnn_grad, rnn_train, rnn_grad_onnx  # noqa: F401
from .vision import roi, proposal  # noqa: F401
from .nn import sequence  # noqa: F401
from . import shape  # noqa: F401
from .math import sort  # noqa: F401
from .math import unary  # noqa: F401
from .math import bitwise  # noqa: F401
from .nn import dense_grad, conv_grad, conv_grad_onnx  # noqa: F401
from .tensor import indexing_grad  # noqa: F401
from .control import flow, flow_grad, flow_onnx  # noqa: F401
# isort: on
