"""Recurrent cells (``mxnet.gluon.rnn.rnn_cell``, 1.9.1): one time step per call, ``unroll``
over a sequence.

The cells create the parameters MXNet creates (``i2h_weight``, ``h2h_weight``, ``i2h_bias``,
``h2h_bias`` under the cell's prefix: ``lstm0_i2h_weight``), name the nodes of step ``t``
``<prefix>t<t>_i2h``, ``..._plus0``, ``..._slice`` as MXNet does, and name begin states
``<prefix>begin_state_<k>``, so unrolled symbols match MXNet's node for node.
"""

from __future__ import annotations

from numbers import Number
from typing import Any

from ... import ndarray as _nd
from ... import symbol as _sym
from ...errors import GluonportError
from .._text import indent
from ..block import Block
from ..hybrid import HybridBlock
from ._sequence import (
    TENSOR_TYPES,
    format_sequence,
    get_begin_state,
    mask_sequence,
    reverse_sequences,
)

__all__ = ["RecurrentCell", "HybridRecurrentCell", "RNNCell", "LSTMCell", "GRUCell",
           "SequentialRNNCell", "HybridSequentialRNNCell", "DropoutCell", "ModifierCell",
           "ZoneoutCell", "ResidualCell", "BidirectionalCell"]

_MODIFIED = ("After applying modifier cells (e.g. ZoneoutCell) the base cell cannot be called "
             "directly. Call the modifier cell instead.")


def _cells_state_info(cells: Any, batch_size: int) -> list:
    return sum([c.state_info(batch_size) for c in cells], [])


def _cells_begin_state(cells: Any, **kwargs: Any) -> list:
    return sum([c.begin_state(**kwargs) for c in cells], [])


def _check_unmodified(cell: RecurrentCell) -> None:
    if cell._modified:
        raise GluonportError(f"cell '{cell.name}': {_MODIFIED}")


class RecurrentCell(Block):
    """Base class of RNN cells (``mxnet.gluon.rnn.RecurrentCell``).

    Parameters
    ----------
    prefix : str, optional
        Prefix of the cell's blocks and (when ``params`` is None) parameters.
    params : ParameterDict, optional
        Parameters to share with another cell.
    """

    def __init__(self, prefix: str | None = None, params: Any = None):
        super().__init__(prefix=prefix, params=params)
        self._modified = False
        self.reset()

    def reset(self) -> None:
        """Reset the step counters before unrolling another sequence."""
        self._init_counter = -1
        self._counter = -1
        for cell in self._children.values():
            cell.reset()

    def state_info(self, batch_size: int = 0) -> list[dict]:
        """Shape (and ``__layout__``) of each state."""
        raise NotImplementedError

    def begin_state(self, batch_size: int = 0, func: Any = _nd.zeros, **kwargs: Any) -> list:
        """Initial states, one ``func(name=..., shape=..., **kwargs)`` per state.

        Parameters
        ----------
        batch_size : int
            The batch size (``N``); only needed for NDArrays.
        func : callable, default ``nd.zeros``
            ``sym.zeros``, ``sym.var`` (to feed the states), ``nd.ones``, ...
        **kwargs
            Passed to ``func`` (``dtype``, ``ctx``, ...).
        """
        _check_unmodified(self)
        states = []
        for info in self.state_info(batch_size):
            self._init_counter += 1
            info = kwargs if info is None else {**info, **kwargs}
            states.append(func(name=f"{self._prefix}begin_state_{self._init_counter}", **info))
        return states

    def unroll(self, length: int, inputs: Any, begin_state: Any = None, layout: str = "NTC",
               merge_outputs: bool | None = None, valid_length: Any = None) -> tuple[Any, list]:
        """Run the cell over ``length`` steps.

        Parameters
        ----------
        length : int
            Number of steps.
        inputs : Symbol, NDArray or list of them
            One tensor laid out as ``layout`` (``NTC``: (batch, length, ...)), or one
            (batch, ...) tensor per step.
        begin_state : list, optional
            Initial states (``begin_state()`` zeros when None).
        layout : {'NTC', 'TNC'}
        merge_outputs : bool, optional
            True: one tensor laid out as ``layout``; False: a list of steps; None: whichever
            is at hand.
        valid_length : Symbol or NDArray, optional
            (batch,) valid steps per item: later outputs are zeros and the states returned
            are those of the last valid step.

        Returns
        -------
        outputs, states
        """
        self.reset()
        inputs, axis, F, batch_size = format_sequence(length, inputs, layout, False)
        states = get_begin_state(self, F, begin_state, inputs, batch_size)
        outputs, all_states = [], []
        for i in range(length):
            output, states = self(inputs[i], states)
            outputs.append(output)
            if valid_length is not None:
                all_states.append(states)
        if valid_length is not None:
            states = [F.SequenceLast(F.stack(*steps, axis=0), sequence_length=valid_length,
                                     use_sequence_length=True, axis=0)
                      for steps in zip(*all_states)]
            outputs = mask_sequence(F, outputs, length, valid_length, axis, True)
        outputs, _, _, _ = format_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, F: Any, inputs: Any, activation: Any, **kwargs: Any) -> Any:
        """Apply ``activation``: a name (``'tanh'``...), a LeakyReLU block or a callable."""
        from ..nn import LeakyReLU

        if isinstance(activation, str):
            func = {"tanh": F.tanh, "relu": F.relu, "sigmoid": F.sigmoid,
                    "softsign": F.softsign}.get(activation)
            if func is not None:
                return func(inputs, **kwargs)
            return F.Activation(inputs, act_type=activation, **kwargs)
        if isinstance(activation, LeakyReLU):
            return F.LeakyReLU(inputs, act_type="leaky", slope=activation._alpha, **kwargs)
        return activation(inputs, **kwargs)

    def forward(self, inputs: Any, states: Any) -> Any:
        """One step: ``(output, new states)``."""
        self._counter += 1
        return super().forward(inputs, states)


class HybridRecurrentCell(RecurrentCell, HybridBlock):
    """A recurrent cell that can be hybridized (``mxnet.gluon.rnn.HybridRecurrentCell``)."""

    def __init__(self, prefix: str | None = None, params: Any = None):
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F: Any, x: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


class _GatedCell(HybridRecurrentCell):
    """The four parameters of RNN/LSTM/GRU cells, with ``gates`` blocks of ``hidden_size``."""

    _gates = 1

    def __init__(self, hidden_size: int, i2h_weight_initializer: Any,
                 h2h_weight_initializer: Any, i2h_bias_initializer: Any,
                 h2h_bias_initializer: Any, input_size: int, prefix: str | None,
                 params: Any):
        super().__init__(prefix=prefix, params=params)
        self._hidden_size = hidden_size
        self._input_size = input_size
        rows = self._gates * hidden_size
        get = self.params.get
        self.i2h_weight = get("i2h_weight", shape=(rows, input_size),
                              init=i2h_weight_initializer, allow_deferred_init=True)
        self.h2h_weight = get("h2h_weight", shape=(rows, hidden_size),
                              init=h2h_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = get("i2h_bias", shape=(rows,), init=i2h_bias_initializer,
                            allow_deferred_init=True)
        self.h2h_bias = get("h2h_bias", shape=(rows,), init=h2h_bias_initializer,
                            allow_deferred_init=True)

    def state_info(self, batch_size: int = 0) -> list[dict]:
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _mapping(self) -> str:
        shape = self.i2h_weight.shape
        return f"{shape[1] if shape[1] else None} -> {shape[0]}"

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._mapping()})"

    def _projections(self, F: Any, inputs: Any, h: Any, i2h_weight: Any, h2h_weight: Any,
                     i2h_bias: Any, h2h_bias: Any) -> tuple[str, Any, Any]:
        prefix = f"t{self._counter}_"
        rows = self._gates * self._hidden_size
        i2h = F.FullyConnected(data=inputs, weight=i2h_weight, bias=i2h_bias, num_hidden=rows,
                               name=prefix + "i2h")
        h2h = F.FullyConnected(data=h, weight=h2h_weight, bias=h2h_bias, num_hidden=rows,
                               name=prefix + "h2h")
        return prefix, i2h, h2h


class RNNCell(_GatedCell):
    r"""Elman RNN cell: ``h_t = act(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)``.

    Parameters
    ----------
    hidden_size : int
    activation : str or Block, default 'tanh'
    i2h_weight_initializer, h2h_weight_initializer : Initializer, optional
    i2h_bias_initializer, h2h_bias_initializer : Initializer, default 'zeros'
    input_size : int, default 0
        0 defers the input weight's shape to the first step.
    prefix : str, optional
        Default ``rnn<k>_``.
    params : ParameterDict, optional
    """

    def __init__(self, hidden_size: int, activation: Any = "tanh",
                 i2h_weight_initializer: Any = None, h2h_weight_initializer: Any = None,
                 i2h_bias_initializer: Any = "zeros", h2h_bias_initializer: Any = "zeros",
                 input_size: int = 0, prefix: str | None = None, params: Any = None):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)
        self._activation = activation

    def _alias(self) -> str:
        return "rnn"

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._mapping()}, {self._activation})"

    def hybrid_forward(self, F: Any, inputs: Any, states: Any, i2h_weight: Any,
                       h2h_weight: Any, i2h_bias: Any, h2h_bias: Any) -> Any:
        prefix, i2h, h2h = self._projections(F, inputs, states[0], i2h_weight, h2h_weight,
                                             i2h_bias, h2h_bias)
        total = F.elemwise_add(i2h, h2h, name=prefix + "plus0")
        output = self._get_activation(F, total, self._activation, name=prefix + "out")
        return output, [output]


class LSTMCell(_GatedCell):
    r"""Long short-term memory cell; gates ``i, f, g, o`` stacked in that order.

    ``c_t = f * c_{t-1} + i * g``, ``h_t = o * activation(c_t)`` with
    ``recurrent_activation`` for ``i, f, o`` and ``activation`` for ``g``.

    Parameters
    ----------
    hidden_size : int
    i2h_weight_initializer, h2h_weight_initializer : Initializer, optional
    i2h_bias_initializer, h2h_bias_initializer : Initializer, default 'zeros'
    input_size : int, default 0
    prefix : str, optional
        Default ``lstm<k>_``.
    params : ParameterDict, optional
    activation : str, default 'tanh'
    recurrent_activation : str, default 'sigmoid'
    """

    _gates = 4

    def __init__(self, hidden_size: int, i2h_weight_initializer: Any = None,
                 h2h_weight_initializer: Any = None, i2h_bias_initializer: Any = "zeros",
                 h2h_bias_initializer: Any = "zeros", input_size: int = 0,
                 prefix: str | None = None, params: Any = None, activation: Any = "tanh",
                 recurrent_activation: Any = "sigmoid"):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)
        self._activation = activation
        self._recurrent_activation = recurrent_activation

    def state_info(self, batch_size: int = 0) -> list[dict]:
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"},
                {"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _alias(self) -> str:
        return "lstm"

    def hybrid_forward(self, F: Any, inputs: Any, states: Any, i2h_weight: Any,
                       h2h_weight: Any, i2h_bias: Any, h2h_bias: Any) -> Any:
        prefix, i2h, h2h = self._projections(F, inputs, states[0], i2h_weight, h2h_weight,
                                             i2h_bias, h2h_bias)
        gates = F.elemwise_add(i2h, h2h, name=prefix + "plus0")
        sliced = F.SliceChannel(gates, num_outputs=4, name=prefix + "slice")
        rec, act = self._recurrent_activation, self._activation
        in_gate = self._get_activation(F, sliced[0], rec, name=prefix + "i")
        forget_gate = self._get_activation(F, sliced[1], rec, name=prefix + "f")
        in_transform = self._get_activation(F, sliced[2], act, name=prefix + "c")
        out_gate = self._get_activation(F, sliced[3], rec, name=prefix + "o")
        next_c = F.elemwise_add(F.elemwise_mul(forget_gate, states[1], name=prefix + "mul0"),
                                F.elemwise_mul(in_gate, in_transform, name=prefix + "mul1"),
                                name=prefix + "state")
        next_h = F.elemwise_mul(out_gate, F.Activation(next_c, act_type=act,
                                                       name=prefix + "activation0"),
                                name=prefix + "out")
        return next_h, [next_h, next_c]


class GRUCell(_GatedCell):
    r"""Gated recurrent unit cell in cuDNN's form (the reset gate multiplies ``W_hn h + b_hn``
    after the matrix product); gates ``r, z, n`` stacked in that order.

    Parameters
    ----------
    hidden_size : int
    i2h_weight_initializer, h2h_weight_initializer : Initializer, optional
    i2h_bias_initializer, h2h_bias_initializer : Initializer, default 'zeros'
    input_size : int, default 0
    prefix : str, optional
        Default ``gru<k>_``.
    params : ParameterDict, optional
    """

    _gates = 3

    def __init__(self, hidden_size: int, i2h_weight_initializer: Any = None,
                 h2h_weight_initializer: Any = None, i2h_bias_initializer: Any = "zeros",
                 h2h_bias_initializer: Any = "zeros", input_size: int = 0,
                 prefix: str | None = None, params: Any = None):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)

    def _alias(self) -> str:
        return "gru"

    def hybrid_forward(self, F: Any, inputs: Any, states: Any, i2h_weight: Any,
                       h2h_weight: Any, i2h_bias: Any, h2h_bias: Any) -> Any:
        prev_h = states[0]
        prefix, i2h, h2h = self._projections(F, inputs, prev_h, i2h_weight, h2h_weight,
                                             i2h_bias, h2h_bias)
        i2h_r, i2h_z, i2h = F.SliceChannel(i2h, num_outputs=3, name=prefix + "i2h_slice")
        h2h_r, h2h_z, h2h = F.SliceChannel(h2h, num_outputs=3, name=prefix + "h2h_slice")
        reset_gate = F.Activation(F.elemwise_add(i2h_r, h2h_r, name=prefix + "plus0"),
                                  act_type="sigmoid", name=prefix + "r_act")
        update_gate = F.Activation(F.elemwise_add(i2h_z, h2h_z, name=prefix + "plus1"),
                                   act_type="sigmoid", name=prefix + "z_act")
        reset_h2h = F.elemwise_mul(reset_gate, h2h, name=prefix + "mul0")
        candidate = F.Activation(F.elemwise_add(i2h, reset_h2h, name=prefix + "plus2"),
                                 act_type="tanh", name=prefix + "h_act")
        ones = F.ones_like(update_gate, name=prefix + "ones_like0")
        keep_new = F.elemwise_sub(ones, update_gate, name=prefix + "minus0")
        next_h = F.elemwise_add(F.elemwise_mul(keep_new, candidate, name=prefix + "mul1"),
                                F.elemwise_mul(update_gate, prev_h, name=prefix + "mul20"),
                                name=prefix + "out")
        return next_h, [next_h]


class _StackMixin:
    """Shared by the sequential containers: step every child, splitting the states."""

    def __repr__(self) -> str:
        body = "\n".join(f"({i}): {indent(repr(m), 2)}" for i, m in self._children.items())
        return f"{self.__class__.__name__}(\n{body}\n)"

    def add(self, cell: RecurrentCell) -> None:
        """Append ``cell`` to the stack."""
        self.register_child(cell)

    def state_info(self, batch_size: int = 0) -> list[dict]:
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, **kwargs: Any) -> list:
        _check_unmodified(self)
        return _cells_begin_state(self._children.values(), **kwargs)

    def __call__(self, inputs: Any, states: Any) -> Any:
        self._counter += 1
        next_states, p = [], 0
        for cell in self._children.values():
            if isinstance(cell, BidirectionalCell):
                raise GluonportError(f"'{self.name}': a BidirectionalCell cannot be stepped; "
                                     "use unroll")
            n = len(cell.state_info())
            inputs, state = cell(inputs, states[p:p + n])
            p += n
            next_states.append(state)
        return inputs, sum(next_states, [])

    def unroll(self, length: int, inputs: Any, begin_state: Any = None, layout: str = "NTC",
               merge_outputs: bool | None = None, valid_length: Any = None) -> tuple[Any, list]:
        """Unroll each child over the whole sequence in turn (see
        :meth:`RecurrentCell.unroll`)."""
        self.reset()
        inputs, _, F, batch_size = format_sequence(length, inputs, layout, None)
        begin_state = get_begin_state(self, F, begin_state, inputs, batch_size)
        p, next_states = 0, []
        last = len(self._children) - 1
        for i, cell in enumerate(self._children.values()):
            n = len(cell.state_info())
            inputs, states = cell.unroll(length, inputs=inputs, begin_state=begin_state[p:p + n],
                                         layout=layout,
                                         merge_outputs=None if i < last else merge_outputs,
                                         valid_length=valid_length)
            p += n
            next_states.extend(states)
        return inputs, next_states

    def __getitem__(self, i: int) -> Any:
        return self._children[str(i)]

    def __len__(self) -> int:
        return len(self._children)


class SequentialRNNCell(_StackMixin, RecurrentCell):
    """Stacks cells; each step runs them in order (``mxnet.gluon.rnn.SequentialRNNCell``)."""

    def __init__(self, prefix: str | None = None, params: Any = None):
        super().__init__(prefix=prefix, params=params)


class HybridSequentialRNNCell(_StackMixin, HybridRecurrentCell):
    """Stacks hybrid cells (``mxnet.gluon.rnn.HybridSequentialRNNCell``)."""

    def __init__(self, prefix: str | None = None, params: Any = None):
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F: Any, inputs: Any, states: Any) -> Any:
        return self.__call__(inputs, states)


class DropoutCell(HybridRecurrentCell):
    """Dropout on the input (identity at inference); states pass through.

    Parameters
    ----------
    rate : float
    axes : tuple of int, default ()
        Axes sharing one dropout mask.
    """

    def __init__(self, rate: float, axes: tuple = (), prefix: str | None = None,
                 params: Any = None):
        super().__init__(prefix, params)
        if not isinstance(rate, Number):
            raise GluonportError(f"DropoutCell: rate must be a number, got {rate!r}")
        self._rate = rate
        self._axes = axes

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(rate={self._rate}, axes={self._axes})"

    def state_info(self, batch_size: int = 0) -> list[dict]:
        return []

    def _alias(self) -> str:
        return "dropout"

    def hybrid_forward(self, F: Any, inputs: Any, states: Any) -> Any:
        if self._rate > 0:
            inputs = F.Dropout(data=inputs, p=self._rate, axes=self._axes,
                               name=f"t{self._counter}_fwd")
        return inputs, states

    def unroll(self, length: int, inputs: Any, begin_state: Any = None, layout: str = "NTC",
               merge_outputs: bool | None = None, valid_length: Any = None) -> tuple[Any, list]:
        """Dropout over the whole sequence at once when it is one tensor."""
        self.reset()
        inputs, _, F, _ = format_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, TENSOR_TYPES):
            return self.hybrid_forward(F, inputs, begin_state if begin_state else [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs, valid_length=None)


class ModifierCell(HybridRecurrentCell):
    """Base of cells that modify another cell (zoneout, residual); the base cell must then
    only be used through the modifier."""

    def __init__(self, base_cell: RecurrentCell):
        if base_cell._modified:
            raise GluonportError(f"Cell {base_cell.name} is already modified. One cell cannot "
                                 "be modified twice")
        base_cell._modified = True
        super().__init__(prefix=base_cell.prefix + self._alias(), params=None)
        self.base_cell = base_cell

    @property
    def params(self) -> Any:
        return self.base_cell.params

    def state_info(self, batch_size: int = 0) -> list[dict]:
        return self.base_cell.state_info(batch_size)

    def begin_state(self, func: Any = _sym.zeros, **kwargs: Any) -> list:
        """The base cell's begin states (``func`` defaults to ``sym.zeros``, as MXNet's)."""
        _check_unmodified(self)
        self.base_cell._modified = False
        try:
            return self.base_cell.begin_state(func=func, **kwargs)
        finally:
            self.base_cell._modified = True

    def hybrid_forward(self, F: Any, inputs: Any, states: Any) -> Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.base_cell!r})"


class ZoneoutCell(ModifierCell):
    """Zoneout on a base cell: each output/state unit keeps its previous value with
    probability ``zoneout_outputs``/``zoneout_states`` (training only; identity here)."""

    def __init__(self, base_cell: RecurrentCell, zoneout_outputs: float = 0.0,
                 zoneout_states: float = 0.0):
        if isinstance(base_cell, BidirectionalCell):
            raise GluonportError("BidirectionalCell doesn't support zoneout since it doesn't "
                                 "support step. Please add ZoneoutCell to the cells underneath "
                                 "instead.")
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self._prev_output = None

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(p_out={self.zoneout_outputs}, "
                f"p_state={self.zoneout_states}, {self.base_cell!r})")

    def _alias(self) -> str:
        return "zoneout"

    def reset(self) -> None:
        super().reset()
        self._prev_output = None

    def hybrid_forward(self, F: Any, inputs: Any, states: Any) -> Any:
        next_output, next_states = self.base_cell(inputs, states)

        def mask(p: float, like: Any) -> Any:
            return F.Dropout(F.ones_like(like), p=p)

        prev_output = self._prev_output
        if prev_output is None:
            prev_output = F.zeros_like(next_output)
        p_out, p_state = self.zoneout_outputs, self.zoneout_states
        output = (F.where(mask(p_out, next_output), next_output, prev_output)
                  if p_out != 0.0 else next_output)
        states = ([F.where(mask(p_state, new), new, old)
                   for new, old in zip(next_states, states)] if p_state != 0.0 else next_states)
        self._prev_output = output
        return output, states


class ResidualCell(ModifierCell):
    """Adds the input to the base cell's output (Wu et al., 2016)."""

    def __init__(self, base_cell: RecurrentCell):
        super().__init__(base_cell)

    def hybrid_forward(self, F: Any, inputs: Any, states: Any) -> Any:
        output, states = self.base_cell(inputs, states)
        output = F.elemwise_add(output, inputs, name=f"t{self._counter}_fwd")
        return output, states

    def unroll(self, length: int, inputs: Any, begin_state: Any = None, layout: str = "NTC",
               merge_outputs: bool | None = None, valid_length: Any = None) -> tuple[Any, list]:
        """Unroll the base cell, then add the (masked) inputs to its outputs."""
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs=inputs,
                                                    begin_state=begin_state, layout=layout,
                                                    merge_outputs=merge_outputs,
                                                    valid_length=valid_length)
        finally:
            self.base_cell._modified = True
        if merge_outputs is None:
            merge_outputs = isinstance(outputs, TENSOR_TYPES)
        inputs, axis, F, _ = format_sequence(length, inputs, layout, merge_outputs)
        if valid_length is not None:
            inputs = mask_sequence(F, inputs, length, valid_length, axis, merge_outputs)
        if merge_outputs:
            return F.elemwise_add(outputs, inputs), states
        return [F.elemwise_add(i, j) for i, j in zip(outputs, inputs)], states


class BidirectionalCell(HybridRecurrentCell):
    """Runs ``l_cell`` forward and ``r_cell`` backward over the sequence and concatenates
    their outputs (features axis); can only be unrolled.

    Parameters
    ----------
    l_cell, r_cell : RecurrentCell
    output_prefix : str, default 'bi_'
        Prefix of the concatenation nodes' names.
    """

    def __init__(self, l_cell: RecurrentCell, r_cell: RecurrentCell,
                 output_prefix: str = "bi_"):
        super().__init__(prefix="", params=None)
        self.register_child(l_cell, "l_cell")
        self.register_child(r_cell, "r_cell")
        self._output_prefix = output_prefix

    def __call__(self, inputs: Any, states: Any) -> Any:
        raise GluonportError("Bidirectional cannot be stepped. Please use unroll")

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(forward={self._children['l_cell']!r}, "
                f"backward={self._children['r_cell']!r})")

    def state_info(self, batch_size: int = 0) -> list[dict]:
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, **kwargs: Any) -> list:
        _check_unmodified(self)
        return _cells_begin_state(self._children.values(), **kwargs)

    def unroll(self, length: int, inputs: Any, begin_state: Any = None, layout: str = "NTC",
               merge_outputs: bool | None = None, valid_length: Any = None) -> tuple[Any, list]:
        """Unroll ``l_cell`` on the sequence and ``r_cell`` on it reversed (each item's valid
        steps only, with ``valid_length``); outputs concatenated on the features axis."""
        self.reset()
        inputs, axis, F, batch_size = format_sequence(length, inputs, layout, False)
        reversed_inputs = list(reverse_sequences(inputs, length, valid_length))
        states = get_begin_state(self, F, begin_state, inputs, batch_size)
        l_cell, r_cell = self._children.values()
        n_left = len(l_cell.state_info(batch_size))
        l_outputs, l_states = l_cell.unroll(length, inputs=inputs, begin_state=states[:n_left],
                                            layout=layout, merge_outputs=merge_outputs,
                                            valid_length=valid_length)
        r_outputs, r_states = r_cell.unroll(length, inputs=reversed_inputs,
                                            begin_state=states[n_left:], layout=layout,
                                            merge_outputs=False, valid_length=valid_length)
        reversed_r_outputs = reverse_sequences(r_outputs, length, valid_length)
        if merge_outputs is None:
            merge_outputs = isinstance(l_outputs, TENSOR_TYPES)
            l_outputs, _, _, _ = format_sequence(None, l_outputs, layout, merge_outputs)
            reversed_r_outputs, _, _, _ = format_sequence(None, reversed_r_outputs, layout,
                                                          merge_outputs)
        if merge_outputs:
            reversed_r_outputs = F.stack(*reversed_r_outputs, axis=axis)
            outputs = F.concat(l_outputs, reversed_r_outputs, dim=2,
                               name=f"{self._output_prefix}out")
        else:
            outputs = [F.concat(l_o, r_o, dim=1, name=f"{self._output_prefix}t{i}")
                       for i, (l_o, r_o) in enumerate(zip(l_outputs, reversed_r_outputs))]
        if valid_length is not None:
            outputs = mask_sequence(F, outputs, length, valid_length, axis, merge_outputs)
        return outputs, l_states + r_states
