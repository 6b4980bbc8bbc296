"""``gluonport inspect``: what a model file holds."""

from __future__ import annotations

import json

import click

from ._common import MODEL_HELP, human_bytes, model_options


@click.command("inspect", epilog=MODEL_HELP)
@click.argument("model")
@model_options
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
def inspect(model: str, params_file: str | None, epoch: int | None, as_json: bool) -> None:
    """Show a model's format version, inputs, outputs, op histogram and parameter size.

    \b
    Examples:
      gluonport inspect sample_models/lenet_bn-symbol.json
      gluonport inspect sample_models/lenet_bn --epoch 0 --json
      gluonport inspect model.onnx
    """
    from gluonport.summary import summarize  # here, not at import: keeps --help fast

    info = summarize(model, params_file, epoch)
    if as_json:
        click.echo(json.dumps(info, indent=2))
        return
    if info["format"] == "onnx":
        _print_onnx(info)
    else:
        _print_mxnet(info)
    click.echo("ops:")
    for op, n in info["ops"].items():
        click.echo(f"  {op:<28} {n}")


def _print_mxnet(info: dict) -> None:
    click.echo(f"model:      {info['symbol_file']}")
    click.echo(f"params:     {info['params_file'] or '(none)'} "
               f"{'/'.join(info['params_record_versions'])}")
    click.echo(f"written by: MXNet {info['mxnet_version']}")
    hints = info.get("input_shape_hints", {})
    click.echo("inputs:     " + "; ".join(f"{n}, looks like {hints[n]}" if n in hints else n
                                          for n in info["inputs"]))
    click.echo(f"outputs:    {', '.join(info['outputs'])}")
    click.echo(f"parameters: {info['parameters']:,} ({human_bytes(info['parameter_bytes'])}) in "
               f"{info['arg_params']} arg + {info['aux_params']} aux arrays")
    click.echo(f"nodes:      {info['nodes']}")
    missing = info["ops_without_onnx"]
    state = "all ops convert" if not missing else "no converter for " + ", ".join(missing)
    click.echo(f"ONNX:       {state}")


def _print_onnx(info: dict) -> None:
    click.echo(f"model:      {info['onnx_file']}")
    click.echo(f"format:     ONNX IR {info['ir_version']}, opsets "
               + ", ".join(f"{d} {v}" for d, v in info["opsets"].items()))
    click.echo(f"producer:   {info['producer'] or '(unknown)'}")
    for kind in ("inputs", "outputs"):
        items = [f"{i['name']} {i['dtype']} {i['shape']}" for i in info[kind]]
        click.echo(f"{kind + ':':<11} {'; '.join(items)}")
    click.echo(f"parameters: {info['parameters']:,}")
    click.echo(f"nodes:      {info['nodes']}")
