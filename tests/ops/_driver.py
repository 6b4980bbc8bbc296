"""One op test driver: every row of every ``tests/ops/cases_<family>.py``, checked every way.

:func:`check_op` runs one case one way against MXNet 1.9.1's outputs (the family's golden npz,
``tests/ops/_check.py``):

    nd            ``nd.<op>(*inputs, **attrs)``
    sym           shape/type inference agree with the outputs; the executor gives them
    json          the symbol's JSON reloads to the same JSON, and the reloaded graph runs
    onnx<N>       export at opset N (the family's lowest and the newest; ``-params`` also gives
                  the inputs that are weights in real models as initializers), ``onnx.checker``
                  full check, onnxruntime's outputs
    import        the newest-opset export imported back (``gluonport.onnx.import_graph``) and run
                  by the numpy executor

Tolerances are the case row's (``rtol``/``atol``/``compare``); a family may loosen them for the
ONNX ways only (``onnx_tol`` below, with the reason). A way a case cannot do is skipped with a
stated reason: the row's ``skip_sym`` (sym, json) or ``no_import``, the op's ``OpDef.no_onnx``
(after checking that export refuses it by name), or the family's ``no_export`` table.
:data:`FAMILIES` holds what the old per-family export tests knew beyond the rows; family test
files keep only their own checks.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import pytest

from gluonport.errors import UnsupportedOpError
from gluonport.onnx import MIN_OPSET, import_graph, max_opset
from gluonport.ops import registry
from tests.onnx._export_check import export_case, run_ort
from tests.ops._check import _compare, check_json, check_nd, check_sym, forward, load_golden

NEWEST = max_opset()


def _none(case: dict) -> list[str]:
    return []


def _lowest(case: dict) -> int:
    return MIN_OPSET


@dataclass(frozen=True)
class Family:
    """What the driver needs to know about a family beyond its case rows.

    Attributes
    ----------
    tables : names of the case lists in ``cases_<family>.py``
    goldens : golden npz files holding the family's outputs
    params : inputs that are weights in real models; each ONNX way runs again with them as
        initializers (``onnx<N>-params``)
    params_only : export only with ``params`` as initializers (no graph-input run)
    lowest : the lowest opset the case's lowering supports
    extra_opsets : opsets checked besides the lowest and the newest
    no_export : case name -> why the case's graph cannot be exported
    onnx_tol : case name -> tolerances for the ONNX ways (export, import)
    ort_kernels_may_lack : skip, naming the kernel, where onnxruntime has no kernel for a
        valid model (NOT_IMPLEMENTED)
    ort_max_opset : above this opset onnx's reference evaluator runs the model
    """

    tables: tuple[str, ...] = ("CASES",)
    goldens: tuple[str, ...] = ()
    params: Callable[[dict], list[str]] = _none
    params_only: bool = False
    lowest: Callable[[dict], int] = _lowest
    extra_opsets: Callable[[dict], list[int]] = _none
    no_export: dict[str, str] = field(default_factory=dict)
    onnx_tol: dict[str, dict] = field(default_factory=dict)
    ort_kernels_may_lack: bool = False
    ort_max_opset: int | None = None


def _after_data(case: dict) -> list[str]:
    """Every input after the data (weight, bias, moving statistics...)."""
    return [f"in{i}" for i in range(1, len(case["inputs"]))]


def _conv_params(case: dict) -> list[str]:
    """Nearest UpSampling's extra inputs are data."""
    if case["op"] == "UpSampling" and case["attrs"]["sample_type"] == "nearest":
        return []
    return _after_data(case)


def _nn_params(case: dict) -> list[str]:
    """FullyConnected's weight/bias, PReLU's gamma."""
    if case["op"] == "FullyConnected" or case.get("attrs", {}).get("act_type") == "prelu":
        return _after_data(case)
    return []


def _contrib_params(case: dict) -> list[str]:
    """Deformable convolution's weight and bias."""
    if "Deformable" not in case["op"]:
        return []
    first = 3 if "Modulated" in case["op"] else 2
    return [f"in{i}" for i in range(first, len(case["inputs"]))]


# ops whose ONNX lowering needs a newer opset than 13 (GridSample 16, DeformConv 19)
_CONTRIB_LOWEST = {"BilinearSampler": 16, "SpatialTransformer": 16,
                   "_contrib_DeformableConvolution": 19,
                   "_contrib_ModulatedDeformableConvolution": 19}


def _contrib_lowest(case: dict) -> int:
    return _CONTRIB_LOWEST.get(case["op"], MIN_OPSET)


def _detection_params(case: dict) -> list[str]:
    """Anchors (box_decode, MultiBoxDetection)."""
    if case["op"] == "_contrib_box_decode":
        return ["in1"]
    if case["op"] in ("_contrib_MultiBoxDetection", "_npx_multibox_detection"):
        return ["in2"]
    return []


def _roialign_lowest(case: dict) -> int:
    """ROIAlign's aligned=True needs RoiAlign's coordinate_transformation_mode (opset 16)."""
    return 16 if case.get("attrs", {}).get("aligned") else MIN_OPSET


_ROI_OPS = {"ROIPooling", "_npx_roi_pooling", "_contrib_ROIAlign"}


def _roi_extra(case: dict) -> list[int]:
    """The ROI ops change ONNX version at 22; 21 is the last of the old versions."""
    return [21] if registry.find(case["op"]).name in _ROI_OPS else []


def _by_name(table: dict[str, list[str]]) -> Callable[[dict], list[str]]:
    return lambda case: table.get(case["name"], [])


_RRELU = "the rrelu mask output is refused; see test_export_nn.py's test_rrelu_*"
_PROJ = "ONNX LSTM has no projection (projection_size); see test_projection_refused_with_reason"

FAMILIES: dict[str, Family] = {
    "bitwise": Family(lowest=lambda case: 18),  # ONNX's Bitwise* ops are opset 18
    "contrib": Family(params=_contrib_params, lowest=_contrib_lowest),
    "conv": Family(params=_conv_params),
    "detection": Family(params=_detection_params, lowest=_roialign_lowest,
                        extra_opsets=_roi_extra, ort_kernels_may_lack=True),
    "elemwise": Family(params=lambda c: ["in1"] if len(c["inputs"]) == 2 else []),
    "image": Family(),
    "indexing": Family(params=_by_name({
        "embedding": ["in1"], "embedding_2d_int": ["in1"], "take_wrap": ["in0"],
        "index_copy": ["in2"], "scatter_nd": ["in1"]}), params_only=True),
    "init": Family(),
    "linalg": Family(),
    "nn": Family(params=_nn_params, no_export={"rrelu_inference": _RRELU,
                                               "rrelu_bounds": _RRELU}),
    "norm": Family(params=_after_data),
    "output": Family(tables=("CASES", "TRAIN_CASES")),
    "pool": Family(),
    "random": Family(ort_max_opset=21),  # onnxruntime runs random ops up to opset 21
    # ONNX CumSum on float16 data sums in float32 and rounds once; MXNet rounds the running
    # sum to float16 after every step: 40 steps of values in [0, 4) stay within 5e-3 relative.
    "reduce": Family(onnx_tol={"cumsum_float16_steps": {"rtol": 5e-3, "atol": 0.0}}),
    "rnn": Family(params=lambda c: ["in1"] if c["op"] == "RNN" else [], params_only=True,
                  no_export={"lstm_projection": _PROJ, "lstm_projection_2layer_bidir": _PROJ}),
    "roi": Family(lowest=_roialign_lowest, extra_opsets=_roi_extra,
                  ort_kernels_may_lack=True),
    "sequence": Family(),
    "shape": Family(params=_by_name({
        "reshape_like": ["in1"], "slice_like_axes": ["in1"], "concat_three_sizes": ["in2"],
        "broadcast_like_axes": ["in1"], "stack_axis0": ["in1"]}), params_only=True),
    "sort": Family(),
    "unary": Family(tables=("CASES", "AMP_CASES"), goldens=("unary", "amp")),
}

_GOLDEN: dict[str, dict] = {}
_NEWEST_EXPORT: dict[tuple[str, str], tuple] = {}  # (family, case) -> (model, data feed)


def golden(family: str) -> dict:
    """The family's golden outputs by case name (loaded once)."""
    if family not in _GOLDEN:
        merged: dict = {}
        for name in FAMILIES[family].goldens or (family,):
            merged.update(load_golden(name))
        _GOLDEN[family] = merged
    return _GOLDEN[family]


def cases(family: str) -> list[dict]:
    """Every row of the family's case tables."""
    module = importlib.import_module(f"tests.ops.cases_{family}")
    return [c for t in FAMILIES[family].tables for c in getattr(module, t)]


def onnx_ways(family: str, case: dict) -> list[str]:
    """``onnx<N>`` (and ``onnx<N>-params``) for the lowest, extra and newest opsets."""
    fam = FAMILIES[family]
    opsets = sorted({fam.lowest(case), *fam.extra_opsets(case), NEWEST})
    kinds = ["-params"] if fam.params_only and fam.params(case) else [""]
    if not fam.params_only and fam.params(case):
        kinds.append("-params")
    return [f"onnx{o}{k}" for o in opsets for k in kinds]


def ways(family: str, case: dict) -> list[str]:
    return ["nd", "sym", "json", *onnx_ways(family, case), "import"]


def params() -> Iterator:
    """``pytest.param((family, case), how, id=f"{family}-{case name}-{how}")`` for all."""
    for family in FAMILIES:
        for case in cases(family):
            for how in ways(family, case):
                yield pytest.param(family, case, how, id=f"{family}-{case['name']}-{how}")


def check_op(family: str, case: dict, how: str) -> None:
    """Run ``case`` (a row of ``cases_<family>.py``) one way; see the module docstring."""
    gold = golden(family)[case["name"]]
    if how == "nd":
        check_nd(case, gold)
    elif how in ("sym", "json"):
        if case.get("skip_sym"):
            pytest.skip(f"{case['name']}: no symbolic checks: {case['skip_sym']}")
        (check_sym if how == "sym" else check_json)(case, gold)
    elif how.startswith("onnx"):
        opset, _, kind = how[4:].partition("-")
        _check_onnx(family, case, gold, int(opset), kind == "params")
    elif how == "import":
        _check_import(family, case, gold)
    else:
        raise ValueError(f"unknown way {how!r}")


def _no_export(family: str, case: dict, gold: dict, opset: int) -> None:
    """Skip (with the reason) a case whose graph cannot be exported, after checking that the
    exporter says so."""
    op = registry.find(case["op"])
    if op.no_onnx or not op.onnx_handlers:
        with pytest.raises(UnsupportedOpError, match=re.escape(op.name)):
            export_case(case, gold, opset)
        pytest.skip(f"{op.name}: no ONNX export (refusal checked): {op.no_onnx or 'not yet'}")
    reason = FAMILIES[family].no_export.get(case["name"])
    if reason:
        pytest.skip(reason)


def _run(family: str, model, feed: dict) -> list[np.ndarray]:
    fam = FAMILIES[family]
    if fam.ort_max_opset and model.opset_import[0].version > fam.ort_max_opset:
        from onnx.reference import ReferenceEvaluator

        ref = ReferenceEvaluator(model)
        return ref.run(None, {k: v for k, v in feed.items() if k in ref.input_names})
    try:
        return run_ort(model, feed)
    except Exception as exc:  # onnxruntime's NOT_IMPLEMENTED has no public exception class
        if not fam.ort_kernels_may_lack or "NOT_IMPLEMENTED" not in str(exc):
            raise
        pytest.skip(f"onnxruntime has no kernel: {str(exc).split(':')[-1].strip()}")


def _check_onnx(family: str, case: dict, gold: dict, opset: int, as_params: bool) -> None:
    """Export (checked by ``onnx.checker``) -> onnxruntime equals MXNet's outputs."""
    _no_export(family, case, gold, opset)
    given = FAMILIES[family].params(case) if as_params else []
    model, _, data, _ = export_case(case, gold, opset, given)
    if opset == NEWEST and not given:  # the import way, run next, reads it back
        _NEWEST_EXPORT[(family, case["name"])] = model, data
    row = {**case, **FAMILIES[family].onnx_tol.get(case["name"], {})}
    what = f"onnx opset {opset}" + (f" params {given}" if given else "")
    _compare(row, _run(family, model, data), gold["outputs"], what)


def _check_import(family: str, case: dict, gold: dict) -> None:
    """The newest-opset export, imported back, gives MXNet's outputs on the numpy executor."""
    _no_export(family, case, gold, NEWEST)
    if case.get("no_import"):
        pytest.skip(f"{case['name']}: not imported back: {case['no_import']}")
    cached = _NEWEST_EXPORT.pop((family, case["name"]), None)
    model, data = cached or export_case(case, gold, NEWEST)[::2]
    back = import_graph(model, check=False)  # export_case ran onnx.checker's full check
    feed = {**{k: v for k, v in data.items() if k in back.input_names},
            **back.arg_params, **back.aux_params}
    row = {**case, **FAMILIES[family].onnx_tol.get(case["name"], {})}
    _compare(row, forward(back.sym, feed), gold["outputs"], "onnx import")
