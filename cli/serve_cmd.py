"""``gluonport serve`` (Ray Serve) and ``gluonport convert --triton-repo`` (Triton)."""

from __future__ import annotations

import json
import time

import click

from ._common import (
    MODEL_HELP,
    echo,
    input_options,
    model_options,
    parse_device,
    parse_inputs,
    parse_shapes,
    shape_error,
)


def _prepare(model, params_file, epoch, input_files, input_shapes, opset=None, ctx=None):
    """The model prepared for serving (:func:`gluonport.serve.prepare_model`); sample shapes
    and dtypes from --input-shape and --input."""
    from gluonport.errors import InputShapeError
    from gluonport.serve import prepare_model

    shapes = parse_shapes(input_shapes)
    inputs = parse_inputs(input_files)
    given = {**{k: v.shape for k, v in inputs.items()}, **shapes}
    try:
        sm = prepare_model(model, input_shapes=given or None,
                           input_dtypes={k: v.dtype for k, v in inputs.items()} or None,
                           params=params_file, epoch=epoch, opset=opset, ctx=ctx)
    except InputShapeError as exc:
        raise shape_error(model, exc.inputs, params_file, epoch) from None
    return sm, inputs


def _batch_line(sm, max_batch_size: int) -> str:
    if sm.batch_dynamic and max_batch_size > 1:
        return f"batch axis dynamic: batched up to {max_batch_size}"
    if sm.batch_dynamic:
        return "batch axis dynamic; batching off (max batch size 1)"
    return f"fixed batch, served unbatched: {sm.why_fixed}"


def triton_repo_command(ctx, model, dst, repo, max_batch_size, instance_count, device,
                        params_file, epoch, input_files, input_shapes, opset, no_verify, rtol,
                        atol, as_json):
    """``gluonport convert MODEL --triton-repo DIR``: write DIR/<name>/config.pbtxt and
    DIR/<name>/1/model.onnx, checked against the source model unless --no-verify."""
    if repo is None:
        raise click.UsageError("Missing option '-o' / '--output' (or --triton-repo DIR)")
    if dst is not None:
        raise click.BadParameter("give -o or --triton-repo, not both", param_hint="--triton-repo")
    ctx_dev = parse_device(device)
    from gluonport.serve import write_triton_repo

    sm, inputs = _prepare(model, params_file, epoch, input_files, input_shapes, opset)
    folder = write_triton_repo(sm, repo, max_batch_size=max_batch_size,
                               instance_count=instance_count, device=ctx_dev)
    report = {"direction": "->triton", "source": model, "name": sm.name,
              "written": [f"{folder}/config.pbtxt", f"{folder}/1/model.onnx"],
              "max_batch_size": max_batch_size if sm.batch_dynamic else 0,
              "batch_dynamic": sm.batch_dynamic, "why_fixed": sm.why_fixed or None}
    if not no_verify:
        report.update(_verify(model, params_file, epoch, f"{folder}/1/model.onnx", sm, inputs,
                              rtol, atol))
    if as_json:
        click.echo(json.dumps(report, indent=2))
    else:
        echo(ctx, f"wrote {', '.join(report['written'])}")
        if not sm.batch_dynamic:
            how = f"fixed batch, dims are the full shapes ({sm.why_fixed})"
        elif max_batch_size == 0:
            how = "batching off (the batch axis stays in the dims, as -1)"
        else:
            how = "batch axis dynamic, folded into max_batch_size; dynamic_batching on"
        echo(ctx, f"max_batch_size {report['max_batch_size']}: {how}")
        if "max_abs_error" in report:
            state = "verified" if report["verified"] else "NOT verified"
            echo(ctx, f"{state}: max abs error {report['max_abs_error']:.3g} (rtol={rtol}, "
                      f"atol={atol}); reference: {report['reference']}; candidate: "
                      f"{report['candidate']}")
    if report.get("verified") is False:
        from gluonport.errors import ValidationError

        raise ValidationError(f"{folder}/1/model.onnx differs from {model} beyond tolerance "
                              f"(max abs error {report['max_abs_error']:.3g})")


def _verify(model, params_file, epoch, onnx_file, sm, inputs, rtol, atol) -> dict:
    """The written model.onnx on onnxruntime against the source on the numpy executor (MXNet
    files) or on onnxruntime (an .onnx source), on the given inputs or random ones."""
    import numpy as np

    from gluonport.onnx.verify import compare_outputs, random_inputs
    from gluonport.runtime.predictor import load

    feed = {n: inputs[n] for n in sm.input_names if n in inputs}
    if len(feed) < len(sm.inputs):
        feed = random_inputs(sm.probe, {s.name: s.dtype for s in sm.inputs})
    backend = "onnxruntime" if model.endswith(".onnx") else "numpy"
    ref = load(model, params=params_file, epoch=epoch, backend=backend)
    cand = load(onnx_file, backend="onnxruntime")
    want = ref(**{n: np.asarray(feed[n]) for n in ref.input_names})
    got = cand(**{n: np.asarray(feed[n]) for n in cand.input_names})
    want = want if isinstance(want, list) else [want]
    got = got if isinstance(got, list) else [got]
    errs = compare_outputs(sm.output_names, got, want, rtol, atol)
    return {"verified": all(e.ok for e in errs),
            "max_abs_error": max((e.max_abs for e in errs), default=0.0),
            "reference": f"{backend} on {model}", "candidate": f"onnxruntime on {onnx_file}"}


def _route(ctx, param, value: str) -> str:
    if not value.startswith("/") or any(c.isspace() for c in value):
        raise click.BadParameter(f"{value!r} is not a route like /lenet", param_hint="--route")
    return value


@click.command("serve", epilog=MODEL_HELP)
@click.argument("model")
@model_options
@input_options
@click.option("--replicas", type=click.IntRange(1, 1024), default=1, show_default=True,
              help="Ray Serve replicas.")
@click.option("--max-batch-size", type=click.IntRange(1, 4096), default=8, show_default=True,
              help="Most requests joined into one run (1: no batching).")
@click.option("--batch-wait-ms", type=click.FloatRange(0, 60000), default=5.0,
              show_default=True, help="Longest wait for a batch to fill, in milliseconds.")
@click.option("--device", default="cpu", show_default=True, help="cpu or cuda:N.")
@click.option("--address", default=None, metavar="ADDR",
              help="An existing Ray cluster (auto, ray://HEAD:10001); default: start Ray here.")
@click.option("--route", default="/", show_default=True, callback=_route,
              help="HTTP route of the model, e.g. /lenet.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address the HTTP proxy listens on (0.0.0.0: every interface).")
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True)
@click.option("--max-request-mb", type=click.FloatRange(0.001, 4096), default=64.0,
              show_default=True, help="Larger request bodies get HTTP 413.")
@click.option("--check", is_flag=True,
              help="Prepare the deployment and print what would be served; start nothing.")
@click.pass_context
def serve(ctx, model, params_file, epoch, input_files, input_shapes, replicas, max_batch_size,
          batch_wait_ms, device, address, route, host, port, max_request_mb, check):
    """Serve MODEL over HTTP with Ray Serve (pip install "gluonport[serve]").

    POST the inputs by name as JSON ({"inputs": {"data": {"data": [[...]], "dtype":
    "float32"}}}), a .npy (one input) or a .npz; the outputs come back by name in the same
    encoding. Runs until interrupted (Ctrl-C).

    \b
    Examples:
      gluonport serve sample_models/lenet_bn --input-shape data=1,1,28,28 --check
      gluonport serve model.onnx --replicas 2 --max-batch-size 16 --route /m
      gluonport serve model.onnx --address auto --device cuda:0    # on a running Ray cluster
      curl -H 'Content-Type: application/x-npy' --data-binary @x.npy localhost:8000/m
    """
    on_gpu = parse_device(device).device_type == "gpu"
    check_here = not (on_gpu and address)
    dev_ctx = None
    if check_here:
        from gluonport.serve._model import check_device

        dev_ctx = check_device(device)
    sm, _ = _prepare(model, params_file, epoch, input_files, input_shapes, ctx=dev_ctx)
    echo(ctx, f"{sm.name}: inputs " + ", ".join(
        f"{s.name} {s.dtype.name} {list(s.dims)}" for s in sm.inputs) + "; outputs " + ", ".join(
        f"{s.name} {s.dtype.name} {list(s.dims)}" for s in sm.outputs))
    echo(ctx, f"{sm.name}: {_batch_line(sm, max_batch_size)}")
    if check:
        return
    from gluonport.serve._ray import deployment, import_serve, serve_model, start

    import_serve()
    app = deployment(sm, replicas=replicas, max_batch_size=max_batch_size,
                     batch_wait_ms=batch_wait_ms, device=device,
                     max_request_bytes=int(max_request_mb * 1024 * 1024),
                     check_device_here=check_here)
    import ray
    from ray import serve as ray_serve

    try:
        start(address, host=host, port=port)
        serve_model(app, route=route, name=sm.name)
        echo(ctx, f"serving {sm.name} with {replicas} replica(s) at http://{host}:{port}{route} "
                  "(Ctrl-C stops)")
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        echo(ctx, f"stopping {sm.name}")
    finally:
        if ray.is_initialized():
            if address:  # a shared cluster: remove this app only
                ray_serve.delete(sm.name)
            else:  # the Ray this command started
                ray_serve.shutdown()
                ray.shutdown()
