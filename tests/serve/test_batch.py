"""BatchPredictor (the callable Ray Data's map_batches runs), without Ray: outputs against the
output MXNet 1.9.1 produced for each sample input."""

from __future__ import annotations

import numpy as np
import pytest

from gluonport.errors import ArgumentError, DeviceError, ShapeError
from gluonport.serve import BatchPredictor, prepare_model
from tests.serve._samples import NAMES, prefix


@pytest.mark.parametrize("name", NAMES)
def test_batch_predictor_matches_mxnet(name):
    x = np.load(prefix(name) + "-input.npy")
    want = np.load(prefix(name) + "-output.npy")
    bp = BatchPredictor(prefix(name), input_shapes={"data": x.shape})
    (out_name,) = bp.model.output_names
    ids = np.arange(len(x))
    got = bp({"data": x, "id": ids})
    np.testing.assert_array_equal(got["id"], ids)  # the batch's own columns are kept
    np.testing.assert_allclose(got[out_name], want, rtol=1e-4, atol=1e-5)
    # a column of per-row arrays (what Ray Data may hand over for tensors it keeps as objects)
    rows = np.empty(len(x), object)
    rows[:] = list(x)
    only = BatchPredictor(bp.model, columns={"data": "pixels"}, keep_columns=False)
    got = only({"pixels": rows})
    assert list(got) == [out_name]
    np.testing.assert_allclose(got[out_name], want, rtol=1e-4, atol=1e-5)


def test_batch_predictor_errors():
    sm = prepare_model(prefix("mlp"), input_shapes={"data": (1, 10)})
    with pytest.raises(ArgumentError, match="columns"):
        BatchPredictor(sm, columns={"nope": "x"})
    bp = BatchPredictor(sm)
    with pytest.raises(ArgumentError, match="no column"):
        bp({"x": np.zeros((2, 10), np.float32)})
    with pytest.raises(ShapeError, match=r"takes \(N, 10\)"):
        bp({"data": np.zeros((2, 11), np.float32)})
    import onnxruntime

    if "CUDAExecutionProvider" not in onnxruntime.get_available_providers():
        with pytest.raises(DeviceError):
            BatchPredictor(sm, device="cuda:0")
