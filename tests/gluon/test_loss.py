"""``gluon.loss`` against MXNet 1.9.1 (tests/golden/loss/, made by gen_loss.py).

Every case of the generator's table (each loss, its arguments, with and without sample_weight,
batch_axis variants, sparse and dense labels, from_logits...) runs three ways: imperative,
``hybridize()`` (the traced graph on onnxruntime when every op exports) and
``hybridize(backend="numpy")``; each must equal MXNet's output for the same inputs within
rtol 1e-5 / atol 1e-6 (float32, the same formulas; NaN where MXNet gives NaN), atol 1e-5 where
the loss runs log_softmax (MXNet 1.9.1's log_softmax is up to ~3e-6 off the exact float32 value;
gluonport's is within 1 ulp, and KL/cross-entropy sums cancel to small values). Where MXNet
rejects the inputs, each mode must raise a ShapeError naming the loss. Also checked: ``repr``,
constructor and ``hybrid_forward`` signatures and ``__all__`` equal MXNet's, and an evaluation
script written for MXNet runs with only its import changed.
"""

import functools
import json
import os

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import ArgumentError, GluonportError, ShapeError
from gluonport.gluon import loss as gloss
from tests._ported import load_ported

HERE = os.path.join(os.path.dirname(__file__), "..", "golden", "loss")
RTOL, ATOL = 1e-5, 1e-6
ATOL_LOG_SOFTMAX = 1e-5
MODES = ("imperative", "hybrid", "hybrid_numpy")

# MXNet 1.9.1 computes these imperatively but cannot hybridize them: SDMLLoss reads x1.shape,
# which a Symbol lacks; PoissonNLLLoss(compute_full=True) multiplies a Symbol in place. Here they
# hybridize, and the hybridized result must equal MXNet's imperative one.
MXNET_CANNOT_HYBRIDIZE = {"sdml_basic", "sdml_smoothing", "sdml_pairs", "poisson_full",
                          "poisson_full_zero_target_nan"}


@functools.cache
def facts() -> dict:
    with open(os.path.join(HERE, "loss_golden.json"), encoding="utf-8") as f:
        return json.load(f)


@functools.cache
def arrays() -> dict:
    with np.load(os.path.join(HERE, "loss_golden.npz")) as z:
        return {k: z[k] for k in z.files}


def _inputs(case: dict) -> list:
    return [mx.nd.array(arrays()[f"{case['name']}/in{i}"]) if present else None
            for i, present in enumerate(case["inputs"])]


def _make(case: dict, mode: str) -> gloss.Loss:
    loss = getattr(gloss, case["loss"])(**case["kwargs"])
    if mode != "imperative":
        loss.hybridize(backend="numpy" if mode == "hybrid_numpy" else None)
    return loss


def _expected(case: dict, mode: str) -> np.ndarray:
    name = case["name"]
    if mode != "imperative" and name in MXNET_CANNOT_HYBRIDIZE:
        return arrays()[f"{name}/imperative"]
    return arrays()[f"{name}/{'imperative' if mode == 'imperative' else 'hybrid'}"]


def _atol(case: dict) -> float:
    kwargs = case["kwargs"]
    runs_log_softmax = (case["loss"] in ("SoftmaxCrossEntropyLoss", "SoftmaxCELoss")
                        and not kwargs.get("from_logits", False)
                        or case["loss"] == "KLDivLoss" and not kwargs.get("from_logits", True)
                        or case["loss"] == "SDMLLoss")
    return ATOL_LOG_SOFTMAX if runs_log_softmax else ATOL


def _ids(cases: list) -> list:
    return [c["name"] for c in cases]


GOOD = [c for c in facts()["cases"] if c["imperative_error"] is None]
BAD = [c for c in facts()["cases"] if c["imperative_error"] is not None]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", GOOD, ids=_ids(GOOD))
def test_loss_matches_mxnet(case: dict, mode: str) -> None:
    loss = _make(case, mode)
    inputs = _inputs(case)
    want = _expected(case, mode)
    for _ in range(2):  # the second hybridized call runs the cached graph
        got = loss(*inputs).asnumpy()
        assert got.shape == want.shape
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=_atol(case), equal_nan=True)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", BAD, ids=_ids(BAD))
def test_bad_inputs_raise_shape_error(case: dict, mode: str) -> None:
    assert case["hybrid_error"] is not None  # MXNet rejects them hybridized as well
    loss = _make(case, mode)
    with pytest.raises(ShapeError) as info:
        loss(*_inputs(case))
    message = str(info.value)
    assert type(loss).__name__ in message and loss.name in message
    assert "inputs of shapes (" in message and "must" in message
    assert message.count("do not fit") == 1  # a nested loss (SDMLLoss.kl_loss) says it once


def test_cases_mxnet_cannot_hybridize_are_the_listed_ones() -> None:
    cannot = {c["name"] for c in GOOD if c["hybrid_error"] is not None}
    assert cannot == MXNET_CANNOT_HYBRIDIZE


def test_the_table_covers_every_loss() -> None:
    covered = {getattr(gloss, c["loss"]) for c in GOOD}
    assert covered == {getattr(gloss, n) for n in gloss.__all__} - {gloss.Loss}
    assert {c["loss"] for c in GOOD} >= {"SigmoidBCELoss", "SoftmaxCELoss"}


@pytest.mark.parametrize("name, kwargs, want", facts()["reprs"],
                         ids=[r[0] for r in facts()["reprs"]])
def test_repr_matches_mxnet(name: str, kwargs: dict, want: str) -> None:
    assert repr(getattr(gloss, name)(**kwargs)) == want


def _signature(fn) -> list:
    import inspect

    params = list(inspect.signature(fn).parameters.values())[1:]
    return [[p.name, "<required>" if p.default is inspect.Parameter.empty else p.default]
            for p in params if p.kind is not inspect.Parameter.VAR_KEYWORD]


@pytest.mark.parametrize("name", sorted(facts()["signatures"]))
def test_signatures_match_mxnet(name: str) -> None:
    cls = getattr(gloss, name)
    want = facts()["signatures"][name]
    assert _signature(cls.__init__) == want["init"]
    assert _signature(cls.hybrid_forward) == want["forward"]


def test_module_surface_matches_mxnet() -> None:
    assert list(gloss.__all__) == facts()["all"]
    for alias, target in facts()["aliases"].items():
        assert getattr(gloss, alias) is getattr(gloss, target)
    assert mx.gluon.loss.L2Loss is gloss.L2Loss
    from gluonport.gluon.loss import SoftmaxCrossEntropyLoss

    assert SoftmaxCrossEntropyLoss is mx.gluon.loss.SoftmaxCELoss
    assert issubclass(SoftmaxCrossEntropyLoss, mx.gluon.HybridBlock)


@pytest.mark.parametrize("make, error, words", [
    (lambda: gloss.L1Loss(weight="2"), ArgumentError, "weight='2' is not a number or None"),
    (lambda: gloss.L2Loss(weight=None), ArgumentError, "weight=None is not a number"),
    (lambda: gloss.LogisticLoss(label_format="pm1"), ArgumentError, "signed or binary"),
    (lambda: gloss.CTCLoss(layout="NCT"), ArgumentError, "'NTC' or 'TNC'"),
    (lambda: gloss.CTCLoss(label_layout="N"), ArgumentError, "'NT' or 'TN'"),
], ids=["weight_str", "l2_weight_none", "label_format", "ctc_layout", "ctc_label_layout"])
def test_bad_arguments_raise_clear_errors(make, error, words) -> None:
    with pytest.raises(error, match=words) as info:
        make()
    assert isinstance(info.value, GluonportError) and isinstance(info.value, ValueError)


def test_loss_inside_a_hybridized_block_traces_into_its_graph() -> None:
    class Net(mx.gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.ce = gloss.SoftmaxCELoss()

        def hybrid_forward(self, F, x, y):
            return self.ce(x, y)

    case = next(c for c in GOOD if c["name"] == "sce_sparse")
    net = Net()
    net.hybridize()
    got = net(*_inputs(case)).asnumpy()
    np.testing.assert_allclose(got, _expected(case, "hybrid"), rtol=RTOL, atol=_atol(case))
    ops = {n["op"] for n in json.loads(net._cached_graph[1].tojson())["nodes"]}
    assert {"log_softmax", "pick", "mean"} <= ops


@pytest.fixture(scope="module")
def script_results() -> dict:
    return load_ported(os.path.join(HERE, "loss_script.py")).run()


def test_mxnet_evaluation_script_runs_with_only_the_import_changed(script_results) -> None:
    golden = {k[len("script/"):]: v for k, v in arrays().items() if k.startswith("script/")}
    assert set(golden) | set(facts()["script"]) == set(script_results)
    for key, want in golden.items():
        # sums of up to 20 float32 losses: atol scales with the sum's magnitude
        np.testing.assert_allclose(script_results[key], want, rtol=RTOL,
                                   atol=ATOL * max(1.0, float(np.abs(want).max())),
                                   err_msg=key)
    for key, want in facts()["script"].items():
        assert script_results[key] == want, key
