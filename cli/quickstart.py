"""``gluonport quickstart``: the README's main job on a bundled sample model."""

from __future__ import annotations

import os
import tempfile
import time

import click
import numpy as np

from gluonport.errors import ValidationError

from ._common import TOLERANCE, load_input_array, load_mxnet, output_path


def _bundled() -> str | None:
    """The folder of the sample models installed with gluonport (``gluonport.sample_models``;
    in a checkout whose editable install predates that package, the repository's folder)."""
    try:
        from gluonport import sample_models
    except ImportError:
        import gluonport

        root = os.path.dirname(os.path.dirname(os.path.abspath(gluonport.__file__)))
        folder = os.path.join(root, "sample_models")
        return folder if os.path.isfile(os.path.join(folder, "__init__.py")) else None
    return sample_models.FOLDER


def _find_prefix(prefix: str) -> str:
    """``prefix`` when its files are there, else the installed sample of the same name."""
    from gluonport.errors import FormatError
    from gluonport.formats._regular import check_regular

    if not os.path.lexists(f"{prefix}-symbol.json"):
        name = os.path.basename(prefix.rstrip("/" + os.sep))
        folder = _bundled()
        if folder is None or not os.path.isfile(os.path.join(folder, f"{name}-symbol.json")):
            raise FormatError(f"{prefix}-symbol.json: no such file; give the PREFIX of a model "
                              "with PREFIX-symbol.json, -0000.params, -input.npy and "
                              "-output.npy, or an installed sample: lenet_bn, mlp")
        prefix = os.path.join(folder, name)
    for suffix in ("-symbol.json", "-0000.params", "-input.npy", "-output.npy"):
        check_regular(prefix + suffix, "file (quickstart needs PREFIX" + suffix + ")")
    return prefix


@click.command("quickstart")
@click.argument("prefix", default="lenet_bn")
@click.option("--rtol", default=1e-4, show_default=True, type=TOLERANCE,
              help="Relative tolerance.")
@click.option("--atol", default=1e-5, show_default=True, type=TOLERANCE,
              help="Absolute tolerance.")
@click.option("-o", "--output", "onnx_file", default=None,
              help="Where to write the ONNX file (default: a temporary folder).")
def quickstart(prefix: str, rtol: float, atol: float, onnx_file: str | None) -> None:
    """Convert a sample MXNet model to ONNX, validate it, run it, and compare with MXNet.

    PREFIX names PREFIX-symbol.json, PREFIX-0000.params, PREFIX-input.npy and
    PREFIX-output.npy (MXNet 1.9.1's output; see sample_models/make_samples.py). The samples
    lenet_bn (the default) and mlp are installed with gluonport: a PREFIX that names no files
    but ends in one of those names runs the installed copy, from any folder.

    \b
    Example:
      gluonport quickstart sample_models/lenet_bn
    """
    import gluonport as mx
    from gluonport.onnx import export_model, verify
    from gluonport.summary import summarize

    if onnx_file is not None:
        output_path(onnx_file, "-o", "model.onnx")
    prefix = _find_prefix(prefix)
    info = summarize(prefix, epoch=0)
    click.echo(f"[1/4] loaded {info['symbol_file']} (written by MXNet {info['mxnet_version']}): "
               f"{info['nodes']} nodes, {len(info['ops'])} op types, {info['parameters']:,} "
               f"parameters; inputs {info['inputs']} -> outputs {info['outputs']}")
    x = load_input_array(f"{prefix}-input.npy")
    want = load_input_array(f"{prefix}-output.npy")
    _, sym, params = load_mxnet(prefix, None, 0)  # refuses params that do not fit the graph
    tmp = None
    if onnx_file is None:
        tmp = tempfile.TemporaryDirectory()
        onnx_file = os.path.join(tmp.name, os.path.basename(prefix) + ".onnx")
    t0 = time.perf_counter()
    export_model(sym, params, [x.shape], onnx_file_path=onnx_file, dynamic=True)
    click.echo(f"[2/4] converted to ONNX in {(time.perf_counter() - t0) * 1e3:.0f} ms: "
               f"{onnx_file} (dynamic batch)")
    report = verify(sym, params, onnx_file, {info["inputs"][0]: x}, rtol=rtol, atol=atol)
    click.echo(f"[3/4] validated numpy executor vs onnxruntime: max abs error "
               f"{report.max_abs:.2e} ({'ok' if report.ok else 'MISMATCH'})")
    rows = []
    for backend in ("numpy", "onnxruntime"):
        model = mx.load(onnx_file if backend == "onnxruntime" else prefix, epoch=0,
                        backend=backend)
        model(x)
        t0 = time.perf_counter()
        got = model(x)
        ms = (time.perf_counter() - t0) * 1e3
        err = float(np.max(np.abs(got - want)))
        rows.append((backend, ms, err, bool(np.allclose(got, want, rtol=rtol, atol=atol))))
    click.echo(f"[4/4] ran on {os.path.basename(prefix)}-input.npy {x.shape} and compared with "
               "MXNet 1.9.1's recorded output:")
    for backend, ms, err, ok in rows:
        click.echo(f"      {backend:<12} {ms:8.2f} ms   max abs error {err:.2e}   "
                   f"{'ok' if ok else 'MISMATCH'}")
    if tmp is not None:
        tmp.cleanup()
    if not report.ok or not all(r[3] for r in rows):
        raise ValidationError(f"{prefix}: gluonport's outputs differ from MXNet's beyond "
                              f"tolerance (rtol={rtol}, atol={atol})")
    click.echo("OK: converted, validated and ran; gluonport reproduces MXNet's output")
