"""Do the checkpoints gluonport's importer writes for onnx's backend suite run in MXNet 1.9.1?

Run from the repository root in two steps (the first with gluonport's Python, the second
with the oracle's, MXNet 1.9.1):

    python tests/golden/onnx/check_backend_in_mxnet.py write /tmp/onnx_backend_mx [-k REGEX]
    ~/.cache/gluonport-oracle/bin/python tests/golden/onnx/check_backend_in_mxnet.py check \
        /tmp/onnx_backend_mx [-k REGEX] [--chunk 100]

``write`` takes every backend-suite test ``tests/onnx/test_onnx_backend.py`` includes (the
node, simple and pytorch model tests of the installed onnx that run on the CPU, less the
``EXCLUDE`` categories and the downloaded real models) and, per data set, imports its model as
gluonport's backend does -- graph inputs the import needs as constants (a Reshape's shape fed
as an input) become initializers with the data set's values -- and writes the import with
``gluonport.onnx.export_mxnet`` (``model-symbol.json`` + ``model-0000.params``), the data set's
inputs by graph input name and onnx's expected outputs as ``.npy`` files, and an
``index.json``. Narrow types (bfloat16, float8, float4, int4...) are fed and expected in the
carriers the import computes in (gluonport/onnx/_import_narrow.py); their float grids are
written so ``check`` rounds MXNet's outputs onto them as gluonport's backend does.

``check`` loads every checkpoint with ``mx.model.load_checkpoint``, binds it on the CPU with
the inputs and the arg/aux params, runs forward and compares each output with onnx's expected
one as onnx's backend runner does: the same shape (MXNet 1.x's ``(1,)`` for a 0-d value is
taken as that value, as gluonport's backend reshapes it), the same dtype, then
``assert_allclose`` at the test's rtol/atol (node tests: rtol 1e-3, atol 1e-7; model tests
their ``data.json``'s; bfloat16 outputs at least rtol 2**-6, two bfloat16 ulps). Tests run in
chunks, each in a subprocess; when MXNet aborts the process, the test it was running is
recorded as a crash and the rest of the chunk goes on in a new one. One line per test, a
summary by outcome, exit 1 on any test that does not load and match.

Outcomes: ``ok``; ``mismatch`` / ``shape`` / ``dtype`` (ran, different result); ``load`` /
``bind`` / ``run`` (an MXNet error at that step); ``crash`` (the process died); ``timeout``;
``write`` (gluonport could not import it here, reported by ``write``).

Outcome with onnx 1.23.2 (1,858 included tests): 1,761 load and match in MXNet 1.9.1 (1,740
of 1,855 before the importer fixes this script prompted -- Tile over 3+ axes, Slice of rank > 5,
DeformConv with num_filter not divisible by offset_group, Softplus/Mish via log1p, reductions
over an empty axis as constants, 3-D Col2Im as a Deconvolution: gluonport/onnx/importers/).
The other 97 are graphs MXNet 1.9.1 itself cannot compute, and the importer warns on each
("MXNet 1.9.1 cannot run this graph -- ...; the files load only in gluonport", or "may not
run" for zero-size tensors: gluonport/onnx/_import_mxlimits.py); ``check`` exits 1 only on a
failure the importer did not warn about; ``export_mxnet`` marks each such symbol file with a
top-level ``"gluonport_only"`` attribute holding the warning. By category, with MXNet 1.9.1's error:

* int16 / uint16 / uint32 / uint64 tensors, 76 tests (Add/Sub/Mul/Div/Mod/Pow/Max/Min,
  comparisons, Bitwise*, BitShift, BitCast, DequantizeLinear, TopK on those types): MXNet
  1.9.1 has no such dtype -- ``mx.nd.array`` raises ``KeyError: <class 'numpy.int16'>`` for
  an input, and gluonport's params writer refuses an int16 weight (MXNet's ``load`` fails
  with 'Unknown type enum 8');
* float16 products, 16 tests (Attention / FlexAttention / CausalConvWithState in float16 and
  their ``_expanded`` forms): MXNet 1.9.1's CPU ``dot``/``batch_dot`` ("dot only supports
  float32/float64 for CPU, and float16/float32/float64 for GPU") and ``Convolution``
  ("FP16 gemm on cpu not implemented!") refuse float16, as do FullyConnected, Deconvolution,
  linalg_gemm2 and RNN;
* zero-size tensors, 5 tests (ReduceSum keeping a zero-size axis, Tril/Triu of a zero-size
  matrix, Split into zero-size parts): MXNet 1.x's legacy shapes read 0 as unknown ("Check
  failed: dim_size_is_known(*it): Shape dim size cannot be a negative value -1"; SliceChannel:
  "You are trying to split the 0-th axis of input tensor with shape [-1]"). A zero-size weight
  returned as an output passes (2 tests), hence "may not run".
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


# ----------------------------------------------------------------------------------- write
def _suite():
    """``(EXCLUDE, REAL_MODELS)`` of tests/onnx/test_onnx_backend.py (source parsed, not
    imported: importing it builds onnx's whole BackendTest)."""
    import ast

    with open(os.path.join(ROOT, "tests", "onnx", "test_onnx_backend.py")) as f:
        tree = ast.parse(f.read())
    found = {}
    for node in tree.body:
        target = getattr(node, "target", None) or (node.targets[0] if getattr(
            node, "targets", None) else None)
        if isinstance(target, ast.Name) and target.id in ("EXCLUDE", "REAL_MODELS"):
            found[target.id] = ast.literal_eval(node.value)
    return found["EXCLUDE"], found["REAL_MODELS"]


def included_tests(regex: str = ""):
    """The included backend-suite tests as onnx TestCases, in name order."""
    from onnx.backend.test.loader import load_model_tests

    exclude, real = _suite()
    patterns = [re.compile(p) for ps in exclude.values() for p in ps]
    patterns.append(re.compile(r"^test_(" + "|".join(real) + ")_"))
    import warnings

    out = []
    for kind in ("node", "simple", "pytorch-converted", "pytorch-operator"):
        with warnings.catch_warnings():  # onnx computes its expected outputs on loading
            warnings.simplefilter("ignore")
            cases = load_model_tests(kind=kind)
        for case in cases:
            full = case.name + "_cpu"
            if any(p.search(full) for p in patterns) or not re.search(regex, case.name):
                continue
            out.append(case)
    return sorted(out, key=lambda c: c.name)


def _data_sets(case):
    """``[(inputs, expected outputs)]`` as numpy arrays (model tests read from disk)."""
    import glob

    import onnx
    from onnx import numpy_helper

    def arr(x):
        return numpy_helper.to_array(x) if isinstance(x, onnx.TensorProto) else np.asarray(x)

    if case.model_dir is None:
        return [([arr(x) for x in ins], [arr(y) for y in outs]) for ins, outs in case.data_sets]
    sets = []
    for d in sorted(glob.glob(os.path.join(case.model_dir, "test_data_set*"))):
        def load(pattern, d=d):
            tensors = []
            for i in range(len(glob.glob(os.path.join(d, pattern + "_*.pb")))):
                t = onnx.TensorProto()
                with open(os.path.join(d, f"{pattern}_{i}.pb"), "rb") as f:
                    t.ParseFromString(f.read())
                tensors.append(numpy_helper.to_array(t))
            return tensors
        sets.append((load("input"), load("output")))
    return sets


def _model(case):
    import onnx

    if case.model is not None:
        return case.model
    return onnx.load(os.path.join(case.model_dir, "model.onnx"))


def _export(model, feed: dict, prefix: str, warned: list) -> None:
    """Import ``model`` as gluonport's backend does and write its checkpoint: graph inputs the
    import needs as constants are made initializers with the data set's values first. The
    importer's "MXNet 1.9.1 cannot / may not run" warnings are appended to ``warned``."""
    import warnings

    from onnx import numpy_helper

    from gluonport.errors import UnsupportedOpError
    from gluonport.onnx import export_mxnet
    from gluonport.onnx.backend import GluonportBackend, SpecializingRep

    fixed: dict = {}
    for _ in range(len(model.graph.input) + 1):
        m = model
        if fixed:
            m = type(model)()
            m.CopyFrom(model)
            keep = [i for i in m.graph.input if i.name not in fixed]
            del m.graph.input[:]
            m.graph.input.extend(keep)
            m.graph.initializer.extend(numpy_helper.from_array(v, n) for n, v in fixed.items())
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            rep = GluonportBackend.prepare(m)
            if not isinstance(rep, SpecializingRep):
                try:
                    export_mxnet(m, prefix)
                finally:
                    warned.extend(str(w.message).split(": ", 1)[-1] for w in caught
                                  if re.search(r"MXNet 1\.9\.1 (cannot|may not) run",
                                               str(w.message)))
                return
        more = [n for n in rep.names if n in feed and n not in fixed]
        if not more:
            raise UnsupportedOpError(f"needs constant inputs {rep.names} it was not fed")
        fixed.update({n: feed[n] for n in more})
    raise UnsupportedOpError("import keeps asking for constant inputs")


def _grid(dtype) -> np.ndarray:
    """Every finite value of a narrow float dtype, as sorted float32, then what NaN, +inf and
    -inf become in it (float4 has neither: ml_dtypes' conversion, which gluonport's backend
    uses on its outputs, gives -0 and +-6)."""
    bits = 16 if dtype.itemsize == 2 else 8
    codes = np.arange(2 ** bits, dtype=np.uint16 if bits == 16 else np.uint8)
    with np.errstate(all="ignore"):
        vals = codes.view(dtype).astype(np.float32)
        special = np.array([np.nan, np.inf, -np.inf], np.float32).astype(dtype)
    return np.concatenate([np.unique(vals[np.isfinite(vals)]), special.astype(np.float32)])


def write(folder: str, regex: str = "") -> int:
    from gluonport.onnx._import_narrow import to_carrier

    os.makedirs(folder, exist_ok=True)
    cases = included_tests(regex)
    index, failed = [], 0
    start = time.perf_counter()
    for case in cases:
        model = _model(case)
        inits = {t.name for t in model.graph.initializer}
        names = [i.name for i in model.graph.input if i.name not in inits]
        try:
            sets = _data_sets(case)
        except Exception as exc:  # noqa: BLE001 -- reported per test
            sets, err = [], exc
        for k, (ins, outs) in enumerate(sets):
            entry = f"{case.name}__{k}" if len(sets) > 1 else case.name
            path = os.path.join(folder, entry)
            os.makedirs(path, exist_ok=True)
            feed = {n: to_carrier(np.atleast_1d(x)) for n, x in zip(names, ins)}
            warned: list = []
            try:
                _export(model, feed, os.path.join(path, "model"), warned)
            except Exception as exc:  # noqa: BLE001 -- one line per test, then go on
                failed += 1
                msg = f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
                print(f"{entry:60s} write    {msg}", flush=True)
                index.append({"name": entry, "outcome": "write", "detail": msg,
                              "warned": warned[0] if warned else None})
                continue
            for n, v in feed.items():
                np.save(os.path.join(path, f"in_{n}.npy"), v)
            expected = []
            for i, y in enumerate(outs):
                carried = to_carrier(y)
                narrow = None if carried.dtype == y.dtype else y.dtype.name
                if narrow and carried.dtype.kind == "f":
                    grid = os.path.join(folder, f"grid_{narrow}.npy")
                    if not os.path.exists(grid):
                        np.save(grid, _grid(y.dtype))
                np.save(os.path.join(path, f"out_{i}.npy"), carried)
                expected.append({"narrow": narrow, "shape": list(y.shape)})
            index.append({"name": entry, "inputs": list(feed), "outputs": expected,
                          "rtol": case.rtol, "atol": case.atol,
                          "warned": warned[0] if warned else None})
        if not sets:
            failed += 1
            print(f"{case.name:60s} write    no data sets: {err}", flush=True)
            index.append({"name": case.name, "outcome": "write", "detail": str(err)})
    with open(os.path.join(folder, "index.json"), "w") as f:
        json.dump(index, f, indent=0)
    print(f"wrote {len(index) - failed} checkpoints of {len(cases)} included tests to "
          f"{folder} ({failed} not written, {time.perf_counter() - start:.0f} s)")
    return 0


# ----------------------------------------------------------------------------------- check
def _round_onto(x: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """``x`` converted as ml_dtypes converts to a narrow type: finite values moved to the
    nearest value of the sorted ``grid`` (``_grid``), NaN and infinities to what they become."""
    grid, (nan, pinf, ninf) = grid[:-3], grid[-3:]
    out = x.astype(np.float32).copy()
    out[np.isnan(x)] = nan
    out[x == np.inf] = pinf
    out[x == -np.inf] = ninf
    fin = np.isfinite(out) & (out >= grid[0]) & (out <= grid[-1])
    v = out[fin]
    hi = np.clip(np.searchsorted(grid, v), 1, len(grid) - 1)
    lo = hi - 1
    out[fin] = np.where(np.abs(grid[hi] - v) < np.abs(v - grid[lo]), grid[hi], grid[lo])
    return out


def _check_one(folder: str, e: dict, mx) -> tuple[str, str]:
    path = os.path.join(folder, e["name"])
    try:
        sym, arg, aux = mx.model.load_checkpoint(os.path.join(path, "model"), 0)
    except Exception as exc:  # noqa: BLE001
        return "load", str(exc).strip().splitlines()[0][:300]
    try:
        args = {**arg, **aux}  # BatchNorm's mean/var: in the params file or fed as inputs
        for n in e["inputs"]:
            v = np.load(os.path.join(path, f"in_{n}.npy"))
            args[n] = mx.nd.array(v, dtype=v.dtype)
        wanted = sym.list_arguments() + sym.list_auxiliary_states()
        missing = [n for n in wanted if n not in args]
        if missing:
            return "bind", f"arguments not given: {missing[:4]}"
        ex = sym.bind(mx.cpu(), {n: args[n] for n in sym.list_arguments()},
                      aux_states={n: args[n] for n in sym.list_auxiliary_states()},
                      grad_req="null")
    except Exception as exc:  # noqa: BLE001
        return "bind", _first_line(exc)
    try:
        outs = [o.asnumpy() for o in ex.forward(is_train=False)]
    except Exception as exc:  # noqa: BLE001
        return "run", _first_line(exc)
    if len(outs) != len(e["outputs"]):
        return "shape", f"{len(outs)} outputs, expected {len(e['outputs'])}"
    worst = 0.0
    for i, (got, info) in enumerate(zip(outs, e["outputs"])):
        want = np.load(os.path.join(path, f"out_{i}.npy"))
        if got.shape != want.shape and got.size == want.size and (
                [d for d in got.shape if d != 1] == [d for d in want.shape if d != 1]):
            got = got.reshape(want.shape)
        if got.shape != want.shape:
            return "shape", f"output {i}: {got.shape}, expected {want.shape}"
        if got.dtype != want.dtype:
            return "dtype", f"output {i}: {got.dtype}, expected {want.dtype}"
        rtol = e["rtol"]
        if info["narrow"] and want.dtype.kind == "f":
            got = _round_onto(got, np.load(os.path.join(folder, f"grid_{info['narrow']}.npy")))
            if info["narrow"] == "bfloat16":
                rtol = max(rtol, 2 ** -6)
        try:
            np.testing.assert_allclose(got, want, rtol=rtol, atol=e["atol"])
        except AssertionError:
            with np.errstate(all="ignore"):
                diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
            nans = int((np.isnan(got) != np.isnan(want)).sum()) if want.dtype.kind == "f" else 0
            return "mismatch", (f"output {i}: max abs diff {np.nanmax(diff):.3g}"
                                + (f", {nans} NaN positions differ" if nans else ""))
        if want.size and want.dtype.kind == "f":
            with np.errstate(all="ignore"):
                d = np.abs(got.astype(np.float64) - want)
            worst = max(worst, float(np.nanmax(d)) if np.isfinite(d).any() else 0.0)
    return "ok", f"max abs diff {worst:.2g}"


def mx_error():
    import mxnet as mx

    return mx.base.MXNetError


def _first_line(exc: Exception) -> str:
    if not isinstance(exc, mx_error()):
        return f"{type(exc).__name__}: {exc}"[:300]
    lines = [s for s in str(exc).strip().splitlines() if s.strip()]
    # MXNetError: the message, not the C++ stack trace that follows it
    msg = next((s for s in lines if "Check failed" in s or "Error" in s), lines[0] if lines
               else type(exc).__name__)
    return msg.strip()[:300]


def _child(folder: str, names_file: str, results_file: str) -> int:
    """Check the tests listed in ``names_file``, appending one JSON line per test."""
    import logging

    import mxnet as mx

    logging.disable(logging.WARNING)
    with open(os.path.join(folder, "index.json")) as f:
        entries = {e["name"]: e for e in json.load(f)}
    with open(names_file) as f:
        names = json.load(f)
    with open(results_file, "a") as out:
        for name in names:
            out.write(json.dumps({"name": name, "started": True}) + "\n")
            out.flush()
            outcome, detail = _check_one(folder, entries[name], mx)
            out.write(json.dumps({"name": name, "outcome": outcome, "detail": detail}) + "\n")
            out.flush()
    return 0


def check(folder: str, regex: str = "", chunk: int = 100, timeout: float = 60.0) -> int:
    with open(os.path.join(folder, "index.json")) as f:
        index = [e for e in json.load(f) if re.search(regex, e["name"])]
    results = {e["name"]: (e["outcome"], e["detail"]) for e in index if "outcome" in e}
    warned = {e["name"]: e.get("warned") for e in index}
    for name, (o, d) in sorted(results.items()):  # not written: reported by ``write``
        print(f"{name:60s} {o:8s} {d}{' [importer warned]' if warned[name] else ''}")
    todo = [e["name"] for e in index if "outcome" not in e]
    names_file = os.path.join(folder, "_chunk.json")
    results_file = os.path.join(folder, "_results.jsonl")
    start = time.perf_counter()
    while todo:
        part, todo = todo[:chunk], todo[chunk:]
        with open(names_file, "w") as f:
            json.dump(part, f)
        open(results_file, "w").close()
        stderr = ""
        try:
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), "_child",
                                   folder, names_file, results_file], capture_output=True,
                                  text=True, timeout=timeout * len(part) + 30)
            stderr, died = proc.stderr, proc.returncode != 0
            why = f"crash (exit {proc.returncode})"
        except subprocess.TimeoutExpired as exc:
            stderr, died, why = str(exc.stderr or ""), True, "timeout"
        done, started = {}, None
        with open(results_file) as f:
            for line in f:
                r = json.loads(line)
                if "outcome" in r:
                    done[r["name"]] = (r["outcome"], r["detail"])
                else:
                    started = r["name"]
        results.update(done)
        for name in part:
            if name in done:
                o, d = done[name]
                mark = " [importer warned]" if o != "ok" and warned.get(name) else ""
                print(f"{name:60s} {o:8s} {d}{mark}", flush=True)
        if died:
            rest = [n for n in part if n not in done]
            if started in rest:  # the test that took the process down
                tail = [s for s in stderr.strip().splitlines() if s.strip()
                        and "Subgraph backend MKLDNN" not in s][-1:] or [""]
                outcome = "timeout" if why == "timeout" else "crash"
                results[started] = (outcome, f"{why}: {tail[0][:250]}")
                print(f"{started:60s} {outcome:8s} {results[started][1]}", flush=True)
                rest.remove(started)
            todo = rest + todo
    warned = {e["name"]: e.get("warned") for e in index}
    counts: dict[tuple[str, bool], int] = {}
    for name, (o, _) in results.items():
        key = (o, bool(warned.get(name)))
        counts[key] = counts.get(key, 0) + 1
    with open(os.path.join(folder, "results.json"), "w") as f:
        json.dump({n: [*v, warned.get(n)] for n, v in sorted(results.items())}, f, indent=0)
    ok = counts.get(("ok", False), 0) + counts.get(("ok", True), 0)
    print(f"\n{ok} of {len(results)} checked tests load and match in MXNet "
          f"{__import__('mxnet').__version__} ({time.perf_counter() - start:.0f} s)")
    print("  outcome  tests  (of them, the importer warned 'MXNet 1.9.1 cannot / may not run')")
    for o in sorted({o for o, _ in counts}, key=lambda o: (o != "ok", o)):
        n_warned = counts.get((o, True), 0)
        print(f"  {o:8s} {counts.get((o, False), 0) + n_warned:5d}  ({n_warned})")
    unexplained = [n for n, (o, _) in results.items() if o != "ok" and not warned.get(n)]
    if unexplained:
        print(f"{len(unexplained)} failures the importer did not warn about: "
              f"{', '.join(sorted(unexplained)[:20])}")
    return 1 if unexplained else 0

if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "_child":
        sys.exit(_child(*sys.argv[2:5]))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("step", choices=["write", "check"])
    ap.add_argument("folder")
    ap.add_argument("-k", default="", help="only tests whose name matches this regex")
    ap.add_argument("--chunk", type=int, default=100, help="tests per MXNet subprocess")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per test")
    a = ap.parse_args()
    folder = os.path.abspath(a.folder)
    sys.exit(write(folder, a.k) if a.step == "write" else
             check(folder, a.k, a.chunk, a.timeout))
