"""``gluonport validate``: numpy executor vs onnxruntime, or one model file vs another."""

from __future__ import annotations

import json

import click

from ._common import (
    MODEL_HELP,
    echo,
    input_options,
    load_mxnet,
    model_options,
    model_shapes,
    parse_inputs,
    parse_shapes,
    shape_error,
    tolerance_options,
)


@click.command("validate", epilog=MODEL_HELP)
@click.argument("model")
@click.argument("other", required=False)
@model_options
@input_options
@tolerance_options
@click.option("--bisect", is_flag=True,
              help="Compare intermediate outputs and name the first node that diverges.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def validate(ctx, model, other, params_file, epoch, input_files, input_shapes, rtol, atol,
             bisect, as_json):
    """Check that two ways of running a model agree; exit 1 when they do not.

    With one MXNet MODEL: the numpy executor vs onnxruntime (after an in-memory ONNX export).
    With MODEL and OTHER (e.g. the MXNet original and its .onnx conversion): both files run on
    the same inputs.

    \b
    Examples:
      gluonport validate sample_models/lenet_bn --input data=sample_models/lenet_bn-input.npy
      gluonport validate sample_models/lenet_bn lenet.onnx
      gluonport validate sample_models/lenet_bn --input-shape data=2,1,28,28 --bisect
    """
    from gluonport.errors import ValidationError

    inputs = parse_inputs(input_files)
    shapes = parse_shapes(input_shapes)
    if other is None:
        report, where = _self_check(model, params_file, epoch, inputs, shapes, rtol, atol,
                                    bisect)
    else:
        report, where = _pair_check(model, other, params_file, epoch, inputs, shapes, rtol, atol)
    if as_json:
        click.echo(json.dumps({"ok": report.ok, "outputs": [o.__dict__ for o in report.outputs],
                               "bisect": where}, indent=2))
    else:
        echo(ctx, report.table())
        if where:
            echo(ctx, where)
    if not report.ok:
        raise ValidationError(f"{model}: outputs differ beyond tolerance (rtol={rtol}, "
                              f"atol={atol}); max abs error {report.max_abs:.3g}")


def _self_check(model, params_file, epoch, inputs, shapes, rtol, atol, bisect):
    from gluonport.errors import InputShapeError
    from gluonport.onnx import bisect as run_bisect
    from gluonport.onnx.export import export_symbol
    from gluonport.onnx.verify import verify

    if model.endswith(".onnx"):
        from gluonport.onnx.importer import import_model

        sym, arg, aux = import_model(model)
        params = {**arg, **aux}
    else:
        _, sym, params = load_mxnet(model, params_file, epoch)
    in_shapes = {**{k: v.shape for k, v in inputs.items()}, **shapes} or None
    try:
        onnx_model = export_symbol(sym, params, in_shapes)
    except InputShapeError as exc:
        raise shape_error(model, exc.inputs, params_file, epoch) from None
    report = verify(sym, params, onnx_model, inputs or None, in_shapes, rtol=rtol, atol=atol)
    where = None
    if bisect:
        where = run_bisect(sym, params, inputs or None, in_shapes, rtol=rtol,
                           atol=atol).describe()
    return report, where


def _pair_check(model, other, params_file, epoch, inputs, shapes, rtol, atol):
    from gluonport.onnx.verify import VerifyReport, compare, random_inputs
    from gluonport.runtime.predictor import load

    first = load(model, epoch, params=params_file)
    second = load(other)
    feed = dict(inputs)
    # what either file declares (an MXNet graph usually nothing, its ONNX conversion the dims)
    declared = {n: first.input_shapes.get(n) or second.input_shapes.get(n)
                for n in first.input_names}
    names = [n for n in first.input_names if n not in feed]
    need = model_shapes(names, {n: s for n, s in shapes.items() if n in names}, declared)
    missing = [n for n in names if n not in need]
    if missing:
        raise shape_error(model, missing, params_file, epoch, declared)
    feed.update(random_inputs(need, {}))
    a = first(**{n: feed[n] for n in first.input_names})
    b = second(**{n: feed[n] for n in second.input_names})
    a = a if isinstance(a, list) else [a]
    b = b if isinstance(b, list) else [b]
    report = VerifyReport(rtol=rtol, atol=atol)
    report.outputs = [compare(n, y, x, rtol, atol) for n, x, y in zip(first.output_names, a, b)]
    return report, None

