"""Does a params file belong to a symbol file? The check every MXNet-pair load path runs.

A ``PREFIX-symbol.json`` and its ``PREFIX-NNNN.params`` are two files written one after the
other; a process killed between them, a copy of only one, or a stale file from an older export
leaves a graph beside the weights of another model. Loading such a pair must not "work": a
weight that the params file lacks must not silently become a graph input that the caller is
then asked to feed, and a weight of the wrong shape must not reach the first run.

Which graph variables are parameters (and so must be in the params file) and which are data?
When the caller names the data inputs (``SymbolBlock.imports``, ``gluonport.load(...,
input_names=...)``) every other non-label variable is a parameter, as in MXNet. Otherwise a
variable is a parameter when

* it is an auxiliary state (BatchNorm's moving statistics), or
* it feeds an operator input whose name in the op's definition is a parameter slot
  (:data:`PARAM_ROLES`: ``weight`` of FullyConnected/Convolution/Embedding, ``gamma`` of
  BatchNorm/LayerNorm/LeakyReLU, the fused ``parameters`` of RNN, ...), or
* its name ends in one of Gluon's parameter suffixes (:data:`PARAM_SUFFIXES`: ``_weight``,
  ``_bias``, ``_running_mean``, ...), which covers weights that reach the graph through plain
  arithmetic (``F.broadcast_add(x, self.offset_bias)``) or ``_rnn_param_concat``, or
* it carries an attribute that only parameters get (:data:`PARAM_ATTRS`: Gluon's
  ``Parameter.var()`` writes ``__lr_mult__`` and ``__wd_mult__`` on every parameter, whatever
  its name and use; data inputs have none).

Anything else that the params file does not hold is a data input. Label variables of the legacy
output ops (``SoftmaxOutput``) are neither.

Shapes: graph inputs usually carry no shape (Gluon's ``export`` records none), so a data input
without a ``__shape__`` attribute is given a shape of unknown dims (MXNet's 0) of the first rank
that the graph accepts; shape inference then derives every parameter shape that the graph fixes
(``num_hidden``, ``kernel``, ...) and the params file must agree with it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .errors import GluonportError, ParameterError, ShapeError

__all__ = ["PARAM_ROLES", "PARAM_SUFFIXES", "PARAM_ATTRS", "parameter_names", "check_params"]

#: Operator input names (from each op's definition) that are parameters, never data.
PARAM_ROLES = frozenset({"weight", "bias", "gamma", "beta", "moving_mean", "moving_var",
                         "parameters"})

#: Name suffixes of Gluon / Module-API parameters.
PARAM_SUFFIXES = ("_weight", "_bias", "_gamma", "_beta", "_alpha", "_moving_mean",
                  "_moving_var", "_running_mean", "_running_var", "_parameters")

#: Variable attributes that mark a parameter (written by Gluon's ``Parameter.var()``).
PARAM_ATTRS = ("__lr_mult__", "__wd_mult__", "__init__")

_RANKS = (4, 2, 3, 5, 1)  # data ranks tried, most common first, for inputs without a shape
_SHOWN = 5  # names listed in one message


def parameter_names(sym: Any) -> set[str]:
    """Variables of ``sym`` that are parameters by the rules in the module docstring."""
    found = set(sym.list_auxiliary_states())
    for node in sym._topo():
        if node.op is None:
            if node.name.endswith(PARAM_SUFFIXES) or any(a in node.attrs for a in PARAM_ATTRS):
                found.add(node.name)
            continue
        try:
            roles = node.op.input_names(node.params, len(node.inputs))
        except GluonportError:
            continue
        for (src, _), role in zip(node.inputs, roles):
            if src.op is None and role in PARAM_ROLES:
                found.add(src.name)
    return found


def _brief(names: Iterable[str]) -> str:
    names = list(names)
    text = ", ".join(repr(n) for n in names[:_SHOWN])
    return text + (f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else "")


def _fmt(shape: Sequence[int] | None) -> str:
    if not shape:
        return "unknown"
    return "(" + ", ".join("?" if d == 0 else str(d) for d in shape) + (
        ",)" if len(shape) == 1 else ")")


def check_params(sym: Any, shapes: Mapping[str, Sequence[int]], *, symbol_file: str,
                 params_file: str | None, input_names: Sequence[str] | None = None,
                 allow_missing: bool = False, ignore_extra: bool = False) -> list[str]:
    """Check that the parameters in ``shapes`` (name -> shape, from ``params_file``) are the
    ones the graph ``sym`` (from ``symbol_file``) needs; return the graph's data inputs.

    Raises
    ------
    ParameterError
        A parameter is missing (unless ``allow_missing``), the params file holds names the graph
        does not have (unless ``ignore_extra``), or a parameter's shape differs from the one the
        graph implies. The message names the parameter, its expected shape and both files.
    """
    from .symbol._graph import label_inputs

    order = sym._topo()
    labels = label_inputs(order)
    inputs = [n.name for n in order if n.op is None]
    if input_names is not None:
        data = list(input_names)
        needed = [n for n in inputs if n not in data and n not in labels]
    else:
        params = parameter_names(sym)
        needed = [n for n in inputs if n in params or n in shapes]
        data = [n for n in inputs if n not in needed and n not in labels]
    guess = _data_guess(sym, order, data)
    missing = [n for n in needed if n not in shapes]
    if missing and not allow_missing:
        _missing_error(sym, guess, missing, symbol_file, params_file)
    extra = [k for k in shapes if k not in inputs]
    if extra and not ignore_extra:
        raise ParameterError(
            f"{params_file}: holds parameter(s) {_brief(extra)} that the graph in {symbol_file} "
            f"does not have; the two files are not of the same model (an interrupted or mixed "
            "export?). Re-export the model, or pass ignore_extra=True to ignore them")
    if guess is not None:
        _check_shapes(sym, guess, {k: tuple(v) for k, v in shapes.items() if k in inputs},
                      symbol_file, params_file)
    if allow_missing:
        data += [n for n in missing if n not in data]
    return data


def _data_guess(sym: Any, order: list[Any], data: list[str]) -> dict[str, tuple] | None:
    """Shapes for the data inputs: their ``__shape__`` attribute, else unknown dims of the first
    rank that shape inference accepts; None when no rank works (the shape check is skipped)."""
    from .symbol._infer import var_shape_attr

    fixed = {}
    for node in order:
        if node.op is None and node.name in data:
            shape = var_shape_attr(node)
            if shape:
                fixed[node.name] = tuple(shape)
    free = [n for n in data if n not in fixed]
    for rank in _RANKS if free else (None,):
        guess = dict(fixed)
        guess.update({n: (0,) * rank for n in free})
        try:
            sym.infer_shape_partial(**guess)
        except GluonportError:
            continue
        return guess
    return None


def _inferred(sym: Any, given: Mapping[str, tuple]) -> dict[str, tuple]:
    arg_s, _, aux_s = sym.infer_shape_partial(**given)
    out = dict(zip(sym.list_arguments(), arg_s))
    out.update(zip(sym.list_auxiliary_states(), aux_s))
    return out


def _missing_error(sym: Any, guess: dict[str, tuple] | None, missing: list[str],
                   symbol_file: str, params_file: str | None) -> None:
    expected: dict[str, tuple] = {}
    if guess is not None:
        try:
            expected = _inferred(sym, guess)
        except GluonportError:
            pass
    first = missing[0]
    what = (f"parameter {first!r} (expected shape {_fmt(expected.get(first))})" +
            (f" and {len(missing) - 1} more ({_brief(missing[1:])})" if len(missing) > 1 else ""))
    if params_file is None:
        raise ParameterError(
            f"{symbol_file}: the graph needs {what}, and there is no params file beside it "
            f"(expected {_expected_params(symbol_file)}); pass the params file, or "
            "allow_missing=True to feed the parameters as inputs")
    raise ParameterError(
        f"{params_file}: {what} is missing; it does not hold the parameters of the graph in "
        f"{symbol_file} (the two files are not of the same model: an interrupted or mixed "
        "export?). Re-export the model, or pass allow_missing=True to feed the missing "
        "parameters as inputs")


def _expected_params(symbol_file: str) -> str:
    if symbol_file.endswith("-symbol.json"):
        return symbol_file[:-len("-symbol.json")] + "-NNNN.params"
    return "PREFIX-NNNN.params"


def _check_shapes(sym: Any, guess: dict[str, tuple], shapes: dict[str, tuple],
                  symbol_file: str, params_file: str | None) -> None:
    try:
        _inferred(sym, {**guess, **shapes})
        return
    except ShapeError as err:
        first_err = err
    try:  # the parameters fit by themselves: the guessed data ranks were wrong (inputs of
        _inferred(sym, shapes)  # several ranks, as a _foreach's data and states)
        return
    except ShapeError:
        pass
    # Find the parameter to blame: add them one by one in graph order until inference fails.
    given = dict(guess)
    expected = _inferred(sym, given)
    for name in sym.list_inputs():
        if name not in shapes:
            continue
        given[name] = shapes[name]
        try:
            now = _inferred(sym, given)
        except ShapeError:
            raise ParameterError(
                f"{params_file}: parameter {name!r} has shape {_fmt(shapes[name])}, but the "
                f"graph in {symbol_file} expects {_fmt(expected.get(name))}; the two files are "
                "not of the same model (an interrupted or mixed export?). Re-export the "
                "model") from None
        expected = now
    raise ParameterError(f"{params_file}: the parameter shapes do not fit the graph in "
                         f"{symbol_file}: {first_err}") from None
