"""``gluonport convert``: MXNet files <-> ONNX, verified numerically by default."""

from __future__ import annotations

import json
import os

import click
import numpy as np

from ._common import (
    MODEL_HELP,
    Stages,
    check_input_names,
    check_opset_option,
    echo,
    input_options,
    load_mxnet,
    model_options,
    output_path,
    parse_inputs,
    parse_shapes,
    shape_error,
    shape_hints,
    tolerance_options,
)


def _dynamic_axes(dynamic_batch: bool, axes: tuple[str, ...], names: list[str]):
    if dynamic_batch:
        return {n: {0: "batch"} for n in names}
    out = {}
    for text in axes:
        name, sep, spec = text.partition("=")
        try:
            out[name] = [int(a) for a in spec.split(",")] if sep else None
        except ValueError:
            out[name] = None
        if out[name] is None:
            raise click.BadParameter(f"{text!r} is not NAME=AXIS[,AXIS...]",
                                     param_hint="--dynamic-axes")
    return out or None


@click.command("convert", epilog=MODEL_HELP)
@click.argument("model")
@click.option("-o", "--output", "dst", default=None,
              help="Destination: FILE.onnx (from MXNet) or a PREFIX (from ONNX).")
@click.option("--triton-repo", default=None, metavar="DIR",
              help="Instead of -o: write a Triton model repository entry, "
                   "DIR/<name>/config.pbtxt and DIR/<name>/1/model.onnx.")
@click.option("--max-batch-size", type=click.IntRange(0, 1 << 20), default=8, show_default=True,
              help="With --triton-repo: Triton's max_batch_size (0: no batching); a model whose "
                   "batch axis is fixed gets 0.")
@click.option("--instance-count", type=click.IntRange(1, 1024), default=1, show_default=True,
              help="With --triton-repo: model instances (instance_group count).")
@click.option("--device", default="cpu", show_default=True,
              help="With --triton-repo: cpu or cuda:N (instance_group kind).")
@model_options
@input_options
@click.option("--opset", type=int, default=None, help="ONNX opset (default 17).")
@click.option("--dynamic-batch", is_flag=True, help="Make axis 0 of every input dynamic.")
@click.option("--dynamic-axes", multiple=True, metavar="NAME=AXES",
              help="Dynamic axes of an input, e.g. data=0,2 (repeatable).")
@click.option("--outputs", "cut", default=None, metavar="NAME,...",
              help="Cut the graph at these internal outputs (e.g. a detector before NMS).")
@click.option("--external-data", is_flag=True,
              help="Store weights beside the model, in FILE.onnx.<digest>.data.")
@click.option("--no-verify", is_flag=True, help="Skip the numeric check.")
@tolerance_options
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def convert(ctx, model, dst, triton_repo, max_batch_size, instance_count, device, params_file,
            epoch, input_files, input_shapes, opset, dynamic_batch, dynamic_axes, cut,
            external_data, no_verify, rtol, atol, as_json):
    """Convert MODEL to ONNX (from MXNet files) or to MXNet files (from .onnx).

    \b
    Examples:
      gluonport convert sample_models/lenet_bn -o lenet.onnx --input-shape data=2,1,28,28
      gluonport convert sample_models/mlp -o mlp.onnx --input-shape data=4,10 --dynamic-batch
      gluonport convert lenet.onnx -o lenet_back      # writes lenet_back-symbol.json/-0000.params
      gluonport convert sample_models/lenet_bn --triton-repo repo --input-shape data=1,1,28,28
    """
    if triton_repo is not None or dst is None:
        from .serve_cmd import triton_repo_command

        return triton_repo_command(ctx, model, dst, triton_repo, max_batch_size, instance_count,
                                   device, params_file, epoch, input_files, input_shapes, opset,
                                   no_verify, rtol, atol, as_json)
    output_path(dst, "-o", "model" if model.endswith(".onnx") else "model.onnx")
    check_opset_option(opset)
    shapes = parse_shapes(input_shapes)
    inputs = parse_inputs(input_files)
    if model.endswith(".onnx"):
        report = _from_onnx(model, dst, inputs, shapes, no_verify, rtol, atol)
    else:
        report = _to_onnx(ctx, model, dst, params_file, epoch, inputs, shapes, opset,
                          dynamic_batch, dynamic_axes, cut, external_data, no_verify, rtol,
                          atol)
    if as_json:
        click.echo(json.dumps(report, indent=2))
    else:
        echo(ctx, f"wrote {', '.join(report['written'])}")
        if report.get("max_abs_error") is not None:
            state = "verified" if report.get("verified") else "NOT verified"
            echo(ctx, f"{state}: max abs error {report['max_abs_error']:.3g} "
                      f"(rtol={rtol}, atol={atol}); reference: {report['reference']}; "
                      f"candidate: {report['candidate']}")
    if report.get("verified") is False:
        from gluonport.errors import ValidationError

        raise ValidationError(f"{dst}: converted model differs from the original beyond "
                              f"tolerance (max abs error {report['max_abs_error']:.3g})")


def _to_onnx(ctx, model, dst, params_file, epoch, inputs, shapes, opset, dynamic_batch, axes,
             cut, external_data, no_verify, rtol, atol):
    from gluonport._modelpath import resolve_model

    first = resolve_model(model, params_file, epoch)
    size = os.path.getsize(first.params_file) if first.params_file else 0
    with Stages(ctx, 3, f"converting {os.path.basename(model)}", size) as stages:
        return _to_onnx_steps(stages, model, dst, params_file, epoch, inputs, shapes, opset,
                              dynamic_batch, axes, cut, external_data, no_verify, rtol, atol)


def _to_onnx_steps(stages, model, dst, params_file, epoch, inputs, shapes, opset, dynamic_batch,
                   axes, cut, external_data, no_verify, rtol, atol):
    import gluonport as mx
    from gluonport.errors import InputShapeError
    from gluonport.onnx import export_model, verify
    from gluonport.onnx.export import ExportGraph, file_sha256

    files, sym, params = load_mxnet(model, params_file, epoch)
    stages.step()
    if cut:
        internals = sym.get_internals()
        names = internals.list_outputs()
        picked = []
        for name in cut.split(","):
            key = name if name in names else f"{name}_output"
            if key not in names:
                raise click.BadParameter(f"{model} has no internal output {name!r} (`gluonport "
                                         "inspect --json` lists the nodes)",
                                         param_hint="--outputs")
            picked.append(internals[key])
        sym = mx.sym.Group(picked)
    data_names = [n for n in sym.list_arguments() + sym.list_auxiliary_states()
                  if n not in params]
    check_input_names(shapes, data_names, model)
    check_input_names(inputs, data_names, model, "--input")
    check_input_names([t.partition("=")[0] for t in axes], data_names, model, "--dynamic-axes")
    given = [*inputs, *shapes]
    in_shapes = {**{k: v.shape for k, v in inputs.items()}, **shapes} or None
    in_types = {k: v.dtype for k, v in inputs.items()} or np.float32
    try:
        with shape_hints(model, given, params_file, epoch):
            g = ExportGraph(sym, {k: v.asnumpy() for k, v in params.items()}, in_shapes, in_types,
                       {})
    except InputShapeError as exc:
        raise shape_error(model, exc.inputs, params_file, epoch) from None
    names = [n.name for n in g.data]
    meta = {"gluonport.source_symbol_sha256": file_sha256(files.symbol_file)}
    if files.params_file:
        meta["gluonport.source_params_sha256"] = file_sha256(files.params_file)
    export_model(sym, params, g.shapes0, [g.types0[n] for n in names], dst, opset_version=opset,
                 dynamic_axes=_dynamic_axes(dynamic_batch, axes, names),
                 external_data=external_data or None, metadata=meta)
    stages.step()
    from gluonport._core.onnxdigest import data_files_of

    written = [dst] + data_files_of(dst)
    report = {"direction": "mxnet->onnx", "source": files.symbol_file, "written": written}
    if not no_verify:
        rep = verify(sym, params, dst, inputs or None, g.shapes0, g.types0, rtol, atol)
        report.update(verified=rep.ok, max_abs_error=rep.max_abs,
                      reference=f"numpy executor on {files.symbol_file}",
                      candidate=rep.candidate, outputs=[o.to_dict() for o in rep.outputs])
    stages.step()
    return report


def _from_onnx(model, dst, inputs, shapes, no_verify, rtol, atol):
    from gluonport.onnx.importer import export_mxnet

    written = export_mxnet(model, dst)
    report = {"direction": "onnx->mxnet", "source": model, "written": list(written)}
    if not no_verify:
        from gluonport.onnx.verify import compare_outputs, random_inputs
        from gluonport.runtime.predictor import load

        ort_model = load(model, backend="onnxruntime")
        ours = load(written[0], backend="numpy")
        feed = inputs or random_inputs(
            {n: shapes.get(n) or tuple(d if isinstance(d, int) else 1
                                       for d in ort_model.input_shapes[n] or ())
             for n in ort_model.input_names}, {})
        want = ort_model(**{n: feed[n] for n in ort_model.input_names})
        got = ours(**{n: feed[n] for n in ours.input_names})
        want = want if isinstance(want, list) else [want]
        got = got if isinstance(got, list) else [got]
        errs = compare_outputs(ort_model.output_names, got, want, rtol, atol)
        report.update(verified=all(e.ok for e in errs),
                      max_abs_error=max((e.max_abs for e in errs), default=0.0),
                      reference=f"onnxruntime ({', '.join(ort_model.providers)}) on {model}",
                      candidate=f"numpy executor on {written[0]}",
                      outputs=[e.to_dict() for e in errs])
    return report
