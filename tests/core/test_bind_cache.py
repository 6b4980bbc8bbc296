"""The cache of bound attributes in ``gluonport/ops/_call.py``: a repeated call gets exactly
the attribute strings and params an unrepeated one would, values that compare equal but
format differently (``2`` / ``2.0``, ``0.0`` / ``-0.0``) never share an entry, and values of
other types are not cached."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gluonport as mx
from gluonport.ops import _call, registry


def _bind(name, **kwargs):
    x = mx.nd.ones((2, 3))
    return _call.bind_call(registry.get(name), (x,), kwargs,
                           lambda v: isinstance(v, mx.nd.NDArray))


@pytest.mark.parametrize("name, kwargs", [
    ("_plus_scalar", {"scalar": 2}), ("_plus_scalar", {"scalar": 2.0}),
    ("_plus_scalar", {"scalar": -0.0}), ("_plus_scalar", {"scalar": 0.0}),
    ("_plus_scalar", {"scalar": math.nan}), ("_plus_scalar", {"scalar": 1e-30}),
    ("sum", {"axis": (0, 1), "keepdims": True}), ("sum", {"axis": [1], "keepdims": 1}),
    ("sum", {"axis": 1}), ("Reshape", {"shape": (-1, 0)}), ("Reshape", {"shape": (3, 2)}),
    ("Activation", {"act_type": "relu"}), ("Activation", {"act_type": "tanh"}),
])
def test_cached_binding_is_the_uncached_one(name, kwargs, monkeypatch):
    first, again = _bind(name, **kwargs), _bind(name, **kwargs)
    monkeypatch.setattr(_call, "_cache_key", lambda op, kw: None)
    fresh = _bind(name, **kwargs)
    for got in (first, again):
        assert got.attrs == fresh.attrs
        assert got.params == fresh.params


def test_equal_values_that_format_differently_do_not_share_an_entry():
    assert _bind("_plus_scalar", scalar=2).attrs == {"scalar": "2"}
    assert _bind("_plus_scalar", scalar=2.0).attrs == {"scalar": "2.0"}
    assert _bind("_plus_scalar", scalar=0.0).attrs == {"scalar": "0.0"}
    assert _bind("_plus_scalar", scalar=-0.0).attrs == {"scalar": "-0.0"}
    assert _bind("sum", axis=1, keepdims=True).attrs != _bind("sum", axis=1, keepdims=1).attrs


def test_other_types_and_custom_ops_are_not_cached():
    op = registry.get("_plus_scalar")
    assert _call._cache_key(op, {"scalar": np.float32(2)}) is None
    assert _call._cache_key(op, {"scalar": 2.0}) is not None
    assert _call._cache_key(registry.get("Custom"), {"op_type": "x"}) is None
    before = len(_call._PARSED)
    _bind("_plus_scalar", scalar=np.float64(3.5))
    assert len(_call._PARSED) == before
