"""tests._cli.CliRunner: stderr apart and ``output`` as the user sees it, on every click >= 8.0."""

from __future__ import annotations

import click

from tests._cli import CliRunner


@click.command()
def _both() -> None:
    click.echo("to stdout")
    click.echo("to stderr", err=True)


def test_stderr_is_captured_apart_and_output_holds_both():
    res = CliRunner().invoke(_both, [])
    assert res.exit_code == 0, res.output
    assert res.stdout == "to stdout\n"
    assert res.stderr == "to stderr\n"
    assert res.output == "to stdout\nto stderr\n"
