"""The version of gluonport (``gluonport.__version__``; pyproject.toml's ``version``).

A module of its own so that code inside the package (the ONNX exporter's ``producer_version``)
reads it without importing the package root.
"""

__version__ = "0.1.0"
