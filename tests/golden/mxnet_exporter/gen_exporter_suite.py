"""Record MXNet 1.9.1's outputs for the combinations tests/onnx/test_mxnet_exporter_suite.py runs
(the oracle; never run by the test suite):

    ~/.cache/gluonport-oracle/bin/python tests/golden/mxnet_exporter/gen_exporter_suite.py

For every entry of the exporter-test table and each combination the suite runs (CAP of them),
builds MXNet's def_model block, hybridizes it and calls it, as MXNet's op_export_test does.
Writes ``exporter_suite.npz``: ``<entry>/<k>/out<i>`` (outputs up to LIMIT elements each) and
``<entry>/<k>/in`` (a float64 checksum of the inputs, so the suite can tell that it built the
same ones); ``exporter_suite.json``: the combinations, and the error MXNet raised where it did.
Random ops (check "range") record nothing.
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
    arrays, meta = {}, {}
    for e in E:
        for k, (c, spec) in enumerate(runs(e, CAP)):
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
            arrays[key + "/in"] = checksum(spec["inputs"])
            for i, o in enumerate(outs):
                if o.size <= LIMIT:
                    arrays[f"{key}/out{i}"] = o
    np.savez_compressed(os.path.join(HERE, "exporter_suite.npz"), **arrays)
    with open(os.path.join(HERE, "exporter_suite.json"), "w") as f:
        json.dump(meta, f, indent=0, sort_keys=True)
    print(len(meta), "combinations,", len(arrays), "arrays")


if __name__ == "__main__":
    main()
