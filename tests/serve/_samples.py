"""Where the bundled sample models are: the installed package data, or the checkout's folder."""

from __future__ import annotations

import os

try:
    from gluonport.sample_models import FOLDER
except ImportError:  # an editable install maps no gluonport.sample_models
    FOLDER = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), "sample_models")

NAMES = ("lenet_bn", "mlp")


def prefix(name: str) -> str:
    return os.path.join(FOLDER, name)
