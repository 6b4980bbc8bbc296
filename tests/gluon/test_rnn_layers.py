"""``gluon.rnn`` against MXNet 1.9.1 (tests/golden/gluon/rnn_*, made by gen_rnn.py).

Cases are in tests/golden/gluon/_rnn_cases.py, shared with the generator. Every net is built in
a fresh ``NameManager`` (as the generator did in MXNet), so automatic names line up
(``lstm0_l0_i2h_weight``, ``lstm0_rnn0``). The flow is MXNet's usual one: initialize, a first
call (deferred initialization), set the shared deterministic weights, call, hybridize, call,
export. Outputs agree within rtol 1e-4 / atol 1e-5 (float32; the fused kernels sum in a
different order).
"""

from __future__ import annotations

import functools
import gzip
import importlib.util
import json
import os

import numpy as np
import pytest

import gluonport as mx
from gluonport import gluon
from gluonport.errors import GluonportError, OpAttributeError, ShapeError
from gluonport.gluon import rnn

GOLDEN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "golden",
                      "gluon")
RTOL, ATOL = 1e-4, 1e-5


def _load_cases():
    spec = importlib.util.spec_from_file_location("rnn_golden_cases",
                                                  os.path.join(GOLDEN, "_rnn_cases.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


C = _load_cases()


@functools.cache
def manifest() -> dict:
    with gzip.open(os.path.join(GOLDEN, "rnn_manifest.json.gz")) as f:
        return json.loads(f.read())


@functools.cache
def outputs() -> dict:
    with np.load(os.path.join(GOLDEN, "rnn_outputs.npz")) as f:
        return {k: f[k] for k in f.files}


def golden(prefix: str) -> list[np.ndarray]:
    """MXNet's arrays ``<prefix>0, <prefix>1, ...``."""
    out, k = [], 0
    while f"{prefix}{k}" in outputs():
        out.append(outputs()[f"{prefix}{k}"])
        k += 1
    assert out, f"no golden arrays {prefix}*"
    return out


def flat(out) -> list[np.ndarray]:
    if isinstance(out, (list, tuple)):
        return sum([flat(o) for o in out], [])
    return [out.asnumpy()]


def assert_all_close(got: list[np.ndarray], want: list[np.ndarray], what: str) -> None:
    assert len(got) == len(want), f"{what}: {len(got)} arrays, MXNet has {len(want)}"
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape and g.dtype == w.dtype, (
            f"{what}[{k}]: {g.shape} {g.dtype} vs MXNet's {w.shape} {w.dtype}")
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL, err_msg=f"{what}[{k}]")


def param_list(block) -> list:
    return [[k, list(p.shape)] for k, p in block.collect_params().items()]


def set_weights(block, dtype: str = "float32") -> None:
    for k, p in block.collect_params().items():
        p.set_data(mx.nd.array(C.weight(k, p.shape, dtype), dtype=dtype))


# --- fused layers ------------------------------------------------------------------------------
LAYERS = sorted(C.LAYERS)


class _Layer:
    """A case's layer after MXNet's flow up to the weights being set."""

    def __init__(self, name: str):
        self.name, self.dtype = name, C.layer_dtype(name)
        with mx.name.NameManager():
            self.net = C.build_layer(rnn, name)
        self.params_before = param_list(self.net)
        self.net.initialize()
        self.x = mx.nd.array(C.layer_input(name), dtype=self.dtype)
        states = C.layer_states(name, self.net)
        self.states = None if states is None else [mx.nd.array(s, dtype=self.dtype)
                                                   for s in states]
        self.call()
        set_weights(self.net, self.dtype)

    def call(self):
        return self.net(self.x) if self.states is None else self.net(self.x, self.states)


@pytest.mark.parametrize("name", LAYERS)
def test_layer_parameters_match_mxnet(name):
    layer = _Layer(name)
    facts = manifest()["layers"][name]
    assert layer.params_before == facts["params_before"]
    assert param_list(layer.net) == facts["params"]
    assert repr(layer.net) == facts["repr"]


@pytest.mark.parametrize("name", LAYERS)
def test_layer_outputs_imperative_and_hybridized(name):
    layer = _Layer(name)
    assert_all_close(flat(layer.call()), golden(f"layer/{name}/imperative"), "imperative")
    layer.net.hybridize(backend="numpy")
    assert_all_close(flat(layer.call()), golden(f"layer/{name}/hybridized"), "hybridized")
    assert_all_close(flat(layer.call()), golden(f"layer/{name}/hybridized"), "cached call")


@pytest.mark.parametrize("name", LAYERS)
def test_layer_export_is_byte_identical(name, tmp_path):
    layer = _Layer(name)
    layer.net.hybridize(backend="numpy")
    layer.call()
    sym_file, params_file = layer.net.export(str(tmp_path / name))
    facts = manifest()["layers"][name]
    with open(sym_file) as f:
        assert f.read() == facts["symbol_json"]
    assert sorted(mx.nd.load(params_file)) == facts["export_params"]
    if name in C.IMPORT_FILES:
        with open(params_file, "rb") as ours, \
                open(os.path.join(GOLDEN, f"rnn_{name}-0000.params"), "rb") as theirs:
            assert ours.read() == theirs.read()


@pytest.mark.parametrize("name", LAYERS)
def test_save_parameters_uses_mxnets_unfused_names(name, tmp_path):
    layer = _Layer(name)
    path = str(tmp_path / "p.params")
    layer.net.save_parameters(path)
    assert sorted(mx.nd.load(path)) == manifest()["layers"][name]["save_keys"]
    with mx.name.NameManager():
        again = C.build_layer(rnn, name)
    again.load_parameters(path)
    for (k, p), q in zip(layer.net.collect_params().items(), again.collect_params().values()):
        np.testing.assert_array_equal(p.data().asnumpy(), q.data().asnumpy(), err_msg=k)


@pytest.mark.filterwarnings("ignore:exporting with a dynamic batch axis failed")
@pytest.mark.parametrize("name", C.IMPORT_FILES)
def test_mxnet_export_runs_in_symbolblock(name):
    layer = _Layer(name)
    states = layer.states or layer.net.begin_state(layer.x.shape[1], dtype=layer.dtype)
    n_in = 1 + len(states)
    block = gluon.SymbolBlock.imports(os.path.join(GOLDEN, f"rnn_{name}-symbol.json"),
                                      [f"data{k}" for k in range(n_in)],
                                      os.path.join(GOLDEN, f"rnn_{name}-0000.params"))
    assert_all_close(flat(block(layer.x, *states)), golden(f"layer/{name}/hybridized"),
                     "SymbolBlock.imports")


NO_ONNX = {"lstm_projection": "ONNX LSTM has no projection (projection_size)"}


@pytest.mark.filterwarnings("ignore:exporting with a dynamic batch axis failed")
@pytest.mark.parametrize("static_shape", [False, True])
@pytest.mark.parametrize("name", LAYERS)
def test_layer_hybridized_on_onnxruntime(name, static_shape):
    """(Axis 0 of RNN data and states is time / layers, not the batch, so the runtime's
    dynamic-batch export falls back to one model per shape, with a warning.)"""
    if name in NO_ONNX:
        pytest.skip(NO_ONNX[name])
    layer = _Layer(name)
    layer.net.hybridize(backend="onnxruntime", static_shape=static_shape)
    assert_all_close(flat(layer.call()), golden(f"layer/{name}/hybridized"), "onnxruntime")
    assert layer.net._cached_op.backend == "onnxruntime"


@pytest.mark.parametrize("name", sorted(C.SYMBOLIC_LAYERS))
def test_layer_called_on_symbols_builds_mxnets_graph(name):
    with mx.name.NameManager():
        out = C.symbolic_layer_call(rnn, mx.sym, name)
    assert out.tojson() == manifest()["symbolic_layers"][name]


@pytest.mark.parametrize("name", ["gru_ntc_zero_states", "rnn_state_vars"])
def test_layer_called_on_symbols_runs_like_ndarrays(name):
    """The symbol (zero begin states of unknown batch size included) gives the imperative
    layer's outputs in the executor."""
    with mx.name.NameManager():
        out = C.symbolic_layer_call(rnn, mx.sym, name)
    cls, kwargs, explicit = C.SYMBOLIC_LAYERS[name]
    with mx.name.NameManager():
        layer = getattr(rnn, cls)(**kwargs)
    layer.initialize(mx.init.Uniform(0.5))
    x = mx.nd.array(C.array((2, 4, 3), 7))
    states = [mx.nd.array(C.array(i["shape"], 8 + k))
              for k, i in enumerate(layer.state_info(x.shape[1]))] if explicit else None
    want = flat(layer(x) if states is None else layer(x, states))
    feed = {"data": x, **{k: p.data() for k, p in layer.collect_params().items()}}
    feed.update({f"state{k}": s for k, s in enumerate(states or [])})
    got = [o.asnumpy() for o in out.eval(**feed)]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


# --- cells -------------------------------------------------------------------------------------
CELLS = sorted(C.CELLS)


class _Cell:
    """A case's cell after MXNet's flow (a first unroll for deferred init, weights set)."""

    def __init__(self, name: str):
        self.name = name
        _, _, self.layout, self.merge, _, _ = C.CELLS[name]
        with mx.name.NameManager():
            self.cell = C.build_cell(rnn, name)
        self.params_before = param_list(self.cell)
        self.cell.initialize()
        self.x = mx.nd.array(C.cell_input(name))
        valid = C.cell_valid_length(name)
        self.valid = None if valid is None else mx.nd.array(valid)
        states = C.cell_states(name, self.cell)
        self.states = None if states is None else [mx.nd.array(s) for s in states]
        self.unroll()
        set_weights(self.cell)

    def unroll(self):
        return self.cell.unroll(C.STEPS, self.x, begin_state=self.states, layout=self.layout,
                                merge_outputs=self.merge, valid_length=self.valid)


def _check_unrolled(name: str, result, what: str) -> None:
    outs, states = result
    if C.CELLS[name][3]:
        assert not isinstance(outs, list), f"{what}: merge_outputs=True gives one tensor"
    else:
        assert isinstance(outs, list) and len(outs) == C.STEPS, f"{what}: a list of steps"
    assert_all_close(flat(outs), golden(f"cell/{name}/out"), f"{what} outputs")
    assert_all_close(flat(states), golden(f"cell/{name}/state"), f"{what} states")


@pytest.mark.parametrize("name", CELLS)
def test_cell_parameters_match_mxnet(name):
    cell = _Cell(name)
    facts = manifest()["cells"][name]
    assert cell.params_before == facts["params_before"]
    assert param_list(cell.cell) == facts["params"]
    assert repr(cell.cell) == facts["repr"]


@pytest.mark.parametrize("name", CELLS)
def test_cell_unroll_outputs(name):
    cell = _Cell(name)
    _check_unrolled(name, cell.unroll(), "unroll")


@pytest.mark.parametrize("name", CELLS)
def test_hybridized_cell_unroll_outputs(name):
    cell = _Cell(name)
    cell.cell.hybridize(backend="numpy")
    _check_unrolled(name, cell.unroll(), "hybridized unroll")


def _symbolic_unroll(name: str):
    _, _, layout, merge, valid, explicit = C.CELLS[name]
    with mx.name.NameManager():
        cell = C.build_cell(rnn, name)
        states = None
        if explicit:
            states = [mx.sym.var(f"s{k}") for k in range(len(cell.state_info()))]
        outs, new_states = cell.unroll(
            C.STEPS, mx.sym.var("data"), begin_state=states, layout=layout, merge_outputs=merge,
            valid_length=None if valid is None else mx.sym.var("valid_length"))
    outs = list(outs) if isinstance(outs, list) else [outs]
    return mx.sym.Group(outs + list(new_states))


@pytest.mark.parametrize("name", CELLS)
def test_symbolic_unroll_builds_mxnets_graph(name):
    want = manifest()["cells"][name]["symbol_json"]
    if want is None:  # MXNet itself fails (ResidualCell + valid_length + a list of steps)
        with pytest.raises(GluonportError):
            _symbolic_unroll(name)
        return
    assert _symbolic_unroll(name).tojson() == want


@pytest.mark.parametrize("name", [n for n in CELLS if manifest()["cells"][n]["symbol_json"]])
def test_symbolic_unroll_runs_in_executor(name):
    """The unrolled symbol, zero begin states of unknown batch included, gives MXNet's
    imperative outputs."""
    sym = _symbolic_unroll(name)
    feed = {"data": C.cell_input(name)}
    if C.cell_valid_length(name) is not None:
        feed["valid_length"] = C.cell_valid_length(name)
    _, _, layout, _, _, _ = C.CELLS[name]
    cell = _Cell(name)
    for k, s in enumerate(C.cell_states(name, cell.cell) or []):
        feed[f"s{k}"] = s
    for pname, shape in manifest()["cells"][name]["params"]:
        feed[pname] = C.weight(pname, tuple(shape))
    got = [o.asnumpy() for o in sym.eval(**{k: mx.nd.array(v) for k, v in feed.items()})]
    n_out = manifest()["cells"][name]["n_outputs"]
    assert_all_close(got[:n_out], golden(f"cell/{name}/out"), "executor outputs")
    assert_all_close(got[n_out:], golden(f"cell/{name}/state"), "executor states")


# --- behaviour the goldens do not cover (gluonport against itself or MXNet's rules) ------------
def test_begin_state_names_shapes_and_kwargs():
    with mx.name.NameManager():
        lstm = rnn.LSTM(4, num_layers=2, bidirectional=True, projection_size=3)
        cell = rnn.GRUCell(5)
    states = lstm.begin_state(batch_size=6, func=mx.sym.var)
    assert [s.name for s in states] == ["lstm0_h0_0", "lstm0_h0_1"]
    zeros = lstm.begin_state(batch_size=6)
    assert [z.shape for z in zeros] == [(4, 6, 3), (4, 6, 4)]
    ones = cell.begin_state(batch_size=2, func=mx.nd.ones, dtype="float64")
    assert ones[0].shape == (2, 5) and ones[0].dtype == np.float64
    assert float(ones[0].asnumpy().min()) == 1.0
    assert [s.name for s in cell.begin_state(func=mx.sym.var)] == ["gru0_begin_state_1"]


def test_bad_layout_and_state_shape_are_refused():
    with pytest.raises(OpAttributeError, match="layout"):
        rnn.LSTM(3, layout="NCT")
    layer = rnn.GRU(3, input_size=2)
    layer.initialize()
    x = mx.nd.ones((4, 2, 2))
    with pytest.raises(ShapeError, match=r"Expecting \(1, 2, 3\), got \(1, 3, 3\)"):
        layer(x, mx.nd.zeros((1, 3, 3)))


def test_modified_cell_cannot_be_used_directly():
    base = rnn.LSTMCell(3)
    rnn.ZoneoutCell(base)
    with pytest.raises(GluonportError, match="modifier"):
        base.begin_state(batch_size=1)
    with pytest.raises(GluonportError, match="already modified"):
        rnn.ResidualCell(base)


def test_bidirectional_cell_cannot_step():
    cell = rnn.BidirectionalCell(rnn.RNNCell(2), rnn.RNNCell(2))
    with pytest.raises(GluonportError, match="unroll"):
        cell(mx.nd.ones((1, 2)), [mx.nd.zeros((1, 2))] * 2)


@pytest.mark.parametrize("mode,bidirectional", [("lstm", True), ("gru", False),
                                                ("rnn_tanh", True)])
def test_fused_layer_equals_its_unfused_cells(mode, bidirectional):
    """``_unfuse()`` builds the cell stack sharing the layer's parameters; unrolled, it gives
    the fused kernel's outputs."""
    cls = {"lstm": rnn.LSTM, "gru": rnn.GRU, "rnn_tanh": rnn.RNN}[mode]
    extra = {"activation": "tanh"} if mode == "rnn_tanh" else {}
    layer = cls(3, num_layers=2, bidirectional=bidirectional, input_size=2, **extra)
    layer.initialize(mx.init.Uniform(0.5))
    x = mx.nd.array(C.array((4, 2, 2), 5))
    fused = layer(x)
    cells = layer._unfuse()
    unfused, _ = cells.unroll(4, x, layout="TNC", merge_outputs=True)
    np.testing.assert_allclose(unfused.asnumpy(), fused.asnumpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_use_sequence_length_equals_truncated_runs(mode):
    """MXNet's CPU kernel refuses use_sequence_length (cuDNN only); gluonport computes it as
    cuDNN does: each item runs over its own length, later outputs are 0."""
    cls = rnn.LSTM if mode == "lstm" else rnn.GRU
    with mx.name.NameManager():
        layer = cls(3, bidirectional=True, input_size=2, use_sequence_length=True)
    layer.initialize(mx.init.Uniform(0.5))
    x = C.array((5, 3, 2), 6)
    lengths = np.array([5, 2, 4], np.float32)
    states = layer.begin_state(3)
    out, new_states = layer(mx.nd.array(x), states, mx.nd.array(lengths))
    with mx.name.NameManager():
        plain = cls(3, bidirectional=True, input_size=2, params=layer.collect_params())
    for b, n in enumerate(lengths.astype(int)):
        ref = plain(mx.nd.array(x[:n, b:b + 1]))
        np.testing.assert_allclose(out.asnumpy()[:n, b], ref.asnumpy()[:, 0], 1e-5, 1e-6)
        assert not out.asnumpy()[n:, b].any()
    assert len(new_states) == (2 if mode == "lstm" else 1)


# Shape inference the layers and cells rely on; expected values printed by MXNet 1.9.1.
def test_fully_connected_infers_data_batch_from_its_output():
    h, x = mx.sym.var("h"), mx.sym.var("x")
    y = mx.sym.elemwise_add(mx.sym.FullyConnected(h, num_hidden=4, name="a"),
                            mx.sym.FullyConnected(x, num_hidden=4, name="b"))
    args, outs, _ = y.infer_shape_partial(h=(0, 3), x=(2, 5))
    assert args == [(2, 3), (4, 3), (4,), (2, 5), (4, 5), (4,)] and outs == [(2, 4)]


@pytest.mark.parametrize("w_shape,w_inferred", [((4, 0), (4, 3)), ((4, 0, 0), (4, 0, 0))])
def test_reshape_completes_one_unknown_input_dim_from_its_output(w_shape, w_inferred):
    z = mx.sym.elemwise_add(mx.sym.reshape(mx.sym.var("w"), shape=(-1,)), mx.sym.var("v"))
    args, outs, _ = z.infer_shape_partial(w=w_shape, v=(12,))
    assert args == [w_inferred, (12,)] and outs == [(12,)]
