"""ONNX export of the fused RNN op (gluonport/ops/nn/rnn.py) against MXNet 1.9.1's goldens.

The flat parameter vector is passed as a parameter (so the exporter re-lays it out into
initializers), except in ``test_params_as_graph_input`` (Gather nodes pick the weights).
Tolerances are the cases' (rtol 1e-4 / atol 1e-5); float64 cases run in float32 on
onnxruntime, which has no float64 RNN kernels.

Every row of the case table is exported (lowest and newest opset, weights as inputs and as
initializers) and imported back by the op test driver, tests/ops/test_ops.py; this file
keeps the export checks a row cannot express.
"""

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import ConversionError
from gluonport.onnx import export_symbol
from gluonport.ops.nn.rnn import rnn_param_size
from tests.onnx._export_check import OPSETS, check_dynamic, check_export, export_case, run_ort
from tests.ops import cases_rnn
from tests.ops._check import _compare, forward, load_golden

GOLDEN = load_golden("rnn")
CASES = {c["name"]: c for c in cases_rnn.CASES}
NOT_EXPORTABLE = {
    "lstm_projection": "ONNX LSTM has no projection (projection_size)",
    "lstm_projection_2layer_bidir": "ONNX LSTM has no projection (projection_size)",
}


@pytest.mark.parametrize("name", list(NOT_EXPORTABLE))
def test_projection_refused_with_reason(name):
    with pytest.raises(ConversionError, match="projection_size"):
        export_case(CASES[name], GOLDEN[name], OPSETS[-1], params=["in1"])


@pytest.mark.parametrize("name", ["lstm_2layer_bidir", "gru_3layer", "rnn_relu_2layer_bidir",
                                  "gru_bidir_float64"])
def test_params_as_graph_input(name):
    check_export(CASES[name], GOLDEN[name], OPSETS[-1])


@pytest.mark.parametrize("name", ["rnn_param_concat_dim0", "rnn_param_concat_default_dim"])
def test_param_concat_of_params_folds(name):
    case, golden = CASES[name], GOLDEN[name]
    params = [f"in{i}" for i in range(len(golden["inputs"]))]
    model, _, data, _ = export_case(case, golden, OPSETS[-1], params=params)
    assert not model.graph.node, "a concat of parameters folds into one initializer"
    _compare(case, run_ort(model, data), golden["outputs"], "folded")


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("name", ["lstm_2layer_bidir", "gru_2layer_bidir", "rnn_tanh_1layer",
                                  "lstm_no_state_outputs", "lstm_bidir_float64"])
def test_dynamic_batch(name, opset):
    case = CASES[name]
    axes = {f"in{i}": 1 for i in (0, 2, 3)[:len(case["inputs"]) - 1]}
    check_dynamic(case, GOLDEN[name], opset, axes, params=["in1"], sizes=(1, 5))


# --- graphs the case table cannot express (vs the numpy executor) --------------------------
RNG = np.random.RandomState(11)
T, N, C, H = 5, 3, 4, 3


def _rnn_graph(mode, layers, bidir, n_parts=1, **attrs):
    """An RNN whose flat parameters are ``_rnn_param_concat`` of ``n_parts`` 2-d variables,
    each ``reshape(-1)``-ed, as Gluon's RNN layers build them; returns (symbol, data feed,
    param feed)."""
    dirs = 2 if bidir else 1
    size = rnn_param_size(mode, H, layers, bidir, C)
    cuts = np.linspace(0, size, n_parts + 1).astype(int)
    flat = RNG.uniform(-0.7, 0.7, size).astype(np.float32)
    pvals = {f"w{k}": flat[cuts[k]:cuts[k + 1]].reshape(-1, 1) for k in range(n_parts)}
    parts = [mx.sym.reshape(mx.sym.var(k), shape=(-1,)) for k in pvals]
    wsym = parts[0] if n_parts == 1 else mx.sym.invoke("_rnn_param_concat", parts, {"dim": 0})
    names = ["data", "h0"] + (["c0"] if mode == "lstm" else [])
    data = {"data": RNG.uniform(-1, 1, (T, N, C)).astype(np.float32)}
    for k in names[1:]:
        data[k] = RNG.uniform(-1, 1, (layers * dirs, N, H)).astype(np.float32)
    ins = [mx.sym.var("data"), wsym] + [mx.sym.var(k) for k in names[1:]]
    for k, v in attrs.pop("extra", {}).items():
        data[k] = v
        ins.append(mx.sym.var(k))
    sym = mx.sym.invoke("RNN", ins, {"mode": mode, "state_size": H, "num_layers": layers,
                                     "bidirectional": bidir, "state_outputs": True, **attrs})
    return sym, data, pvals


def _export_vs_executor(sym, data, pvals, opset=None):
    model = export_symbol(sym, pvals, in_shapes={k: v.shape for k, v in data.items()},
                          in_types={k: v.dtype for k, v in data.items()},
                          opset_version=opset or OPSETS[-1])
    want = forward(sym, {**data, **pvals})
    got = run_ort(model, data)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    return model


@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_gluon_style_param_concat_becomes_initializers(mode):
    sym, data, pvals = _rnn_graph(mode, 2, True, n_parts=4)
    model = _export_vs_executor(sym, data, pvals)
    assert "Gather" not in {n.op_type for n in model.graph.node}, (
        "weights known at export time must become initializers")
    stored = sum(int(np.prod(t.dims)) for t in model.graph.initializer if len(t.dims) > 1)
    assert stored == sum(v.size for v in pvals.values()), "each weight stored once"


@pytest.mark.parametrize("mode,layers,bidir", [("lstm", 2, True), ("gru", 1, True),
                                               ("rnn_relu", 2, False)])
def test_sequence_length(mode, layers, bidir):
    """use_sequence_length -> ONNX sequence_lens (MXNet's CPU kernels refuse it, so the
    reference is gluonport's executor, checked against truncated runs in tests/ops)."""
    lengths = np.array([5, 2, 4], np.int32)
    sym, data, pvals = _rnn_graph(mode, layers, bidir, use_sequence_length=True,
                                  extra={"lengths": lengths})
    _export_vs_executor(sym, data, pvals)


def test_lstm_state_clip_refused():
    sym, data, pvals = _rnn_graph("lstm", 1, False, lstm_state_clip_min=-1.0,
                                  lstm_state_clip_max=1.0)
    with pytest.raises(ConversionError, match="lstm_state_clip"):
        export_symbol(sym, pvals, in_shapes={k: v.shape for k, v in data.items()})


def test_unused_states_are_not_computed():
    """Only the states a graph reads are ONNX outputs (here cy without hy)."""
    sym, data, pvals = _rnn_graph("lstm", 2, True)
    picked = mx.sym.Group([sym[0], sym[2]])
    model = _export_vs_executor(picked, data, pvals)
    for node in model.graph.node:
        if node.op_type == "LSTM":
            assert list(node.output)[1] == "" and list(node.output)[2]
