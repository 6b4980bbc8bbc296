"""``gluonport run``: inference on given inputs; print or save the outputs."""

from __future__ import annotations

import json

import click
import numpy as np

from ._common import (
    MODEL_HELP,
    check_input_names,
    echo,
    input_options,
    model_options,
    model_shapes,
    output_path,
    parse_device,
    parse_inputs,
    parse_shapes,
    shape_error,
    shape_hints,
)


@click.command("run", epilog=MODEL_HELP)
@click.argument("model")
@model_options
@input_options
@click.option("--device", default="cpu", show_default=True, help="cpu, cuda:N or gpu:N.")
@click.option("--backend", type=click.Choice(["auto", "onnxruntime", "numpy"]), default="auto",
              show_default=True)
@click.option("-o", "--output", "out_file", default=None, help="Save outputs to FILE.npz.")
@click.option("--json", "as_json", is_flag=True, help="Print outputs as JSON lists.")
@click.pass_context
def run(ctx, model, params_file, epoch, input_files, input_shapes, device, backend, out_file,
        as_json):
    """Run MODEL on inputs (.npy files, or random ones of --input-shape) and show the outputs.

    \b
    Examples:
      gluonport run sample_models/lenet_bn --input data=sample_models/lenet_bn-input.npy
      gluonport run model.onnx --input-shape data=1,3,224,224 --device cuda:0 -o out.npz
    """
    from gluonport.onnx.verify import random_inputs
    from gluonport.runtime.predictor import load

    if out_file is not None:
        output_path(out_file, "-o")
    predictor = load(model, epoch, parse_device(device), backend=None if backend == "auto"
                     else backend, params=params_file)
    inputs = parse_inputs(input_files)
    shapes = parse_shapes(input_shapes)
    check_input_names(shapes, predictor.input_names, model)
    check_input_names(inputs, predictor.input_names, model, "--input")
    given = [*inputs, *shapes]
    shapes = model_shapes([n for n in predictor.input_names if n not in inputs], shapes,
                          predictor.input_shapes)
    missing = [n for n in predictor.input_names if n not in inputs and n not in shapes]
    if missing:
        raise shape_error(model, missing, params_file, epoch, predictor.input_shapes)
    made = {n: s for n, s in shapes.items() if n not in inputs}
    inputs.update(random_inputs(made, {}))
    with shape_hints(model, given, params_file, epoch, predictor.input_shapes):
        outs = predictor(**{n: inputs[n] for n in predictor.input_names})
    outs = outs if isinstance(outs, list) else [outs]
    named = dict(zip(predictor.output_names, outs))
    if out_file:
        from gluonport.formats._atomic import atomic_open

        with atomic_open(out_file, "wb") as f:
            np.savez(f, **named)
        echo(ctx, f"wrote {out_file}")
    if as_json:
        click.echo(json.dumps({k: np.asarray(v).tolist() for k, v in named.items()}))
        return
    for n, s in made.items():
        echo(ctx, f"input {n}: random uniform(-1, 1), shape {tuple(s)}")
    echo(ctx, f"backend: {predictor.backend} on {predictor.ctx}")
    for name, value in named.items():
        v = np.asarray(value)
        stats = (f"min {v.min():.4g} max {v.max():.4g} mean {v.mean():.4g}" if v.size and
                 v.dtype.kind in "fiu" else "")
        click.echo(f"{name}: shape {v.shape} {v.dtype} {stats}")
