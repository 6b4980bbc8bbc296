"""Optimizer update operators, one file per op group (parameters, compute, shape and type
rules; no ONNX lowering: each op's ``no_onnx`` says why):

* :mod:`.update`: the fused single-tensor updates (``sgd_update``, ``adam_update``, ...);
* :mod:`.multi`: the multi-tensor and two-phase updates (``multi_sgd_update``,
  ``multi_sum_sq``, ``preloaded_multi_*``, LAMB/LANS phases, ...).

Importing this package registers nothing; ``gluonport/ops/_families.py`` imports the files.
"""
