"""Every op's gradient rule (``OpDef.gradient``), on every row of every case table.

Ways (test ids ``<family>-<case>-<way>``):

    golden    the imperative tape's input gradients equal MXNet 1.9.1's for the row's inputs
              and a random head gradient (``tests/golden/ops/grad_<family>.npz``, made by
              ``tests/golden/ops/gen_grads.py``; rtol 1e-4 / atol 1e-5 unless the row says
              ``grad_rtol``/``grad_atol``: float32 accumulation order differs)
    graph     the same through the backward graph of the op's Symbol (``symbol/_backward.py``),
              run by the numpy executor: the rule written once serves ``F = sym`` too
    onnx      both halves of that graph exported to ONNX at the newest opset and run by
              onnxruntime (inference-mode rows; training-mode lowering is not exported;
              skipped with the reason where a backward kernel states ``no_onnx``)
    numeric   float64 central differences of ``sum(head * op(x))`` (the op's forward compute
              only) against the tape (rtol 1e-5 / atol 1e-7; rows may set ``fd_rtol``/``fd_atol``
              or ``no_fd`` with the reason, e.g. kinks: relu at 0; ``fd_wrt``: the input
              positions to difference, leaving out float inputs used as indices/lengths)
    (rows may say ``no_grad_golden`` with the reason MXNet's gradient is no reference)
    status    rows MXNet refuses to differentiate (``grad_status.json``) are refused here too

A row whose op has no gradient rule yet is skipped, naming the op; ``tests/ops/test_coverage.py``
holds the list of ops still without one, so the skip list can only shrink.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import UnsupportedOpError
from gluonport.onnx import max_opset
from gluonport.ops import registry
from tests.ops._driver import FAMILIES
from tests.ops._gradcheck import (
    GOLDEN_DIR,
    check_grad_golden,
    check_grad_graph,
    check_grad_numeric,
    load_grad_golden,
    make_inputs,
)

_GOLDENS: dict[str, dict] = {}


def _golden(family: str) -> dict:
    if family not in _GOLDENS:
        _GOLDENS[family] = load_grad_golden(family)
    return _GOLDENS[family]


def _status() -> dict:
    path = os.path.join(GOLDEN_DIR, "grad_status.json")
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        return json.load(f)


STATUS = _status()

#: The opset the onnx way exports at: the newest that onnxruntime has every kernel of these
#: graphs for (DeformConv needs 19; onnxruntime 1.32 has no RoiAlign-22 kernel).
GRAD_OPSET = min(max_opset(), 21)

#: Rows MXNet 1.9.1 refuses to differentiate where gluonport deliberately does not, and why.
REFUSAL_DIFFERS = {
    "sort_default": "MXNet's sort backward fails only when axis was left at its default (it "
                    "copies an empty attribute string); gluonport cannot tell that from "
                    "axis=-1, which MXNet differentiates, so both are differentiated",
    "sort_descending": "as sort_default (axis left at its default)",
    "mdcn": "MXNet 1.9.1 computes DCNv2's backward on GPU only (its CPU backward raises); "
            "gluonport differentiates it on CPU (checked by finite differences)",
    "mdcn_groups_no_bias": "as mdcn: MXNet's CPU backward raises",
}
_TRAIN_TABLES = {"TRAIN_CASES"}


def _rows():
    for family, fam in FAMILIES.items():
        import importlib

        module = importlib.import_module(f"tests.ops.cases_{family}")
        for table in fam.tables:
            for case in getattr(module, table):
                yield family, case, table in _TRAIN_TABLES


ROWS = list(_rows())


def _needs_rule(case: dict) -> registry.OpDef:
    op = registry.get(case["op"])
    if op.gradient is None:
        pytest.skip(f"{op.name} has no gradient rule yet")
    return op


def _golden_for(family: str, case: dict) -> dict:
    """The family's golden, skipping rows without a rule, without a recorded MXNet gradient,
    or whose MXNet gradient is not a reference (``no_grad_golden``: the reason, e.g. MXNet
    reads memory its forward pass never wrote)."""
    _needs_rule(case)
    if case.get("no_grad_golden"):
        pytest.skip(case["no_grad_golden"])
    golden = _golden(family)
    if case["name"] not in golden:
        pytest.skip("no MXNet gradient recorded for this row")
    return golden


@pytest.mark.parametrize("family, case, train", [
    pytest.param(f, c, t, id=f"{f}-{c['name']}-golden") for f, c, t in ROWS
    if STATUS.get(c["name"], {}).get("status") == "ok"])
def test_golden(family, case, train):
    golden = _golden_for(family, case)
    check_grad_golden(case, golden, train)


@pytest.mark.parametrize("family, case, train", [
    pytest.param(f, c, t, id=f"{f}-{c['name']}-graph") for f, c, t in ROWS
    if STATUS.get(c["name"], {}).get("status") == "ok"])
def test_graph(family, case, train):
    golden = _golden_for(family, case)
    if case.get("skip_sym"):
        pytest.skip(case["skip_sym"])
    check_grad_graph(case, golden, train)


@pytest.mark.parametrize("family, case", [
    pytest.param(f, c, id=f"{f}-{c['name']}-onnx") for f, c, t in ROWS
    if STATUS.get(c["name"], {}).get("status") == "ok" and not t])
def test_onnx(family, case):
    golden = _golden_for(family, case)
    if case.get("skip_sym"):
        pytest.skip(case["skip_sym"])
    try:
        check_grad_graph(case, golden, backend="onnx", opset=GRAD_OPSET)
    except UnsupportedOpError as exc:  # a backward kernel without a lowering, by design
        reasons = [registry.get(name).no_onnx for name in exc.ops]
        if not all(reasons):
            raise
        pytest.skip("; ".join(f"{n}: {r}" for n, r in zip(exc.ops, reasons)))


def _fd_inputs(case: dict) -> list[np.ndarray] | None:
    inputs = make_inputs(case)
    if not any(x.dtype.kind == "f" for x in inputs) or sum(x.size for x in inputs) > 400:
        return None
    if not all(np.isfinite(x).all() for x in inputs if x.dtype.kind == "f"):
        return None
    outs = mx.nd.invoke(case["op"], [mx.nd.array(x, dtype=x.dtype) for x in inputs],
                        dict(case.get("attrs", {})))
    outs = outs if isinstance(outs, list) else [outs]
    if not all(np.isfinite(o.asnumpy()).all() for o in outs if np.dtype(o.dtype).kind == "f"):
        return None  # a pole or overflow: differences mean nothing there
    return inputs


@pytest.mark.parametrize("family, case, train", [
    pytest.param(f, c, t, id=f"{f}-{c['name']}-numeric") for f, c, t in ROWS
    if STATUS.get(c["name"], {}).get("status", "ok") == "ok"])
def test_numeric(family, case, train):
    op = _needs_rule(case)
    if case.get("no_fd"):
        pytest.skip(case["no_fd"])
    if op.gradient is registry.zero_gradient:
        pytest.skip("zero gradient by MXNet's rule (the status and golden ways check it)")
    if op.params.fields.get("p") is not None and train:
        pytest.skip("random in training mode: no finite differences")
    inputs = _fd_inputs(case)
    if inputs is None:
        pytest.skip("no float inputs, non-finite values, or too large for finite differences")
    check_grad_numeric(case["op"], inputs, case.get("attrs", {}), wrt=case.get("fd_wrt"),
                       rtol=case.get("fd_rtol", 1e-5), atol=case.get("fd_atol", 1e-7),
                       train=train)


@pytest.mark.parametrize("family, case, train", [
    pytest.param(f, c, t, id=f"{f}-{c['name']}-status") for f, c, t in ROWS
    if STATUS.get(c["name"], {}).get("status") == "error"])
def test_refused(family, case, train):
    if case["name"] in REFUSAL_DIFFERS:
        pytest.skip(REFUSAL_DIFFERS[case["name"]])
    op = registry.get(case["op"])
    if op.gradient is None and op.no_gradient is None:
        pytest.skip(f"{op.name}: no gradient rule or reason yet")
    if case.get("no_grad_golden"):  # MXNet's failure is no reference either (it crashed)
        pytest.skip(case["no_grad_golden"])
    inputs = [mx.nd.array(x, dtype=x.dtype) for x in make_inputs(case)]
    floats = [a for a in inputs if np.dtype(a.dtype).kind == "f"]
    for a in floats:
        a.attach_grad()
    with mx.autograd.record(train_mode=train):
        outs = mx.nd.invoke(case["op"], inputs, dict(case.get("attrs", {})))
    outs = outs if isinstance(outs, list) else [outs]
    heads = [o for o in outs if np.dtype(o.dtype).kind == "f"]
    if not floats or not heads:
        pytest.skip("nothing to differentiate")
    with pytest.raises(mx.GluonportError, match=op.name):
        mx.autograd.backward(heads)
