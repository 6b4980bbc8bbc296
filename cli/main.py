"""The ``gluonport`` command: a click group; each command lives in its own module.

Errors a user can cause come out as one line, ``Error: <what>: <why>. <fix>``, with documented
exit codes; ``--debug`` shows the traceback instead.

Exit codes (also in ``gluonport --help`` and the README): 0 ok, 1 validation mismatch, 2 usage
error (the command line is wrong), 3 input/format error (a file, or how its data fits the model),
4 unsupported op, 5 other error (device, runtime; and "internal error", a gluonport bug).
"""

from __future__ import annotations

import sys
from typing import Any

import click

from gluonport import __version__
from gluonport.errors import (
    ConversionError,
    DTypeError,
    ExecutionError,
    FormatError,
    GluonportError,
    GraphError,
    InputShapeError,
    OpAttributeError,
    ParameterError,
    ShapeError,
    UnsupportedOpError,
    ValidationError,
)

EXIT_OK, EXIT_MISMATCH, EXIT_USAGE, EXIT_INPUT, EXIT_UNSUPPORTED, EXIT_OTHER = 0, 1, 2, 3, 4, 5

# Errors about what a file holds or how the given inputs fit the model: exit 3.
_INPUT_ERRORS = (FormatError, GraphError, OpAttributeError, ShapeError, DTypeError,
                 ParameterError, InputShapeError, FileNotFoundError, IsADirectoryError,
                 NotADirectoryError, PermissionError)
# Errors that say where they happened without naming the model file: the model is put first.
_GRAPH_ERRORS = (GraphError, OpAttributeError, ShapeError, DTypeError, UnsupportedOpError,
                 ConversionError, ExecutionError, ParameterError)


def exit_code_for(exc: BaseException) -> int:
    """The documented exit code for an error."""
    if isinstance(exc, ValidationError):
        return EXIT_MISMATCH
    if isinstance(exc, UnsupportedOpError):
        return EXIT_UNSUPPORTED
    if isinstance(exc, _INPUT_ERRORS):
        return EXIT_INPUT
    if isinstance(exc, GluonportError) and isinstance(exc, MemoryError):
        return EXIT_INPUT  # the size budget refused a tensor the inputs or model imply
    return EXIT_OTHER


def one_line(text: str) -> str:
    """A multi-line message (one line per problem) joined into one line."""
    parts = [p.strip() for p in str(text).splitlines() if p.strip()]
    out = parts[0] if parts else ""
    for p in parts[1:]:
        out += (" " if out.endswith(":") else "; ") + p
    return out


def _message(exc: BaseException, obj: dict) -> str:
    subject = obj.get("subject")
    if isinstance(exc, GluonportError):
        text = one_line(str(exc))
        if subject and isinstance(exc, _GRAPH_ERRORS) and subject not in text:
            text = f"{subject}: {text}"
        if isinstance(exc, (ShapeError, DTypeError)):
            try:
                text = _with_inputs(text, subject, obj.get("args", {}))
            except Exception:  # noqa: BLE001 - a hint must never replace the error itself
                pass
        return text
    if isinstance(exc, MemoryError):
        return (f"{subject or 'the model'}: out of memory ({one_line(str(exc))}); the model or "
                "its inputs are too large for this machine")
    name = getattr(exc, "filename", "") or ""
    return f"{name}: {getattr(exc, 'strerror', None) or exc}" if name else one_line(str(exc))


def _with_inputs(text: str, subject: str | None, args: dict) -> str:
    """A shape or dtype error with the inputs that were given (the file that holds a wrong
    array) and what the model says each input looks like (as ``inspect`` shows)."""
    given = [f"--input {t}" for t in args.get("input_files") or ()]
    given += [f"--input-shape {t}" for t in args.get("input_shapes") or ()]
    shown = [g for g in given if g.split(" ", 1)[1].partition("=")[2] not in text]
    if shown:
        text += f" (given {', '.join(shown)})"
    if subject and "looks like" not in text and " in the model" not in text:
        from ._common import shape_looks

        names = [g.split(" ", 1)[1].partition("=")[0] for g in given]
        looks = shape_looks(subject, names, args.get("params_file"), args.get("epoch"))
        if looks:
            text += "; " + "; ".join(looks)
    return text


def remember(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Callback of the options an error message may need: the MODEL (errors that do not name
    a file name it), --params, --epoch, --input and --input-shape."""
    root = ctx.find_root()
    if root.obj is not None:
        root.obj.setdefault("args", {})[param.name] = value
        if param.name in ("model", "prefix", "factory") and value:
            root.obj["subject"] = value
    return value


class GluonportGroup(click.Group):
    """Turns errors into one line, ``Error: <what>: <why>. <fix>``, and an exit code (unless
    ``--debug``); click's usage errors too (no ``Usage:`` block)."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True,
             **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, False, **extra)
        except click.exceptions.UsageError as exc:
            if type(exc).__name__ == "NoArgsIsHelpError":  # bare `gluonport` (click >= 8.2)
                click.echo(exc.format_message())
                sys.exit(EXIT_OK)
            where = exc.ctx.command_path if exc.ctx is not None else (prog_name or "gluonport")
            text = one_line(exc.format_message()).rstrip(".")
            click.echo(f"Error: {text}; see '{where} --help'", err=True)
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            click.echo(f"Error: {one_line(exc.format_message())}", err=True)
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(EXIT_OTHER)
        sys.exit(rv if isinstance(rv, int) and not isinstance(rv, bool) else EXIT_OK)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except (GluonportError, OSError, MemoryError) as exc:  # user-caused: one line
            if ctx.obj and ctx.obj.get("debug"):
                raise
            click.echo(f"Error: {_message(exc, ctx.obj or {})}", err=True)
            sys.exit(exit_code_for(exc))
        except Exception as exc:  # a gluonport bug: still one line unless --debug
            if ctx.obj and ctx.obj.get("debug"):
                raise
            click.echo(f"Error: internal error: {type(exc).__name__}: {one_line(str(exc))}. "
                       "Rerun with --debug for the traceback and please report it.", err=True)
            sys.exit(EXIT_OTHER)


@click.group(cls=GluonportGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gluonport")
@click.option("--debug", is_flag=True, help="Show full tracebacks on errors.")
@click.option("--quiet", "-q", is_flag=True, help="Print only results and errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool, quiet: bool) -> None:
    """gluonport: run, inspect and convert Apache MXNet models without MXNet.

    \b
    Examples:
      gluonport inspect sample_models/lenet_bn-symbol.json
      gluonport convert sample_models/lenet_bn -o lenet.onnx --input-shape data=2,1,28,28
      gluonport validate sample_models/lenet_bn lenet.onnx
      gluonport run lenet.onnx --input data=sample_models/lenet_bn-input.npy
      gluonport quickstart sample_models/lenet_bn

    Exit codes: 0 ok; 1 validation mismatch; 2 usage error (the command line is wrong: an
    unknown command or option, a malformed or out-of-range value, an input name the model does
    not have, a shape the model needs and nothing gives, an output path that cannot be written);
    3 input/format error (a file is missing, not a regular file, malformed, truncated or of the
    wrong kind, or its data does not fit the model: parameters, shapes, dtypes); 4 unsupported
    op; 5 other error (device, runtime). Errors are one line; --debug shows the traceback.
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug
    ctx.obj["quiet"] = quiet


_REMEMBERED = ("model", "prefix", "factory", "params_file", "epoch", "input_files",
               "input_shapes")


def _register() -> None:
    from . import bench, convert, export_cmd, inspect_cmd, quickstart, run_cmd, serve_cmd, validate

    for command in (export_cmd.export, convert.convert, inspect_cmd.inspect, run_cmd.run,
                    validate.validate, bench.bench, quickstart.quickstart, serve_cmd.serve):
        for param in command.params:
            if param.name in _REMEMBERED and param.callback is None:
                param.callback = remember
        cli.add_command(command)


_register()


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="gluonport")


if __name__ == "__main__":  # pragma: no cover
    main()
