"""Vision operators, one file per op group, each op defined whole (parameters, compute, shape
and type rules, ONNX lowering):

* :mod:`.image`: MXNet's ``_image_*`` operators (``nd.image.X``).
"""
