"""``gluonport quickstart``: the README's main job on a bundled sample model."""

from __future__ import annotations

import os
import time

import click
import numpy as np

from gluonport.errors import ValidationError
from gluonport.summary import summarize


@click.command("quickstart")
@click.argument("prefix", default="sample_models/lenet_bn")
@click.option("--rtol", default=1e-4, show_default=True, help="Relative tolerance.")
@click.option("--atol", default=1e-5, show_default=True, help="Absolute tolerance.")
def quickstart(prefix: str, rtol: float, atol: float) -> None:
    """Load a sample model, run it, and compare with MXNet 1.9.1's recorded output.

    PREFIX names PREFIX-symbol.json, PREFIX-0000.params, PREFIX-input.npy and
    PREFIX-output.npy (see sample_models/make_samples.py).

    \b
    Example:
      gluonport quickstart sample_models/lenet_bn
    """
    import gluonport as mx
    from gluonport.model import load_checkpoint

    info = summarize(prefix, epoch=0)
    click.echo(f"[1/2] loaded {info['symbol_file']} (MXNet {info['mxnet_version']}): "
               f"{info['nodes']} nodes, {len(info['ops'])} op types, "
               f"{info['parameters']:,} parameters; inputs {info['inputs']} -> outputs "
               f"{info['outputs']}")
    sym, arg, aux = load_checkpoint(prefix, 0)
    x = np.load(f"{prefix}-input.npy")
    want = np.load(f"{prefix}-output.npy")
    args = dict(arg)
    args[info["inputs"][0]] = mx.nd.array(x)
    t0 = time.perf_counter()
    got = sym.bind(mx.cpu(), args, aux_states=aux).forward()[0].asnumpy()
    ms = (time.perf_counter() - t0) * 1e3
    err = float(np.max(np.abs(got - want) / (atol + rtol * np.abs(want))))
    abs_err = float(np.max(np.abs(got - want)))
    click.echo(f"[2/2] numpy executor on {os.path.basename(prefix)}-input.npy {x.shape}: "
               f"{ms:.1f} ms, max abs error vs MXNet 1.9.1 = {abs_err:.2e}")
    if err > 1.0:
        raise ValidationError(f"{prefix}: output differs from MXNet's by {abs_err:.3e} "
                              f"(rtol={rtol}, atol={atol})")
    click.echo("OK: gluonport reproduces MXNet's output")
