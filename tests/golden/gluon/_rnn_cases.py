"""Cases shared by the MXNet oracle generator ``gen_rnn.py`` (Python 3.8 + MXNet 1.9.1) and
``tests/gluon/test_rnn_layers.py``: the fused RNN layers and the recurrent cells to build, their
inputs, begin states and weights. Builders take the ``rnn`` module (``mxnet.gluon.rnn`` or
``gluonport.gluon.rnn``) so the same code builds both nets.

Weights come from a ``numpy.random.RandomState`` seeded by the parameter's name (stable across
numpy versions), so both sides hold identical values whatever order they are set in.

Keep this file Python 3.8 compatible and free of MXNet/gluonport imports.
"""

import zlib

import numpy as np

INPUT_SEED = 3


def weight(name, shape, dtype="float32"):
    """The value of parameter ``name``: uniform in [-0.5, 0.5), seeded by the name."""
    rng = np.random.RandomState(zlib.crc32(name.encode()) & 0x7FFFFFFF)
    return rng.uniform(-0.5, 0.5, size=shape).astype(dtype)


def array(shape, seed, dtype="float32"):
    """An input or begin-state array in [-1, 1)."""
    return np.random.RandomState(INPUT_SEED + seed).uniform(-1, 1, size=shape).astype(dtype)


# --- fused layers --------------------------------------------------------------------------
# name: (class, kwargs, input shape, pass begin states explicitly)
LAYERS = {
    "lstm_1l": ("LSTM", {"hidden_size": 4}, (5, 2, 3), False),
    "lstm_2l_bidir_states": ("LSTM", {"hidden_size": 4, "num_layers": 2, "bidirectional": True,
                                      "input_size": 3}, (5, 2, 3), True),
    "lstm_ntc": ("LSTM", {"hidden_size": 3, "layout": "NTC"}, (2, 5, 3), False),
    "lstm_ntc_2l_states": ("LSTM", {"hidden_size": 3, "num_layers": 2, "layout": "NTC",
                                    "input_size": 4}, (2, 4, 4), True),
    "lstm_projection": ("LSTM", {"hidden_size": 4, "projection_size": 2, "input_size": 3},
                        (4, 2, 3), True),
    "gru_1l_ntc_states": ("GRU", {"hidden_size": 4, "layout": "NTC", "input_size": 3},
                          (2, 5, 3), True),
    "gru_2l_bidir": ("GRU", {"hidden_size": 3, "num_layers": 2, "bidirectional": True},
                     (4, 3, 2), False),
    "rnn_relu_2l_dropout": ("RNN", {"hidden_size": 4, "num_layers": 2, "dropout": 0.5},
                            (5, 2, 3), False),
    "rnn_tanh_bidir_ntc_states": ("RNN", {"hidden_size": 3, "activation": "tanh",
                                          "bidirectional": True, "layout": "NTC",
                                          "input_size": 3}, (2, 4, 3), True),
    "gru_float64": ("GRU", {"hidden_size": 3, "input_size": 2, "dtype": "float64"},
                    (3, 2, 2), False),
}

# Layers whose MXNet export (symbol JSON and params) is committed for SymbolBlock.imports.
IMPORT_FILES = ["lstm_1l", "lstm_2l_bidir_states"]


def build_layer(rnn, name):
    cls, kwargs, _, _ = LAYERS[name]
    return getattr(rnn, cls)(**kwargs)


def layer_dtype(name):
    return LAYERS[name][1].get("dtype", "float32")


def layer_input(name):
    return array(LAYERS[name][2], 0, layer_dtype(name))


def layer_states(name, layer):
    """Explicit begin states (None when the case lets the layer make zeros)."""
    _, _, shape, explicit = LAYERS[name]
    if not explicit:
        return None
    batch = shape[LAYERS[name][1].get("layout", "TNC").find("N")]
    return [array(info["shape"], 1 + k, layer_dtype(name))
            for k, info in enumerate(layer.state_info(batch))]


# --- cells ---------------------------------------------------------------------------------
def _seq(rnn, container, *cells):
    seq = getattr(rnn, container)()
    with seq.name_scope():
        for make in cells:
            seq.add(make())
    return seq


def _hybrid_stack(rnn):
    return _seq(rnn, "HybridSequentialRNNCell", lambda: rnn.LSTMCell(4),
                lambda: rnn.DropoutCell(0.5), lambda: rnn.GRUCell(3))


def _residual_stack(rnn):
    return _seq(rnn, "SequentialRNNCell", lambda: rnn.RNNCell(3, input_size=3),
                lambda: rnn.ResidualCell(rnn.GRUCell(3)))


# name: (builder, input shape, layout, merge_outputs, valid_length, explicit begin states)
CELLS = {
    "rnn_cell_tanh": (lambda rnn: rnn.RNNCell(4, input_size=3), (2, 3, 3), "NTC", True, None,
                      False),
    "rnn_cell_relu_list": (lambda rnn: rnn.RNNCell(4, activation="relu"), (2, 3, 3), "NTC",
                           False, None, False),
    "lstm_cell": (lambda rnn: rnn.LSTMCell(4), (2, 3, 3), "NTC", True, None, False),
    "lstm_cell_tnc_list_states": (lambda rnn: rnn.LSTMCell(4, input_size=3), (3, 2, 3), "TNC",
                                  False, None, True),
    "lstm_cell_activations": (lambda rnn: rnn.LSTMCell(3, activation="softsign",
                                                       recurrent_activation="softrelu"),
                              (2, 3, 2), "NTC", True, None, False),
    "gru_cell": (lambda rnn: rnn.GRUCell(4), (2, 3, 3), "NTC", True, None, False),
    "gru_cell_tnc_list": (lambda rnn: rnn.GRUCell(3), (3, 2, 2), "TNC", False, None, False),
    "hybrid_sequential": (_hybrid_stack, (2, 3, 3), "NTC", False, None, False),
    "sequential_residual": (_residual_stack, (2, 3, 3), "NTC", True, None, False),
    "bidirectional": (lambda rnn: rnn.BidirectionalCell(rnn.LSTMCell(3), rnn.GRUCell(3)),
                      (2, 3, 2), "NTC", True, None, False),
    "bidirectional_tnc_list": (lambda rnn: rnn.BidirectionalCell(rnn.RNNCell(2),
                                                                 rnn.RNNCell(2)),
                               (3, 2, 2), "TNC", False, None, False),
    "lstm_cell_valid_length": (lambda rnn: rnn.LSTMCell(3), (2, 3, 2), "NTC", True, [3, 1],
                               False),
    "bidirectional_valid_length": (lambda rnn: rnn.BidirectionalCell(rnn.GRUCell(2),
                                                                     rnn.GRUCell(2)),
                                   (2, 3, 2), "NTC", True, [2, 3], False),
    "residual_valid_length_list": (lambda rnn: rnn.ResidualCell(rnn.GRUCell(3)), (2, 3, 3),
                                   "NTC", False, [1, 3], False),
    "zoneout": (lambda rnn: rnn.ZoneoutCell(rnn.LSTMCell(3), 0.5, 0.5), (2, 3, 2), "NTC", True,
                None, False),
}

STEPS = 3


def build_cell(rnn, name):
    return CELLS[name][0](rnn)


def cell_input(name):
    return array(CELLS[name][1], 10)


def cell_valid_length(name):
    valid = CELLS[name][4]
    return None if valid is None else np.array(valid, dtype="float32")


def cell_states(name, cell):
    """Explicit begin states (None when unroll makes zeros)."""
    _, shape, layout, _, _, explicit = CELLS[name]
    if not explicit:
        return None
    batch = shape[layout.find("N")]
    return [array(info["shape"], 11 + k) for k, info in enumerate(cell.state_info(batch))]


# --- layers called on Symbols (not run: MXNet's CPU RNN kernel refuses use_sequence_length) -
# name: (class, kwargs, call with explicit state variables)
SYMBOLIC_LAYERS = {
    "lstm_sequence_length": ("LSTM", {"hidden_size": 3, "bidirectional": True, "input_size": 2,
                                      "use_sequence_length": True}, False),
    "gru_ntc_zero_states": ("GRU", {"hidden_size": 3, "layout": "NTC"}, False),
    "rnn_state_vars": ("RNN", {"hidden_size": 2, "num_layers": 2}, True),
}


def symbolic_layer_call(rnn, sym, name):
    """Build layer ``name`` and call it on variables ``data`` (``state<k>``,
    ``sequence_length``); returns the grouped output symbol."""
    cls, kwargs, explicit = SYMBOLIC_LAYERS[name]
    layer = getattr(rnn, cls)(**kwargs)
    states = None
    if explicit:
        states = [sym.var(f"state{k}") for k in range(len(layer.state_info()))]
    if kwargs.get("use_sequence_length"):
        out = layer(sym.var("data"), states, sym.var("sequence_length"))
    else:
        out = layer(sym.var("data"), states)
    if isinstance(out, (list, tuple)):
        out = sym.Group([out[0]] + list(out[1]))
    return out
