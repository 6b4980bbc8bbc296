"""Shape manipulation operators, one file per op group, each op defined whole (parameters,
compute, shape and type rules, ONNX lowering):

* :mod:`.reshape`: Reshape (MXNet's ``InferReshapeShape`` as pure functions), reshape_like,
  Flatten;
* :mod:`.axes`: transpose, SwapAxis, expand_dims, squeeze, reverse;
* :mod:`.join`: Concat, stack, SliceChannel, _split_v2;
* :mod:`.slicing`: slice, slice_axis, slice_like;
* :mod:`.broadcast`: tile, repeat, broadcast_to, broadcast_like, broadcast_axis;
* :mod:`.layout`: depth_to_space, space_to_depth;
* :mod:`.query`: shape_array, size_array, _contrib_arange_like, diag;
* :mod:`.grad`: the backward kernels (``_backward_slice``... ``_broadcast_backward``,
  ``_backward_Concat``) and :func:`~.grad.gather_backward`, the gradient of a gathering op;
* :mod:`.rules`: the registration and rule helpers these files (and indexing) share.

MXNet 1.9.1 semantics kept here (checked against the real library):

* shape inference uses MXNet 1.x legacy shapes: ``0`` is an unknown dim, ``None`` an unknown
  shape. Rules propagate what is known (an unknown batch dim stays unknown, the rest is kept);
* where MXNet itself would read or write out of bounds (a ``Reshape`` whose target size differs
  from the input's, a ``transpose`` with repeated axes) gluonport raises
  :class:`~gluonport.errors.ShapeError` instead of returning garbage;
* axes that MXNet refuses when negative (``transpose``, ``flip``, ``broadcast_axis``) are refused
  here too, so a graph that runs here runs in MXNet;
* ONNX lowerings never bake a dim that varies with the exported model's dynamic axes from the
  example shape (see :mod:`gluonport.ops.lowering.dims`).

Every compute returns a fresh array (MXNet's operators never alias their input).
"""

# Registration order is the order of these imports (the op order of the former shape.py).
# isort: off
from . import reshape, axes, join, slicing, broadcast, layout, query, grad  # noqa: F401
# isort: on
from .reshape import infer_reshape
from .rules import check, types_from

__all__ = ["infer_reshape", "types_from", "check"]
