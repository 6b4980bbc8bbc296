"""Case table for gluonport/ops/nn/rnn.py (plain data; see tests/ops/_check.py).

Each RNN case spells out its inputs ``data (T, N, C)``, the flat ``parameters`` vector (its
length from MXNet's formula, restated in ``_param_len``), ``state`` and, for LSTM,
``state_cell``. Tolerance: rtol 1e-4 / atol 1e-5.
"""

T, N, C, H = 4, 3, 6, 5  # input size != hidden size on purpose
GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}
TOL = {"rtol": 1e-4, "atol": 1e-5}


def _param_len(mode, layers, dirs, proj=None):
    gh, rec = GATES[mode] * H, proj or H
    size = dirs * (gh * (C + rec + 2) + (layers - 1) * gh * (rec * dirs + rec + 2))
    return size + (proj * H * layers * dirs if proj else 0)


def _case(name, mode, layers=1, bidirectional=False, dtype="float32", proj=None, **attrs):
    dirs = 2 if bidirectional else 1
    spec = {"dtype": dtype, "low": -0.6, "high": 0.6}
    inputs = [{"shape": (T, N, C), **spec, "low": -1.0, "high": 1.0},
              {"shape": (_param_len(mode, layers, dirs, proj),), **spec},
              {"shape": (layers * dirs, N, proj or H), **spec}]
    if mode == "lstm":
        inputs.append({"shape": (layers * dirs, N, H), **spec})
    attrs = {"mode": mode, "state_size": H, "num_layers": layers,
             "bidirectional": bidirectional, "state_outputs": True, **attrs}
    if proj:
        attrs["projection_size"] = proj
    return {"name": name, "op": "RNN", "inputs": inputs, "attrs": attrs, **TOL}


CASES = [
    _case("rnn_tanh_1layer", "rnn_tanh"),
    _case("rnn_relu_1layer", "rnn_relu"),
    _case("gru_1layer", "gru"),
    _case("lstm_1layer", "lstm"),
    _case("rnn_tanh_2layer_bidir", "rnn_tanh", 2, True),
    _case("rnn_relu_2layer_bidir", "rnn_relu", 2, True),
    _case("gru_2layer_bidir", "gru", 2, True),
    _case("lstm_2layer_bidir", "lstm", 2, True),
    _case("lstm_2layer_unidir", "lstm", 2),
    _case("gru_3layer", "gru", 3),
    _case("lstm_no_state_outputs", "lstm", 2, True, state_outputs=False),
    _case("gru_no_state_outputs", "gru", 1, True, state_outputs=False),
    _case("gru_bidir_float64", "gru", 1, True, dtype="float64"),
    _case("lstm_bidir_float64", "lstm", 2, True, dtype="float64"),
    _case("lstm_dropout_ignored", "lstm", 2, p=0.5),
    _case("lstm_projection", "lstm", 1, proj=3),
    _case("lstm_projection_2layer_bidir", "lstm", 2, True, proj=3),
    {"name": "rnn_param_concat_dim0", "op": "_rnn_param_concat",
     "inputs": [{"shape": (6,)}, {"shape": (4,)}, {"shape": (2,)}], "attrs": {"dim": 0}},
    {"name": "rnn_param_concat_default_dim", "op": "_rnn_param_concat",
     "inputs": [{"shape": (2, 3)}, {"shape": (2, 1)}]},
]
