"""Foundation of gluonport: what every layer above builds on, and nothing above it.

``dtypes`` (the one dtype table: MXNet flag, numpy dtype, ONNX type), ``attr_fields`` (typed
attribute fields that parse and print MXNet attribute strings), ``budget`` (the tensor-size
budget), ``rng`` (the random generator state), ``hashing``, ``cv_resize`` (OpenCV's resize in
numpy, shared by ``mx.image`` and the ``_image_resize`` operator), ``onnxfile``/``onnxdigest``
(the checked ONNX file reader and the external-data digest) and ``version``. Imports only
``gluonport.errors`` and ``gluonport.context`` (see gluonport/ARCHITECTURE.md). Nothing is
imported here: each module loads on its own.
"""
