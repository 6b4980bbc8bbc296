"""Numeric verification of a conversion: the numpy executor vs onnxruntime, same inputs."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._core import dtypes
from ..errors import ValidationError
from ..symbol import Symbol
from ..symbol import load as sym_load
from ..symbol.executor import GraphPlan
from .export import ExportGraph, label_inputs, load_params

__all__ = ["verify", "VerifyReport", "OutputError", "random_inputs", "bisect", "BisectResult",
           "compare", "compare_outputs", "missing_output"]


@dataclass
class OutputError:
    """Error of one output against its reference.

    ``max_abs``/``max_rel`` are over the elements finite on both sides (``inf`` for a shape
    mismatch or a missing output). ``mismatches`` counts the elements that fail: finite ones
    beyond tolerance and ``nonfinite`` ones, where NaN or +-Inf on one side meets something else
    on the other (a finite value, the other infinity, NaN vs Inf). ``matching_nan`` counts
    NaNs at the same place on both sides, which agree (as do equal infinities).
    """

    name: str
    shape: tuple
    max_abs: float
    max_rel: float
    ok: bool
    mismatches: int = 0
    nonfinite: int = 0
    matching_nan: int = 0
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe fields (a non-finite error is ``None``)."""
        out = dict(self.__dict__)
        out["shape"] = list(self.shape)
        for key in ("max_abs", "max_rel"):
            out[key] = out[key] if np.isfinite(out[key]) else None
        return out

    def remark(self) -> str:
        """What the numbers alone do not say: NaN/Inf disagreements, NaNs that agree."""
        parts = [self.note] if self.note else []
        if self.nonfinite:
            parts.append(f"{self.nonfinite} NaN/Inf where the reference differs")
        if self.matching_nan and self.matching_nan == int(np.prod(self.shape)):
            parts.append("all NaN on both sides: they match, but nothing was compared")
        elif self.matching_nan:
            parts.append(f"{self.matching_nan} NaN at the same place on both sides: match")
        return "; ".join(parts)


@dataclass
class VerifyReport:
    """Per-output errors; ``ok`` when every output is within tolerance.

    ``reference`` and ``candidate`` say which engine ran which side, e.g. ``numpy executor on
    model-symbol.json`` and ``onnxruntime (CPUExecutionProvider) on model.onnx``.
    """

    outputs: list[OutputError] = field(default_factory=list)
    rtol: float = 1e-4
    atol: float = 1e-5
    reference: str = ""
    candidate: str = ""

    @property
    def ok(self) -> bool:
        return all(o.ok for o in self.outputs)

    @property
    def max_abs(self) -> float:
        return max((o.max_abs for o in self.outputs), default=0.0)

    @property
    def mismatches(self) -> int:
        return sum(o.mismatches for o in self.outputs)

    def engines(self) -> str:
        """``reference: ...; candidate: ...`` (empty when neither is known)."""
        if not (self.reference or self.candidate):
            return ""
        return f"reference: {self.reference}; candidate: {self.candidate}"

    def table(self) -> str:
        rows = [f"reference: {self.reference}", f"candidate: {self.candidate}"] \
            if self.engines() else []
        rows.append(f"{'output':<40} {'shape':<20} {'max abs':>10} {'max rel':>10} "
                    f"{'mismatch':>9}  ok")
        for o in self.outputs:
            row = (f"{o.name:<40} {str(o.shape):<20} {o.max_abs:>10.3g} {o.max_rel:>10.3g} "
                   f"{o.mismatches:>9}  {'yes' if o.ok else 'NO'}")
            remark = o.remark()
            rows.append(f"{row}  {remark}" if remark else row)
        return "\n".join(rows)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe summary: ok, engines, tolerances and per-output errors."""
        return {"ok": self.ok, "reference": self.reference, "candidate": self.candidate,
                "rtol": self.rtol, "atol": self.atol,
                "outputs": [o.to_dict() for o in self.outputs]}

    def raise_if_failed(self) -> None:
        if not self.ok:
            raise ValidationError("outputs differ beyond tolerance (rtol="
                                  f"{self.rtol}, atol={self.atol}):\n{self.table()}")


def missing_output(name: str, note: str) -> OutputError:
    """A failed row for an output one side does not produce."""
    return OutputError(name, (), float("inf"), float("inf"), False, 1, 0, 0, note)


def compare(name: str, got: np.ndarray, want: np.ndarray, rtol: float, atol: float
            ) -> OutputError:
    """Errors of ``got`` against the reference ``want``.

    A finite element passes when ``|got - want| <= atol * scale + rtol * |want|``, ``scale``
    being ``max(1, max finite |want|)`` of this output: float32 rounding grows with the
    magnitude of what is summed, so in an output that reaches 50 (box regressions, logits) an
    element near 0 may differ by a few 1e-5 between two correct runtimes; a scale-free ``atol``
    would call that a mismatch, while real conversion errors stay orders of magnitude above it.

    Non-finite elements pass only when both sides hold the same thing: NaN and NaN, +Inf and
    +Inf, -Inf and -Inf. NaN or Inf where the reference is finite (or the reverse, or NaN vs
    Inf, or infinities of opposite sign) is a mismatch, counted in ``nonfinite``.
    """
    got = np.asarray(got)
    want = np.asarray(want)
    if got.shape != want.shape:
        return OutputError(name, want.shape, float("inf"), float("inf"), False, max(want.size, 1),
                           note=f"shape {got.shape} vs reference {want.shape}")
    with np.errstate(all="ignore"):  # nothing here may warn: non-finite values are counted
        g = got.astype(np.float64)
        w = want.astype(np.float64)
        finite = np.isfinite(g) & np.isfinite(w)
        g_nan, w_nan = np.isnan(g), np.isnan(w)
        same = (g_nan & w_nan) | (~finite & (g == w))  # NaN-NaN, equal infinities
        nonfinite = int(np.count_nonzero(~finite & ~same))
        diff = np.abs(g[finite] - w[finite])
        wf = np.abs(w[finite])
        scale = max(1.0, float(wf.max())) if wf.size else 1.0
        bad = int(np.count_nonzero(diff > atol * scale + rtol * wf))
        max_abs = float(diff.max()) if diff.size else 0.0
        max_rel = float((diff / (wf + 1e-12)).max()) if diff.size else 0.0
    mismatches = bad + nonfinite
    return OutputError(name, want.shape, max_abs, max_rel, mismatches == 0, mismatches,
                       nonfinite, int(np.count_nonzero(g_nan & w_nan)))


def random_inputs(shapes: Mapping[str, tuple], types: Mapping[str, Any], seed: int = 0
                  ) -> dict[str, np.ndarray]:
    """Uniform [-1, 1) floats, small non-negative ints (valid as indices), per input.

    Every input is checked against the size budget (:mod:`gluonport._core.budget`) before any is
    made: a declared shape of 40000 x 40000 is a ResourceLimitError, not gigabytes of noise.
    """
    from .._core.budget import check_tensor

    kinds = {name: np.dtype(dtypes.to_numpy(types.get(name, np.float32))) for name in shapes}
    for name, shape in shapes.items():
        check_tensor(f"input {name!r}", shape, kinds[name].itemsize, kinds[name])
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape in shapes.items():
        dt = kinds[name]
        if dt.kind == "f":
            out[name] = rng.uniform(-1, 1, shape).astype(dt)
        elif dt.kind == "b":
            out[name] = rng.integers(0, 2, shape).astype(dt)
        else:
            out[name] = rng.integers(0, 4, shape).astype(dt)
    return out


def _prepare(sym: Any, params: Any, inputs: Mapping[str, Any] | None, in_shapes: Any,
             in_types: Any, seed: int) -> tuple[Symbol, dict, ExportGraph, dict[str, np.ndarray]]:
    """The symbol, numpy params, inferred graph and input arrays (given or random)."""
    if isinstance(sym, (str, os.PathLike)):
        sym = sym_load(os.fspath(sym))
    pvals = load_params(params)
    if inputs is not None:
        feed = {k: np.asarray(v._data if hasattr(v, "_data") else v) for k, v in inputs.items()}
        in_shapes = {k: v.shape for k, v in feed.items()}
        in_types = {k: v.dtype for k, v in feed.items()}
    g = ExportGraph(sym, pvals, in_shapes, in_types, {})
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
    from .._core.onnxfile import read_model
    from .._core.ortsession import inference_session

    graph_file = os.fspath(sym) if isinstance(sym, (str, os.PathLike)) else None
    sym, pvals, g, feed = _prepare(sym, params, inputs, in_shapes, in_types, seed)
    want = _run_numpy(sym, pvals, feed, g)
    on_disk = isinstance(onnx_model, (str, os.PathLike))
    model = os.fspath(onnx_model) if on_disk else onnx_model.SerializeToString()
    read_model(onnx_model)  # the gate: no external data outside the model's folder
    sess = inference_session(model, providers=providers or ["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    got = sess.run(None, {k: feed[k] for k in names})
    report = VerifyReport(
        rtol=rtol, atol=atol,
        reference=f"numpy executor on {graph_file or 'the MXNet graph'}",
        candidate=f"onnxruntime ({', '.join(sess.get_providers())}) on "
                  f"{model if on_disk else 'the ONNX model in memory'}")
    report.outputs = compare_outputs(sym.list_outputs(), got, want, rtol, atol)
    return report


def compare_outputs(names: list[str], got: list, want: list, rtol: float, atol: float
                    ) -> list[OutputError]:
    """:func:`compare` per output, named by the reference's ``names``; an output one side
    lacks is a failed row (never silently dropped)."""
    rows = [compare(n, o, w, rtol, atol) for n, o, w in zip(names, got, want)]
    for k in range(len(rows), max(len(got), len(want))):
        name = names[k] if k < len(names) else f"output {k}"
        rows.append(missing_output(name, "only the candidate has it" if k < len(got)
                                   else "the candidate does not produce it"))
    return rows


def _run_numpy(sym: Symbol, pvals: dict, feed: dict, g: ExportGraph) -> list[np.ndarray]:
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
    from .._core.ortsession import inference_session
    from ..symbol import Group
    from .export import export_symbol

    sym, pvals, g, feed = _prepare(sym, params, inputs, in_shapes, in_types, seed)
    internals = [s for s in sym.get_internals() if s._outputs[0][0].op is not None]
    probe = Group(internals)
    model = export_symbol(probe, pvals, g.shapes0, g.types0, opset)
    sess = inference_session(model.SerializeToString(), providers=["CPUExecutionProvider"])
    got = sess.run(None, {i.name: feed[i.name] for i in sess.get_inputs()})
    want = _run_numpy(probe, pvals, feed, ExportGraph(probe, pvals, g.shapes0, g.types0, {}))
    names = probe.list_outputs()
    for k, (name, w, o) in enumerate(zip(names, want, got)):
        err = compare(name, o, w, rtol, atol)
        if not err.ok:
            node = probe._outputs[k][0]
            return BisectResult(node.name, node.op.name, err, k + 1)
    return BisectResult(None, None, None, len(names))
