"""MXNet 1.9.1's control-flow operators: ``_foreach``, ``_while_loop``, ``_cond`` (``flow.py``),
their gradients ``_backward_foreach``/``_backward_while_loop``/``_backward_cond``
(``flow_grad.py``) and their ONNX lowerings to Scan/Loop/If (``flow_onnx.py``)."""
