"""The dtype table and contexts."""

import numpy as np
import pytest

import gluonport as mx
from gluonport._core import dtypes
from gluonport.errors import DeviceError, DTypeError

TABLE = [(0, "float32", 1), (1, "float64", 11), (2, "float16", 10), (3, "uint8", 2),
         (4, "int32", 6), (5, "int8", 3), (6, "int64", 7), (7, "bool", 9), (8, "int16", 5),
         (9, "uint16", 4), (10, "uint32", 12), (11, "uint64", 13), (12, "bfloat16", 16)]


@pytest.mark.parametrize("flag,name,onnx_type", TABLE)
def test_table(flag, name, onnx_type):
    row = dtypes.from_flag(flag)
    assert row.name == name and row.onnx == onnx_type
    assert dtypes.from_onnx(onnx_type).flag == flag
    assert dtypes.from_numpy(name).flag == flag
    assert row.mx1_loadable == (flag not in (8, 9, 10, 11))


def test_numpy_uint16_is_not_bfloat16():
    assert dtypes.flag_of(np.uint16) == 9


def test_unknown_flag_lists_known_ones():
    with pytest.raises(DTypeError, match="0=float32"):
        dtypes.from_flag(42)


def test_bfloat16_round_trip():
    x = np.array([1.0, -2.5, 3.140625, np.inf], np.float32)
    assert np.array_equal(dtypes.bfloat16_to_float32(dtypes.float32_to_bfloat16(x)), x)
    assert np.isnan(dtypes.bfloat16_to_float32(dtypes.float32_to_bfloat16(np.float32("nan"))))


def test_context_labels_and_scope():
    assert repr(mx.gpu(1)) == "gpu(1)" and mx.cpu() == mx.Context("cpu", 0)
    assert mx.current_context() == mx.cpu()
    with mx.gpu(2):
        assert mx.current_context() == mx.gpu(2)
        assert mx.nd.zeros((1,)).context == mx.gpu(2)
    assert mx.current_context() == mx.cpu()
    assert mx.Context.from_devtype(2, 3) == mx.gpu(3)
    with pytest.raises(DeviceError):
        mx.Context("tpu", 0)
