"""MXNet 1.9.1's own ONNX exporter tests (``tests/python-pytest/onnx/test_operators.py``), in
their style: build a parameter-free HybridBlock around one op (``def_model``), hybridize it,
``export`` it (an empty ``.params`` file), ``export_model`` the file pair with every input's shape
and dtype (label inputs of output ops included) and run the model on onnxruntime.

The reference is independent of the ONNX path: the block's imperative (not hybridized) forward
on NDArrays, i.e. the numpy executor; the hybridized forward must agree with it too. The ops and
parameter grids are MXNet's (``_mxnet_exporter_base.py``, one entry per MXNet test function);
where a grid is larger than ``CAP`` a seeded sample of ``CAP`` combinations runs that still
holds every value of every parameter (``GLUONPORT_EXPORTER_CAP=0`` runs all 9,918). The numpy
executor is checked against MXNet 1.9.1 too: on the sampled combinations (outputs up to 4096
elements) and, without the ONNX round trip, on every combination of every grid whose outputs
have up to 256 elements (goldens: tests/golden/mxnet_exporter/gen_exporter_suite.py).
"""

from __future__ import annotations

import json
import logging
import os

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import ConversionError
from gluonport.gluon import HybridBlock
from tests._ort import session
from tests.onnx import _mxnet_exporter_table, _mxnet_exporter_table2  # noqa: F401 (entries)
from tests.onnx._mxnet_exporter_base import E, full_count, runs

# combinations per MXNet test function; GLUONPORT_EXPORTER_CAP=0 runs every grid in full
CAP = int(os.environ.get("GLUONPORT_EXPORTER_CAP", "8")) or 10 ** 9
# (rtol, atol) by dtype: MXNet's assert_almost_equal defaults (test_utils.default_rtols/atols)
TOL = {"float16": (1e-2, 1e-1), "float32": (1e-4, 1e-3), "float64": (1e-5, 1e-20)}
ENTRIES = {e["name"]: e for e in E}


def def_model(op, dummy_input: bool = False, **params) -> type[HybridBlock]:
    """A parameter-free block applying ``op`` (a dotted name under ``F``, or ``f(F, *inputs)``)
    to its inputs, as MXNet's def_model / def_model_from_func."""

    class Model(HybridBlock):
        def hybrid_forward(self, F, *inputs):
            func = op
            if isinstance(op, str):
                func = F
                for part in op.split("."):
                    func = getattr(func, part)
                if dummy_input:
                    return func(**params), inputs[0]
                return func(*inputs, **params)
            return func(F, *inputs, **params)

    return Model


GOLDEN = os.path.join(os.path.dirname(__file__), "..", "golden", "mxnet_exporter",
                      "exporter_suite")


def _load_golden() -> tuple[dict, dict]:
    with np.load(GOLDEN + ".npz") as z:
        arrays = {k: z[k] for k in z.files}
    with open(GOLDEN + ".json", encoding="utf-8") as f:
        return arrays, json.load(f)


GOLDEN_ARRAYS, GOLDEN_META = _load_golden()


def _golden(key: str, c: dict) -> dict | None:
    """MXNet 1.9.1's outputs for this combination (gen_exporter_suite.py), when the oracle ran
    the same one (the default CAP) and they were small enough to keep."""
    meta = GOLDEN_META.get(key)
    if meta is None or meta["combination"] != repr(c):
        return None
    outs = {int(k.rsplit("out", 1)[1]): v for k, v in GOLDEN_ARRAYS.items()
            if k.startswith(key + "/out")}
    return {"checksum": GOLDEN_ARRAYS.get(key + "/in"), "outputs": outs}


def _checksum(arrays: list[np.ndarray]) -> np.ndarray:
    """As gen_exporter_suite.py: sums of the inputs and of every 7th element."""
    return np.array([float(np.asarray(a, np.float64).sum()) for a in arrays]
                    + [float(np.asarray(a, np.float64).ravel()[::7].sum()) for a in arrays])


def _outputs(out) -> list[np.ndarray]:
    return [o.asnumpy() for o in (out if isinstance(out, (list, tuple)) else [out])]


def _compare(got: np.ndarray, want: np.ndarray, spec: dict, what: str) -> None:
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    if spec.get("check") == "range":  # random ops: the values cannot match
        assert np.isfinite(got.astype(np.float64)).all(), what
        return
    if spec.get("check") == "nan_to_num":
        got, want = np.nan_to_num(got), np.nan_to_num(want)
    rtol, atol = spec.get("tol") or TOL.get(str(want.dtype), (0, 0))
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol,
                               atol=atol, equal_nan=True, err_msg=what)


def op_export_test(spec: dict, tmp_path, what: str, golden: dict | None = None) -> None:
    """One combination: export the block and compare onnxruntime with the numpy executor, and
    the numpy executor with MXNet's outputs where ``golden`` has them."""
    inputs = [mx.nd.array(x, dtype=x.dtype) for x in spec["inputs"]]
    model = def_model(spec["op"], spec.get("dummy", False), **spec["params"])()
    model.initialize()
    want = _outputs(model(*inputs))  # imperative: the numpy executor, op by op
    model.hybridize(backend="numpy")
    traced = _outputs(model(*inputs))
    prefix = os.path.join(str(tmp_path), "model")
    model.export(prefix, epoch=0)
    onnx_file = prefix + ".onnx"
    mx.onnx.export_model(prefix + "-symbol.json", prefix + "-0000.params",
                         [x.shape for x in inputs], [x.dtype for x in inputs], onnx_file)
    sess = session(onnx_file)  # onnxruntime 1.19's float64 FusedMatMul handled as gluonport does
    # fed by name: label inputs of output ops are not inputs of gluonport's ONNX model
    names = ["data"] if len(inputs) == 1 else [f"data{i}" for i in range(len(inputs))]
    feed = dict(zip(names, spec["inputs"]))
    got = sess.run(None, {i.name: feed[i.name] for i in sess.get_inputs()})
    if spec.get("dummy"):
        want, traced, got = want[:1], traced[:1], got[:1]
    if spec.get("zero_first"):  # MXNet's ROIAlign test zeroes the roi with batch index -1
        for arr in (want, traced, got):
            arr[0][0] = 0
    if golden is not None and golden["checksum"] is not None:
        np.testing.assert_allclose(_checksum(spec["inputs"]), golden["checksum"], rtol=1e-12,
                                   err_msg=f"{what}: not the inputs the oracle saw")
        for k, ref in golden["outputs"].items():
            _compare(want[k], ref, spec, f"{what} out{k} (numpy executor vs MXNet 1.9.1)")
    assert len(got) == len(want), f"{what}: {len(got)} outputs, want {len(want)}"
    for k, (g, t, w) in enumerate(zip(got, traced, want)):
        _compare(t, w, spec, f"{what} out{k} (hybridized vs imperative)")
        _compare(g, w, spec, f"{what} out{k} (onnxruntime vs numpy executor)")


@pytest.mark.parametrize("name", list(ENTRIES))
def test_onnx_export(name, tmp_path):
    """MXNet's ``test_onnx_export_<name>`` over its parameter grid (sampled above CAP)."""
    e = ENTRIES[name]
    ran, failed = 0, []
    for k, (c, spec) in enumerate(runs(e, CAP)):
        ran += 1
        try:
            op_export_test(spec, tmp_path, f"{name} {c}", _golden(f"{name}/{k}", c))
        except Exception as exc:  # every failing combination is listed, not only the first
            failed.append(f"{c}: {type(exc).__name__}: {str(exc).strip()[:400]}")
    assert ran, f"{name}: every combination was skipped"
    assert not failed, f"{len(failed)} of {ran} combinations fail:\n" + "\n".join(failed)


def _grid_golden() -> dict[str, dict]:
    """exporter_grid.npz unpacked: {entry: {combination index: (checksum, {output: array})}}."""
    dtypes = ["bool", "int8", "uint8", "int32", "int64", "float16", "float32", "float64"]
    out: dict[str, dict] = {}
    with np.load(GOLDEN.replace("exporter_suite", "exporter_grid") + ".npz") as z:
        for name in {k.split("/")[0] for k in z.files}:
            values, entry = z[name + "/values"], {}
            for row in z[name + "/checksums"]:
                sums = row[1:]
                entry[int(row[0])] = (sums[~np.isnan(sums)], {})
            for k, i, off, size, code, ndim, *dims in z[name + "/index"]:
                arr = values[off:off + size].astype(dtypes[code]).reshape(dims[:ndim])
                entry[int(k)][1][int(i)] = arr
            out[name] = entry
    return out


GRID = _grid_golden()


@pytest.mark.parametrize("name", sorted(GRID))
def test_numpy_executor_matches_mxnet_on_the_whole_grid(name):
    """Every combination of MXNet's grid whose outputs are small (up to 256 elements; 4,571 of
    the 9,918 MXNet does not skip): the block's imperative forward (the numpy executor) equals
    MXNet 1.9.1's hybridized one (gen_exporter_suite.py)."""
    golden, failed, seen = GRID[name], [], 0
    for k, (c, spec) in enumerate(runs(ENTRIES[name], 10 ** 9)):
        if k not in golden:
            continue
        seen += 1
        checksum, outs = golden[k]
        what = f"{name} {c}"
        try:
            np.testing.assert_allclose(_checksum(spec["inputs"]), checksum, rtol=1e-12,
                                       err_msg=f"{what}: not the inputs the oracle saw")
            inputs = [mx.nd.array(x, dtype=x.dtype) for x in spec["inputs"]]
            block = def_model(spec["op"], spec.get("dummy", False), **spec["params"])()
            got = _outputs(block(*inputs))
            if spec.get("zero_first"):
                got[0][0] = 0
            for i, ref in outs.items():
                _compare(got[i], ref, spec, f"{what} out{i} (numpy executor vs MXNet 1.9.1)")
        except Exception as exc:  # every failing combination is listed, not only the first
            failed.append(f"{c}: {type(exc).__name__}: {str(exc).strip()[:300]}")
    assert seen == len(golden), f"{name}: {seen} of the oracle's {len(golden)} combinations ran"
    assert not failed, f"{len(failed)} of {len(golden)} combinations fail:\n" + "\n".join(failed)


def test_table_mirrors_mxnet():
    """131 test functions of MXNet's module, 12,310 combinations in their grids."""
    assert len(E) == 131
    assert sum(full_count(e) for e in E) == 12310


def test_label_shapes_in_in_shapes_are_accepted_and_logged(tmp_path, caplog):
    """SoftmaxOutput's label shape listed in in_shapes (as MXNet's test passes it) is dropped
    with an INFO line on the gluonport.onnx logger; the list and dict forms both work, and so
    does the list without it."""
    x = np.random.RandomState(0).uniform(0, 1, (6, 7)).astype(np.float32)
    block = def_model("SoftmaxOutput")()
    block.initialize()
    block.hybridize()
    block(mx.nd.array(x), mx.nd.zeros((6,)))
    prefix = str(tmp_path / "sm")
    block.export(prefix)
    sym, params = prefix + "-symbol.json", prefix + "-0000.params"
    out = str(tmp_path / "sm.onnx")
    for shapes, types in (([(6, 7), (6,)], [np.float32, np.float32]),
                          ({"data0": (6, 7), "data1": (6,)}, {"data0": np.float32}),
                          ([(6, 7)], [np.float32])):
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="gluonport.onnx"):
            mx.onnx.export_model(sym, params, shapes, types, out)
        logged = [r.getMessage() for r in caplog.records if r.name == "gluonport.onnx"]
        assert any("data1" in m and "label" in m for m in logged) == (len(shapes) == 2)
        import onnxruntime as ort

        sess = ort.InferenceSession(out, providers=["CPUExecutionProvider"])
        assert [i.name for i in sess.get_inputs()] == ["data0"]
        e = np.exp(x - x.max(axis=1, keepdims=True))
        np.testing.assert_allclose(sess.run(None, {"data0": x})[0],
                                   e / e.sum(axis=1, keepdims=True), rtol=1e-5)


@pytest.mark.parametrize("op,label_shape", [
    ("SoftmaxOutput", (4,)), ("LogisticRegressionOutput", (4, 5)),
    ("LinearRegressionOutput", (4, 5)), ("MAERegressionOutput", (4, 5)), ("SVMOutput", (4,))])
def test_every_output_op_drops_its_label(op, label_shape, tmp_path):
    """Each legacy output op, exported with the label's shape and dtype listed (MXNet's
    in_shapes style): one ONNX input, onnxruntime equal to the numpy executor."""
    x = np.random.RandomState(1).uniform(-1, 1, (4, 5)).astype(np.float32)
    spec = {"inputs": [x, np.zeros(label_shape, np.float32)], "params": {}, "op": op}
    op_export_test(spec, tmp_path, op)


def test_label_entries_of_dynamic_input_shapes_are_dropped(tmp_path):
    block = def_model("LinearRegressionOutput")()
    block.initialize()
    block.hybridize()
    block(mx.nd.ones((2, 3)), mx.nd.ones((2, 3)))
    prefix = str(tmp_path / "lr")
    block.export(prefix)
    out = mx.onnx.export_model(prefix + "-symbol.json", prefix + "-0000.params",
                               [(2, 3), (2, 3)], [np.float32] * 2, str(tmp_path / "lr.onnx"),
                               dynamic=True, dynamic_input_shapes=[(None, 3), (None, 3)])
    import onnx

    (inp,) = onnx.load(out).graph.input
    assert inp.name == "data0" and inp.type.tensor_type.shape.dim[0].dim_param


def test_wrong_in_shapes_count_is_still_an_error(tmp_path):
    block = def_model("SoftmaxOutput")()
    block.initialize()
    block.hybridize()
    block(mx.nd.ones((2, 3)), mx.nd.zeros((2,)))
    prefix = str(tmp_path / "sm")
    block.export(prefix)
    with pytest.raises(ConversionError, match="in_shapes"):
        mx.onnx.export_model(prefix + "-symbol.json", prefix + "-0000.params",
                             [(2, 3), (2,), (4,)], [np.float32] * 3, str(tmp_path / "x.onnx"))
