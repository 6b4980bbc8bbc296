"""The ``gluonport`` command: a click group; each command lives in its own module.

Errors a user can cause come out as one line, ``Error: <what>: <why>. <fix>``, with documented
exit codes; ``--debug`` shows the traceback instead.

Exit codes: 0 ok, 1 validation mismatch, 2 usage, 3 input/format error, 4 unsupported op,
5 other gluonport error.
"""

from __future__ import annotations

import sys

import click

from gluonport import __version__
from gluonport.errors import (
    FormatError,
    GluonportError,
    UnsupportedOpError,
    ValidationError,
)

EXIT_OK, EXIT_MISMATCH, EXIT_USAGE, EXIT_INPUT, EXIT_UNSUPPORTED, EXIT_OTHER = 0, 1, 2, 3, 4, 5


def exit_code_for(exc: BaseException) -> int:
    """The documented exit code for an error."""
    if isinstance(exc, ValidationError):
        return EXIT_MISMATCH
    if isinstance(exc, UnsupportedOpError):
        return EXIT_UNSUPPORTED
    if isinstance(exc, (FormatError, FileNotFoundError, IsADirectoryError, PermissionError)):
        return EXIT_INPUT
    return EXIT_OTHER


class GluonportGroup(click.Group):
    """Turns GluonportError into a one-line message and an exit code (unless ``--debug``)."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except (GluonportError, OSError) as exc:  # user-caused: one line, no traceback
            if ctx.obj and ctx.obj.get("debug"):
                raise
            message = str(exc) if isinstance(exc, GluonportError) else \
                f"{getattr(exc, 'filename', '') or ''}: {exc.strerror or exc}"
            click.echo(f"Error: {message}", err=True)
            sys.exit(exit_code_for(exc))
        except Exception as exc:  # a gluonport bug: still one line unless --debug
            if ctx.obj and ctx.obj.get("debug"):
                raise
            click.echo(f"Error: internal error: {type(exc).__name__}: {exc}. Rerun with --debug "
                       "for the traceback and please report it.", err=True)
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

    \b
    Exit codes: 0 ok, 1 validation mismatch, 2 usage, 3 input/format error,
    4 unsupported op, 5 other error.
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug
    ctx.obj["quiet"] = quiet


def _register() -> None:
    from . import bench, convert, export_cmd, inspect_cmd, quickstart, run_cmd, validate

    for command in (export_cmd.export, convert.convert, inspect_cmd.inspect, run_cmd.run,
                    validate.validate, bench.bench, quickstart.quickstart):
        cli.add_command(command)


_register()


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="gluonport")


if __name__ == "__main__":  # pragma: no cover
    main()
