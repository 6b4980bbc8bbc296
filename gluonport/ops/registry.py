"""The operator registry: one :class:`OpDef` per MXNet operator, keyed by MXNet's exact name.

An OpDef carries everything gluonport knows about an operator (ARCHITECTURE.md): its typed
attributes (``ParamSpec``), input names, auxiliary-state inputs, number of
outputs, shape and type inference, numpy compute, and ONNX export handlers. ``nd``, ``sym``, the
executor, the file formats and the ONNX exporter all read it from here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._core.attr_fields import Field, Params, ParamSpec
from ..errors import GluonportError, ShapeError, UnsupportedOpError

__all__ = [
    "OpDef",
    "InPlace",
    "register",
    "define",
    "named",
    "shape_checked",
    "get",
    "find",
    "all_ops",
    "canonical_name",
    "Shape",
    "ShapeList",
    "GradFn",
    "zero_gradient",
]

Shape = "tuple[int, ...] | None"
"""A shape in inference: a tuple of ints, ``0`` for an unknown dim (MXNet 1.x legacy semantics),
or ``None`` when nothing is known."""

ShapeList = list  # list[tuple[int, ...] | None]

ComputeFn = Callable[..., Any]
ShapeFn = Callable[[Params, list], tuple[list, list]]
TypeFn = Callable[[Params, list], tuple[list, list]]
OnnxFn = Callable[..., Any]
InPlaceKernel = Callable[[Params, list, int], "list | None"]
InputHintFn = Callable[[Params, tuple, str], "str | None"]
GradFn = Callable[[Any, Params, list, list, list], list]


@dataclass(frozen=True)
class InPlace:
    """How an op may write its result over one of its inputs, for the executor's inference plan
    (``gluonport/_fusion.py``), when nothing else reads that input afterwards.

    Attributes
    ----------
    kernel:
        ``kernel(p, args, i) -> outputs | None``: the op's own arithmetic with ``out=args[i]``,
        bit-identical to :attr:`OpDef.compute`; ``None`` when these arrays do not qualify
        (dtype, shape), and the op then runs normally.
    donors:
        The input positions that may be overwritten, tried in order.
    applies:
        ``applies(p) -> bool``: whether the kernel serves these params at all.
    """

    kernel: InPlaceKernel
    donors: tuple[int, ...] = (0,)
    applies: Callable[[Params], bool] = field(default=lambda p: True)


@dataclass(eq=False)
class OpDef:
    """Everything about one MXNet operator.

    Attributes
    ----------
    name:
        MXNet's registered name (``"FullyConnected"``); the name written into symbol JSON.
    params:
        The typed attributes with MXNet's defaults (a dict of Fields is accepted).
    compute:
        ``compute(p, *inputs) -> ndarray | tuple[ndarray, ...]`` on numpy arrays, inference
        semantics (``is_train=False``). Must return *all* ``num_outputs`` outputs.
    inputs:
        Input names in MXNet's order (``("data", "weight", "bias")``), or a function of the
        params (``no_bias`` drops ``bias``). Variadic ops set ``variadic``.
    variadic:
        For ops taking any number of inputs (Concat, add_n): the attribute that holds the count
        (``"num_args"``), set automatically by the front ends; ``""`` when there is none.
    aux:
        Indices of inputs that are auxiliary states (MXNet's ``FMutateInputs``): BatchNorm's
        moving mean/var. They are ``aux:`` entries in params files and entry version 1 in JSON.
    num_outputs:
        Total outputs, hidden ones included (what ``node_row_ptr`` counts).
    num_visible_outputs:
        Outputs a Symbol exposes (``list_outputs``); defaults to ``num_outputs``.
    output_names:
        Names of all outputs, used by ``list_outputs``/``get_internals`` as ``<node>_<name>``;
        default ``("output",)``, and ``output0, output1, ...`` for several outputs. BatchNorm
        declares ``("output", "mean", "var")``.
    infer_shape:
        ``infer_shape(p, in_shapes) -> (in_shapes, out_shapes)``; may complete unknown input
        shapes (weights) from the data shape. ``None`` entries are unknown.
    infer_type:
        ``infer_type(p, in_dtypes) -> (in_dtypes, out_dtypes)`` on numpy dtypes; the default
        makes every input and output the dtype of the first known input.
    train_compute:
        Training-mode compute when it differs (Dropout, BatchNorm batch statistics).
    aliases:
        Other names MXNet accepts for the op (``"_Plus"``, ``"split"``); they resolve here.
    no_onnx:
        Why there is no ONNX export, when there is none by design.
    inplace_compute:
        Compute for an imperative call whose ``out=`` is its first input (for a multi-tensor
        update, each ``out[k]`` its input ``weight_k``), when MXNet's kernel then gives a
        different result because it reads that input after writing the output
        (``nag_mom_update(w, g, mom, out=w)``, as MXNet's NAG optimizer calls it), or to write
        the result straight into that input (the SGD updates); it may return the input itself.
    unavailable:
        ``unavailable(attrs) -> reason | None``: why a loaded node of this op cannot be built
        here (``Custom`` with an ``op_type`` nobody registered); the node then loads as a
        stand-in that reports the reason when run.
    lists_input_names:
        MXNet registers ``FListInputNames`` for the op, so an op hook
        (``HybridBlock.register_op_hook``) reports its inputs by name (``fc0_weight``);
        ``False`` for the ops that lack it (the unary math ops, ``Reshape``, ...), whose
        inputs are reported as ``input0, input1, ...``, as MXNet 1.9.1 does.
    lists_output_names:
        MXNet registers ``FListOutputNames`` for the op, so an op hook reports its outputs by
        their :attr:`output_names` (``output``, ``mean``); otherwise as ``0, 1, ...``.
    amp_cast_input:
        For MXNet's AMP casts, which ``tojson(remove_amp_cast=True)`` leaves out (MXNet's
        ``RemoveAmpCast`` pass): ``amp_cast_input(k)`` is the input whose entry a consumer of
        output ``k`` reads instead (``amp_cast``: 0; ``amp_multicast``: ``k``).
    var_attrs:
        Attributes MXNet puts on the variables it creates for missing inputs (its
        ``FSetInputVarAttrOnCompose``): ``{"moving_mean": {"__init__": '["zero", {}]'}}``, or a
        function of the params returning that. MXNet's rule is by input position (it is
        also applied to a caller's variables that lack an ``__init__``, and by the legacy
        upgrader of pre-0.9.4 files); key each position by the name it has here
        (UpSampling's position 1 is ``weight`` when bilinear, ``arg1`` when nearest).
    shape_needs_outputs:
        ``infer_shape`` takes a third argument, the outputs' current shapes, and may complete
        an input from them (``_rnn_param_concat``, ``Reshape``, ``FullyConnected``, as MXNet's
        shape passes do).
    inplace:
        An :class:`InPlace` when the op can write its output over an input that nothing reads
        afterwards (the executor's inference plan); ``None`` otherwise.
    fresh_outputs:
        The outputs are always new arrays: never an input, a view of one, or a cached value, so
        the executor's inference plan may let a later op overwrite them.
    keeps_shape:
        The output has the data input's shape (BatchNorm, Dropout, ...), so a walk from a graph
        input may look through the op (``gluonport inspect``'s input-shape hints). Ops without
        a shape rule (elementwise) count as shape-keeping anyway.
    input_hint:
        ``input_hint(p, weight_shape, node_name) -> text | None``: what the op's weight (input
        1) says about the shape of its data input (input 0), for ``gluonport inspect``:
        ``"N,3,H,W (conv0 is a 2-D Convolution over 3 channels)"``.
    sized_by_attrs:
        The output's size comes from attributes as much as from the inputs (``tile`` reps,
        ``one_hot`` depth, ``UpSampling`` scale, the ``_sample_*`` shape): compute checks the
        size budget first, as every op without inputs does.
    all_zeros:
        ``all_zeros(p) -> bool``: the output is all zeros for these params whatever the inputs
        (``_zeros``; ``_full`` of 0), so a consumer's ONNX lowering may leave out an optional
        input that defaults to zeros (RNN's initial states).
    gradient:
        The op's gradient, MXNet's ``FGradient``: ``gradient(F, p, inputs, outputs, ograds) ->
        list`` with one entry per input, built from registered ops called through ``F`` -- the
        ``nd`` namespace when the imperative tape runs it (``autograd.backward``), the ``sym``
        namespace when a hybridized block builds its backward graph -- so one rule serves both,
        and a backward graph is an ordinary graph (numpy executor, ONNX). ``inputs`` are the
        forward inputs (auxiliary states included), ``outputs`` all outputs (hidden ones
        included), ``ograds`` one head gradient per output (zeros where nothing flows). An
        entry is ``None`` where no gradient flows to that input (integer inputs, auxiliary
        states, indices). :func:`zero_gradient` is MXNet's ``MakeZeroGradNodes``.
    no_gradient:
        Why the op has no gradient, for ops MXNet gives none (``FGradient`` unregistered): a
        backward pass through such a node raises this reason, naming the op.
    train_graph:
        The training-mode forward written with registered ops, for backends that only have
        inference kernels (ONNX): ``train_graph(F, p, inputs) -> (outputs, aux_updates)``
        with every output (hidden ones included, as ``train_compute`` gives them) and
        ``{aux input index: its new value}`` for the auxiliary states a training step updates
        (BatchNorm's moving statistics). A hybridized block's training step expands such
        nodes (``symbol/_expand.py``) and runs on onnxruntime; an op with a
        ``train_compute`` and no ``train_graph`` keeps training steps on the numpy executor.
    """

    name: str
    params: ParamSpec | Mapping[str, Field] = field(default_factory=ParamSpec)
    compute: ComputeFn | None = None
    inputs: Sequence[str] | Callable[[Params], Sequence[str]] = ("data",)
    variadic: str | None = None
    aux: Sequence[int] | Callable[[Params], Sequence[int]] = ()
    num_outputs: int | Callable[[Params], int] = 1
    num_visible_outputs: int | Callable[[Params], int] | None = None
    output_names: Sequence[str] | Callable[[Params], Sequence[str]] | None = None
    infer_shape: ShapeFn | None = None
    infer_type: TypeFn | None = None
    train_compute: ComputeFn | None = None
    aliases: tuple[str, ...] = ()
    no_onnx: str | None = None
    inplace_compute: ComputeFn | None = None
    unavailable: Callable[[Mapping[str, str]], str | None] | None = None
    lists_input_names: bool = True
    lists_output_names: bool = False
    amp_cast_input: Callable[[int], int] | None = None
    var_attrs: dict[str, dict[str, str]] | Callable[[Params], dict] | None = None
    shape_needs_outputs: bool = False
    inplace: InPlace | None = None
    fresh_outputs: bool = False
    keeps_shape: bool = False
    input_hint: InputHintFn | None = None
    all_zeros: Callable[[Params], bool] | None = None
    sized_by_attrs: bool = False
    gradient: GradFn | None = None
    no_gradient: str | None = None
    train_graph: Callable[[Any, Params, list], tuple[list, dict]] | None = None
    doc: str = ""
    onnx_handlers: list[tuple[int, OnnxFn]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not isinstance(self.params, ParamSpec):
            self.params = ParamSpec(self.params)

    # --- what the front ends ask ------------------------------------------------------------
    def parse(self, attrs: Mapping[str, str], node: str = "", strict: bool = False) -> Params:
        """Parse a node's attribute strings (see :meth:`ParamSpec.parse`).

        Attributes that set the number of outputs or variadic inputs (``num_outputs``,
        ``num_args``) are bounded here (:data:`gluonport._core.budget.MAX_NODE_ARITY`), before any
        list of that length is built.
        """
        p = self.params.parse(attrs, op=self.name, node=node, strict=strict)
        if callable(self.num_outputs) or self.variadic:
            self._check_arity(p, node)
        return p

    def _check_arity(self, p: Params, node: str) -> None:
        from .._core.budget import check_arity

        what = f"node {node!r} ({self.name})" if node else self.name
        if self.variadic and isinstance(p.get(self.variadic), int):
            check_arity(what, p.get(self.variadic), f"inputs ({self.variadic})")
        if callable(self.num_outputs):
            try:
                n = self.n_outputs(p)
            except GluonportError:
                return  # bad attributes: the op's own rules report them with their words
            except Exception:  # noqa: BLE001 - a user's Custom op property; it fails later
                return
            if isinstance(n, int):
                check_arity(what, n)

    def input_names(self, p: Params, n_given: int | None = None) -> list[str]:
        """Input names for these params; variadic ops name them ``arg0, arg1, ...``.

        A variadic op whose ``inputs`` is a function may return fixed names for some params
        (``UpSampling`` with ``sample_type='bilinear'`` takes ``data, weight``) or ``None``.
        """
        if self.variadic is not None:
            fixed = self.inputs(p) if callable(self.inputs) else None
            if fixed is not None:
                return list(fixed)
            count = n_given
            if count is None and self.variadic:
                count = int(p.get(self.variadic, 0) or 0)
            return [f"arg{i}" for i in range(count or 0)]
        names = self.inputs(p) if callable(self.inputs) else self.inputs
        return list(names)

    def input_var_attrs(self, p: Params, input_name: str) -> dict[str, str]:
        """Extra attributes for an auto-created variable of input ``input_name``."""
        table = self.var_attrs(p) if callable(self.var_attrs) else self.var_attrs
        return dict((table or {}).get(input_name, {}))

    def input_var_attrs_by_index(self, p: Params, n_inputs: int) -> list[dict[str, str]]:
        """:attr:`var_attrs` by input position, for ``n_inputs`` inputs (the legacy upgrader
        and composition apply MXNet's rule by position)."""
        return [self.input_var_attrs(p, name)
                for name in self.input_names(p, n_inputs)[:n_inputs]]

    def aux_indices(self, p: Params) -> Sequence[int]:
        """Indices of the inputs that are auxiliary states, for these params."""
        return self.aux(p) if callable(self.aux) else self.aux

    def n_outputs(self, p: Params) -> int:
        n = self.num_outputs
        return n(p) if callable(n) else n

    def n_visible_outputs(self, p: Params) -> int:
        n = self.num_visible_outputs
        if n is None:
            return self.n_outputs(p)
        return n(p) if callable(n) else n

    def list_output_names(self, p: Params) -> list[str]:
        """Names of *all* outputs (hidden ones included); ``list_outputs`` shows the visible
        prefix. Default: ``output``, or ``output0, output1, ...``."""
        names = self.output_names
        if names is not None:
            return list(names(p) if callable(names) else names)
        n = self.n_outputs(p)
        return ["output"] if n == 1 else [f"output{i}" for i in range(n)]

    def shapes(self, p: Params, in_shapes: list,
               out_shapes: list | None = None) -> tuple[list, list]:
        """Run shape inference; ops without a rule get the elementwise one.

        With ``shape_needs_outputs`` the rule is also given the outputs' current shapes, so it
        can complete an input from its output (``_rnn_param_concat``, as in MXNet).
        """
        fn = self.infer_shape or _same_shape_rule
        if self.shape_needs_outputs and self.infer_shape is not None:
            outs_now = list(out_shapes) if out_shapes is not None else [None] * self.n_outputs(p)
            ins, outs = fn(p, list(in_shapes), outs_now)
        else:
            ins, outs = fn(p, list(in_shapes))
        return list(ins), list(outs)

    def types(self, p: Params, in_types: list) -> tuple[list, list]:
        """Run type inference (default: all inputs and outputs share the first known dtype)."""
        if self.infer_type is not None:
            ins, outs = self.infer_type(p, list(in_types))
            return list(ins), list(outs)
        known = next((t for t in in_types if t is not None), None)
        return [known if t is None else t for t in in_types], [known] * self.n_outputs(p)

    def run(self, p: Params, inputs: Sequence[np.ndarray], is_train: bool = False,
            inplace: bool = False) -> list:
        """Compute all outputs as a list of numpy arrays (``inplace``: the output will be
        written over the first input; see ``inplace_compute``)."""
        fn = self.train_compute if (is_train and self.train_compute is not None) else self.compute
        if inplace and self.inplace_compute is not None:
            fn = self.inplace_compute
        if fn is None:
            raise UnsupportedOpError(f"operator {self.name!r} has no numpy compute",
                                     {self.name: []})
        if not inputs or self.sized_by_attrs:
            self._check_budget(p, inputs)
        out = fn(p, *inputs)
        if isinstance(out, (tuple, list)):
            return list(out)
        return [out]

    def _check_budget(self, p: Params, inputs: Sequence[np.ndarray]) -> None:
        """Refuse, before computing, an output larger than the size budget: for ops whose
        output size comes from attributes (creation ops, ``tile`` reps, ``one_hot`` depth)."""
        from .._core.budget import check_tensor, get_size_limit
        from .._core.dtypes import to_numpy

        if get_size_limit()[0] is None:
            return
        try:
            _, outs = self.shapes(p, [tuple(np.shape(x)) for x in inputs])
            dt = p.get("dtype")
            item = (to_numpy(dt).itemsize if isinstance(dt, str) and dt not in ("", "None")
                    else np.asarray(inputs[0]).dtype.itemsize if inputs else 4)
        except Exception:  # noqa: BLE001 - bad attributes: compute reports them in its words
            return
        for i, shape in enumerate(outs):
            if shape and all(shape):
                check_tensor(f"{self.name} output {i}" if len(outs) > 1 else self.name,
                             shape, item)

    # --- ONNX -------------------------------------------------------------------------------
    def to_onnx(self, since: int) -> Callable[[OnnxFn], OnnxFn]:
        """Decorator registering an ONNX export handler for opsets >= ``since``.

        The exporter picks the newest handler whose ``since`` is <= the target opset.
        """

        def deco(fn: OnnxFn) -> OnnxFn:
            if any(s == since for s, _ in self.onnx_handlers):
                raise GluonportError(f"{self.name}: two ONNX handlers for opset {since}")
            self.onnx_handlers.append((since, fn))
            self.onnx_handlers.sort(key=lambda sf: sf[0])
            return fn

        return deco

    def onnx_handler(self, opset: int) -> OnnxFn | None:
        """The handler serving ``opset``: the newest whose ``since`` <= opset."""
        best = None
        for since, fn in self.onnx_handlers:
            if since <= opset:
                best = fn
        return best

    def __repr__(self) -> str:
        return f"<OpDef {self.name}>"


def zero_gradient(F: Any, p: Params, inputs: list, outputs: list, ograds: list) -> list:
    """The gradient of an op whose output does not vary smoothly with its inputs (comparisons,
    ``round``, ``argmax``, shape queries): zero for every input, as MXNet's
    ``MakeZeroGradNodes`` gives."""
    return [None] * len(inputs)


def _same_shape_rule(p: Params, in_shapes: list) -> tuple[list, list]:
    """MXNet's ElemwiseShape: every input and the output have one shape."""
    from .infer import same_shape

    return same_shape(in_shapes, 1)


_REGISTRY: dict[str, OpDef] = {}
_ALIASES: dict[str, str] = {}


def register(op: OpDef) -> OpDef:
    """Add an operator; a name or alias used twice is refused (one definition per op)."""
    for name in (op.name, *op.aliases):
        if name in _REGISTRY or name in _ALIASES:
            raise GluonportError(f"operator name {name!r} is registered twice "
                                 f"(by {op.name!r} and {_ALIASES.get(name, name)!r})")
    _REGISTRY[op.name] = op
    for alias in op.aliases:
        _ALIASES[alias] = op.name
    return op


def named(name: str, fn: ComputeFn) -> ComputeFn:
    """Wrap a compute so its errors start with the op name (``nd`` calls have no node name).

    Parameters
    ----------
    name : str
        The op name the messages start with (``"Reshape: ..."``).
    fn : callable
        The compute.

    Returns
    -------
    callable
        ``fn``, re-raising a :class:`GluonportError` with ``name`` in front of its message.
    """

    @functools.wraps(fn)  # keeps the family module for OPERATORS.md
    def run(p, *arrays):
        try:
            return fn(p, *arrays)
        except GluonportError as exc:
            if str(exc).startswith(f"{name}:"):
                raise
            raise type(exc)(f"{name}: {exc}") from None

    return run


def shape_checked(rule: ShapeFn, fn: ComputeFn) -> ComputeFn:
    """``fn`` after the op's shape rule has vetted the actual input shapes.

    An imperative call then fails with the same ``ShapeError``/``OpAttributeError`` as inference
    (MXNet infers shapes before every imperative call) instead of deep inside numpy.

    Parameters
    ----------
    rule : callable
        The op's ``infer_shape``.
    fn : callable
        The compute.

    Returns
    -------
    callable
        The checked compute.
    """

    @functools.wraps(fn)
    def compute(p, *arrays):
        rule(p, [a.shape for a in arrays])
        return fn(p, *arrays)

    return compute


def define(name: str, compute: ComputeFn, infer_shape: ShapeFn, *, name_errors: bool = False,
           check_shapes: bool = False, **kw: Any) -> OpDef:
    """Register one op: the one registration helper every op family uses.

    Parameters
    ----------
    name : str
        MXNet's registered name.
    compute, infer_shape : callable
        As :class:`OpDef`'s.
    name_errors : bool, optional
        Wrap the compute with :func:`named` (its errors start with ``name``).
    check_shapes : bool, optional
        Wrap the compute with :func:`shape_checked` (it runs ``infer_shape`` first).
    **kw
        Any other :class:`OpDef` field (``params``, ``inputs``, ``aliases``, ``doc``, ...).

    Returns
    -------
    OpDef
        The registered op.
    """
    if check_shapes:
        compute = shape_checked(infer_shape, compute)
    if name_errors:
        compute = named(name, compute)
    return register(OpDef(name, compute=compute, infer_shape=infer_shape, **kw))


def _ensure_loaded() -> None:
    from . import _families  # noqa: F401  (imports every family module once)


def find(name: str) -> OpDef | None:
    """The OpDef for a name or alias, or ``None``.

    An op already registered is returned without loading the families first, so an op file
    that attaches a lowering to an op it just defined (``lowering("Convolution")``) can be
    imported on its own, before the registry has loaded (no circular family import)."""
    op = _REGISTRY.get(name)
    if op is not None:
        return op
    _ensure_loaded()
    op = _REGISTRY.get(name)
    if op is None and name in _ALIASES:
        op = _REGISTRY[_ALIASES[name]]
    return op


def get(name: str, node: str | None = None) -> OpDef:
    """The OpDef for a name or alias; :class:`UnsupportedOpError` when unknown."""
    op = find(name)
    if op is None:
        where = f"node {node!r}: " if node else ""
        raise UnsupportedOpError(
            f"{where}operator {name!r} is not supported by gluonport; supported ops: see "
            "gluonport/ops/OPERATORS.md", {name: [node] if node else []})
    return op


def canonical_name(name: str) -> str:
    """The registered name for an alias (``'_Plus'`` -> ``'elemwise_add'``)."""
    return get(name).name


def all_ops() -> dict[str, OpDef]:
    """Every registered op by canonical name."""
    _ensure_loaded()
    return dict(_REGISTRY)


def aliases() -> dict[str, str]:
    """Alias -> canonical name."""
    _ensure_loaded()
    return dict(_ALIASES)


#: MXNet 1.9.1 operators that gluonport does not define but whose ``FSetInputVarAttrOnCompose``
#: the legacy upgrader still applies (a graph holding them loads with stand-ins, and re-saves as
#: MXNet re-saves it): ``BatchNorm_v1`` (MXNet's pre-1.0 BatchNorm) and
#: ``IdentityAttachKLSparseReg`` (a training-only sparsity regulariser). Positions -> attributes.
#: Defining them here would need their compute and ONNX lowering; until then, only this fact.
UNDEFINED_VAR_ATTRS: dict[str, dict[int, dict[str, str]]] = {
    "BatchNorm_v1": {3: {"__init__": '["zero", {}]'}, 4: {"__init__": '["one", {}]'}},
    "IdentityAttachKLSparseReg": {1: {"__init__": '["zero", {}]'}},
}


def input_var_attrs_by_name(op_name: str, attrs: Mapping[str, str],
                            n_inputs: int) -> list[dict[str, str]] | None:
    """What op ``op_name`` (or alias) gives the variables at its ``n_inputs`` input positions
    (:attr:`OpDef.var_attrs`; MXNet's ``FSetInputVarAttrOnCompose``), for the legacy upgrader
    of ``gluonport.formats``; ``None`` when it gives nothing or its attributes do not parse
    (loading then reports them)."""
    op = find(op_name)
    if op is None:
        table = UNDEFINED_VAR_ATTRS.get(op_name)
        return None if table is None else [table.get(i, {}) for i in range(n_inputs)]
    if op.var_attrs is None:
        return None
    try:
        return op.input_var_attrs_by_index(op.parse(attrs, strict=False), n_inputs)
    except GluonportError:
        return None


def check_shape(cond: bool, message: str) -> None:
    """Raise :class:`ShapeError` with ``message`` unless ``cond``."""
    if not cond:
        raise ShapeError(message)
