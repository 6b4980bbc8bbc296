"""Tensor creation and indexing operators, one file per op group, each op defined whole
(parameters, compute, shape and type rules, ONNX lowering):

* :mod:`.init`: _zeros, _ones, _full, _arange, _linspace, _eye and the ``*_like`` fills;
* :mod:`.indexing`: take, pick, batch_take, Embedding, one_hot, where, gather_nd, scatter_nd,
  boolean_mask, index_copy, index_array, ravel/unravel;
* :mod:`.indexing_grad`: the indexing ops' backward kernels (``_backward_take``,
  ``_backward_Embedding``...).

Importing this package registers nothing; ``gluonport/ops/_families.py`` imports the files.
"""
