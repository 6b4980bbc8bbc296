"""``mx.metric`` and ``Module.score`` against MXNet 1.9.1.

tests/golden/metric/metric_script.py, written for MXNet, runs with only its import changed and
must return what it returned in MXNet (gen_metric.py): per case, every step's result. Numbers
agree within rtol 1e-5 / atol 1e-6 (float32 sums taken in another order; NaN equals NaN); names,
configs and strings are equal (numbers inside strings compared with the same tolerance). Where
MXNet raised, gluonport must raise a GluonportError, and a ValueError where MXNet's was one.
"""

import doctest
import json
import math
import os
import re
import warnings

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import GluonportError, ShapeError
from tests._ported import load_ported

HERE = os.path.join(os.path.dirname(__file__), "golden", "metric")
RTOL, ATOL = 1e-5, 1e-6

with open(os.path.join(HERE, "metric_golden.json"), encoding="utf-8") as _f:
    GOLDEN = json.load(_f)


@pytest.fixture(scope="module")
def results() -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # corrcoef of constant input, as in the generator
        return load_ported(os.path.join(HERE, "metric_script.py")).run(os.path.dirname(HERE))


_NUMBER = re.compile(r"-?\d+\.\d+(?:e-?\d+)?|nan")


def _same_text(got: str, want: str) -> bool:
    if _NUMBER.sub("#", got) != _NUMBER.sub("#", want):
        return False
    return all(_same(float(g), float(w)) for g, w in zip(_NUMBER.findall(got),
                                                         _NUMBER.findall(want)))


def _same(got, want) -> bool:
    if isinstance(want, dict) and "error" in want:
        return False  # handled by _check_step
    if isinstance(want, list):
        return (isinstance(got, list) and len(got) == len(want)
                and all(_same(g, w) for g, w in zip(got, want)))
    if isinstance(want, dict):
        return (isinstance(got, dict) and got.keys() == want.keys()
                and all(_same(got[k], want[k]) for k in want))
    if isinstance(want, str):
        return isinstance(got, str) and (got == want or _same_text(got, want))
    if isinstance(want, float):
        if not isinstance(got, (int, float)):
            return False
        if math.isnan(want):
            return math.isnan(got)
        return math.isclose(got, want, rel_tol=RTOL, abs_tol=ATOL)
    return got == want


def _check_step(case: str, k: int, got, want) -> None:
    where = f"{case} step {k}"
    if isinstance(want, dict) and "error" in want:
        assert isinstance(got, dict) and "error" in got, \
            f"{where}: MXNet raised {want['error']}, gluonport returned {got!r}"
        assert "GluonportError" in got["bases"], f"{where}: raised {got['error']}"
        if "ValueError" in want["bases"]:
            assert "ValueError" in got["bases"], f"{where}: {got['error']} is no ValueError"
        return
    assert not (isinstance(got, dict) and "error" in got), \
        f"{where}: gluonport raised {got['error']}, MXNet returned {want!r}"
    assert _same(got, want), f"{where}: gluonport {got!r} != MXNet {want!r}"


CASES = sorted(k for k in GOLDEN if k != "module_score")


@pytest.mark.parametrize("case", CASES)
def test_metric_case_matches_mxnet(results, case):
    got, want = results[case], GOLDEN[case]
    assert len(got) == len(want), f"{case}: {len(got)} steps recorded, MXNet {len(want)}"
    for k, (g, w) in enumerate(zip(got, want)):
        _check_step(case, k, g, w)


@pytest.mark.parametrize("key", sorted(GOLDEN["module_score"]))
def test_module_score_matches_mxnet(results, key):
    _check_step(key, 0, results["module_score"][key], GOLDEN["module_score"][key])


def test_golden_covers_the_cases_named_in_the_task():
    assert GOLDEN["module_score"]["score_instance_num_inst"] == 12.0  # padding counted
    raising = {k for k in CASES if any(isinstance(s, dict) and "error" in s for s in GOLDEN[k])}
    assert {"acc_count_mismatch", "acc_size_mismatch", "perp_mismatch", "ce_mismatch",
            "pearson_shape_mismatch", "topk_1_refused", "create_unknown"} <= raising
    assert len(CASES) >= 80


# --- gluonport-only checks --------------------------------------------------------------------
RS = np.random.RandomState(5)
_LAB3, _PRED3 = RS.randint(0, 3, 9).astype(np.float32), RS.rand(9, 3).astype(np.float32)
_LAB2, _PRED2 = RS.randint(0, 2, 9).astype(np.float32), RS.rand(9, 2).astype(np.float32)
_VAL_A, _VAL_B = RS.randn(9, 2).astype(np.float32), RS.randn(9, 2).astype(np.float32)

NUMPY_INPUT_CASES = [
    ("acc", {}, _LAB3, _PRED3), ("top_k_accuracy", {"top_k": 2}, _LAB3, _PRED3),
    ("f1", {}, _LAB2, _PRED2), ("mcc", {"average": "micro"}, _LAB2, _PRED2),
    ("perplexity", {"ignore_label": None}, _LAB3, _PRED3), ("ce", {}, _LAB3, _PRED3),
    ("nll_loss", {}, _LAB3, _PRED3), ("pcc", {}, _LAB3, _PRED3), ("mae", {}, _VAL_A, _VAL_B),
    ("mse", {}, _VAL_A, _VAL_B), ("rmse", {}, _VAL_A, _VAL_B), ("pearsonr", {}, _VAL_A, _VAL_B),
    ("loss", {}, _VAL_A, _VAL_B),
]


@pytest.mark.parametrize("name,kwargs,label,pred", NUMPY_INPUT_CASES,
                         ids=[c[0] for c in NUMPY_INPUT_CASES])
def test_numpy_inputs_give_the_ndarray_result(name, kwargs, label, pred):
    with_nd = mx.metric.create(name, **kwargs)
    with_np = mx.metric.create(name, **kwargs)
    with_nd.update([mx.nd.array(label)], [mx.nd.array(pred)])
    with_np.update([label], [pred])
    got, want = with_np.get()[1], with_nd.get()[1]
    assert not math.isnan(want)
    assert got == want


@pytest.mark.parametrize("labels,preds,error,match", [
    ([_LAB3], [_PRED3, _PRED3], ShapeError, r"labels 1 does not match shape of predictions 2"),
    ([_LAB3[:5]], [_PRED3], ShapeError, r"5 labels for 9 predicted classes; give one label"),
    ([[0, 1]], [_PRED3], mx.metric.MetricError, r"must be NDArrays or numpy arrays, got list"),
])
def test_bad_accuracy_input_says_what_and_how(labels, preds, error, match):
    with pytest.raises(error, match=match):
        mx.metric.Accuracy().update(labels, preds)


def test_create_errors_name_the_known_metrics():
    with pytest.raises(GluonportError, match=r"'acuracy' is not registered; known metrics: .*acc"):
        mx.metric.create("acuracy")
    with pytest.raises(GluonportError, match="top_k=1; please use Accuracy"):
        mx.metric.TopKAccuracy()
    with pytest.raises(GluonportError, match="subclasses of EvalMetric"):
        mx.metric.register(dict)
    with pytest.raises(mx.metric.MetricError, match="is not valid JSON"):
        mx.metric.create('["acc", {"axis": 1}')
    with pytest.raises(mx.metric.MetricError, match=r"output names \['x'\] are not among"):
        mx.metric.Accuracy(output_names=["x"]).update_dict({"l": _LAB3}, {"y": _PRED3})


def test_score_needs_a_bound_module():
    prefix = os.path.join(os.path.dirname(HERE), "gluon", "legacy_softmax")
    sym, _, _ = mx.model.load_checkpoint(prefix, 0)
    it = mx.io.NDArrayIter(np.zeros((4, 4), np.float32), np.zeros(4, np.float32), batch_size=2)
    with pytest.raises(GluonportError, match="call bind"):
        mx.mod.Module(sym).score(it, "acc")


def test_docstring_examples_run():
    failed, attempted = doctest.testmod(mx.metric)
    assert attempted >= 3 and failed == 0
