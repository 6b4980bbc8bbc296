"""The MXNet attribute-string codec (gluonport._core.attr_fields)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gluonport._core.attr_fields import (
    Bool,
    DType,
    Enum,
    Float,
    FloatTuple,
    Int,
    Optional,
    ParamSpec,
    Shape,
    to_attr_string,
)
from gluonport.errors import GluonportError, OpAttributeError

PARSE_CASES = [
    (Int(), "8", 8),
    (Int(), " -3 ", -3),
    (Int(), "8L", 8),
    (Float(), "1e-05", 1e-05),
    (Float(), "inf", float("inf")),
    (Bool(), "True", True),
    (Bool(), "true", True),
    (Bool(), "1", True),
    (Bool(), "False", False),
    (Bool(), "0", False),
    (Shape(), "(3, 3)", (3, 3)),
    (Shape(), "(3,3)", (3, 3)),
    (Shape(), "[3, 3]", (3, 3)),
    (Shape(), "(8,)", (8,)),
    (Shape(), "()", ()),
    (Shape(), "3", (3,)),
    (Shape(allow_none=True), "(None, 2)", (None, 2)),
    (FloatTuple(), "(0.5, 0.25)", (0.5, 0.25)),
    (Enum(("relu", "tanh")), "relu", "relu"),
    (DType(), "float16", "float16"),
    (Optional(Int()), "None", None),
    (Optional(Int()), "2", 2),
    (Optional(Shape()), "(0, 1)", (0, 1)),
]


@pytest.mark.parametrize("field,text,want", PARSE_CASES, ids=[f"{type(f).__name__}:{t}"
                                                              for f, t, _ in PARSE_CASES])
def test_parse(field, text, want):
    assert field.parse(text) == want


BAD = [(Int(), "3.5"), (Bool(), "yes"), (Shape(), "(3,x)"), (Shape(), "(3,3"),
       (Enum(("a", "b")), "c"), (DType(), "float8"), (Float(), "abc")]


@pytest.mark.parametrize("field,text", BAD, ids=[t for _, t in BAD])
def test_bad_values_raise(field, text):
    with pytest.raises((ValueError, GluonportError)):
        field.parse(text)


def test_printing_matches_mxnet_python_front_end():
    assert to_attr_string((3, 3)) == "(3, 3)"
    assert to_attr_string((8,)) == "(8,)"
    assert to_attr_string(True) == "True"
    assert to_attr_string(1e-5) == "1e-05"
    assert to_attr_string(0.9) == "0.9"
    assert to_attr_string(None) == "None"
    assert to_attr_string([3, 3]) == "[3, 3]"
    # numpy scalars print as MXNet 1.x (numpy 1.x) printed them, not as np.int64(3)
    assert to_attr_string((np.int64(3), np.int64(4))) == "(3, 4)"
    assert DType().to_string(np.float16) == "float16"


SPEC = ParamSpec({"kernel": Shape(), "no_bias": Bool(False), "num_filter": Int()})


def test_spec_defaults_and_required():
    p = SPEC.parse({"kernel": "(3, 3)", "num_filter": "8"})
    assert (p.kernel, p.no_bias, p.num_filter) == ((3, 3), False, 8)
    with pytest.raises(OpAttributeError, match="required attribute 'num_filter'"):
        SPEC.parse({"kernel": "(3, 3)"}, op="Convolution", node="conv0")


def test_spec_error_names_node_attribute_and_value():
    with pytest.raises(OpAttributeError) as err:
        SPEC.parse({"kernel": "(3,3", "num_filter": "8"}, op="Convolution", node="conv0")
    msg = str(err.value)
    assert "conv0" in msg and "Convolution" in msg and "kernel" in msg and "(3,3" in msg


def test_unknown_keys_raise_in_calls_and_warn_in_files():
    with pytest.raises(OpAttributeError, match="unknown attribute"):
        SPEC.parse({"num_filter": "1", "kernel": "(3,)", "kernle": "(3,)"}, op="Convolution",
                   strict=True)
    with pytest.warns(UserWarning, match="not known to gluonport"):
        SPEC.parse({"num_filter": "1", "kernel": "(1,)", "workspace_x": "512"}, op="Convolution",
                   node="c",
                   strict=False)


def test_hidden_keys_pass():
    p = SPEC.parse({"num_filter": "1", "kernel": "(1,)", "__layout__": "NCHW",
                    "__lr_mult__": "2.0"})
    assert p.num_filter == 1


def test_to_attrs_writes_given_none_and_refuses_unknown():
    # MXNet 1.9.1: mx.sym.sum(x, axis=None, keepdims=True).list_attr() ==
    # {'keepdims': 'True', 'axis': 'None'}
    spec = ParamSpec({"axis": Optional(Int()), "keepdims": Bool(False)})
    assert spec.to_attrs({"axis": None, "keepdims": True}) == {"axis": "None",
                                                               "keepdims": "True"}
    with pytest.raises(OpAttributeError):
        spec.to_attrs({"axs": 1}, op="sum")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-2**40, 2**40), max_size=6))
def test_shape_round_trip(dims):
    text = to_attr_string(tuple(dims))
    assert Shape().parse(text) == tuple(dims)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=20))
def test_parsers_raise_only_value_errors(text):
    for field in (Int(), Float(), Bool(), Shape(), FloatTuple(), Optional(Shape()),
                  Enum(("a",)), DType()):
        try:
            field.parse(text)
        except (ValueError, GluonportError):
            pass
