"""Generate MXNet 1.9.1 golden input gradients for the per-op case tables (issue 14).

Run with the oracle's Python (never by the test suite):

    ~/.cache/gluonport-oracle/bin/python tests/golden/ops/gen_grads.py [family ...]
    ~/.cache/gluonport-oracle/bin/python tests/golden/ops/gen_grads.py --ops OPLIST [MXNET_SRC]

Gradients: for each row of ``tests/ops/cases_<family>.py`` (``CASES`` under
``autograd.record(train_mode=False)``, ``TRAIN_CASES`` under ``record(train_mode=True)``), the
inputs are built exactly as ``gen_ops.py`` builds them (its ``make_input``/``find_op`` and the
same per-case seed, so ``<case>/in<i>`` equals ``<family>.npz``'s and the script checks it);
every floating-point input gets ``attach_grad()`` (integer inputs get none), the op runs, and
``mx.autograd.backward(outputs, head_grads)`` runs with one head gradient per visible
floating-point output: ``RandomState(hg_seed(seed, j)).standard_normal(shape)`` cast to the
output's dtype. ``tests/golden/ops/grad_<family>.npz`` holds ``<case>/in<i>``, ``<case>/hg<j>``
(``j`` counts the visible outputs; integer outputs have none and take no part) and
``<case>/grad<i>`` (floating inputs only). ``grad_status.json`` maps every case to
``{"family", "op", "train_mode", "status", "message"}`` with status
    "ok"            backward ran and some gradient is non-zero
    "zero"          backward ran and every gradient is exactly zero (MXNet's zero-gradient rule)
    "error"         MXNet raised (message: the line of MXNet's error that states it)
    "no_float_input"  no floating-point input, so MXNet records nothing to differentiate
    "no_float_output" no floating-point visible output to take a head gradient
    "unstable"      backward ran four times (four processes, same inputs and seeds; one with
                    MXNet's memory pool pre-filled with NaN) and gave different gradients: it
                    reads memory it never wrote, so no golden is kept (``<case>/grad<i>`` left out)
Where oneDNN's gradient is unstable or differs from MXNet's own kernel, the row is also run with
``MXNET_MKLDNN_ENABLED=0`` and that gradient is kept (the entry's ``note`` says so).
A row whose forward output differs from ``<family>.npz`` (beyond float rounding) is reported.

Op table (``--ops``): OPLIST is a file of op names (gluonport's registry, one a line). For each
name ``grad_ops_mxnet.json`` records what MXNet 1.9.1 registers: whether the name exists, its
canonical name (aliases resolve to it), and where a case row uses the op, the backward graph
MXNet builds for it (``simple_bind`` with every float input requiring a gradient: the ops of
the backward nodes, ``zeros_like`` meaning MakeZeroGradNodes) or the error it gives. With
MXNET_SRC (a checkout of the 1.9.1 tag) it adds the ``FGradient`` text of the op's
registration in ``src/operator``. Deterministic: re-running gives the same files.
"""
import glob
import importlib.util
import json
import os
import pickle
import re
import signal
import subprocess
import sys
import tempfile
import traceback

os.environ.setdefault("MXNET_SUBGRAPH_BACKEND", "NONE")  # bound graphs as built, not fused
if sys.argv[1:2] in (["--amp"], ["--native"]):  # MXNet's own kernels instead of oneDNN's
    os.environ["MXNET_MKLDNN_ENABLED"] = "0"

import ctypes  # noqa: E402

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_detection  # noqa: E402  (its find_op: gen_ops's, plus mx.nd.contrib and _npx_ aliases)
import gen_ops  # noqa: E402  (same make_input, seeds and CASES_DIR as the forward goldens)
import mxnet as mx  # noqa: E402
from mxnet.base import _LIB, c_str, check_call, py_str  # noqa: E402

find_op = gen_detection.find_op
ZERO_OPS = {"zeros_like", "_zeros"}  # MakeZeroGradNodes and MXNet's zero-gradient ops

STATUS_PATH = os.path.join(HERE, "grad_status.json")
OPS_PATH = os.path.join(HERE, "grad_ops_mxnet.json")


def case_seed(name):
    """The per-case seed gen_ops.run_case uses."""
    return gen_ops.zlib.crc32(name.encode()) & 0x7FFFFFFF


def hg_seed(seed, j):
    """Seed of the head gradient for visible output ``j`` of a case with seed ``seed``."""
    return (seed + 104729 * (j + 1)) % (2 ** 31)


def is_float(dtype):
    return np.dtype(dtype).kind == "f"


def error_line(exc):
    """The line of an MXNetError that states the problem (not the traceback frames)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    for ln in lines:
        if ln.startswith("MXNetError:") or ln.startswith("Check failed"):
            return ln[len("MXNetError:"):].strip() if ln.startswith("MXNetError:") else ln
    for ln in lines:
        if not (ln.startswith("Traceback") or ln.startswith("File ") or ln.startswith("[bt]")
                or ln.startswith("Stack trace")):
            return ln
    return lines[0] if lines else type(exc).__name__


def clean(line):
    """A message without its log timestamp and source location (deterministic files)."""
    return re.sub(r"\[\d\d:\d\d:\d\d\] \S+:\d+: ", "", line)


def load_table(family):
    path = os.path.join(gen_ops.CASES_DIR, f"cases_{family}.py")
    spec = importlib.util.spec_from_file_location("cases_" + family, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def build_inputs(case):
    seed = case_seed(case["name"])
    return seed, [gen_ops.make_input(s, seed + i) for i, s in enumerate(case["inputs"])]


def grad_case(case, train, arrays, fwd):
    """Run one row forward and backward in MXNet; fill ``arrays``; return its status entry."""
    name = case["name"]
    seed, ins = build_inputs(case)
    entry = {"op": case["op"], "train_mode": train}
    for i, x in enumerate(ins):
        arrays[f"{name}/in{i}"] = x
    floats = [i for i, x in enumerate(ins) if is_float(x.dtype)]
    if not floats:
        entry.update(status="no_float_input", message="no floating-point input to attach_grad")
        return entry
    nds = [mx.nd.array(x, dtype=x.dtype) for x in ins]
    for i in floats:
        nds[i].attach_grad()
    try:
        mx.random.seed(seed)
        with mx.autograd.record(train_mode=train):
            out = find_op(case["op"])(*nds, **case.get("attrs", {}))
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        heads, hgs = [], []
        for j, o in enumerate(outs):
            if not is_float(o.dtype):
                continue
            hg = np.random.RandomState(hg_seed(seed, j)).standard_normal(o.shape).astype(o.dtype)
            arrays[f"{name}/hg{j}"] = hg
            heads.append(o)
            hgs.append(mx.nd.array(hg, dtype=hg.dtype))
        check_forward(case, outs, fwd, entry)
        try:
            entry["backward_ops"] = backward_graph(case["op"], ins, case.get("attrs", {}),
                                                   len(outs))
        except (mx.base.MXNetError, RuntimeError) as exc:  # simple_bind re-raises RuntimeError
            entry["backward_error"] = clean(error_line(exc))
        if not heads:
            entry.update(status="no_float_output", message="no floating-point visible output")
            return entry
        mx.autograd.backward(heads, hgs, train_mode=train)
        grads = {i: nds[i].grad.asnumpy() for i in floats}
        mx.nd.waitall()
    except mx.base.MXNetError as exc:
        for k in [k for k in arrays if k.startswith(name + "/hg")]:
            del arrays[k]
        entry.update(status="error", message=clean(error_line(exc)))
        return entry
    for i, g in grads.items():
        arrays[f"{name}/grad{i}"] = g
    allzero = all(not np.any(g) for g in grads.values())
    by_rule = entry.get("backward_ops") is not None and set(entry["backward_ops"]) <= ZERO_OPS
    if allzero and not by_rule:
        entry["note"] = "every gradient is zero for these inputs, but not by a zero-gradient rule"
    entry.update(status="zero" if by_rule else "ok", message="")
    return entry


def op_info(name):
    """``(canonical name, key_var_num_args)`` of a registered op name (aliases resolve)."""
    handle = ctypes.c_void_p()
    check_call(_LIB.NNGetOpHandle(c_str(name), ctypes.byref(handle)))
    real, desc, kv, ret = (ctypes.c_char_p() for _ in range(4))
    nargs = ctypes.c_uint()
    names, types, descs = (ctypes.POINTER(ctypes.c_char_p)() for _ in range(3))
    check_call(_LIB.MXSymbolGetAtomicSymbolInfo(
        handle, ctypes.byref(real), ctypes.byref(desc), ctypes.byref(nargs), ctypes.byref(names),
        ctypes.byref(types), ctypes.byref(descs), ctypes.byref(kv), ctypes.byref(ret)))
    return py_str(real.value), py_str(kv.value)


def backward_graph(op, ins, attrs, n_out):
    """Ops of the backward nodes MXNet's gradient pass builds for ``op`` (``simple_bind`` of a
    one-op symbol, every float input ``grad_req='write'``), or raises MXNetError."""
    real, var_num = op_info(gen_detection.NPX_ALIASES.get(op, op))
    attrs = {k: str(v) for k, v in attrs.items()}
    if var_num and var_num not in attrs:
        attrs[var_num] = str(len(ins))  # as MXNet's Python front end adds it
    nodes = [{"op": "null", "name": f"in{i}", "inputs": []} for i in range(len(ins))]
    nodes.append({"op": real, "name": "fwd", "attrs": attrs,
                  "inputs": [[i, 0, 0] for i in range(len(ins))]})
    graph = {"nodes": nodes, "arg_nodes": list(range(len(ins))),
             "node_row_ptr": list(range(len(nodes) + 1)),
             "heads": [[len(ins), j, 0] for j in range(n_out)],
             "attrs": {"mxnet_version": ["int", 10901]}}
    sym = mx.sym.load_json(json.dumps(graph))
    shapes = {f"in{i}": x.shape for i, x in enumerate(ins)}
    types = {f"in{i}": x.dtype for i, x in enumerate(ins)}
    reqs = {f"in{i}": "write" if is_float(x.dtype) else "null" for i, x in enumerate(ins)}
    exe = sym.simple_bind(mx.cpu(), grad_req=reqs, type_dict=types, **shapes)
    found = re.findall(r"^Op:([^,]+), Name=(.*)$", exe.debug_str(), re.M)
    return sorted({o for o, n in found if n != "fwd" and not re.match(r"_head_grad_\d+_id$", n)})


def check_forward(case, outs, fwd, entry):
    """Compare the recorded forward with the forward golden (same inputs, same seed)."""
    name, sel = case["name"], case.get("compare")
    if sel == "shape":
        return
    for i, o in enumerate(outs):
        key = f"{name}/out{i}"
        if key not in fwd or (isinstance(sel, list) and i not in sel):
            continue
        got, want = o.asnumpy().astype(np.float64), fwd[key].astype(np.float64)
        if got.shape != want.shape or not np.allclose(got, want, rtol=1e-3, atol=1e-4,
                                                      equal_nan=True):
            entry["forward_differs"] = f"out{i} differs from the forward golden"


def in_child(fn, *args):
    """``(True, fn(*args))`` computed in a forked child, or ``(False, why)`` when the child dies
    (some MXNet backward kernels segfault or corrupt the heap), so one crash costs one row."""
    rfd, wfd = os.pipe()
    err = tempfile.TemporaryFile()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # child
        os.close(rfd)
        os.dup2(err.fileno(), 2)
        code = 0
        try:
            result = fn(*args)
            with os.fdopen(wfd, "wb") as w:
                pickle.dump(result, w, protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException:  # noqa: B902  (reported by the parent)
            traceback.print_exc()
            code = 1
        finally:
            os._exit(code)
    os.close(wfd)
    with os.fdopen(rfd, "rb") as r:
        data = r.read()
    _, wstatus = os.waitpid(pid, 0)
    err.seek(0)
    said = [ln.strip() for ln in err.read().decode("utf-8", "replace").splitlines()
            if ln.strip() and "Subgraph backend" not in ln]
    err.close()
    if data and os.WIFEXITED(wstatus) and os.WEXITSTATUS(wstatus) == 0:
        return True, pickle.loads(data)
    if os.WIFSIGNALED(wstatus):
        sig = os.WTERMSIG(wstatus)
        why = f"MXNet crashed: signal {sig} ({signal.Signals(sig).name})"
    else:
        why = f"the process exited with status {os.WEXITSTATUS(wstatus)}"
    crash = [ln for ln in said if "Segmentation fault" in ln or "free()" in ln
             or not ln.startswith("Traceback") and "Error" in ln]
    if crash:
        why = f"MXNet crashed: {clean(crash[0])}"
    return False, why


def isolated(fn, case, train, arrays, fwd):
    """``fn(case, train, arrays, fwd)`` in a forked child; a crash is that row's error."""
    def work(poison):
        if poison:  # MXNet's storage pool hands freed blocks back: fill them with NaN first
            for k in range(2, 22):
                mx.nd.full((1 << k,), np.nan).wait_to_read()
            mx.nd.waitall()
        part = {}
        return part, fn(case, train, part, fwd)
    done, result = in_child(work, False)
    if done:
        part, entry = result
        unstable = set()
        for poison in (True, False, False):  # some garbage shows only in some processes
            again_done, again = in_child(work, poison)
            unstable |= {k for k in part if k.rsplit("/", 1)[1].startswith("grad") and (
                not again_done or k not in again[0] or again[0][k].tobytes() != part[k].tobytes())}
        unstable = sorted(unstable)
        if unstable:  # e.g. a backward kernel that reads memory it never wrote
            part = {k: v for k, v in part.items() if k not in unstable}
            entry.update(status="unstable", message=(
                "MXNet's gradient differs between identical runs: "
                + ", ".join(k.rsplit("/", 1)[1] for k in unstable)))
        arrays.update(part)
        return entry
    _, ins = build_inputs(case)
    for i, x in enumerate(ins):
        arrays[f"{case['name']}/in{i}"] = x
    return {"op": case["op"], "train_mode": train, "status": "error", "message": result}


def run_rows(rows, family, fwd, fwd_name):
    """Gradients of ``rows`` (``(case, train)`` pairs): ``(arrays, status)``; every input must
    equal the forward golden's ``fwd`` (``fwd_name``) byte for byte."""
    arrays, status = {}, {}
    for case, train in rows:
        entry = isolated(grad_case, case, train, arrays, fwd)
        entry["family"] = family
        status[case["name"]] = entry
        for i in range(len(case["inputs"])):
            key = f"{case['name']}/in{i}"
            if key not in fwd:
                entry["input_check"] = f"{key} missing from {fwd_name}"
            elif (fwd[key].dtype, fwd[key].shape, fwd[key].tobytes()) != (
                    arrays[key].dtype, arrays[key].shape, arrays[key].tobytes()):
                raise SystemExit(f"{key} differs from {fwd_name}: inputs must match gen_ops")
    return arrays, status


def load_npz(name):
    path = os.path.join(HERE, name)
    if not os.path.exists(path):
        return {}
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


def amp_rows(outdir):
    """``--amp OUTDIR``: cases_unary.AMP_CASES with MKLDNN off (as gen_amp.py makes amp.npz)."""
    rows = [(c, False) for c in load_table("unary").AMP_CASES]
    arrays, status = run_rows(rows, "unary", load_npz("amp.npz"), "amp.npz")
    np.savez(os.path.join(outdir, "amp.npz"), **arrays)
    with open(os.path.join(outdir, "amp.json"), "w") as f:
        json.dump(status, f)


def family_rows(family):
    mod = load_table(family)
    return [(c, False) for c in mod.CASES] + [(c, True) for c in getattr(mod, "TRAIN_CASES", [])]


def native_rows(outdir, family):
    """``--native OUTDIR FAMILY``: the family's rows with MKLDNN (oneDNN) off."""
    arrays, status = run_rows(family_rows(family), family, load_npz(f"{family}.npz"),
                              f"{family}.npz")
    np.savez(os.path.join(outdir, "native.npz"), **arrays)
    with open(os.path.join(outdir, "native.json"), "w") as f:
        json.dump(status, f)


def grads_of(arrays, name):
    return {k: v for k, v in arrays.items() if k.startswith(name + "/grad")}


def prefer_native(arrays, status, family):
    """Where oneDNN's gradient is unstable or differs from MXNet's own kernel (rtol 1e-4,
    atol 1e-5; e.g. max pooling recorded in predict mode runs oneDNN's backward without the
    forward workspace), keep the native kernel's gradient when that one is stable."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, os.path.abspath(__file__), "--native", tmp, family],
                       check=True)
        native = load_npz(os.path.join(tmp, "native.npz"))
        with open(os.path.join(tmp, "native.json")) as f:
            nstatus = json.load(f)
    for name, entry in status.items():
        if name not in nstatus or nstatus[name]["status"] not in ("ok", "zero") or (
                "forward_differs" in nstatus[name]):  # another forward: not this row's gradient
            continue
        mine, theirs = grads_of(arrays, name), grads_of(native, name)
        same = entry["status"] in ("ok", "zero") and mine.keys() == theirs.keys() and all(
            np.allclose(mine[k].astype(np.float64), theirs[k].astype(np.float64), rtol=1e-4,
                        atol=1e-5, equal_nan=True) for k in mine)
        if same or entry["status"] not in ("ok", "zero", "unstable"):
            continue
        was = entry["message"] or "differs from MXNet's native kernel"
        arrays.update(theirs)
        status[name] = dict(nstatus[name], note=(
            "gradient from MXNET_MKLDNN_ENABLED=0: with oneDNN, " + was))


def run_family(family):
    mod = load_table(family)
    rows = family_rows(family)
    arrays, status = run_rows(rows, family, load_npz(f"{family}.npz"), f"{family}.npz")
    prefer_native(arrays, status, family)
    if getattr(mod, "AMP_CASES", None):
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([sys.executable, os.path.abspath(__file__), "--amp", tmp], check=True)
            arrays.update(load_npz(os.path.join(tmp, "amp.npz")))
            with open(os.path.join(tmp, "amp.json")) as f:
                status.update(json.load(f))
    target = os.path.join(HERE, f"grad_{family}.npz")
    np.savez_compressed(target, **arrays)
    counts = {}
    for e in status.values():
        counts[e["status"]] = counts.get(e["status"], 0) + 1
    print(f"{family}: {len(status)} rows {counts} -> {target}")
    return status


def all_families():
    return sorted(os.path.basename(p)[6:-3]
                  for p in glob.glob(os.path.join(gen_ops.CASES_DIR, "cases_*.py")))


def write_status(families):
    status = {}
    if os.path.exists(STATUS_PATH):
        with open(STATUS_PATH) as f:
            status = {k: v for k, v in json.load(f).items() if v.get("family") not in families}
    for fam in families:
        status.update(run_family(fam))
    with open(STATUS_PATH, "w") as f:
        json.dump(dict(sorted(status.items())), f, indent=1, sort_keys=True)
        f.write("\n")


def macros_without_fgradient(src):
    """Names of the registration macros under ``src/operator`` whose body sets no FGradient."""
    found = set()
    for path in glob.glob(os.path.join(src, "src", "operator", "**", "*.[ch]*"), recursive=True):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for m in re.finditer(r"^#define (MXNET_[A-Z0-9_]*REGISTER[A-Z0-9_]*)\((?:.*\\\n)*.*$",
                             text, re.M):
            if "FGradient" not in m.group(0):
                found.add(m.group(1))
    return found


REG_START = re.compile(
    r"^\s*(NNVM_REGISTER_OP|MXNET_[A-Z0-9_]*REGISTER[A-Z0-9_]*)\(\s*([A-Za-z0-9_]+)", re.M)


def source_index(src):
    """``{op or alias name: (file, registration macro, FGradient text or None)}`` from the
    registrations in ``src/operator`` (one chained statement per registration)."""
    index, plain = {}, macros_without_fgradient(src)
    for path in sorted(glob.glob(os.path.join(src, "src", "operator", "**", "*.c*"),
                                 recursive=True)):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        starts = list(REG_START.finditer(text))
        for k, m in enumerate(starts):
            line_start = text.rfind("\n", 0, m.start())
            if m.group(1).startswith("MXNET_") and "#define" in text[line_start:m.start()]:
                continue
            end = starts[k + 1].start() if k + 1 < len(starts) else len(text)
            chunk = text[m.start():end]  # the chain up to the next registration
            grad = None
            g = chunk.find('FGradient>("FGradient"')
            if g >= 0:
                depth = 0
                for i in range(g, len(chunk)):
                    depth += chunk[i] == "("
                    depth -= chunk[i] == ")"
                    if depth == 0 and chunk[i] == ")":
                        break
                grad = " ".join(chunk[g + len('FGradient>("FGradient",'):i].split())
            rel = os.path.relpath(path, src)
            names = [m.group(2)] + re.findall(r'\.add_alias\("([^"]+)"\)', chunk)
            for n in names:
                if n not in index or grad and not index[n][2]:
                    index[n] = (rel, m.group(1), grad, m.group(1) in plain)
    return index


def probe(name):
    """Bind ``name`` on float inputs with no attributes: MXNet's gradient pass runs before
    shape inference, so a missing FGradient shows as its error whatever the shapes."""
    h = ctypes.c_void_p()
    check_call(_LIB.NNGetOpHandle(c_str(name), ctypes.byref(h)))
    for n_in in (1, 2, 3):
        try:
            backward_graph(name, [np.zeros((2, 2), "float32")] * n_in, {}, 1)
            return None
        except (mx.base.MXNetError, RuntimeError) as exc:
            line = clean(error_line(exc))
            if "non-differentiable" in line:
                return line
    return None


def ops_table(op_list, src):
    """The per-op facts of ``grad_ops_mxnet.json`` (see the module docstring)."""
    with open(op_list) as f:
        names = sorted({ln.strip() for ln in f if ln.strip()})
    with open(STATUS_PATH) as f:
        rows = json.load(f)
    index = source_index(src) if src else {}
    table = {}
    for name in names:
        entry = {}
        try:
            real, _ = op_info(gen_detection.NPX_ALIASES.get(name, name))
        except mx.base.MXNetError:
            table[name] = {"registered": False, "kind": "not_in_mxnet"}
            continue
        entry.update(registered=True, canonical=real)
        if real in index or name in index:
            path, macro, grad, plain = index.get(real) or index[name]
            entry.update(source=path, macro=macro, fgradient_source=grad)
            if macro != "NNVM_REGISTER_OP":
                entry["macro_sets_fgradient"] = not plain
        mine = {k: v for k, v in rows.items()
                if op_info(gen_detection.NPX_ALIASES.get(v["op"], v["op"]))[0] == real}
        seen = sorted({o for v in mine.values() for o in v.get("backward_ops") or []})
        errors = sorted({v.get("backward_error") or v["message"] for v in mine.values()
                         if v["status"] == "error" or v.get("backward_error")})
        if mine:
            entry["case_rows"] = {k: v["status"] for k, v in sorted(mine.items())}
        if seen:
            entry["backward_ops"] = seen
        if errors:
            entry["errors"] = errors
        refused = next((e for e in errors if "non-differentiable" in e), None)
        if not refused and not mine:
            done, refused = in_child(probe, real)
            refused = refused if done else None
        grad = entry.get("fgradient_source") or ""
        real_bw = [o for o in seen if o not in ZERO_OPS]
        entry["basis"] = "runtime"
        if refused:
            entry.update(kind="no_fgradient", refusal=refused)
        elif seen and not real_bw:
            entry["kind"] = "zero"
        elif real_bw:
            entry["kind"] = "fgradient"
        else:
            entry["basis"] = "source"
            if "MakeZeroGradNodes" in grad:
                entry["kind"] = "zero"
            elif grad or entry.get("macro") == "MXNET_REGISTER_OP_PROPERTY":
                entry["kind"] = "fgradient"  # legacy ops: the wrapper registers _backward_<op>
            elif entry.get("macro") == "NNVM_REGISTER_OP" or entry.get(
                    "macro_sets_fgradient") is False:
                entry.update(kind="no_fgradient", refusal=(  # src/nnvm/gradient.cc's message
                    f"Operator {real} is non-differentiable because it didn't register "
                    "FGradient attribute."))
            else:
                entry["kind"] = "unknown"  # a registration macro may add FGradient itself
        bw = [o for o in seen if o.startswith("_backward_")]
        bw += re.findall(r'"(_backward_[A-Za-z0-9_]+)"', grad)
        if bw:
            entry["backward_op"] = sorted(set(bw))
        table[name] = entry
    with open(OPS_PATH, "w") as f:
        json.dump(table, f, indent=1, sort_keys=True)
        f.write("\n")
    counts = {}
    for e in table.values():
        counts[e["kind"]] = counts.get(e["kind"], 0) + 1
    print(f"{len(table)} ops {counts} -> {OPS_PATH}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--amp"]:
        amp_rows(sys.argv[2])
    elif sys.argv[1:2] == ["--native"]:
        native_rows(sys.argv[2], sys.argv[3])
    elif sys.argv[1:2] == ["--ops"]:
        ops_table(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
    else:
        write_status(sys.argv[1:] or all_families())
