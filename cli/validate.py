"""``gluonport validate``: numpy executor vs onnxruntime, or one model file vs another."""

from __future__ import annotations

import json

import click

from ._common import (
    MODEL_HELP,
    check_input_names,
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

    The reference side always runs on an engine independent of the converter: an MXNet model
    on the numpy executor over its own graph, never through an ONNX export.

    \b
    One MXNet MODEL: reference numpy executor on the graph; candidate onnxruntime on its
      in-memory ONNX export.
    One .onnx MODEL: reference numpy executor on the graph imported from it; candidate
      onnxruntime on the file itself.
    MODEL and OTHER: MODEL is the reference, OTHER the candidate; an MXNet file runs on the
      numpy executor, an .onnx file on onnxruntime.

    NaN or Inf on one side where the other has a finite value (or the other infinity, or NaN
    vs Inf) is a mismatch; NaN at the same place on both sides is a match. The report names
    the engine of each side.

    \b
    Examples:
      gluonport validate sample_models/lenet_bn --input data=sample_models/lenet_bn-input.npy
      gluonport validate sample_models/lenet_bn lenet.onnx
      gluonport validate sample_models/lenet_bn --input-shape data=2,1,28,28 --bisect
    """
    from gluonport.errors import ValidationError

    inputs = parse_inputs(input_files)
    shapes = parse_shapes(input_shapes)
    if other is None and not _is_onnx(model):
        report, where = _self_check(model, params_file, epoch, inputs, shapes, rtol, atol,
                                    bisect)
    else:
        report, where = _pair_check(model, other, params_file, epoch, inputs, shapes, rtol,
                                    atol, bisect)
    if as_json:
        click.echo(json.dumps({**report.to_dict(), "bisect": where}, indent=2))
    else:
        echo(ctx, report.table())
        if where:
            echo(ctx, where)
    if not report.ok:
        raise ValidationError(f"{model}: outputs differ beyond tolerance (rtol={rtol}, "
                              f"atol={atol}): {report.mismatches} mismatched element(s), max "
                              f"abs error {report.max_abs:.3g}; {report.engines()}")


def _is_onnx(path: str) -> bool:
    return path.lower().endswith(".onnx")


def _self_check(model, params_file, epoch, inputs, shapes, rtol, atol, bisect):
    """Numpy executor on the MXNet graph vs onnxruntime on its in-memory ONNX export."""
    from gluonport.errors import InputShapeError
    from gluonport.onnx import bisect as run_bisect
    from gluonport.onnx.export import export_symbol
    from gluonport.onnx.verify import verify

    files, sym, params = load_mxnet(model, params_file, epoch)
    check_input_names([*inputs, *shapes], [n for n in sym.list_arguments() +
                                           sym.list_auxiliary_states() if n not in params],
                      model, "--input/--input-shape")
    in_shapes = {**{k: v.shape for k, v in inputs.items()}, **shapes} or None
    try:
        onnx_model = export_symbol(sym, params, in_shapes)
    except InputShapeError as exc:
        raise shape_error(model, exc.inputs, params_file, epoch) from None
    report = verify(sym, params, onnx_model, inputs or None, in_shapes, rtol=rtol, atol=atol)
    report.reference = f"numpy executor on {files.symbol_file}"
    report.candidate = report.candidate.replace(
        "the ONNX model in memory", f"the in-memory ONNX export of {files.symbol_file}")
    where = None
    if bisect:
        where = run_bisect(sym, params, inputs or None, in_shapes, rtol=rtol,
                           atol=atol).describe()
    return report, where


def _open(path, params_file, epoch, engine):
    """``(predictor, description of the engine and graph)`` for one side."""
    from gluonport._modelpath import resolve_model
    from gluonport.runtime.predictor import load

    if _is_onnx(path) and engine != "numpy":
        pred = load(path, backend="onnxruntime")
        return pred, f"onnxruntime ({', '.join(pred.providers)}) on {path}"
    if _is_onnx(path):
        return load(path, backend="numpy"), f"numpy executor on the graph imported from {path}"
    files = resolve_model(path, params_file, epoch)
    pred = load(path, epoch, backend="numpy", params=params_file)
    return pred, f"numpy executor on {files.symbol_file}"


def _pair_check(model, other, params_file, epoch, inputs, shapes, rtol, atol, bisect):
    """MODEL (reference) vs OTHER (candidate), each file on its own engine; one .onnx MODEL
    alone: the numpy executor on its imported graph vs onnxruntime on the file."""
    from gluonport.onnx.verify import VerifyReport, compare_outputs, random_inputs

    first, ref = _open(model, params_file, epoch, "numpy" if other is None else "own")
    check_input_names([*inputs, *shapes], first.input_names, model, "--input/--input-shape")
    second, cand = _open(other or model, None if other else params_file,
                         None if other else epoch, "own")
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
    unknown = [n for n in second.input_names if n not in feed]
    if unknown:
        from gluonport.errors import ValidationError

        raise ValidationError(f"{other}: input(s) {unknown} are not inputs of {model} "
                              f"(its inputs: {first.input_names}); the two models do not take "
                              "the same inputs")
    want = _as_list(first(**{n: feed[n] for n in first.input_names}))
    got = _as_list(second(**{n: feed[n] for n in second.input_names}))
    report = VerifyReport(rtol=rtol, atol=atol, reference=ref, candidate=cand)
    report.outputs = compare_outputs(first.output_names, got, want, rtol, atol)
    where = None
    if bisect and other is None:
        where = _bisect_imported(model, feed, rtol, atol)
    elif bisect:
        where = "--bisect needs one model (it compares a graph with its own export)"
    return report, where


def _bisect_imported(model, feed, rtol, atol):
    """First node of the graph imported from an .onnx file whose numpy output differs from
    onnxruntime's on that graph's re-export."""
    from gluonport.onnx import bisect as run_bisect
    from gluonport.onnx.importer import import_model

    sym, arg, aux = import_model(model)
    names = set(sym.list_inputs())
    found = run_bisect(sym, {**arg, **aux}, {k: v for k, v in feed.items() if k in names},
                       rtol=rtol, atol=atol)
    return f"on the graph imported from {model}: {found.describe()}"


def _as_list(out):
    return out if isinstance(out, list) else [out]
