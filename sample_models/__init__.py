"""Small real models exported by MXNet 1.9.1, shipped with gluonport as
``gluonport.sample_models`` so that ``gluonport quickstart`` works from any folder.

Each model NAME has ``NAME-symbol.json`` and ``NAME-0000.params`` (Gluon ``export``),
``NAME-input.npy`` (a fixed input) and ``NAME-output.npy`` (MXNet's output for it); they were
made by ``make_samples.py`` in this folder, run with the real MXNet.
"""

from __future__ import annotations

import os

__all__ = ["NAMES", "FOLDER", "prefix"]

NAMES = ("lenet_bn", "mlp")
FOLDER = os.path.dirname(os.path.abspath(__file__))


def prefix(name: str) -> str:
    """The path prefix of the bundled sample ``name`` (one of :data:`NAMES`)."""
    if name not in NAMES:
        raise KeyError(f"no bundled sample model {name!r}; the samples are {', '.join(NAMES)}")
    return os.path.join(FOLDER, name)
