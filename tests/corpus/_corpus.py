"""Checks of one corpus model (made by ``gen_corpus.py``) against MXNet's recorded outputs.

Each ``check_*`` function returns ``None`` on success or raises :class:`CorpusFailure` with a
one-line reason and, where known, the first failing node. ``test_corpus.py`` and ``report.py``
both call them. Tolerances: ``meta.json``'s ``rtol``/``atol`` (1e-4 relative, 1e-5 absolute
unless a model documents why not); detector outputs behind NMS/topk/sort are compared by shape
only (random weights tie their scores, so the kept boxes depend on the tie order), and the
inputs of those ops (``internals.npz``) at the model's tolerance.

The absolute tolerance is scaled by each tensor's magnitude, ``atol * max|MXNet|`` (at least
1e-9): float32 accumulation error in a deep net is relative to the scale of the tensor, not of
each element (an element near zero in a tensor reaching 40 differs by ~1e-4 between MKL-DNN's
and numpy's summation orders), and a tensor whose values are all ~1e-3 (SqueezeNet's random
logits) must not pass on a fixed 1e-5.
"""

from __future__ import annotations

import functools
import json
import os
import tempfile
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

import gluonport as mx
from gluonport.onnx.verify import compare

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "tests", "golden", "large", "corpus")
CHECKS = ("executor", "infer_shape", "onnx_static", "onnx_dynamic", "roundtrip", "runtime")


class CorpusFailure(AssertionError):
    """A corpus check failed: ``reason`` (one line) and the first failing ``node`` if known."""

    def __init__(self, model: str, check: str, reason: str, node: str | None = None):
        self.model, self.check, self.reason, self.node = model, check, reason, node
        where = f"; first failing node: {node}" if node else ""
        super().__init__(f"{model} [{check}]: {reason}{where}")


class CorpusSkip(Exception):
    """A check that cannot run for this model (reason given), e.g. no importer yet."""


def model_names() -> list[str]:
    if not os.path.isdir(CORPUS):
        return []
    return sorted(n for n in os.listdir(CORPUS)
                  if os.path.exists(os.path.join(CORPUS, n, "meta.json")))


def skipped_models() -> dict[str, str]:
    """Models the generator could not build/export in MXNet, with the reason."""
    path = os.path.join(CORPUS, "_skipped.json")
    return json.load(open(path)) if os.path.exists(path) else {}


@dataclass
class Model:
    name: str
    path: str
    meta: dict

    @property
    def prefix(self) -> str:
        return os.path.join(self.path, "model")

    @property
    def tol(self) -> tuple[float, float]:
        return float(self.meta["rtol"]), float(self.meta["atol"])

    @property
    def modes(self) -> list[str]:
        return [o["compare"] for o in self.meta["outputs"]]

    @property
    def batch4(self) -> bool:
        return bool(self.meta["batch4"]["ok"])

    def input(self, batch: int = 1) -> np.ndarray:
        return np.load(os.path.join(self.path, "input.npy" if batch == 1 else "input_b4.npy"))

    def expected(self, batch: int = 1) -> list[np.ndarray]:
        z = np.load(os.path.join(self.path, "outputs.npz" if batch == 1 else "outputs_b4.npz"))
        return [z[f"o{k}"] for k in range(len(z.files))]

    def internals(self) -> dict[str, np.ndarray]:
        path = os.path.join(self.path, "internals.npz")
        if not os.path.exists(path):
            return {}
        z = np.load(path)
        return {k: z[k] for k in self.meta.get("internals", [])}

    def labels(self, batch: int) -> dict[str, np.ndarray]:
        return {k: np.zeros((batch,), np.float32) for k in self.meta.get("labels", {})}


@functools.lru_cache(maxsize=4)
def load(name: str) -> Model:
    path = os.path.join(CORPUS, name)
    with open(os.path.join(path, "meta.json")) as f:
        return Model(name, path, json.load(f))


@functools.lru_cache(maxsize=2)
def checkpoint(name: str) -> tuple[Any, dict, dict]:
    m = load(name)
    return mx.model.load_checkpoint(m.prefix, 0)


def _params(name: str) -> dict[str, np.ndarray]:
    _, arg, aux = checkpoint(name)
    return {k: v.asnumpy() for k, v in {**arg, **aux}.items()}


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    marker = "have no ONNX converter: "
    if marker in first:  # "...: Cast (n1, n2, ...); _arange (n3); ..." -> the op names
        ops = [part.split(" (", 1)[0].strip() for part in first.split(marker, 1)[1].split("; ")]
        return f"no ONNX converter for {', '.join(o for o in ops if o)}"
    if first.endswith(":") and len(text) > 1:  # a list follows: keep its first entries
        first = first + " " + "; ".join(t.strip(" -*") for t in text[1:4])
    return f"{type(exc).__name__}: {first[:400]}"


def _node_of_unsupported(exc: BaseException) -> str | None:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    marker = "have no ONNX converter: "
    if marker not in first:
        return None
    part = first.split(marker, 1)[1]
    op, rest = part.split(" (", 1) if " (" in part else (part, "")
    node = rest.split(",", 1)[0].split(")", 1)[0]
    return f"{node} ({op.strip()})" if node else None


# --------------------------------------------------------------------------- comparison

def compare_outputs(m: Model, check: str, got: list, want: list, modes: list[str] | None = None,
                    what: str = "output") -> list[str]:
    """Reasons for each output of ``got`` that differs from ``want`` (empty when all agree)."""
    rtol, atol = m.tol
    modes = modes or m.modes
    names = [o["name"] for o in m.meta["outputs"]]
    if len(got) != len(want):
        return [f"{len(got)} {what}s, MXNet has {len(want)}"]
    bad = []
    for k, (g, w) in enumerate(zip(got, want)):
        g = np.asarray(g)
        label = names[k] if k < len(names) and what == "output" else f"{what} {k}"
        if g.shape != w.shape:
            bad.append(f"{label}: shape {g.shape}, MXNet {w.shape}")
        elif modes[k] == "full":
            err = compare(label, g, w, rtol, _scaled(atol, w))
            if not err.ok:
                bad.append(f"{label}: max abs err {err.max_abs:.3g} (max |MXNet| "
                           f"{float(np.abs(w).max()) if w.size else 0:.3g})")
    return bad


def _scaled(atol: float, want: np.ndarray) -> float:
    """The corpus bounds errors by ``atol * max|want|`` (tighter than compare()'s own
    ``atol * max(1, max|want|)`` for outputs below 1): the atol to give compare() for that."""
    finite = np.abs(want[np.isfinite(want)]) if want.size else want
    top = float(finite.max()) if finite.size else 0.0
    return max(atol * top / max(1.0, top), 1e-9)


def _compare_internals(m: Model, got: dict[str, np.ndarray]) -> list[str]:
    rtol, atol = m.tol
    bad = []
    for name, want in m.internals().items():
        g = np.asarray(got[name])
        err = compare(name, g, want, rtol, _scaled(atol, want))
        if not err.ok:
            bad.append(f"internal {name}: shape {g.shape} vs {want.shape}, max abs err "
                       f"{err.max_abs:.3g}")
    return bad


# --------------------------------------------------------------------------- executor

def run_executor(name: str, batch: int = 1, symbol: Any = None) -> list[np.ndarray]:
    """Our numpy executor on the checkpoint (``load_checkpoint`` + ``bind`` + ``forward``)."""
    m = load(name)
    sym, arg, aux = checkpoint(name)
    sym = symbol if symbol is not None else sym
    feed = {"data": m.input(batch), **m.labels(batch)}
    args = {}
    for n in sym.list_arguments():
        args[n] = mx.nd.array(feed[n]) if n in feed else arg[n]
    aux_states = {n: aux[n] for n in sym.list_auxiliary_states()}
    exe = sym.bind(mx.cpu(), args=args, aux_states=aux_states, grad_req="null")
    return [o.asnumpy() for o in exe.forward(is_train=False)]


def _bisect_hint(name: str, batch: int = 1) -> str | None:
    """Where the numpy executor and onnxruntime first disagree (a hint at the faulty op)."""
    m = load(name)
    sym, _, _ = checkpoint(name)
    try:
        res = mx.onnx.bisect(sym, _params(name), inputs={"data": m.input(batch)},
                             rtol=m.tol[0], atol=m.tol[1])
    except Exception as exc:
        return f"(bisect failed: {_first_line(exc)})"
    return None if res.node is None else f"{res.node} ({res.op})"


def check_executor(name: str) -> None:
    m = load(name)
    try:
        got = run_executor(name)
    except Exception as exc:
        raise CorpusFailure(name, "executor", _first_line(exc), _node_of(exc)) from None
    bad = compare_outputs(m, "executor", got, m.expected())
    if m.internals():
        sym, _, _ = checkpoint(name)
        internals = sym.get_internals()
        group = mx.sym.Group([internals[n] for n in m.internals()])
        try:
            vals = run_executor(name, symbol=group)
        except Exception as exc:
            raise CorpusFailure(name, "executor", "internals: " + _first_line(exc),
                                _node_of(exc)) from None
        bad += _compare_internals(m, dict(zip(m.internals(), vals)))
    if bad:
        hint = _bisect_hint(name)
        node = f"numpy vs onnxruntime first differ at {hint}" if hint else None
        raise CorpusFailure(name, "executor", "; ".join(bad[:3]), node)


def _node_of(exc: BaseException) -> str | None:
    """The node named in a gluonport error message (``node 'x' (op): ...``)."""
    text = str(exc)
    if "node '" not in text:
        return _node_of_unsupported(exc)
    rest = text.split("node '", 1)[1]
    node = rest.split("'", 1)[0]
    op = rest.split("(", 1)[1].split(")", 1)[0] if rest.split("'", 1)[1].startswith(" (") \
        else None
    return f"{node} ({op})" if op else node


# --------------------------------------------------------------------------- infer_shape

def check_infer_shape(name: str) -> None:
    m = load(name)
    sym, _, _ = checkpoint(name)
    internals = sym.get_internals()
    given = {"data": tuple(m.meta["inputs"]["data"])}
    given.update({k: tuple(v) for k, v in m.meta.get("labels", {}).items()})
    want = m.meta["internal_shapes"]
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _, out_shapes, _ = internals.infer_shape(**given)
    except Exception as exc:
        raise CorpusFailure(name, "infer_shape", _first_line(exc), _node_of(exc)) from None
    if out_shapes is None:
        _, partial, _ = internals.infer_shape_partial(**given)
        first = next((k for k, s in zip(internals.list_outputs(), partial)
                      if (not s or 0 in s) and want.get(k)), None)
        msg = str(caught[-1].message) if caught else "incomplete"
        raise CorpusFailure(name, "infer_shape", f"{msg} (MXNet infers them from the data "
                            f"shape alone)", _op_of(sym, first) if first else None)
    ours = dict(zip(internals.list_outputs(), out_shapes))
    missing = [k for k in want if k not in ours]
    if missing:
        raise CorpusFailure(name, "infer_shape", f"{len(missing)} internal outputs MXNet has "
                            f"are missing, e.g. {missing[:3]}")
    for k in internals.list_outputs():
        w = want.get(k)
        if w is not None and tuple(ours[k] or ()) != tuple(w):
            raise CorpusFailure(name, "infer_shape", f"{k}: ours {tuple(ours[k] or ())}, "
                                f"MXNet {tuple(w)}", _op_of(sym, k))


def _op_of(sym: Any, out_name: str) -> str:
    internals = sym.get_internals()
    for k, n in enumerate(internals.list_outputs()):
        if n == out_name:
            node = internals._outputs[k][0]
            return f"{node.name} ({node.op.name if node.op else 'variable'})"
    return out_name


# --------------------------------------------------------------------------- ONNX

def _export(name: str, path: str, dynamic: bool, symbol: Any = None) -> None:
    m = load(name)
    sym, _, _ = checkpoint(name)
    kw: dict[str, Any] = {"dynamic_axes": {"data": {0: "batch"}}} if dynamic else {}
    mx.onnx.export_model(symbol if symbol is not None else sym, _params(name),
                         in_shapes={"data": tuple(m.meta["inputs"]["data"])},
                         in_types=np.float32, onnx_file_path=path, **kw)


def _ort(path: str, x: np.ndarray) -> list[np.ndarray]:
    import onnxruntime as ort

    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    return sess.run(None, {sess.get_inputs()[0].name: x})


def _onnx_failure(name: str, check: str, bad: list[str], batch: int = 1) -> CorpusFailure:
    hint = _bisect_hint(name, batch)
    return CorpusFailure(name, check, "; ".join(bad[:3]), hint)


def _check_internals_onnx(name: str, check: str, tmp: str) -> None:
    m = load(name)
    if not m.internals():
        return
    sym, _, _ = checkpoint(name)
    internals = sym.get_internals()
    group = mx.sym.Group([internals[n] for n in m.internals()])
    path = os.path.join(tmp, "internals.onnx")
    try:
        _export(name, path, False, group)
        vals = _ort(path, m.input())
    except Exception as exc:
        raise CorpusFailure(name, check, "internals: " + _first_line(exc), _node_of(exc)) \
            from None
    bad = _compare_internals(m, dict(zip(m.internals(), vals)))
    if bad:
        raise _onnx_failure(name, check, bad)


def check_onnx_static(name: str) -> None:
    m = load(name)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.onnx")
        try:
            _export(name, path, False)
            got = _ort(path, m.input())
        except Exception as exc:
            raise CorpusFailure(name, "onnx_static", _first_line(exc), _node_of(exc)) \
                from None
        bad = compare_outputs(m, "onnx_static", got, m.expected())
        if bad:
            raise _onnx_failure(name, "onnx_static", bad)
        _check_internals_onnx(name, "onnx_static", tmp)


def check_onnx_dynamic(name: str) -> None:
    """Dynamic batch axis: batch 1 vs MXNet, batch 4 vs MXNet's batch-4 outputs."""
    m = load(name)
    if not m.batch4:
        raise CorpusSkip("MXNet itself runs this graph at batch 1 only ("
                         f"{m.meta['batch4']['reason'][:150]})")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.onnx")
        try:
            _export(name, path, True)
        except Exception as exc:
            raise CorpusFailure(name, "onnx_dynamic", _first_line(exc), _node_of(exc)) \
                from None
        for batch in (1, 4) if m.batch4 else (1,):
            try:
                got = _ort(path, m.input(batch))
            except Exception as exc:
                raise CorpusFailure(name, "onnx_dynamic", f"batch {batch}: {_first_line(exc)}",
                                    _ort_node(exc)) from None
            bad = compare_outputs(m, "onnx_dynamic", got, m.expected(batch))
            if bad:
                raise _onnx_failure(name, "onnx_dynamic", [f"batch {batch}: {b}" for b in bad],
                                    batch)


def _ort_node(exc: BaseException) -> str | None:
    """The ONNX node named in an onnxruntime error (``... node. Name:'X' ...``)."""
    text = str(exc)
    if "Name:'" in text:
        return "onnx node " + text.split("Name:'", 1)[1].split("'", 1)[0]
    return _node_of(exc)


def check_roundtrip(name: str) -> None:
    """MXNet -> ONNX -> ``import_model`` -> numpy executor equals MXNet's outputs."""
    try:
        from gluonport.onnx.importer import import_model
    except ImportError as exc:
        raise CorpusSkip(f"gluonport.onnx.importer is not available: {exc}") from None
    m = load(name)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.onnx")
        try:
            _export(name, path, False)
        except Exception as exc:
            raise CorpusFailure(name, "roundtrip", "export: " + _first_line(exc),
                                _node_of(exc)) from None
        try:
            sym, arg, aux = import_model(path)
            in_name = [n for n in sym.list_arguments() if n not in arg][0]
            args = {n: (mx.nd.array(m.input()) if n == in_name else arg[n])
                    for n in sym.list_arguments()}
            exe = sym.bind(mx.cpu(), args=args, aux_states=aux, grad_req="null")
            got = [o.asnumpy() for o in exe.forward(is_train=False)]
        except Exception as exc:
            raise CorpusFailure(name, "roundtrip", "import/run: " + _first_line(exc),
                                _node_of(exc)) from None
    bad = compare_outputs(m, "roundtrip", got, m.expected())
    if bad:
        raise CorpusFailure(name, "roundtrip", "; ".join(bad[:3]))


# --------------------------------------------------------------------------- runtime

def check_runtime(name: str) -> None:
    """``gluonport.load`` on onnxruntime vs on numpy, at batch 1 and batch 4."""
    m = load(name)
    shape_only = [mode == "shape" for mode in m.modes]
    try:
        ort_model = mx.load(m.prefix, 0, backend="onnxruntime")
        np_model = mx.load(m.prefix, 0, backend="numpy")
    except Exception as exc:
        raise CorpusFailure(name, "runtime", "load: " + _first_line(exc), _node_of(exc)) \
            from None
    for batch in (1, 4) if m.batch4 else (1,):
        x = m.input(batch)
        try:
            a = _as_list(ort_model(x))
        except Exception as exc:
            raise CorpusFailure(name, "runtime", f"onnxruntime batch {batch}: "
                                f"{_first_line(exc)}", _ort_node(exc)) from None
        try:
            b = _as_list(np_model(x))
        except Exception as exc:
            raise CorpusFailure(name, "runtime", f"numpy batch {batch}: {_first_line(exc)}",
                                _node_of(exc)) from None
        modes = ["shape" if s else "full" for s in shape_only]
        bad = compare_outputs(m, "runtime", a, [np.asarray(v) for v in b], modes)
        if bad:
            raise _onnx_failure(name, "runtime", [f"batch {batch} ort vs numpy: {r}"
                                                  for r in bad], batch)


def _as_list(out: Any) -> list:
    return list(out) if isinstance(out, list) else [out]


CHECK_FUNCS = {"executor": check_executor, "infer_shape": check_infer_shape,
               "onnx_static": check_onnx_static, "onnx_dynamic": check_onnx_dynamic,
               "roundtrip": check_roundtrip, "runtime": check_runtime}
