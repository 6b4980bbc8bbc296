"""Record MXNet 1.9.1's outputs for the combinations tests/onnx/test_mxnet_exporter_suite.py runs
(the oracle; never run by the test suite):

    ~/.cache/gluonport-oracle/bin/python tests/golden/mxnet_exporter/gen_exporter_suite.py

For every entry of the exporter-test table and each combination the suite runs (CAP of them),
builds MXNet's def_model block, hybridizes it and calls it, as MXNet's op_export_test does.
Writes ``exporter_suite.npz``: ``<entry>/<k>/out<i>`` (outputs up to LIMIT elements each) and
``<entry>/<k>/in`` (a float64 checksum of the inputs, so the suite can tell that it built the
same ones); ``exporter_suite.json``: the combinations, and the error MXNet raised where it did.
Random ops (check "range") record nothing. ``exporter_grid.npz/.json``: the same for every
combination of every grid (outputs up to GRID_LIMIT elements).
"""
import json
import os
import sys

import mxnet as mx
import numpy as np
from mxnet.gluon import HybridBlock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", ".."))
from tests.onnx import _mxnet_exporter_table, _mxnet_exporter_table2  # noqa: E402,F401
from tests.onnx._mxnet_exporter_base import E, runs  # noqa: E402

CAP = 8  # the suite's default
LIMIT = 4096  # elements per output kept in the golden
GRID_LIMIT = 256  # in the whole-grid golden


def def_model(op, dummy_input=False, **params):
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


def checksum(arrays):
    return np.array([float(np.asarray(a, np.float64).sum()) for a in arrays] +
                    [float(np.asarray(a, np.float64).ravel()[::7].sum()) for a in arrays])


def main():
    record(CAP, LIMIT, "exporter_suite")
    # the whole grid of every MXNet test function, small outputs only: the numpy executor
    # against MXNet for each combination MXNet's exporter tests exercise
    record(10 ** 9, GRID_LIMIT, "exporter_grid")
    pack(os.path.join(HERE, "exporter_grid.npz"))


DTYPES = ["bool", "int8", "uint8", "int32", "int64", "float16", "float32", "float64"]


def pack(path):
    """One npz member per entry and kind instead of one per array (the zip headers of ~10,000
    small members were most of the file): ``<entry>/values`` (every kept output, raveled, as
    float64, which holds each of these dtypes exactly), ``<entry>/index`` (rows of combination,
    output, offset, size, dtype code, ndim, shape padded to 6) and ``<entry>/checksums`` (rows
    of combination, then its input checksum padded with NaN to 8)."""
    with np.load(path) as z:
        items = {k: z[k] for k in z.files}
    packed = {}
    for e in E:
        pre = e["name"] + "/"
        values, index, sums = [], [], []
        offset = 0
        for key in sorted((k for k in items if k.startswith(pre)),
                          key=lambda k: (int(k.split("/")[1]), k.split("/")[2])):
            _, combo, slot = key.split("/")
            arr = items[key]
            if slot == "in":
                sums.append([int(combo)] + list(arr) + [np.nan] * (8 - len(arr)))
                continue
            index.append([int(combo), int(slot[3:]), offset, arr.size,
                          DTYPES.index(str(arr.dtype)), arr.ndim] + list(arr.shape) +
                         [0] * (6 - arr.ndim))
            values.append(arr.astype(np.float64).ravel())
            offset += arr.size
        if index:
            packed[pre + "values"] = np.concatenate(values)
            packed[pre + "index"] = np.array(index, np.int64)
            packed[pre + "checksums"] = np.array(sums, np.float64)
    np.savez_compressed(path, **packed)


def record(cap, limit, stem):
    arrays, meta = {}, {}
    for e in E:
        for k, (c, spec) in enumerate(runs(e, cap)):
            key = f"{e['name']}/{k}"
            meta[key] = {"combination": repr(c)}
            if spec.get("check") == "range":
                continue
            inputs = [mx.nd.array(x, dtype=x.dtype) for x in spec["inputs"]]
            model = def_model(spec["op"], spec.get("dummy", False), **spec["params"])()
            model.initialize()
            model.hybridize()
            try:
                out = model(*inputs)
            except Exception as exc:  # noqa: BLE001 - recorded for the suite to read
                meta[key]["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
                continue
            outs = [o.asnumpy() for o in (out if isinstance(out, (list, tuple)) else [out])]
            if spec.get("dummy"):
                outs = outs[:1]
            if spec.get("zero_first"):  # MXNet's ROIAlign test: the batch -1 roi is garbage
                outs[0][0] = 0
            kept = {i: o for i, o in enumerate(outs) if o.size <= limit}
            if kept or cap == CAP:
                arrays[key + "/in"] = checksum(spec["inputs"])
            for i, o in kept.items():
                arrays[f"{key}/out{i}"] = o
    np.savez_compressed(os.path.join(HERE, stem + ".npz"), **arrays)
    if cap == CAP:  # the whole grid's combinations are told apart by their input checksums
        with open(os.path.join(HERE, stem + ".json"), "w") as f:
            json.dump(meta, f, indent=0, sort_keys=True)
    print(len(meta), "combinations,", len(arrays), "arrays")


if __name__ == "__main__":
    main()
