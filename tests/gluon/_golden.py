"""Access to the MXNet 1.9.1 oracle files of tests/golden/gluon (made by gen_gluon.py)."""

from __future__ import annotations

import functools
import gzip
import hashlib
import importlib.util
import json
import os
from typing import Any

import numpy as np

import gluonport as mx

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDEN = os.path.join(ROOT, "tests", "golden", "gluon")
ORACLE_PYTHON = os.path.expanduser("~/.cache/gluonport-oracle/bin/python")


def _load_shared() -> Any:
    spec = importlib.util.spec_from_file_location("gluon_golden_shared",
                                                  os.path.join(GOLDEN, "_shared.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


shared = _load_shared()


@functools.cache
def manifest() -> dict:
    with open(os.path.join(GOLDEN, "manifest.json")) as f:
        return json.load(f)


@functools.cache
def zoo_manifest() -> dict:
    with gzip.open(os.path.join(GOLDEN, "zoo_manifest.json.gz")) as f:
        return json.loads(f.read())["zoo"]


@functools.cache
def _outputs() -> dict:
    with np.load(os.path.join(GOLDEN, "outputs.npz")) as f:
        return {k: f[k] for k in f.files}


def output(key: str) -> np.ndarray:
    """MXNet's output recorded under ``key`` (``zoo/resnet18_v1``, ``nn/nn_2d``, ...)."""
    return _outputs()[key]


def path(name: str) -> str:
    return os.path.join(GOLDEN, name)


def sha256(file: str) -> str:
    with open(file, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def param_list(net: Any) -> list:
    return [[k, list(p.shape)] for k, p in net.collect_params().items()]


def set_weights(net: Any) -> None:
    """Give ``net`` the deterministic weights the generator gave MXNet's net."""
    params = net.collect_params()
    weights = shared.make_weights([(k, p.shape) for k, p in params.items()])
    for k, p in params.items():
        p.set_data(mx.nd.array(weights[k]))


def unzip_json(name: str, directory: str) -> str:
    """Decompress ``zoo_<name>-symbol.json.gz`` into ``directory``; returns its path."""
    out = os.path.join(directory, f"zoo_{name}-symbol.json")
    with gzip.open(path(f"zoo_{name}-symbol.json.gz")) as src, open(out, "wb") as dst:
        dst.write(src.read())
    return out


def assert_close(actual: np.ndarray, expected: np.ndarray, rtol: float = 1e-4,
                 atol: float = 1e-5) -> None:
    """float32 agreement: ``rtol`` relative, ``atol`` scaled by the output's magnitude (deep
    nets with random weights reach values in the hundreds; rounding grows with them)."""
    scale = max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol * scale)
