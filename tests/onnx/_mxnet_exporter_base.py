"""The ops and parameter combinations of MXNet 1.9.1's own exporter tests
(``tests/python-pytest/onnx/test_operators.py``), as data for ``test_mxnet_exporter_suite.py``:
the format and helpers here, the entries in ``_mxnet_exporter_table.py`` and
``_mxnet_exporter_table2.py`` (in MXNet's order).

One entry per MXNet test function (131; where MXNet's module defines a name twice, only its
second definition runs there, and both are kept here with ``_v1``/``_v2``). Each entry names the
op as MXNet's ``def_model`` does (``"contrib.box_nms"`` is ``F.contrib.box_nms``), the parameter
axes MXNet parametrizes over (the same values), and ``build(rng, c)``, which returns, for one
combination ``c``, the block's inputs and keyword arguments in a dict:

    inputs  list of numpy arrays (the block's data0, data1, ...)
    params  keyword arguments of the op
    op      optional: another op, or a function ``f(F, *inputs)`` (MXNet's def_model_from_func)
    dummy   the op takes no input: the block returns (op(**params), data0), as MXNet's
    skip    MXNet's test returns early for this combination
    tol     (rtol, atol) instead of the dtype's default
    check   "range" (random ops: compare only shapes, dtypes and that values are finite) or
            "nan_to_num" (MXNet maps onnxruntime's NaN to 0 for avg pooling edge cases)
    zero_first  zero the first output row on both sides (MXNet's ROIAlign test: batch index -1)

Nothing here imports gluonport; inputs come from ``rng`` (a seeded RandomState).
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Iterator
from typing import Any

import numpy as np

ALL5 = ["float16", "float32", "float64", "int32", "int64"]
F4I = ["float32", "float64", "int32", "int64"]
TWO_SHAPES = [((3, 3, 3), (1, 3)), ((4, 5, 6, 7), (6, 7))]


def u(rng, lo, hi, shape, dtype="float32"):
    return rng.uniform(lo, hi, shape).astype(dtype)


def ri(rng, lo, hi, shape, dtype="int32"):
    return rng.randint(lo, hi, shape).astype(dtype)


def arange(n, shape, dtype="float32"):
    return np.arange(n, dtype="float64").reshape(shape).astype(dtype)


def num(rng, lo, hi, shape, dtype):
    """MXNet's pattern: randint for integer dtypes, uniform otherwise."""
    return ri(rng, lo, hi, shape, dtype) if "int" in dtype else u(rng, lo, hi, shape, dtype)


def one(inputs, **params) -> dict:
    return {"inputs": inputs, "params": params}


E: list[dict[str, Any]] = []


def entry(name: str, op: Any, axes: dict[str, list] | None = None, **kw: Any):
    """Register ``build`` (the decorated function) for MXNet's ``test_onnx_export_<name>``."""

    def deco(build):
        E.append({"name": name, "op": op, "axes": axes or {}, "build": build, **kw})
        return build

    return deco


# --- combinations -----------------------------------------------------------------------------
def full_count(e: dict) -> int:
    """How many combinations MXNet's parametrize grid has for this entry."""
    n = 1
    for values in e["axes"].values():
        n *= len(values)
    return n


def combinations(e: dict, cap: int, seed: int) -> Iterator[dict]:
    """Every combination when there are at most ``cap``; otherwise an endless seeded stream
    whose first ``max(len(values))`` rows give every value of every axis at least once (each
    axis walks its values in its own shuffled order), then random rows. The caller stops after
    ``cap`` combinations that MXNet does not skip."""
    names = list(e["axes"])
    grid = [e["axes"][n] for n in names]
    if full_count(e) <= cap:
        for vals in itertools.product(*grid):
            yield dict(zip(names, vals))
        return
    rng = np.random.RandomState(seed)
    orders = [rng.permutation(len(v)) for v in grid]
    for i in range(max(len(v) for v in grid)):
        yield dict(zip(names, (v[o[i % len(v)]] for v, o in zip(grid, orders))))
    while True:
        yield dict(zip(names, (v[rng.randint(len(v))] for v in grid)))


def runs(e: dict, cap: int) -> Iterator[tuple[dict, dict]]:
    """``(combination, spec)`` for up to ``cap`` combinations of ``e`` that MXNet does not
    skip, each spec built from one RandomState seeded by the entry's name (the suite and the
    oracle's golden generator see the same inputs)."""
    seed = zlib.crc32(e["name"].encode())
    rng = np.random.RandomState(seed & 0x7FFFFFFF)
    ran = 0
    for tries, c in enumerate(combinations(e, cap, seed)):
        if ran >= cap or tries >= 20 * cap:
            return
        spec = e["build"](rng, c)
        if spec.get("skip"):
            continue
        if spec.get("op") is None:
            spec["op"] = e["op"]
        ran += 1
        yield c, spec
