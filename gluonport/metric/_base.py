"""The base of ``mx.metric``: EvalMetric, CompositeEvalMetric, CustomMetric, the registry and
``create`` (re-exported by :mod:`gluonport.metric`, which holds the concrete metrics)."""

from __future__ import annotations

import json
import warnings
from collections import OrderedDict
from collections.abc import Callable
from numbers import Number
from typing import Any

import numpy as _np

from ..errors import GluonportError, ShapeError
from ..ndarray import NDArray

__all__ = ["MetricError", "EvalMetric", "CompositeEvalMetric", "CustomMetric", "np", "create",
           "register", "alias", "check_label_shapes", "is_array", "to_numpy", "check_pair",
           "class_argmax"]


class MetricError(GluonportError, ValueError):
    """A metric cannot evaluate its input or cannot be created (MXNet raises ``ValueError`` or
    ``AssertionError`` there); a ``ValueError``, so MXNet-era ``except ValueError`` still works."""


# --- input helpers ----------------------------------------------------------------------------
def is_array(x: Any) -> bool:
    """Whether ``x`` is one array (an NDArray or a numpy array) rather than a list of them."""
    return isinstance(x, (NDArray, _np.ndarray))


def to_numpy(x: Any, subject: str) -> _np.ndarray:
    """The numpy array behind an NDArray, a numpy array or a number; anything else raises
    :class:`MetricError` naming ``subject`` (the metric)."""
    if isinstance(x, NDArray):
        return x.asnumpy()
    if isinstance(x, _np.ndarray):
        return x
    if isinstance(x, (Number, _np.generic)):
        return _np.asarray(x)
    raise MetricError(f"{subject}: labels and predictions must be NDArrays or numpy arrays, "
                      f"got {type(x).__name__}")


def _length(x: Any, subject: str) -> int:
    try:
        return len(x)
    except TypeError:
        raise ShapeError(f"{subject}: expected a list of arrays, got {type(x).__name__} without "
                         "a length; pass [array]") from None


def _shape(x: Any) -> Any:
    return tuple(x.shape) if hasattr(x, "shape") else x


def check_pair(labels: Any, preds: Any, subject: str, wrap: bool = False,
           shape: bool = False) -> tuple[Any, Any]:
    """:func:`check_label_shapes` for a metric: errors name ``subject`` (the metric).

    Parameters
    ----------
    labels, preds : Any
        The labels and predictions given to ``update``.
    subject : str
        The name the error messages start with.
    wrap : bool, optional
        Wrap a bare array in a list after the check.
    shape : bool, optional
        Compare shapes instead of lengths.

    Returns
    -------
    tuple
        ``(labels, preds)``, wrapped when ``wrap`` is set.
    """
    if shape:
        got_l, got_p = _shape(labels), _shape(preds)
    else:
        got_l, got_p = _length(labels, subject), _length(preds, subject)
    if got_l != got_p:
        what = "shape" if shape else "number"
        raise ShapeError(f"{subject}: Shape of labels {got_l} does not match shape of predictions "
                         f"{got_p}; pass labels and predictions of the same {what} (one label "
                         "array per prediction array, the same samples in each)")
    if wrap:
        labels = [labels] if is_array(labels) else labels
        preds = [preds] if is_array(preds) else preds
    return labels, preds


def check_label_shapes(labels: Any, preds: Any, wrap: bool = False,
                       shape: bool = False) -> tuple[Any, Any]:
    """Check that ``labels`` and ``preds`` agree, as MXNet's helper: their lengths (the number
    of arrays, or of samples for a bare array), or with ``shape=True`` their shapes. Raises
    :class:`~gluonport.errors.ShapeError` (a ``ValueError``, as MXNet's) when they do not. With
    ``wrap=True`` a bare array is wrapped in a list (after the check, as in MXNet)."""
    return check_pair(labels, preds, "check_label_shapes", wrap, shape)


def class_argmax(pred: _np.ndarray, axis: int, subject: str) -> _np.ndarray:
    """``numpy.argmax`` over the class axis; a prediction without that axis raises
    :class:`~gluonport.errors.ShapeError` naming ``subject`` (the metric)."""
    try:
        return _np.argmax(pred, axis=axis)
    except (ValueError, IndexError) as err:
        raise ShapeError(f"{subject}: cannot take the argmax of a prediction of shape "
                         f"{pred.shape} over axis {axis} ({err}); give predictions with a class "
                         "axis, or class indices shaped like the labels") from None


# --- registry ---------------------------------------------------------------------------------
_REGISTRY: dict[str, type] = {}


def register(klass: type, name: str | None = None) -> type:
    """Register a metric class under ``name`` (default: its class name), lower-cased, so
    :func:`create` finds it (``@mx.metric.register``); a name already taken is overridden with
    a ``UserWarning``, as in MXNet."""
    if not (isinstance(klass, type) and issubclass(klass, EvalMetric)):
        raise MetricError(f"metric.register: can only register subclasses of EvalMetric, got "
                          f"{klass!r}")
    key = (name or klass.__name__).lower()
    if key in _REGISTRY and _REGISTRY[key] is not klass:
        warnings.warn(f"New metric {klass.__module__}.{klass.__name__} registered with name {key} "
                      f"is overriding existing metric {_REGISTRY[key].__name__}", UserWarning,
                      stacklevel=2)
    _REGISTRY[key] = klass
    return klass


def alias(*aliases: str) -> Callable[[type], type]:
    """Class decorator registering a metric under more names (``@mx.metric.alias('acc')``)."""
    def deco(klass: type) -> type:
        for name in aliases:
            register(klass, name)
        return klass

    return deco


def _create(metric: Any, *args: Any, **kwargs: Any) -> EvalMetric:
    """MXNet's registry ``create``: an instance, a config dict, JSON text or a name."""
    if isinstance(metric, EvalMetric):
        if args or kwargs:
            raise MetricError(f"metric.create: {metric.name!r} is already an EvalMetric; extra "
                              "arguments are invalid, pass the metric alone")
        return metric
    if isinstance(metric, dict):
        config = dict(metric)
        if "metric" not in config:
            raise MetricError(f"metric.create: the config {metric!r} has no 'metric' key naming "
                              "the metric class")
        return _create(config.pop("metric"), **config)
    if not isinstance(metric, str):
        raise MetricError(f"metric.create: cannot make a metric from {metric!r}; give a name, "
                          "an EvalMetric, a list of them or a function(label, pred)")
    text = metric.strip()
    if text.startswith(("[", "{")) and not args and not kwargs:
        return _create_from_json(text)
    klass = _REGISTRY.get(text.lower())
    if klass is None:
        raise MetricError(f"metric.create: {text.lower()!r} is not registered; known metrics: "
                          f"{', '.join(sorted(_REGISTRY))} (register a class with "
                          "mx.metric.register first)")
    return klass(*args, **kwargs)


def _create_from_json(text: str) -> EvalMetric:
    """``'["acc", {"axis": 1}]'`` or a ``get_config()`` dict as JSON text."""
    try:
        loaded = json.loads(text)
    except ValueError as err:
        raise MetricError(f"metric.create: {text!r} is not valid JSON ({err})") from None
    if isinstance(loaded, dict):
        return _create(loaded)
    if not (isinstance(loaded, list) and len(loaded) == 2 and isinstance(loaded[1], dict)):
        raise MetricError(f"metric.create: {text!r} is not '[name, {{kwargs}}]' JSON")
    return _create(loaded[0], **loaded[1])


def create(metric: Any, *args: Any, **kwargs: Any) -> EvalMetric:
    """Create a metric, as ``mx.metric.create``.

    Parameters
    ----------
    metric : str, EvalMetric, list, dict or callable
        A registered name (``'acc'``, ``'top_k_accuracy'``, ``'ce'``, ``'nll_loss'``, ``'mse'``,
        ... case-insensitive), an EvalMetric (returned as is), a list of these (a
        :class:`CompositeEvalMetric`; ``args``/``kwargs`` go to each child), a ``get_config()``
        dict or its JSON text, or a function ``feval(label, pred)`` (a :class:`CustomMetric`).
    *args, **kwargs
        Arguments of the metric's constructor.
    """
    if isinstance(metric, type) and issubclass(metric, EvalMetric):
        return metric(*args, **kwargs)  # MXNet would wrap the class as a feval; build it instead
    if callable(metric):
        return CustomMetric(metric, *args, **kwargs)
    if isinstance(metric, list):
        composite = CompositeEvalMetric()
        for child in metric:
            composite.add(create(child, *args, **kwargs))
        return composite
    return _create(metric, *args, **kwargs)


# --- base classes -----------------------------------------------------------------------------
class EvalMetric:
    """Base class of the metrics: ``update`` accumulates, ``get`` reads the local result,
    ``get_global`` the global one (the same as ``get`` unless the metric keeps global stats).

    Parameters
    ----------
    name : str
        Name shown in results.
    output_names, label_names : list of str or None
        Which predictions / labels :meth:`update_dict` uses (default: all, in order).
    """

    def __init__(self, name: str, output_names: list[str] | None = None,
                 label_names: list[str] | None = None, **kwargs: Any):
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._has_global_stats = kwargs.pop("has_global_stats", False)
        self._kwargs = kwargs
        self.reset()

    def __str__(self) -> str:
        return f"EvalMetric: {dict(self.get_name_value())}"

    def get_config(self) -> dict[str, Any]:
        """The constructor arguments; ``create(**config)`` rebuilds the metric."""
        config = self._kwargs.copy()
        config.update({"metric": self.__class__.__name__, "name": self.name,
                       "output_names": self.output_names, "label_names": self.label_names})
        return config

    def update_dict(self, label: dict[str, Any], pred: dict[str, Any]) -> None:
        """Update from name -> array dicts, picking ``label_names`` / ``output_names``."""
        pred = _pick_named(pred, self.output_names, "output", self.name)
        label = _pick_named(label, self.label_names, "label", self.name)
        self.update(label, pred)

    def update(self, labels: Any, preds: Any) -> None:
        """Accumulate one batch: ``labels`` and ``preds`` are lists of arrays."""
        raise NotImplementedError(f"{type(self).__name__}.update: subclasses of EvalMetric "
                                  "define update(labels, preds)")

    def reset(self) -> None:
        """Clear the local and global results."""
        self.num_inst = 0
        self.sum_metric = 0.0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0

    def reset_local(self) -> None:
        """Clear the local result only."""
        self.num_inst = 0
        self.sum_metric = 0.0

    def _add(self, total: Any, count: Any) -> None:
        total = float(total)
        self.sum_metric += total
        self.global_sum_metric += total
        self.num_inst += count
        self.global_num_inst += count

    def get(self) -> tuple[Any, Any]:
        """``(name, value)``: ``sum_metric / num_inst``, NaN before any update."""
        if self.num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, self.sum_metric / self.num_inst)

    def get_global(self) -> tuple[Any, Any]:
        """``(name, value)`` over everything since the last :meth:`reset`."""
        if not self._has_global_stats:
            return self.get()
        if self.global_num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, self.global_sum_metric / self.global_num_inst)

    def get_name_value(self) -> list[tuple[str, Any]]:
        """``[(name, value), ...]`` of :meth:`get`."""
        return _zip_result(*self.get())

    def get_global_name_value(self) -> list[tuple[str, Any]]:
        """``[(name, value), ...]`` of :meth:`get_global`."""
        if not self._has_global_stats:
            return self.get_name_value()
        return _zip_result(*self.get_global())


def _zip_result(name: Any, value: Any) -> list[tuple[str, Any]]:
    names = name if isinstance(name, list) else [name]
    values = value if isinstance(value, list) else [value]
    return list(zip(names, values))


def _pick_named(arrays: dict[str, Any], names: list[str] | None, what: str,
                metric: str) -> list[Any]:
    if names is None:
        return list(arrays.values())
    missing = [n for n in names if n not in arrays]
    if missing:
        raise MetricError(f"{metric}: {what} names {missing} are not among the given "
                          f"{what}s {list(arrays)}; fix the metric's {what}_names")
    return [arrays[n] for n in names]


def _listed(name: Any, value: Any) -> tuple[list, list]:
    names = [name] if isinstance(name, str) else list(name)
    values = [value] if isinstance(value, (Number, _np.generic)) else list(value)
    return names, values


@register
@alias("composite")
class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together; ``get`` returns ``([names], [values])``."""

    def __init__(self, metrics: list | None = None, name: str = "composite",
                 output_names: list[str] | None = None, label_names: list[str] | None = None):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.metrics = [create(m) for m in (metrics or [])]

    def add(self, metric: Any) -> None:
        """Append a child metric (anything :func:`create` accepts)."""
        self.metrics.append(create(metric))

    def get_metric(self, index: int) -> EvalMetric:
        """The child metric at ``index`` (MXNet returns, rather than raises, the error)."""
        try:
            return self.metrics[index]
        except IndexError:
            raise MetricError(f"Metric index {index} is out of range 0 and "
                              f"{len(self.metrics)}") from None

    def update_dict(self, labels: dict[str, Any], preds: dict[str, Any]) -> None:
        if self.label_names is not None:
            labels = OrderedDict((k, v) for k, v in labels.items() if k in self.label_names)
        if self.output_names is not None:
            preds = OrderedDict((k, v) for k, v in preds.items() if k in self.output_names)
        for metric in self.metrics:
            metric.update_dict(labels, preds)

    def update(self, labels: Any, preds: Any) -> None:
        for metric in self.metrics:
            metric.update(labels, preds)

    def reset(self) -> None:
        for metric in getattr(self, "metrics", []):
            metric.reset()

    def reset_local(self) -> None:
        for metric in getattr(self, "metrics", []):
            metric.reset_local()

    def _gather(self, which: str) -> tuple[list, list]:
        names: list = []
        values: list = []
        for metric in self.metrics:
            name, value = _listed(*getattr(metric, which)())
            names.extend(name)
            values.extend(value)
        return names, values

    def get(self) -> tuple[list, list]:
        return self._gather("get")

    def get_global(self) -> tuple[list, list]:
        return self._gather("get_global")

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        config["metrics"] = [m.get_config() for m in self.metrics]
        return config


@register
class CustomMetric(EvalMetric):
    """A metric from ``feval(label, pred)``, called per (label, prediction) pair with numpy
    arrays; it returns a number (counted as one instance) or ``(sum_metric, num_inst)``.

    Parameters
    ----------
    feval : callable
        The evaluation function.
    name : str, optional
        Default: ``feval.__name__``, as ``custom(<lambda>)`` for a lambda.
    allow_extra_outputs : bool
        Allow more predictions than labels (RNN states among the outputs); the extra ones are
        not passed to ``feval``.
    """

    def __init__(self, feval: Callable[[Any, Any], Any], name: str | None = None,
                 allow_extra_outputs: bool = False, output_names: list[str] | None = None,
                 label_names: list[str] | None = None):
        if name is None:
            name = getattr(feval, "__name__", type(feval).__name__)
            if "<" in name:
                name = f"custom({name})"
        super().__init__(name, feval=feval, allow_extra_outputs=allow_extra_outputs,
                         output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self._feval = feval
        self._allow_extra_outputs = allow_extra_outputs

    def update(self, labels: Any, preds: Any) -> None:
        if self._allow_extra_outputs:
            labels = [labels] if is_array(labels) else labels
            preds = [preds] if is_array(preds) else preds
        else:
            labels, preds = check_pair(labels, preds, self.name, wrap=True)
        for pred, label in zip(preds, labels):
            result = self._feval(to_numpy(label, self.name), to_numpy(pred, self.name))
            if isinstance(result, tuple):
                self._add(result[0], result[1])
            else:
                self._add(result, 1)

    def get_config(self) -> dict[str, Any]:
        raise MetricError(f"{self.name}: CustomMetric cannot be serialized (its function has no "
                          "config); rebuild it with mx.metric.create(feval)")


def np(numpy_feval: Callable[[Any, Any], Any], name: str | None = None,
       allow_extra_outputs: bool = False) -> CustomMetric:
    """A :class:`CustomMetric` over ``numpy_feval(label, pred)`` (numpy arrays in, a float
    out), named after the function unless ``name`` is given (``mx.metric.np``)."""
    def feval(label: Any, pred: Any) -> Any:
        return numpy_feval(label, pred)

    feval.__name__ = getattr(numpy_feval, "__name__", "feval")
    return CustomMetric(feval, name, allow_extra_outputs)
