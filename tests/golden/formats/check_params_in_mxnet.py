"""Check that .params files written by gluonport load in the real MXNet 1.9.1.

Two steps, two interpreters (gluonport needs Python >= 3.10, the oracle MXNet runs on 3.8):

    python tests/golden/formats/check_params_in_mxnet.py write /tmp/gp_params
    /root/.cache/gluonport-oracle/bin/python tests/golden/formats/check_params_in_mxnet.py \
        check /tmp/gp_params

"write" saves one file per case with gluonport.formats.params.save plus expected.json;
"check" loads each with mx.nd.load (V3 files under np-shape) and compares names, shapes,
storage types and values exactly (MXNet without a GPU loads every context on the CPU). It
prints one line per case and exits non-zero on any mismatch. It writes no committed file: the
byte-identity tests in tests/formats/test_params.py cover the same ground without MXNet.
"""

import json
import os
import sys

import numpy as np


def cases():
    from gluonport.context import gpu
    from gluonport.formats.params import ArrayInfo, SparseArray

    rng = np.random.RandomState(1)
    f32 = rng.randint(-50, 50, (3, 4)).astype("float32") / 4
    rsp = np.zeros((5, 2), "float32")
    rsp[[1, 3]] = [[1, 2], [3, 4]]
    csr = np.array([[0, 1.5, 0], [0, 0, 0], [2, 0, -1]], "float64")
    return {
        "dense_dict": ({"a": f32, "b": np.arange(5, dtype="int64"), "c": np.ones(3, bool),
                        "d": np.zeros((2, 0), "float16"), "e": np.uint8([1, 255]),
                        "f": np.int8([-128, 127]), "g": np.int32([7]), "h": f32.astype("f8")},
                       {}),
        "list_and_scalar": ([f32, np.float32(2.5)], {}),
        "bfloat16": ({"bf": f32}, {"info": {"bf": ArrayInfo(flag=12)}}),
        "sparse": ({"rsp": SparseArray.from_dense(rsp, "row_sparse"),
                    "csr": SparseArray.from_dense(csr, "csr"),
                    "zero": SparseArray.from_dense(np.zeros((2, 3), "f4"), "row_sparse")}, {}),
        "gpu_context": ({"w": f32}, {"info": {"w": ArrayInfo(dev_type=2, dev_id=1)}}),
        "v3_scalar": ({"s": np.array(3.25, "float32"), "v": np.arange(3, dtype="int32")},
                      {"version": 3}),
        "unicode": ({"\u6743\u91cd": f32, "emoji_\U0001F642": f32[0]}, {}),
        "fake_gpu_attr": ({"w": _WithContext(f32, gpu(0))}, {}),
    }


class _WithContext:
    def __init__(self, arr, ctx):
        self.arr, self.context = arr, ctx

    def asnumpy(self):
        return self.arr


def expected(data):
    from gluonport.formats.params import SparseArray

    items = data.items() if isinstance(data, dict) else [(None, a) for a in data]
    out = []
    for name, a in items:
        a = a.asnumpy() if hasattr(a, "asnumpy") and not isinstance(a, SparseArray) else a
        dense = a.todense() if isinstance(a, SparseArray) else np.asarray(a)
        out.append({"name": name, "values": dense.astype("f8").tolist(),
                    "shape": list(dense.shape), "stype": getattr(a, "stype", "default")})
    return {"kind": "dict" if isinstance(data, dict) else "list", "arrays": out}


def write(folder):
    from gluonport.formats import params

    os.makedirs(folder, exist_ok=True)
    exp = {}
    for name, (data, kw) in cases().items():
        params.save(os.path.join(folder, name + ".params"), data, **kw)
        exp[name] = dict(expected(data), **{k: v for k, v in kw.items() if k == "version"})
        if name == "list_and_scalar":
            exp[name]["arrays"][1]["shape"] = [1]  # V2 stores a 0-d array as (1,)
            exp[name]["arrays"][1]["values"] = [2.5]
    with open(os.path.join(folder, "expected.json"), "w") as f:
        json.dump(exp, f, ensure_ascii=True)


def check(folder):
    import mxnet as mx

    with open(os.path.join(folder, "expected.json")) as f:
        exp = json.load(f)
    bad = 0
    for name, want in sorted(exp.items()):
        path = os.path.join(folder, name + ".params")
        if want.get("version") == 3:
            with mx.util.np_shape(True):
                got = mx.nd.load(path)
        else:
            got = mx.nd.load(path)
        items = list(got.items()) if isinstance(got, dict) else [(None, a) for a in got]
        ok = (want["kind"] == ("dict" if isinstance(got, dict) else "list")
              and len(items) == len(want["arrays"]))
        for (n, a), w in zip(items, want["arrays"]):
            vals = a.asnumpy() if a.stype == "default" else a.tostype("default").asnumpy()
            if vals.dtype.names:  # bfloat16: MXNet 1.x shows [('bfloat16', '<u2')]
                vals = (vals.view("<u2").astype("<u4") << 16).view("<f4")
            ok = ok and n == w["name"] and list(a.shape) == w["shape"]
            ok = ok and a.stype == w["stype"] and np.array_equal(vals.astype("f8"),
                                                                 np.array(w["values"]))
        print(("ok   " if ok else "FAIL ") + name)
        bad += not ok
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    {"write": write, "check": check}[sys.argv[1]](sys.argv[2])
