"""Numeric verification of a conversion: the numpy executor vs onnxruntime, same inputs."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import dtypes
from ..errors import ValidationError
from ..executor import GraphPlan
from ..symbol import Symbol
from ..symbol import load as sym_load
from .export import _Graph, _load_params, label_inputs

__all__ = ["verify", "VerifyReport", "OutputError", "random_inputs", "bisect", "BisectResult",
           "compare"]


@dataclass
class OutputError:
    """Error of one output: max absolute, max relative (``|a-b| / (atol + rtol*|b|)`` scale)."""

    name: str
    shape: tuple
    max_abs: float
    max_rel: float
    ok: bool


@dataclass
class VerifyReport:
    """Per-output errors; ``ok`` when every output is within tolerance."""

    outputs: list[OutputError] = field(default_factory=list)
    rtol: float = 1e-4
    atol: float = 1e-5

    @property
    def ok(self) -> bool:
        return all(o.ok for o in self.outputs)

    @property
    def max_abs(self) -> float:
        return max((o.max_abs for o in self.outputs), default=0.0)

    def table(self) -> str:
        rows = [f"{'output':<40} {'shape':<20} {'max abs':>10} {'max rel':>10}  ok"]
        rows += [f"{o.name:<40} {str(o.shape):<20} {o.max_abs:>10.3g} {o.max_rel:>10.3g}  "
                 f"{'yes' if o.ok else 'NO'}" for o in self.outputs]
        return "\n".join(rows)

    def raise_if_failed(self) -> None:
        if not self.ok:
            raise ValidationError("outputs differ beyond tolerance (rtol="
                                  f"{self.rtol}, atol={self.atol}):\n{self.table()}")


def compare(name: str, got: np.ndarray, want: np.ndarray, rtol: float, atol: float
            ) -> OutputError:
    """Max errors of ``got`` against ``want`` (NaNs must match).

    An element passes when ``|got - want| <= atol * scale + rtol * |want|``, ``scale`` being
    ``max(1, max |want|)`` of this output: float32 rounding grows with the magnitude of what
    is summed, so in an output that reaches 50 (box regressions, logits) an element near 0 may
    differ by a few 1e-5 between two correct runtimes; a scale-free ``atol`` would call that a
    mismatch, while real conversion errors stay orders of magnitude above it.
    """
    got = np.asarray(got)
    want = np.asarray(want)
    if got.shape != want.shape:
        return OutputError(name, want.shape, float("inf"), float("inf"), False)
    g = got.astype(np.float64)
    w = want.astype(np.float64)
    nan_ok = bool(np.array_equal(np.isnan(g), np.isnan(w)))
    with np.errstate(invalid="ignore"):  # inf - inf; equal infinities (and NaN pairs) agree
        diff = np.where((g == w) | np.isnan(g) | np.isnan(w), 0.0, np.abs(g - w))
    max_abs = float(diff.max()) if diff.size else 0.0
    rel = diff / (np.abs(w) + 1e-12)
    max_rel = float(np.nanmax(rel)) if rel.size else 0.0
    finite = np.abs(w[np.isfinite(w)])
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    ok = nan_ok and bool(np.all(diff <= atol * scale + rtol * np.abs(np.nan_to_num(w))))
    return OutputError(name, want.shape, max_abs, max_rel, ok)


def random_inputs(shapes: Mapping[str, tuple], types: Mapping[str, Any], seed: int = 0
                  ) -> dict[str, np.ndarray]:
    """Uniform [-1, 1) floats, small non-negative ints (valid as indices), per input."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape in shapes.items():
        dt = np.dtype(dtypes.to_numpy(types.get(name, np.float32)))
        if dt.kind == "f":
            out[name] = rng.uniform(-1, 1, shape).astype(dt)
        elif dt.kind == "b":
            out[name] = rng.integers(0, 2, shape).astype(dt)
        else:
            out[name] = rng.integers(0, 4, shape).astype(dt)
    return out


def _prepare(sym: Any, params: Any, inputs: Mapping[str, Any] | None, in_shapes: Any,
             in_types: Any, seed: int) -> tuple[Symbol, dict, _Graph, dict[str, np.ndarray]]:
    """The symbol, numpy params, inferred graph and input arrays (given or random)."""
    if isinstance(sym, (str, os.PathLike)):
        sym = sym_load(os.fspath(sym))
    pvals = _load_params(params)
    if inputs is not None:
        feed = {k: np.asarray(v._data if hasattr(v, "_data") else v) for k, v in inputs.items()}
        in_shapes = {k: v.shape for k, v in feed.items()}
        in_types = {k: v.dtype for k, v in feed.items()}
    g = _Graph(sym, pvals, in_shapes, in_types, {})
    if inputs is None:
        feed = random_inputs(g.shapes0, g.types0, seed)
    return sym, pvals, g, feed


def verify(sym: Any, params: Any, onnx_model: Any, inputs: Mapping[str, Any] | None = None,
           in_shapes: Any = None, in_types: Any = np.float32, rtol: float = 1e-4,
           atol: float = 1e-5, seed: int = 0, providers: list | None = None) -> VerifyReport:
    """Run the MXNet graph on the numpy executor and the ONNX model on onnxruntime with the
    same inputs; report the max abs/rel error per output.

    ``inputs`` maps input names to arrays; otherwise random inputs of ``in_shapes`` are made.
    """
    import onnxruntime as ort

    from .._onnxfile import read_model

    sym, pvals, g, feed = _prepare(sym, params, inputs, in_shapes, in_types, seed)
    want = _run_numpy(sym, pvals, feed, g)
    model = onnx_model if isinstance(onnx_model, (str, os.PathLike)) else \
        onnx_model.SerializeToString()
    read_model(onnx_model)  # the gate: no external data outside the model's folder
    sess = ort.InferenceSession(model, providers=providers or ["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    got = sess.run(None, {k: feed[k] for k in names})
    report = VerifyReport(rtol=rtol, atol=atol)
    out_names = sym.list_outputs()
    for name, w, o in zip(out_names, want, got):
        report.outputs.append(compare(name, o, w, rtol, atol))
    return report


def _run_numpy(sym: Symbol, pvals: dict, feed: dict, g: _Graph) -> list[np.ndarray]:
    full = dict(pvals)
    full.update(feed)
    labels = label_inputs(g.order)
    shapes = g.shapes
    for node in g.order:
        if node.op is None and node.name in labels and node.name not in full:
            s = shapes.get((id(node), 0)) or (1,)
            full[node.name] = np.zeros(tuple(d or 1 for d in s), np.float32)
    return GraphPlan(sym).run(full)


@dataclass
class BisectResult:
    """The first MXNet node whose ONNX output diverges (``None`` when all agree)."""

    node: str | None
    op: str | None
    error: OutputError | None
    checked: int

    def describe(self) -> str:
        if self.node is None:
            return f"all {self.checked} intermediate outputs agree"
        return (f"first divergence at node {self.node!r} ({self.op}): max abs error "
                f"{self.error.max_abs:.3g}, max rel {self.error.max_rel:.3g} "
                f"(checked {self.checked} outputs in graph order)")


def bisect(sym: Any, params: Any, inputs: Mapping[str, Any] | None = None,
           in_shapes: Any = None, in_types: Any = np.float32, rtol: float = 1e-4,
           atol: float = 1e-5, seed: int = 0, opset: int | None = None) -> BisectResult:
    """Compare every intermediate output of the numpy executor with onnxruntime's, in graph
    order, and name the first node whose output diverges.

    The graph's internal outputs are all exported as ONNX outputs, so one onnxruntime run
    gives every intermediate value.
    """
    import onnxruntime as ort

    from ..symbol import Group
    from .export import export_symbol

    sym, pvals, g, feed = _prepare(sym, params, inputs, in_shapes, in_types, seed)
    internals = [s for s in sym.get_internals() if s._outputs[0][0].op is not None]
    probe = Group(internals)
    model = export_symbol(probe, pvals, g.shapes0, g.types0, opset)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    got = sess.run(None, {i.name: feed[i.name] for i in sess.get_inputs()})
    want = _run_numpy(probe, pvals, feed, _Graph(probe, pvals, g.shapes0, g.types0, {}))
    names = probe.list_outputs()
    for k, (name, w, o) in enumerate(zip(names, want, got)):
        err = compare(name, o, w, rtol, atol)
        if not err.ok:
            node = probe._outputs[k][0]
            return BisectResult(node.name, node.op.name, err, k + 1)
    return BisectResult(None, None, None, len(names))
