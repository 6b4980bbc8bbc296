"""``gluonport export``: Gluon model code + trained parameters -> MXNet files and/or ONNX."""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import sys

import click

from ._common import EPOCH, check_opset_option, echo, output_path, parse_shapes


def _load_factory(spec: str):
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise click.BadParameter(f"{spec!r} is not MODULE:FACTORY (e.g. mynet:build_net)",
                                 param_hint="MODULE:FACTORY")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise click.BadParameter(f"cannot import module {module_name!r}: {exc}. Run from the "
                                 "folder that holds it or put it on PYTHONPATH",
                                 param_hint="MODULE:FACTORY") from None
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise click.BadParameter(f"module {module_name!r} has no attribute {attr!r}",
                                     param_hint="MODULE:FACTORY")
        obj = getattr(obj, part)
    if not callable(obj):
        raise click.BadParameter(f"{spec} is a {type(obj).__name__}, not a HybridBlock class "
                                 "or a function returning one", param_hint="MODULE:FACTORY")
    return obj


def _build(spec: str, factory, kwargs: dict):
    """``factory(**kwargs)``; arguments it does not take are a usage error naming --kwargs."""
    import inspect

    try:
        inspect.signature(factory).bind(**kwargs)
    except TypeError as exc:
        raise click.BadParameter(f"{spec} does not take {kwargs}: {exc}",
                                 param_hint="--kwargs") from None
    except ValueError:  # no signature (a builtin): let the call say
        pass
    try:
        return factory(**kwargs)
    except TypeError as exc:  # an argument the block's own __init__ does not take
        raise click.BadParameter(f"{spec}(**{kwargs}) failed: {exc}",
                                 param_hint="--kwargs") from None


@click.command("export")
@click.argument("factory", metavar="MODULE:FACTORY")
@click.option("--kwargs", "kwargs_json", default="{}", help="JSON keyword arguments.")
@click.option("--params", "params_file", default=None,
              help="Trained parameters: a save_parameters file or an exported .params file.")
@click.option("--input-shape", "input_shapes", multiple=True, required=True,
              metavar="NAME=D1,D2,..", help="Input shape(s), in call order.")
@click.option("-o", "--output", "prefix", default=None, help="Write PREFIX-symbol.json + params.")
@click.option("--epoch", default=0, show_default=True, type=EPOCH,
              help="Epoch of PREFIX-NNNN.params, 0 to 9999.")
@click.option("--onnx", "onnx_file", default=None, help="Also (or only) write FILE.onnx.")
@click.option("--opset", type=int, default=None)
@click.option("--dynamic-batch", is_flag=True)
@click.pass_context
def export(ctx, factory, kwargs_json, params_file, input_shapes, prefix, epoch, onnx_file,
           opset, dynamic_batch):
    """Build a HybridBlock from Python code, load trained parameters, and export it.

    FACTORY is a HybridBlock class or a function returning one.

    \b
    Example:
      gluonport export mynets:LeNet --params lenet.params --input-shape data=1,1,28,28 \\
          -o lenet --onnx lenet.onnx
    """
    import numpy as np

    import gluonport as mx

    if not prefix and not onnx_file:
        raise click.UsageError("give -o PREFIX and/or --onnx FILE")
    if prefix is not None:
        output_path(prefix, "-o", "model")
    if onnx_file is not None:
        output_path(onnx_file, "--onnx", "model.onnx")
    check_opset_option(opset)
    try:
        kwargs = json.loads(kwargs_json)
    except ValueError as exc:
        raise click.BadParameter(f"not JSON: {exc}", param_hint="--kwargs") from None
    if not isinstance(kwargs, dict):
        raise click.BadParameter(f"{kwargs_json!r} is not a JSON object ({{\"name\": value}})",
                                 param_hint="--kwargs")
    shapes = parse_shapes(input_shapes)
    net = _build(factory, _load_factory(factory), kwargs)
    if not isinstance(net, mx.gluon.HybridBlock):
        raise click.BadParameter(f"{factory} made a {type(net).__name__}, not a HybridBlock; "
                                 "only HybridBlocks can be exported",
                                 param_hint="MODULE:FACTORY")
    inputs = [mx.nd.array(np.zeros(s, np.float32)) for s in shapes.values()]
    with _shapes_named(factory, input_shapes):
        if params_file:
            _load_params(net, params_file, inputs)
        else:
            net.initialize()
        net.hybridize()
        net(*inputs)
    written = []
    if prefix:
        written += list(net.export(prefix, epoch=epoch))
    if onnx_file:
        written.append(net.export_onnx(onnx_file, *inputs, opset_version=opset,
                                       dynamic_batch=dynamic_batch))
    echo(ctx, f"wrote {', '.join(written)}")


@contextlib.contextmanager
def _shapes_named(spec: str, input_shapes: tuple[str, ...]):
    """A shape error while the block first runs names the --input-shape values it ran on."""
    from gluonport.errors import ShapeError

    try:
        yield
    except ShapeError as exc:
        raise ShapeError(f"{spec} on --input-shape {' '.join(input_shapes)}: {exc}") from None


def _load_params(net, params_file, inputs):
    from gluonport.ndarray import load

    keys = load(params_file)
    if isinstance(keys, dict) and any(k.startswith(("arg:", "aux:")) for k in keys):
        net.initialize()
        net(*inputs)  # finish deferred shapes
        net.collect_params().load(params_file, ignore_extra=False)
    else:
        net.load_parameters(params_file)
