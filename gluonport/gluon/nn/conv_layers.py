"""Convolution and pooling layers (``mxnet.gluon.nn.conv_layers``, 1.9.1).

Same parameters, names (``conv0_weight``), op attributes and weight-shape inference as MXNet's,
so exported graphs and ``.params`` files are interchangeable.
"""

from __future__ import annotations

import numbers
from typing import Any

from ... import symbol as _sym
from ...errors import GluonportError
from ..hybrid import HybridBlock
from .activations import Activation

__all__ = ["Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose",
           "Conv3DTranspose", "MaxPool1D", "MaxPool2D", "MaxPool3D", "AvgPool1D", "AvgPool2D",
           "AvgPool3D", "GlobalMaxPool1D", "GlobalMaxPool2D", "GlobalMaxPool3D",
           "GlobalAvgPool1D", "GlobalAvgPool2D", "GlobalAvgPool3D", "ReflectionPad2D"]


def _tuple(value: Any, n: int, what: str) -> tuple:
    if isinstance(value, numbers.Integral):
        return (int(value),) * n
    value = tuple(value)
    if len(value) != n:
        raise GluonportError(f"{what} must be a number or a list of {n} ints")
    return value


def _weight_shapes(op_name: str, data_shape: list[int], kwargs: dict) -> list:
    """Parameter shapes from a partial data shape, by shape inference (as MXNet does)."""
    sym = getattr(_sym, op_name)(_sym.var("data", shape=tuple(data_shape)), **kwargs)
    return sym.infer_shape_partial()[0]


class _Conv(HybridBlock):
    """Shared body of ``ConvND`` and ``ConvNDTranspose``; the block alias is ``conv``."""

    def __init__(self, channels: int, kernel_size: tuple, strides: Any, padding: Any,
                 dilation: Any, groups: int, layout: str, in_channels: int = 0,
                 activation: str | None = None, use_bias: bool = True,
                 weight_initializer: Any = None, bias_initializer: Any = "zeros",
                 op_name: str = "Convolution", adj: Any = None, prefix: str | None = None,
                 params: Any = None):
        super().__init__(prefix=prefix, params=params)
        with self.name_scope():
            self._channels = channels
            self._in_channels = in_channels
            n = len(kernel_size)
            self._op_name = op_name
            self._kwargs = {
                "kernel": kernel_size, "stride": _tuple(strides, n, "strides"),
                "dilate": _tuple(dilation, n, "dilation"), "pad": _tuple(padding, n, "padding"),
                "num_filter": channels, "num_group": groups, "no_bias": not use_bias,
                "layout": layout}
            if adj is not None:
                self._kwargs["adj"] = adj
            dshape = [0] * (n + 2)
            dshape[layout.find("N")] = 1
            dshape[layout.find("C")] = in_channels
            wshapes = _weight_shapes(op_name, dshape, self._kwargs)
            self.weight = self.params.get("weight", shape=wshapes[1], init=weight_initializer,
                                          allow_deferred_init=True)
            if use_bias:
                self.bias = self.params.get("bias", shape=wshapes[2], init=bias_initializer,
                                            allow_deferred_init=True)
            else:
                self.bias = None
            self.act = Activation(activation, prefix=activation + "_") if activation else None

    def hybrid_forward(self, F: Any, x: Any, weight: Any, bias: Any = None) -> Any:
        op = getattr(F, self._op_name)
        if bias is None:
            out = op(x, weight, name="fwd", **self._kwargs)
        else:
            out = op(x, weight, bias, name="fwd", **self._kwargs)
        return self.act(out) if self.act is not None else out

    def _alias(self) -> str:
        return "conv"

    def __repr__(self) -> str:
        k = self._kwargs
        n = len(k["kernel"])
        s = f"{self.__class__.__name__}({{mapping}}, kernel_size={k['kernel']}, " \
            f"stride={k['stride']}"
        if k["pad"] != (0,) * n:
            s += f", padding={k['pad']}"
        if k["dilate"] != (1,) * n:
            s += f", dilation={k['dilate']}"
        # MXNet 1.9.1 looks for ``out_pad`` but ConvNDTranspose sets ``outpad``, so its repr
        # never shows output_padding; we print what MXNet prints.
        out_pad = getattr(self, "out_pad", None)
        if out_pad is not None and tuple(out_pad) != (0,) * n:
            s += f", output_padding={out_pad}"
        if k["num_group"] != 1:
            s += f", groups={k['num_group']}"
        if self.bias is None:
            s += ", bias=False"
        if self.act:
            s += f", {self.act}"
        shape = self.weight.shape
        return s.format(mapping=f"{shape[1] if shape[1] else None} -> {shape[0]}") + ")"


_LAYOUTS = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}


def _conv_class(n: int, transpose: bool) -> type:
    default_layout = _LAYOUTS[n][0]

    def __init__(self, channels: int, kernel_size: Any, strides: Any = 1, padding: Any = 0,
                 *args: Any, **kwargs: Any) -> None:
        output_padding = kwargs.pop("output_padding", 0) if transpose else None
        if transpose and args:
            output_padding, args = args[0], args[1:]
        names = ("dilation", "groups", "layout", "activation", "use_bias",
                 "weight_initializer", "bias_initializer", "in_channels")
        opts = dict(zip(names, args))
        opts.update(kwargs)
        layout = opts.pop("layout", default_layout)
        if layout not in _LAYOUTS[n]:
            raise GluonportError(f"Only supports {' and '.join(map(repr, _LAYOUTS[n]))} layout "
                                 "for now")
        kernel = _tuple(kernel_size, n, "kernel_size")
        op_name = opts.pop("op_name", "Deconvolution" if transpose else "Convolution")
        adj = _tuple(output_padding, n, "output_padding") if transpose else None
        _Conv.__init__(self, channels, kernel, strides, padding, opts.pop("dilation", 1),
                       opts.pop("groups", 1), layout, opts.pop("in_channels", 0),
                       opts.pop("activation", None), opts.pop("use_bias", True),
                       opts.pop("weight_initializer", None),
                       opts.pop("bias_initializer", "zeros"), op_name=op_name, adj=adj,
                       **opts)
        if transpose:
            self.outpad = adj

    name = f"Conv{n}D{'Transpose' if transpose else ''}"
    doc = (f"{n}-D {'transposed ' if transpose else ''}convolution "
           f"(``{'Deconvolution' if transpose else 'Convolution'}``), layout "
           f"{' or '.join(_LAYOUTS[n])}.")
    return type(name, (_Conv,), {"__init__": __init__, "__doc__": doc,
                                 "__module__": __name__})


Conv1D, Conv2D, Conv3D = (_conv_class(n, False) for n in (1, 2, 3))
Conv1DTranspose, Conv2DTranspose, Conv3DTranspose = (_conv_class(n, True) for n in (1, 2, 3))


class _Pooling(HybridBlock):
    """Shared body of the pooling layers; the block alias is ``pool``."""

    def __init__(self, pool_size: tuple, strides: Any, padding: Any, ceil_mode: bool,
                 global_pool: bool, pool_type: str, layout: str,
                 count_include_pad: bool | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        n = len(pool_size)
        if strides is None:
            strides = pool_size
        self._kwargs = {
            "kernel": pool_size, "stride": _tuple(strides, n, "strides"),
            "pad": _tuple(padding, n, "padding"), "global_pool": global_pool,
            "pool_type": pool_type, "layout": layout,
            "pooling_convention": "full" if ceil_mode else "valid"}
        if count_include_pad is not None:
            self._kwargs["count_include_pad"] = count_include_pad

    def _alias(self) -> str:
        return "pool"

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.Pooling(x, name="fwd", **self._kwargs)

    def __repr__(self) -> str:
        k = self._kwargs
        return (f"{self.__class__.__name__}(size={k['kernel']}, stride={k['stride']}, "
                f"padding={k['pad']}, ceil_mode={k['pooling_convention'] == 'full'}, "
                f"global_pool={k['global_pool']}, pool_type={k['pool_type']}, "
                f"layout={k['layout']})")


def _pool_class(n: int, pool_type: str) -> type:
    default_layout = _LAYOUTS[n][0]
    avg = pool_type == "avg"

    def __init__(self, pool_size: Any = 2, strides: Any = None, padding: Any = 0,
                 *args: Any, **kwargs: Any) -> None:
        # MXNet's positional order differs: MaxPoolND(..., layout, ceil_mode),
        # AvgPool1D(..., layout, ceil_mode, cip), AvgPool2D/3D(..., ceil_mode, layout, cip).
        order = ("layout", "ceil_mode") if (not avg or n == 1) else ("ceil_mode", "layout")
        opts = dict(zip(order + (("count_include_pad",) if avg else ()), args))
        opts.update(kwargs)
        layout = opts.pop("layout", default_layout)
        if layout not in _LAYOUTS[n]:
            raise GluonportError(f"Only {' and '.join(_LAYOUTS[n])} layouts are valid for {n}D "
                                 "Pooling")
        cip = opts.pop("count_include_pad", True) if avg else None
        _Pooling.__init__(self, _tuple(pool_size, n, "pool_size"), strides, padding,
                          opts.pop("ceil_mode", False), False, pool_type, layout, cip, **opts)

    name = f"{'Avg' if avg else 'Max'}Pool{n}D"
    doc = f"{n}-D {pool_type} pooling (``Pooling``)."
    return type(name, (_Pooling,), {"__init__": __init__, "__doc__": doc,
                                    "__module__": __name__})


def _global_pool_class(n: int, pool_type: str) -> type:
    def __init__(self, layout: str = _LAYOUTS[n][0], **kwargs: Any) -> None:
        _Pooling.__init__(self, (1,) * n, None, 0, True, True, pool_type, layout, **kwargs)

    name = f"Global{'Avg' if pool_type == 'avg' else 'Max'}Pool{n}D"
    return type(name, (_Pooling,), {"__init__": __init__, "__module__": __name__,
                                    "__doc__": f"Global {n}-D {pool_type} pooling."})


MaxPool1D, MaxPool2D, MaxPool3D = (_pool_class(n, "max") for n in (1, 2, 3))
AvgPool1D, AvgPool2D, AvgPool3D = (_pool_class(n, "avg") for n in (1, 2, 3))
GlobalMaxPool1D, GlobalMaxPool2D, GlobalMaxPool3D = (_global_pool_class(n, "max")
                                                     for n in (1, 2, 3))
GlobalAvgPool1D, GlobalAvgPool2D, GlobalAvgPool3D = (_global_pool_class(n, "avg")
                                                     for n in (1, 2, 3))


class ReflectionPad2D(HybridBlock):
    """Reflection padding of the last two axes (``pad`` with ``mode='reflect'``)."""

    def __init__(self, padding: Any = 0, **kwargs: Any):
        super().__init__(**kwargs)
        if isinstance(padding, numbers.Integral):
            padding = (0, 0, 0, 0, padding, padding, padding, padding)
        if len(padding) != 8:
            raise GluonportError("ReflectionPad2D: padding must be an int or 8 ints")
        self._padding = tuple(padding)

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.pad(x, mode="reflect", pad_width=self._padding)
