"""Helpers shared by the CLI commands: option parsing, model loading, input making."""

from __future__ import annotations

import contextlib
import math
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import click
import numpy as np

EPOCH = click.IntRange(0, 9999)


class _Tolerance(click.FloatRange):
    """A finite float >= 0."""

    def __init__(self) -> None:
        super().__init__(min=0.0)

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        out = super().convert(value, param, ctx)
        if not math.isfinite(out):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return out


TOLERANCE = _Tolerance()

MODEL_HELP = ("MODEL is a .onnx file, a *-symbol.json file (its params found as "
              "PREFIX-NNNN.params, or given with --params), or a PREFIX with --epoch.")


def _size_limit(ctx: click.Context, param: Any, value: str | None) -> None:
    """--max-tensor-bytes: the size budget for this command (restored when it ends)."""
    if value is None:
        return
    from gluonport._core.budget import (
        DEFAULT_MAX_GRAPH_BYTES,
        DEFAULT_MAX_TENSOR_BYTES,
        ENV_GRAPH,
        parse_size,
        set_size_limit,
    )
    from gluonport.errors import ArgumentError

    try:
        size = parse_size(value)
    except ArgumentError as exc:
        raise click.BadParameter(str(exc), ctx, param) from None
    ratio = DEFAULT_MAX_GRAPH_BYTES // DEFAULT_MAX_TENSOR_BYTES
    graph = "none" if size is None else None if os.environ.get(ENV_GRAPH) else size * ratio
    old = set_size_limit(max_tensor_bytes="none" if size is None else size,
                         max_graph_bytes=graph)
    ctx.call_on_close(lambda: set_size_limit(**old))


def model_options(fn):
    """--params, --epoch and --max-tensor-bytes, shared by every command that takes a MODEL."""
    fn = click.option("--max-tensor-bytes", metavar="SIZE", default=None, expose_value=False,
                      callback=_size_limit,
                      help="Refuse a model with a tensor larger than SIZE (bytes, or with k, M, "
                           "G, T: 4G; 'none': no limit), all tensors alive at once over 8 x SIZE "
                           "(default 1G, or $GLUONPORT_MAX_TENSOR_BYTES).")(fn)
    fn = click.option("--epoch", type=EPOCH, default=None,
                      help="Epoch of PREFIX-NNNN.params, 0 to 9999 (default: the newest).")(fn)
    fn = click.option("--params", "params_file", default=None, metavar="FILE",
                      help="The .params file, when it is not PREFIX-NNNN.params.")(fn)
    return fn


def input_options(fn):
    """--input NAME=FILE.npy and --input-shape NAME=D1,D2,... (both repeatable)."""
    fn = click.option("--input-shape", "input_shapes", multiple=True, metavar="NAME=D1,D2,..",
                      help="Shape of an input, e.g. data=1,3,224,224 (repeatable).")(fn)
    fn = click.option("--input", "input_files", multiple=True, metavar="NAME=FILE.npy",
                      help="An input array from a .npy file (repeatable).")(fn)
    return fn


def tolerance_options(fn):
    """--rtol and --atol of the numeric checks (see gluonport.onnx.verify.compare)."""
    fn = click.option("--atol", default=1e-5, show_default=True, type=TOLERANCE,
                      help="Absolute tolerance, per output times max(1, its largest |value|).")(fn)
    fn = click.option("--rtol", default=1e-4, show_default=True, type=TOLERANCE,
                      help="Relative tolerance (of each expected value).")(fn)
    return fn


def parse_shapes(values: tuple[str, ...], param: str = "--input-shape") -> dict[str, tuple]:
    """``("data=1,3,224,224",)`` -> ``{"data": (1, 3, 224, 224)}``; bad syntax is a usage
    error (exit 2)."""
    out: dict[str, tuple] = {}
    for text in values:
        m = re.fullmatch(r"\s*([^=\s]+)\s*=\s*\(?\s*(\d+(?:\s*[,x]\s*\d+)*)\s*\)?\s*", text)
        if not m:
            raise click.BadParameter(f"{text!r} is not NAME=D1,D2,... (e.g. data=1,3,224,224)",
                                     param_hint=param)
        dims = tuple(int(d) for d in re.split(r"\s*[,x]\s*", m.group(2)))
        if 0 in dims:
            raise click.BadParameter(f"{text!r} has a 0 dim; every dim must be at least 1",
                                     param_hint=param)
        out[m.group(1)] = dims
    return out


def parse_inputs(values: tuple[str, ...]) -> dict[str, np.ndarray]:
    """``("data=x.npy",)`` -> ``{"data": array}``."""
    from gluonport.errors import FormatError

    out: dict[str, np.ndarray] = {}
    for text in values:
        name, sep, path = text.partition("=")
        if not sep or not name or not path:
            raise click.BadParameter(f"{text!r} is not NAME=FILE.npy", param_hint="--input")
        if not os.path.lexists(path):
            raise FormatError(f"{path}: no such input file")
        out[name] = load_input_array(path)
    return out


def load_input_array(path: str) -> np.ndarray:
    """One numeric array from a ``.npy`` file. The header is checked against the file's size
    before anything is allocated; object (pickled), string, complex and bool arrays, ``.npz``
    archives, FIFOs and devices are refused with a :class:`FormatError` naming the file."""
    from gluonport.errors import FormatError
    from gluonport.formats._regular import open_regular

    fmt = np.lib.format
    with open_regular(path, "input file (.npy)") as f:
        size = os.fstat(f.fileno()).st_size
        head = f.read(6)
        if head[:2] == b"PK":
            raise FormatError("is a .npz archive; --input takes one array per input, as "
                              "NAME=FILE.npy (np.save(FILE, array))", path)
        f.seek(0)
        try:
            version = fmt.read_magic(f)
            reader = {(1, 0): fmt.read_array_header_1_0, (2, 0): fmt.read_array_header_2_0}
            if version not in reader:
                raise ValueError(f"NPY format version {version} is not supported here")
            shape, fortran, dtype = reader[version](f)
        except Exception as exc:  # numpy's header parser: ValueError, tokenize's TokenError...
            raise FormatError(f"is not a readable .npy array ({one_line(exc)})", path) from None
        if dtype.hasobject or dtype.kind not in "fiu":
            raise FormatError(f"holds a {dtype} array; inputs must be numeric (float or int): "
                              "save it as float32 or the integer type the model takes", path)
        count = int(np.prod(shape, dtype=object)) if shape else 1
        need, have = count * dtype.itemsize, size - f.tell()
        if need > have:
            raise FormatError(f"the header declares shape {tuple(shape)} {dtype} ({need:,} "
                              f"bytes) but only {have:,} bytes follow: the file is truncated",
                              path)
        data = np.frombuffer(f.read(need), dtype=dtype, count=count)
    return data.reshape(shape, order="F" if fortran else "C").copy()


def one_line(exc: BaseException | str) -> str:
    """An exception's message on one line."""
    return " ".join(str(exc).split())


def check_input_names(given: Iterable[str], names: Sequence[str], model: str,
                      option: str = "--input-shape") -> None:
    """A usage error when ``given`` names an input the model does not have."""
    unknown = [n for n in given if n not in names]
    if unknown:
        which = ", ".join(repr(n) for n in unknown)
        raise click.UsageError(f"{option}: {model} has no input {which}; its inputs are "
                               f"{', '.join(repr(n) for n in names) or '(none)'}")


def output_path(path: str, option: str, example: str = "out.npz") -> str:
    """``path`` when a file can be written there, else a usage error naming the folder: an
    empty path, one ending in a separator or naming a folder, a folder that does not exist or
    is not a folder. Checked before any work (and before a temp file is made beside it).
    ``example`` is a file name the message suggests inside a folder."""
    if not path:
        raise click.BadParameter("an empty path; give a file name", param_hint=option)
    if path.endswith(("/", os.sep)) or os.path.isdir(path):
        what = "is a folder" if os.path.isdir(path) else "ends in a separator (a folder)"
        raise click.BadParameter(f"{path!r} {what}; name a file in it, e.g. "
                                 f"{os.path.join(path, example)!r}", param_hint=option)
    folder = os.path.dirname(os.path.abspath(path))
    shown = os.path.dirname(path) or folder
    if not os.path.isdir(folder):
        state = "is a file, not a folder" if os.path.exists(folder) else "does not exist"
        raise click.BadParameter(f"the folder {shown!r} of {path!r} {state}; create it first",
                                 param_hint=option)
    if not os.access(folder, os.W_OK):
        raise click.BadParameter(f"the folder {shown!r} is not writable", param_hint=option)
    return path



def parse_device(text: str) -> Any:
    """``cpu``, ``cuda:0``, ``gpu:1``, ``gpu(1)`` -> a Context."""
    import gluonport as mx

    m = re.fullmatch(r"\s*(cpu|cuda|gpu)\s*(?:[:(]\s*(\d+)\s*\)?)?\s*", text.lower())
    if not m:
        raise click.BadParameter(f"{text!r} is not cpu, cuda:N or gpu:N",
                                 param_hint="--device")
    index = int(m.group(2) or 0)
    return mx.cpu(index) if m.group(1) == "cpu" else mx.gpu(index)


def static_shape(shape: Any) -> tuple | None:
    """``shape`` as a tuple when every dim is a known positive int, else None (an ONNX input
    with a symbolic batch, a graph that records no shape)."""
    if shape is None or any(not isinstance(d, int) or d <= 0 for d in shape):
        return None
    return tuple(shape)


def model_shapes(names: list[str], given: dict[str, tuple], declared: dict[str, Any]
                 ) -> dict[str, tuple]:
    """``given`` completed with the shapes the model declares for the other inputs: fixed dims
    as they are, a symbolic batch (axis 0 only) as 1. Inputs the model leaves open elsewhere
    are left out, for :func:`shape_error` to report."""
    out = dict(given)
    for n in names:
        dims = declared.get(n)
        if n in out or not dims:
            continue
        rest = static_shape((1, *dims[1:]))
        if rest is not None:
            out[n] = (dims[0] if isinstance(dims[0], int) and dims[0] > 0 else 1, *rest[1:])
    return out


def shape_looks(model: str, names: Sequence[str], params_file: str | None = None,
                epoch: int | None = None, declared: dict[str, Any] | None = None) -> list[str]:
    """What the model says about each input's shape (``data looks like N,1,H,W (...)`` from an
    MXNet graph's first layer, ``data is (1,3,224,224) in the model`` from an ONNX file), for
    the messages about missing or wrong shapes; ``inspect`` shows the same."""
    from gluonport.errors import GluonportError
    from gluonport.summary import input_shape_hints

    hints: dict[str, str] = {}
    if not model.lower().endswith(".onnx"):
        try:
            _, sym, params = load_mxnet(model, params_file, epoch, check=False)
            hints = input_shape_hints(sym, {k: v.shape for k, v in params.items()})
        except GluonportError:
            pass
    looks = []
    for n in names:
        dims = (declared or {}).get(n)
        if dims:
            looks.append(f"{n} is ({','.join(str(d) for d in dims)}) in the model")
        elif n in hints:
            looks.append(f"{n} looks like {hints[n]}")
    return looks


@contextlib.contextmanager
def shape_hints(model: str, given: Iterable[str], params_file: str | None = None,
                epoch: int | None = None, declared: dict[str, Any] | None = None
                ) -> Iterator[None]:
    """A :class:`ShapeError` raised inside (shapes given with ``--input-shape`` or ``--input``
    that do not fit the model) is re-raised with what the model says each input looks like."""
    from gluonport.errors import ShapeError

    try:
        yield
    except ShapeError as exc:
        looks = shape_looks(model, list(given), params_file, epoch, declared)
        if not looks:
            raise
        raise ShapeError(f"{one_line(exc)}; {'; '.join(looks)}") from None


def shape_error(model: str, missing: list[str], params_file: str | None = None,
                epoch: int | None = None, declared: dict[str, Any] | None = None) -> Exception:
    """The one error for inputs whose shape a command needs and cannot know: a usage error
    (exit 2) naming the options that give it and, where the model says something about it (the
    first layer's weights of an MXNet graph, an ONNX input's declared dims), what the shape
    looks like."""
    which = (f"input {missing[0]!r} is" if len(missing) == 1 else
             f"inputs {', '.join(repr(n) for n in missing)} are")
    fix = " ".join(f"--input-shape {n}=D1,D2,..." for n in missing)
    text = (f"{model}: the shape of {which} not fixed by the model. Give {fix} (or "
            "--input NAME=FILE.npy with real data)")
    looks = shape_looks(model, missing, params_file, epoch, declared)
    if looks:
        text += "; " + "; ".join(looks)
    return click.UsageError(text)


def check_opset_option(opset: int | None) -> None:
    """A usage error when ``--opset`` is outside what the installed onnx/onnxruntime export."""
    if opset is None:
        return
    from gluonport.errors import ConversionError
    from gluonport.onnx.opset import check_opset

    try:
        check_opset(opset)
    except ConversionError as exc:
        raise click.BadParameter(one_line(exc), param_hint="--opset") from None


def human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def echo(ctx: click.Context, text: str) -> None:
    """Print unless --quiet."""
    if not (ctx.obj or {}).get("quiet"):
        click.echo(text)


def load_mxnet(model: str, params_file: str | None, epoch: int | None, check: bool = True):
    """``(files, symbol, params dict)`` of an MXNet model (arg:/aux: prefixes stripped).

    ``check``: refuse a params file that does not hold the graph's parameters with the shapes
    it implies (a torn or mixed export), as ``gluonport.load`` does."""
    from gluonport._modelpath import resolve_model
    from gluonport._paramcheck import check_params
    from gluonport.model import split_params
    from gluonport.ndarray import load as nd_load
    from gluonport.symbol import load as sym_load

    files = resolve_model(model, params_file, epoch)
    sym = sym_load(files.symbol_file)
    params: dict = {}
    if files.params_file:
        loaded = nd_load(files.params_file)
        if isinstance(loaded, dict):
            if any(":" in k for k in loaded):
                arg, aux = split_params(loaded, files.params_file)
                params = {**arg, **aux}
            else:
                params = loaded
    if check:
        check_params(sym, {k: v.shape for k, v in params.items()},
                     symbol_file=files.symbol_file, params_file=files.params_file)
    return files, sym, params


class Stages:
    """A click progress bar over the steps of a long job (large model files only, and only on
    a terminal), so a user sees work happening; a no-op otherwise."""

    BIG = 64 * 1024 * 1024

    def __init__(self, ctx: click.Context, steps: int, label: str, size: int = 0):
        import sys

        quiet = bool((ctx.obj or {}).get("quiet"))
        show = size >= self.BIG and not quiet and sys.stderr.isatty()
        self._bar = click.progressbar(length=steps, label=label, file=sys.stderr) if show \
            else None

    def __enter__(self) -> Stages:
        if self._bar is not None:
            self._bar.__enter__()
        return self

    def step(self) -> None:
        if self._bar is not None:
            self._bar.update(1)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)
