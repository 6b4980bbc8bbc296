"""Write the golden MXNet ``.params`` files that tests/formats/test_params.py reads.

Run with the oracle interpreter (real MXNet 1.9.1), from the repository root:

    /root/.cache/gluonport-oracle/bin/python tests/golden/formats/gen_params.py

It rewrites tests/golden/formats/params/*.params and manifest.json. Every file is written by
MXNet itself (mx.nd.save, mx.npx.save, save_checkpoint, Gluon save_parameters/export) except
the few marked "hand-made" (legacy V0/V1 records, a gpu context), which are built here byte by
byte following FORMATS.md and then loaded with mx.nd.load: what MXNet returns is recorded as the
expected result, which proves the layout. The manifest lists, per file, whether it is a list or
a dict, and per array its name, shape, dtype, flag, storage type, record version, saved context,
values (dense) and raw little-endian bytes (hex). Deterministic: fixed seeds, fixed creation
order (Gluon names depend on it).
"""

import json
import os
import struct

import mxnet as mx
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "params")
BF16 = np.dtype([("bfloat16", "<u2")])
FLAGS = {"float32": 0, "float64": 1, "float16": 2, "uint8": 3, "int32": 4, "int8": 5,
         "int64": 6, "bool": 7, "bfloat16": 12}
rng = np.random.RandomState(0)
MANIFEST = {}


def values(shape, dtype):
    """Small exactly representable values."""
    if dtype == "bool":
        return rng.randint(0, 2, size=shape).astype(bool)
    if dtype in ("float32", "float64", "float16", "bfloat16"):
        return (rng.randint(-64, 64, size=shape) / 4.0).astype("float32" if dtype == "bfloat16"
                                                                 else dtype)
    info = np.iinfo(dtype)
    return rng.randint(max(info.min, -100), min(info.max, 100) + 1, size=shape).astype(dtype)


def nd(arr, dtype=None):
    if dtype == "bfloat16":
        return mx.nd.array(arr, dtype="float32").astype(BF16)
    return mx.nd.array(arr, dtype=arr.dtype if dtype is None else dtype)


def describe_array(name, a, version, ctx=(1, 0)):
    """Manifest entry for one loaded MXNet array."""
    entry = {"name": name, "shape": list(a.shape), "stype": a.stype, "version": version,
             "dev_type": ctx[0], "dev_id": ctx[1]}
    if a.dtype == BF16:
        bits = a.asnumpy().view("<u2")
        entry.update(dtype="bfloat16", flag=12, bits=bits.ravel().tolist(),
                     raw_hex=bits.tobytes().hex(),
                     values=(bits.astype("<u4") << 16).view("<f4").tolist())
        return entry
    dtype = np.dtype(a.dtype).name
    entry.update(dtype=dtype, flag=FLAGS[dtype])
    if a.stype == "row_sparse":
        entry.update(data=a.data.asnumpy().tolist(), indices=a.indices.asnumpy().tolist())
    elif a.stype == "csr":
        entry.update(data=a.data.asnumpy().tolist(), indices=a.indices.asnumpy().tolist(),
                     indptr=a.indptr.asnumpy().tolist())
    dense = a.asnumpy() if a.stype == "default" else a.tostype("default").asnumpy()
    entry.update(values=dense.tolist(), raw_hex=dense.astype(dense.dtype.newbyteorder("<"))
                 .tobytes().hex())
    return entry


def record(fname, origin, version=2, contexts=None, identical=True, np_shape=False, note=""):
    """Load `fname` back with MXNet and put what it returns into the manifest."""
    path = os.path.join(OUT, fname)
    if np_shape:
        with mx.util.np_shape(True):
            loaded = mx.nd.load(path)
    else:
        loaded = mx.nd.load(path)
    if isinstance(loaded, dict):
        items, kind = list(loaded.items()), "dict"
    else:
        items, kind = [(None, a) for a in loaded], "list"
    contexts = contexts or [(1, 0)] * len(items)
    MANIFEST[fname] = {
        "origin": origin, "kind": kind, "size": os.path.getsize(path),
        "writer_identical": identical, "note": note,
        "arrays": [describe_array(n, a, version, c) for (n, a), c in zip(items, contexts)],
    }


def save(fname, data, origin="mx.nd.save", **kw):
    # mx.nd.save writes a sparse array's storage shape before it waits for the array to be
    # computed, so an unfinished tostype() leaves a stale storage shape in the file (an MXNet
    # race, seen as run-to-run differences). Waiting first makes the bytes deterministic.
    mx.nd.waitall()
    mx.nd.save(os.path.join(OUT, fname), data)
    record(fname, origin, **kw)


# ---------------------------------------------------------------------------------------------
# hand-made records (FORMATS.md 1.2-1.4)

def container(records, names=()):
    out = struct.pack("<QQQ", 0x112, 0, len(records)) + b"".join(records)
    out += struct.pack("<Q", len(names))
    for n in names:
        b = n.encode("utf-8")
        out += struct.pack("<Q", len(b)) + b
    return out


def v0_record(arr, flag):
    head = struct.pack("<I", arr.ndim) + struct.pack("<%dI" % arr.ndim, *arr.shape)
    return head + struct.pack("<iii", 1, 0, flag) + arr.astype(arr.dtype.newbyteorder("<")
                                                             ).tobytes()


def v1_record(arr, flag):
    head = struct.pack("<Ii", 0xF993FAC8, arr.ndim) + struct.pack("<%dq" % arr.ndim, *arr.shape)
    return head + struct.pack("<iii", 1, 0, flag) + arr.tobytes()


def v2_record(arr, flag, dev_type=1, dev_id=0):
    head = struct.pack("<Iii", 0xF993FAC9, 0, arr.ndim) + struct.pack("<%dq" % arr.ndim,
                                                                     *arr.shape)
    return head + struct.pack("<iii", dev_type, dev_id, flag) + arr.tobytes()


def write_raw(fname, raw):
    with open(os.path.join(OUT, fname), "wb") as f:
        f.write(raw)


def gen_dtypes():
    for dtype in FLAGS:
        arr = values((2, 3), dtype)
        save("dtype_%s.params" % dtype, {"x": nd(arr, dtype)})


def gen_shapes():
    shapes = {"shape_1d": (5,), "shape_3d": (2, 3, 4), "shape_4d": (2, 1, 3, 2),
              "zero_size_0": (0,), "zero_size_2x0": (2, 0), "scalar_like": (1,)}
    for fname, shape in shapes.items():
        save(fname + ".params", {"w": nd(values(shape, "float32"))})
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 1e-45, 3.4028235e38], "float32")
    save("special_floats.params", {"s": nd(special)})


def gen_containers():
    arrs = [nd(values((3,), "float32")), nd(values((2, 2), "int32")), nd(values((4,), "int8"))]
    save("list.params", arrs)
    save("dict.params", {"alpha": arrs[0], "beta": arrs[1], "gamma": arrs[2]})
    save("empty_dict.params", {})
    save("empty_list.params", [])
    save("single.params", nd(values((2, 2), "float64")))
    save("name_order.params", {"zeta": arrs[0], "alpha": arrs[1], "mid": arrs[2]})
    save("unicode_names.params", {"poids_\u00e9": arrs[0], "\u6743\u91cd": arrs[1],
                                  "emoji_\U0001F642": arrs[2]})
    mixed = {"h": nd(values((3,), "float16")), "d": nd(values((3,), "float64")),
             "b": nd(values((5,), "bool")), "u": nd(values((7,), "uint8")),
             "f": nd(values((2, 3), "float32"))}
    save("mixed_alignment.params", mixed, note="odd offsets: float64 after 6 bytes of float16")


def gen_sparse():
    dense = np.zeros((5, 3), "float32")
    dense[1] = [1, 2, 3]
    dense[4] = [-1, 0, 0.5]
    save("row_sparse.params", {"rsp": nd(dense).tostype("row_sparse")})
    save("row_sparse_zero.params", {"rsp0": mx.nd.sparse.zeros("row_sparse", (4, 2))})
    csr = np.array([[0, 1, 0, 0], [0, 0, 0, 0], [2, 0, 3, 0]], "float32")
    save("csr.params", {"csr": nd(csr).tostype("csr")})
    save("csr_zero.params", [mx.nd.sparse.zeros("csr", (3, 4))])
    # The race above, made on purpose: MXNet's loader ignores the stored storage_shape[0] of a
    # row_sparse record (it takes the row count from the indices' shape), so this still loads.
    with open(os.path.join(OUT, "row_sparse.params"), "rb") as f:
        raw = bytearray(f.read())
    struct.pack_into("<q", raw, 36, 5)  # storage_shape (2, 3) -> (5, 3), as a racy save writes
    write_raw("row_sparse_stale_storage_shape.params", bytes(raw))
    record("row_sparse_stale_storage_shape.params", "hand-made from row_sparse.params: storage "
           "shape (5, 3) for 2 stored rows, as mx.nd.save writes when it races tostype()",
           identical=False)
    save("sparse_mixed.params", {"dense": nd(values((2,), "float32")),
                                 "rsp": nd(dense.astype("float64")).tostype("row_sparse"),
                                 "csr": nd(csr).tostype("csr")})


def gen_v3():
    from mxnet import npx
    npx.set_np()
    try:
        data = {"scalar": mx.np.array(3.5), "vec": mx.np.array([1, 2], dtype="int32"),
                "empty": mx.np.zeros((0, 3))}
        mx.npx.save(os.path.join(OUT, "v3_np_scalar.params"), data)
        record("v3_np_scalar.params", "mx.npx.save under npx.set_np()", version=3,
               np_shape=True)
    finally:
        npx.reset_np()


def gen_checkpoint():
    data = mx.sym.var("data")
    fc = mx.sym.FullyConnected(data, num_hidden=2, name="fc1")
    bn = mx.sym.BatchNorm(fc, name="bn1")
    arg = {"fc1_weight": nd(values((2, 3), "float32")), "fc1_bias": nd(values((2,), "float32")),
           "bn1_gamma": nd(values((2,), "float32")), "bn1_beta": nd(values((2,), "float32"))}
    aux = {"bn1_moving_mean": nd(values((2,), "float32")),
           "bn1_moving_var": nd(np.abs(values((2,), "float32")))}
    prefix = os.path.join(OUT, "checkpoint")
    mx.model.save_checkpoint(prefix, 0, bn, arg, aux)
    os.remove(prefix + "-symbol.json")
    record("checkpoint-0000.params", "mx.model.save_checkpoint (arg:/aux:)")


def gen_gluon():
    from mxnet.gluon import nn
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(3, in_units=4), nn.BatchNorm(in_channels=3))
    net.initialize()
    for p in net.collect_params().values():
        p.set_data(nd(values(p.shape, "float32")))
    net.save_parameters(os.path.join(OUT, "gluon_save_parameters.params"))
    record("gluon_save_parameters.params", "Block.save_parameters (structural names)")
    net.hybridize()
    net(mx.nd.ones((2, 4)))
    prefix = os.path.join(OUT, "gluon_export")
    net.export(prefix, 0)
    os.remove(prefix + "-symbol.json")
    record("gluon_export-0000.params", "HybridBlock.export (arg:/aux:)")


def gen_hand_made():
    a = values((2, 3), "float32")
    b = values((4,), "int32")
    write_raw("legacy_v0.params", container([v0_record(a, 0), v0_record(b, 4)]))
    record("legacy_v0.params", "hand-made V0 records (u32 ndim/dims), loaded by MXNet 1.9.1",
           version=0, identical=False)
    c = values((3, 1, 2), "float64")
    write_raw("legacy_v1.params", container([v1_record(c, 1), v1_record(b, 4)], ["c", "b"]))
    record("legacy_v1.params", "hand-made V1 records (magic 0xF993FAC8), loaded by MXNet 1.9.1",
           version=1, identical=False)
    g = values((2, 3), "float32")
    write_raw("gpu_context.params", container([v2_record(g, 0, 2, 1), v2_record(b, 4, 3, 0)],
                                              ["on_gpu1", "pinned"]))
    record("gpu_context.params", "hand-made V2 records with dev_type 2 (gpu 1) and 3 "
           "(cpu_pinned); MXNet 1.9.1 without GPU loads them on cpu", contexts=[(2, 1), (3, 0)])


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        if f.endswith(".params"):
            os.remove(os.path.join(OUT, f))
    mx.random.seed(0)
    gen_dtypes()
    gen_shapes()
    gen_containers()
    gen_sparse()
    gen_checkpoint()
    gen_gluon()
    gen_hand_made()
    gen_v3()
    with open(os.path.join(OUT, "manifest.json"), "w") as f:
        json.dump({"mxnet_version": mx.__version__, "files": MANIFEST}, f, indent=1,
                  sort_keys=True, ensure_ascii=True)
        f.write("\n")


if __name__ == "__main__":
    main()
