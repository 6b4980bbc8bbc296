"""ONNX import handlers, keyed by ONNX op and grouped in one small module per ONNX op family.

Importing this package assembles the import table: each family module registers its handlers
with :func:`gluonport.onnx._import_context.importer` (``@importer("Conv", since=11)``), which
files them under ``(domain, op_type)``; :func:`~gluonport.onnx._import_context.select_handler`
picks the one for a model's opset. The shared machinery (the context, graph-building helpers,
constant folding, function expansion, unrolling) stays in ``gluonport/onnx/_import_*.py``.

Families: ``math`` (elementwise, matmul, comparison), ``bits`` (bitwise ops, BitShift,
BitCast), ``nn`` (conv, pool, norm, activation), ``reduce``, ``shape`` (reshape, slice, pad,
gather, concat, ...), ``rnn`` (RNN/GRU/LSTM, with ``rnn_cells`` for the unrolled cells),
``image`` (Resize, Upsample), ``sampling`` (Col2Im, RoiAlign, ...), ``scatter``, ``signal``
(DFT, STFT, windows), ``control`` (If, Loop, Scan), ``newer`` (newer ops and losses composed
from MXNet ops) and ``composed`` (CumProd, ReverseSequence, quantize/dequantize composed from
elementwise ops).
"""

from . import (  # noqa: F401  (each family registers its handlers on import)
    bits,
    composed,
    control,
    image,
    math,
    newer,
    nn,
    reduce,
    rnn,
    sampling,
    scatter,
    shape,
    signal,
)

__all__: list[str] = []
