"""Fused recurrent layers ``RNN``, ``LSTM``, ``GRU`` (``mxnet.gluon.rnn.rnn_layer``, 1.9.1).

A layer holds one parameter per layer, direction and matrix, named as MXNet names them
(``lstm0_l0_i2h_weight``, ``lstm0_r1_h2h_bias``, ``..._h2r_weight`` with a projection), and
runs them through the fused ``RNN`` op. The op's flat parameter vector is built as MXNet 1.9.1
builds it: every parameter ``reshape(-1)``-ed, weights before biases, layer by layer, forward
before backward, ``i2h`` before ``h2h`` (before ``h2r``), joined by one ``_rnn_param_concat``
(``dim=0``). So a hybridized layer exports the graph MXNet exports, node for node.

Begin states default to zeros made by ``begin_state`` at call time: hybridized, they are
graph inputs (``data1``, ``data2``) as in MXNet's exports, and the output states are only
returned when states were passed in.
"""

from __future__ import annotations

import re
from typing import Any

from ... import ndarray as _nd
from ... import symbol as _sym
from ...errors import OpAttributeError, ShapeError
from ...ndarray import NDArray
from ..hybrid import HybridBlock
from . import rnn_cell

__all__ = ["RNN", "LSTM", "GRU"]

_GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}
_PARAM_KEY = re.compile(r"(l|r)(\d)_(i2h|h2h|h2r)_(weight|bias)\Z")


def _attr(value: Any) -> Any:
    """MXNet's generated op functions write an explicit ``None`` as the string ``"None"``
    (``projection_size``, the LSTM clip bounds); gluonport's front end drops ``None``, so
    pass the string to get the same attributes in exported JSON."""
    return "None" if value is None else value


class _RNNLayer(HybridBlock):
    """The fused-kernel implementation shared by :class:`RNN`, :class:`LSTM`, :class:`GRU`."""

    def __init__(self, hidden_size: int, num_layers: int, layout: str, dropout: float,
                 bidirectional: bool, input_size: int, i2h_weight_initializer: Any,
                 h2h_weight_initializer: Any, i2h_bias_initializer: Any,
                 h2h_bias_initializer: Any, mode: str, projection_size: int | None,
                 h2r_weight_initializer: Any, lstm_state_clip_min: float | None,
                 lstm_state_clip_max: float | None, lstm_state_clip_nan: bool, dtype: Any,
                 use_sequence_length: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        if layout not in ("TNC", "NTC"):
            raise OpAttributeError(f"Invalid layout {layout}; must be one of ['TNC' or 'NTC']")
        self._hidden_size = hidden_size
        self._projection_size = projection_size if projection_size else None
        self._num_layers = num_layers
        self._mode = mode
        self._layout = layout
        self._dropout = dropout
        self._dir = 2 if bidirectional else 1
        self._input_size = input_size
        self._i2h_weight_initializer = i2h_weight_initializer
        self._h2h_weight_initializer = h2h_weight_initializer
        self._i2h_bias_initializer = i2h_bias_initializer
        self._h2h_bias_initializer = h2h_bias_initializer
        self._h2r_weight_initializer = h2r_weight_initializer
        self._lstm_state_clip_min = lstm_state_clip_min
        self._lstm_state_clip_max = lstm_state_clip_max
        self._lstm_state_clip_nan = lstm_state_clip_nan
        self._dtype = dtype
        self._use_sequence_length = use_sequence_length
        self.skip_states: bool | None = None
        self._gates = _GATES[mode]
        self._register_all()

    def _register_all(self) -> None:
        """Per layer and direction: i2h/h2h weights and biases (and h2r with a projection)."""
        ng, nh, proj = self._gates, self._hidden_size, self._projection_size
        inits = {"i2h_weight": self._i2h_weight_initializer,
                 "h2h_weight": self._h2h_weight_initializer,
                 "i2h_bias": self._i2h_bias_initializer, "h2h_bias": self._h2h_bias_initializer,
                 "h2r_weight": self._h2r_weight_initializer}
        ni = self._input_size
        for i in range(self._num_layers):
            for j in ["l", "r"][:self._dir]:
                shapes = {"i2h_weight": (ng * nh, ni), "h2h_weight": (ng * nh, proj or nh),
                          "i2h_bias": (ng * nh,), "h2h_bias": (ng * nh,)}
                if proj:
                    shapes["h2r_weight"] = (proj, nh)
                for key, shape in shapes.items():
                    self._register_param(f"{j}{i}_{key}", shape, inits[key], self._dtype)
            ni = (proj or nh) * self._dir

    def _register_param(self, name: str, shape: tuple, init: Any, dtype: Any) -> Any:
        p = self.params.get(name, shape=shape, init=init, allow_deferred_init=True,
                            dtype=dtype)
        setattr(self, name, p)
        return p

    def __repr__(self) -> str:
        s = f"{self.__class__.__name__}({{mapping}}, {self._layout}"
        if self._num_layers != 1:
            s += f", num_layers={self._num_layers}"
        if self._dropout != 0:
            s += f", dropout={self._dropout}"
        if self._dir == 2:
            s += ", bidirectional"
        shape = self.l0_i2h_weight.shape
        mapping = f"{shape[1] if shape[1] else None} -> {shape[0] // self._gates}"
        return s.format(mapping=mapping) + ")"

    def _collect_params_with_prefix(self, prefix: str = "") -> dict:
        """``save_parameters`` names of the unfused cell stack (``_unfused.0.l_cell.i2h_weight``
        bidirectional, ``_unfused.0.i2h_weight`` otherwise), as MXNet keeps them for
        compatibility with its older layer format."""
        if prefix:
            prefix += "."
        matches = {key: _PARAM_KEY.match(key) for key in self._reg_params}
        bidirectional = any(m.group(1) == "r" for m in matches.values())

        def convert(m: re.Match) -> str:
            d, layer, g, t = (m.group(i) for i in range(1, 5))
            if bidirectional:
                return f"_unfused.{layer}.{d}_cell.{g}_{t}"
            return f"_unfused.{layer}.{g}_{t}"

        ret = {prefix + convert(matches[key]): val for key, val in self._reg_params.items()}
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def state_info(self, batch_size: int = 0) -> list[dict]:
        raise NotImplementedError

    def _state(self, size: int, batch_size: int) -> dict:
        return {"shape": (self._num_layers * self._dir, batch_size, size),
                "__layout__": "LNC", "dtype": self._dtype}

    def _unfuse(self) -> rnn_cell.HybridSequentialRNNCell:
        """The equivalent stack of cells sharing this layer's parameters."""
        if self._projection_size or self._lstm_state_clip_min or self._lstm_state_clip_max:
            raise OpAttributeError(f"'{self.name}': _unfuse supports neither projection_size "
                                   "nor state clipping")
        stack = rnn_cell.HybridSequentialRNNCell(prefix=self.prefix, params=self.params)
        with stack.name_scope():
            ni = self._input_size
            for i in range(self._num_layers):
                kwargs = {"input_size": ni,
                          "i2h_weight_initializer": self._i2h_weight_initializer,
                          "h2h_weight_initializer": self._h2h_weight_initializer,
                          "i2h_bias_initializer": self._i2h_bias_initializer,
                          "h2h_bias_initializer": self._h2h_bias_initializer}
                if self._dir == 2:
                    stack.add(rnn_cell.BidirectionalCell(self._cell(f"l{i}_", kwargs),
                                                         self._cell(f"r{i}_", kwargs)))
                else:
                    stack.add(self._cell(f"l{i}_", kwargs))
                if self._dropout > 0 and i != self._num_layers - 1:
                    stack.add(rnn_cell.DropoutCell(self._dropout))
                ni = self._hidden_size * self._dir
        return stack

    def _cell(self, prefix: str, kwargs: dict) -> rnn_cell.HybridRecurrentCell:
        if self._mode in ("rnn_relu", "rnn_tanh"):
            return rnn_cell.RNNCell(self._hidden_size, activation=self._mode[4:], prefix=prefix,
                                    **kwargs)
        cls = rnn_cell.LSTMCell if self._mode == "lstm" else rnn_cell.GRUCell
        return cls(self._hidden_size, prefix=prefix, **kwargs)

    def cast(self, dtype: Any) -> None:
        super().cast(dtype)
        self._dtype = dtype

    def begin_state(self, batch_size: int = 0, func: Any = _nd.zeros, **kwargs: Any) -> list:
        """Initial states: ``func(name='<prefix>h0_<k>', shape=(layers*dirs, batch, size),
        __layout__='LNC', dtype=..., **kwargs)`` for each state.

        Parameters
        ----------
        batch_size : int
            Only needed for NDArrays.
        func : callable, default ``nd.zeros``
            ``sym.zeros``, ``sym.var`` (to feed the states), ``nd.ones``, ...
        **kwargs
            Passed to ``func`` (``ctx``, ``dtype``...).
        """
        states = []
        for i, info in enumerate(self.state_info(batch_size)):
            info = kwargs if info is None else {**info, **kwargs}
            states.append(func(name=f"{self.prefix}h0_{i}", **info))
        return states

    def __call__(self, inputs: Any, states: Any = None, sequence_length: Any = None,
                 **kwargs: Any) -> Any:
        """``layer(data)`` returns the output; ``layer(data, states)`` returns
        ``(output, new states)``. ``sequence_length`` is read with
        ``use_sequence_length=True`` only."""
        self.skip_states = states is None
        if states is None:
            if isinstance(inputs, NDArray):
                batch_size = inputs.shape[self._layout.find("N")]
                states = self.begin_state(batch_size, ctx=inputs.context, dtype=inputs.dtype)
            else:
                states = self.begin_state(0, func=_sym.zeros)
        if isinstance(states, (NDArray, _sym.Symbol)):
            states = [states]
        if self._use_sequence_length:
            return super().__call__(inputs, states, sequence_length, **kwargs)
        return super().__call__(inputs, states, **kwargs)

    def hybrid_forward(self, F: Any, inputs: Any, states: Any, sequence_length: Any = None,
                       **kwargs: Any) -> Any:
        if F is _nd:
            batch_size = inputs.shape[self._layout.find("N")]
            for state, info in zip(states, self.state_info(batch_size)):
                if state.shape != info["shape"]:
                    raise ShapeError(f"Invalid recurrent state shape. Expecting "
                                     f"{info['shape']}, got {state.shape}.")
        out = self._forward_kernel(F, inputs, states, sequence_length, **kwargs)
        return out[0] if self.skip_states else out

    def _flat_params(self, F: Any, kwargs: dict) -> Any:
        """MXNet's flat vector: weights then biases; layer, direction, i2h/h2h(/h2r)."""
        groups = ["i2h", "h2h", "h2r"] if self._projection_size else ["i2h", "h2h"]
        parts = [kwargs[f"{d}{layer}_{g}_{t}"].reshape(-1)
                 for t in ["weight", "bias"]
                 for layer in range(self._num_layers)
                 for d in ["l", "r"][:self._dir]
                 for g in groups
                 if g != "h2r" or t != "bias"]
        return F._internal._rnn_param_concat(*parts, dim=0)

    def _forward_kernel(self, F: Any, inputs: Any, states: list, sequence_length: Any,
                        **kwargs: Any) -> tuple[Any, list]:
        """The fused ``RNN`` op (TNC inside: NTC inputs and outputs are swapped)."""
        if self._layout == "NTC":
            inputs = F.swapaxes(inputs, 0, 1)
        params = self._flat_params(F, kwargs)
        rnn_args = list(states) + ([sequence_length] if self._use_sequence_length else [])
        rnn = F.RNN(inputs, params, *rnn_args, use_sequence_length=self._use_sequence_length,
                    state_size=self._hidden_size, projection_size=_attr(self._projection_size),
                    num_layers=self._num_layers, bidirectional=self._dir == 2, p=self._dropout,
                    state_outputs=True, mode=self._mode,
                    lstm_state_clip_min=_attr(self._lstm_state_clip_min),
                    lstm_state_clip_max=_attr(self._lstm_state_clip_max),
                    lstm_state_clip_nan=self._lstm_state_clip_nan)
        if self._mode == "lstm":
            outputs, states = rnn[0], [rnn[1], rnn[2]]
        else:
            outputs, states = rnn[0], [rnn[1]]
        if self._layout == "NTC":
            outputs = F.swapaxes(outputs, 0, 1)
        return outputs, states


class RNN(_RNNLayer):
    r"""Multi-layer Elman RNN with ``tanh`` or ``relu``:
    ``h_t = act(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)``.

    Parameters
    ----------
    hidden_size : int
    num_layers : int, default 1
    activation : {'relu', 'tanh'}, default 'relu'
    layout : {'TNC', 'NTC'}, default 'TNC'
    dropout : float, default 0
        Dropout between layers when training (not applied at inference).
    bidirectional : bool, default False
    i2h_weight_initializer, h2h_weight_initializer : Initializer, optional
    i2h_bias_initializer, h2h_bias_initializer : Initializer, default 'zeros'
    input_size : int, default 0
        0 infers it from the first input.
    dtype : str, default 'float32'
    use_sequence_length : bool, default False
        Take a third input ``sequence_length`` (batch,) of valid steps per item.
    prefix : str, optional
    params : ParameterDict, optional

    Inputs are ``data`` (``layout``) and optionally ``states`` ((layers*dirs, N, H));
    outputs are ``out`` ((T, N, dirs*H) in TNC) and, when states were given, the new states.
    """

    def __init__(self, hidden_size: int, num_layers: int = 1, activation: str = "relu",
                 layout: str = "TNC", dropout: float = 0, bidirectional: bool = False,
                 i2h_weight_initializer: Any = None, h2h_weight_initializer: Any = None,
                 i2h_bias_initializer: Any = "zeros", h2h_bias_initializer: Any = "zeros",
                 input_size: int = 0, dtype: Any = "float32", **kwargs: Any):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "rnn_" + activation, None, None, None, None,
                         False, dtype, **kwargs)

    def state_info(self, batch_size: int = 0) -> list[dict]:
        return [self._state(self._hidden_size, batch_size)]


class LSTM(_RNNLayer):
    r"""Multi-layer LSTM; gates ``i, f, g, o``; ``c_t = f c_{t-1} + i g``,
    ``h_t = o tanh(c_t)`` (projected by ``h2r_weight`` with ``projection_size``).

    Parameters
    ----------
    hidden_size : int
    num_layers : int, default 1
    layout : {'TNC', 'NTC'}, default 'TNC'
    dropout : float, default 0
    bidirectional : bool, default False
    input_size : int, default 0
    i2h_weight_initializer, h2h_weight_initializer : Initializer, optional
    i2h_bias_initializer, h2h_bias_initializer : Initializer, default 'zeros'
    projection_size : int, optional
    h2r_weight_initializer : Initializer, optional
    state_clip_min, state_clip_max : float, optional
        Clip the cell state (both or neither).
    state_clip_nan : bool, default False
    dtype : str, default 'float32'
    use_sequence_length : bool, default False
    prefix : str, optional
    params : ParameterDict, optional

    States are ``[h, c]``, each (layers*dirs, N, H) (``h`` is (…, projection_size) with a
    projection).
    """

    def __init__(self, hidden_size: int, num_layers: int = 1, layout: str = "TNC",
                 dropout: float = 0, bidirectional: bool = False, input_size: int = 0,
                 i2h_weight_initializer: Any = None, h2h_weight_initializer: Any = None,
                 i2h_bias_initializer: Any = "zeros", h2h_bias_initializer: Any = "zeros",
                 projection_size: int | None = None, h2r_weight_initializer: Any = None,
                 state_clip_min: float | None = None, state_clip_max: float | None = None,
                 state_clip_nan: bool = False, dtype: Any = "float32", **kwargs: Any):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "lstm", projection_size, h2r_weight_initializer,
                         state_clip_min, state_clip_max, state_clip_nan, dtype, **kwargs)

    def state_info(self, batch_size: int = 0) -> list[dict]:
        first = self._projection_size or self._hidden_size
        return [self._state(first, batch_size), self._state(self._hidden_size, batch_size)]


class GRU(_RNNLayer):
    r"""Multi-layer GRU in cuDNN's form; gates ``r, z, n``;
    ``n = tanh(W_in x + b_in + r (W_hn h + b_hn))``, ``h' = (1 - z) n + z h``.

    Parameters
    ----------
    hidden_size : int
    num_layers : int, default 1
    layout : {'TNC', 'NTC'}, default 'TNC'
    dropout : float, default 0
    bidirectional : bool, default False
    input_size : int, default 0
    i2h_weight_initializer, h2h_weight_initializer : Initializer, optional
    i2h_bias_initializer, h2h_bias_initializer : Initializer, default 'zeros'
    dtype : str, default 'float32'
    use_sequence_length : bool, default False
    prefix : str, optional
    params : ParameterDict, optional
    """

    def __init__(self, hidden_size: int, num_layers: int = 1, layout: str = "TNC",
                 dropout: float = 0, bidirectional: bool = False, input_size: int = 0,
                 i2h_weight_initializer: Any = None, h2h_weight_initializer: Any = None,
                 i2h_bias_initializer: Any = "zeros", h2h_bias_initializer: Any = "zeros",
                 dtype: Any = "float32", **kwargs: Any):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "gru", None, None, None, None, False, dtype,
                         **kwargs)

    def state_info(self, batch_size: int = 0) -> list[dict]:
        return [self._state(self._hidden_size, batch_size)]
