"""MXNet 1.9.1's control-flow operators: ``_foreach``, ``_while_loop``, ``_cond`` (``flow.py``;
their ONNX lowerings to Scan/Loop/If in ``flow_onnx.py``)."""
