"""An ONNX fuzzer: mutate small valid models, open them through every public entry point.

Seeds are small models built here (initializers in raw and typed fields, a Constant
attribute tensor, a sparse initializer, external data beside the model). Each input gets
one to three mutations, either on the protobuf fields (dims, data_type, raw_data length,
typed data counts, external-data entries, attributes, names with invalid UTF-8, opsets) or on
the serialized bytes (flips, truncation, insertion, duplication). Every input is written as
``model.onnx`` in a folder holding the seed's ``w.bin``, beside a ``secret.bin`` outside it,
and opened with ``gluonport.onnx.import_model`` and ``gluonport.load`` on the numpy and
onnxruntime backends; a model that loads is run on zeros of its declared input shape.

The contract: nothing but :class:`~gluonport.errors.GluonportError` escapes, no output holds
the secret's values, each input takes under a second, and the Python/numpy memory it
allocates (``tracemalloc`` peak) stays under a small multiple of its size plus a fixed budget.

``python -m tests.onnx._onnxfuzz N`` runs N inputs and prints the figures.
"""

from __future__ import annotations

import os
import random
import sys
import tempfile
import time
import tracemalloc
import warnings
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto
from onnx import helper as h

import gluonport
from gluonport.errors import GluonportError

SECRET = np.full(4, 1234.5, np.float32)
WEIGHT = np.arange(1, 5, dtype=np.float32)
MARK = b"ZZ_MARK_ZZ"  # a name the byte mutations can turn into invalid UTF-8
BUDGET = 64 << 20  # fixed memory budget per input (bytes), on top of 8x the input size
HOSTILE = ["../secret.bin", "../../secret.bin", "/etc/passwd", "w.bin/../../secret.bin",
           "sub/../../secret.bin", "", ".", "w.bin\0x", "..\\secret.bin", "nosuch.bin",
           "link.bin", "dirlink/secret.bin", "fifo", "w.bin"]
NUMBERS = ["0", "4", "16", "17", "-1", "0x10", "1e3", " 4", "99999999999999999999",
           str(2 ** 62), str(2 ** 63), "", "abc"]
DIMS = [0, 1, 2, 3, 4, 7, 16, -1, -2 ** 40, 2 ** 31, 2 ** 40, 2 ** 62, 2 ** 63 - 1]
DTYPES = list(range(0, 30)) + [99, 1000, 2 ** 31 - 1]


def _vi(name, dims, dtype=TensorProto.FLOAT):
    return h.make_tensor_value_info(name, dtype, dims)


def _seeds() -> dict[str, onnx.ModelProto]:
    """Small valid models covering the decoding paths."""
    ops = [h.make_opsetid("", 17)]
    w = onnx.numpy_helper.from_array(WEIGHT, "W")
    add = h.make_graph([h.make_node("Add", ["x", "W"], ["a"], name=MARK.decode()),
                        h.make_node("Relu", ["a"], ["y"])], "add", [_vi("x", ["N", 4])],
                       [_vi("y", ["N", 4])], [w])
    typed = h.make_tensor("B", TensorProto.FLOAT, [3], [0.5, -1.0, 2.0])
    gw = h.make_tensor("G", TensorProto.FLOAT, [4, 3], list(range(12)))
    gemm = h.make_graph([h.make_node("Gemm", ["x", "G", "B"], ["y"], alpha=0.5)], "gemm",
                        [_vi("x", [2, 4])], [_vi("y", [2, 3])], [gw, typed])
    const = h.make_node("Constant", [], ["s"], value=h.make_tensor(
        "s", TensorProto.INT64, [2], [2, 2]))
    reshape = h.make_graph([const, h.make_node("Reshape", ["x", "s"], ["y"])], "reshape",
                           [_vi("x", [1, 4])], [_vi("y", [2, 2])])
    conv_w = onnx.numpy_helper.from_array(np.ones((2, 1, 3, 3), np.float32), "CW")
    conv = h.make_graph([h.make_node("Conv", ["x", "CW"], ["c"], pads=[1, 1, 1, 1],
                                     kernel_shape=[3, 3]),
                         h.make_node("MaxPool", ["c"], ["y"], kernel_shape=[2, 2],
                                     strides=[2, 2])],
                        "conv", [_vi("x", [1, 1, 4, 4])], [_vi("y", [1, 2, 2, 2])], [conv_w])
    sparse = h.make_sparse_tensor(h.make_tensor("S", TensorProto.FLOAT, [2], [3.0, 4.0]),
                                  h.make_tensor("S_i", TensorProto.INT64, [2], [0, 3]), [4])
    sp = h.make_graph([h.make_node("Mul", ["x", "S"], ["y"])], "sparse", [_vi("x", [1, 4])],
                      [_vi("y", [1, 4])], sparse_initializer=[sparse])
    ext = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[4])
    ext.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "w.bin"), ("offset", "0"), ("length", "16")):
        e = ext.external_data.add()
        e.key, e.value = k, v
    external = h.make_graph([h.make_node("Add", ["x", "W"], ["y"])], "external",
                            [_vi("x", ["N", 4])], [_vi("y", ["N", 4])], [ext])
    graphs = {"add": add, "gemm": gemm, "reshape": reshape, "conv": conv, "sparse": sp,
              "external": external}
    return {k: h.make_model(g, ir_version=8, opset_imports=ops) for k, g in graphs.items()}


# --- protobuf-level mutations ------------------------------------------------------------------

def _tensors(model: onnx.ModelProto) -> list[TensorProto]:
    out = list(model.graph.initializer)
    for sp in model.graph.sparse_initializer:
        out += [sp.values, sp.indices]
    for node in model.graph.node:
        out += [a.t for a in node.attribute if a.HasField("t")]
    return out


def _m_dims(rng, m):
    for t in rng.sample(_tensors(m), 1) if _tensors(m) else []:
        choice = rng.random()
        if choice < 0.5 and len(t.dims):
            t.dims[rng.randrange(len(t.dims))] = rng.choice(DIMS)
        elif choice < 0.75:
            t.dims.append(rng.choice(DIMS))
        else:
            del t.dims[:]


def _m_dtype(rng, m):
    for t in rng.sample(_tensors(m), 1) if _tensors(m) else []:
        t.data_type = rng.choice(DTYPES)


def _m_raw(rng, m):
    for t in rng.sample(_tensors(m), 1) if _tensors(m) else []:
        raw = t.raw_data if t.HasField("raw_data") else bytes(16)
        cut = rng.choice([0, 1, 3, len(raw) - 1, len(raw) + 1, len(raw) * 2, 4096])
        t.raw_data = (raw * (cut // max(len(raw), 1) + 1))[:max(cut, 0)]


def _m_typed(rng, m):
    for t in rng.sample(_tensors(m), 1) if _tensors(m) else []:
        t.ClearField("raw_data")
        field_name = rng.choice(["float_data", "int32_data", "int64_data", "double_data",
                                 "uint64_data", "string_data"])
        t.ClearField(field_name)
        n = rng.choice([0, 1, 3, 5, 100])
        getattr(t, field_name).extend([b"\xff\xfe" if field_name == "string_data" else 1] * n)


def _m_external(rng, m):
    tensors = _tensors(m)
    if not tensors:
        return
    t = rng.choice(tensors)
    t.data_location = TensorProto.EXTERNAL
    t.ClearField("raw_data")
    del t.external_data[:]
    for key in ("location", "offset", "length", "checksum"):
        if rng.random() < (0.9 if key == "location" else 0.5):
            e = t.external_data.add()
            e.key = key
            e.value = rng.choice(HOSTILE) if key == "location" else rng.choice(NUMBERS)
    if rng.random() < 0.1:  # a duplicated key
        t.external_data.add().CopyFrom(t.external_data[0]) if len(t.external_data) else None


def _m_attribute(rng, m):
    nodes = [n for n in m.graph.node if n.attribute] or list(m.graph.node)
    if not nodes:
        return
    node = rng.choice(nodes)
    choice = rng.random()
    if choice < 0.3 and node.attribute:
        a = rng.choice(node.attribute)
        a.type = rng.choice(list(onnx.AttributeProto.AttributeType.values()))
    elif choice < 0.5 and node.attribute:
        a = rng.choice(node.attribute)
        a.ints[:] = [rng.choice(DIMS) for _ in range(rng.randrange(5))]
        a.i = rng.choice(DIMS)
    elif choice < 0.7:
        bad = onnx.numpy_helper.from_array(np.zeros(3, np.float32), "t")
        bad.dims[:] = [rng.choice(DIMS)]
        node.attribute.append(h.make_attribute("value", bad))
    elif choice < 0.85 and node.attribute:
        del node.attribute[rng.randrange(len(node.attribute))]
    else:
        node.attribute.append(h.make_attribute(rng.choice(["axis", "perm", "to", "mode"]),
                                               rng.choice([1, -7, "x", [1, 2], 2.5])))


def _m_graph(rng, m):
    choice = rng.random()
    g = m.graph
    if choice < 0.3 and g.node:
        rng.choice(g.node).op_type = rng.choice(["Relu", "Conv", "Nope", "Reshape", "Gemm",
                                                 "Loop", "If", "Cast", "Tile", "Expand"])
    elif choice < 0.5:
        m.opset_import[0].version = rng.choice([1, 6, 9, 13, 17, 21, 99, 10 ** 6])
    elif choice < 0.7 and g.input:
        dims = g.input[0].type.tensor_type.shape.dim
        if len(dims):
            dims[rng.randrange(len(dims))].dim_value = rng.choice(DIMS[:9])
    elif choice < 0.85 and g.node:
        node = rng.choice(g.node)
        if node.input:
            node.input[rng.randrange(len(node.input))] = rng.choice(["", "x", "W", "y", "zz"])
    else:
        m.ir_version = rng.choice([0, 3, 7, 8, 10, 99])


FIELD_MUTATIONS = [_m_dims, _m_dtype, _m_raw, _m_typed, _m_external, _m_attribute, _m_graph]


# --- byte-level mutations -----------------------------------------------------------------------

def _bytes_mutation(rng, data: bytes) -> bytes:
    b = bytearray(data)
    if not b:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 9)))
    choice = rng.random()
    if choice < 0.15 and MARK in b:  # same length: the protobuf stays well-formed
        i = b.index(MARK)
        b[i:i + len(MARK)] = bytes(rng.choice([0xFF, 0xC3, 0x80, 0xED]) for _ in MARK)
    elif choice < 0.45:
        for _ in range(rng.randrange(1, 6)):
            b[rng.randrange(len(b))] = rng.randrange(256)
    elif choice < 0.6:
        b = b[:rng.randrange(len(b))]
    elif choice < 0.75:
        i = rng.randrange(len(b) + 1)
        b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 9)))
    elif choice < 0.85:
        i = rng.randrange(len(b))
        b[i:i] = b[i:i + rng.randrange(1, 64)]
    else:  # a varint blown up to 10 bytes of 0xff: a huge length or value
        i = rng.randrange(len(b))
        b[i:i + 1] = b"\xff" * 9 + b"\x01"
    return bytes(b)


def mutate(rng: random.Random, seed: onnx.ModelProto) -> bytes:
    """One mutated input: 1-3 field mutations, then (half the time) byte mutations."""
    model = onnx.ModelProto()
    model.CopyFrom(seed)
    for _ in range(rng.randrange(0 if rng.random() < 0.3 else 1, 4)):
        try:
            rng.choice(FIELD_MUTATIONS)(rng, model)
        except (ValueError, TypeError):  # protobuf refused the value: keep what applied
            pass
    data = model.SerializeToString()
    if rng.random() < 0.5 or data == seed.SerializeToString():
        for _ in range(rng.randrange(1, 3)):
            data = _bytes_mutation(rng, data)
    return data


# --- running -----------------------------------------------------------------------------------

def _folder(root: str) -> str:
    """root/secret.bin (outside), root/m/ with w.bin, a symlink out, a folder link, a FIFO."""
    with open(os.path.join(root, "secret.bin"), "wb") as f:
        f.write(SECRET.tobytes() * 64)
    folder = os.path.join(root, "m")
    os.makedirs(folder)
    with open(os.path.join(folder, "w.bin"), "wb") as f:
        f.write(WEIGHT.tobytes())
    os.symlink(os.path.join(root, "secret.bin"), os.path.join(folder, "link.bin"))
    os.symlink(root, os.path.join(folder, "dirlink"))
    os.mkfifo(os.path.join(folder, "fifo"))
    return folder


def _feed(predictor) -> list[np.ndarray] | None:
    feeds = []
    for name in predictor.input_names:
        shape = predictor.input_shapes.get(name)
        if shape is None:
            return None
        dims = [d if isinstance(d, int) else 1 for d in shape]
        if any(d < 0 for d in dims) or int(np.prod(dims, dtype=object)) > 1 << 16:
            return None
        feeds.append(np.zeros(dims, np.float32))
    return feeds


def _no_secret(outs) -> None:
    for o in outs if isinstance(outs, list) else [outs]:
        a = np.asarray(o)
        if a.dtype.kind == "f" and a.size and np.any(np.isclose(a, 1234.5)):
            raise AssertionError("a model output holds the secret outside the model's folder")


def open_everywhere(path: str, ort: bool = True) -> list[str]:
    """Every public entry point on ``path``; lets only GluonportError (and
    AssertionError for a leaked secret) escape. Returns the entry points that succeeded."""
    calls = {"import_model": lambda: gluonport.onnx.import_model(path)}
    for backend in ("numpy",) + (("onnxruntime",) if ort else ()):
        calls[f"load+run {backend}"] = lambda b=backend: _load_and_run(path, b)
    passed = []
    for name, call in calls.items():
        try:
            call()
            passed.append(name)
        except GluonportError:
            pass
    return passed


def _load_and_run(path: str, backend: str) -> None:
    predictor = gluonport.load(path, backend=backend)
    feeds = _feed(predictor)
    if feeds is not None:
        _no_secret(predictor(*feeds))


def _quiet(call, *args) -> None:
    try:
        call(*args)
    except BaseException as exc:  # noqa: BLE001 - already recorded by the first run
        if isinstance(exc, KeyboardInterrupt):
            raise


@dataclass
class Stats:
    count: int = 0
    max_seconds: float = 0.0
    slowest: int = -1
    max_peak: int = 0
    worst_ratio: float = 0.0
    failures: list[str] = field(default_factory=list)
    escaped: dict[str, int] = field(default_factory=dict)
    succeeded: dict[str, int] = field(default_factory=dict)  # entry point -> inputs it took


#: whether :func:`campaign` traces each input's allocations (``tracemalloc``). Not on CPython
#: 3.10: with tracing on, whole campaigns there (onnxruntime 1.23.2, numpy 2.2, protobuf's upb)
#: ended in heap corruption -- a segfault or glibc's "double free or corruption" at a
#: different place each time, never reproduced by the input at hand -- in 4 of 13 runs,
#: and in none of 9 without it; tracemalloc's raw-allocator hooks have known races that
#: 3.10 no longer gets fixes for (python/cpython#128679, fixed in 3.12.9 and 3.13.2).
TRACE = sys.version_info >= (3, 11)


def campaign(n: int, seed: int = 0, ort_every: int = 1, stop_after: int = 5,
             stop_tracing: bool = True) -> Stats:
    """Run ``n`` mutated inputs; collect failures (foreign exceptions, leaks, time, memory;
    the traced allocation peak per input where :data:`TRACE`). ``stop_tracing=False`` leaves
    ``tracemalloc`` on at the end, for a process about to exit (``tracemalloc.stop()`` is
    where python/cpython#128679 crashes)."""
    import onnxruntime

    onnxruntime.set_default_logger_severity(4)  # refusals are expected: keep stderr quiet
    rng = random.Random(seed)
    seeds = list(_seeds().values())
    stats = Stats()
    with tempfile.TemporaryDirectory() as root, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        folder = _folder(root)
        path = os.path.join(folder, "model.onnx")
        for model in seeds:  # warm-up, untimed: first imports, onnxruntime start-up
            with open(path, "wb") as f:
                f.write(model.SerializeToString())
            open_everywhere(path)
        if TRACE:
            tracemalloc.start()
        try:
            for i in range(n):
                data = mutate(rng, rng.choice(seeds))
                with open(path, "wb") as f:
                    f.write(data)
                if TRACE:
                    tracemalloc.reset_peak()
                start = time.perf_counter()
                try:
                    for name in open_everywhere(path, ort=i % ort_every == 0):
                        stats.succeeded[name] = stats.succeeded.get(name, 0) + 1
                except BaseException as exc:  # noqa: BLE001 - recorded, the campaign goes on
                    if isinstance(exc, KeyboardInterrupt):
                        raise
                    kind = type(exc).__name__
                    stats.escaped[kind] = stats.escaped.get(kind, 0) + 1
                    stats.failures.append(f"input {i}: {kind}: {str(exc)[:200]}")
                elapsed = time.perf_counter() - start
                peak = tracemalloc.get_traced_memory()[1] if TRACE else 0
                if elapsed >= 1.0:  # timed again: a busy machine must not fail a fast input
                    start = time.perf_counter()
                    _quiet(open_everywhere, path)
                    elapsed = min(elapsed, time.perf_counter() - start)
                stats.count += 1
                if elapsed > stats.max_seconds:
                    stats.max_seconds, stats.slowest = elapsed, i
                stats.max_peak = max(stats.max_peak, peak)
                stats.worst_ratio = max(stats.worst_ratio, peak / (8 * len(data) + BUDGET))
                if elapsed >= 1.0:
                    stats.failures.append(f"input {i}: took {elapsed:.2f} s")
                if len(stats.failures) >= stop_after:
                    break
        finally:
            if stop_tracing and TRACE:
                tracemalloc.stop()
    return stats


def run_isolated(n: int, seed: int, timeout: float = 1200) -> tuple[Stats, int]:
    """``campaign(n, seed)`` in a fresh interpreter (this file with ``--json``): ``(stats,
    bytes its max RSS grew by over the campaign)``. Its own process, so that the RSS growth is
    the campaign's (not hidden under an earlier test's peak) and no other test's threads run
    beside it; it exits without stopping ``tracemalloc`` (see :func:`campaign`)."""
    import json
    import subprocess

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    done = subprocess.run([sys.executable, "-m", "tests.onnx._onnxfuzz", str(n), str(seed),
                           "--json"], cwd=root, capture_output=True, text=True,
                          timeout=timeout)
    if done.returncode != 0 or not done.stdout.strip():
        raise AssertionError(f"the fuzz campaign's process failed (exit {done.returncode}):\n"
                             f"{done.stderr[-3000:]}")
    got = json.loads(done.stdout.strip().splitlines()[-1])
    grown = got.pop("rss_grown")
    return Stats(**got), grown


def _json_main(n: int, seed: int) -> None:
    """Run the campaign, print its figures as one JSON line and leave at once (``os._exit``:
    no ``tracemalloc.stop()``, no interpreter teardown)."""
    import dataclasses
    import json
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    stats = campaign(n, seed, stop_tracing=False)
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024
    print(json.dumps({**dataclasses.asdict(stats), "rss_grown": grown}), flush=True)
    os._exit(0)


def _main(argv: list[str]) -> int:
    n = int(argv[1]) if len(argv) > 1 else 10_000
    seed = int(argv[2]) if len(argv) > 2 else 0
    if "--json" in argv[3:]:
        _json_main(n, seed)
    start = time.perf_counter()
    stats = campaign(n, seed, stop_after=10 ** 9)
    import resource

    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"inputs {stats.count}, wall {time.perf_counter() - start:.1f} s, max per input "
          f"{stats.max_seconds * 1000:.1f} ms (input {stats.slowest}), peak traced "
          f"{stats.max_peak / 2 ** 20:.1f} MiB, worst peak / (8 x input + 64 MiB) "
          f"{stats.worst_ratio:.3f}, process max RSS {rss / 1024:.0f} MiB")
    print(f"escaped: {stats.escaped or 'none'}; accepted (loaded and ran): {stats.succeeded}")
    for line in stats.failures[:30]:
        print(" ", line)
    return 1 if stats.failures else 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv))
