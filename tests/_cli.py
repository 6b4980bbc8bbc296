"""A click test runner whose results carry stderr on every click that pyproject.toml allows.

click 8.2 always captures stderr apart (``result.stderr``) and makes ``result.output`` what a
user sees: stdout and stderr interleaved. click 8.0 and 8.1 only capture stderr apart with
``CliRunner(mix_stderr=False)`` (an argument 8.2 removed), and then ``result.output`` is stdout
alone; reading ``result.stderr`` without it raises ``ValueError``. :class:`CliRunner` asks for
the split where click has the argument and gives ``output`` as stdout followed by stderr there,
so tests read ``stdout``, ``stderr`` and ``output`` the same way on click 8.0 through 8.2+.
"""

from __future__ import annotations

import inspect
from typing import Any

import click.testing

__all__ = ["CliRunner", "SPLITS_BY_ARGUMENT"]

#: True on click < 8.2, where stderr is captured apart only when asked (``mix_stderr=False``).
SPLITS_BY_ARGUMENT = "mix_stderr" in inspect.signature(click.testing.CliRunner.__init__).parameters


class _SplitResult(click.testing.Result):
    """An old click's result whose ``output`` is stdout followed by stderr, as a user sees it."""

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


class CliRunner(click.testing.CliRunner):
    """``click.testing.CliRunner`` with stderr captured apart on every click version >= 8.0."""

    def __init__(self, **kwargs: Any) -> None:
        if SPLITS_BY_ARGUMENT:
            kwargs["mix_stderr"] = False
        super().__init__(**kwargs)

    def invoke(self, *args: Any, **kwargs: Any) -> click.testing.Result:
        result = super().invoke(*args, **kwargs)
        if not SPLITS_BY_ARGUMENT:
            return result
        return _SplitResult(runner=result.runner, stdout_bytes=result.stdout_bytes,
                            stderr_bytes=result.stderr_bytes, return_value=result.return_value,
                            exit_code=result.exit_code, exception=result.exception,
                            exc_info=result.exc_info)
