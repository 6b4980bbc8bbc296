"""``gluonport bench``: latency and throughput per batch size and backend."""

from __future__ import annotations

import json
import time

import click
import numpy as np

from ._common import (
    MODEL_HELP,
    check_input_names,
    echo,
    input_options,
    model_options,
    model_shapes,
    parse_device,
    parse_shapes,
    shape_error,
    shape_hints,
)


@click.command("bench", epilog=MODEL_HELP)
@click.argument("model")
@model_options
@input_options
@click.option("--batch", default="1,8,32", show_default=True, help="Batch sizes to time.")
@click.option("--device", default="cpu", show_default=True)
@click.option("--backend", type=click.Choice(["all", "onnxruntime", "numpy"]), default="all",
              show_default=True)
@click.option("--iters", default=20, show_default=True, type=click.IntRange(min=1),
              help="Timed calls per row.")
@click.option("--warmup", default=3, show_default=True, type=click.IntRange(min=0))
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def bench(ctx, model, params_file, epoch, input_files, input_shapes, batch, device, backend,
          iters, warmup, as_json):
    """Time MODEL: median and p90 latency and throughput per batch size and backend.

    Input shapes come from --input-shape (its first dim is replaced by each batch size).

    \b
    Example:
      gluonport bench sample_models/lenet_bn --input-shape data=1,1,28,28 --batch 1,16
    """
    from gluonport.onnx.verify import random_inputs
    from gluonport.runtime.predictor import load

    shapes = parse_shapes(input_shapes)
    try:
        batches = [int(b) for b in batch.split(",")]
    except ValueError:
        raise click.BadParameter(f"{batch!r} is not a list of ints",
                                 param_hint="--batch") from None
    if any(b < 1 for b in batches):
        raise click.BadParameter(f"{batch!r}: batch sizes must be at least 1",
                                 param_hint="--batch")
    ctx_obj = parse_device(device)
    backends = ["onnxruntime", "numpy"] if backend == "all" else [backend]
    given = list(shapes)
    rows = []
    for be in backends:
        if be == "numpy" and ctx_obj.device_type == "gpu":
            continue
        pred = load(model, epoch, ctx_obj, backend=be, params=params_file)
        check_input_names(given, pred.input_names, model)
        shapes = model_shapes(pred.input_names, shapes, pred.input_shapes)
        missing = [n for n in pred.input_names if n not in shapes]
        if missing:
            raise shape_error(model, missing, params_file, epoch, pred.input_shapes)
        for b in batches:
            feed = random_inputs({n: (b, *shapes[n][1:]) for n in pred.input_names}, {})
            with shape_hints(model, given, params_file, epoch, pred.input_shapes):
                for _ in range(max(warmup, 1)):  # one untimed call at least: checks the feed
                    pred(**feed)
            times = []
            for _ in range(iters):
                t0 = time.perf_counter()
                pred(**feed)
                times.append(time.perf_counter() - t0)
            med, p90 = float(np.median(times)), float(np.percentile(times, 90))
            rows.append({"backend": be, "batch": b, "median_ms": med * 1e3,
                         "p90_ms": p90 * 1e3, "items_per_s": b / med})
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    echo(ctx, f"{'backend':<12} {'batch':>5} {'median ms':>10} {'p90 ms':>10} {'items/s':>10}")
    for r in rows:
        click.echo(f"{r['backend']:<12} {r['batch']:>5} {r['median_ms']:>10.2f} "
                   f"{r['p90_ms']:>10.2f} {r['items_per_s']:>10.1f}")
